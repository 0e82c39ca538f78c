//! The canonical pair k = 0 in closed form (Part I §4, §8.1):
//!
//! `L_{n,0}(N) = dT_{n,1}/dT_{n,0}(N) = (1/n) Σ_y N_y W1(y)/W0(y)`,
//!
//! for binary output `L_{n,0}(K) = ((n−K)/n)(1−p1)/(1−p0) + (K/n)(p1/p0)`.  It needs no
//! histogram law at all, so it checks the shift-identity computation independently: on every
//! state where both are defined, the enclosure of `Q/P` must meet the closed form's.

use super::law::PairLaw;
use crate::arith::Scalar;
use crate::error::{Error, Result};

use crate::mechanism::Channel;

/// `L_{n,0}(N)` for a histogram `N` (requires `W0(y) > 0` wherever `N_y > 0`).
pub fn canonical_likelihood_ratio<S: Scalar>(
    channel: &Channel<S>,
    histogram: &[u64],
    ctx: &S::Ctx,
) -> S {
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

/// Checks the pair `(T_{n,0}, T_{n,1})` (k = 0: the caller's contract) against the closed form;
/// returns the number of states compared.  Needs `W0` of full support (otherwise the closed
/// form is not defined everywhere) and an uncontaminated law: complete, or the binary path
/// (whose k = 0 window values are exact away from the window's two ends).
pub fn cross_check_canonical<S: Scalar>(
    law: &PairLaw<S>,
    channel: &Channel<S>,
    ctx: &S::Ctx,
) -> Result<usize> {
    // In a truncated binary window the first and last states miss S(K−1) resp. S(K) (that mass
    // is in the omitted bound); every other state is exact.
    let edge = usize::from(!law.is_complete());
    let mut checked = 0;
    for i in edge..law.len().saturating_sub(edge) {
        let (p, q) = (&law.p[i], &law.q[i]);
        if p.is_exact_zero() || !S::zero(ctx).certainly_below(p) {
            continue;
        }
        let ratio = q.div(p);
        let histogram = law.histogram(i).ok_or_else(|| {
            Error::Internal("the canonical cross-check needs a histogram pair".into())
        })?;
        let closed = canonical_likelihood_ratio(channel, &histogram, ctx);
        if ratio.certainly_below(&closed) || closed.certainly_below(&ratio) {
            return Err(Error::Internal(format!(
                "cross-check failed: at histogram {:?} the shift identities give L ∈ {} but the canonical \
                 closed form gives {}; no result is reported",
                histogram,
                ratio.enclosure(),
                closed.enclosure()
            )));
        }
        checked += 1;
    }
    Ok(checked)
}
