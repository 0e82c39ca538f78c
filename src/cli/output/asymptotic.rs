//! `constants` and `check` output.  Predictions are always labelled as such; certified values
//! are enclosures.

use super::table;
use crate::asymptotic::Constants;
use crate::asymptotic::constants::FisherConstants;
use crate::check::{CheckAt, CheckQuery, CheckReport, Comparison, CurvePoint};
use crate::enclosure::{Enclosure, exact_string};
use crate::mechanism::Mechanism;
use rug::Rational;
use serde_json::{Value, json};

/// I_π and the mixture underestimate on a grid of π.
pub struct ConstantsRange {
    pub lo: Rational,
    pub hi: Rational,
    /// `(π, I_π, 1 − I^mix/I_π)` at each grid point.
    pub points: Vec<(Rational, Enclosure, Enclosure)>,
}

/// `{"lo", "hi", "f64"}`: the certified value and a double for reading.
fn value_json(e: &Enclosure) -> Value {
    let mut v = e.to_json();
    v["f64"] = json!(e.mid_f64());
    v
}

/// A value for a table: the exact rational when short, otherwise the enclosure.
fn show(e: &Enclosure) -> String {
    match e.lo().finite() {
        Some(q) if e.is_point() && exact_string(q).len() <= 24 => exact_string(q),
        _ if e.is_point() => format!("{:.12} (exact rational, see --json)", e.mid_f64()),
        _ => e.to_string(),
    }
}

fn values(c: &Constants) -> FisherConstants<Enclosure> {
    match &c.exact {
        Some(exact) => exact.map(crate::arith::Scalar::enclosure),
        None => c.enclosed.map(crate::arith::Scalar::enclosure),
    }
}

/// `1 − I^mix/I_π`: exact for rational mechanisms; undefined (`None`) when `I_π = 0` (W0 = W1).
fn underestimate(c: &Constants) -> Option<Enclosure> {
    use crate::arith::Scalar;
    if c.enclosed.i_pi.is_exact_zero() || c.exact.as_ref().is_some_and(|x| x.i_pi == 0) {
        return None;
    }
    Some(match &c.exact {
        Some(x) => Enclosure::point(Rational::from(1) - Rational::from(&x.i_mix / &x.i_pi)),
        None => {
            let e = &c.enclosed;
            crate::arith::mpfr::MpfrInterval::one(&crate::asymptotic::predictions::PREDICTION_CTX)
                .sub(&e.i_mix.div(&e.i_pi))
                .enclosure()
        }
    })
}

/// A double for reading: fixed notation for moderate magnitudes, scientific otherwise.
fn approx(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:.6e}")
    } else {
        format!("{x:.6}")
    }
}

/// The local scale `μ = √(m·I_π/n)` of users sending m unbundled messages (m = 1 otherwise;
/// a bundled mechanism's constants are its types').
fn mu_n(m: &Mechanism, c: &Constants, n: u64) -> Enclosure {
    use crate::arith::Scalar;
    let messages = m.unbundled_messages() as u64;
    crate::asymptotic::predictions::mu_messages(&c.enclosed.i_pi, messages, n).enclosure()
}

/// How [`mu_n`] is computed, for labels.
fn mu_formula(m: &Mechanism) -> &'static str {
    if m.unbundled_messages() > 1 {
        "√(m·I_π/n)"
    } else {
        "√(I_π/n)"
    }
}

/// What the constants are of, for users sending several messages.
fn messages_note(m: &Mechanism) -> Option<String> {
    let messages = m.messages?;
    Some(if messages.bundled {
        format!(
            "the constants are those of the {} message types (outputs of one bundle); at π = 0, \
             I_0 = χ² = (1 + χ²(W1‖W0))^m − 1 of one message's χ², and μ_n is the leading \
             Gaussian scale (uncertified)",
            m.d()
        )
    } else {
        format!(
            "the constants are one message's; the pair of m = {} unbundled messages is m single \
             steps apart, so its leading Gaussian scale is μ_n = √(m·I_π/n) (derived from Part \
             I §9.2's display, whose statement is lost; uncertified)",
            messages.count
        )
    })
}

fn extremes(points: &[(Rational, Enclosure)]) -> Value {
    let by_mid = |a: &&(Rational, Enclosure), b: &&(Rational, Enclosure)| {
        a.1.mid_f64().total_cmp(&b.1.mid_f64())
    };
    let min = points.iter().min_by(by_mid).expect("grid");
    let max = points.iter().max_by(by_mid).expect("grid");
    json!({
        "min": { "pi": exact_string(&min.0), "value": value_json(&min.1) },
        "max": { "pi": exact_string(&max.0), "value": value_json(&max.1) },
    })
}

