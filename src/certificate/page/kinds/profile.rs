//! `profile`: the worst case over every composition, and how the scan proved it.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

/// One row of a profile: what it is, where its value is, and its index among the quantities.
struct Row<'a> {
    label: String,
    /// The axis name of the per-k picture.
    axis: String,
    row: &'a Value,
    value: &'a Value,
}

/// The profile's rows in the order of `method.quantities` (δ rows, ε rows, Rényi rows).
fn profile_rows<'a>(report: &'a Value, method: &'a Value) -> Vec<Row<'a>> {
    let deltas = array(&report["results"]);
    let epsilons = array(&report["eps_results"]);
    let renyi = array(&report["renyi_profile"]);
    let (mut d, mut e, mut r) = (0, 0, 0);
    let mut rows = Vec::new();
    for q in array(&method["quantities"]) {
        let row = match q["kind"].as_str() {
            Some("delta") => deltas.get(d).map(|row| {
                d += 1;
                Row {
                    label: format!("δ_M({})", text(&row["eps"])),
                    axis: format!("δ({}) of the pair", text(&row["eps"])),
                    row,
                    value: &row["delta_profile"],
                }
            }),
            Some("epsilon") => epsilons.get(e).map(|row| {
                e += 1;
                Row {
                    label: format!("ε_M({})", text(&row["delta"])),
                    axis: format!("ε at δ = {} of the pair", text(&row["delta"])),
                    row,
                    value: &row["eps_profile"],
                }
            }),
            Some("renyi") => renyi.get(r).map(|row| {
                r += 1;
                Row {
                    label: format!("D_{} (Rényi)", text(&row["order"])),
                    axis: format!("D_{} of the pair", text(&row["order"])),
                    row,
                    value: &row["value"],
                }
            }),
            _ => None,
        };
        rows.push(row);
    }
    // A certificate without quantities (or with rows the quantities do not name): the rows alone.
    if rows.iter().all(Option::is_none) {
        return deltas
            .iter()
            .map(|row| Row {
                label: format!("δ_M({})", text(&row["eps"])),
                axis: "δ".into(),
                row,
                value: &row["delta_profile"],
            })
            .chain(epsilons.iter().map(|row| Row {
                label: format!("ε_M({})", text(&row["delta"])),
                axis: "ε".into(),
                row,
                value: &row["eps_profile"],
            }))
            .collect();
    }
    rows.into_iter().flatten().collect()
}

fn argmax_words(row: &Value) -> String {
    let mut parts: Vec<String> = array(&row["argmax_k"])
        .iter()
        .map(|a| format!("k = {} ({})", text(&a["k"]), text(&a["direction"])))
        .collect();
    parts.extend(
        array(&row["argmax_k_ranges"])
            .iter()
            .map(|r| format!("k in {}..{} (value 0)", text(&r[0]), text(&r[1]))),
    );
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join(", ")
    }
}

pub(super) fn profile(cert: &Value) -> Kind {
    let report = &cert["report"];
    let method = &cert["method"];
    let rows = profile_rows(report, method);
    let mut html = format!("<p>Scope: {}.</p>\n", esc(&text(&report["scope"])));
    if report["partial"] == Value::Bool(true) {
        html += "<p class=\"verdict invalid\">PARTIAL profile: only part of the range of k was scanned; this is not the mechanism's guarantee.</p>\n";
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            vec![
                esc(&r.label),
                cell(r.value),
                esc(&argmax_words(r.row)),
                code(&text(&r.row["resolved"])),
            ]
        })
        .collect();
    html += &table_html(
        &[
            "quantity (worst case over every k, both orders)",
            "certified enclosure",
            "argmax",
            "resolved",
        ],
        table_rows,
    );
    html += "<h3>How the maximum was proven</h3>\n";
    let _ = writeln!(
        html,
        "<p>{}: {} evaluated, {} of k closed at {} ({}), {} refined.</p>",
        esc(&text(&method["route"])),
        number_of(&method["pairs_evaluated"], "pair", "pairs"),
        number_of(&method["k_pruned"], "value", "values"),
        number_of(&method["nodes_bounded"], "node", "nodes"),
        count(
            array(&method["closures"]).len(),
            "closed range",
            "closed ranges"
        ),
        number_of(&method["pairs_refined"], "pair", "pairs")
    );
    let shards = array(&method["shards"]);
    if !shards.is_empty() {
        html += "<h3>Merged from shards</h3>\n";
        let rows = shards
            .iter()
            .map(|s| {
                vec![
                    code(&text(&s["file"])),
                    code(&format!(
                        "{}..{}",
                        text(&s["k_range"][0]),
                        text(&s["k_range"][1])
                    )),
                    code(&text(&s["digest"])),
                ]
            })
            .collect();
        html += &table_html(&["shard", "k", "digest"], rows);
    }

    let mut figures = Vec::new();
    let partial = report["partial"] == Value::Bool(true);
    if let Some(f) = profile_curve(&rows, partial) {
        figures.push(f);
    }
    const MOST: usize = 6;
    for (q, row) in rows.iter().enumerate().take(MOST) {
        if let Some(f) = by_k(report, method, q, row) {
            figures.push(f);
        }
    }
    if rows.len() > MOST {
        figures.push(format!(
            "<p class=\"sub\">The first {MOST} quantities are drawn against k; the table above holds all {}.</p>\n",
            rows.len()
        ));
    }

    Kind {
        summary: format!(
            "the worst case over every composition of {} at n = {}",
            count(rows.len(), "quantity", "quantities"),
            text(&report["n"])
        ),
        results: html,
        figures,
        reproduce: profile_command(cert),
    }
}

