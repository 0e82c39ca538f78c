//! The neighbouring pair `P = T_{n,k}`, `Q = T_{n,k+1}` on a common list of histograms.
//!
//! Both laws come from the common part `T_{n−1,k}` through the shift identities of Part I
//! Lemma 4.2: `P(N) = Σ_y W0(y) T_{n−1,k}(N − e_y)`, `Q(N) = Σ_y W1(y) T_{n−1,k}(N − e_y)`.

use super::group::{BinaryGroup, GeneralGroup, GroupLaw};
use super::histogram::{SimplexIndex, histogram_count};
use super::law::PairLaw;
use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use std::sync::Arc;

/// Which algorithm computes the pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The binary fast path when d = 2, the general engine otherwise.
    #[default]
    Auto,
    /// The dynamic program over all histograms (any d).
    General,
    /// The binary-output fast path (d = 2 only).
    Binary,
}

/// How a pair is computed.
#[derive(Clone, Debug)]
pub struct PairOptions {
    pub engine: Engine,
    /// Allow truncation with a certified bound on the omitted mass (interval and MPFR
    /// backends only; the exact backend never truncates).
    pub truncate: bool,
    /// Truncation threshold `2^-bits` relative to the largest value, overriding the backend's
    /// default ([`Scalar::truncation_bits`]); coarse values make truncation visible in tests.
    pub truncation_bits: Option<u32>,
    /// Refuse problems whose estimated memory exceeds this many bytes.
    pub memory_limit: u64,
}

impl Default for PairOptions {
    fn default() -> Self {
        PairOptions {
            engine: Engine::Auto,
            truncate: true,
            truncation_bits: None,
            memory_limit: 8 << 30,
        }
    }
}

/// Checks `n ≥ 1` and `0 ≤ k ≤ n − 1`.
pub fn check_composition(n: u64, k: u64) -> Result<()> {
    if n < 1 {
        return Err(Error::argument("--n", "must be at least 1"));
    }
    if k > n - 1 {
        return Err(Error::argument(
            "--k",
            format!(
                "must be between 0 and n − 1 = {} (the pair is T_(n,k), T_(n,k+1)), got {k}",
                n - 1
            ),
        ));
    }
    Ok(())
}

/// How laws over n users are computed: which engine, and the truncation depth.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// The binary fast path (d = 2) rather than the general dynamic program.
    pub binary: bool,
    /// Truncate below `2^-tau_bits` of the largest value (`None`: keep everything).
    pub tau_bits: Option<u32>,
    /// How many values one law over n users stores (an estimate for the binary path).
    pub states: u64,
    /// Bytes of the general engine's histogram index (ranks of neighbours, coordinates).
    pub index_bytes: u64,
}

/// Chooses the engine and truncation for `mechanism` with n users in backend `S`.
pub fn plan<S: Scalar>(
    mechanism: &Mechanism,
    n: usize,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<Plan> {
    let d = mechanism.d();
    let binary = match options.engine {
        Engine::Auto => d == 2,
        Engine::Binary if d != 2 => {
            return Err(Error::argument(
                "--engine",
                format!("binary needs 2 outputs, the mechanism has {d}"),
            ));
        }
        Engine::Binary => true,
        Engine::General => false,
    };
    // Truncation needs full support (so that L is bounded and nothing singular is dropped).
    let tau_bits = if options.truncate && mechanism.has_full_support() && !S::EXACT {
        options.truncation_bits.or_else(|| S::truncation_bits(ctx))
    } else {
        None
    };
    let states = if binary {
        // Windows of about 25 standard deviations, ≤ n + 1.
        if tau_bits.is_some() {
            (n as u64)
                .saturating_add(1)
                .min(64 * (n as f64).sqrt() as u64 + 64)
        } else {
            (n as u64).saturating_add(1)
        }
    } else {
        histogram_count(n as u64, d).unwrap_or(u64::MAX)
    };
    let index_bytes = if binary {
        0
    } else {
        // coords and neighbour ranks (u32, d − 1 each per state) and a binomial table.
        let c = (d - 1) as u64;
        states
            .saturating_mul(8 * c)
            .saturating_add((8 * (c + 1)).saturating_mul((n as u64).saturating_add(c + 1)))
    };
    Ok(Plan {
        binary,
        tau_bits,
        states,
        index_bytes,
    })
}

/// Refuses, with the estimate, work that would hold `arrays` arrays of the plan's states over n
/// users in backend `S`, plus the plan's index, beyond the memory limit.
pub fn check_memory<S: Scalar>(
    what: &str,
    plan: &Plan,
    arrays: u64,
    n: usize,
    limit: u64,
    ctx: &S::Ctx,
) -> Result<()> {
    let states = plan.states;
    let bytes = states
        .saturating_mul(arrays)
        .saturating_mul(S::estimated_bytes(n, ctx))
        .saturating_add(plan.index_bytes);
    if bytes > limit {
        let states = if states == u64::MAX {
            "more than 2^64".to_string()
        } else {
            format!("about {states}")
        };
        let bytes = if bytes == u64::MAX {
            "more than 2^34".to_string()
        } else {
            gib(bytes)
        };
        return Err(Error::TooLarge(format!(
            "{what} would hold {arrays} arrays of {states} histogram states, estimated {bytes} GiB with the {} \
             backend, over the {} GiB limit (raise --max-memory-gib or use a smaller n)",
            S::BACKEND,
            gib(limit)
        )));
    }
    Ok(())
}

/// Bytes as GiB with three significant digits.
fn gib(bytes: u64) -> String {
    format!("{:.3}", bytes as f64 / (1u64 << 30) as f64)
}

/// Computes the pair for `mechanism`, n users, k ones, in backend `S`.
pub fn pair_law<S: Scalar>(
    mechanism: &Mechanism,
    n: u64,
    k: u64,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<PairLaw<S>> {
    check_composition(n, k)?;
    let channel = mechanism.channel::<S>(ctx)?;
    let n = usize::try_from(n).map_err(|_| Error::argument("--n", "too large"))?;
    let k = k as usize;
    let plan = plan::<S>(mechanism, n, options, ctx)?;
    // The common part, P and Q.
    check_memory::<S>("the pair", &plan, 3, n, options.memory_limit, ctx)?;
    if plan.binary {
        let group = BinaryGroup::empty(plan.tau_bits, ctx).with_users(n - 1 - k, k, &channel, ctx);
        return Ok(group.pair(&channel, ctx));
    }
    let index = Arc::new(SimplexIndex::new(mechanism.d(), n)?);
    let group =
        GeneralGroup::empty(index, plan.tau_bits, ctx).with_users(n - 1 - k, k, &channel, ctx);
    Ok(group.pair(&channel, ctx))
}
