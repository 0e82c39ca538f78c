//! The privacy profile of the shuffled mechanism: the worst case over all compositions.
//!
//! By exchangeability (Part I §2.1) every neighbouring pair of datasets induces
//! `(T_{n,k}, T_{n,k+1})` for some `k ∈ {0, …, n−1}`, in one order or the other, so
//!
//! `δ_M(ε) = max_k max(δ_{T_{n,k+1}‖T_{n,k}}(ε), δ_{T_{n,k}‖T_{n,k+1}}(ε))`,
//!
//! and the smallest ε with `δ_M(ε) ≤ D` is `max_k ε_k` with `ε_k` the two-sided ε of pair k.
//! Nothing is assumed about which k is worst.
//!
//! **Scan.** A divide-and-conquer tree over k: the node for `[lo, hi)` holds the law `C` of a
//! group of `n − hi` W0-users and `lo` W1-users; its children add `hi − mid` W0-users (left,
//! `[lo, mid)`) or `mid − lo` W1-users (right, `[mid, hi)`), so neighbouring k share their
//! convolutions.  At a leaf `[k, k+1)` the group is exactly `T_{n−1,k}`.
//!
//! **Pruning (branch and bound).** For every k in `[lo, hi)`,
//! `T_{n,k} = (C ⊛ W0) ⊛ V_k` and `T_{n,k+1} = (C ⊛ W1) ⊛ V_k` with `V_k` the law of the
//! remaining `hi − 1 − k` W0-users and `k − lo` W1-users, independent of the distinguished
//! user.  Convolving both laws with `V_k` is one Markov kernel, so by the data-processing
//! inequality for the hockey-stick divergence both curves of pair k lie below those of the
//! node pair `(C ⊛ W0, C ⊛ W1) = (T_{m,lo}, T_{m,lo+1})`, `m = n − (hi − lo) + 1`.  A node
//! whose certified upper bound cannot reach the best certified lower bound found so far is
//! dropped with its whole range of k (strictly below, so ties are never dropped).  Seed pairs (both
//! ends of the range, then a dive into the more dangerous child at every level) give the first
//! bounds, and are intersected into the records of their k afterwards; subtrees scanned in
//! parallel start from their parent's bounds and do not share theirs, so what is pruned, and so
//! the output, is the same at any thread count (profile.md).
//!
//! **Quantities.** One scan answers a list of [`Quantity`]: δ_M at thresholds, ε_M for target
//! δ, and the Rényi profile `max_k max(D_α(T_{n,k+1}‖T_{n,k}), D_α(T_{n,k}‖T_{n,k+1}))`.  Each
//! keeps its own best lower bound and is closed below a node on its own; the data-processing
//! inequality holds for Rényi divergences too (they are monotone functions of f-divergences),
//! so the same node bound applies.

use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::arith::interval::f64_bounds;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::enclosure::{Enclosure, Endpoint, Tri, exact_string};
use crate::error::{Error, Result};
use crate::exact::curve::{self, Curve, Direction};
use crate::exact::divergence::renyi;
use crate::exact::group::{BinaryGroup, GeneralGroup, GroupLaw};
use crate::exact::histogram::SimplexIndex;
use crate::exact::law::PairLaw;
use crate::exact::pair::{
    PairOptions, Route, check_composition, check_memory, engine_mechanism, group_pair, plan,
};
use crate::exact::window::WindowGroup;
use crate::mechanism::{Channel, Mechanism};
use crate::progress::Stage;
use crate::query::{Backend, PairJob, PairQuery, Threshold, Widths, answer};
use inari::Interval;
use rug::Rational;
use std::sync::Mutex;

/// What a profile over `k ∈ [a, b]` of n users answers, in words: the mechanism's guarantee
/// only when it covers every k.  `ends` are the boundary pairs outside the range that a shard
/// also evaluated (`--with-ends`): its maximum is over them too.
pub fn scope_text(n: u64, (a, b): (u64, u64), ends: &[u64]) -> String {
    if (a, b) != (0, n - 1) {
        let ends = match ends {
            [] => String::new(),
            [k] => format!(" and the boundary pair k = {k}"),
            ks => format!(
                " and the boundary pairs k = {}",
                ks.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        format!(
            "PARTIAL profile: only k in {a}..{b}{ends} was scanned; this is not the mechanism's guarantee"
        )
    } else {
        format!(
            "mechanism-wide: all k in 0..{} (every neighbouring pair, both orders)",
            n - 1
        )
    }
}

/// A quantity whose worst case over every composition k (both directions, or both orders) the
/// profile certifies.
#[derive(Clone, Debug)]
pub enum Quantity {
    /// `δ_M` at a threshold.
    Delta(Threshold),
    /// The smallest ε with `δ_M(ε) ≤ D`.
    Epsilon(Rational),
    /// `max_k max(D_α(Q‖P), D_α(P‖Q))` for a rational order `α > 1`.
    Renyi(Rational),
}

impl Quantity {
    /// A short description, e.g. `δ at ε = 0.1`.
    pub fn describe(&self) -> String {
        match self {
            Quantity::Delta(t) => format!("δ at ε = {}", t.eps_text()),
            Quantity::Epsilon(d) => format!("ε at δ = {}", exact_string(d)),
            Quantity::Renyi(a) => format!("Rényi divergence of order {}", exact_string(a)),
        }
    }

    /// The quantity as JSON: `{"kind": "delta", "eps": …}`, `{"kind": "epsilon", "delta": …}`
    /// or `{"kind": "renyi", "order": …}` (exact numbers; `eps` as `ln(c)` for a given `e^ε`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Quantity::Delta(t) => serde_json::json!({ "kind": "delta", "eps": t.eps_text() }),
            Quantity::Epsilon(d) => {
                serde_json::json!({ "kind": "epsilon", "delta": exact_string(d) })
            }
            Quantity::Renyi(a) => serde_json::json!({ "kind": "renyi", "order": exact_string(a) }),
        }
    }

    /// The quantity back from [`Quantity::to_json`].
    pub fn from_json(v: &serde_json::Value) -> Option<Quantity> {
        let number = |key: &str| v[key].as_str().and_then(crate::enclosure::parse_rational);
        match v["kind"].as_str()? {
            "delta" => Threshold::from_text(v["eps"].as_str()?).map(Quantity::Delta),
            "epsilon" => number("delta").map(Quantity::Epsilon),
            "renyi" => number("order").map(Quantity::Renyi),
            _ => None,
        }
    }

    /// Checks the quantity's parameter (a δ target in (0, 1), a Rényi order > 1).
    pub fn validate(&self) -> Result<()> {
        match self {
            Quantity::Delta(_) => Ok(()),
            Quantity::Epsilon(d) => curve::check_target(d),
            Quantity::Renyi(a) if *a > 1 => Ok(()),
            Quantity::Renyi(a) => Err(Error::argument(
                "--renyi-order",
                format!("orders must exceed 1, got {}", exact_string(a)),
            )),
        }
    }
}

/// A profile computation.
#[derive(Clone, Debug)]
pub struct ProfileQuery {
    pub mechanism: Mechanism,
    pub n: u64,
    /// Restrict the scan to `k ∈ [a, b]` (a partial profile).
    pub k_range: Option<(u64, u64)>,
    pub quantities: Vec<Quantity>,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    /// Branch and bound on (default); off scans every k (for cross-checks).
    pub prune: bool,
    /// A partial scan also evaluates the boundary pairs k = 0 and k = n − 1 outside its range
    /// and takes the maximum over them too (`--with-ends`): a shard then prunes against the
    /// values where the maximum usually lies, and `merge` still gets the maximum of maxima.
    pub with_ends: bool,
    /// With the interval backend: refine the maximising pairs with the pair engine when the
    /// profile's relative width exceeds this.
    pub escalate_above: Option<f64>,
}

/// One composition and direction with its certified value.
#[derive(Clone, Debug)]
pub struct KValue {
    pub k: u64,
    pub direction: Direction,
    pub value: Enclosure,
}

impl KValue {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "k": self.k, "direction": self.direction.key(), "value": self.value.to_json() })
    }
}

/// The worst case of one quantity.
#[derive(Clone, Debug)]
pub struct ProfileRow {
    pub quantity: Quantity,
    /// Encloses the maximum over every scanned k and both directions.
    pub value: Enclosure,
    /// Every evaluated (k, direction) whose certified upper bound reaches the lower bound of
    /// `value`.
    pub argmax: Vec<KValue>,
    /// Ranges `[a, b)` of k, both directions, whose value is certified to be exactly 0 and may
    /// be the maximum (ε quantities whose maximum may be 0: all tie).
    pub argmax_ranges: Vec<(u64, u64)>,
    /// False when the maximum's certified lower bound is 0 while its upper bound is not (δ or
    /// Rényi only): the value lies below this computation's resolution (truncation or f64
    /// underflow), so the upper end comes from node bounds and the argmax is not listed;
    /// `--backend mpfr` (deeper truncation) or `--no-truncation` resolve it.
    pub resolved: bool,
}

