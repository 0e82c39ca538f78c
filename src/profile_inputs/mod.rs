//! The exact worst case over every dataset for a randomizer on any finite input domain
//! (issue 23): `δ_M(ε)` or `ε_M(δ)`, the maximum over every background composition `c` of the
//! other n − 1 users and every switch `x1 → x1′` of the switched user, in both directions.
//!
//! A certified branch and bound over boxes of compositions ([`boxes`]): a box's compositions
//! all contain its lower corner `lo`, so each of their pairs is the pair of `lo` with more users
//! added, the same Markov kernel applied to both laws; by data processing the pair of `lo`
//! (fewer users) bounds every composition of the box, for δ at every ε and hence for ε at every
//! δ.  A box is closed for a quantity when that bound is certainly at most the best value
//! already found at a concrete dataset, so closed boxes never raise the maximum's upper end
//! (proofs-notes/inputs-profile.md).  The homogeneous backgrounds (every other user holds the
//! same input, `bounds`' lower end) are evaluated first, as the floor to prune against.
//!
//! One pair gives both directions: the unordered switch `{a, b}` computes `(P, Q)` with P from
//! `a` and Q from `b`; `δ_{P‖Q}` is the dataset pair `a → b` and `δ_{Q‖P}` is `b → a`.

pub mod boxes;
pub mod dominance;
pub mod orbits;

use crate::arith::exact::ExactCtx;
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::background::Background;
use crate::exact::pair::{PairOptions, duration_text};
use crate::mechanism::Entry;
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Quantity;
use crate::query::{Backend, BackgroundQuery, DeltaJob, EpsilonJob, Threshold, answer};
use boxes::CompositionBox;
use orbits::Orbits;
use rug::Rational;
use rug::ops::PowAssign;
use std::collections::BinaryHeap;

/// What to compute.
#[derive(Clone, Debug)]
pub struct InputsProfileQuery {
    pub randomizer: Randomizer,
    /// n: the switched user and the n − 1 others.
    pub n: u64,
    /// `δ_M` at thresholds and `ε_M` at targets (Rényi orders are not answered here).
    pub quantities: Vec<Quantity>,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
    /// Search each orbit of the rows' symmetries once (the default); off, every switch and
    /// composition is searched (for cross-checks).
    pub symmetry: bool,
    /// Search one slice of the compositions only (a shard; `None`: all of them).
    pub slice: Option<Slice>,
    /// A ceiling search (`bounds --ceiling-seconds`): per quantity a level `c` (a δ for δ
    /// quantities, an ε for ε quantities) at which boxes are closed even above the best value
    /// found, so each row is `[best, max(c, largest evaluated)]`, a certified range rather than
    /// the exact maximum (proofs-notes/inputs-profile.md, "Ceiling"). `None`: the exact search.
    pub ceiling: Option<Vec<Rational>>,
}

impl InputsProfileQuery {
    /// The exact search over every dataset (symmetry on, no slice, no ceiling), with the pairs'
    /// options, backend and escalation.
    pub fn new(
        randomizer: Randomizer,
        n: u64,
        quantities: Vec<Quantity>,
        options: PairOptions,
        backend: Backend,
        escalate_above: Option<f64>,
    ) -> Self {
        InputsProfileQuery {
            randomizer,
            n,
            quantities,
            options,
            backend,
            exact_ctx: Default::default(),
            escalate_above,
            symmetry: true,
            slice: None,
            ceiling: None,
        }
    }
}

/// Slice `index` (from 0) of `of`: the boxes of [`slice_roots`] at positions ≡ index (mod of).
/// Each slice also evaluates the homogeneous backgrounds, so its maximum is over its boxes and
/// those; the slices' boxes together are every composition of every switch searched, each once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub index: u64,
    pub of: u64,
}

/// The most slices a search is cut into.
pub const MAX_SLICES: u64 = 1 << 16;

/// The boxes a search starts from: each switch's box of every composition (with `sorted`, of
/// every composition sorted within the blocks of the symmetries fixing the switch: one per
/// orbit at least, `CompositionBox::sorted_within`), or for a slice its share of them split
/// level by level (every box not a single composition into its two halves) until there are at
/// least four boxes per slice or none can be split, then dealt out in turn. `split` splits a
/// box of a switch as the search's tree does below ([`children`]), so the slices' boxes are
/// boxes of the whole tree.
pub fn slice_roots(
    switches: &[(usize, usize)],
    inputs: usize,
    m: u64,
    sorted: Option<&Orbits>,
    slice: Option<Slice>,
    split: &dyn Fn((usize, usize), &CompositionBox) -> Vec<CompositionBox>,
) -> Vec<((usize, usize), CompositionBox)> {
    let mut level: Vec<((usize, usize), CompositionBox)> = switches
        .iter()
        .map(|&s| {
            let root = match sorted {
                Some(orbits) => CompositionBox::sorted_within(inputs, m, &orbits.blocks(s)),
                None => CompositionBox::all(inputs, m),
            };
            (s, root)
        })
        .collect();
    let Some(slice) = slice else { return level };
    while (level.len() as u64) < 4 * slice.of && level.iter().any(|(_, b)| !b.is_point()) {
        level = level
            .into_iter()
            .flat_map(|(s, b)| {
                if b.is_point() {
                    vec![(s, b)]
                } else {
                    split(s, &b).into_iter().map(|c| (s, c)).collect()
                }
            })
            .collect();
    }
    level
        .into_iter()
        .enumerate()
        .filter(|(j, _)| *j as u64 % slice.of == slice.index)
        .map(|(_, root)| root)
        .collect()
}

/// A neighbouring pair of datasets: the others' composition and the switched user's input in
/// the first (`x1`) and second (`x1_prime`) dataset. As in `bounds`, its value is
/// `δ(P_{x1} ‖ P_{x1′})(ε) = Σ_N (P_{x1}(N) − e^ε P_{x1′}(N))₊` (or its ε), with `P_x` the law of
/// the dataset whose switched user holds x.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    pub background: Vec<u64>,
    pub x1: usize,
    pub x1_prime: usize,
}

/// A dataset pair and its certified value for one quantity.
#[derive(Clone, Debug)]
pub struct Attained {
    pub dataset: Dataset,
    pub value: Enclosure,
}

/// The worst case of one quantity.
#[derive(Clone, Debug)]
pub struct InputsRow {
    pub quantity: Quantity,
    /// Encloses the maximum over every dataset pair.
    pub value: Enclosure,
    /// Every evaluated dataset pair whose upper end reaches the maximum's lower end.
    pub argmax: Vec<Attained>,
}

/// Why a box was closed for a quantity.
#[derive(Clone, Debug)]
pub struct Closure {
    /// The unordered switch `{a, b}` (`a < b`) and the box.
    pub switch: (usize, usize),
    pub boxed: CompositionBox,
    /// The quantity's index in the query.
    pub quantity: usize,
    pub reason: ClosedBy,
}

