//! `verify`: a certificate checked by someone who trusts nothing in it.
//!
//! In order: the certificate must conform to the schema (else it is *malformed*); its digest must
//! match the RFC 8785 canonical form of its fields; the mechanism rebuilt from exactly what the
//! user gave must have the rows the certificate records; then every result is re-derived by
//! routes independent of the one that produced it, and each certified endpoint must be shown
//! sound by some route: a certified lower end at or below a recomputed lower end, a certified
//! upper end at or above a recomputed upper end (two enclosures of one number that do not meet
//! prove one of them wrong). Routes (`proofs-notes/certificates.md`):
//!
//! * **mpfr**: the same quantities in MPFR intervals at a higher precision;
//! * **exact**: exact rationals, where the mechanism is rational and the problem small;
//! * **reference**: a pure-Rust rational evaluator sharing no arithmetic with the engine, for
//!   rational mechanisms with at most 12 users;
//! * **k = 0 closed form**: the canonical likelihood ratio, checked on every state of a boundary
//!   pair by the recomputation;
//! * **witnesses**: for ε, δ re-evaluated at the certified thresholds and the singular masses
//!   recomputed, in each route;
//! * **profile proof**: every evaluated pair recomputed in MPFR (by blocks of k; a value that
//!   recomputation does not settle, such as a refined one, again at a finer precision by the
//!   pair engine), every range of k closed at a node re-derived from that node's pair built from
//!   scratch, and every k covered exactly once.

mod audit;
mod bounds;
mod check;
mod compare;
mod index_check;
mod limit;
mod messages;
mod pair;
mod profile;
mod profile_inputs;
mod range_audit;

