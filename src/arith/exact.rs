//! The `exact` backend: GMP rationals ([`rug::Rational`]).  Every operation is exact; `e^q`
//! for rational `q ≠ 0` is irrational and is bracketed by two rationals from MPFR.

use super::mpfr::{MpfrCtx, MpfrInterval};
use super::{ExpValue, Scalar, exp_bracket};
use crate::enclosure::Enclosure;
use rug::Rational;

/// Settings of the exact backend: the MPFR precision of the brackets around the irrational
/// numbers it meets (`e^ε` for a decimal ε, logarithms at the end of a computation).
#[derive(Clone, Copy, Debug)]
pub struct ExactCtx {
    pub bracket_precision: u32,
}

impl Default for ExactCtx {
    fn default() -> Self {
        ExactCtx {
            bracket_precision: 256,
        }
    }
}

impl Scalar for Rational {
    type Ctx = ExactCtx;
    type Elementary = MpfrInterval;

    fn to_elementary(&self, ctx: &ExactCtx) -> MpfrInterval {
        MpfrInterval::from_rational(self, &Self::elementary_ctx(ctx))
    }

    fn elementary_ctx(ctx: &ExactCtx) -> MpfrCtx {
        MpfrCtx {
            precision: ctx.bracket_precision,
        }
    }
    const BACKEND: &'static str = "exact";
    const EXACT: bool = true;

    fn truncation_bits(_: &ExactCtx) -> Option<u32> {
        None
    }

    fn precision_bits(ctx: &ExactCtx) -> u32 {
        ctx.bracket_precision
    }

    fn estimated_bytes(n: usize, _: &ExactCtx) -> u64 {
        // Numerator and denominator grow by a few bits per user.
        64 + 2 * n as u64
    }

    fn from_rational(q: &Rational, _: &ExactCtx) -> Self {
        q.clone()
    }

    fn from_u64(v: u64, _: &ExactCtx) -> Self {
        Rational::from(v)
    }

    fn add(&self, rhs: &Self) -> Self {
        Rational::from(self + rhs)
    }

    fn sub(&self, rhs: &Self) -> Self {
        Rational::from(self - rhs)
    }

    fn mul(&self, rhs: &Self) -> Self {
        Rational::from(self * rhs)
    }

    fn div(&self, rhs: &Self) -> Self {
        assert!(*rhs != 0, "exact backend: division by zero");
        Rational::from(self / rhs)
    }

    fn add_assign(&mut self, rhs: &Self) {
        *self += rhs;
    }

    fn add_mul_assign(&mut self, a: &Self, b: &Self) {
        *self += Rational::from(a * b);
    }

    fn with_upper_slack(&self, slack: &Self) -> Self {
        assert!(
            *slack == 0,
            "exact backend: a truncated sum has no exact value"
        );
        self.clone()
    }

    fn pos_part(&self) -> Self {
        if *self > 0 {
            self.clone()
        } else {
            Rational::new()
        }
    }

    fn max(&self, rhs: &Self) -> Self {
        if self >= rhs {
            self.clone()
        } else {
            rhs.clone()
        }
    }

    fn certainly_below(&self, bound: &Self) -> bool {
        self < bound
    }

    fn is_exact_zero(&self) -> bool {
        *self == 0
    }

    fn enclosure(&self) -> Enclosure {
        Enclosure::point(self.clone())
    }

    fn exp_rational(q: &Rational, ctx: &ExactCtx) -> ExpValue<Self> {
        if *q == 0 {
            return ExpValue::Enclosed(Rational::from(1));
        }
        let (lo, hi) = exp_bracket(q, ctx.bracket_precision);
        ExpValue::Bracket { lo, hi }
    }

    fn approx_f64(&self) -> f64 {
        self.to_f64()
    }

    fn f64_bounds(&self) -> (f64, f64) {
        super::interval::f64_bounds(self)
    }

    fn to_mpfr(&self, precision: u32) -> MpfrInterval {
        MpfrInterval::from_rational(self, &MpfrCtx { precision })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_operations() {
        let ctx = ExactCtx::default();
        let a = Rational::from((1, 3));
        let b = Rational::from((1, 6));
        assert_eq!(a.add(&b), Rational::from((1, 2)));
        assert_eq!(b.sub(&a).pos_part(), Rational::new());
        let mut acc = Rational::from(1);
        acc.add_mul_assign(&a, &b);
        assert_eq!(acc, Rational::from((19, 18)));
        match Rational::exp_rational(&Rational::new(), &ctx) {
            ExpValue::Enclosed(one) => assert_eq!(one, 1),
            _ => panic!("e^0 is rational"),
        }
        match Rational::exp_rational(&Rational::from(1), &ctx) {
            ExpValue::Bracket { lo, hi } => assert!(lo < hi),
            _ => panic!("e is irrational"),
        }
    }
}