/// Work done by the scan.
#[derive(Clone, Debug, Default)]
pub struct ProfileStats {
    /// Pairs evaluated in full at a leaf.
    pub pairs_evaluated: u64,
    /// Values of k dropped by the data-processing bound without their own pair.
    pub k_pruned: u64,
    /// Tree nodes whose bound was evaluated.
    pub nodes_bounded: u64,
    /// Maximising pairs recomputed with the pair engine to tighten the result.
    pub pairs_refined: u64,
}

/// A profile with how it was obtained.
#[derive(Clone, Debug)]
pub struct Profile {
    /// One row per quantity, in the query's order.
    pub rows: Vec<ProfileRow>,
    pub stats: ProfileStats,
    /// The scanned range `[a, b]` of k; `partial` when it is not `[0, n−1]`.
    pub k_range: (u64, u64),
    pub partial: bool,
    /// The boundary pairs outside `k_range` evaluated too (`ProfileQuery::with_ends`): the rows
    /// are maxima over them as well, and `records` holds them.
    pub ends: Vec<u64>,
    pub arithmetic: String,
    pub engine: &'static str,
    /// Every pair evaluated in full (pruned k have none).
    pub records: Vec<LeafRecord>,
    /// Per quantity, what the nodes closed without evaluating their leaves contribute.
    pub closed: Vec<ClosedNodes>,
    /// Every range of k closed for a quantity at a node, and why: with the records, a proof
    /// that covers every k (`verify` re-derives it).
    pub closures: Vec<Closure>,
}

/// Why a range of k was closed for a quantity at a node (profile.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClosureKind {
    /// The node's value is certainly below the best lower bound found (for ε: the node's δ at
    /// the best ε is below the target).
    Below,
    /// The node's value lies below resolution; its upper end bounds every k below.
    Ceiling,
    /// Every k below is exactly 0 (δ or Rényi), or has ε = 0 (the node's TV ≤ D).
    Tie,
}

impl ClosureKind {
    pub fn name(&self) -> &'static str {
        match self {
            ClosureKind::Below => "below",
            ClosureKind::Ceiling => "ceiling",
            ClosureKind::Tie => "tie",
        }
    }
}

/// A range `[range.0, range.1)` of k closed for one quantity at a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closure {
    pub range: (u64, u64),
    pub quantity: usize,
    pub kind: ClosureKind,
}

/// What nodes closed without their leaves contribute to one quantity's row (besides the nodes
/// pruned strictly below the maximum, which contribute nothing).
#[derive(Clone, Debug, Default)]
pub struct ClosedNodes {
    /// The largest certified upper bound of a node closed below resolution.
    pub ceiling: Option<Endpoint>,
    /// Ranges `[a, b)` of k whose value is certified to be exactly 0 in both directions: their
    /// node's δ or Rényi value is exactly 0, or for ε the node's `δ(0) = TV ≤ D`.
    pub zero_ties: Vec<(u64, u64)>,
}

impl Profile {
    /// Takes the rows `slots` from a rescan of those quantities (`rescan.rows[j]` is the
    /// quantity of `slots[j]`), e.g. at a higher precision, with its records and ceilings.  Two
    /// certified values of the same quantity must overlap; disjoint ones prove a bug and are
    /// reported as an error.
    pub fn merge_rescan(&mut self, slots: &[usize], rescan: &Profile) -> Result<()> {
        for (j, &slot) in slots.iter().enumerate() {
            let (old, new) = (&self.rows[slot].value, &rescan.rows[j].value);
            if !old.overlaps(new) {
                return Err(Error::Internal(format!(
                    "the rescan of {} gave {new}, disjoint from {old}; no result is reported",
                    self.rows[slot].quantity.describe()
                )));
            }
            // Both contain the value: keep their intersection, and the rescan's maximisers
            // that still reach its lower end.
            let value = Enclosure::new(
                old.lo().clone().max(new.lo().clone()),
                old.hi().clone().min(new.hi().clone()),
            );
            let mut row = rescan.rows[j].clone();
            row.argmax.retain(|v| v.value.hi() >= value.lo());
            row.value = value;
            self.rows[slot] = row;
            self.closed[slot] = rescan.closed[j].clone();
            self.closures.retain(|c| c.quantity != slot);
            self.closures
                .extend(
                    rescan
                        .closures
                        .iter()
                        .filter(|c| c.quantity == j)
                        .map(|c| Closure {
                            quantity: slot,
                            ..c.clone()
                        }),
                );
            for record in &mut self.records {
                record.qp[slot] = None;
                record.pq[slot] = None;
            }
            for fresh in &rescan.records {
                let index = match self.records.iter().position(|r| r.k == fresh.k) {
                    Some(i) => i,
                    None => {
                        let width = self.rows.len();
                        self.records.push(LeafRecord {
                            k: fresh.k,
                            qp: vec![None; width],
                            pq: vec![None; width],
                        });
                        self.records.len() - 1
                    }
                };
                self.records[index].qp[slot] = fresh.qp[j].clone();
                self.records[index].pq[slot] = fresh.pq[j].clone();
            }
        }
        Ok(())
    }
}

/// Runs the profile, reporting the values of k resolved as the stage `profile scan`.
pub fn profile(query: &ProfileQuery) -> Result<Profile> {
    let n = query.n;
    if n < 1 {
        return Err(Error::argument("--n", "must be at least 1"));
    }
    let (a, b) = query.k_range.unwrap_or((0, n - 1));
    for end in [a, b] {
        check_composition(n, end)
            .map_err(|_| Error::argument("--k-range", format!("must lie within 0..{}", n - 1)))?;
    }
    if a > b {
        return Err(Error::argument(
            "--k-range",
            format!("start {a} exceeds end {b}"),
        ));
    }
    if query.quantities.is_empty() {
        return Err(Error::argument("--eps", "give at least one quantity"));
    }
    for q in &query.quantities {
        q.validate()?;
    }
    let partial = (a, b) != (0, n - 1);
    let progress = Stage::start("profile scan", "values of k", b - a + 1);
    let progress = &progress;
    let mut result = match query.backend {
        Backend::Exact => {
            query.mechanism.require_rational()?;
            scan_in::<Rational>(query, (a, b), &query.exact_ctx, progress)?
        }
        Backend::Interval => scan_in::<Interval>(query, (a, b), &(), progress)?,
        Backend::Mpfr { precision } => {
            scan_in::<MpfrInterval>(query, (a, b), &MpfrCtx { precision }, progress)?
        }
    };
    result.partial = partial;
    if let (Backend::Interval, Some(target)) = (query.backend, query.escalate_above) {
        refine_wide(query, &mut result, target)?;
        // An ε whose threshold e^ε lies beyond the double range keeps an upper end of +∞ in
        // f64 when too many pairs tie for the maximum to refine each: scan again in MPFR.
        let beyond_doubles = result
            .rows
            .iter()
            .any(|r| r.value.lo() != &Endpoint::PosInf && r.value.hi() == &Endpoint::PosInf);
        if beyond_doubles {
            let precision = 128;
            let progress = &Stage::start("profile rescan in MPFR", "values of k", b - a + 1);
            result = scan_in::<MpfrInterval>(query, (a, b), &MpfrCtx { precision }, progress)?;
            result.partial = partial;
            result.arithmetic = format!(
                "mpfr-{precision} (escalated from interval: an e^ε beyond the double range)"
            );
        }
    }
    Ok(result)
}

/// What a leaf records: per quantity, both directions; `None` where the quantity was already
/// closed above the leaf (certified strictly below its maximum).
#[derive(Clone, Debug)]
pub struct LeafRecord {
    pub k: u64,
    pub qp: Vec<Option<Enclosure>>,
    pub pq: Vec<Option<Enclosure>>,
}

/// The values of one pair: per quantity (where `open`), both directions.
pub struct PairValues {
    pub qp: Vec<Option<Enclosure>>,
    pub pq: Vec<Option<Enclosure>>,
}

