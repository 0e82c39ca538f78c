//! `shufflecert bounds`: a certified range `[lower, upper]` for a randomizer's privacy profile
//! `δ_M(ε)` (or `ε_M(δ)`) at n users.
//!
//! * Upper: `δ_M(ε) ≤ max_{x1 ≠ x1′} D(x1 → x1′)` (the blanket divergence, [`super::upper`]);
//!   for ε, the largest of the pairs' certified ε at which D meets δ.
//! * Lower: the concrete neighbouring pair `(x1, x2, …, x2) ≃ (x1′, x2, …, x2)` is one of the
//!   datasets in the profile's supremum, so its exact δ (pair engine) is a lower bound.  With
//!   `x2 ∈ {x1, x1′}` it is the mechanism `(W0, W1) = (R_{x1}, R_{x1′})` at `k = 0` or
//!   `k = n − 1`.  Backgrounds with a third input need the general-input engine (issue 11,
//!   Deliver 2) and are not yet included, so for `|X| ≥ 3` the lower bound may be below
//!   Takagi–Liew's.
//!
//! Pairs with the same classes (upper) or the same multiset of columns (lower) give the same
//! values and are computed once (k-RR on k inputs: one pair each).

use super::upper::{BlanketSum, Exact, classes};
use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::enclosure::Enclosure;
use crate::error::Result;
use crate::exact::curve::Direction;
use crate::exact::pair::PairOptions;
use crate::mechanism::randomizer::Randomizer;
use crate::query::{
    Backend, Computation, Computed, DeltaJob, EpsilonJob, PairQuery, PairSource, Threshold,
    Widths, answer, compute, relative_width_above,
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
    /// `(x1, x1′)`: the switched user's inputs.
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

/// Unordered pairs, one representative per value-equivalence class (`key`).
fn representatives<K: PartialEq>(
    k: usize,
    key: impl Fn(usize, usize) -> Result<K>,
) -> Result<Vec<(usize, usize)>> {
    let mut seen: Vec<K> = Vec::new();
    let mut out = Vec::new();
    for x in 0..k {
        for xp in x + 1..k {
            let kk = key(x, xp)?;
            if !seen.contains(&kk) {
                seen.push(kk);
                out.push((x, xp));
            }
        }
    }
    Ok(out)
}

/// The two-sided values of a pair source: per threshold `[qp, pq]`, or the ε of each direction.
fn two_sided<Src: PairSource>(source: &Src, target: &Target) -> Result<Vec<[Enclosure; 2]>> {
    Ok(match target {
        Target::Delta(thresholds) => answer(
            source,
            &DeltaJob {
                thresholds: thresholds.clone(),
            },
        )?
        .result
        .into_iter()
        .map(|r| [r.qp, r.pq])
        .collect(),
        Target::Epsilon(delta) => {
            let r = answer(
                source,
                &EpsilonJob {
                    delta: delta.clone(),
                },
            )?
            .result;
            vec![[r.qp.eps, r.pq.eps]]
        }
    })
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

/// The blanket divergence of the unordered pair `{x1, x1′}` at the question's target:
/// `[D(x1 → x1′), D(x1′ → x1)]` (see [`super::upper`]).
struct BlanketJob<'a> {
    exact: &'a Exact,
    pair: (usize, usize),
    query: &'a BoundsQuery,
}

impl Computation for BlanketJob<'_> {
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
        let (x1, x1p) = self.pair;
        let sum = BlanketSum::<S>::build(self.exact, x1, x1p, q.n, &q.options, ctx)?;
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

/// Folds one source's `[qp, pq]` values into the running maxima (by upper end, then lower
/// end); `qp` is attained by the ordered pair `qp_pair`, `pq` by its reverse.
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

/// The certified range at every threshold (or at the target δ).
pub fn bounds(q: &BoundsQuery) -> Result<Vec<RangeRow>> {
    let r = &q.randomizer;
    let rows = q.target_len();
    let mut upper: Vec<Option<Attained>> = vec![None; rows];
    let mut lower: Vec<Option<Attained>> = vec![None; rows];
    let exact = Exact::of(r)?;
    for (x1, x1p) in representatives(r.input_count(), |a, b| Ok(classes(&exact, a, b).0))? {
        let job = BlanketJob {
            exact: &exact,
            pair: (x1, x1p),
            query: q,
        };
        keep_largest(&mut upper, compute(&job)?.result.0, (x1, x1p), None);
    }
    let columns = |a: usize, b: usize| -> Result<Vec<(Rational, Rational)>> {
        let mut cols: Vec<(Rational, Rational)> = exact.rows[a]
            .iter()
            .cloned()
            .zip(exact.rows[b].iter().cloned())
            .collect();
        cols.sort();
        Ok(cols)
    };
    for (x1, x1p) in representatives(r.input_count(), columns)? {
        // k = 0: the n − 1 others hold x1 (W0 = R_{x1}); k = n − 1: they hold x1′.  The
        // engine's qp is δ(Q‖P) with Q the dataset where the switched user holds x1′: the
        // ordered pair (x1′, x1) in the upper bound's convention (first dataset first).
        let source = |k: u64| -> Result<PairQuery> {
            Ok(PairQuery {
                mechanism: r.pair(x1, x1p)?,
                n: q.n,
                k,
                options: q.options.clone(),
                backend: q.backend,
                exact_ctx: Default::default(),
                escalate_above: q.escalate_above,
            })
        };
        let background = |x: usize| (q.n > 1).then_some(x);
        let at_zero = two_sided(&source(0)?, &q.target)?;
        // When swapping x1 and x1′ only relabels outputs, the k = n − 1 pair is the k = 0
        // pair with the datasets exchanged: its two directions are k = 0's, swapped.
        let at_last = if columns(x1p, x1)? == columns(x1, x1p)? {
            at_zero.iter().map(|[qp, pq]| [pq.clone(), qp.clone()]).collect()
        } else {
            two_sided(&source(q.n - 1)?, &q.target)?
        };
        keep_largest(&mut lower, at_zero, (x1p, x1), background(x1));
        keep_largest(&mut lower, at_last, (x1p, x1), background(x1p));
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