/// The certified privacy curve of a profile: δ_M(ε) at each ε as a band (one ε: an interval),
/// and ε_M(δ) at each δ as a horizontal interval.
fn profile_curve(rows: &[Row], partial: bool) -> Option<String> {
    let deltas: Vec<(f64, f64, f64, String)> = rows
        .iter()
        .filter(|r| r.value == &r.row["delta_profile"])
        .filter_map(|r| {
            let (lo, hi) = ends(r.value)?;
            Some((
                number(&r.row["eps"])?,
                lo,
                hi,
                format!("{} ∈ {}", r.label, short(&enclosure(r.value)?)),
            ))
        })
        .collect();
    let epsilons: Vec<(f64, f64, f64, String)> = rows
        .iter()
        .filter(|r| r.value == &r.row["eps_profile"])
        .filter_map(|r| {
            let (lo, hi) = ends(r.value)?;
            Some((
                number(&r.row["delta"])?,
                lo,
                hi,
                format!("{} ∈ {}", r.label, short(&enclosure(r.value)?)),
            ))
        })
        .filter(|p| p.2.is_finite())
        .collect();
    if deltas.is_empty() && epsilons.is_empty() {
        return None;
    }
    let ys: Vec<f64> = deltas
        .iter()
        .flat_map(|p| [p.1, p.2])
        .chain(epsilons.iter().map(|p| p.0))
        .collect();
    let xs: Vec<f64> = deltas
        .iter()
        .map(|p| p.0)
        .chain(epsilons.iter().flat_map(|p| [p.1, p.2]))
        .collect();
    let mut chart = Chart::new(Scale::linear(xs, true), Scale::auto(&ys), "ε", "δ");
    if !deltas.is_empty() {
        let band: Vec<(f64, f64, f64)> = deltas.iter().map(|p| (p.0, p.1, p.2)).collect();
        let titles: Vec<String> = deltas.iter().map(|p| p.3.clone()).collect();
        chart.band(&band, svg::BLUE, "δ_M(ε), certified", &titles);
    }
    for p in &epsilons {
        chart.legend(svg::RED, Shape::Square, "ε_M(δ), certified");
        chart.hbar(p.1, p.2, p.0, svg::RED, &p.3);
    }
    Some(figure(
        chart.svg("the certified privacy curve of the mechanism"),
        &format!(
            "{}: δ_M(ε) as the interval between the ends of its enclosure at each certified ε{}, and ε_M(δ) as a horizontal interval at each target δ. {}",
            if partial {
                "The certified worst case over the scanned range of k only (a PARTIAL profile, not the mechanism's guarantee)"
            } else {
                "The mechanism's certified privacy curve, the worst case over every composition k and both orders"
            },
            if deltas.len() > 1 {
                " (the band joins them and is certified only there)"
            } else {
                ""
            },
            zero_note(&ys)
        ),
    ))
}