pub fn constants_json(
    m: &Mechanism,
    at: Option<&Constants>,
    n: Option<u64>,
    range: Option<&ConstantsRange>,
) -> Value {
    let mut v = json!({ "command": "constants", "certified": true, "mechanism": m.to_json(), "input_domain": m.domain_json() });
    if let Some(c) = at {
        let x = values(c);
        let vec = |v: &[Enclosure]| v.iter().map(value_json).collect::<Vec<_>>();
        let mat = |m: &[Vec<Enclosure>]| m.iter().map(|r| vec(r)).collect::<Vec<_>>();
        v["pi"] = json!(exact_string(&x.pi));
        v["v"] = json!(vec(&x.v));
        v["sigma0"] = json!(mat(&x.sigma0));
        v["sigma1"] = json!(mat(&x.sigma1));
        v["sigma_pi"] = json!(mat(&x.sigma_pi));
        v["score"] = json!(vec(&x.score));
        v["i_pi"] = value_json(&x.i_pi);
        v["i_mix"] = value_json(&x.i_mix);
        v["mixture_underestimate"] = underestimate(c).map_or(Value::Null, |u| value_json(&u));
        v["chi2_w1_w0"] = value_json(&x.chi2_10);
        v["chi2_w0_w1"] = value_json(&x.chi2_01);
        v["mu3"] = value_json(&x.mu3);
        if let Some(n) = n {
            v["n"] = json!(n);
            v["mu_n"] = value_json(&mu_n(m, c, n));
            v["mu_n_formula"] = json!(mu_formula(m));
            if let Some(note) = messages_note(m) {
                v["messages_note"] = json!(note);
            }
        }
    }
    if let Some(r) = range {
        let i_pi: Vec<(Rational, Enclosure)> = r
            .points
            .iter()
            .map(|p| (p.0.clone(), p.1.clone()))
            .collect();
        let under: Vec<(Rational, Enclosure)> = r
            .points
            .iter()
            .map(|p| (p.0.clone(), p.2.clone()))
            .collect();
        v["range"] = json!({
            "pi": [exact_string(&r.lo), exact_string(&r.hi)],
            "grid_points": r.points.len(),
            "note": "extremes over the grid; each grid value is certified",
            "i_pi": extremes(&i_pi),
            "mixture_underestimate": extremes(&under),
        });
    }
    v
}

pub fn constants_text(
    m: &Mechanism,
    at: Option<&Constants>,
    n: Option<u64>,
    range: Option<&ConstantsRange>,
) -> String {
    let mut s = format!("shufflecert constants: {}\n{}\n", m.name, m.domain_text());
    s += "every value is exact (a rational) or a certified enclosure (Part I §3, §6)\n\n";
    if let Some(c) = at {
        let x = values(c);
        s += &format!("composition π = {}\n\n", exact_string(&x.pi));
        let vec =
            |v: &[Enclosure]| format!("({})", v.iter().map(show).collect::<Vec<_>>().join(", "));
        let mut rows = vec![
            vec![
                "I_π = vᵀΣ_π⁺v (fixed composition)".to_string(),
                show(&x.i_pi),
                approx(x.i_pi.mid_f64()),
            ],
            vec![
                "I_π^mix = Σ v²/f_π (i.i.d. mixture proxy)".into(),
                show(&x.i_mix),
                approx(x.i_mix.mid_f64()),
            ],
            match underestimate(c) {
                Some(u) => vec![
                    "mixture underestimate 1 − I^mix/I_π".into(),
                    show(&u),
                    format!("{:.2} %", 100.0 * u.mid_f64()),
                ],
                None => vec![
                    "mixture underestimate 1 − I^mix/I_π".into(),
                    "undefined (I_π = 0: W0 = W1)".into(),
                    "—".into(),
                ],
            },
            vec![
                "χ²(W1‖W0) = I_0".into(),
                show(&x.chi2_10),
                approx(x.chi2_10.mid_f64()),
            ],
            vec![
                "χ²(W0‖W1)".into(),
                show(&x.chi2_01),
                approx(x.chi2_01.mid_f64()),
            ],
            vec![
                "μ3 = E_W0[r(Y)³]".into(),
                show(&x.mu3),
                approx(x.mu3.mid_f64()),
            ],
        ];
        if let Some(n) = n {
            let mu = mu_n(m, c, n);
            rows.push(vec![
                format!("μ_n = {}, n = {n}", mu_formula(m)),
                show(&mu),
                approx(mu.mid_f64()),
            ]);
        }
        s += &table(&["constant", "value", "≈"], &rows);
        if let Some(note) = messages_note(m) {
            s += &format!("{note}\n");
        }
        s += &format!("\nv = W1 − W0       {}\n", vec(&x.v));
        s += &format!("s_π = Σ_π⁺ v      {}\n", vec(&x.score));
        s += "Σ_π              ";
        s += &x
            .sigma_pi
            .iter()
            .map(|r| vec(r))
            .collect::<Vec<_>>()
            .join("\n                 ");
        s += "\n";
    }
    if let Some(r) = range {
        let pick = |f: &dyn Fn(&(Rational, Enclosure, Enclosure)) -> f64, max: bool| {
            let it = r.points.iter();
            let p = if max {
                it.max_by(|a, b| f(a).total_cmp(&f(b)))
            } else {
                it.min_by(|a, b| f(a).total_cmp(&f(b)))
            };
            p.expect("grid")
        };
        let (imin, imax) = (
            pick(&|p| p.1.mid_f64(), false),
            pick(&|p| p.1.mid_f64(), true),
        );
        let (umin, umax) = (
            pick(&|p| p.2.mid_f64(), false),
            pick(&|p| p.2.mid_f64(), true),
        );
        s += &format!(
            "\nover π ∈ [{}, {}] ({} grid points, each value certified; ≈ doubles below, exact values in --json):\n",
            exact_string(&r.lo),
            exact_string(&r.hi),
            r.points.len()
        );
        s += &format!(
            "  I_π ranges over [{:.4}, {:.4}] (min at π = {}, max at π = {}), a factor of {:.3}\n",
            imin.1.mid_f64(),
            imax.1.mid_f64(),
            exact_string(&imin.0),
            exact_string(&imax.0),
            imax.1.mid_f64() / imin.1.mid_f64()
        );
        s += &format!(
            "  the mixture underestimate ranges over [{:.2} %, {:.2} %]\n",
            100.0 * umin.2.mid_f64(),
            100.0 * umax.2.mid_f64()
        );
    }
    s
}

