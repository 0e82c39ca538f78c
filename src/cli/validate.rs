//! Raw arguments → validated library inputs.  Every error names the option.

use super::args::{
    AuditArgs, BackendArg, BerryEsseenArgs, BoundsArgs, CheckArgs, CommonArgs, CompareArgs,
    CompareMessagesArgs, EngineArg, MessagesArgs, PairArgs, ProfileArgs,
};
use crate::arith::exact::ExactCtx;
use crate::audit::AuditQuery;
use crate::audit::claims::read_claims;
use crate::audit::compare::CompareQuery;
use crate::audit::range::RangeAuditQuery;
use crate::bounds::range::{BoundsQuery, Target};
use crate::check::{CheckQuery, CurvePoint};
use crate::enclosure::parse_rational;
use crate::error::{Error, Result};
use crate::exact::background::Background;
use crate::exact::pair::{Engine, PairOptions, check_composition};
use crate::limits::berry_esseen::Scale;
use crate::limits::experiment::{ExperimentQuery, load_experiment};
use crate::mechanism::randomizer::{Randomizer, load_randomizer};
use crate::mechanism::{Mechanism, Messages, load_mechanism};
use crate::profile::{ProfileQuery, Quantity};
use crate::profile_inputs::InputsProfileQuery;
use crate::query::{Backend, BackgroundQuery, PairQuery, Threshold};
use rug::Rational;

/// A `--plot` path: an SVG file name in a directory that exists, and not the certificate's,
/// checked before any work.
pub fn plot_path(path: Option<&String>, certificate: Option<&String>) -> Result<()> {
    if path.is_some() && path == certificate {
        return Err(Error::argument(
            "--plot",
            "is the --certificate file; give the picture a file of its own",
        ));
    }
    output_path("--plot", path, "svg", "draws SVG")
}

/// `--html`: a file name ending in `.html` in a directory that exists.
pub fn html_path(path: Option<&String>) -> Result<()> {
    output_path("--html", path, "html", "writes an HTML page")
}

/// An output file named after `flag`: its extension must be `ext`, its directory must exist.
fn output_path(flag: &str, path: Option<&String>, ext: &str, what: &str) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let file = std::path::Path::new(path);
    if !file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    {
        return Err(Error::argument(
            flag,
            format!("{what}: give a file name ending in .{ext}, got \"{path}\""),
        ));
    }
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return Err(Error::argument(
            flag,
            format!("the directory of \"{path}\" does not exist"),
        ));
    }
    Ok(())
}

/// A whole number option.
pub fn whole(field: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    if let Ok(v) = t.parse::<u64>() {
        return Ok(v);
    }
    // Accept exact scientific forms such as 1e6.
    match parse_rational(t) {
        Some(q) if q >= 0 && *q.denom() == 1 && q.numer().to_u64().is_some() => {
            Ok(q.numer().to_u64().expect("checked"))
        }
        _ => Err(Error::argument(
            field,
            format!("expected a whole number ≥ 0, got \"{text}\""),
        )),
    }
}

/// An exact rational option.
pub fn rational(field: &str, text: &str) -> Result<Rational> {
    parse_rational(text).ok_or_else(|| {
        Error::argument(
            field,
            format!("expected an exact decimal or fraction, got \"{text}\""),
        )
    })
}

/// A comma-separated list of exact rationals.
pub fn rational_list(field: &str, text: &str) -> Result<Vec<Rational>> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|s| s.is_empty()) {
        return Err(Error::argument(field, format!("empty entry in \"{text}\"")));
    }
    items.iter().map(|s| rational(field, s)).collect()
}

/// The settings every subcommand shares, and its mechanism.
pub struct Common {
    pub mechanism: Mechanism,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
}

/// What answers a randomizer with more than two inputs, for the refusal of a command that
/// answers binary-input mechanisms only.
pub mod instead {
    pub const PAIR: &str = "for one neighbouring pair of this randomizer give --background LABEL=COUNT,… --switch X1:X1' instead of --k; for its worst case over every dataset `profile` gives the exact value and `bounds` a certified range";
    pub const PROFILE: &str = "for this randomizer `bounds` certifies the range [lower, upper] of its worst case δ_M(ε) or ε_M(δ)";
    pub const CHECK: &str = "without --k, `check` holds the shuffle index's predictions against the certified range of `bounds`";
    pub const CONSTANTS: &str = "the Fisher constants of Part I §3 are defined for a pair of inputs; `bounds` and `check` without --k take the whole randomizer";
}

