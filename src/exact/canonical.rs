//! The canonical pair k = 0 in closed form (Part I §4, §8.1):
//!
//! `L_{n,0}(N) = dT_{n,1}/dT_{n,0}(N) = (1/n) Σ_y N_y W1(y)/W0(y)`,
//!
//! for binary output `L_{n,0}(K) = ((n−K)/n)(1−p1)/(1−p0) + (K/n)(p1/p0)`.  It needs no
//! histogram law at all, so it checks the shift-identity computation independently: on every
//! state where both are defined, the enclosure of `Q/P` must meet the closed form's.

use super::law::{Layout, PairLaw};
use crate::arith::Scalar;
use crate::error::{Error, Result};

use crate::mechanism::Channel;

/// `L_{n,0}(N)` for a histogram `N` (requires `W0(y) > 0` wherever `N_y > 0`); with the
/// distinguished user sending `messages = m > 1` unbundled messages, Part I §9.1's
/// `L^{(m)}(N) = C(|N|, m)^{-1} Σ Π_y C(N_y, m_y) w(y)^{m_y}` over `0 ≤ m_y ≤ N_y`, `Σ m_y = m`.
pub fn canonical_likelihood_ratio<S: Scalar>(
    channel: &Channel<S>,
    histogram: &[u64],
    messages: u32,
    ctx: &S::Ctx,
) -> S {
    if messages > 1 {
        return canonical_ratio_of_messages(channel, histogram, messages, ctx);
    }
    let n: u64 = histogram.iter().sum();
    let mut sum = S::zero(ctx);
    for (y, &count) in histogram.iter().enumerate() {
        if count > 0 {
            let w = channel.w[1][y].div(&channel.w[0][y]);
            sum.add_mul_assign(&S::from_u64(count, ctx), &w);
        }
    }
    sum.div(&S::from_u64(n, ctx))
}

/// The most terms (states × splits of the m messages) the §9.1 cross-check evaluates: its
/// binomials grow with m, so a pair of many messages is not cross-checked (the check confirms
/// the engine; the enclosures do not rest on it).
const MAX_CANONICAL_TERMS: u64 = 1 << 20;

/// Whether the cross-check of a pair with `states` states over `d` outputs and `messages`
/// unbundled messages is cheap enough to run (always for one message).
pub fn affordable(states: usize, d: usize, messages: u32) -> bool {
    messages <= 1
        || messages <= 64
            && (states as u64).saturating_mul(crate::multimessage::type_count(messages, d))
                <= MAX_CANONICAL_TERMS
}

/// §9.1's `L^{(m)}(N)`, each binomial an exact integer.
fn canonical_ratio_of_messages<S: Scalar>(
    channel: &Channel<S>,
    histogram: &[u64],
    messages: u32,
    ctx: &S::Ctx,
) -> S {
    let binomial = |n: u64, k: u32| {
        S::from_rational(&rug::Rational::from(rug::Integer::from(n).binomial(k)), ctx)
    };
    let w: Vec<S> = (0..histogram.len())
        .map(|y| channel.w[1][y].div(&channel.w[0][y]))
        .collect();
    let mut sum = S::zero(ctx);
    for split in crate::multimessage::types(messages, histogram.len()) {
        if split.iter().zip(histogram).any(|(&s, &c)| u64::from(s) > c) {
            continue;
        }
        let mut term = S::one(ctx);
        for (y, &s) in split.iter().enumerate() {
            if s > 0 {
                term = term
                    .mul(&binomial(histogram[y], s))
                    .mul(&crate::arith::power(&w[y], u64::from(s), ctx));
            }
        }
        sum.add_assign(&term);
    }
    sum.div(&binomial(histogram.iter().sum(), messages))
}

/// Checks the pair `(T_{n,0}, T_{n,1})` (k = 0: the caller's contract) against the closed form;
/// returns the number of states compared.  Needs `W0` of full support (otherwise the closed
/// form is not defined everywhere) and an uncontaminated law: complete, or the binary path
/// (whose k = 0 window values are exact away from the window's two ends).
pub fn cross_check_canonical<S: Scalar>(
    law: &PairLaw<S>,
    channel: &Channel<S>,
    messages: u32,
    ctx: &S::Ctx,
) -> Result<usize> {
    // In a truncated binary window the first and last m states miss some of S(K−m..K) (that
    // mass is in the omitted bound); every other state is exact.
    let edge = if law.is_complete() {
        0
    } else {
        messages as usize
    };
    let mut checked = 0;
    for i in edge..law.len().saturating_sub(edge) {
        let (p, q) = (&law.p[i], &law.q[i]);
        if p.is_exact_zero() || !S::zero(ctx).certainly_below(p) {
            continue;
        }
        let ratio = q.div(p);
        // A lattice state is the set of histograms of one value of the ratio itself.
        let (state, closed) = match &law.layout {
            Layout::Ratio { n, start, lattice } => (
                format!("lattice point {}", start + i),
                S::from_rational(&lattice.ratio_at(*n, start + i), ctx),
            ),
            _ => {
                let histogram = law.histogram(i).ok_or_else(|| {
                    Error::Internal("the canonical cross-check needs a histogram pair".into())
                })?;
                let closed = canonical_likelihood_ratio(channel, &histogram, messages, ctx);
                (format!("histogram {histogram:?}"), closed)
            }
        };
        if ratio.certainly_below(&closed) || closed.certainly_below(&ratio) {
            return Err(Error::Internal(format!(
                "cross-check failed: at {state} the shift identities give L ∈ {} but the canonical \
                 closed form gives {}; no result is reported",
                ratio.enclosure(),
                closed.enclosure()
            )));
        }
        checked += 1;
    }
    Ok(checked)
}
