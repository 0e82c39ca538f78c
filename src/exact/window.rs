//! Windowed histogram laws for any output alphabet (proofs-notes/windowed-laws.md).
//!
//! A histogram `N = (N_0, …, N_c)` of size m (c = d − 1) is stored through `(N_1, …, N_c)`.
//! A [`WindowSet`] holds the histograms of one size in *rows*: a row is a prefix
//! `(N_1, …, N_{c−1})` with a contiguous range of `N_c`, rows in lexicographic order.  Only the
//! histograms that carry non-negligible mass are stored; what is left out is a certified bound
//! on omitted mass, folded into every enclosure like the binary path's windows (§8.1).
//!
//! * [`multinomial`] builds `Mult(m, W)` directly, by the chain rule
//!   `Mult(m, W)(N) = Π_j Bin(m − N_1 − … − N_{j−1}, W(j)/(W(0) + W(j) + … + W(c)))(N_j)`:
//!   each factor is a certified binomial window (`binary::binomial_window`), truncated below
//!   `2^-τ` of the largest value, the inner ones scaled by the prefix's weight so that the set
//!   follows the ellipsoid where the mass lies.  The omitted mass is bounded by
//!   `Σ_levels Σ_prefix π(prefix) · tail(prefix)`.
//! * [`step`] adds one user (`H'(N) = Σ_y w(y) H(N − e_y)`, Part I §8.3) on the set dilated by
//!   the unit vectors, optionally dropping values below `2^-τ` of the largest and recording
//!   their mass: each step is a Markov kernel, so dropped mass never grows later.
//! * [`WindowGroup`] puts them together as a [`GroupLaw`]: the pair and the profile over all
//!   k run on it.  With the `interval` backend the user-by-user steps run in the non-negative
//!   f64 kernel of `exact::nonneg`.

use super::binary::{binomial_window, upper_bound};
use super::blocks::{STEP_COST_IN_BLOCK_WORK, cheaper_than_steps, estimated_work, two_blocks};
use super::group::{GroupLaw, ratio_range, ratio_range_sending};
use super::law::{Layout, Omission, PairLaw};
use super::nonneg;
use crate::arith::Scalar;
use crate::mechanism::Channel;
use rug::Rational;
use std::sync::Arc;

/// Histograms of size `m` over `d` symbols, stored in rows (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowSet {
    d: usize,
    m: usize,
    /// `prefixes[(c−1)·r ..]`: `(N_1, …, N_{c−1})` of row r.
    prefixes: Vec<u32>,
    /// First `N_c` of each row.
    lo: Vec<u32>,
    /// `offsets[r]` = index of row r's first state; `offsets[rows]` = number of states.
    offsets: Vec<usize>,
}

impl WindowSet {
    /// The set of the single empty histogram (m = 0).
    pub fn empty(d: usize) -> Self {
        assert!(d >= 2);
        WindowSet {
            d,
            m: 0,
            prefixes: vec![0; d - 2],
            lo: vec![0],
            offsets: vec![0, 1],
        }
    }

    /// Rows `(prefix, lo, len)` in lexicographic order of prefix, each with `len ≥ 1`.
    pub(crate) fn from_rows(
        d: usize,
        m: usize,
        rows: impl IntoIterator<Item = (Vec<u32>, u32, u32)>,
    ) -> Self {
        let mut set = WindowSet {
            d,
            m,
            prefixes: Vec::new(),
            lo: Vec::new(),
            offsets: vec![0],
        };
        for (prefix, lo, len) in rows {
            debug_assert_eq!(prefix.len(), d - 2);
            set.push_row(&prefix, lo, len);
        }
        set
    }

    /// The alphabet size d.
    pub fn d(&self) -> usize {
        self.d
    }

    /// The histogram size m.
    pub fn size(&self) -> usize {
        self.m
    }

    /// Number of stored histograms.
    pub fn len(&self) -> usize {
        *self.offsets.last().expect("non-empty")
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.lo.len()
    }

    fn prefix(&self, r: usize) -> &[u32] {
        let w = self.d - 2;
        &self.prefixes[w * r..w * (r + 1)]
    }

    fn row_len(&self, r: usize) -> usize {
        self.offsets[r + 1] - self.offsets[r]
    }

