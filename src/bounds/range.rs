//! `shufflecert bounds`: a certified range `[lower, upper]` for a randomizer's privacy profile
//! `δ_M(ε)` (or `ε_M(δ)`) at n users.
//!
//! * Upper: `δ_M(ε) ≤ max_{x1 ≠ x1′} D(x1 → x1′)` (the blanket divergence, [`super::upper`]);
//!   for ε, the largest of the pairs' certified ε at which D meets δ.
//! * Lower: the datasets `(x1, x2, …, x2) ≃ (x1′, x2, …, x2)` are neighbours, so the exact δ of
//!   their shuffled laws is a lower bound on `δ_M`.  It is the same finite sum against the
//!   reference `R_{x2}` with `γ = 1` (Takagi–Liew §2), so it is computed by the same certified
//!   sum; the largest over `(x1, x1′, x2)` is reported.  The tests check it against the pair
//!   engine (`x2 ∈ {x1, x1′}`: the binary engine at k = 0 and n − 1; a third input: the
//!   general-input engine).
//!
//! Pairs with the same classes (upper) give the same values and are computed once (k-RR on k
//! inputs: one pair).  Triples are grouped by a 64-bit hash of their multiset of columns
//! `(R_{x1}(y), R_{x1′}(y), R_{x2}(y))`: triples with equal columns have equal values, and a
//! collision could only leave a triple out of the maximum, which keeps the lower bound a lower
//! bound.  With more than [`MAX_LOWER_TRIPLES`] distinct triples, those with the smallest
//! shuffle index are summed (the report says how many of how many).

use super::chernoff::{self, ChernoffBound};
use super::upper::{BlanketSum, Class, Exact, Tilt};
use crate::arith::exact::ExactCtx;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{ExpValue, Scalar};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::curve::Direction;
use crate::exact::pair::PairOptions;
use crate::mechanism::randomizer::Randomizer;
use crate::progress::Stage;
use crate::query::{
    Backend, Computation, Computed, Threshold, Widths, compute, relative_width_above,
};
use rug::Rational;

/// What is bounded: δ at thresholds, or ε at a target δ.
#[derive(Clone, Debug)]
pub enum Target {
    Delta(Vec<Threshold>),
    Epsilon(Rational),
}

impl Target {
    /// The worst-case quantities of the range's rows, in order: `δ_M` at each threshold, or
    /// `ε_M` at the target δ (what the exact profiles beside a range answer).
    pub fn quantities(&self) -> Vec<crate::profile::Quantity> {
        use crate::profile::Quantity;
        match self {
            Target::Delta(t) => t.iter().cloned().map(Quantity::Delta).collect(),
            Target::Epsilon(d) => vec![Quantity::Epsilon(d.clone())],
        }
    }
}

/// The question.
#[derive(Clone, Debug)]
pub struct BoundsQuery {
    pub randomizer: Randomizer,
    pub n: u64,
    pub target: Target,
    pub options: PairOptions,
    pub backend: Backend,
    pub escalate_above: Option<f64>,
}

/// A bound and the pair attaining it.
#[derive(Clone, Debug)]
pub struct Attained {
    pub value: Enclosure,
    /// `(x1, x1′)`: the switched user's inputs, the first dataset's first.
    pub pair: (usize, usize),
    /// The background input `x2` (lower bounds only).
    pub background: Option<usize>,
    /// The others' counts over the inputs, when a local search ([`super::search`]) found a
    /// mixed background above every homogeneous one (then `background` is `None`).
    pub others: Option<Vec<u64>>,
}

/// The range at one threshold (or at the target δ).
#[derive(Clone, Debug)]
pub struct RangeRow {
    pub threshold: Option<Threshold>,
    pub lower: Attained,
    pub upper: Attained,
    /// `(considered, distinct)`: the triples the lower bound is the maximum over, of how many
    /// (fewer when capped at [`MAX_LOWER_TRIPLES`]).
    pub lower_triples: (usize, usize),
    /// `(not summed, candidates)` of the upper end's class-distinct pairs and of the lower
    /// end's considered triples: those whose Chernoff bound is below the end.
    pub pruned: [(usize, usize); 2],
}

/// One summed pair as a certificate records it: both directions `[x1 → x1′, x1′ → x1]` per
/// threshold (or at the target δ); for the upper end, the pairs whose classes equal this one's
/// (their sums are the same and are not computed again).
#[derive(Clone, Debug)]
pub struct PairRecord {
    pub pair: (usize, usize),
    /// The background input `x2` (lower end only).
    pub background: Option<usize>,
    pub values: Vec<[Enclosure; 2]>,
    pub same_classes: Vec<(usize, usize)>,
}

/// Every sum behind a range: the upper end's pairs and the lower end's triples, and for
/// randomized response given by a real ε0 the bracket `(a_lo, a_hi)` of `e^{ε0}` (the upper
/// sums at `a_hi`, the lower at `a_lo`).
#[derive(Clone, Debug, Default)]
pub struct RangeProof {
    pub upper: Vec<PairRecord>,
    pub lower: Vec<PairRecord>,
    /// The pairs (and triples) not summed: each one's Chernoff bound shows it cannot reach its
    /// end at any row.
    pub upper_pruned: Vec<PrunedRecord>,
    pub lower_pruned: Vec<PrunedRecord>,
    pub exp_eps0: Option<(Rational, Rational)>,
}

/// A pair (or triple) an end does without: per row, both directions' Chernoff bounds
/// ([`super::chernoff`]), each at most what the end attains there (for ε, at a threshold at most
/// `e^{lo}` of the end's ε, the bound is at most the target δ).
#[derive(Clone, Debug)]
pub struct PrunedRecord {
    pub pair: (usize, usize),
    pub background: Option<usize>,
    pub bounds: Vec<[ChernoffBound; 2]>,
    pub same_classes: Vec<(usize, usize)>,
}

/// Both directions of one unordered pair, per threshold (or at the target δ).
pub struct TwoSided(pub Vec<[Enclosure; 2]>);

impl Widths for TwoSided {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        self.0
            .iter()
            .flatten()
            .map(|e| relative_width_above(e, floor))
            .fold(0.0, f64::max)
    }
}

