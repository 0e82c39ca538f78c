//! The Gaussian shift experiment `P = N(0, 1)`, `Q = N(μ, 1)` (Part I §7.2, Part III §8),
//! certified in MPFR intervals.
//!
//! Its likelihood ratio `e^{μx − μ²/2}` is monotone, so both privacy curves are the GDP curve
//! `δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)` (the pair is symmetric under `x ↦ μ − x`), and
//! the divergences have closed forms: `TV = 2Φ(μ/2) − 1`, `KL = μ²/2` both ways,
//! `χ² = e^{μ²} − 1`, `H² = 1 − e^{−μ²/8}`, `D_α = αμ²/2`.  JSD has none; it is enclosed by
//! a Hermite quadrature of `ln 2 − E[softplus(μX − μ²/2)]` with its remainder bounded.
//! See proofs-notes/limit-experiments.md.

use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::special::normal_cdf;
use crate::arith::{Scalar, Transcendental};
use crate::arith::{exp_bracket, ln_bracket};
use crate::enclosure::{Enclosure, Tri};
use crate::error::{Error, Result};
use crate::exact::curve::{EpsilonCertificate, check_target};
use crate::exact::divergence::Divergences;
use crate::query::Threshold;
use rug::{Float, Rational};

/// `δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`, the GDP curve (Part I §7.2), evaluated on
/// intervals by the natural extension.
pub fn shift_delta(eps: &MpfrInterval, mu: &MpfrInterval, ctx: &MpfrCtx) -> MpfrInterval {
    let half_mu = mu.div(&MpfrInterval::from_u64(2, ctx));
    let ratio = MpfrInterval::zero(ctx).sub(&eps.div(mu));
    normal_cdf(&ratio.add(&half_mu), ctx)
        .sub(&eps.exp().mul(&normal_cdf(&ratio.sub(&half_mu), ctx)))
}

fn point(x: &Float) -> MpfrInterval {
    MpfrInterval::from_floats(x.clone(), x.clone())
}

/// δ of the Gaussian shift at a threshold, both directions (they are equal).  δ decreases in
/// ε, so it is evaluated at the two ends of ε's enclosure separately.
pub fn delta(mu: &Rational, threshold: &Threshold, ctx: &MpfrCtx) -> Enclosure {
    let eps = match threshold {
        Threshold::Eps(e) => MpfrInterval::from_rational(e, ctx),
        Threshold::ExpEps(c) => MpfrInterval::from_rational(c, ctx).ln(),
    };
    let m = MpfrInterval::from_rational(mu, ctx);
    let lo = shift_delta(&point(eps.hi()), &m, ctx).enclosure();
    let hi = shift_delta(&point(eps.lo()), &m, ctx).enclosure();
    Enclosure::new(lo.lo().clone(), hi.hi().clone()).clamp_nonnegative()
}

/// The smallest ε ≥ 0 with δ(ε) ≤ target, by certified bisection in ε.
pub fn epsilon(mu: &Rational, target: &Rational, ctx: &MpfrCtx) -> Result<EpsilonCertificate> {
    check_target(target)?;
    let at = |e: &Rational| delta(mu, &Threshold::Eps(e.clone()), ctx);
    let one = Rational::from(1);
    let at_zero = at(&Rational::new());
    if matches!(at_zero.compare(target), Tri::Less | Tri::Equal) {
        return Ok(EpsilonCertificate {
            eps: Enclosure::point(Rational::new()),
            exp_lo: one.clone(),
            exp_hi: Some(one),
            delta_at_hi: Some(at_zero),
            singular_mass: None,
        });
    }
    // δ(ε) ≤ Φ(−ε/μ + μ/2) → 0: some power of two is above ε*.
    let mut hi = Rational::from(1);
    while at(&hi).compare(target) == Tri::Greater || at(&hi).compare(target) == Tri::Unknown {
        hi *= 2;
        if hi > 1u64 << 40 {
            return Err(Error::argument(
                "--delta",
                "the Gaussian shift's ε for this target exceeds 2^40",
            ));
        }
    }
    let mut lo = Rational::new();
    let stop = Rational::from((1, 1u64 << 60));
    for _ in 0..400 {
        if Rational::from(&hi - &lo) <= Rational::from(&hi * &stop) {
            break;
        }
        let mid = Rational::from(&lo + &hi) / 2u32;
        match at(&mid).compare(target) {
            Tri::Less | Tri::Equal => hi = mid,
            Tri::Greater => lo = mid,
            Tri::Unknown => break,
        }
    }
    let exp_lo = if lo == 0 {
        one
    } else {
        exp_bracket(&lo, ctx.precision).0
    };
    let exp_hi = exp_bracket(&hi, ctx.precision).1;
    let delta_at_hi = delta(mu, &Threshold::ExpEps(exp_hi.clone()), ctx);
    // The enclosure is that of ln of the witnesses, so that they prove both of its ends (a
    // verifier needs δ(exp_hi) ≤ D to show ε ≤ hi, and exp_hi ≥ e^hi).
    let eps_lo = if exp_lo > 1 {
        ln_bracket(&exp_lo, ctx.precision).0.max(Rational::new())
    } else {
        Rational::new()
    };
    let eps_hi = ln_bracket(&exp_hi, ctx.precision).1;
    Ok(EpsilonCertificate {
        eps: Enclosure::from_rationals(eps_lo, eps_hi),
        exp_lo,
        exp_hi: Some(exp_hi),
        delta_at_hi: Some(delta_at_hi),
        singular_mass: None,
    })
}

