//! Two blocks of users on three outputs, `Mult(x, w) ⊛ Mult(y, v)`, in about `W_a·W_b·L`
//! operations instead of `y` user steps over the first block's window
//! (proofs-notes/three-output-blocks.md).
//!
//! With outputs `{0, 1, 2}` and the chain rule of [`super::window::multinomial`], the first
//! block's `N_1` is `a ~ Bin(x, w(1))` and, given `a`, its `N_2 ~ Bin(x − a, p)`,
//! `p = w(2)/(w(0) + w(2))`; likewise `b ~ Bin(y, v(1))` and `Bin(y − b, p′)` for the second.
//! So the law of the sum at `(N_1, N_2)` is
//!
//! `T(N_1, N_2) = Σ_{a + b = N_1} Bin(x, w(1))(a) · Bin(y, v(1))(b) · F_{x−a, y−b}(N_2)`,
//! `F_{r,s} = Bin(r, p) ⊛ Bin(s, p′)`.
//!
//! Every `F_{r,s}` the sum needs is one Bernoulli step from a neighbour:
//! `F_{r+1,s} = F_{r,s} ⊛ (1 − p, p)` and `F_{r,s+1} = F_{r,s} ⊛ (1 − p′, p′)`, so after one
//! convolution at the corner `(r_min, s_min)` each costs one pass over its window.  Everything
//! is a sum of products of non-negative numbers, so it runs in the non-negative f64 kernel
//! (`exact::nonneg`) with one rounding count for all values.  Each `F` is trimmed at `2^-τ` of
//! its largest value like a binary group (`binary::trim`); the mass dropped on the way to any
//! `F` is at most the corner's omitted mass plus everything dropped along the `r` chain plus the
//! most dropped along one `s` chain, and `F` enters `T` with weights summing to at most 1.

use super::binary::{binomial_window, convolve, trim};
use super::nonneg::{Counted, counted_values, sum_bound};
use super::window::{WindowSet, WindowedLaw};
use crate::arith::Scalar;
use rayon::prelude::*;
use rug::Rational;
use std::sync::Arc;

/// The deepest truncation the kernel takes here: products of kept values stay far above the
/// subnormals.
const MAX_TAU_BITS: u32 = 200;

/// Every value of every `F` stays at or above this (else the kernel declines).  A pair's weight
/// `a(a)·b(b)` is summed only at or above `2^-τ` of the largest weight, itself at least
/// `1/((x+1)(y+1))`, so at or above `2^-264` for τ ≤ 200 and blocks below 2^32 users: every
/// product `weight·F` is at least `2^-764`, far above the subnormals.
const F_FLOOR: f64 = 3.054_936_363_499_604_7e-151; // 2^-500

/// Bernoulli weights below this are declined (their products could leave the normal range).
const WEIGHT_FLOOR: f64 = 7.888_609_052_210_118e-31; // 2^-100

/// One Bernoulli step of a counted window: `out(j) = q·F(j) + p·F(j − 1)` (one longer).
fn bernoulli_step(f: &[f64], p: f64, q: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(f.len() + 1);
    let mut previous = 0.0;
    for &value in f {
        out.push(q * value + p * previous);
        previous = value;
    }
    out.push(p * previous);
    out
}

/// A window trimmed like [`trim`]: the ends below `2^-bits` of the largest value go (but the
/// first such value at each end stays).  Returns the new start, the kept values, the sum of the
/// dropped ones and how many were dropped.
fn trimmed(start: usize, values: Vec<f64>, bits: u32) -> (usize, Vec<f64>, f64, u64) {
    let largest = values.iter().copied().fold(0.0, f64::max);
    let cut = largest * 2f64.powi(-(bits as i32));
    let Some(first) = values.iter().position(|v| *v >= cut) else {
        return (start, values, 0.0, 0);
    };
    let last = values
        .iter()
        .rposition(|v| *v >= cut)
        .expect("a kept value");
    let (first, last) = (first.saturating_sub(1), (last + 1).min(values.len() - 1));
    let dropped: f64 = values[..first].iter().chain(&values[last + 1..]).sum();
    let count = (values.len() - (last + 1 - first)) as u64;
    (start + first, values[first..=last].to_vec(), dropped, count)
}