/// What closed a box for a quantity.
#[derive(Clone, Debug)]
pub enum ClosedBy {
    /// The box lies in the box of `bounds[i]` (itself or an ancestor), whose bound is at most
    /// the best value found (a δ quantity), or whose two-sided δ at the threshold, the best ε
    /// found then, is at most the target (an ε quantity).
    Bound(usize),
    /// An ε quantity at one composition: its two-sided δ at `at`, the best ε found then, is at
    /// most the target, so its ε is at most `at`.
    Screened { at: Rational, delta: Enclosure },
    /// No composition of the box has a user on the switch inputs, and the rows have the shape of
    /// [`dominance`]: each composition's value is at most that of the homogeneous background
    /// `by` (every other user on one rest input), which answered the quantity under the same
    /// switch ([`answered_at`]: an evaluated record, or screened).
    Dominated { by: Vec<u64> },
}

/// A box's bound (Lemmas 1 and 2 of proofs-notes/inputs-profile.md), as a certificate records
/// it: the switch and box, the breakpoints `j_1 < … < j_L` of the blanket's users (none: the
/// pair of the lower corner alone) and, per quantity bounded, its threshold and the bound.
#[derive(Clone, Debug)]
pub struct BoundRecord {
    pub switch: (usize, usize),
    pub boxed: CompositionBox,
    pub breakpoints: Vec<u64>,
    /// Lemma 3 instead (a switch whose backgrounds off it are dominated, [`dominance`]): the
    /// reference composition, whose two-sided δ plus `dominance::switch_tail` is the bound.
    pub reference: Option<Vec<u64>>,
    pub values: Vec<Option<(Threshold, Enclosure)>>,
}

/// One evaluated composition under one unordered switch `{a, b}`: per quantity its certified
/// `[δ_{Q‖P}, δ_{P‖Q}]` (or ε), the dataset pairs `b → a` and `a → b`, where it was computed.
#[derive(Clone, Debug)]
pub struct PairRecord {
    pub switch: (usize, usize),
    pub counts: Vec<u64>,
    pub values: Vec<Option<[Enclosure; 2]>>,
}

/// Work done.
#[derive(Clone, Debug, Default)]
pub struct InputsStats {
    /// Dataset pairs (unordered switches; both directions at once) evaluated in full.
    pub pairs_evaluated: u64,
    /// Boxes bounded (Lemma 2).
    pub boxes_bounded: u64,
    /// Pairs computed for those bounds (each at most once).
    pub bound_pairs: u64,
    /// Compositions (times unordered switches) closed without their own pair.
    pub compositions_closed: u128,
    /// Compositions (times unordered switches) left out when splitting as not sorted within the
    /// symmetry blocks: their sorted images stay in the tree.
    pub compositions_sorted: u128,
    /// Unordered switches searched (one per orbit of the rows' symmetries) and in all.
    pub switches: (usize, usize),
    /// Compositions times the unordered switches searched.
    pub compositions_total: u128,
}

/// The result.
#[derive(Clone, Debug)]
pub struct InputsProfile {
    pub rows: Vec<InputsRow>,
    pub stats: InputsStats,
    /// The proof: the rows' symmetries used (their components of exchangeable inputs, each of
    /// at least two), the switches searched, every pair evaluated, every bound made and every
    /// closure.
    pub symmetry: Vec<Vec<usize>>,
    pub switches: Vec<(usize, usize)>,
    pub records: Vec<PairRecord>,
    pub bounds: Vec<BoundRecord>,
    pub closures: Vec<Closure>,
    pub arithmetic: String,
}

/// One unit of work: a box under one unordered switch, the quantities still open on it, and
/// the parent's bound (its priority).
struct Work {
    priority: f64,
    seq: u64,
    switch: (usize, usize),
    boxed: CompositionBox,
    open: Vec<bool>,
    /// Per δ quantity, the parent's bound and its record (it bounds this box too): once the
    /// best value found reaches it, the box closes without a pair of its own.
    parent: Vec<Option<(Enclosure, usize)>>,
}

