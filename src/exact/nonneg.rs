//! The non-negative f64 kernel (proofs-notes/nonnegative-kernel.md).
//!
//! Every term of a histogram law is a sum of products of non-negative numbers, so plain f64
//! arithmetic (round to nearest, no switching of rounding modes) has an a-priori relative
//! error bound: with `u = 2^-53`, a stored `v̂` whose computation involved at most `r`
//! roundings (each a factor `1 + θ` or `1/(1 + θ)`, `|θ| ≤ u`) satisfies
//!
//! `v̂ (1 − u)^r ≤ v ≤ v̂ (1 − u)^{−r}`,
//!
//! as long as no intermediate result leaves the normal range.  A sum of non-negative terms
//! carrying at most `r` roundings each, added one after the other `t` times, carries at most
//! `r + t`; a product of values with `r_a` and `r_b` carries `r_a + r_b + 1`.  One user step
//! `H'(N) = Σ_y w(y) H(N − e_y)` therefore adds `r_w + d` to the count, `r_w` that of the
//! weights.  Each value keeps its own count (the largest it reads, plus `r_w + d`), turned into an enclosure only
//! at the end, by `(1 − u)^r ≥ 1 − r·u` (Bernoulli).
//!
//! The normal range is kept by pruning: every kept value is at least `2^-1000 / w_min`, so
//! every product `w(y)·H(N − e_y)` is at least `2^-1000`, far above the subnormals.  Dropped
//! values are summed, and their sum bounded with its own count, into the omitted mass.  Signed
//! quantities (curves, divergences) stay in interval arithmetic.

use super::window::{WindowSet, WindowedLaw, gather};
use crate::arith::Scalar;
use rug::Rational;
use std::sync::Arc;

/// `u = 2^-53`, the unit roundoff of round-to-nearest doubles.
const UNIT: f64 = 1.0 / 9_007_199_254_740_992.0;

/// The counts stay far from `1/u`, so that `1 − r·u` is a useful bound.
const MAX_ROUNDS: u64 = 1 << 31;

/// Products of kept values and weights stay at or above this (normal doubles reach 2^-1022).
const FLOOR: f64 = 9.332_636_185_032_189e-302; // 2^-1000

/// Non-negative doubles, each with its own rounding count (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Counted {
    pub values: Vec<f64>,
    pub rounds: Vec<u32>,
}

/// The count `r` with `v̂ (1 − u)^r ≤ lo` and `hi ≤ v̂ (1 − u)^{−r}` for a point `v̂ ∈ [lo, hi]`,
/// `0 < lo`; `None` beyond [`MAX_ROUNDS`].
///
/// Since `(1 − u)^r ≤ 1/(1 + r u)` and `(1 − u)^{−r} ≥ 1 + r u`, it suffices that
/// `r u ≥ v̂/lo − 1` and `r u ≥ hi/v̂ − 1`.  Each quotient (at most 2 here) is rounded once, an
/// error below `2u`; subtracting 1 is exact (Sterbenz) and dividing by `u` is an exact scaling,
/// so the computed need is within 2 of the true one, and the margin of 2 covers it.
fn rounds_for(approx: f64, lo: f64, hi: f64) -> Option<u32> {
    let need = (approx / lo - 1.0).max(hi / approx - 1.0).max(0.0) / UNIT;
    (need.is_finite() && need < MAX_ROUNDS as f64).then(|| need.ceil() as u32 + 2)
}

/// A non-negative enclosure `[lo, hi]` as a point and a count, `0 < lo ≤ hi`.
fn counted_point(lo: f64, hi: f64) -> Option<(f64, u32)> {
    let approx = (lo + (hi - lo) / 2.0).clamp(lo, hi);
    if hi > 2.0 * lo {
        return None;
    }
    Some((approx, rounds_for(approx, lo, hi)?))
}

