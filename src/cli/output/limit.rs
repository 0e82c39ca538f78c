//! Reports of the Part III limit layer: `limit` (a sequence against its limit) and the
//! boundary Berry–Esseen diagnostic.

use super::table;
use crate::enclosure::{Enclosure, bound_text, exact_string};
use crate::limits::berry_esseen::{self, BerryEsseenRow, Scale};
use crate::limits::study::{Study, observed_order};
use rug::Rational;
use serde_json::{Value, json};

const BERRY_ESSEEN_SCOPE: &str = "Part III Theorem 8.1 / Corollary 8.2: |delta_lattice(eps) - delta_Gauss(eps)| <= C_eps * c, c = lambda^(-1/2); \
    every delta and gap is certified, but C_eps is not explicit: gap/c and the observed order are observations, not certificates";

fn short(e: &Enclosure) -> String {
    e.compact(6)
}

/// The order observed at threshold `t` between row `i − 1` and row `i`.
fn order_text(rows: &[BerryEsseenRow], i: usize, t: usize) -> Option<f64> {
    (i > 0)
        .then(|| berry_esseen::observed_order(&rows[i - 1], &rows[i], t))
        .flatten()
}

/// What `observed` holds, in every report of the limit layer.
const OBSERVED_NOTE: &str = "numbers under `observed` (certified: false) are observations in doubles computed from the certified enclosures' midpoints, and a proved order is a prediction (the paper's constants are not explicit): none is certified";

