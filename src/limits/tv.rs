//! Total variation and Le Cam bounds, certified (Part III §2, §5, §7;
//! proofs-notes/tv-and-le-cam.md).
//!
//! Throughout, `TV(μ, ν) = sup_A |μ(A) − ν(A)|`, which on a countable space equals
//! `Σ_x (μ(x) − ν(x))₊ = ½ Σ_x |μ(x) − ν(x)|` (the convention of Part III §2, without a factor 2).
//!
//! * [`tv_finite`]: TV between two finite laws, as an enclosure.
//! * [`curve_transfer`]: Lemma 2.4, `|δ_{Q‖P}(ε) − δ_{Q′‖P′}(ε)| ≤ TV(Q, Q′) + e^ε TV(P, P′)`.
//! * [`le_cam_same_space`]: Lemma 2.3, `Δ_LC((P, Q), (P′, Q′)) ≤ max(TV(P, P′), TV(Q, Q′))`.
//! * [`shuffled_tv_bound`]: Lemmas 2.1–2.2 for the shuffled laws,
//!   `TV(T_{n,k}(W), T_{n,k}(W′)) ≤ (n − k)·TV(W0, W0′) + k·TV(W1, W1′)`.
//! * Poisson approximation: [`le_cam_poisson`] (`Σ p_i²`), [`barbour_hall`]
//!   (`(1 − e^{−λ})/λ · Σ p_i²`), [`per_trial_poisson`] (the bound of Part III §5 Step 4,
//!   `m·p·(1 − e^{−p})`), and [`poisson_mean_perturbation`] (`1 − e^{−|λ − μ|}`).
//! * [`binomial_plus_bernoulli_tv`]: Theorem 7.1, `TV(S + Ber(q), S + Ber(p)) =
//!   |q − p|·max_j P(S = j)` for `S ~ Bin(m, p)`.
//!
//! Bounds are returned as exact rational upper bounds (the true value is at most the number),
//! computed with directed MPFR roundings where an exponential enters.

use crate::arith::{Scalar, exp_bracket};
use crate::enclosure::{Enclosure, Endpoint};
use crate::exact::binary::{WindowLaw, binomial_window};
use crate::query::{DeltaRow, Threshold};
use rug::Rational;

/// Bits of the MPFR brackets of `e^x` used by the bounds (the `_bits` variants take others,
/// for `verify`).
pub const EXP_BITS: u32 = 128;

/// `min(x, 1)`: a TV is at most 1.
fn at_most_one(x: Rational) -> Rational {
    x.min(Rational::from(1))
}

/// `TV(a, b) = Σ_x (a(x) − b(x))₊` for two laws on the same finite list of states, as an
/// enclosure.  Both orders of the sum are computed and intersected: for probability vectors
/// they are equal, and each encloses it.
pub fn tv_finite<S: Scalar>(a: &[S], b: &[S], ctx: &S::Ctx) -> Enclosure {
    assert_eq!(a.len(), b.len(), "laws on the same states");
    let mut ab = S::zero(ctx);
    let mut ba = S::zero(ctx);
    for (x, y) in a.iter().zip(b) {
        ab.add_assign(&x.sub(y).pos_part());
        ba.add_assign(&y.sub(x).pos_part());
    }
    let (ab, ba) = (ab.enclosure(), ba.enclosure());
    let lo = ab
        .lo()
        .clone()
        .max(ba.lo().clone())
        .max(Endpoint::Finite(Rational::new()));
    let hi = ab.hi().clone().min(ba.hi().clone());
    Enclosure::new(lo.clone().min(hi.clone()), hi)
}

/// Lemma 2.4: every `δ′` of a pair `(P′, Q′)` with `TV(Q, Q′) ≤ tv_upper` and
/// `TV(P, P′) ≤ tv_lower` lies within `tv_upper + c·tv_lower` of `δ`, where `c ≥ e^ε` (the upper
/// end of the threshold's enclosure) and `δ` is the enclosure of `δ_{Q‖P}(ε)`.  For the reverse
/// curve `δ_{P‖Q}` pass the TV budgets with the roles of P and Q swapped.  Returns the widened
/// enclosure (clamped to [0, 1]) and the budget.
pub fn curve_transfer(
    delta: &Enclosure,
    tv_upper: &Rational,
    tv_lower: &Rational,
    exp_eps_hi: &Rational,
) -> (Enclosure, Rational) {
    let budget = tv_upper + Rational::from(exp_eps_hi * tv_lower);
    let zero = Endpoint::Finite(Rational::new());
    let one = Endpoint::Finite(Rational::from(1));
    let lo = match delta.lo() {
        Endpoint::Finite(x) => Endpoint::Finite(Rational::from(x - &budget)),
        other => other.clone(),
    }
    .max(zero);
    let hi = match delta.hi() {
        Endpoint::Finite(x) => Endpoint::Finite(Rational::from(x + &budget)),
        other => other.clone(),
    }
    .min(one);
    (Enclosure::new(lo.min(hi.clone()), hi), budget)
}

