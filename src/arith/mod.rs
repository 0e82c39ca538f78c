//! Arithmetic backends behind one trait.
//!
//! Every algorithm of the exact layer is written once, generic over [`Scalar`], and runs on
//! three backends:
//!
//! | backend | type | what a value is |
//! | --- | --- | --- |
//! | `exact` | [`rug::Rational`] | the exact real number |
//! | `interval` | [`inari::Interval`] | an f64 interval containing it |
//! | `mpfr` | [`MpfrInterval`] | an interval with MPFR endpoints of a chosen precision |
//!
//! **Soundness contract.** Each operation returns a value that *contains* the exact real result
//! of the operation applied to any reals contained in its operands (for `exact`: equals it).
//! Interval backends round lower endpoints down and upper endpoints up; elementary functions
//! come from MPFR with directed rounding, never from libm.

pub mod exact;
pub mod interval;
pub mod mpfr;
pub mod special;

use crate::enclosure::Enclosure;
use rug::Float;
use rug::Rational;
use rug::float::Round;

pub use mpfr::{MpfrCtx, MpfrInterval};

/// A number of the exact layer: an exact rational or an interval enclosing a real.
pub trait Scalar: Clone + Send + Sync + std::fmt::Debug + 'static {
    /// What a backend needs to make constants (e.g. the MPFR precision).
    type Ctx: Clone + Send + Sync + std::fmt::Debug;

    /// The interval type that evaluates elementary functions (`ln`, `exp`, powers) of this
    /// backend's values: the backend itself, or MPFR intervals for the exact backend.
    type Elementary: Transcendental;

    /// This value in the elementary backend (an enclosure of it).
    fn to_elementary(&self, ctx: &Self::Ctx) -> Self::Elementary;

    /// The elementary backend's settings.
    fn elementary_ctx(ctx: &Self::Ctx) -> <Self::Elementary as Scalar>::Ctx;

    /// The backend's name as the CLI spells it.
    const BACKEND: &'static str;

    /// True when values are exact (no rounding at all); such a backend never truncates.
    const EXACT: bool;

    /// Truncate a law where values fall below `2^-bits` of its largest (with a certified bound on
    /// what is dropped); `None` for a backend that never truncates.
    fn truncation_bits(ctx: &Self::Ctx) -> Option<u32>;

    /// Significand bits of the backend's values (for the exact backend: of its brackets); sets
    /// how far searches refine.
    fn precision_bits(ctx: &Self::Ctx) -> u32;

    /// Rough bytes per stored value for laws of n users (for the memory guard).
    fn estimated_bytes(n: usize, ctx: &Self::Ctx) -> u64;

    /// An enclosure of the rational `q` (exactly `q` where representable).
    fn from_rational(q: &Rational, ctx: &Self::Ctx) -> Self;

    /// The integer `v`.
    fn from_u64(v: u64, ctx: &Self::Ctx) -> Self {
        Self::from_rational(&Rational::from(v), ctx)
    }

    fn zero(ctx: &Self::Ctx) -> Self {
        Self::from_u64(0, ctx)
    }

    fn one(ctx: &Self::Ctx) -> Self {
        Self::from_u64(1, ctx)
    }

    fn add(&self, rhs: &Self) -> Self;
    fn sub(&self, rhs: &Self) -> Self;
    fn mul(&self, rhs: &Self) -> Self;
    /// `self / rhs`; if `rhs` may be zero the result is unbounded (interval backends) — callers
    /// of the exact backend never divide by zero.
    fn div(&self, rhs: &Self) -> Self;

    /// `self += rhs`.
    fn add_assign(&mut self, rhs: &Self) {
        *self = self.add(rhs);
    }

    /// `self += a · b`, the inner step of every convolution.
    fn add_mul_assign(&mut self, a: &Self, b: &Self) {
        *self = self.add(&a.mul(b));
    }

    /// An enclosure of every `x + s` with `x` in `self` and `0 ≤ s ≤ slack`: the value is only
    /// known to lie between `self` and `self + slack` (a truncated sum).  The exact backend
    /// never truncates, so there `slack` must be exactly zero.
    fn with_upper_slack(&self, slack: &Self) -> Self;

    /// The positive part `max(self, 0)`.
    fn pos_part(&self) -> Self;

    /// An enclosure of `max(self, rhs)`.
    fn max(&self, rhs: &Self) -> Self;

    /// True when every value in `self` is certainly below every value in `bound`.
    fn certainly_below(&self, bound: &Self) -> bool;

    /// True when the value is certainly exactly zero (the enclosure is the point 0).
    fn is_exact_zero(&self) -> bool;

    /// The value's enclosure with exact endpoints.
    fn enclosure(&self) -> Enclosure;

    /// A value of this backend enclosing `e^q`, or a pair of points bracketing it.
    fn exp_rational(q: &Rational, ctx: &Self::Ctx) -> ExpValue<Self>;

    /// A double near the value, to steer searches (never part of a certified result).
    fn approx_f64(&self) -> f64;

    /// Doubles `lo ≤ x ≤ hi` for every `x` in the value, rounded outward (±∞ beyond range).
    fn f64_bounds(&self) -> (f64, f64);

    /// An enclosure of every `v` with `v̂ (1 − u)^r ≤ v ≤ v̂ (1 − u)^{−r}`, `u = 2^-53`, for a
    /// double `v̂ ≥ 0` of the non-negative f64 kernel (`exact::nonneg`) carrying `r` roundings.
    /// `None` for a backend that keeps its own arithmetic (more precise than doubles).
    fn from_nonneg_f64(_approx: f64, _rounds: u64, _ctx: &Self::Ctx) -> Option<Self> {
        None
    }

    /// The value as an MPFR interval with `precision`-bit endpoints, rounded outward (exact
    /// when the endpoints fit): for long sums that must not accumulate this backend's rounding.
    fn to_mpfr(&self, precision: u32) -> MpfrInterval;
}

