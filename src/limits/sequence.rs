//! Mechanism sequences `W^{(n)}` and composition rules `k_n` (Part III Definition 2.8): the
//! regimes of Theorem 3.1 are statements about sequences, so `limit` takes one.
//!
//! * `binary-rr:exp_eps0=n/C` and `k-rr:k=K,exp_eps0=n/C,inputs=2` (the binary-input
//!   restriction; Part III's pairs have two inputs): randomized response with
//!   `e^{ε0} = n/C`, whose non-truthful outputs have probability `C/(n + C(k−1)) = C/n + O(n⁻²)`.
//! * A TOML/JSON file whose entries are exact strings `"a"` or pairs `["a", "b"]` meaning
//!   `W_b^{(n)}(y) = a + b/n` exactly:
//!
//! ```toml
//! name = "Proposition 6.1"
//! w0 = ["1/2", "1/2", "0"]
//! w1 = ["0", "1/2", "1/2"]
//! ```
//!
//! Rows must sum to 1 for every n (`Σ a = 1`, `Σ b = 0`), and an entry with `a = 0` needs
//! `b ≥ 0` (it is a rare intensity).  Both kinds carry their first-order expansion
//! `W = a + b/n + O(n⁻²)`, from which the geometry is computed.

use crate::enclosure::{exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::parse::{check_keys, exact_number, parse_document};
use crate::mechanism::{Entry, Family, LocalParameter, Mechanism};
use rug::Rational;
use rug::ops::Pow;
use serde_json::Value;

/// How the sequence is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SequenceKind {
    /// Entries `a + b/n` exactly.
    Affine,
    /// A randomized-response family with `e^{ε0} = n/c`.
    Family { family: Family, c: Rational },
    /// Another sequence with outputs merged: output j sums `classes[j]` of the original.
    Merged {
        original: Box<MechanismSequence>,
        classes: Vec<Vec<usize>>,
    },
}

/// A mechanism sequence with its first-order expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MechanismSequence {
    pub name: String,
    pub kind: SequenceKind,
    /// `expansion[b][y] = (a, b)` with `W_b^{(n)}(y) = a + b/n + O(n⁻²)` (exact for
    /// [`SequenceKind::Affine`]).
    pub expansion: [Vec<(Rational, Rational)>; 2],
}

impl MechanismSequence {
    /// The output alphabet size.
    pub fn d(&self) -> usize {
        self.expansion[0].len()
    }

    /// The mechanism `W^{(n)}`, exactly.
    pub fn at(&self, n: u64) -> Result<Mechanism> {
        let err = |message: String| Error::argument("--n", message);
        match &self.kind {
            SequenceKind::Family { family, c } => {
                let a = Rational::from((n, 1)) / c;
                if a < 1 {
                    return Err(err(format!(
                        "{}: e^eps0 = n/{} is below 1 at n = {n}",
                        self.name,
                        exact_string(c)
                    )));
                }
                family.mechanism(&self.name, self.name.clone(), LocalParameter::ExpEps0(a))
            }
            SequenceKind::Merged { original, classes } => {
                let rows = original.at(n)?.rational_rows().ok_or_else(|| {
                    Error::Internal("a sequence's mechanism has rational rows".into())
                })?;
                let merged = [0, 1].map(|b| {
                    classes
                        .iter()
                        .map(|c| Entry::Exact(c.iter().map(|&y| rows[b][y].clone()).sum()))
                        .collect::<Vec<_>>()
                });
                Mechanism::new(&self.name, self.name.clone(), None, merged, None)
            }
            SequenceKind::Affine => {
                let rows = self.expansion.clone().map(|row| {
                    row.into_iter()
                        .map(|(a, b)| Entry::Exact(a + b / Rational::from(n)))
                        .collect::<Vec<_>>()
                });
                for row in &rows {
                    for e in row {
                        if let Entry::Exact(v) = e
                            && (*v < 0 || *v > 1)
                        {
                            return Err(err(format!(
                                "{}: W^(n) has an entry {} outside [0, 1] at n = {n}; use larger n",
                                self.name,
                                exact_string(v)
                            )));
                        }
                    }
                }
                Mechanism::new(&self.name, self.name.clone(), None, rows, None)
            }
        }
    }
}

