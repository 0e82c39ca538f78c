//! The asymptotic predictions of Part I §6–§7 and §10.  They are **not** certified values of
//! privacy quantities: each approximates one with an error the theorems only bound up to
//! unknown constants.  Their *formulas* are evaluated as enclosures (MPFR, directed rounding),
//! so that comparing a prediction with a certified value is itself decided rigorously.

use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::special::{normal_cdf, normal_pdf};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::Enclosure;
use rug::Rational;

/// Precision of prediction formulas.
pub const PREDICTION_CTX: MpfrCtx = MpfrCtx { precision: 160 };

/// An uncertified approximation of a privacy quantity.  `formula` encloses the exact value of
/// the prediction's formula (not of the quantity it predicts).
#[derive(Clone, Debug)]
pub struct Prediction {
    pub formula: Enclosure,
}

impl Prediction {
    fn of(x: &MpfrInterval) -> Self {
        Prediction {
            formula: x.enclosure(),
        }
    }

    /// The predicted value as a double (display and error statistics).
    pub fn value(&self) -> f64 {
        self.formula.mid_f64()
    }
}

fn num(q: &Rational) -> MpfrInterval {
    MpfrInterval::from_rational(q, &PREDICTION_CTX)
}

/// `μ_n = √(I/n)` (Part I §7.1), enclosed.
pub fn mu_n(i: &MpfrInterval, n: u64) -> MpfrInterval {
    i.div(&MpfrInterval::from_u64(n, &PREDICTION_CTX)).sqrt()
}

/// The local scale of a pair whose users send `messages` unbundled messages: m single steps
/// apart at nm draws, `μ = √(m·I/n)` (proofs-notes/multi-message.md; `mu_n` for m = 1).
pub fn mu_messages(i: &MpfrInterval, messages: u64, n: u64) -> MpfrInterval {
    mu_n(
        &i.mul(&MpfrInterval::from_u64(messages, &PREDICTION_CTX)),
        n,
    )
}

/// The local privacy curve `μ_n {φ(t) − tΦ(−t)}` at `ε = tμ_n` (Theorem 7.3, Corollary 7.5:
/// both directions, error `O(n^-1)`).
pub fn local_curve(mu: &MpfrInterval, t: &MpfrInterval) -> Prediction {
    let ctx = &PREDICTION_CTX;
    let minus_t = MpfrInterval::zero(ctx).sub(t);
    let value = mu.mul(&normal_pdf(t, ctx).sub(&t.mul(&normal_cdf(&minus_t, ctx))));
    Prediction::of(&value)
}

/// The GDP curve `δ_GDP(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)` (Part I §7.2).
pub fn gdp(eps: &MpfrInterval, mu: &MpfrInterval) -> Prediction {
    Prediction::of(&crate::limits::gaussian::shift_delta(
        eps,
        mu,
        &PREDICTION_CTX,
    ))
}

/// `JSD(T_{n,k}‖T_{n,k+1}) ≈ I_{k/n}/(8n)` (Part I §6, error `O(n^-2)`).
pub fn jsd_leading(i: &MpfrInterval, n: u64) -> Prediction {
    Prediction::of(&i.div(&num(&Rational::from(8 * n))))
}

/// The canonical expansion `JSD(T_{n,0}‖T_{n,1}) ≈ χ²/(8n) − μ3/(16n²) + 7(χ²)²/(64n²)`
/// (Part I §6, error `O(n^-3)`).
pub fn jsd_canonical(chi2: &MpfrInterval, mu3: &MpfrInterval, n: u64) -> Prediction {
    let n = Rational::from(n);
    let n2 = Rational::from(&n * &n);
    let value = chi2
        .div(&num(&(Rational::from(8) * &n)))
        .sub(&mu3.div(&num(&(Rational::from(16) * &n2))))
        .add(
            &num(&Rational::from(7))
                .mul(&chi2.mul(chi2))
                .div(&num(&(Rational::from(64) * &n2))),
        );
    Prediction::of(&value)
}

/// A smooth f-divergence `D_f(T_{n,k+1}‖T_{n,k}) ≈ f''(1)/2 · I/n` (Part I §6, error `o(n^-1)`).
pub fn f_divergence_leading(f_second: &Rational, i: &MpfrInterval, n: u64) -> Prediction {
    Prediction::of(&num(f_second).mul(i).div(&num(&Rational::from(2 * n))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::special::normal_cdf;

    fn point(s: &str) -> MpfrInterval {
        num(&crate::enclosure::parse_rational(s).unwrap())
    }

    #[test]
    fn gdp_at_zero_is_total_variation_of_the_gaussian_pair() {
        // δ_GDP(0; μ) = Φ(μ/2) − Φ(−μ/2) = 2Φ(μ/2) − 1.
        let mu = point("0.3");
        let g = gdp(&point("0"), &mu).formula;
        let two = MpfrInterval::from_u64(2, &PREDICTION_CTX);
        let tv = two
            .mul(&normal_cdf(&point("0.15"), &PREDICTION_CTX))
            .sub(&MpfrInterval::one(&PREDICTION_CTX));
        assert!(g.overlaps(&tv.enclosure()));
        assert!(g.relative_width() < 1e-40);
    }

    #[test]
    fn local_curve_and_gdp_agree_to_first_order() {
        // μ{φ(t) − tΦ(−t)} is the O(μ) term of δ_GDP(tμ; μ): the difference is O(μ²).
        for mu in ["0.01", "0.001"] {
            let mu = point(mu);
            let t = point("1");
            let local = local_curve(&mu, &t).value();
            let g = gdp(&t.mul(&mu), &mu).value();
            let m = mu.approx_f64();
            assert!((local - g).abs() < 2.0 * m * m, "{local} vs {g}");
        }
        // At t = 0 the local curve is μ φ(0) = μ/√(2π).
        let v = local_curve(&point("0.2"), &point("0")).value();
        assert!((v - 0.2 / (2.0 * std::f64::consts::PI).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn jsd_predictions() {
        let i = point("1.6");
        assert!((jsd_leading(&i, 100).value() - 0.002).abs() < 1e-18);
        // χ²/(8n) − μ3/(16n²) + 7(χ²)²/(64n²) with χ² = 2, μ3 = 1, n = 10.
        let v = jsd_canonical(&point("2"), &point("1"), 10).value();
        assert!((v - (2.0 / 80.0 - 1.0 / 1600.0 + 28.0 / 6400.0)).abs() < 1e-15);
        assert!((f_divergence_leading(&Rational::from(2), &i, 10).value() - 0.16).abs() < 1e-15);
    }
}
