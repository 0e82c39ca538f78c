//! Divergences of a pair as f-divergences `D_f(Q‖P) = Σ_N P(N) f(L(N))` (Part I §2.2, §6).
//!
//! Each is evaluated with the *tangent-normalised* generator `f̃(l) = f(l) − f'(1)(l − 1) ≥ 0`,
//! which gives the same divergence whenever `Q ≪ P` (because `Σ_{P>0} P (L − 1) = 0`) and is
//! extended to states where one law vanishes by the perspective limits
//! `P f̃(0)` (Q = 0) and `Q · lim_{l→∞} f̃(l)/l` (P = 0); both are exact identities, so every
//! term is ≥ 0 and no cancellation between terms occurs.  The ratio `L = Q/P` is intersected
//! with `[min w, max w]` (Part I (6): L is a conditional expectation of `w(Y*)`), which keeps
//! terms bounded where f64 intervals underflow.
//!
//! With a truncated pair (omitted mass ω, full support) convexity of the perspective
//! `g(p, q) = p f̃(q/p)` bounds the omitted part: subadditivity gives
//! `D ≤ Σ_kept g + ω · sup_{l∈R} f̃(l)`, and the supporting-hyperplane inequality
//! `g(x + h) ≥ g(x) + ∇g(x)·h` gives `D ≥ Σ_kept g + ω · inf_{l,l'∈R} [f̃(l) + (l' − l) f̃'(l)]`,
//! with R the ratio range (both `Q_d/P_d` and the kept ratios lie in R).

use super::law::PairLaw;
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use rug::Rational;

/// The divergences this module computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Divergence {
    /// `KL(Q‖P) = Σ Q ln(Q/P)`, `f(l) = l ln l`.
    KlQp,
    /// `KL(P‖Q) = Σ P ln(P/Q)`, `f(l) = −ln l`.
    KlPq,
    /// `JSD(P‖Q) = ½ KL(P‖M) + ½ KL(Q‖M)`, `M = (P+Q)/2`, in nats.
    Jsd,
    /// `χ²(Q‖P) = Σ (Q − P)²/P`, `f(l) = (l − 1)²`.
    Chi2Qp,
    /// Squared Hellinger `H² = ½ Σ (√P − √Q)² = 1 − Σ √(PQ)`, `f(l) = (√l − 1)²/2`.
    Hellinger2,
    /// `Σ Q^α P^{1−α} − 1`, `f(l) = l^α − 1`; the Rényi divergence is `ln(1 + ·)/(α − 1)`.
    RenyiMoment(Rational),
}

/// A limit that may be infinite.
enum Limit<S> {
    Finite(S),
    Infinite,
}

/// A generator in one backend, with its constants made once per divergence rather than once
/// per state (in the f64 backend a rational constant is rounded through MPFR).
struct Generator<'a, S: Transcendental> {
    div: &'a Divergence,
    ctx: &'a S::Ctx,
    one: S,
    two: S,
    half: S,
    /// `α` as a backend value, and `α − 1`, for Rényi moments.
    alpha: Option<(S, Rational)>,
}

impl<'a, S: Transcendental> Generator<'a, S> {
    fn new(div: &'a Divergence, ctx: &'a S::Ctx) -> Self {
        Generator {
            div,
            ctx,
            one: S::one(ctx),
            two: S::from_u64(2, ctx),
            half: S::from_rational(&Rational::from((1, 2)), ctx),
            alpha: match div {
                Divergence::RenyiMoment(alpha) => {
                    Some((S::from_rational(alpha, ctx), Rational::from(alpha - 1u32)))
                }
                _ => None,
            },
        }
    }

