//! Reading mechanisms: TOML or JSON files, and family strings such as `binary-rr:eps0=1` or
//! `k-rr:k=4,exp_eps0=3`.
//!
//! A file gives either explicit rows
//!
//! ```toml
//! name = "ternary"                 # optional
//! outputs = ["a", "b", "c"]        # optional labels
//! w0 = ["0.70", "0.20", "0.10"]    # exact strings: decimals or fractions such as "7/10"
//! w1 = ["0.15", "0.55", "0.30"]
//! ```
//!
//! or a family: `family = "binary-rr"` or `"k-rr"` with `eps0` (a decimal, the real ε0) or
//! `exp_eps0` (a rational, e^ε0), and `k` for k-RR.  Entries are read exactly, so they are
//! written as strings; whole numbers may be bare, but a bare float (`0.7`) is refused, because
//! the TOML/JSON reader has already rounded it to a double.

use super::family::{Family, LocalParameter};
use super::{Entry, Mechanism, MechanismSource};
use crate::enclosure::parse_rational;
use crate::error::{Error, Result};
use rug::Rational;
use serde_json::{Map, Value};
use std::path::Path;

/// How a family without `inputs` is read.  Since 0.2.0, `k-rr:k=K,…` is K-ary randomized
/// response on K-valued inputs, and its binary-input restriction is asked for as `inputs=2`;
/// certificates written by 0.1.x meant the binary-input restriction (`verify` reads them so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FamilyMeaning {
    Current,
    /// The 0.1.x reading: a family is always binary-input.
    Legacy,
}

/// The family names a family string may start with.
pub const FAMILIES: [&str; 2] = ["binary-rr", "k-rr"];

/// True when `spec` is a family string (and no file of that name exists).
pub(crate) fn is_family_string(spec: &str) -> bool {
    FAMILIES
        .iter()
        .any(|f| spec == *f || spec.starts_with(&format!("{f}:")))
        && !Path::new(spec).exists()
}

/// Reads a binary-input mechanism from a family string or a file path.  A family on more than
/// two inputs (`k-rr:k=4,exp_eps0=3`) is refused, naming `inputs=2` (its binary-input
/// restriction); `randomizer::load_randomizer` reads it whole.
pub fn load_mechanism(spec: &str) -> Result<Mechanism> {
    if is_family_string(spec) {
        return parse_family_string(spec);
    }
    if !Path::new(spec).exists() && (spec.contains([':', '=']) || !spec.contains(['/', '.'])) {
        return Err(Error::Mechanism {
            source_name: spec.to_string(),
            field: "(spec)".to_string(),
            message: format!(
                "neither a file nor a known family; families: {} (e.g. binary-rr:eps0=1, k-rr:k=4,exp_eps0=3)",
                FAMILIES.join(", ")
            ),
        });
    }
    let text = std::fs::read_to_string(spec).map_err(|e| Error::Io {
        path: spec.to_string(),
        message: format!("cannot read mechanism file: {e}"),
    })?;
    mechanism_from_text(spec, &text)
}

/// A mechanism from the text of a file named `spec` (TOML, or JSON by extension or content).
pub fn mechanism_from_text(spec: &str, text: &str) -> Result<Mechanism> {
    mechanism_from_text_as(spec, text, FamilyMeaning::Current)
}

/// [`mechanism_from_text`] with families read as `meaning` says.
pub fn mechanism_from_text_as(spec: &str, text: &str, meaning: FamilyMeaning) -> Result<Mechanism> {
    let value = parse_document(spec, text)?;
    let stem = file_stem(spec);
    let mut mechanism = mechanism_from_value(spec, &stem, value, meaning)?;
    mechanism.source = Some(MechanismSource {
        spec: spec.to_string(),
        text: Some(text.to_string()),
    });
    Ok(mechanism)
}