/// The weights of one user as doubles with a common count, and the smallest non-zero one
/// (`None` when a weight is not certainly positive or zero).
fn counted_weights<S: Scalar>(w: &[S]) -> Option<(Vec<f64>, u32, f64)> {
    let mut out = Vec::with_capacity(w.len());
    let mut rounds = 0;
    let mut min = f64::INFINITY;
    for x in w {
        if x.is_exact_zero() {
            out.push(0.0);
            continue;
        }
        let (lo, hi) = x.f64_bounds();
        if !(lo > 0.0 && hi.is_finite()) {
            return None;
        }
        let (v, r) = counted_point(lo, hi)?;
        out.push(v);
        rounds = rounds.max(r);
        min = min.min(lo);
    }
    Some((out, rounds, min))
}

/// A running f64 sum of non-negative values and the roundings it carries.
#[derive(Default)]
struct Total {
    sum: f64,
    rounds: u64,
}

impl Total {
    /// Adds values carrying at most `rounds[i]` roundings: each addition is one more rounding on
    /// every term already summed, so the total carries at most the largest count plus the
    /// number of additions.
    fn absorb(&mut self, values: &[f64], rounds: &[u32]) {
        for (v, &r) in values.iter().zip(rounds) {
            self.sum += v;
            self.rounds = self.rounds.max(u64::from(r)) + 1;
        }
    }

    /// A certified upper bound on the true total: `Σ v ≤ ŝ (1 − u)^{−r} ≤ ŝ / (1 − r u)`.
    fn bound(&self) -> Option<Rational> {
        if self.rounds >= 1 << 50 || !self.sum.is_finite() {
            return None;
        }
        let unit = Rational::from((1, 9_007_199_254_740_992u64));
        Some(Rational::from_f64(self.sum)? / (Rational::from(1) - unit * self.rounds))
    }
}

/// Values the kernel's other users (`exact::blocks`) take: at or above `2^-300`, so that a
/// product of three stays normal.
const COUNTED_FLOOR: f64 = 4.909_093_465_297_727e-91; // 2^-300

/// Tight positive enclosures (`hi ≤ 2 lo`, `lo ≥ 2^-300`) as counted doubles; `None` if one is
/// not.
pub(crate) fn counted_values<S: Scalar>(v: &[S]) -> Option<Counted> {
    let mut out = Counted::default();
    for x in v {
        let (lo, hi) = x.f64_bounds();
        if lo < COUNTED_FLOOR {
            return None;
        }
        let (point, rounds) = counted_point(lo, hi)?;
        out.values.push(point);
        out.rounds.push(rounds);
    }
    Some(out)
}

/// A certified upper bound on the true sum of counted non-negative values (`None` past the
/// kernel's range).
pub(crate) fn sum_bound(v: &Counted) -> Option<Rational> {
    let mut total = Total::default();
    total.absorb(&v.values, &v.rounds);
    total.bound()
}

/// Values the convolution kernel takes: at or above `2^-500` (so that every product of two is at
/// least `2^-1000`, normal) and tight (`hi ≤ 2 lo`).
const CONVOLVE_FLOOR: f64 = 3.054_936_363_499_604_7e-151; // 2^-500

