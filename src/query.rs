//! Questions about one neighbouring pair — δ at given ε, ε for a target δ, divergences —
//! answered in a chosen backend.
//!
//! The `interval` backend (f64 intervals) is fast but loses relative precision where a
//! positive-part sum cancels (`Q − e^ε P` is tiny compared with `Q` near the curve's support
//! boundary, increasingly so as n grows).  When a certified answer comes out wider than the
//! requested relative width, the question is answered again with MPFR intervals of 128 bits
//! (and 256 if needed); the report says which arithmetic produced it.

use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::background::{Background, background_pair};
use crate::exact::canonical;
use crate::exact::curve::{self, Direction, EpsilonCertificate};
use crate::exact::divergence::{self, Divergences};
use crate::exact::law::{Layout, PairLaw};
use crate::exact::pair::{PairOptions, engine_mechanism, pair_law};
use crate::mechanism::Mechanism;
use crate::mechanism::randomizer::Randomizer;
use inari::Interval;
use rug::Rational;

/// The arithmetic backend, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Exact rationals (GMP).
    Exact,
    /// f64 intervals (inari), escalating to MPFR when too wide.
    Interval,
    /// MPFR intervals with this many bits.
    Mpfr { precision: u32 },
}

impl Backend {
    /// The name reports use.
    pub fn label(&self) -> String {
        match self {
            Backend::Exact => "exact".to_string(),
            Backend::Interval => "interval".to_string(),
            Backend::Mpfr { precision } => format!("mpfr-{precision}"),
        }
    }
}

/// One pair `(T_{n,k}, T_{n,k+1})` and how to compute it.
#[derive(Clone, Debug)]
pub struct PairQuery {
    pub mechanism: Mechanism,
    pub n: u64,
    pub k: u64,
    pub options: PairOptions,
    pub backend: Backend,
    /// Settings of the exact backend (precision of its brackets).
    pub exact_ctx: ExactCtx,
    /// With the interval backend: recompute in MPFR when an answer's relative width exceeds
    /// this (`None`: never).
    pub escalate_above: Option<f64>,
}

/// An answer with how it was obtained.
#[derive(Clone, Debug)]
pub struct Computed<R> {
    pub result: R,
    /// The arithmetic that produced the answer, e.g. `interval` or `mpfr-128`.
    pub arithmetic: String,
    /// `binary` or `general`.
    pub engine: &'static str,
    /// Number of histogram states stored.
    pub states: usize,
    /// Certified upper bound on the mass omitted by truncation (0 when none).
    pub omitted: Rational,
    /// For k = 0: the number of states where the likelihood ratio was checked against the
    /// canonical closed form (Part I §4), all of which agreed.
    pub canonical_states_checked: Option<usize>,
}

/// An answer whose precision can be judged.
pub trait Widths {
    /// The largest relative width among the answer's values that are ≥ `floor` (values below
    /// it are small enough that their absolute width is what matters).
    fn worst_relative_width(&self, floor: f64) -> f64;

    /// Some δ or ε of the answer is not resolved to `rel` ([`Enclosure::resolved`]), at any
    /// size (the escalation looks only at values above a floor).
    fn unresolved(&self, _rel: f64) -> bool {
        false
    }
}

/// The relative width a value is resolved to by default (`--rel-width`).
pub const DEFAULT_REL_WIDTH: f64 = 1e-9;

/// The precisions a computation deepens to when a value lies below the truncation depth.
const DEEPER_PRECISIONS: [u32; 3] = [512, 1024, 2048];

/// The seconds a computation may spend deepening (each step costs about three times the last).
const DEEPENING_SECONDS: f64 = 10.0;

/// The cost of a 512-bit MPFR pass in f64-interval passes, for the deepening's first estimate
/// (a computation may say otherwise: [`Computation::mpfr_512_over_interval`]).
const MPFR_512_OVER_INTERVAL: f64 = 60.0;

/// The same for a background pair's law (release build, 2 cores, the three-input example:
/// 196× at n = 300 and 250× at n = 500).
const BACKGROUND_MPFR_512_OVER_INTERVAL: f64 = 300.0;

/// The relative width of `e`, or 0 when it lies below `floor` (or is the point +∞).
pub fn relative_width_above(e: &Enclosure, floor: f64) -> f64 {
    if e.hi().to_f64() < floor || e.hi() == &Endpoint::PosInf && e.lo() == &Endpoint::PosInf {
        0.0
    } else {
        e.relative_width()
    }
}