/// A JSON value read with every object's keys checked unique: serde_json keeps the last of a
/// repeated key, and a certificate must never rest on an ambiguous input (TOML and family
/// strings refuse repeats already).
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{Error as _, MapAccess, SeqAccess, Visitor};
        struct Strict;
        impl<'de> Visitor<'de> for Strict {
            type Value = StrictValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::String(v)))
            }
            fn visit_unit<E>(self) -> std::result::Result<StrictValue, E> {
                Ok(StrictValue(Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<StrictValue, A::Error> {
                let mut items = Vec::new();
                while let Some(StrictValue(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(StrictValue(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<StrictValue, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some((key, StrictValue(v))) = map.next_entry::<String, StrictValue>()? {
                    if out.contains_key(&key) {
                        return Err(A::Error::custom(format!(
                            "the key \"{key}\" is given twice"
                        )));
                    }
                    out.insert(key, v);
                }
                Ok(StrictValue(Value::Object(out)))
            }
        }
        d.deserialize_any(Strict)
    }
}

pub(crate) fn parse_document(path: &str, text: &str) -> Result<Value> {
    let err = |message: String| Error::Mechanism {
        source_name: path.to_string(),
        field: "(file)".to_string(),
        message,
    };
    let is_json = path.ends_with(".json") || text.trim_start().starts_with('{');
    if is_json {
        serde_json::from_str::<StrictValue>(text)
            .map(|v| v.0)
            .map_err(|e| err(format!("invalid JSON: {e}")))
    } else {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| err(format!("invalid TOML: {}", e.message())))?;
        serde_json::to_value(table).map_err(|e| err(format!("unreadable TOML: {e}")))
    }
}

/// A file's stem, the default name of its mechanism.
pub(crate) fn file_stem(spec: &str) -> String {
    Path::new(spec)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| spec.to_string())
}

/// The number of inputs a family's table asks for: `inputs` when given (a whole number), else
/// k for k-RR (2 with the legacy meaning) and 2 for binary RR.  `None` for explicit rows.
pub(crate) fn family_input_count(
    source: &str,
    map: &Map<String, Value>,
    meaning: FamilyMeaning,
) -> Result<Option<u64>> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: source.to_string(),
        field: field.to_string(),
        message,
    };
    let Some(Value::String(family)) = map.get("family") else {
        return Ok(None);
    };
    let given = match map.get("inputs") {
        None => None,
        Some(Value::Number(n)) => Some(n.as_u64().ok_or_else(|| {
            err(
                "inputs",
                format!("must be a whole number of inputs, got {n}"),
            )
        })?),
        Some(Value::String(t)) => Some(t.trim().parse::<u64>().map_err(|_| {
            err(
                "inputs",
                format!("must be a whole number of inputs, got \"{t}\""),
            )
        })?),
        Some(_) => return Err(err("inputs", "must be a whole number of inputs".into())),
    };
    let count = match family.as_str() {
        "k-rr" => {
            let k = family_k(source, map)?;
            if k < 2 {
                return Err(err("k", format!("must be at least 2, got {k}")));
            }
            let count = given.unwrap_or(match meaning {
                FamilyMeaning::Current => k,
                FamilyMeaning::Legacy => 2,
            });
            if !(2..=k).contains(&count) {
                return Err(err(
                    "inputs",
                    format!("must lie between 2 and k = {k}, got {count}"),
                ));
            }
            count
        }
        _ => match given {
            None | Some(2) => 2,
            Some(c) => {
                return Err(err(
                    "inputs",
                    format!("{family} has exactly 2 inputs, got {c}"),
                ));
            }
        },
    };
    Ok(Some(count))
}

