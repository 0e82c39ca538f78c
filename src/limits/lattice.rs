//! Compound-Poisson jump-shift pairs (Part III, Theorem 3.1): `P = L(J)`, `Q = L(J + Δ)` with
//! `J = Σ_i C_i v_i` and independent counts `C_i ~ Poi(λ_i)`, as certified [`PairLaw`]s on the
//! lattice of the jumps.  The Poisson shift (`J = C`, `Δ = 1`, Part II's critical limit) and
//! the Skellam shift (`J = U − V`, `Δ = 1`) are its one-dimensional instances.
//!
//! Each count is kept on a window of its Poisson law (log-concave, so
//! [`log_concave_window`] bounds both tails); the law of J is the convolution of the windows.
//! A lattice point's computed value misses only the combinations with some count outside its
//! window, and for each jump those weigh at most `max_{c ∉ window} Poi(c) ≤ ω_i` at any one
//! point (given the other counts, the point fixes `c_i`), so `[partial, partial + Σ_i ω_i]`
//! encloses the true value (exactly `partial` with a single jump).  The stored states carry these
//! enclosures, so the omitted part lives only on states that are not stored
//! ([`Omission::disjoint`]); see proofs-notes/limit-experiments.md.

use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::exact::binary::{WindowLaw, log_concave_window, upper_bound};
use crate::exact::law::{Layout, Omission, PairLaw};
use rug::{Integer, Rational};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// One jump of the compound-Poisson field: a lattice vector and the Poisson intensity of its
/// count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Jump {
    pub vector: Vec<Rational>,
    pub intensity: Rational,
}

/// The pair `(L(J), L(J + Δ))` with `J = Σ_i C_i v_i`, `C_i ~ Poi(λ_i)` independent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompoundPoisson {
    pub jumps: Vec<Jump>,
    /// Δ, the deterministic shift under Q.
    pub shift: Vec<Rational>,
}

/// Intensities above this are refused (their windows would hold millions of counts; the
/// Gaussian shift is then the relevant limit, Part III §8).
pub const MAX_INTENSITY: u64 = 10_000_000;

/// The largest number of convolution steps (points × window length) of one jump.
const MAX_STATES: f64 = 5.0e7;

impl CompoundPoisson {
    /// Validates the jumps and the shift (`source` names the experiment in errors).
    pub fn new(source: &str, jumps: Vec<Jump>, shift: Vec<Rational>) -> Result<CompoundPoisson> {
        let err = |field: String, message: String| Error::Mechanism {
            source_name: source.to_string(),
            field,
            message,
        };
        if shift.is_empty() {
            return Err(err("shift".into(), "needs at least one coordinate".into()));
        }
        for (i, jump) in jumps.iter().enumerate() {
            if jump.vector.len() != shift.len() {
                return Err(err(
                    format!("jumps[{i}].vector"),
                    format!(
                        "has {} coordinates, the shift has {}",
                        jump.vector.len(),
                        shift.len()
                    ),
                ));
            }
            if jump.intensity < 0 || jump.intensity > MAX_INTENSITY {
                return Err(err(
                    format!("jumps[{i}].intensity"),
                    format!("must lie in [0, {MAX_INTENSITY}]"),
                ));
            }
        }
        Ok(CompoundPoisson { jumps, shift })
    }

    /// The Poisson shift `(Poi(λ), 1 + Poi(λ))`.
    pub fn poisson_shift(lambda: Rational) -> CompoundPoisson {
        CompoundPoisson {
            jumps: vec![Jump {
                vector: vec![Rational::from(1)],
                intensity: lambda,
            }],
            shift: vec![Rational::from(1)],
        }
    }

    /// The Skellam shift `(L(U − V), L(U − V + 1))`, `U ~ Poi(a)`, `V ~ Poi(b)`.
    pub fn skellam_shift(a: Rational, b: Rational) -> CompoundPoisson {
        CompoundPoisson {
            jumps: vec![
                Jump {
                    vector: vec![Rational::from(1)],
                    intensity: a,
                },
                Jump {
                    vector: vec![Rational::from(-1)],
                    intensity: b,
                },
            ],
            shift: vec![Rational::from(1)],
        }
    }