/// `(softplus(t), σ(t))` with `softplus(t) = ln(1 + e^t)` and `σ(t) = 1/(1 + e^{−t})`, from
/// one exponential `e^{−|t|}` (no overflow, no cancellation).
fn softplus_and_logistic(t: &MpfrInterval, ctx: &MpfrCtx) -> (MpfrInterval, MpfrInterval) {
    let one = MpfrInterval::one(ctx);
    if t.lo() > &0 {
        let e = MpfrInterval::zero(ctx).sub(t).exp();
        (t.add(&one.add(&e).ln()), one.div(&one.add(&e)))
    } else {
        let e = t.exp();
        (one.add(&e).ln(), e.div(&one.add(&e)))
    }
}

/// The largest number of cells of the JSD quadrature.
const MAX_JSD_CELLS: u64 = 200_000;

/// JSD of the Gaussian shift, enclosed.  Reflecting `x ↦ μ − x` swaps P and Q and inverts the
/// ratio, so `JSD = ln 2 − E[g(X)]`, `X ~ N(0, 1)`, with `g(x) = softplus(μx − μ²/2)`.  On each
/// cell `[a, b]` of `[−R, R]`, g is replaced by its cubic Hermite interpolant H (values and
/// slopes `g' = μσ(μx − μ²/2)` at both ends), whose Gaussian integral is exact through the
/// moments `S_j = ∫_a^b (x − a)^j φ`, `S_{j+1} = [−(x − a)^j φ]_a^b + j S_{j−1} − a S_j`;
/// `|g − H| ≤ max|g⁗| h⁴/384` with `|g⁗| = μ⁴|σ‴| ≤ μ⁴/8`.  Beyond ±R,
/// `0 ≤ g(x) ≤ ln 2 + μ|x|` adds at most `2 ln 2 Φ(−R) + 2μφ(R)`.
fn jsd(mu: &Rational, ctx: &MpfrCtx) -> Enclosure {
    let m = MpfrInterval::from_rational(mu, ctx);
    let c = MpfrInterval::from_rational(&(Rational::from(mu * mu) / 2u32), ctx);
    // R: Φ(−R) < 2^-(prec+8).
    let reach =
        ((2.0 * std::f64::consts::LN_2 * (ctx.precision as f64 + 8.0)).sqrt() + 1.0).ceil() as u64;
    // Cells: the interpolation error per unit of mass, μ⁴h⁴/3072, at about 10^-11 of the
    // JSD's size (≈ min(μ²/8, ln 2)), within MAX_JSD_CELLS.
    let mu_f = mu.to_f64();
    let c_f = mu_f * mu_f / 2.0;
    let size = (mu_f * mu_f / 8.0).min(std::f64::consts::LN_2);
    let tolerance = 1e-11 * size / (2.0 * reach as f64);
    // A cell's width where the error density φ(x) μ⁴ M(x) h⁴/384 meets the tolerance, with
    // M(x) = min(1/8, e^{−|μx − μ²/2|}) (a heuristic: the bound below is what is certified).
    let width_at = |x: f64| {
        let phi = (-x * x / 2.0).exp() * 0.398_942_280_401_432_7;
        let m4 = (-(mu_f * x - c_f).abs()).exp().min(0.125) * mu_f.powi(4);
        (384.0 * tolerance / (phi * m4).max(1e-300))
            .powf(0.25)
            .clamp(2.0 * reach as f64 / MAX_JSD_CELLS as f64, 0.5)
    };
    // Constants of φ(x) = e^{−x²/2}/√(2π) and Φ(x) = ½ erfc(−x/√2), made once.
    let two = MpfrInterval::from_u64(2, ctx);
    let three = MpfrInterval::from_u64(3, ctx);
    let half = MpfrInterval::from_rational(&Rational::from((1, 2)), ctx);
    let eighth = MpfrInterval::from_rational(&Rational::from((1, 8)), ctx);
    let inv_sqrt_2pi = MpfrInterval::one(ctx).div(&two.mul(&crate::arith::special::pi(ctx)).sqrt());
    let minus_inv_sqrt2 = MpfrInterval::zero(ctx).sub(&MpfrInterval::one(ctx).div(&two.sqrt()));
    let mu4_over_384 = m
        .mul(&m)
        .mul(&m)
        .mul(&m)
        .div(&MpfrInterval::from_u64(384, ctx));
    // At a node x: x, t = μx − μ²/2, g(x), g'(x), φ(x), Φ(x).
    let at = |x: &Rational| {
        let xi = MpfrInterval::from_rational(x, ctx);
        let t = m.mul(&xi).sub(&c);
        let (g, sigma) = softplus_and_logistic(&t, ctx);
        let square = MpfrInterval::from_rational(&Rational::from(x * x), ctx);
        let phi = MpfrInterval::zero(ctx)
            .sub(&half.mul(&square))
            .exp()
            .mul(&inv_sqrt_2pi);
        let cdf = half.mul(&crate::arith::special::erfc(&xi.mul(&minus_inv_sqrt2)));
        (xi, t, g, m.mul(&sigma), phi, cdf)
    };
    let end = Rational::from(reach);
    let mut left = -Rational::from(reach);
    let mut integral = MpfrInterval::zero(ctx);
    let mut interpolation = MpfrInterval::zero(ctx);
    let (mut a, mut t_a, mut g_a, mut s_a, mut phi_a, mut cdf_a) = at(&left);
    while left < end {
        let step = Rational::from_f64(width_at(left.to_f64())).expect("finite width");
        let right = Rational::from(&left + &step).min(end.clone());
        let h = Rational::from(&right - &left);
        let (b, t_b, g_b, s_b, phi_b, cdf_b) = at(&right);
        let hh = MpfrInterval::from_rational(&h, ctx);
        // Shifted moments S_0..S_3 (u = x − a, u = h at b).
        let s0 = cdf_b.sub(&cdf_a);
        let s1 = phi_a.sub(&phi_b).sub(&a.mul(&s0));
        let s2 = s0.sub(&hh.mul(&phi_b)).sub(&a.mul(&s1));
        let s3 = two.mul(&s1).sub(&hh.mul(&hh).mul(&phi_b)).sub(&a.mul(&s2));
        // H(a + u) = g_a + s_a u + c2 u² + c3 u³.
        let secant = g_b.sub(&g_a).div(&hh);
        let c2 = three.mul(&secant).sub(&two.mul(&s_a)).sub(&s_b).div(&hh);
        let c3 = s_a.add(&s_b).sub(&two.mul(&secant)).div(&hh.mul(&hh));
        integral = integral
            .add(&g_a.mul(&s0))
            .add(&s_a.mul(&s1))
            .add(&c2.mul(&s2))
            .add(&c3.mul(&s3));
        // |σ‴| ≤ min(1/8, e^{−min|t|}) on the cell (t is monotone in x).
        let m4 = if t_b.hi() < &0 {
            // t < 0 on the whole cell: min|t| = |t_b|.
            t_b.exp()
        } else if t_a.lo() > &0 {
            // t > 0 on the whole cell: min|t| = t_a.
            MpfrInterval::zero(ctx).sub(&t_a).exp()
        } else {
            eighth.clone()
        };
        let m4 = if m4.hi() > eighth.hi() {
            eighth.clone()
        } else {
            m4
        };
        let h2 = hh.mul(&hh);
        interpolation = interpolation.add(&s0.mul(&mu4_over_384).mul(&m4).mul(&h2.mul(&h2)));
        (a, t_a, g_a, s_a, phi_a, cdf_a) = (b, t_b, g_b, s_b, phi_b, cdf_b);
        left = right;
    }
    let interpolation = MpfrInterval::from_floats(
        rug::Float::with_val(ctx.precision, 0),
        interpolation.hi().clone(),
    );
    let r = MpfrInterval::from_u64(reach, ctx);
    let ln2 = two.ln();
    let tails = two
        .mul(&ln2)
        .mul(&normal_cdf(&MpfrInterval::zero(ctx).sub(&r), ctx))
        .add(&two.mul(&m).mul(&crate::arith::special::normal_pdf(&r, ctx)));
    let lo = ln2.sub(&integral.add(&interpolation).add(&tails));
    let hi = ln2.sub(&integral.sub(&interpolation));
    Enclosure::new(lo.enclosure().lo().clone(), hi.enclosure().hi().clone()).clamp_nonnegative()
}

