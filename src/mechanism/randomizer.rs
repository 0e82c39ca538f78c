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
//! `k-rr:k=K,exp_eps0=C,inputs=I` is k-ary randomized response on I-valued inputs
//! (`2 ≤ I ≤ K`; input i is reported truthfully as symbol i).  Without `inputs`, family strings
//! and `w0`/`w1` files are the binary-input mechanisms of [`super::parse`].

use super::parse::{check_keys, exact_number, parse_document};
use super::{Entry, Mechanism, MechanismSource, load_mechanism};
use crate::arith::Scalar;
use crate::error::{Error, Result};
use rug::Rational;
use serde_json::Value;

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
        }
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

/// Reads a randomizer: `k-rr:…,inputs=I`, a file with `inputs`, or any binary-input mechanism.
pub fn load_randomizer(spec: &str) -> Result<Randomizer> {
    if spec.starts_with("k-rr:") && !std::path::Path::new(spec).exists() {
        return k_rr_randomizer(spec);
    }
    if std::path::Path::new(spec).exists() {
        let text = std::fs::read_to_string(spec).map_err(|e| Error::Io {
            path: spec.to_string(),
            message: format!("cannot read mechanism file: {e}"),
        })?;
        if let Value::Object(map) = parse_document(spec, &text)?
            && map.contains_key("inputs")
        {
            let mut r = randomizer_from_map(spec, &map)?;
            r.source = Some(MechanismSource {
                spec: spec.to_string(),
                text: Some(text),
            });
            return Ok(r);
        }
    }
    load_mechanism(spec).map(Randomizer::from_mechanism)
}

/// `k-rr:k=K,…,inputs=I`: the binary-input k-RR's two rows give the truthful and the other
/// entry; input i reports symbol i truthfully.
fn k_rr_randomizer(spec: &str) -> Result<Randomizer> {
    let err = |message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: "inputs".to_string(),
        message,
    };
    let params = spec.strip_prefix("k-rr:").unwrap_or("");
    let mut inputs = None;
    let mut rest = Vec::new();
    for part in params.split(',').filter(|p| !p.trim().is_empty()) {
        match part.split_once('=') {
            Some((key, value)) if key.trim() == "inputs" => {
                if inputs.is_some() {
                    return Err(err("given twice".into()));
                }
                inputs = Some(value.trim().parse::<u32>().map_err(|_| {
                    err(format!("must be a whole number, got \"{}\"", value.trim()))
                })?);
            }
            _ => rest.push(part),
        }
    }
    let binary = super::parse_family_string(&format!("k-rr:{}", rest.join(",")))?;
    let Some(count) = inputs else {
        let mut r = Randomizer::from_mechanism(binary);
        r.name = spec.to_string();
        return Ok(r);
    };
    let k = binary.d() as u32;
    if !(2..=k).contains(&count) {
        return Err(err(format!("must lie between 2 and k = {k}, got {count}")));
    }
    let (truthful, other) = (binary.rows[0][0].clone(), binary.rows[0][1].clone());
    let rows = (0..count as usize)
        .map(|x| super::family::truthful_row(k as usize, x, &truthful, &other))
        .collect();
    Ok(Randomizer {
        name: spec.to_string(),
        inputs: (0..count).map(|x| x.to_string()).collect(),
        outputs: binary.outputs,
        rows,
        eps0: binary.eps0,
        source: Some(MechanismSource {
            spec: spec.to_string(),
            text: None,
        }),
    })
}

/// A randomizer from a file's table with `inputs` and `rows` (every error names the field).
fn randomizer_from_map(spec: &str, map: &serde_json::Map<String, Value>) -> Result<Randomizer> {
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
        // Without inputs: the binary-input k-RR.
        assert_eq!(
            load_randomizer("k-rr:k=4,exp_eps0=3")
                .unwrap()
                .input_count(),
            2
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
