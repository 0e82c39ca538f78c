//! The standard normal law as enclosures: `Φ(x) = ½ erfc(−x/√2)` and
//! `φ(x) = e^{−x²/2}/√(2π)`, from MPFR's correctly rounded `erfc`, `exp`, `sqrt` and π with
//! directed rounding — never from libm or `f64` erf.

use super::mpfr::{MpfrCtx, MpfrInterval};
use super::{Scalar, Transcendental};
use rug::Float;
use rug::float::{Constant, Round};

/// π enclosed.
pub fn pi(ctx: &MpfrCtx) -> MpfrInterval {
    MpfrInterval::from_floats(
        Float::with_val_round(ctx.precision, Constant::Pi, Round::Down).0,
        Float::with_val_round(ctx.precision, Constant::Pi, Round::Up).0,
    )
}

/// `erfc` over an interval: decreasing, so `[erfc(hi)↓, erfc(lo)↑]`.
pub fn erfc(x: &MpfrInterval) -> MpfrInterval {
    let mut lo = x.hi().clone();
    lo.erfc_round(Round::Down);
    let mut hi = x.lo().clone();
    hi.erfc_round(Round::Up);
    MpfrInterval::from_floats(lo, hi)
}

/// `Φ(x)`, the standard normal distribution function, over an interval (increasing).
pub fn normal_cdf(x: &MpfrInterval, ctx: &MpfrCtx) -> MpfrInterval {
    let half = MpfrInterval::from_rational(&rug::Rational::from((1, 2)), ctx);
    let sqrt2 = MpfrInterval::from_u64(2, ctx).sqrt();
    let u = MpfrInterval::zero(ctx).sub(x).div(&sqrt2);
    half.mul(&erfc(&u))
}

/// `φ(x)`, the standard normal density, over an interval.
pub fn normal_pdf(x: &MpfrInterval, ctx: &MpfrCtx) -> MpfrInterval {
    let half = MpfrInterval::from_rational(&rug::Rational::from((1, 2)), ctx);
    // x² as an interval: |x|² so that an interval straddling 0 gives [0, max²].
    let square = if x.lo() >= &0 || x.hi() <= &0 {
        x.mul(x)
    } else {
        let m = if -x.lo().clone() > *x.hi() {
            -x.lo().clone()
        } else {
            x.hi().clone()
        };
        let m = MpfrInterval::from_floats(Float::with_val(x.lo().prec(), 0), m);
        m.mul(&m)
    };
    let two_pi = MpfrInterval::from_u64(2, ctx).mul(&pi(ctx));
    MpfrInterval::zero(ctx)
        .sub(&half.mul(&square))
        .exp()
        .div(&two_pi.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enclosure::parse_rational;

    const CTX: MpfrCtx = MpfrCtx { precision: 128 };

    fn point(s: &str) -> MpfrInterval {
        MpfrInterval::from_rational(&parse_rational(s).unwrap(), &CTX)
    }

    #[test]
    fn normal_law_values() {
        // Φ(0) = 1/2 exactly; Φ(1.96) = 0.9750021048517795…; φ(0) = 1/√(2π) = 0.3989422804014327…
        assert!(
            normal_cdf(&point("0"), &CTX)
                .enclosure()
                .contains(&parse_rational("0.5").unwrap())
        );
        let c = normal_cdf(&point("1.96"), &CTX).enclosure();
        assert!(
            c.lo()
                > &crate::enclosure::Endpoint::Finite(parse_rational("0.97500210485177").unwrap())
        );
        assert!(
            c.hi()
                < &crate::enclosure::Endpoint::Finite(parse_rational("0.97500210485178").unwrap())
        );
        let p = normal_pdf(&point("0"), &CTX).enclosure();
        assert!(
            p.lo()
                > &crate::enclosure::Endpoint::Finite(parse_rational("0.39894228040143").unwrap())
        );
        assert!(
            p.hi()
                < &crate::enclosure::Endpoint::Finite(parse_rational("0.39894228040144").unwrap())
        );
        assert!(p.relative_width() < 1e-35);
        // Symmetry φ(−x) = φ(x), and an interval straddling 0 contains φ(0).
        let wide = MpfrInterval::from_floats(Float::with_val(128, -1), Float::with_val(128, 2));
        assert!(normal_pdf(&wide, &CTX).enclosure().overlaps(&p));
    }
}
