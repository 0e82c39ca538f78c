//! The histogram law `T_{n,k}` over all histograms of size n (Part I §2.1, §8.3).
//!
//! A histogram `N = (N_0, …, N_{d−1})` of size m is stored through its last `c = d−1`
//! coordinates; `N_0 = m − Σ N_y` is implied.  [`SimplexIndex`] ranks the tuples in *colex*
//! order of the combinatorial number system: with prefix sums `s_i = N_1 + … + N_i` and
//! `b_i = s_i + i − 1`, `rank(N) = Σ_i C(b_i, i)`.  All tuples with `Σ N_y ≤ m` form the prefix
//! `0 .. C(m+c, c)`, so one array serves every size m and the dynamic program
//!
//! `H_j(a) = Σ_y p_j(y) H_{j−1}(a − e_y)`   (Part I §8.3)
//!
//! runs in place, from the highest rank down (a − e_y always has a smaller rank than a).

use crate::arith::Scalar;
use crate::error::{Error, Result};
use rug::Rational;

const NONE: u32 = u32::MAX;

/// Ranks of histograms of size ≤ `n_max` over `d` symbols, with each histogram's neighbours
/// `N − e_y` (y ≥ 1) precomputed.
#[derive(Debug)]
pub struct SimplexIndex {
    d: usize,
    /// `coords[c·i + (y−1)] = N_y` of the state of rank i.
    coords: Vec<u32>,
    /// `nbr[c·i + (y−1)]` = rank of `N − e_y`, or `NONE` when `N_y = 0`.
    nbr: Vec<u32>,
    /// `prefix[m]` = number of tuples with `Σ N_y ≤ m` = `C(m + d − 1, d − 1)`.
    prefix: Vec<usize>,
}

/// `C(m + d − 1, d − 1)`, the number of histograms of size m over d symbols, if it fits.
pub fn histogram_count(m: u64, d: usize) -> Option<u64> {
    let c = (d - 1) as u64;
    let mut r: u128 = 1;
    for i in 1..=c {
        r = r.checked_mul(u128::from(m) + u128::from(i))? / u128::from(i);
        if r > u128::from(u64::MAX) {
            return None;
        }
    }
    Some(r as u64)
}

impl SimplexIndex {
    /// The index of all histograms of size ≤ `n_max` over `d ≥ 2` symbols.
    pub fn new(d: usize, n_max: usize) -> Result<Self> {
        assert!(d >= 2);
        let c = d - 1;
        let total = histogram_count(n_max as u64, d)
            .filter(|t| *t < u64::from(NONE))
            .ok_or_else(|| {
                Error::TooLarge(format!(
                    "{} histograms of size {n_max} over {d} outputs exceed the 2^32 states the general engine indexes",
                    histogram_count(n_max as u64, d).map_or("more than 2^64".to_string(), |t| t.to_string())
                ))
            })? as usize;
        let prefix = (0..=n_max)
            .map(|m| histogram_count(m as u64, d).expect("smaller than total") as usize)
            .collect();
        // binom[i][x] = C(x, i) for x ≤ n_max + c, i ≤ c.
        let binom: Vec<Vec<u64>> = (0..=c)
            .map(|i| {
                (0..=n_max + c)
                    .map(|x| small_binomial(x as u64, i as u64))
                    .collect()
            })
            .collect();
        let mut coords = Vec::with_capacity(total * c);
        let mut nbr = Vec::with_capacity(total * c);
        // Prefix sums s_1 ≤ s_2 ≤ … ≤ s_c ≤ n_max, enumerated in colex order.
        let mut s = vec![0usize; c];
        for rank in 0..total {
            for y in 0..c {
                let lower = if y == 0 { 0 } else { s[y - 1] };
                coords.push((s[y] - lower) as u32);
            }
            // Decrementing N_{y+1} lowers s_j by one for j ≥ y: rank changes by
            // −Σ_{j≥y} [C(b_j, j+1) − C(b_j − 1, j+1)] = −Σ_{j≥y} C(b_j − 1, j), a suffix sum.
            let start = nbr.len();
            nbr.resize(start + c, NONE);
            let mut drop = 0u64;
            for y in (0..c).rev() {
                let b = s[y] + y; // b_{y+1} in 1-based terms
                if b > 0 {
                    drop += binom[y][b - 1];
                }
                if coords[rank * c + y] > 0 {
                    nbr[start + y] = (rank as u64 - drop) as u32;
                }
            }
            // Advance to the next tuple in colex order.
            if rank + 1 < total {
                let mut i = 0;
                while i + 1 < c && s[i] == s[i + 1] {
                    i += 1;
                }
                s[i] += 1;
                for v in s.iter_mut().take(i) {
                    *v = 0;
                }
            }
        }
        Ok(SimplexIndex {
            d,
            coords,
            nbr,
            prefix,
        })
    }

    /// The alphabet size d.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Number of histograms of size exactly m (equivalently, of size ≤ m in reduced form).
    pub fn count(&self, m: usize) -> usize {
        self.prefix[m]
    }

    /// The histogram of size `m` with rank `i`: `(N_0, N_1, …, N_{d−1})`.
    pub fn histogram(&self, m: usize, i: usize) -> Vec<u64> {
        let c = self.d - 1;
        let tail = &self.coords[i * c..(i + 1) * c];
        let rest: u64 = tail.iter().map(|&v| u64::from(v)).sum();
        std::iter::once(m as u64 - rest)
            .chain(tail.iter().map(|&v| u64::from(v)))
            .collect()
    }

