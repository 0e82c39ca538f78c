//! Positive-part sums `Σ_i (a_i − c·b_i)₊` at many thresholds c from one ordering of the states
//! by likelihood ratio.
//!
//! A privacy curve `δ(c) = Σ_i (a_i − c b_i)₊` (Part I Prop. 8.1, with `a`, `b` the upper and
//! lower law) is piecewise linear in `c = e^ε`: the terms with `a_i/b_i > c` contribute
//! `a_i − c b_i`, the others nothing.  [`OrderedSums`] orders the states once by an approximate
//! ratio (descending) and groups them into blocks of [`BLOCK`] states.  Each block keeps
//! certified bounds `ρ̲ = min a̲_i/b̄_i` and `ρ̄ = max ā_i/b̲_i` (doubles rounded outward, from
//! the enclosures `[a̲_i, ā_i]`, `[b̲_i, b̄_i]`), and the block sums of `a` and `b` enter
//! prefix sums kept in MPFR, so that long sums add no f64 rounding.  At `c ∈ [c̲, c̄]`:
//!
//! * a block with `ρ̲ ≥ c̄` has `a_i − c b_i ≥ a̲_i − c̄ b̄_i ≥ 0` for every state, so its terms
//!   add up to `A_blk − c B_blk`;
//! * a block with `ρ̄ ≤ c̲` has `a_i − c b_i ≤ ā_i − c̲ b̲_i ≤ 0`: it contributes nothing;
//! * any other block is summed term by term with positive parts.
//!
//! The leading blocks of the first kind are found by binary search on the prefix minimum of
//! `ρ̲`, the trailing blocks of the second kind on the suffix maximum of `ρ̄`; only the blocks
//! in between are visited.  The ordering is a heuristic from approximate doubles and never
//! enters soundness: every block's classification is certified, and a misplaced state only
//! widens the range of blocks visited term by term.

use crate::arith::{MpfrInterval, Scalar};
use crate::enclosure::Enclosure;
use inari::Interval;
use rug::Float;

/// States per block.
pub const BLOCK: usize = 64;

/// The states of a pair ordered by likelihood ratio, with block bounds and prefix sums.
#[derive(Clone, Debug)]
pub struct OrderedSums {
    /// State indices, largest approximate ratio `a_i/b_i` first.
    order: Vec<u32>,
    /// `min_{blocks ≤ j} ρ̲` per block j (non-increasing).
    rho_lo_prefix_min: Vec<f64>,
    /// `max_{blocks ≥ j} ρ̄` per block j (non-increasing).
    rho_hi_suffix_max: Vec<f64>,
    /// `Σ_{blocks < j} Σ a` and `Σ b`, for j = 0 ..= blocks, in MPFR rounded outward.
    upper_prefix: Vec<MpfrInterval>,
    lower_prefix: Vec<MpfrInterval>,
    /// The same prefix sums rounded outward to doubles, for quick certified bounds.
    upper_prefix_f64: Vec<Interval>,
    lower_prefix_f64: Vec<Interval>,
    precision: u32,
}

/// `[a̲, ā]` of a probability enclosure, with the lower end clamped at 0 (the true value is).
fn nonnegative_bounds<S: Scalar>(x: &S) -> (f64, f64) {
    let (lo, hi) = x.f64_bounds();
    (lo.max(0.0), hi)
}

/// The next double below a non-negative `x` (0 stays 0).
fn step_down(x: f64) -> f64 {
    if x > 0.0 && x.is_finite() {
        f64::from_bits(x.to_bits() - 1)
    } else if x == f64::INFINITY {
        f64::MAX
    } else {
        0.0
    }
}

/// The next double above a non-negative `x`.
fn step_up(x: f64) -> f64 {
    if x.is_finite() {
        f64::from_bits(x.max(0.0).to_bits() + 1)
    } else {
        x
    }
}

/// `x / y` rounded down (`x, y ≥ 0` finite, `y > 0`): the correctly rounded quotient is within
/// half an ulp, so one step down is below the exact one.
fn div_down(x: f64, y: f64) -> f64 {
    step_down(x / y)
}

/// `x / y` rounded up (`x, y ≥ 0` finite, `y > 0`).
fn div_up(x: f64, y: f64) -> f64 {
    step_up(x / y)
}

/// `ρ̲ ≤ a/b` for every value of the state (`+∞` when `b̄ = 0`: the term is `a ≥ 0`).
fn ratio_lower(a: (f64, f64), b: (f64, f64)) -> f64 {
    if b.1 == 0.0 {
        f64::INFINITY
    } else if a.0 == 0.0 || b.1.is_infinite() {
        0.0
    } else {
        div_down(a.0, b.1)
    }
}

/// `ρ̄ ≥ a/b` for every value of the state (`+∞` when `b̲ = 0 < ā`; 0 when `ā = 0`).
fn ratio_upper(a: (f64, f64), b: (f64, f64)) -> f64 {
    if a.1 == 0.0 {
        0.0
    } else if b.0 == 0.0 || a.1.is_infinite() {
        f64::INFINITY
    } else {
        div_up(a.1, b.0)
    }
}