/// One blanket sum (classes and mass) at the question's target: `[D(x1 → x1′), D(x1′ → x1)]`
/// per threshold (see [`super::upper`]).
struct SumJob<'a> {
    classes: Vec<Class>,
    gamma: Rational,
    query: &'a BoundsQuery,
    /// What is evaluated on the sum, in order (the query's own target, or an audit's several):
    /// the rows of every target, concatenated.
    targets: &'a [Target],
}

impl Computation for SumJob<'_> {
    type Output = TwoSided;

    fn backend(&self) -> Backend {
        self.query.backend
    }

    fn escalate_above(&self) -> Option<f64> {
        self.query.escalate_above
    }

    fn time_limit_seconds(&self) -> f64 {
        self.query.options.time_limit_seconds
    }

    fn exact_ctx(&self) -> ExactCtx {
        Default::default()
    }

    fn check_exact(&self) -> Result<()> {
        // The rows are exact rationals already (`Exact::of`).
        Ok(())
    }

    fn run_in<S: Scalar>(&self, ctx: &S::Ctx, arithmetic: String) -> Result<Computed<TwoSided>> {
        let q = self.query;
        let sum = BlanketSum::<S>::build(&self.classes, &self.gamma, q.n, &q.options, ctx)?;
        let mut arithmetic = arithmetic;
        // Tilted sums per direction, shared by every target (each is valid for every t at or
        // above the t0 it was built for); `held` is what they and the sum itself hold, which
        // the memory guard counts.
        let held = std::cell::Cell::new(sum.bytes);
        let tilted =
            [Direction::Qp, Direction::Pq].map(|dir| TiltedSums::new::<S>(self, dir, &held, ctx));
        // The ε searches first, from the largest target δ down: each root lies above the last
        // one's (D is non-increasing), so the steering starts there.
        let mut searches: Vec<(&Rational, Option<[Enclosure; 2]>)> = self
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Epsilon(delta) => Some((delta, None)),
                Target::Delta(_) => None,
            })
            .collect();
        let mut order: Vec<usize> = (0..searches.len()).collect();
        order.sort_by(|&i, &j| searches[j].0.cmp(searches[i].0));
        let mut from: [Option<f64>; 2] = [None, None];
        for i in order {
            let delta = searches[i].0;
            let mut row = Vec::with_capacity(2);
            for (d, (dir, tilted)) in [Direction::Qp, Direction::Pq]
                .into_iter()
                .zip(&tilted)
                .enumerate()
            {
                // A probe below the truncation depth is evaluated again on tilted windows (any
                // failure there keeps the first, equally valid, enclosure).
                let refine = |c: &Rational, value: Enclosure| -> Enclosure {
                    match tilted.refine(&Threshold::ExpEps(c.clone()), &value) {
                        Ok(Some(better)) => better,
                        _ => value,
                    }
                };
                let found = sum.epsilon_for(dir, delta, ctx, &refine, from[d])?;
                from[d] = Some(found.exp_lo.to_f64()).filter(|t| t.is_finite());
                row.push(found.eps);
            }
            searches[i].1 = Some([row[0].clone(), row[1].clone()]);
        }
        let mut searched = searches.into_iter().map(|(_, row)| row.expect("searched"));
        let mut values = Vec::with_capacity(rows_of(self.targets));
        for target in self.targets {
            match target {
                Target::Delta(thresholds) => {
                    for t in thresholds {
                        let mut row = [Direction::Qp, Direction::Pq].map(|dir| sum.at(dir, t, ctx));
                        // Any failure of a tilted sum (e.g. no memory left for it) keeps the
                        // first, equally valid, enclosure, as in an ε search.
                        for (sums, value) in tilted.iter().zip(&mut row) {
                            if let Ok(Some(better)) = sums.refine(t, value) {
                                *value = better;
                            }
                        }
                        // Each is a hockey-stick divergence of two probability laws
                        // (proofs-notes/blanket-bounds.md): in [0, 1].
                        values.push(row.map(Enclosure::clamp_probability));
                    }
                }
                Target::Epsilon(_) => values.push(searched.next().expect("one per target")),
            }
        }
        if tilted.iter().any(|t| !t.built.borrow().is_empty()) {
            arithmetic += " (values below the truncation depth: tilted windows in MPFR)";
        }
        Ok(Computed {
            result: TwoSided(values),
            arithmetic,
            engine: "blanket",
            states: sum.states,
            omitted: sum.omitted.clone(),
            canonical_states_checked: None,
        })
    }
}

/// Tilted sums of one direction, each valid for every `t` at or above its `t0` (`upper::Tilt`):
/// an ε search reuses them for its probes and builds a new one only below them, or when the
/// windows have drifted too far from where the sum's mass lies.
///
/// Only the latest sum is kept: its memory and the untilted sum's are what the memory guard
/// counts against `--max-memory-gib` when another is built.
struct TiltedSums<'a> {
    job: &'a SumJob<'a>,
    dir: Direction,
    /// Bytes held by every sum of the job (shared by both directions).
    held: &'a std::cell::Cell<f64>,
    mpfr: MpfrCtx,
    built: std::cell::RefCell<Vec<(Rational, BlanketSum<MpfrInterval>)>>,
}

/// True when the truncation depth, not the value, sets the enclosure: its lower end is 0 or it
/// is wider than 10⁻⁶ relative.
fn unresolved(value: &Enclosure) -> bool {
    let zero = Endpoint::Finite(Rational::new());
    value.hi() > &zero && (value.lo() == &zero || value.relative_width() > 1e-6)
}

impl<'a> TiltedSums<'a> {
    fn new<S: Scalar>(
        job: &'a SumJob<'a>,
        dir: Direction,
        held: &'a std::cell::Cell<f64>,
        ctx: &S::Ctx,
    ) -> Self {
        TiltedSums {
            job,
            dir,
            held,
            mpfr: MpfrCtx {
                precision: S::precision_bits(ctx).max(128),
            },
            built: Default::default(),
        }
    }

