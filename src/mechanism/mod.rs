//! Binary-input local randomizers: `W0`, `W1` on a finite output alphabet (Part I §2.1).
//!
//! Entries are exact rationals, or — for the families given by a real `ε0` — exact functions of
//! `a = e^{ε0}`, which each backend encloses at its own precision.  A [`Mechanism`] is
//! validated when it is built: rows non-negative, of equal length ≥ 2, each summing to exactly 1.

mod family;
pub(crate) mod parse;
pub mod polynomial;
pub mod randomizer;
mod reduce;
pub mod standard;

pub use family::{Family, LocalParameter};
pub use parse::{
    FAMILIES, FamilyMeaning, load_mechanism, mechanism_from_text, mechanism_from_text_as,
    parse_family_string, parse_family_string_as,
};
pub use reduce::Reduction;

use crate::arith::{ExpValue, Scalar};
use crate::error::{Error, Result};
use rug::Rational;

/// One probability `W_b(y)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// An exact rational.
    Exact(Rational),
    /// `num(a) / den(a)` with `a = e^{ε0}` irrational: polynomials in `a` with rational
    /// coefficients, highest degree first (degree 1 for a family's entries, higher for bundled
    /// messages' types).
    ExpFraction {
        num: Vec<Rational>,
        den: Vec<Rational>,
    },
}

impl Entry {
    /// The entry exactly: a rational, or its formula in `e^eps0`.
    pub fn text(&self) -> String {
        match self {
            Entry::Exact(q) => crate::enclosure::exact_string(q),
            Entry::ExpFraction { num, den } => {
                format!("({})/({})", polynomial::text(num), polynomial::text(den))
            }
        }
    }

    /// The entry at `e^eps0 = a`, exactly.
    pub(crate) fn value_at(&self, a: &Rational) -> Rational {
        match self {
            Entry::Exact(q) => q.clone(),
            Entry::ExpFraction { num, den } => polynomial::at(num, a) / polynomial::at(den, a),
        }
    }

    /// The two entries of k-ary randomized response given by a real ε0: the truthful output's
    /// `e^{ε0}/(e^{ε0} + k − 1)` and every other's `1/(e^{ε0} + k − 1)`.
    pub(crate) fn randomized_response(k: usize) -> [Entry; 2] {
        let den = vec![Rational::from(1), Rational::from(k as u64 - 1)];
        [
            Entry::ExpFraction {
                num: vec![Rational::from(1), Rational::new()],
                den: den.clone(),
            },
            Entry::ExpFraction {
                num: vec![Rational::new(), Rational::from(1)],
                den,
            },
        ]
    }
}

/// Every row is k-ary randomized response given by a real ε0 ([`Entry::randomized_response`]
/// with k the number of outputs): the truthful entry once, at an output of its own (a different
/// one per row), the other everywhere else.
pub(crate) fn rows_are_randomized_response(rows: &[Vec<Entry>]) -> bool {
    let Some(d) = rows.first().map(Vec::len).filter(|&d| d >= 2) else {
        return false;
    };
    let [truthful, other] = Entry::randomized_response(d);
    let mut columns = std::collections::HashSet::new();
    rows.iter().all(|row| {
        let at: Vec<usize> = (0..row.len()).filter(|&y| row[y] == truthful).collect();
        at.len() == 1
            && columns.insert(at[0])
            && row.iter().filter(|e| **e == other).count() == row.len() - 1
    })
}

/// A binary-input local randomizer `b ↦ W_b`.
#[derive(Clone, Debug)]
pub struct Mechanism {
    /// A name for reports: the file's `name`, the family string, or the file's stem.
    pub name: String,
    /// Output labels, one per symbol.
    pub outputs: Vec<String>,
    /// `rows[0] = W0`, `rows[1] = W1`.
    pub rows: [Vec<Entry>; 2],
    /// The real ε0 when entries are [`Entry::ExpFraction`].
    pub eps0: Option<Rational>,
    /// How the user gave it (`None` for a mechanism built in code).
    pub source: Option<MechanismSource>,
    /// `Some(K)` when this is the restriction to inputs 0 and 1 of a family defined on K > 2
    /// inputs (`k-rr:k=K,…,inputs=2`): reports say that it answers for binary inputs only.
    pub restriction_of: Option<usize>,
    /// `Some` when each user sends several messages (Part I §9): for the unbundled model the
    /// rows stay the per-message channel and the engines build the pair at distance m
    /// ([`Mechanism::unbundled_messages`]); a bundled mechanism's rows are already those of the
    /// message types (`multimessage::bundled`).
    pub messages: Option<Messages>,
}