/// A binary-input mechanism for a command that answers only for binary inputs: a randomizer
/// with more inputs is refused in one line that names what answers it (`instead`) and, for a
/// family, its binary-input restriction `inputs=2`.  Never a narrower question answered
/// silently.
pub fn binary_mechanism(spec: &str, command: &str, instead: &str) -> Result<Mechanism> {
    // A family names its inputs without its table (k-RR with a million symbols is refused at
    // once, not after building a million rows).
    let (name, domain) = match crate::mechanism::randomizer::family_inputs(spec)? {
        Some(2) => return load_mechanism(spec),
        Some(count) => {
            let labels = match count {
                3 => "0, 1, 2".to_string(),
                _ => format!("0, 1, …, {}", count - 1),
            };
            (spec.to_string(), format!("{count} inputs {{{labels}}}"))
        }
        None => {
            let randomizer = load_randomizer(spec)?;
            if randomizer.input_count() <= 2 {
                return load_mechanism(spec);
            }
            (randomizer.name.clone(), randomizer.domain_text())
        }
    };
    let restriction = if crate::mechanism::parse::is_family_string(spec) {
        let base: Vec<&str> = spec
            .split(',')
            .filter(|part| !part.trim_start().starts_with("inputs="))
            .collect();
        format!(
            "; its binary-input restriction is {},inputs=2",
            base.join(",")
        )
    } else {
        String::new()
    };
    Err(Error::argument(
        "--mechanism",
        format!(
            "{name} is a randomizer on {domain}, and `{command}` answers binary-input mechanisms only: {instead}{restriction}"
        ),
    ))
}

/// Validates the shared options and loads the binary-input mechanism (see
/// [`binary_mechanism`]).
/// With `--messages`, the mechanism of users sending that many messages.
pub fn common(args: &CommonArgs, mechanism: &str, command: &str, instead: &str) -> Result<Common> {
    let Settings {
        options,
        backend,
        exact_ctx,
        escalate_above,
    } = settings_of(args)?;
    let messages = messages(&args.messages)?;
    let mechanism = binary_mechanism(mechanism, command, instead)?;
    Ok(Common {
        mechanism: match messages {
            Some(m) => crate::multimessage::with_messages(&mechanism, m)?,
            None => mechanism,
        },
        options,
        backend,
        exact_ctx,
        escalate_above,
    })
}

/// `--messages M` and `--bundled` (Part I §9): `None` without `--messages`.
pub fn messages(args: &MessagesArgs) -> Result<Option<Messages>> {
    let Some(text) = &args.messages else {
        if args.bundled {
            return Err(Error::argument(
                "--bundled",
                "needs --messages M, the number of messages each user sends",
            ));
        }
        return Ok(None);
    };
    if text.trim_start().starts_with('-') {
        return Err(Error::argument(
            "--messages",
            format!("must be at least 1 (the messages each user sends), got {text}"),
        ));
    }
    let count = whole("--messages", text)?;
    if count == 0 {
        return Err(Error::argument(
            "--messages",
            "must be at least 1 (the messages each user sends)",
        ));
    }
    if count > u64::from(crate::multimessage::MAX_MESSAGES) {
        return Err(Error::argument(
            "--messages",
            format!(
                "at most {} messages per user, got {count}",
                crate::multimessage::MAX_MESSAGES
            ),
        ));
    }
    Ok(Some(Messages {
        count: count as u32,
        bundled: args.bundled,
    }))
}

/// The shared options without a mechanism.
struct Settings {
    options: PairOptions,
    backend: Backend,
    exact_ctx: ExactCtx,
    escalate_above: Option<f64>,
}

/// `--precision`: MPFR bits, 24 to 65536.
fn precision_bits(text: &str) -> Result<u32> {
    let bits = whole("--precision", text)?;
    if !(24..=65536).contains(&bits) {
        return Err(Error::argument(
            "--precision",
            format!("must be between 24 and 65536 bits, got {bits}"),
        ));
    }
    Ok(bits as u32)
}

/// Validates the shared options of a question that has no multi-message form (a randomizer on
/// more inputs, a limit experiment): `--messages` is refused.
fn settings(args: &CommonArgs) -> Result<Settings> {
    if args.messages.messages.is_some() || args.messages.bundled {
        return Err(Error::argument(
            messages_flag(&args.messages),
            "users sending several messages (Part I §9) are answered for binary-input \
             mechanisms only (delta, epsilon and divergences with --k, profile, audit, check with \
             --k, constants and compare-messages), not for a randomizer on more inputs or a limit \
             experiment; for k-RR on two inputs add inputs=2 (k-rr:k=4,eps0=1,inputs=2)",
        ));
    }
    settings_of(args)
}

/// The multi-message option the user gave (`--messages`, else `--bundled`), for errors.
fn messages_flag(args: &MessagesArgs) -> &'static str {
    if args.messages.is_some() {
        "--messages"
    } else {
        "--bundled"
    }
}