    /// A tighter enclosure of `D` at `threshold` than `value`, when `value` is unresolved and
    /// the tilted windows give one (`None` otherwise; `value` is then kept, equally valid).
    fn refine(&self, threshold: &Threshold, value: &Enclosure) -> Result<Option<Enclosure>> {
        if !unresolved(value) {
            return Ok(None);
        }
        // The least t the evaluation below uses: the lower end of its e^ε.
        let Some(t) = (match threshold {
            Threshold::Eps(e) => match MpfrInterval::exp_rational(e, &self.mpfr) {
                ExpValue::Enclosed(c) => c.enclosure().lo().finite().cloned(),
                ExpValue::Bracket { lo, .. } => lo.enclosure().lo().finite().cloned(),
            },
            Threshold::ExpEps(c) => Some(c.clone()),
        }) else {
            return Ok(None);
        };
        // A sum built at the largest t0 ≤ t, if it resolves the value.
        let reuse = {
            let built = self.built.borrow();
            built
                .iter()
                .filter(|(t0, _)| *t0 <= t)
                .max_by(|a, b| a.0.cmp(&b.0))
                .map(|(_, sum)| sum.at(self.dir, threshold, &self.mpfr))
        };
        let tilted = match reuse.filter(|v| !unresolved(v)) {
            Some(v) => v,
            None => {
                let job = self.job;
                let Some(tilt) = Tilt::for_threshold(&job.classes, &job.gamma, self.dir, &t) else {
                    return Ok(None);
                };
                // Tilted windows cut at 2^-96 of their mode: the slack is then about 10⁻²⁹ of
                // the value (the kept sum is of the order of the tilted law's scale).
                // The earlier tilted sum is dropped; the new one gets the memory left.
                for (_, old) in self.built.borrow_mut().drain(..) {
                    self.held.set(self.held.get() - old.bytes);
                }
                let options = PairOptions {
                    truncation_bits: job.query.options.truncation_bits.or(Some(96)),
                    memory_limit: (job.query.options.memory_limit as f64 - self.held.get()).max(0.0)
                        as u64,
                    ..job.query.options.clone()
                };
                let sum = BlanketSum::<MpfrInterval>::build_tilted(
                    &job.classes,
                    &job.gamma,
                    job.query.n,
                    &options,
                    &tilt,
                    &self.mpfr,
                )?;
                let v = sum.at(self.dir, threshold, &self.mpfr);
                self.held.set(self.held.get() + sum.bytes);
                self.built.borrow_mut().push((t, sum));
                v
            }
        };
        // Keep whichever is narrower (both enclose the same δ).
        Ok((tilted.relative_width() < value.relative_width()).then_some(tilted))
    }
}

/// Folds one sum's `[qp, pq]` values into the running maxima (by upper end, then lower end);
/// `qp` is attained by the ordered pair `qp_pair`, `pq` by its reverse.
fn keep_largest(
    best: &mut [Option<Attained>],
    values: Vec<[Enclosure; 2]>,
    qp_pair: (usize, usize),
    background: Option<usize>,
) {
    for (slot, [qp, pq]) in best.iter_mut().zip(values) {
        for (value, pair) in [(qp, qp_pair), (pq, (qp_pair.1, qp_pair.0))] {
            let candidate = Attained {
                value,
                pair,
                background,
                others: None,
            };
            let replace = slot.as_ref().is_none_or(|a| {
                (a.value.hi(), a.value.lo()) < (candidate.value.hi(), candidate.value.lo())
            });
            if replace {
                *slot = Some(candidate);
            }
        }
    }
}

/// A 64-bit mix of one value (splitmix64's finaliser).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// At most this many distinct triples are summed for the lower bound: with more, those of largest
/// `σ² = Σ_y (R_{x1} − R_{x1′})²/R_{x2}` (smallest shuffle index, so largest δ by Takagi–Liew's
/// leading term) are kept.  Each is the exact δ of a concrete pair, so the reported value stays
/// a lower bound; only its tightness depends on the choice.
pub const MAX_LOWER_TRIPLES: usize = 64;

/// The triples the lower bound sums, and how many distinct ones there are.
pub fn lower_triples(exact: &Exact) -> (Vec<(usize, usize, usize)>, usize) {
    let all = triples(exact);
    let total = all.len();
    if total <= MAX_LOWER_TRIPLES {
        return (all, total);
    }
    let sigma2 = |&(x1, x1p, x2): &(usize, usize, usize)| -> Rational {
        let rows = &exact.rows;
        (0..rows[x2].len())
            .filter(|&y| rows[x2][y] != 0)
            .map(|y| {
                let diff = Rational::from(&rows[x1][y] - &rows[x1p][y]);
                Rational::from(diff.square_ref()) / &rows[x2][y]
            })
            .sum()
    };
    let mut ranked: Vec<(Rational, (usize, usize, usize))> =
        all.into_iter().map(|t| (sigma2(&t), t)).collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.truncate(MAX_LOWER_TRIPLES);
    (ranked.into_iter().map(|(_, t)| t).collect(), total)
}

/// Unordered pairs `x1 < x1′` and a background `x2`, one per multiset of columns (by hash; see
/// the module docs).
fn triples(exact: &Exact) -> Vec<(usize, usize, usize)> {
    // Each distinct entry gets a small id, so a column is three ids.
    let mut ids: std::collections::HashMap<&Rational, u64> = Default::default();
    let id: Vec<Vec<u64>> = exact
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| {
                    let next = ids.len() as u64;
                    *ids.entry(v).or_insert(next)
                })
                .collect()
        })
        .collect();
    let k = exact.rows.len();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for x1 in 0..k {
        for x1p in x1 + 1..k {
            for x2 in 0..k {
                // The pair's reverse (x1′, x1, x2) has the same two directions, swapped.
                let key = |a: usize, b: usize| {
                    (0..id[0].len()).fold(0u64, |h, y| {
                        h.wrapping_add(mix((id[a][y] << 42)
                            ^ (id[b][y] << 21)
                            ^ id[x2][y]
                            ^ (1 << 63)))
                    })
                };
                if seen.insert(key(x1, x1p)) {
                    seen.insert(key(x1p, x1));
                    out.push((x1, x1p, x2));
                }
            }
        }
    }
    out
}

/// Bits of the rational bracket of `e^{ε0}` for randomized response given by a real ε0.
pub const EXP_EPS0_BRACKET_BITS: u32 = 256;