/// How many messages each user sends and how the shuffler treats them (Part I §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Messages {
    /// m ≥ 1.
    pub count: u32,
    /// The user's m messages stay together as one symbol of `Y^m`.
    pub bundled: bool,
}

impl Messages {
    /// `unbundled` or `bundled`.
    pub fn model(&self) -> &'static str {
        if self.bundled { "bundled" } else { "unbundled" }
    }

    /// The phrase reports use, e.g. `3 messages per user, unbundled`.
    pub fn text(&self) -> String {
        format!("{} messages per user, {}", self.count, self.model())
    }

    /// As certificates and JSON reports carry it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "count": self.count, "model": self.model() })
    }

    /// Reads [`Messages::to_json`] back.
    pub fn from_json(v: &serde_json::Value) -> Option<Messages> {
        let count = u32::try_from(v["count"].as_u64()?).ok()?;
        let bundled = match v["model"].as_str()? {
            "bundled" => true,
            "unbundled" => false,
            _ => return None,
        };
        Some(Messages { count, bundled })
    }
}

/// A mechanism as the user gave it: the family string or file path, and the file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MechanismSource {
    pub spec: String,
    /// The file's text (`None` for a family string).
    pub text: Option<String>,
}

impl MechanismSource {
    /// The mechanism again, from exactly what the user gave.
    pub fn load(&self) -> Result<Mechanism> {
        self.load_as(FamilyMeaning::Current)
    }

    /// The mechanism again, with families read as `meaning` says (certificates of 0.1.x).
    pub fn load_as(&self, meaning: FamilyMeaning) -> Result<Mechanism> {
        match &self.text {
            Some(text) => mechanism_from_text_as(&self.spec, text, meaning),
            None => parse_family_string_as(&self.spec, meaning),
        }
    }
}

/// The channel in a backend: `W_b(y)` as backend values, with their exact zero pattern.
#[derive(Clone, Debug)]
pub struct Channel<S> {
    /// `w[b][y] = W_b(y)`.
    pub w: [Vec<S>; 2],
}

impl<S: Scalar> Channel<S> {
    /// The output alphabet size d.
    pub fn d(&self) -> usize {
        self.w[0].len()
    }
}

impl Mechanism {
    /// Builds and validates a mechanism from explicit rows.
    pub fn new(
        source_name: &str,
        name: String,
        outputs: Option<Vec<String>>,
        rows: [Vec<Entry>; 2],
        eps0: Option<Rational>,
    ) -> Result<Self> {
        let err = |field: &str, message: String| Error::Mechanism {
            source_name: source_name.to_string(),
            field: field.to_string(),
            message,
        };
        let d = rows[0].len();
        if d < 2 {
            return Err(err("w0", format!("needs at least 2 outputs, has {d}")));
        }
        if rows[1].len() != d {
            return Err(err(
                "w1",
                format!(
                    "has {} entries but w0 has {d}: both rows must list the same outputs",
                    rows[1].len()
                ),
            ));
        }
        let outputs = match outputs {
            Some(labels) => {
                if labels.len() != d {
                    return Err(err(
                        "outputs",
                        format!("has {} labels for {d} outputs", labels.len()),
                    ));
                }
                labels
            }
            None => (0..d).map(|y| y.to_string()).collect(),
        };
        let mechanism = Mechanism {
            name,
            outputs,
            rows,
            eps0,
            source: None,
            restriction_of: None,
            messages: None,
        };
        // Validation at a representative a = e^{ε0}: families are valid for every a > 0 by
        // construction, explicit rows are checked exactly.
        let a = Rational::from(2);
        for (b, row) in mechanism.rows.iter().enumerate() {
            let mut sum = Rational::new();
            for (y, entry) in row.iter().enumerate() {
                let v = entry.value_at(&a);
                if v < 0 {
                    return Err(err(
                        &format!("w{b}[{y}]"),
                        format!("is negative ({})", crate::enclosure::exact_string(&v)),
                    ));
                }
                if v > 1 {
                    return Err(err(
                        &format!("w{b}[{y}]"),
                        format!("exceeds 1 ({})", crate::enclosure::exact_string(&v)),
                    ));
                }
                sum += v;
            }
            if sum != 1 {
                return Err(err(
                    &format!("w{b}"),
                    format!(
                        "entries sum to {}, not exactly 1",
                        crate::enclosure::exact_string(&sum)
                    ),
                ));
            }
        }
        Ok(mechanism)
    }

    /// The output alphabet size d.
    pub fn d(&self) -> usize {
        self.rows[0].len()
    }