/// Validates the shared options.
fn settings_of(args: &CommonArgs) -> Result<Settings> {
    let precision = args.precision.as_deref().map(precision_bits).transpose()?;
    let backend = match args.backend {
        BackendArg::Interval => {
            if precision.is_some() {
                return Err(Error::argument(
                    "--precision",
                    "applies to --backend mpfr or exact, not interval",
                ));
            }
            Backend::Interval
        }
        BackendArg::Mpfr => Backend::Mpfr {
            precision: precision.unwrap_or(128),
        },
        BackendArg::Exact => Backend::Exact,
    };
    let exact_ctx = ExactCtx {
        bracket_precision: precision.unwrap_or(ExactCtx::default().bracket_precision),
    };
    let rel_width = rational("--rel-width", &args.rel_width)?;
    if rel_width <= 0 {
        return Err(Error::argument("--rel-width", "must be positive"));
    }
    let memory_limit = memory_limit(&args.max_memory_gib)?;
    let seconds = rational("--max-seconds", &args.max_seconds)?;
    if seconds < Rational::from((1, 1000)) {
        return Err(Error::argument("--max-seconds", "must be at least 0.001"));
    }
    Ok(Settings {
        options: PairOptions {
            engine: match args.engine {
                EngineArg::Auto => Engine::Auto,
                EngineArg::General => Engine::General,
                EngineArg::Window => Engine::Window,
                EngineArg::Binary => Engine::Binary,
            },
            reduce: !args.no_reduce,
            truncate: !args.no_truncation,
            truncation_bits: None,
            memory_limit,
            time_limit_seconds: seconds.to_f64(),
        },
        backend,
        exact_ctx,
        escalate_above: (!args.no_escalate).then(|| rel_width.to_f64()),
    })
}

/// The input with this label (the error lists the labels).
fn input_index(r: &Randomizer, field: &str, label: &str) -> Result<usize> {
    r.inputs.iter().position(|l| l == label).ok_or_else(|| {
        Error::argument(
            field,
            format!(
                "no input \"{label}\" (the inputs of {} are {})",
                r.name,
                r.inputs.join(", ")
            ),
        )
    })
}

/// `--background LABEL=COUNT,…` and `--switch X1:X1'` for a randomizer on any input domain.
pub fn background_query(args: &PairArgs) -> Result<BackgroundQuery> {
    let (Some(spec), Some(n), Some(counts), Some(switch)) =
        (&args.mechanism, &args.n, &args.background, &args.switch)
    else {
        return Err(Error::argument(
            "--background",
            "needs --mechanism, --n and --switch",
        ));
    };
    let n = whole("--n", n)?;
    if n < 1 {
        return Err(Error::argument("--n", "must be at least 1"));
    }
    let randomizer = load_randomizer(spec)?;
    let mut given = vec![None; randomizer.input_count()];
    if matches!(args.common.engine, EngineArg::Binary | EngineArg::General) {
        return Err(Error::argument(
            "--engine",
            "a --background pair runs on windowed laws (auto or window)",
        ));
    }
    for item in counts.split(',') {
        if item.trim().is_empty() {
            return Err(Error::argument(
                "--background",
                format!("empty entry in \"{counts}\""),
            ));
        }
        let Some((label, count)) = item.rsplit_once('=') else {
            return Err(Error::argument(
                "--background",
                format!("\"{item}\" is not LABEL=COUNT"),
            ));
        };
        let x = input_index(&randomizer, "--background", label.trim())?;
        if given[x].is_some() {
            return Err(Error::argument(
                "--background",
                format!("input \"{}\" is given twice", label.trim()),
            ));
        }
        given[x] = Some(whole("--background", count.trim())?);
    }
    let counts: Vec<u64> = given.into_iter().map(Option::unwrap_or_default).collect();
    let others = counts
        .iter()
        .try_fold(0u64, |a, c| a.checked_add(*c))
        .ok_or_else(|| Error::argument("--background", "the counts overflow"))?;
    if others != n - 1 {
        return Err(Error::argument(
            "--background",
            format!(
                "the counts must add up to n − 1 = {} (the users besides the switched one), got {others}",
                n - 1
            ),
        ));
    }
    let Some((a, b)) = switch.split_once(':') else {
        return Err(Error::argument(
            "--switch",
            "expected X1:X1' (two input labels)",
        ));
    };
    let x1 = input_index(&randomizer, "--switch", a.trim())?;
    let x1p = input_index(&randomizer, "--switch", b.trim())?;
    if x1 == x1p {
        return Err(Error::argument(
            "--switch",
            "the two inputs must differ (the datasets would be equal)",
        ));
    }
    let c = settings(&args.common)?;
    Ok(BackgroundQuery {
        randomizer,
        background: Background {
            counts,
            switch: (x1, x1p),
        },
        options: c.options,
        backend: c.backend,
        exact_ctx: c.exact_ctx,
        escalate_above: c.escalate_above,
    })
}

/// The question about one pair of a binary-input mechanism, for `command`.
pub fn pair_query(args: &PairArgs, command: &str) -> Result<PairQuery> {
    let (Some(mechanism), Some(n)) = (&args.mechanism, &args.n) else {
        return Err(Error::argument(
            "--experiment",
            "this command takes a mechanism (--mechanism, --n, --k), not a limit experiment",
        ));
    };
    let Some(k) = &args.k else {
        return Err(Error::argument(
            "--k",
            "is required: the number of the other users holding input 1 (or --background with --switch for a randomizer on any input domain)",
        ));
    };
    let n = whole("--n", n)?;
    let k = whole("--k", k)?;
    check_composition(n, k)?;
    let instead = if command == "check" {
        instead::CHECK
    } else {
        instead::PAIR
    };
    let c = common(&args.common, mechanism, command, instead)?;
    Ok(PairQuery {
        mechanism: c.mechanism,
        n,
        k,
        options: c.options,
        backend: c.backend,
        exact_ctx: c.exact_ctx,
        escalate_above: c.escalate_above,
    })
}