    /// The experiment in integer coordinates (see [`IntegerForm`]).
    fn integer_form(&self) -> Result<IntegerForm> {
        let mut scale = Integer::from(1);
        for x in self.jumps.iter().flat_map(|j| &j.vector).chain(&self.shift) {
            scale.lcm_mut(x.denom());
        }
        let to_int = |v: &[Rational]| -> Result<Vec<i64>> {
            v.iter()
                .map(|x| {
                    (x.numer() * Integer::from(&scale / x.denom()))
                        .to_i64()
                        .filter(|c| c.unsigned_abs() < 1 << 40)
                        .ok_or_else(|| {
                            Error::argument(
                                "--experiment",
                                "lattice coordinates too large (more than 2^40 after clearing denominators)",
                            )
                        })
                })
                .collect()
        };
        let mut merged: Vec<(Vec<i64>, Rational)> = Vec::new();
        for jump in &self.jumps {
            let v = to_int(&jump.vector)?;
            if jump.intensity == 0 || v.iter().all(|&c| c == 0) {
                continue;
            }
            match merged.iter_mut().find(|(w, _)| *w == v) {
                Some((_, l)) => *l += &jump.intensity,
                None => merged.push((v, jump.intensity.clone())),
            }
        }
        let shift = to_int(&self.shift)?;
        Ok(IntegerForm {
            scale,
            jumps: merged,
            shift,
        })
    }
}

/// The lattice scale `D` (the common denominator of every coordinate), the jumps with equal
/// vectors merged (intensities add) and null ones dropped, and the shift, in integer
/// coordinates `D·x`.
struct IntegerForm {
    scale: Integer,
    jumps: Vec<(Vec<i64>, Rational)>,
    shift: Vec<i64>,
}

/// `Poi(λ)` on a window around its mode, cut where the unnormalised value falls below
/// `2^-tau_bits` of the mode's: ratios `λ/(k+1)` up and `k/λ` down (log-concave).
pub fn poisson_window<S: Scalar>(lambda: &Rational, tau_bits: u32, ctx: &S::Ctx) -> WindowLaw<S> {
    if *lambda == 0 {
        return WindowLaw {
            start: 0,
            values: vec![S::one(ctx)],
            omitted: Rational::new(),
        };
    }
    let l = S::from_rational(lambda, ctx);
    let anchor = lambda.clone().floor().numer().to_usize().unwrap_or(0);
    log_concave_window(
        anchor,
        None,
        |k| l.div(&S::from_u64(k as u64 + 1, ctx)),
        |k| S::from_u64(k as u64, ctx).div(&l),
        Some(tau_bits),
        ctx,
    )
}

/// The law of J on the lattice points reached by the windows: `(point, partial value)`.
fn jump_field<S: Scalar>(
    jumps: &[(Vec<i64>, WindowLaw<S>)],
    dim: usize,
    ctx: &S::Ctx,
) -> Result<Vec<(Vec<i64>, S)>> {
    // Each convolution step costs (points so far) × (window length); refused past MAX_STATES.
    let check = |points: usize, window: usize| -> Result<()> {
        let work = points as f64 * window as f64;
        if work > MAX_STATES {
            return Err(Error::argument(
                "--experiment",
                format!(
                    "the jump field needs about {work:.1e} convolution steps (at most {MAX_STATES:.0e}); use fewer or smaller intensities"
                ),
            ));
        }
        Ok(())
    };
    if dim == 1 {
        // Dense: J takes integer values in [lo, lo + len).
        let mut lo = 0i64;
        let mut values = vec![S::one(ctx)];
        for (v, w) in jumps {
            check(values.len(), w.values.len())?;
            let step = v[0];
            let first = step * w.start as i64;
            let last = step * (w.start + w.values.len() - 1) as i64;
            let new_lo = lo + first.min(last);
            let new_len = values.len() + (last - first).unsigned_abs() as usize;
            check(new_len, 1)?;
            let mut out = vec![S::zero(ctx); new_len];
            for (i, x) in values.iter().enumerate() {
                if x.is_exact_zero() {
                    continue;
                }
                for (c, y) in w.values.iter().enumerate() {
                    let point = lo + i as i64 + step * (w.start + c) as i64;
                    out[(point - new_lo) as usize].add_mul_assign(x, y);
                }
            }
            lo = new_lo;
            values = out;
        }
        return Ok(values
            .into_iter()
            .enumerate()
            .filter(|(_, x)| !x.is_exact_zero())
            .map(|(i, x)| (vec![lo + i as i64], x))
            .collect());
    }
    // Ordered maps: the sums below then run in one order, and a certificate is reproducible
    // to the last bit (a hash map's order changes from run to run).
    let mut field: BTreeMap<Vec<i64>, S> = BTreeMap::from([(vec![0; dim], S::one(ctx))]);
    for (v, w) in jumps {
        check(field.len(), w.values.len())?;
        let mut next: BTreeMap<Vec<i64>, S> = BTreeMap::new();
        for (x, px) in &field {
            for (c, y) in w.values.iter().enumerate() {
                let count = (w.start + c) as i64;
                let point = x
                    .iter()
                    .zip(v)
                    .map(|(a, b)| b.checked_mul(count).and_then(|m| a.checked_add(m)))
                    .collect::<Option<Vec<i64>>>()
                    .ok_or_else(|| {
                        Error::argument("--experiment", "lattice coordinates overflow 64 bits")
                    })?;
                next.entry(point)
                    .or_insert_with(|| S::zero(ctx))
                    .add_mul_assign(px, y);
            }
        }
        field = next;
    }
    Ok(field.into_iter().collect())
}