impl MechanismSequence {
    /// The sequence with outputs of identical likelihood ratio `W1/W0` at every n merged (rows
    /// summed) and outputs with `W0 = W1 = 0` dropped; `None` when nothing changes.  For the
    /// expansion `a + b/x`, `x = n`, two outputs have identical ratios when
    /// `(a1 + b1 x)(a0' + b0' x) ≡ (a1' + b1' x)(a0 + b0 x)` as polynomials in `x = 1/n`.  Every
    /// finite-n curve is unchanged (sufficiency, proofs-notes/sufficiency-reduction.md); the
    /// merged sequence evaluates exactly by summing the original's rows.
    pub fn reduced(&self) -> Option<MechanismSequence> {
        let e = &self.expansion;
        let zero = |y: usize| (0..2).all(|b| e[b][y].0 == 0 && e[b][y].1 == 0);
        let same_ratio = |y: usize, z: usize| {
            let ((a0, b0), (a1, b1)) = (&e[0][y], &e[1][y]);
            let ((c0, d0), (c1, d1)) = (&e[0][z], &e[1][z]);
            Rational::from(a1 * c0) == Rational::from(c1 * a0)
                && Rational::from(a1 * d0) + Rational::from(b1 * c0)
                    == Rational::from(c1 * b0) + Rational::from(d1 * a0)
                && Rational::from(b1 * d0) == Rational::from(d1 * b0)
        };
        let mut classes: Vec<Vec<usize>> = Vec::new();
        for y in (0..self.d()).filter(|&y| !zero(y)) {
            match classes.iter_mut().find(|c| same_ratio(c[0], y)) {
                Some(c) => c.push(y),
                None => classes.push(vec![y]),
            }
        }
        // Nothing merges, or everything does (W0 = W1: a single class is not a mechanism).
        if classes.len() == self.d() || classes.len() < 2 {
            return None;
        }
        let row = |b: usize| {
            classes
                .iter()
                .map(|c| {
                    c.iter()
                        .fold((Rational::new(), Rational::new()), |(a, s), &y| {
                            (a + &e[b][y].0, s + &e[b][y].1)
                        })
                })
                .collect::<Vec<_>>()
        };
        let expansion = [row(0), row(1)];
        Some(MechanismSequence {
            name: format!("{} (reduced)", self.name),
            kind: SequenceKind::Merged {
                original: Box::new(self.clone()),
                classes,
            },
            expansion,
        })
    }
}

/// Reads a sequence from a family string (`…exp_eps0=n/C`) or a file.
pub fn load_sequence(spec: &str) -> Result<MechanismSequence> {
    load_sequence_with_text(spec).map(|(s, _)| s)
}

/// [`load_sequence`], with the text of the file it was read from (`None` for a family
/// string), so that a certificate records what was computed and not only a path.
pub fn load_sequence_with_text(spec: &str) -> Result<(MechanismSequence, Option<String>)> {
    let (family, params) = spec.split_once(':').unwrap_or((spec, ""));
    if family == "binary-rr" || family == "k-rr" {
        return Ok((family_sequence(spec, family, params)?, None));
    }
    let text = std::fs::read_to_string(spec).map_err(|e| Error::Io {
        path: spec.to_string(),
        message: format!(
            "cannot read sequence file ({e}); families: binary-rr:exp_eps0=n/C, k-rr:k=K,exp_eps0=n/C"
        ),
    })?;
    let sequence = affine_sequence(spec, &text)?;
    Ok((sequence, Some(text)))
}

/// A sequence as a certificate records it: a family string (`text` = `None`), or the text of
/// the file named `spec` (read from the text, not from the path).
pub fn sequence_from_source(spec: &str, text: Option<&str>) -> Result<MechanismSequence> {
    match text {
        Some(text) => affine_sequence(spec, text),
        None => {
            let (family, params) = spec.split_once(':').unwrap_or((spec, ""));
            if family == "binary-rr" || family == "k-rr" {
                family_sequence(spec, family, params)
            } else {
                Err(Error::argument(
                    "sequence.text",
                    format!("{spec} is not a family string, and the file's text is missing"),
                ))
            }
        }
    }
}

