//! The shuffle index's leading-term asymptotics (Takagi–Liew Lemma 3.2, Corollary 3.3 and
//! Theorem 3.4, `../shared/papers/002_51d498152c20ebe0.txt` §3), held against the certified
//! range of `bounds`.  These are **predictions**: the excerpt proves them only up to `1 + o(1)`
//! factors, in the regime `ε_n = ω(n^{-1/2})`, `ε_n = O(√(log n / n))`.  Their formulas are
//! evaluated as MPFR enclosures (`Prediction`), so that the comparison with a certified value
//! is itself exact, but nothing here is a bound on δ or ε.
//!
//! * `D(t) ≈ φ(χ (t − 1) √n) / (χ³ (t − 1)² n^{3/2})`, `t = e^ε`: the excerpt's final display
//!   of §3.1 (issue 11 writes it with `t − 1`; the excerpt's Lemma 3.2 statement, eq. (1), is
//!   missing, and it notes that `e^ε − 1 ≈ ε` there).  With `χ_up` it predicts the blanket upper
//!   bound, with `χ_lo` the lower bound (Corollary 3.3, statement missing from the excerpt).
//! * `ε_n(δ)`: the same leading term solved for `t` at `D = δ` (the excerpt's description of
//!   Theorem 3.4, whose explicit formula is missing), and its expansion
//!   `ε_n ≈ (1/χ) √(log n / n)`, which the excerpt states for `δ_n = α/n`.
//!
//! What is inferred from the excerpt is listed in proofs-notes/shuffle-index.md.

use super::index::IndexValue;
use super::range::{BoundsQuery, RangeProof, RangeRow, Target, bounds_shared, check_time_shared};
use crate::arith::mpfr::MpfrInterval;
use crate::arith::special::normal_pdf;
use crate::arith::{Scalar, Transcendental};
use crate::asymptotic::predictions::{PREDICTION_CTX, Prediction};
use crate::check::Verdict;
use crate::enclosure::{Enclosure, Endpoint, Tri};
use crate::error::Result;
use crate::query::Threshold;
use rug::Rational;

/// `χ` as an MPFR enclosure, when finite and positive.
fn chi_interval(v: &IndexValue) -> Option<MpfrInterval> {
    let (Endpoint::Finite(lo), Endpoint::Finite(hi)) = (v.chi2.lo(), v.chi2.hi()) else {
        return None;
    };
    if *lo <= 0 {
        return None;
    }
    let ctx = &PREDICTION_CTX;
    Some(
        MpfrInterval::from_rational(lo, ctx)
            .hull(&MpfrInterval::from_rational(hi, ctx))
            .sqrt(),
    )
}

/// The leading term `φ(χ x √n) / (χ³ x² n^{3/2})` at `x = t − 1 > 0`.
fn leading_term(chi: &MpfrInterval, x: &MpfrInterval, n: u64) -> MpfrInterval {
    let ctx = &PREDICTION_CTX;
    let root_n = MpfrInterval::from_u64(n, ctx).sqrt();
    let z = chi.mul(x).mul(&root_n);
    let chi3 = chi.mul(chi).mul(chi);
    let n32 = root_n.mul(&root_n).mul(&root_n);
    normal_pdf(&z, ctx).div(&chi3.mul(&x.mul(x)).mul(&n32))
}

/// The predicted `D` at `ε > 0`.
pub fn predicted_delta(chi: &MpfrInterval, eps: &Rational, n: u64) -> Prediction {
    let ctx = &PREDICTION_CTX;
    let x = MpfrInterval::from_rational(eps, ctx)
        .exp()
        .sub(&MpfrInterval::one(ctx));
    Prediction {
        formula: leading_term(chi, &x, n).enclosure(),
    }
}

