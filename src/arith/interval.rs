//! The `interval` backend: f64 intervals from inari (IEEE 1788), the default.
//!
//! inari rounds every endpoint outward and computes `exp`, `ln`, `pow` with MPFR's directed
//! rounding, so every operation is an enclosure.  Rationals enter through MPFR as well
//! ([`f64_bounds`]), never through a round-to-nearest conversion.

use super::{ExpValue, MpfrInterval, Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use inari::Interval;
use rug::float::Round;
use rug::{Float, Rational};

/// Doubles `lo ≤ q ≤ hi`, each the nearest in its direction.
pub fn f64_bounds(q: &Rational) -> (f64, f64) {
    // 64 bits first, then to double in the same direction: a double rounding in one direction
    // stays a bound in that direction (and handles the subnormal range correctly).
    let (lo, _) = Float::with_val_round(64, q, Round::Down);
    let (hi, _) = Float::with_val_round(64, q, Round::Up);
    (lo.to_f64_round(Round::Down), hi.to_f64_round(Round::Up))
}

fn endpoint(x: f64) -> Endpoint {
    if x == f64::INFINITY {
        Endpoint::PosInf
    } else if x == f64::NEG_INFINITY {
        Endpoint::NegInf
    } else {
        Endpoint::Finite(Rational::from_f64(x).expect("finite double"))
    }
}

fn make(lo: f64, hi: f64) -> Interval {
    Interval::try_from((lo, hi)).expect("valid interval")
}

impl Scalar for Interval {
    type Ctx = ();
    type Elementary = Interval;

    fn to_elementary(&self, _: &()) -> Interval {
        *self
    }

    fn elementary_ctx(_: &()) {}
    const BACKEND: &'static str = "interval";
    const EXACT: bool = false;

    fn truncation_bits(_: &()) -> Option<u32> {
        // 2^-100 of the mode: omitted masses of order 10^-28, far below what doubles resolve
        // in any δ ≥ 10^-12.
        Some(100)
    }

    fn precision_bits(_: &()) -> u32 {
        f64::MANTISSA_DIGITS
    }

    fn estimated_bytes(_: usize, _: &()) -> u64 {
        std::mem::size_of::<Interval>() as u64
    }

    fn from_rational(q: &Rational, _: &()) -> Self {
        let (lo, hi) = f64_bounds(q);
        make(lo, hi)
    }

    fn from_u64(v: u64, _: &()) -> Self {
        if v < (1 << 53) {
            make(v as f64, v as f64)
        } else {
            Self::from_rational(&Rational::from(v), &())
        }
    }

    fn add(&self, rhs: &Self) -> Self {
        *self + *rhs
    }

    fn sub(&self, rhs: &Self) -> Self {
        *self - *rhs
    }

    fn mul(&self, rhs: &Self) -> Self {
        *self * *rhs
    }

    fn div(&self, rhs: &Self) -> Self {
        let q = *self / *rhs;
        // inari returns the empty set for x / [0, 0]; callers treat unbounded results soundly,
        // so report "anything" rather than "nothing".
        if q.is_empty() { Interval::ENTIRE } else { q }
    }

    fn add_assign(&mut self, rhs: &Self) {
        *self += *rhs;
    }

    fn add_mul_assign(&mut self, a: &Self, b: &Self) {
        *self = a.mul_add(*b, *self);
    }

    fn with_upper_slack(&self, slack: &Self) -> Self {
        let top = *self + make(slack.sup(), slack.sup());
        make(self.inf(), top.sup())
    }

    fn pos_part(&self) -> Self {
        make(self.inf().max(0.0), self.sup().max(0.0))
    }

    fn max(&self, rhs: &Self) -> Self {
        make(self.inf().max(rhs.inf()), self.sup().max(rhs.sup()))
    }

    fn certainly_below(&self, bound: &Self) -> bool {
        self.sup() < bound.inf()
    }

    fn is_exact_zero(&self) -> bool {
        self.inf() == 0.0 && self.sup() == 0.0
    }

    fn enclosure(&self) -> Enclosure {
        assert!(!self.is_empty(), "empty interval");
        Enclosure::new(endpoint(self.inf()), endpoint(self.sup()))
    }

    fn exp_rational(q: &Rational, ctx: &()) -> ExpValue<Self> {
        ExpValue::Enclosed(Self::from_rational(q, ctx).exp())
    }

    fn approx_f64(&self) -> f64 {
        self.mid()
    }

    fn f64_bounds(&self) -> (f64, f64) {
        (self.inf(), self.sup())
    }

    fn from_nonneg_f64(approx: f64, rounds: u64, _: &()) -> Option<Self> {
        // (1 − u)^r ≥ 1 − r u (Bernoulli): v ∈ [v̂ (1 − r u), v̂ / (1 − r u)], with 1 − r u
        // enclosed (r < 2^52 is exact as a double, r·u an exact power-of-two scaling).
        if rounds >= 1 << 50 || !(approx >= 0.0 && approx.is_finite()) {
            return None;
        }
        // f = 1 − r u is exact (r < 2^50).  The product and quotient are rounded to nearest and
        // their residuals `v f − p` and `q f − v` are exact by a fused multiply-add (far from
        // underflow), so each end moves one double outward only when it was rounded inward;
        // near underflow it always moves (one spacing outward bounds a rounding to nearest).
        let factor = 1.0 - rounds as f64 * 2f64.powi(-53);
        let (p, q) = (approx * factor, approx / factor);
        let (lo, hi) = if approx > 2f64.powi(-900) {
            (
                if approx.mul_add(factor, -p) < 0.0 {
                    crate::arith::next_down(p)
                } else {
                    p
                },
                if q.mul_add(factor, -approx) < 0.0 {
                    crate::arith::next_up(q)
                } else {
                    q
                },
            )
        } else {
            (
                crate::arith::next_down(p).max(0.0),
                crate::arith::next_up(q),
            )
        };
        Some(make(lo, hi))
    }

    fn to_mpfr(&self, precision: u32) -> MpfrInterval {
        MpfrInterval::from_floats(
            Float::with_val_round(precision, self.inf(), Round::Down).0,
            Float::with_val_round(precision, self.sup(), Round::Up).0,
        )
    }
}

impl Transcendental for Interval {
    fn exp(&self) -> Self {
        Interval::exp(*self)
    }

    fn ln(&self) -> Self {
        assert!(self.sup() > 0.0, "ln of a non-positive interval");
        Interval::ln(*self)
    }

    fn sqrt(&self) -> Self {
        Interval::sqrt(*self)
    }

    fn pow(&self, e: &Self) -> Self {
        Interval::pow(*self, *e)
    }

    fn midpoint(&self) -> Self {
        let m = self.mid();
        make(m, m)
    }

    fn hull(&self, rhs: &Self) -> Self {
        self.convex_hull(*rhs)
    }

    fn clamp_to(&self, lo: &Self, hi: Option<&Self>) -> Self {
        let upper = hi.map_or(f64::INFINITY, |h| h.sup());
        let c = self.intersection(make(lo.inf(), upper));
        assert!(!c.is_empty(), "clamp to a range that excludes the value");
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rationals_are_enclosed() {
        let tenth = Rational::from((1, 10));
        let x = Interval::from_rational(&tenth, &());
        assert!(x.inf() < x.sup());
        assert!(x.enclosure().contains(&tenth));
        let tiny = Rational::from((
            rug::Integer::from(1),
            rug::Integer::from(rug::Integer::u_pow_u(10, 400)),
        ));
        let t = Interval::from_rational(&tiny, &());
        assert_eq!(t.inf(), 0.0);
        assert!(t.sup() > 0.0);
        let half = Interval::from_rational(&Rational::from((1, 2)), &());
        assert!(half.is_singleton());
    }

    #[test]
    fn transcendental_enclosures() {
        let one = Interval::one(&());
        let e = Transcendental::exp(&one);
        let e_lo = Rational::from((2_718_281_828_459_045i64, 1_000_000_000_000_000i64));
        let e_hi = Rational::from((2_718_281_828_459_046i64, 1_000_000_000_000_000i64));
        assert!(
            e.enclosure().contains(&e_lo) || e.enclosure().lo() > &Endpoint::Finite(e_lo.clone())
        );
        assert!(e.enclosure().hi() < &Endpoint::Finite(e_hi));
        let unit = make(0.0, 1.0);
        assert!(Transcendental::ln(&unit).enclosure().lo() == &Endpoint::NegInf);
    }
}