/// True when `y` is certainly outside the support of J: some coordinate has the wrong sign for
/// every jump, or (one dimension) `y` is not a multiple of the jumps' gcd.
fn outside_support(y: &[i64], jumps: &[(Vec<i64>, Rational)]) -> bool {
    if jumps.is_empty() {
        return y.iter().any(|&c| c != 0);
    }
    let sign_blocked = (0..y.len()).any(|k| {
        (y[k] < 0 && jumps.iter().all(|(v, _)| v[k] >= 0))
            || (y[k] > 0 && jumps.iter().all(|(v, _)| v[k] <= 0))
    });
    let gcd_blocked = y.len() == 1 && {
        let g = jumps
            .iter()
            .fold(0u64, |g, (v, _)| gcd(g, v[0].unsigned_abs()));
        g > 1 && y[0].unsigned_abs() % g != 0
    };
    sign_blocked || gcd_blocked
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The certified pair of the experiment, its windows cut at `2^-tau_bits` of their modes (the
/// backend's truncation depth, plus 40 bits when several jumps make the point values
/// approximate).
pub fn pair_law<S: Scalar>(cp: &CompoundPoisson, ctx: &S::Ctx) -> Result<PairLaw<S>> {
    let tau = S::truncation_bits(ctx).ok_or_else(|| {
        Error::argument(
            "--backend",
            "the limit experiments have irrational probabilities (e^-λ); use interval or mpfr",
        )
    })?;
    let IntegerForm {
        scale,
        jumps: merged,
        shift,
    } = cp.integer_form()?;
    let dim = shift.len();
    let window_bits = if merged.len() > 1 { tau + 40 } else { tau };
    let windows: Vec<(Vec<i64>, WindowLaw<S>)> = merged
        .iter()
        .map(|(v, l)| (v.clone(), poisson_window::<S>(l, window_bits, ctx)))
        .collect();
    let field = jump_field(&windows, dim, ctx)?;
    // Per-point slack (module doc) and the mass of every combination with a count outside its
    // window.
    let outside: Rational = windows.iter().map(|(_, w)| w.omitted.clone()).sum();
    let slack_in = if windows.len() > 1 {
        S::from_rational(&outside, ctx)
    } else {
        S::zero(ctx)
    };
    // Keep the points within 2^-tau of the largest value, and their neighbours at ±Δ (their
    // values are the other law's at a kept state); the rest join the omitted mass.
    let top = field
        .iter()
        .map(|(_, x)| x.f64_bounds().1)
        .fold(0.0, f64::max);
    let cut = top * 2f64.powi(-(tau.min(1000) as i32));
    let large: std::collections::HashSet<Vec<i64>> = field
        .iter()
        .filter(|(_, v)| v.f64_bounds().1 >= cut)
        .map(|(x, _)| x.clone())
        .collect();
    let step = |x: &[i64], sign: i64| -> Vec<i64> {
        x.iter()
            .zip(&shift)
            .map(|(a, b)| a.saturating_add(sign.saturating_mul(*b)))
            .collect()
    };
    let mut kept: HashMap<Vec<i64>, S> = HashMap::with_capacity(field.len());
    let mut trimmed = S::zero(ctx);
    for (x, v) in field {
        if large.contains(&x) || large.contains(&step(&x, 1)) || large.contains(&step(&x, -1)) {
            kept.insert(x, v.with_upper_slack(&slack_in));
        } else {
            trimmed.add_assign(&v);
        }
    }
    // P(J ∉ kept) ≤ (trimmed partial sums) + (every combination with a count outside).
    let not_kept = upper_bound(&trimmed) + &outside;
    let value = |y: &[i64]| -> Option<S> {
        match kept.get(y) {
            Some(v) => Some(v.clone()),
            None if outside_support(y, &merged) => Some(S::zero(ctx)),
            None => None,
        }
    };
    let minus = |x: &[i64]| -> Vec<i64> { x.iter().zip(&shift).map(|(a, b)| a - b).collect() };
    let plus = |x: &[i64]| -> Vec<i64> { x.iter().zip(&shift).map(|(a, b)| a + b).collect() };
    let mut points: Vec<Vec<i64>> = kept.keys().cloned().collect();
    points.extend(kept.keys().map(|x| plus(x)));
    points.sort_unstable();
    points.dedup();
    let (mut p, mut q, mut stored) = (Vec::new(), Vec::new(), Vec::new());
    let (mut dropped_p, mut dropped_q) = (S::zero(ctx), S::zero(ctx));
    for x in points {
        match (value(&x), value(&minus(&x))) {
            (Some(a), Some(b)) => {
                if a.is_exact_zero() && b.is_exact_zero() {
                    continue;
                }
                p.push(a);
                q.push(b);
                stored.push(x);
            }
            // A state whose other value is not enclosed tightly is left out: its known value
            // joins the omitted mass (its unknown one is already counted in `not_kept`).
            (a, b) => {
                if let Some(a) = a {
                    dropped_p.add_assign(&a);
                }
                if let Some(b) = b {
                    dropped_q.add_assign(&b);
                }
            }
        }
    }
    // J = 0 has probability at least e^{−Σλ} > 0; when Q vanishes there (−Δ is outside the
    // support) it carries singular mass of P, which makes KL(P‖Q) infinite.  Kept or not, it is
    // stored, with P(0) ∈ [0, P(J ∉ kept)] when it was cut away.
    let origin = vec![0i64; dim];
    if !stored.contains(&origin) && outside_support(&minus(&origin), &merged) {
        let position = stored.partition_point(|x| *x < origin);
        let bound = S::from_rational(&not_kept, ctx);
        p.insert(position, S::zero(ctx).with_upper_slack(&bound));
        q.insert(position, S::zero(ctx));
        stored.insert(position, origin);
    }
    let omitted = (upper_bound(&dropped_p).max(upper_bound(&dropped_q))) + not_kept;
    let size_bias = |target: &[i64]| {
        merged
            .iter()
            .find(|(v, _)| v == target)
            .map(|(_, l)| l.clone())
    };
    let negated: Vec<i64> = shift.iter().map(|c| -c).collect();
    // Δ = 0: P = Q, the likelihood ratio is 1 everywhere (also on the omitted states).
    let null_shift = shift.iter().all(|&c| c == 0);
    Ok(PairLaw {
        p,
        q,
        omitted,
        ratio_lo: Rational::from(u32::from(null_shift)),
        ratio_hi: null_shift.then(|| Rational::from(1)),
        layout: Layout::Lattice {
            points: Arc::new(stored),
            scale,
        },
        omission: Omission {
            disjoint: true,
            size_bias_qp: size_bias(&shift),
            size_bias_pq: size_bias(&negated),
            singular: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
    use inari::Interval;

    /// `e^{−λ} λ^N / N!` in MPFR, for reference.
    fn poisson_pmf(lambda: f64, n: u32) -> f64 {
        let ctx = MpfrCtx { precision: 200 };
        let l = MpfrInterval::from_rational(&Rational::from_f64(lambda).unwrap(), &ctx);
        let mut v = crate::arith::Transcendental::exp(&MpfrInterval::zero(&ctx).sub(&l));
        for k in 1..=n {
            v = v.mul(&l).div(&MpfrInterval::from_u64(k as u64, &ctx));
        }
        v.approx_f64()
    }

    #[test]
    fn poisson_shift_values_and_singular_state() {
        let law =
            pair_law::<Interval>(&CompoundPoisson::poisson_shift(Rational::from(3)), &()).unwrap();
        let Layout::Lattice { points, .. } = &law.layout else {
            panic!("lattice layout")
        };
        // State N = 0 is stored with Q(0) = 0 exactly (the singular mass of δ_{P‖Q}).
        assert_eq!(points[0], vec![0]);
        assert!(law.q[0].is_exact_zero());
        for (i, x) in points.iter().enumerate().take(12) {
            let n = x[0] as u32;
            let (lo, hi) = law.p[i].f64_bounds();
            let exact = poisson_pmf(3.0, n);
            assert!(
                lo <= exact * (1.0 + 1e-12) && exact <= hi * (1.0 + 1e-12),
                "N = {n}"
            );
            if n > 0 {
                let (lo, hi) = law.q[i].f64_bounds();
                let exact = poisson_pmf(3.0, n - 1);
                assert!(lo <= exact * (1.0 + 1e-12) && exact <= hi * (1.0 + 1e-12));
            }
        }
        assert!(law.omitted > 0 && law.omitted < Rational::from((1, 1u64 << 60)));
        assert_eq!(law.omission.size_bias_qp, Some(Rational::from(3)));
        assert_eq!(law.omission.size_bias_pq, None);
    }

    #[test]
    fn skellam_masses_sum_to_one_within_the_omitted_bound() {
        let cp = CompoundPoisson::skellam_shift(Rational::from((5, 2)), Rational::from((3, 2)));
        let law = pair_law::<Interval>(&cp, &()).unwrap();
        for values in [&law.p, &law.q] {
            let mut sum = Interval::zero(&());
            for v in values.iter() {
                sum.add_assign(v);
            }
            let (lo, hi) = sum.f64_bounds();
            let w = law.omitted.to_f64();
            assert!(lo <= 1.0 && 1.0 - w <= hi, "sum [{lo}, {hi}], omitted {w}");
        }
        assert_eq!(law.omission.size_bias_pq, Some(Rational::from((3, 2))));
    }

    #[test]
    fn two_dimensional_field_matches_its_one_dimensional_projection() {
        // J = C1 (1, 0) + C2 (0, 1) + C3 (1, 1), Δ = (1, 0); the first coordinate is
        // Poi(λ1 + λ3), so TV of the projected pair is at most TV of the pair.
        let r = |a: i64, b: i64| Rational::from((a, b));
        let cp = CompoundPoisson::new(
            "test",
            vec![
                Jump {
                    vector: vec![r(1, 1), r(0, 1)],
                    intensity: r(1, 2),
                },
                Jump {
                    vector: vec![r(0, 1), r(1, 1)],
                    intensity: r(1, 3),
                },
                Jump {
                    vector: vec![r(1, 1), r(1, 1)],
                    intensity: r(1, 4),
                },
            ],
            vec![r(1, 1), r(0, 1)],
        )
        .unwrap();
        let law = pair_law::<Interval>(&cp, &()).unwrap();
        let mut total = Interval::zero(&());
        for v in &law.p {
            total.add_assign(v);
        }
        assert!(total.f64_bounds().0 <= 1.0);
        assert!(law.omitted < Rational::from((1, 1u64 << 60)));
        assert_eq!(law.omission.size_bias_qp, Some(r(1, 2)));
        // Q(0) = P(J = −Δ) = P(J = (−1, 0)) = 0 exactly: no jump has a negative coordinate.
        let Layout::Lattice { points, .. } = &law.layout else {
            panic!()
        };
        let origin = points.iter().position(|x| x == &vec![0, 0]).unwrap();
        assert!(law.q[origin].is_exact_zero());
    }
}
