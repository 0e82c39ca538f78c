//! The neighbouring pair `P = T_{n,k}`, `Q = T_{n,k+1}` on a common list of histograms.
//!
//! Both laws come from the common part `T_{n−1,k}` through the shift identities of Part I
//! Lemma 4.2: `P(N) = Σ_y W0(y) T_{n−1,k}(N − e_y)`, `Q(N) = Σ_y W1(y) T_{n−1,k}(N − e_y)`.

use super::group::{BinaryGroup, GeneralGroup, GroupLaw};
use super::histogram::{SimplexIndex, histogram_count};
use super::law::PairLaw;
use super::ratio_sum::RatioLattice;
use super::window::{WindowGroup, estimated_group_work};
use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::mechanism::{Channel, Mechanism};
use std::borrow::Cow;
use std::sync::Arc;

/// Which algorithm computes the pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The binary fast path when d = 2, windowed laws otherwise.
    #[default]
    Auto,
    /// The dynamic program over all histograms (any d): the full-simplex route, kept for
    /// cross-checks.
    General,
    /// Windowed laws (any d): direct multinomial windows and user steps on the histograms
    /// that carry mass.
    Window,
    /// The binary-output fast path (d = 2 only).
    Binary,
}

/// How a pair is computed.
#[derive(Clone, Debug)]
pub struct PairOptions {
    pub engine: Engine,
    /// Merge outputs of equal likelihood ratio first (the sufficiency reduction of
    /// `mechanism::reduce`); every answer is unchanged, the laws live on fewer symbols.
    pub reduce: bool,
    /// Allow truncation with a certified bound on the omitted mass (interval and MPFR
    /// backends only; the exact backend never truncates).
    pub truncate: bool,
    /// Truncation threshold `2^-bits` relative to the largest value, overriding the backend's
    /// default ([`Scalar::truncation_bits`]); coarse values make truncation visible in tests.
    pub truncation_bits: Option<u32>,
    /// Refuse problems whose estimated memory exceeds this many bytes.
    pub memory_limit: u64,
    /// Refuse a pair whose estimated computing time exceeds this many seconds.
    pub time_limit_seconds: f64,
}

impl Default for PairOptions {
    fn default() -> Self {
        PairOptions {
            engine: Engine::Auto,
            reduce: true,
            truncate: true,
            truncation_bits: None,
            memory_limit: 8 << 30,
            time_limit_seconds: 600.0,
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

/// Which algorithm a plan runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Two outputs: binomial windows (§8.1).
    Binary,
    /// Windowed multinomial laws (`exact::window`).
    Window,
    /// The dynamic program over the whole simplex (§8.3).
    Simplex,
}

impl Route {
    /// The name reports use.
    pub fn name(&self) -> &'static str {
        match self {
            Route::Binary => "binary",
            Route::Window => "window",
            Route::Simplex => "general",
        }
    }
}

/// The window route stores coordinates as u32 and reaches histograms of size n + 1.
pub const WINDOW_MAX_N: usize = u32::MAX as usize - 2;

/// How laws over n users are computed: which engine, and the truncation depth.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub route: Route,
    /// Truncate below `2^-tau_bits` of the largest value (`None`: keep everything).
    pub tau_bits: Option<u32>,
    /// How many values one law over n users stores (an estimate for the binary path).
    pub states: u64,
    /// Bytes of the general engine's histogram index (ranks of neighbours, coordinates).
    pub index_bytes: u64,
    /// Messages per user the laws shift by (unbundled, Part I §9; 1 otherwise): a law over n
    /// users is one over `n · messages` draws.
    pub messages: usize,
}

