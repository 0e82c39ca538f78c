//! The Chernoff bound of Part I §8.2 for the canonical pair, as a *certified* upper bound:
//!
//! `δ_{T_{n,1}‖T_{n,0}}(ε) ≤ e^{−λnτ} M(λ)^{n−1} {M(λ) + M'(λ)}`  for every λ ≥ 0,
//!
//! with `Z = r(Y)`, `Y ~ W0`, `M(λ) = E e^{λZ}`, `M'(λ) = E[Z e^{λZ}]`, `τ = e^ε − 1`.
//! (From `δ = E[(U_n − τ)₊] ≤ E[(1 + U_n) 1{U_n ≥ τ}] ≤ E[(1 + U_n) e^{λn(U_n − τ)}]`, since
//! `1 + U_n = L ≥ 0`.)  Any λ gives a valid bound; λ is chosen by a floating-point search
//! (steering only) and the bound is then evaluated in MPFR interval arithmetic at that exact λ.

use super::predictions::PREDICTION_CTX;
use crate::arith::mpfr::MpfrInterval;
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::Enclosure;
use crate::mechanism::Channel;
use rug::Rational;

/// The bound at the chosen λ.
#[derive(Clone, Debug)]
pub struct ChernoffBound {
    pub lambda: Rational,
    /// Encloses the bound's value; its upper end is a certified upper bound on δ.
    pub bound: Enclosure,
}

/// `ln B(λ)` in doubles, for choosing λ only.
fn approx_log_bound(w0: &[f64], r: &[f64], n: f64, tau: f64, lambda: f64) -> f64 {
    let m: f64 = w0.iter().zip(r).map(|(w, z)| w * (lambda * z).exp()).sum();
    let dm: f64 = w0
        .iter()
        .zip(r)
        .map(|(w, z)| w * z * (lambda * z).exp())
        .sum();
    -lambda * n * tau + (n - 1.0) * m.ln() + (m + dm).ln()
}

/// The bound for `n` users at the threshold `exp_eps` (an enclosure of `e^ε`), for a channel of
/// full support in the MPFR backend.
pub fn chernoff_bound(
    channel: &Channel<MpfrInterval>,
    n: u64,
    exp_eps: &MpfrInterval,
) -> ChernoffBound {
    let ctx = &PREDICTION_CTX;
    let [w0, w1] = &channel.w;
    let r: Vec<MpfrInterval> = w1
        .iter()
        .zip(w0)
        .map(|(a, b)| a.div(b).sub(&MpfrInterval::one(ctx)))
        .collect();
    let tau = exp_eps.sub(&MpfrInterval::one(ctx));
    // Steering: minimise ln B over λ ∈ [0, λ_max] by a grid then golden sections.
    let w0f: Vec<f64> = w0.iter().map(|x| x.approx_f64()).collect();
    let rf: Vec<f64> = r.iter().map(|x| x.approx_f64()).collect();
    let (nf, tauf) = (n as f64, tau.approx_f64());
    let zmax = rf.iter().fold(0.0f64, |a, z| a.max(z.abs())).max(1e-300);
    let lambda_max = 600.0 / zmax;
    let f = |l: f64| approx_log_bound(&w0f, &rf, nf, tauf, l);
    let grid: Vec<f64> = (0..=400)
        .map(|i| lambda_max * (i as f64 / 400.0).powi(3))
        .collect();
    let best =
        grid.iter()
            .copied()
            .filter(|l| f(*l).is_finite())
            .fold((0.0, 0.0), |(bl, bv), l| {
                let v = f(l);
                if v < bv { (l, v) } else { (bl, bv) }
            });
    let (mut a, mut b) = ((best.0 * 0.5).max(0.0), (best.0 * 1.5).min(lambda_max));
    for _ in 0..100 {
        let m1 = a + (b - a) * 0.381_966;
        let m2 = a + (b - a) * 0.618_034;
        if f(m1) < f(m2) { b = m2 } else { a = m1 }
    }
    let lambda = Rational::from_f64(0.5 * (a + b))
        .filter(|_| f(0.5 * (a + b)) < best.1)
        .unwrap_or_else(|| Rational::from_f64(best.0).unwrap_or_default());
    // Certified evaluation at the exact λ.
    let l = MpfrInterval::from_rational(&lambda, ctx);
    let mut m = MpfrInterval::zero(ctx);
    let mut dm = MpfrInterval::zero(ctx);
    for (w, z) in w0.iter().zip(&r) {
        let e = l.mul(z).exp();
        m.add_assign(&w.mul(&e));
        dm.add_assign(&w.mul(z).mul(&e));
    }
    let n_int = MpfrInterval::from_u64(n, ctx);
    let power = m.pow(&MpfrInterval::from_u64(n - 1, ctx));
    let decay = MpfrInterval::zero(ctx).sub(&l.mul(&n_int).mul(&tau)).exp();
    let bound = decay.mul(&power).mul(&m.add(&dm));
    ChernoffBound {
        lambda,
        bound: bound.enclosure(),
    }
}