    /// One step of the dynamic program: `h` holds a law on histograms of size `m − 1`
    /// (length `count(m − 1)`); afterwards it holds the law of size m after one more user with
    /// output distribution `w` joins: `h'(a) = Σ_y w(y) h(a − e_y)`.
    ///
    /// With `prune = Some(threshold)`, every new value whose upper end is below `threshold` is
    /// set to exactly zero and its enclosure added to `dropped`: the law then splits as kept
    /// part + dropped part, and since each step is a Markov kernel (mass preserving), the mass
    /// the dropped values carry into later steps is at most the sum recorded here.
    pub fn add_user<S: Scalar>(
        &self,
        h: &mut Vec<S>,
        m: usize,
        w: &[S],
        prune: Option<&Pruning<S>>,
        ctx: &S::Ctx,
    ) {
        let c = self.d - 1;
        let old = self.count(m - 1);
        debug_assert_eq!(h.len(), old);
        let new = self.count(m);
        h.resize(new, S::zero(ctx));
        let zero_weight: Vec<bool> = w.iter().map(|x| x.is_exact_zero()).collect();
        crate::progress::checkpoint();
        for idx in (0..new).rev() {
            let own = idx < old && !zero_weight[0] && !h[idx].is_exact_zero();
            let mut acc = if own { h[idx].mul(&w[0]) } else { S::zero(ctx) };
            let mut any = own;
            for y in 1..self.d {
                let j = self.nbr[idx * c + y - 1];
                if j != NONE && !zero_weight[y] && !h[j as usize].is_exact_zero() {
                    acc.add_mul_assign(&w[y], &h[j as usize]);
                    any = true;
                }
            }
            if any {
                if let Some(p) = prune {
                    if p.drops(&acc) {
                        p.record(&acc);
                        acc = S::zero(ctx);
                    }
                }
            }
            h[idx] = acc;
        }
    }

    /// `out(a) = Σ_y w(y) h(a − e_y)` for `h` on size `m − 1`, without modifying `h`: the shift
    /// identities `P(N) = Σ_y W0(y) T_{n−1,k}(N − e_y)` (Part I Lemma 4.2).
    pub fn shifted<S: Scalar>(&self, h: &[S], m: usize, w: &[S], ctx: &S::Ctx) -> Vec<S> {
        let mut out = h.to_vec();
        self.add_user(&mut out, m, w, None, ctx);
        out
    }
}

/// Pruning state of one dynamic-program step: the threshold and the running sum of what was
/// dropped.
pub struct Pruning<S: Scalar> {
    threshold: S,
    dropped: std::cell::RefCell<S>,
}

impl<S: Scalar> Pruning<S> {
    /// Threshold ≈ `tau · max_a h(a)`.  The threshold only decides what is dropped; soundness
    /// rests on recording every dropped value, so it is chosen from approximate values.
    pub fn new(h: &[S], tau: &Rational, ctx: &S::Ctx) -> Self {
        let max = h.iter().map(|x| x.approx_f64()).fold(0.0, f64::max);
        let threshold = Rational::from_f64(max).unwrap_or_default() * tau;
        Pruning {
            threshold: S::from_rational(&threshold, ctx),
            dropped: std::cell::RefCell::new(S::zero(ctx)),
        }
    }

    fn drops(&self, x: &S) -> bool {
        x.certainly_below(&self.threshold)
    }

    fn record(&self, x: &S) {
        self.dropped.borrow_mut().add_assign(x);
    }

    pub fn dropped_upper_bound(&self) -> Rational {
        self.dropped
            .borrow()
            .enclosure()
            .hi()
            .finite()
            .cloned()
            .expect("finite dropped mass")
    }
}

fn small_binomial(x: u64, i: u64) -> u64 {
    if i > x {
        return 0;
    }
    let mut r: u128 = 1;
    for j in 0..i {
        r = r * u128::from(x - j) / u128::from(j + 1);
    }
    u64::try_from(r).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use std::collections::HashSet;

    #[test]
    fn index_enumerates_each_histogram_once_with_correct_neighbours() {
        for d in 2..=5 {
            let n = 7;
            let idx = SimplexIndex::new(d, n).unwrap();
            assert_eq!(idx.count(n) as u64, histogram_count(n as u64, d).unwrap());
            let mut seen = HashSet::new();
            for i in 0..idx.count(n) {
                let h = idx.histogram(n, i);
                assert_eq!(h.iter().sum::<u64>(), n as u64);
                assert!(seen.insert(h.clone()));
                // Prefix property: sum of the reduced coordinates ≤ m iff rank < count(m).
                let reduced: u64 = h[1..].iter().sum();
                for m in 0..=n {
                    assert_eq!(reduced <= m as u64, i < idx.count(m));
                }
                for y in 1..d {
                    let j = idx.nbr[i * (d - 1) + y - 1];
                    if h[y] == 0 {
                        assert_eq!(j, NONE);
                    } else {
                        let mut g = idx.histogram(n, j as usize)[1..].to_vec();
                        g[y - 1] += 1;
                        assert_eq!(g, h[1..].to_vec());
                    }
                }
            }
        }
    }

    #[test]
    fn multinomial_probabilities() {
        // Mult(3; 1/2, 1/3, 1/6) at (1,1,1) = 3! · 1/2 · 1/3 · 1/6 = 1/6.
        let ctx = ExactCtx::default();
        let w = [
            Rational::from((1, 2)),
            Rational::from((1, 3)),
            Rational::from((1, 6)),
        ];
        let idx = SimplexIndex::new(3, 3).unwrap();
        let mut law = vec![Rational::from(1)];
        for m in 1..=3 {
            idx.add_user(&mut law, m, &w, None, &ctx);
        }
        let total: Rational = law.iter().sum();
        assert_eq!(total, 1);
        let i = (0..idx.count(3))
            .find(|&i| idx.histogram(3, i) == vec![1, 1, 1])
            .unwrap();
        assert_eq!(law[i], Rational::from((1, 6)));
    }
}
