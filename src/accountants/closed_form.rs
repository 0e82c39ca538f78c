//! The Feldman–McMillan–Talwar closed forms, evaluated in MPFR interval arithmetic.
//!
//! * FMT21 (FOCS 2021, Thm 3.1, ε0-LDP randomizers):
//!   `ε = ln(1 + (a−1)/(a+1) · (8√(a ln(4/δ))/√n + 8a/n))`, valid for `ε0 ≤ ln(n/(16 ln(2/δ)))`;
//! * FMT23 (SODA 2023, Thm 3.2 as corrected by the erratum, arXiv:2208.04591v2):
//!   `ε = ln(1 + (a−1)/(a+1) · (√(32(a+1) ln(4/δ)/(n−1)) + 4(a+1)/(n−1)))`, valid for
//!   `n > 8(a+1) ln(4/δ)`,
//!
//! with `a = e^{ε0}`.  Each value is an enclosure of the formula's exact value; the validity
//! condition is decided by a certified comparison (an undecided comparison is reported as such,
//! never as valid).

use super::Validity;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use rug::Rational;

fn c(v: u64, ctx: &MpfrCtx) -> MpfrInterval {
    MpfrInterval::from_u64(v, ctx)
}

/// `lhs ≤ rhs` decided on enclosures.
fn compare(lhs: &MpfrInterval, rhs: &MpfrInterval, strict: bool) -> Option<bool> {
    let (l, r) = (lhs.enclosure(), rhs.enclosure());
    let holds = if strict {
        l.hi() < r.lo()
    } else {
        l.hi() <= r.lo()
    };
    let fails = if strict {
        l.lo() >= r.hi()
    } else {
        l.lo() > r.hi()
    };
    if holds {
        Some(true)
    } else if fails {
        Some(false)
    } else {
        None
    }
}

fn validity(holds: Option<bool>, statement: String) -> Validity {
    match holds {
        Some(true) => Validity::Valid(statement),
        Some(false) => Validity::Outside(statement),
        None => Validity::Outside(format!("{statement} (undecided at this precision)")),
    }
}

fn short(x: &MpfrInterval) -> String {
    x.enclosure().short(4)
}

/// `(a − 1)/(a + 1)`.
fn contraction(a: &MpfrInterval, ctx: &MpfrCtx) -> MpfrInterval {
    a.sub(&c(1, ctx)).div(&a.add(&c(1, ctx)))
}

/// FMT21 closed form: the value, and whether `ε0 ≤ ln(n/(16 ln(2/δ)))`.
pub fn fmt21(a: &MpfrInterval, n: u64, delta: &Rational, ctx: &MpfrCtx) -> (Enclosure, Validity) {
    let d = MpfrInterval::from_rational(delta, ctx);
    let nn = c(n, ctx);
    let ln4 = c(4, ctx).div(&d).ln();
    let ln2 = c(2, ctx).div(&d).ln();
    let inner = c(8, ctx)
        .mul(&a.mul(&ln4).sqrt())
        .div(&nn.sqrt())
        .add(&c(8, ctx).mul(a).div(&nn));
    let eps = c(1, ctx).add(&contraction(a, ctx).mul(&inner)).ln();
    // ε0 ≤ ln(n / (16 ln(2/δ))) ⟺ e^{ε0} ≤ n / (16 ln(2/δ)).
    let limit = nn.div(&c(16, ctx).mul(&ln2));
    let statement = format!(
        "ε0 ≤ ln(n/(16 ln(2/δ))): e^ε0 ∈ {} against n/(16 ln(2/δ)) ∈ {}",
        short(a),
        short(&limit)
    );
    (
        eps.enclosure(),
        validity(compare(a, &limit, false), statement),
    )
}

/// FMT23 closed form: the value, and whether `n > 8(e^{ε0}+1) ln(4/δ)`.
pub fn fmt23(a: &MpfrInterval, n: u64, delta: &Rational, ctx: &MpfrCtx) -> (Enclosure, Validity) {
    let d = MpfrInterval::from_rational(delta, ctx);
    let ln4 = c(4, ctx).div(&d).ln();
    let a1 = a.add(&c(1, ctx));
    let statement_of = |limit: &MpfrInterval| {
        format!(
            "n > 8(e^ε0+1) ln(4/δ) ∈ {}; the erratum restricts the theorem to a class of \
             randomizers that contains binary randomized response",
            short(limit)
        )
    };
    let limit = c(8, ctx).mul(&a1).mul(&ln4);
    if n < 2 {
        return (
            Enclosure::new(Endpoint::PosInf, Endpoint::PosInf),
            Validity::Outside(statement_of(&limit)),
        );
    }
    let m = c(n - 1, ctx);
    let inner = c(32, ctx)
        .mul(&a1)
        .mul(&ln4)
        .div(&m)
        .sqrt()
        .add(&c(4, ctx).mul(&a1).div(&m));
    let eps = c(1, ctx).add(&contraction(a, ctx).mul(&inner)).ln();
    let holds = compare(&limit, &c(n, ctx), true);
    (eps.enclosure(), validity(holds, statement_of(&limit)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enclosure::parse_rational;

    const CTX: MpfrCtx = MpfrCtx { precision: 256 };

    #[test]
    fn published_figures_for_binary_rr() {
        // ε0 = 1, δ = 1e-5: FMT21 0.5320 / 0.4018 / 0.2712 / 0.1988, FMT23 0.4572 / 0.3424 /
        // 0.2291 / 0.1670 at n = 1000 / 2000 / 5000 / 10000 (Part I Table 6 and the issue).
        let a = Transcendental::exp(&MpfrInterval::one(&CTX));
        let delta = parse_rational("1e-5").unwrap();
        for (n, f21, f23) in [
            (1000, "0.5320", "0.4572"),
            (2000, "0.4018", "0.3424"),
            (5000, "0.2712", "0.2291"),
            (10000, "0.1988", "0.1670"),
        ] {
            let (e21, v21) = fmt21(&a, n, &delta, &CTX);
            let (e23, v23) = fmt23(&a, n, &delta, &CTX);
            assert!(matches!(v21, Validity::Valid(_)) && matches!(v23, Validity::Valid(_)));
            for (e, printed) in [(e21, f21), (e23, f23)] {
                let p = parse_rational(printed).unwrap();
                let half = parse_rational("0.00005").unwrap();
                let lo = Rational::from(&p - &half);
                let hi = Rational::from(&p + &half);
                assert!(
                    e.lo() >= &Endpoint::Finite(lo) && e.hi() <= &Endpoint::Finite(hi),
                    "n = {n}: {e} does not round to {printed}"
                );
                assert!(e.relative_width() < 1e-60);
            }
        }
        // Outside the validity ranges: large ε0 at small n.
        let big = MpfrInterval::from_u64(20, &CTX);
        assert!(matches!(
            fmt21(&big, 1000, &delta, &CTX).1,
            Validity::Outside(_)
        ));
        assert!(matches!(
            fmt23(&big, 1000, &delta, &CTX).1,
            Validity::Outside(_)
        ));
    }
}