/// The convolution `out(s) = Σ_i a(i) b(s − i)` of two windows of non-negative values.  The
/// values the kernel takes (exact zeros, and tight enclosures at or above `2^-500`) are
/// convolved in it: each output is a sum of at most `min(|a|, |b|)` products of values carrying
/// at most `r_a` and `r_b` roundings, so it carries at most `r_a + r_b + 1 + min(|a|, |b|)`.
/// The few others (deep tails, enclosures of subnormals) add their products in the backend's
/// own arithmetic.  `None` when the backend does not take f64 values or most values are of the
/// second kind: the caller then convolves in its own arithmetic.
pub fn convolve<S: Scalar>(a: &[S], b: &[S], ctx: &S::Ctx) -> Option<Vec<S>> {
    S::from_nonneg_f64(1.0, 0, ctx)?;
    // Points and the largest count of the values the kernel takes; the indices of the others.
    let split = |v: &[S]| -> (Vec<f64>, u32, Vec<usize>) {
        let mut points = Vec::with_capacity(v.len());
        let (mut rounds, mut others) = (0, Vec::new());
        for (i, x) in v.iter().enumerate() {
            let (lo, hi) = x.f64_bounds();
            let taken = if hi == 0.0 {
                Some((0.0, 0))
            } else if lo >= CONVOLVE_FLOOR {
                counted_point(lo, hi)
            } else {
                None
            };
            match taken {
                Some((p, r)) => {
                    points.push(p);
                    rounds = rounds.max(r);
                }
                None => {
                    points.push(0.0);
                    others.push(i);
                }
            }
        }
        (points, rounds, others)
    };
    let (x, rx, others_x) = split(a);
    let (y, ry, others_y) = split(b);
    if 4 * (others_x.len() * y.len() + others_y.len() * x.len()) > x.len() * y.len() {
        return None;
    }
    let (long, short) = if x.len() >= y.len() {
        (&x, &y)
    } else {
        (&y, &x)
    };
    let mut out = vec![0.0f64; x.len() + y.len() - 1];
    for (i, &s) in short.iter().enumerate() {
        if s == 0.0 {
            continue;
        }
        for (o, &l) in out[i..i + long.len()].iter_mut().zip(long.iter()) {
            *o += s * l;
        }
    }
    let rounds = u64::from(rx) + u64::from(ry) + 1 + short.len() as u64;
    let mut out = out
        .into_iter()
        .map(|v| S::from_nonneg_f64(v, rounds, ctx))
        .collect::<Option<Vec<S>>>()?;
    // The products the kernel left out: every one with a value of a it did not take, then every
    // one with a value of b it did not take and a value of a it did.
    for &i in &others_x {
        for (j, v) in b.iter().enumerate() {
            out[i + j].add_mul_assign(&a[i], v);
        }
    }
    for &j in &others_y {
        for (i, u) in a.iter().enumerate() {
            if others_x.binary_search(&i).is_err() {
                out[i + j].add_mul_assign(u, &b[j]);
            }
        }
    }
    Some(out)
}

/// One more user with the two-point law `w`: `out(i) = w(0) a(i) + w(1) a(i − 1)` (a window
/// one longer), with one count per value: an output adds two products, each carrying its input's
/// count plus the weights' and one, into an exact 0, so it carries the larger input count plus
/// the weights' count plus 2.  Values the kernel does not take (below `2^-500`, or wide) give
/// their outputs in the backend's arithmetic.  `None` when the backend does not take f64
/// values or a weight is neither exactly 0 nor a tight enclosure at or above `2^-500`.
pub fn add_two_point<S: Scalar>(a: &[S], w: &[S], ctx: &S::Ctx) -> Option<Vec<S>> {
    S::from_nonneg_f64(1.0, 0, ctx)?;
    let (weights, rw, smallest) = counted_weights(w)?;
    if weights.len() != 2 || smallest < CONVOLVE_FLOOR {
        return None;
    }
    let taken: Vec<Option<(f64, u32)>> = a
        .iter()
        .map(|x| {
            let (lo, hi) = x.f64_bounds();
            if hi == 0.0 {
                Some((0.0, 0))
            } else if lo >= CONVOLVE_FLOOR {
                counted_point(lo, hi)
            } else {
                None
            }
        })
        .collect();
    let zero = (0.0, 0);
    (0..=a.len())
        .map(|i| {
            let here = if i < a.len() { taken[i] } else { Some(zero) };
            let before = if i > 0 { taken[i - 1] } else { Some(zero) };
            match (here, before) {
                (Some((x, rx)), Some((y, ry))) => {
                    let value = weights[0] * x + weights[1] * y;
                    S::from_nonneg_f64(value, u64::from(rx.max(ry)) + u64::from(rw) + 2, ctx)
                }
                _ => {
                    let mut out = S::zero(ctx);
                    if i < a.len() {
                        out.add_mul_assign(&w[0], &a[i]);
                    }
                    if i > 0 {
                        out.add_mul_assign(&w[1], &a[i - 1]);
                    }
                    Some(out)
                }
            }
        })
        .collect()
}