/// The certified range at every threshold (or at the target δ).
///
/// Randomized response given by a real ε0 is computed on a rational bracket
/// `a_lo < e^{ε0} < a_hi` ([`Randomizer::rational_bracket`]): the upper end at `a_hi`, the
/// lower end's pair chosen at `a_lo`, its value enclosed between its values at `a_lo` and
/// `a_hi` (every pair's δ is non-decreasing in `a`).
pub fn bounds(q: &BoundsQuery) -> Result<Vec<RangeRow>> {
    check_time(q)?;
    Ok(bounds_with_proof(q)?.0)
}

/// The certified range and every sum behind it.
///
/// Call [`check_time`] first.
pub fn bounds_with_proof(q: &BoundsQuery) -> Result<(Vec<RangeRow>, RangeProof)> {
    Ok(bounds_shared(q, std::slice::from_ref(&q.target))?.remove(0))
}

/// The certified ranges of several targets at one n (the query's own target is not used), with
/// the sums behind each: every pair's windows are built once and evaluated at every target, so
/// an audit's claims (δ at each claimed ε, ε at each claimed δ) cost about one range.  Each
/// target's rows and proof are those [`bounds_with_proof`] gives for it alone.
///
/// Call [`check_time_shared`] first.
pub fn bounds_shared(
    q: &BoundsQuery,
    targets: &[Target],
) -> Result<Vec<(Vec<RangeRow>, RangeProof)>> {
    let mut proof = RangeProof::default();
    let clock = Clock {
        start: std::time::Instant::now(),
        limit: q.options.time_limit_seconds,
    };
    let Some(bracket) = q.randomizer.rational_bracket(EXP_EPS0_BRACKET_BITS)? else {
        let exact = Exact::of(&q.randomizer)?;
        let upper = upper_end(q, targets, &exact, &mut proof, &clock)?;
        let (lower, scope) = lower_end(q, targets, &exact, &mut proof, &clock)?;
        return Ok(assemble(targets, lower, upper, scope, proof));
    };
    proof.exp_eps0 = Some(bracket.exp_eps0.clone());
    let at = |r: &Randomizer| BoundsQuery {
        randomizer: r.clone(),
        ..q.clone()
    };
    let (below, above) = (at(&bracket.lower), at(&bracket.upper));
    let upper = upper_end(
        &above,
        targets,
        &Exact::of(&bracket.upper)?,
        &mut proof,
        &clock,
    )?;
    let (mut lower, scope) = lower_end(
        &below,
        targets,
        &Exact::of(&bracket.lower)?,
        &mut proof,
        &clock,
    )?;
    // Each lower value: the attaining pair's δ between its values at a_lo and a_hi.
    let mut values: Vec<((usize, usize, usize), Vec<Enclosure>)> = Vec::new();
    for (i, slot) in lower.iter_mut().enumerate() {
        let a = slot.as_mut().expect("at least one pair");
        let triple = (a.pair.0, a.pair.1, a.background.unwrap_or(a.pair.0));
        if !values.iter().any(|(t, _)| *t == triple) {
            let value = concrete_pair_shared(q, targets, triple.0, triple.1, triple.2)?;
            values.push((triple, value));
        }
        a.value = values
            .iter()
            .find(|(t, _)| *t == triple)
            .expect("computed")
            .1[i]
            .clone();
    }
    Ok(assemble(targets, lower, upper, scope, proof))
}

/// Seconds per output column per triple when the triples are enumerated (two 64-bit mixes;
/// measured: k-RR on 400 inputs enumerates its 3.2e7 triples of 400 columns in about 68 s).
const SECONDS_PER_TRIPLE_COLUMN: f64 = 5.4e-9;

/// How many times a δ target's time an ε target's search takes (k-RR on 4 inputs, n = 300, MPFR
/// at 128 bits: 3–4×).
const EPSILON_SEARCH_FACTOR: f64 = 3.0;

/// Refuses, before any sum, a range whose estimated time exceeds `--max-seconds`: the triples'
/// enumeration (cubic in the inputs) and, by one sum timed on the spot, every class-distinct
/// pair's blanket sum and the summed triples.
pub fn check_time(q: &BoundsQuery) -> Result<()> {
    check_time_shared(q, std::slice::from_ref(&q.target))
}

/// What the evaluations after the first target add, as a fraction of each one's own estimate
/// when the windows are shared (k-RR on 4 inputs, n = 10⁴: four thresholds cost 1.3× one).
const SHARED_TARGET_FACTOR: f64 = 0.25;

/// [`check_time`] for [`bounds_shared`]: the most expensive target in full, and each other at
/// [`SHARED_TARGET_FACTOR`] of its own cost (its windows are already built).
pub fn check_time_shared(q: &BoundsQuery, targets: &[Target]) -> Result<()> {
    let limit = q.options.time_limit_seconds;
    let (k, d) = (q.randomizer.input_count() as f64, q.randomizer.d() as f64);
    let enumeration = k * (k - 1.0) / 2.0 * k * d * SECONDS_PER_TRIPLE_COLUMN;
    let refuse = |seconds: f64, what: String| {
        Error::TooLarge(format!(
            "bounds on {} inputs and {} outputs at n = {} would take about {} ({what}), over --max-seconds {} (raise it, or restrict the inputs)",
            q.randomizer.input_count(),
            q.randomizer.d(),
            q.n,
            crate::exact::pair::duration_text(seconds),
            crate::exact::pair::duration_text(limit)
        ))
    };
    if enumeration > limit {
        return Err(refuse(
            enumeration,
            "enumerating the (x1, x1', x2) triples".into(),
        ));
    }
    let randomizer = match q.randomizer.rational_bracket(EXP_EPS0_BRACKET_BITS)? {
        Some(b) => b.upper,
        None => q.randomizer.clone(),
    };
    let exact = Exact::of(&randomizer)?;
    let inputs = randomizer.input_count();
    // Up front, the costliest pair and triple: the first sum of each end, after which the
    // candidates its Chernoff bounds cannot rule out are timed ([`largest_over`]).
    let mut distinct: Vec<Vec<Class>> = Vec::new();
    let mut pair = 0.0f64;
    for x1 in 0..inputs {
        for x1p in x1 + 1..inputs {
            let (classes, gamma) = exact.blanket_classes(x1, x1p);
            if !distinct.contains(&classes) {
                pair = pair.max(sum_seconds(q, targets, &classes, &gamma));
                distinct.push(classes);
            }
        }
    }
    let (triples, _) = lower_triples(&exact);
    let triple = triples
        .iter()
        .map(|&(x1, x1p, x2)| {
            let (classes, gamma) = exact.reference_classes(x1, x1p, x2);
            sum_seconds(q, targets, &classes, &gamma)
        })
        .fold(0.0, f64::max);
    let seconds = enumeration + pair + triple;
    if seconds > limit {
        return Err(refuse(
            seconds,
            "the costliest pair's and triple's sums, by the size of their windows".into(),
        ));
    }
    Ok(())
}

