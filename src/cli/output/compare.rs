//! `compare` output.

use super::{argmax_json, argmax_text, table};
use crate::accountants::{LocalPrivacy, Validity};
use crate::arith::Scalar;
use crate::audit::compare::{BoundRow, CompareQuery, Comparison, Status};
use crate::enclosure::exact_string;
use serde_json::{Value, json};

/// Digits of the table's enclosures (rounded outward, so still certified).
const SHORT: u32 = 6;

fn local_text(local: &LocalPrivacy) -> String {
    let family = match local.k_rr {
        Some(k) => format!(" · k-ary randomized response, k = {k}"),
        None => String::new(),
    };
    let relation = if local.eps0.is_point() { "=" } else { "∈" };
    format!(
        "ε0 {relation} {} (e^ε0 ∈ {}){family}",
        local.eps0.short(12),
        local.exp_eps0.enclosure().short(12)
    )
}

pub fn compare_text(query: &CompareQuery, local: &LocalPrivacy, rows: &[Comparison]) -> String {
    let mut s = format!(
        "shufflecert compare: {} · δ = {} · {}\n",
        query.mechanism.name,
        exact_string(&query.delta),
        local_text(local)
    );
    s += "published upper bounds on ε beside the certified ε of the mechanism (worst case over \
          every k); every [lo, hi] is a certified enclosure (rounded outward)\n";
    let mut notes = Vec::new();
    for c in rows {
        s += &format!(
            "\nn = {}: certified ε of the mechanism {} (worst k: {}) · boundary pair k = 0: {}\n",
            c.n,
            c.mechanism().value,
            argmax_text(c.mechanism()),
            c.boundary
        );
        let table_rows: Vec<Vec<String>> = c
            .bounds
            .iter()
            .map(|b| {
                if let (Status::Outside, Validity::Outside(why)) = (b.status, &b.bound.validity) {
                    notes.push(format!("n = {}: {} not applied: {why}", c.n, b.bound.name));
                }
                vec![
                    b.bound.name.clone(),
                    b.bound.eps.as_ref().map_or("—".into(), |e| e.short(SHORT)),
                    b.ratio.as_ref().map_or("—".into(), |r| r.short(4)),
                    b.status.name().into(),
                    match b.bound.method {
                        crate::accountants::Method::ClosedForm => "closed form",
                        crate::accountants::Method::InvertedClosedForm => "δ(ε) inverted",
                        crate::accountants::Method::ReducedExperiment => "reduced experiment",
                    }
                    .into(),
                ]
            })
            .collect();
        s += &table(
            &["bound", "ε", "÷ certified ε", "status", "computed as"],
            &table_rows,
        );
    }
    if !notes.is_empty() {
        s += "\n";
        for n in notes {
            s += &format!("{n}\n");
        }
    }
    s += "\nsources:\n";
    if let Some(first) = rows.first() {
        for b in &first.bounds {
            s += &format!(
                "  {}: {} — {}\n",
                b.bound.name,
                b.bound.source,
                b.bound.method.describe()
            );
        }
    }
    s
}

pub fn compare_json(query: &CompareQuery, local: &LocalPrivacy, rows: &[Comparison]) -> Value {
    json!({
        "command": "compare",
        "certified": true,
        "mechanism": query.mechanism.to_json(),
        "delta": exact_string(&query.delta),
        "backend": query.backend.label(),
        "local": local.to_json(),
        "results": rows.iter().map(|c| json!({
            "n": c.n,
            "certified_eps": c.mechanism().value.to_json(),
            "argmax_k": argmax_json(c.mechanism()).0,
            "argmax_k_ranges": argmax_json(c.mechanism()).1,
            "boundary_pair_eps": c.boundary.to_json(),
            "bounds": c.bounds.iter().map(BoundRow::to_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