/// `count` more users with output law `w`, each step pruned below `2^-tau_bits` of the largest
/// value, computed in the non-negative kernel.  `None` when the backend does not take f64
/// values or the inputs are outside the kernel's range; the caller then steps in its own
/// arithmetic.
pub fn add_users<S: Scalar>(
    law: &WindowedLaw<S>,
    count: usize,
    w: &[S],
    tau_bits: u32,
    ctx: &S::Ctx,
) -> Option<WindowedLaw<S>> {
    S::from_nonneg_f64(1.0, 0, ctx)?;
    let (weights, weight_rounds, w_min) = counted_weights(w)?;
    let floor = FLOOR / w_min;
    let mut dropped = Total::default();
    // The starting law: points and counts; values too small for the kernel are dropped (their
    // upper ends are exact: they carry no rounding).
    let mut h = Counted::default();
    for x in &law.values {
        let (lo, hi) = x.f64_bounds();
        let (v, r) = if hi == 0.0 {
            (0.0, 0)
        } else if lo < floor {
            dropped.absorb(&[hi], &[0]);
            (0.0, 0)
        } else {
            counted_point(lo, hi)?
        };
        h.values.push(v);
        h.rounds.push(r);
    }
    let mut set = law.set.clone();
    for _ in 0..count {
        crate::progress::checkpoint();
        let (next_set, next, lost) = step(&set, &h, &weights, weight_rounds, tau_bits, floor)?;
        dropped.absorb(&lost.values, &lost.rounds);
        (set, h) = (next_set, next);
    }
    let values = h
        .values
        .iter()
        .zip(&h.rounds)
        .map(|(&v, &r)| S::from_nonneg_f64(v, u64::from(r), ctx))
        .collect::<Option<Vec<S>>>()?;
    Some(WindowedLaw {
        set,
        values,
        omitted: Rational::from(&law.omitted + &dropped.bound()?),
    })
}