/// Chooses the engine and truncation for `mechanism` with n users in backend `S` (the laws
/// live on histograms of `n · m` draws for a mechanism whose users send m unbundled messages).
pub fn plan<S: Scalar>(
    mechanism: &Mechanism,
    users: usize,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<Plan> {
    let d = mechanism.d();
    let messages = mechanism.unbundled_messages();
    let n = users.checked_mul(messages).ok_or_else(|| {
        Error::TooLarge(format!(
            "n = {users} users sending {messages} messages each: n·m exceeds 2^64 messages; use a \
             smaller --n or fewer --messages"
        ))
    })?;
    let route = match options.engine {
        Engine::Auto if d == 2 => Route::Binary,
        Engine::Auto | Engine::Window => Route::Window,
        Engine::Binary if d != 2 => {
            return Err(Error::argument(
                "--engine",
                format!("binary needs 2 outputs, the mechanism has {d}"),
            ));
        }
        Engine::Binary => Route::Binary,
        Engine::General => Route::Simplex,
    };
    if route == Route::Window && n > WINDOW_MAX_N {
        let (what, fewer) = if messages == 1 {
            (format!("n = {n} users"), "")
        } else {
            (
                format!("{users} users × {messages} messages = {n} messages"),
                " or fewer --messages",
            )
        };
        return Err(Error::TooLarge(format!(
            "{what} over {d} outputs: windowed laws index counts below 2^32 − 2 = {WINDOW_MAX_N}; use a smaller --n{fewer}"
        )));
    }
    // Truncation keeps every curve enclosed with any support: the singular masses come in
    // closed form (`group::singular_masses`), not from the stored zeros.
    let tau_bits = if options.truncate && !S::EXACT {
        options.truncation_bits.or_else(|| S::truncation_bits(ctx))
    } else {
        None
    };
    let states = match (route, tau_bits) {
        // Windows of about 25 standard deviations, ≤ n + 1.
        (Route::Binary, Some(_)) => (n as u64)
            .saturating_add(1)
            .min(64 * (n as f64).sqrt() as u64 + 64),
        (Route::Binary, None) => (n as u64).saturating_add(1),
        (Route::Window, Some(bits)) => window_states(mechanism, n, bits),
        _ => histogram_count(n as u64, d).unwrap_or(u64::MAX),
    };
    let index_bytes = if route == Route::Window {
        // Per row (at most one per state): its prefix (d − 2 u32) and, during a step, its
        // source rows (d entries of 16 bytes).
        let d = d as u64;
        states.saturating_mul(4 * (d - 2) + 16 * d)
    } else if route == Route::Binary {
        0
    } else {
        // coords and neighbour ranks (u32, d − 1 each per state) and a binomial table.
        let c = (d - 1) as u64;
        states
            .saturating_mul(8 * c)
            .saturating_add((8 * (c + 1)).saturating_mul((n as u64).saturating_add(c + 1)))
    };
    Ok(Plan {
        route,
        tau_bits,
        states,
        index_bytes,
        messages,
    })
}

/// An estimate of the histograms in a window of `Mult(n, ·)` cut at `2^-bits` (for the memory
/// guard): a box of `2·z·σ_j + 3` values per coordinate, `z = √(2 bits ln 2)` standard
/// deviations, `σ_j² = n·max_b W_b(j)(1 − W_b(j))`, each side at most n + 1, and never more than
/// the simplex.
fn window_states(mechanism: &Mechanism, n: usize, bits: u32) -> u64 {
    let Ok(channel) = mechanism.channel::<inari::Interval>(&()) else {
        return histogram_count(n as u64, mechanism.d()).unwrap_or(u64::MAX);
    };
    let rows: Vec<Vec<f64>> = channel
        .w
        .iter()
        .map(|w| w.iter().map(|v| v.approx_f64()).collect())
        .collect();
    window_states_of(&rows, n, bits)
}

/// [`window_states`] for users whose output laws are among `rows` (doubles).
pub fn window_states_of(rows: &[Vec<f64>], n: usize, bits: u32) -> u64 {
    let d = rows[0].len();
    let full = histogram_count(n as u64, d).unwrap_or(u64::MAX);
    let z = (2.0 * f64::from(bits) * std::f64::consts::LN_2).sqrt();
    let mut states = 1.0f64;
    for y in 1..d {
        let var = rows.iter().map(|w| w[y] * (1.0 - w[y])).fold(0.0, f64::max);
        let side = (2.0 * z * (n as f64 * var).sqrt() + 3.0).min(n as f64 + 1.0);
        states *= side;
    }
    (states.min(u64::MAX as f64) as u64).min(full)
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
        .saturating_mul(S::estimated_bytes(n.saturating_mul(plan.messages), ctx))
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
    let mechanism = engine_mechanism(mechanism, options)?;
    let channel = mechanism.channel::<S>(ctx)?;
    let n = usize::try_from(n).map_err(|_| Error::argument("--n", "too large"))?;
    let k = k as usize;
    let plan = plan::<S>(&mechanism, n, options, ctx)?;
    // The common part, P and Q (in draws: users × messages).
    let m = plan.messages;
    if k == 0 {
        if let Some(lattice) = ratio_route::<S>(&mechanism, n, &plan, &channel, options, ctx)? {
            return Ok(lattice.pair(n, &channel, plan.tau_bits, ctx));
        }
    }
    check_memory::<S>("the pair", &plan, 3, n, options.memory_limit, ctx)?;
    let draws = ((n - 1 - k) * m, k * m);
    check_binary_time::<S>(&plan, draws, &channel, options, ctx)?;
    check_window_time::<S>(&plan, draws, &channel, options, ctx)?;
    check_shift_time::<S>(&plan, n * m, mechanism.d(), options, ctx)?;
    group_pair(mechanism.d(), &plan, (n - 1 - k, k), &channel, ctx)
}

/// The canonical ratio's lattice (`exact::ratio_sum`) when it computes the k = 0 pair in fewer
/// products than the windows would (automatic engine, one message, several outputs), refusing
/// with the estimate when even it would exceed `--max-seconds` or the memory limit.
fn ratio_route<S: Scalar>(
    mechanism: &Mechanism,
    n: usize,
    plan: &Plan,
    channel: &Channel<S>,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<Option<RatioLattice>> {
    if options.engine != Engine::Auto || plan.route != Route::Window || plan.messages != 1 {
        return Ok(None);
    }
    let Some(lattice) = RatioLattice::of(mechanism) else {
        return Ok(None);
    };
    if lattice.points(n).is_none() {
        return Ok(None);
    }
    let rows = channel
        .w
        .clone()
        .map(|w| w.iter().map(|x| x.approx_f64()).collect::<Vec<f64>>());
    let kernel = S::from_nonneg_f64(1.0, 0, ctx).is_some();
    let d = mechanism.d() as f64;
    let window_work = estimated_group_work(
        (n - 1, 0),
        [&rows[0], &rows[1]],
        plan.tau_bits,
        plan.states as f64,
        kernel,
    ) + 2.0 * d * plan.states as f64;
    let work = lattice.estimated_work(n, &rows[0], plan.tau_bits);
    let points = lattice.estimated_points(n, &rows[0], plan.tau_bits);
    // Whole runs cost about 12 ns per lattice product and 25–60 ns per estimated window product
    // (release build, 2 cores: ternary.toml at n = 10³–10⁴, bundled at m = 2, 3); below
    // `RATIO_ROUTE_FROM` window products both take well under a second, and the windows keep
    // their histograms (reports, cross-checks).
    // (A NaN estimate never chooses the lattice.)
    if !(window_work >= RATIO_ROUTE_FROM && work < 2.0 * window_work) {
        return Ok(None);
    }
    // Beyond the memory limit the windows decide (they refuse, with their own estimate).
    let bytes = 3.0 * points * S::estimated_bytes(n, ctx) as f64;
    if bytes.is_nan() || bytes > options.memory_limit as f64 {
        return Ok(None);
    }
    let mut scale = (S::estimated_bytes(n, ctx) as f64 / 16.0).max(1.0);
    if S::BACKEND != "interval" {
        scale *= SLOWER_THAN_VALUE_SIZE;
    }
    let seconds = work * SECONDS_PER_LATTICE_PRODUCT * scale;
    if seconds > options.time_limit_seconds {
        return Err(Error::TooLarge(format!(
            "the k = 0 pair on the canonical ratio's lattice (about {points:.0} points, the windows would need more) would take about {work:.2e} products, an estimated {} with the {} backend, over --max-seconds {} (raise it or use a smaller n)",
            duration_text(seconds),
            S::BACKEND,
            duration_text(options.time_limit_seconds)
        )));
    }
    Ok(Some(lattice))
}

/// The estimated window products from which the k = 0 pair may take the lattice route.
const RATIO_ROUTE_FROM: f64 = 1e7;

/// Seconds per estimated lattice product with f64 intervals, whole runs (measured 7–13 ns:
/// ternary.toml at n = 10³–10⁴, bundled ternary m = 2 at n = 35–100, bundled binary RR m = 3
/// at n = 1000, 3-symbol RR at n = 3·10⁴); other backends scale with their value size.
const SECONDS_PER_LATTICE_PRODUCT: f64 = 1.5e-8;

/// Seconds per estimated product of windowed steps (a background's or a group's) with f64 intervals (whole runs,
/// release build, 2 cores: 1.5·10⁻⁹ s at n = 3001 and 10001, the estimate being an upper
/// count); other backends scale with their value size.
pub(crate) const SECONDS_PER_STEP_PRODUCT: f64 = 1.8e-9;

/// How much more than their value size MPFR and rational products cost than f64-interval ones
/// (release build, 2 cores, the three-input example at n = 100–1000: measured 7–13× the
/// value-size estimate at 128–2048 bits, 10–12× for rationals).
pub(crate) const SLOWER_THAN_VALUE_SIZE: f64 = 10.0;

/// Seconds per product of the binary convolution with f64 intervals (measured: about 10 ns;
/// other backends scale with their value size).
const SECONDS_PER_PRODUCT: f64 = 1.5e-8;

/// Refuses, with the estimate, a binary pair whose two groups are both large: their binomial
/// windows (about `2z√(m p q)` values each, `z` the truncation depth in standard deviations)
/// are convolved pairwise, so the time grows like n, e.g. weeks at n = 10¹² with k = n/2.
fn check_binary_time<S: Scalar>(
    plan: &Plan,
    (zeros, ones): (usize, usize),
    channel: &Channel<S>,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<()> {
    if plan.route != Route::Binary || zeros == 0 || ones == 0 {
        return Ok(());
    }
    let z = plan.tau_bits.map_or(f64::INFINITY, |b| {
        (2.0 * f64::from(b) * std::f64::consts::LN_2).sqrt()
    });
    let width = |m: usize, w: &[S]| {
        let p = w[1].approx_f64();
        (2.0 * z * (m as f64 * p * (1.0 - p)).sqrt() + 3.0).min(m as f64 + 1.0)
    };
    let products = width(zeros, &channel.w[0]) * width(ones, &channel.w[1]);
    let scale = (S::estimated_bytes(zeros + ones, ctx) as f64 / 16.0).max(1.0);
    let seconds = products * SECONDS_PER_PRODUCT * scale;
    if seconds > options.time_limit_seconds {
        return Err(Error::TooLarge(format!(
            "the pair convolves two binomial windows of {zeros} and {ones} {}: about {products:.2e} products, an estimated {} with the {} backend, over the --max-seconds limit of {} s",
            if plan.messages > 1 {
                "message draws"
            } else {
                "users"
            },
            duration_text(seconds),
            S::BACKEND,
            options.time_limit_seconds
        )));
    }
    Ok(())
}

/// Refuses, with the estimate, a windowed pair whose group would take longer than
/// `--max-seconds` to build ([`estimated_group_work`], with the background's cost per product):
/// e.g. MPFR, which has no two-block kernel, steps user by user, so an escalation at n = 4·10⁴
/// (hours) is declined and the interval answer kept.
fn check_window_time<S: Scalar>(
    plan: &Plan,
    (zeros, ones): (usize, usize),
    channel: &Channel<S>,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<()> {
    if plan.route != Route::Window {
        return Ok(());
    }
    let [w0, w1] = &channel.w;
    let rows = [w0, w1].map(|w| w.iter().map(|x| x.approx_f64()).collect::<Vec<f64>>());
    let kernel = S::from_nonneg_f64(1.0, 0, ctx).is_some();
    let n = zeros + ones + 1;
    let work = estimated_group_work(
        (zeros, ones),
        [&rows[0], &rows[1]],
        plan.tau_bits,
        plan.states as f64,
        kernel,
    );
    let mut scale = (S::estimated_bytes(n, ctx) as f64 / 16.0).max(1.0);
    if S::BACKEND != "interval" {
        scale *= SLOWER_THAN_VALUE_SIZE;
    }
    let seconds = work * SECONDS_PER_STEP_PRODUCT * scale;
    if seconds > options.time_limit_seconds {
        return Err(Error::TooLarge(format!(
            "the pair's law of {zeros} W0-users and {ones} W1-users would take about {work:.2e} products over {} histogram states, an estimated {} with the {} backend, over --max-seconds {} (raise it or use a smaller n)",
            plan.states,
            duration_text(seconds),
            S::BACKEND,
            duration_text(options.time_limit_seconds)
        )));
    }
    Ok(())
}

/// Refuses, with the estimate, a pair of m unbundled messages whose 2m untruncated shift
/// steps (each over the window, `d` products per state) would take longer than `--max-seconds`.
fn check_shift_time<S: Scalar>(
    plan: &Plan,
    draws: usize,
    d: usize,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<()> {
    let m = plan.messages as f64;
    if plan.messages < 2 {
        return Ok(());
    }
    let products = 2.0 * m * (plan.states as f64 + m) * d as f64;
    let mut scale = (S::estimated_bytes(draws, ctx) as f64 / 16.0).max(1.0);
    if S::BACKEND != "interval" {
        scale *= SLOWER_THAN_VALUE_SIZE;
    }
    let seconds = products * SECONDS_PER_STEP_PRODUCT * scale;
    if seconds > options.time_limit_seconds {
        return Err(Error::TooLarge(format!(
            "the pair shifts a window of about {} histogram states by {} messages, twice: about {products:.2e} products, an estimated {} with the {} backend, over --max-seconds {} (raise it, or use fewer --messages or a smaller n)",
            plan.states,
            plan.messages,
            duration_text(seconds),
            S::BACKEND,
            duration_text(options.time_limit_seconds)
        )));
    }
    Ok(())
}

/// A duration in the largest sensible unit.
pub fn duration_text(seconds: f64) -> String {
    match seconds {
        s if s < 0.001 => "under 1 ms".to_string(),
        s if s < 0.01 => format!("{:.0} ms", s * 1000.0),
        s if s < 1.0 => format!("{s:.2} s"),
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.0} h", s / 3600.0),
        s => format!("{:.0} days", s / 86_400.0),
    }
}

/// The mechanism the engines run on: its sufficiency reduction (`mechanism::reduce`) unless
/// `options.reduce` is off.
pub fn engine_mechanism<'a>(
    mechanism: &'a Mechanism,
    options: &PairOptions,
) -> Result<Cow<'a, Mechanism>> {
    Ok(if options.reduce {
        Cow::Owned(mechanism.reduced()?.mechanism)
    } else {
        Cow::Borrowed(mechanism)
    })
}

/// The pair `(T_{m,b}, T_{m,b+1})` of a group of `zeros` W0-users and `ones = b` W1-users plus
/// the distinguished user (`m = zeros + ones + 1`), on the plan's route, built from scratch
/// (users sending `plan.messages` messages each).
pub fn group_pair<S: Scalar>(
    d: usize,
    plan: &Plan,
    (zeros, ones): (usize, usize),
    channel: &Channel<S>,
    ctx: &S::Ctx,
) -> Result<PairLaw<S>> {
    let m = plan.messages;
    Ok(match plan.route {
        Route::Binary => BinaryGroup::empty(plan.tau_bits, m, ctx)
            .with_users(zeros, ones, channel, ctx)
            .pair(channel, ctx),
        Route::Window => WindowGroup::empty(d, plan.tau_bits, m, ctx)
            .with_users(zeros, ones, channel, ctx)
            .pair(channel, ctx),
        Route::Simplex => {
            let index = Arc::new(SimplexIndex::new(d, (zeros + ones + 1) * m)?);
            GeneralGroup::empty(index, plan.tau_bits, m, ctx)
                .with_users(zeros, ones, channel, ctx)
                .pair(channel, ctx)
        }
    })
}