/// The estimated seconds of one sum at every target: the most expensive target in full, and
/// each other at [`SHARED_TARGET_FACTOR`] of its own cost (its windows are already built).
fn sum_seconds(q: &BoundsQuery, targets: &[Target], classes: &[Class], gamma: &Rational) -> f64 {
    // An ε at a target δ searches over thresholds, each a pass over the sum's values (measured:
    // about 3× a few thresholds' δ).
    let factor_of = |target: &Target| match target {
        Target::Epsilon(_) => match q.backend {
            // Its probes refine to the backend's tolerance, and each below the truncation depth
            // builds tilted sums: in MPFR the search grows about (p/128)^1.7 past 128 bits
            // (measured on k-RR and the three-input example, n = 100–200: 1.5–6× the 128-bit
            // ratio at 256 bits, 6–9× and more at 512).
            Backend::Mpfr { precision } => {
                EPSILON_SEARCH_FACTOR * (f64::from(precision) / 128.0).max(1.0).powf(1.7)
            }
            // Rationals grow with every probe: measured 2–2.5× the δ-target ratio (the
            // three-input example, n = 100–200).
            Backend::Exact => 2.5 * EPSILON_SEARCH_FACTOR,
            Backend::Interval => EPSILON_SEARCH_FACTOR,
        },
        Target::Delta(_) => 1.0,
    };
    let factors: Vec<f64> = targets.iter().map(factor_of).collect();
    let largest = factors.iter().copied().fold(0.0, f64::max);
    let search = largest + SHARED_TARGET_FACTOR * (factors.iter().sum::<f64>() - largest);
    search
        * match q.backend {
            Backend::Mpfr { precision } => super::upper::estimated_seconds::<MpfrInterval>(
                classes,
                gamma,
                q.n,
                &q.options,
                &MpfrCtx { precision },
            ),
            Backend::Exact => super::upper::estimated_seconds::<Rational>(
                classes,
                gamma,
                q.n,
                &q.options,
                &Default::default(),
            ),
            Backend::Interval => super::upper::estimated_seconds::<inari::Interval>(
                classes,
                gamma,
                q.n,
                &q.options,
                &(),
            ),
        }
}

/// `upper/lower` of a range's ends, by their exact midpoints (the values may lie far below
/// the double range); `None` when the lower end may be 0, either end is unbounded, or either
/// is too wide for a midpoint to mean anything (relative width above 1/2).  A reading aid,
/// not a certified number (`verify` re-derives it from the certified ends).
pub fn upper_over_lower(lower: &Enclosure, upper: &Enclosure) -> Option<f64> {
    if lower.relative_width() > 0.5 || upper.relative_width() > 0.5 {
        return None;
    }
    let mid = |e: &Enclosure| match (e.lo(), e.hi()) {
        (Endpoint::Finite(a), Endpoint::Finite(b)) => Some(Rational::from(a + b) / 2u32),
        _ => None,
    };
    let (u, l) = (mid(upper)?, mid(lower)?);
    (lower.lo() > &Endpoint::Finite(Rational::new()))
        .then(|| (u / l).to_f64())
        .filter(|r| r.is_finite())
}

/// The upper end: the largest blanket divergence over the ordered pairs of inputs (pairs with
/// the same classes computed once; pairs whose Chernoff bound is below the end, not at all).
fn upper_end(
    q: &BoundsQuery,
    targets: &[Target],
    exact: &Exact,
    proof: &mut RangeProof,
    clock: &Clock,
) -> Result<Vec<Option<Attained>>> {
    let k = q.randomizer.input_count();
    let mut candidates: Vec<Candidate> = Vec::new();
    for x1 in 0..k {
        for x1p in x1 + 1..k {
            let (classes, gamma) = exact.blanket_classes(x1, x1p);
            match candidates.iter_mut().find(|c| c.classes == classes) {
                Some(c) => c.same_classes.push((x1, x1p)),
                None => candidates.push(Candidate {
                    pair: (x1, x1p),
                    background: None,
                    classes,
                    gamma,
                    same_classes: Vec::new(),
                }),
            }
        }
    }
    let progress = Stage::start(
        "bounds: upper end",
        "pairs of inputs",
        (k * (k - 1) / 2) as u64,
    );
    let (best, summed, pruned) = largest_over(q, targets, candidates, &progress, clock, "pairs")?;
    proof.upper = summed;
    proof.upper_pruned = pruned;
    Ok(best)
}

/// The lower end: the largest exact δ over the concrete pairs of the summed triples (those
/// whose Chernoff bound is below the end are not summed), and `(considered, distinct)`.
fn lower_end(
    q: &BoundsQuery,
    targets: &[Target],
    exact: &Exact,
    proof: &mut RangeProof,
    clock: &Clock,
) -> Result<(Slots, (usize, usize))> {
    let (considered, distinct) = lower_triples(exact);
    let scope = (considered.len(), distinct);
    let candidates = considered
        .into_iter()
        .map(|(x1, x1p, x2)| {
            let (classes, gamma) = exact.reference_classes(x1, x1p, x2);
            Candidate {
                pair: (x1, x1p),
                background: Some(x2),
                classes,
                gamma,
                same_classes: Vec::new(),
            }
        })
        .collect();
    let progress = Stage::start("bounds: lower end", "neighbouring pairs", scope.0 as u64);
    let (best, summed, pruned) = largest_over(q, targets, candidates, &progress, clock, "triples")?;
    proof.lower = summed;
    proof.lower_pruned = pruned;
    Ok((best, scope))
}

