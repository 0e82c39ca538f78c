//! The privacy-blanket bounds of Balle, Bell, Gascón and Nissim (CRYPTO 2019), in the
//! Hoeffding and Bennett forms of their reference code (`shuffleddp/amplification_bounds.py`),
//! for generic ε0-LDP randomizers and for k-ary randomized response, evaluated in MPFR interval
//! arithmetic and inverted for ε by a certified bisection.
//!
//! With `a = e^{ε0}`, `t = e^ε`, `A = t − 1` and the mechanism constants
//!
//! | | γ | b (range) | b₊ (max) | c (second moment) |
//! | --- | --- | --- | --- | --- |
//! | generic | `1/a` | `(t+1)(a − 1/a)` | `a − t/a` | `a(t²+1) − 2t/a³` |
//! | k-RR | `k/(a+k−1)` | `(1−γ)k(t+1)` | `γ(1−t) + (1−γ)k` | `γ(2−γ)(t−1)² + (1−γ)²k(t²+1)` |
//!
//! * Hoeffding: `δ(ε) = b²/(4A γ n) · (1 − γ(1 − e^{−2A²/b²}))^n`;
//! * Bennett: with `α = c/b₊²`, `β = A b₊/c`, `φ(u) = (1+u) ln(1+u) − u`, `κ = αφ(β)`,
//!   `δ(ε) = b₊/(γ n ln(1+β)) · [(1 − γ + γ e^{−κ})^n − (1 − γ)^n]` — the reference code's sum
//!   `Σ_{m≥1} Bin(m; n, γ) e^{−mκ}` in closed form.
//!
//! The bound's ε at a target δ is the crossing of `δ(ε)` with δ on `(0, ε0)`: the bisection
//! keeps a point where `δ(ε) > δ` is certified and one where `δ(ε) ≤ δ` is certified, as the
//! authors' code does with floats (`get_eps`, a root of `δ(ε) − δ` on `[10⁻⁶, ε0]`).

use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use rug::Rational;

/// Which concentration inequality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Hoeffding,
    Bennett,
}

/// Which randomizer the constants describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Randomizer {
    /// Any ε0-LDP randomizer.
    Generic,
    /// k-ary randomized response.
    KRr(u32),
}

fn c(v: u64, ctx: &MpfrCtx) -> MpfrInterval {
    MpfrInterval::from_u64(v, ctx)
}

/// The bound's `δ(ε)` for `a = e^{ε0}`, n users, at a rational `ε > 0`.
pub fn delta(
    form: Form,
    randomizer: Randomizer,
    a: &MpfrInterval,
    n: u64,
    eps: &Rational,
    ctx: &MpfrCtx,
) -> MpfrInterval {
    let one = c(1, ctx);
    let t = Transcendental::exp(&MpfrInterval::from_rational(eps, ctx));
    let big_a = t.sub(&one);
    let nn = c(n, ctx);
    let gamma = match randomizer {
        Randomizer::Generic => one.div(a),
        Randomizer::KRr(k) => c(u64::from(k), ctx).div(&a.add(&c(u64::from(k) - 1, ctx))),
    };
    let rest = one.sub(&gamma);
    match form {
        Form::Hoeffding => {
            let b = match randomizer {
                Randomizer::Generic => t.add(&one).mul(&a.sub(&one.div(a))),
                Randomizer::KRr(k) => rest.mul(&c(u64::from(k), ctx)).mul(&t.add(&one)),
            };
            let b2 = b.mul(&b);
            let decay = MpfrInterval::zero(ctx)
                .sub(&c(2, ctx).mul(&big_a).mul(&big_a).div(&b2))
                .exp();
            let base = one.sub(&gamma.mul(&one.sub(&decay)));
            b2.div(&c(4, ctx).mul(&big_a).mul(&gamma).mul(&nn))
                .mul(&base.pow(&nn))
        }
        Form::Bennett => {
            let (b_plus, second) = match randomizer {
                Randomizer::Generic => {
                    let a3 = a.mul(a).mul(a);
                    (
                        a.sub(&t.div(a)),
                        a.mul(&t.mul(&t).add(&one)).sub(&c(2, ctx).mul(&t).div(&a3)),
                    )
                }
                Randomizer::KRr(k) => {
                    let k = c(u64::from(k), ctx);
                    (
                        gamma.mul(&one.sub(&t)).add(&rest.mul(&k)),
                        gamma
                            .mul(&c(2, ctx).sub(&gamma))
                            .mul(&big_a)
                            .mul(&big_a)
                            .add(&rest.mul(&rest).mul(&k).mul(&t.mul(&t).add(&one))),
                    )
                }
            };
            let alpha = second.div(&b_plus.mul(&b_plus));
            let beta = big_a.mul(&b_plus).div(&second);
            let log1p = one.add(&beta).ln();
            let phi = one.add(&beta).mul(&log1p).sub(&beta);
            let kappa = alpha.mul(&phi);
            let decay = MpfrInterval::zero(ctx).sub(&kappa).exp();
            let with = rest.add(&gamma.mul(&decay)).pow(&nn);
            let without = rest.pow(&nn);
            b_plus
                .div(&gamma.mul(&nn).mul(&log1p))
                .mul(&with.sub(&without))
        }
    }
}