use super::reference;
use super::{Schema, Settings, digest, schema_errors};
use crate::enclosure::{Enclosure, Endpoint, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::{Mechanism, MechanismSource};
use crate::query::{Backend, PairQuery};
use pair::{PairSubject, verify_pair};
use profile::{ProfileProof, verify_profile};
use rug::Rational;
use serde_json::Value;
use std::collections::BTreeMap;

/// The outcome of a verification.
#[derive(Clone, Debug, Default)]
pub struct Verification {
    pub command: String,
    /// The routes that re-derived the results.
    pub routes: Vec<String>,
    /// Certified values whose endpoints were both shown sound.
    pub confirmed: usize,
    /// Everything that failed, each naming the field and the numbers that disagree.
    pub problems: Vec<String>,
}

impl Verification {
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// One certified value and which of its endpoints some route has shown sound.
struct Tracked {
    certified: Enclosure,
    lo_shown: bool,
    hi_shown: bool,
    seen_by: Vec<String>,
}

/// The bookkeeping of a verification.
#[derive(Default)]
struct Tally {
    values: BTreeMap<String, Tracked>,
    routes: Vec<String>,
    problems: Vec<String>,
}

impl Tally {
    fn route(&mut self, route: impl Into<String>) {
        let route = route.into();
        if !self.routes.contains(&route) {
            self.routes.push(route);
        }
    }

    fn problem(&mut self, p: impl Into<String>) {
        self.problems.push(p.into());
    }

    /// Registers a certified value (shown sound trivially where the quantity's range is).
    fn certified(&mut self, field: &str, certified: Enclosure, nonnegative: bool) {
        let zero = Endpoint::Finite(Rational::new());
        let lo_shown =
            certified.lo() == &Endpoint::NegInf || nonnegative && certified.lo() <= &zero;
        let hi_shown = certified.hi() == &Endpoint::PosInf;
        self.values.insert(
            field.to_string(),
            Tracked {
                certified,
                lo_shown,
                hi_shown,
                seen_by: Vec::new(),
            },
        );
    }

    /// Holds a recomputed enclosure of a registered value against it.
    fn recomputed(&mut self, field: &str, recomputed: &Enclosure, route: &str) {
        let Some(t) = self.values.get_mut(field) else {
            self.problems.push(format!(
                "{field}: recomputed by {route} but absent from the certificate"
            ));
            return;
        };
        if !t.certified.overlaps(recomputed) {
            let c = t.certified.clone();
            self.problems.push(format!(
                "{field}: the certified {c} and the recomputed {recomputed} ({route}) are disjoint"
            ));
            return;
        }
        t.lo_shown |= t.certified.lo() <= recomputed.lo();
        t.hi_shown |= t.certified.hi() >= recomputed.hi();
        t.seen_by.push(route.to_string());
    }

    /// Marks a value's lower end shown sound by `route`.
    fn lower_shown(&mut self, field: &str, route: &str) {
        if let Some(t) = self.values.get_mut(field) {
            t.lo_shown = true;
            t.seen_by.push(route.to_string());
        }
    }

    /// Marks a value's upper end shown sound.
    fn upper_shown(&mut self, field: &str) {
        if let Some(t) = self.values.get_mut(field) {
            t.hi_shown = true;
        }
    }

    /// Takes over what `other` tallied of a part of the certificate at `prefix` (e.g.
    /// `models.2.pair.`): its values and problems named with the prefix, its routes.
    fn absorb(&mut self, prefix: &str, other: Tally) {
        for (field, t) in other.values {
            self.values.insert(format!("{prefix}{field}"), t);
        }
        for route in other.routes {
            self.route(route);
        }
        for p in other.problems {
            self.problems.push(format!("{prefix}{p}"));
        }
    }

    fn finish(mut self, command: &str) -> Verification {
        let mut confirmed = 0;
        for (field, t) in &self.values {
            match (t.lo_shown, t.hi_shown) {
                (true, true) => confirmed += 1,
                (lo, _) => self.problems.push(format!(
                    "{field}: the certified {} has its {} end not confirmed by {}",
                    t.certified,
                    if lo { "upper" } else { "lower" },
                    if t.seen_by.is_empty() {
                        "any route".to_string()
                    } else {
                        t.seen_by.join(", ")
                    }
                )),
            }
        }
        Verification {
            command: command.to_string(),
            routes: self.routes,
            confirmed,
            problems: self.problems,
        }
    }
}

/// An enclosure with exact endpoints from `{"lo": "…", "hi": "…"}`.
pub(crate) fn enclosure_at(v: &Value, field: &str) -> Result<Enclosure> {
    let endpoint = |key: &str| -> Result<Endpoint> {
        match v[key].as_str() {
            Some("inf") => Ok(Endpoint::PosInf),
            Some("-inf") => Ok(Endpoint::NegInf),
            Some(t) => parse_rational(t).map(Endpoint::Finite).ok_or_else(|| {
                Error::argument(field, format!("{key} is not an exact number: {t}"))
            }),
            None => Err(Error::argument(field, format!("{key} is missing"))),
        }
    };
    let (lo, hi) = (endpoint("lo")?, endpoint("hi")?);
    if lo > hi {
        return Err(Error::argument(
            field,
            "its lower end exceeds its upper end",
        ));
    }
    Ok(Enclosure::new(lo, hi))
}

fn u64_at(v: &Value, field: &str) -> Result<u64> {
    v.as_u64()
        .ok_or_else(|| Error::argument(field, "expected a whole number"))
}

/// A number of users: a whole number, at least 1.
fn users_at(v: &Value, field: &str) -> Result<u64> {
    match u64_at(v, field)? {
        0 => Err(Error::argument(field, "must be at least 1")),
        n => Ok(n),
    }
}

/// What the verifying machine allows a recomputation: its own resources, not the producer's
/// (a certificate's `max_memory_bytes` describes where it was made, not what it proves).
#[derive(Clone, Debug)]
pub struct Resources {
    pub memory_limit: u64,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            memory_limit: crate::exact::pair::PairOptions::default().memory_limit,
        }
    }
}

impl Resources {
    /// The certificate's settings, with this machine's resource limits.
    pub fn settings(&self, v: &Value) -> Result<Settings> {
        let mut settings = Settings::from_json(v)?;
        settings.options.memory_limit = self.memory_limit;
        Ok(settings)
    }
}

