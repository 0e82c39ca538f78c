//! The limit experiments of Part III as pairs to query: `--experiment poisson-shift:lambda=L`,
//! `skellam-shift:a=A,b=B`, `gaussian-shift:mu=M`, or a compound-Poisson file
//!
//! ```toml
//! name = "two jumps"               # optional
//! kind = "compound-poisson"        # optional
//! shift = ["1", "0"]               # Δ: Q = L(J + Δ)
//! [[jumps]]                        # J = Σ C_i v_i, C_i ~ Poi(intensity)
//! vector = ["1", "0"]
//! intensity = "1/2"
//! [[jumps]]
//! vector = ["0", "1"]
//! intensity = "1/3"
//! ```
//!
//! Entries are exact strings (decimals or fractions), as in mechanism files.  The lattice
//! experiments run on the pair engine's jobs ([`lattice::pair_law`]); the Gaussian shift on its
//! closed forms ([`gaussian`]).

use super::gaussian;
use super::lattice::{self, CompoundPoisson, Jump, MAX_INTENSITY};
use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::arith::mpfr::MpfrCtx;
use crate::enclosure::{Enclosure, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::exact::divergence::Divergences;
use crate::mechanism::parse::{check_keys, exact_number, parse_document};
use crate::query::{
    Backend, Built, Computed, DeltaJob, DeltaRow, DivergenceJob, EpsilonJob, EpsilonRow, PairJob,
    PairSource, Widths,
};
use rug::Rational;
use serde_json::{Map, Value, json};

/// The model behind a limit experiment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Model {
    /// `(L(J), L(J + Δ))` for a compound-Poisson J on a lattice.
    Lattice(CompoundPoisson),
    /// `(N(0, 1), N(μ, 1))`.
    Gaussian { mu: Rational },
}

/// A limit experiment, named as the user gave it.
#[derive(Clone, Debug)]
pub struct LimitExperiment {
    pub name: String,
    /// `poisson-shift`, `skellam-shift`, `gaussian-shift` or `compound-poisson`.
    pub kind: &'static str,
    pub model: Model,
    /// The parameters as given (exact strings), for reports.
    pub parameters: Value,
    /// The compound-Poisson file it was read from (`None` for a named kind), so that a
    /// certificate records what was computed and not only a path.
    pub file: Option<ExperimentFile>,
}

/// A compound-Poisson experiment file: its path as given and its text.
#[derive(Clone, Debug)]
pub struct ExperimentFile {
    pub path: String,
    pub text: String,
}

/// Largest μ of the Gaussian shift (beyond it every curve is 1 − O(e^{−μ²/8}) in any
/// precision worth printing).
const MAX_MU: u64 = 1000;

impl LimitExperiment {
    /// The experiment as JSON: kind, name, parameters.
    pub fn to_json(&self) -> Value {
        json!({ "kind": self.kind, "name": self.name, "parameters": self.parameters })
    }

    /// How P and Q are defined, for reports.
    pub fn pair_text(&self) -> &'static str {
        match self.kind {
            "poisson-shift" => "P = Poi(lambda), Q = 1 + Poi(lambda); qp means delta_{Q||P}",
            "skellam-shift" => {
                "P = L(U - V), Q = L(U - V + 1), U ~ Poi(a), V ~ Poi(b); qp means delta_{Q||P}"
            }
            "gaussian-shift" => "P = N(0, 1), Q = N(mu, 1); qp means delta_{Q||P}",
            _ => {
                "P = L(J), Q = L(J + shift), J = sum of Poi(intensity) counts times jump vectors; qp means delta_{Q||P}"
            }
        }
    }
}

/// The parameters of `kind:key=value,…`, each given once, none unknown, all present.
fn parameters(spec: &str, text: &str, keys: &[&str]) -> Result<Vec<Rational>> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: field.to_string(),
        message,
    };
    let mut found: Vec<Option<Rational>> = vec![None; keys.len()];
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(err(part.trim(), "expected key=value".into()));
        };
        let key = key.trim();
        let Some(i) = keys.iter().position(|k| *k == key) else {
            return Err(err(
                key,
                format!("unknown parameter; expected: {}", keys.join(", ")),
            ));
        };
        if found[i].is_some() {
            return Err(err(key, "given twice".into()));
        }
        let v = parse_rational(value.trim()).ok_or_else(|| {
            err(
                key,
                format!("\"{}\" is not an exact decimal or fraction", value.trim()),
            )
        })?;
        found[i] = Some(v);
    }
    keys.iter()
        .zip(found)
        .map(|(k, v)| v.ok_or_else(|| err(k, "missing".into())))
        .collect()
}

