//! The binary-output fast path (Part I §8.1).
//!
//! With two outputs a histogram is the count K of output 1, and the common part of the shift
//! identities is `S = T_{n−1,k} = Bin(n−1−k, p0) ⊛ Bin(k, p1)` with `p_b = W_b(1)`.  Each
//! binomial is computed on a window around its mode by the ratio recurrence
//! `b(K+1)/b(K) = (m−K)/(K+1) · p/q`, normalised by the certified sum of the window plus a
//! geometric bound on each omitted tail: the ratios decrease away from the mode
//! (log-concavity), so the tail beyond an edge K with ratio r < 1 is at most `b(K)·r/(1−r)`.
//! The omitted mass is carried as a certified upper bound (see `PairLaw::omitted`).

use crate::arith::Scalar;
use rug::Rational;

/// A law on consecutive integers `start, start+1, …` known up to an omitted mass.
#[derive(Clone, Debug)]
pub struct WindowLaw<S> {
    pub start: usize,
    /// Enclosures of the probabilities of `start + i`.
    pub values: Vec<S>,
    /// A certified upper bound on the mass outside the window (zero when nothing is omitted).
    pub omitted: Rational,
}

/// `Bin(m, p)` with `q = 1 − p` given separately (so exact zeros stay exact), truncated where
/// the unnormalised value falls below `2^-tau_bits` of the mode's when `tau_bits` is given.
pub fn binomial_window<S: Scalar>(
    m: usize,
    p: &S,
    q: &S,
    tau_bits: Option<u32>,
    ctx: &S::Ctx,
) -> WindowLaw<S> {
    if m == 0 || p.is_exact_zero() {
        return WindowLaw {
            start: 0,
            values: vec![S::one(ctx)],
            omitted: Rational::new(),
        };
    }
    if q.is_exact_zero() {
        return WindowLaw {
            start: m,
            values: vec![S::one(ctx)],
            omitted: Rational::new(),
        };
    }
    let p_over_q = p.div(q);
    let q_over_p = q.div(p);
    // Anchor at the mode (any anchor is valid; the mode keeps values ≤ 1 and the window short).
    let mode = (((m + 1) as f64) * p.approx_f64())
        .floor()
        .clamp(0.0, m as f64) as usize;
    log_concave_window(
        mode,
        Some(m),
        // b(k+1)/b(k)
        |k| {
            S::from_u64((m - k) as u64, ctx)
                .div(&S::from_u64((k + 1) as u64, ctx))
                .mul(&p_over_q)
        },
        // b(k−1)/b(k)
        |k| {
            S::from_u64(k as u64, ctx)
                .div(&S::from_u64((m - k + 1) as u64, ctx))
                .mul(&q_over_p)
        },
        tau_bits,
        ctx,
    )
}

