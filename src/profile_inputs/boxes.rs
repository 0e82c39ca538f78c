//! Boxes of background compositions: `{c : lo ≤ c ≤ hi, Σ c = m}` over the inputs, with the
//! guaranteed part `lo` tightened by the sum (proofs-notes/inputs-profile.md).
//!
//! Every composition of a box contains its `lo` (`c ≥ lo` coordinatewise), so its pair is the
//! pair of `lo` with the other `m − Σ lo` users added; by data processing the pair of `lo`
//! bounds every composition in the box.

/// A box of compositions of `m` users over the inputs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompositionBox {
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
}

impl CompositionBox {
    /// Every composition of `m` users over `inputs` inputs.
    pub fn all(inputs: usize, m: u64) -> Self {
        CompositionBox {
            lo: vec![0; inputs],
            hi: vec![m; inputs],
        }
        .tightened(m)
        .expect("the simplex is not empty")
    }

    /// Every composition of `m` users whose counts decrease along each block (inputs in
    /// increasing order), and more: the j-th input of a block (from 0) holds at most
    /// `⌊m/(j + 1)⌋` users, since it holds no more than each of the j before it.  Every
    /// composition has an image of that form under the permutations within the blocks.
    pub fn sorted_within(inputs: usize, m: u64, blocks: &[Vec<usize>]) -> Self {
        let mut hi = vec![m; inputs];
        for block in blocks {
            for (j, &x) in block.iter().enumerate() {
                hi[x] = hi[x].min(m / (j as u64 + 1));
            }
        }
        CompositionBox {
            lo: vec![0; inputs],
            hi,
        }
        .tightened(m)
        .expect("every block's first input can hold all m users")
    }

    /// The users the box's compositions all hold (`Σ lo`).
    pub fn fixed(&self) -> u64 {
        self.lo.iter().fold(0u64, |a, b| a.saturating_add(*b))
    }

    /// Whether the box is one composition.
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    /// The number of compositions in the box, saturating at `u128::MAX`.
    ///
    /// With `r = m − Σ lo` free users and widths `w_x = hi_x − lo_x`, only the coordinates with
    /// `w_x < r` constrain anything; over those, inclusion–exclusion gives
    /// `Σ_S (−1)^|S| C(r − Σ_{x∈S}(w_x + 1) + d − 1, d − 1)` in exact integers (no O(r) memory,
    /// so any n is fine). When 2^|S| would pass the cost of a DP over `r` (many constrained
    /// inputs, few users), the DP counts instead.
    pub fn count(&self, m: u64) -> u128 {
        let r = m - self.fixed();
        let d = self.lo.len() as u32;
        let constrained: Vec<u64> = self
            .lo
            .iter()
            .zip(&self.hi)
            .map(|(lo, hi)| hi - lo)
            .filter(|&w| w < r)
            .collect();
        let subsets = 1u128
            .checked_shl(constrained.len() as u32)
            .unwrap_or(u128::MAX);
        if subsets > 4096 && (r as u128) * (d as u128) < subsets {
            return self.count_by_dp(r as usize);
        }
        let mut total = rug::Integer::new();
        for mask in 0..(1u64 << constrained.len()) {
            let taken: u128 = constrained
                .iter()
                .enumerate()
                .filter(|(i, _)| mask >> i & 1 == 1)
                .map(|(_, w)| *w as u128 + 1)
                .sum();
            if taken > r as u128 {
                continue;
            }
            let top = rug::Integer::from(r as u128 - taken) + (d - 1);
            let term = top.binomial(d - 1);
            if mask.count_ones() % 2 == 0 {
                total += term;
            } else {
                total -= term;
            }
        }
        total.to_u128().unwrap_or(u128::MAX)
    }

    /// A count of [`Self::count`] as text: `more than 3.4e38` when it saturated.
    pub fn count_text(count: u128) -> String {
        if count == u128::MAX {
            "more than 3.4e38".to_string()
        } else {
            count.to_string()
        }
    }

    /// [`Self::count`] by a DP over the inputs in exact integers, `r + 1` counters (for few
    /// free users).
    fn count_by_dp(&self, r: usize) -> u128 {
        use rug::Integer;
        let mut ways = vec![Integer::new(); r + 1];
        ways[0] = Integer::from(1);
        for (lo, hi) in self.lo.iter().zip(&self.hi) {
            let width = (hi - lo) as usize;
            // next[s] = Σ_{t=0}^{min(width, s)} ways[s − t], by a running window sum.
            let mut window = Integer::new();
            let mut next = Vec::with_capacity(r + 1);
            for s in 0..=r {
                window += &ways[s];
                if s > width {
                    window -= &ways[s - width - 1];
                }
                next.push(window.clone());
            }
            ways = next;
        }
        ways[r].to_u128().unwrap_or(u128::MAX)
    }

