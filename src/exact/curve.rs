//! Privacy curves of a pair: `δ_{Q‖P}(ε) = Σ_N (Q(N) − e^ε P(N))₊` and the reverse
//! `δ_{P‖Q}(ε) = Σ_N (P(N) − e^ε Q(N))₊` (Part I Proposition 8.1), and ε for a target δ.
//!
//! The sums run over every histogram, so mass where one law vanishes (the singular part under
//! one-sided domination, Part I §2.3) is kept automatically: there the term is the other law's
//! mass.  With a truncated pair (omitted mass ω, see [`PairLaw`]) the sum `A` over the kept
//! states gives `δ ∈ [A − e^ε ω, A + ω]`, because
//! `(x + y)₊ ≤ x₊ + Q_d` and `(x + y)₊ ≥ x₊ − e^ε P_d` for `y = Q_d − e^ε P_d`.

use super::law::PairLaw;
use super::ordered::{BLOCK, OrderedSums};
use crate::arith::interval::f64_bounds;
use crate::arith::{ExpValue, Scalar, ln_bracket};
use crate::enclosure::{Enclosure, Endpoint, Tri};
use crate::error::{Error, Result};
use inari::Interval;
use rug::Rational;

/// Which curve: `Qp` is `δ_{Q‖P}` with `Q = T_{n,k+1}`, `P = T_{n,k}`; `Pq` the reverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Qp,
    Pq,
}

impl Direction {
    /// The JSON key suffix: `qp` or `pq`.
    pub fn key(&self) -> &'static str {
        match self {
            Direction::Qp => "qp",
            Direction::Pq => "pq",
        }
    }

    /// `(upper law, lower law)` of the positive-part sum Σ (upper − c · lower)₊.
    fn laws<'a, S>(&self, law: &'a PairLaw<S>) -> (&'a [S], &'a [S]) {
        match self {
            Direction::Qp => (&law.q, &law.p),
            Direction::Pq => (&law.p, &law.q),
        }
    }
}

/// `Σ_i (a_i − c · b_i)₊`.
fn positive_part_sum<S: Scalar>(a: &[S], b: &[S], c: &S, ctx: &S::Ctx) -> S {
    let mut sum = S::zero(ctx);
    for (x, y) in a.iter().zip(b) {
        sum.add_assign(&x.sub(&c.mul(y)).pos_part());
    }
    sum
}

/// Doubles `lo ≤ Σ_i (a_i − c b_i)₊ ≤ hi` for non-negative laws `a`, `b` and every `c` in the
/// threshold, from the values' double bounds, in round-to-nearest with the rounding error
/// bounded (nonnegative-kernel.md, "Positive parts in doubles"): each term is computed from
/// the bounds that make it smallest (largest); a term's error is at most `2.0001 u m`,
/// `m = a_hi + c_hi b_hi`, and none at all where the computed difference is below `−2.01 u m`
/// (both terms are 0 there); the sums add at most `1.002 L u` of themselves.  `None` when a
/// bound is not finite or the laws are too long for that.
fn positive_part_bounds_f64<S: Scalar>(a: &[S], b: &[S], c: &S) -> Option<(f64, f64)> {
    const U: f64 = f64::EPSILON / 2.0;
    let (c_lo, c_hi) = c.f64_bounds();
    let c_lo = c_lo.max(0.0);
    if !c_hi.is_finite() || a.len() as f64 * U > 1e-3 {
        return None;
    }
    let (mut lo, mut hi, mut active) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x_lo, x_hi) = x.f64_bounds();
        let (y_lo, y_hi) = y.f64_bounds();
        let d_lo = x_lo.max(0.0) - c_hi * y_hi;
        let d_hi = x_hi - c_lo * y_lo.max(0.0);
        let m = x_hi + c_hi * y_hi;
        if d_lo.max(d_hi) > -2.01 * U * m {
            active += m;
        }
        lo += d_lo.max(0.0);
        hi += d_hi.max(0.0);
    }
    if !(active.is_finite() && hi.is_finite()) {
        return None;
    }
    let error = 2.1 * U * active + 1.1 * (a.len() as f64 + 1.0) * U * hi;
    Some((
        crate::arith::next_down(lo - error).max(0.0),
        crate::arith::next_up(hi + error),
    ))
}

/// Pairs with fewer states are evaluated directly even when many thresholds are asked.
const ORDER_MIN_STATES: usize = 4 * BLOCK;

