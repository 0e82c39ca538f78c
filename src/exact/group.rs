//! The histogram law of a *group* of users — `a` with output law W0 and `b` with W1 — and the
//! neighbouring pair it generates.
//!
//! A group with `a` zeros and `b` ones has law `F(a, b) = Mult(a, W0) ⊛ Mult(b, W1)`; adding
//! the distinguished user gives the pair `(T_{m,b}, T_{m,b+1})` with `m = a + b + 1` by the
//! shift identities (Part I Lemma 4.2).  Groups grow by convolution, so the profile over all
//! compositions can share work between neighbouring k.  Two representations:
//! [`GeneralGroup`] (all histograms, any alphabet, §8.3) and [`BinaryGroup`] (two outputs,
//! a window of counts, §8.1).

use super::binary::{WindowLaw, add_binary_user, binomial_window, convolve, trim};
use super::histogram::{Pruning, SimplexIndex};
use super::law::{Layout, Omission, PairLaw};
use crate::arith::{Scalar, power};
use crate::enclosure::{Enclosure, Endpoint};
use crate::mechanism::Channel;
use rug::Rational;
use std::sync::Arc;

/// A group's histogram law, possibly truncated: the stored law is a sub-measure of the true one
/// and `omitted()` bounds the missing mass.
pub trait GroupLaw<S: Scalar>: Sized + Send + Sync {
    /// The group with `zeros` more W0-users and `ones` more W1-users.
    fn with_users(&self, zeros: usize, ones: usize, channel: &Channel<S>, ctx: &S::Ctx) -> Self;

    /// The pair `(T_{m,b}, T_{m,b+1})`, `m = a + b + 1`.
    fn pair(&self, channel: &Channel<S>, ctx: &S::Ctx) -> PairLaw<S>;
}

/// [`ratio_range`] for a distinguished user sending `messages` messages (unbundled, Part I §9):
/// the ratio is a conditional expectation of `Π_i w(Y*_i)` over its m messages, so it lies in
/// `[min w^m, max w^m]`.
pub fn ratio_range_sending<S: Scalar>(
    channel: &Channel<S>,
    messages: usize,
) -> (Rational, Option<Rational>) {
    use rug::ops::PowAssign;
    let (lo, hi) = ratio_range(channel);
    let power = |mut x: Rational| -> Rational {
        x.pow_assign(messages as u32);
        x
    };
    (power(lo), hi.map(power))
}

/// `[min_y w(y), max_y w(y)]` for `w = W1/W0` (hi `None` = +∞), skipping `0/0`: every likelihood
/// ratio of the pair lies in it (Part I (6): L is a conditional expectation of `w(Y*)`).
pub fn ratio_range<S: Scalar>(channel: &Channel<S>) -> (Rational, Option<Rational>) {
    let mut lo: Option<Rational> = None;
    let mut hi: Option<Rational> = Some(Rational::new());
    for (a, b) in channel.w[0].iter().zip(&channel.w[1]) {
        match (a.is_exact_zero(), b.is_exact_zero()) {
            (true, true) => continue,
            (true, false) => hi = None,
            _ => {
                let r = b.div(a).enclosure();
                let r_lo = match r.lo() {
                    Endpoint::Finite(x) => x.clone().max(Rational::new()),
                    _ => Rational::new(),
                };
                lo = Some(lo.map_or(r_lo.clone(), |l| l.min(r_lo)));
                hi = match (hi, r.hi()) {
                    (Some(h), Endpoint::Finite(x)) => Some(h.max(x.clone())),
                    _ => None,
                };
            }
        }
    }
    (lo.unwrap_or_default(), hi)
}