/// A log-concave law on `0..=max` (`max = None`: all of ℕ) from its ratios
/// `up(k) = f(k+1)/f(k)` and `down(k) = f(k−1)/f(k)`, anchored at `anchor`, on a window cut where
/// the unnormalised value falls below `2^-tau_bits` of the anchor's; `tau_bits = None` keeps the
/// whole support (which must then be finite).  The ratios are non-increasing away from the
/// mode (log-concavity), so the tail beyond an edge k whose next ratio is `r < 1` is at most
/// `u(k)·r/(1 − r)`; the values are normalised by the certified window sum plus both tails, and
/// the tails, relative to that sum, bound the omitted mass.
pub fn log_concave_window<S: Scalar>(
    anchor: usize,
    max: Option<usize>,
    up: impl Fn(usize) -> S,
    down: impl Fn(usize) -> S,
    tau_bits: Option<u32>,
    ctx: &S::Ctx,
) -> WindowLaw<S> {
    assert!(
        max.is_some() || tau_bits.is_some(),
        "an infinite support needs a cut"
    );
    // Where to cut is a heuristic (every omitted tail is bounded below).  Down to 2^-1000 it
    // compares the value's upper end as a double with 2^-bits (a normal double); deeper cuts
    // (MPFR at high precision) compare in the backend, where doubles would underflow and never
    // cut.
    enum Cut<S> {
        Double(f64),
        Backend(S),
    }
    let cut = tau_bits.map(|bits| {
        if bits <= 1000 {
            Cut::Double(2f64.powi(-(bits as i32)))
        } else {
            let tiny = Rational::from((rug::Integer::from(1), rug::Integer::from(1) << bits));
            Cut::Backend(S::from_rational(&tiny, ctx))
        }
    });
    let below_tau = |u: &S| -> bool {
        match &cut {
            None => false,
            Some(Cut::Double(t)) => u.f64_bounds().1 < *t,
            Some(Cut::Backend(t)) => u.certainly_below(t),
        }
    };
    let one = S::one(ctx);
    // Outward-rounded upper end below 1: the ratio is certainly below 1.
    let certainly_below_one = |r: &S| -> bool { r.f64_bounds().1 < 1.0 };

    let mut upper = vec![one.clone()];
    let mut upper_tail = S::zero(ctx);
    let mut k = anchor;
    while max.is_none_or(|m| k < m) {
        let r = up(k);
        let last = upper.last().expect("non-empty");
        if below_tau(last) && certainly_below_one(&r) {
            upper_tail = last.mul(&r).div(&one.sub(&r));
            break;
        }
        upper.push(last.mul(&r));
        k += 1;
    }
    let mut lower = Vec::new();
    let mut lower_tail = S::zero(ctx);
    let mut k = anchor;
    let mut current = one.clone();
    while k > 0 {
        let r = down(k);
        if below_tau(&current) && certainly_below_one(&r) {
            lower_tail = current.mul(&r).div(&one.sub(&r));
            break;
        }
        current = current.mul(&r);
        lower.push(current.clone());
        k -= 1;
    }
    let start = anchor - lower.len();
    lower.reverse();
    let mut unnormalised = lower;
    unnormalised.extend(upper);
    let mut sum = S::zero(ctx);
    for u in &unnormalised {
        sum.add_assign(u);
    }
    let tails = upper_tail.add(&lower_tail);
    // Z = Σ_window u + (true tails) ∈ [sum, sum + tails]; f(K) = u(K)/Z.
    let z = sum.with_upper_slack(&tails);
    let values = unnormalised.iter().map(|u| u.div(&z)).collect();
    let omitted = upper_bound(&tails.div(&sum));
    WindowLaw {
        start,
        values,
        omitted,
    }
}

/// The certified upper end of a value, as an exact rational (0 for an exact zero).
pub fn upper_bound<S: Scalar>(x: &S) -> Rational {
    x.enclosure()
        .hi()
        .finite()
        .cloned()
        .expect("finite upper bound")
}

/// The convolution of two window laws: the law of the sum of independent variables.  The
/// omitted masses add (a pair is omitted when either coordinate is).
pub fn convolve<S: Scalar>(a: &WindowLaw<S>, b: &WindowLaw<S>, ctx: &S::Ctx) -> WindowLaw<S> {
    if b.values.len() == 1 && b.omitted == 0 {
        return WindowLaw {
            start: a.start + b.start,
            values: a.values.iter().map(|x| x.mul(&b.values[0])).collect(),
            omitted: a.omitted.clone(),
        };
    }
    if a.values.len() == 1 && a.omitted == 0 {
        return convolve(b, a, ctx);
    }
    // The non-negative f64 kernel where the backend takes it (nonnegative-kernel.md), else the
    // backend's own arithmetic.
    let out = super::nonneg::convolve(&a.values, &b.values, ctx).unwrap_or_else(|| {
        let mut out = vec![S::zero(ctx); a.values.len() + b.values.len() - 1];
        for (i, x) in a.values.iter().enumerate() {
            crate::progress::checkpoint();
            for (j, y) in b.values.iter().enumerate() {
                out[i + j].add_mul_assign(x, y);
            }
        }
        out
    });
    WindowLaw {
        start: a.start + b.start,
        values: out,
        omitted: Rational::from(&a.omitted + &b.omitted),
    }
}