/// A computation on a pair, written once for every backend.
pub trait PairJob {
    type Output: Widths;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<Self::Output>;
}

/// Where a pair comes from — a mechanism's `(T_{n,k}, T_{n,k+1})` or a limit experiment
/// (`limits::experiment`) — and the backend settings it is computed with.
pub trait PairSource {
    fn backend(&self) -> Backend;
    /// Recompute in MPFR when an interval answer's relative width exceeds this.
    fn escalate_above(&self) -> Option<f64>;
    fn exact_ctx(&self) -> ExactCtx;
    /// Refuses the exact backend when the pair has irrational values.
    fn check_exact(&self) -> Result<()>;
    /// The pair in backend `S`.
    fn build<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Built<S>>;
    /// The `--max-seconds` the computation runs under (the deepening stays within it).
    fn time_limit_seconds(&self) -> f64 {
        f64::INFINITY
    }
    /// What a 512-bit MPFR pass costs in f64-interval passes of this pair.
    fn mpfr_512_over_interval(&self) -> f64 {
        MPFR_512_OVER_INTERVAL
    }
}

/// A pair as built, with the states checked against the canonical closed form (k = 0).
pub struct Built<S> {
    pub law: PairLaw<S>,
    pub canonical_states_checked: Option<usize>,
}

impl PairSource for PairQuery {
    fn backend(&self) -> Backend {
        self.backend
    }

    fn escalate_above(&self) -> Option<f64> {
        self.escalate_above
    }

    fn time_limit_seconds(&self) -> f64 {
        self.options.time_limit_seconds
    }

    fn exact_ctx(&self) -> ExactCtx {
        self.exact_ctx
    }

    fn check_exact(&self) -> Result<()> {
        self.mechanism.require_rational()
    }

    /// The law and its canonical cross-check, on the alphabet the engine runs on.
    fn build<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Built<S>> {
        let mechanism = engine_mechanism(&self.mechanism, &self.options)?;
        let options = PairOptions {
            reduce: false,
            ..self.options.clone()
        };
        let law = pair_law::<S>(&mechanism, self.n, self.k, &options, ctx)?;
        let uncontaminated = law.is_complete() || matches!(law.layout, Layout::Binary { .. });
        let messages = mechanism.unbundled_messages() as u32;
        let canonical_states_checked = if self.k == 0
            && uncontaminated
            && (0..mechanism.d()).all(|y| !mechanism.is_zero(0, y))
            && canonical::affordable(law.len(), mechanism.d(), messages)
        {
            let channel = mechanism.channel::<S>(ctx)?;
            Some(canonical::cross_check_canonical(
                &law, &channel, messages, ctx,
            )?)
        } else {
            None
        };
        Ok(Built {
            law,
            canonical_states_checked,
        })
    }
}

/// One pair of a randomizer on any input domain: a background composition and the switched
/// user (`exact::background`), and how to compute it.
#[derive(Clone, Debug)]
pub struct BackgroundQuery {
    pub randomizer: Randomizer,
    pub background: Background,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
}

impl PairSource for BackgroundQuery {
    fn backend(&self) -> Backend {
        self.backend
    }

    fn mpfr_512_over_interval(&self) -> f64 {
        BACKGROUND_MPFR_512_OVER_INTERVAL
    }

    fn escalate_above(&self) -> Option<f64> {
        self.escalate_above
    }

    fn time_limit_seconds(&self) -> f64 {
        self.options.time_limit_seconds
    }

    fn exact_ctx(&self) -> ExactCtx {
        self.exact_ctx
    }

    fn check_exact(&self) -> Result<()> {
        let (x1, x1p) = self.background.switch;
        self.randomizer.pair(x1, x1p)?.require_rational()?;
        // The background's rows too.
        for x in 0..self.randomizer.input_count() {
            if self.background.counts[x] > 0 {
                self.randomizer.pair(x, x)?.require_rational()?;
            }
        }
        Ok(())
    }

    /// Backgrounds are truncated only with full support, whatever the job.
    fn build<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Built<S>> {
        Ok(Built {
            law: background_pair(&self.randomizer, &self.background, &self.options, ctx)?,
            canonical_states_checked: None,
        })
    }
}