    /// `f̃(l)` on an interval of ratios `l` (with `l > 0` in the interior of its uses).
    fn f(&self, l: &S) -> S {
        let (one, two, half) = (&self.one, &self.two, &self.half);
        let u = l.sub(one);
        match self.div {
            // l ln l − (l − 1)
            Divergence::KlQp => l.mul(&l.ln()).sub(&u),
            // −ln l + (l − 1)
            Divergence::KlPq => u.sub(&l.ln()),
            // ½ [l ln(2l/(1+l)) + ln(2/(1+l))]
            Divergence::Jsd => {
                let s = one.add(l);
                let a = l.mul(&two.mul(l).div(&s).ln());
                let b = two.div(&s).ln();
                half.mul(&a.add(&b))
            }
            Divergence::Chi2Qp => u.mul(&u),
            Divergence::Hellinger2 => {
                let r = l.sqrt().sub(one);
                half.mul(&r.mul(&r))
            }
            // l^α − 1 − α (l − 1)
            Divergence::RenyiMoment(alpha) => {
                let (a, _) = self.alpha.as_ref().expect("prepared for a Rényi moment");
                l.pow_rational(alpha, self.ctx).sub(one).sub(&a.mul(&u))
            }
        }
    }

    /// `f̃` over an interval `L`, as the intersection of the natural extension and the
    /// mean-value form `f̃(l0) + f̃'(L)(L − l0)` (valid since f̃ is differentiable on (0, ∞));
    /// the latter is far tighter for narrow L, where the natural extension suffers from the
    /// dependency problem.
    fn f_enclosure(&self, l: &S) -> S {
        let natural = self.f(l);
        // The mean-value form needs L inside (0, ∞): bounded and away from 0 (decided on
        // outward doubles; a lower end below the double range just keeps the natural form).
        let (lo, hi) = l.f64_bounds();
        if !(lo > 0.0 && hi.is_finite()) {
            return natural;
        }
        let l0 = l.midpoint();
        let mean_value = self.f(&l0).add(&self.f_prime(l).mul(&l.sub(&l0)));
        let lo = natural.max(&mean_value);
        // Intersection: the larger lower end and the smaller upper end.
        natural.clamp_to(&lo, Some(&mean_value))
    }

    /// `f̃'(l)`.
    fn f_prime(&self, l: &S) -> S {
        let (one, two, half) = (&self.one, &self.two, &self.half);
        match self.div {
            Divergence::KlQp => l.ln(),
            Divergence::KlPq => one.sub(&one.div(l)),
            Divergence::Jsd => half.mul(&two.mul(l).div(&one.add(l)).ln()),
            Divergence::Chi2Qp => two.mul(&l.sub(one)),
            Divergence::Hellinger2 => half.mul(&one.sub(&one.div(&l.sqrt()))),
            Divergence::RenyiMoment(_) => {
                let (a, a1) = self.alpha.as_ref().expect("prepared for a Rényi moment");
                a.mul(&l.pow_rational(a1, self.ctx)).sub(a)
            }
        }
    }
}

impl Divergence {
    /// `f̃(0)`: the term per unit of P where `Q = 0`.
    fn at_zero<S: Transcendental>(&self, ctx: &S::Ctx) -> Limit<S> {
        let half = Rational::from((1, 2));
        match self {
            Divergence::KlQp | Divergence::Chi2Qp => Limit::Finite(S::one(ctx)),
            Divergence::KlPq => Limit::Infinite,
            Divergence::Jsd => {
                Limit::Finite(S::from_rational(&half, ctx).mul(&S::from_u64(2, ctx).ln()))
            }
            Divergence::Hellinger2 => Limit::Finite(S::from_rational(&half, ctx)),
            Divergence::RenyiMoment(alpha) => {
                Limit::Finite(S::from_rational(&Rational::from(alpha - 1u32), ctx))
            }
        }
    }

    /// `lim_{l→∞} f̃(l)/l`: the term per unit of Q where `P = 0`.
    fn at_infinity<S: Transcendental>(&self, ctx: &S::Ctx) -> Limit<S> {
        let half = Rational::from((1, 2));
        match self {
            Divergence::KlQp | Divergence::Chi2Qp | Divergence::RenyiMoment(_) => Limit::Infinite,
            Divergence::KlPq => Limit::Finite(S::one(ctx)),
            Divergence::Jsd => {
                Limit::Finite(S::from_rational(&half, ctx).mul(&S::from_u64(2, ctx).ln()))
            }
            Divergence::Hellinger2 => Limit::Finite(S::from_rational(&half, ctx)),
        }
    }
}

fn rational_or_inf<S: Scalar>(x: &Option<Rational>, ctx: &S::Ctx) -> Option<S> {
    x.as_ref().map(|r| S::from_rational(r, ctx))
}

