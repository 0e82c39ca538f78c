//! The count-pair experiment behind two published reductions, as a certified pair of laws.
//!
//! A *count pair* with parameters `(x, y; r0, r1; n)`: a distinguished user adds the count
//! vector `(1, 0)` with probability x, `(0, 1)` with probability y and nothing with probability
//! `w = 1 − x − y`; each of the other n − 1 users adds `(1, 0)` with probability r0, `(0, 1)` with
//! r1 and nothing otherwise.  P is the law of the total `(A, B)`; Q is the same with x and y
//! swapped.  Its privacy curve `max(δ_{P‖Q}, δ_{Q‖P})` is
//!
//! * the **clone reduction** of Feldman–McMillan–Talwar 2021 (Thm 3.2) with `x = e^{ε0}/(e^{ε0}+1)`,
//!   `y = 1/(e^{ε0}+1)`, `r0 = r1 = e^{−ε0}/2`: C ~ Bin(n−1, e^{−ε0}) clones, `A | C ~ Bin(C, 1/2)`,
//!   `P_C = α·A + (1−α)·(A+1)` against `Q_C = α·(A+1) + (1−α)·A`;
//! * the **variation-ratio reduction** of Wang et al. 2024 with `x = pα`, `y = α`,
//!   `r0 = αp/q0`, `r1 = αp/q1`, `α = β/(p − 1)`.
//!
//! **Construction.** The others' total is `M ~ Bin(n−1, r)`, `r = r0 + r1`, and given `M = m`
//! the `(1, 0)`-count among them is `Bin(m, ρ)`, `ρ = r0/r`.  With `s` the grand total and `a`
//! the grand `(1, 0)`-count,
//!
//! `P(s, a) = w·O(s)·B_s(a) + O(s−1)·(x·B_{s−1}(a−1) + y·B_{s−1}(a))`, and Q with x ↔ y,
//!
//! with `O = Bin(n−1, r)` and `B_m = Bin(m, ρ)`, each computed on a window with a certified
//! bound on its omitted tails (`exact::binary::binomial_window`).  The omitted mass of the pair
//! is at most `ω_O + max_m ω_{B_m}` (the kept O values weigh at most 1 in total).  Every state's
//! likelihood ratio `Q/P` — of the kept and of the omitted part alike — is a mediant of the
//! per-path ratios `1` (w), `y/x` and `x/y`, so it lies in `[min(x,y)/max(x,y), max/min]`:
//! the truncation contract of [`PairLaw`] holds, and the curves fold the omitted mass in as for
//! any pair (`proofs-notes/reference-accountants.md`).

use crate::arith::Scalar;
use crate::enclosure::Endpoint;
use crate::error::{Error, Result};
use crate::exact::binary::{WindowLaw, add_binary_user, binomial_window};
use crate::exact::law::{Layout, PairLaw};
use rug::Rational;

/// The parameters of a count pair, as backend values.
#[derive(Clone, Debug)]
pub struct CountPair<S> {
    /// Users, the distinguished one included.
    pub n: u64,
    /// P: the distinguished user adds (1, 0) with probability `x`, (0, 1) with `y`, and nothing
    /// with `w = 1 − x − y`, given exactly by the reduction (so that a zero stays an exact zero
    /// rather than an interval around 0).
    pub x: S,
    pub y: S,
    pub w: S,
    /// Each other user adds (1, 0) with probability `r0`, (0, 1) with `r1`.
    pub r0: S,
    pub r1: S,
}

/// A law on the totals of one grand count `s`: `values[i]` is the probability of
/// `(s, a = start + i)`.
struct Row<S> {
    start: usize,
    p: Vec<S>,
    q: Vec<S>,
}

impl<S: Scalar> Row<S> {
    fn new() -> Self {
        Row {
            start: 0,
            p: Vec::new(),
            q: Vec::new(),
        }
    }

    /// Adds `weight · law` to both laws (`law_q` for Q), widening the row as needed.
    fn add(&mut self, weight: &S, law_p: &WindowLaw<S>, law_q: &WindowLaw<S>, ctx: &S::Ctx) {
        debug_assert_eq!(law_p.start, law_q.start);
        let (start, len) = (law_p.start, law_p.values.len());
        if self.p.is_empty() {
            self.start = start;
        }
        let lo = self.start.min(start);
        let hi = (self.start + self.p.len()).max(start + len);
        if lo < self.start {
            let pad = self.start - lo;
            self.p.splice(0..0, std::iter::repeat_n(S::zero(ctx), pad));
            self.q.splice(0..0, std::iter::repeat_n(S::zero(ctx), pad));
            self.start = lo;
        }
        self.p.resize(hi - lo, S::zero(ctx));
        self.q.resize(hi - lo, S::zero(ctx));
        for (i, (u, v)) in law_p.values.iter().zip(&law_q.values).enumerate() {
            let j = start - self.start + i;
            self.p[j].add_mul_assign(weight, u);
            self.q[j].add_mul_assign(weight, v);
        }
    }
}

