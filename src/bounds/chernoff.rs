//! A cheap certified upper bound on one blanket sum (proofs-notes/chernoff-pruning.md): it lets
//! a range skip the ordered pairs (and triples) that cannot reach its ends.
//!
//! With the classes of [`super::upper`], `D(t) = (1/n) E[(S)₊]` where `S = Σ_{i≤n} Z_i` and the
//! `Z_i` are independent, `Z = u_c − t v_c` with probability `mass_c` and `Z = 0` with
//! probability `1 − γ` (outside the blanket).  For every `s > 0`, `x₊ ≤ e^{sx}/(e s)` (the
//! tangent of `e^{sx}` at `x = 1/s`), and `S = 0` when every user is outside the blanket, so
//!
//! `D(t) ≤ (ψ(s)^n − (1 − γ)^n) / (e s n)`,  `ψ(s) = 1 − γ + Σ_c mass_c e^{s(u_c − t v_c)}`.
//!
//! `s` is chosen in doubles (steering only); the bound at that `s` is evaluated in MPFR
//! intervals, so it holds whatever `s` is.  It is non-increasing in `t` (every `v_c > 0`), so a
//! bound at some `t0` holds at every `t ≥ t0`.  The reverse direction swaps `u` and `v`.

use super::upper::Class;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental, power};
use crate::enclosure::Endpoint;
use rug::Rational;

/// Bits of the MPFR evaluation: `ψ^n` loses about `log2 n` bits, far within it.
const PRECISION: u32 = 128;

/// The bound at one threshold in one direction, with the `s` it was evaluated at.
#[derive(Clone, Debug, PartialEq)]
pub struct ChernoffBound {
    /// The threshold `t` it bounds `D` at (and above).
    pub t: Rational,
    /// The tilt (a double, so an exact dyadic rational); 0 when no class has `u > t v`, where
    /// `D(t) = 0` exactly.
    pub s: Rational,
    /// A certified upper bound on `D(t)`.
    pub value: Rational,
}

/// One blanket sum's classes, as the bound reads them.
pub struct Sum<'a> {
    pub classes: &'a [Class],
    pub gamma: &'a Rational,
    pub n: u64,
}

impl Sum<'_> {
    /// `(mass_c, z_c)` in doubles for direction `reverse` at `t` (steering only).
    fn terms(&self, t: f64, reverse: bool) -> Vec<(f64, f64)> {
        self.classes
            .iter()
            .map(|c| {
                let (u, v) = if reverse { (&c.v, &c.u) } else { (&c.u, &c.v) };
                (c.mass.to_f64(), u.to_f64() - t * v.to_f64())
            })
            .collect()
    }

    /// `(ln ψ(s), ψ′(s)/ψ(s))` in doubles.
    fn log_psi(&self, terms: &[(f64, f64)], s: f64) -> (f64, f64) {
        let outside = (1.0 - self.gamma.to_f64()).max(0.0);
        let top = terms
            .iter()
            .filter(|(m, _)| *m > 0.0)
            .map(|(_, z)| s * z)
            .fold(if outside > 0.0 { 0.0 } else { f64::MIN }, f64::max);
        let (mut psi, mut slope) = (outside * (-top).exp(), 0.0);
        for &(m, z) in terms {
            let e = m * (s * z - top).exp();
            psi += e;
            slope += z * e;
        }
        (top + psi.ln(), slope / psi)
    }

    /// The natural log of the bound at `s` in doubles (steering only).
    fn log_bound(&self, terms: &[(f64, f64)], s: f64) -> f64 {
        let n = self.n as f64;
        let (ln_psi, _) = self.log_psi(terms, s);
        let all_outside = n * (1.0 - self.gamma.to_f64()).ln();
        let diff = all_outside - n * ln_psi;
        n * ln_psi + (-diff.exp()).ln_1p() - (std::f64::consts::E * s * n).ln()
    }

    /// The `s` minimising the bound (a convex problem in `ln ψ` and `−ln s`), by bisection on
    /// its derivative `n ψ′/ψ − 1/s`; `None` when no class can make `S` positive at `t`.
    fn best_s(&self, t: f64, reverse: bool) -> Option<f64> {
        let terms = self.terms(t, reverse);
        if !terms.iter().any(|&(m, z)| m > 0.0 && z > 0.0) {
            return None;
        }
        let n = self.n as f64;
        let slope = |s: f64| n * self.log_psi(&terms, s).1 - 1.0 / s;
        let (mut lo, mut hi) = (0.0, 1.0);
        while slope(hi) < 0.0 {
            lo = hi;
            hi *= 2.0;
            if hi > 1e12 {
                return None;
            }
        }
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if slope(mid) < 0.0 { lo = mid } else { hi = mid }
        }
        Some(hi).filter(|s| s.is_finite() && *s > 0.0)
    }

    /// The natural log of the best bound at `t` in doubles (for ranking and quick rejection;
    /// `−∞` when `D(t) = 0` certainly).
    pub fn approx_log_bound(&self, t: f64, reverse: bool) -> f64 {
        match self.best_s(t, reverse) {
            Some(s) => self.log_bound(&self.terms(t, reverse), s),
            None => f64::NEG_INFINITY,
        }
    }

    /// The certified bound at `t` with the `s` chosen in doubles (`s = 0` and the value 0 when
    /// no class has `u > t v`); `None` when the doubles find no `s`.
    pub fn bound(&self, t: &Rational, reverse: bool) -> Option<ChernoffBound> {
        let s = match self.best_s(t.to_f64(), reverse) {
            Some(s) => Rational::from_f64(s)?,
            None => Rational::new(),
        };
        let value = self.bound_at(t, &s, reverse)?;
        Some(ChernoffBound {
            t: t.clone(),
            s,
            value,
        })
    }

    /// The bound at `t` and a given `s > 0`, evaluated in MPFR intervals (its upper end); at
    /// `s = 0`, the value 0 when no class has `u > t v` (then `S ≤ 0` surely, so `D(t) = 0`), and
    /// `None` otherwise.
    pub fn bound_at(&self, t: &Rational, s: &Rational, reverse: bool) -> Option<Rational> {
        if *s < 0 {
            return None;
        }
        if *s == 0 {
            let never_positive = self.classes.iter().all(|c| {
                let (u, v) = if reverse { (&c.v, &c.u) } else { (&c.u, &c.v) };
                *u <= Rational::from(t * v)
            });
            return never_positive.then(Rational::new);
        }
        let ctx = MpfrCtx {
            precision: PRECISION,
        };
        let at = |q: &Rational| MpfrInterval::from_rational(q, &ctx);
        let outside = at(&Rational::from(1 - self.gamma));
        let mut psi = outside.clone();
        for c in self.classes {
            let (u, v) = if reverse { (&c.v, &c.u) } else { (&c.u, &c.v) };
            let z = u - Rational::from(t * v);
            psi = psi.add(&at(&c.mass).mul(&at(&Rational::from(s * &z)).exp()));
        }
        let numerator = power(&psi, self.n, &ctx).sub(&power(&outside, self.n, &ctx));
        let e = MpfrInterval::one(&ctx).exp();
        let denominator = e.mul(&at(&Rational::from(s * self.n)));
        match numerator.div(&denominator).enclosure().hi() {
            Endpoint::Finite(v) => Some(v.clone()),
            _ => None,
        }
    }
}