impl OrderedSums {
    /// Orders the states of the laws `a` (upper) and `b` (lower); prefix sums carry
    /// `precision` bits.
    pub fn new<S: Scalar>(a: &[S], b: &[S], precision: u32) -> Self {
        assert_eq!(a.len(), b.len());
        assert!(u32::try_from(a.len()).is_ok(), "too many states to order");
        let mut keyed: Vec<(f64, u32)> = a
            .iter()
            .zip(b)
            .enumerate()
            .map(|(i, (x, y))| {
                let (ax, bx) = (x.approx_f64(), y.approx_f64());
                let key = if bx > 0.0 {
                    ax / bx
                } else if ax > 0.0 {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                };
                (if key.is_nan() { 0.0 } else { key }, i as u32)
            })
            .collect();
        // Pairs on binary histograms come ordered already (L is monotone in the count): skip
        // the sort when the keys are monotone either way.
        if keyed.windows(2).all(|w| w[0].0 <= w[1].0) {
            keyed.reverse();
        } else if !keyed.windows(2).all(|w| w[0].0 >= w[1].0) {
            keyed.sort_unstable_by(|x, y| y.0.total_cmp(&x.0));
        }
        let order: Vec<u32> = keyed.into_iter().map(|(_, i)| i).collect();

        let blocks = order.len().div_ceil(BLOCK);
        let mut rho_lo = Vec::with_capacity(blocks);
        let mut rho_hi = Vec::with_capacity(blocks);
        let zero = || {
            MpfrInterval::from_floats(Float::with_val(precision, 0), Float::with_val(precision, 0))
        };
        let mut upper_prefix = vec![zero()];
        let mut lower_prefix = vec![zero()];
        for chunk in order.chunks(BLOCK) {
            let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
            let first = chunk[0] as usize;
            let mut sum_a = a[first].clone();
            let mut sum_b = b[first].clone();
            for (j, &i) in chunk.iter().enumerate() {
                let i = i as usize;
                let (ab, bb) = (nonnegative_bounds(&a[i]), nonnegative_bounds(&b[i]));
                lo = lo.min(ratio_lower(ab, bb));
                hi = hi.max(ratio_upper(ab, bb));
                if j > 0 {
                    sum_a.add_assign(&a[i]);
                    sum_b.add_assign(&b[i]);
                }
            }
            rho_lo.push(lo);
            rho_hi.push(hi);
            let next_a = upper_prefix
                .last()
                .expect("non-empty")
                .add(&sum_a.to_mpfr(precision));
            let next_b = lower_prefix
                .last()
                .expect("non-empty")
                .add(&sum_b.to_mpfr(precision));
            upper_prefix.push(next_a);
            lower_prefix.push(next_b);
        }
        let mut rho_lo_prefix_min = rho_lo;
        for j in 1..rho_lo_prefix_min.len() {
            rho_lo_prefix_min[j] = rho_lo_prefix_min[j].min(rho_lo_prefix_min[j - 1]);
        }
        let mut rho_hi_suffix_max = rho_hi;
        for j in (0..rho_hi_suffix_max.len().saturating_sub(1)).rev() {
            rho_hi_suffix_max[j] = rho_hi_suffix_max[j].max(rho_hi_suffix_max[j + 1]);
        }
        let outward = |x: &MpfrInterval| {
            let (lo, hi) = x.f64_bounds();
            Interval::try_from((lo, hi)).unwrap_or(Interval::ENTIRE)
        };
        OrderedSums {
            order,
            rho_lo_prefix_min,
            rho_hi_suffix_max,
            upper_prefix_f64: upper_prefix.iter().map(outward).collect(),
            lower_prefix_f64: lower_prefix.iter().map(outward).collect(),
            upper_prefix,
            lower_prefix,
            precision,
        }
    }

    /// The number of leading blocks whose terms are certainly ≥ 0 at `c`, and the sum of the
    /// positive parts of the terms of the blocks after them that are not certainly ≤ 0.
    fn split<S: Scalar>(&self, a: &[S], b: &[S], c: &S, ctx: &S::Ctx) -> (usize, S) {
        let (c_lo, c_hi) = c.f64_bounds();
        let c_lo = c_lo.max(0.0);
        let positive = self.rho_lo_prefix_min.partition_point(|&r| r >= c_hi);
        let nonpositive_from = self.rho_hi_suffix_max.partition_point(|&r| r > c_lo);
        let middle_end = nonpositive_from.max(positive);
        let start = (positive * BLOCK).min(self.order.len());
        let end = (middle_end * BLOCK).min(self.order.len());
        let mut middle = S::zero(ctx);
        for &i in &self.order[start..end] {
            let i = i as usize;
            middle.add_assign(&a[i].sub(&c.mul(&b[i])).pos_part());
        }
        (positive, middle)
    }