/// One direction of a pair's privacy curve, ready to be evaluated at thresholds.
pub struct Curve<'a, S: Scalar> {
    law: &'a PairLaw<S>,
    dir: Direction,
    ctx: &'a S::Ctx,
    /// The states ordered by likelihood ratio, when prepared for many evaluations.
    ordered: Option<OrderedSums>,
    /// The omitted mass and the ratio range as doubles rounded outward (ω and `r_hi` up, `r_lo`
    /// down; `r_hi = ∞` when unbounded), for [`Curve::quick_at_threshold`].
    quick_fold: (f64, f64, f64),
}

/// The f64 interval `[lo, hi]` (everything when an end is NaN or the ends are reversed).
fn interval(lo: f64, hi: f64) -> Interval {
    Interval::try_from((lo, hi)).unwrap_or(Interval::ENTIRE)
}

/// `x` as a degenerate f64 interval (everything when infinite).
fn point(x: f64) -> Interval {
    interval(x, x)
}

fn quick_fold<S: Scalar>(law: &PairLaw<S>) -> (f64, f64, f64) {
    (
        f64_bounds(&law.omitted).1,
        f64_bounds(&law.ratio_lo).0.max(0.0),
        law.ratio_hi
            .as_ref()
            .map_or(f64::INFINITY, |r| f64_bounds(r).1),
    )
}

impl<'a, S: Scalar> Curve<'a, S> {
    /// Each evaluation is one pass over the states.
    pub fn direct(law: &'a PairLaw<S>, dir: Direction, ctx: &'a S::Ctx) -> Self {
        Curve {
            law,
            dir,
            ctx,
            ordered: None,
            quick_fold: quick_fold(law),
        }
    }

    /// Prepared for many evaluations: the states are ordered by likelihood ratio once, and each
    /// evaluation then visits only the states near the threshold (`exact::ordered`).  The exact
    /// backend and small pairs stay direct (the exact backend's sums must stay exact points).
    pub fn indexed(law: &'a PairLaw<S>, dir: Direction, ctx: &'a S::Ctx) -> Self {
        let ordered = (!S::EXACT && law.len() >= ORDER_MIN_STATES).then(|| {
            let (a, b) = dir.laws(law);
            OrderedSums::new(a, b, S::precision_bits(ctx).max(64) + 64)
        });
        Curve {
            law,
            dir,
            ctx,
            ordered,
            quick_fold: quick_fold(law),
        }
    }

    /// Prepared for about `evaluations` thresholds: indexed when that pays off.
    pub fn for_evaluations(
        law: &'a PairLaw<S>,
        dir: Direction,
        ctx: &'a S::Ctx,
        evaluations: usize,
    ) -> Self {
        if evaluations >= 16 {
            Self::indexed(law, dir, ctx)
        } else {
            Self::direct(law, dir, ctx)
        }
    }

    /// δ at the threshold `c` (a backend value enclosing `e^ε`): an enclosure of the curve at
    /// every `e^ε` in `c`, by monotonicity.
    pub fn at_threshold(&self, c: &S) -> Enclosure {
        let (a, b) = self.dir.laws(self.law);
        let kept = match &self.ordered {
            Some(ordered) => ordered.positive_part_sum(a, b, c, self.ctx),
            None => positive_part_sum(a, b, c, self.ctx).enclosure(),
        };
        if self.law.omitted == 0 {
            return self.above_singular(clamp_probability(kept));
        }
        let (up, down) = truncation_coefficients(self.law, self.dir, &c.enclosure());
        let omega = &self.law.omitted;
        let lower = match (kept.lo(), down) {
            (Endpoint::Finite(x), Some(down)) => {
                Endpoint::Finite(x - Rational::from(&down * omega))
            }
            (Endpoint::Finite(_), None) => Endpoint::Finite(Rational::new()),
            (other, _) => other.clone(),
        };
        let upper = match kept.hi() {
            Endpoint::Finite(x) => Endpoint::Finite(x + Rational::from(&up * omega)),
            other => other.clone(),
        };
        self.above_singular(clamp_probability(Enclosure::new(
            lower.min(upper.clone()),
            upper,
        )))
    }