/// Elementary functions, for the interval backends.  Each returns an enclosure of the range of
/// the function over its argument (within the function's domain).
pub trait Transcendental: Scalar {
    fn exp(&self) -> Self;
    /// `ln x` over `x ∩ (0, ∞)` (a lower endpoint ≤ 0 gives −∞); the upper endpoint must be > 0.
    fn ln(&self) -> Self;
    fn sqrt(&self) -> Self;
    /// `self^e` for `self ≥ 0`.
    fn pow(&self, e: &Self) -> Self;

    /// `self^e` for `self ≥ 0` and a rational `e ≥ 0`.  When the denominator of `e` is a power
    /// of two, `x^{p/2^j} = (√…√x)^p` by `j` square roots and a product by repeated squaring:
    /// each step is monotone on `[0, ∞)`, so the enclosure is plain interval arithmetic, and it
    /// avoids the far slower general `pow` (which goes through `exp` and `ln`).
    fn pow_rational(&self, e: &Rational, ctx: &Self::Ctx) -> Self {
        let den = e.denom();
        let dyadic = *e >= 0 && den.is_power_of_two() && den.significant_bits() <= 33;
        match e.numer().to_u32().filter(|p| dyadic && *p <= 1 << 16) {
            Some(p) => {
                let mut base = self.clone();
                for _ in 1..den.significant_bits() {
                    base = base.sqrt();
                }
                power(&base, u64::from(p), ctx)
            }
            None => self.pow(&Self::from_rational(e, ctx)),
        }
    }
    /// A single exactly representable point of the interval (near its middle).
    fn midpoint(&self) -> Self;
    /// The interval hull `[min(lo), max(hi)]`.
    fn hull(&self, rhs: &Self) -> Self;
    /// `self ∩ [lo, hi]` where `hi = None` means +∞; used only when the true value is known to
    /// lie in `[lo, hi]`, so the intersection is never empty.
    fn clamp_to(&self, lo: &Self, hi: Option<&Self>) -> Self;
}

/// The next double above `x` (`x` itself for +∞ and NaN): `f64::next_up`, which needs Rust 1.86.
pub fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

/// The next double below `x`.
pub fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// `x^k` by repeated squaring (each product an enclosure, so the result encloses `x^k`).
pub fn power<S: Scalar>(x: &S, mut k: u64, ctx: &S::Ctx) -> S {
    let (mut base, mut out) = (x.clone(), S::one(ctx));
    while k > 0 {
        if k & 1 == 1 {
            out = out.mul(&base);
        }
        k >>= 1;
        if k > 0 {
            base = base.mul(&base);
        }
    }
    out
}

/// An enclosure of `e^q` in a backend: a single value containing it (interval backends, or
/// `q = 0` exactly), or two points `lo ≤ e^q ≤ hi` for a backend of points.
#[derive(Clone, Debug)]
pub enum ExpValue<S> {
    Enclosed(S),
    Bracket { lo: S, hi: S },
}