/// `D_f̃` of the pair, enclosed.  `+∞` (as the point ∞) when a term is certainly infinite.
pub fn f_divergence<S: Transcendental>(
    law: &PairLaw<S>,
    div: &Divergence,
    ctx: &S::Ctx,
) -> Enclosure {
    // Positive singular mass on a side where the generator's limit is infinite: D = +∞ (known
    // in closed form for a mechanism's pair, even where truncation dropped those states).
    if let Some([qp, pq]) = &law.omission.singular {
        let positive = |m: &Enclosure| matches!(m.lo(), Endpoint::Finite(x) if *x > 0);
        let infinite = |limit: Limit<S>| matches!(limit, Limit::Infinite);
        if (positive(qp) && infinite(div.at_infinity::<S>(ctx)))
            || (positive(pq) && infinite(div.at_zero::<S>(ctx)))
        {
            return Enclosure::pos_infinity();
        }
    }
    let ratio_lo = S::from_rational(&law.ratio_lo, ctx);
    let ratio_hi: Option<S> = rational_or_inf(&law.ratio_hi, ctx);
    let generator = Generator::new(div, ctx);
    let mut sum = S::zero(ctx);
    for (p, q) in law.p.iter().zip(&law.q) {
        let term = match (p.is_exact_zero(), q.is_exact_zero()) {
            (true, true) => continue,
            (true, false) => match div.at_infinity::<S>(ctx) {
                Limit::Finite(c) => q.mul(&c),
                Limit::Infinite => return Enclosure::pos_infinity(),
            },
            (false, true) => match div.at_zero::<S>(ctx) {
                Limit::Finite(c) => p.mul(&c),
                Limit::Infinite => return Enclosure::pos_infinity(),
            },
            (false, false) => {
                let l = q.div(p).clamp_to(&ratio_lo, ratio_hi.as_ref());
                p.mul(&generator.f_enclosure(&l)).pos_part()
            }
        };
        sum.add_assign(&term);
    }
    if law.omitted == 0 {
        return sum.enclosure().clamp_nonnegative();
    }
    if law.omission.disjoint {
        // Every omitted state adds a term ≥ 0: the kept sum is a lower bound.
        let upper = match omitted_terms_bound(law, div, ctx) {
            Some(tail) => sum.add(&tail).enclosure().hi().clone(),
            None => Endpoint::PosInf,
        };
        return Enclosure::new(sum.enclosure().lo().clone(), upper).clamp_nonnegative();
    }
    // A truncated pair: `P = p + P_d`, `Q = q + Q_d` with the omitted parts of mass at most ω
    // on any states (stored or not), `Q_d/P_d` in the ratio range R.
    let omega = S::from_rational(&law.omitted, ctx);
    let upper = match omitted_terms_bound(law, div, ctx) {
        Some(tail) => sum.add(&tail).enclosure().hi().clone(),
        None => Endpoint::PosInf,
    };
    let lower = tangent_lower_bound(law, &generator, &sum, &omega, ctx)
        .unwrap_or_else(|| supported_lower_bound(law, div, &generator, &omega, ctx));
    Enclosure::new(Endpoint::Finite(lower.clone()).min(upper.clone()), upper).clamp_nonnegative()
}

/// A lower bound on a truncated pair's `D_f̃` from the stored sum `Σ g(p, q)` of every state:
/// at each stored state the supporting hyperplane of the perspective `g` gives
/// `g(P, Q) ≥ g(p, q) + P_d [f̃(l) + (l_d − l) f̃'(l)]` with the stored ratio `l` and the omitted
/// parts' `l_d` both in R, so `D ≥ Σ g(p, q) + ω · min(0, inf_{l, l' ∈ R} f̃(l) + (l' − l) f̃'(l))`
/// (`None` when R is unbounded or `f̃'` is at its ends, e.g. `l = 0` for KL(Q‖P)).
fn tangent_lower_bound<S: Transcendental>(
    law: &PairLaw<S>,
    generator: &Generator<S>,
    sum: &S,
    omega: &S,
    ctx: &S::Ctx,
) -> Option<Rational> {
    let range =
        S::from_rational(&law.ratio_lo, ctx).hull(&S::from_rational(law.ratio_hi.as_ref()?, ctx));
    let spread = range.sub(&range);
    let tangent = generator
        .f(&range)
        .add(&spread.mul(&generator.f_prime(&range)));
    let Endpoint::Finite(m) = tangent.enclosure().lo().clone() else {
        return None;
    };
    let lower = sum.add(&omega.mul(&S::from_rational(&m.min(Rational::new()), ctx)));
    match lower.enclosure().lo() {
        Endpoint::Finite(x) => Some(x.clone()),
        _ => Some(Rational::new()),
    }
}