    /// `e` with its lower end raised to the certified lower end of the singular mass the law
    /// carries in closed form ([`super::law::Omission::singular`]): every curve stays at or
    /// above its singular mass, at every ε.  (Both enclose the same curve, so the raised end
    /// stays at or below the upper end; it is capped there all the same.)
    fn above_singular(&self, e: Enclosure) -> Enclosure {
        let Some([qp, pq]) = &self.law.omission.singular else {
            return e;
        };
        let floor = match self.dir {
            Direction::Qp => qp.lo(),
            Direction::Pq => pq.lo(),
        };
        if floor <= e.lo() {
            return e;
        }
        let lo = floor.clone().min(e.hi().clone());
        Enclosure::new(lo, e.hi().clone())
    }

    /// Certified bounds of δ at the threshold `c`, as doubles rounded outward: cheaper than
    /// [`Self::at_threshold`] (no exact-rational bookkeeping) and slightly wider, for decisions
    /// such as pruning that fall back to the exact enclosure when these bounds cannot tell.
    /// The truncation fold is the same inequality, evaluated in f64 interval arithmetic.
    pub fn quick_at_threshold(&self, c: &S) -> (f64, f64) {
        let (a, b) = self.dir.laws(self.law);
        let kept = match &self.ordered {
            Some(ordered) => ordered.positive_part_sum_f64(a, b, c, self.ctx),
            None => match positive_part_bounds_f64(a, b, c) {
                Some((lo, hi)) => interval(lo, hi),
                None => {
                    let (lo, hi) = positive_part_sum(a, b, c, self.ctx).f64_bounds();
                    interval(lo, hi)
                }
            },
        };
        let (lo, hi) = if self.law.omitted == 0 {
            (kept.inf(), kept.sup())
        } else {
            let (omega, r_lo, r_hi) = self.quick_fold;
            let (c_lo, c_hi) = c.f64_bounds();
            let (c_lo, c_hi) = (point(c_lo.max(0.0)), point(c_hi));
            let positive = |x: Interval| x.sup().max(0.0);
            // The coefficients of `truncation_coefficients`, rounded up.
            let (up, down) = match self.dir {
                Direction::Qp => (
                    if r_hi.is_finite() {
                        positive(point(r_hi) - c_lo).min(1.0)
                    } else {
                        1.0
                    },
                    positive(c_hi - point(r_lo)),
                ),
                Direction::Pq => (
                    positive(point(1.0) - c_lo * point(r_lo)),
                    if r_hi.is_finite() {
                        positive(c_hi * point(r_hi) - point(1.0)).min(c_hi.sup())
                    } else {
                        c_hi.sup()
                    },
                ),
            };
            let lower = if down.is_finite() {
                (kept - point(down) * point(omega)).inf()
            } else {
                0.0
            };
            (lower, (kept + point(up) * point(omega)).sup())
        };
        let lo = if lo.is_nan() { 0.0 } else { lo.max(0.0) };
        let hi = if hi.is_nan() { 1.0 } else { hi.min(1.0) };
        (lo.min(hi), hi)
    }

    /// [`Self::quick_at_threshold`] at `ε` (a bracketed `e^ε` is taken at both ends).
    pub fn quick_at_eps(&self, eps: &Rational) -> (f64, f64) {
        match S::exp_rational(eps, self.ctx) {
            ExpValue::Enclosed(c) => self.quick_at_threshold(&c),
            ExpValue::Bracket { lo, hi } => (
                self.quick_at_threshold(&hi).0,
                self.quick_at_threshold(&lo).1,
            ),
        }
    }

    /// [`Self::quick_at_threshold`] at `e^ε = exp_eps`.
    pub fn quick_at_exp(&self, exp_eps: &Rational) -> (f64, f64) {
        self.quick_at_threshold(&S::from_rational(exp_eps, self.ctx))
    }

    /// `δ(ε)` for a rational ε ≥ 0 (its `e^ε` enclosed or bracketed by the backend).
    pub fn at_eps(&self, eps: &Rational) -> Enclosure {
        S::exp_rational(eps, self.ctx).eval_nonincreasing(|c| self.at_threshold(c))
    }

    /// `δ` at `e^ε = exp_eps` given directly as a rational.
    pub fn at_exp(&self, exp_eps: &Rational) -> Enclosure {
        self.at_threshold(&S::from_rational(exp_eps, self.ctx))
    }
}