/// The `ε = ln(1 + x)` at which the leading term equals `delta`, enclosed.  The term is
/// decreasing in `x > 0` (its log-derivative is `−χ² n x − 2/x`), from `+∞` to 0, so the root
/// is unique, and bisection brackets it between two points whose values are certified on either
/// side of `delta`.  `None` when the bracket cannot be found (values beyond MPFR's range).
pub fn predicted_epsilon(chi: &MpfrInterval, delta: &Rational, n: u64) -> Option<Prediction> {
    let ctx = &PREDICTION_CTX;
    let above = |x: &Rational| -> Tri {
        leading_term(chi, &MpfrInterval::from_rational(x, ctx), n)
            .enclosure()
            .compare(delta)
    };
    // Start at χ x √n = 1 and move out by factors of 2 until the root is bracketed.
    let mut lo = Rational::from_f64(1.0 / (chi.approx_f64() * (n as f64).sqrt()))?;
    let mut hi = lo.clone();
    for _ in 0..4000 {
        match above(&lo) {
            Tri::Greater => break,
            _ => lo >>= 1u32,
        }
    }
    for _ in 0..4000 {
        match above(&hi) {
            Tri::Less => break,
            _ => hi <<= 1u32,
        }
    }
    if above(&lo) != Tri::Greater || above(&hi) != Tri::Less {
        return None;
    }
    for _ in 0..200 {
        let mid = Rational::from(&lo + &hi) / 2u32;
        match above(&mid) {
            Tri::Greater => lo = mid,
            Tri::Less => hi = mid,
            _ => break,
        }
        if Rational::from(&hi - &lo) < Rational::from(&lo >> 64u32) {
            break;
        }
    }
    let one = MpfrInterval::one(ctx);
    let ln1p = |x: &Rational| one.add(&MpfrInterval::from_rational(x, ctx)).ln();
    Some(Prediction {
        formula: ln1p(&lo).hull(&ln1p(&hi)).enclosure(),
    })
}

/// `(1/χ) √(ln n / n)`.
pub fn predicted_epsilon_expansion(chi: &MpfrInterval, n: u64) -> Prediction {
    let ctx = &PREDICTION_CTX;
    let n_i = MpfrInterval::from_u64(n, ctx);
    Prediction {
        formula: n_i.ln().div(&n_i).sqrt().div(chi).enclosure(),
    }
}

/// One prediction held against one certified value.
#[derive(Clone, Debug)]
pub struct IndexComparison {
    /// What predicts, e.g. `leading term, χ_up`.
    pub prediction: &'static str,
    /// The result it comes from.
    pub source: &'static str,
    /// The certified end it predicts: `upper` (blanket) or `lower` (concrete pair).
    pub end: &'static str,
    /// Where: `δ at ε = …` or `ε at δ = …`.
    pub at: String,
    pub predicted: Prediction,
    pub certified: Enclosure,
    /// `(predicted − certified)/certified` (midpoints; display).
    pub rel_error: f64,
    pub verdict: Verdict,
}

/// The check: the certified range at each ε and at `δ = 1/n`, every sum behind each, and
/// every prediction against the end it predicts.
#[derive(Clone, Debug)]
pub struct IndexCheck {
    pub delta_rows: Vec<RangeRow>,
    pub delta_proof: RangeProof,
    pub epsilon_row: RangeRow,
    pub epsilon_proof: RangeProof,
    /// `1/n`.
    pub delta: Rational,
    pub comparisons: Vec<IndexComparison>,
}

/// Which certified row a prediction is held against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PredictedRow {
    /// δ at the i-th ε.
    Delta(usize),
    /// ε at `δ = 1/n`.
    Epsilon,
}

/// One prediction of the shuffle-index check, before it meets a certified value.
#[derive(Clone, Debug)]
pub struct IndexPrediction {
    pub prediction: &'static str,
    pub source: &'static str,
    /// `upper` (χ_up, against the blanket end) or `lower` (χ_lo, against the concrete pair).
    pub end: &'static str,
    pub at: String,
    pub row: PredictedRow,
    pub predicted: Prediction,
}

/// The `δ` at which the check compares ε: `1/n` (`n ≥ 2`).
pub fn check_delta(n: u64) -> Rational {
    Rational::from((1, n.max(2)))
}