/// Verifies a certificate's text.  An error means *malformed* (not JSON, not a certificate of
/// this schema, or fields that cannot be read back); an invalid certificate is a verification
/// with problems.
pub fn verify(text: &str, resources: &Resources) -> Result<Verification> {
    let cert: Value = serde_json::from_str(text)
        .map_err(|e| Error::argument("certificate", format!("not JSON: {e}")))?;
    let command = cert["command"].as_str().unwrap_or_default().to_string();
    if Schema::of(&cert) == Some(Schema::V1) && V2_COMMANDS.contains(&command.as_str()) {
        // Version 1 cannot hold these kinds (its schema has neither the command nor the
        // subject): a certificate relabelled so is invalid, not unreadable.
        let mut tally = Tally::default();
        if cert["digest"]["value"].as_str() != Some(digest(&cert)?.as_str()) {
            tally.problem(
                "digest: the stored SHA-256 is not the digest of the certificate's contents",
            );
        }
        let meaning = super::family_meaning(&cert);
        check_version(&cert, &command, Schema::V1, meaning, &mut tally);
        return Ok(tally.finish(&command));
    }
    let Some(schema) = Schema::of(&cert) else {
        return Err(Error::argument(
            "schema",
            format!(
                "expected \"{}\" or \"{}\", got {}",
                Schema::V1.id(),
                Schema::V2.id(),
                cert["schema"]
            ),
        ));
    };
    if let Some(first) = schema_errors(&cert).first() {
        return Err(Error::argument(
            "certificate",
            format!("does not conform to the schema: {first}"),
        ));
    }
    let mut tally = Tally::default();
    let stored = cert["digest"]["value"].as_str().unwrap_or_default();
    let computed = digest(&cert)?;
    if stored != computed {
        tally.problem(format!(
            "digest: the stored SHA-256 {stored} is not the digest {computed} of the certificate's contents"
        ));
    }
    let source = MechanismSource {
        spec: cert["mechanism"]["given"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        text: cert["mechanism"]["text"].as_str().map(str::to_string),
    };
    let meaning = super::family_meaning(&cert);
    check_version(&cert, &command, schema, meaning, &mut tally);
    check_resolved_flags(&cert["report"], "report", &cert["settings"], &mut tally);
    match command.as_str() {
        "limit" => {
            limit::verify_limit(&cert, &mut tally)?;
            return Ok(tally.finish(&command));
        }
        "berry-esseen" => {
            limit::verify_berry_esseen(&cert, resources, &mut tally)?;
            return Ok(tally.finish(&command));
        }
        _ => {}
    }
    if schema == Schema::V2 && !cert["experiment"].is_null() {
        verify_experiment(&cert, &command, resources, &mut tally)?;
        return Ok(tally.finish(&command));
    }
    if cert["mechanism"]["exact"].get("rows").is_some() {
        // A randomizer on more than two inputs.
        let randomizer = match crate::mechanism::randomizer::randomizer_from_source(&source) {
            Ok(r) => r,
            Err(e) => {
                tally.problem(format!("mechanism.given: cannot be read back: {e}"));
                return Ok(tally.finish(&command));
            }
        };
        let exact = crate::enclosure::with_exact_endpoints(|| randomizer.to_json());
        if exact != cert["mechanism"]["exact"] {
            tally.problem(format!(
                "mechanism.exact: records {}, but the randomizer as given is {exact}",
                cert["mechanism"]["exact"]
            ));
        }
        if cert["report"]["randomizer"] != cert["mechanism"]["exact"] {
            tally.problem("report.randomizer: differs from mechanism.exact");
        }
        check_input_domain(&cert, &randomizer.domain_json(), meaning, &mut tally);
        let settings = resources.settings(&cert["settings"])?;
        match command.as_str() {
            "compare" => compare::verify_compare_range(&cert, &randomizer, &settings, &mut tally)?,
            "bounds" => bounds::verify_bounds(&cert, &randomizer, &settings, &mut tally)?,
            "audit" => range_audit::verify_range_audit(&cert, &randomizer, &settings, &mut tally)?,
            "check" => index_check::verify_index_check(&cert, &randomizer, &settings, &mut tally)?,
            "profile" => {
                profile_inputs::verify_inputs_profile(&cert, &randomizer, &settings, &mut tally)?
            }
            "delta" | "epsilon" | "divergences" if !cert["report"]["background"].is_null() => {
                let background = pair::background_of(&cert["report"], &randomizer)?;
                let alphabet = crate::exact::background::alphabet_json(
                    &randomizer,
                    &background,
                    settings.options.reduce,
                );
                check_alphabet("report.alphabet", &cert["report"], alphabet, &mut tally);
                let subject = PairSubject::Background {
                    background: background.clone(),
                    randomizer: &randomizer,
                };
                verify_pair(&command, &cert["report"], &subject, &settings, &mut tally)?;
                // Randomized response given by a real ε0: the same pair on rational rows at both
                // ends of a bracket of e^ε0 (data processing, every user's row alike).
                let precision = subject.precision(&settings, &cert["report"]);
                if let Some(bracket) = randomizer.rational_bracket(precision).ok().flatten() {
                    let at = |randomizer| PairSubject::Background {
                        randomizer,
                        background: background.clone(),
                    };
                    let ends = [&at(&bracket.lower), &at(&bracket.upper)];
                    pair::bracket_route(&command, &cert["report"], ends, &settings, &mut tally)?;
                }
            }
            other => {
                return Err(Error::argument(
                    "command",
                    format!("{other} certificates on randomizers are not verified by this version"),
                ));
            }
        }
        return Ok(tally.finish(&command));
    }
    let mechanism = match super::recorded_mechanism(&cert, meaning) {
        Ok(m) => m,
        Err(e) => {
            tally.problem(format!("mechanism.given: cannot be read back: {e}"));
            return Ok(tally.finish(&command));
        }
    };
    let exact = crate::enclosure::with_exact_endpoints(|| mechanism.to_json());
    if exact != cert["mechanism"]["exact"] {
        tally.problem(format!(
            "mechanism.exact: records {}, but the mechanism as given is {exact}",
            cert["mechanism"]["exact"]
        ));
    }
    if cert["report"]["mechanism"] != cert["mechanism"]["exact"] {
        tally.problem("report.mechanism: differs from mechanism.exact");
    }
    check_input_domain(&cert, &mechanism.domain_json(), meaning, &mut tally);
    let settings = resources.settings(&cert["settings"])?;
    let report = &cert["report"];
    if matches!(command.as_str(), "delta" | "epsilon" | "divergences") {
        let alphabet = mechanism.alphabet_json(settings.options.reduce);
        check_alphabet("report.alphabet", report, alphabet, &mut tally);
    }
    match command.as_str() {
        "delta" | "epsilon" | "divergences" => {
            let (n, k) = (
                users_at(&report["n"], "report.n")?,
                u64_at(&report["k"], "report.k")?,
            );
            let subject = PairSubject::Binary {
                mechanism: &mechanism,
                n,
                k,
            };
            verify_pair(&command, report, &subject, &settings, &mut tally)?;
            let precision = subject.precision(&settings, report);
            if let Some([lower, upper]) = super::recorded_bracket(&cert, meaning, precision)? {
                let at = |mechanism| PairSubject::Binary { mechanism, n, k };
                let ends = [&at(&lower), &at(&upper)];
                pair::bracket_route(&command, report, ends, &settings, &mut tally)?;
            }
        }
        "profile" => {
            let precision = higher_precision(&settings);
            let proof = ProfileProof {
                prefix: String::new(),
                report,
                method: &cert["method"],
                precision,
                finer: precision,
                bracket: super::recorded_bracket(&cert, meaning, precision)?,
            };
            verify_profile(&proof, &mechanism, &settings, &mut tally)?;
            profile::check_shards(report, &cert["method"], &mut tally)?;
        }
        "audit" => audit::verify_audit(&cert, &mechanism, &settings, &mut tally)?,
        "compare" => compare::verify_compare(&cert, &mechanism, &settings, &mut tally)?,
        "compare-messages" => {
            messages::verify_compare_messages(&cert, &mechanism, &settings, &mut tally)?
        }
        "check" => check::verify_check(&cert, &mechanism, &settings, &mut tally)?,
        other => {
            return Err(Error::argument(
                "command",
                format!("{other} certificates are not verified by this version"),
            ));
        }
    }
    Ok(tally.finish(&command))
}

/// The report's `alphabet` (what the engines ran on) must be the one the rows give under the
/// recorded settings: nothing recomputed reads it, so it is held here.
/// `path` names the field in problems.
fn check_alphabet(path: &str, report: &Value, expected: Value, tally: &mut Tally) {
    if report["alphabet"] != expected {
        tally.problem(format!(
            "{path}: records {}, but the rows give {expected}",
            report["alphabet"]
        ));
    }
}

/// Commands whose certificates only version 2 describes.
const V2_COMMANDS: [&str; 4] = ["bounds", "check", "limit", "berry-esseen"];

/// Kinds that only version 2 describes (and only 0.2.0 writes) must say so: relabelled as
/// version 1 or as written by 0.1.x, a verifier of that version would pass what it does not
/// check.
fn check_version(
    cert: &Value,
    command: &str,
    schema: Schema,
    meaning: crate::mechanism::FamilyMeaning,
    tally: &mut Tally,
) {
    let report = &cert["report"];
    let kind = if !cert["experiment"].is_null() {
        Some("a limit experiment's pair")
    } else if command == "limit" {
        Some("a limit study")
    } else if command == "berry-esseen" {
        Some("a Berry–Esseen diagnostic")
    } else if command == "bounds" {
        Some("a bounds range")
    } else if command == "check" {
        Some("a check of predictions")
    } else if command == "profile" && cert["mechanism"]["exact"].get("rows").is_some() {
        Some("a profile over every dataset (a randomizer with more than two inputs)")
    } else if command == "audit" && cert["mechanism"]["exact"].get("rows").is_some() {
        Some("an audit against a range (a randomizer with more than two inputs)")
    } else if command == "compare-messages" || !cert["mechanism"]["exact"]["messages"].is_null() {
        Some("multi-message shuffling")
    } else if !report["background"].is_null() {
        Some("a background pair")
    } else if !report["tv_ball"].is_null() {
        Some("a TV ball")
    } else {
        None
    };
    let Some(kind) = kind else { return };
    if schema == Schema::V1 {
        tally.problem(format!(
            "schema: names version 1, which does not describe {kind} (version 2 does)"
        ));
    }
    if meaning == crate::mechanism::FamilyMeaning::Legacy {
        tally.problem(format!(
            "tool.version: {}, which never wrote {kind}",
            cert["tool"]["version"]
        ));
    }
}

/// Every `{lo, hi, resolved}` in the report: `resolved` must be what the enclosure is at the
/// certificate's `--rel-width` (its escalation target), so that no unresolved value is passed
/// off as resolved, nor the reverse.
fn check_resolved_flags(v: &Value, path: &str, settings: &Value, tally: &mut Tally) {
    let rel = settings["escalate_above"]
        .as_str()
        .and_then(|w| w.parse().ok())
        .unwrap_or(crate::query::DEFAULT_REL_WIDTH);
    match v {
        Value::Object(map) => {
            if let (Some(flag), true, true) = (
                map.get("resolved").and_then(Value::as_bool),
                map.contains_key("lo"),
                map.contains_key("hi"),
            ) && let Ok(e) = enclosure_at(v, path)
                && e.resolved(rel) != flag
            {
                tally.problem(format!(
                    "{path}.resolved: says {flag}, but the enclosure {e} is {}resolved at relative width {rel:.2e}",
                    if flag { "not " } else { "" }
                ));
            }
            for (key, child) in map {
                check_resolved_flags(child, &format!("{path}.{key}"), settings, tally);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                check_resolved_flags(child, &format!("{path}.{i}"), settings, tally);
            }
        }
        _ => {}
    }
}

/// A limit experiment's pair certificate: the experiment rebuilt from its specification as
/// given must be the one recorded, then the pair is re-derived.
fn verify_experiment(
    cert: &Value,
    command: &str,
    resources: &Resources,
    tally: &mut Tally,
) -> Result<()> {
    let given = cert["experiment"]["given"].as_str().unwrap_or_default();
    // A compound-Poisson file is read back from the text recorded, not from the path.
    let read = match cert["experiment"]["text"].as_str() {
        Some(text) => crate::limits::experiment::compound_poisson_text(given, text),
        None => crate::limits::experiment::load_experiment(given),
    };
    let experiment = match read {
        Ok(e) => e,
        Err(e) => {
            tally.problem(format!("experiment.given: cannot be read back: {e}"));
            return Ok(());
        }
    };
    let exact = crate::enclosure::with_exact_endpoints(|| experiment.to_json());
    if exact != cert["experiment"]["exact"] {
        tally.problem(format!(
            "experiment.exact: records {}, but the experiment as given is {exact}",
            cert["experiment"]["exact"]
        ));
    }
    if cert["report"]["experiment"] != cert["experiment"]["exact"] {
        tally.problem("report.experiment: differs from experiment.exact");
    }
    if !matches!(command, "delta" | "epsilon" | "divergences") {
        return Err(Error::argument(
            "command",
            format!(
                "{command} certificates on a limit experiment are not verified by this version"
            ),
        ));
    }
    let settings = resources.settings(&cert["settings"])?;
    verify_pair(
        command,
        &cert["report"],
        &PairSubject::Experiment(experiment),
        &settings,
        tally,
    )
}

/// The report's input domain must be the mechanism's (every report of 0.2.0 on states it; a
/// certificate of 0.1.x has none, and its family strings are read as binary-input, which the
/// routes list says).
fn check_input_domain(
    cert: &Value,
    domain: &Value,
    meaning: crate::mechanism::FamilyMeaning,
    tally: &mut Tally,
) {
    let recorded = &cert["report"]["input_domain"];
    match meaning {
        crate::mechanism::FamilyMeaning::Legacy if recorded.is_null() => tally.route(
            "written by 0.1.x: its family strings are read as 0.1.x read them (k-rr:k=K is the binary-input restriction)",
        ),
        _ if recorded != domain => tally.problem(format!(
            "report.input_domain: records {recorded}, but the mechanism's input domain is {domain}"
        )),
        _ => {}
    }
}

/// The precision of the independent MPFR route: at least 256 bits, twice the original's.
fn higher_precision(settings: &Settings) -> u32 {
    match settings.backend {
        Backend::Interval => 256,
        Backend::Mpfr { precision } => (2 * precision).max(256),
        Backend::Exact => (2 * settings.exact_ctx.bracket_precision).max(256),
    }
}

/// Whether exact rationals can redo this pair in reasonable time and memory.
fn exact_affordable(m: &Mechanism, n: u64, settings: &Settings) -> bool {
    m.is_rational()
        && (settings.backend == Backend::Exact
            || if m.d() == 2 {
                n <= 400
            } else {
                crate::exact::histogram::histogram_count(n, m.d()).is_some_and(|c| c <= 5000)
            })
}

/// The pair query of a certificate in a route's backend.
fn pair_query(m: &Mechanism, n: u64, k: u64, settings: &Settings, backend: Backend) -> PairQuery {
    PairQuery {
        mechanism: m.clone(),
        n,
        k,
        options: settings.options.clone(),
        backend,
        exact_ctx: settings.exact_ctx,
        escalate_above: None,
    }
}