/// δ at the threshold `c` (a backend value enclosing `e^ε`): an enclosure of the curve at every
/// `e^ε` in `c`, by monotonicity.
pub fn delta_at_threshold<S: Scalar>(
    law: &PairLaw<S>,
    dir: Direction,
    c: &S,
    ctx: &S::Ctx,
) -> Enclosure {
    Curve::direct(law, dir, ctx).at_threshold(c)
}

/// `(up, down)` with `δ ∈ [A − down·ω, A + up·ω]` for the sum A over the kept states.
///
/// Per state the dropped parts add `y = Q_d − cP_d` (Qp) or `y = P_d − cQ_d` (Pq) to the kept
/// difference, and `x₊ − y₋ ≤ (x + y)₊ ≤ x₊ + y₊`.  Since `Q_d = L_d P_d` with `L_d` in the
/// ratio range `[r_lo, r_hi]` and both dropped masses are at most ω:
/// Qp: `y ≤ min(Q_d, (r_hi − c)₊ P_d)`, `y ≥ −(c − r_lo)₊ P_d`;
/// Pq: `y ≤ (1 − c r_lo)₊ P_d`, `y ≥ −min(c Q_d, (c r_hi − 1)₊ P_d)`.
/// `down = None` stands for an unbounded coefficient: the lower end is then only `δ ≥ 0`.
fn truncation_coefficients<S>(
    law: &PairLaw<S>,
    dir: Direction,
    c: &Enclosure,
) -> (Rational, Option<Rational>) {
    let zero = Rational::new();
    let positive = |x: Rational| if x > 0 { x } else { zero.clone() };
    let (c_lo, c_hi) = match (c.lo(), c.hi()) {
        (Endpoint::Finite(a), Endpoint::Finite(b)) => (a.clone(), b.clone()),
        // An unbounded threshold: the coarse bound δ ∈ [0, A + ω].
        _ => return (Rational::from(1), None),
    };
    let r_lo = &law.ratio_lo;
    match dir {
        Direction::Qp => {
            let up = match &law.ratio_hi {
                Some(r_hi) => positive(Rational::from(r_hi - &c_lo)).min(Rational::from(1)),
                None => Rational::from(1),
            };
            (up, Some(positive(Rational::from(&c_hi - r_lo))))
        }
        Direction::Pq => {
            let up = positive(Rational::from(1) - Rational::from(&c_lo * r_lo));
            let down = match &law.ratio_hi {
                Some(r_hi) => positive(Rational::from(&c_hi * r_hi) - 1u32).min(c_hi.clone()),
                None => c_hi,
            };
            (up, Some(down))
        }
    }
}

fn clamp_probability(e: Enclosure) -> Enclosure {
    let one = Endpoint::Finite(Rational::from(1));
    let e = e.clamp_nonnegative();
    let hi = e.hi().clone().min(one.clone());
    let lo = e.lo().clone().min(hi.clone());
    Enclosure::new(lo, hi)
}

/// `δ(ε)` for a rational ε ≥ 0 (its `e^ε` enclosed or bracketed by the backend).
pub fn delta<S: Scalar>(
    law: &PairLaw<S>,
    dir: Direction,
    eps: &Rational,
    ctx: &S::Ctx,
) -> Enclosure {
    Curve::direct(law, dir, ctx).at_eps(eps)
}

/// `δ` at `e^ε = exp_eps` given directly as a rational.
pub fn delta_at_exp<S: Scalar>(
    law: &PairLaw<S>,
    dir: Direction,
    exp_eps: &Rational,
    ctx: &S::Ctx,
) -> Enclosure {
    Curve::direct(law, dir, ctx).at_exp(exp_eps)
}

/// The total variation distance `TV(P, Q) = δ_{Q‖P}(0)`.
pub fn total_variation<S: Scalar>(law: &PairLaw<S>, ctx: &S::Ctx) -> Enclosure {
    delta_at_threshold(law, Direction::Qp, &S::one(ctx), ctx)
}

/// The singular mass of the curve's upper law: `Q(P = 0)` for `Qp`, `P(Q = 0)` for `Pq`.
/// Every curve stays at or above it for all ε.
/// A mechanism's pair carries it in closed form ([`super::law::Omission::singular`]); otherwise
/// it is the stored mass where the other law is exactly zero.
pub fn singular_mass<S: Scalar>(law: &PairLaw<S>, dir: Direction, ctx: &S::Ctx) -> Enclosure {
    if let Some([qp, pq]) = &law.omission.singular {
        return match dir {
            Direction::Qp => qp.clone(),
            Direction::Pq => pq.clone(),
        };
    }
    let (a, b) = dir.laws(law);
    let mut sum = S::zero(ctx);
    for (x, y) in a.iter().zip(b) {
        if y.is_exact_zero() {
            sum.add_assign(x);
        }
    }
    sum.enclosure().clamp_nonnegative()
}