    /// The box with `lo` and `hi` tightened by `Σ c = m`: `lo_x ≥ m − Σ_{y≠x} hi_y` and
    /// `hi_x ≤ m − Σ_{y≠x} lo_y`; `None` when the box holds no composition.
    pub fn tightened(mut self, m: u64) -> Option<Self> {
        // Sums in u128: d coordinates of up to m each cannot overflow it.
        let sum_hi: u128 = self.hi.iter().map(|&h| h as u128).sum();
        let sum_lo: u128 = self.lo.iter().map(|&l| l as u128).sum();
        let m128 = m as u128;
        if sum_lo > m128 || sum_hi < m128 {
            return None;
        }
        for x in 0..self.lo.len() {
            let others_hi = sum_hi - self.hi[x] as u128;
            let others_lo = sum_lo - self.lo[x] as u128;
            // Both fit u64: m − others_hi ≤ m, and m − others_lo ≤ m since others_lo ≤ m.
            self.lo[x] = self.lo[x].max(m128.saturating_sub(others_hi) as u64);
            self.hi[x] = self.hi[x].min((m128 - others_lo) as u64);
        }
        // One pass reaches the fixed point: the new bounds use the old sums, and each new
        // bound is implied by them (c_x = m − Σ_{y≠x} c_y).
        debug_assert!(self.lo.iter().zip(&self.hi).all(|(l, h)| l <= h));
        Some(self)
    }

    /// [`Self::split`], except that the first input `x` of `first` whose range `[l, h]` passes
    /// `l`'s bucket (`0`, or `[l, 2l − 1]`) is split into that bucket and the rest: `0 | [1, h]`,
    /// `1 | [2, h]`, `[2, 3] | [4, h]`, …  The search splits the switch inputs this way where the
    /// backgrounds off the switch are dominated (Lemma 3, `dominance.rs`), so that few users on
    /// them are told apart from many.
    ///
    /// Each part keeps only the compositions whose counts decrease along each of `blocks`
    /// ([`Self::sorted_tightened`]): the sorted root's compositions, one image at least of each.
    pub fn split_peeling(
        &self,
        m: u64,
        first: &[usize],
        blocks: &[Vec<usize>],
    ) -> Vec<CompositionBox> {
        let parts = match self.to_peel(first) {
            None => self.split(m),
            Some(x) => {
                let mut bucket = self.clone();
                bucket.hi[x] = bucket_end(self.lo[x]);
                let mut above = self.clone();
                above.lo[x] = bucket_end(self.lo[x]) + 1;
                vec![bucket, above]
            }
        };
        parts
            .into_iter()
            .filter_map(|b| b.sorted_tightened(m, blocks))
            .collect()
    }

    /// The box of its compositions whose counts decrease along each block (the inputs of a
    /// block in increasing order): `lo` raised to the next input's `lo` and `hi` lowered to the
    /// previous input's `hi` along each block, and tightened by the sum, to a fixed point;
    /// `None` when none is left.
    pub fn sorted_tightened(mut self, m: u64, blocks: &[Vec<usize>]) -> Option<Self> {
        loop {
            let before = self.clone();
            for block in blocks {
                for i in (0..block.len().saturating_sub(1)).rev() {
                    self.lo[block[i]] = self.lo[block[i]].max(self.lo[block[i + 1]]);
                }
                for i in 1..block.len() {
                    self.hi[block[i]] = self.hi[block[i]].min(self.hi[block[i - 1]]);
                }
            }
            if self.lo.iter().zip(&self.hi).any(|(l, h)| l > h) {
                return None;
            }
            self = self.tightened(m)?;
            if self == before {
                return Some(self);
            }
        }
    }

    /// The first input of `first` whose range passes its lower end's bucket
    /// ([`Self::split_peeling`]).
    pub fn to_peel(&self, first: &[usize]) -> Option<usize> {
        first
            .iter()
            .copied()
            .find(|&x| self.hi[x] > bucket_end(self.lo[x]))
    }

    /// The two halves of the widest coordinate's range (both non-empty, tightened).
    pub fn split(&self, m: u64) -> Vec<CompositionBox> {
        let x = (0..self.lo.len())
            .max_by_key(|&x| (self.hi[x] - self.lo[x], std::cmp::Reverse(x)))
            .expect("a box has inputs");
        let mid = self.lo[x] + (self.hi[x] - self.lo[x]) / 2;
        let mut low = self.clone();
        low.hi[x] = mid;
        let mut high = self.clone();
        high.lo[x] = mid + 1;
        [low, high]
            .into_iter()
            .filter_map(|b| b.tightened(m))
            .collect()
    }
}