/// An end's value per row, with the pair attaining it (`None` until a sum gives one).
type Slots = Vec<Option<Attained>>;

/// One sum an end may need: an unordered pair (with its background `x2` for the lower end),
/// its classes, and the pairs of equal classes it stands for.
struct Candidate {
    pair: (usize, usize),
    background: Option<usize>,
    classes: Vec<Class>,
    gamma: Rational,
    same_classes: Vec<(usize, usize)>,
}

impl Candidate {
    fn chernoff(&self, n: u64) -> chernoff::Sum<'_> {
        chernoff::Sum {
            classes: &self.classes,
            gamma: &self.gamma,
            n,
        }
    }
}

/// When a range started, and the `--max-seconds` it has.
pub(crate) struct Clock {
    start: std::time::Instant,
    limit: f64,
}

/// The largest value over the candidates at every row, the summed ones' records and the pruned
/// ones'.  The candidates are summed from the likeliest to attain the end (by the Chernoff
/// bound in doubles, [`rank`]); once every row has a value, a candidate whose certified
/// Chernoff bound is at most it at every row, in both directions, is not summed.  After the
/// first sum, the candidates that the doubles cannot rule out are timed (their estimates scaled
/// by what the first sum took against its own), and a run that would
/// pass `--max-seconds` is refused there.
fn largest_over(
    q: &BoundsQuery,
    targets: &[Target],
    mut candidates: Vec<Candidate>,
    progress: &Stage,
    clock: &Clock,
    what: &str,
) -> Result<(Slots, Vec<PairRecord>, Vec<PrunedRecord>)> {
    let mut ranked: Vec<(f64, Candidate)> = candidates
        .drain(..)
        .map(|c| (rank(targets, &c.chernoff(q.n)), c))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total = ranked.len();
    let mut best: Vec<Option<Attained>> = vec![None; rows_of(targets)];
    let (mut summed, mut pruned) = (Vec::new(), Vec::new());
    for (i, (_, c)) in ranked.iter().enumerate() {
        progress.advance(1 + c.same_classes.len() as u64);
        if let Some(bounds) = pruned_by_chernoff(q.n, targets, c, &best) {
            pruned.push(PrunedRecord {
                pair: c.pair,
                background: c.background,
                bounds,
                same_classes: c.same_classes.clone(),
            });
            continue;
        }
        let job = SumJob {
            classes: c.classes.clone(),
            gamma: c.gamma.clone(),
            query: q,
            targets,
        };
        let sum_started = std::time::Instant::now();
        let values = compute(&job)?.result.0;
        let sum_took = sum_started.elapsed().as_secs_f64();
        summed.push(PairRecord {
            pair: c.pair,
            background: c.background,
            values: values.clone(),
            same_classes: c.same_classes.clone(),
        });
        keep_largest(&mut best, values, c.pair, c.background.filter(|_| q.n > 1));
        if i == 0 {
            let rest: Vec<&Candidate> = ranked[1..]
                .iter()
                .map(|(_, c)| c)
                .filter(|c| !likely_pruned(q.n, targets, c, &best))
                .collect();
            // The estimates scaled by what the first sum took against its own estimate (within
            // [1/8, 8]: one measurement steers, it does not decide alone).
            let first = sum_seconds(q, targets, &c.classes, &c.gamma);
            let measured = if first > 0.0 {
                (sum_took / first).clamp(0.125, 8.0)
            } else {
                1.0
            };
            let seconds: f64 = measured
                * rest
                    .iter()
                    .map(|c| sum_seconds(q, targets, &c.classes, &c.gamma))
                    .sum::<f64>();
            let elapsed = clock.start.elapsed().as_secs_f64();
            if elapsed + seconds > clock.limit {
                return Err(Error::TooLarge(format!(
                    "bounds on {} inputs and {} outputs at n = {} would take about {} more ({} of {total} {what} not ruled out by their Chernoff bound against the first sum), over --max-seconds {} (raise it, or restrict the inputs)",
                    q.randomizer.input_count(),
                    q.randomizer.d(),
                    q.n,
                    crate::exact::pair::duration_text(seconds),
                    rest.len(),
                    crate::exact::pair::duration_text(clock.limit)
                )));
            }
        }
    }
    Ok((best, summed, pruned))
}

/// Per row: the threshold a candidate's bound is evaluated at and the value it must not pass
/// (δ rows: the lower threshold bracket and the end's lower endpoint; ε rows: a threshold at
/// most `e^{lo}` of the end's ε, and the target δ).  `None` while a row has no value.  A limit
/// of 0 prunes only the candidates whose sum is exactly 0 there (no class has `u > t v`).
fn pruning_rows(
    targets: &[Target],
    best: &[Option<Attained>],
) -> Option<Vec<(Rational, Rational)>> {
    let rows = targets.iter().flat_map(|target| match target {
        Target::Delta(thresholds) => thresholds.iter().map(|t| (Some(t), None)).collect(),
        Target::Epsilon(delta) => vec![(None, Some(delta))],
    });
    best.iter()
        .zip(rows)
        .map(|(slot, row)| {
            let lo = slot.as_ref()?.value.lo().finite()?.clone();
            match row {
                (Some(t), _) => Some((threshold_below(t), lo)),
                (None, delta) => Some((chernoff::threshold_below_exp(&lo), delta?.clone())),
            }
        })
        .collect()
}

/// A rational at most the threshold `t = e^ε` (the Chernoff bound there holds above it).
pub(crate) fn threshold_below(t: &Threshold) -> Rational {
    match t {
        Threshold::Eps(e) => chernoff::threshold_below_exp(e),
        Threshold::ExpEps(c) => c.clone(),
    }
}

/// The candidate's certified Chernoff bounds, when every one is at most its row's limit.
fn pruned_by_chernoff(
    n: u64,
    targets: &[Target],
    c: &Candidate,
    best: &[Option<Attained>],
) -> Option<Vec<[ChernoffBound; 2]>> {
    let sum = c.chernoff(n);
    pruning_rows(targets, best)?
        .into_iter()
        .map(|(t, limit)| {
            let bound = |reverse| sum.bound(&t, reverse).filter(|b| b.value <= limit);
            Some([bound(false)?, bound(true)?])
        })
        .collect()
}

