//! Reports of the Part III limit layer: the boundary Berry–Esseen diagnostic.

use super::table;
use crate::enclosure::{Enclosure, exact_string};
use crate::limits::berry_esseen::{BerryEsseenRow, observed_order};
use serde_json::{Value, json};

const BERRY_ESSEEN_SCOPE: &str = "Part III Theorem 8.1 / Corollary 8.2: |delta_lattice(eps) - delta_Gauss(eps)| <= C_eps * c, c = lambda^(-1/2); \
    every delta and gap is certified, but C_eps is not explicit: gap/c and the observed order are observations, not certificates";

fn short(e: &Enclosure) -> String {
    e.short(6)
}

/// The order observed at threshold `t` between row `i − 1` and row `i`.
fn order_text(rows: &[BerryEsseenRow], i: usize, t: usize) -> Option<f64> {
    (i > 0)
        .then(|| observed_order(&rows[i - 1], &rows[i], t))
        .flatten()
}

/// The diagnostic as JSON.
pub fn berry_esseen_json(rows: &[BerryEsseenRow], skellam_pi: Option<&rug::Rational>) -> Value {
    json!({
        "command": "berry-esseen",
        "scope": BERRY_ESSEEN_SCOPE,
        "lattice_experiment": if skellam_pi.is_some() { "skellam-shift" } else { "poisson-shift" },
        "pi": skellam_pi.map(exact_string),
        "rows": rows.iter().enumerate().map(|(i, r)| json!({
            "lambda": exact_string(&r.lambda),
            "c": r.c.to_json(),
            "arithmetic": r.arithmetic,
            "results": r.lattice.iter().enumerate().map(|(t, row)| json!({
                "eps": row.threshold.eps_text(),
                "delta_qp": row.qp.to_json(),
                "delta_pq": row.pq.to_json(),
                "delta_gaussian": r.gaussian[t].to_json(),
                "gap": r.gap[t].to_json(),
                "observed_gap_over_c": r.scaled_gap(t),
                "observed_order": order_text(rows, i, t),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The diagnostic as text.
pub fn berry_esseen_text(rows: &[BerryEsseenRow], skellam_pi: Option<&rug::Rational>) -> String {
    let lattice = match skellam_pi {
        None => "Poisson shift (Poi(λ), 1 + Poi(λ))".to_string(),
        Some(p) => format!(
            "Skellam shift U − V vs U − V + 1, U ~ Poi((1 − π)λ), V ~ Poi(πλ), π = {}",
            exact_string(p)
        ),
    };
    let mut s = format!(
        "shufflecert berry-esseen: {lattice} against the Gaussian shift (N(0,1), N(c,1)), c = λ^(-1/2)\n\
         Part III Theorem 8.1 / Corollary 8.2: gap ≤ C_ε·c with C_ε not explicit\n\
         δ and gap are certified enclosures; gap/c and the order observed between consecutive λ are observations\n\n"
    );
    let mut body = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        for (t, row) in r.lattice.iter().enumerate() {
            body.push(vec![
                exact_string(&r.lambda),
                format!("{:.6}", r.c.mid_f64()),
                row.threshold.eps_text(),
                short(&row.qp),
                short(&row.pq),
                short(&r.gaussian[t]),
                short(&r.gap[t]),
                format!("{:.4}", r.scaled_gap(t)),
                order_text(rows, i, t).map_or("-".into(), |o| format!("{o:.3}")),
            ]);
        }
    }
    s += &table(
        &[
            "lambda",
            "c",
            "eps",
            "delta_qp lattice",
            "delta_pq lattice",
            "delta Gaussian",
            "gap",
            "gap/c",
            "order",
        ],
        &body,
    );
    s
}
