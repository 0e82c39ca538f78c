//! The `--tv-ball` section of `delta`: the certified δ of every mechanism within a TV ball.

use super::table;
use crate::enclosure::{bound_text, exact_string};
use crate::limits::tv::{TvBallRow, tv_ball_budgets};
use crate::query::DeltaRow;
use rug::Rational;
use serde_json::{Value, json};

const SCOPE: &str = "every mechanism with TV(W0, W0') <= eta and TV(W1, W1') <= eta, \
    TV = sup_A |mu(A) - nu(A)|; Part III Lemma 2.4 with TV(T_{n,k}, T'_{n,k}) <= n*eta (Lemmas 2.1-2.2)";

/// The section as JSON.
pub fn tv_ball_json(
    n: u64,
    k: u64,
    eta: &Rational,
    centre: &[DeltaRow],
    ball: &[TvBallRow],
) -> Value {
    let (tv_p, tv_q) = tv_ball_budgets(n, k, eta);
    json!({
        "eta": exact_string(eta),
        "scope": SCOPE,
        "tv_p_bound": exact_string(&tv_p),
        "tv_q_bound": exact_string(&tv_q),
        "results": ball.iter().zip(centre).map(|(b, c)| json!({
            "eps": b.threshold.eps_text(),
            "budget_qp": bound_text(&b.budget_qp),
            "budget_pq": bound_text(&b.budget_pq),
            "delta_qp": b.qp.to_json(),
            "delta_pq": b.pq.to_json(),
            "delta_two_sided": b.two_sided.to_json(),
            "relative_width": b.two_sided.relative_width(),
            "useful": b.useful(c),
        })).collect::<Vec<_>>(),
    })
}

/// The section as text.
pub fn tv_ball_text(
    n: u64,
    k: u64,
    eta: &Rational,
    centre: &[DeltaRow],
    ball: &[TvBallRow],
) -> String {
    let (tv_p, tv_q) = tv_ball_budgets(n, k, eta);
    let mut s = format!(
        "\nevery mechanism within TV distance {} of this one (per input row; TV = sup_A |μ(A) − ν(A)|):\n\
         TV(P, P′) ≤ {}, TV(Q, Q′) ≤ {}; δ′ within TV(Q, Q′) + e^ε TV(P, P′) of δ (Part III Lemma 2.4)\n\n",
        exact_string(eta),
        bound_text(&tv_p),
        bound_text(&tv_q)
    );
    let rows: Vec<Vec<String>> = ball
        .iter()
        .zip(centre)
        .map(|(b, c)| {
            vec![
                b.threshold.eps_text(),
                bound_text(&b.budget_qp.clone().max(b.budget_pq.clone())),
                b.qp.to_string(),
                b.pq.to_string(),
                format!("{:.3e}", b.two_sided.relative_width()),
                if b.useful(c) { "yes" } else { "no" }.to_string(),
            ]
        })
        .collect();
    s += &table(
        &[
            "eps",
            "TV budget",
            "delta_qp in the ball",
            "delta_pq in the ball",
            "rel. width",
            "useful",
        ],
        &rows,
    );
    s
}