/// A lower bound on a truncated pair's `D_f̃` that holds with zero entries and an unbounded
/// ratio range (proofs-notes/divergences.md, "Truncated pairs with zero entries"): over the set
/// S of stored states where `p` and `q` are both certainly positive (so `P, Q > 0` there, and
/// S misses every state where one law vanishes),
/// `g(P, Q) ≥ g(p, q) + a·P_d + b·Q_d` with `a = f̃(l) − l f̃'(l)`, `b = f̃'(l)`, `l = q/p`;
/// every other state adds `g ≥ 0`, and the states where exactly one law vanishes add
/// `f̃(0)·P(Q = 0) + K∞·Q(P = 0)` in total, known in closed form for a mechanism's pair.  So
/// `D ≥ Σ_S g(p, q) + ω·(min(0, min_S a) + min(0, min_S b)) + f̃(0)·P(Q = 0) + K∞·Q(P = 0)`.
fn supported_lower_bound<S: Transcendental>(
    law: &PairLaw<S>,
    div: &Divergence,
    generator: &Generator<S>,
    omega: &S,
    ctx: &S::Ctx,
) -> Rational {
    let ratio_lo = S::from_rational(&law.ratio_lo, ctx);
    let ratio_hi: Option<S> = rational_or_inf(&law.ratio_hi, ctx);
    let zero = S::zero(ctx);
    let mut sum = S::zero(ctx);
    // min(0, min_S a) + min(0, min_S b), from the lower ends (outward doubles).
    let (mut min_a, mut min_b) = (0.0f64, 0.0f64);
    for (p, q) in law.p.iter().zip(&law.q) {
        if !(zero.certainly_below(p) && zero.certainly_below(q)) {
            continue;
        }
        let l = q.div(p).clamp_to(&ratio_lo, ratio_hi.as_ref());
        let slope = generator.f_prime(&l);
        let a = generator.f(&l).sub(&l.mul(&slope));
        sum.add_assign(&p.mul(&generator.f_enclosure(&l)).pos_part());
        min_a = min_a.min(a.f64_bounds().0);
        min_b = min_b.min(slope.f64_bounds().0);
    }
    let Some(slopes) = Rational::from_f64(min_a).zip(Rational::from_f64(min_b)) else {
        return Rational::new();
    };
    let slopes = S::from_rational(&Rational::from(&slopes.0 + &slopes.1), ctx);
    let mut lower = sum.add(&omega.mul(&slopes));
    if let Some([qp, pq]) = &law.omission.singular {
        let mass = |m: &Enclosure| match m.lo() {
            Endpoint::Finite(x) => S::from_rational(x, ctx),
            _ => S::zero(ctx),
        };
        if let Limit::Finite(f0) = div.at_zero::<S>(ctx) {
            lower.add_mul_assign(&f0, &mass(pq));
        }
        if let Limit::Finite(k_inf) = div.at_infinity::<S>(ctx) {
            lower.add_mul_assign(&k_inf, &mass(qp));
        }
    }
    match lower.enclosure().lo() {
        Endpoint::Finite(x) => x.clone(),
        _ => Rational::new(),
    }
}