/// Whether the doubles expect [`pruned_by_chernoff`] to succeed (for the time estimate).
fn likely_pruned(n: u64, targets: &[Target], c: &Candidate, best: &[Option<Attained>]) -> bool {
    let sum = c.chernoff(n);
    pruning_rows(targets, best).is_some_and(|rows| {
        rows.iter().all(|(t, limit)| {
            let ln_limit = chernoff::ln_f64(limit);
            [false, true]
                .into_iter()
                .all(|rev| sum.approx_log_bound(t.to_f64(), rev) <= ln_limit)
        })
    })
}

/// How likely a candidate is to attain its end, by the Chernoff bound in doubles at the first
/// row: its logarithm at a δ row's threshold, or for an ε row the ε where it meets the target δ.
fn rank(targets: &[Target], sum: &chernoff::Sum<'_>) -> f64 {
    let at = |t: f64| {
        [false, true]
            .into_iter()
            .map(|rev| sum.approx_log_bound(t, rev))
            .fold(f64::NEG_INFINITY, f64::max)
    };
    match targets.first() {
        Some(Target::Delta(thresholds)) => thresholds.first().map_or(0.0, |t| match t {
            Threshold::Eps(e) => at(e.to_f64().exp()),
            Threshold::ExpEps(c) => at(c.to_f64()),
        }),
        Some(Target::Epsilon(delta)) => {
            let ln_delta = delta.to_f64().ln();
            let (mut lo, mut hi) = (0.0f64, 64.0f64);
            if at(1.0) <= ln_delta {
                return 0.0;
            }
            for _ in 0..50 {
                let mid = 0.5 * (lo + hi);
                if at(mid.exp()) > ln_delta {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            hi
        }
        None => 0.0,
    }
}

/// The rows of each target's range, and the proof split the same way.
fn assemble(
    targets: &[Target],
    lower: Vec<Option<Attained>>,
    upper: Vec<Option<Attained>>,
    lower_triples: (usize, usize),
    proof: RangeProof,
) -> Vec<(Vec<RangeRow>, RangeProof)> {
    let mut rows = lower.into_iter().zip(upper);
    let mut start = 0;
    let pruned = [
        (
            proof.upper_pruned.len(),
            proof.upper_pruned.len() + proof.upper.len(),
        ),
        (
            proof.lower_pruned.len(),
            proof.lower_pruned.len() + proof.lower.len(),
        ),
    ];
    let split = |records: &[PairRecord], start: usize, len: usize| -> Vec<PairRecord> {
        records
            .iter()
            .map(|r| PairRecord {
                values: r.values[start..start + len].to_vec(),
                ..r.clone()
            })
            .collect()
    };
    targets
        .iter()
        .map(|target| {
            let thresholds: Vec<Option<Threshold>> = match target {
                Target::Delta(t) => t.iter().cloned().map(Some).collect(),
                Target::Epsilon(_) => vec![None],
            };
            let len = thresholds.len();
            let target_rows = thresholds
                .into_iter()
                .zip(rows.by_ref())
                .map(|(threshold, (lower, upper))| RangeRow {
                    threshold,
                    lower: lower.expect("at least one pair"),
                    upper: upper.expect("at least one pair"),
                    lower_triples,
                    pruned,
                })
                .collect();
            let split_pruned = |records: &[PrunedRecord]| -> Vec<PrunedRecord> {
                records
                    .iter()
                    .map(|r| PrunedRecord {
                        bounds: r.bounds[start..start + len].to_vec(),
                        ..r.clone()
                    })
                    .collect()
            };
            let target_proof = RangeProof {
                upper: split(&proof.upper, start, len),
                lower: split(&proof.lower, start, len),
                upper_pruned: split_pruned(&proof.upper_pruned),
                lower_pruned: split_pruned(&proof.lower_pruned),
                exp_eps0: proof.exp_eps0.clone(),
            };
            start += len;
            (target_rows, target_proof)
        })
        .collect()
}

/// The exact value (δ at each threshold, or ε at the target δ) of one concrete neighbouring
/// pair `(x1, x2, …, x2) ≃ (x1′, x2, …, x2)`, in the direction `x1 → x1′`: the lower bound's
/// sum for that one triple (`verify` re-derives a recorded witness with it).  For randomized
/// response given by a real ε0, between its values at the two ends of the bracket of `e^{ε0}`.
pub fn concrete_pair(
    q: &BoundsQuery,
    x1: usize,
    x1_prime: usize,
    x2: usize,
) -> Result<Vec<Enclosure>> {
    concrete_pair_shared(q, std::slice::from_ref(&q.target), x1, x1_prime, x2)
}

/// [`concrete_pair`] at several targets (their rows concatenated), on one sum.
fn concrete_pair_shared(
    q: &BoundsQuery,
    targets: &[Target],
    x1: usize,
    x1_prime: usize,
    x2: usize,
) -> Result<Vec<Enclosure>> {
    let at = |r: &Randomizer| -> Result<Vec<Enclosure>> {
        let exact = Exact::of(r)?;
        let (classes, gamma) = exact.reference_classes(x1, x1_prime, x2);
        let q = BoundsQuery {
            randomizer: r.clone(),
            ..q.clone()
        };
        let job = SumJob {
            classes,
            gamma,
            query: &q,
            targets,
        };
        Ok(compute(&job)?
            .result
            .0
            .into_iter()
            .map(|[forward, _]| forward)
            .collect())
    };
    let Some(bracket) = q.randomizer.rational_bracket(EXP_EPS0_BRACKET_BITS)? else {
        return at(&q.randomizer);
    };
    let (below, above) = (at(&bracket.lower)?, at(&bracket.upper)?);
    // A δ lies in [0, 1]; an ε (the target δ's) does not: only δ rows are held there.
    let is_delta = targets
        .iter()
        .flat_map(|t| std::iter::repeat_n(matches!(t, Target::Delta(_)), t.rows()));
    Ok(below
        .into_iter()
        .zip(above)
        .zip(is_delta)
        .map(|((lo, hi), is_delta)| {
            let e = Enclosure::new(lo.lo().clone(), hi.hi().clone().max(lo.hi().clone()));
            if is_delta { e.clamp_probability() } else { e }
        })
        .collect())
}

/// The blanket sums of the ordered pair `x1 → x1′` and its reverse, per threshold (or at the
/// target δ): `[D(x1 → x1′), D(x1′ → x1)]`; for randomized response given by a real ε0, at
/// `a_hi` of the bracket (`verify` re-derives a recorded pair with it).
pub fn blanket_pair(q: &BoundsQuery, x1: usize, x1_prime: usize) -> Result<Vec<[Enclosure; 2]>> {
    let randomizer = match q.randomizer.rational_bracket(EXP_EPS0_BRACKET_BITS)? {
        Some(b) => b.upper,
        None => q.randomizer.clone(),
    };
    let exact = Exact::of(&randomizer)?;
    let (classes, gamma) = exact.blanket_classes(x1, x1_prime);
    let q = BoundsQuery {
        randomizer,
        ..q.clone()
    };
    let job = SumJob {
        classes,
        gamma,
        query: &q,
        targets: std::slice::from_ref(&q.target),
    };
    Ok(compute(&job)?.result.0)
}

impl Target {
    /// The rows it evaluates to: one per threshold, or one at the target δ.
    fn rows(&self) -> usize {
        match self {
            Target::Delta(thresholds) => thresholds.len(),
            Target::Epsilon(_) => 1,
        }
    }
}

/// The rows several targets evaluate to, concatenated.
fn rows_of(targets: &[Target]) -> usize {
    targets.iter().map(Target::rows).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::randomizer::load_randomizer;

    #[test]
    fn shared_targets_give_each_target_its_own_range() {
        // Rational and real ε0 (the bracket path): every target of a shared run has the rows
        // and proof of its own run.
        for spec in ["k-rr:k=3,exp_eps0=3,inputs=3", "k-rr:k=3,eps0=1,inputs=3"] {
            let r = load_randomizer(spec).unwrap();
            let eps = |e: u32| Threshold::Eps(Rational::from((e, 4)));
            let targets = vec![
                Target::Delta(vec![eps(1), eps(2)]),
                Target::Epsilon(Rational::from((1, 100))),
                Target::Epsilon(Rational::from((1, 10))),
            ];
            let q = BoundsQuery {
                randomizer: r,
                n: 40,
                target: Target::Delta(Vec::new()),
                options: PairOptions::default(),
                backend: Backend::Interval,
                escalate_above: None,
            };
            let shared = bounds_shared(&q, &targets).unwrap();
            assert_eq!(shared.len(), targets.len());
            for (target, (rows, proof)) in targets.iter().zip(shared) {
                let alone = BoundsQuery {
                    target: target.clone(),
                    ..q.clone()
                };
                let (want_rows, want_proof) = bounds_with_proof(&alone).unwrap();
                assert_eq!(rows.len(), want_rows.len());
                for (got, want) in rows.iter().zip(&want_rows) {
                    assert_eq!(got.lower.value, want.lower.value, "{spec}");
                    assert_eq!(got.upper.value, want.upper.value, "{spec}");
                    assert_eq!(got.lower.pair, want.lower.pair);
                    assert_eq!(
                        format!("{:?}", got.threshold),
                        format!("{:?}", want.threshold)
                    );
                }
                // A sum in both has the same values; a candidate the shared run sums (for
                // another target's rows) may be pruned alone, but each is one or the other.
                let key = |r: &PairRecord| (r.pair, r.background);
                for got in proof.upper.iter().chain(&proof.lower) {
                    if let Some(want) = want_proof
                        .upper
                        .iter()
                        .chain(&want_proof.lower)
                        .find(|w| key(w) == key(got))
                    {
                        assert_eq!(got.values, want.values, "{spec}");
                    }
                }
                let every = |p: &RangeProof| {
                    let mut all: Vec<_> = p.upper.iter().chain(&p.lower).map(key).collect();
                    all.extend(
                        p.upper_pruned
                            .iter()
                            .chain(&p.lower_pruned)
                            .map(|r| (r.pair, r.background)),
                    );
                    all.sort();
                    all
                };
                assert_eq!(every(&proof), every(&want_proof), "{spec}");
                assert_eq!(proof.exp_eps0, want_proof.exp_eps0);
            }
        }
    }

    #[test]
    fn many_triples_keep_those_with_the_smallest_shuffle_index() {
        // Ten inputs with distinct rows: 45 pairs × 10 backgrounds, all distinct, more than
        // the cap; the kept ones are those of largest σ² (sorted), and k-RR keeps all three.
        let rows: Vec<String> = (1..=10)
            .map(|x| format!("[\"{x}/20\", \"{}/20\", \"9/20\"]", 11 - x))
            .collect();
        let inputs: Vec<String> = (0..10).map(|x| format!("\"i{x}\"")).collect();
        let file = std::env::temp_dir().join("shufflecert-many-triples.toml");
        std::fs::write(
            &file,
            format!(
                "inputs = [{}]\nrows = [{}]\n",
                inputs.join(","),
                rows.join(",")
            ),
        )
        .unwrap();
        let r = load_randomizer(file.to_str().unwrap()).unwrap();
        let exact = Exact::of(&r).unwrap();
        let (kept, total) = lower_triples(&exact);
        assert!(total > MAX_LOWER_TRIPLES, "{total}");
        assert_eq!(kept.len(), MAX_LOWER_TRIPLES);
        let sigma2 = |&(a, b, c): &(usize, usize, usize)| -> Rational {
            (0..3)
                .map(|y| {
                    let d = Rational::from(&exact.rows[a][y] - &exact.rows[b][y]);
                    Rational::from(d.square_ref()) / &exact.rows[c][y]
                })
                .sum()
        };
        // The pair of most different rows (i0, i9) is among the kept.
        assert!(kept.iter().any(|t| (t.0, t.1) == (0, 9)));
        let smallest_kept = kept.iter().map(sigma2).min().unwrap();
        let all = triples(&exact);
        let above = all.iter().filter(|t| sigma2(t) > smallest_kept).count();
        assert!(above < MAX_LOWER_TRIPLES);
        let k_rr = Exact::of(&load_randomizer("k-rr:k=5,exp_eps0=3,inputs=5").unwrap()).unwrap();
        assert_eq!(lower_triples(&k_rr).0.len(), lower_triples(&k_rr).1);
    }
}