fn point_text(query: &CheckQuery, at: &CheckAt, i: usize) -> String {
    let p = &at.points[i];
    match &query.points[i] {
        CurvePoint::T(t) => format!(
            "t = {}, ε = tμ_n ≈ {}",
            exact_string(t),
            approx(p.eps.mid_f64())
        ),
        CurvePoint::Eps(e) => format!(
            "ε = {}, t = ε/μ_n ≈ {}",
            exact_string(e),
            approx(p.t.mid_f64())
        ),
    }
}

fn comparison_json(c: &Comparison, at: &CheckAt) -> Value {
    let mut v = json!({
        "prediction": c.prediction,
        "source": c.source,
        "quantity": c.quantity,
        "predicted": { "value": c.predicted.value(), "formula_enclosure": c.predicted.formula.to_json(), "certified": false },
        "certified": c.certified.to_json(),
        "abs_error": c.abs_error,
        "rel_error": c.rel_error,
        "verdict": c.verdict.name(),
        "claimed_order": c.claimed,
        "scope_note": c.scope_note,
    });
    if let Some(i) = c.point {
        v["point"] = json!(i);
        v["t"] = at.points[i].t.to_json();
        v["eps"] = at.points[i].eps.to_json();
    }
    v
}

/// What a check computed at one n: its composition, constants and comparisons.
pub fn check_at_json(at: &CheckAt) -> Value {
    let c = values(&at.constants);
    json!({
        "n": at.n,
        "k": at.k,
        "pi": exact_string(&at.pi),
        "arithmetic": at.arithmetic,
        "constants": {
            "i_pi": value_json(&c.i_pi),
            "i_mix": value_json(&c.i_mix),
            "mu_n": value_json(&at.mu_n),
            "mu_mix": value_json(&at.mu_mix),
        },
        "comparisons": at.comparisons.iter().map(|c| comparison_json(c, at)).collect::<Vec<_>>(),
    })
}

pub fn check_json(query: &CheckQuery, r: &CheckReport) -> Value {
    let mut v = json!({
        "command": "check",
        "certified": true,
        "mechanism": query.pair.mechanism.to_json(),
        "input_domain": query.pair.mechanism.domain_json(),
        "note": "predictions are uncertified approximations; certified values are enclosures; verdicts compare the prediction formula's enclosure with the certified enclosure",
        "optimistic": r.optimistic().count(),
        "sweep": r.fits.iter().map(crate::check::OrderFit::to_json).collect::<Vec<_>>(),
    });
    if let (Value::Object(v), Value::Object(at)) = (&mut v, check_at_json(&r.base)) {
        v.extend(at);
    }
    v
}

