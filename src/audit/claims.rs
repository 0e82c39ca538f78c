//! Claims to audit: CSV with a header, or JSON Lines, one claim per row.
//!
//! Columns (any order): `n`, `eps`, `delta` (exact decimals or fractions), and optionally
//! `kind` (`upper`, the default; `lower`; `rdp`), `alpha` (the Rényi order, for `rdp`), `k`
//! (restrict the claim to the pair `(T_{n,k}, T_{n,k+1})`), `source` and `note` (echoed back).
//! Numbers are read exactly: in JSON Lines a bare number is taken as the text it was written
//! with (`0.5320` is 532/1000, not the nearest double).  A malformed row is an error naming the
//! line and the column, and nothing is reported for the file.

use crate::enclosure::{exact_string, parse_rational};
use crate::error::{Error, Result};
use rug::Rational;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;
use std::path::Path;

/// What a claim asserts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimKind {
    /// "The mechanism is (eps, delta)-DP": `δ_M(eps) ≤ delta`.
    Upper,
    /// "The mechanism is not (eps, δ′)-DP for any δ′ < delta": `δ_M(eps) ≥ delta`.
    Lower,
    /// "Every neighbouring pair, both orders, has `D_alpha ≤ eps`".
    Rdp { alpha: Rational },
}

impl ClaimKind {
    /// The name files and reports use.
    pub fn name(&self) -> &'static str {
        match self {
            ClaimKind::Upper => "upper",
            ClaimKind::Lower => "lower",
            ClaimKind::Rdp { .. } => "rdp",
        }
    }
}

/// One claim, validated.
#[derive(Clone, Debug)]
pub struct Claim {
    /// Line of the file the claim came from (1-based).
    pub line: u64,
    pub n: u64,
    pub eps: Rational,
    /// The claimed δ (`None` for `rdp`).
    pub delta: Option<Rational>,
    pub kind: ClaimKind,
    /// Restricts the claim to one pair.
    pub k: Option<u64>,
    pub source: Option<String>,
    pub note: Option<String>,
}

impl Claim {
    /// The claim with its numbers as exact strings, as reports and certificates show it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "line": self.line,
            "n": self.n,
            "eps": exact_string(&self.eps),
            "delta": self.delta.as_ref().map(exact_string),
            "kind": self.kind.name(),
            "k": self.k,
            "source": self.source,
            "note": self.note,
        });
        if let ClaimKind::Rdp { alpha } = &self.kind {
            v["alpha"] = serde_json::json!(exact_string(alpha));
        }
        v
    }
}

const COLUMNS: [&str; 8] = ["n", "eps", "delta", "kind", "alpha", "k", "source", "note"];

/// Reads and validates every claim of a file: the file's text and its claims.
pub fn read_claims(path: &str) -> Result<(String, Vec<Claim>)> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_string(),
        message: format!("cannot read claims file: {e}"),
    })?;
    let claims = parse_claims(path, &text)?;
    Ok((text, claims))
}

/// Validates every claim of a file's text (format by the path's extension: `.csv`, or
/// `.jsonl` / `.ndjson` / `.json`; otherwise by content).
pub fn parse_claims(path: &str, text: &str) -> Result<Vec<Claim>> {
    let extension = Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase());
    let json_lines = match extension.as_deref() {
        Some("csv") => false,
        Some("jsonl" | "ndjson" | "json") => true,
        _ => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .is_some_and(|l| l.starts_with('{')),
    };
    let claims = if json_lines {
        parse_json_lines(path, text)?
    } else {
        parse_csv(path, text)?
    };
    if claims.is_empty() {
        return Err(Error::Argument {
            field: "--claims".into(),
            message: format!("{path}: no claims in the file"),
        });
    }
    Ok(claims)
}

/// An error at a line and column of the claims file.
fn row_error(path: &str, line: u64, column: &str, message: impl Into<String>) -> Error {
    Error::Argument {
        field: format!("{path}: line {line}, column {column}"),
        message: message.into(),
    }
}

/// The raw cells of one row: `(column, text)` in file order.
type Cells = Vec<(String, String)>;