/// The diagnostic as JSON.
pub fn berry_esseen_json(
    rows: &[BerryEsseenRow],
    scale: &Scale,
    skellam_pi: Option<&rug::Rational>,
) -> Value {
    json!({
        "command": "berry-esseen",
        "certified": true,
        "scope": BERRY_ESSEEN_SCOPE,
        "observed_note": OBSERVED_NOTE,
        "lattice_experiment": if skellam_pi.is_some() { "skellam-shift" } else { "poisson-shift" },
        "pi": skellam_pi.map(exact_string),
        "scale": match scale {
            Scale::Fixed(list) => json!({
                "kind": "fixed",
                "eps": list.iter().map(|t| t.eps_text()).collect::<Vec<_>>(),
            }),
            Scale::Local(ts) => json!({
                "kind": "local",
                "t": ts.iter().map(exact_string).collect::<Vec<_>>(),
            }),
        },
        "rows": rows.iter().enumerate().map(|(i, r)| json!({
            "lambda": exact_string(&r.lambda),
            "experiment": r.experiment,
            "c": r.c.to_json(),
            "arithmetic": r.arithmetic,
            "gaussian_arithmetic": r.gaussian_arithmetic,
            "results": r.lattice.iter().enumerate().map(|(t, row)| json!({
                "eps": row.threshold.eps_text(),
                "delta_qp": row.qp.to_json(),
                "delta_pq": row.pq.to_json(),
                "delta_gaussian": r.gaussian[t].to_json(),
                "gap": r.gap[t].to_json(),
                "observed": {
                    "certified": false,
                    "gap_over_c": r.scaled_gap(t),
                    "order": order_text(rows, i, t),
                },
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

fn vector(v: &[Rational]) -> String {
    format!(
        "({})",
        v.iter().map(exact_string).collect::<Vec<_>>().join(", ")
    )
}

fn vector_json(v: &[Rational]) -> Value {
    v.iter().map(exact_string).collect()
}

fn set(s: &[usize]) -> String {
    format!(
        "{{{}}}",
        s.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

const DIRECTIONS: [&str; 2] = ["qp", "pq"];

/// `limit` as JSON.
pub fn limit_json(s: &Study) -> Value {
    let c = &s.coverage;
    json!({
        "command": "limit",
        "certified": true,
        "observed_note": OBSERVED_NOTE,
        "sequence": s.sequence.name,
        "k_rule": s.rule.text(),
        "geometry": s.geometry.to_json(),
        "regime": format!("{:?}", c.regime),
        "theorem_3_1_iii_part": c.part,
        "proved_order": c.order.map(|(o, src)| json!({"power_of_one_over_n": o, "source": src, "certified": false})),
        "note": c.note,
        "limit_on_reduced_alphabet": s.limit_on_reduced,
        "geometry_on_reduced_alphabet": s.geometry_on_reduced,
        "limit_pair": s.limit_pair.as_ref().map(|(pair, provenance)| json!({
            "shift": vector_json(&pair.shift),
            "jumps": pair.jumps.iter().map(|j| json!({
                "vector": vector_json(&j.vector),
                "intensity": exact_string(&j.intensity),
            })).collect::<Vec<_>>(),
            "arithmetic": provenance.arithmetic,
        })),
        "thresholds": s.thresholds.iter().enumerate().map(|(t, th)| json!({
            "eps": th.eps_text(),
            "resonant": s.resonant[t],
            "delta_limit_qp": s.limit.as_ref().map(|l| l[t].qp.to_json()),
            "delta_limit_pq": s.limit.as_ref().map(|l| l[t].pq.to_json()),
        })).collect::<Vec<_>>(),
        "rows": s.rows.iter().enumerate().map(|(i, r)| json!({
            "n": r.n,
            "k": r.k,
            "arithmetic": r.provenance.arithmetic,
            "results": r.finite.iter().enumerate().map(|(t, f)| {
                let mut v = json!({
                    "eps": f.threshold.eps_text(),
                    "delta_qp": f.qp.to_json(),
                    "delta_pq": f.pq.to_json(),
                });
                let mut observed = json!({ "certified": false });
                if !r.gap.is_empty() {
                    for (d, dir) in DIRECTIONS.iter().enumerate() {
                        let g = &r.gap[t][d];
                        v[format!("gap_{dir}")] = g.to_json();
                        observed[format!("n_gap_{dir}")] = json!(g.mid_f64() * r.n as f64);
                        observed[format!("sqrt_n_gap_{dir}")] = json!(g.mid_f64() * (r.n as f64).sqrt());
                        observed[format!("order_{dir}")] = json!(observed_order(&s.rows, i, t, d));
                    }
                }
                if let Some((_, widened)) = &r.transfer {
                    for (d, dir) in DIRECTIONS.iter().enumerate() {
                        let w = &widened[t][d];
                        v[format!("from_limit_{dir}")] = w.delta.to_json();
                        v[format!("from_limit_budget_{dir}")] = json!(bound_text(&w.budget));
                        v[format!("from_limit_useful_{dir}")] = json!(w.useful);
                        observed[format!("from_limit_relative_width_{dir}")] = json!(w.delta.relative_width());
                    }
                }
                if observed.as_object().is_some_and(|o| o.len() > 1) {
                    v["observed"] = observed;
                }
                v
            }).collect::<Vec<_>>(),
            "theorem_7_2_auxiliary": r.auxiliary.iter().map(|a| json!({
                "block": a.block, "m": a.m, "p": exact_string(&a.p), "q": exact_string(&a.q),
                "tv": a.tv.to_json(),
                "observed": { "certified": false, "sqrt_n_tv": a.tv.mid_f64() * (r.n as f64).sqrt() },
            })).collect::<Vec<_>>(),
            "tv_budget": r.transfer.as_ref().map(|(b, _)| json!({
                "tv_p": bound_text(&b.tv_p), "tv_q": bound_text(&b.tv_q),
            })),
        })).collect::<Vec<_>>(),
    })
}

/// `limit` as text.
pub fn limit_text(s: &Study) -> String {
    let g = &s.geometry;
    let c = &s.coverage;
    let mut out = format!(
        "shufflecert limit: {} (d = {}), k-rule {} (π = {})\n",
        s.sequence.name,
        g.d,
        s.rule.text(),
        exact_string(&g.pi)
    );
    out += if s.geometry_on_reduced {
        "geometry of the sufficiency-reduced sequence (Part III Definition 2.10, exact; same finite-n curves):\n"
    } else {
        "geometry (Part III Definition 2.10, exact):\n"
    };
    for b in 0..2 {
        out += &format!(
            "  D{b} = {}  p{b} = {}  α{b} = {}\n",
            set(&g.dominant[b]),
            vector(&g.p[b]),
            vector(&g.alpha[b])
        );
    }
    out += &format!(
        "  dim M0 = {}, dim M1 = {}, dim M = {}; components {}; atoms {}\n",
        g.dims[0],
        g.dims[1],
        g.dims[2],
        g.components
            .iter()
            .map(|c| set(c))
            .collect::<Vec<_>>()
            .join(" "),
        g.atoms
            .iter()
            .map(|a| vector(a))
            .collect::<Vec<_>>()
            .join(" ")
    );
    out += &format!("  Δ = {}\n", vector(&g.delta));
    for j in g.nu() {
        out += &format!(
            "  ν: {} at j_{{{},{}}} = {}\n",
            exact_string(&j.intensity),
            j.group,
            j.output,
            vector(&j.vector)
        );
    }
    if g.dims[2] > 0 && g.d <= 8 {
        out += &format!(
            "  Σ = [{}]\n",
            g.sigma
                .iter()
                .map(|r| vector(r))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out += &format!(
        "case: {}, {}; regime: {:?}; Theorem 3.1(iii): {}\n",
        format!("{:?}", g.overlap()).to_lowercase(),
        g.specialisation(),
        c.regime,
        c.part.unwrap_or("not covered")
    );
    out += &format!(
        "proved order: {} — {}\n",
        c.order.map_or("none".to_string(), |(o, src)| format!(
            "|δ_n − δ_∞| = O(n^-{o}) ({src})"
        )),
        c.note
    );
    if s.limit_on_reduced {
        out += "the limit pair was computed on the sufficiency-reduced alphabet (same finite-n curves)\n";
    }
    for (t, th) in s.thresholds.iter().enumerate() {
        if s.resonant[t] {
            out += &format!(
                "ε = {} is resonant: a limit likelihood ratio equals e^(±ε); convergence there can be slower\n",
                th.eps_text()
            );
        }
    }
    out += "every [lo, hi] is certified; n·gap, √n·gap and the observed order are observations\n\n";
    let mut body = Vec::new();
    let mut via_limit: Vec<Vec<String>> = Vec::new();
    for (t, th) in s.thresholds.iter().enumerate() {
        for (d, dir) in DIRECTIONS.iter().enumerate() {
            let lim = s
                .limit
                .as_ref()
                .map(|l| if d == 0 { &l[t].qp } else { &l[t].pq });
            for (i, r) in s.rows.iter().enumerate() {
                let f = if d == 0 {
                    &r.finite[t].qp
                } else {
                    &r.finite[t].pq
                };
                let (gap, ngap, order) = match r.gap.get(t) {
                    Some(g) => (
                        g[d].compact(4),
                        format!("{:.4}", g[d].mid_f64() * r.n as f64),
                        observed_order(&s.rows, i, t, d).map_or("-".into(), |o| format!("{o:.2}")),
                    ),
                    None => ("-".into(), "-".into(), "-".into()),
                };
                if let Some((_, w)) = &r.transfer {
                    let w = &w[t][d];
                    via_limit.push(vec![
                        th.eps_text(),
                        dir.to_string(),
                        r.n.to_string(),
                        w.delta.compact(4),
                        crate::enclosure::rounded_up(&w.budget, 3),
                        if w.useful { "yes" } else { "no" }.to_string(),
                    ]);
                }
                body.push(vec![
                    th.eps_text(),
                    dir.to_string(),
                    r.n.to_string(),
                    r.k.to_string(),
                    f.compact(6),
                    lim.map_or("-".into(), |l| l.compact(6)),
                    gap,
                    ngap,
                    order,
                ]);
            }
        }
    }
    out += &table(
        &[
            "eps",
            "dir",
            "n",
            "k",
            "delta_n",
            "delta_limit",
            "gap",
            "n*gap",
            "order",
        ],
        &body,
    );
    if !via_limit.is_empty() {
        out += "\ndelta_n from the limit curve and its certified TV budget (Lemma 2.4):\n";
        out += &table(
            &["eps", "dir", "n", "delta_n via limit", "budget", "useful"],
            &via_limit,
        );
    }
    let aux: Vec<Vec<String>> = s
        .rows
        .iter()
        .flat_map(|r| {
            r.auxiliary.iter().map(move |a| {
                vec![
                    r.n.to_string(),
                    format!("D{}", a.block),
                    a.m.to_string(),
                    exact_string(&a.p),
                    exact_string(&a.q),
                    a.tv.compact(6),
                    format!("{:.4}", a.tv.mid_f64() * (r.n as f64).sqrt()),
                ]
            })
        })
        .collect();
    if !aux.is_empty() {
        out += "\nTheorem 7.2's auxiliary comparison on one cross message: TV(S + Ber(q), S + Ber(p)), S ~ Bin(m, p) (Theorem 7.1, certified)\n";
        out += &table(&["n", "block", "m", "p", "q", "TV", "sqrt(n)*TV"], &aux);
    }
    out
}