/// A certified ε for a target δ: `eps` encloses `ε* = inf{ε ≥ 0 : δ(ε) ≤ target}`.
#[derive(Clone, Debug)]
pub struct EpsilonCertificate {
    pub eps: Enclosure,
    /// `e^{ε_lo}`-side witness: 1 (the trivial bound ε* ≥ 0) or a threshold with δ > target
    /// certified.
    pub exp_lo: Rational,
    /// A threshold with δ ≤ target certified (`None` when no finite one was found).
    pub exp_hi: Option<Rational>,
    /// δ at `exp_hi`.
    pub delta_at_hi: Option<Enclosure>,
    /// When `eps` is +∞: the singular mass, certified above the target, that keeps δ above it
    /// for every ε.
    pub singular_mass: Option<Enclosure>,
}

/// Checks `0 < target < 1`.
pub fn check_target(target: &Rational) -> Result<()> {
    if *target <= 0 || *target >= 1 {
        return Err(Error::argument(
            "--delta",
            "must lie strictly between 0 and 1",
        ));
    }
    Ok(())
}

/// The smallest ε ≥ 0 with `δ(ε) ≤ target`, enclosed: δ is non-increasing in ε, so a threshold
/// `c_hi` with `δ(c_hi) ≤ target` certified gives `ε* ≤ ln c_hi`, and one with `δ(c_lo) > target`
/// certified gives `ε* ≥ ln c_lo`.  Probe points are chosen by a floating-point secant /
/// bisection heuristic; only the certified evaluations at them enter the result.
pub fn epsilon_for_delta<S: Scalar>(
    law: &PairLaw<S>,
    dir: Direction,
    target: &Rational,
    ctx: &S::Ctx,
) -> Result<EpsilonCertificate> {
    Curve::indexed(law, dir, ctx).epsilon_for(target)
}

impl<S: Scalar> Curve<'_, S> {
    /// The certified ε for a target δ on this curve (see [`epsilon_for_delta`]).
    pub fn epsilon_for(&self, target: &Rational) -> Result<EpsilonCertificate> {
        let (law, dir, ctx) = (self.law, self.dir, self.ctx);
        // Upper bracket: the likelihood-ratio bound (δ(c) = 0 beyond max L) or doubling.
        let vanishes_beyond = match dir {
            Direction::Qp => law.ratio_hi.clone(),
            Direction::Pq if law.ratio_lo > 0 => Some(Rational::from(1) / &law.ratio_lo),
            Direction::Pq => None,
        };
        certified_epsilon(
            |c| self.at_exp(c),
            || singular_mass(law, dir, ctx),
            vanishes_beyond,
            None,
            target,
            S::precision_bits(ctx),
        )
    }
}

