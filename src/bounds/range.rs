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
//! bound.

use super::upper::{BlanketSum, Class, Exact};
use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::enclosure::Enclosure;
use crate::error::Result;
use crate::exact::curve::Direction;
use crate::exact::pair::PairOptions;
use crate::mechanism::randomizer::Randomizer;
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
}

/// The range at one threshold (or at the target δ).
#[derive(Clone, Debug)]
pub struct RangeRow {
    pub threshold: Option<Threshold>,
    pub lower: Attained,
    pub upper: Attained,
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
}

impl Computation for SumJob<'_> {
    type Output = TwoSided;

    fn backend(&self) -> Backend {
        self.query.backend
    }

    fn escalate_above(&self) -> Option<f64> {
        self.query.escalate_above
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
        let values = match &q.target {
            Target::Delta(thresholds) => thresholds
                .iter()
                .map(|t| [sum.at(Direction::Qp, t, ctx), sum.at(Direction::Pq, t, ctx)])
                .collect(),
            Target::Epsilon(delta) => vec![[
                sum.epsilon_for(Direction::Qp, delta, ctx)?.eps,
                sum.epsilon_for(Direction::Pq, delta, ctx)?.eps,
            ]],
        };
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

/// The certified range at every threshold (or at the target δ).
pub fn bounds(q: &BoundsQuery) -> Result<Vec<RangeRow>> {
    let r = &q.randomizer;
    let rows = q.target_len();
    let mut upper: Vec<Option<Attained>> = vec![None; rows];
    let mut lower: Vec<Option<Attained>> = vec![None; rows];
    let exact = Exact::of(r)?;
    let k = r.input_count();
    let mut seen: Vec<Vec<Class>> = Vec::new();
    for x1 in 0..k {
        for x1p in x1 + 1..k {
            let (classes, gamma) = exact.blanket_classes(x1, x1p);
            if seen.contains(&classes) {
                continue;
            }
            seen.push(classes.clone());
            let job = SumJob {
                classes,
                gamma,
                query: q,
            };
            keep_largest(&mut upper, compute(&job)?.result.0, (x1, x1p), None);
        }
    }
    for (x1, x1p, x2) in triples(&exact) {
        let (classes, gamma) = exact.reference_classes(x1, x1p, x2);
        let job = SumJob {
            classes,
            gamma,
            query: q,
        };
        let background = (q.n > 1).then_some(x2);
        keep_largest(&mut lower, compute(&job)?.result.0, (x1, x1p), background);
    }
    let thresholds: Vec<Option<Threshold>> = match &q.target {
        Target::Delta(t) => t.iter().cloned().map(Some).collect(),
        Target::Epsilon(_) => vec![None],
    };
    Ok(thresholds
        .into_iter()
        .zip(lower.into_iter().zip(upper))
        .map(|(threshold, (lower, upper))| RangeRow {
            threshold,
            lower: lower.expect("at least one pair"),
            upper: upper.expect("at least one pair"),
        })
        .collect())
}

impl BoundsQuery {
    fn target_len(&self) -> usize {
        match &self.target {
            Target::Delta(t) => t.len(),
            Target::Epsilon(_) => 1,
        }
    }
}
