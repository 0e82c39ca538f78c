//! `profile` output.

use super::{argmax_json, table};
use crate::enclosure::exact_string;
use crate::profile::{Profile, ProfileQuery, ProfileRow, Quantity};
use serde_json::{Value, json};

/// The note under an ε_M marked `(unresolved)`.
const EPS_UNRESOLVED_NOTE: &str = "\n(unresolved): the enclosure of ε_M is certified but wider than --rel-width. An upper end of \
     inf comes from a pair whose curve decreases to a singular mass (its limit as ε → ∞) not \
     certainly below δ: when the two are equal, no precision of --backend mpfr decides it, \
     --backend exact does (rational mechanisms)\n";

fn argmax_text(row: &ProfileRow) -> String {
    if !row.resolved {
        return "unresolved: below this computation's resolution (see note)".into();
    }
    super::argmax_text(row)
}

fn scope_text(query: &ProfileQuery, p: &Profile) -> String {
    crate::profile::scope_text(query.n, p.k_range, &p.ends)
}

/// The relative width a profile's ε_M counts as resolved to (`--rel-width`).
pub(super) fn rel_width(escalate_above: Option<f64>) -> f64 {
    escalate_above.unwrap_or(crate::query::DEFAULT_REL_WIDTH)
}

/// A profile row's value as JSON: an ε_M with `resolved` at `rel` (as `epsilon` gives ε), a δ
/// or Rényi value bare (its row carries its own `resolved`).
pub(super) fn row_value_json(row: &ProfileRow, rel: f64) -> Value {
    match row.quantity {
        Quantity::Epsilon(_) => row.value.to_json_resolved(rel),
        _ => row.value.to_json(),
    }
}

/// The JSON of a profile's rows: `results` (δ at each ε), `delta`/`eps_profile`/`argmax_k`
/// (ε at a target δ, `eps_profile.resolved` at `rel`), `renyi_profile` (each order).
pub fn profile_rows_json(p: &Profile, rel: f64, v: &mut Value) {
    let mut deltas = Vec::new();
    let mut epsilons = Vec::new();
    let mut renyi = Vec::new();
    for row in &p.rows {
        match &row.quantity {
            Quantity::Delta(t) => deltas.push(json!({
                "eps": t.eps_text(),
                "delta_profile": row.value.to_json(),
                "resolved": row.resolved,
                "argmax_k": argmax_json(row).0,
            })),
            Quantity::Epsilon(d) => {
                let (argmax, ranges) = argmax_json(row);
                epsilons.push(json!({
                    "delta": exact_string(d),
                    "eps_profile": row_value_json(row, rel),
                    "argmax_k": argmax,
                    "argmax_k_ranges": ranges,
                }));
            }
            Quantity::Renyi(alpha) => renyi.push(json!({
                "order": exact_string(alpha),
                "value": row.value.to_json(),
                "resolved": row.resolved,
                "argmax_k": argmax_json(row).0,
            })),
        }
    }
    if !deltas.is_empty() {
        v["results"] = Value::Array(deltas);
    }
    // One target δ also keeps its keys at the top level.
    if let [single] = epsilons.as_slice() {
        for key in ["delta", "eps_profile", "argmax_k", "argmax_k_ranges"] {
            v[key] = single[key].clone();
        }
    }
    if !epsilons.is_empty() {
        v["eps_results"] = Value::Array(epsilons);
    }
    if !renyi.is_empty() {
        v["renyi_profile"] = Value::Array(renyi);
    }
}

pub fn profile_json(query: &ProfileQuery, p: &Profile) -> Value {
    let mut v = json!({
        "command": "profile",
        "certified": true,
        "mechanism": query.mechanism.to_json(),
        "input_domain": query.mechanism.domain_json(),
        "n": query.n,
        "k_range": [p.k_range.0, p.k_range.1],
        "partial": p.partial,
        "scope": scope_text(query, p),
        "backend": query.backend.label(),
        "arithmetic": p.arithmetic,
        "engine": p.engine,
        "alphabet": query.mechanism.alphabet_json(query.options.reduce),
        "stats": {
            "pairs_evaluated": p.stats.pairs_evaluated,
            "k_pruned": p.stats.k_pruned,
            "nodes_bounded": p.stats.nodes_bounded,
            "pairs_refined": p.stats.pairs_refined,
        },
    });
    if !p.ends.is_empty() {
        v["ends"] = json!(p.ends);
    }
    profile_rows_json(p, rel_width(query.escalate_above), &mut v);
    v
}

/// The text of a profile on a picture's grid (`--plot` alone): every tenth row (JSON has all).
pub fn profile_grid_text(query: &ProfileQuery, p: &Profile) -> String {
    let shown = Profile {
        rows: p.rows.iter().step_by(10).cloned().collect(),
        ..p.clone()
    };
    let mut s = profile_text(query, &shown);
    s += &format!(
        "\n(δ_M at {} of the {} plotted ε; --json lists every one)\n",
        shown.rows.len(),
        p.rows.len()
    );
    s
}

pub fn profile_text(query: &ProfileQuery, p: &Profile) -> String {
    let mut s = format!(
        "shufflecert profile: {}  n = {}\n{}\n",
        query.mechanism.name,
        query.n,
        query.mechanism.domain_text()
    );
    s += &format!("{}\n", scope_text(query, p));
    s += &super::alphabet_text(&query.mechanism, &query.options);
    s += &format!(
        "arithmetic {} · engine {} · {} pairs evaluated, {} values of k pruned by the data-processing bound\n",
        p.arithmetic, p.engine, p.stats.pairs_evaluated, p.stats.k_pruned
    );
    s += "every [lo, hi] is a certified enclosure of the true value\n";
    let rel = rel_width(query.escalate_above);
    let (mut deltas, mut epsilons, mut renyi) = (Vec::new(), String::new(), Vec::new());
    for r in &p.rows {
        match &r.quantity {
            Quantity::Delta(t) => {
                deltas.push(vec![t.eps_text(), r.value.to_string(), argmax_text(r)])
            }
            Quantity::Epsilon(d) => {
                epsilons += &format!(
                    "\nsmallest ε ≥ 0 with δ_M(ε) ≤ {}\n\n",
                    crate::enclosure::number_text(d)
                );
                epsilons += &table(
                    &["eps_profile", "argmax (k, direction)"],
                    &[vec![super::marked(&r.value, rel), argmax_text(r)]],
                );
            }
            Quantity::Renyi(a) => {
                renyi.push(vec![exact_string(a), r.value.to_string(), argmax_text(r)])
            }
        }
    }
    if !deltas.is_empty() {
        s += "\n";
        s += &table(
            &["eps", "delta_profile = max_k δ", "argmax (k, direction)"],
            &deltas,
        );
    }
    s += &epsilons;
    if !renyi.is_empty() {
        s += "\n";
        s += &table(
            &[
                "order",
                "renyi_profile = max_k D_α (nats)",
                "argmax (k, qp = D_α(Q‖P), pq = D_α(P‖Q))",
            ],
            &renyi,
        );
    }
    let unresolved_eps = p
        .rows
        .iter()
        .any(|r| matches!(r.quantity, Quantity::Epsilon(_)) && !r.value.resolved(rel));
    if unresolved_eps {
        s += EPS_UNRESOLVED_NOTE;
    }
    if p.rows.iter().any(|r| !r.resolved) {
        s += "\nnote: an unresolved row reaches below this computation's \
              resolution (truncation or f64 underflow): its upper end includes a certified bound \
              over the k left unscanned, and the maximising k are not identified; --backend mpfr \
              (deeper truncation) or --no-truncation resolve it.\n";
    }
    s
}
