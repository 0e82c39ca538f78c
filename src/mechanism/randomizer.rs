//! Local randomizers on any finite input domain (Takagi–Liew's `(R_x)_{x∈X}`): one exact row per
//! input.  A binary-input [`Mechanism`] is the case `|X| = 2`; every neighbouring pair of a
//! randomizer, one user switching `x → x′`, is read through the binary engine as the mechanism
//! `(W0, W1) = (R_x, R_x′)` ([`Randomizer::pair`]).
//!
//! Files with an `inputs` key give one row per input:
//!
//! ```toml
//! name = "3-ary randomized response"
//! inputs = ["a", "b", "c"]
//! outputs = ["a", "b", "c"]          # optional
//! rows = [["1/2", "1/4", "1/4"],    # R_a
//!         ["1/4", "1/2", "1/4"],    # R_b
//!         ["1/4", "1/4", "1/2"]]    # R_c
//! ```
//!
//! `k-rr:k=K,exp_eps0=C` is K-ary randomized response on K-valued inputs (input i is reported
//! truthfully as symbol i); `inputs=I` restricts it to inputs `0..I−1` (`2 ≤ I ≤ K`), and
//! `inputs=2` is the binary-input mechanism of [`super::parse`].  `w0`/`w1` files and binary RR
//! are the case `|X| = 2`.

use super::parse::{
    FamilyMeaning, check_keys, exact_number, family_input_count, family_map, file_stem,
    is_family_string, mechanism_from_value, parse_document,
};
use super::{Entry, Mechanism, MechanismSource, load_mechanism};
use crate::arith::Scalar;
use crate::error::{Error, Result};
use rug::Rational;
use serde_json::{Map, Value};

/// A randomizer given by a real ε0 at the two ends of a rational bracket of `e^{ε0}`
/// ([`Randomizer::rational_bracket`]).
#[derive(Clone, Debug)]
pub struct RationalBracket {
    /// At `a_lo < e^{ε0}`: every neighbouring pair's δ is at most its value at `e^{ε0}`.
    pub lower: Randomizer,
    /// At `a_hi > e^{ε0}`: every neighbouring pair's δ is at least its value at `e^{ε0}`.
    pub upper: Randomizer,
    /// `(a_lo, a_hi)`.
    pub exp_eps0: (Rational, Rational),
}

/// A local randomizer `x ↦ R_x` on a finite input domain.
#[derive(Clone, Debug)]
pub struct Randomizer {
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    /// `rows[x][y] = R_x(y)`.
    pub rows: Vec<Vec<Entry>>,
    /// The real ε0 of family entries in `e^{ε0}`.
    pub eps0: Option<Rational>,
    pub source: Option<MechanismSource>,
    /// `Some(K)` when this is a family on K inputs restricted to fewer (`inputs=I < K`).
    pub restriction_of: Option<usize>,
}

impl Randomizer {
    /// The binary-input mechanism as a randomizer on inputs `0`, `1`.
    pub fn from_mechanism(m: Mechanism) -> Randomizer {
        Randomizer {
            name: m.name,
            inputs: vec!["0".into(), "1".into()],
            outputs: m.outputs,
            rows: m.rows.to_vec(),
            eps0: m.eps0,
            source: m.source,
            restriction_of: m.restriction_of,
        }
    }

    /// For randomized response given by a real ε0 (entries in `a = e^{ε0}`, irrational): the
    /// same randomizer at the two ends of a rational bracket `a_lo < e^{ε0} < a_hi` of `bits`
    /// bits, and the bracket.  `None` when every entry is rational already.
    ///
    /// k-ary randomized response at a smaller `a` is a post-processing of it at a larger one
    /// (garble each output by k-RR on the outputs), and so is the shuffled histogram, so every
    /// neighbouring pair's δ(ε) is non-decreasing in `a`: a lower end computed at `a_lo` and an
    /// upper end at `a_hi` bound the value at `e^{ε0}` (proofs-notes/blanket-bounds.md).  Any
    /// other irrational randomizer is refused.
    pub fn rational_bracket(&self, bits: u32) -> Result<Option<RationalBracket>> {
        let Some(eps0) = self.eps0.as_ref().filter(|_| {
            self.rows
                .iter()
                .flatten()
                .any(|e| matches!(e, Entry::ExpFraction { .. }))
        }) else {
            return Ok(None);
        };
        if !self.is_randomized_response() {
            return Err(Error::argument(
                "--mechanism",
                "entries in e^eps0 are bracketed only for randomized response; give exp_eps0 as a rational",
            ));
        }
        let (a_lo, a_hi) = crate::arith::exp_bracket(eps0, bits);
        let at = |a: &Rational| Randomizer {
            rows: self
                .rows
                .iter()
                .map(|row| row.iter().map(|e| Entry::Exact(e.value_at(a))).collect())
                .collect(),
            eps0: None,
            ..self.clone()
        };
        Ok(Some(RationalBracket {
            lower: at(&a_lo),
            upper: at(&a_hi),
            exp_eps0: (a_lo, a_hi),
        }))
    }