/// One user step in the kernel: dilate, `Σ_y w(y) H(N − e_y)` by row-wise axpys (a value's
/// count is the largest count it reads plus `r_w + d`), then drop values below
/// `max(2^-τ · largest, floor)` and trim.  Returns the new set, the kept values and the
/// dropped ones.
fn step(
    from: &Arc<WindowSet>,
    h: &Counted,
    w: &[f64],
    weight_rounds: u32,
    tau_bits: u32,
    floor: f64,
) -> Option<(Arc<WindowSet>, Counted, Counted)> {
    let to = from.dilate();
    let d = to.d();
    let mut out = vec![0.0f64; to.len()];
    let mut out_rounds = vec![0u32; to.len()];
    for (r, sources) in to.sources(from).chunks(d).enumerate() {
        let (a, lo) = to.row_start(r);
        let (end, row_rounds) = (to.row_end(r), &mut out_rounds[a..to.row_end(r)]);
        let row = &mut out[a..end];
        for (y, &(source, shift)) in sources.iter().enumerate() {
            let Some(s) = source else { continue };
            let weight = w[y];
            if weight == 0.0 {
                continue;
            }
            let (sa, slo) = from.row_start(s);
            let src = &h.values[sa..from.row_end(s)];
            let src_rounds = &h.rounds[sa..from.row_end(s)];
            let start = (slo + shift - lo) as usize;
            let len = src.len();
            for (o, v) in row[start..start + len].iter_mut().zip(src) {
                *o += weight * v;
            }
            for (o, &r) in row_rounds[start..start + len].iter_mut().zip(src_rounds) {
                *o = (*o).max(r);
            }
        }
    }
    // Every count read is below MAX_ROUNDS = 2^31 and `added` is far smaller, so the u32
    // additions cannot wrap; counts that reach MAX_ROUNDS end the kernel.
    let added = u32::try_from(u64::from(weight_rounds) + d as u64)
        .ok()
        .filter(|a| u64::from(*a) < MAX_ROUNDS)?;
    let (mut max, mut most) = (0.0f64, 0u32);
    for (v, r) in out.iter().zip(out_rounds.iter_mut()) {
        max = max.max(*v);
        *r += added;
        most = most.max(*r);
    }
    if u64::from(most) >= MAX_ROUNDS {
        return None;
    }
    let threshold = (max * 2f64.powi(-(tau_bits.min(1000) as i32))).max(floor);
    if threshold > max {
        return None;
    }
    // Dropped values are recorded and zeroed (a row keeps the hull of what it keeps).
    let mut lost = Counted::default();
    let keep: Vec<bool> = out
        .iter_mut()
        .zip(&out_rounds)
        .map(|(v, &r)| {
            if *v > 0.0 && *v < threshold {
                lost.values.push(*v);
                lost.rounds.push(r);
                *v = 0.0;
            }
            *v >= threshold
        })
        .collect();
    let (set, kept) = to.restricted(&keep);
    let next = Counted {
        values: gather(&out, &kept),
        rounds: gather(&out_rounds, &kept),
    };
    Some((Arc::new(set), next, lost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_cover_the_enclosure() {
        for (lo, hi) in [(1.0, 1.0), (0.3, 0.3000000000001), (1e-200, 1.0000001e-200)] {
            let (v, r) = counted_point(lo, hi).unwrap();
            let f = 1.0 - r as f64 * UNIT;
            assert!(v * f <= lo && hi <= v / f, "[{lo}, {hi}] from {v} with {r}");
        }
        assert!(counted_point(1.0, 2.0).is_none());
    }

    #[test]
    fn the_convolution_kernel_encloses_the_exact_convolution() {
        use inari::Interval;
        // Exact dyadic rationals as point intervals, including values the kernel leaves to the
        // intervals (below 2^-500, a subnormal, an exact zero) and a wide enclosure.
        let exact_a: Vec<Rational> = [
            Rational::from((3, 8)),
            Rational::from((1, 3)),
            Rational::from(0),
            Rational::from((1u32, 1u32)) >> 700u32,
            Rational::from((5, 7)),
        ]
        .to_vec();
        let exact_b: Vec<Rational> = (1..40u32)
            .map(|i| Rational::from((i, 97)) >> (i % 5))
            .chain([Rational::from(1) >> 1070u32])
            .collect();
        let enclose = |q: &Rational| <Interval as Scalar>::from_rational(q, &());
        let a: Vec<Interval> = exact_a.iter().map(enclose).collect();
        let b: Vec<Interval> = exact_b.iter().map(enclose).collect();
        let out = convolve(&a, &b, &()).expect("the kernel takes these");
        for (s, got) in out.iter().enumerate() {
            let mut want = Rational::new();
            for (i, x) in exact_a.iter().enumerate() {
                if let Some(y) = s.checked_sub(i).and_then(|j| exact_b.get(j)) {
                    want += Rational::from(x * y);
                }
            }
            let e = got.enclosure();
            assert!(
                e.lo() <= &crate::enclosure::Endpoint::Finite(want.clone()),
                "{s}: {e}"
            );
            assert!(
                &crate::enclosure::Endpoint::Finite(want.clone()) <= e.hi(),
                "{s}: {e}"
            );
        }
        // Mostly values the kernel cannot take: it declines.
        let tiny: Vec<Interval> = (0..8)
            .map(|_| enclose(&(Rational::from(1) >> 900u32)))
            .collect();
        assert!(convolve(&tiny, &tiny, &()).is_none());
    }
}