/// The certified ε for a target δ of any non-increasing curve `δ(c)`, `c = e^ε`, given as
/// certified evaluations `eval(c)`: `ε* = inf{ε ≥ 0 : δ(e^ε) ≤ target}` is enclosed by a
/// threshold with `δ > target` certified below it and one with `δ ≤ target` certified above.
/// `singular` is the curve's limit as `c → ∞` (evaluated only when δ(1) exceeds the target),
/// `vanishes_beyond` a threshold past which δ is known to be 0 (the first upper probe),
/// `guess` an estimate of `e^{ε*}` (steering only: a bracket around it is probed first), and
/// `precision_bits` sets how far the bracket is refined.
pub fn certified_epsilon(
    eval: impl Fn(&Rational) -> Enclosure,
    singular: impl FnOnce() -> Enclosure,
    vanishes_beyond: Option<Rational>,
    guess: Option<Rational>,
    target: &Rational,
    precision_bits: u32,
) -> Result<EpsilonCertificate> {
    check_target(target)?;
    let tolerance = Rational::from((
        1,
        rug::Integer::from(1) << precision_bits.saturating_sub(12).max(8),
    ));
    // Probes around the guess first.  A certified `δ(c) > target` there makes `δ(1)` unneeded
    // (δ(1) ≥ δ(c)), and a certified `δ(c) ≤ target` makes the singular mass unneeded.
    let mut lo: Option<(Rational, Enclosure)> = None;
    let mut found: Option<(Rational, Enclosure)> = None;
    if let Some(guess) = guess.filter(|g| *g > 1) {
        // A bracket as narrow as the tolerance asks, widened until both sides are certified.
        let width = guess.to_f64() * guess.to_f64().ln() * tolerance.to_f64() / 4.0;
        let mut half = Rational::from_f64(width).filter(|h| *h > 0);
        for _ in 0..6 {
            let Some(h) = half.clone() else { break };
            for c in [Rational::from(&guess - &h), Rational::from(&guess + &h)] {
                let above_lo = c > 1 && lo.as_ref().is_none_or(|(l, _)| c > *l);
                let below_found = found.as_ref().is_none_or(|(f, _)| c < *f);
                if !above_lo || !below_found {
                    continue;
                }
                let d = eval(&c);
                match d.compare(target) {
                    Tri::Less | Tri::Equal => found = Some((c, d)),
                    Tri::Greater => lo = Some((c, d)),
                    Tri::Unknown => {}
                }
            }
            if found.is_some() && lo.is_some() {
                break;
            }
            half = Some(h * 64u32);
        }
    }
    let mut lo = match lo {
        Some(lo) => lo,
        None => {
            let one = Rational::from(1);
            let at_one = eval(&one);
            if matches!(at_one.compare(target), Tri::Less | Tri::Equal) {
                return Ok(EpsilonCertificate {
                    eps: Enclosure::point(Rational::new()),
                    exp_lo: one.clone(),
                    exp_hi: Some(one),
                    delta_at_hi: Some(at_one),
                    singular_mass: None,
                });
            }
            (one, at_one)
        }
    };
    let mut singular_mass = None;
    if found.is_none() {
        let singular = singular();
        if singular.compare(target) == Tri::Greater {
            return Ok(EpsilonCertificate {
                eps: Enclosure::pos_infinity(),
                exp_lo: Rational::from(1),
                exp_hi: None,
                delta_at_hi: None,
                singular_mass: Some(singular),
            });
        }
        singular_mass = Some(singular);
        let mut hi = vanishes_beyond
            .filter(|c| *c > 1)
            .unwrap_or_else(|| Rational::from(2));
        for _ in 0..128 {
            let d = eval(&hi);
            match d.compare(target) {
                Tri::Less | Tri::Equal => {
                    found = Some((hi, d));
                    break;
                }
                Tri::Greater if hi > lo.0 => lo = (hi.clone(), d),
                _ => {}
            }
            hi *= 2;
        }
    }
    let Some((hi, at_hi)) = found else {
        let eps_lo = if lo.0 == 1 {
            Rational::new()
        } else {
            ln_bracket(&lo.0, 64).0
        };
        return Ok(EpsilonCertificate {
            eps: Enclosure::new(Endpoint::Finite(eps_lo), Endpoint::PosInf),
            exp_lo: lo.0,
            exp_hi: None,
            delta_at_hi: None,
            singular_mass,
        });
    };
    let mut search = Search::new(target, lo, (hi, at_hi));
    search.refine(&eval, &tolerance);
    let prec = precision_bits + 64;
    let eps_lo = if search.lo == 1 {
        Rational::new()
    } else {
        ln_bracket(&search.lo, prec).0
    };
    let eps_hi = ln_bracket(&search.hi, prec).1;
    Ok(EpsilonCertificate {
        eps: Enclosure::from_rationals(eps_lo, eps_hi),
        exp_lo: search.lo,
        exp_hi: Some(search.hi),
        delta_at_hi: Some(search.delta_hi),
        singular_mass: None,
    })
}

/// Bracketing state of the ε search: `lo` has δ > target certified (or is 1), `hi` has
/// δ ≤ target certified, and `undecided ⊂ (lo, hi)` spans the probes whose enclosure
/// straddled the target (where the backend's precision no longer decides).
struct Search {
    target: Rational,
    target_ln: f64,
    lo: Rational,
    lo_ln_delta: Option<f64>,
    hi: Rational,
    hi_ln_delta: Option<f64>,
    delta_hi: Enclosure,
    undecided: Option<(Rational, Rational)>,
}

fn midpoint(a: &Rational, b: &Rational) -> Rational {
    Rational::from(a + b) / 2u32
}

