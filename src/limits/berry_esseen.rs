//! The boundary Berry–Esseen diagnostic (Part III Theorem 8.1, Corollary 8.2): the certified
//! Poisson-shift curve `(Poi(λ), 1 + Poi(λ))` — or the Skellam shift with `U ~ Poi((1 − π)λ)`,
//! `V ~ Poi(πλ)` — against the Gaussian shift `(N(0, 1), N(c, 1))` with `c = λ^{-1/2}`.
//!
//! Both curves are certified enclosures, so the gap `max_dir |δ_Poi − δ_G|` is enclosed too.
//! The paper proves `gap ≤ C_ε c` with an unspecified constant: the scaled gap `gap/c` and the
//! order observed between consecutive λ are reported as observations, not certificates.

use super::experiment::{ExperimentQuery, LimitExperiment, Model, answer};
use super::gaussian;
use super::lattice::CompoundPoisson;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::{Enclosure, exact_string};
use crate::error::{Error, Result};
use crate::query::{Backend, DeltaJob, DeltaRow, Threshold};
use rug::Rational;
use serde_json::json;

/// One λ of the diagnostic.
#[derive(Clone, Debug)]
pub struct BerryEsseenRow {
    pub lambda: Rational,
    /// The lattice experiment as `--experiment` names it (`poisson-shift:lambda=L` or
    /// `skellam-shift:a=A,b=B`).
    pub experiment: String,
    /// `c = λ^{-1/2}`, enclosed.
    pub c: Enclosure,
    /// The lattice experiment's δ in both directions, per threshold.
    pub lattice: Vec<DeltaRow>,
    /// The Gaussian shift's δ (both directions equal), per threshold.
    pub gaussian: Vec<Enclosure>,
    /// `max(|δ_qp − δ_G|, |δ_pq − δ_G|)`, enclosed, per threshold.
    pub gap: Vec<Enclosure>,
    /// The arithmetic of the lattice curves.
    pub arithmetic: String,
    /// The arithmetic of the Gaussian curve (`mpfr-P`).
    pub gaussian_arithmetic: String,
}

impl BerryEsseenRow {
    /// `gap/c` at threshold i, from the midpoints (an observation).
    pub fn scaled_gap(&self, i: usize) -> f64 {
        scaled_gap(&self.gap[i], &self.c)
    }
}

/// `gap/c` from the midpoints: an observation in doubles, not a certificate.
pub fn scaled_gap(gap: &Enclosure, c: &Enclosure) -> f64 {
    gap.mid_f64() / c.mid_f64()
}

/// `c = λ^{-1/2}` as a rational bracket `[lo, hi]` (MPFR, outward).
fn c_bracket(lambda: &Rational, ctx: &MpfrCtx) -> (Rational, Rational) {
    let c = MpfrInterval::one(ctx).div(&MpfrInterval::from_rational(lambda, ctx).sqrt());
    let e = c.enclosure();
    (
        e.lo().finite().cloned().expect("finite"),
        e.hi().finite().cloned().expect("finite"),
    )
}

/// The Gaussian shift's δ at `μ ∈ [μ_lo, μ_hi]`: δ increases in μ (data processing: the
/// experiment at a smaller μ is a garbling of the one at a larger μ).
fn gaussian_delta(mu: &(Rational, Rational), t: &Threshold, ctx: &MpfrCtx) -> Enclosure {
    let lo = gaussian::delta(&mu.0, t, ctx);
    let hi = gaussian::delta(&mu.1, t, ctx);
    Enclosure::new(lo.lo().clone(), hi.hi().clone())
}

/// Where the curves are compared: at fixed ε (Corollary 8.2's statement), or on the local
/// scale `ε = t·c` where both curves stay away from 0 as `c → 0` (each ε is then the rational
/// `t·c_lo`, with `c_lo ≤ c` the lower end of c's bracket, and is reported).
#[derive(Clone, Debug)]
pub enum Scale {
    Fixed(Vec<Threshold>),
    Local(Vec<Rational>),
}

