//! The blanket divergence (Balle et al. 2019; Takagi–Liew Lemma 2.1 / Theorem 2.2), certified.
//!
//! For an ordered pair `x1 → x1′`, with `u_y = R_{x1}(y)/R̲(y)` and `v_y = R_{x1′}(y)/R̲(y)`,
//!
//! `D(t) = (1/n) Σ_N Mult(n; N; (R̲(y))_y, 1 − γ) · (Σ_y N_y (u_y − t v_y))₊`.
//!
//! Outputs with equal `(u_y, v_y)` are merged into classes (their counts only enter through
//! the class sum, which is multinomial with the summed probabilities).  With
//! `A(N) = Σ_c N_c u_c` and `B(N) = Σ_c N_c v_c`, `D(t) = (1/n) E[(A − tB)₊]` is the privacy
//! curve `δ_{Q′‖P′}(t)` of the probability laws `Q′ = Mult·A/n`, `P′ = Mult·B/n`, and the
//! reverse curve is the blanket divergence of `x1′ → x1` (proofs-notes/blanket-bounds.md).
//!
//! One class `c*` is summed in closed form.  Given the counts of the other classes, the `m`
//! remaining users split between `c*` and the outside of the blanket as `J ~ Bin(m, q)`,
//! `q = R̲(c*)/(R̲(c*) + 1 − γ)`, and `A − tB = α + βJ` is linear in `J`.  Then
//! `E[(α + βJ)₊]` is a tail of the binomial: with `β > 0` and `j₀` the first `J` where the term
//! is certainly positive, `Σ_{J ≥ j₀} pmf(J)(α + βJ) = (α + β(j₀ − 1))·S₀(j₀) + β·S₁(j₀)`, where
//! `S₀(j) = Σ_{J ≥ j} pmf(J)` and `S₁(j) = Σ_{J ≥ j} S₀(J) = Σ_{J ≥ j} pmf(J)(J − j + 1)`; `β < 0`
//! is the mirror image with prefix sums, and the few `J` whose sign the enclosures leave open
//! are summed term by term with the positive part.  Every term is non-negative, so the
//! enumeration drops one dimension and nothing else changes.
//!
//! Truncation: the outer multinomial and each inner binomial are certified windows; a state
//! outside them contributes `Mult(N)(A − tB)₊/n ≤ Mult(N)·max u` (as `A ≤ n max u`), so the
//! kept sum `K` gives `D ∈ [K, K + ω max u]` (`max v` for the reverse), ω the omitted mass.
//!
//! The curve is non-increasing and convex in `t`, vanishes exactly for `t ≥ max u/v`, and has no
//! singular mass (`B = 0` only where every user is outside the blanket, and there `A = 0`).

use super::index::blanket;
use crate::arith::{ExpValue, Scalar, power};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::binary::{binomial_window, upper_bound};
use crate::exact::curve::{Direction, EpsilonCertificate, certified_epsilon};
use crate::exact::pair::PairOptions;
use crate::exact::window::multinomial;
use crate::mechanism::randomizer::Randomizer;
use crate::query::Threshold;
use rayon::prelude::*;
use rug::Rational;

/// One class of outputs: `(u, v)` and the class's blanket probability `Σ R̲(y)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub u: Rational,
    pub v: Rational,
    pub mass: Rational,
}

/// A rational randomizer's rows and blanket, computed once for all its pairs.
#[derive(Clone, Debug)]
pub struct Exact {
    pub rows: Vec<Vec<Rational>>,
    pub blanket: super::index::Blanket<Rational>,
}

impl Exact {
    pub fn of(r: &Randomizer) -> Result<Exact> {
        let ctx = crate::arith::exact::ExactCtx::default();
        let rows = r.values::<Rational>(&ctx)?;
        let blanket = blanket(r, &rows, &ctx)?;
        Ok(Exact { rows, blanket })
    }
}

impl Exact {
    /// The classes of `x1 → x1′` against the blanket `R̲` (mass γ): the upper bound's sum.
    pub fn blanket_classes(&self, x1: usize, x1p: usize) -> (Vec<Class>, Rational) {
        let b = &self.blanket;
        (classes(&self.rows, &b.floor, x1, x1p), b.gamma.clone())
    }

    /// The classes of `x1 → x1′` against the row `R_{x2}` (mass 1): the sum is then exactly the
    /// privacy curve of the datasets `(x1, x2, …, x2) ≃ (x1′, x2, …, x2)` (Takagi–Liew §2;
    /// proofs-notes/blanket-bounds.md).  `R_{x2}(y) > 0` wherever a row is, since the blanket
    /// was accepted.
    pub fn reference_classes(&self, x1: usize, x1p: usize, x2: usize) -> (Vec<Class>, Rational) {
        (
            classes(&self.rows, &self.rows[x2], x1, x1p),
            Rational::from(1),
        )
    }
}

/// The classes of the ordered pair `x1 → x1′` against the reference measure `floor`, in a
/// canonical order: outputs with equal `(u, v) = (R_{x1}, R_{x1′})/floor` merged, their
/// reference masses summed.  Two pairs with the same classes have the same sum.
fn classes(rows: &[Vec<Rational>], floor: &[Rational], x1: usize, x1p: usize) -> Vec<Class> {
    let mut out: Vec<Class> = Vec::new();
    for (y, f) in floor.iter().enumerate() {
        if *f == 0 {
            continue;
        }
        let u = Rational::from(&rows[x1][y] / f);
        let v = Rational::from(&rows[x1p][y] / f);
        match out.iter_mut().find(|c| c.u == u && c.v == v) {
            Some(c) => c.mass += f,
            None => out.push(Class {
                u,
                v,
                mass: f.clone(),
            }),
        }
    }
    out.sort_by(|a, b| (&a.u, &a.v).cmp(&(&b.u, &b.v)));
    out
}

/// Width of a certified window of `Bin(n, p)` cut `z` standard deviations out (an estimate).
fn window_width(p: f64, n: usize, z: f64) -> f64 {
    (2.0 * z * (n as f64 * p * (1.0 - p)).sqrt() + 3.0).min(n as f64 + 1.0)
}

/// Estimated states of `Mult(n, w)` on windows of the engine's depth: every category but the
/// largest varies.
fn estimated_states(w: &[f64], n: usize, z: f64) -> f64 {
    let largest = w
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    w.iter()
        .enumerate()
        .filter(|(i, _)| *i != largest)
        .map(|(_, p)| window_width(*p, n, z))
        .product()
}

/// The splits `(c*, partner)` of `count` categories: one category is all users (J = m);
/// otherwise every pair of distinct categories.
fn all_splits(count: usize) -> Vec<(usize, usize)> {
    if count == 1 {
        return vec![(0, 0)];
    }
    (0..count)
        .flat_map(|i| (i + 1..count).map(move |j| (i, j)))
        .collect()
}

/// Estimated values a sum stores with `split`, for categories of weights `w` and `m` users on
/// windows `z` standard deviations wide: the outer multinomial's states (never more than its
/// whole simplex) and the inner binomial's prefix and suffix sums.
fn stored_values(w: &[f64], split: (usize, usize), m: usize, z: f64) -> f64 {
    let (i, j) = split;
    let rest = if i == j { w[i] } else { w[i] + w[j] };
    let outer: Vec<f64> = std::iter::once(rest)
        .chain((0..w.len()).filter(|c| *c != i && *c != j).map(|c| w[c]))
        .collect();
    let q = w[i] / rest;
    let simplex = crate::exact::histogram::histogram_count(m as u64, outer.len())
        .map_or(f64::INFINITY, |c| c as f64);
    3.0 * estimated_states(&outer, m, z).min(simplex)
        + 5.0 * window_width(outer[0], m, z) * window_width(q, m, z)
}