/// The alphabet size `k` of a k-RR table.
fn family_k(source: &str, map: &Map<String, Value>) -> Result<u64> {
    let err = |message: String| Error::Mechanism {
        source_name: source.to_string(),
        field: "k".to_string(),
        message,
    };
    match map.get("k") {
        Some(Value::Number(n)) => n
            .as_u64()
            .filter(|k| *k <= 1 << 20)
            .ok_or_else(|| err(format!("must be a whole number from 2 to 1048576, got {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|k| *k <= 1 << 20)
            .ok_or_else(|| {
                err(format!(
                    "must be a whole number from 2 to 1048576, got \"{s}\""
                ))
            }),
        Some(_) => Err(err("must be a whole number".into())),
        None => Err(err("k-rr needs the alphabet size k".into())),
    }
}

pub(crate) fn mechanism_from_value(
    source: &str,
    stem: &str,
    value: Value,
    meaning: FamilyMeaning,
) -> Result<Mechanism> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: source.to_string(),
        field: field.to_string(),
        message,
    };
    let Value::Object(map) = value else {
        return Err(err("(file)", "the top level must be a table/object".into()));
    };
    let name = match map.get("name") {
        None => stem.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err("name", "must be a string".into())),
    };
    if let Some(family) = map.get("family") {
        let Value::String(family) = family else {
            return Err(err(
                "family",
                "must be a string: \"binary-rr\" or \"k-rr\"".into(),
            ));
        };
        check_keys(
            source,
            &map,
            &["name", "family", "eps0", "exp_eps0", "k", "inputs"],
        )?;
        let fam = match family.as_str() {
            "binary-rr" => {
                if map.contains_key("k") {
                    return Err(err("k", "applies to k-rr only".into()));
                }
                Family::BinaryRr
            }
            "k-rr" => Family::KRr {
                k: family_k(source, &map)? as u32,
            },
            other => {
                return Err(err(
                    "family",
                    format!("unknown family \"{other}\"; known: {}", FAMILIES.join(", ")),
                ));
            }
        };
        let parameter = local_parameter(source, map.get("eps0"), map.get("exp_eps0"))?;
        let inputs = family_input_count(source, &map, meaning)?.unwrap_or(2);
        if inputs != 2 {
            return Err(err(
                "inputs",
                format!(
                    "k-rr with k = {k} is randomized response on {inputs} inputs, not a binary-input \
                     mechanism; its restriction to inputs 0 and 1 is written inputs=2",
                    k = family_k(source, &map)?
                ),
            ));
        }
        let mut m = fam.mechanism(source, name, parameter)?;
        if let Family::KRr { k } = fam
            && k > 2
        {
            m.restriction_of = Some(k as usize);
        }
        return Ok(m);
    }
    if map.contains_key("inputs") || map.contains_key("rows") {
        // A randomizer file with two inputs is a binary-input mechanism (input 0 is W0).
        let r = super::randomizer::randomizer_from_map(source, &map)?;
        if r.input_count() != 2 {
            return Err(err(
                "inputs",
                format!(
                    "{} inputs: a binary-input mechanism has exactly 2",
                    r.input_count()
                ),
            ));
        }
        let mut m = r.pair(0, 1)?;
        m.name = match map.get("name") {
            Some(Value::String(s)) => s.clone(),
            _ => stem.to_string(),
        };
        return Ok(m);
    }
    check_keys(source, &map, &["name", "outputs", "w0", "w1"])?;
    let outputs = match map.get("outputs") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(err(&format!("outputs[{i}]"), "must be a string".into())),
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(_) => return Err(err("outputs", "must be a list of labels".into())),
    };
    let row = |field: &str| -> Result<Vec<Entry>> {
        let Some(v) = map.get(field) else {
            return Err(err(
                field,
                "missing: give w0 and w1 as lists of exact strings, or a family".into(),
            ));
        };
        let Value::Array(items) = v else {
            return Err(err(
                field,
                "must be a list of probabilities such as [\"0.7\", \"0.3\"]".into(),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| exact_number(source, &format!("{field}[{i}]"), item).map(Entry::Exact))
            .collect()
    };
    let rows = [row("w0")?, row("w1")?];
    Mechanism::new(source, name, outputs, rows, None)
}

pub(crate) fn check_keys(source: &str, map: &Map<String, Value>, allowed: &[&str]) -> Result<()> {
    for key in map.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(Error::Mechanism {
                source_name: source.to_string(),
                field: key.clone(),
                message: format!("unknown field; expected one of: {}", allowed.join(", ")),
            });
        }
    }
    Ok(())
}