/// With a disjoint omission, an upper bound on `Σ_omitted P f̃(L)` (`None`: no bound known).
///
/// * When the ratio range R is bounded: each term is at most `P_d sup_R f̃`, so `ω sup_R f̃`
///   (e.g. `Δ = 0`, where `R = {1}` and the bound is 0).
/// * When `f̃(0)` and `K∞ = lim f̃(l)/l` are finite (JSD, Hellinger, KL(P‖Q) away from 0):
///   `f̃` decreases on `[0, 1]` and `f̃(l)/l` increases on `[1, ∞)` (convexity, `f̃(1) = 0`),
///   so each term `g(P, Q) ≤ max(f̃(0), K∞)·(P + Q)` and the sum is at most
///   `2ω·max(f̃(0), K∞)`.
/// * When `R = [lo, ∞)` with `lo > 0` and `K∞` finite (KL(P‖Q) with zeros in W0 only):
///   `f̃(l) ≤ f̃(lo) + K∞ (l − lo)` on R (convexity: `f̃' ≤ K∞`), so `ω (f̃(lo) + K∞)`.
/// * When the ratio is a Poisson size-bias ratio `L = E_P[C/λ | x]` ([`Omission`]):
///   `f̃(l) ≤ c·max(1, l)^m` with `c = max(f̃(0), 1)` for KL(Q‖P), χ² (`m = 2`) and the Rényi
///   moment of order α (`m = max(2, ⌈α⌉)`); Jensen (`max(1, ·)^m` is convex) and
///   Cauchy–Schwarz give `Σ_omitted P max(1, L)^m ≤ √(E[max(1, C/λ)^{2m}] · ω)`, and
///   `E[max(1, C/λ)^{2m}] ≤ 1 + Σ_i S(2m, i) λ^{i−2m}` (Touchard's moments of the Poisson law).
///
/// [`Omission`]: super::law::Omission
fn omitted_terms_bound<S: Transcendental>(
    law: &PairLaw<S>,
    div: &Divergence,
    ctx: &S::Ctx,
) -> Option<S> {
    let omega = S::from_rational(&law.omitted, ctx);
    // A bounded ratio range R: each omitted term is at most P_d · sup_R f̃.
    if let Some(hi) = &law.ratio_hi {
        let range = S::from_rational(&law.ratio_lo, ctx).hull(&S::from_rational(hi, ctx));
        let sup = Generator::new(div, ctx).f(&range).enclosure().hi().clone();
        if let Endpoint::Finite(m) = sup {
            return Some(omega.mul(&S::from_rational(&m.max(Rational::new()), ctx)));
        }
    }
    if let (Limit::Finite(f0), Limit::Finite(k_inf)) =
        (div.at_zero::<S>(ctx), div.at_infinity::<S>(ctx))
    {
        return Some(S::from_u64(2, ctx).mul(&omega).mul(&f0.max(&k_inf)));
    }
    // R = [lo, ∞) with lo > 0 and K∞ finite (KL(P‖Q) when only W0 has zeros): f̃ is convex
    // with asymptotic slope K∞ ≥ f̃', so f̃(l) ≤ f̃(lo) + K∞ (l − lo) on R, and each omitted
    // term `P_d f̃(Q_d/P_d) ≤ f̃(lo) P_d + K∞ Q_d`: at most `ω (f̃(lo) + K∞)` in all.
    if law.ratio_hi.is_none() && law.ratio_lo > 0 {
        if let Limit::Finite(k_inf) = div.at_infinity::<S>(ctx) {
            let lo = S::from_rational(&law.ratio_lo, ctx);
            let at_lo = Generator::new(div, ctx).f(&lo).pos_part();
            return Some(omega.mul(&at_lo.add(&k_inf.pos_part())));
        }
    }
    let lambda = law.omission.size_bias_qp.as_ref()?;
    let Limit::Finite(f0) = div.at_zero::<S>(ctx) else {
        return None;
    };
    let m = match div {
        Divergence::KlQp | Divergence::Chi2Qp => 2,
        Divergence::RenyiMoment(alpha) => {
            let ceil = alpha.clone().ceil().numer().to_u32()?;
            ceil.max(2)
        }
        _ => return None,
    };
    let moment = Rational::from(1) + poisson_ratio_moment(lambda, 2 * m)?;
    let root = S::from_rational(&(moment * &law.omitted), ctx).sqrt();
    Some(f0.max(&S::one(ctx)).mul(&root))
}