    /// The name with the messages per user when there are several, for titles.
    pub fn title(&self) -> String {
        match &self.messages {
            Some(m) => format!("{} ({})", self.name, m.text()),
            None => self.name.clone(),
        }
    }

    /// The messages per user the engines shift by: m for the unbundled model, else 1 (a
    /// bundled mechanism is a single-message mechanism on types).
    pub fn unbundled_messages(&self) -> usize {
        match self.messages {
            Some(Messages {
                count,
                bundled: false,
            }) => count as usize,
            _ => 1,
        }
    }

    /// The input domain in one phrase, for the first lines of every report.
    pub fn domain_text(&self) -> String {
        let domain = match self.restriction_of {
            Some(k) => format!(
                "binary inputs {{0, 1}}: the restriction of a {k}-input randomizer to two of its inputs"
            ),
            None => "binary inputs {0, 1}".to_string(),
        };
        match &self.messages {
            Some(m) => format!("{domain}; {}", m.text()),
            None => domain,
        }
    }

    /// The input domain as reports carry it in JSON (`input_domain`).
    pub fn domain_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "inputs": ["0", "1"],
            "count": 2,
            "restriction_of": self.restriction_of,
        });
        if let Some(m) = &self.messages {
            v["messages"] = m.to_json();
        }
        v
    }

    /// The mechanism as JSON: name, outputs, rows (exact strings, or formulas in `e^eps0`), and
    /// `eps0` for the families given by a real ε0.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "name": self.name,
            "outputs": self.outputs,
            "w0": self.rows[0].iter().map(Entry::text).collect::<Vec<_>>(),
            "w1": self.rows[1].iter().map(Entry::text).collect::<Vec<_>>(),
        });
        if let Some(eps0) = &self.eps0 {
            v["eps0"] = serde_json::json!(crate::enclosure::exact_string(eps0));
        }
        if let Some(messages) = &self.messages {
            v["messages"] = messages.to_json();
        }
        v
    }

    /// Randomized response given by a real ε0 (`k-rr:…,eps0=…,inputs=2`, one message): each row
    /// holds `e^{ε0}/(e^{ε0} + k − 1)` once, at its own output, and `1/(e^{ε0} + k − 1)`
    /// elsewhere.  At a smaller `e^{ε0}` it is a post-processing of itself at a larger one (keep
    /// the output with some probability, else draw it uniformly).
    pub fn is_randomized_response(&self) -> bool {
        self.messages.is_none()
            && self.eps0.as_ref().is_some_and(|e| *e > 0)
            && rows_are_randomized_response(&self.rows)
    }

    /// For randomized response given by a real ε0: itself on rational rows at the two ends of
    /// the `bits`-bit bracket `a_lo < e^{ε0} < a_hi`, between which every δ, ε and divergence
    /// of the true mechanism lies (data processing, [`Mechanism::is_randomized_response`]).
    /// `None` for any other mechanism.
    pub fn rational_bracket(&self, bits: u32) -> Option<[Mechanism; 2]> {
        let eps0 = self
            .eps0
            .as_ref()
            .filter(|_| self.is_randomized_response())?;
        let (a_lo, a_hi) = crate::arith::exp_bracket(eps0, bits);
        let at = |a: &Rational| {
            let row = |b: usize| {
                self.rows[b]
                    .iter()
                    .map(|e| Entry::Exact(e.value_at(a)))
                    .collect()
            };
            Mechanism {
                rows: [row(0), row(1)],
                eps0: None,
                ..self.clone()
            }
        };
        Some([at(&a_lo), at(&a_hi)])
    }

    /// True when every entry is rational (so the exact backend applies).
    pub fn is_rational(&self) -> bool {
        self.rows
            .iter()
            .flatten()
            .all(|e| matches!(e, Entry::Exact(_)))
    }

    /// Checks that the exact backend can take this mechanism (all entries rational).
    pub fn require_rational(&self) -> Result<()> {
        if self.is_rational() {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "{}: the exact backend needs rational mechanism entries (give exp_eps0 as a rational, or use --backend interval or mpfr)",
            self.name
        )))
    }

    /// `W_b(y) = 0` exactly.  Family entries are always positive.
    pub fn is_zero(&self, b: usize, y: usize) -> bool {
        matches!(&self.rows[b][y], Entry::Exact(q) if *q == 0)
    }

    /// True when both rows have full support (`δ_full > 0` in Part I §2.3).
    pub fn has_full_support(&self) -> bool {
        (0..self.d()).all(|y| !self.is_zero(0, y) && !self.is_zero(1, y))
    }

    /// The exact rows, when the mechanism is rational.
    pub fn rational_rows(&self) -> Option<[Vec<Rational>; 2]> {
        let row = |b: usize| -> Option<Vec<Rational>> {
            self.rows[b]
                .iter()
                .map(|e| match e {
                    Entry::Exact(q) => Some(q.clone()),
                    Entry::ExpFraction { .. } => None,
                })
                .collect()
        };
        Some([row(0)?, row(1)?])
    }

    /// The channel in backend `S`: each entry enclosed (exactly, for rational entries).
    pub fn channel<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Channel<S>> {
        let a = match &self.eps0 {
            Some(eps0) if !self.is_rational() => match S::exp_rational(eps0, ctx) {
                ExpValue::Enclosed(a) => Some(a),
                ExpValue::Bracket { .. } => {
                    return Err(Error::Unsupported(format!(
                        "{}: entries depend on e^eps0 with eps0 = {}, which is irrational; the exact \
                         backend needs rational entries (give exp_eps0 as a rational instead, or use \
                         --backend interval or mpfr)",
                        self.name,
                        crate::enclosure::exact_string(eps0)
                    )));
                }
            },
            _ => None,
        };
        let convert = |e: &Entry| -> S {
            match e {
                Entry::Exact(q) => S::from_rational(q, ctx),
                Entry::ExpFraction { num, den } => {
                    let a = a
                        .as_ref()
                        .expect("a = e^eps0 is available for family entries");
                    // Horner's rule at x over the coefficients in the given order.
                    let horner = |c: &mut dyn Iterator<Item = &Rational>, x: &S| {
                        c.fold(S::zero(ctx), |acc, q| {
                            acc.mul(x).add(&S::from_rational(q, ctx))
                        })
                    };
                    if num.len() <= 2 && den.len() <= 2 || a.f64_bounds().0 < 1.0 {
                        return horner(&mut num.iter(), a).div(&horner(&mut den.iter(), a));
                    }
                    // Degree ≥ 2 (bundled types): `num(a)/den(a) = a^(Dn − Dd) num~(b)/den~(b)`
                    // with `b = 1/a ≤ 1` and the reversed polynomials, so that `a^m` never
                    // leaves the double range.
                    let b = S::one(ctx).div(a);
                    let value =
                        horner(&mut num.iter().rev(), &b).div(&horner(&mut den.iter().rev(), &b));
                    match num.len().cmp(&den.len()) {
                        std::cmp::Ordering::Equal => value,
                        std::cmp::Ordering::Less => value.mul(&crate::arith::power(
                            &b,
                            (den.len() - num.len()) as u64,
                            ctx,
                        )),
                        std::cmp::Ordering::Greater => {
                            value.mul(&crate::arith::power(a, (num.len() - den.len()) as u64, ctx))
                        }
                    }
                }
            }
        };
        Ok(Channel {
            w: [
                self.rows[0].iter().map(convert).collect(),
                self.rows[1].iter().map(convert).collect(),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use inari::Interval;

    fn q(s: &str) -> Rational {
        crate::enclosure::parse_rational(s).unwrap()
    }

    fn rows(a: &[&str], b: &[&str]) -> [Vec<Entry>; 2] {
        [
            a.iter().map(|s| Entry::Exact(q(s))).collect(),
            b.iter().map(|s| Entry::Exact(q(s))).collect(),
        ]
    }

    #[test]
    fn validation_names_the_field() {
        let e = Mechanism::new(
            "m.toml",
            "m".into(),
            None,
            rows(&["0.7", "0.2"], &["0.5", "0.5"]),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("m.toml") && e.contains("w0") && e.contains("sum to 0.9"),
            "{e}"
        );
        let e = Mechanism::new(
            "m.toml",
            "m".into(),
            None,
            rows(&["1.1", "-0.1"], &["0.5", "0.5"]),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("w0[0]"), "{e}");
        let e = Mechanism::new("m.toml", "m".into(), None, rows(&["1"], &["1"]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 2"), "{e}");
        let e = Mechanism::new(
            "m.toml",
            "m".into(),
            None,
            rows(&["0.5", "0.5"], &["1", "0", "0"]),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("w1") && e.contains("same outputs"), "{e}");
    }

    #[test]
    fn ratio_range() {
        let m = Mechanism::new(
            "m",
            "m".into(),
            None,
            rows(&["0.5", "0.5", "0"], &["0.25", "0.5", "0.25"]),
            None,
        )
        .unwrap();
        assert!(!m.has_full_support());
        let c = m.channel::<Interval>(&()).unwrap();
        assert!(c.w[0][2].is_exact_zero());
        let exact = m.channel::<Rational>(&ExactCtx::default()).unwrap();
        assert_eq!(exact.w[1][0], q("1/4"));
    }
}