/// The singular masses `[Q(P = 0), P(Q = 0)]` of the pair `(F ⊛ W0^{⊛m}, F ⊛ W1^{⊛m})` of a
/// group `F = F(zeros, ones)` and a distinguished user sending `m = messages` messages, in
/// closed form (proofs-notes/windowed-laws.md, "Zero entries"; proofs-notes/multi-message.md):
/// with `A = {y : W0(y) = 0 < W1(y)}` and `B = {y : W1(y) = 0 < W0(y)}`, a histogram is reached
/// by `a` W0-draws and `b` W1-draws exactly when `N(A) ≤ b`, `N(B) ≤ a` and N uses no output
/// that both rows give probability 0.  Under Q (`zeros` W0-draws, `ones + m` W1-draws) P is
/// zero exactly when `N(A) > ones`, and `N(A) ~ Bin(ones + m, W1(A))`; so
/// `Q(P = 0) = P(Bin(ones + m, W1(A)) > ones)` (`W1(A)^(ones+1)` for m = 1), and
/// `P(Q = 0) = P(Bin(zeros + m, W0(B)) > zeros)`.  A truncated pair's stored zeros can be
/// truncation's, so curves take these instead.
pub fn singular_masses<S: Scalar>(
    channel: &Channel<S>,
    zeros: usize,
    ones: usize,
    messages: usize,
    ctx: &S::Ctx,
) -> [Enclosure; 2] {
    let [w0, w1] = &channel.w;
    // The mass of `a` where `b` is zero, and the rest of `a`'s mass (no subtraction).
    let split = |a: &[S], b: &[S]| {
        let (mut only, mut rest) = (S::zero(ctx), S::zero(ctx));
        for (x, y) in a.iter().zip(b) {
            if y.is_exact_zero() {
                only.add_assign(x);
            } else {
                rest.add_assign(x);
            }
        }
        (only, rest)
    };
    // P(Bin(others + m, p) > others), p + r = 1.
    let tail = |(p, r): (S, S), others: usize| -> S {
        if messages == 1 {
            return power(&p, others as u64 + 1, ctx);
        }
        let count = (others + messages) as u64;
        let mut sum = S::zero(ctx);
        for j in others as u64 + 1..=count {
            // C(count, j) = C(count, count − j), and count − j < m fits a u32 whatever n is.
            let ways = rug::Integer::from(count).binomial((count - j) as u32);
            let term = power(&p, j, ctx).mul(&power(&r, count - j, ctx));
            sum.add_mul_assign(&S::from_rational(&Rational::from(ways), ctx), &term);
        }
        sum
    };
    let q_singular = tail(split(w1, w0), ones);
    let p_singular = tail(split(w0, w1), zeros);
    [q_singular, p_singular].map(|m| m.enclosure().clamp_nonnegative())
}

/// A group over all histograms (any alphabet), by the dynamic program of §8.3, pruned below
/// `2^-tau_bits` of each step's largest value when `tau_bits` is given.
#[derive(Clone, Debug)]
pub struct GeneralGroup<S> {
    index: Arc<SimplexIndex>,
    values: Vec<S>,
    /// W0- and W1-draws (messages; users when each sends one).
    zeros: usize,
    ones: usize,
    /// Messages per user (unbundled, Part I §9).
    messages: usize,
    omitted: Rational,
    tau: Option<Rational>,
}

impl<S: Scalar> GeneralGroup<S> {
    /// The empty group (the point mass at the empty histogram) of users sending `messages`
    /// messages each; the index must reach `messages ×` the users.
    pub fn empty(
        index: Arc<SimplexIndex>,
        tau_bits: Option<u32>,
        messages: usize,
        ctx: &S::Ctx,
    ) -> Self {
        GeneralGroup {
            index,
            values: vec![S::one(ctx)],
            zeros: 0,
            ones: 0,
            messages,
            omitted: Rational::new(),
            tau: tau_bits.map(|bits| Rational::from((1, rug::Integer::from(1) << bits))),
        }
    }
}

impl<S: Scalar> GroupLaw<S> for GeneralGroup<S> {
    fn with_users(&self, zeros: usize, ones: usize, channel: &Channel<S>, ctx: &S::Ctx) -> Self {
        let (zeros, ones) = (zeros * self.messages, ones * self.messages);
        let mut h = self.values.clone();
        let mut omitted = self.omitted.clone();
        let start = self.zeros + self.ones;
        for step in 0..zeros + ones {
            let w = if step < zeros {
                &channel.w[0]
            } else {
                &channel.w[1]
            };
            let pruning = self.tau.as_ref().map(|t| Pruning::new(&h, t, ctx));
            self.index
                .add_user(&mut h, start + step + 1, w, pruning.as_ref(), ctx);
            if let Some(p) = pruning {
                omitted += p.dropped_upper_bound();
            }
        }
        GeneralGroup {
            index: self.index.clone(),
            values: h,
            zeros: self.zeros + zeros,
            ones: self.ones + ones,
            messages: self.messages,
            omitted,
            tau: self.tau.clone(),
        }
    }

    fn pair(&self, channel: &Channel<S>, ctx: &S::Ctx) -> PairLaw<S> {
        let size = self.zeros + self.ones;
        let shifted = |w: &[S]| {
            let mut h = self.values.clone();
            for step in 1..=self.messages {
                self.index.add_user(&mut h, size + step, w, None, ctx);
            }
            h
        };
        let (ratio_lo, ratio_hi) = ratio_range_sending(channel, self.messages);
        PairLaw {
            p: shifted(&channel.w[0]),
            q: shifted(&channel.w[1]),
            omitted: self.omitted.clone(),
            ratio_lo,
            ratio_hi,
            layout: Layout::General {
                n: size + self.messages,
                index: self.index.clone(),
            },
            omission: Omission::of_group(channel, self.zeros, self.ones, self.messages, ctx),
        }
    }
}