fn parse_csv(path: &str, text: &str) -> Result<Vec<Claim>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let header_line = text
        .lines()
        .position(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map_or(1, |i| i as u64 + 1);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| row_error(path, header_line, "(header)", e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    for (i, name) in header.iter().enumerate() {
        if !COLUMNS.contains(&name.as_str()) {
            return Err(row_error(
                path,
                header_line,
                name,
                format!("unknown column (expected some of {})", COLUMNS.join(", ")),
            ));
        }
        if header[..i].contains(name) {
            return Err(row_error(path, header_line, name, "column given twice"));
        }
    }
    for required in ["n", "eps"] {
        if !header.iter().any(|h| h == required) {
            return Err(row_error(
                path,
                header_line,
                required,
                "missing column (the header must name n, eps and, except for rdp claims, delta)",
            ));
        }
    }
    let mut claims = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            row_error(path, line, "(row)", e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let cells: Cells = header
            .iter()
            .zip(record.iter())
            .filter(|(_, v)| !v.is_empty())
            .map(|(h, v)| (h.clone(), v.to_string()))
            .collect();
        claims.push(claim_from_cells(path, line, &cells)?);
    }
    Ok(claims)
}

/// A JSON object's members in order, refusing a key given twice (a claim must never rest on
/// an ambiguous row); each value is kept as the raw JSON text it was written with.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Members, A::Error> {
                let mut members: Vec<(String, Box<RawValue>)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Box<RawValue>>()? {
                    if members.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom(format!(
                            "the key \"{key}\" is given twice"
                        )));
                    }
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

fn parse_json_lines(path: &str, text: &str) -> Result<Vec<Claim>> {
    let mut claims = Vec::new();
    for (i, line_text) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let trimmed = line_text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Members(members) = serde_json::from_str(trimmed)
            .map_err(|e| row_error(path, line, "(row)", format!("invalid JSON: {e}")))?;
        let mut cells = Cells::new();
        for (key, raw) in members {
            if !COLUMNS.contains(&key.as_str()) {
                return Err(row_error(
                    path,
                    line,
                    &key,
                    format!("unknown key (expected some of {})", COLUMNS.join(", ")),
                ));
            }
            let raw = raw.get();
            let value = match raw.as_bytes().first() {
                Some(b'"') => serde_json::from_str::<String>(raw)
                    .map_err(|e| row_error(path, line, &key, e.to_string()))?,
                Some(b'-' | b'0'..=b'9') => raw.to_string(),
                _ if raw == "null" => continue,
                _ => {
                    return Err(row_error(
                        path,
                        line,
                        &key,
                        format!("expected a number or a string, got {raw}"),
                    ));
                }
            };
            if !value.trim().is_empty() {
                cells.push((key, value));
            }
        }
        claims.push(claim_from_cells(path, line, &cells)?);
    }
    Ok(claims)
}