fn family_sequence(spec: &str, family: &str, params: &str) -> Result<MechanismSequence> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: field.to_string(),
        message,
    };
    let (mut k, mut c, mut inputs) = (None, None, None);
    for part in params.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(err(part.trim(), "expected key=value".into()));
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "k" if family == "k-rr" => {
                if k.is_some() {
                    return Err(err("k", "given twice".into()));
                }
                k = Some(
                    value
                        .parse::<u32>()
                        .ok()
                        .filter(|k| (2..=1 << 20).contains(k))
                        .ok_or_else(|| {
                            err("k", format!("must be from 2 to 1048576, got {value}"))
                        })?,
                );
            }
            "exp_eps0" => {
                if c.is_some() {
                    return Err(err("exp_eps0", "given twice".into()));
                }
                let Some(text) = value.strip_prefix("n/") else {
                    return Err(err(
                        "exp_eps0",
                        format!("a sequence needs e^eps0 = n/C (e.g. n/2), got {value}"),
                    ));
                };
                let v = parse_rational(text).filter(|v| *v > 0).ok_or_else(|| {
                    err(
                        "exp_eps0",
                        format!("C must be a positive exact number, got {text}"),
                    )
                })?;
                c = Some(v);
            }
            "inputs" => {
                if inputs.is_some() {
                    return Err(err("inputs", "given twice".into()));
                }
                inputs =
                    Some(value.parse::<u32>().map_err(|_| {
                        err("inputs", format!("must be a whole number, got {value}"))
                    })?);
            }
            other => {
                return Err(err(
                    other,
                    "unknown parameter; expected k (k-rr), exp_eps0=n/C and inputs=2".into(),
                ));
            }
        }
    }
    let c = c.ok_or_else(|| err("exp_eps0", "missing: give exp_eps0=n/C".into()))?;
    let (family, symbols) = match family {
        "binary-rr" => (Family::BinaryRr, 2),
        _ => {
            let k = k.ok_or_else(|| err("k", "k-rr needs the alphabet size k".into()))?;
            (Family::KRr { k }, k as usize)
        }
    };
    // Part III's limits are about binary-input pairs: k-RR on k > 2 inputs must be restricted
    // explicitly (one meaning of `k-rr:k=K` everywhere: K-valued inputs).
    match inputs.unwrap_or(symbols as u32) {
        2 => {}
        count => {
            return Err(err(
                "inputs",
                format!(
                    "Part III's limits are for binary-input sequences, and {spec} is randomized response on {count} inputs; write inputs=2 for its binary-input restriction"
                ),
            ));
        }
    }
    // Truthful: n/(n + c(k−1)) = 1 − c(k−1)/n + O(n⁻²); each other: c/n + O(n⁻²).
    let truthful = (
        Rational::from(1),
        -Rational::from(&c * (symbols as u32 - 1)),
    );
    let other = (Rational::new(), c.clone());
    let row = |b: usize| {
        (0..symbols)
            .map(|y| {
                if y == b {
                    truthful.clone()
                } else {
                    other.clone()
                }
            })
            .collect::<Vec<_>>()
    };
    Ok(MechanismSequence {
        name: spec.to_string(),
        kind: SequenceKind::Family { family, c },
        expansion: [row(0), row(1)],
    })
}

fn affine_sequence(spec: &str, text: &str) -> Result<MechanismSequence> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: field.to_string(),
        message,
    };
    let Value::Object(map) = parse_document(spec, text)? else {
        return Err(err("(file)", "the top level must be a table/object".into()));
    };
    check_keys(spec, &map, &["name", "w0", "w1"])?;
    let name = match map.get("name") {
        None => spec.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err("name", "must be a string".into())),
    };
    let row = |field: &str| -> Result<Vec<(Rational, Rational)>> {
        let Some(Value::Array(items)) = map.get(field) else {
            return Err(err(
                field,
                "must be a list of entries \"a\" or [\"a\", \"b\"] (meaning a + b/n)".into(),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let f = format!("{field}[{i}]");
                match item {
                    Value::Array(pair) if pair.len() == 2 => Ok((
                        exact_number(spec, &format!("{f}[0]"), &pair[0])?,
                        exact_number(spec, &format!("{f}[1]"), &pair[1])?,
                    )),
                    Value::Array(_) => Err(err(&f, "a pair [\"a\", \"b\"] means a + b/n".into())),
                    v => Ok((exact_number(spec, &f, v)?, Rational::new())),
                }
            })
            .collect()
    };
    let rows = [row("w0")?, row("w1")?];
    if rows[0].len() != rows[1].len() || rows[0].len() < 2 {
        return Err(err(
            "w1",
            format!(
                "w0 and w1 need the same number (≥ 2) of outputs, got {} and {}",
                rows[0].len(),
                rows[1].len()
            ),
        ));
    }
    for (b, r) in rows.iter().enumerate() {
        let field = format!("w{b}");
        let a: Rational = r.iter().map(|(a, _)| a.clone()).sum();
        let s: Rational = r.iter().map(|(_, s)| s.clone()).sum();
        if a != 1 || s != 0 {
            return Err(err(
                &field,
                format!(
                    "must sum to 1 for every n: the constants sum to {} and the 1/n terms to {}",
                    exact_string(&a),
                    exact_string(&s)
                ),
            ));
        }
        for (y, (a, s)) in r.iter().enumerate() {
            if *a < 0 || *a > 1 || (*a == 0 && *s < 0) || (*a == 1 && *s > 0) {
                return Err(err(
                    &format!("{field}[{y}]"),
                    "must lie in [0, 1] for large n (a in [0, 1]; b ≥ 0 when a = 0, b ≤ 0 when a = 1)".into(),
                ));
            }
        }
    }
    Ok(MechanismSequence {
        name,
        kind: SequenceKind::Affine,
        expansion: rows,
    })
}