/// Evaluates every open quantity on one pair.
fn evaluate_pair<S: Scalar>(
    pair: &PairLaw<S>,
    quantities: &[Quantity],
    open: &[bool],
    ctx: &S::Ctx,
) -> Result<PairValues> {
    let open_count = |f: fn(&Quantity) -> bool| {
        quantities
            .iter()
            .zip(open)
            .filter(|(q, o)| **o && f(q))
            .count()
    };
    // An ε search evaluates its curve dozens of times.
    let evaluations = open_count(|q| matches!(q, Quantity::Delta(_)))
        + 64 * open_count(|q| matches!(q, Quantity::Epsilon(_)));
    let curves = [Direction::Qp, Direction::Pq]
        .map(|dir| Curve::for_evaluations(pair, dir, ctx, evaluations));
    let elementary = (open_count(|q| matches!(q, Quantity::Renyi(_))) > 0).then(|| {
        let el = pair.to_elementary(ctx);
        let reversed = el.reversed();
        (el, reversed, S::elementary_ctx(ctx))
    });
    let mut values = PairValues {
        qp: Vec::with_capacity(quantities.len()),
        pq: Vec::with_capacity(quantities.len()),
    };
    for (q, &is_open) in quantities.iter().zip(open) {
        if !is_open {
            values.qp.push(None);
            values.pq.push(None);
            continue;
        }
        let [qp, pq] = match q {
            Quantity::Delta(t) => [t.on(&curves[0]), t.on(&curves[1])],
            Quantity::Epsilon(target) => [
                curves[0].epsilon_for(target)?.eps,
                curves[1].epsilon_for(target)?.eps,
            ],
            Quantity::Renyi(alpha) => {
                let (el, reversed, ectx) = elementary.as_ref().expect("prepared for Rényi");
                [renyi(el, alpha, ectx), renyi(reversed, alpha, ectx)]
            }
        };
        values.qp.push(Some(qp));
        values.pq.push(Some(pq));
    }
    Ok(values)
}

/// The pair values of the `open` quantities as a pair-engine job (used to refine maximising
/// pairs).
struct QuantitiesJob {
    quantities: Vec<Quantity>,
    open: Vec<bool>,
}

impl PairJob for QuantitiesJob {
    type Output = PairValues;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<PairValues> {
        evaluate_pair(law, &self.quantities, &self.open, ctx)
    }
}

/// The values of the `open` quantities on the pair `(T_{n,k}, T_{n,k+1})` of `pairs`, by the pair
/// engine (with its escalation).
pub fn pair_values(
    pairs: &PairQuery,
    quantities: &[Quantity],
    open: &[bool],
) -> Result<crate::query::Computed<PairValues>> {
    answer(
        pairs,
        &QuantitiesJob {
            quantities: quantities.to_vec(),
            open: open.to_vec(),
        },
    )
}

/// The values of the `open` quantities on the node pair of `[lo, hi)` — the group of `n − hi`
/// W0-users and `lo` W1-users plus the distinguished user (module docs) — built from scratch in
/// the query's backend, not by the scan's incremental convolutions.
pub fn node_values(
    query: &ProfileQuery,
    (lo, hi): (u64, u64),
    open: &[bool],
) -> Result<PairValues> {
    fn values<S: Scalar>(
        query: &ProfileQuery,
        range: (u64, u64),
        open: &[bool],
        ctx: &S::Ctx,
    ) -> Result<PairValues> {
        evaluate_pair(
            &node_pair::<S>(query, range, ctx)?,
            &query.quantities,
            open,
            ctx,
        )
    }
    match query.backend {
        Backend::Exact => values::<Rational>(query, (lo, hi), open, &query.exact_ctx),
        Backend::Interval => values::<Interval>(query, (lo, hi), open, &()),
        Backend::Mpfr { precision } => {
            values::<MpfrInterval>(query, (lo, hi), open, &MpfrCtx { precision })
        }
    }
}

/// One value asked of a pair: a quantity in one direction (for Rényi, `Qp` is `D_α(Q‖P)`).
pub type Probe = (Quantity, Direction);

/// Evaluates each probe on one pair (an ε by its certified search, as [`evaluate_pair`] does).
fn evaluate_probes<S: Scalar>(
    pair: &PairLaw<S>,
    probes: &[Probe],
    ctx: &S::Ctx,
) -> Result<Vec<Enclosure>> {
    let curves = [Direction::Qp, Direction::Pq].map(|dir| {
        let evaluations: usize = probes
            .iter()
            .filter(|(_, d)| *d == dir)
            .map(|(q, _)| match q {
                Quantity::Delta(_) => 1,
                Quantity::Epsilon(_) => 64,
                Quantity::Renyi(_) => 0,
            })
            .sum();
        (evaluations > 0).then(|| Curve::for_evaluations(pair, dir, ctx, evaluations))
    });
    let elementary = probes
        .iter()
        .any(|(q, _)| matches!(q, Quantity::Renyi(_)))
        .then(|| {
            let el = pair.to_elementary(ctx);
            let reversed = el.reversed();
            (el, reversed, S::elementary_ctx(ctx))
        });
    probes
        .iter()
        .map(|(q, dir)| {
            let curve = || curves[usize::from(*dir == Direction::Pq)].as_ref();
            Ok(match q {
                Quantity::Delta(t) => t.on(curve().expect("prepared")),
                Quantity::Epsilon(target) => curve().expect("prepared").epsilon_for(target)?.eps,
                Quantity::Renyi(alpha) => {
                    let (el, reversed, ectx) = elementary.as_ref().expect("prepared for Rényi");
                    match dir {
                        Direction::Qp => renyi(el, alpha, ectx),
                        Direction::Pq => renyi(reversed, alpha, ectx),
                    }
                }
            })
        })
        .collect()
}

/// The probes of each leaf on the pairs of several k in one block `[lo, hi)`, built without
/// the scan's tree: the block's group (`n − hi` W0-users and `lo` W1-users, as a node pair's)
/// in one step from the empty group, then the leaves by halving the block (the left half gains
/// the right half's W0-users, the right half the left half's W1-users) down to each leaf's
/// group `F(n − 1 − k, k)`.  A block of one k is built exactly as the pair engine builds its
/// pair.  `verify` recomputes a profile's evaluated pairs so: the costly convolution, the
/// block's group, is shared by its k instead of each redoing it.
pub fn block_values(
    query: &ProfileQuery,
    (lo, hi): (u64, u64),
    leaves: &[(u64, Vec<Probe>)],
) -> Result<Vec<Vec<Enclosure>>> {
    /// The leaves of `[lo, hi)` (sorted by k) below `group`, evaluated into `out`.
    fn descend<S: Scalar, G: GroupLaw<S>>(
        group: &G,
        (lo, hi): (u64, u64),
        leaves: &[(usize, &(u64, Vec<Probe>))],
        channel: &Channel<S>,
        ctx: &S::Ctx,
    ) -> Result<Vec<(usize, Vec<Enclosure>)>> {
        if leaves.is_empty() {
            return Ok(Vec::new());
        }
        if hi - lo == 1 {
            let pair = group.pair(channel, ctx);
            return leaves
                .iter()
                .map(|(j, (_, probes))| Ok((*j, evaluate_probes(&pair, probes, ctx)?)))
                .collect();
        }
        let mid = lo + (hi - lo) / 2;
        let split = leaves.partition_point(|(_, (k, _))| *k < mid);
        let (left, right) = leaves.split_at(split);
        let (a, b) = rayon::join(
            || {
                let g = (!left.is_empty())
                    .then(|| group.with_users((hi - mid) as usize, 0, channel, ctx));
                g.map_or(Ok(Vec::new()), |g| {
                    descend(&g, (lo, mid), left, channel, ctx)
                })
            },
            || {
                let g = (!right.is_empty())
                    .then(|| group.with_users(0, (mid - lo) as usize, channel, ctx));
                g.map_or(Ok(Vec::new()), |g| {
                    descend(&g, (mid, hi), right, channel, ctx)
                })
            },
        );
        let mut out = a?;
        out.extend(b?);
        Ok(out)
    }
    fn leaves_in<S: Scalar, G: GroupLaw<S>>(
        empty: G,
        n: u64,
        (lo, hi): (u64, u64),
        leaves: &[(u64, Vec<Probe>)],
        channel: &Channel<S>,
        ctx: &S::Ctx,
    ) -> Result<Vec<Vec<Enclosure>>> {
        let block = empty.with_users((n - hi) as usize, lo as usize, channel, ctx);
        let mut sorted: Vec<(usize, &(u64, Vec<Probe>))> = leaves.iter().enumerate().collect();
        sorted.sort_by_key(|(_, (k, _))| *k);
        let mut out: Vec<Vec<Enclosure>> = vec![Vec::new(); leaves.len()];
        for (j, values) in descend(&block, (lo, hi), &sorted, channel, ctx)? {
            out[j] = values;
        }
        Ok(out)
    }
    fn values<S: Scalar>(
        query: &ProfileQuery,
        range: (u64, u64),
        leaves: &[(u64, Vec<Probe>)],
        ctx: &S::Ctx,
    ) -> Result<Vec<Vec<Enclosure>>> {
        let n = usize::try_from(query.n).map_err(|_| Error::argument("--n", "too large"))?;
        let mechanism = engine_mechanism(&query.mechanism, &query.options)?;
        let channel = mechanism.channel::<S>(ctx)?;
        let plan = plan::<S>(&mechanism, n, &query.options, ctx)?;
        // Per worker thread (blocks run side by side, so every thread may be busy), a group per
        // level it descends, a pair and a scratch array.
        let levels = 1 + u64::from((range.1 - range.0).max(1).next_power_of_two().ilog2());
        let arrays = (levels + 3) * rayon::current_num_threads() as u64;
        check_memory::<S>(
            "a block of pairs",
            &plan,
            arrays,
            n,
            query.options.memory_limit,
            ctx,
        )?;
        let d = mechanism.d();
        match plan.route {
            Route::Binary => leaves_in(
                BinaryGroup::empty(plan.tau_bits, plan.messages, ctx),
                query.n,
                range,
                leaves,
                &channel,
                ctx,
            ),
            Route::Window => leaves_in(
                WindowGroup::empty(d, plan.tau_bits, plan.messages, ctx),
                query.n,
                range,
                leaves,
                &channel,
                ctx,
            ),
            Route::Simplex => {
                let index = std::sync::Arc::new(SimplexIndex::new(d, n * plan.messages)?);
                leaves_in(
                    GeneralGroup::empty(index, plan.tau_bits, plan.messages, ctx),
                    query.n,
                    range,
                    leaves,
                    &channel,
                    ctx,
                )
            }
        }
    }
    if !(lo < hi && hi <= query.n) || leaves.iter().any(|(k, _)| !(lo..hi).contains(k)) {
        return Err(Error::argument(
            "range",
            format!(
                "[{lo}, {hi}) is not a range of k below n = {} holding every leaf",
                query.n
            ),
        ));
    }
    match query.backend {
        Backend::Exact => values::<Rational>(query, (lo, hi), leaves, &query.exact_ctx),
        Backend::Interval => values::<Interval>(query, (lo, hi), leaves, &()),
        Backend::Mpfr { precision } => {
            values::<MpfrInterval>(query, (lo, hi), leaves, &MpfrCtx { precision })
        }
    }
}