    /// Certified bounds of `Σ_i (a_i − c b_i)₊` as an f64 interval (rounded outward): the
    /// prefix sums in doubles, so cheaper and slightly wider than [`Self::positive_part_sum`].
    pub fn positive_part_sum_f64<S: Scalar>(
        &self,
        a: &[S],
        b: &[S],
        c: &S,
        ctx: &S::Ctx,
    ) -> Interval {
        let (positive, middle) = self.split(a, b, c, ctx);
        let (c_lo, c_hi) = c.f64_bounds();
        let c = Interval::try_from((c_lo.max(0.0), c_hi)).unwrap_or(Interval::ENTIRE);
        let (m_lo, m_hi) = middle.f64_bounds();
        let middle = Interval::try_from((m_lo, m_hi)).unwrap_or(Interval::ENTIRE);
        self.upper_prefix_f64[positive] - c * self.lower_prefix_f64[positive] + middle
    }

    /// An enclosure of `Σ_i (a_i − c b_i)₊` for every `c` in the threshold `c ≥ 0`; `a`, `b` are
    /// the laws this ordering was built from.
    pub fn positive_part_sum<S: Scalar>(&self, a: &[S], b: &[S], c: &S, ctx: &S::Ctx) -> Enclosure {
        let (positive, middle) = self.split(a, b, c, ctx);
        let c_wide = c.to_mpfr(self.precision);
        let leading = self.upper_prefix[positive].sub(&c_wide.mul(&self.lower_prefix[positive]));
        leading.enclosure().add(&middle.enclosure())
    }

    /// Number of states ordered.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::mpfr::MpfrCtx;
    use rug::Rational;

    /// Random-looking laws with ties, zeros on either side and wide enclosures.
    fn laws() -> (Vec<Interval>, Vec<Interval>) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..1000u32 {
            let x = f64::from((i * 7919) % 613) + 1.0;
            let y = f64::from((i * 104_729) % 409) + 1.0;
            let (x, y) = match i % 50 {
                0 => (0.0, y),
                1 => (x, 0.0),
                2 => (0.0, 0.0),
                3 => (y, y),
                _ => (x, y),
            };
            let width = if i % 17 == 0 { 0.01 } else { 0.0 };
            a.push(Interval::try_from((x * 1e-4, x * 1e-4 + width)).unwrap());
            b.push(Interval::try_from((y * 1e-4, y * 1e-4 + width)).unwrap());
        }
        (a, b)
    }

    #[test]
    fn ordered_sums_enclose_the_direct_sums() {
        let (a, b) = laws();
        let ordered = OrderedSums::new(&a, &b, 128);
        for c in ["0", "1/3", "1", "1.5", "2", "2.5", "613", "700", "1e6"] {
            let c = Interval::from_rational(&crate::enclosure::parse_rational(c).unwrap(), &());
            let fast = ordered.positive_part_sum(&a, &b, &c, &());
            // The direct sum over endpoints, exactly: the extreme values of each term.
            let mut lo = Rational::new();
            let mut hi = Rational::new();
            for (x, y) in a.iter().zip(&b) {
                let at = |p: f64, q: f64, k: f64| {
                    let v = Rational::from_f64(p).unwrap()
                        - Rational::from_f64(k).unwrap() * Rational::from_f64(q).unwrap();
                    if v > 0 { v } else { Rational::new() }
                };
                lo += at(x.inf(), y.sup(), c.sup());
                hi += at(x.sup(), y.inf(), c.inf());
            }
            let exact = Enclosure::from_rationals(lo, hi);
            assert!(
                fast.lo() <= exact.lo() && fast.hi() >= exact.hi(),
                "{fast} misses {exact}"
            );
        }
    }

    #[test]
    fn mpfr_laws_order_too() {
        let ctx = MpfrCtx { precision: 96 };
        let (a, b) = laws();
        let a: Vec<MpfrInterval> = a.iter().map(|x| x.to_mpfr(96)).collect();
        let b: Vec<MpfrInterval> = b.iter().map(|x| x.to_mpfr(96)).collect();
        let ordered = OrderedSums::new(&a, &b, 160);
        let c = MpfrInterval::from_rational(&Rational::from((3, 2)), &ctx);
        let fast = ordered.positive_part_sum(&a, &b, &c, &ctx);
        let mut direct = MpfrInterval::zero(&ctx);
        for (x, y) in a.iter().zip(&b) {
            direct.add_assign(&x.sub(&c.mul(y)).pos_part());
        }
        assert!(fast.overlaps(&direct.enclosure()));
    }
}

#[cfg(test)]
mod rounding_tests {
    use super::*;
    use rug::Rational;

    #[test]
    fn directed_quotients_bracket_the_exact_one() {
        for (x, y) in [
            (1.0, 3.0),
            (2.0, 7.0),
            (1e-300, 3.0),
            (5e-324, 2.0),
            (1e300, 1e-10),
            (0.1, 0.3),
        ] {
            let exact = Rational::from_f64(x).unwrap() / Rational::from_f64(y).unwrap();
            let (lo, hi) = (div_down(x, y), div_up(x, y));
            assert!(Rational::from_f64(lo).unwrap() <= exact, "{x}/{y}");
            assert!(
                hi.is_infinite() || Rational::from_f64(hi).unwrap() >= exact,
                "{x}/{y}"
            );
        }
    }
}