/// A composition rule `n ↦ k_n` (Definition 2.8: `k_n/n → π`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KRule {
    /// `k_n = K` (π = 0, strong boundary).
    Fixed(u64),
    /// `k_n = n − 1 − K` (π = 1, strong boundary).
    Complement(u64),
    /// `k_n = ⌊πn⌋`, capped at n − 1.
    Fraction(Rational),
    /// `k_n = ⌊n^a⌋`, `0 < a < 1` (π = 0, weak boundary).
    Power(Rational),
}

impl KRule {
    /// Parses `fixed:K`, `complement:K`, `fraction:P` or `power:A`.
    pub fn parse(text: &str) -> Result<KRule> {
        let err = |m: &str| Error::argument("--k-rule", m.to_string());
        let (kind, value) = text
            .split_once(':')
            .ok_or_else(|| err("expected fixed:K, complement:K, fraction:P or power:A"))?;
        let q =
            parse_rational(value.trim()).ok_or_else(|| err("the value must be an exact number"))?;
        let whole = || {
            (q >= 0 && *q.denom() == 1)
                .then(|| q.numer().to_u64())
                .flatten()
                .ok_or_else(|| err("K must be a whole number ≥ 0"))
        };
        match kind.trim() {
            "fixed" => Ok(KRule::Fixed(whole()?)),
            "complement" => Ok(KRule::Complement(whole()?)),
            "fraction" if (0..=1).contains(&q) => Ok(KRule::Fraction(q)),
            "fraction" => Err(err("P must lie in [0, 1]")),
            "power" if q > 0 && q < 1 && *q.denom() <= 1000 => Ok(KRule::Power(q)),
            "power" => Err(err(
                "A must lie strictly between 0 and 1, with a denominator of at most 1000",
            )),
            _ => Err(err("expected fixed:K, complement:K, fraction:P or power:A")),
        }
    }

    /// `k_n` (an error when the rule gives no valid composition at this n).
    pub fn k(&self, n: u64) -> Result<u64> {
        let k = match self {
            KRule::Fixed(k) => *k,
            KRule::Complement(m) => n.checked_sub(1 + m).ok_or_else(|| {
                Error::argument("--k-rule", format!("complement:{m} needs n > {m}"))
            })?,
            KRule::Fraction(p) => {
                let k = Rational::from(p * n).floor().numer().to_u64().unwrap_or(0);
                k.min(n - 1)
            }
            KRule::Power(a) => {
                // ⌊n^a⌋ by integer search on the exact comparison k^den ≤ n^num.
                // The denominator is at most 1000 (checked when parsed), and num < den.
                let (num, den) = (
                    a.numer().to_u32().expect("small numerator"),
                    a.denom().to_u32().expect("small denominator"),
                );
                let target = rug::Integer::from(n).pow(num);
                let mut k = (n as f64).powf(a.to_f64()).floor() as u64;
                while k > 0 && rug::Integer::from(k).pow(den) > target {
                    k -= 1;
                }
                while rug::Integer::from(k + 1).pow(den) <= target {
                    k += 1;
                }
                k.min(n - 1)
            }
        };
        if k >= n {
            return Err(Error::argument(
                "--k-rule",
                format!("gives k = {k} at n = {n}; need k ≤ n − 1"),
            ));
        }
        Ok(k)
    }