/// How δ of the node pair of `[lo, hi)` (built from scratch as in [`node_values`]) compares
/// with a target, for each `(threshold, target)`, in both directions (`[qp, pq]`): by certified
/// f64 bounds first, by the full enclosure when they cannot tell, as the scan itself decides.
pub fn node_compare(
    query: &ProfileQuery,
    range: (u64, u64),
    checks: &[(Threshold, Rational)],
) -> Result<Vec<[Tri; 2]>> {
    fn compare<S: Scalar>(
        query: &ProfileQuery,
        range: (u64, u64),
        checks: &[(Threshold, Rational)],
        ctx: &S::Ctx,
    ) -> Result<Vec<[Tri; 2]>> {
        let pair = node_pair::<S>(query, range, ctx)?;
        let curves = [Direction::Qp, Direction::Pq]
            .map(|dir| Curve::for_evaluations(&pair, dir, ctx, checks.len()));
        Ok(checks
            .iter()
            .map(|(t, target)| {
                let bound = f64_bounds(target);
                curves
                    .each_ref()
                    .map(|c| compare_quickly(t.quick_on(c), || t.on(c), target, bound))
            })
            .collect())
    }
    match query.backend {
        Backend::Exact => compare::<Rational>(query, range, checks, &query.exact_ctx),
        Backend::Interval => compare::<Interval>(query, range, checks, &()),
        Backend::Mpfr { precision } => {
            compare::<MpfrInterval>(query, range, checks, &MpfrCtx { precision })
        }
    }
}

/// The node pair of `[lo, hi)`: the group of `n − hi` W0-users and `lo` W1-users plus the
/// distinguished user, built from scratch.
fn node_pair<S: Scalar>(
    query: &ProfileQuery,
    (lo, hi): (u64, u64),
    ctx: &S::Ctx,
) -> Result<PairLaw<S>> {
    let n = usize::try_from(query.n).map_err(|_| Error::argument("--n", "too large"))?;
    if !(lo < hi && hi <= query.n) {
        return Err(Error::argument(
            "range",
            format!("[{lo}, {hi}) is not a range of k below n = {n}"),
        ));
    }
    let mechanism = engine_mechanism(&query.mechanism, &query.options)?;
    let channel = mechanism.channel::<S>(ctx)?;
    let plan = plan::<S>(&mechanism, n, &query.options, ctx)?;
    check_memory::<S>("a node pair", &plan, 3, n, query.options.memory_limit, ctx)?;
    let users = ((query.n - hi) as usize, lo as usize);
    group_pair(mechanism.d(), &plan, users, &channel, ctx)
}

impl Widths for PairValues {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        self.qp
            .iter()
            .chain(&self.pq)
            .flatten()
            .filter(|e| e.hi().to_f64() >= floor && e.lo() != &Endpoint::PosInf)
            .map(Enclosure::relative_width)
            .fold(0.0, f64::max)
    }
}

/// What the scan gathers from every branch; its contents do not depend on the order in which
/// branches finish (they are sorted or summed afterwards).
struct ScanState {
    /// Per quantity, what closed nodes contribute.
    closed: Vec<ClosedNodes>,
    /// Every range of k closed for a quantity at a node, and why.
    closures: Vec<Closure>,
    records: Vec<LeafRecord>,
    /// The seed pairs' values (not records: each is built by its own route, not the tree's).
    seeds: Vec<(u64, PairValues)>,
    stats: ProfileStats,
}

struct Scan<'a, S: Scalar> {
    quantities: &'a [Quantity],
    channel: Channel<S>,
    ctx: &'a S::Ctx,
    prune: bool,
    state: Mutex<ScanState>,
    progress: &'a Stage,
}

/// Largest finite value used as a lower bound of ε or of a Rényi divergence: an infinite value
/// (singular mass) is recorded as this (still a valid lower bound, and e^700 stays
/// representable).
const CAP: u32 = 700;

/// A certified lower bound usable as a threshold: the lower end, capped at [`CAP`].  `verify`
/// re-derives an ε closed `below` a row at this threshold of the row (a row of `+∞`, singular
/// mass above the target, closes at the cap).
pub fn lower(e: &Enclosure) -> Rational {
    match e.lo() {
        Endpoint::Finite(x) => x.clone().min(Rational::from(CAP)),
        Endpoint::PosInf => Rational::from(CAP),
        Endpoint::NegInf => Rational::new(),
    }
}