/// A computation written once for every backend, with the backend settings to run it in: what
/// [`compute`] runs (escalating precision if asked).
pub trait Computation {
    type Output: Widths;
    fn backend(&self) -> Backend;
    /// Recompute in MPFR when an interval answer's relative width exceeds this.
    fn escalate_above(&self) -> Option<f64>;
    fn exact_ctx(&self) -> ExactCtx;
    /// Refuses the exact backend when the inputs have irrational values.
    fn check_exact(&self) -> Result<()>;
    /// The answer in backend `S`, labelled with `arithmetic`.
    fn run_in<S: Scalar>(&self, ctx: &S::Ctx, arithmetic: String)
    -> Result<Computed<Self::Output>>;
    /// The `--max-seconds` the computation runs under (the deepening stays within it).
    fn time_limit_seconds(&self) -> f64 {
        f64::INFINITY
    }
    /// What a 512-bit MPFR pass costs in f64-interval passes (the deepening's first estimate).
    fn mpfr_512_over_interval(&self) -> f64 {
        MPFR_512_OVER_INTERVAL
    }
}

/// Runs the computation in its backend.  With the interval backend and `escalate_above`, an
/// answer wider than asked is recomputed with MPFR intervals of 128, then 256 bits.
pub fn compute<C: Computation>(c: &C) -> Result<Computed<C::Output>> {
    match c.backend() {
        Backend::Exact => {
            c.check_exact()?;
            c.run_in::<Rational>(&c.exact_ctx(), "exact".into())
        }
        Backend::Mpfr { precision } => {
            c.run_in::<MpfrInterval>(&MpfrCtx { precision }, c.backend().label())
        }
        Backend::Interval => {
            let started = std::time::Instant::now();
            let first = c.run_in::<Interval>(&(), "interval".into())?;
            let interval_seconds = started.elapsed().as_secs_f64();
            let Some(target) = c.escalate_above() else {
                return Ok(first);
            };
            if first.result.worst_relative_width(1e-12) <= target {
                return Ok(deepen(c, first, target, interval_seconds));
            }
            let mut last = first;
            for precision in [128, 256] {
                let label = format!(
                    "mpfr-{precision} (escalated from interval: f64 enclosure wider than {target:e})"
                );
                // An escalation past the memory limit keeps the answer in hand (as certified).
                let next = match c.run_in::<MpfrInterval>(&MpfrCtx { precision }, label) {
                    Ok(next) => next,
                    Err(Error::TooLarge(why)) => {
                        last.arithmetic += &format!(" (not escalated to mpfr-{precision}: {why})");
                        break;
                    }
                    Err(e) => return Err(e),
                };
                let done = next.result.worst_relative_width(1e-12) <= target;
                last = next;
                if done {
                    break;
                }
            }
            Ok(deepen(c, last, target, interval_seconds))
        }
    }
}