impl<S: Scalar> CountPair<S> {
    /// The pair `(P, Q)` on the states `(s, a)`, truncated below `2^-tau_bits` of each
    /// binomial's mode when `tau_bits` is given; refused above `memory_limit` bytes.
    pub fn law(
        &self,
        tau_bits: Option<u32>,
        memory_limit: u64,
        ctx: &S::Ctx,
    ) -> Result<PairLaw<S>> {
        let one = S::one(ctx);
        let zero_pos = |v: &S, name: &str| -> Result<()> {
            if v.is_exact_zero() || !S::zero(ctx).certainly_below(v) {
                return Err(Error::Unsupported(format!(
                    "count pair: {name} must be certainly positive"
                )));
            }
            Ok(())
        };
        zero_pos(&self.x, "x")?;
        zero_pos(&self.y, "y")?;
        let w = &self.w;
        let w_is_zero = w.is_exact_zero();
        let r = self.r0.add(&self.r1);
        let rho = self.r0.div(&r);
        let others_count =
            usize::try_from(self.n - 1).map_err(|_| Error::argument("--n", "too large"))?;
        let others = binomial_window(others_count, &r, &one.sub(&r), tau_bits, ctx);
        // Memory: rows of about the widest conditional window.
        let widest = others.start + others.values.len() - 1;
        let per_row = binomial_window(widest, &rho, &one.sub(&rho), tau_bits, ctx)
            .values
            .len()
            + 2;
        let states = (others.values.len() as u64 + 1).saturating_mul(per_row as u64);
        let bytes = states
            .saturating_mul(2)
            .saturating_mul(S::estimated_bytes(self.n as usize, ctx));
        if bytes > memory_limit {
            return Err(Error::TooLarge(format!(
                "the reduced experiment at n = {} would hold about {states} states ({:.2} GiB with the {} backend), over the memory limit",
                self.n,
                bytes as f64 / f64::from(1u32 << 30),
                S::BACKEND
            )));
        }
        let mut rows: Vec<Row<S>> = (0..=others.values.len()).map(|_| Row::new()).collect();
        let mut omitted_inner = Rational::new();
        for (i, o) in others.values.iter().enumerate() {
            let m = others.start + i;
            let b = binomial_window(m, &rho, &one.sub(&rho), tau_bits, ctx);
            omitted_inner = omitted_inner.max(b.omitted.clone());
            if !w_is_zero {
                rows[i].add(&o.mul(w), &b, &b, ctx);
            }
            // The distinguished user adds (0, 1) — a unchanged — with y (P) or x (Q), and
            // (1, 0) — a + 1 — with x (P) or y (Q).
            let p = add_binary_user(&b, &[self.y.clone(), self.x.clone()], ctx);
            let q = add_binary_user(&b, &[self.x.clone(), self.y.clone()], ctx);
            rows[i + 1].add(o, &p, &q, ctx);
        }
        let (mut p, mut q) = (
            Vec::with_capacity(states as usize),
            Vec::with_capacity(states as usize),
        );
        for row in rows {
            p.extend(row.p);
            q.extend(row.q);
        }
        let ratio_xy = self.x.div(&self.y).enclosure();
        let ratio_yx = self.y.div(&self.x).enclosure();
        let finite = |e: &Endpoint| e.finite().cloned();
        let ratio_lo = finite(ratio_xy.lo())
            .zip(finite(ratio_yx.lo()))
            .map_or(Rational::new(), |(a, b)| a.min(b).max(Rational::new()));
        let ratio_hi = finite(ratio_xy.hi())
            .zip(finite(ratio_yx.hi()))
            .map(|(a, b)| a.max(b));
        Ok(PairLaw {
            p,
            q,
            omitted: Rational::from(&others.omitted + &omitted_inner),
            ratio_lo,
            ratio_hi,
            layout: Layout::Reduced,
            omission: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::exact::curve::{Direction, delta_at_exp};
    use std::collections::HashMap;

    /// The count pair by brute force over every outcome of every user (tiny n only).
    fn brute_force(
        n: usize,
        x: &Rational,
        y: &Rational,
        r0: &Rational,
        r1: &Rational,
    ) -> (
        HashMap<(usize, usize), Rational>,
        HashMap<(usize, usize), Rational>,
    ) {
        let rest = Rational::from(1) - Rational::from(r0 + r1);
        let w = Rational::from(1) - Rational::from(x + y);
        let mut p = HashMap::new();
        let mut q = HashMap::new();
        let outcomes = 3usize.pow(n as u32);
        for code in 0..outcomes {
            let mut c = code;
            let (mut a, mut b) = (0, 0);
            let mut weight_p = Rational::from(1);
            let mut weight_q = Rational::from(1);
            for user in 0..n {
                let o = c % 3;
                c /= 3;
                match o {
                    1 => a += 1,
                    2 => b += 1,
                    _ => {}
                }
                if user == 0 {
                    let (wp, wq) = match o {
                        1 => (x, y),
                        2 => (y, x),
                        _ => (&w, &w),
                    };
                    weight_p *= wp;
                    weight_q *= wq;
                } else {
                    let v = match o {
                        1 => r0,
                        2 => r1,
                        _ => &rest,
                    };
                    weight_p *= v;
                    weight_q *= v;
                }
            }
            *p.entry((a, b)).or_insert_with(Rational::new) += weight_p;
            *q.entry((a, b)).or_insert_with(Rational::new) += weight_q;
        }
        (p, q)
    }

    #[test]
    fn the_count_pair_matches_brute_force_exactly() {
        let ctx = ExactCtx::default();
        let q = |a: i64, b: i64| Rational::from((a, b));
        // With and without the "nothing" outcome for the distinguished user.
        for (x, y, r0, r1) in [
            (q(3, 4), q(1, 4), q(1, 6), q(1, 6)),
            (q(1, 2), q(1, 5), q(1, 7), q(2, 7)),
        ] {
            for n in 1..=6 {
                let pair = CountPair {
                    n: n as u64,
                    x: x.clone(),
                    y: y.clone(),
                    w: Rational::from(1) - Rational::from(&x + &y),
                    r0: r0.clone(),
                    r1: r1.clone(),
                };
                let law = pair.law(None, u64::MAX, &ctx).unwrap();
                let (bp, bq) = brute_force(n, &x, &y, &r0, &r1);
                let total_p: Rational = law.p.iter().sum();
                assert_eq!(total_p, 1);
                for c in [q(1, 1), q(6, 5), q(2, 1)] {
                    for (dir, (upper, lower)) in
                        [(Direction::Pq, (&bp, &bq)), (Direction::Qp, (&bq, &bp))]
                    {
                        let expected: Rational = upper
                            .iter()
                            .map(|(k, u)| {
                                let v = Rational::from(u - Rational::from(&c * &lower[k]));
                                if v > 0 { v } else { Rational::new() }
                            })
                            .sum();
                        let got = delta_at_exp(&law, dir, &c, &ctx);
                        assert!(
                            got.is_point() && got.contains(&expected),
                            "n = {n}: {got} vs {expected}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn truncated_count_pairs_enclose_the_exact_curve() {
        let ctx = ExactCtx::default();
        let q = |a: i64, b: i64| Rational::from((a, b));
        let (x, y, r0, r1) = (q(3, 4), q(1, 4), q(1, 6), q(1, 6));
        let exact = CountPair {
            n: 300,
            x: x.clone(),
            y: y.clone(),
            w: Rational::new(),
            r0: r0.clone(),
            r1: r1.clone(),
        }
        .law(None, u64::MAX, &ctx)
        .unwrap();
        let f = |v: &Rational| inari::Interval::from_rational(v, &());
        let approx = CountPair {
            n: 300,
            x: f(&x),
            y: f(&y),
            w: inari::Interval::zero(&()),
            r0: f(&r0),
            r1: f(&r1),
        }
        .law(Some(30), u64::MAX, &())
        .unwrap();
        assert!(approx.omitted > 0 && approx.len() < exact.len());
        for c in [q(1, 1), q(11, 10), q(3, 2)] {
            for dir in [Direction::Pq, Direction::Qp] {
                let e = delta_at_exp(&exact, dir, &c, &ctx);
                let a = delta_at_exp(&approx, dir, &c, &());
                assert!(a.contains(e.lo().finite().unwrap()), "{a} misses {e}");
            }
        }
    }
}