/// Lemma 2.3: the Le Cam distance between two experiments on the same space is at most the
/// larger of the two TV distances.
pub fn le_cam_same_space(tv_p: &Rational, tv_q: &Rational) -> Rational {
    tv_p.clone().max(tv_q.clone())
}

/// Lemmas 2.1–2.2 for the shuffled law of `zeros` users with `W0` and `ones` users with `W1`:
/// the histogram is a measurable map of the `zeros + ones` independent outputs, so
/// `TV ≤ zeros·TV(W0, W0′) + ones·TV(W1, W1′)` (and ≤ 1).
pub fn shuffled_tv_bound(zeros: u64, ones: u64, tv0: &Rational, tv1: &Rational) -> Rational {
    at_most_one(Rational::from(tv0 * zeros) + Rational::from(tv1 * ones))
}

/// Le Cam's inequality: `TV(L(Σ Ber(p_i)), Poi(Σ p_i)) ≤ Σ p_i²`.
pub fn le_cam_poisson(ps: &[Rational]) -> Rational {
    at_most_one(ps.iter().map(|p| Rational::from(p * p)).sum())
}

/// `1 − e^{−x}` rounded up (`x ≥ 0` rational), `e^{−x}` bracketed in `bits`-bit MPFR.
fn one_minus_exp_neg_up(x: &Rational, bits: u32) -> Rational {
    let (lo, _) = exp_bracket(&Rational::from(-x), bits);
    Rational::from(1) - lo
}

/// Barbour–Hall: `TV(L(Σ Ber(p_i)), Poi(λ)) ≤ (1 − e^{−λ})/λ · Σ p_i²`, `λ = Σ p_i > 0`
/// (Barbour, Holst and Janson 1992, Theorem 2.M); 0 when every `p_i` is 0.
pub fn barbour_hall(ps: &[Rational]) -> Rational {
    let lambda: Rational = ps.iter().sum();
    if lambda == 0 {
        return Rational::new();
    }
    let squares: Rational = ps.iter().map(|p| Rational::from(p * p)).sum();
    at_most_one(one_minus_exp_neg_up(&lambda, EXP_BITS) / lambda * squares)
}

/// Barbour–Hall for `Bin(m, p)`: `TV(Bin(m, p), Poi(mp)) ≤ (1 − e^{−mp})·p` (the bound of
/// [`barbour_hall`] with m equal probabilities, without listing them).
pub fn barbour_hall_binomial(m: u64, p: &Rational) -> Rational {
    barbour_hall_binomial_bits(m, p, EXP_BITS)
}

/// [`barbour_hall_binomial`] with its exponential bracketed in `bits`-bit MPFR.
pub fn barbour_hall_binomial_bits(m: u64, p: &Rational, bits: u32) -> Rational {
    let lambda = Rational::from(p * m);
    if lambda == 0 {
        return Rational::new();
    }
    at_most_one(one_minus_exp_neg_up(&lambda, bits) * p)
}

/// The per-trial bound of Part III §5 (Step 4): m independent trials, each landing in a set of
/// rare categories with total probability p, against independent Poisson counts with means
/// `m·W(w)`: `TV ≤ m·p·(1 − e^{−p})`, since one trial is at TV `p(1 − e^{−p})` from its
/// Poisson vector and Lemma 2.2 adds over trials.
pub fn per_trial_poisson(m: u64, p: &Rational) -> Rational {
    per_trial_poisson_bits(m, p, EXP_BITS)
}

/// [`per_trial_poisson`] with its exponential bracketed in `bits`-bit MPFR.
pub fn per_trial_poisson_bits(m: u64, p: &Rational, bits: u32) -> Rational {
    at_most_one(Rational::from(p * m) * one_minus_exp_neg_up(p, bits))
}

/// `TV(Poi(λ), Poi(μ)) ≤ 1 − e^{−|λ − μ|}`: with `λ ≤ μ`, `Poi(μ) = Poi(λ) + Poi(μ − λ)`
/// independently, and the two differ only when the extra count is non-zero.
pub fn poisson_mean_perturbation(lambda: &Rational, mu: &Rational) -> Rational {
    poisson_mean_perturbation_bits(lambda, mu, EXP_BITS)
}

/// [`poisson_mean_perturbation`] with its exponential bracketed in `bits`-bit MPFR.
pub fn poisson_mean_perturbation_bits(lambda: &Rational, mu: &Rational, bits: u32) -> Rational {
    one_minus_exp_neg_up(&Rational::from(lambda - mu).abs(), bits)
}