/// A prediction's short name for the table, and its formula for the legend below it.
fn prediction_label(prediction: &str) -> (&str, &str) {
    for (prefix, short) in [
        ("local curve ", "local curve"),
        ("GDP, fixed composition ", "GDP at μ_n"),
        ("GDP, unbundled ", "GDP at μ"),
        ("GDP, mixture proxy ", "GDP mixture"),
        ("randomized-response normal approximation", "RR normal §10"),
        ("Chernoff bound", "Chernoff"),
        ("χ²/(8n) − ", "canonical exp."),
    ] {
        if let Some(rest) = prediction.strip_prefix(prefix) {
            return (short, if rest.is_empty() { prediction } else { rest });
        }
    }
    match prediction.rsplit_once(" = ") {
        Some((_, short)) => (short, prediction),
        None => (prediction, prediction),
    }
}

fn comparison_row(c: &Comparison) -> Vec<String> {
    vec![
        c.quantity.to_string(),
        prediction_label(c.prediction).0.to_string(),
        format!("{:.6e}", c.predicted.value()),
        c.certified.to_string(),
        if c.rel_error.is_finite() {
            format!("{:+.2} %", 100.0 * c.rel_error)
        } else {
            format!("{:+.3e}", c.abs_error)
        },
        c.verdict.name().to_string(),
    ]
}

/// The legend of a comparison table: each prediction's formula and the error its theorem
/// claims.
fn comparison_legend<'a>(rows: impl Iterator<Item = &'a Comparison>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for c in rows {
        let (short, formula) = prediction_label(c.prediction);
        let claimed = match c.scope_note {
            Some(note) => format!("{} ({note})", c.claimed),
            None => c.claimed.to_string(),
        };
        let line = if short == formula {
            format!("  {short}: claimed error {claimed}\n")
        } else {
            format!("  {short}: {formula}; claimed error {claimed}\n")
        };
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    seen.concat()
}

pub fn check_text(query: &CheckQuery, r: &CheckReport) -> String {
    let b = &r.base;
    let c = values(&b.constants);
    let mut s = format!(
        "shufflecert check: {}  n = {}  k = {}  π = k/n = {}\n{}\n",
        query.pair.mechanism.name,
        b.n,
        b.k,
        exact_string(&b.pi),
        query.pair.mechanism.domain_text()
    );
    s += &format!(
        "I_π = {:.6} · I_π^mix = {:.6} · μ_n = {} = {:.6} · arithmetic {}\n",
        c.i_pi.mid_f64(),
        c.i_mix.mid_f64(),
        mu_formula(&query.pair.mechanism),
        b.mu_n.mid_f64(),
        b.arithmetic
    );
    s += "predictions are uncertified approximations; the certified column is proven; the error is \
          relative (prediction − certified)\n";
    s += "verdicts: optimistic = under-reports (unsafe as a guarantee), conservative = over-reports, \
          inside = agrees\n";
    let header = [
        "quantity",
        "prediction",
        "predicted",
        "certified",
        "error",
        "verdict",
    ];
    for i in 0..b.points.len() {
        s += &format!("\npoint {}: {}\n", i + 1, point_text(query, b, i));
        let at = || b.comparisons.iter().filter(move |c| c.point == Some(i));
        let rows: Vec<Vec<String>> = at().map(comparison_row).collect();
        s += &table(&header, &rows);
        s += &comparison_legend(at());
    }
    s += "\ndivergences (nats)\n";
    let divergences = || b.comparisons.iter().filter(|c| c.point.is_none());
    let rows: Vec<Vec<String>> = divergences().map(comparison_row).collect();
    s += &table(&header, &rows);
    s += &comparison_legend(divergences());
    if !r.fits.is_empty() {
        let ns: Vec<String> = r.fits[0]
            .errors
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        s += &format!(
            "\nobserved convergence order of |error| (n = {}; t fixed, k/n kept as near as whole users allow)\n",
            ns.join(", ")
        );
        let rows: Vec<Vec<String>> = r
            .fits
            .iter()
            .map(|f| {
                vec![
                    f.quantity.to_string(),
                    f.point.map_or("—".to_string(), |p| (p + 1).to_string()),
                    prediction_label(f.prediction).0.to_string(),
                    f.observed_exponent
                        .map_or("—".to_string(), |e| format!("n^{e:.2}")),
                    f.claimed.to_string(),
                ]
            })
            .collect();
        s += &table(
            &["quantity", "point", "prediction", "observed", "claimed"],
            &rows,
        );
    }
    let optimistic = r.optimistic().count();
    if optimistic > 0 {
        s += &format!(
            "\n{} optimistic: they under-report the certified value and are unsafe as guarantees\n",
            crate::enclosure::count_of(optimistic, "prediction is", "predictions are")
        );
    }
    s
}