/// The window without its ends below `2^-tau_bits` of its largest value (but the first such
/// value at each end, as a binomial window keeps it), their mass (each value's upper end,
/// summed in the backend) added to the omitted mass: a sum of windows keeps
/// every tail of every term, so without this the windows of a long chain of convolutions grow
/// with the number of terms instead of with the spread of the sum.
pub fn trim<S: Scalar>(law: WindowLaw<S>, tau_bits: Option<u32>, ctx: &S::Ctx) -> WindowLaw<S> {
    let Some(bits) = tau_bits.filter(|b| *b <= 1000) else {
        return law;
    };
    let largest = law
        .values
        .iter()
        .map(|v| v.f64_bounds().0)
        .fold(0.0, f64::max);
    let cut = largest * 2f64.powi(-(bits as i32));
    let below = |v: &S| v.f64_bounds().1 < cut;
    let first = law.values.iter().position(|v| !below(v));
    let Some(first) = first else {
        return law;
    };
    let last = law
        .values
        .iter()
        .rposition(|v| !below(v))
        .expect("a kept value");
    // As a binomial window does, keep the first value below the cut at each end.
    let (first, last) = (
        first.saturating_sub(1),
        (last + 1).min(law.values.len() - 1),
    );
    if first == 0 && last + 1 == law.values.len() {
        return law;
    }
    let mut dropped = S::zero(ctx);
    for v in law.values[..first].iter().chain(&law.values[last + 1..]) {
        dropped.add_assign(v);
    }
    let mut values = law.values;
    values.truncate(last + 1);
    values.drain(..first);
    WindowLaw {
        start: law.start + first,
        values,
        omitted: law.omitted + upper_bound(&dropped),
    }
}

/// `out(K) = w(0)·s(K) + w(1)·s(K−1)`: one more user with output law `w` (the shift identity
/// of Lemma 4.2 for d = 2).  The window grows by one.
/// In the non-negative f64 kernel where the backend takes it (nonnegative-kernel.md).
pub fn add_binary_user<S: Scalar>(s: &WindowLaw<S>, w: &[S], ctx: &S::Ctx) -> WindowLaw<S> {
    let out = super::nonneg::add_two_point(&s.values, w, ctx).unwrap_or_else(|| {
        let mut out = vec![S::zero(ctx); s.values.len() + 1];
        for (i, v) in s.values.iter().enumerate() {
            out[i].add_mul_assign(&w[0], v);
            out[i + 1].add_mul_assign(&w[1], v);
        }
        out
    });
    WindowLaw {
        start: s.start,
        values: out,
        omitted: s.omitted.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use inari::Interval;

    #[test]
    fn exact_binomial_is_exact() {
        let ctx = ExactCtx::default();
        let p = Rational::from((1, 3));
        let q = Rational::from((2, 3));
        let b = binomial_window(4, &p, &q, None, &ctx);
        assert_eq!(b.start, 0);
        assert_eq!(b.omitted, 0);
        let expected: Vec<Rational> = [16, 32, 24, 8, 1]
            .iter()
            .map(|&c| Rational::from((c, 81)))
            .collect();
        assert_eq!(b.values, expected);
    }

    #[test]
    fn truncated_binomial_encloses_exact_values() {
        let ctx = ExactCtx::default();
        let p = Rational::from((3, 10));
        let q = Rational::from((7, 10));
        let m = 400;
        let exact = binomial_window(m, &p, &q, None, &ctx);
        let pi = Interval::from_rational(&p, &());
        let qi = Interval::from_rational(&q, &());
        let approx = binomial_window(m, &pi, &qi, Some(60), &());
        assert!(approx.start > 0 && approx.start + approx.values.len() < m + 1);
        let mut omitted_exact = Rational::new();
        for (k, v) in exact.values.iter().enumerate() {
            if k < approx.start || k >= approx.start + approx.values.len() {
                omitted_exact += v;
            } else {
                assert!(
                    approx.values[k - approx.start].enclosure().contains(v),
                    "k = {k}"
                );
            }
        }
        assert!(omitted_exact <= approx.omitted);
        assert!(approx.omitted < Rational::from((1, 1u64 << 55)));
    }
}