impl PartialEq for Work {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Work {}
impl PartialOrd for Work {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Work {
    /// Largest bound first; among equals, the earliest made (deterministic order).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}

struct Search<'a> {
    q: &'a InputsProfileQuery,
    /// Per quantity, the largest certified lower end found.
    best: Vec<Option<Rational>>,
    stats: InputsStats,
    records: Vec<PairRecord>,
    bounds: Vec<BoundRecord>,
    closures: Vec<Closure>,
    arithmetic: std::collections::BTreeSet<String>,
    seq: u64,
    heap: BinaryHeap<Work>,
    started: std::time::Instant,
    /// A rational lower bound on every entry `R_x(y)` (the entry itself when exact).
    entry_floor: Option<Vec<Vec<Rational>>>,
    /// Two-sided δ of the pairs bounds were made of (a split's lower half often shares them).
    bound_cache: std::collections::HashMap<BoundKey, Vec<Enclosure>>,
    /// The switches whose backgrounds off the switch are dominated ([`dominance`]).
    dominated: Vec<(usize, usize)>,
}

/// One pair a box's bound uses: the switch, the lower corner, which inputs are free (which
/// fixes the blanket row U), the users drawn from U, and the thresholds.
#[derive(Clone, PartialEq, Eq, Hash)]
struct BoundKey {
    switch: (usize, usize),
    lo: Vec<u64>,
    free: Vec<bool>,
    users: u64,
    thresholds: Vec<(bool, Rational)>,
}

/// Whether the composition `counts` under `switch` answered quantity `i`: an evaluated record
/// with a value, or (an ε quantity) a screened closure, whose δ at its `at ≤` the best ε is at
/// most the target, and then so is every composition it dominates.
pub fn answered_at(
    records: &[PairRecord],
    closures: &[Closure],
    switch: (usize, usize),
    counts: &[u64],
    i: usize,
) -> bool {
    records
        .iter()
        .any(|r| r.switch == switch && r.counts == counts && r.values[i].is_some())
        || closures.iter().any(|c| {
            c.switch == switch
                && c.quantity == i
                && matches!(c.reason, ClosedBy::Screened { .. })
                && c.boxed.is_point()
                && c.boxed.lo == counts
        })
}

/// The switches among `switches` whose backgrounds off the switch are dominated
/// ([`dominance`]): their trees split the switch inputs at zero first ([`peeled`]).
pub fn dominated_switches(rows: &[Vec<Entry>], switches: &[(usize, usize)]) -> Vec<(usize, usize)> {
    switches
        .iter()
        .copied()
        .filter(|&s| dominance::rest_is_dominated(rows, s))
        .collect()
}

/// The parts a box of `switch` is split into (and `verify` walks, for certificates with
/// `"dominance": "off-switch"`): the switch inputs first into buckets where the backgrounds off
/// the switch are dominated, then the widest coordinate; only compositions sorted within the
/// symmetry blocks kept (`CompositionBox::split_peeling`).
pub fn children(
    boxed: &CompositionBox,
    m: u64,
    switch: (usize, usize),
    dominated: &[(usize, usize)],
    orbits: &Orbits,
) -> Vec<CompositionBox> {
    boxed.split_peeling(m, &peeled(dominated, switch), &orbits.blocks(switch))
}

/// The inputs a switch's boxes are split at zero first (`CompositionBox::split_peeling`): the
/// switch inputs where its backgrounds off the switch are dominated, none otherwise.
pub fn peeled(dominated: &[(usize, usize)], switch: (usize, usize)) -> Vec<usize> {
    if dominated.contains(&switch) {
        vec![switch.0, switch.1]
    } else {
        Vec::new()
    }
}

/// The exact worst case (see the module docs).
pub fn inputs_profile(q: &InputsProfileQuery) -> Result<InputsProfile> {
    let inputs = q.randomizer.rows.len();
    if inputs < 2 {
        return Err(Error::argument(
            "--mechanism",
            "a randomizer needs at least two inputs",
        ));
    }
    if q.n == 0 {
        return Err(Error::argument("--n", "must be at least 1"));
    }
    if q.n > crate::exact::pair::WINDOW_MAX_N as u64 {
        return Err(Error::argument(
            "--n",
            format!(
                "the pairs of a randomizer on more than two inputs are windowed laws, which need \
                 n ≤ {}",
                crate::exact::pair::WINDOW_MAX_N
            ),
        ));
    }
    if q.quantities.is_empty() {
        return Err(Error::argument("--eps", "give at least one quantity"));
    }
    if q.quantities.iter().any(|x| matches!(x, Quantity::Renyi(_))) {
        return Err(Error::argument(
            "--renyi-order",
            "the profile of a randomizer on more than two inputs answers δ_M(ε) and ε_M(δ), not Rényi divergences",
        ));
    }
    let m = q.n - 1;
    let mut s = Search {
        q,
        best: vec![None; q.quantities.len()],
        stats: InputsStats::default(),
        records: Vec::new(),
        bounds: Vec::new(),
        closures: Vec::new(),
        arithmetic: Default::default(),
        seq: 0,
        heap: BinaryHeap::new(),
        started: std::time::Instant::now(),
        entry_floor: entry_floor(&q.randomizer),
        bound_cache: Default::default(),
        dominated: Vec::new(),
    };
    // One switch per orbit of the rows' symmetries, and compositions up to the symmetries
    // that fix the switch (orbits.rs).
    let orbits = if q.symmetry {
        Orbits::detect(&q.randomizer.rows)
    } else {
        Orbits::none(inputs)
    };
    let represented = orbits.switch_representatives();
    let switches: Vec<(usize, usize)> = represented.iter().map(|(s, _)| *s).collect();
    s.stats.switches = (switches.len(), inputs * (inputs - 1) / 2);
    s.dominated = dominated_switches(&q.randomizer.rows, &switches);
    let split = |switch, b: &CompositionBox| children(b, m, switch, &s.dominated, &orbits);
    let roots = slice_roots(&switches, inputs, m, Some(&orbits), q.slice, &split);
    s.stats.compositions_total = roots
        .iter()
        .fold(0u128, |a, (_, b)| a.saturating_add(b.count(m)));
    // The floor: every homogeneous background. Its first pair times the rest: a floor that
    // alone would pass the time limit is refused before it runs.
    let mut floor = Vec::new();
    for &switch in &switches {
        for x2 in 0..inputs {
            let mut c = vec![0; inputs];
            c[x2] = m;
            let c = orbits.canonical(switch, &c);
            if !floor.contains(&(switch, c.clone())) {
                floor.push((switch, c));
            }
        }
    }
    let floor_pairs = floor.len();
    // Per (switch, canonical composition): the quantities already answered for its orbit.
    let mut answered: std::collections::HashMap<((usize, usize), Vec<u64>), Vec<bool>> =
        Default::default();
    for (switch, c) in floor {
        s.leaf(switch, &c, &vec![true; q.quantities.len()])?;
        answered.insert((switch, c), vec![true; q.quantities.len()]);
        if answered.len() == 1 {
            s.refuse_a_long_floor(floor_pairs)?;
        }
    }
    crate::progress::note(&format!(
        "profile: {} compositions of the others × switches up to the rows' symmetries; the \
         floor ({floor_pairs} pairs) took {:.2} s; boxes of compositions follow, each closed or \
         split",
        CompositionBox::count_text(s.stats.compositions_total),
        s.started.elapsed().as_secs_f64()
    ));
    let none = vec![None; q.quantities.len()];
    for (switch, boxed) in roots {
        s.push(
            switch,
            boxed,
            vec![true; q.quantities.len()],
            f64::INFINITY,
            none.clone(),
        );
    }
    let stage = crate::progress::Stage::start(
        "inputs profile",
        "compositions",
        u64::try_from(s.stats.compositions_total).unwrap_or(u64::MAX),
    );
    while let Some(work) = s.heap.pop() {
        s.check_time()?;
        let count = work.boxed.count(m);
        let open = s.closed_by_parent(&work);
        let open = s.closed_by_dominance(&work, open, &orbits);
        if open.iter().all(|o| !o) {
            s.stats.compositions_closed = s.stats.compositions_closed.saturating_add(count);
            stage.advance(u64::try_from(count).unwrap_or(u64::MAX));
            continue;
        }
        if work.boxed.is_point() {
            let c = orbits.canonical(work.switch, &work.boxed.lo);
            let done = answered
                .entry((work.switch, c.clone()))
                .or_insert_with(|| vec![false; open.len()]);
            let needed: Vec<bool> = open
                .iter()
                .zip(done.iter())
                .map(|(o, d)| *o && !d)
                .collect();
            if needed.iter().any(|n| *n) {
                for (d, n) in done.iter_mut().zip(&needed) {
                    *d |= n;
                }
                s.leaf(work.switch, &c, &needed)?;
            }
            stage.advance(u64::try_from(count).unwrap_or(u64::MAX));
            continue;
        }
        let (priority, still_open, bounds) = s.bound(&work, &open, &orbits)?;
        if still_open.iter().all(|o| !o) {
            s.stats.compositions_closed = s.stats.compositions_closed.saturating_add(count);
            stage.advance(u64::try_from(count).unwrap_or(u64::MAX));
            continue;
        }
        let children = children(&work.boxed, m, work.switch, &s.dominated, &orbits);
        let kept = children
            .iter()
            .fold(0u128, |a, c| a.saturating_add(c.count(m)));
        let unsorted = count.saturating_sub(kept);
        s.stats.compositions_sorted = s.stats.compositions_sorted.saturating_add(unsorted);
        stage.advance(u64::try_from(unsorted).unwrap_or(u64::MAX));
        for child in children {
            s.push(
                work.switch,
                child,
                still_open.clone(),
                priority,
                bounds.clone(),
            );
        }
    }
    drop(stage);
    Ok(s.finish(orbits.components(), switches))
}

impl Search<'_> {
    fn push(
        &mut self,
        switch: (usize, usize),
        boxed: CompositionBox,
        open: Vec<bool>,
        priority: f64,
        parent: Vec<Option<(Enclosure, usize)>>,
    ) {
        self.seq += 1;
        self.heap.push(Work {
            priority,
            seq: self.seq,
            switch,
            boxed,
            open,
            parent,
        });
    }