/// Theorem 7.1: `TV(S + Ber(q), S + Ber(p)) = |q − p|·max_j P(S = j)` for `S ~ Bin(m, p)`
/// independent of the Bernoulli, enclosed in backend `S` (the mode of the binomial found from
/// a complete binomial window).
pub fn binomial_plus_bernoulli_tv<S: Scalar>(
    m: usize,
    p: &Rational,
    q: &Rational,
    ctx: &S::Ctx,
) -> Enclosure {
    let pmf = complete_binomial::<S>(m, p, ctx);
    let mode = pmf.values.iter().fold(S::zero(ctx), |best, v| best.max(v));
    let gap = S::from_rational(&Rational::from(q - p).abs(), ctx);
    gap.mul(&mode).enclosure()
}

/// `Bin(m, p)` on all of `0..=m`.
fn complete_binomial<S: Scalar>(m: usize, p: &Rational, ctx: &S::Ctx) -> WindowLaw<S> {
    let q = 1 - p.clone();
    binomial_window(
        m,
        &S::from_rational(p, ctx),
        &S::from_rational(&q, ctx),
        None,
        ctx,
    )
}

/// The law of `S + Ber(r)`, `S ~ Bin(m, p)`, on `0..=m+1` (for checking Theorem 7.1 against
/// [`tv_finite`]).
pub fn binomial_plus_bernoulli_law<S: Scalar>(
    m: usize,
    p: &Rational,
    r: &Rational,
    ctx: &S::Ctx,
) -> Vec<S> {
    let pmf = complete_binomial::<S>(m, p, ctx);
    let (r, rc) = (
        S::from_rational(r, ctx),
        S::from_rational(&(1 - r.clone()), ctx),
    );
    let mut out = vec![S::zero(ctx); m + 2];
    for (i, v) in pmf.values.iter().enumerate() {
        let j = pmf.start + i;
        out[j].add_mul_assign(&rc, v);
        out[j + 1].add_mul_assign(&r, v);
    }
    out
}

/// The certified δ of every mechanism within a TV ball of radius η around the given one
/// (`TV(W_b, W_b′) ≤ η` for both inputs), at one threshold: the transfer of Lemma 2.4 with
/// `TV(T_{n,k}, T′_{n,k}) ≤ n·η` (Lemmas 2.1–2.2, [`shuffled_tv_bound`]).
#[derive(Clone, Debug)]
pub struct TvBallRow {
    pub threshold: Threshold,
    /// `TV(Q, Q′) + e^ε TV(P, P′)` for `δ_{Q‖P}`, and the swapped budget for `δ_{P‖Q}`.
    pub budget_qp: Rational,
    pub budget_pq: Rational,
    pub qp: Enclosure,
    pub pq: Enclosure,
    pub two_sided: Enclosure,
}

impl TvBallRow {
    /// Useful when each budget is below the certified lower end of its curve at the centre:
    /// every δ in the ball is then certified positive, and below twice the centre's upper end.
    pub fn useful(&self, centre: &DeltaRow) -> bool {
        [(&self.budget_qp, &centre.qp), (&self.budget_pq, &centre.pq)]
            .iter()
            .all(|(b, d)| matches!(d.lo(), Endpoint::Finite(x) if *x > **b))
    }
}

/// TV budgets of the pair `(T_{n,k}, T_{n,k+1})` for a ball of radius η: `(TV(P, P′), TV(Q, Q′))`.
pub fn tv_ball_budgets(n: u64, k: u64, eta: &Rational) -> (Rational, Rational) {
    (
        shuffled_tv_bound(n - k, k, eta, eta),
        shuffled_tv_bound(n - k - 1, k + 1, eta, eta),
    )
}