    /// Every row is `a/(a + k − 1)` at one output (a different one per input) and
    /// `1/(a + k − 1)` elsewhere, with `a = e^{ε0} > 1` and k outputs: k-ary randomized response
    /// (restricted to some of its inputs).
    fn is_randomized_response(&self) -> bool {
        self.eps0.as_ref().is_some_and(|e| *e > 0)
            && super::rows_are_randomized_response(&self.rows)
    }

    /// Counts over the inputs as `input=count,…` (inputs with none left out; empty when all
    /// are), as reports name the others' inputs of a dataset.
    pub fn counts_text(&self, counts: &[u64]) -> String {
        counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(x, c)| format!("{}={c}", self.inputs[x]))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The input domain in one phrase, for the first lines of every report.
    pub fn domain_text(&self) -> String {
        let count = self.input_count();
        let labels = if count <= 8 {
            self.inputs.join(", ")
        } else {
            format!(
                "{}, {}, …, {}",
                self.inputs[0],
                self.inputs[1],
                self.inputs[count - 1]
            )
        };
        let kind = if count == 2 {
            "binary inputs"
        } else {
            "inputs"
        };
        match self.restriction_of {
            Some(k) => format!(
                "{count} {kind} {{{labels}}}: the restriction of a {k}-input randomizer to {count} of its inputs"
            )
            .replace("2 binary inputs", "binary inputs"),
            None if count == 2 => format!("binary inputs {{{labels}}}"),
            None => format!("{count} inputs {{{labels}}}"),
        }
    }

    /// The input domain as reports carry it in JSON (`input_domain`).
    pub fn domain_json(&self) -> Value {
        serde_json::json!({
            "inputs": self.inputs,
            "count": self.input_count(),
            "restriction_of": self.restriction_of,
        })
    }

    /// The number of inputs `|X|`.
    pub fn input_count(&self) -> usize {
        self.rows.len()
    }

    /// The output alphabet size.
    pub fn d(&self) -> usize {
        self.outputs.len()
    }

    /// The neighbouring pair `x → x′` as the binary-input mechanism `(W0, W1) = (R_x, R_x′)`.
    pub fn pair(&self, x: usize, x_prime: usize) -> Result<Mechanism> {
        let name = format!(
            "{} ({} -> {})",
            self.name, self.inputs[x], self.inputs[x_prime]
        );
        Mechanism::new(
            &self.name,
            name,
            Some(self.outputs.clone()),
            [self.rows[x].clone(), self.rows[x_prime].clone()],
            self.eps0.clone(),
        )
    }

    /// Every row in backend `S` (`rows[x][y]`).
    pub fn values<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Vec<Vec<S>>> {
        (0..self.input_count())
            .map(|x| Ok(self.pair(x, x)?.channel::<S>(ctx)?.w[0].clone()))
            .collect()
    }

    /// `R_x(y) = 0` exactly (family entries are always positive).
    pub fn is_zero(&self, x: usize, y: usize) -> bool {
        matches!(&self.rows[x][y], Entry::Exact(q) if *q == 0)
    }

    /// The randomizer as JSON: name, inputs, outputs, rows (exact strings or formulas).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "name": self.name,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "rows": self.rows.iter().map(|r| r.iter().map(Entry::text).collect::<Vec<_>>()).collect::<Vec<_>>(),
        });
        if let Some(eps0) = &self.eps0 {
            v["eps0"] = serde_json::json!(crate::enclosure::exact_string(eps0));
        }
        v
    }
}