impl<S: Scalar> ExpValue<S> {
    /// An enclosure of `f(e^q)` for a non-increasing `f` (such as ε ↦ δ(ε)), given `f` as an
    /// evaluation at a threshold value: a bracket is evaluated at both ends.
    pub fn eval_nonincreasing(&self, f: impl Fn(&S) -> Enclosure) -> Enclosure {
        match self {
            ExpValue::Enclosed(c) => f(c),
            ExpValue::Bracket { lo, hi } => {
                let at_hi = f(hi);
                let at_lo = f(lo);
                Enclosure::new(at_hi.lo().clone(), at_lo.hi().clone())
            }
        }
    }
}

/// Rationals `lo ≤ e^q ≤ hi` with `hi − lo ≈ 2^-prec · e^q`, from MPFR's correctly rounded exp.
pub fn exp_bracket(q: &Rational, prec: u32) -> (Rational, Rational) {
    let (mut lo, _) = Float::with_val_round(prec, q, Round::Down);
    let (mut hi, _) = Float::with_val_round(prec, q, Round::Up);
    lo.exp_round(Round::Down);
    hi.exp_round(Round::Up);
    (
        lo.to_rational().expect("finite exp"),
        hi.to_rational().expect("finite exp"),
    )
}

/// Rationals `lo ≤ ln x ≤ hi` for a rational `x > 0`.
pub fn ln_bracket(x: &Rational, prec: u32) -> (Rational, Rational) {
    let (mut lo, _) = Float::with_val_round(prec, x, Round::Down);
    let (mut hi, _) = Float::with_val_round(prec, x, Round::Up);
    lo.ln_round(Round::Down);
    hi.ln_round(Round::Up);
    (
        lo.to_rational().expect("finite ln"),
        hi.to_rational().expect("finite ln"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn next_up_and_down_step_one_double() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1e-310,
            -1e-310,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let (up, down) = (super::next_up(x), super::next_down(x));
            assert!(up > x && down < x, "{x}");
            assert!(!(up > x && up < super::next_up(x)));
            assert_eq!(super::next_down(up), if x == 0.0 { 0.0 } else { x });
        }
        assert_eq!(super::next_up(f64::INFINITY), f64::INFINITY);
    }

    use super::*;

    #[test]
    fn exp_and_ln_brackets_are_ordered_and_tight() {
        let one = Rational::from(1);
        let (lo, hi) = exp_bracket(&one, 128);
        assert!(lo < hi);
        assert!(Rational::from(&hi - &lo) < Rational::from((1, 1u128 << 120)));
        // e = 2.718281828459045235360287...
        let e_approx: Rational =
            Rational::from((2_718_281_828_459_045_235u64, 1_000_000_000_000_000_000u64));
        assert!(lo > e_approx);
        let (llo, lhi) = ln_bracket(&Rational::from(2), 64);
        assert!(
            llo < lhi && llo > Rational::from((693, 1000)) && lhi < Rational::from((694, 1000))
        );
    }
}

#[cfg(test)]
mod pow_tests {
    use super::*;
    use inari::Interval;

    #[test]
    fn dyadic_powers_enclose_the_general_power() {
        let mpfr = MpfrCtx { precision: 200 };
        for x in ["0", "1/3", "1", "2.5", "7"] {
            for e in ["0", "1", "2", "3/2", "7/4", "10", "5/8", "1/3", "2.3"] {
                let (x, e) = (
                    crate::enclosure::parse_rational(x).unwrap(),
                    crate::enclosure::parse_rational(e).unwrap(),
                );
                let reference = MpfrInterval::from_rational(&x, &mpfr)
                    .pow(&MpfrInterval::from_rational(&e, &mpfr))
                    .enclosure();
                let fast = Interval::from_rational(&x, &())
                    .pow_rational(&e, &())
                    .enclosure();
                assert!(fast.overlaps(&reference), "{x}^{e}: {fast} vs {reference}");
                assert!(fast.relative_width() < 1e-13, "{x}^{e}: {fast}");
                // An integer power of a rational is rational: the enclosure must contain it.
                if *e.denom() == 1 {
                    let exact = rug::ops::Pow::pow(x.clone(), e.numer().to_u32().unwrap());
                    assert!(fast.contains(&exact), "{x}^{e}: {fast} misses {exact}");
                }
                let exact_mpfr = MpfrInterval::from_rational(&x, &mpfr)
                    .pow_rational(&e, &mpfr)
                    .enclosure();
                assert!(
                    exact_mpfr.overlaps(&reference) && exact_mpfr.relative_width() < 1e-50,
                    "{x}^{e}"
                );
            }
        }
    }
}
