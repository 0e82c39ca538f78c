//! The `bounds` report: the certified range, the pairs attaining it, the shuffle index, and
//! for binary inputs the exact profile beside it.

use super::table;
use crate::bounds::index::IndexValue;
use crate::bounds::range::{Attained, BoundsQuery, RangeRow, Target};
use crate::enclosure::{Enclosure, exact_string};
use crate::profile::Profile;
use serde_json::{Value, json};

/// Everything `bounds` prints.
pub struct BoundsReport<'a> {
    pub query: &'a BoundsQuery,
    pub rows: &'a [RangeRow],
    pub index: &'a (IndexValue, IndexValue),
    /// The exact profile (binary inputs only).
    pub profile: Option<&'a Profile>,
}

const LOWER_SCOPE: &str = "lower: the exact delta of the concrete neighbouring pairs (x1, x2, ..., x2) ~ (x1', x2, ..., x2), max over every x1, x1', x2 (Takagi-Liew's reference sum with R_x2, gamma = 1)";
const UPPER_SCOPE: &str = "upper: the blanket divergence max over ordered pairs (Balle et al. 2019; Takagi-Liew Thm 2.2), certified as an exact finite sum";

pub(super) fn attained_json(r: &crate::mechanism::randomizer::Randomizer, a: &Attained) -> Value {
    json!({
        "value": a.value.to_json(),
        "x1": r.inputs[a.pair.0],
        "x1_prime": r.inputs[a.pair.1],
        "background": a.background.map(|x| r.inputs[x].clone()),
    })
}

/// `upper/lower` from the midpoints, when the lower bound is resolved away from 0.
fn ratio(row: &RangeRow) -> Option<f64> {
    let (u, l) = (row.upper.value.mid_f64(), row.lower.value.mid_f64());
    (row.lower.value.lo().to_f64() > 0.0 && u.is_finite()).then(|| u / l)
}

fn index_json(r: &crate::mechanism::randomizer::Randomizer, v: &IndexValue) -> Value {
    json!({
        "chi2": v.chi2.to_json(),
        "chi": v.chi.to_json(),
        "x1": r.inputs[v.pair.0],
        "x1_prime": r.inputs[v.pair.1],
        "reference": v.reference.map(|x| r.inputs[x].clone()),
    })
}

/// `bounds` as JSON.
pub fn bounds_json(b: &BoundsReport) -> Value {
    let r = &b.query.randomizer;
    let mut v = json!({
        "command": "bounds",
        "certified": true,
        "randomizer": r.to_json(),
        "n": b.query.n,
        "scope": [LOWER_SCOPE, UPPER_SCOPE],
        "shuffle_index": {
            "chi_up": index_json(r, &b.index.0),
            "chi_lo": index_json(r, &b.index.1),
        },
        "results": b.rows.iter().map(|row| json!({
            "eps": row.threshold.as_ref().map(|t| t.eps_text()),
            "lower": attained_json(r, &row.lower),
            "upper": attained_json(r, &row.upper),
            "ratio_upper_over_lower": ratio(row),
        })).collect::<Vec<_>>(),
    });
    if let Target::Epsilon(d) = &b.query.target {
        v["delta"] = json!(exact_string(d));
        v["quantity"] = json!("eps_M(delta)");
    } else {
        v["quantity"] = json!("delta_M(eps)");
    }
    if let Some(p) = b.profile {
        v["binary_profile"] = p
            .rows
            .iter()
            .map(|row| row.value.to_json())
            .collect::<Vec<_>>()
            .into();
        v["binary_note"] = json!(
            "binary inputs: the lower bound is the boundary pair k = 0 / n - 1, which is not always the worst case; the exact profile over every k is given beside it"
        );
    }
    v
}

pub(super) fn cell(r: &crate::mechanism::randomizer::Randomizer, a: &Attained) -> String {
    let pair = format!("{} -> {}", r.inputs[a.pair.0], r.inputs[a.pair.1]);
    let background = a
        .background
        .map_or(String::new(), |x| format!(", others {}", r.inputs[x]));
    format!("{} ({pair}{background})", short(&a.value))
}

fn short(e: &Enclosure) -> String {
    e.short(6)
}

/// `bounds` as text.
pub fn bounds_text(b: &BoundsReport) -> String {
    let r = &b.query.randomizer;
    let mut s = format!(
        "shufflecert bounds: {}  ({} inputs, {} outputs)  n = {}\n",
        r.name,
        r.input_count(),
        r.d(),
        b.query.n
    );
    s += &format!("{LOWER_SCOPE}\n{UPPER_SCOPE}\n");
    for (name, v) in [("chi_up", &b.index.0), ("chi_lo", &b.index.1)] {
        let reference = v
            .reference
            .map_or(String::new(), |x| format!(", reference {}", r.inputs[x]));
        s += &format!(
            "shuffle index {name} = {} (chi² = {}; {} -> {}{reference})\n",
            short(&v.chi),
            short(&v.chi2),
            r.inputs[v.pair.0],
            r.inputs[v.pair.1]
        );
    }
    s += "every [lo, hi] is a certified enclosure\n\n";
    let quantity = match &b.query.target {
        Target::Epsilon(d) => format!("eps_M at delta = {}", exact_string(d)),
        Target::Delta(_) => "delta_M(eps)".into(),
    };
    let mut header = vec!["eps", "lower", "upper", "upper/lower"];
    if b.profile.is_some() {
        header.push("exact profile (binary inputs)");
    }
    let body: Vec<Vec<String>> = b
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut cells = vec![
                row.threshold
                    .as_ref()
                    .map_or(quantity.clone(), |t| t.eps_text()),
                cell(r, &row.lower),
                cell(r, &row.upper),
                ratio(row).map_or("-".into(), |x| format!("{x:.3}")),
            ];
            if let Some(p) = b.profile {
                cells.push(short(&p.rows[i].value));
            }
            cells
        })
        .collect();
    s += &table(&header, &body);
    if b.profile.is_some() {
        s += "\nbinary inputs: the lower bound is the boundary pair k = 0 / n − 1, which is not always the worst case; the exact profile is the maximum over every k\n";
    }
    s
}