    /// `π = lim k_n/n`.
    pub fn pi(&self) -> Rational {
        match self {
            KRule::Fixed(_) | KRule::Power(_) => Rational::new(),
            KRule::Complement(_) => Rational::from(1),
            KRule::Fraction(p) => p.clone(),
        }
    }

    /// Whether `k_n = O(1)` (resp. `n − k_n = O(1)`) at a boundary π ∈ {0, 1}.
    pub fn bounded_minority(&self) -> bool {
        match self {
            KRule::Fixed(_) | KRule::Complement(_) => true,
            KRule::Fraction(p) => *p == 0 || *p == 1,
            KRule::Power(_) => false,
        }
    }

    /// Whether `|π_n − π| ≤ C/n` (part of Theorem 3.1's condition (3)).
    pub fn rate_one_over_n(&self) -> bool {
        !matches!(self, KRule::Power(_))
    }

    /// The rule as text.
    pub fn text(&self) -> String {
        match self {
            KRule::Fixed(k) => format!("fixed:{k}"),
            KRule::Complement(k) => format!("complement:{k}"),
            KRule::Fraction(p) => format!("fraction:{}", exact_string(p)),
            KRule::Power(a) => format!("power:{}", exact_string(a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_expand_and_evaluate_exactly() {
        let s = load_sequence("k-rr:k=4,exp_eps0=n/2,inputs=2").unwrap();
        assert_eq!(s.expansion[0][0], (Rational::from(1), Rational::from(-6)));
        assert_eq!(s.expansion[0][3], (Rational::new(), Rational::from(2)));
        let m = s.at(100).unwrap();
        // e^eps0 = 50: W0(0) = 50/53, W0(3) = 1/53.
        assert_eq!(m.rational_rows().unwrap()[0][0], Rational::from((50, 53)));
        assert_eq!(m.rational_rows().unwrap()[0][3], Rational::from((1, 53)));
        assert!(s.at(1).is_err());
        for (bad, field) in [
            ("binary-rr:exp_eps0=3", "exp_eps0"),
            ("binary-rr:exp_eps0=n/0", "exp_eps0"),
            ("k-rr:exp_eps0=n/2", "k"),
            ("k-rr:k=4,exp_eps0=n/2", "inputs"),
            ("k-rr:k=4,exp_eps0=n/2,inputs=3", "inputs"),
            ("binary-rr:exp_eps0=n/2,k=3", "k"),
        ] {
            let e = load_sequence(bad).unwrap_err().to_string();
            assert!(e.contains(&format!(": {field}:")), "{bad}: {e}");
        }
    }

    #[test]
    fn reduction_merges_equal_ratios() {
        let s = load_sequence("k-rr:k=5,exp_eps0=n/2,inputs=2").unwrap();
        let r = s.reduced().unwrap();
        assert_eq!(r.d(), 3);
        assert_eq!(r.expansion[0][2], (Rational::new(), Rational::from(6)));
        // Exact at every n: e^eps0 = 50, W0 = (50, 1, 1, 1, 1)/54 merges to (50, 1, 3)/54.
        let m = r.at(100).unwrap().rational_rows().unwrap();
        assert_eq!(m[0][2], Rational::from((3, 54)));
        assert!(
            load_sequence("binary-rr:exp_eps0=n/2")
                .unwrap()
                .reduced()
                .is_none()
        );
    }

    #[test]
    fn k_rules() {
        assert_eq!(KRule::parse("fixed:3").unwrap().k(10).unwrap(), 3);
        assert_eq!(KRule::parse("complement:0").unwrap().k(10).unwrap(), 9);
        assert_eq!(KRule::parse("fraction:1/3").unwrap().k(10).unwrap(), 3);
        assert_eq!(
            KRule::parse("power:1/2").unwrap().k(1_000_000).unwrap(),
            1000
        );
        assert_eq!(KRule::parse("power:1/2").unwrap().k(999_999).unwrap(), 999);
        assert!(KRule::parse("fixed:5").unwrap().k(5).is_err());
        assert!(KRule::parse("power:1").is_err());
        assert!(KRule::parse("power:1/5000000000").is_err());
        assert_eq!(
            KRule::parse("power:999/1000").unwrap().k(1000).unwrap(),
            993
        );
        assert!(KRule::parse("fraction:2").is_err());
        assert_eq!(KRule::parse("power:1/2").unwrap().pi(), 0);
    }
}
