//! `profile` output.

use super::{mechanism_json, table};
use crate::enclosure::exact_string;
use crate::profile::{KValue, Profile, ProfileQuery, ProfileRow, Quantity};
use serde_json::{Value, json};

fn argmax_json(argmax: &[KValue]) -> Value {
    argmax
        .iter()
        .map(|v| json!({ "k": v.k, "direction": v.direction.key(), "value": v.value.to_json() }))
        .collect()
}

fn argmax_text(row: &ProfileRow) -> String {
    if !row.resolved {
        return format!(
            "all {} evaluated pairs (unresolved: see note)",
            row.argmax.len()
        );
    }
    row.argmax
        .iter()
        .map(|v| format!("k={} {}", v.k, v.direction.key()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scope_text(query: &ProfileQuery, p: &Profile) -> String {
    if p.partial {
        format!(
            "PARTIAL profile: only k in {}..{} was scanned; this is not the mechanism's guarantee",
            p.k_range.0, p.k_range.1
        )
    } else {
        format!(
            "mechanism-wide: all k in 0..{} (every neighbouring pair, both orders)",
            query.n - 1
        )
    }
}

/// The JSON of a profile's rows: `results` (δ at each ε), `delta`/`eps_profile`/`argmax_k`
/// (ε at a target δ), `renyi_profile` (each order); shared by `profile` and `audit`.
pub fn profile_rows_json(p: &Profile, v: &mut Value) {
    let mut deltas = Vec::new();
    let mut renyi = Vec::new();
    for row in &p.rows {
        match &row.quantity {
            Quantity::Delta(t) => deltas.push(json!({
                "eps": t.eps_text(),
                "delta_profile": row.value.to_json(),
                "resolved": row.resolved,
                "argmax_k": argmax_json(&row.argmax),
            })),
            Quantity::Epsilon(d) => {
                v["delta"] = json!(exact_string(d));
                v["eps_profile"] = row.value.to_json();
                v["argmax_k"] = argmax_json(&row.argmax);
            }
            Quantity::Renyi(alpha) => renyi.push(json!({
                "order": exact_string(alpha),
                "value": row.value.to_json(),
                "resolved": row.resolved,
                "argmax_k": argmax_json(&row.argmax),
            })),
        }
    }
    if !deltas.is_empty() {
        v["results"] = Value::Array(deltas);
    }
    if !renyi.is_empty() {
        v["renyi_profile"] = Value::Array(renyi);
    }
}

pub fn profile_json(query: &ProfileQuery, p: &Profile) -> Value {
    let mut v = json!({
        "command": "profile",
        "certified": true,
        "mechanism": mechanism_json(&query.mechanism),
        "n": query.n,
        "k_range": [p.k_range.0, p.k_range.1],
        "partial": p.partial,
        "scope": scope_text(query, p),
        "backend": query.backend.label(),
        "arithmetic": p.arithmetic,
        "engine": p.engine,
        "stats": {
            "pairs_evaluated": p.stats.pairs_evaluated,
            "k_pruned": p.stats.k_pruned,
            "nodes_bounded": p.stats.nodes_bounded,
            "pairs_refined": p.stats.pairs_refined,
        },
    });
    profile_rows_json(p, &mut v);
    v
}

pub fn profile_text(query: &ProfileQuery, p: &Profile) -> String {
    let mut s = format!(
        "shufflecert profile: {}  n = {}\n",
        query.mechanism.name, query.n
    );
    s += &format!("{}\n", scope_text(query, p));
    s += &format!(
        "arithmetic {} · engine {} · {} pairs evaluated, {} values of k pruned by the data-processing bound\n",
        p.arithmetic, p.engine, p.stats.pairs_evaluated, p.stats.k_pruned
    );
    s += "every [lo, hi] is a certified enclosure of the true value\n";
    let (mut deltas, mut epsilons, mut renyi) = (Vec::new(), String::new(), Vec::new());
    for r in &p.rows {
        match &r.quantity {
            Quantity::Delta(t) => {
                deltas.push(vec![t.eps_text(), r.value.to_string(), argmax_text(r)])
            }
            Quantity::Epsilon(d) => {
                epsilons += &format!("\nsmallest ε ≥ 0 with δ_M(ε) ≤ {}\n\n", exact_string(d));
                epsilons += &table(
                    &["eps_profile", "argmax (k, direction)"],
                    &[vec![r.value.to_string(), argmax_text(r)]],
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
    if p.rows.iter().any(|r| !r.resolved) {
        s += "\nnote: where a profile value starts at 0, it lies below this computation's \
              resolution (truncation or f64 underflow), so every k may attain it; \
              --no-truncation or --backend mpfr resolve it.\n";
    }
    s
}
