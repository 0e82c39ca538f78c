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
//! weights.  The count is kept once per array (the maximum), and turned into an enclosure only
//! at the end, by `(1 − u)^r ≥ 1 − r·u` (Bernoulli).
//!
//! The normal range is kept by pruning: every kept value is at least `2^-1000 / w_min`, so
//! every product `w(y)·H(N − e_y)` is at least `2^-1000`, far above the subnormals.  Dropped
//! values are summed, and their sum bounded with its own count, into the omitted mass.  Signed
//! quantities (curves, divergences) stay in interval arithmetic.

use super::window::{WindowSet, WindowedLaw};
use crate::arith::Scalar;
use rug::Rational;
use std::sync::Arc;

/// `u = 2^-53`, the unit roundoff of round-to-nearest doubles.
const UNIT: f64 = 1.0 / 9_007_199_254_740_992.0;

/// The counts stay far from `1/u`, so that `1 − r·u` is a useful bound.
const MAX_ROUNDS: u64 = 1 << 40;

/// Products of kept values and weights stay at or above this (normal doubles reach 2^-1022).
const FLOOR: f64 = 9.332_636_185_032_189e-302; // 2^-1000

/// Non-negative doubles with a common rounding count (see the module docs).
#[derive(Clone, Debug)]
pub struct Counted {
    pub values: Vec<f64>,
    pub rounds: u64,
}

/// The count `r` with `v̂ (1 − u)^r ≤ lo` and `hi ≤ v̂ (1 − u)^{−r}` for a point `v̂ ∈ [lo, hi]`,
/// `0 < lo`; `None` beyond [`MAX_ROUNDS`].
///
/// Since `(1 − u)^r ≤ 1/(1 + r u)` and `(1 − u)^{−r} ≥ 1 + r u`, it suffices that
/// `r u ≥ v̂/lo − 1` and `r u ≥ hi/v̂ − 1`.  The two quotients are computed in round-to-nearest
/// with absolute errors below `3u`; the margin of 4 covers them.
fn rounds_for(approx: f64, lo: f64, hi: f64) -> Option<u64> {
    let need = (approx / lo - 1.0).max(hi / approx - 1.0).max(0.0) / UNIT;
    (need.is_finite() && need < MAX_ROUNDS as f64).then(|| need.ceil() as u64 + 4)
}

/// A non-negative enclosure `[lo, hi]` as a point and a count, `0 < lo ≤ hi`.
fn counted_point(lo: f64, hi: f64) -> Option<(f64, u64)> {
    let approx = lo + (hi - lo) / 2.0;
    let approx = approx.clamp(lo, hi);
    Some((approx, rounds_for(approx, lo, hi)?))
}

/// The weights of one user as doubles with a common count, and the smallest non-zero one
/// (`None` when a weight is not certainly positive or zero).
fn counted_weights<S: Scalar>(w: &[S]) -> Option<(Vec<f64>, u64, f64)> {
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
    // Every dropped value, summed in f64: the sum carries at most `dropped.rounds` roundings.
    let mut dropped = Counted {
        values: Vec::new(),
        rounds: 0,
    };
    // The starting law: points and a count; values too small for the kernel are dropped.
    let mut values = Vec::with_capacity(law.values.len());
    let mut rounds = 0;
    let mut small = Vec::new();
    for x in &law.values {
        let (lo, hi) = x.f64_bounds();
        if hi == 0.0 {
            values.push(0.0);
        } else if lo < floor {
            small.push(hi);
            values.push(0.0);
        } else {
            let (v, r) = counted_point(lo, hi)?;
            values.push(v);
            rounds = rounds.max(r);
        }
    }
    // Upper ends of the dropped enclosures: exact, they carry no rounding.
    dropped.absorb(&small, 0);
    let mut state = (law.set.clone(), Counted { values, rounds });
    for _ in 0..count {
        let (set, counted, lost) =
            step(&state.0, &state.1, &weights, weight_rounds, tau_bits, floor)?;
        dropped.absorb(&lost.values, lost.rounds);
        state = (set, counted);
    }
    let dropped = dropped.sum_bound()?;
    let (set, counted) = state;
    let values = counted
        .values
        .iter()
        .map(|&v| S::from_nonneg_f64(v, counted.rounds, ctx))
        .collect::<Option<Vec<S>>>()?;
    Some(WindowedLaw {
        set,
        values,
        omitted: Rational::from(&law.omitted + &dropped),
    })
}

impl Counted {
    /// Adds `values` (each carrying at most `rounds` roundings) into the running total kept in
    /// `self.values[0]`: each addition is one more rounding on every term already summed, so
    /// the total carries at most `max(self.rounds, rounds) + (number of additions)`.
    fn absorb(&mut self, values: &[f64], rounds: u64) {
        if values.is_empty() {
            return;
        }
        if self.values.is_empty() {
            self.values.push(0.0);
        }
        for v in values {
            self.values[0] += v;
        }
        self.rounds = self.rounds.max(rounds) + values.len() as u64;
    }

    /// A certified upper bound on the true total `Σ v` of what was absorbed:
    /// `Σ v ≤ ŝ (1 − u)^{−r} ≤ ŝ / (1 − r u)`.
    fn sum_bound(&self) -> Option<Rational> {
        let Some(&sum) = self.values.first() else {
            return Some(Rational::new());
        };
        if self.rounds >= MAX_ROUNDS || !sum.is_finite() {
            return None;
        }
        let unit = Rational::from((1, 9_007_199_254_740_992u64));
        Some(Rational::from_f64(sum)? / (Rational::from(1) - unit * self.rounds))
    }
}

/// One user step in the kernel: dilate, `Σ_y w(y) H(N − e_y)` by row-wise axpys, then drop
/// values below `max(2^-τ · largest, floor)` and trim.  Returns the new set, the kept values and
/// the dropped ones (as values carrying the step's count).
fn step(
    from: &Arc<WindowSet>,
    h: &Counted,
    w: &[f64],
    weight_rounds: u64,
    tau_bits: u32,
    floor: f64,
) -> Option<(Arc<WindowSet>, Counted, Counted)> {
    let to = from.dilate();
    let d = to.d();
    let mut out = vec![0.0f64; to.len()];
    for (r, sources) in to.sources(from).chunks(d).enumerate() {
        let (a, lo) = to.row_start(r);
        let row = &mut out[a..to.row_end(r)];
        for (y, &(source, shift)) in sources.iter().enumerate() {
            let Some(s) = source else { continue };
            let weight = w[y];
            if weight == 0.0 {
                continue;
            }
            let (sa, slo) = from.row_start(s);
            let src = &h.values[sa..from.row_end(s)];
            let start = (slo + shift - lo) as usize;
            for (o, v) in row[start..start + src.len()].iter_mut().zip(src) {
                *o += weight * v;
            }
        }
    }
    let rounds = h.rounds + weight_rounds + d as u64;
    if rounds >= MAX_ROUNDS {
        return None;
    }
    let max = out.iter().copied().fold(0.0, f64::max);
    let threshold = (max * 2f64.powi(-(tau_bits.min(1000) as i32))).max(floor);
    if threshold > max {
        return None;
    }
    let mut small = Vec::new();
    let keep: Vec<bool> = out
        .iter()
        .map(|&v| {
            if v > 0.0 && v < threshold {
                small.push(v);
                false
            } else {
                v > 0.0
            }
        })
        .collect();
    let lost = Counted {
        values: small,
        rounds,
    };
    let (set, kept) = to.restricted(&keep);
    let values = kept.into_iter().map(|i| out[i]).collect();
    Some((Arc::new(set), Counted { values, rounds }, lost))
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
}
