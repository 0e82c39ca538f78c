//! Certificates: a certified result written down so that someone else can check it later, on
//! another machine, by another route (`verify`).
//!
//! A certificate (`schema/certificate-v1.schema.json`) holds the mechanism as the user gave it
//! (family string or file text) and exactly, every setting, the command's report with the exact
//! endpoints of every enclosure (`enclosure::with_exact_endpoints`), the method (for a profile,
//! every pruned range of k with the bound that pruned it), the `proofs-notes/` that justify each
//! step, and a SHA-256 digest over the RFC 8785 canonical form of everything except `created`
//! (the one field that varies between runs) and the digest itself.

use crate::arith::exact::ExactCtx;
use crate::error::{Error, Result};
use crate::exact::pair::{Engine, PairOptions};
use crate::mechanism::randomizer::Randomizer;
use crate::mechanism::{FamilyMeaning, Mechanism};
use crate::query::Backend;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

pub mod inputs_proof;
pub mod merge;
pub mod merge_inputs;
pub mod page;
pub mod reference;
pub mod verify;

/// The schema identifier of version 1: binary-input pairs, profiles, audits, comparisons.
pub const SCHEMA_ID: &str = "shufflecert/certificate/v1";

/// The JSON Schema of a version-1 certificate.
pub const SCHEMA: &str = include_str!("../../schema/certificate-v1.schema.json");

/// The schema identifier of version 2, which extends version 1 to every certified answer.
pub const SCHEMA_V2_ID: &str = "shufflecert/certificate/v2";

/// The JSON Schema of a version-2 certificate.
pub const SCHEMA_V2: &str = include_str!("../../schema/certificate-v2.schema.json");

/// Which schema a certificate is written in: version 1 for the kinds a version-1 verifier checks
/// in full, version 2 for everything else (so that an older verifier refuses it rather than
/// pass what it cannot see).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    V1,
    V2,
}

impl Schema {
    pub fn id(self) -> &'static str {
        match self {
            Schema::V1 => SCHEMA_ID,
            Schema::V2 => SCHEMA_V2_ID,
        }
    }

    /// The schema of a binary-input mechanism's certificate: version 1, or version 2 for users
    /// sending several messages (which version 1 does not describe).
    pub fn for_mechanism(m: &Mechanism) -> Schema {
        if m.messages.is_some() {
            Schema::V2
        } else {
            Schema::V1
        }
    }

    /// The schema a certificate names (`None`: neither).
    pub fn of(cert: &Value) -> Option<Schema> {
        match cert["schema"].as_str() {
            Some(SCHEMA_ID) => Some(Schema::V1),
            Some(SCHEMA_V2_ID) => Some(Schema::V2),
            _ => None,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Schema::V1 => SCHEMA,
            Schema::V2 => SCHEMA_V2,
        }
    }
}

/// What the digest covers.
const COVERS: &str =
    "the RFC 8785 canonical form of the certificate without `created` and `digest`";

/// The precisions a certificate may record (bits), as the CLI accepts them.
const MIN_PRECISION: u32 = 24;
const MAX_PRECISION: u32 = 1 << 16;

/// How a computation was set up, as a certificate records it and `verify` reads it back.
#[derive(Clone, Debug)]
pub struct Settings {
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub options: PairOptions,
    pub escalate_above: Option<f64>,
}

impl Settings {
    pub fn to_json(&self) -> Value {
        let (backend, precision) = match self.backend {
            Backend::Interval => ("interval", None),
            Backend::Mpfr { precision } => ("mpfr", Some(precision)),
            Backend::Exact => ("exact", None),
        };
        json!({
            "backend": backend,
            "precision": precision,
            "bracket_precision": self.exact_ctx.bracket_precision,
            "engine": match self.options.engine {
                Engine::Auto => "auto",
                Engine::General => "general",
                Engine::Window => "window",
                Engine::Binary => "binary",
            },
            "reduce": self.options.reduce,
            "truncate": self.options.truncate,
            "escalate_above": self.escalate_above.map(|w| format!("{w:e}")),
            "max_memory_bytes": self.options.memory_limit,
        })
    }