/// `ln q` as a double (−∞ for 0), for rationals far outside the double range too (steering only).
pub fn ln_f64(q: &Rational) -> f64 {
    if *q <= 0 {
        return f64::NEG_INFINITY;
    }
    rug::Float::with_val(64, q).ln().to_f64()
}

/// Bits of the thresholds bounds are evaluated at (any rational below the true threshold
/// holds; 64 bits keep certificates short).
const THRESHOLD_BITS: u32 = 64;

/// A rational at most `e^{eps}`, where a bound is evaluated for a threshold `e^{eps}` (`D` is
/// non-increasing, so a bound there holds at `e^{eps}`; for an ε row, a pair whose `D` there is
/// at most the target δ has its ε at most `eps`).
pub fn threshold_below_exp(eps: &Rational) -> Rational {
    crate::arith::exp_bracket(eps, THRESHOLD_BITS).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::upper::Exact;
    use crate::mechanism::randomizer::load_randomizer;

    /// The bound is above the certified sum at every threshold tried, in both directions, for
    /// a blanket pair and a concrete (reference) pair.
    #[test]
    fn the_bound_is_above_the_sum_it_bounds() {
        let r = load_randomizer(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/randomizers/three-inputs.toml"
        ))
        .expect("fixture");
        let exact = Exact::of(&r).expect("rational");
        for (classes, gamma) in [
            exact.blanket_classes(0, 2),
            exact.reference_classes(0, 2, 1),
        ] {
            for n in [1u64, 5, 20] {
                let sum = Sum {
                    classes: &classes,
                    gamma: &gamma,
                    n,
                };
                for t in [Rational::from(1), Rational::from((3, 2)), Rational::from(2)] {
                    for reverse in [false, true] {
                        let exact_value = exact_sum(&classes, &gamma, n, &t, reverse);
                        let b = sum.bound(&t, reverse).expect("a bound");
                        assert!(
                            b.value >= exact_value,
                            "n = {n}, t = {t}: {} < {exact_value}",
                            b.value
                        );
                        assert_eq!(sum.bound_at(&t, &b.s, reverse), Some(b.value.clone()));
                    }
                }
            }
        }
    }

    /// `(1/n) E[(S)₊]` by enumerating every sequence of classes (small n only).
    fn exact_sum(
        classes: &[Class],
        gamma: &Rational,
        n: u64,
        t: &Rational,
        reverse: bool,
    ) -> Rational {
        // The law of S over its distinct values, one user at a time.
        let mut law: Vec<(Rational, Rational)> = vec![(Rational::new(), Rational::from(1))];
        let mut steps: Vec<(Rational, Rational)> = classes
            .iter()
            .map(|c| {
                let (u, v) = if reverse { (&c.v, &c.u) } else { (&c.u, &c.v) };
                (c.mass.clone(), u - Rational::from(t * v))
            })
            .collect();
        steps.push((Rational::from(1 - gamma), Rational::new()));
        for _ in 0..n {
            let mut next: std::collections::BTreeMap<Rational, Rational> = Default::default();
            for (value, p) in &law {
                for (m, z) in &steps {
                    *next.entry(Rational::from(value + z)).or_default() += Rational::from(p * m);
                }
            }
            law = next.into_iter().collect();
        }
        law.into_iter()
            .filter(|(v, _)| *v > 0)
            .map(|(v, p)| v * p)
            .sum::<Rational>()
            / n
    }
}