fn check_range(spec: &str, field: &str, v: &Rational, positive: bool, max: u64) -> Result<()> {
    let low_ok = if positive { *v > 0 } else { *v >= 0 };
    if !low_ok || *v > max {
        let low = if positive { "(0" } else { "[0" };
        return Err(Error::Mechanism {
            source_name: spec.to_string(),
            field: field.to_string(),
            message: format!("must lie in {low}, {max}], got {}", exact_string(v)),
        });
    }
    Ok(())
}

/// Reads an experiment from its string form or a compound-Poisson file.
pub fn load_experiment(spec: &str) -> Result<LimitExperiment> {
    let (kind, text) = spec.split_once(':').unwrap_or((spec, ""));
    let named = |kind: &'static str, model: Model, parameters: Value| LimitExperiment {
        name: spec.to_string(),
        kind,
        model,
        parameters,
        file: None,
    };
    match kind {
        "poisson-shift" => {
            let [lambda] = <[Rational; 1]>::try_from(parameters(spec, text, &["lambda"])?)
                .expect("one parameter");
            check_range(spec, "lambda", &lambda, true, MAX_INTENSITY)?;
            let p = json!({ "lambda": exact_string(&lambda) });
            Ok(named(
                "poisson-shift",
                Model::Lattice(CompoundPoisson::poisson_shift(lambda)),
                p,
            ))
        }
        "skellam-shift" => {
            let [a, b] = <[Rational; 2]>::try_from(parameters(spec, text, &["a", "b"])?)
                .expect("two parameters");
            check_range(spec, "a", &a, false, MAX_INTENSITY)?;
            check_range(spec, "b", &b, false, MAX_INTENSITY)?;
            if a == 0 && b == 0 {
                return Err(Error::Mechanism {
                    source_name: spec.to_string(),
                    field: "a".into(),
                    message: "a and b cannot both be 0".into(),
                });
            }
            let p = json!({ "a": exact_string(&a), "b": exact_string(&b) });
            Ok(named(
                "skellam-shift",
                Model::Lattice(CompoundPoisson::skellam_shift(a, b)),
                p,
            ))
        }
        "gaussian-shift" => {
            let [mu] =
                <[Rational; 1]>::try_from(parameters(spec, text, &["mu"])?).expect("one parameter");
            check_range(spec, "mu", &mu, true, MAX_MU)?;
            let p = json!({ "mu": exact_string(&mu) });
            Ok(named("gaussian-shift", Model::Gaussian { mu }, p))
        }
        _ => compound_poisson_file(spec),
    }
}

/// A compound-Poisson experiment file (module doc).
fn compound_poisson_file(spec: &str) -> Result<LimitExperiment> {
    let text = std::fs::read_to_string(spec).map_err(|e| Error::Io {
        path: spec.to_string(),
        message: format!(
            "cannot read experiment file ({e}); known experiments: poisson-shift:lambda=L, skellam-shift:a=A,b=B, gaussian-shift:mu=M, or a compound-Poisson file"
        ),
    })?;
    compound_poisson_text(spec, &text)
}

