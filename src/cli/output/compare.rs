//! `compare` output.

use super::bounds::attained_json;
use super::{argmax_json, argmax_text, table};
use crate::accountants::{LocalPrivacy, Validity};
use crate::arith::Scalar;
use crate::audit::compare::{BoundRow, Certified, CompareQuery, Comparison, Status};
use crate::bounds::range::Attained;
use crate::enclosure::exact_string;
use crate::mechanism::randomizer::Randomizer;
use serde_json::{Value, json};

/// Digits of the table's enclosures (rounded outward, so still certified).
const SHORT: u32 = 6;

fn local_text(local: &LocalPrivacy) -> String {
    let family = match local.k_rr {
        Some(k) => format!(" · k-ary randomized response, k = {k}"),
        None => String::new(),
    };
    let relation = |e: &crate::enclosure::Enclosure| if e.is_point() { "=" } else { "∈" };
    let exp_eps0 = local.exp_eps0.enclosure();
    format!(
        "ε0 {} {} (e^ε0 {} {}){family}",
        relation(&local.eps0),
        local.eps0.compact(12),
        relation(&exp_eps0),
        exp_eps0.compact(12)
    )
}

pub fn compare_text(query: &CompareQuery, local: &LocalPrivacy, rows: &[Comparison]) -> String {
    let r = &query.randomizer;
    let mut s = format!(
        "shufflecert compare: {} · {} · δ = {}\n{}\n",
        r.name,
        r.domain_text(),
        crate::enclosure::number_text(&query.delta),
        local_text(local)
    );
    s += match query.mechanism {
        Some(_) => {
            "published upper bounds on ε beside the certified ε of the mechanism (worst case over \
             every k); every [lo, hi] is a certified enclosure (rounded outward)\n"
        }
        None => {
            "published upper bounds on ε held against the certified range of ε_M(δ) over every \
             dataset on these inputs (`bounds`): holds above its upper end, VIOLATED below its \
             lower end (a concrete neighbouring pair has a larger ε), undecided in between\n"
        }
    };
    if let Some(k) = r.restriction_of {
        s += &format!(
            "note: this is the binary-input restriction of a {k}-input randomizer; bounds stated for \
             its {k}-valued inputs are held here against the restriction only, whose ε can only be \
             smaller (drop inputs=2 to judge them against the {k}-input mechanism)\n"
        );
    }
    let mut notes = Vec::new();
    for c in rows {
        s += &match &c.certified {
            Certified::Exact { boundary, .. } => {
                let row = c.mechanism().expect("exact");
                format!(
                    "\nn = {}: certified ε of the mechanism {} (worst k: {}) · boundary pair k = 0: {}\n",
                    c.n,
                    row.value,
                    argmax_text(row),
                    boundary
                )
            }
            Certified::Range(row) => format!(
                "\nn = {}: certified range of ε_M: {}\n  lower: {}\n  upper: {}\n",
                c.n,
                crate::enclosure::Enclosure::new(
                    row.lower.value.lo().clone(),
                    row.upper.value.hi().clone()
                )
                .compact(SHORT),
                witness_text(r, c.n, &row.lower),
                format_args!(
                    "{} (blanket divergence, worst ordered pair {} -> {})",
                    row.upper.value.compact(SHORT),
                    r.inputs[row.upper.pair.0],
                    r.inputs[row.upper.pair.1]
                )
            ),
        };
        let table_rows: Vec<Vec<String>> = c
            .bounds
            .iter()
            .map(|b| {
                if let (Status::Outside, Validity::Outside(why)) = (b.status, &b.bound.validity) {
                    notes.push(format!("n = {}: {} not applied: {why}", c.n, b.bound.name));
                }
                vec![
                    b.bound.name.clone(),
                    b.bound
                        .eps
                        .as_ref()
                        .map_or("—".into(), |e| e.compact(SHORT)),
                    b.ratio.as_ref().map_or("—".into(), |r| r.compact(4)),
                    b.status.name().into(),
                ]
            })
            .collect();
        s += &table(&["bound", "ε", "÷ certified ε", "status"], &table_rows);
        if let Certified::Range(row) = &c.certified
            && c.bounds.iter().any(|b| b.status == Status::Violated)
        {
            s += &format!(
                "  VIOLATED: the witness pair {} has a certified ε above the bound\n",
                datasets_text(r, c.n, &row.lower)
            );
        }
    }
    if !notes.is_empty() {
        s += "\n";
        for n in notes {
            s += &format!("{n}\n");
        }
    }
    s += "\nsources (every bound computed with certified arithmetic; JSON: `stated_for`, `method`):\n";
    if let Some(first) = rows.first() {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for b in &first.bounds {
            if !seen.contains(&(b.bound.source, b.bound.stated_for.as_str())) {
                seen.push((b.bound.source, b.bound.stated_for.as_str()));
            }
        }
        for (source, stated_for) in seen {
            s += &format!("  {source}; stated for {stated_for}\n");
        }
    }
    s
}

/// The neighbouring datasets of a lower-bound pair: `(x1, x2^{n−1}) ≃ (x1′, x2^{n−1})`.
fn datasets_text(r: &Randomizer, n: u64, a: &Attained) -> String {
    let x2 = a.background.unwrap_or(a.pair.0);
    format!(
        "(one user {}, {} users {}) ≃ (one user {}, the same {} users {})",
        r.inputs[a.pair.0],
        n - 1,
        r.inputs[x2],
        r.inputs[a.pair.1],
        n - 1,
        r.inputs[x2]
    )
}

/// The lower end's pair, and the command that recomputes it.
fn witness_text(r: &Randomizer, n: u64, a: &Attained) -> String {
    let x2 = a.background.unwrap_or(a.pair.0);
    format!(
        "{} (the exact ε of {}; `epsilon --background {}={} --switch {}:{}`)",
        a.value.compact(SHORT),
        datasets_text(r, n, a),
        r.inputs[x2],
        n - 1,
        r.inputs[a.pair.0],
        r.inputs[a.pair.1]
    )
}

pub fn compare_json(query: &CompareQuery, local: &LocalPrivacy, rows: &[Comparison]) -> Value {
    let r = &query.randomizer;
    let mut v = json!({
        "command": "compare",
        "certified": true,
        "input_domain": r.domain_json(),
        "delta": exact_string(&query.delta),
        "backend": query.backend.label(),
        "local": local.to_json(),
        "results": rows.iter().map(|c| {
            let mut row = match &c.certified {
                Certified::Exact { boundary, .. } => {
                    let m = c.mechanism().expect("exact");
                    json!({
                        "n": c.n,
                        // As its scan's `eps_profile` gives it.
                        "certified_eps": super::profile::row_value_json(
                            m,
                            super::profile::rel_width(query.escalate_above),
                        ),
                        "argmax_k": argmax_json(m).0,
                        "argmax_k_ranges": argmax_json(m).1,
                        "boundary_pair_eps": boundary.to_json(),
                    })
                }
                Certified::Range(range) => json!({
                    "n": c.n,
                    "certified_eps_range": {
                        "lower": attained_json(r, &range.lower),
                        "upper": attained_json(r, &range.upper),
                    },
                }),
            };
            row["bounds"] = c.bounds.iter().map(BoundRow::to_json).collect::<Vec<_>>().into();
            row
        }).collect::<Vec<_>>(),
    });
    match &query.mechanism {
        Some(m) => v["mechanism"] = m.to_json(),
        None => v["randomizer"] = r.to_json(),
    }
    v
}