/// What `delta`, `epsilon` and `divergences` are asked about.
pub enum Source {
    Mechanism(PairQuery),
    Background(BackgroundQuery),
    Experiment(ExperimentQuery),
}

/// The pair of a mechanism, of a randomizer with a background (`--background`), or a limit
/// experiment (`--experiment`).
pub fn pair_source(args: &PairArgs, command: &str) -> Result<Source> {
    if args.background.is_some() {
        return background_query(args).map(Source::Background);
    }
    let Some(spec) = &args.experiment else {
        return pair_query(args, command).map(Source::Mechanism);
    };
    let experiment = load_experiment(spec)?;
    let c = &args.common;
    for (given, flag) in [
        (c.no_reduce, "--no-reduce"),
        (c.no_truncation, "--no-truncation"),
        (!matches!(c.engine, EngineArg::Auto), "--engine"),
    ] {
        if given {
            return Err(Error::argument(
                flag,
                "does not apply to a limit experiment (its laws are infinite and always truncated with a certified tail bound)",
            ));
        }
    }
    let settings = settings(c)?;
    check_experiment_precision(settings.backend)?;
    Ok(Source::Experiment(ExperimentQuery {
        experiment,
        backend: settings.backend,
        escalate_above: settings.escalate_above,
    }))
}