/// `E[(C/λ)^j]` for `C ~ Poi(λ)`, exactly: `Σ_i S(j, i) λ^{i−j}` with Stirling numbers of the
/// second kind (`None` for λ = 0 or an order too large to be useful).
fn poisson_ratio_moment(lambda: &Rational, j: u32) -> Option<Rational> {
    if *lambda <= 0 || j > 512 {
        return None;
    }
    // Stirling numbers S(j, i) by the recurrence S(r+1, i) = i S(r, i) + S(r, i−1).
    let mut row = vec![rug::Integer::from(1)];
    for r in 0..j as usize {
        let mut next = vec![rug::Integer::new(); r + 2];
        for (i, s) in row.iter().enumerate() {
            next[i] += s * rug::Integer::from(i);
            next[i + 1] += s;
        }
        row = next;
    }
    let mut sum = Rational::new();
    let mut power = Rational::from(1); // λ^i
    for s in &row {
        sum += Rational::from(s) * &power;
        power *= lambda;
    }
    // power = λ^{j+1} now.
    Some(sum * lambda / power)
}

/// The Rényi divergence `D_α(Q‖P) = ln(Σ Q^α P^{1−α}) / (α − 1)` for a rational `α > 1`.
pub fn renyi<S: Transcendental>(law: &PairLaw<S>, alpha: &Rational, ctx: &S::Ctx) -> Enclosure {
    let moment = f_divergence(law, &Divergence::RenyiMoment(alpha.clone()), ctx);
    let (Endpoint::Finite(lo), hi) = (moment.lo(), moment.hi()) else {
        return Enclosure::pos_infinity();
    };
    let scale = S::from_rational(&Rational::from(alpha - 1u32), ctx);
    let transform = |x: &Rational| {
        S::one(ctx)
            .add(&S::from_rational(x, ctx))
            .ln()
            .div(&scale)
            .enclosure()
    };
    let lower = transform(lo).lo().clone();
    let upper = match hi {
        Endpoint::Finite(h) => transform(h).hi().clone(),
        _ => Endpoint::PosInf,
    };
    Enclosure::new(lower, upper).clamp_nonnegative()
}

/// The divergences of a pair reported together.
#[derive(Clone, Debug)]
pub struct Divergences {
    pub tv: Enclosure,
    pub kl_qp: Enclosure,
    pub kl_pq: Enclosure,
    pub jsd: Enclosure,
    pub chi2_qp: Enclosure,
    pub hellinger2: Enclosure,
    /// `(α, D_α(Q‖P))` for each requested order.
    pub renyi_qp: Vec<(Rational, Enclosure)>,
    /// `(α, D_α(P‖Q))` for each requested order.
    pub renyi_pq: Vec<(Rational, Enclosure)>,
}

/// All divergences of the pair; the Rényi divergence at each order in `renyi_orders` (> 1).
pub fn divergences<S: Scalar>(
    law: &PairLaw<S>,
    renyi_orders: &[Rational],
    ctx: &S::Ctx,
) -> Divergences {
    let tv = super::curve::total_variation(law, ctx);
    let el = law.to_elementary(ctx);
    let ectx = S::elementary_ctx(ctx);
    let reversed = el.reversed();
    Divergences {
        tv,
        kl_qp: f_divergence(&el, &Divergence::KlQp, &ectx),
        // KL(P‖Q) is KL(Q‖P) of the reversed pair, term by term; with a disjoint omission the
        // reversed pair carries the reverse ratio's moment bound.
        kl_pq: if el.omission.disjoint {
            f_divergence(&reversed, &Divergence::KlQp, &ectx)
        } else {
            f_divergence(&el, &Divergence::KlPq, &ectx)
        },
        jsd: f_divergence(&el, &Divergence::Jsd, &ectx),
        chi2_qp: f_divergence(&el, &Divergence::Chi2Qp, &ectx),
        hellinger2: f_divergence(&el, &Divergence::Hellinger2, &ectx),
        renyi_qp: renyi_orders
            .iter()
            .map(|a| (a.clone(), renyi(&el, a, &ectx)))
            .collect(),
        renyi_pq: renyi_orders
            .iter()
            .map(|a| (a.clone(), renyi(&reversed, a, &ectx)))
            .collect(),
    }
}