    /// The settings back from a certificate's `settings` (already schema-checked).
    pub fn from_json(v: &Value) -> Result<Settings> {
        let malformed = |field: &str| Error::argument(format!("settings.{field}"), "malformed");
        let bits = |key: &str| -> Result<Option<u32>> {
            match &v[key] {
                Value::Null => Ok(None),
                b => b
                    .as_u64()
                    .and_then(|b| u32::try_from(b).ok())
                    .filter(|b| (MIN_PRECISION..=MAX_PRECISION).contains(b))
                    .map(Some)
                    .ok_or_else(|| {
                        Error::argument(
                            format!("settings.{key}"),
                            format!("must be between {MIN_PRECISION} and {MAX_PRECISION} bits"),
                        )
                    }),
            }
        };
        let precision = bits("precision")?;
        let backend = match v["backend"].as_str() {
            Some("interval") => Backend::Interval,
            Some("exact") => Backend::Exact,
            Some("mpfr") => Backend::Mpfr {
                precision: precision.ok_or_else(|| malformed("precision"))?,
            },
            _ => return Err(malformed("backend")),
        };
        let engine = match v["engine"].as_str() {
            Some("auto") => Engine::Auto,
            Some("general") => Engine::General,
            Some("window") => Engine::Window,
            Some("binary") => Engine::Binary,
            _ => return Err(malformed("engine")),
        };
        Ok(Settings {
            backend,
            exact_ctx: ExactCtx {
                bracket_precision: bits("bracket_precision")?
                    .ok_or_else(|| malformed("bracket_precision"))?,
            },
            options: PairOptions {
                engine,
                // Certificates written before the reduction existed computed without it.
                reduce: match &v["reduce"] {
                    Value::Null => false,
                    r => r.as_bool().ok_or_else(|| malformed("reduce"))?,
                },
                truncate: v["truncate"]
                    .as_bool()
                    .ok_or_else(|| malformed("truncate"))?,
                truncation_bits: None,
                memory_limit: v["max_memory_bytes"]
                    .as_u64()
                    .ok_or_else(|| malformed("max_memory_bytes"))?,
                // Verification recomputes what was computed: no time limit.
                time_limit_seconds: f64::INFINITY,
            },
            escalate_above: match &v["escalate_above"] {
                Value::Null => None,
                Value::String(s) => Some(s.parse().map_err(|_| malformed("escalate_above"))?),
                _ => return Err(malformed("escalate_above")),
            },
        })
    }
}

/// What a certificate is about: a binary-input mechanism, a randomizer on any input domain
/// (recorded with `inputs` and `rows`), a limit experiment, a mechanism sequence, or nothing
/// beyond the report's parameters.
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    Mechanism(&'a Mechanism),
    Randomizer(&'a Randomizer),
    Experiment(&'a crate::limits::experiment::LimitExperiment),
    Sequence {
        given: &'a str,
        text: Option<&'a str>,
    },
    None,
}

impl<'a> From<&'a Mechanism> for Subject<'a> {
    fn from(m: &'a Mechanism) -> Self {
        Subject::Mechanism(m)
    }
}

impl<'a> Subject<'a> {
    fn source(self) -> Option<&'a crate::mechanism::MechanismSource> {
        match self {
            Subject::Mechanism(m) => m.source.as_ref(),
            Subject::Randomizer(r) => r.source.as_ref(),
            _ => None,
        }
    }

    /// The certificate's field naming the subject, and its value.
    fn field(self) -> Result<Option<(&'static str, Value)>> {
        let exact = |v: &dyn Fn() -> Value| crate::enclosure::with_exact_endpoints(v);
        Ok(match self {
            Subject::Mechanism(m) => {
                Some(("mechanism", mechanism_json(self, exact(&|| m.to_json()))?))
            }
            Subject::Randomizer(r) => {
                Some(("mechanism", mechanism_json(self, exact(&|| r.to_json()))?))
            }
            Subject::Experiment(e) => {
                // A file is given by its path (what the command line named), with its text.
                let v = match &e.file {
                    Some(f) => {
                        json!({ "given": f.path, "text": f.text, "exact": exact(&|| e.to_json()) })
                    }
                    None => json!({ "given": e.name, "exact": exact(&|| e.to_json()) }),
                };
                Some(("experiment", v))
            }
            Subject::Sequence { given, text } => {
                Some(("sequence", json!({ "given": given, "text": text })))
            }
            Subject::None => None,
        })
    }
}