/// Reads a randomizer: a family string (`k-rr:k=K,…` is K-ary randomized response on K inputs,
/// `inputs=I` restricts it to inputs 0..I−1), a file with `family`, a file with `inputs` and one
/// row per input, or a binary-input `w0`/`w1` file.
pub fn load_randomizer(spec: &str) -> Result<Randomizer> {
    if is_family_string(spec) {
        let mut r = family_randomizer(spec, spec, family_map(spec)?)?;
        r.name = spec.to_string();
        return Ok(r);
    }
    if !std::path::Path::new(spec).exists() {
        // The same errors as a binary-input mechanism (unknown family, unreadable file).
        return load_mechanism(spec).map(Randomizer::from_mechanism);
    }
    let text = std::fs::read_to_string(spec).map_err(|e| Error::Io {
        path: spec.to_string(),
        message: format!("cannot read mechanism file: {e}"),
    })?;
    randomizer_from_text(spec, &text)
}

/// A randomizer from the text of a file named `spec`.
pub fn randomizer_from_text(spec: &str, text: &str) -> Result<Randomizer> {
    let source = Some(MechanismSource {
        spec: spec.to_string(),
        text: Some(text.to_string()),
    });
    if let Value::Object(map) = parse_document(spec, text)? {
        if map.contains_key("family") {
            let mut r = family_randomizer(spec, &file_stem(spec), map)?;
            r.source = source;
            return Ok(r);
        }
        if map.contains_key("inputs") {
            let mut r = randomizer_from_map(spec, &map)?;
            r.source = source;
            return Ok(r);
        }
    }
    super::mechanism_from_text(spec, text).map(Randomizer::from_mechanism)
}

/// The randomizer again, from exactly what the user gave (a certificate's `mechanism`).
pub fn randomizer_from_source(source: &MechanismSource) -> Result<Randomizer> {
    match &source.text {
        Some(text) => randomizer_from_text(&source.spec, text),
        None => {
            let mut r = family_randomizer(&source.spec, &source.spec, family_map(&source.spec)?)?;
            r.name = source.spec.clone();
            Ok(r)
        }
    }
}

/// The most entries (inputs × outputs) a randomizer table may have: every row is held exactly.
pub const MAX_TABLE_ENTRIES: u64 = 1 << 22;

/// The number of inputs `spec` names, read without building its table (`None` when it is not a
/// family string or a family file; those are read whole).
pub fn family_inputs(spec: &str) -> Result<Option<u64>> {
    let map = if is_family_string(spec) {
        family_map(spec)?
    } else {
        let Ok(text) = std::fs::read_to_string(spec) else {
            return Ok(None);
        };
        match parse_document(spec, &text)? {
            Value::Object(map) => map,
            _ => return Ok(None),
        }
    };
    let count = family_input_count(spec, &map, FamilyMeaning::Current)?;
    if count.is_some() {
        // The family's parameter is checked first: a missing ε0 is the error to report.
        super::parse::local_parameter(spec, map.get("eps0"), map.get("exp_eps0"))?;
    }
    Ok(count)
}

/// A family's table as a randomizer: k-RR on its `inputs` (default k) inputs, input i reported
/// truthfully as symbol i; binary RR on its two inputs.
fn family_randomizer(spec: &str, stem: &str, mut map: Map<String, Value>) -> Result<Randomizer> {
    let count = family_input_count(spec, &map, FamilyMeaning::Current)?.unwrap_or(2);
    if count > 2 {
        let k = match map.get("k") {
            Some(Value::Number(n)) => n.as_u64().unwrap_or(u64::MAX),
            Some(Value::String(t)) => t.trim().parse().unwrap_or(u64::MAX),
            _ => u64::MAX,
        };
        if count.saturating_mul(k) > MAX_TABLE_ENTRIES {
            return Err(Error::Mechanism {
                source_name: spec.to_string(),
                field: "inputs".to_string(),
                message: format!(
                    "k-RR with k = {k} on {count} inputs is a table of {} entries, more than the {MAX_TABLE_ENTRIES} a randomizer may have here; restrict its inputs (inputs=I)",
                    count.saturating_mul(k)
                ),
            });
        }
    }
    map.insert("inputs".into(), Value::from(2));
    let mut binary = mechanism_from_value(spec, stem, Value::Object(map), FamilyMeaning::Current)?;
    if count == 2 {
        if binary.source.is_none() {
            binary.source = Some(MechanismSource {
                spec: spec.to_string(),
                text: None,
            });
        }
        return Ok(Randomizer::from_mechanism(binary));
    }
    let k = binary.d();
    let (truthful, other) = (binary.rows[0][0].clone(), binary.rows[0][1].clone());
    let rows = (0..count as usize)
        .map(|x| super::family::truthful_row(k, x, &truthful, &other))
        .collect();
    Ok(Randomizer {
        name: binary.name,
        inputs: (0..count).map(|x| x.to_string()).collect(),
        outputs: binary.outputs,
        rows,
        eps0: binary.eps0,
        source: Some(MechanismSource {
            spec: spec.to_string(),
            text: None,
        }),
        restriction_of: (count < k as u64).then_some(k),
    })
}