/// An exact rational from a string (`"0.7"`, `"7/10"`) or a number (taken as printed).
pub(crate) fn exact_number(source: &str, field: &str, v: &Value) -> Result<Rational> {
    let err = |message: String| Error::Mechanism {
        source_name: source.to_string(),
        field: field.to_string(),
        message,
    };
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => {
            return Err(err(format!(
                "write the number {n} as a string (\"{n}\") so that it is read exactly, not rounded to a double"
            )));
        }
        _ => {
            return Err(err(
                "must be a number written as a string, e.g. \"0.7\" or \"7/10\"".into(),
            ));
        }
    };
    parse_rational(&text)
        .ok_or_else(|| err(format!("\"{text}\" is not an exact decimal or fraction")))
}

pub(crate) fn local_parameter(
    source: &str,
    eps0: Option<&Value>,
    exp_eps0: Option<&Value>,
) -> Result<LocalParameter> {
    match (eps0, exp_eps0) {
        (Some(_), Some(_)) => Err(Error::Mechanism {
            source_name: source.to_string(),
            field: "eps0".to_string(),
            message: "give eps0 or exp_eps0, not both".into(),
        }),
        (Some(v), None) => Ok(LocalParameter::Eps0(exact_number(source, "eps0", v)?)),
        (None, Some(v)) => Ok(LocalParameter::ExpEps0(exact_number(
            source, "exp_eps0", v,
        )?)),
        (None, None) => Err(Error::Mechanism {
            source_name: source.to_string(),
            field: "eps0".to_string(),
            message: "a family needs eps0 (decimal) or exp_eps0 (rational e^eps0)".into(),
        }),
    }
}

/// Parses `binary-rr:eps0=1` or `k-rr:k=4,exp_eps0=3,inputs=2` as a binary-input mechanism.
pub fn parse_family_string(spec: &str) -> Result<Mechanism> {
    parse_family_string_as(spec, FamilyMeaning::Current)
}

/// [`parse_family_string`] with families read as `meaning` says.
pub fn parse_family_string_as(spec: &str, meaning: FamilyMeaning) -> Result<Mechanism> {
    mechanism_from_value(spec, spec, Value::Object(family_map(spec)?), meaning).map(|mut m| {
        m.name = spec.to_string();
        m.source = Some(MechanismSource {
            spec: spec.to_string(),
            text: None,
        });
        m
    })
}