impl<S: Scalar> Scan<'_, S> {
    fn resolve(&self, count: u64) {
        self.progress.advance(count);
    }

    /// Which quantities are still open below this node.  A quantity closes when the node
    /// pair's certified values stay strictly below the best lower bound found so far, for then
    /// no k below can reach the maximum (the data-processing bound of the module docs).  A δ or
    /// Rényi quantity also closes when nothing above 0 has been certified yet and the node's own
    /// enclosures are `[0, h]` with `h > 0`: its value lies below this computation's resolution
    /// there, and the node's upper end — an upper bound for every k below — is folded into the
    /// row's upper end (its `ceiling`); when they are exactly 0, every k below is exactly 0 too,
    /// recorded as a range of ties.  An ε quantity closes when the node's `δ(0) = TV ≤ D` in both
    /// directions: then `ε_k = 0` exactly for every k below, also a range of ties.  A node with
    /// no open quantity is dropped.
    fn still_open(
        &self,
        pair: &PairLaw<S>,
        range: (u64, u64),
        open: &[bool],
        best: &[Rational],
    ) -> Vec<bool> {
        if !self.prune {
            return open.to_vec();
        }
        // Evaluations per direction: one per δ threshold, two per ε target (after the shared TV).
        let evaluations: usize = self
            .quantities
            .iter()
            .zip(open)
            .filter(|(_, o)| **o)
            .map(|(q, _)| match q {
                Quantity::Delta(_) => 1,
                Quantity::Epsilon(_) => 2,
                Quantity::Renyi(_) => 0,
            })
            .sum();
        let curves = [Direction::Qp, Direction::Pq]
            .map(|dir| Curve::for_evaluations(pair, dir, self.ctx, evaluations));
        // δ(0) = TV in each direction, shared by every ε target's test.
        let one = Rational::from(1);
        let mut tv: [Option<((f64, f64), Option<Enclosure>)>; 2] = [None, None];
        let mut elementary = None;
        let mut quick: Option<(PairLaw<Interval>, PairLaw<Interval>)> = None;
        let mut closings = Closings::default();
        let still_open = self
            .quantities
            .iter()
            .enumerate()
            .zip(best)
            .zip(open)
            .map(|(((i, q), b), &is_open)| {
                if !is_open {
                    return false;
                }
                let bound = f64_bounds(b);
                match q {
                    Quantity::Epsilon(target) => {
                        let target_f64 = f64_bounds(target);
                        // While no pair has ε > 0 certified: TV ≤ D in both directions gives
                        // ε_k = 0 exactly for every k below (once best > 0, such a node is
                        // closed by the rule below).
                        let tie = *b <= 0
                            && (0..2).all(|d| {
                                let (quick, exact) = tv[d]
                                    .get_or_insert_with(|| (curves[d].quick_at_exp(&one), None));
                                let quick = *quick;
                                matches!(
                                    compare_quickly(
                                        quick,
                                        || exact
                                            .get_or_insert_with(|| curves[d].at_exp(&one))
                                            .clone(),
                                        target,
                                        target_f64
                                    ),
                                    Tri::Less | Tri::Equal
                                )
                            });
                        if tie {
                            closings.zero_ties.push(i);
                            return false;
                        }
                        // δ(best) < D strictly ⇒ ε_k < best for every k below (δ is
                        // continuous and non-increasing in ε).
                        let below = *b > 0
                            && curves.iter().all(|c| {
                                compare_quickly(
                                    c.quick_at_eps(b),
                                    || c.at_eps(b),
                                    target,
                                    target_f64,
                                ) == Tri::Less
                            });
                        closings.below(i, below)
                    }
                    Quantity::Delta(t) if *b > 0 => closings.below(
                        i,
                        curves.iter().all(|c| {
                            compare_quickly(t.quick_on(c), || t.on(c), b, bound) == Tri::Less
                        }),
                    ),
                    Quantity::Delta(t) => closings.settle(i, &[t.on(&curves[0]), t.on(&curves[1])]),
                    Quantity::Renyi(alpha) => {
                        let mut exact = || {
                            let (el, reversed, ectx) = elementary.get_or_insert_with(|| {
                                let el = pair.to_elementary(self.ctx);
                                let reversed = el.reversed();
                                (el, reversed, S::elementary_ctx(self.ctx))
                            });
                            [renyi(el, alpha, ectx), renyi(reversed, alpha, ectx)]
                        };
                        if *b > 0 {
                            // Both orders certainly below the best lower bound: first on an f64
                            // copy of the pair, then exactly if that cannot tell.
                            let (f, reversed) = quick.get_or_insert_with(|| interval_copies(pair));
                            let quick_below =
                                [&*f, &*reversed].map(|law| renyi(law, alpha, &()).compare(b));
                            let below = quick_below.iter().all(|t| *t == Tri::Less)
                                || (!quick_below
                                    .iter()
                                    .any(|t| matches!(t, Tri::Greater | Tri::Equal))
                                    && exact().iter().all(|e| e.compare(b) == Tri::Less));
                            return closings.below(i, below);
                        }
                        closings.settle(i, &exact())
                    }
                }
            })
            .collect();
        if !(closings.below.is_empty()
            && closings.ceilings.is_empty()
            && closings.zero_ties.is_empty())
        {
            let mut state = self.state.lock().expect("scan state");
            let closure = |quantity, kind| Closure {
                range,
                quantity,
                kind,
            };
            for i in closings.below {
                state.closures.push(closure(i, ClosureKind::Below));
            }
            for (i, hi) in closings.ceilings {
                state.closures.push(closure(i, ClosureKind::Ceiling));
                let c = &mut state.closed[i].ceiling;
                *c = Some(c.take().map_or(hi.clone(), |old| old.max(hi)));
            }
            for i in closings.zero_ties {
                state.closures.push(closure(i, ClosureKind::Tie));
                state.closed[i].zero_ties.push(range);
            }
        }
        still_open
    }

    /// A steering score of a node: how likely it holds the maximum (larger first).
    fn score(&self, pair: &PairLaw<S>, best: &[Rational]) -> f64 {
        let eps = match &self.quantities[0] {
            Quantity::Delta(Threshold::Eps(e)) => e.clone(),
            Quantity::Epsilon(_) => best[0].clone(),
            Quantity::Delta(Threshold::ExpEps(_)) | Quantity::Renyi(_) => Rational::new(),
        };
        [Direction::Qp, Direction::Pq]
            .iter()
            .map(|&dir| {
                let (lo, hi) = Curve::direct(pair, dir, self.ctx).quick_at_eps(&eps);
                0.5 * (lo + hi)
            })
            .fold(0.0, f64::max)
    }

    /// Evaluates the leaf pair of k, raises `best` to its certified lower bounds and records it.
    fn leaf(&self, k: u64, pair: &PairLaw<S>, open: &[bool], best: &mut [Rational]) -> Result<()> {
        let values = evaluate_pair(pair, self.quantities, open, self.ctx)?;
        raise(best, &values);
        let mut state = self.state.lock().expect("scan state");
        state.records.push(LeafRecord {
            k,
            qp: values.qp,
            pq: values.pq,
        });
        state.stats.pairs_evaluated += 1;
        Ok(())
    }

    /// Scans `k ∈ [a, b]` from an empty group: the root node's users (`n − 1 − b` W0-users and
    /// `a` W1-users) are added first.  With pruning, a few leaves seed the best lower bounds.
    /// The boundary pairs `ends` (outside `[a, b]`) are evaluated first, recorded as leaves, and
    /// raise the best lower bounds before anything else.
    fn scan_from<G: GroupLaw<S>>(
        &self,
        empty: G,
        (zeros, ones): (usize, usize),
        (a, b): (u64, u64),
        ends: &[u64],
        open: &[bool],
    ) -> Result<()> {
        let mut best = vec![Rational::new(); self.quantities.len()];
        let others = zeros + ones + (b - a) as usize;
        for &k in ends {
            let k_users = k as usize;
            let group = empty.with_users(others - k_users, k_users, &self.channel, self.ctx);
            let pair = group.pair(&self.channel, self.ctx);
            self.leaf(k, &pair, open, &mut best)?;
        }
        let root = empty.with_users(zeros, ones, &self.channel, self.ctx);
        if self.prune {
            self.seed(&root, (a, b + 1), &mut best)?;
        }
        self.visit(root, None, a, b + 1, open, &mut best)
    }

    /// Seeds `best` with the values of three leaves: both ends of `[lo, hi)` (where binary
    /// mechanisms usually attain their maximum), then the leaf reached from the root by always
    /// stepping into the child with the larger [`Scan::score`] against them.  A deterministic
    /// lower bound to prune with from the start, so that branches run in parallel need not
    /// share bounds.
    fn seed<G: GroupLaw<S>>(
        &self,
        root: &G,
        (lo, hi): (u64, u64),
        best: &mut [Rational],
    ) -> Result<()> {
        let all = vec![true; self.quantities.len()];
        let evaluate = |k: u64, group: &G, best: &mut [Rational]| -> Result<()> {
            let pair = group.pair(&self.channel, self.ctx);
            let values = evaluate_pair(&pair, self.quantities, &all, self.ctx)?;
            raise(best, &values);
            self.state
                .lock()
                .expect("scan state")
                .seeds
                .push((k, values));
            Ok(())
        };
        let span = (hi - lo - 1) as usize;
        evaluate(lo, &root.with_users(span, 0, &self.channel, self.ctx), best)?;
        if span > 0 {
            evaluate(
                hi - 1,
                &root.with_users(0, span, &self.channel, self.ctx),
                best,
            )?;
        }
        let (mut lo, mut hi) = (lo, hi);
        let mut below: Option<G> = None;
        while hi - lo > 1 {
            let group = below.as_ref().unwrap_or(root);
            let mid = lo + (hi - lo) / 2;
            let left = group.with_users((hi - mid) as usize, 0, &self.channel, self.ctx);
            let right = group.with_users(0, (mid - lo) as usize, &self.channel, self.ctx);
            let scores =
                [&left, &right].map(|g| self.score(&g.pair(&self.channel, self.ctx), best));
            (below, lo, hi) = if scores[1] > scores[0] {
                (Some(right), mid, hi)
            } else {
                (Some(left), lo, mid)
            };
        }
        if let Some(leaf) = &below {
            if span > 1 {
                evaluate(lo, leaf, best)?;
            }
        }
        Ok(())
    }

    /// Visits the node `[lo, hi)` whose group is `group` (and whose pair, when already
    /// computed, is `pair`), with the quantities still `open` at its parent, pruning against
    /// `best` and raising it with every leaf below.  Memory: down the recursion each level keeps
    /// only the sibling's group; a pair lives while it is used.
    ///
    /// Determinism: children run in parallel each start from the parent's `best` and the
    /// parent then takes the larger of their results, so every decision depends on the tree
    /// alone, never on which thread finishes first; the output is the same at any thread count.
    fn visit<G: GroupLaw<S>>(
        &self,
        group: G,
        pair: Option<PairLaw<S>>,
        lo: u64,
        hi: u64,
        open: &[bool],
        best: &mut Vec<Rational>,
    ) -> Result<()> {
        let pair = pair.unwrap_or_else(|| group.pair(&self.channel, self.ctx));
        self.state.lock().expect("scan state").stats.nodes_bounded += 1;
        let open = self.still_open(&pair, (lo, hi), open, best);
        if !open.contains(&true) {
            self.state.lock().expect("scan state").stats.k_pruned += hi - lo;
            self.resolve(hi - lo);
            return Ok(());
        }
        if hi - lo == 1 {
            self.leaf(lo, &pair, &open, best)?;
            self.resolve(1);
            return Ok(());
        }
        drop(pair);
        let mid = lo + (hi - lo) / 2;
        let left = group.with_users((hi - mid) as usize, 0, &self.channel, self.ctx);
        let right = group.with_users(0, (mid - lo) as usize, &self.channel, self.ctx);
        drop(group);
        let left_pair = left.pair(&self.channel, self.ctx);
        let right_pair = right.pair(&self.channel, self.ctx);
        if hi - lo >= PARALLEL_MIN {
            let mut right_best = best.clone();
            let (a, b) = rayon::join(
                || self.visit(left, Some(left_pair), lo, mid, &open, best),
                || self.visit(right, Some(right_pair), mid, hi, &open, &mut right_best),
            );
            for (b, r) in best.iter_mut().zip(right_best) {
                if r > *b {
                    *b = r;
                }
            }
            return a.and(b);
        }
        // The more dangerous child first (it raises the best bound sooner); the other's pair is
        // recomputed when its turn comes rather than held through the recursion.
        if self.score(&right_pair, best) > self.score(&left_pair, best) {
            drop(left_pair);
            self.visit(right, Some(right_pair), mid, hi, &open, best)?;
            self.visit(left, None, lo, mid, &open, best)
        } else {
            drop(right_pair);
            self.visit(left, Some(left_pair), lo, mid, &open, best)?;
            self.visit(right, None, mid, hi, &open, best)
        }
    }
}