/// A group with two outputs: the law of the count of output 1 on a window (§8.1), each added
/// block a binomial window truncated below `2^-tau_bits` of its mode when `tau_bits` is given.
#[derive(Clone, Debug)]
pub struct BinaryGroup<S> {
    law: WindowLaw<S>,
    /// W0- and W1-draws (messages; users when each sends one).
    zeros: usize,
    ones: usize,
    /// Messages per user (unbundled, Part I §9).
    messages: usize,
    tau_bits: Option<u32>,
}

impl<S: Scalar> BinaryGroup<S> {
    /// The empty group of users sending `messages` messages each.
    pub fn empty(tau_bits: Option<u32>, messages: usize, ctx: &S::Ctx) -> Self {
        BinaryGroup {
            law: WindowLaw {
                start: 0,
                values: vec![S::one(ctx)],
                omitted: Rational::new(),
            },
            zeros: 0,
            ones: 0,
            messages,
            tau_bits,
        }
    }
}

impl<S: Scalar> GroupLaw<S> for BinaryGroup<S> {
    fn with_users(&self, zeros: usize, ones: usize, channel: &Channel<S>, ctx: &S::Ctx) -> Self {
        let (zeros, ones) = (zeros * self.messages, ones * self.messages);
        let [w0, w1] = &channel.w;
        let mut law = self.law.clone();
        if zeros > 0 {
            law = convolve(
                &law,
                &binomial_window(zeros, &w0[1], &w0[0], self.tau_bits, ctx),
                ctx,
            );
        }
        if ones > 0 {
            law = convolve(
                &law,
                &binomial_window(ones, &w1[1], &w1[0], self.tau_bits, ctx),
                ctx,
            );
        }
        BinaryGroup {
            law: trim(law, self.tau_bits, ctx),
            zeros: self.zeros + zeros,
            ones: self.ones + ones,
            messages: self.messages,
            tau_bits: self.tau_bits,
        }
    }

    fn pair(&self, channel: &Channel<S>, ctx: &S::Ctx) -> PairLaw<S> {
        // m untruncated shifts each: both windows start at the group's start, m longer.
        let shifted = |w: &[S]| {
            let mut law = add_binary_user(&self.law, w, ctx);
            for _ in 1..self.messages {
                law = add_binary_user(&law, w, ctx);
            }
            law.values
        };
        let (ratio_lo, ratio_hi) = ratio_range_sending(channel, self.messages);
        PairLaw {
            p: shifted(&channel.w[0]),
            q: shifted(&channel.w[1]),
            omitted: self.law.omitted.clone(),
            ratio_lo,
            ratio_hi,
            layout: Layout::Binary {
                n: self.zeros + self.ones + self.messages,
                start: self.law.start,
            },
            omission: Omission::of_group(channel, self.zeros, self.ones, self.messages, ctx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{MpfrCtx, MpfrInterval};
    use crate::mechanism::{Entry, Mechanism};

    #[test]
    fn singular_masses_of_several_messages_hold_beyond_u32_draws() {
        // W0 = (1, 0), W1 = (1e-12, 1 − 1e-12): A = {1}, W1(A) = a = 1 − 1e-12.  With b W1-draws
        // and m = 2 messages, Q(P = 0) = P(Bin(b + 2, a) > b) = a^(b+2) + (b + 2)(1 − a) a^(b+1),
        // here with b above 2^32 (a binomial index cut to 32 bits gave a value far above 1).
        let tiny = Rational::from((1, 1_000_000_000_000u64));
        let rows = [
            vec![
                Entry::Exact(Rational::from(1)),
                Entry::Exact(Rational::new()),
            ],
            vec![
                Entry::Exact(tiny.clone()),
                Entry::Exact(Rational::from(1) - &tiny),
            ],
        ];
        let m = Mechanism::new("m", "m".into(), None, rows, None).unwrap();
        let ctx = MpfrCtx { precision: 256 };
        let channel = m.channel::<MpfrInterval>(&ctx).unwrap();
        let b: u64 = (1 << 32) + 5;
        let [qp, pq] = singular_masses(&channel, 0, b as usize, 2, &ctx);
        use rug::ops::Pow;
        let a = rug::Float::with_val(512, Rational::from(1) - &tiny);
        let power = |e: u64| rug::Float::with_val(512, (&a).pow(rug::Integer::from(e)));
        let want = power(b + 2)
            + rug::Float::with_val(512, b + 2) * rug::Float::with_val(512, &tiny) * power(b + 1);
        let want = want.to_rational().unwrap();
        let width = Rational::from((1, 1u64 << 60));
        let (lo, hi) = (qp.lo().finite().unwrap(), qp.hi().finite().unwrap());
        assert!(
            Rational::from(lo - &width) <= want && want <= Rational::from(hi + &width),
            "{qp} vs {want}"
        );
        // B = {y : W1 = 0 < W0} is empty: P(Q = 0) = 0.
        assert_eq!(pq.hi().finite().unwrap(), &Rational::new());
    }
}