/// A family string's table: `family` plus every `key=value`, values as strings.
pub(crate) fn family_map(spec: &str) -> Result<Map<String, Value>> {
    let (family, params) = spec.split_once(':').unwrap_or((spec, ""));
    let mut map = Map::new();
    map.insert("family".into(), Value::String(family.to_string()));
    for part in params.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(Error::Mechanism {
                source_name: spec.to_string(),
                field: part.trim().to_string(),
                message: "expected key=value, e.g. binary-rr:eps0=1 or k-rr:k=4,exp_eps0=3".into(),
            });
        };
        let key = key.trim();
        if map.contains_key(key) {
            return Err(Error::Mechanism {
                source_name: spec.to_string(),
                field: key.to_string(),
                message: "given twice".into(),
            });
        }
        map.insert(key.to_string(), Value::String(value.trim().to_string()));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_strings() {
        let m = parse_family_string("k-rr:k=4,exp_eps0=3,inputs=2").unwrap();
        assert_eq!(m.d(), 4);
        assert_eq!(m.restriction_of, Some(4));
        // Without inputs=2, k-RR is the randomizer on k inputs: not a binary-input mechanism.
        let e = parse_family_string("k-rr:k=4,exp_eps0=3")
            .unwrap_err()
            .to_string();
        assert!(e.contains(": inputs:") && e.contains("inputs=2"), "{e}");
        // The legacy (0.1.x) meaning reads it as the binary-input restriction.
        let legacy = parse_family_string_as("k-rr:k=4,exp_eps0=3", FamilyMeaning::Legacy).unwrap();
        assert_eq!(legacy.rational_rows().unwrap(), m.rational_rows().unwrap());
        // k = 2: randomized response on its two inputs, no restriction.
        let two = parse_family_string("k-rr:k=2,exp_eps0=3").unwrap();
        assert_eq!(two.restriction_of, None);
        let e = load_mechanism("krr:k=4,exp_eps0=3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("binary-rr, k-rr"), "{e}");
        assert!(m.is_rational());
        let m = parse_family_string("binary-rr:eps0=1").unwrap();
        assert_eq!(m.d(), 2);
        assert!(!m.is_rational());
        let m = parse_family_string("binary-rr:exp_eps0=3/2").unwrap();
        assert_eq!(m.rational_rows().unwrap()[0][0], Rational::from((3, 5)));
        for (bad, field) in [
            ("k-rr:exp_eps0=3", "k"),
            ("k-rr:k=1,exp_eps0=3", "k"),
            ("binary-rr:eps0=1,exp_eps0=2", "eps0"),
            ("binary-rr:eps0=abc", "eps0"),
            ("binary-rr:eps0=-1", "eps0"),
            ("binary-rr:exp_eps0=1/2", "exp_eps0"),
            ("binary-rr:delta=1", "delta"),
            ("binary-rr:eps0", "eps0"),
            ("binary-rr:k=3,eps0=1", "k"),
            ("binary-rr:eps0=1,inputs=3", "inputs"),
            ("k-rr:k=4,exp_eps0=3,inputs=5", "inputs"),
            ("k-rr:k=4,exp_eps0=3,inputs=x", "inputs"),
        ] {
            let e = parse_family_string(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(bad) && e.contains(&format!(": {field}")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn toml_and_json_documents() {
        let toml_text = "name = \"t\"\nw0 = [\"0.7\", \"3/10\"]\nw1 = [0, 1]\n";
        let v = parse_document("x.toml", toml_text).unwrap();
        let m = mechanism_from_value("x.toml", "x", v, FamilyMeaning::Current).unwrap();
        assert_eq!(m.name, "t");
        assert_eq!(m.rational_rows().unwrap()[1][1], Rational::from(1));
        let float = parse_document("x.toml", "w0 = [0.7, 0.3]\nw1 = [\"0.5\", \"0.5\"]\n").unwrap();
        let e = mechanism_from_value("x.toml", "x", float, FamilyMeaning::Current)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w0[0]") && e.contains("as a string"), "{e}");
        let json_text = r#"{"family": "k-rr", "k": 3, "eps0": "0.5", "inputs": 2}"#;
        let v = parse_document("x.json", json_text).unwrap();
        let m = mechanism_from_value("x.json", "x", v, FamilyMeaning::Current).unwrap();
        assert_eq!(m.d(), 3);
        let bad = parse_document(
            "x.toml",
            "w0 = [\"0.5\", \"0.5\"]\nw1 = [\"0.5\", \"0.5\"]\nw2 = 1\n",
        )
        .unwrap();
        let e = mechanism_from_value("x.toml", "x", bad, FamilyMeaning::Current)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w2") && e.contains("unknown field"), "{e}");
        let e = parse_document("x.toml", "w0 = [").unwrap_err().to_string();
        assert!(e.contains("invalid TOML"), "{e}");
        let bad =
            parse_document("x.toml", "w0 = [\"0.5\", true]\nw1 = [\"0.5\", \"0.5\"]\n").unwrap();
        let e = mechanism_from_value("x.toml", "x", bad, FamilyMeaning::Current)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w0[1]"), "{e}");
    }
}