/// The quantities a node closes: strictly below the best lower bound, or, without a positive
/// lower bound to compare with, as exact ties at 0 or with a ceiling below resolution.
#[derive(Default)]
struct Closings {
    below: Vec<usize>,
    zero_ties: Vec<usize>,
    ceilings: Vec<(usize, Endpoint)>,
}

impl Closings {
    /// Records quantity i as closed strictly below the best lower bound when `below`; returns
    /// whether it stays open.
    fn below(&mut self, i: usize, below: bool) -> bool {
        if below {
            self.below.push(i);
        }
        !below
    }

    /// For quantity i, whose node values in both directions are `both` while no pair has a
    /// positive lower bound: exactly 0 means every k below is exactly 0 too (a tie); lower ends
    /// 0 with a positive upper end mean the value lies below resolution, and the node's upper end
    /// bounds every k below (a ceiling).  Returns whether the quantity stays open.
    fn settle(&mut self, i: usize, both: &[Enclosure; 2]) -> bool {
        let zero = Endpoint::Finite(Rational::new());
        if both.iter().all(|e| e.hi() <= &zero) {
            self.zero_ties.push(i);
            false
        } else if both.iter().all(|e| e.lo() <= &zero) {
            let ceiling = both[0].hi().clone().max(both[1].hi().clone());
            self.ceilings.push((i, ceiling));
            false
        } else {
            true
        }
    }
}

/// The pair and its reverse in f64 intervals, each value rounded outward (a lower end below 0
/// clamped: the values are probabilities), for quick certified bounds of a slower backend.
fn interval_copies<S: Scalar>(pair: &PairLaw<S>) -> (PairLaw<Interval>, PairLaw<Interval>) {
    let f = pair.map(|x| {
        let (lo, hi) = x.f64_bounds();
        Interval::try_from((lo.max(0.0), hi)).unwrap_or(Interval::ENTIRE)
    });
    let reversed = f.reversed();
    (f, reversed)
}

/// Three-valued comparison of a curve's value with `bound` (whose f64 bounds are `bound_f64`):
/// by the quick f64 bounds first, by the exact enclosure only when they cannot tell.
fn compare_quickly(
    quick: (f64, f64),
    precise: impl FnOnce() -> Enclosure,
    bound: &Rational,
    bound_f64: (f64, f64),
) -> Tri {
    if quick.1 < bound_f64.0 {
        Tri::Less
    } else if quick.0 > bound_f64.1 {
        Tri::Greater
    } else {
        precise().compare(bound)
    }
}

/// Intersects each seed pair's values into the record of the same k.  Both enclose the same true
/// values, built by different routes (the seed in one block, the record along the tree), so the
/// intersection does too; and the k whose seed gave a quantity its best lower bound is always
/// recorded (its node values reach that bound, so no node above it is strictly below it).  So
/// every row's lower end is at least the best bound the scan pruned with, and every k pruned
/// lies strictly below the row's lower end.  Disjoint enclosures prove a bug and are an error.
fn tighten_with_seeds(records: &mut [LeafRecord], seeds: &[(u64, PairValues)]) -> Result<()> {
    for (k, values) in seeds {
        let Ok(r) = records.binary_search_by_key(k, |r| r.k) else {
            continue;
        };
        let record = &mut records[r];
        for (recorded, seeded) in [(&mut record.qp, &values.qp), (&mut record.pq, &values.pq)] {
            for (old, new) in recorded.iter_mut().zip(seeded) {
                let (Some(old), Some(new)) = (old.as_mut(), new) else {
                    continue;
                };
                if !old.overlaps(new) {
                    return Err(Error::Internal(format!(
                        "k = {k}: the seed pair gave {new}, disjoint from the scan's {old}; no \
                         result is reported"
                    )));
                }
                *old = Enclosure::new(
                    old.lo().clone().max(new.lo().clone()),
                    old.hi().clone().min(new.hi().clone()),
                );
            }
        }
    }
    Ok(())
}

/// Raises each quantity's best lower bound to a pair's certified lower end (both directions).
fn raise(best: &mut [Rational], values: &PairValues) {
    for ((b, qp), pq) in best.iter_mut().zip(&values.qp).zip(&values.pq) {
        if let (Some(qp), Some(pq)) = (qp, pq) {
            let lo = lower(qp).max(lower(pq));
            if lo > *b {
                *b = lo;
            }
        }
    }
}

/// Seconds per histogram state of one of the fewest node pairs a scan bounds, in f64 intervals
/// (other backends scale with their value size).  Measured whole-scan time over the least node
/// count times the states, 2 cores, since groups of one kind of user are built as one
/// multinomial and three-output groups are rebuilt from their blocks wherever that is cheaper:
/// the ternary channel at n = 2·10⁴ 2.0·10⁻⁷, k-RR k = 20 on two inputs at n = 5·10⁴ 9.5·10⁻⁸,
/// a four-output channel at n = 300 8.4·10⁻⁸ (each scan visits more than the fewest nodes, so
/// the time it refuses by stays below what it takes).
const SECONDS_PER_NODE_STATE: f64 = 8e-8;

/// The same for binary outputs, whose laws are convolved in the non-negative kernel (measured
/// on binary RR ε0 = 1, n = 10⁵ and 10⁶, 2 cores: 40 to 44 ns per state of the plan).
const SECONDS_PER_BINARY_NODE_STATE: f64 = 4.5e-8;

/// Binary outputs in a backend without the kernel (MPFR, rationals), before the value-size scale
/// (binary RR ε0 = 1 in MPFR at 128 bits, n = 2·10⁴: about 23 s, 0.8 µs per state).
const SECONDS_PER_BINARY_NODE_STATE_OUTSIDE_KERNEL: f64 = 8e-7;