/// A compound-Poisson experiment from the text of a file named `spec` (a certificate carries
/// the text, so `verify` needs no file).
pub fn compound_poisson_text(spec: &str, text: &str) -> Result<LimitExperiment> {
    let err = |field: &str, message: String| Error::Mechanism {
        source_name: spec.to_string(),
        field: field.to_string(),
        message,
    };
    let Value::Object(map) = parse_document(spec, text)? else {
        return Err(err("(file)", "the top level must be a table/object".into()));
    };
    check_keys(spec, &map, &["name", "kind", "shift", "jumps"])?;
    match map.get("kind") {
        None => {}
        Some(Value::String(k)) if k == "compound-poisson" => {}
        Some(_) => return Err(err("kind", "must be \"compound-poisson\"".into())),
    }
    let name = match map.get("name") {
        None => spec.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(err("name", "must be a string".into())),
    };
    let vector = |field: &str, v: Option<&Value>| -> Result<Vec<Rational>> {
        let Some(Value::Array(items)) = v else {
            return Err(err(
                field,
                "must be a list of exact numbers such as [\"1\", \"-1/2\"]".into(),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| exact_number(spec, &format!("{field}[{i}]"), x))
            .collect()
    };
    let shift = vector("shift", map.get("shift"))?;
    let Some(Value::Array(items)) = map.get("jumps") else {
        return Err(err(
            "jumps",
            "must be a list of tables {vector, intensity}".into(),
        ));
    };
    let mut jumps = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("jumps[{i}]");
        let Value::Object(jump) = item else {
            return Err(err(&field, "must be a table {vector, intensity}".into()));
        };
        check_jump_keys(spec, &field, jump)?;
        let intensity = match jump.get("intensity") {
            Some(v) => exact_number(spec, &format!("{field}.intensity"), v)?,
            None => return Err(err(&format!("{field}.intensity"), "missing".into())),
        };
        jumps.push(Jump {
            vector: vector(&format!("{field}.vector"), jump.get("vector"))?,
            intensity,
        });
    }
    let field = CompoundPoisson::new(spec, jumps, shift)?;
    let parameters = json!({
        "shift": field.shift.iter().map(exact_string).collect::<Vec<_>>(),
        "jumps": field.jumps.iter().map(|j| json!({
            "vector": j.vector.iter().map(exact_string).collect::<Vec<_>>(),
            "intensity": exact_string(&j.intensity),
        })).collect::<Vec<_>>(),
    });
    Ok(LimitExperiment {
        name,
        kind: "compound-poisson",
        model: Model::Lattice(field),
        parameters,
        file: Some(ExperimentFile {
            path: spec.to_string(),
            text: text.to_string(),
        }),
    })
}

fn check_jump_keys(spec: &str, field: &str, jump: &Map<String, Value>) -> Result<()> {
    for key in jump.keys() {
        if key != "vector" && key != "intensity" {
            return Err(Error::Mechanism {
                source_name: spec.to_string(),
                field: format!("{field}.{key}"),
                message: "unknown field; expected one of: vector, intensity".into(),
            });
        }
    }
    Ok(())
}

/// The highest MPFR precision the limit experiments run with (their windows and quadrature
/// cells grow with the precision).
pub const MAX_EXPERIMENT_BITS: u32 = 2048;

/// A limit experiment and how to compute on it.
#[derive(Clone, Debug)]
pub struct ExperimentQuery {
    pub experiment: LimitExperiment,
    pub backend: Backend,
    pub escalate_above: Option<f64>,
}

fn no_exact_backend() -> Error {
    Error::argument(
        "--backend",
        "the limit experiments have irrational probabilities (e^-λ, Φ); use interval or mpfr",
    )
}

impl PairSource for ExperimentQuery {
    fn backend(&self) -> Backend {
        self.backend
    }

    fn escalate_above(&self) -> Option<f64> {
        self.escalate_above
    }

    fn exact_ctx(&self) -> ExactCtx {
        ExactCtx::default()
    }

    fn check_exact(&self) -> Result<()> {
        Err(no_exact_backend())
    }

    /// A limit experiment's omitted part is bounded by its own structure (`Omission`).
    fn build<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Built<S>> {
        match &self.experiment.model {
            Model::Lattice(field) => Ok(Built {
                law: lattice::pair_law(field, ctx)?,
                canonical_states_checked: None,
            }),
            Model::Gaussian { .. } => Err(Error::argument(
                "--experiment",
                "the Gaussian shift has no finite pair of laws (it is answered in closed form)",
            )),
        }
    }
}

/// A pair job that also has the Gaussian shift's closed form.
pub trait ExperimentJob: PairJob {
    fn gaussian(&self, mu: &Rational, ctx: &MpfrCtx) -> Result<Self::Output>;

    /// The relative width that more precision can narrow (escalation looks only at this).
    fn precision_limited_width(output: &Self::Output) -> f64 {
        output.worst_relative_width(1e-12)
    }
}

impl ExperimentJob for DeltaJob {
    fn gaussian(&self, mu: &Rational, ctx: &MpfrCtx) -> Result<Vec<DeltaRow>> {
        Ok(self
            .thresholds
            .iter()
            .map(|t| {
                let d = gaussian::delta(mu, t, ctx);
                DeltaRow {
                    threshold: t.clone(),
                    qp: d.clone(),
                    pq: d.clone(),
                    two_sided: d,
                }
            })
            .collect())
    }
}

impl ExperimentJob for EpsilonJob {
    fn gaussian(&self, mu: &Rational, ctx: &MpfrCtx) -> Result<EpsilonRow> {
        let e = gaussian::epsilon(mu, &self.delta, ctx)?;
        Ok(EpsilonRow {
            two_sided: e.eps.clone(),
            qp: e.clone(),
            pq: e,
        })
    }
}

/// The Gaussian shift's laws are mutually absolutely continuous: no singular mass.
impl ExperimentJob for crate::query::SingularJob {
    fn gaussian(&self, _mu: &Rational, _ctx: &MpfrCtx) -> Result<[Enclosure; 2]> {
        Ok([
            Enclosure::point(Rational::new()),
            Enclosure::point(Rational::new()),
        ])
    }
}

impl ExperimentJob for DivergenceJob {
    fn gaussian(&self, mu: &Rational, ctx: &MpfrCtx) -> Result<Divergences> {
        self.check_orders()?;
        Ok(gaussian::divergences(mu, &self.renyi_orders, ctx))
    }

    /// The JSD's width comes from its quadrature (about 10⁻¹¹ relative), not the precision.
    fn precision_limited_width(output: &Divergences) -> f64 {
        let mut closed_forms = output.clone();
        closed_forms.jsd = crate::enclosure::Enclosure::point(Rational::new());
        closed_forms.worst_relative_width(1e-12)
    }
}

/// Runs `job` on the experiment: the lattice experiments through the pair engine's backends
/// (with the same escalation), the Gaussian shift in MPFR (128 bits with the interval backend,
/// doubling up to 512 while wider than the escalation target).
pub fn answer<J: ExperimentJob>(query: &ExperimentQuery, job: &J) -> Result<Computed<J::Output>> {
    let Model::Gaussian { mu } = &query.experiment.model else {
        return crate::query::answer(query, job);
    };
    let (mut precision, escalate) = match query.backend {
        Backend::Exact => return Err(no_exact_backend()),
        Backend::Mpfr { precision } => (precision, None),
        Backend::Interval => (128, query.escalate_above),
    };
    loop {
        let result = job.gaussian(mu, &MpfrCtx { precision })?;
        let wide = escalate.is_some_and(|t| J::precision_limited_width(&result) > t);
        if !wide || precision >= 512 {
            return Ok(Computed {
                result,
                arithmetic: format!("mpfr-{precision}"),
                engine: "closed-form",
                states: 0,
                omitted: Rational::new(),
                canonical_states_checked: None,
            });
        }
        precision *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experiment_strings_and_their_errors() {
        let e = load_experiment("poisson-shift:lambda=5/2").unwrap();
        assert_eq!(e.kind, "poisson-shift");
        assert_eq!(
            e.model,
            Model::Lattice(CompoundPoisson::poisson_shift(Rational::from((5, 2))))
        );
        let e = load_experiment("gaussian-shift:mu=0.5").unwrap();
        assert_eq!(
            e.model,
            Model::Gaussian {
                mu: Rational::from((1, 2))
            }
        );
        for (bad, field) in [
            ("poisson-shift:lambda=0", "lambda"),
            ("poisson-shift:lambda=-1", "lambda"),
            ("poisson-shift:lambda=1,lambda=2", "lambda"),
            ("poisson-shift:mu=1", "mu"),
            ("poisson-shift", "lambda"),
            ("skellam-shift:a=1", "b"),
            ("skellam-shift:a=0,b=0", "a"),
            ("gaussian-shift:mu=abc", "mu"),
            ("gaussian-shift:mu=1e9", "mu"),
        ] {
            let e = load_experiment(bad).unwrap_err().to_string();
            assert!(e.contains(&format!(": {field}:")), "{bad}: {e}");
        }
        let e = load_experiment("no-such-thing").unwrap_err().to_string();
        assert!(e.contains("known experiments"), "{e}");
    }
}