/// The diagnostic at each λ (> 0); `pi = None` for the Poisson shift, `Some(π)` with
/// `0 < π < 1` for the Skellam shift.
pub fn berry_esseen(
    lambdas: &[Rational],
    scale: &Scale,
    pi: Option<&Rational>,
    backend: Backend,
    escalate_above: Option<f64>,
) -> Result<Vec<BerryEsseenRow>> {
    let precision = match backend {
        Backend::Mpfr { precision } => precision,
        Backend::Interval => 128,
        Backend::Exact => {
            return Err(Error::argument(
                "--backend",
                "the limit experiments have irrational probabilities; use interval or mpfr",
            ));
        }
    };
    let ctx = MpfrCtx { precision };
    lambdas
        .iter()
        .map(|lambda| {
            let (field, name) = match pi {
                None => (
                    CompoundPoisson::poisson_shift(lambda.clone()),
                    format!("poisson-shift:lambda={}", exact_string(lambda)),
                ),
                Some(p) => {
                    let a = (1 - p.clone()) * lambda;
                    let b = Rational::from(p * lambda);
                    let name = format!(
                        "skellam-shift:a={},b={}",
                        exact_string(&a),
                        exact_string(&b)
                    );
                    (CompoundPoisson::skellam_shift(a, b), name)
                }
            };
            let query = ExperimentQuery {
                experiment: LimitExperiment {
                    name: name.clone(),
                    kind: if pi.is_some() {
                        "skellam-shift"
                    } else {
                        "poisson-shift"
                    },
                    model: Model::Lattice(field),
                    parameters: json!({}),
                    file: None,
                },
                backend,
                escalate_above,
            };
            let mu = c_bracket(lambda, &ctx);
            let thresholds: Vec<Threshold> = match scale {
                Scale::Fixed(list) => list.clone(),
                Scale::Local(ts) => ts
                    .iter()
                    .map(|t| Threshold::Eps(Rational::from(t * &mu.0)))
                    .collect(),
            };
            let computed = answer(
                &query,
                &DeltaJob {
                    thresholds: thresholds.clone(),
                },
            )?;
            let gaussian: Vec<Enclosure> = thresholds
                .iter()
                .map(|t| gaussian_delta(&mu, t, &ctx))
                .collect();
            let gap = computed
                .result
                .iter()
                .zip(&gaussian)
                .map(|(row, g)| row.qp.distance(g).max(&row.pq.distance(g)))
                .collect();
            Ok(BerryEsseenRow {
                lambda: lambda.clone(),
                experiment: name,
                c: Enclosure::from_rationals(mu.0, mu.1),
                lattice: computed.result,
                gaussian,
                gap,
                arithmetic: computed.arithmetic,
                gaussian_arithmetic: format!("mpfr-{precision}"),
            })
        })
        .collect()
}

/// The order `log(gap_i/gap_j)/log(c_i/c_j)` observed between two rows at threshold t (`None`
/// when a gap is not resolved away from 0).
pub fn observed_order(a: &BerryEsseenRow, b: &BerryEsseenRow, t: usize) -> Option<f64> {
    order_between(&a.gap[t], &a.c, &b.gap[t], &b.c)
}

/// The order `log(ga/gb)/log(ca/cb)` observed between the gaps `ga` at `ca` and `gb` at `cb`
/// (`None` when a gap is not resolved away from 0): an observation in doubles, not a
/// certificate.
pub fn order_between(
    ga: &Enclosure,
    ca: &Enclosure,
    gb: &Enclosure,
    cb: &Enclosure,
) -> Option<f64> {
    if ga.lo().to_f64() <= 0.0 || gb.lo().to_f64() <= 0.0 {
        return None;
    }
    Some((ga.mid_f64() / gb.mid_f64()).ln() / (ca.mid_f64() / cb.mid_f64()).ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_shrinks_like_c_at_the_paper_scale() {
        let lambdas: Vec<Rational> = [16u32, 256, 4096].iter().map(|&l| l.into()).collect();
        let scale = Scale::Local(vec![Rational::from(1)]);
        let rows = berry_esseen(&lambdas, &scale, None, Backend::Interval, Some(1e-9)).unwrap();
        // c = 1/4, 1/16, 1/64 exactly.
        assert!(rows[0].c.is_point() && rows[0].c.contains(&Rational::from((1, 4))));
        for r in &rows {
            assert!(r.gap[0].lo() <= r.gap[0].hi());
            // Theorem 8.1's bound holds with a modest constant here.
            assert!(
                r.scaled_gap(0) < 2.0,
                "λ = {}: {}",
                r.lambda,
                r.scaled_gap(0)
            );
        }
        // The gap decreases with λ, at an order of at least 1/2 in c.
        let order = observed_order(&rows[1], &rows[2], 0).unwrap();
        assert!(order > 0.5, "observed order {order}");
    }
}