/// [`TvBallRow`] for each row of a `delta` answer on the pair `(T_{n,k}, T_{n,k+1})`.
pub fn tv_ball(n: u64, k: u64, eta: &Rational, rows: &[DeltaRow]) -> Vec<TvBallRow> {
    let (tv_p, tv_q) = tv_ball_budgets(n, k, eta);
    rows.iter()
        .map(|r| {
            let c = r.threshold.exp_upper_bound();
            let (qp, budget_qp) = curve_transfer(&r.qp, &tv_q, &tv_p, &c);
            let (pq, budget_pq) = curve_transfer(&r.pq, &tv_p, &tv_q, &c);
            let two_sided = Enclosure::new(
                qp.lo().clone().max(pq.lo().clone()),
                qp.hi().clone().max(pq.hi().clone()),
            );
            TvBallRow {
                threshold: r.threshold.clone(),
                budget_qp,
                budget_pq,
                qp,
                pq,
                two_sided,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use inari::Interval;

    fn q(s: &str) -> Rational {
        crate::enclosure::parse_rational(s).unwrap()
    }

    #[test]
    fn theorem_7_1_matches_the_general_tv() {
        let ctx = ExactCtx::default();
        for (m, p, r) in [
            (1, "1/2", "1/3"),
            (7, "3/10", "1/2"),
            (20, "1/7", "9/10"),
            (12, "1/2", "1/2"),
        ] {
            let (p, r) = (q(p), q(r));
            let a = binomial_plus_bernoulli_law::<Rational>(m, &p, &r, &ctx);
            let b = binomial_plus_bernoulli_law::<Rational>(m, &p, &p, &ctx);
            let general = tv_finite(&a, &b, &ctx);
            let formula = binomial_plus_bernoulli_tv::<Rational>(m, &p, &r, &ctx);
            assert!(general.is_point() && formula.is_point());
            assert_eq!(general, formula, "m = {m}");
            // And in f64 intervals, both enclose the exact value.
            let fi = binomial_plus_bernoulli_tv::<Interval>(m, &p, &r, &());
            assert!(fi.contains(formula.lo().finite().unwrap()));
        }
    }

    #[test]
    fn poisson_bounds_hold_against_exact_tv() {
        // Bin(m, p) against Poi(mp), the Poisson pmf in MPFR on 0..=60 plus its tail mass.
        use crate::arith::Transcendental;
        use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
        let ctx = MpfrCtx { precision: 200 };
        for (m, p) in [(10u64, "1/20"), (40, "1/100"), (5, "1/3")] {
            let p = q(p);
            let lambda = Rational::from(&p * m);
            let bin = binomial_window(
                m as usize,
                &MpfrInterval::from_rational(&p, &ctx),
                &MpfrInterval::from_rational(&(1 - p.clone()), &ctx),
                None,
                &ctx,
            );
            let top = 60usize;
            let mut binomial = vec![MpfrInterval::zero(&ctx); top + 1];
            for (i, v) in bin.values.iter().enumerate() {
                binomial[bin.start + i] = v.clone();
            }
            let e = MpfrInterval::from_rational(&(-lambda.clone()), &ctx).exp();
            let l = MpfrInterval::from_rational(&lambda, &ctx);
            let mut poisson = Vec::new();
            let mut term = e;
            for j in 0..=top {
                poisson.push(term.clone());
                term = term
                    .mul(&l)
                    .div(&MpfrInterval::from_u64(j as u64 + 1, &ctx));
            }
            // TV ≥ Σ_{j ≤ top} (Bin − Poi)₊ and ≤ that plus the Poisson tail beyond `top`.
            let kept = tv_finite(&binomial, &poisson, &ctx);
            let tv_lo = kept.lo().finite().unwrap().clone();
            let ps = vec![p.clone(); m as usize];
            for bound in [
                le_cam_poisson(&ps),
                barbour_hall(&ps),
                per_trial_poisson(m, &p),
            ] {
                assert!(tv_lo <= bound, "{tv_lo} > {bound}");
            }
            assert!(barbour_hall(&ps) <= le_cam_poisson(&ps));
            // The closed form for m equal probabilities is the same bound.
            assert_eq!(barbour_hall_binomial(m, &p), barbour_hall(&ps));
            assert!(tv_lo <= barbour_hall_binomial(m, &p));
        }
        assert_eq!(barbour_hall_binomial(7, &Rational::new()), 0);
        // Poisson means: TV(Poi(1), Poi(3/2)) ≤ 1 − e^{−1/2} ≈ 0.3935.
        let b = poisson_mean_perturbation(&q("1"), &q("3/2"));
        assert!(b > q("0.3934") && b < q("0.3936"));
    }

    #[test]
    fn transfer_widens_by_the_budget_and_clamps() {
        let d = Enclosure::from_rationals(q("0.1"), q("0.2"));
        let (e, budget) = curve_transfer(&d, &q("0.01"), &q("0.02"), &q("2"));
        assert_eq!(budget, q("0.05"));
        assert_eq!(e, Enclosure::from_rationals(q("0.05"), q("0.25")));
        let (e, _) = curve_transfer(&d, &q("0.5"), &q("0.5"), &q("2"));
        assert_eq!(e, Enclosure::from_rationals(q("0"), q("1")));
        assert_eq!(shuffled_tv_bound(10, 5, &q("0.01"), &q("0.02")), q("0.2"));
        assert_eq!(shuffled_tv_bound(100, 0, &q("0.1"), &q("0")), q("1"));
        assert_eq!(le_cam_same_space(&q("0.1"), &q("0.3")), q("0.3"));
    }
}