/// The divergences of the Gaussian shift (module doc), Rényi at each order in `renyi_orders`.
pub fn divergences(mu: &Rational, renyi_orders: &[Rational], ctx: &MpfrCtx) -> Divergences {
    let m = MpfrInterval::from_rational(mu, ctx);
    let half = MpfrInterval::from_rational(&Rational::from((1, 2)), ctx);
    let mu2 = Rational::from(mu * mu);
    let tv = MpfrInterval::from_u64(2, ctx)
        .mul(&normal_cdf(&m.mul(&half), ctx))
        .sub(&MpfrInterval::one(ctx));
    let kl = Enclosure::point(Rational::from(&mu2 / 2u32));
    let chi2 = MpfrInterval::from_rational(&mu2, ctx)
        .exp()
        .sub(&MpfrInterval::one(ctx));
    let hellinger2 = MpfrInterval::one(ctx)
        .sub(&MpfrInterval::from_rational(&(Rational::from(-&mu2) / 8u32), ctx).exp());
    let renyi: Vec<(Rational, Enclosure)> = renyi_orders
        .iter()
        .map(|a| (a.clone(), Enclosure::point(Rational::from(a * &mu2) / 2u32)))
        .collect();
    Divergences {
        tv: tv.enclosure().clamp_nonnegative(),
        kl_qp: kl.clone(),
        kl_pq: kl,
        jsd: jsd(mu, ctx),
        chi2_qp: chi2.enclosure().clamp_nonnegative(),
        hellinger2: hellinger2.enclosure().clamp_nonnegative(),
        renyi_qp: renyi.clone(),
        renyi_pq: renyi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enclosure::Endpoint;
    use crate::exact::law::PairLaw;

    const CTX: MpfrCtx = MpfrCtx { precision: 128 };

    #[test]
    fn delta_at_zero_is_total_variation() {
        let mu = Rational::from(1);
        let d = delta(&mu, &Threshold::Eps(Rational::new()), &CTX);
        let tv = divergences(&mu, &[], &CTX).tv;
        assert!(d.overlaps(&tv) && d.relative_width() < 1e-30);
        // 2Φ(1/2) − 1 = 0.38292492254802620727…
        assert!((d.mid_f64() - 0.382_924_922_548_026_2).abs() < 1e-16);
    }

    #[test]
    fn epsilon_brackets_the_target() {
        let mu = Rational::from((1, 2));
        let target = Rational::from((1, 1000));
        let e = epsilon(&mu, &target, &CTX).unwrap();
        let (Endpoint::Finite(lo), Endpoint::Finite(hi)) = (e.eps.lo(), e.eps.hi()) else {
            panic!("finite ε")
        };
        assert!(lo < hi && e.eps.relative_width() < 1e-15);
        assert_eq!(
            delta(&mu, &Threshold::Eps(hi.clone()), &CTX).compare(&target),
            Tri::Less
        );
        assert_eq!(
            delta(&mu, &Threshold::Eps(lo.clone()), &CTX).compare(&target),
            Tri::Greater
        );
    }

    #[test]
    fn jsd_encloses_a_fine_discretisation() {
        // A coarser partition than the one used is a garbling: its JSD lies below.
        let mu = Rational::from(1);
        let j = jsd(&mu, &CTX);
        assert!(j.relative_width() < 1e-5, "{j}");
        let cells: Vec<(f64, f64)> = (0..400)
            .map(|i| {
                let a = -10.0 + 0.05 * i as f64;
                (a, a + 0.05)
            })
            .collect();
        let phi = |z: f64| {
            normal_cdf(
                &MpfrInterval::from_rational(&Rational::from_f64(z).unwrap(), &CTX),
                &CTX,
            )
        };
        let p: Vec<MpfrInterval> = cells.iter().map(|(a, b)| phi(*b).sub(&phi(*a))).collect();
        let q: Vec<MpfrInterval> = cells
            .iter()
            .map(|(a, b)| phi(b - 1.0).sub(&phi(a - 1.0)))
            .collect();
        let law = PairLaw {
            p,
            q,
            omitted: Rational::new(),
            ratio_lo: Rational::new(),
            ratio_hi: None,
            layout: crate::exact::law::Layout::Reduced,
            omission: Default::default(),
        };
        let coarse = crate::exact::divergence::divergences(&law, &[], &CTX).jsd;
        assert!(coarse.hi() <= j.hi(), "{coarse} vs {j}");
    }
}