    /// The row with this prefix.
    fn find_row(&self, prefix: &[u32]) -> Option<usize> {
        let (mut a, mut b) = (0, self.rows());
        while a < b {
            let mid = (a + b) / 2;
            match self.prefix(mid).cmp(prefix) {
                std::cmp::Ordering::Less => a = mid + 1,
                std::cmp::Ordering::Greater => b = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The histogram `(N_0, …, N_{d−1})` of state i.
    pub fn histogram(&self, i: usize) -> Vec<u64> {
        let r = self.offsets.partition_point(|&o| o <= i) - 1;
        let mut tail: Vec<u64> = self.prefix(r).iter().map(|&v| u64::from(v)).collect();
        tail.push(u64::from(self.lo[r]) + (i - self.offsets[r]) as u64);
        let rest: u64 = tail.iter().sum();
        std::iter::once(self.m as u64 - rest).chain(tail).collect()
    }

    /// The set of size m + 1 reached from this one by one more user: every `N + e_y`.  A row's
    /// range is the hull of what reaches it (validity `Σ N_y ≤ m + 1` is monotone in `N_c`, so
    /// the hull stays valid).
    pub fn dilate(&self) -> WindowSet {
        let w = self.d - 2;
        // Candidate rows: prefix (flattened, stride w) and range; every old row gives its own
        // prefix with `N_c` raised by one (y = c) or kept (y = 0), and each `prefix + e_j`.
        let mut prefixes = Vec::with_capacity(self.prefixes.len() * (w + 1));
        let mut ranges = Vec::with_capacity(self.rows() * (w + 1));
        for r in 0..self.rows() {
            let (lo, hi) = (self.lo[r], self.lo[r] + self.row_len(r) as u32);
            prefixes.extend_from_slice(self.prefix(r));
            ranges.push((lo, hi + 1));
            for j in 0..w {
                let start = prefixes.len();
                prefixes.extend_from_slice(self.prefix(r));
                prefixes[start + j] += 1;
                ranges.push((lo, hi));
            }
        }
        WindowSet::merged_rows(self.d, self.m + 1, &prefixes, &ranges)
    }

    /// The set of size m whose rows are the candidate rows `(prefix, [lo, hi))` (prefixes
    /// flattened with stride d − 2), candidates with equal prefix merged into their hull.
    fn merged_rows(d: usize, m: usize, prefixes: &[u32], ranges: &[(u32, u32)]) -> WindowSet {
        let w = d - 2;
        let key = |i: usize| &prefixes[w * i..w * (i + 1)];
        let mut order: Vec<usize> = (0..ranges.len()).collect();
        order.sort_unstable_by(|&x, &y| key(x).cmp(key(y)));
        let mut set = WindowSet {
            d,
            m,
            prefixes: Vec::with_capacity(prefixes.len()),
            lo: Vec::with_capacity(ranges.len()),
            offsets: vec![0],
        };
        let mut i = 0;
        while i < order.len() {
            let (mut lo, mut hi) = ranges[order[i]];
            let mut j = i + 1;
            while j < order.len() && key(order[j]) == key(order[i]) {
                lo = lo.min(ranges[order[j]].0);
                hi = hi.max(ranges[order[j]].1);
                j += 1;
            }
            set.push_row(key(order[i]), lo, hi - lo);
            i = j;
        }
        set
    }

    /// Appends a row (its prefix after every existing row's).
    fn push_row(&mut self, prefix: &[u32], lo: u32, len: u32) {
        self.prefixes.extend_from_slice(prefix);
        self.lo.push(lo);
        self.offsets
            .push(self.offsets.last().expect("non-empty") + len as usize);
    }

    /// For each row of `self` (size m + 1) and each symbol y, at `[d·r + y]`: the source row
    /// of `from` (size m) whose states `N − e_y` feed it, and the shift in `N_c` (1 for y = c,
    /// else 0).
    pub(crate) fn sources(&self, from: &WindowSet) -> Vec<(Option<usize>, u32)> {
        let (d, c) = (self.d, self.d - 1);
        let mut out = vec![(None, 0); d * self.rows()];
        let mut q = vec![0; c - 1];
        for r in 0..self.rows() {
            let row = &mut out[d * r..d * (r + 1)];
            let p = self.prefix(r);
            row[0] = (from.find_row(p), 0);
            row[c] = (row[0].0, 1);
            for j in 0..c - 1 {
                if p[j] > 0 {
                    q.copy_from_slice(p);
                    q[j] -= 1;
                    row[j + 1] = (from.find_row(&q), 0);
                }
            }
        }
        out
    }

    /// Index of row r's first state, and its first `N_c`.
    pub(crate) fn row_start(&self, r: usize) -> (usize, u32) {
        (self.offsets[r], self.lo[r])
    }

    /// One past row r's last state.
    pub(crate) fn row_end(&self, r: usize) -> usize {
        self.offsets[r + 1]
    }

    /// The same set with each row cut to the hull of its `keep[i]` states (rows left empty
    /// removed), and the kept index ranges, in order.
    pub(crate) fn restricted(&self, keep: &[bool]) -> (WindowSet, Vec<std::ops::Range<usize>>) {
        let mut set = WindowSet {
            d: self.d,
            m: self.m,
            prefixes: Vec::new(),
            lo: Vec::new(),
            offsets: vec![0],
        };
        let mut kept = Vec::new();
        for r in 0..self.rows() {
            let (a, b) = (self.offsets[r], self.offsets[r + 1]);
            let Some(first) = (a..b).find(|&i| keep[i]) else {
                continue;
            };
            let last = (a..b).rev().find(|&i| keep[i]).expect("first exists");
            set.push_row(
                self.prefix(r),
                self.lo[r] + (first - a) as u32,
                (last - first + 1) as u32,
            );
            kept.push(first..last + 1);
        }
        (set, kept)
    }
}

/// The values at the kept ranges of [`WindowSet::restricted`].
pub(crate) fn gather<T: Clone>(values: &[T], kept: &[std::ops::Range<usize>]) -> Vec<T> {
    let mut out = Vec::with_capacity(kept.iter().map(|r| r.len()).sum());
    for r in kept {
        out.extend_from_slice(&values[r.clone()]);
    }
    out
}

/// A law on a [`WindowSet`]: a sub-measure of the true law, short of it by at most `omitted`.
#[derive(Clone, Debug)]
pub struct WindowedLaw<S> {
    pub set: Arc<WindowSet>,
    pub values: Vec<S>,
    pub omitted: Rational,
}

impl<S: Scalar> WindowedLaw<S> {
    /// The point mass at the empty histogram.
    pub fn empty(d: usize, ctx: &S::Ctx) -> Self {
        WindowedLaw {
            set: Arc::new(WindowSet::empty(d)),
            values: vec![S::one(ctx)],
            omitted: Rational::new(),
        }
    }

    /// Drops every value certainly below `2^-tau_bits` of the largest, adds their mass to
    /// `omitted`, and trims the set to what is kept.
    pub(crate) fn prune(self, tau_bits: u32, ctx: &S::Ctx) -> Self {
        let max = self
            .values
            .iter()
            .map(|x| x.approx_f64())
            .fold(0.0, f64::max);
        let threshold = S::from_rational(
            &(Rational::from_f64(max).unwrap_or_default() >> tau_bits),
            ctx,
        );
        // Dropped values are recorded and zeroed (a row keeps the hull of what it keeps).
        let mut dropped = S::zero(ctx);
        let mut values = self.values;
        let keep: Vec<bool> = values
            .iter_mut()
            .map(|x| {
                if !x.is_exact_zero() && x.certainly_below(&threshold) {
                    dropped.add_assign(x);
                    *x = S::zero(ctx);
                }
                !x.is_exact_zero()
            })
            .collect();
        let (set, kept) = self.set.restricted(&keep);
        WindowedLaw {
            set: Arc::new(set),
            values: gather(&values, &kept),
            omitted: self.omitted + upper_bound(&dropped),
        }
    }
}

/// Inner binomial windows are cut at `2^-bits` of their mode or below: their omitted tail then
/// widens the row's values by about `2^-bits` relative (see [`multinomial`]).
const MIN_INNER_BITS: u32 = 56;

/// `Mult(m, w)` on a window (see the module docs); `tau_bits = None` keeps every histogram.
pub fn multinomial<S: Scalar>(
    m: usize,
    w: &[S],
    tau_bits: Option<u32>,
    ctx: &S::Ctx,
) -> WindowedLaw<S> {
    let d = w.len();
    let c = d - 1;
    // tails[j] = w(0) + w(j) + w(j+1) + … + w(c): the mass of "output j or later, or 0".
    let mut tails = vec![w[0].clone(); c + 2];
    for j in (1..=c).rev() {
        tails[j] = tails[j + 1].add(&w[j]);
    }
    // Level by level: prefixes with their weights (products of the binomial factors so far).
    let mut level: Vec<(Vec<u32>, S)> = vec![(Vec::new(), S::one(ctx))];
    let mut omitted = Rational::new();
    let mut rows = Vec::new();
    let mut values = Vec::new();
    for j in 1..=c {
        let max = level
            .iter()
            .map(|(_, v)| v.approx_f64())
            .fold(0.0, f64::max);
        let mut next = Vec::new();
        for (prefix, weight) in &level {
            let used: u32 = prefix.iter().sum();
            let r = m - used as usize;
            // Scale the cut by the prefix's weight, to keep what is ≥ 2^-τ of the largest
            // overall; but cut no closer than 2^-MIN_INNER_BITS of the row's mode, so that the
            // row's normalisation (its sum plus a tail bound) stays relatively tight.
            let tau = tau_bits.map(|t| {
                let scale = (max / weight.approx_f64()).log2();
                let scale = if scale.is_finite() {
                    scale.max(0.0)
                } else {
                    0.0
                };
                (f64::from(t) - scale).max(f64::from(MIN_INNER_BITS.min(t))) as u32
            });
            let window = if r == 0 {
                binomial_window(0, &w[j], &w[0], tau, ctx)
            } else {
                let p = w[j].div(&tails[j]);
                let q = tails[j + 1].div(&tails[j]);
                binomial_window(r, &p, &q, tau, ctx)
            };
            omitted += upper_bound(weight) * &window.omitted;
            if j == c {
                rows.push((
                    prefix.clone(),
                    window.start as u32,
                    window.values.len() as u32,
                ));
                values.extend(window.values.iter().map(|v| v.mul(weight)));
            } else {
                for (i, v) in window.values.iter().enumerate() {
                    let mut p = prefix.clone();
                    p.push((window.start + i) as u32);
                    next.push((p, v.mul(weight)));
                }
            }
        }
        level = next;
    }
    WindowedLaw {
        set: Arc::new(WindowSet::from_rows(d, m, rows)),
        values,
        omitted,
    }
}

/// One more user with output law `w`: `H'(N) = Σ_y w(y) H(N − e_y)` on the dilated set, then
/// (with `tau_bits`) pruned below `2^-τ` of the largest value.
pub fn step<S: Scalar>(
    law: &WindowedLaw<S>,
    w: &[S],
    tau_bits: Option<u32>,
    ctx: &S::Ctx,
) -> WindowedLaw<S> {
    let set = law.set.dilate();
    let values = shifted_values(&law.set, &set, &law.values, w, ctx);
    let out = WindowedLaw {
        set: Arc::new(set),
        values,
        omitted: law.omitted.clone(),
    };
    match tau_bits {
        Some(t) => out.prune(t, ctx),
        None => out,
    }
}

/// The values of `Σ_y w(y) H(N − e_y)` on `to` (the dilation of `from`).
fn shifted_values<S: Scalar>(
    from: &WindowSet,
    to: &WindowSet,
    h: &[S],
    w: &[S],
    ctx: &S::Ctx,
) -> Vec<S> {
    let d = to.d();
    let mut out = vec![S::zero(ctx); to.len()];
    crate::progress::checkpoint();
    for (r, sources) in to.sources(from).chunks(d).enumerate() {
        let (a, lo) = to.row_start(r);
        let row = &mut out[a..to.row_end(r)];
        for (y, &(source, shift)) in sources.iter().enumerate() {
            let Some(s) = source else { continue };
            if w[y].is_exact_zero() {
                continue;
            }
            let (sa, slo) = from.row_start(s);
            for (i, v) in h[sa..from.row_end(s)].iter().enumerate() {
                if !v.is_exact_zero() {
                    row[(slo + shift + i as u32 - lo) as usize].add_mul_assign(&w[y], v);
                }
            }
        }
    }
    out
}

/// The law of the sum of independent histograms with laws `a` and `b` (sizes add): every
/// stored pair of states contributes `a(x)·b(y)` at `x + y`, on the Minkowski sum of the two
/// sets (each row the hull of what reaches it).  The true laws are `a + A_d`, `b + B_d`, so the
/// true convolution is `a ⊛ b + (A_d ⊛ B + a ⊛ B_d)`: the omitted masses add.  With `tau_bits`
/// the result is pruned like a user step.
pub fn convolve<S: Scalar>(
    a: &WindowedLaw<S>,
    b: &WindowedLaw<S>,
    tau_bits: Option<u32>,
    ctx: &S::Ctx,
) -> WindowedLaw<S> {
    let (sa, sb) = (&a.set, &b.set);
    // The prefix of the rows that a pair of rows reaches, into a reused buffer.
    let prefix_sum = |ra: usize, rb: usize, buf: &mut Vec<u32>| {
        buf.clear();
        buf.extend(sa.prefix(ra).iter().zip(sb.prefix(rb)).map(|(x, y)| x + y));
    };
    let mut prefix = Vec::with_capacity(sa.d() - 2);
    // The result's rows: each pair of rows reaches the prefix sum with a range of N_c; equal
    // prefixes merge into their hull as they arrive, so memory follows the result's rows.
    let mut rows: std::collections::BTreeMap<Vec<u32>, (u32, u32)> = Default::default();
    for ra in 0..sa.rows() {
        for rb in 0..sb.rows() {
            prefix_sum(ra, rb, &mut prefix);
            let lo = sa.lo[ra] + sb.lo[rb];
            let hi = lo + (sa.row_len(ra) + sb.row_len(rb) - 1) as u32;
            let range = rows.entry(prefix.clone()).or_insert((lo, hi));
            *range = (range.0.min(lo), range.1.max(hi));
        }
    }
    let set = WindowSet::from_rows(
        sa.d(),
        sa.size() + sb.size(),
        rows.into_iter().map(|(p, (lo, hi))| (p, lo, hi - lo)),
    );
    let mut out = vec![S::zero(ctx); set.len()];
    for ra in 0..sa.rows() {
        crate::progress::checkpoint();
        let (a_start, a_lo) = sa.row_start(ra);
        let a_row = &a.values[a_start..sa.row_end(ra)];
        for rb in 0..sb.rows() {
            prefix_sum(ra, rb, &mut prefix);
            let r = set
                .find_row(&prefix)
                .expect("every candidate row is in the merged set");
            let (start, lo) = set.row_start(r);
            let (b_start, b_lo) = sb.row_start(rb);
            let b_row = &b.values[b_start..sb.row_end(rb)];
            for (i, x) in a_row.iter().enumerate() {
                if x.is_exact_zero() {
                    continue;
                }
                let offset = start + (a_lo + b_lo + i as u32 - lo) as usize;
                for (o, y) in out[offset..offset + b_row.len()].iter_mut().zip(b_row) {
                    o.add_mul_assign(x, y);
                }
            }
        }
    }
    let law = WindowedLaw {
        set: Arc::new(set),
        values: out,
        omitted: Rational::from(&a.omitted + &b.omitted),
    };
    match tau_bits {
        Some(t) => law.prune(t, ctx),
        None => law,
    }
}

/// The pair `(Σ_y W0(y) H(N − e_y), Σ_y W1(y) H(N − e_y))` on the dilation of `h`'s set: the
/// shift identities of Part I Lemma 4.2 with `H = T_{n−1,k}`.
pub fn pair<S: Scalar>(h: &WindowedLaw<S>, channel: &Channel<S>, ctx: &S::Ctx) -> PairLaw<S> {
    let set = h.set.dilate();
    let p = shifted_values(&h.set, &set, &h.values, &channel.w[0], ctx);
    let q = shifted_values(&h.set, &set, &h.values, &channel.w[1], ctx);
    let (ratio_lo, ratio_hi) = ratio_range(channel);
    PairLaw {
        p,
        q,
        omitted: h.omitted.clone(),
        ratio_lo,
        ratio_hi,
        layout: Layout::Window {
            n: set.size(),
            set: Arc::new(set),
        },
        omission: Default::default(),
    }
}

/// [`pair`] with the distinguished user sending `messages` messages (unbundled, Part I §9):
/// `(H ⊛ W0^{⊛m}, H ⊛ W1^{⊛m})`, m untruncated steps from `h` for each law (both on the m-fold
/// dilation of `h`'s set), ratio range `[min w^m, max w^m]`.
pub fn pair_sending<S: Scalar>(
    h: &WindowedLaw<S>,
    channel: &Channel<S>,
    messages: usize,
    ctx: &S::Ctx,
) -> PairLaw<S> {
    if messages == 1 {
        return pair(h, channel, ctx);
    }
    let shifted = |w: &[S]| {
        let mut law = step(h, w, None, ctx);
        for _ in 1..messages {
            law = step(&law, w, None, ctx);
        }
        law
    };
    let (p, q) = (shifted(&channel.w[0]), shifted(&channel.w[1]));
    debug_assert_eq!(p.values.len(), q.values.len());
    let (ratio_lo, ratio_hi) = ratio_range_sending(channel, messages);
    PairLaw {
        p: p.values,
        q: q.values,
        omitted: h.omitted.clone(),
        ratio_lo,
        ratio_hi,
        layout: Layout::Window {
            n: p.set.size(),
            set: p.set,
        },
        omission: Default::default(),
    }
}

/// A group of W0- and W1-users on a window: built directly as a multinomial when it starts
/// empty, then user by user (in the non-negative f64 kernel where the backend allows it).
#[derive(Clone, Debug)]
pub struct WindowGroup<S> {
    law: WindowedLaw<S>,
    /// W0- and W1-draws (messages; users when each sends one).
    zeros: usize,
    ones: usize,
    /// Messages per user (unbundled, Part I §9).
    messages: usize,
    tau_bits: Option<u32>,
}

impl<S: Scalar> WindowGroup<S> {
    /// The empty group over `d` symbols of users sending `messages` messages each.
    pub fn empty(d: usize, tau_bits: Option<u32>, messages: usize, ctx: &S::Ctx) -> Self {
        WindowGroup {
            law: WindowedLaw::empty(d, ctx),
            zeros: 0,
            ones: 0,
            messages,
            tau_bits,
        }
    }

    /// The group's law.
    pub fn law(&self) -> &WindowedLaw<S> {
        &self.law
    }
}

/// `count` more users with output law `w`: one convolution with `Mult(count, w)` built on
/// its window when that window is smaller than `count` (the convolution then costs less than
/// `count` steps over the group's window, e.g. sparse outputs at large n), else one step at
/// a time.
pub fn add_block<S: Scalar>(
    law: WindowedLaw<S>,
    count: usize,
    w: &[S],
    tau: Option<u32>,
    ctx: &S::Ctx,
) -> WindowedLaw<S> {
    if tau.is_some() && count > 1 {
        let block = multinomial(count, w, tau, ctx);
        if block.values.len() < count {
            return convolve(&law, &block, tau, ctx);
        }
    }
    add_users(law, count, w, tau, ctx)
}

/// About how many value updates [`WindowGroup::with_users`] makes for a group that starts empty
/// with `zeros` W0-users and `ones` W1-users (rows as doubles), following the same choices: the
/// larger block as a multinomial, then the other from the two blocks' factors (three outputs,
/// `blocks_kernel`: the backend runs the non-negative f64 kernel), or as one convolution with
/// its own multinomial when that window is smaller than its users, or user by user over the
/// final window (`states` values, `d` sources each).
pub fn estimated_group_work(
    (zeros, ones): (usize, usize),
    [w0, w1]: [&[f64]; 2],
    tau_bits: Option<u32>,
    states: f64,
    blocks_kernel: bool,
) -> f64 {
    let (big, small, wb, ws) = if zeros >= ones {
        (zeros, ones, w0, w1)
    } else {
        (ones, zeros, w1, w0)
    };
    let d = w0.len() as f64;
    let Some(tau) = tau_bits else {
        return big as f64 + small as f64 * states * d;
    };
    let start = super::pair::window_states_of(&[wb.to_vec()], big, tau) as f64;
    if small == 0 {
        return start;
    }
    let full_support = w0.iter().chain(w1).all(|&x| x > 0.0);
    if blocks_kernel && w0.len() == 3 && full_support && cheaper_than_steps(small, ws[1], tau) {
        return estimated_work(big, wb, small, ws, tau);
    }
    let block = super::pair::window_states_of(&[ws.to_vec()], small, tau) as f64;
    if block < small as f64 {
        start + start * block
    } else {
        start + small as f64 * states * d
    }
}

/// `count` more users with output law `w`, one step at a time.
fn add_users<S: Scalar>(
    law: WindowedLaw<S>,
    count: usize,
    w: &[S],
    tau: Option<u32>,
    ctx: &S::Ctx,
) -> WindowedLaw<S> {
    if count == 0 {
        return law;
    }
    if let Some(t) = tau {
        if let Some(done) = nonneg::add_users(&law, count, w, t, ctx) {
            return done;
        }
    }
    let mut law = law;
    for _ in 0..count {
        law = step(&law, w, tau, ctx);
    }
    law
}

impl<S: Scalar> GroupLaw<S> for WindowGroup<S> {
    fn with_users(&self, zeros: usize, ones: usize, channel: &Channel<S>, ctx: &S::Ctx) -> Self {
        let (zeros, ones) = (zeros * self.messages, ones * self.messages);
        let [w0, w1] = &channel.w;
        let law = if self.zeros + self.ones == 0 {
            // Build the larger block directly, then add the other user by user.
            let (big, small, wb, ws) = if zeros >= ones {
                (zeros, ones, w0, w1)
            } else {
                (ones, zeros, w1, w0)
            };
            let direct = match self.tau_bits {
                Some(tau) if small > 0 && cheaper_than_steps(small, ws[1].approx_f64(), tau) => {
                    two_blocks(big, wb, small, ws, tau, ctx)
                }
                _ => None,
            };
            match direct {
                Some(law) => law,
                None => {
                    let start = multinomial(big, wb, self.tau_bits, ctx);
                    add_block(start, small, ws, self.tau_bits, ctx)
                }
            }
        } else {
            let (all_zeros, all_ones) = (self.zeros + zeros, self.ones + ones);
            let rebuilt = match self.tau_bits {
                // A group of one kind of user is one multinomial, built directly (as from the
                // empty group) instead of stepping the new users over the current window.
                _ if all_zeros == 0 || all_ones == 0 => {
                    let (count, w) = if all_ones == 0 {
                        (all_zeros, w0)
                    } else {
                        (all_ones, w1)
                    };
                    Some(multinomial(count, w, self.tau_bits, ctx))
                }
                // Three outputs: the whole group again from its two blocks when that costs less
                // than stepping the new users over the current window (the profile's tree near
                // its root).
                Some(tau) if w0.len() == 3 => {
                    let approx =
                        |w: &[S]| -> Vec<f64> { w.iter().map(|x| x.approx_f64()).collect() };
                    let work = estimated_work(all_zeros, &approx(w0), all_ones, &approx(w1), tau);
                    let steps = (zeros + ones) as f64 * self.law.values.len() as f64;
                    (work < STEP_COST_IN_BLOCK_WORK * steps)
                        .then(|| two_blocks(all_zeros, w0, all_ones, w1, tau, ctx))
                        .flatten()
                }
                _ => None,
            };
            match rebuilt {
                Some(law) => law,
                None => {
                    let law = add_block(self.law.clone(), zeros, w0, self.tau_bits, ctx);
                    add_block(law, ones, w1, self.tau_bits, ctx)
                }
            }
        };
        WindowGroup {
            law,
            zeros: self.zeros + zeros,
            ones: self.ones + ones,
            messages: self.messages,
            tau_bits: self.tau_bits,
        }
    }

    fn pair(&self, channel: &Channel<S>, ctx: &S::Ctx) -> PairLaw<S> {
        PairLaw {
            omission: Omission::of_group(channel, self.zeros, self.ones, self.messages, ctx),
            ..pair_sending(&self.law, channel, self.messages, ctx)
        }
    }
}