/// A binary scan estimated at this many seconds or more prints its estimate before it starts.
const LONG_SCAN_SECONDS: f64 = 5.0;

/// Node pairs a pruned binary scan over `ks` values of k typically bounds: about `2·ks^0.625`
/// (binary RR ε0 = 1 at δ = 10⁻⁶: 639, 2741 and 11293 at n = 10⁴, 10⁵, 10⁶).
fn typical_binary_nodes(ks: u64) -> f64 {
    2.0 * (ks as f64).powf(0.625)
}

/// The up-front estimate of a profile scan: every node pair holds windows of about `states`
/// states; pruning decides how many node pairs there are between a root-to-leaf path with its
/// seeds and the whole tree (and, for binary outputs, how many a scan typically bounds).
struct Estimate {
    d: usize,
    states: u64,
    per_node: f64,
    nodes: (u64, u64),
    at_least: f64,
    /// Binary outputs: the typical node pairs and seconds, by which the scan is refused.
    typical: Option<(u64, f64)>,
}

impl Estimate {
    /// Without pruning (`prune` off) every node is visited: the fewest is the most.
    fn of<S: Scalar>(
        plan: &crate::exact::pair::Plan,
        d: usize,
        ks: u64,
        n: usize,
        prune: bool,
        ctx: &S::Ctx,
    ) -> Self {
        let scale = (S::estimated_bytes(n, ctx) as f64 / 16.0).max(1.0);
        let binary = plan.route == Route::Binary;
        let kernel = S::from_nonneg_f64(1.0, 0, ctx).is_some();
        let per_state = match (binary, kernel) {
            (true, true) => SECONDS_PER_BINARY_NODE_STATE,
            (true, false) => SECONDS_PER_BINARY_NODE_STATE_OUTSIDE_KERNEL,
            (false, _) => SECONDS_PER_NODE_STATE,
        };
        let per_node = plan.states as f64 * per_state * scale;
        // The seeds (two ends and a dive) and one path down: four nodes per level, plus three.
        let levels = 64 - ks.saturating_sub(1).leading_zeros() as u64;
        let most = 2 * ks + 2 * levels + 2;
        let fewest = if prune { 4 * levels + 3 } else { most };
        let fewest = fewest.min(most);
        let typical = binary.then(|| {
            let nodes = if prune {
                (typical_binary_nodes(ks) as u64).clamp(fewest, most)
            } else {
                most
            };
            (nodes, nodes as f64 * per_node)
        });
        Estimate {
            d,
            states: plan.states,
            per_node,
            nodes: (fewest, most),
            at_least: fewest as f64 * per_node,
            typical,
        }
    }

    /// The seconds the scan is held against `--max-seconds`: the typical time for binary
    /// outputs, the least otherwise.
    fn seconds(&self) -> f64 {
        self.typical.map_or(self.at_least, |(_, s)| s)
    }

    fn text(&self) -> String {
        let about = |seconds: f64| match crate::exact::pair::duration_text(seconds) {
            under if under.starts_with("under") => under,
            text => format!("about {text}"),
        };
        let states = if self.states < 10_000 {
            self.states.to_string()
        } else {
            format!("{:.1e}", self.states as f64)
        };
        let typical = match self.typical {
            Some((nodes, seconds)) => {
                format!("; typically {nodes} node pairs ({})", about(seconds))
            }
            None => String::new(),
        };
        format!(
            "{} outputs, laws of about {states} histogram states, {} per node pair; at least {} node \
             pairs ({}), at most {} without pruning ({}){typical}",
            self.d,
            about(self.per_node),
            self.nodes.0,
            about(self.at_least),
            self.nodes.1,
            about(self.nodes.1 as f64 * self.per_node),
        )
    }
}

/// The refusal of a scan estimated past `--max-seconds`.  For binary outputs (whose estimate is
/// the typical time, not a lower bound) it gives a sharding recipe: the fewest shards of the
/// range (a power of two, at most 4096) each estimated within the limit, merged with `merge`
/// when the range is all of `0..n−1`.
fn refuse_scan<S: Scalar>(
    query: &ProfileQuery,
    estimate: &Estimate,
    plan: &crate::exact::pair::Plan,
    (a, b): (u64, u64),
    ctx: &S::Ctx,
) -> Error {
    let limit = query.options.time_limit_seconds;
    let n = query.n as usize;
    let ks = b - a + 1;
    let whole = (a, b) == (0, query.n - 1);
    let recipe = (0..=12)
        .map(|p| 1u64 << p)
        .filter(|&shards| estimate.typical.is_some() && shards > 1 && shards <= ks)
        .find_map(|shards| {
            let width = ks.div_ceil(shards);
            let shard = Estimate::of::<S>(plan, estimate.d, width, n, query.prune, ctx);
            let each = crate::exact::pair::duration_text(shard.seconds());
            (shard.seconds() <= limit).then(|| {
                let ranges = format!(
                    "--k-range {a}..{} then {}..{} and so on",
                    a + width - 1,
                    a + width,
                    (a + 2 * width - 1).min(b)
                );
                if whole {
                    format!(
                        "; or run {shards} shards of about {each} each, {ranges}, each with \
                         --with-ends --certificate, and merge them with `shufflecert merge` \
                         (README: Sharded profiles)"
                    )
                } else {
                    format!(
                        "; or split {a}..{b} into {shards} parts of about {each} each, {ranges}"
                    )
                }
            })
        })
        .unwrap_or_else(|| {
            if estimate.typical.is_some() {
                String::new()
            } else {
                ", or use a smaller n or a partial --k-range".into()
            }
        });
    Error::TooLarge(format!(
        "profile at n = {}: {}; over --max-seconds {} (raise it{recipe})",
        query.n,
        estimate.text(),
        crate::exact::pair::duration_text(limit),
    ))
}

/// Nodes covering at least this many k split their children across threads.
const PARALLEL_MIN: u64 = 256;

fn scan_in<S: Scalar>(
    query: &ProfileQuery,
    (a, b): (u64, u64),
    ctx: &S::Ctx,
    progress: &Stage,
) -> Result<Profile> {
    let mechanism = engine_mechanism(&query.mechanism, &query.options)?;
    let channel = mechanism.channel::<S>(ctx)?;
    let n = query.n;
    let nu = usize::try_from(n).map_err(|_| Error::argument("--n", "too large"))?;
    let plan = plan::<S>(&mechanism, nu, &query.options, ctx)?;
    // Per worker thread: one sibling group per level of the tree, plus the node's group, its
    // two children and two pairs (each pair two arrays).
    let depth = 2 + (nu.max(2) as f64).log2().ceil() as u64;
    let arrays = (depth + 7) * rayon::current_num_threads() as u64;
    check_memory::<S>(
        "the profile scan",
        &plan,
        arrays,
        nu,
        query.options.memory_limit,
        ctx,
    )?;
    let estimate = Estimate::of::<S>(&plan, mechanism.d(), b - a + 1, nu, query.prune, ctx);
    if estimate.seconds() > query.options.time_limit_seconds {
        return Err(refuse_scan::<S>(query, &estimate, &plan, (a, b), ctx));
    }
    // A binary scan says what it expects only when it is long (most take well under a second).
    if estimate
        .typical
        .is_none_or(|(_, seconds)| seconds >= LONG_SCAN_SECONDS)
    {
        crate::progress::note(&format!("profile: {}", estimate.text()));
    }
    let slots = query.quantities.len();
    let scan = Scan {
        quantities: &query.quantities,
        channel,
        ctx,
        prune: query.prune,
        state: Mutex::new(ScanState {
            closed: vec![ClosedNodes::default(); slots],
            closures: Vec::new(),
            records: Vec::new(),
            seeds: Vec::new(),
            stats: ProfileStats::default(),
        }),
        progress,
    };
    let (zeros, ones) = ((n - 1 - b) as usize, a as usize);
    let open = vec![true; slots];
    let (d, users, range) = (mechanism.d(), (zeros, ones), (a, b));
    let ends = ends_outside(query, (a, b));
    match plan.route {
        Route::Binary => scan.scan_from(
            BinaryGroup::empty(plan.tau_bits, plan.messages, ctx),
            users,
            range,
            &ends,
            &open,
        )?,
        Route::Window => scan.scan_from(
            WindowGroup::empty(d, plan.tau_bits, plan.messages, ctx),
            users,
            range,
            &ends,
            &open,
        )?,
        Route::Simplex => {
            let index = std::sync::Arc::new(SimplexIndex::new(d, nu * plan.messages)?);
            let root = GeneralGroup::empty(index, plan.tau_bits, plan.messages, ctx);
            scan.scan_from(root, users, range, &ends, &open)?
        }
    }
    let engine = plan.route.name();
    debug_assert_eq!(progress.done(), b - a + 1);
    let mut state = scan.state.into_inner().expect("scan state");
    // In order, whatever order the threads finished in.
    state.records.sort_by_key(|r| r.k);
    tighten_with_seeds(&mut state.records, &state.seeds)?;
    state
        .closures
        .sort_by_key(|c| (c.quantity, c.range.0, c.range.1));
    for closed in &mut state.closed {
        closed.zero_ties.sort_unstable();
    }
    let rows = assemble(&query.quantities, &state.records, &state.closed)?;
    Ok(Profile {
        rows,
        stats: state.stats,
        k_range: (a, b),
        partial: false,
        ends,
        arithmetic: S::BACKEND.to_string(),
        engine,
        records: state.records,
        closed: state.closed,
        closures: state.closures,
    })
}