    /// The quantities still open on `work` once a box with no user on the switch inputs is
    /// closed by the homogeneous background it is dominated by ([`dominance`]), for each
    /// quantity some rest input's homogeneous background answered ([`answered_at`]).
    fn closed_by_dominance(
        &mut self,
        work: &Work,
        mut open: Vec<bool>,
        orbits: &Orbits,
    ) -> Vec<bool> {
        let (a, b) = work.switch;
        if !self.dominated.contains(&work.switch) || work.boxed.hi[a] > 0 || work.boxed.hi[b] > 0 {
            return open;
        }
        let inputs = work.boxed.lo.len();
        let m = self.q.n - 1;
        let homogeneous: Vec<Vec<u64>> = (0..inputs)
            .filter(|&y| y != a && y != b)
            .map(|y| {
                let mut c = vec![0; inputs];
                c[y] = m;
                orbits.canonical(work.switch, &c)
            })
            .collect();
        for (i, o) in open.iter_mut().enumerate() {
            let by = homogeneous
                .iter()
                .find(|c| answered_at(&self.records, &self.closures, work.switch, c, i));
            if let (true, Some(by)) = (*o, by) {
                *o = false;
                self.closures.push(Closure {
                    switch: work.switch,
                    boxed: work.boxed.clone(),
                    quantity: i,
                    reason: ClosedBy::Dominated { by: by.clone() },
                });
            }
        }
        open
    }

    /// The quantities still open on `work` once its parent's bounds meet the best values found
    /// since the parent was evaluated (δ quantities: the parent's bound holds for the box).
    fn closed_by_parent(&mut self, work: &Work) -> Vec<bool> {
        let mut open = work.open.clone();
        for (i, bound) in work.parent.iter().enumerate() {
            let (Some((bound, record)), Some(level)) = (bound, self.level(i)) else {
                continue;
            };
            if open[i] && hi_at_most(bound, &level) {
                open[i] = false;
                self.closures.push(Closure {
                    switch: work.switch,
                    boxed: work.boxed.clone(),
                    quantity: i,
                    reason: ClosedBy::Bound(*record),
                });
            }
        }
        open
    }

    /// What a box is closed against for quantity `i`: the best value found, or the ceiling's
    /// level when that is larger (a ceiling search).
    fn level(&self, i: usize) -> Option<Rational> {
        let ceiling = self.q.ceiling.as_ref().map(|c| &c[i]);
        match (&self.best[i], ceiling) {
            (Some(b), Some(c)) => Some(b.clone().max(c.clone())),
            (b, c) => b.clone().or(c.cloned()),
        }
    }

    /// Refuses when the floor's pairs, at the first one's time each, would pass the limit.
    fn refuse_a_long_floor(&self, floor_pairs: usize) -> Result<()> {
        let limit = self.q.options.time_limit_seconds;
        let each = self.started.elapsed().as_secs_f64();
        let estimate = each * floor_pairs as f64;
        if estimate > limit {
            return Err(Error::argument(
                "--max-seconds",
                format!(
                    "the worst case over every dataset starts from {floor_pairs} homogeneous \
                     backgrounds at about {} each (about {}), past the limit of {}",
                    duration_text(each),
                    duration_text(estimate),
                    duration_text(limit)
                ),
            ));
        }
        Ok(())
    }

    /// A pair's refusal: past the time left of the budget it is the search's time limit (the
    /// pair may well fit a fresh budget); otherwise the pair is too large.
    fn refused(&self, e: Error, b: &Background) -> Error {
        let limit = self.q.options.time_limit_seconds;
        let elapsed = self.started.elapsed().as_secs_f64();
        match e {
            Error::TooLarge(message)
                if message.contains("--max-seconds") && elapsed >= 0.01 * limit =>
            {
                Error::argument(
                    "--max-seconds",
                    format!(
                        "the search over compositions would pass its limit of {} after {} pairs \
                         and {} bounds: {} were left for the next pair ({message})",
                        duration_text(limit),
                        self.stats.pairs_evaluated,
                        self.stats.boxes_bounded,
                        duration_text((limit - elapsed).max(0.0)),
                    ),
                )
            }
            e => too_large(e, b),
        }
    }

    fn check_time(&self) -> Result<()> {
        let limit = self.q.options.time_limit_seconds;
        let elapsed = self.started.elapsed().as_secs_f64();
        if elapsed > limit {
            return Err(Error::argument(
                "--max-seconds",
                format!(
                    "the search over compositions passed its limit of {} after {} pairs and {} \
                     bounds",
                    duration_text(limit),
                    self.stats.pairs_evaluated,
                    self.stats.boxes_bounded
                ),
            ));
        }
        Ok(())
    }

    fn background_query(&self, switch: (usize, usize), counts: &[u64]) -> BackgroundQuery {
        BackgroundQuery {
            randomizer: self.q.randomizer.clone(),
            background: Background {
                counts: counts.to_vec(),
                switch,
            },
            options: PairOptions {
                // A pair gets what is left of the search's budget, not all of it.
                time_limit_seconds: (self.q.options.time_limit_seconds
                    - self.started.elapsed().as_secs_f64())
                .max(0.0),
                ..self.q.options.clone()
            },
            backend: self.q.backend,
            exact_ctx: self.q.exact_ctx,
            escalate_above: self.q.escalate_above,
        }
    }

    fn note_arithmetic(&mut self, arithmetic: &str) {
        self.arithmetic.insert(arithmetic.to_string());
    }

    /// The thresholds one δ computation answers for the open quantities: each δ quantity's,
    /// and each ε quantity's best lower end so far (none before one is found); and per
    /// quantity, its threshold's index.
    fn thresholds(&self, open: &[bool]) -> (Vec<Threshold>, Vec<Option<usize>>) {
        let mut thresholds = Vec::new();
        let mut slot = vec![None; open.len()];
        for (i, quantity) in self.q.quantities.iter().enumerate() {
            let t = match quantity {
                _ if !open[i] => continue,
                Quantity::Delta(t) => t.clone(),
                Quantity::Epsilon(_) => match self.level(i) {
                    Some(level) => Threshold::Eps(level),
                    None => continue,
                },
                Quantity::Renyi(_) => unreachable!("refused up front"),
            };
            slot[i] = Some(thresholds.len());
            thresholds.push(t);
        }
        (thresholds, slot)
    }