/// The limit experiments run up to 2048-bit MPFR (their windows and quadrature cells grow with
/// the precision).
fn check_experiment_precision(backend: Backend) -> Result<()> {
    match backend {
        Backend::Mpfr { precision }
            if precision > crate::limits::experiment::MAX_EXPERIMENT_BITS =>
        {
            Err(Error::argument(
                "--precision",
                format!(
                    "limit experiments run with at most {} bits, got {precision}",
                    crate::limits::experiment::MAX_EXPERIMENT_BITS
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The profile question, the number of worker threads (if given) and whether to stay quiet.
/// `--threads` of `profile`: the worker count, or `None` for all cores.
pub fn profile_threads(args: &ProfileArgs) -> Result<Option<usize>> {
    Ok(match &args.threads {
        None => None,
        Some(t) => {
            // More threads than a few per CPU only adds scheduling and pruning overhead.
            let cpus = std::thread::available_parallelism().map_or(1, |c| c.get()) as u64;
            let most = (4 * cpus).min(1024);
            match whole("--threads", t)? {
                0 => return Err(Error::argument("--threads", "must be at least 1")),
                t if t > most => {
                    return Err(Error::argument(
                        "--threads",
                        format!("at most {most} (4 per CPU, {cpus} CPUs here), got {t}"),
                    ));
                }
                t => Some(t as usize),
            }
        }
    })
}

pub fn profile_query(args: &ProfileArgs) -> Result<(ProfileQuery, Option<usize>)> {
    if args.slice.is_some() {
        return Err(Error::argument(
            "--slice",
            "slices the compositions of a randomizer on more than two inputs; a binary-input \
             mechanism's profile is sharded by --k-range",
        ));
    }
    let n = whole("--n", &args.n)?;
    check_composition(n, 0)?;
    let k_range = match &args.k_range {
        None => None,
        Some(text) => {
            let (a, b) = text.split_once("..").ok_or_else(|| {
                Error::argument("--k-range", format!("expected A..B, got \"{text}\""))
            })?;
            Some((whole("--k-range", a)?, whole("--k-range", b)?))
        }
    };
    let threads = profile_threads(args)?;
    let quantities = profile_quantities(args)?;
    let c = common(
        &args.common,
        &args.mechanism.mechanism,
        "profile",
        instead::PROFILE,
    )?;
    Ok((
        ProfileQuery {
            mechanism: c.mechanism,
            n,
            k_range,
            quantities,
            options: c.options,
            backend: c.backend,
            exact_ctx: c.exact_ctx,
            prune: !args.no_prune,
            with_ends: args.with_ends,
            escalate_above: c.escalate_above,
        },
        threads,
    ))
}

/// The audit (the shared options and the claims file, read and validated in full), and the
/// claims file's text for its certificate.
pub fn audit_query(args: &AuditArgs) -> Result<Audited> {
    let spec = &args.mechanism.mechanism;
    let randomizer = load_randomizer(spec)?;
    if randomizer.input_count() > 2 {
        require_rational_randomizer(&randomizer)?;
        no_engine_choice(&args.common)?;
        let (text, claims) = read_claims(&args.claims)?;
        let c = settings(&args.common)?;
        return Ok(Audited::Range(
            RangeAuditQuery {
                randomizer,
                claims,
                path: args.claims.clone(),
                options: c.options,
                backend: c.backend,
                escalate_above: c.escalate_above,
                eps_ranges: args.eps_ranges,
                narrow_seconds: match &args.narrow_seconds {
                    Some(text) => narrow_seconds(text)?,
                    None => DEFAULT_NARROW_SECONDS,
                },
            },
            text,
        ));
    }
    if args.narrow_seconds.is_some() {
        return Err(Error::argument(
            "--narrow-seconds",
            "narrows a randomizer's certified range (more than two inputs); a binary-input \
             mechanism's audit is judged on its exact profile already",
        ));
    }
    let (text, claims) = read_claims(&args.claims)?;
    let c = common(&args.common, spec, "audit", instead::PROFILE)?;
    Ok(Audited::Profile(
        AuditQuery {
            mechanism: c.mechanism,
            claims,
            options: c.options,
            backend: c.backend,
            exact_ctx: c.exact_ctx,
            escalate_above: c.escalate_above,
        },
        text,
    ))
}

/// What `audit` judges claims against: the exact profile of a binary-input mechanism, or the
/// certified range of a randomizer with more inputs (each with the claims file's text, for
/// certificates).
pub enum Audited {
    Profile(AuditQuery, String),
    Range(RangeAuditQuery, String),
}

/// The comparison of published bounds: the shared options, every n and the target δ.
pub fn compare_query(args: &CompareArgs) -> Result<CompareQuery> {
    if args.common.messages.messages.is_some() || args.common.messages.bundled {
        return Err(Error::argument(
            messages_flag(&args.common.messages),
            "the published bounds `compare` lists are for one message per user; \
             `compare-messages` compares one message with m messages, unbundled and bundled",
        ));
    }
    let ns = sizes(&args.n)?;
    let delta = rational("--delta", &args.delta)?;
    crate::exact::curve::check_target(&delta)?;
    let spec = &args.mechanism.mechanism;
    let randomizer = load_randomizer(spec)?;
    if randomizer.input_count() > 2 {
        // The published bounds are held against the certified range of the randomizer on its
        // whole input domain (`bounds`).
        require_rational_randomizer(&randomizer)?;
        no_engine_choice(&args.common)?;
        if args.common.certificate.is_some() {
            if !matches!(args.common.backend, BackendArg::Interval) {
                return Err(Error::argument(
                    "--certificate",
                    "a compare on a randomizer with more than two inputs is certified with the interval backend only (verify confirms its range at 128 bits)",
                ));
            }
            if ns.iter().any(|&n| n < 2) {
                return Err(Error::argument(
                    "--certificate",
                    "a compare on a randomizer with more than two inputs is certified for n ≥ 2 (its witness is a pair of datasets of at least two users)",
                ));
            }
        }
        let c = settings(&args.common)?;
        return Ok(CompareQuery {
            randomizer,
            mechanism: None,
            ns,
            delta,
            options: c.options,
            backend: c.backend,
            exact_ctx: c.exact_ctx,
            escalate_above: c.escalate_above,
        });
    }
    let c = common(&args.common, spec, "compare", instead::PROFILE)?;
    Ok(CompareQuery {
        randomizer: Randomizer::from_mechanism(c.mechanism.clone()),
        mechanism: Some(c.mechanism),
        ns,
        delta,
        options: c.options,
        backend: c.backend,
        exact_ctx: c.exact_ctx,
        escalate_above: c.escalate_above,
    })
}

/// `compare-messages`: the single-message mechanism, n, k, m and the thresholds.
pub fn compare_messages_query(
    args: &CompareMessagesArgs,
) -> Result<crate::multimessage::compare::MessagesQuery> {
    if args.common.messages.bundled {
        return Err(Error::argument(
            "--bundled",
            "compare-messages shows the unbundled and the bundled model side by side; give \
             --messages M alone",
        ));
    }
    let Some(count) = messages(&args.common.messages)? else {
        return Err(Error::argument(
            "--messages",
            "is required: the number of messages each user sends (at least 2)",
        ));
    };
    if count.count < 2 {
        return Err(Error::argument(
            "--messages",
            "the comparison needs at least 2 messages per user",
        ));
    }
    let n = whole("--n", &args.n)?;
    let k = whole("--k", &args.k)?;
    check_composition(n, k)?;
    let thresholds = thresholds(args.eps.as_deref(), args.exp_eps.as_deref())?;
    let Settings {
        options,
        backend,
        exact_ctx,
        escalate_above,
    } = settings_of(&args.common)?;
    let mechanism = binary_mechanism(
        &args.mechanism.mechanism,
        "compare-messages",
        "multi-message shuffling is defined here for binary inputs (Part I §9)",
    )?;
    crate::multimessage::bundled(&mechanism, count.count)?;
    Ok(crate::multimessage::compare::MessagesQuery {
        mechanism,
        n,
        k,
        messages: count.count,
        thresholds,
        profile: args.profile,
        options,
        backend,
        exact_ctx,
        escalate_above,
    })
}

/// The thresholds of `delta`: `--eps` values then `--exp-eps` values.
pub fn thresholds(eps: Option<&str>, exp_eps: Option<&str>) -> Result<Vec<Threshold>> {
    let mut out = Vec::new();
    if let Some(text) = eps {
        for e in rational_list("--eps", text)? {
            if e < 0 {
                return Err(Error::argument("--eps", "values must be ≥ 0"));
            }
            if e > 700 {
                return Err(Error::argument("--eps", "values must be ≤ 700"));
            }
            out.push(Threshold::Eps(e));
        }
    }
    if let Some(text) = exp_eps {
        for c in rational_list("--exp-eps", text)? {
            if c < 1 {
                return Err(Error::argument("--exp-eps", "values must be ≥ 1 (ε ≥ 0)"));
            }
            out.push(Threshold::ExpEps(c));
        }
    }
    if out.is_empty() {
        return Err(Error::argument(
            "--eps",
            "give at least one ε with --eps or --exp-eps (delta also takes --plot alone)",
        ));
    }
    Ok(out)
}

/// A range `A..B` of exact rationals.
pub fn rational_range(field: &str, text: &str) -> Result<(Rational, Rational)> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| Error::argument(field, format!("expected A..B, got \"{text}\"")))?;
    let (a, b) = (rational(field, a)?, rational(field, b)?);
    if a > b {
        return Err(Error::argument(field, "the start exceeds the end"));
    }
    Ok((a, b))
}

/// A composition π ∈ [0, 1].
pub fn composition(field: &str, text: &str) -> Result<Rational> {
    let pi = rational(field, text)?;
    if !(0..=1).contains(&pi) {
        return Err(Error::argument(field, "must lie in [0, 1]"));
    }
    Ok(pi)
}

/// The checker's question.
/// What `check` checks: the asymptotics of one binary-input pair, or (without `--k`) the
/// shuffle index's predictions against the certified range of `bounds`.
pub enum Checked {
    Pair(CheckQuery),
    Index {
        query: BoundsQuery,
        eps: Vec<Rational>,
    },
}

pub fn check_source(args: &CheckArgs) -> Result<Checked> {
    let p = &args.pair;
    if p.k.is_some() || p.background.is_some() || p.experiment.is_some() {
        if p.background.is_some() {
            return Err(Error::argument(
                "--background",
                "check takes a binary-input pair (--k) or, without --k, a randomizer's shuffle index",
            ));
        }
        return check_query(args).map(Checked::Pair);
    }
    for (given, flag) in [
        (args.t.is_some(), "--t"),
        (args.n_sweep.is_some(), "--n-sweep"),
        (args.plot.is_some(), "--plot"),
    ] {
        if given {
            return Err(Error::argument(
                flag,
                "applies to the check of a binary-input pair (give --k); without --k, check compares the shuffle index's predictions at --eps with `bounds`",
            ));
        }
    }
    let (Some(spec), Some(n), Some(eps)) = (&p.mechanism, &p.n, &args.eps) else {
        return Err(Error::argument(
            "--eps",
            "is required without --k (the shuffle-index check compares predictions of δ at each ε)",
        ));
    };
    let eps = rational_list("--eps", eps)?;
    if eps.iter().any(|e| *e < 0) {
        return Err(Error::argument("--eps", "values must be ≥ 0"));
    }
    let n = whole("--n", n)?;
    if n < 2 {
        return Err(Error::argument(
            "--n",
            "the shuffle-index check needs n ≥ 2 (it also compares ε at δ = 1/n)",
        ));
    }
    let randomizer = load_randomizer(spec)?;
    require_rational_randomizer(&randomizer)?;
    no_engine_choice(&p.common)?;
    let c = settings(&p.common)?;
    Ok(Checked::Index {
        query: BoundsQuery {
            randomizer,
            n,
            target: Target::Delta(Vec::new()),
            options: c.options,
            backend: c.backend,
            escalate_above: c.escalate_above,
        },
        eps,
    })
}

pub fn check_query(args: &CheckArgs) -> Result<CheckQuery> {
    let points = match (&args.t, &args.eps) {
        (Some(t), _) => rational_list("--t", t)?
            .into_iter()
            .map(|t| {
                if t < 0 {
                    Err(Error::argument("--t", "values must be ≥ 0"))
                } else {
                    Ok(CurvePoint::T(t))
                }
            })
            .collect::<Result<Vec<_>>>()?,
        (None, Some(e)) => rational_list("--eps", e)?
            .into_iter()
            .map(|e| {
                if e < 0 {
                    Err(Error::argument("--eps", "values must be ≥ 0"))
                } else {
                    Ok(CurvePoint::Eps(e))
                }
            })
            .collect::<Result<Vec<_>>>()?,
        (None, None) => return Err(Error::argument("--t", "give --t or --eps")),
    };
    let sweep = match &args.n_sweep {
        Some(text) => text
            .split(',')
            .map(|s| whole("--n-sweep", s))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    if sweep.contains(&0) {
        return Err(Error::argument("--n-sweep", "every n must be at least 1"));
    }
    Ok(CheckQuery {
        pair: pair_query(&args.pair, "check")?,
        points,
        sweep,
        plot_samples: if args.plot.is_some() { 48 } else { 0 },
    })
}

/// The radius of `--tv-ball`: an exact number in [0, 1].
pub fn tv_radius(text: &str) -> Result<Rational> {
    let eta = rational("--tv-ball", text)?;
    if !(0..=1).contains(&eta) {
        return Err(Error::argument(
            "--tv-ball",
            format!("must lie between 0 and 1 (a total-variation distance), got {text}"),
        ));
    }
    Ok(eta)
}

/// The Berry–Esseen diagnostic's λ list, comparison scale, Skellam π and backend.
pub fn berry_esseen_query(
    args: &BerryEsseenArgs,
) -> Result<(Vec<Rational>, Scale, Option<Rational>, Backend)> {
    let lambdas = rational_list("--lambda", &args.lambda)?;
    let max = crate::limits::lattice::MAX_INTENSITY;
    if let Some(bad) = lambdas.iter().find(|l| **l <= 0 || **l > max) {
        return Err(Error::argument(
            "--lambda",
            format!(
                "each λ must lie in (0, {max}], got {}",
                crate::enclosure::exact_string(bad)
            ),
        ));
    }
    let scale = match (&args.eps, &args.t) {
        (Some(e), _) => Scale::Fixed(thresholds(Some(e), None)?),
        (None, Some(t)) => {
            let ts = rational_list("--t", t)?;
            if ts.iter().any(|t| *t < 0 || *t > 1000) {
                return Err(Error::argument("--t", "values must lie in [0, 1000]"));
            }
            Scale::Local(ts)
        }
        (None, None) => return Err(Error::argument("--eps", "give --eps or --t")),
    };
    let pi = match &args.pi {
        None => None,
        Some(text) => {
            let p = rational("--pi", text)?;
            if p <= 0 || p >= 1 {
                return Err(Error::argument("--pi", "must lie strictly between 0 and 1"));
            }
            Some(p)
        }
    };
    let backend = match &args.precision {
        None => Backend::Interval,
        Some(p) => Backend::Mpfr {
            precision: precision_bits(p)?,
        },
    };
    check_experiment_precision(backend)?;
    Ok((lambdas, scale, pi, backend))
}

/// `--n N1,N2,…`: each ≥ 1.
fn sizes(text: &str) -> Result<Vec<u64>> {
    let ns = text
        .split(',')
        .map(|s| whole("--n", s))
        .collect::<Result<Vec<u64>>>()?;
    if ns.contains(&0) {
        return Err(Error::argument("--n", "every n must be at least 1"));
    }
    Ok(ns)
}

/// `--n N1,N2,…` for `limit`: each ≥ 1, strictly increasing.
pub fn increasing_sizes(text: &str) -> Result<Vec<u64>> {
    let ns = sizes(text)?;
    if ns.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::argument("--n", "list the sizes in increasing order"));
    }
    Ok(ns)
}

/// The `bounds` question.
/// The certified range (`bounds`, range audits, the shuffle-index check) has one algorithm,
/// the blanket sum: `--engine` does not apply to it.
fn no_engine_choice(args: &CommonArgs) -> Result<()> {
    if matches!(args.engine, EngineArg::Auto) {
        return Ok(());
    }
    Err(Error::argument(
        "--engine",
        "does not apply to the certified range [lower, upper] (one algorithm: the blanket sum)",
    ))
}

/// The certified range (`bounds`, range audits, the shuffle-index check) needs exact rows, or
/// randomized response given by a real ε0 (computed on a rational bracket of `e^eps0`).
fn require_rational_randomizer(r: &Randomizer) -> Result<()> {
    r.rational_bracket(crate::bounds::range::EXP_EPS0_BRACKET_BITS)
        .map(|_| ())
}

pub fn bounds_query(args: &BoundsArgs) -> Result<BoundsQuery> {
    let n = whole("--n", &args.n)?;
    check_composition(n, 0)?;
    let target = match &args.delta {
        Some(d) => {
            let delta = rational("--delta", d)?;
            crate::exact::curve::check_target(&delta)?;
            Target::Epsilon(delta)
        }
        None => Target::Delta(thresholds(args.eps.as_deref(), args.exp_eps.as_deref())?),
    };
    let Settings {
        options,
        backend,
        escalate_above,
        ..
    } = settings(&args.common)?;
    let randomizer = load_randomizer(&args.mechanism)?;
    require_rational_randomizer(&randomizer)?;
    no_engine_choice(&args.common)?;
    if args.search.is_some() && randomizer.input_count() <= 2 {
        return Err(Error::argument(
            "--search",
            "searches mixed backgrounds of a randomizer on more than two inputs; for binary \
             inputs the exact profile over every k is reported beside the range",
        ));
    }
    if args.ceiling_seconds.is_some() && randomizer.input_count() <= 2 {
        return Err(Error::argument(
            "--ceiling-seconds",
            "searches every dataset of a randomizer on more than two inputs; for binary inputs \
             the exact profile over every k is reported beside the range",
        ));
    }
    Ok(BoundsQuery {
        randomizer,
        n,
        target,
        options,
        backend,
        escalate_above,
    })
}

/// How long a range audit's exact profile may take per n, unless `--narrow-seconds` says.
const DEFAULT_NARROW_SECONDS: f64 = 60.0;

/// `audit --narrow-seconds S`: a non-negative number of seconds.
fn narrow_seconds(text: &str) -> Result<f64> {
    let s = rational("--narrow-seconds", text)?;
    if s < 0 {
        return Err(Error::argument("--narrow-seconds", "must not be negative"));
    }
    Ok(s.to_f64())
}

/// `bounds --ceiling-seconds S`: a positive number of seconds, at most `--max-seconds`.
pub fn ceiling_seconds(text: &str, max_seconds: f64) -> Result<f64> {
    let s = rational("--ceiling-seconds", text)?.to_f64();
    if s <= 0.0 || s > max_seconds {
        return Err(Error::argument(
            "--ceiling-seconds",
            format!("must be above 0 and at most --max-seconds ({max_seconds} s), got {text}"),
        ));
    }
    Ok(s)
}

/// `bounds --search N`: the most compositions the local search evaluates.
pub fn search_budget(text: &str) -> Result<usize> {
    let n = whole("--search", text)?;
    if n == 0 || n > 1_000_000 {
        return Err(Error::argument(
            "--search",
            format!("evaluates between 1 and 1000000 compositions, got {n}"),
        ));
    }
    Ok(n as usize)
}

/// `profile` for a randomizer on more than two inputs (issue 23): the exact worst case over every
/// dataset. `None` when the mechanism is binary-input (the binary profile answers it). Options
/// that belong to the scan over k are refused, naming what they would have meant.
pub fn inputs_profile_query(args: &ProfileArgs) -> Result<Option<InputsProfileQuery>> {
    let spec = &args.mechanism.mechanism;
    match crate::mechanism::randomizer::family_inputs(spec)? {
        Some(count) if count <= 2 => return Ok(None),
        _ => {}
    }
    let randomizer = load_randomizer(spec)?;
    if randomizer.input_count() <= 2 {
        return Ok(None);
    }
    let scan_only = [
        ("--k-range", args.k_range.is_some()),
        ("--with-ends", args.with_ends),
        ("--no-prune", args.no_prune),
        ("--plot", args.plot.is_some()),
    ];
    if let Some((flag, _)) = scan_only.iter().find(|(_, given)| *given) {
        return Err(Error::argument(
            *flag,
            format!(
                "belongs to the scan over k of a binary-input mechanism; {} is a randomizer on {}, \
                 whose profile searches every background composition (shard it with --slice I/N)",
                randomizer.name,
                randomizer.domain_text()
            ),
        ));
    }
    if args.renyi_order.is_some() {
        return Err(Error::argument(
            "--renyi-order",
            "the profile of a randomizer on more than two inputs answers δ_M(ε) and ε_M(δ), not \
             Rényi divergences",
        ));
    }
    let n = whole("--n", &args.n)?;
    check_composition(n, 0)?;
    if matches!(args.common.engine, EngineArg::Binary | EngineArg::General) {
        return Err(Error::argument(
            "--engine",
            "the pairs of a randomizer on more than two inputs run on windowed laws (auto or window)",
        ));
    }
    let c = settings(&args.common)?;
    Ok(Some(InputsProfileQuery {
        randomizer,
        n,
        quantities: profile_quantities(args)?,
        options: c.options,
        backend: c.backend,
        exact_ctx: c.exact_ctx,
        escalate_above: c.escalate_above,
        symmetry: true,
        slice: args.slice.as_deref().map(slice).transpose()?,
        ceiling: None,
    }))
}

/// `--slice I/N`: slice I (from 0) of N.
fn slice(text: &str) -> Result<crate::profile_inputs::Slice> {
    let bad = || {
        Error::argument(
            "--slice",
            format!("expected I/N with 0 ≤ I < N, got \"{text}\""),
        )
    };
    let (i, n) = text
        .split_once('/')
        .filter(|(_, n)| !n.contains('/'))
        .ok_or_else(bad)?;
    let (index, of) = (whole("--slice", i)?, whole("--slice", n)?);
    if of == 0 || index >= of {
        return Err(bad());
    }
    if of > crate::profile_inputs::MAX_SLICES {
        return Err(Error::argument(
            "--slice",
            format!("at most {} slices", crate::profile_inputs::MAX_SLICES),
        ));
    }
    Ok(crate::profile_inputs::Slice { index, of })
}

/// The quantities a profile reports: δ_M at `--eps`/`--exp-eps`, ε_M at `--delta`, and Rényi
/// orders.
fn profile_quantities(args: &ProfileArgs) -> Result<Vec<Quantity>> {
    let mut quantities = Vec::new();
    if args.eps.is_some() || args.exp_eps.is_some() {
        quantities.extend(
            thresholds(args.eps.as_deref(), args.exp_eps.as_deref())?
                .into_iter()
                .map(Quantity::Delta),
        );
    }
    if let Some(list) = &args.delta {
        for d in rational_list("--delta", list)? {
            crate::exact::curve::check_target(&d)?;
            quantities.push(Quantity::Epsilon(d));
        }
    }
    if let Some(orders) = &args.renyi_order {
        for alpha in rational_list("--renyi-order", orders)? {
            let q = Quantity::Renyi(alpha);
            q.validate()?;
            quantities.push(q);
        }
    }
    Ok(quantities)
}

/// `--max-memory-gib` in bytes.
pub fn memory_limit(gib: &str) -> Result<u64> {
    let memory = rational("--max-memory-gib", gib)?;
    if memory <= 0 {
        return Err(Error::argument("--max-memory-gib", "must be positive"));
    }
    Ok((memory * Rational::from(1u64 << 30))
        .to_f64()
        .min(u64::MAX as f64) as u64)
}
