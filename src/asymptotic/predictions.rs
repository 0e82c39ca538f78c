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
    let ctx = &PREDICTION_CTX;
    let half_mu = mu.div(&MpfrInterval::from_u64(2, ctx));
    let ratio = MpfrInterval::zero(ctx).sub(&eps.div(mu));
    let value = normal_cdf(&ratio.add(&half_mu), ctx)
        .sub(&eps.exp().mul(&normal_cdf(&ratio.sub(&half_mu), ctx)));
    Prediction::of(&value)
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