/// How the certificate's mechanism was given (`mechanism.given` and `mechanism.text`).
fn recorded_source(cert: &Value) -> crate::mechanism::MechanismSource {
    crate::mechanism::MechanismSource {
        spec: cert["mechanism"]["given"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        text: cert["mechanism"]["text"].as_str().map(str::to_string),
    }
}

/// `mechanism` with the messages the certificate's exact form records, if any.
fn with_recorded_messages(cert: &Value, mechanism: Mechanism) -> Result<Mechanism> {
    match &cert["mechanism"]["exact"]["messages"] {
        Value::Null => Ok(mechanism),
        v => {
            let messages = crate::mechanism::Messages::from_json(v).ok_or_else(|| {
                Error::argument("mechanism.exact.messages", format!("unreadable: {v}"))
            })?;
            crate::multimessage::with_messages(&mechanism, messages)
        }
    }
}

/// The mechanism a certificate was computed for: its source read with `meaning` (the version
/// that wrote it), with the messages its exact form records (`mechanism.exact.messages`, Part I
/// §9): what a verifier compares with `mechanism.exact` and recomputes.
pub fn recorded_mechanism(cert: &Value, meaning: FamilyMeaning) -> Result<Mechanism> {
    with_recorded_messages(cert, recorded_source(cert).load_as(meaning)?)
}

/// For a certificate of randomized response given by a real ε0 (with its messages, if any):
/// the recorded mechanism on rational rows at the two ends of the `bits`-bit bracket of
/// `e^{ε0}` ([`Mechanism::rational_bracket`]), a route that never evaluates the entries in
/// `e^{ε0}`.  `None` for any other mechanism.
pub fn recorded_bracket(
    cert: &Value,
    meaning: FamilyMeaning,
    bits: u32,
) -> Result<Option<[Mechanism; 2]>> {
    let Some([lo, hi]) = recorded_source(cert)
        .load_as(meaning)?
        .rational_bracket(bits)
    else {
        return Ok(None);
    };
    Ok(Some([
        with_recorded_messages(cert, lo)?,
        with_recorded_messages(cert, hi)?,
    ]))
}

/// How a certificate's family strings are read: 0.1.x wrote `k-rr:k=K,…` for the binary-input
/// restriction, which 0.2.0 writes `k-rr:k=K,…,inputs=2` (CHANGELOG.md).
pub fn family_meaning(cert: &Value) -> FamilyMeaning {
    match cert["tool"]["version"].as_str() {
        Some(v) if v.starts_with("0.1.") => FamilyMeaning::Legacy,
        _ => FamilyMeaning::Current,
    }
}

/// The parts of a certificate a command provides.
pub struct Parts<'a> {
    pub schema: Schema,
    pub command: &'static str,
    pub mechanism: Subject<'a>,
    pub settings: Settings,
    /// The claims, for audits.
    pub claims: Option<Value>,
    /// The command's report rendered with exact endpoints.
    pub report: Value,
    pub method: Value,
    pub proofs_notes: Vec<&'static str>,
}

/// The mechanism as a certificate records it: as given, and exactly.
fn mechanism_json(m: Subject<'_>, exact: Value) -> Result<Value> {
    let source = m.source().ok_or_else(|| {
        Error::Internal("a certificate needs the mechanism as the user gave it".into())
    })?;
    Ok(json!({ "given": source.spec, "text": source.text, "exact": exact }))
}

/// The certificate, digest included.
pub fn seal(parts: Parts<'_>) -> Result<Value> {
    let mut notes = parts.proofs_notes;
    notes.sort_unstable();
    notes.dedup();
    let mut cert = json!({
        "schema": parts.schema.id(),
        "tool": {
            "name": "shufflecert",
            "version": env!("CARGO_PKG_VERSION"),
            "commit": env!("SHUFFLECERT_COMMIT"),
        },
        "created": created(),
        "command": parts.command,
        "settings": parts.settings.to_json(),
        "report": parts.report,
        "method": parts.method,
        "proofs_notes": notes,
    });
    if let Some((field, subject)) = parts.mechanism.field()? {
        cert[field] = subject;
    }
    if let Some(claims) = parts.claims {
        cert["claims"] = claims;
    }
    let value = digest(&cert)?;
    cert["digest"] = json!({
        "algorithm": "SHA-256",
        "canonicalization": "RFC 8785",
        "covers": COVERS,
        "value": value,
    });
    Ok(cert)
}

/// The SHA-256 digest (lower-case hex) of the RFC 8785 canonical form of `cert` without its
/// `created` and `digest` fields.
pub fn digest(cert: &Value) -> Result<String> {
    let Value::Object(map) = cert else {
        return Err(Error::argument("certificate", "not a JSON object"));
    };
    let covered: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| k.as_str() != "created" && k.as_str() != "digest")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let canonical = serde_json_canonicalizer::to_vec(&Value::Object(covered))
        .map_err(|e| Error::Internal(format!("canonical JSON: {e}")))?;
    Ok(Sha256::digest(&canonical)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Every way `cert` fails the schema it names (v1 when it names neither).
pub fn schema_errors(cert: &Value) -> Vec<String> {
    let version = Schema::of(cert).unwrap_or(Schema::V1);
    let schema: Value =
        serde_json::from_str(version.text()).expect("the embedded schema is valid JSON");
    let validator = jsonschema::validator_for(&schema).expect("the embedded schema compiles");
    validator
        .iter_errors(cert)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The time stamp: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now, in UTC.
fn created() -> String {
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn the_digest_ignores_the_time_stamp_and_sees_everything_else() {
        let a = json!({ "schema": SCHEMA_ID, "created": "2026-01-01T00:00:00Z", "b": [1, "x"], "a": { "z": 1, "y": 2 } });
        let mut b = a.clone();
        b["created"] = json!("2027-05-05T05:05:05Z");
        assert_eq!(digest(&a).unwrap(), digest(&b).unwrap());
        b["a"]["y"] = json!(3);
        assert_ne!(digest(&a).unwrap(), digest(&b).unwrap());
        // Key order does not matter (RFC 8785 sorts keys).
        let c: Value =
            serde_json::from_str(r#"{"a": {"y": 2, "z": 1}, "b": [1, "x"], "schema": "shufflecert/certificate/v1", "created": "x"}"#)
                .unwrap();
        assert_eq!(digest(&a).unwrap(), digest(&c).unwrap());
    }
}