/// Validates one row.
fn claim_from_cells(path: &str, line: u64, cells: &Cells) -> Result<Claim> {
    let get = |column: &str| {
        cells
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, v)| v.trim())
    };
    let err = |column: &str, message: String| row_error(path, line, column, message);
    let number = |column: &str| -> Result<Option<Rational>> {
        get(column)
            .map(|text| {
                parse_rational(text).ok_or_else(|| {
                    err(
                        column,
                        format!("expected an exact decimal or fraction, got \"{text}\""),
                    )
                })
            })
            .transpose()
    };
    let whole = |column: &str| -> Result<Option<u64>> {
        number(column)?
            .map(|q| {
                (*q.denom() == 1)
                    .then(|| q.numer().to_u64())
                    .flatten()
                    .ok_or_else(|| {
                        err(
                            column,
                            format!("expected a whole number ≥ 0, got {}", exact_string(&q)),
                        )
                    })
            })
            .transpose()
    };
    let n = whole("n")?.ok_or_else(|| err("n", "missing".into()))?;
    if n < 1 {
        return Err(err("n", "must be at least 1".into()));
    }
    let eps = number("eps")?.ok_or_else(|| err("eps", "missing".into()))?;
    if eps < 0 {
        return Err(err("eps", "must be ≥ 0".into()));
    }
    let kind = match get("kind").map(str::to_lowercase).as_deref() {
        None | Some("upper") => ClaimKind::Upper,
        Some("lower") => ClaimKind::Lower,
        Some("rdp") => {
            let alpha = number("alpha")?
                .ok_or_else(|| err("alpha", "an rdp claim needs the Rényi order".into()))?;
            if alpha <= 1 {
                return Err(err(
                    "alpha",
                    format!(
                        "the Rényi order must exceed 1, got {}",
                        exact_string(&alpha)
                    ),
                ));
            }
            ClaimKind::Rdp { alpha }
        }
        Some(other) => {
            return Err(err(
                "kind",
                format!("expected upper, lower or rdp, got \"{other}\""),
            ));
        }
    };
    let delta = number("delta")?;
    let delta = match (&kind, delta) {
        (ClaimKind::Rdp { .. }, Some(_)) => {
            return Err(err(
                "delta",
                "an rdp claim bounds a Rényi divergence by eps; leave delta empty".into(),
            ));
        }
        (ClaimKind::Rdp { .. }, None) => None,
        (_, None) => return Err(err("delta", "missing".into())),
        (_, Some(d)) if !(0..=1).contains(&d) => {
            return Err(err("delta", "must lie in [0, 1]".into()));
        }
        (_, d) => d,
    };
    if get("alpha").is_some() && !matches!(kind, ClaimKind::Rdp { .. }) {
        return Err(err(
            "alpha",
            "only rdp claims have a Rényi order (set kind = rdp)".into(),
        ));
    }
    if eps > 700 && !matches!(kind, ClaimKind::Rdp { .. }) {
        return Err(err("eps", "must be ≤ 700".into()));
    }
    let k = whole("k")?;
    if let Some(k) = k {
        if k > n - 1 {
            return Err(err(
                "k",
                format!("must lie in 0..{} (the pair is T_(n,k), T_(n,k+1))", n - 1),
            ));
        }
    }
    Ok(Claim {
        line,
        n,
        eps,
        delta,
        kind,
        k,
        source: get("source").map(str::to_string),
        note: get("note").map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> String {
        let dir = std::env::temp_dir().join(format!("shufflecert-claims-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn csv_and_json_lines_read_the_same_claims_exactly() {
        let csv = write(
            "a.csv",
            "# published bounds\nn,eps,delta,kind,k,source\n1000,0.5320,1e-5,,,FMT21\n50,0.1,1/100,lower,3,\"audit, run 2\"\n",
        );
        let jsonl = write(
            "a.jsonl",
            "{\"n\": 1000, \"eps\": 0.5320, \"delta\": 1e-5, \"source\": \"FMT21\"}\n\n{\"n\": \"50\", \"eps\": \"0.1\", \"delta\": \"1/100\", \"kind\": \"lower\", \"k\": 3, \"source\": \"audit, run 2\"}\n",
        );
        for path in [csv, jsonl] {
            let (_, c) = read_claims(&path).unwrap();
            assert_eq!(c.len(), 2, "{path}");
            assert_eq!(c[0].eps, Rational::from((532, 1000)));
            assert_eq!(c[0].delta, Some(Rational::from((1, 100_000))));
            assert_eq!(c[0].kind, ClaimKind::Upper);
            assert_eq!(c[1].kind, ClaimKind::Lower);
            assert_eq!(c[1].k, Some(3));
            assert_eq!(c[1].source.as_deref(), Some("audit, run 2"));
        }
    }

    #[test]
    fn a_bad_row_names_its_line_and_column() {
        for (name, text, needle) in [
            (
                "b.csv",
                "n,eps,delta\n10,0.1,1e-5\n10,abc,1e-5\n",
                "line 3, column eps",
            ),
            ("c.csv", "n,eps,delta\n10,0.1,2\n", "line 2, column delta"),
            (
                "d.csv",
                "n,eps,delta,colour\n10,0.1,0.5,red\n",
                "column colour",
            ),
            (
                "e.csv",
                "n,eps,delta,k\n10,0.1,0.5,10\n",
                "line 2, column k",
            ),
            (
                "f.csv",
                "n,eps,delta,kind\n10,0.1,0.5,rdp\n",
                "column alpha",
            ),
            (
                "g.csv",
                "n,eps,kind,alpha,delta\n10,0.1,rdp,2,0.5\n",
                "column delta",
            ),
            ("h.csv", "n,eps,delta\n10,0.1\n", "line 2"),
            ("i.csv", "n,delta\n10,0.1\n", "column eps"),
            ("j.csv", "n,eps,delta\n0,0.1,0.5\n", "column n"),
            (
                "k.jsonl",
                "{\"n\": 10, \"n\": 11, \"eps\": 0.1, \"delta\": 0.5}\n",
                "given twice",
            ),
            (
                "l.jsonl",
                "{\"n\": 10, \"eps\": [1], \"delta\": 0.5}\n",
                "column eps",
            ),
            (
                "m.jsonl",
                "{\"n\": 10, \"eps\": 0.1, \"delta\": 0.5}\n{\"n\": 10,\n",
                "line 2",
            ),
            ("n.csv", "n,eps,delta\n", "no claims"),
            (
                "o.csv",
                "n,eps,delta,kind\n10,0.1,0.5,upper\n10,-1,0.5,upper\n",
                "line 3, column eps",
            ),
        ] {
            let e = read_claims(&write(name, text)).unwrap_err().to_string();
            assert!(e.contains(needle), "{name}: {e}");
        }
    }
}