/// The split that stores the fewest values, and how many.
fn cheapest_split(w: &[f64], m: usize, z: f64) -> ((usize, usize), f64) {
    all_splits(w.len())
        .into_iter()
        .map(|split| (split, stored_values(w, split, m, z)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a randomizer has at least one output")
}

/// Seconds per estimated stored value of a blanket sum with f64 intervals (release builds on 2
/// cores: the building alone takes 0.8–1.7·10⁻⁷ s, whole `bounds` runs with their evaluations
/// and refinements about 3.5·10⁻⁷ s); other backends scale with their value size.
const SECONDS_PER_BLANKET_VALUE: f64 = 4e-7;

/// How many times an f64-interval operation an MPFR one costs at least (measured on `bounds`
/// at 128 and 256 bits: 12–16×; beyond, the value size sets it).
const MPFR_OVER_INTERVAL: f64 = 12.0;

/// The estimated time of a sum storing `stored` values in backend `S`.
fn seconds_for<S: Scalar>(stored: f64, m: usize, ctx: &S::Ctx) -> f64 {
    let mut scale = (S::estimated_bytes(m, ctx) as f64 / 16.0).max(1.0);
    if S::BACKEND == "mpfr" {
        scale = scale.max(MPFR_OVER_INTERVAL);
    }
    stored * SECONDS_PER_BLANKET_VALUE * scale
}

/// The estimated time of [`BlanketSum::build`] for these classes in backend `S`, before any of
/// it is built (a time guard's estimate).
pub fn estimated_seconds<S: Scalar>(
    classes: &[Class],
    gamma: &Rational,
    n: u64,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> f64 {
    let m = n as usize;
    let mut w: Vec<f64> = classes.iter().map(|c| c.mass.to_f64()).collect();
    let outside = Rational::from(1 - gamma);
    if outside > 0 {
        w.push(outside.to_f64());
    }
    let tau = if options.truncate && !S::EXACT {
        options.truncation_bits.or_else(|| S::truncation_bits(ctx))
    } else {
        None
    };
    let z = tau.map_or(f64::INFINITY, |b| {
        (2.0 * f64::from(b) * std::f64::consts::LN_2).sqrt()
    });
    seconds_for::<S>(cheapest_split(&w, m, z).1, m, ctx)
}

/// One state of the outer enumeration: its multinomial weight and the partial sums
/// `a = Σ_{c ≠ c*} N_c u_c`, `b = Σ_{c ≠ c*} N_c v_c`.
#[derive(Clone, Debug)]
struct OuterState<S> {
    weight: S,
    a: S,
    b: S,
}

/// The outer states that leave `m` users to the inner class and the outside, and the inner
/// law `J ~ Bin(m, q)` on its window, with its prefix and suffix sums.
#[derive(Clone, Debug)]
struct RestGroup<S> {
    states: Vec<OuterState<S>>,
    /// The window's first `J`.
    start: usize,
    pmf: Vec<S>,
    /// `S₀(j) = Σ_{J ≥ j} pmf(J)` and `S₁(j) = Σ_{J ≥ j} S₀(J)`, within the window.
    suffix0: Vec<S>,
    suffix1: Vec<S>,
    /// `P₀(j) = Σ_{J ≤ j} pmf(J)` and `P₁(j) = Σ_{J ≤ j} P₀(J)`.
    prefix0: Vec<S>,
    prefix1: Vec<S>,
}

impl<S: Scalar> RestGroup<S> {
    fn new(states: Vec<OuterState<S>>, start: usize, pmf: Vec<S>) -> Self {
        let running = |values: &mut dyn Iterator<Item = &S>| -> Vec<S> {
            let mut acc: Option<S> = None;
            values
                .map(|v| {
                    let next = acc.as_ref().map_or_else(|| v.clone(), |a| a.add(v));
                    acc = Some(next.clone());
                    next
                })
                .collect()
        };
        let mut suffix0 = running(&mut pmf.iter().rev());
        suffix0.reverse();
        let mut suffix1 = running(&mut suffix0.iter().rev());
        suffix1.reverse();
        let prefix0 = running(&mut pmf.iter());
        let prefix1 = running(&mut prefix0.iter());
        RestGroup {
            states,
            start,
            pmf,
            suffix0,
            suffix1,
            prefix0,
            prefix1,
        }
    }

    /// `Σ_{i ∈ range} pmf(start + i) (α + β(start + i))₊`.
    fn termwise(&self, alpha: &S, beta: &S, range: std::ops::Range<usize>, ctx: &S::Ctx) -> S {
        let mut sum = S::zero(ctx);
        for i in range {
            let j = S::from_u64((self.start + i) as u64, ctx);
            sum.add_assign(&self.pmf[i].mul(&alpha.add(&beta.mul(&j)).pos_part()));
        }
        sum
    }

    /// `(Σ pmf(J), Σ pmf(J)·J)` over the `J` with `α + βJ > 0`, in doubles from the stored
    /// values' midpoints (steering only).
    fn approx_positive_moments(&self, alpha: f64, beta: f64) -> (f64, f64) {
        let len = self.pmf.len();
        let start = self.start as f64;
        let at = |v: &[S], i: usize| v[i].approx_f64();
        if beta == 0.0 {
            return if alpha > 0.0 {
                let s0 = at(&self.suffix0, 0);
                (s0, (start - 1.0) * s0 + at(&self.suffix1, 0))
            } else {
                (0.0, 0.0)
            };
        }
        let root = -alpha / beta;
        if !root.is_finite() {
            return (0.0, 0.0);
        }
        if beta > 0.0 {
            // J ≥ j₀ = ⌊root⌋ + 1: Σ pmf·J = (j₀ − 1)·S₀(j₀) + S₁(j₀).
            let j0 = (root.floor() + 1.0).max(start);
            let i = j0 - start;
            if i >= len as f64 {
                return (0.0, 0.0);
            }
            let (s0, s1) = (at(&self.suffix0, i as usize), at(&self.suffix1, i as usize));
            (s0, (j0 - 1.0) * s0 + s1)
        } else {
            // J ≤ j₁ = ⌈root⌉ − 1: Σ pmf·J = (j₁ + 1)·P₀(j₁) − P₁(j₁).
            let j1 = (root.ceil() - 1.0).min(start + len as f64 - 1.0);
            if j1 < start {
                return (0.0, 0.0);
            }
            let i = (j1 - start) as usize;
            let (p0, p1) = (at(&self.prefix0, i), at(&self.prefix1, i));
            (p0, (j1 + 1.0) * p0 - p1)
        }
    }

    /// `E[(α + βJ)₊]` over the kept window (see the module docs).
    fn positive_part_mean(&self, alpha: &S, beta: &S, ctx: &S::Ctx) -> S {
        let len = self.pmf.len();
        if beta.is_exact_zero() {
            return alpha.pos_part().mul(&self.suffix0[0]);
        }
        let (beta_lo, beta_hi) = beta.f64_bounds();
        // Every root `−α/β` of the enclosures lies in [root_lo, root_hi].
        let (root_lo, root_hi) = S::zero(ctx).sub(alpha).div(beta).f64_bounds();
        if !(root_lo.is_finite() && root_hi.is_finite()) || !(beta_lo > 0.0 || beta_hi < 0.0) {
            return self.termwise(alpha, beta, 0..len, ctx);
        }
        // The window index of `J` (a whole number), clamped to [0, len].
        let index = |j: f64| (j - self.start as f64).clamp(0.0, len as f64) as usize;
        if beta_lo > 0.0 {
            // Terms vanish for J ≤ root_lo and are positive for J > root_hi.
            let ambiguous = index(root_lo.floor() + 1.0);
            let certain = index(root_hi.floor() + 1.0).max(ambiguous);
            let mut sum = self.termwise(alpha, beta, ambiguous..certain, ctx);
            if certain < len {
                // (α + β(j₀ − 1))·S₀(j₀) + β·S₁(j₀), a sum of positive terms.
                let j0 = S::from_u64((self.start + certain) as u64, ctx);
                let head = alpha.add(&beta.mul(&j0)).sub(beta);
                let tail = head
                    .mul(&self.suffix0[certain])
                    .add(&beta.mul(&self.suffix1[certain]));
                sum.add_assign(&tail.pos_part());
            }
            sum
        } else {
            // Terms are positive for J < root_lo and vanish for J ≥ root_hi: the certain ones
            // are the indices below `certain`, the ambiguous ones below `ambiguous`.
            let certain = index(root_lo.ceil());
            let ambiguous = index(root_hi.ceil()).max(certain);
            let mut sum = self.termwise(alpha, beta, certain..ambiguous, ctx);
            if certain > 0 {
                // With j₁ the last certain J: (α + β(j₁ + 1))·P₀(j₁) − β·P₁(j₁).
                let last = certain - 1;
                let j1 = S::from_u64((self.start + certain) as u64, ctx);
                let head = alpha.add(&beta.mul(&j1));
                let tail = head
                    .mul(&self.prefix0[last])
                    .sub(&beta.mul(&self.prefix1[last]));
                sum.add_assign(&tail.pos_part());
            }
            sum
        }
    }
}

/// An exponential tilt of one direction's sum.  The windows follow the multinomial
/// `Q(N) = Mult(N) e^{λX(N)}/M^n` with `X = A − t0·B` (Qp; `B − t0·A` for Pq) and
/// `M = Σ_c p_c e^{λ x_c}`, instead of `Mult`: a multinomial with masses `p̃_c = p_c e^{λ x_c}/M`,
/// centred where `(X)₊` carries its mass when λ minimises M.  The kept values are the true ones
/// (tilted values times powers of `ρ_c = p_c/p̃_c`).  Since `(x)₊ ≤ e^{λx}/(λe)` and `X` only
/// decreases as t grows, the states the windows leave out add at most `M^n ω/(λ e n)` to `D(t)`
/// for every `t ≥ t0`, ω the tilted law's omitted mass: truncation relative to the value, however
/// small (issue 11, Deliver 7; proofs-notes/blanket-bounds.md).
/// The largest `λ·|x_c|` a tilt is used with (e^{±2^20} is about 2^{±1.5·10⁶}).
const MAX_TILT_EXPONENT: f64 = 1_048_576.0;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tilt {
    pub dir: Direction,
    pub t0: Rational,
    pub lambda: Rational,
}

impl Tilt {
    /// The tilt of `dir` at (a double just below) `t0` with λ minimising M (found in doubles:
    /// any λ > 0 is valid, the choice only places the windows).  `None` when `E[X] ≥ 0` (t0 ≤ 1: D is not small) or
    /// no category has `x_c > 0` (D = 0 for t ≥ t0).
    pub fn for_threshold(
        classes: &[Class],
        gamma: &Rational,
        dir: Direction,
        t0: &Rational,
    ) -> Option<Tilt> {
        let mut terms: Vec<(f64, f64)> = classes
            .iter()
            .map(|c| (c.mass.to_f64(), exponent(dir, t0, c).to_f64()))
            .collect();
        terms.push((Rational::from(1 - gamma).to_f64(), 0.0));
        let slope = |l: f64| {
            terms
                .iter()
                .map(|(p, x)| p * x * (l * x).exp())
                .sum::<f64>()
        };
        let top = terms.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
        if top.is_nan() || top <= 0.0 || slope(0.0) >= 0.0 {
            return None;
        }
        // M′(λ) increases from M′(0) < 0; bracket its root and bisect.
        let mut hi = 1.0 / top;
        while slope(hi) < 0.0 && hi < 1e12 {
            hi *= 2.0;
        }
        if slope(hi) < 0.0 {
            // The minimiser lies beyond 10¹²/top: the largest x_c is tiny beside the others (a
            // threshold at the top of the ratios, as at ε = ε0), and so is D; no tilt.
            return None;
        }
        let mut lo = 0.0;
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if slope(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let lambda = Rational::from_f64(0.5 * (lo + hi)).filter(|l| *l > 0)?;
        // e^{λ x_c} must stay far inside MPFR's exponent range (2^±(2^30)), or a tilted mass
        // underflows to an enclosure of zero and no window can follow it.
        let spread = terms.iter().map(|t| t.1.abs()).fold(0.0, f64::max);
        if 0.5 * (lo + hi) * spread > MAX_TILT_EXPONENT {
            return None;
        }
        // t0 rounded down to a double: exact in every backend, so a threshold at t0 is ≥ it.
        let t0 = Rational::from_f64(crate::arith::interval::f64_bounds(t0).0)?;
        Some(Tilt { dir, t0, lambda })
    }

    /// `p̃_c`, `ρ_c` and `M^n/(λ e)` in backend `S` (an interval backend: `e^{λ x_c}` must be
    /// enclosed).
    fn apply<S: Scalar>(&self, categories: &[Class], n: u64, ctx: &S::Ctx) -> Result<Tilting<S>> {
        let mut exps = Vec::with_capacity(categories.len());
        let mut big_m = S::zero(ctx);
        for c in categories {
            let x = exponent(self.dir, &self.t0, c);
            let ExpValue::Enclosed(e) = S::exp_rational(&(x * &self.lambda), ctx) else {
                return Err(Error::Internal(
                    "a tilted blanket sum needs an interval backend".into(),
                ));
            };
            big_m.add_assign(&S::from_rational(&c.mass, ctx).mul(&e));
            exps.push(e);
        }
        let tilted = categories
            .iter()
            .zip(&exps)
            .map(|(c, e)| S::from_rational(&c.mass, ctx).mul(e).div(&big_m))
            .collect();
        let ratio = exps.iter().map(|e| big_m.div(e)).collect();
        // 1/e ≤ 1000/2718.
        let lambda_e = S::from_rational(&(self.lambda.clone() * Rational::from((2718, 1000))), ctx);
        Ok(Tilting {
            tilted,
            ratio,
            scale: power(&big_m, n, ctx).div(&lambda_e),
        })
    }
}

/// `x_c = u_c − t0 v_c` (Qp) or `v_c − t0 u_c` (Pq): a category's term in `X`.
fn exponent(dir: Direction, t0: &Rational, c: &Class) -> Rational {
    match dir {
        Direction::Qp => &c.u - Rational::from(t0 * &c.v),
        Direction::Pq => &c.v - Rational::from(t0 * &c.u),
    }
}

/// A tilt in backend `S`: the tilted masses, the ratios back, and `M^n/(λ e)`.
struct Tilting<S> {
    tilted: Vec<S>,
    ratio: Vec<S>,
    scale: S,
}

/// `r^k` for `k` in a range, by one power and then products.
struct PowerTable<S> {
    start: u64,
    values: Vec<S>,
}

impl<S: Scalar> PowerTable<S> {
    fn new(r: &S, lo: u64, hi: u64, ctx: &S::Ctx) -> Self {
        let mut values = Vec::with_capacity((hi.saturating_sub(lo) + 1) as usize);
        let mut x = power(r, lo, ctx);
        for _ in lo..=hi {
            values.push(x.clone());
            x = x.mul(r);
        }
        PowerTable { start: lo, values }
    }

    fn at(&self, k: u64) -> &S {
        &self.values[(k - self.start) as usize]
    }
}

/// The blanket sum of one ordered pair's classes in backend `S`, prepared for evaluation at
/// many thresholds: `at_threshold(Qp, t)` is `D(x1 → x1′)` and `at_threshold(Pq, t)` is
/// `D(x1′ → x1)`.
#[derive(Clone, Debug)]
pub struct BlanketSum<S> {
    groups: Vec<RestGroup<S>>,
    /// What moving one user of the rest from the partner to `c*` adds to `(A, B)`.
    inner: (S, S),
    inv_n: S,
    /// A certified bound on the multinomial mass the windows leave out.
    pub omitted: Rational,
    /// What the left-out states can add: `ω · max u` (Qp) and `ω · max v` (Pq); with a tilt,
    /// `M^n ω/(λ e n)` for its direction only (`None`: unbounded).
    slack: [Option<S>; 2],
    /// With a tilt: its direction and the least `t` its slack holds for.
    tilt: Option<(Direction, Rational)>,
    /// `max u/v` (Qp is 0 from there on) and `max v/u` (Pq).
    vanishes_beyond: [Rational; 2],
    /// Outer states stored.
    pub states: usize,
    /// About how many bytes the stored values take (what the memory guard counts).
    pub bytes: f64,
}

fn side(dir: Direction) -> usize {
    match dir {
        Direction::Qp => 0,
        Direction::Pq => 1,
    }
}

impl<S: Scalar> BlanketSum<S> {
    /// The sum of `x1 → x1′` (and its reverse) for n users.  Refused with `Error::TooLarge` when
    /// the windows would exceed `options.memory_limit`.
    pub fn build(
        classes: &[Class],
        gamma: &Rational,
        n: u64,
        options: &PairOptions,
        ctx: &S::Ctx,
    ) -> Result<Self> {
        Self::build_with_split(classes, gamma, n, options, None, None, ctx)
    }

    /// The sum of one direction with its windows placed by an exponential tilt (see [`Tilt`]):
    /// its enclosures are relative to the value, however small, for every `t ≥ tilt.t0`.
    pub fn build_tilted(
        classes: &[Class],
        gamma: &Rational,
        n: u64,
        options: &PairOptions,
        tilt: &Tilt,
        ctx: &S::Ctx,
    ) -> Result<Self> {
        Self::build_with_split(classes, gamma, n, options, None, Some(tilt), ctx)
    }

    /// [`Self::build`] with the split chosen: the categories `(c*, partner)` whose users `J`
    /// and `m − J` are summed in closed form (`None`: the split that stores the fewest values).
    fn build_with_split(
        classes: &[Class],
        gamma: &Rational,
        n: u64,
        options: &PairOptions,
        split: Option<(usize, usize)>,
        tilt: Option<&Tilt>,
        ctx: &S::Ctx,
    ) -> Result<Self> {
        let m = usize::try_from(n)
            .ok()
            .filter(|m| *m < u32::MAX as usize)
            .ok_or_else(|| Error::argument("--n", "too large for the blanket sum"))?;
        // The categories: the classes, then the outside of the blanket (u = v = 0) if γ < 1.
        let outside = Rational::from(1 - gamma);
        let mut categories = classes.to_vec();
        if outside > 0 {
            categories.push(Class {
                u: Rational::new(),
                v: Rational::new(),
                mass: outside,
            });
        }
        let tau = if options.truncate && !S::EXACT {
            options.truncation_bits.or_else(|| S::truncation_bits(ctx))
        } else {
            None
        };
        let z = tau.map_or(f64::INFINITY, |b| {
            (2.0 * f64::from(b) * std::f64::consts::LN_2).sqrt()
        });
        let coefficient = |q: &Rational| S::from_rational(q, ctx);
        // The law the windows follow: the categories' masses, or their tilted masses p̃_c, with
        // ρ_c = p_c/p̃_c turning tilted values back into the true ones.
        let tilting = tilt
            .map(|t| t.apply::<S>(&categories, n, ctx))
            .transpose()?;
        let weight_of = |c: usize| -> S {
            match &tilting {
                Some(t) => t.tilted[c].clone(),
                None => coefficient(&categories[c].mass),
            }
        };
        // Outer categories of a split: 0 = the rest (c* and its partner), then the others.
        let outer_weights = |(i, j): (usize, usize)| -> Vec<S> {
            let rest = if i == j {
                weight_of(i)
            } else {
                weight_of(i).add(&weight_of(j))
            };
            std::iter::once(rest)
                .chain(
                    (0..categories.len())
                        .filter(|c| *c != i && *c != j)
                        .map(weight_of),
                )
                .collect()
        };
        let weights: Vec<f64> = (0..categories.len())
            .map(|c| weight_of(c).approx_f64())
            .collect();
        let (split, stored) = match split {
            Some(split) => (split, stored_values(&weights, split, m, z)),
            None => cheapest_split(&weights, m, z),
        };
        let bytes = stored * S::estimated_bytes(m, ctx) as f64;
        if bytes > options.memory_limit as f64 {
            return Err(Error::TooLarge(format!(
                "the blanket sum over {} output classes at n = {n} would hold about {:.2e} values ({:.3} GiB), over the {:.3} GiB limit (raise --max-memory-gib or use a smaller n)",
                classes.len(),
                stored,
                bytes / (1u64 << 30) as f64,
                options.memory_limit as f64 / (1u64 << 30) as f64
            )));
        }
        let seconds = seconds_for::<S>(stored, m, ctx);
        if seconds > options.time_limit_seconds {
            return Err(Error::TooLarge(format!(
                "the blanket sum over {} output classes at n = {n} would hold about {stored:.2e} values, an estimated {} with the {} backend, over --max-seconds {} (raise it or use a smaller n)",
                classes.len(),
                crate::exact::pair::duration_text(seconds),
                S::BACKEND,
                crate::exact::pair::duration_text(options.time_limit_seconds)
            )));
        }
        let (inner, partner) = (&categories[split.0], &categories[split.1]);
        let other_indices: Vec<usize> = (0..categories.len())
            .filter(|c| *c != split.0 && *c != split.1)
            .collect();
        let others: Vec<&Class> = other_indices.iter().map(|&c| &categories[c]).collect();
        let (us, vs): (Vec<S>, Vec<S>) = others
            .iter()
            .map(|c| (coefficient(&c.u), coefficient(&c.v)))
            .unzip();
        let (partner_u, partner_v) = (coefficient(&partner.u), coefficient(&partner.v));
        // The outer enumeration, grouped by the users m left to the split; every user of the
        // rest counts as the partner (a = Σ N_c u_c + m u_partner), and the inner coefficients
        // below add what moving J of them to c* changes.
        // Tilted: ρ_rest = (p_{c*} + p_partner)/(p̃_{c*} + p̃_partner).
        let rest_ratio = tilting.as_ref().map(|t| {
            if split.0 == split.1 {
                t.ratio[split.0].clone()
            } else {
                coefficient(&Rational::from(&inner.mass + &partner.mass))
                    .div(&weight_of(split.0).add(&weight_of(split.1)))
            }
        });
        let mut by_rest: std::collections::BTreeMap<usize, Vec<OuterState<S>>> = Default::default();
        // Tilted: the tilted weight of each group (its mass under the law the windows follow).
        let mut tilted_mass: std::collections::BTreeMap<usize, S> = Default::default();
        let mut omitted = Rational::new();
        let rest_state = |left: usize, weight: S, a: S, b: S| -> OuterState<S> {
            let k = S::from_u64(left as u64, ctx);
            OuterState {
                weight,
                a: a.add(&k.mul(&partner_u)),
                b: b.add(&k.mul(&partner_v)),
            }
        };
        if others.is_empty() {
            let weight = match &rest_ratio {
                Some(r) => {
                    tilted_mass.insert(m, S::one(ctx));
                    power(r, m as u64, ctx)
                }
                None => S::one(ctx),
            };
            by_rest.insert(m, vec![rest_state(m, weight, S::zero(ctx), S::zero(ctx))]);
        } else {
            let w: Vec<S> = outer_weights(split);
            let law = multinomial::<S>(m, &w, tau, ctx);
            omitted += &law.omitted;
            let histograms: Vec<Vec<u64>> = (0..law.values.len())
                .map(|i| law.set.histogram(i))
                .collect();
            // ρ-powers turning tilted weights into true ones: ρ_rest^m Π_c ρ_c^{N_c}.
            let powers = tilting.as_ref().map(|t| {
                std::iter::once(rest_ratio.clone().expect("tilted"))
                    .chain(other_indices.iter().map(|&c| t.ratio[c].clone()))
                    .enumerate()
                    .map(|(j, r)| {
                        let counts = histograms.iter().map(|h| h[j]);
                        let (lo, hi) = counts.fold((u64::MAX, 0), |(a, b), k| (a.min(k), b.max(k)));
                        PowerTable::new(&r, lo, hi, ctx)
                    })
                    .collect::<Vec<_>>()
            });
            for (h, weight) in histograms.into_iter().zip(law.values) {
                let weight = match &powers {
                    None => weight,
                    Some(p) => {
                        let left = h[0] as usize;
                        let entry = tilted_mass.entry(left).or_insert_with(|| S::zero(ctx));
                        entry.add_assign(&weight);
                        h.iter()
                            .zip(p)
                            .fold(weight, |w, (count, table)| w.mul(table.at(*count)))
                    }
                };
                let (mut a, mut b) = (S::zero(ctx), S::zero(ctx));
                for (c, count) in h.iter().skip(1).enumerate() {
                    let k = S::from_u64(*count, ctx);
                    a.add_assign(&k.mul(&us[c]));
                    b.add_assign(&k.mul(&vs[c]));
                }
                let left = h[0] as usize;
                by_rest
                    .entry(left)
                    .or_default()
                    .push(rest_state(left, weight, a, b));
            }
        }
        let states = by_rest.values().map(Vec::len).sum();
        // The split of the m left over: J ~ Bin(m, q) into c*, the others to the partner.
        let (q, not_q) = if split.0 == split.1 {
            (S::one(ctx), S::zero(ctx))
        } else {
            let rest = weight_of(split.0).add(&weight_of(split.1));
            (weight_of(split.0).div(&rest), weight_of(split.1).div(&rest))
        };
        // Tilted: the true binomial is the tilted one times σ₁^J σ₀^{m−J}, σ₁ = ρ_{c*}/ρ_rest,
        // σ₀ = ρ_partner/ρ_rest (the ratio of the true and tilted q and 1 − q).
        let sigmas = tilting.as_ref().filter(|_| split.0 != split.1).map(|t| {
            let rest_ratio = rest_ratio.as_ref().expect("tilted");
            (
                t.ratio[split.0].div(rest_ratio),
                t.ratio[split.1].div(rest_ratio),
            )
        });
        let built: Vec<(RestGroup<S>, Rational)> = by_rest
            .into_iter()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(left, states)| {
                let window = binomial_window(left, &q, &not_q, tau, ctx);
                let mass = match tilted_mass.get(&left) {
                    Some(m) => m.clone(),
                    None => {
                        let mut mass = S::zero(ctx);
                        for s in &states {
                            mass.add_assign(&s.weight);
                        }
                        mass
                    }
                };
                let lost = upper_bound(&mass) * &window.omitted;
                let pmf = match &sigmas {
                    None => window.values,
                    Some((s1, s0)) => {
                        // σ₁^J σ₀^{m−J} from the window's first J, then × σ₁/σ₀ per step.
                        let step = s1.div(s0);
                        let mut factor = power(s1, window.start as u64, ctx).mul(&power(
                            s0,
                            (left - window.start) as u64,
                            ctx,
                        ));
                        window
                            .values
                            .iter()
                            .map(|v| {
                                let out = v.mul(&factor);
                                factor = factor.mul(&step);
                                out
                            })
                            .collect()
                    }
                };
                (RestGroup::new(states, window.start, pmf), lost)
            })
            .collect();
        let mut groups = Vec::with_capacity(built.len());
        for (g, lost) in built {
            omitted += lost;
            groups.push(g);
        }
        let inner_coefficients = if split.0 == split.1 {
            (S::zero(ctx), S::zero(ctx))
        } else {
            (
                coefficient(&Rational::from(&inner.u - &partner.u)),
                coefficient(&Rational::from(&inner.v - &partner.v)),
            )
        };
        let max_of = |f: &dyn Fn(&Class) -> Rational| -> Rational {
            classes.iter().map(f).max().unwrap_or_default()
        };
        let max_u = max_of(&|c| c.u.clone());
        let max_v = max_of(&|c| c.v.clone());
        let inv_n = coefficient(&Rational::from((1, n)));
        let slack = match (&tilting, tilt) {
            (Some(t), Some(tilt)) => {
                // Only the tilted direction, for t ≥ t0: M^n ω/(λ e n).
                let bound = t.scale.mul(&coefficient(&omitted)).mul(&inv_n);
                let mut slack = [None, None];
                slack[side(tilt.dir)] = Some(bound);
                slack
            }
            _ => [
                Some(coefficient(&Rational::from(&omitted * &max_u))),
                Some(coefficient(&Rational::from(&omitted * &max_v))),
            ],
        };
        let stored = 3 * states + 5 * groups.iter().map(|g| g.pmf.len()).sum::<usize>();
        let bytes = stored as f64 * S::estimated_bytes(m, ctx) as f64;
        Ok(BlanketSum {
            bytes,
            groups,
            inner: inner_coefficients,
            inv_n,
            slack,
            tilt: tilt.map(|t| (t.dir, t.t0.clone())),
            omitted,
            vanishes_beyond: [
                max_of(&|c| Rational::from(&c.u / &c.v)),
                max_of(&|c| Rational::from(&c.v / &c.u)),
            ],
            states,
        })
    }

    /// `D` at a threshold value `c` enclosing `t = e^ε` (every `t` in it, by monotonicity).
    pub fn at_threshold(&self, dir: Direction, c: &S, ctx: &S::Ctx) -> Enclosure {
        // Every term vanishes for t ≥ max u/v (max v/u for the reverse).
        if c.enclosure().lo() >= &Endpoint::Finite(self.vanishes_beyond[side(dir)].clone()) {
            return Enclosure::point(Rational::new());
        }
        let (u, v) = &self.inner;
        let beta = match dir {
            Direction::Qp => u.sub(&c.mul(v)),
            Direction::Pq => v.sub(&c.mul(u)),
        };
        let parts: Vec<S> = self
            .groups
            .par_iter()
            .map(|g| {
                let mut sum = S::zero(ctx);
                for s in &g.states {
                    let alpha = match dir {
                        Direction::Qp => s.a.sub(&c.mul(&s.b)),
                        Direction::Pq => s.b.sub(&c.mul(&s.a)),
                    };
                    sum.add_assign(&s.weight.mul(&g.positive_part_mean(&alpha, &beta, ctx)));
                }
                sum
            })
            .collect();
        let mut total = S::zero(ctx);
        for p in &parts {
            total.add_assign(p);
        }
        let kept = total.mul(&self.inv_n);
        let valid = self
            .tilt
            .as_ref()
            .is_none_or(|(d, t0)| *d == dir && c.enclosure().lo() >= &Endpoint::Finite(t0.clone()));
        match &self.slack[side(dir)] {
            Some(slack) if valid => kept.with_upper_slack(slack).enclosure().clamp_nonnegative(),
            _ => {
                Enclosure::new(kept.enclosure().lo().clone(), Endpoint::PosInf).clamp_nonnegative()
            }
        }
    }

    /// `D(t)` and `D′(t)` in doubles from the stored values' midpoints: steering for the ε
    /// search, never part of a result.  `D′(t) = −(1/n) E[B·1{A > tB}]` (Qp; A and B swap for
    /// Pq).
    fn approx_at(&self, dir: Direction, t: f64) -> (f64, f64) {
        let (u, v) = (self.inner.0.approx_f64(), self.inner.1.approx_f64());
        let (x_inner, y_inner) = match dir {
            Direction::Qp => (u, v),
            Direction::Pq => (v, u),
        };
        let beta = x_inner - t * y_inner;
        let (value, slope) = self
            .groups
            .par_iter()
            .map(|g| {
                let (mut value, mut slope) = (0.0, 0.0);
                for s in &g.states {
                    let (a, b) = (s.a.approx_f64(), s.b.approx_f64());
                    let (x, y) = match dir {
                        Direction::Qp => (a, b),
                        Direction::Pq => (b, a),
                    };
                    let alpha = x - t * y;
                    let (m0, m1) = g.approx_positive_moments(alpha, beta);
                    let w = s.weight.approx_f64();
                    value += w * (alpha * m0 + beta * m1);
                    slope -= w * (y * m0 + y_inner * m1);
                }
                (value, slope)
            })
            .reduce(|| (0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
        let n = 1.0 / self.inv_n.approx_f64();
        (value / n, slope / n)
    }

    /// An estimate of the `t` where `D(t) = target`: safeguarded Newton steps on `ln D`
    /// inside a bracket, in doubles (steering only; `None` outside the double range).  `from`
    /// is where the steps start (1 when `None`): a `t` below the root, such as the root of a
    /// larger target.
    fn approx_root(
        &self,
        dir: Direction,
        target: &Rational,
        from: Option<f64>,
    ) -> Option<Rational> {
        let goal = target.to_f64().ln();
        let (mut lo, mut hi) = (1.0, self.vanishes_beyond[side(dir)].to_f64());
        if !(goal.is_finite() && hi.is_finite() && hi > lo) {
            return None;
        }
        // From below the root: where ln D is concave, every Newton step lands at or beyond the
        // root and the steps then descend to it monotonically.
        let mut t = from.filter(|t| *t > lo && *t < hi).unwrap_or(1.0);
        for _ in 0..100 {
            let (d, slope) = self.approx_at(dir, t);
            if d > 0.0 && d.ln() > goal {
                lo = t;
            } else {
                hi = t;
            }
            // Newton on ln D − ln target: t − (ln D − goal)·D/D′; bisect when it leaves.
            let newton = t - (d.ln() - goal) * d / slope;
            let usable = d > 0.0 && slope < 0.0 && newton.is_finite();
            if usable && (newton - t).abs() <= 1e-15 * t || hi - lo <= 1e-15 * lo {
                return Rational::from_f64(t);
            }
            t = if usable && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
        }
        Rational::from_f64(t)
    }

    /// `D` at a threshold given as ε or as `e^ε`.
    pub fn at(&self, dir: Direction, threshold: &Threshold, ctx: &S::Ctx) -> Enclosure {
        match threshold {
            Threshold::Eps(e) => {
                S::exp_rational(e, ctx).eval_nonincreasing(|c| self.at_threshold(dir, c, ctx))
            }
            Threshold::ExpEps(c) => self.at_threshold(dir, &S::from_rational(c, ctx), ctx),
        }
    }

    /// The certified ε at which `D` meets `target` (`D` has no singular mass).  Probes start
    /// around a double-precision estimate of the root; the bracket is refined to 2^-6 of the
    /// backend's usual tolerance (relative width about 1e-11 with f64 intervals).
    ///
    /// `refine(t, value)` may replace an evaluation by a tighter enclosure of the same `D(t)`
    /// (the tilted sum, for values below the truncation depth); `from` is a `t` below the root
    /// where the steering starts (see [`Self::approx_root`]).
    pub fn epsilon_for(
        &self,
        dir: Direction,
        target: &Rational,
        ctx: &S::Ctx,
        refine: &dyn Fn(&Rational, Enclosure) -> Enclosure,
        from: Option<f64>,
    ) -> Result<EpsilonCertificate> {
        certified_epsilon(
            |c| refine(c, self.at(dir, &Threshold::ExpEps(c.clone()), ctx)),
            || Enclosure::point(Rational::new()),
            Some(self.vanishes_beyond[side(dir)].clone()),
            self.approx_root(dir, target, from),
            target,
            S::precision_bits(ctx).saturating_sub(6),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::mechanism::randomizer::load_randomizer;
    use rug::ops::Pow;

    /// The expectation form `(1/(nγ)) E_M E[(Σ_{i≤M} l(Y_i))₊]`, `M ~ Bin(n, γ)`,
    /// `Y_i ~ R_BG`, `l = (R_{x1} − t R_{x1′})/R_BG`, by enumerating every sequence (exact).
    fn expectation_form(r: &Randomizer, x1: usize, x1p: usize, n: u64, t: &Rational) -> Rational {
        let ctx = ExactCtx::default();
        let rows = r.values::<Rational>(&ctx).unwrap();
        let b = blanket(r, &rows, &ctx).unwrap();
        let bg: Vec<Rational> = b
            .floor
            .iter()
            .map(|f| Rational::from(f / &b.gamma))
            .collect();
        let l: Vec<Rational> = (0..r.d())
            .map(|y| {
                if bg[y] == 0 {
                    Rational::new()
                } else {
                    (&rows[x1][y] - Rational::from(t * &rows[x1p][y])) / &bg[y]
                }
            })
            .collect();
        let mut total = Rational::new();
        let binom = |n: u64, k: u64| -> Rational {
            Rational::from(rug::Integer::from(n).binomial(k as u32))
        };
        for m in 0..=n {
            // E[(Σ l(Y_i))₊] over all d^m sequences.
            let mut inner = Rational::new();
            let d = r.d();
            for code in 0..d.pow(m as u32) {
                let (mut c, mut prob, mut sum) = (code, Rational::from(1), Rational::new());
                for _ in 0..m {
                    let y = c % d;
                    c /= d;
                    prob *= &bg[y];
                    sum += &l[y];
                }
                if sum > 0 {
                    inner += prob * sum;
                }
            }
            let g = b.gamma.clone();
            let weight =
                binom(n, m) * g.clone().pow(m as i32) * (Rational::from(1) - g).pow((n - m) as i32);
            total += weight * inner;
        }
        total / (Rational::from(n) * b.gamma)
    }

    fn exact_options() -> crate::exact::pair::PairOptions {
        crate::exact::pair::PairOptions {
            truncate: false,
            ..Default::default()
        }
    }

    /// The blanket sum of `x1 → x1′` for `n` users, exact and untruncated.
    fn exact_sum(exact: &Exact, x1: usize, x1p: usize, n: u64) -> BlanketSum<Rational> {
        let (cl, gamma) = exact.blanket_classes(x1, x1p);
        BlanketSum::build(&cl, &gamma, n, &exact_options(), &ExactCtx::default()).unwrap()
    }

    #[test]
    fn finite_sum_equals_the_expectation_form() {
        let r = load_randomizer("k-rr:k=3,exp_eps0=2,inputs=3").unwrap();
        let exact = Exact::of(&r).unwrap();
        let ctx = ExactCtx::default();
        for n in [1u64, 3, 5] {
            let sum = exact_sum(&exact, 0, 1, n);
            assert_eq!(sum.omitted, 0);
            for t in [
                Rational::from(1),
                Rational::from((3, 2)),
                Rational::from((19, 10)),
            ] {
                let d = sum.at_threshold(Direction::Qp, &t, &ctx);
                let want = expectation_form(&r, 0, 1, n, &t);
                assert!(
                    d.is_point() && d.contains(&want),
                    "n = {n}, t = {t}: {d} vs {want}"
                );
                let reverse = sum.at_threshold(Direction::Pq, &t, &ctx);
                assert!(reverse.contains(&expectation_form(&r, 1, 0, n, &t)));
            }
            // The exact zero for t ≥ max u/v = e^eps0.
            let d = sum.at_threshold(Direction::Qp, &Rational::from(2), &ctx);
            assert!(d.contains(&Rational::new()));
        }
        // A randomizer with distinct ratios in every output (no merging), two inputs.
        let file = std::env::temp_dir().join("shufflecert-blanket-three.toml");
        std::fs::write(
            &file,
            "inputs = [\"a\", \"b\"]\nrows = [[\"1/2\", \"1/3\", \"1/6\"], [\"1/5\", \"1/5\", \"3/5\"]]\n",
        )
        .unwrap();
        let r = load_randomizer(file.to_str().unwrap()).unwrap();
        let sum = exact_sum(&Exact::of(&r).unwrap(), 1, 0, 4);
        let t = Rational::from((6, 5));
        let d = sum.at_threshold(Direction::Qp, &t, &ctx);
        assert!(d.contains(&expectation_form(&r, 1, 0, 4, &t)));
    }

    /// A randomizer with three classes of distinct ratios and mass outside the blanket.
    fn three_classes() -> Randomizer {
        let file = std::env::temp_dir().join("shufflecert-blanket-three-classes.toml");
        std::fs::write(
            &file,
            "inputs = [\"a\", \"b\", \"c\"]\nrows = [[\"1/2\", \"1/4\", \"1/8\", \"1/8\"], [\"1/8\", \"1/2\", \"1/4\", \"1/8\"], [\"1/4\", \"1/8\", \"1/8\", \"1/2\"]]\n",
        )
        .unwrap();
        load_randomizer(file.to_str().unwrap()).unwrap()
    }

    /// Every split `(c*, partner)` of `categories` categories.
    fn splits(categories: usize) -> Vec<(usize, usize)> {
        (0..categories)
            .flat_map(|i| {
                (0..categories)
                    .filter(move |j| *j != i)
                    .map(move |j| (i, j))
            })
            .collect()
    }

    #[test]
    fn every_closed_form_split_gives_the_expectation_form() {
        // Whichever pair of categories is summed in closed form (β > 0, β < 0 and β = 0 all
        // occur, with the outside or a class as partner), the value is the expectation form
        // exactly, in both directions.
        let r = three_classes();
        let exact = Exact::of(&r).unwrap();
        let ctx = ExactCtx::default();
        let (cl, gamma) = exact.blanket_classes(0, 1);
        assert!(cl.len() >= 3 && gamma < 1);
        for n in [1u64, 2, 4] {
            for split in splits(cl.len() + 1) {
                let sum = BlanketSum::<Rational>::build_with_split(
                    &cl,
                    &gamma,
                    n,
                    &exact_options(),
                    Some(split),
                    None,
                    &ctx,
                )
                .unwrap();
                for t in [(1, 1), (6, 5), (3, 2), (2, 1), (4, 1)] {
                    let t = Rational::from(t);
                    let qp = sum.at_threshold(Direction::Qp, &t, &ctx);
                    let pq = sum.at_threshold(Direction::Pq, &t, &ctx);
                    let (want_qp, want_pq) = (
                        expectation_form(&r, 0, 1, n, &t),
                        expectation_form(&r, 1, 0, n, &t),
                    );
                    assert!(qp.is_point() && qp.contains(&want_qp), "{n} {split:?} {t}");
                    assert!(pq.is_point() && pq.contains(&want_pq), "{n} {split:?} {t}");
                }
            }
        }
    }

    /// `δ` of the datasets `(x1, x2, …, x2)` and `(x1′, x2, …, x2)` by enumerating every output
    /// sequence (exact): `Σ_N (P(N) − t Q(N))₊` over the histograms.
    fn concrete_pair_delta(
        r: &Randomizer,
        x1: usize,
        x1p: usize,
        x2: usize,
        n: u32,
        t: &Rational,
    ) -> Rational {
        let rows = r.values::<Rational>(&ExactCtx::default()).unwrap();
        let d = r.d();
        let mut laws: std::collections::BTreeMap<Vec<u32>, (Rational, Rational)> =
            Default::default();
        for code in 0..d.pow(n) {
            let (mut c, mut p, mut q) = (code, Rational::from(1), Rational::from(1));
            let mut histogram = vec![0u32; d];
            for user in 0..n {
                let y = c % d;
                c /= d;
                histogram[y] += 1;
                let (a, b) = if user == 0 { (x1, x1p) } else { (x2, x2) };
                p *= &rows[a][y];
                q *= &rows[b][y];
            }
            let e = laws.entry(histogram).or_default();
            e.0 += p;
            e.1 += q;
        }
        laws.values()
            .map(|(p, q)| (p - Rational::from(t * q)).max(Rational::new()))
            .sum()
    }

    #[test]
    fn reference_sums_are_the_concrete_pairs_delta() {
        // Against R_{x2} with γ = 1 the sum is exactly δ of (x1, x2…x2) ≃ (x1′, x2…x2), for a
        // third input x2 and for x2 ∈ {x1, x1′}, whatever the split.
        let r = three_classes();
        let exact = Exact::of(&r).unwrap();
        let ctx = ExactCtx::default();
        for (x1, x1p, x2) in [(0, 1, 2), (0, 1, 0), (0, 1, 1), (2, 0, 1)] {
            let (cl, gamma) = exact.reference_classes(x1, x1p, x2);
            assert_eq!(gamma, 1);
            for n in [1u32, 3, 4] {
                for split in splits(cl.len()).into_iter().take(4) {
                    let sum = BlanketSum::<Rational>::build_with_split(
                        &cl,
                        &gamma,
                        u64::from(n),
                        &exact_options(),
                        Some(split),
                        None,
                        &ctx,
                    )
                    .unwrap();
                    for t in [(1, 1), (5, 4), (2, 1)] {
                        let t = Rational::from(t);
                        let got = sum.at_threshold(Direction::Qp, &t, &ctx);
                        let want = concrete_pair_delta(&r, x1, x1p, x2, n, &t);
                        assert!(
                            got.is_point() && got.contains(&want),
                            "{x1} {x1p} {x2} n={n} {t}: {got} vs {want}"
                        );
                        let reverse = sum.at_threshold(Direction::Pq, &t, &ctx);
                        assert!(reverse.contains(&concrete_pair_delta(&r, x1p, x1, x2, n, &t)));
                    }
                }
            }
        }
    }

    #[test]
    fn truncated_interval_sums_enclose_the_exact_value() {
        // n = 40: the interval backend truncates both the outer windows and the inner
        // binomials; its enclosure must contain the exact (untruncated) rational value, for
        // every split, and its double-precision steering must agree.
        let r = three_classes();
        let exact = Exact::of(&r).unwrap();
        let n = 40;
        let (cl, gamma) = exact.blanket_classes(2, 0);
        let want = exact_sum(&exact, 2, 0, n);
        for split in splits(cl.len() + 1) {
            let sum = BlanketSum::<inari::Interval>::build_with_split(
                &cl,
                &gamma,
                n,
                &Default::default(),
                Some(split),
                None,
                &(),
            )
            .unwrap();
            assert!(sum.omitted > 0, "nothing truncated at n = {n}");
            for t in [(1, 1), (11, 10), (5, 4), (3, 2)] {
                let t = Rational::from(t);
                for dir in [Direction::Qp, Direction::Pq] {
                    let exact_value = want.at_threshold(dir, &t, &ExactCtx::default());
                    let got = sum.at(dir, &Threshold::ExpEps(t.clone()), &());
                    assert!(
                        got.contains_enclosure(&exact_value),
                        "{split:?} {t} {dir:?}: {got} vs {exact_value}"
                    );
                    assert!(got.relative_width() < 1e-9, "{got}");
                    let (approx, slope) = sum.approx_at(dir, t.to_f64());
                    assert!(
                        (approx - got.mid_f64()).abs() <= 1e-9 * got.mid_f64(),
                        "{approx} vs {got}"
                    );
                    assert!(slope < 0.0);
                }
            }
        }
    }

    #[test]
    fn tilted_sums_resolve_values_below_the_truncation_depth() {
        // n = 40 with t near max u/v: δ is below what untilted windows cut at 2^-30 resolve.  The
        // tilted sum (MPFR) encloses the exact untruncated value to 1e-12 relative, in the
        // tilted direction, for every t ≥ t0 it is evaluated at; the other direction and t < t0
        // are left unbounded above (where they do not vanish exactly).
        use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
        let r = three_classes();
        let exact = Exact::of(&r).unwrap();
        let n = 40;
        let ctx = MpfrCtx { precision: 128 };
        let want = exact_sum(&exact, 0, 1, n);
        let (cl, gamma) = exact.blanket_classes(0, 1);
        // Untilted windows cut at 2^-30 (n = 40 does not reach below the default 2^-100).
        let shallow = PairOptions {
            truncation_bits: Some(30),
            ..Default::default()
        };
        let untilted = BlanketSum::<inari::Interval>::build(&cl, &gamma, n, &shallow, &()).unwrap();
        let mut deep = 0;
        for dir in [Direction::Qp, Direction::Pq] {
            let top = want.vanishes_beyond[side(dir)].clone();
            for (num, den) in [(9, 10), (19, 20), (99, 100)] {
                let t0 = &top * Rational::from((num, den));
                let tilt = Tilt::for_threshold(&cl, &gamma, dir, &t0).unwrap();
                let sum = BlanketSum::<MpfrInterval>::build_tilted(
                    &cl,
                    &gamma,
                    n,
                    &Default::default(),
                    &tilt,
                    &ctx,
                )
                .unwrap();
                for t in [t0.clone(), &t0 * Rational::from((101, 100))] {
                    let exact_value = want.at_threshold(dir, &t, &ExactCtx::default());
                    let got = sum.at(dir, &Threshold::ExpEps(t.clone()), &ctx);
                    assert!(
                        got.contains_enclosure(&exact_value),
                        "{dir:?} {t}: {got} vs {exact_value}"
                    );
                    assert!(got.relative_width() < 1e-12, "{got}");
                    let plain = untilted.at(dir, &Threshold::ExpEps(t.clone()), &());
                    if plain.relative_width() > 1e-6 {
                        deep += 1;
                    }
                }
                // Below t0, or in the other direction, the tilt gives no bound.
                let below = &t0 * Rational::from((99, 100));
                assert_eq!(
                    sum.at(dir, &Threshold::ExpEps(below), &ctx).hi(),
                    &Endpoint::PosInf
                );
                let other = match dir {
                    Direction::Qp => Direction::Pq,
                    Direction::Pq => Direction::Qp,
                };
                assert_eq!(
                    sum.at(other, &Threshold::ExpEps(Rational::from(1)), &ctx)
                        .hi(),
                    &Endpoint::PosInf
                );
            }
        }
        assert!(
            deep >= 2,
            "the untilted windows resolved every case ({deep} deep)"
        );
        // No tilt where δ is not small (t ≤ 1) or vanishes (t ≥ max u/v).
        assert!(Tilt::for_threshold(&cl, &gamma, Direction::Qp, &Rational::from(1)).is_none());
        let top = want.vanishes_beyond[0].clone();
        assert!(Tilt::for_threshold(&cl, &gamma, Direction::Qp, &top).is_none());
    }

    #[test]
    fn classes_merge_equal_coefficients_and_carry_unit_mass() {
        let r = load_randomizer("k-rr:k=6,exp_eps0=3,inputs=6").unwrap();
        let exact = Exact::of(&r).unwrap();
        let (cl, gamma) = exact.blanket_classes(0, 1);
        assert_eq!(cl.len(), 3);
        assert_eq!(gamma, Rational::from((6, 8)));
        // Against a third input's row: x1, x1′, x2 and the rest, mass 1.
        let (against, one) = exact.reference_classes(0, 1, 2);
        assert_eq!((against.len(), one), (4, Rational::from(1)));
        for cl in [cl, against] {
            let (a, b) = cl
                .iter()
                .fold((Rational::new(), Rational::new()), |(a, b), c| {
                    (
                        a + Rational::from(&c.mass * &c.u),
                        b + Rational::from(&c.mass * &c.v),
                    )
                });
            assert_eq!((a, b), (Rational::from(1), Rational::from(1)));
        }
    }
}
