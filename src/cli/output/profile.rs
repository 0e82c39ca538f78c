//! `profile` output.

use super::{mechanism_json, table};
use crate::enclosure::exact_string;
use crate::profile::{KValue, Profile, ProfileAnswer, ProfileQuery, ProfileQuestion};
use serde_json::{Value, json};

fn argmax_json(argmax: &[KValue]) -> Value {
    argmax
        .iter()
        .map(|v| json!({ "k": v.k, "direction": v.direction.key(), "value": v.value.to_json() }))
        .collect()
}

fn argmax_text(argmax: &[KValue]) -> String {
    argmax
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
    match &p.answer {
        ProfileAnswer::Deltas(rows) => {
            v["results"] = rows
                .iter()
                .map(|r| {
                    json!({
                        "eps": r.threshold.eps_text(),
                        "delta_profile": r.delta.to_json(),
                        "resolved": r.resolved,
                        "argmax_k": argmax_json(&r.argmax),
                    })
                })
                .collect();
        }
        ProfileAnswer::Epsilon { eps, argmax } => {
            if let ProfileQuestion::Epsilon(d) = &query.question {
                v["delta"] = json!(exact_string(d));
            }
            v["eps_profile"] = eps.to_json();
            v["argmax_k"] = argmax_json(argmax);
        }
    }
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
    s += "every [lo, hi] is a certified enclosure of the true value\n\n";
    match &p.answer {
        ProfileAnswer::Deltas(rows) => {
            let table_rows: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    let argmax = if r.resolved {
                        argmax_text(&r.argmax)
                    } else {
                        format!(
                            "all {} evaluated pairs (unresolved: see note)",
                            r.argmax.len()
                        )
                    };
                    vec![r.threshold.eps_text(), r.delta.to_string(), argmax]
                })
                .collect();
            s += &table(
                &["eps", "delta_profile = max_k δ", "argmax (k, direction)"],
                &table_rows,
            );
            if rows.iter().any(|r| !r.resolved) {
                s += "\nnote: where delta_profile starts at 0, δ_M lies below this computation's \
                      resolution (truncation or f64 underflow), so every k may attain it; \
                      --no-truncation or --backend mpfr resolve it.\n";
            }
        }
        ProfileAnswer::Epsilon { eps, argmax } => {
            if let ProfileQuestion::Epsilon(d) = &query.question {
                s += &format!("smallest ε ≥ 0 with δ_M(ε) ≤ {}\n\n", exact_string(d));
            }
            s += &table(
                &["eps_profile", "argmax (k, direction)"],
                &[vec![eps.to_string(), argmax_text(argmax)]],
            );
        }
    }
    s
}