    /// Evaluates the dataset pairs of one composition under one unordered switch (both
    /// directions), for every quantity.
    fn leaf(&mut self, switch: (usize, usize), counts: &[u64], open: &[bool]) -> Result<()> {
        let bq = self.background_query(switch, counts);
        self.stats.pairs_evaluated += 1;
        // One δ computation: each open δ quantity's threshold, and each open ε quantity's best
        // lower end so far (where the pair's δ is already at most the target there, its ε is
        // at most that best and its own ε search is not needed).
        let (thresholds, slot) = self.thresholds(open);
        let deltas = if thresholds.is_empty() {
            Vec::new()
        } else {
            let computed = answer(&bq, &DeltaJob { thresholds })
                .map_err(|e| self.refused(e, &bq.background))?;
            self.note_arithmetic(&computed.arithmetic);
            computed.result
        };
        let mut record = PairRecord {
            switch,
            counts: counts.to_vec(),
            values: vec![None; open.len()],
        };
        for (i, quantity) in self.q.quantities.iter().enumerate() {
            if !open[i] {
                continue;
            }
            let [qp, pq] = match quantity {
                Quantity::Delta(_) => {
                    let row = &deltas[slot[i].expect("an open δ quantity has a threshold")];
                    [row.qp.clone(), row.pq.clone()]
                }
                Quantity::Epsilon(delta) => {
                    if let Some(k) = slot[i] {
                        let two_sided = deltas[k].qp.max(&deltas[k].pq);
                        if hi_at_most(&two_sided, delta) {
                            let at = self.level(i).expect("a slot means a level");
                            self.closures.push(Closure {
                                switch,
                                boxed: CompositionBox {
                                    lo: counts.to_vec(),
                                    hi: counts.to_vec(),
                                },
                                quantity: i,
                                reason: ClosedBy::Screened {
                                    at,
                                    delta: two_sided,
                                },
                            });
                            continue;
                        }
                    }
                    let computed = answer(
                        &bq,
                        &EpsilonJob {
                            delta: delta.clone(),
                        },
                    )
                    .map_err(|e| self.refused(e, &bq.background))?;
                    self.note_arithmetic(&computed.arithmetic);
                    [computed.result.qp.eps, computed.result.pq.eps]
                }
                Quantity::Renyi(_) => unreachable!("refused up front"),
            };
            for value in [&qp, &pq] {
                if let Endpoint::Finite(lo) = value.lo()
                    && self.best[i].as_ref().is_none_or(|b| lo > b)
                {
                    self.best[i] = Some(lo.clone());
                }
            }
            record.values[i] = Some([qp, pq]);
        }
        self.records.push(record);
        Ok(())
    }

    /// The bound of a box (its lower corner's pair) for the open quantities: the largest
    /// two-sided upper end (the children's priority), which quantities stay open, and the δ
    /// quantities' bounds (for the children).
    fn bound(
        &mut self,
        work: &Work,
        open: &[bool],
        orbits: &Orbits,
    ) -> Result<(f64, Vec<bool>, Vec<Option<(Enclosure, usize)>>)> {
        let (thresholds, slot) = self.thresholds(open);
        if thresholds.is_empty() {
            return Ok((work.priority, open.to_vec(), work.parent.clone()));
        }
        // The bound depends on the lower corner and on which inputs are free: both up to the
        // symmetries fixing the switch (a symmetric box has a bound of the same value).
        let key: Vec<u64> = (0..work.boxed.lo.len())
            .map(|x| 2 * work.boxed.lo[x] + u64::from(work.boxed.lo[x] < work.boxed.hi[x]))
            .collect();
        let key = orbits.canonical(work.switch, &key);
        let lo: Vec<u64> = key.iter().map(|v| v / 2).collect();
        let free: Vec<bool> = key.iter().map(|v| v % 2 == 1).collect();
        let budget = self.tail_budget(open);
        let threshold_key: Vec<(bool, Rational)> = thresholds
            .iter()
            .map(|t| match t {
                Threshold::Eps(e) => (false, e.clone()),
                Threshold::ExpEps(c) => (true, c.clone()),
            })
            .collect();
        let reference = self.reference_for(work, &budget, orbits, &threshold_key);
        // A box of a dominated switch still to be peeled with no user guaranteed on the switch
        // inputs is split unbounded (its Lemma 2 bound is the blanket's, and costly at large n).
        let (a, b) = work.switch;
        if reference.is_none()
            && work.boxed.lo[a] + work.boxed.lo[b] == 0
            && work
                .boxed
                .to_peel(&peeled(&self.dominated, work.switch))
                .is_some()
        {
            return Ok((work.priority, open.to_vec(), work.parent.clone()));
        }
        let plan = match &reference {
            // Lemma 3: the reference composition's own pair plus the tail.
            Some((_, tail)) => BoundPlan {
                row: None,
                points: vec![(0, Rational::from(1))],
                tail: tail.clone(),
            },
            None => self.blanket_plan(&lo, &free, &budget),
        };
        let lo = match &reference {
            Some((c, _)) => orbits.canonical(work.switch, c),
            None => lo,
        };
        // Per threshold, `tail + Σ_i weight_i · (two-sided upper end at breakpoint i)`.
        let mut sums: Vec<Option<Rational>> = vec![Some(plan.tail.clone()); thresholds.len()];
        let keys: Vec<BoundKey> = plan
            .points
            .iter()
            .map(|(users, _)| BoundKey {
                switch: work.switch,
                lo: lo.clone(),
                free: if plan.row.is_some() {
                    free.clone()
                } else {
                    Vec::new()
                },
                users: *users,
                thresholds: threshold_key.clone(),
            })
            .collect();
        // The pairs not computed before, side by side.
        let missing: Vec<(BoundKey, BackgroundQuery)> = keys
            .iter()
            .filter(|key| !self.bound_cache.contains_key(*key))
            .map(|key| {
                let mut bq = match &plan.row {
                    Some(row) if key.users > 0 => {
                        self.blanket_query(work.switch, &lo, row, key.users)
                    }
                    _ => self.background_query(work.switch, &lo),
                };
                // A bound needs only an upper end: no escalation to MPFR to narrow it.
                bq.escalate_above = None;
                (key.clone(), bq)
            })
            .collect();
        let computed: Vec<_> = {
            use rayon::prelude::*;
            let this = &*self;
            missing
                .into_par_iter()
                .map(|(key, bq)| {
                    // The search's time limit holds across the batch, not per pair.
                    this.check_time()?;
                    let mut bq = bq;
                    bq.options.time_limit_seconds = (this.q.options.time_limit_seconds
                        - this.started.elapsed().as_secs_f64())
                    .max(0.0);
                    let job = DeltaJob {
                        thresholds: thresholds.clone(),
                    };
                    answer(&bq, &job).map(|c| (key, c))
                })
                .collect::<Vec<_>>()
        };
        // A bounding pair out of reach leaves the box unbounded: it is split instead, and its
        // children keep the parent's bounds (sound: nothing is closed without a bound).
        if computed
            .iter()
            .any(|c| matches!(c, Err(Error::TooLarge(_))))
        {
            return Ok((work.priority, open.to_vec(), work.parent.clone()));
        }
        let computed = computed.into_iter().collect::<Result<Vec<_>>>()?;
        for (key, c) in computed {
            self.note_arithmetic(&c.arithmetic);
            self.stats.bound_pairs += 1;
            let two_sided = c.result.iter().map(|r| r.qp.max(&r.pq)).collect();
            self.bound_cache.insert(key, two_sided);
        }
        for (key, (_, weight)) in keys.iter().zip(&plan.points) {
            let two_sided = &self.bound_cache[key];
            for (sum, upper) in sums.iter_mut().zip(two_sided) {
                *sum = match (sum.take(), upper.hi()) {
                    (Some(s), Endpoint::Finite(h)) => Some(s + weight.clone() * h),
                    _ => None,
                };
            }
        }
        self.stats.boxes_bounded += 1;
        let index = self.bounds.len();
        self.bounds.push(BoundRecord {
            switch: work.switch,
            boxed: work.boxed.clone(),
            breakpoints: match plan.row {
                Some(_) => plan.points.iter().map(|(j, _)| *j).collect(),
                None => Vec::new(),
            },
            reference: reference.map(|(c, _)| c),
            values: vec![None; open.len()],
        });
        let mut still_open = open.to_vec();
        let mut bounds = work.parent.clone();
        let mut priority = 0.0f64;
        for (i, quantity) in self.q.quantities.iter().enumerate() {
            let Some(k) = slot[i] else { continue };
            let two_sided = Enclosure::new(
                Endpoint::Finite(Rational::new()),
                sums[k].clone().map_or(Endpoint::PosInf, Endpoint::Finite),
            );
            priority = priority.max(match two_sided.hi() {
                Endpoint::Finite(h) => h.to_f64(),
                _ => f64::INFINITY,
            });
            let closes = match (quantity, &self.level(i)) {
                (Quantity::Delta(_), Some(level)) => hi_at_most(&two_sided, level),
                (Quantity::Epsilon(target), Some(_)) => hi_at_most(&two_sided, target),
                _ => false,
            };
            if matches!(quantity, Quantity::Delta(_)) {
                bounds[i] = Some((two_sided.clone(), index));
            }
            self.bounds[index].values[i] = Some((thresholds[k].clone(), two_sided));
            if closes {
                still_open[i] = false;
                self.closures.push(Closure {
                    switch: work.switch,
                    boxed: work.boxed.clone(),
                    quantity: i,
                    reason: ClosedBy::Bound(index),
                });
            }
        }
        Ok((priority, still_open, bounds))
    }