/// The last count of the bucket `l` starts: `0` for `l = 0`, else `2l − 1`.
fn bucket_end(l: u64) -> u64 {
    if l == 0 { 0 } else { 2 * l - 1 }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Every composition of `m` users over `inputs` inputs (for the tests of this module and
    /// its siblings).
    pub(in crate::profile_inputs) fn compositions(inputs: usize, m: u64) -> Vec<Vec<u64>> {
        if inputs == 1 {
            return vec![vec![m]];
        }
        (0..=m)
            .flat_map(|first| {
                compositions(inputs - 1, m - first)
                    .into_iter()
                    .map(move |mut rest| {
                        rest.insert(0, first);
                        rest
                    })
            })
            .collect()
    }

    fn leaves(b: &CompositionBox, m: u64, out: &mut Vec<Vec<u64>>) {
        if b.is_point() {
            assert_eq!(b.fixed(), m);
            out.push(b.lo.clone());
        } else {
            let parts = b.split(m);
            let total: u128 = parts.iter().map(|p| p.count(m)).sum();
            assert_eq!(total, b.count(m), "splitting keeps every composition");
            for p in parts {
                leaves(&p, m, out);
            }
        }
    }

    #[test]
    fn splitting_to_points_lists_every_composition_once() {
        for inputs in 1..=4 {
            for m in 0..=7 {
                let root = CompositionBox::all(inputs, m);
                assert_eq!(root.count(m), compositions(inputs, m).len() as u128);
                assert_eq!(root.count(m), root.count_by_dp((m - root.fixed()) as usize));
                let mut found = Vec::new();
                leaves(&root, m, &mut found);
                found.sort();
                assert_eq!(found, compositions(inputs, m), "{inputs} inputs, m = {m}");
            }
        }
    }

    /// The points reached from `root` splitting by `split`, sorted.
    fn points_by(
        root: CompositionBox,
        split: impl Fn(&CompositionBox) -> Vec<CompositionBox>,
    ) -> Vec<Vec<u64>> {
        let mut stack = vec![root];
        let mut found = Vec::new();
        while let Some(b) = stack.pop() {
            if b.is_point() {
                found.push(b.lo.clone());
            } else {
                stack.extend(split(&b));
            }
        }
        found.sort();
        found
    }

    #[test]
    fn peeling_lists_every_composition_once() {
        for m in 0..=6 {
            let found = points_by(CompositionBox::all(4, m), |b| {
                let parts = b.split_peeling(m, &[2, 0], &[]);
                let total: u128 = parts.iter().map(|p| p.count(m)).sum();
                assert_eq!(total, b.count(m), "peeling keeps every composition");
                if b.lo[2] == 0 && b.hi[2] > 0 {
                    assert!(parts.iter().any(|p| p.hi[2] == 0));
                }
                if b.lo[2] == 2 && b.hi[2] > 3 {
                    assert!(parts.iter().any(|p| p.hi[2] == 3));
                }
                parts
            });
            assert_eq!(found, compositions(4, m), "m = {m}");
        }
    }

    #[test]
    fn peeling_within_blocks_lists_every_sorted_composition_once() {
        // Blocks {0, 1} and {2, 3, 4}: the sorted compositions, from the sorted root.
        let blocks = vec![vec![0, 1], vec![2, 3, 4]];
        let sorted = |c: &Vec<u64>| {
            blocks
                .iter()
                .all(|b| b.windows(2).all(|w| c[w[0]] >= c[w[1]]))
        };
        for m in 0..=7 {
            let found = points_by(CompositionBox::sorted_within(5, m, &blocks), |b| {
                b.split_peeling(m, &[0, 1], &blocks)
            });
            let expected: Vec<Vec<u64>> = compositions(5, m).into_iter().filter(sorted).collect();
            assert_eq!(found, expected, "m = {m}");
        }
    }

    #[test]
    fn any_number_of_users_is_counted_without_overflow_or_memory() {
        let m = u64::MAX;
        let root = CompositionBox::all(4, m);
        assert_eq!(root.count(m), u128::MAX, "C(2^64 + 2, 3) saturates");
        let parts = root.split(m);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.count(m) == u128::MAX));
        // 2^40 users over three inputs: C(2^40 + 2, 2) exactly.
        let m = 1u64 << 40;
        let c = (m as u128 + 2) * (m as u128 + 1) / 2;
        assert_eq!(CompositionBox::all(3, m).count(m), c);
    }

    #[test]
    fn every_composition_of_a_box_contains_its_lower_corner() {
        let m = 6;
        let root = CompositionBox::all(3, m);
        let mut stack = vec![root];
        while let Some(b) = stack.pop() {
            let inside: Vec<Vec<u64>> = compositions(3, m)
                .into_iter()
                .filter(|c| {
                    c.iter()
                        .zip(&b.lo)
                        .zip(&b.hi)
                        .all(|((c, l), h)| l <= c && c <= h)
                })
                .collect();
            assert_eq!(inside.len() as u128, b.count(m));
            assert_eq!(b.count_by_dp((m - b.fixed()) as usize), b.count(m));
            assert!(
                inside
                    .iter()
                    .all(|c| c.iter().zip(&b.lo).all(|(c, l)| c >= l))
            );
            if !b.is_point() {
                stack.extend(b.split(m));
            }
        }
    }
}