/// One quantity against k: every evaluated pair (both orders), every range of k closed at a
/// node (shaded up to the bound that closed it), the certified maximum and its argmax.
fn by_k(report: &Value, method: &Value, q: usize, row: &Row) -> Option<String> {
    let (k0, k1) = (
        report["k_range"][0].as_u64()? as f64,
        report["k_range"][1].as_u64()? as f64,
    );
    let (max_lo, max_hi) = ends(row.value)?;
    let mut points = Vec::new();
    for r in array(&method["records"]) {
        let Some(k) = r["k"].as_u64() else { continue };
        for (dir, colour, dx) in [("qp", svg::BLUE, -0.12), ("pq", svg::PURPLE, 0.12)] {
            let v = &r[dir][q];
            if let (Some((lo, hi)), Some(e)) = (ends(v), enclosure(v)) {
                let title = format!("k = {k} ({dir}): {} ∈ {}", row.axis, short(&e));
                points.push((k as f64, dx, lo, hi, colour, dir, title));
            }
        }
    }
    let ys: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.2, p.3])
        .chain([max_lo, max_hi])
        .filter(|y| y.is_finite())
        .collect();
    let y = Scale::linear(ys, true);
    let pad = (0.015 * (k1 - k0)).max(0.5);
    let mut chart = Chart::new(
        Scale::span(k0 - pad, k1 + pad),
        y,
        "k (users holding input 1 among the other n − 1)",
        &row.axis,
    );
    // Closed ranges, adjacent ones of one kind drawn together.
    let mut closed: Vec<(u64, u64, String, usize)> = Vec::new();
    for c in array(&method["closures"]) {
        if c["quantity"].as_u64() != Some(q as u64) {
            continue;
        }
        let (Some(a), Some(b), kind) = (
            c["range"][0].as_u64(),
            c["range"][1].as_u64(),
            text(&c["kind"]),
        ) else {
            continue;
        };
        match closed.last_mut() {
            Some(last) if last.1 == a && last.2 == kind => {
                last.1 = b;
                last.3 += 1;
            }
            _ => closed.push((a, b, kind, 1)),
        }
    }
    closed.sort_by_key(|c| c.0);
    for (a, b, kind, ranges) in &closed {
        let (top, colour, why) = match kind.as_str() {
            "below" => (
                max_lo,
                svg::GREY,
                "both orders proven below the lower end of the certified maximum",
            ),
            "ceiling" => (
                max_hi,
                svg::ORANGE,
                "both orders proven at most the upper end of the certified maximum",
            ),
            "tie" => (
                max_hi,
                svg::GREEN,
                "value proven 0 (for ε: TV ≤ δ), a tie at most",
            ),
            _ => (max_hi, svg::GREY, "closed at a node"),
        };
        let top = if top.is_finite() { top } else { max_lo };
        chart.legend(colour, Shape::Square, &format!("closed at a node ({kind})"));
        chart.region(
            (*a as f64 - 0.5, *b as f64 - 0.5),
            (0.0, top),
            colour,
            &format!(
                "k in {a}..{}: {} closed at nodes ({kind}): {why}",
                b - 1,
                count(*ranges, "range", "ranges")
            ),
        );
    }
    if max_hi.is_finite() {
        chart.legend(svg::BLACK, Shape::Square, "certified maximum");
        chart.hband(
            max_lo,
            max_hi,
            svg::BLACK,
            &format!(
                "certified maximum {} ∈ {}",
                row.label,
                short(&enclosure(row.value)?)
            ),
        );
    }
    for (k, dx, lo, hi, colour, dir, title) in &points {
        chart.legend(colour, Shape::Circle, &format!("evaluated pair, {dir}"));
        chart.vbar(k + dx, *lo, *hi, colour, title);
    }
    for a in array(&row.row["argmax_k"]) {
        let (Some(k), Some((lo, hi))) = (a["k"].as_u64(), ends(&a["value"])) else {
            continue;
        };
        let dx = if a["direction"] == "pq" { 0.12 } else { -0.12 };
        chart.legend(svg::RED, Shape::Ring, "argmax");
        chart.label(k as f64, hi, 14.0, &format!("k = {k}"));
        chart.marker(
            k as f64 + dx,
            0.5 * (lo + hi),
            svg::RED,
            Shape::Ring,
            &format!("argmax: k = {k} ({})", text(&a["direction"])),
        );
    }
    for r in array(&row.row["argmax_k_ranges"]) {
        if let (Some(a), Some(b)) = (r[0].as_u64(), r[1].as_u64()) {
            chart.legend(svg::RED, Shape::Square, "argmax range");
            chart.region(
                (a as f64 - 0.5, b as f64 + 0.5),
                (0.0, max_hi.max(0.0)),
                svg::RED,
                &format!("argmax: every k in {a}..{b} (value 0)"),
            );
        }
    }
    Some(figure(
        chart.svg(&format!("{} against k", row.label)),
        &format!(
            "{} against k: the pairs the scan evaluated (both orders), the ranges of k it closed at a node without evaluating them (shaded up to the bound that closed them), the certified maximum (black band) and its argmax (red ring).",
            esc(&row.label)
        ),
    ))
}

/// A count from the certificate with its noun (`1 pair`, `5 pairs`; `—` when missing).
fn number_of(v: &Value, one: &str, many: &str) -> String {
    v.as_u64()
        .map_or("—".into(), |n| count(n as usize, one, many))
}