    /// Lemma 3's reference composition and tail for a box of a dominated switch, when the tail
    /// is at most 2^10 times the blanket's budget and that reference's pair was not computed at
    /// these thresholds already (a box split below a reference that did not close it gets the
    /// same reference: Lemma 2 bounds it instead); `None` otherwise.
    fn reference_for(
        &self,
        work: &Work,
        budget: &Rational,
        orbits: &Orbits,
        thresholds: &[(bool, Rational)],
    ) -> Option<(Vec<u64>, Rational)> {
        let (a, b) = work.switch;
        let boxed = &work.boxed;
        let inputs = boxed.lo.len();
        if !self.dominated.contains(&work.switch) {
            return None;
        }
        let floor = self.entry_floor.as_ref()?;
        let y = (0..inputs).find(|&x| x != a && x != b)?;
        let m = self.q.n - 1;
        let (sa, sb) = ((boxed.lo[a], boxed.hi[a]), (boxed.lo[b], boxed.hi[b]));
        let c = dominance::reference(inputs, work.switch, sa, sb, y, m)?;
        let tried = BoundKey {
            switch: work.switch,
            lo: orbits.canonical(work.switch, &c),
            free: Vec::new(),
            users: 0,
            thresholds: thresholds.to_vec(),
        };
        if self.bound_cache.contains_key(&tried) {
            return None;
        }
        let tail = dominance::switch_tail(&self.q.randomizer.rows, floor, work.switch, sa, sb, m)?;
        (tail <= budget.clone() * Rational::from(1u32 << 10)).then_some((c, tail))
    }

    /// The mass a box's bound may give away to the blanket's lower tail: a small fraction of
    /// the smallest value an open quantity is compared with (its best δ, or its target δ).
    fn tail_budget(&self, open: &[bool]) -> Rational {
        let mut smallest: Option<Rational> = None;
        for (i, quantity) in self.q.quantities.iter().enumerate() {
            let reference = match quantity {
                _ if !open[i] => continue,
                Quantity::Delta(_) => self.level(i),
                Quantity::Epsilon(target) => Some(target.clone()),
                Quantity::Renyi(_) => None,
            };
            if let Some(r) = reference {
                if smallest.as_ref().is_none_or(|s| r < *s) {
                    smallest = Some(r);
                }
            }
        }
        smallest.unwrap_or_default() / Rational::from(1u32 << TAIL_BUDGET_BITS)
    }

    /// How a box is bounded (Lemma 2 of proofs-notes/inputs-profile.md). With S the inputs
    /// whose count the box leaves free (`lo_x < hi_x`), r the free users, `γ = Σ_y min_{x∈S}
    /// R_x(y)` and `U = min_{x∈S} R_x / γ`: every composition's δ is at most
    /// `E[δ(lo + J users from U)]`, `J ~ Bin(r, γ)`, and δ falls as users are added, so breakpoints
    /// `j_1 < … < j_L` bound it by `P(J < j_1) + Σ_i P(j_i ≤ J < j_{i+1}) δ(lo + j_i U)`. `j_1` is
    /// the most users with `P(J < j_1) ≤ budget`; the others sit one and two standard deviations
    /// below the mean and at it. Without exact rows, free users or a blanket, the bound is the
    /// pair of `lo` alone.
    fn blanket_plan(&self, lo: &[u64], free: &[bool], budget: &Rational) -> BoundPlan {
        let lo_alone = BoundPlan {
            row: None,
            points: vec![(0, Rational::from(1))],
            tail: Rational::new(),
        };
        let Some(rows) = self.entry_floor.as_ref() else {
            return lo_alone;
        };
        let free: Vec<usize> = (0..rows.len()).filter(|&x| free[x]).collect();
        let r = self.q.n - 1 - lo.iter().sum::<u64>();
        if free.is_empty() || r == 0 {
            return lo_alone;
        }
        let floor: Vec<Rational> = (0..rows[0].len())
            .map(|y| {
                free.iter()
                    .map(|&x| rows[x][y].clone())
                    .min()
                    .expect("S is not empty")
            })
            .collect();
        let gamma: Rational = floor.iter().sum();
        if gamma == 0 {
            return lo_alone;
        }
        let row = Some(floor.into_iter().map(|v| v / &gamma).collect());
        if gamma == 1 {
            return BoundPlan {
                row,
                points: vec![(r, Rational::from(1))],
                tail: Rational::new(),
            };
        }
        // The law of J exactly: pmf_{j+1} = pmf_j (r − j)/(j + 1) · γ/(1 − γ).
        let Ok(r32) = u32::try_from(r) else {
            return lo_alone;
        };
        let odds = gamma.clone() / (Rational::from(1) - &gamma);
        let mut pmf = Vec::with_capacity(r as usize + 1);
        let mut term = Rational::from(1) - &gamma;
        term.pow_assign(r32);
        for j in 0..=r {
            pmf.push(term.clone());
            term *= Rational::from((r - j, j + 1)) * &odds;
        }
        let mut first = 0usize;
        let mut tail = Rational::new();
        while first < r as usize && tail.clone() + &pmf[first] <= *budget {
            tail += &pmf[first];
            first += 1;
        }
        let mean = (r as f64) * gamma.to_f64();
        let sd = (mean * (1.0 - gamma.to_f64())).sqrt();
        let mut breaks = vec![first];
        for z in [
            3.0, 2.5, 2.0, 1.75, 1.5, 1.25, 1.0, 0.75, 0.5, 0.25, 0.0, -0.25, -0.5, -1.0, -1.5,
        ] {
            let j = (mean - z * sd).floor().max(0.0) as usize;
            if j > *breaks.last().expect("one break") && j <= r as usize {
                breaks.push(j);
            }
        }
        let points = breaks
            .iter()
            .enumerate()
            .map(|(i, &j)| {
                let end = breaks.get(i + 1).copied().unwrap_or(r as usize + 1);
                let weight: Rational = pmf[j..end].iter().sum();
                (j as u64, round_up(&weight))
            })
            .collect();
        BoundPlan {
            row,
            points,
            tail: round_up(&tail),
        }
    }

