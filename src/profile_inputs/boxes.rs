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

    /// The users the box's compositions all hold (`Σ lo`).
    pub fn fixed(&self) -> u64 {
        self.lo.iter().sum()
    }

    /// Whether the box is one composition.
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    /// The number of compositions in the box (saturating).
    pub fn count(&self, m: u64) -> u128 {
        // Compositions of the free users r = m − Σ lo with c_x − lo_x ≤ hi_x − lo_x: by
        // inclusion–exclusion over a small number of inputs, or a DP; a DP over inputs is exact.
        let r = (m - self.fixed()) as usize;
        let mut ways = vec![0u128; r + 1];
        ways[0] = 1;
        for (lo, hi) in self.lo.iter().zip(&self.hi) {
            let width = (hi - lo) as usize;
            let mut next = vec![0u128; r + 1];
            // next[s] = Σ_{t=0}^{min(width, s)} ways[s − t], by a running window sum.
            let mut window = 0u128;
            for s in 0..=r {
                window = window.saturating_add(ways[s]);
                if s > width {
                    window -= ways[s - width - 1];
                }
                next[s] = window;
            }
            ways = next;
        }
        ways[r]
    }

    /// The box with `lo` and `hi` tightened by `Σ c = m`: `lo_x ≥ m − Σ_{y≠x} hi_y` and
    /// `hi_x ≤ m − Σ_{y≠x} lo_y`; `None` when the box holds no composition.
    pub fn tightened(mut self, m: u64) -> Option<Self> {
        let sum_hi: u64 = self.hi.iter().sum();
        let sum_lo: u64 = self.lo.iter().sum();
        if sum_lo > m || sum_hi < m {
            return None;
        }
        for x in 0..self.lo.len() {
            let others_hi = sum_hi - self.hi[x];
            let others_lo = sum_lo - self.lo[x];
            self.lo[x] = self.lo[x].max(m.saturating_sub(others_hi));
            self.hi[x] = self.hi[x].min(m - others_lo);
        }
        // One pass reaches the fixed point: the new bounds use the old sums, and each new
        // bound is implied by them (c_x = m − Σ_{y≠x} c_y).
        debug_assert!(self.lo.iter().zip(&self.hi).all(|(l, h)| l <= h));
        Some(self)
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
                let mut found = Vec::new();
                leaves(&root, m, &mut found);
                found.sort();
                assert_eq!(found, compositions(inputs, m), "{inputs} inputs, m = {m}");
            }
        }
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