/// Values below the truncation depth (an enclosure `[0, h]`, or one wider than `target` that
/// the escalation's floor let through) are recomputed in MPFR at 512, 1024, then 2048 bits,
/// whose windows reach correspondingly deeper, until every value is resolved, a step is refused
/// (memory, time), or the next step would pass [`DEEPENING_SECONDS`] in all.  The narrowest
/// answer is kept (every one is certified).
fn deepen<C: Computation>(
    c: &C,
    first: Computed<C::Output>,
    target: f64,
    interval_seconds: f64,
) -> Computed<C::Output> {
    if !first.result.unresolved(target) {
        return first;
    }
    let started = std::time::Instant::now();
    // Within the budget, and within what `--max-seconds` leaves after the first pass.
    let budget = DEEPENING_SECONDS.min(c.time_limit_seconds() - interval_seconds);
    let mut last = first;
    // A 512-bit MPFR pass costs about this many f64-interval passes (and each doubling about
    // three times the last).
    let mut step_seconds = interval_seconds * c.mpfr_512_over_interval() / 3.0;
    for precision in DEEPER_PRECISIONS {
        let spent = started.elapsed().as_secs_f64();
        if spent + 3.0 * step_seconds > budget {
            last.arithmetic += " (not deepened further: time budget)";
            break;
        }
        let label = format!(
            "mpfr-{precision} (deepened: a value lay below the truncation depth of {})",
            last.arithmetic
        );
        let step = std::time::Instant::now();
        match c.run_in::<MpfrInterval>(&MpfrCtx { precision }, label) {
            Ok(next) => {
                step_seconds = step.elapsed().as_secs_f64();
                let done = !next.result.unresolved(target);
                last = next;
                if done {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    last
}

/// A job on a pair source, as one computation.
struct OnPair<'a, Src, J> {
    source: &'a Src,
    job: &'a J,
}

impl<Src: PairSource, J: PairJob> Computation for OnPair<'_, Src, J> {
    type Output = J::Output;

    fn backend(&self) -> Backend {
        self.source.backend()
    }

    fn escalate_above(&self) -> Option<f64> {
        self.source.escalate_above()
    }

    fn time_limit_seconds(&self) -> f64 {
        self.source.time_limit_seconds()
    }

    fn mpfr_512_over_interval(&self) -> f64 {
        self.source.mpfr_512_over_interval()
    }

    fn exact_ctx(&self) -> ExactCtx {
        self.source.exact_ctx()
    }

    fn check_exact(&self) -> Result<()> {
        self.source.check_exact()
    }

    fn run_in<S: Scalar>(&self, ctx: &S::Ctx, arithmetic: String) -> Result<Computed<J::Output>> {
        let Built {
            law,
            canonical_states_checked,
        } = self.source.build::<S>(ctx)?;
        let result = self.job.run(&law, ctx)?;
        Ok(Computed {
            result,
            arithmetic,
            engine: match law.layout {
                Layout::Binary { .. } => "binary",
                Layout::General { .. } => "general",
                Layout::Window { .. } => "window",
                Layout::Reduced => "reduced",
                Layout::Lattice { .. } => "lattice",
                Layout::Ratio { .. } => "ratio",
            },
            states: law.len(),
            omitted: law.omitted.clone(),
            canonical_states_checked,
        })
    }
}

/// Runs `job` on the source's pair in its backend (escalating precision if asked).
pub fn answer<Src: PairSource, J: PairJob>(source: &Src, job: &J) -> Result<Computed<J::Output>> {
    compute(&OnPair { source, job })
}

/// A privacy threshold: ε as a rational, or `e^ε` given directly.
#[derive(Clone, Debug)]
pub enum Threshold {
    Eps(Rational),
    ExpEps(Rational),
}

impl Threshold {
    /// δ of the pair at this threshold, in direction `dir`.
    pub fn delta<S: Scalar>(&self, law: &PairLaw<S>, dir: Direction, ctx: &S::Ctx) -> Enclosure {
        match self {
            Threshold::Eps(e) => curve::delta(law, dir, e, ctx),
            Threshold::ExpEps(c) => curve::delta_at_exp(law, dir, c, ctx),
        }
    }

    /// δ of a prepared curve at this threshold.
    pub fn on<S: Scalar>(&self, curve: &curve::Curve<'_, S>) -> Enclosure {
        match self {
            Threshold::Eps(e) => curve.at_eps(e),
            Threshold::ExpEps(c) => curve.at_exp(c),
        }
    }

    /// Quick certified bounds of δ of a prepared curve at this threshold (doubles, outward).
    pub fn quick_on<S: Scalar>(&self, curve: &curve::Curve<'_, S>) -> (f64, f64) {
        match self {
            Threshold::Eps(e) => curve.quick_at_eps(e),
            Threshold::ExpEps(c) => curve.quick_at_exp(c),
        }
    }

    /// A rational `c ≥ e^ε` (exactly `e^ε` when given directly; else MPFR's exp rounded up at
    /// 128 bits).
    pub fn exp_upper_bound(&self) -> Rational {
        match self {
            Threshold::Eps(e) => crate::arith::exp_bracket(e, 128).1,
            Threshold::ExpEps(c) => c.clone(),
        }
    }

    /// ε as a double (for choosing plot ranges).
    pub fn eps_f64(&self) -> f64 {
        match self {
            Threshold::Eps(e) => e.to_f64(),
            Threshold::ExpEps(c) => c.to_f64().ln(),
        }
    }

    /// The threshold back from [`Threshold::eps_text`].
    pub fn from_text(text: &str) -> Option<Threshold> {
        match text.strip_prefix("ln(").and_then(|t| t.strip_suffix(')')) {
            Some(c) => crate::enclosure::parse_rational(c).map(Threshold::ExpEps),
            None => crate::enclosure::parse_rational(text).map(Threshold::Eps),
        }
    }

    /// ε as a decimal string (exact), or `ln(p/q)` for an `e^ε` given directly.
    pub fn eps_text(&self) -> String {
        match self {
            Threshold::Eps(e) => crate::enclosure::exact_string(e),
            Threshold::ExpEps(c) => format!("ln({})", crate::enclosure::exact_string(c)),
        }
    }
}

/// δ at each threshold, both directions and two-sided.
pub struct DeltaJob {
    pub thresholds: Vec<Threshold>,
}

/// δ in both directions at one threshold.
#[derive(Clone, Debug)]
pub struct DeltaRow {
    pub threshold: Threshold,
    pub qp: Enclosure,
    pub pq: Enclosure,
    /// `max(δ_{Q‖P}, δ_{P‖Q})`.
    pub two_sided: Enclosure,
}

impl PairJob for DeltaJob {
    type Output = Vec<DeltaRow>;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<Vec<DeltaRow>> {
        Ok(self
            .thresholds
            .iter()
            .map(|t| {
                let qp = t.delta(law, Direction::Qp, ctx);
                let pq = t.delta(law, Direction::Pq, ctx);
                let two_sided = qp.max(&pq);
                DeltaRow {
                    threshold: t.clone(),
                    qp,
                    pq,
                    two_sided,
                }
            })
            .collect())
    }
}

impl Widths for Vec<DeltaRow> {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        self.iter()
            .flat_map(|r| [&r.qp, &r.pq])
            .map(|e| relative_width_above(e, floor))
            .fold(0.0, f64::max)
    }

    fn unresolved(&self, rel: f64) -> bool {
        self.iter()
            .flat_map(|r| [&r.qp, &r.pq])
            .any(|e| !e.resolved(rel))
    }
}

/// ε for a target δ, both directions and two-sided.
pub struct EpsilonJob {
    pub delta: Rational,
}

/// The certified ε in each direction.
#[derive(Clone, Debug)]
pub struct EpsilonRow {
    pub qp: EpsilonCertificate,
    pub pq: EpsilonCertificate,
    /// `max` of the two: the smallest ε with both curves ≤ δ.
    pub two_sided: Enclosure,
}

impl PairJob for EpsilonJob {
    type Output = EpsilonRow;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<EpsilonRow> {
        let qp = curve::epsilon_for_delta(law, Direction::Qp, &self.delta, ctx)?;
        let pq = curve::epsilon_for_delta(law, Direction::Pq, &self.delta, ctx)?;
        let two_sided = qp.eps.max(&pq.eps);
        Ok(EpsilonRow { qp, pq, two_sided })
    }
}

impl Widths for EpsilonRow {
    fn unresolved(&self, rel: f64) -> bool {
        [&self.qp.eps, &self.pq.eps]
            .iter()
            .any(|e| !e.resolved(rel))
    }

    fn worst_relative_width(&self, _floor: f64) -> f64 {
        [&self.qp.eps, &self.pq.eps]
            .iter()
            .map(|e| {
                if e.lo() == &Endpoint::PosInf {
                    0.0
                } else {
                    e.relative_width()
                }
            })
            .fold(0.0, f64::max)
    }
}

/// The singular masses `[Q(P = 0), P(Q = 0)]` of the pair (`curve::singular_mass`): what
/// `verify` holds an ε certificate's `witnesses.*.singular_mass` against.
pub struct SingularJob;

impl PairJob for SingularJob {
    type Output = [Enclosure; 2];
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<[Enclosure; 2]> {
        Ok([Direction::Qp, Direction::Pq].map(|dir| curve::singular_mass(law, dir, ctx)))
    }
}

impl Widths for [Enclosure; 2] {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        self.iter()
            .map(|e| relative_width_above(e, floor))
            .fold(0.0, f64::max)
    }
}

/// TV, KL both ways, JSD, χ², squared Hellinger and Rényi divergences.
pub struct DivergenceJob {
    pub renyi_orders: Vec<Rational>,
}

impl PairJob for DivergenceJob {
    type Output = Divergences;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<Divergences> {
        self.check_orders()?;
        Ok(divergence::divergences(law, &self.renyi_orders, ctx))
    }
}

impl DivergenceJob {
    /// Refuses Rényi orders ≤ 1.
    pub fn check_orders(&self) -> Result<()> {
        match self.renyi_orders.iter().find(|a| **a <= 1) {
            Some(a) => Err(Error::argument(
                "--renyi-order",
                format!(
                    "orders must exceed 1, got {}",
                    crate::enclosure::exact_string(a)
                ),
            )),
            None => Ok(()),
        }
    }
}

impl Widths for Divergences {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        [
            &self.tv,
            &self.kl_qp,
            &self.kl_pq,
            &self.jsd,
            &self.chi2_qp,
            &self.hellinger2,
        ]
        .into_iter()
        .chain(self.renyi_qp.iter().chain(&self.renyi_pq).map(|(_, e)| e))
        .map(|e| relative_width_above(e, floor))
        .fold(0.0, f64::max)
    }
}