/// The first crossing of the bound's `δ(ε)` with `target` on `(0, eps0_lo)`: an enclosure
/// `[ε_lo, ε_hi]` with `δ(ε_lo) > target` (or `ε_lo = 0`) and `δ(ε_hi) ≤ target` certified, or
/// `None` when `δ ≤ target` is certified at no point of a grid on `(0, ε0)`.
pub fn epsilon(
    form: Form,
    randomizer: Randomizer,
    a: &MpfrInterval,
    n: u64,
    target: &Rational,
    eps0_lo: &Rational,
    ctx: &MpfrCtx,
) -> Option<Enclosure> {
    let at = |e: &Rational| delta(form, randomizer, a, n, e, ctx).enclosure();
    let d = Endpoint::Finite(target.clone());
    if *eps0_lo <= 0 {
        return None;
    }
    // The bracket: the first point of a grid on (0, ε0) where δ ≤ target is certified (the
    // bound's δ(ε) need not be monotone up to ε0: for larger ε0 it falls and rises again, and
    // Bennett's k-RR form degenerates at ε0 itself), and the grid point before it where
    // δ > target is certified (0, where the formula is +∞, when there is none).
    const GRID: u32 = 256;
    let mut lo = Rational::new();
    let mut hi = None;
    for j in 1..GRID {
        let e = Rational::from(eps0_lo * Rational::from((j, GRID)));
        let value = at(&e);
        if value.hi() <= &d {
            hi = Some(e);
            break;
        }
        if value.lo() > &d {
            lo = e;
        }
    }
    let mut hi = hi?;
    let tolerance = Rational::from((1, rug::Integer::from(1) << 70u32));
    while Rational::from(&hi - &lo) > Rational::from(&hi * &tolerance) {
        let mid = Rational::from(&lo + &hi) / 2u32;
        let value = at(&mid);
        if value.hi() <= &d {
            hi = mid;
        } else if value.lo() > &d {
            lo = mid;
        } else {
            break;
        }
    }
    Some(Enclosure::from_rationals(lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enclosure::parse_rational;

    const CTX: MpfrCtx = MpfrCtx { precision: 256 };

    #[test]
    fn hoeffding_for_binary_randomized_response_reproduces_the_published_figures() {
        // Balle et al. Hoeffding, RR with k = 2, ε0 = 1, δ = 1e-5: 0.15008 / 0.10331 / 0.06307 /
        // 0.04339 at n = 1000 / 2000 / 5000 / 10000.
        let a = Transcendental::exp(&MpfrInterval::one(&CTX));
        let target = parse_rational("1e-5").unwrap();
        let eps0 = Rational::from(1);
        for (n, printed) in [
            (1000, "0.15008"),
            (2000, "0.10331"),
            (5000, "0.06307"),
            (10000, "0.04339"),
        ] {
            let e = epsilon(
                Form::Hoeffding,
                Randomizer::KRr(2),
                &a,
                n,
                &target,
                &eps0,
                &CTX,
            )
            .unwrap();
            let p = parse_rational(printed).unwrap();
            let half = parse_rational("0.000005").unwrap();
            assert!(
                e.lo() >= &Endpoint::Finite(Rational::from(&p - &half))
                    && e.hi() <= &Endpoint::Finite(Rational::from(&p + &half)),
                "n = {n}: {e} vs {printed}"
            );
            assert!(e.relative_width() < 1e-18);
        }
    }

    #[test]
    fn bennett_and_generic_forms_are_larger_where_expected() {
        let a = Transcendental::exp(&MpfrInterval::one(&CTX));
        let target = parse_rational("1e-5").unwrap();
        let eps0 = Rational::from(1);
        let run = |form, r| epsilon(form, r, &a, 1000, &target, &eps0, &CTX).unwrap();
        // The generic constants describe every ε0-LDP randomizer, so they cannot beat RR's.
        for form in [Form::Hoeffding, Form::Bennett] {
            assert!(run(form, Randomizer::Generic).lo() > run(form, Randomizer::KRr(2)).hi());
        }
        // For ε0 = 6 the RR forms' δ(ε) falls and rises again before ε0: the crossing is still
        // found, and the bound certifies δ ≤ target there.
        let a6 = Transcendental::exp(&MpfrInterval::from_u64(6, &CTX));
        let target4 = parse_rational("1e-4").unwrap();
        for form in [Form::Hoeffding, Form::Bennett] {
            let e = epsilon(
                form,
                Randomizer::KRr(2),
                &a6,
                10_000,
                &target4,
                &Rational::from(6),
                &CTX,
            )
            .expect("a crossing below ε0");
            let hi = e.hi().finite().unwrap().clone();
            assert!(hi < 6);
            let at = delta(form, Randomizer::KRr(2), &a6, 10_000, &hi, &CTX).enclosure();
            assert!(
                at.hi() <= &Endpoint::Finite(target4.clone()),
                "{form:?}: {at}"
            );
        }
        // No amplification below ε0 for a single user.
        assert!(
            epsilon(
                Form::Hoeffding,
                Randomizer::Generic,
                &a,
                1,
                &target,
                &eps0,
                &CTX
            )
            .is_none()
        );
    }
}