/// The boundary pairs k = 0 and k = n − 1 that a partial scan with `with_ends` also evaluates:
/// those outside `[a, b]`.
fn ends_outside(query: &ProfileQuery, (a, b): (u64, u64)) -> Vec<u64> {
    if !query.with_ends {
        return Vec::new();
    }
    let mut ends: Vec<u64> = [0, query.n - 1]
        .into_iter()
        .filter(|k| !(a..=b).contains(k))
        .collect();
    ends.dedup();
    ends
}

/// The maximum of each quantity over the recorded pairs, and its argmax; pruned k lie strictly
/// below the maximum's lower bound, so they can neither raise it nor belong to the argmax.  A
/// quantity's `ceiling` (nodes closed below resolution) raises the upper end; when it reaches
/// the lower end, the k below those nodes might belong to the argmax, so the row is marked
/// unresolved.
/// The recorded pairs (both directions) whose value of quantity `i` can reach `lo`, by k: the
/// maximisers of a row whose lower end is `lo`.
pub fn reaching(records: &[LeafRecord], i: usize, lo: &Endpoint) -> Vec<KValue> {
    let mut found: Vec<KValue> = records
        .iter()
        .flat_map(|r| {
            [(Direction::Qp, &r.qp[i]), (Direction::Pq, &r.pq[i])]
                .into_iter()
                .filter_map(move |(direction, e)| {
                    e.as_ref().map(|e| KValue {
                        k: r.k,
                        direction,
                        value: e.clone(),
                    })
                })
        })
        .filter(|v| v.value.hi() >= lo)
        .collect();
    found.sort_by_key(|v| (v.k, v.direction.key()));
    found
}

fn assemble(
    quantities: &[Quantity],
    records: &[LeafRecord],
    closed: &[ClosedNodes],
) -> Result<Vec<ProfileRow>> {
    let zero = Endpoint::Finite(Rational::new());
    quantities
        .iter()
        .enumerate()
        .map(|(i, quantity)| {
            let ties = (!closed[i].zero_ties.is_empty()).then(|| Enclosure::point(Rational::new()));
            let ceiling = closed[i]
                .ceiling
                .as_ref()
                .map(|c| Enclosure::new(zero.clone(), c.clone().max(zero.clone())));
            let value = records
                .iter()
                .flat_map(|r| [&r.qp[i], &r.pq[i]])
                .flatten()
                .cloned()
                .chain(ties)
                .reduce(|m, e| m.max(&e));
            let value = match (value, ceiling) {
                (Some(v), None) => v,
                (Some(v), Some(c)) => {
                    Enclosure::new(v.lo().clone(), v.hi().clone().max(c.hi().clone()))
                }
                (None, Some(c)) => c,
                (None, None) => {
                    return Err(Error::Internal(format!(
                        "no pair evaluated {}; no result is reported",
                        quantity.describe()
                    )));
                }
            };
            let mut argmax = reaching(records, i, value.lo());
            // Ties at ε = 0 reach the maximum only when it may be 0.
            let mut argmax_ranges = if value.lo() <= &zero {
                closed[i].zero_ties.clone()
            } else {
                Vec::new()
            };
            tidy_ties(&mut argmax, &mut argmax_ranges);
            let below_ceiling = closed[i].ceiling.as_ref().is_some_and(|c| c >= value.lo());
            let resolved = matches!(quantity, Quantity::Epsilon(_))
                || value.hi() == &zero
                || (value.lo() > &zero && !below_ceiling);
            Ok(ProfileRow {
                quantity: quantity.clone(),
                value,
                argmax,
                argmax_ranges,
                resolved,
            })
        })
        .collect()
}

/// Sorts and joins adjacent ranges of ties at 0, and drops the evaluated exact zeros they list.
pub fn tidy_ties(argmax: &mut Vec<KValue>, ranges: &mut Vec<(u64, u64)>) {
    let zero = Endpoint::Finite(Rational::new());
    ranges.sort_unstable();
    ranges.dedup_by(|next, run| {
        let adjacent = next.0 == run.1;
        if adjacent {
            run.1 = next.1;
        }
        adjacent
    });
    argmax.retain(|v| {
        !(v.value.hi() == &zero && ranges.iter().any(|(a, b)| (*a..*b).contains(&v.k)))
    });
}

/// Most maximising pairs to recompute when tightening.
const MAX_REFINED: usize = 16;

/// Wider than `target` relative, and not the point +∞ (a certified infinite ε); an ε whose upper
/// end is +∞ only because f64 cannot hold its threshold (e^ε past 10³⁰⁸) is wide.
fn too_wide(e: &Enclosure, target: f64) -> bool {
    e.hi().to_f64() >= 1e-12 && e.lo() != &Endpoint::PosInf && e.relative_width() > target
}

/// Tightens a wide interval-backend profile: each maximising pair of a wide row is recomputed
/// on its own by the pair engine, which escalates to MPFR where f64 is too wide.
fn refine_wide(query: &ProfileQuery, profile: &mut Profile, target: f64) -> Result<()> {
    let wide: Vec<usize> = (0..profile.rows.len())
        .filter(|&i| too_wide(&profile.rows[i].value, target))
        .collect();
    let mut ks: Vec<u64> = wide
        .iter()
        .flat_map(|&i| profile.rows[i].argmax.iter().map(|v| v.k))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    if ks.is_empty() || ks.len() > MAX_REFINED {
        return Ok(());
    }
    let pairs = PairQuery {
        mechanism: query.mechanism.clone(),
        n: query.n,
        k: 0,
        options: query.options.clone(),
        backend: query.backend,
        exact_ctx: query.exact_ctx,
        escalate_above: Some(target),
    };
    refine(query, profile, &ks, &wide, &pairs)?;
    profile.arithmetic = format!(
        "{}, maximising pairs refined by the pair engine",
        profile.arithmetic
    );
    Ok(())
}

/// Recomputes the quantities `which` of the recorded pairs `ks` on their own with the pair
/// engine set up as `pairs` (its `k` is replaced), replaces each recorded value by its
/// intersection with the new one (both contain the true value), and assembles the rows again;
/// the argmax can only shrink.  Disjoint enclosures would prove a bug and are reported as an
/// error.
pub fn refine(
    query: &ProfileQuery,
    profile: &mut Profile,
    ks: &[u64],
    which: &[usize],
    pairs: &PairQuery,
) -> Result<()> {
    let job = QuantitiesJob {
        quantities: query.quantities.clone(),
        open: (0..query.quantities.len())
            .map(|i| which.contains(&i))
            .collect(),
    };
    for &k in ks {
        let record = profile
            .records
            .iter_mut()
            .find(|r| r.k == k)
            .ok_or_else(|| Error::Internal(format!("k = {k} was not evaluated by the scan")))?;
        let fresh = answer(&PairQuery { k, ..pairs.clone() }, &job)?.result;
        for (old, new) in record
            .qp
            .iter_mut()
            .zip(&fresh.qp)
            .chain(record.pq.iter_mut().zip(&fresh.pq))
        {
            let (Some(old), Some(new)) = (old.as_mut(), new) else {
                continue;
            };
            if !old.overlaps(new) {
                return Err(Error::Internal(format!(
                    "refining k = {k} gave {new}, disjoint from the scan's {old}; no result is reported"
                )));
            }
            *old = Enclosure::new(
                old.lo().clone().max(new.lo().clone()),
                old.hi().clone().min(new.hi().clone()),
            );
        }
        profile.stats.pairs_refined += 1;
    }
    profile.rows = assemble(&query.quantities, &profile.records, &profile.closed)?;
    Ok(())
}