impl Search {
    fn new(target: &Rational, lo: (Rational, Enclosure), hi: (Rational, Enclosure)) -> Self {
        Search {
            target: target.clone(),
            target_ln: target.to_f64().ln(),
            lo_ln_delta: positive_ln(&lo.1),
            lo: lo.0,
            hi_ln_delta: positive_ln(&hi.1),
            hi: hi.0,
            delta_hi: hi.1,
            undecided: None,
        }
    }

    fn record(&mut self, c: &Rational, d: &Enclosure, verdict: Tri) {
        match verdict {
            Tri::Greater if *c > self.lo => {
                self.lo = c.clone();
                self.lo_ln_delta = positive_ln(d);
            }
            Tri::Less | Tri::Equal if *c < self.hi => {
                self.hi = c.clone();
                self.hi_ln_delta = positive_ln(d);
                self.delta_hi = d.clone();
            }
            Tri::Unknown => {
                self.undecided = Some(match self.undecided.take() {
                    Some((a, b)) => (a.min(c.clone()), b.max(c.clone())),
                    None => (c.clone(), c.clone()),
                });
            }
            _ => {}
        }
        // Keep the undecided span inside the bracket.
        if let Some((a, b)) = self.undecided.take() {
            let a = a.max(self.lo.clone());
            let b = b.min(self.hi.clone());
            if a > self.lo && b < self.hi && a <= b {
                self.undecided = Some((a, b));
            }
        }
    }

    /// True when `gap` (a width in c) is within the tolerance relative to ε ≈ ln hi.
    fn small(&self, gap: &Rational, tolerance: &Rational) -> bool {
        let ln_hi = self.hi.to_f64().ln().max(1e-300);
        Rational::from(gap / &self.lo) <= Rational::from_f64(ln_hi).unwrap_or_default() * tolerance
    }

    fn converged(&self, tolerance: &Rational) -> bool {
        match &self.undecided {
            None => self.small(&Rational::from(&self.hi - &self.lo), tolerance),
            Some((a, b)) => {
                // The bracket cannot shrink below the undecided span: stop once each gap beside
                // it is small, absolutely or relative to the span.
                let span = Rational::from(b - a);
                let gap_lo = Rational::from(a - &self.lo);
                let gap_hi = Rational::from(&self.hi - b);
                (self.small(&gap_lo, tolerance) || gap_lo <= span)
                    && (self.small(&gap_hi, tolerance) || gap_hi <= span)
            }
        }
    }

    /// Shrinks the bracket until converged (or a step budget is spent).
    fn refine(&mut self, eval: &impl Fn(&Rational) -> Enclosure, tolerance: &Rational) {
        for step in 0..400 {
            if self.converged(tolerance) {
                return;
            }
            let probe = match &self.undecided {
                Some((a, _)) if step % 2 == 0 => midpoint(&self.lo, a),
                Some((_, b)) => midpoint(b, &self.hi),
                None if step % 3 == 0 => midpoint(&self.lo, &self.hi),
                None => self
                    .secant_probe()
                    .unwrap_or_else(|| midpoint(&self.lo, &self.hi)),
            };
            let d = eval(&probe);
            let verdict = d.compare(&self.target);
            self.record(&probe, &d, verdict);
        }
    }

    /// A secant step on `ln δ` against c, kept well inside the bracket (steering only).
    fn secant_probe(&self) -> Option<Rational> {
        let (a, b) = (self.lo.to_f64(), self.hi.to_f64());
        let (fa, fb) = (
            self.lo_ln_delta? - self.target_ln,
            self.hi_ln_delta? - self.target_ln,
        );
        // Brackets beyond the double range (thresholds near e^709 and above) are bisected.
        let finite = [a, b, fa, fb].iter().all(|v| v.is_finite());
        if !finite || fa == fb || (b - a) <= 1e-13 * a {
            return None;
        }
        let x = a - fa * (b - a) / (fb - fa);
        let margin = (b - a) / 64.0;
        if !(x.is_finite() && margin.is_finite() && a + margin < b - margin) {
            return None;
        }
        let x = x.clamp(a + margin, b - margin);
        Rational::from_f64(x).filter(|r| *r > self.lo && *r < self.hi)
    }
}

/// `ln` of an enclosure's midpoint when positive (steering only).
fn positive_ln(e: &Enclosure) -> Option<f64> {
    let m = e.mid_f64();
    (m > 0.0 && m.is_finite()).then(|| m.ln())
}