/// The smallest value of a window (`+∞` when empty).
fn smallest(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Rows of the result being summed: row `N_1 − first` holds `N_2` from its `lo`.
#[derive(Clone, Default)]
struct Rows {
    first: usize,
    rows: Vec<(usize, Vec<f64>)>,
}

impl Rows {
    fn new(first: usize, count: usize) -> Self {
        Rows {
            first,
            rows: vec![(0, Vec::new()); count],
        }
    }

    /// Adds `weight · f` to row `n1` at `N_2 = start, start + 1, …`.
    fn add(&mut self, n1: usize, start: usize, f: &[f64], weight: f64) {
        let (lo, row) = &mut self.rows[n1 - self.first];
        if row.is_empty() {
            *lo = start;
        }
        if start < *lo {
            row.splice(0..0, std::iter::repeat_n(0.0, *lo - start));
            *lo = start;
        }
        let offset = start - *lo;
        if row.len() < offset + f.len() {
            row.resize(offset + f.len(), 0.0);
        }
        for (o, v) in row[offset..].iter_mut().zip(f) {
            *o += weight * v;
        }
    }

    /// The element-wise sum of two partial results (one more rounding on every value).
    fn merge(mut self, other: Rows) -> Rows {
        for (i, (lo, row)) in other.rows.into_iter().enumerate() {
            if !row.is_empty() {
                self.add(self.first + i, lo, &row, 1.0);
            }
        }
        self
    }
}

/// What one `s` chain (or a fold of several) leaves: the rows, the most any chain dropped (sum
/// and terms), the pairs left out, and the smallest value of any `F`.
struct Partial {
    rows: Rows,
    dropped: (f64, u64),
    skipped: Counted,
    smallest: f64,
}

/// `Mult(x, w) ⊛ Mult(y, v)` for three outputs with every entry positive, truncated at
/// `2^-tau_bits` (see the module docs).  `None` when the backend keeps its own arithmetic, a
/// weight is not certainly positive, or a value leaves the kernel's range: the caller then adds
/// users in its own way.
pub fn two_blocks<S: Scalar>(
    x: usize,
    w: &[S],
    y: usize,
    v: &[S],
    tau_bits: u32,
    ctx: &S::Ctx,
) -> Option<WindowedLaw<S>> {
    let too_many = x.saturating_add(y) >= u32::MAX as usize;
    if w.len() != 3 || v.len() != 3 || tau_bits > MAX_TAU_BITS || x == 0 || y == 0 || too_many {
        return None;
    }
    S::from_nonneg_f64(1.0, 0, ctx)?;
    if w.iter().chain(v).any(|e| e.f64_bounds().0 <= 0.0) {
        return None;
    }
    let tau = Some(tau_bits);
    // The first coordinate of each block, and the Bernoulli weights of the second given it.
    let rest = |u: &[S]| u[0].add(&u[2]);
    let (w_rest, v_rest) = (rest(w), rest(v));
    let a_law = binomial_window(x, &w[1], &w_rest, tau, ctx);
    let b_law = binomial_window(y, &v[1], &v_rest, tau, ctx);
    let (p_a, q_a) = (w[2].div(&w_rest), w[0].div(&w_rest));
    let (p_b, q_b) = (v[2].div(&v_rest), v[0].div(&v_rest));
    let steps = counted_values(&[p_a.clone(), q_a.clone(), p_b.clone(), q_b.clone()])?;
    if smallest(&steps.values) < WEIGHT_FLOOR {
        return None;
    }
    let (p, q, p2, q2) = (
        steps.values[0],
        steps.values[1],
        steps.values[2],
        steps.values[3],
    );
    let step_rounds = u64::from(steps.rounds.iter().copied().max().unwrap_or(0));
    let a = counted_values(&a_law.values)?;
    let b = counted_values(&b_law.values)?;
    // r = x − a and s = y − b over the windows: from r_min = x − a_max and s_min = y − b_max.
    let (a_min, b_min) = (a_law.start, b_law.start);
    let (a_len, b_len) = (a.values.len(), b.values.len());
    let (r_min, s_min) = (x - (a_min + a_len - 1), y - (b_min + b_len - 1));
    // The corner F_{r_min, s_min}, in the backend (one convolution of two binomial windows).
    let corner = trim(
        convolve(
            &binomial_window(r_min, &p_a, &q_a, tau, ctx),
            &binomial_window(s_min, &p_b, &q_b, tau, ctx),
            ctx,
        ),
        tau,
        ctx,
    );
    let corner_values = counted_values(&corner.values)?;
    // A value's rounding count is at most the largest of its inputs' plus what a step adds:
    // two products with a weight and one sum.
    let corner_rounds = u64::from(corner_values.rounds.iter().copied().max().unwrap_or(0));
    let per_step = step_rounds + 2;
    // The r chain (s = s_min), r_min up to r_max, each F kept; what each step dropped.
    let mut base: Vec<(usize, Vec<f64>)> = Vec::with_capacity(a_len);
    let mut base_dropped = Counted::default();
    let (mut start, mut f) = (corner.start, corner_values.values);
    let mut least = smallest(&f);
    for i in 0..a_len {
        crate::progress::checkpoint();
        if i > 0 {
            let (s, values, dropped, count) = trimmed(start, bernoulli_step(&f, p, q), tau_bits);
            // A sum of `count` values carrying at most the step's count.
            base_dropped.values.push(dropped);
            base_dropped
                .rounds
                .push(rounds_u32(corner_rounds + per_step * i as u64 + count)?);
            (start, f) = (s, values);
            least = least.min(smallest(&f));
        }
        base.push((start, f.clone()));
    }
    // Pairs (a, b) whose weight is below 2^-τ of the largest are left out, their weight counted
    // as omitted (each F has mass at most 1).
    let largest = |u: &[f64]| u.iter().copied().fold(0.0, f64::max);
    let cut = largest(&a.values) * largest(&b.values) * 2f64.powi(-(tau_bits as i32));
    let n1_first = a_min + b_min;
    let rows_count = a_len + b_len - 1;
    let empty = || Partial {
        rows: Rows::new(n1_first, rows_count),
        dropped: (0.0, 0),
        skipped: Counted::default(),
        smallest: f64::INFINITY,
    };
    // Per r (in parallel): its s chain, each F added to row N_1 = a + b with weight a(a)·b(b).
    let partial = base
        .into_par_iter()
        .enumerate()
        .fold(empty, |mut acc, (i, (mut start, mut f))| {
            crate::progress::checkpoint();
            // r = r_min + i, so a = a_max − i (index a_len − 1 − i).
            let ai = a_len - 1 - i;
            let mut dropped = (0.0, 0);
            for j in 0..b_len {
                if j > 0 {
                    let (s, values, d, count) =
                        trimmed(start, bernoulli_step(&f, p2, q2), tau_bits);
                    dropped = (dropped.0 + d, dropped.1 + count + 1);
                    (start, f) = (s, values);
                    acc.smallest = acc.smallest.min(smallest(&f));
                }
                // s = s_min + j, so b = b_max − j (index b_len − 1 − j).
                let bi = b_len - 1 - j;
                let weight = a.values[ai] * b.values[bi];
                if weight < cut {
                    acc.skipped.values.push(weight);
                    acc.skipped
                        .rounds
                        .push(a.rounds[ai].saturating_add(b.rounds[bi]).saturating_add(1));
                    continue;
                }
                acc.rows.add(a_min + ai + b_min + bi, start, &f, weight);
            }
            acc.dropped = (acc.dropped.0.max(dropped.0), acc.dropped.1.max(dropped.1));
            acc
        })
        .reduce(empty, |x, y| {
            let mut skipped = x.skipped;
            skipped.values.extend(y.skipped.values);
            skipped.rounds.extend(y.skipped.rounds);
            Partial {
                rows: x.rows.merge(y.rows),
                dropped: (x.dropped.0.max(y.dropped.0), x.dropped.1.max(y.dropped.1)),
                skipped,
                smallest: x.smallest.min(y.smallest),
            }
        });
    if least.min(partial.smallest) < F_FLOOR {
        return None;
    }
    // `F_{r_min + i, s_min + j}` carries at most the corner's count plus one step's per step,
    // `corner + per_step·(i + j)`; the largest is at `i + j = |a| + |b| − 2`.
    let f_rounds = corner_rounds + per_step * (a_len + b_len) as u64;
    // Each value of T: a(a)·b(b)·F (two more roundings), summed over at most min(|a|, |b|)
    // pairs in partial results, which are then summed in a tree of at most |a| leaves.  Every
    // F of row N_1 has i + j = a_max + b_max − N_1 (i = a_max − a, j = b_max − b), so the row's
    // count is that of its own F, not the largest of all.
    let ab_rounds = u64::from(a.rounds.iter().chain(&b.rounds).copied().max().unwrap_or(0));
    let sum_rounds = 2 * ab_rounds + corner_rounds + 2 + a_len.min(b_len) as u64 + a_len as u64;
    let row_rounds = |n1: usize| {
        let steps = (a_min + a_len - 1 + b_min + b_len - 1 - n1) as u64;
        sum_rounds + per_step * steps
    };
    // Omitted: the tails of the two first-coordinate windows, the pairs left out, and what the
    // chains dropped before any F (the corner's omission, the whole r chain, the most along one
    // s chain: every chain's sum is at most the largest sum with the largest count).
    let inner = Counted {
        values: vec![partial.dropped.0],
        rounds: vec![rounds_u32(f_rounds + partial.dropped.1)?],
    };
    let omitted = Rational::from(&a_law.omitted + &b_law.omitted)
        + &corner.omitted
        + sum_bound(&base_dropped)?
        + sum_bound(&inner)?
        + sum_bound(&partial.skipped)?;
    let mut set_rows = Vec::new();
    let mut values = Vec::new();
    for (i, (lo, row)) in partial.rows.rows.into_iter().enumerate() {
        if row.is_empty() {
            continue;
        }
        let rounds = row_rounds(n1_first + i);
        set_rows.push((vec![(n1_first + i) as u32], lo as u32, row.len() as u32));
        for value in row {
            values.push(S::from_nonneg_f64(value, rounds, ctx)?);
        }
    }
    let law = WindowedLaw {
        set: Arc::new(WindowSet::from_rows(3, x + y, set_rows)),
        values,
        omitted,
    };
    Some(law.prune(tau_bits, ctx))
}

fn rounds_u32(r: u64) -> Option<u32> {
    u32::try_from(r).ok()
}

/// The window of `Bin(m, p)` at depth `tau_bits`: about `2·sqrt(2τ ln 2)` standard deviations.
fn binomial_width(m: usize, p: f64, tau_bits: u32) -> f64 {
    let z = (2.0 * f64::from(tau_bits) * std::f64::consts::LN_2).sqrt();
    (2.0 * z * (m as f64 * p * (1.0 - p)).sqrt() + 2.0).min(m as f64 + 1.0)
}

/// What one user step over one window value costs, in units of [`estimated_work`]: a step
/// (`nonneg::step`, three sources per value) against the two-block kernel's inner loop.
/// Measured on the ternary channel at n = 10⁴ (the profile's tree): rebuilds of 1.4·10⁸ to
/// 5·10⁸ units took 0.58–0.72 ns per unit, steps of 5·10⁷ to 3.6·10⁸ values 5.3–5.7 ns each.
pub const STEP_COST_IN_BLOCK_WORK: f64 = 8.0;

/// About how many value updates [`two_blocks`] makes for `x` users of `w` and `y` of `v` (three
/// outputs, as doubles): two passes (a step and a sum) over each `F` window, one `F` per pair of
/// first coordinates.
pub fn estimated_work(x: usize, w: &[f64], y: usize, v: &[f64], tau_bits: u32) -> f64 {
    let (p, p2) = (w[2] / (w[0] + w[2]), v[2] / (v[0] + v[2]));
    let spread =
        x as f64 * (1.0 - w[1]) * p * (1.0 - p) + y as f64 * (1.0 - v[1]) * p2 * (1.0 - p2);
    let z = (2.0 * f64::from(tau_bits) * std::f64::consts::LN_2).sqrt();
    let f_window = 2.0 * z * spread.sqrt() + 2.0;
    2.0 * binomial_width(x, w[1], tau_bits) * binomial_width(y, v[1], tau_bits) * f_window
}

/// Whether [`two_blocks`] is expected to be cheaper than adding the `small` block's users one at
/// a time to the other's multinomial: it costs about `2·W_b` passes over that multinomial's
/// window instead of `small`, `W_b` the window of the small block's first coordinate
/// (`Bin(small, v(1))`).
pub fn cheaper_than_steps(small: usize, v1: f64, tau_bits: u32) -> bool {
    2.0 * binomial_width(small, v1, tau_bits) < small as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::window::multinomial;
    use inari::Interval;
    use std::collections::HashMap;

    /// The exact law of `Mult(x, w) ⊛ Mult(y, v)` by summing over the first block's histograms.
    fn exact(x: usize, w: &[Rational], y: usize, v: &[Rational]) -> HashMap<(u64, u64), Rational> {
        let ctx = Default::default();
        let a = multinomial::<Rational>(x, w, None, &ctx);
        let b = multinomial::<Rational>(y, v, None, &ctx);
        let mut out: HashMap<(u64, u64), Rational> = HashMap::new();
        for (i, pa) in a.values.iter().enumerate() {
            let ha = a.set.histogram(i);
            for (j, pb) in b.values.iter().enumerate() {
                let hb = b.set.histogram(j);
                *out.entry((ha[1] + hb[1], ha[2] + hb[2])).or_default() += Rational::from(pa * pb);
            }
        }
        out
    }

    #[test]
    fn two_blocks_enclose_the_exact_law_within_the_omitted_mass() {
        let rational = |s: &[(u32, u32)]| -> Vec<Rational> {
            s.iter().map(|&(p, q)| Rational::from((p, q))).collect()
        };
        let w = rational(&[(7, 10), (2, 10), (1, 10)]);
        let v = rational(&[(15, 100), (55, 100), (30, 100)]);
        let interval = |u: &[Rational]| -> Vec<Interval> {
            u.iter().map(|q| Interval::from_rational(q, &())).collect()
        };
        // Deep and shallower truncation (the second drops mass in the chains).
        for (x, y, tau) in [(24, 30, 100), (45, 36, 40)] {
            let law = two_blocks::<Interval>(x, &interval(&w), y, &interval(&v), tau, &())
                .expect("the kernel takes these");
            let truth = exact(x, &w, y, &v);
            let omitted = law.omitted.to_f64() * (1.0 + 1e-9);
            let mut kept = 0.0;
            let mut seen = 0;
            for (i, value) in law.values.iter().enumerate() {
                let h = law.set.histogram(i);
                let exact_value = &truth[&(h[1], h[2])];
                let (lo, hi) = value.f64_bounds();
                // In exact rationals: the lower end is at most the true value, and the upper end
                // at least the true value less the omitted mass (rows carry their own counts).
                let (lo_q, hi_q) = (
                    Rational::from_f64(lo).unwrap(),
                    Rational::from_f64(hi).unwrap(),
                );
                assert!(
                    lo_q <= *exact_value,
                    "{h:?}: {lo} > {}",
                    exact_value.to_f64()
                );
                let t = exact_value.to_f64();
                assert!(
                    Rational::from(exact_value - &hi_q) <= law.omitted,
                    "{h:?}: {t} − {hi} > {omitted}"
                );
                kept += lo;
                seen += 1;
            }
            // Everything left out (states outside the set and what the kept ones lack) fits in
            // the omitted mass.
            assert!(
                1.0 - kept <= omitted + 1e-12 * seen as f64,
                "{kept} {omitted}"
            );
            if tau == 40 {
                assert!(
                    law.omitted > 0 && law.omitted < 1e-2,
                    "{}",
                    law.omitted.to_f64()
                );
            }
        }
    }
}