/// A randomizer from a file's table with `inputs` and `rows` (every error names the field).
pub(crate) fn randomizer_from_map(
    spec: &str,
    map: &serde_json::Map<String, Value>,
) -> Result<Randomizer> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: field.to_string(),
        message,
    };
    check_keys(spec, map, &["name", "inputs", "outputs", "rows"])?;
    let labels = |field: &str| -> Result<Option<Vec<String>>> {
        match map.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(err(&format!("{field}[{i}]"), "must be a label".into())),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(_) => Err(err(field, "must be a list of labels".into())),
        }
    };
    let inputs = labels("inputs")?.unwrap_or_default();
    if inputs.len() < 2 {
        return Err(err(
            "inputs",
            format!("needs at least 2 inputs, has {}", inputs.len()),
        ));
    }
    for (i, label) in inputs.iter().enumerate() {
        if inputs[..i].contains(label) {
            return Err(err(
                &format!("inputs[{i}]"),
                format!("\"{label}\" is listed twice"),
            ));
        }
    }
    let Some(Value::Array(rows)) = map.get("rows") else {
        return Err(err(
            "rows",
            "missing: give one list of probabilities per input".into(),
        ));
    };
    if rows.len() != inputs.len() {
        return Err(err(
            "rows",
            format!("has {} rows for {} inputs", rows.len(), inputs.len()),
        ));
    }
    let mut exact: Vec<Vec<Rational>> = Vec::new();
    for (x, row) in rows.iter().enumerate() {
        let field = format!("rows[{x}]");
        let Value::Array(items) = row else {
            return Err(err(&field, "must be a list of probabilities".into()));
        };
        let values = items
            .iter()
            .enumerate()
            .map(|(y, v)| exact_number(spec, &format!("{field}[{y}]"), v))
            .collect::<Result<Vec<_>>>()?;
        if let Some(first) = exact.first()
            && first.len() != values.len()
        {
            return Err(err(
                &field,
                format!("has {} entries, rows[0] has {}", values.len(), first.len()),
            ));
        }
        for (y, v) in values.iter().enumerate() {
            if *v < 0 || *v > 1 {
                return Err(err(
                    &format!("{field}[{y}]"),
                    format!(
                        "must lie in [0, 1], got {}",
                        crate::enclosure::exact_string(v)
                    ),
                ));
            }
        }
        let sum: Rational = values.iter().sum();
        if sum != 1 {
            return Err(err(
                &field,
                format!(
                    "entries sum to {}, not exactly 1",
                    crate::enclosure::exact_string(&sum)
                ),
            ));
        }
        exact.push(values);
    }
    let d = exact[0].len();
    if d < 2 {
        return Err(err("rows[0]", format!("needs at least 2 outputs, has {d}")));
    }
    let outputs = match labels("outputs")? {
        Some(l) if l.len() != d => {
            return Err(err(
                "outputs",
                format!("has {} labels for {d} outputs", l.len()),
            ));
        }
        Some(l) => l,
        None => (0..d).map(|y| y.to_string()).collect(),
    };
    let name = match map.get("name") {
        None => spec.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err("name", "must be a string".into())),
    };
    Ok(Randomizer {
        name,
        inputs,
        outputs,
        rows: exact
            .into_iter()
            .map(|r| r.into_iter().map(Entry::Exact).collect())
            .collect(),
        eps0: None,
        source: None,
        restriction_of: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("shufflecert-randomizer-{name}"));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    #[test]
    fn k_rr_on_k_valued_inputs() {
        let r = load_randomizer("k-rr:k=4,exp_eps0=3,inputs=3").unwrap();
        assert_eq!(r.input_count(), 3);
        assert_eq!(r.d(), 4);
        let m = r.pair(2, 0).unwrap();
        let [w0, w1] = m.rational_rows().unwrap();
        // e^eps0 = 3, k = 4: truthful 1/2, other 1/6.
        assert_eq!(w0, [1, 1, 3, 1].map(|c| Rational::from((c, 6))).to_vec());
        assert_eq!(w1[0], Rational::from((1, 2)));
        // Without inputs: k-RR on all k inputs; inputs=2: the binary-input restriction.
        assert_eq!(
            load_randomizer("k-rr:k=4,exp_eps0=3")
                .unwrap()
                .input_count(),
            4
        );
        let restricted = load_randomizer("k-rr:k=4,exp_eps0=3,inputs=2").unwrap();
        assert_eq!(restricted.input_count(), 2);
        assert_eq!(
            restricted.pair(0, 1).unwrap().rational_rows().unwrap(),
            crate::mechanism::load_mechanism("k-rr:k=4,exp_eps0=3,inputs=2")
                .unwrap()
                .rational_rows()
                .unwrap()
        );
        for (bad, needle) in [
            ("k-rr:k=4,exp_eps0=3,inputs=5", "inputs"),
            ("k-rr:k=4,exp_eps0=3,inputs=1", "inputs"),
            ("k-rr:k=4,exp_eps0=3,inputs=x", "inputs"),
            ("k-rr:k=4,exp_eps0=3,inputs=2,inputs=3", "inputs"),
            ("k-rr:exp_eps0=3,inputs=2", ": k:"),
        ] {
            let e = load_randomizer(bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn files_with_inputs_and_their_errors() {
        let good = write(
            "good.toml",
            "inputs = [\"a\", \"b\", \"c\"]\nrows = [[\"1/2\", \"1/4\", \"1/4\"], [\"1/4\", \"1/2\", \"1/4\"], [\"1/4\", \"1/4\", \"1/2\"]]\n",
        );
        let r = load_randomizer(&good).unwrap();
        assert_eq!(r.inputs, ["a", "b", "c"]);
        assert_eq!(r.pair(0, 1).unwrap().d(), 3);
        // A binary file is the |X| = 2 case.
        let binary = load_randomizer(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/mechanisms/ternary.toml"
        ))
        .unwrap();
        assert_eq!(binary.input_count(), 2);
        for (name, text, field) in [
            (
                "one-input",
                "inputs = [\"a\"]\nrows = [[\"1\", \"0\"]]\n",
                "inputs",
            ),
            (
                "twice",
                "inputs = [\"a\", \"a\"]\nrows = [[\"1\", \"0\"], [\"0\", \"1\"]]\n",
                "inputs[1]",
            ),
            (
                "count",
                "inputs = [\"a\", \"b\"]\nrows = [[\"1\", \"0\"]]\n",
                "rows",
            ),
            (
                "ragged",
                "inputs = [\"a\", \"b\"]\nrows = [[\"1\", \"0\"], [\"1\"]]\n",
                "rows[1]",
            ),
            (
                "sum",
                "inputs = [\"a\", \"b\"]\nrows = [[\"1\", \"0\"], [\"1/2\", \"1/3\"]]\n",
                "rows[1]",
            ),
            (
                "negative",
                "inputs = [\"a\", \"b\"]\nrows = [[\"1\", \"0\"], [\"3/2\", \"-1/2\"]]\n",
                "rows[1][0]",
            ),
            (
                "float",
                "inputs = [\"a\", \"b\"]\nrows = [[1, 0], [0.5, 0.5]]\n",
                "rows[1][0]",
            ),
            (
                "unknown",
                "inputs = [\"a\", \"b\"]\nrows = [[\"1\", \"0\"], [\"0\", \"1\"]]\nw0 = 1\n",
                "w0",
            ),
        ] {
            let path = write(&format!("{name}.toml"), text);
            let e = load_randomizer(&path).unwrap_err().to_string();
            assert!(e.contains(&format!(": {field}:")), "{name}: {e}");
        }
    }
}
