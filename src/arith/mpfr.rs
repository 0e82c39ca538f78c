//! The `mpfr` backend: intervals whose endpoints are MPFR floats of a chosen precision, each
//! operation rounding the lower endpoint down and the upper endpoint up.
//!
//! MPFR's default exponent range (±(2^30 − 1) binary orders of magnitude) means probabilities
//! such as 10^-300000 are represented without underflow, which the f64 backend cannot do; beyond
//! it, under- and overflow still round outward.

use super::{ExpValue, Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use rug::float::{Round, Special};
use rug::ops::{AddAssignRound, AssignRound, DivAssignRound, MulAssignRound, PowAssignRound};
use rug::{Float, Rational};

/// Settings of the MPFR backend.
#[derive(Clone, Copy, Debug)]
pub struct MpfrCtx {
    /// Bits of every endpoint's significand.
    pub precision: u32,
}

/// An interval `[lo, hi]` with MPFR endpoints; `lo < +∞` and `hi > −∞` always.
#[derive(Clone, Debug)]
pub struct MpfrInterval {
    lo: Float,
    hi: Float,
}

fn float_endpoint(x: &Float) -> Endpoint {
    if x.is_infinite() {
        if x.is_sign_positive() {
            Endpoint::PosInf
        } else {
            Endpoint::NegInf
        }
    } else {
        Endpoint::Finite(x.to_rational().expect("finite float"))
    }
}

/// Endpoints are exact rationals, whose size grows with the binary exponent: MPFR reaches
/// `2^(±2^62)`, where a rational would take gigabytes (`e^{-t²}` at t = 10⁵).  Beyond
/// `2^(±2^20)` (about 10^(±315653)) an endpoint is moved outward to `0`, `±2^(±2^20)` or `±∞`,
/// which keeps every enclosure an enclosure.
const EXPONENT_LIMIT: i32 = 1 << 20;

fn power_of_two(e: i32) -> Rational {
    if e >= 0 {
        Rational::from(rug::Integer::from(1) << e as u32)
    } else {
        Rational::from((rug::Integer::from(1), rug::Integer::from(1) << (-e) as u32))
    }
}

/// A lower endpoint for `x`: `x` itself, or a smaller bound when its exponent is extreme.
fn lower_endpoint(x: &Float) -> Endpoint {
    match x.get_exp() {
        Some(e) if e < -EXPONENT_LIMIT => Endpoint::Finite(if x.is_sign_positive() {
            Rational::new()
        } else {
            -power_of_two(-EXPONENT_LIMIT)
        }),
        Some(e) if e > EXPONENT_LIMIT => {
            if x.is_sign_positive() {
                Endpoint::Finite(power_of_two(EXPONENT_LIMIT))
            } else {
                Endpoint::NegInf
            }
        }
        _ => float_endpoint(x),
    }
}

/// An upper endpoint for `x`: `x` itself, or a larger bound when its exponent is extreme.
fn upper_endpoint(x: &Float) -> Endpoint {
    match x.get_exp() {
        Some(e) if e < -EXPONENT_LIMIT => Endpoint::Finite(if x.is_sign_positive() {
            power_of_two(-EXPONENT_LIMIT)
        } else {
            Rational::new()
        }),
        Some(e) if e > EXPONENT_LIMIT => {
            if x.is_sign_positive() {
                Endpoint::PosInf
            } else {
                Endpoint::Finite(-power_of_two(EXPONENT_LIMIT))
            }
        }
        _ => float_endpoint(x),
    }
}

fn greater(a: &Float, b: &Float) -> Float {
    if a >= b { a.clone() } else { b.clone() }
}

fn lesser(a: &Float, b: &Float) -> Float {
    if a <= b { a.clone() } else { b.clone() }
}

thread_local! {
    /// A scratch value for [`MpfrInterval::add_mul_assign`]'s products.
    static SCRATCH: std::cell::RefCell<Option<Float>> = const { std::cell::RefCell::new(None) };
}

/// `a · b` rounded in `round`, with the interval convention `0 · ∞ = 0`.
fn mul_round(a: &Float, b: &Float, prec: u32, round: Round) -> Float {
    if a.is_zero() || b.is_zero() {
        return Float::with_val(prec, 0);
    }
    Float::with_val_round(prec, a * b, round).0
}

/// The hull of `f` at the four corners of `x × y`, lower ends rounded down and upper ends up:
/// an enclosure of `f` over the box when `f` is monotone in each argument.
fn corner_hull(
    x: &MpfrInterval,
    y: &MpfrInterval,
    f: impl Fn(&Float, &Float, Round) -> Float,
) -> MpfrInterval {
    let corners = [
        (&x.lo, &y.lo),
        (&x.lo, &y.hi),
        (&x.hi, &y.lo),
        (&x.hi, &y.hi),
    ];
    let lo = corners
        .iter()
        .map(|(a, b)| f(a, b, Round::Down))
        .reduce(|p, q| if q < p { q } else { p })
        .expect("four corners");
    let hi = corners
        .iter()
        .map(|(a, b)| f(a, b, Round::Up))
        .reduce(|p, q| if q > p { q } else { p })
        .expect("four corners");
    MpfrInterval::from_floats(lo, hi)
}

impl MpfrInterval {
    /// The interval `[lo, hi]`.
    pub fn from_floats(lo: Float, hi: Float) -> Self {
        assert!(
            !lo.is_nan() && !hi.is_nan() && lo <= hi,
            "invalid MPFR interval"
        );
        MpfrInterval { lo, hi }
    }

    pub fn lo(&self) -> &Float {
        &self.lo
    }

    pub fn hi(&self) -> &Float {
        &self.hi
    }

    fn prec(&self) -> u32 {
        self.lo.prec().max(self.hi.prec())
    }

    fn entire(prec: u32) -> Self {
        MpfrInterval {
            lo: Float::with_val(prec, Special::NegInfinity),
            hi: Float::with_val(prec, Special::Infinity),
        }
    }

    fn is_nonnegative(&self) -> bool {
        self.lo >= 0
    }

    /// Applies a non-decreasing function given by its directed-rounding MPFR implementation.
    fn monotone(&self, f: impl Fn(&mut Float, Round)) -> Self {
        let mut lo = self.lo.clone();
        let mut hi = self.hi.clone();
        f(&mut lo, Round::Down);
        f(&mut hi, Round::Up);
        MpfrInterval::from_floats(lo, hi)
    }

    fn recip(&self) -> Self {
        let prec = self.prec();
        if self.lo <= 0 && self.hi >= 0 {
            return Self::entire(prec);
        }
        let one = Float::with_val(prec, 1);
        let mut lo = one.clone();
        lo.div_assign_round(&self.hi, Round::Down);
        let mut hi = one;
        hi.div_assign_round(&self.lo, Round::Up);
        MpfrInterval::from_floats(lo, hi)
    }
}

impl Scalar for MpfrInterval {
    type Ctx = MpfrCtx;
    type Elementary = MpfrInterval;

    fn to_elementary(&self, _: &MpfrCtx) -> MpfrInterval {
        self.clone()
    }

    fn elementary_ctx(ctx: &MpfrCtx) -> MpfrCtx {
        *ctx
    }
    const BACKEND: &'static str = "mpfr";
    const EXACT: bool = false;

    fn truncation_bits(ctx: &MpfrCtx) -> Option<u32> {
        Some(ctx.precision + 40)
    }

    fn precision_bits(ctx: &MpfrCtx) -> u32 {
        ctx.precision
    }

    fn estimated_bytes(_: usize, ctx: &MpfrCtx) -> u64 {
        2 * (32 + 8 * u64::from(ctx.precision.div_ceil(64)))
    }

    fn from_rational(q: &Rational, ctx: &MpfrCtx) -> Self {
        MpfrInterval {
            lo: Float::with_val_round(ctx.precision, q, Round::Down).0,
            hi: Float::with_val_round(ctx.precision, q, Round::Up).0,
        }
    }

    fn from_u64(v: u64, ctx: &MpfrCtx) -> Self {
        Self::from_rational(&Rational::from(v), ctx)
    }

    fn add(&self, rhs: &Self) -> Self {
        let mut r = self.clone();
        r.add_assign(rhs);
        r
    }

    fn sub(&self, rhs: &Self) -> Self {
        let prec = self.prec();
        MpfrInterval::from_floats(
            Float::with_val_round(prec, &self.lo - &rhs.hi, Round::Down).0,
            Float::with_val_round(prec, &self.hi - &rhs.lo, Round::Up).0,
        )
    }

    fn mul(&self, rhs: &Self) -> Self {
        let prec = self.prec();
        if self.is_nonnegative() && rhs.is_nonnegative() {
            return MpfrInterval::from_floats(
                mul_round(&self.lo, &rhs.lo, prec, Round::Down),
                mul_round(&self.hi, &rhs.hi, prec, Round::Up),
            );
        }
        corner_hull(self, rhs, |a, b, round| mul_round(a, b, prec, round))
    }

    fn div(&self, rhs: &Self) -> Self {
        self.mul(&rhs.recip())
    }

    fn add_assign(&mut self, rhs: &Self) {
        self.lo.add_assign_round(&rhs.lo, Round::Down);
        self.hi.add_assign_round(&rhs.hi, Round::Up);
    }

    fn add_mul_assign(&mut self, a: &Self, b: &Self) {
        if a.is_nonnegative() && b.is_nonnegative() && !a.hi.is_infinite() && !b.hi.is_infinite() {
            // The products in a scratch value per thread: the same roundings as fresh values,
            // without an allocation per term (the inner loop of every convolution).
            let prec = self.prec();
            SCRATCH.with(|scratch| {
                let mut scratch = scratch.borrow_mut();
                let t = scratch.get_or_insert_with(|| Float::new(prec));
                if t.prec() != prec {
                    t.set_prec(prec);
                }
                t.assign_round(&a.lo, Round::Down);
                t.mul_assign_round(&b.lo, Round::Down);
                self.lo.add_assign_round(&*t, Round::Down);
                t.assign_round(&a.hi, Round::Up);
                t.mul_assign_round(&b.hi, Round::Up);
                self.hi.add_assign_round(&*t, Round::Up);
            });
        } else {
            let p = a.mul(b);
            self.add_assign(&p);
        }
    }

    fn with_upper_slack(&self, slack: &Self) -> Self {
        let mut hi = self.hi.clone();
        hi.add_assign_round(&slack.hi, Round::Up);
        MpfrInterval::from_floats(self.lo.clone(), hi)
    }

    fn pos_part(&self) -> Self {
        let prec = self.prec();
        let zero = Float::with_val(prec, 0);
        MpfrInterval::from_floats(
            if self.lo > 0 {
                self.lo.clone()
            } else {
                zero.clone()
            },
            if self.hi > 0 { self.hi.clone() } else { zero },
        )
    }

    fn max(&self, rhs: &Self) -> Self {
        MpfrInterval::from_floats(greater(&self.lo, &rhs.lo), greater(&self.hi, &rhs.hi))
    }

    fn certainly_below(&self, bound: &Self) -> bool {
        self.hi < bound.lo
    }

    fn is_exact_zero(&self) -> bool {
        self.lo.is_zero() && self.hi.is_zero()
    }

    fn enclosure(&self) -> Enclosure {
        Enclosure::new(lower_endpoint(&self.lo), upper_endpoint(&self.hi))
    }

    fn exp_rational(q: &Rational, ctx: &MpfrCtx) -> ExpValue<Self> {
        ExpValue::Enclosed(Transcendental::exp(&Self::from_rational(q, ctx)))
    }

    fn approx_f64(&self) -> f64 {
        let lo = self.lo.to_f64();
        let hi = self.hi.to_f64();
        if lo.is_finite() && hi.is_finite() {
            0.5 * lo + 0.5 * hi
        } else {
            lo.max(hi.min(f64::MAX))
        }
    }

    fn f64_bounds(&self) -> (f64, f64) {
        (
            self.lo.to_f64_round(Round::Down),
            self.hi.to_f64_round(Round::Up),
        )
    }

    fn to_mpfr(&self, precision: u32) -> MpfrInterval {
        MpfrInterval::from_floats(
            Float::with_val_round(precision, &self.lo, Round::Down).0,
            Float::with_val_round(precision, &self.hi, Round::Up).0,
        )
    }
}

impl Transcendental for MpfrInterval {
    fn exp(&self) -> Self {
        self.monotone(|x, r| {
            x.exp_round(r);
        })
    }

    fn ln(&self) -> Self {
        assert!(self.hi > 0, "ln of a non-positive interval");
        self.monotone(|x, r| {
            if *x <= 0 {
                *x = Float::with_val(x.prec(), Special::NegInfinity);
            } else {
                x.ln_round(r);
            }
        })
    }

    fn sqrt(&self) -> Self {
        self.monotone(|x, r| {
            if *x <= 0 {
                *x = Float::with_val(x.prec(), 0);
            } else {
                x.sqrt_round(r);
            }
        })
    }

    fn pow(&self, e: &Self) -> Self {
        // x^e is monotone in each argument on x ≥ 0 (in x for e ≥ 0; in e on x ≤ 1 and on
        // x ≥ 1), so the extremes over the box are at its corners.
        let prec = self.prec();
        assert!(self.lo >= 0, "pow of a possibly negative base");
        let corner = |x: &Float, y: &Float, round: Round| {
            let mut z = Float::with_val(prec, x);
            z.pow_assign_round(y, round);
            z
        };
        corner_hull(self, e, corner)
    }

    fn midpoint(&self) -> Self {
        if self.lo.is_infinite() || self.hi.is_infinite() {
            let p = if self.lo.is_infinite() {
                self.hi.clone()
            } else {
                self.lo.clone()
            };
            return MpfrInterval::from_floats(p.clone(), p);
        }
        // (lo + hi)/2 correctly rounded lies in [lo, hi] (rounding is monotone).
        let m = Float::with_val(self.prec(), &self.lo + &self.hi) / 2u32;
        MpfrInterval::from_floats(m.clone(), m)
    }

    fn hull(&self, rhs: &Self) -> Self {
        MpfrInterval::from_floats(lesser(&self.lo, &rhs.lo), greater(&self.hi, &rhs.hi))
    }

    fn clamp_to(&self, lo: &Self, hi: Option<&Self>) -> Self {
        let new_lo = if self.lo >= lo.lo {
            self.lo.clone()
        } else {
            lo.lo.clone()
        };
        let new_hi = match hi {
            Some(h) if h.hi < self.hi => h.hi.clone(),
            _ => self.hi.clone(),
        };
        MpfrInterval::from_floats(new_lo, new_hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> MpfrCtx {
        MpfrCtx { precision: 128 }
    }

    #[test]
    fn operations_enclose_exact_results() {
        let third = Rational::from((1, 3));
        let x = MpfrInterval::from_rational(&third, &ctx());
        let y = MpfrInterval::from_rational(&Rational::from((-2, 7)), &ctx());
        let exact = Rational::from((1, 3)) * Rational::from((-2, 7));
        assert!(x.mul(&y).enclosure().contains(&exact));
        let q = Rational::from((1, 3)) / Rational::from((-2, 7));
        assert!(x.div(&y).enclosure().contains(&q));
        let s = Rational::from((1, 3)) - Rational::from((-2, 7));
        assert!(x.sub(&y).enclosure().contains(&s));
        let mut acc = x.clone();
        acc.add_mul_assign(&x, &x);
        assert!(acc.enclosure().contains(&Rational::from((4, 9))));
        assert!(acc.enclosure().relative_width() < 1e-36);
    }

    #[test]
    fn division_by_interval_with_zero_is_unbounded() {
        let x = MpfrInterval::one(&ctx());
        let z = MpfrInterval::from_floats(Float::with_val(64, -1), Float::with_val(64, 1));
        let r = x.div(&z);
        assert_eq!(r.enclosure().lo(), &Endpoint::NegInf);
        assert_eq!(r.enclosure().hi(), &Endpoint::PosInf);
    }

    #[test]
    fn elementary_functions() {
        let two = MpfrInterval::from_u64(2, &ctx());
        let l = Transcendental::ln(&two);
        // ln 2 = 0.693147180559945309417…
        let below = Rational::from((693_147_180_559_945_309u64, 1_000_000_000_000_000_000u64));
        let above = Rational::from((693_147_180_559_945_310u64, 1_000_000_000_000_000_000u64));
        let e = l.enclosure();
        assert!(e.lo() > &Endpoint::Finite(below) && e.hi() < &Endpoint::Finite(above));
        assert!(e.relative_width() < 1e-36);
        let p = two.pow(&MpfrInterval::from_rational(
            &Rational::from((1, 2)),
            &ctx(),
        ));
        let s = two.sqrt();
        assert!(p.enclosure().overlaps(&s.enclosure()));
        let zero_to_one = MpfrInterval::from_floats(Float::with_val(64, 0), Float::with_val(64, 1));
        assert_eq!(
            Transcendental::ln(&zero_to_one).enclosure().lo(),
            &Endpoint::NegInf
        );
    }
}