    /// The pair of `lo` plus `users` users drawn from the blanket row `U` (an extra input
    /// appended to the randomizer).
    fn blanket_query(
        &self,
        switch: (usize, usize),
        lo: &[u64],
        row: &[Rational],
        users: u64,
    ) -> BackgroundQuery {
        let mut bq = self.background_query(switch, lo);
        bq.randomizer.inputs.push("(blanket)".into());
        bq.randomizer
            .rows
            .push(row.iter().cloned().map(Entry::Exact).collect());
        bq.background.counts.push(users);
        bq
    }

    fn finish(self, symmetry: Vec<Vec<usize>>, switches: Vec<(usize, usize)>) -> InputsProfile {
        InputsProfile {
            rows: rows_of(&self.q.quantities, &self.records, self.q.ceiling.as_deref()),
            stats: self.stats,
            symmetry,
            switches,
            records: self.records,
            bounds: self.bounds,
            closures: self.closures,
            arithmetic: self.arithmetic.into_iter().collect::<Vec<_>>().join(", "),
        }
    }
}

/// Per quantity, the largest value over the evaluated pairs (both directions of each), and every
/// dataset pair whose upper end reaches its lower end.  With every other composition closed
/// below the best value found, this encloses the maximum over every dataset.
pub fn rows_of(
    quantities: &[Quantity],
    records: &[PairRecord],
    ceiling: Option<&[Rational]>,
) -> Vec<InputsRow> {
    quantities
        .iter()
        .enumerate()
        .map(|(i, quantity)| {
            let found: Vec<Attained> = records
                .iter()
                .filter_map(|r| r.values[i].as_ref().map(|v| (r, v)))
                .flat_map(|(r, [qp, pq])| {
                    // `δ_{Q‖P}` is δ(law of b ‖ law of a): the dataset pair `b → a`.
                    let (a, b) = r.switch;
                    [((b, a), qp), ((a, b), pq)].map(|((x1, x1_prime), value)| Attained {
                        dataset: Dataset {
                            background: r.counts.clone(),
                            x1,
                            x1_prime,
                        },
                        value: value.clone(),
                    })
                })
                .collect();
            // A ceiling search may screen every pair of an ε quantity at its level (each ε at
            // most the level): then the row is [0, level].
            let mut value = found
                .iter()
                .map(|a| a.value.clone())
                .reduce(|a, b| a.max(&b))
                .unwrap_or_else(|| {
                    let level = ceiling.expect("the exact search evaluates the floor in full");
                    Enclosure::new(
                        Endpoint::Finite(Rational::new()),
                        Endpoint::Finite(level[i].clone()),
                    )
                });
            // A ceiling search closed boxes at its level: the maximum is at most the larger.
            if let Some(c) = ceiling {
                let level = Endpoint::Finite(c[i].clone());
                if value.hi() < &level {
                    value = Enclosure::new(value.lo().clone(), level);
                }
            }
            let argmax = found
                .into_iter()
                .filter(|a| a.value.hi() >= value.lo())
                .collect();
            InputsRow {
                quantity: quantity.clone(),
                value,
                argmax,
            }
        })
        .collect()
}

/// A box's bound gives away at most `2^-TAIL_BUDGET_BITS` of the value it is compared with to
/// the blanket's lower tail.
const TAIL_BUDGET_BITS: u32 = 14;

/// How a box is bounded (see [`Search::blanket_plan`]).
struct BoundPlan {
    /// `U = min_{x∈S} R_x / γ` (`None`: the pair of `lo` alone).
    row: Option<Vec<Rational>>,
    /// `(j_i, upper bound on P(j_i ≤ J < j_{i+1}))`, the last up to r.
    points: Vec<(u64, Rational)>,
    /// An upper bound on `P(J < j_1)`.
    tail: Rational,
}

/// A rational lower bound on every entry: the entry when exact; for randomized response given
/// by a real ε0, the smaller of its values at the two ends of the bracket of `e^{ε0}` (each entry
/// is monotone in `e^{ε0}`). Lemma 2 holds with any such floor.
pub fn entry_floor(r: &Randomizer) -> Option<Vec<Vec<Rational>>> {
    let exact = |r: &Randomizer| -> Option<Vec<Vec<Rational>>> {
        r.rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|e| match e {
                        Entry::Exact(v) => Some(v.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    };
    match r.rational_bracket(crate::bounds::range::EXP_EPS0_BRACKET_BITS) {
        Ok(None) => exact(r),
        Ok(Some(bracket)) => {
            let (lower, upper) = (exact(&bracket.lower)?, exact(&bracket.upper)?);
            Some(
                lower
                    .into_iter()
                    .zip(upper)
                    .map(|(a, b)| a.into_iter().zip(b).map(|(x, y)| x.min(y)).collect())
                    .collect(),
            )
        }
        Err(_) => None,
    }
}

/// A pair the search needs that is too large, said as such: which composition (the blanket's
/// users last, for a box's bound).
fn too_large(e: Error, b: &Background) -> Error {
    match e {
        Error::TooLarge(message) => Error::TooLarge(format!(
            "the search over every dataset needs the pair of the others' counts {:?} under the \
             switch {}:{}, and {message}",
            b.counts, b.switch.0, b.switch.1
        )),
        e => e,
    }
}

/// `q` rounded up to a multiple of 2^-64 (keeps the tail's rationals small).
fn round_up(q: &Rational) -> Rational {
    let scale = rug::Integer::from(1) << 64u32;
    let scaled = (q.clone() * &scale).ceil();
    Rational::from((scaled.numer().clone(), scale))
}

/// Whether the enclosure's upper end is at most `q`.
fn hi_at_most(e: &Enclosure, q: &Rational) -> bool {
    matches!(e.hi(), Endpoint::Finite(h) if h <= q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::randomizer::{load_randomizer, randomizer_from_text};
    use crate::profile_inputs::boxes::tests::compositions;

    fn query(r: &Randomizer, n: u64, quantities: Vec<Quantity>) -> InputsProfileQuery {
        InputsProfileQuery {
            randomizer: r.clone(),
            n,
            quantities,
            options: PairOptions::default(),
            backend: Backend::Exact,
            exact_ctx: ExactCtx::default(),
            escalate_above: None,
            symmetry: true,
            slice: None,
            ceiling: None,
        }
    }

    fn point(e: &Enclosure) -> Option<Rational> {
        match (e.is_point(), e.lo()) {
            (true, Endpoint::Finite(q)) => Some(q.clone()),
            _ => None,
        }
    }

    /// `[δ_{Q‖P}, δ_{P‖Q}]` at e^ε = c of one dataset pair, exactly.
    fn exact_delta(
        r: &Randomizer,
        counts: &[u64],
        switch: (usize, usize),
        c: &Rational,
    ) -> [Rational; 2] {
        let bq = BackgroundQuery {
            randomizer: r.clone(),
            background: Background {
                counts: counts.to_vec(),
                switch,
            },
            options: PairOptions::default(),
            backend: Backend::Exact,
            exact_ctx: ExactCtx::default(),
            escalate_above: None,
        };
        let rows = answer(
            &bq,
            &DeltaJob {
                thresholds: vec![Threshold::ExpEps(c.clone())],
            },
        )
        .unwrap()
        .result;
        [&rows[0].qp, &rows[0].pq].map(|e| point(e).expect("exact"))
    }

    /// δ_{Q‖P} at e^ε = c maximised over every dataset pair, one pair at a time.
    fn brute_force(r: &Randomizer, n: u64, c: &Rational) -> Rational {
        let inputs = r.rows.len();
        let mut best = Rational::new();
        for counts in compositions(inputs, n - 1) {
            for a in 0..inputs {
                for b in 0..inputs {
                    if a == b {
                        continue;
                    }
                    let [v, _] = exact_delta(r, &counts, (a, b), c);
                    if v > best {
                        best = v;
                    }
                }
            }
        }
        best
    }

    /// Lemma 3 (proofs-notes/inputs-profile.md) at every composition, exactly: δ of `c` is at
    /// most δ of its reference (its users on the switch inputs kept, the rest moved onto one rest
    /// input) plus the tail, in both directions; with no user on the switch inputs, at most δ of
    /// the homogeneous background outright. For k-RR and a randomizer of the same shape that is
    /// not randomized response.
    #[test]
    fn lemma_3_holds_at_every_composition() {
        let krr = load_randomizer("k-rr:k=5,exp_eps0=3").unwrap();
        let shaped = randomizer_from_text(
            "shaped.toml",
            "inputs = [\"a\", \"b\", \"c\", \"d\", \"e\"]\nrows = [[\"3/5\", \"0\", \"1/10\", \"1/10\", \"1/10\", \"1/10\"], [\"1/10\", \"1/2\", \"1/10\", \"1/10\", \"1/10\", \"1/10\"], [\"1/4\", \"1/20\", \"11/20\", \"1/20\", \"1/20\", \"1/20\"], [\"1/4\", \"1/20\", \"1/20\", \"1/20\", \"11/20\", \"1/20\"], [\"1/4\", \"1/20\", \"1/20\", \"11/20\", \"1/20\", \"1/20\"]]\n",
        )
        .unwrap();
        for (r, n) in [(&krr, 6u64), (&shaped, 6)] {
            let switch = (0, 1);
            assert!(dominance::rest_is_dominated(&r.rows, switch));
            let floor = entry_floor(r).expect("rational rows");
            let m = n - 1;
            for counts in compositions(5, m) {
                let (ca, cb) = (counts[0], counts[1]);
                let reference =
                    dominance::reference(5, switch, (ca, ca), (cb, cb), 2, m).expect("fits");
                let tail =
                    dominance::switch_tail(&r.rows, &floor, switch, (ca, ca), (cb, cb), m).unwrap();
                if ca + cb == 0 {
                    assert_eq!(tail, 0);
                }
                for c in [Rational::from(1), Rational::from((3, 2)), Rational::from(3)] {
                    let ours = exact_delta(r, &counts, switch, &c);
                    let theirs = exact_delta(r, &reference, switch, &c);
                    for (o, t) in ours.iter().zip(&theirs) {
                        assert!(
                            *o <= t.clone() + &tail,
                            "{counts:?} at e^ε = {c}: {o} > {t} + {tail}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn on_binary_inputs_it_is_the_binary_profile() {
        // Two inputs: the compositions are the k of the binary profile, and both directions.
        for spec in ["binary-rr:eps0=1", "fixtures/mechanisms/ternary.toml"] {
            let r = load_randomizer(spec).unwrap();
            let mechanism = crate::mechanism::load_mechanism(spec).unwrap();
            for n in [1u64, 7, 30] {
                let quantities = vec![
                    Quantity::Delta(Threshold::Eps(Rational::from((1, 4)))),
                    Quantity::Epsilon(Rational::from((1, 100))),
                ];
                let ours = inputs_profile(&InputsProfileQuery {
                    backend: Backend::Mpfr { precision: 192 },
                    ..query(&r, n, quantities.clone())
                })
                .unwrap();
                let binary = crate::profile::profile(&crate::profile::ProfileQuery {
                    mechanism: mechanism.clone(),
                    n,
                    k_range: None,
                    quantities,
                    options: PairOptions::default(),
                    backend: Backend::Mpfr { precision: 192 },
                    exact_ctx: ExactCtx::default(),
                    prune: false,
                    with_ends: false,
                    escalate_above: None,
                })
                .unwrap();
                for (a, b) in ours.rows.iter().zip(&binary.rows) {
                    assert!(
                        a.value.lo() <= b.value.hi() && b.value.lo() <= a.value.hi(),
                        "{spec} n = {n}: {} against the binary profile's {}",
                        a.value,
                        b.value
                    );
                }
            }
        }
    }

    #[test]
    fn the_search_equals_brute_force_over_every_dataset() {
        let generic = randomizer_from_text(
            "generic.toml",
            "inputs = [\"a\", \"b\", \"c\"]\nrows = [[\"1/2\", \"1/3\", \"1/6\"], [\"1/5\", \"3/5\", \"1/5\"], [\"1/4\", \"1/4\", \"1/2\"]]\n",
        )
        .unwrap();
        let krr = load_randomizer("k-rr:k=4,exp_eps0=3").unwrap();
        // Four inputs, three outputs, no symmetry, one zero entry.
        let four = randomizer_from_text(
            "four.toml",
            "inputs = [\"a\", \"b\", \"c\", \"d\"]\nrows = [[\"1/2\", \"1/3\", \"1/6\"], [\"1/5\", \"3/5\", \"1/5\"], [\"1/4\", \"1/4\", \"1/2\"], [\"0\", \"2/3\", \"1/3\"]]\n",
        )
        .unwrap();
        for (r, ns) in [
            (&generic, vec![1, 2, 3, 4, 5, 6, 12]),
            (&krr, vec![1, 2, 3, 4, 5, 12]),
            (&four, vec![2, 5, 12]),
        ] {
            for n in ns {
                for c in [Rational::from((3, 2)), Rational::from(2)] {
                    let q = query(r, n, vec![Quantity::Delta(Threshold::ExpEps(c.clone()))]);
                    let p = inputs_profile(&q).unwrap();
                    let expected = brute_force(r, n, &c);
                    assert_eq!(
                        point(&p.rows[0].value),
                        Some(expected.clone()),
                        "n = {n}, c = {c}"
                    );
                    assert!(
                        p.rows[0]
                            .argmax
                            .iter()
                            .all(|a| point(&a.value) == Some(expected.clone()))
                    );
                }
            }
        }
    }
}