/// Every prediction the check makes at `eps` and `δ = 1/n` from the shuffle index `(χ_up,
/// χ_lo)`.  They depend on nothing certified, so `verify` makes them again.
pub fn index_predictions(
    eps: &[Rational],
    n: u64,
    (up, lo): &(IndexValue, IndexValue),
) -> Vec<IndexPrediction> {
    let delta = check_delta(n);
    let leading = "Takagi–Liew Lemma 3.2 / Cor. 3.3 (leading term)";
    let mut out = Vec::new();
    for (index, end, upper) in [(up, "upper", true), (lo, "lower", false)] {
        let Some(chi) = chi_interval(index) else {
            continue;
        };
        let pick = |a: &'static str, b: &'static str| if upper { a } else { b };
        for (i, e) in eps.iter().enumerate() {
            if *e <= 0 {
                continue;
            }
            out.push(IndexPrediction {
                prediction: pick(
                    "φ(χ(t−1)√n)/(χ³(t−1)²n^{3/2}), χ_up",
                    "φ(χ(t−1)√n)/(χ³(t−1)²n^{3/2}), χ_lo",
                ),
                source: leading,
                end,
                at: format!("δ at ε = {}", crate::enclosure::exact_string(e)),
                row: PredictedRow::Delta(i),
                predicted: predicted_delta(&chi, e, n),
            });
        }
        let at = format!("ε at δ = {}", crate::enclosure::exact_string(&delta));
        if let Some(p) = predicted_epsilon(&chi, &delta, n) {
            out.push(IndexPrediction {
                prediction: pick(
                    "leading term solved for ε, χ_up",
                    "leading term solved for ε, χ_lo",
                ),
                source: "Takagi–Liew Thm 3.4 (inverting the leading term)",
                end,
                at: at.clone(),
                row: PredictedRow::Epsilon,
                predicted: p,
            });
        }
        out.push(IndexPrediction {
            prediction: pick("(1/χ)√(ln n/n), χ_up", "(1/χ)√(ln n/n), χ_lo"),
            source: "Takagi–Liew Thm 3.4 (expansion)",
            end,
            at,
            row: PredictedRow::Epsilon,
            predicted: predicted_epsilon_expansion(&chi, n),
        });
    }
    out
}

/// A prediction against a certified value.
pub fn compare(p: IndexPrediction, certified: &Enclosure) -> IndexComparison {
    let c = certified.mid_f64();
    IndexComparison {
        prediction: p.prediction,
        source: p.source,
        end: p.end,
        at: p.at,
        rel_error: (p.predicted.value() - c) / c,
        verdict: Verdict::of(&p.predicted.formula, certified),
        predicted: p.predicted,
        certified: certified.clone(),
    }
}

/// Runs the check for the question's randomizer and n at the points `eps` (the question's
/// target is replaced), with its shuffle index `(χ_up, χ_lo)`.
pub fn index_check(
    q: &BoundsQuery,
    eps: &[Rational],
    index: &(IndexValue, IndexValue),
) -> Result<IndexCheck> {
    let delta = check_delta(q.n);
    // One shared computation: every pair's windows serve both targets.
    let targets = [
        Target::Delta(eps.iter().cloned().map(Threshold::Eps).collect()),
        Target::Epsilon(delta.clone()),
    ];
    check_time_shared(q, &targets)?;
    let mut ranges = bounds_shared(q, &targets)?.into_iter();
    let (delta_rows, delta_proof) = ranges.next().expect("the delta target");
    let (mut epsilon_rows, epsilon_proof) = ranges.next().expect("the epsilon target");
    let epsilon_row = epsilon_rows.remove(0);
    let comparisons = index_predictions(eps, q.n, index)
        .into_iter()
        .map(|p| {
            let row = match p.row {
                PredictedRow::Delta(i) => &delta_rows[i],
                PredictedRow::Epsilon => &epsilon_row,
            };
            let certified = if p.end == "upper" {
                row.upper.value.clone()
            } else {
                row.lower.value.clone()
            };
            compare(p, &certified)
        })
        .collect();
    Ok(IndexCheck {
        delta_rows,
        delta_proof,
        epsilon_row,
        epsilon_proof,
        delta,
        comparisons,
    })
}
