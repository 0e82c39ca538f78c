//! `compare`: published bounds against the certified ε, for each n.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

const SHAPES: [Shape; 4] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
];

pub(super) fn compare(cert: &Value) -> Kind {
    let report = &cert["report"];
    let results = array(&report["results"]);
    let mut html = format!(
        "<p>Published amplification bounds held against the certified ε at δ = {}, for each n.</p>\n",
        code(&text(&report["delta"]))
    );
    let local = &report["local"];
    if local.is_object() {
        let mut rows = vec![
            vec!["ε0".to_string(), cell(&local["eps0"])],
            vec!["e^ε0".to_string(), cell(&local["exp_eps0"])],
        ];
        if !local["k_rr"].is_null() {
            rows.push(vec![
                "recognised as".into(),
                format!("{}-ary randomized response", esc(&text(&local["k_rr"]))),
            ]);
        }
        html += "<h3>Local parameters (what the published bounds are stated in)</h3>\n";
        html += &table_html(&["parameter", "value"], rows);
    }
    let mut figure_points = Vec::new();
    for r in results {
        let n = text(&r["n"]);
        let _ = writeln!(html, "<h3>n = {}</h3>", esc(&n));
        let certified = certified_eps(r);
        let mut rows = Vec::new();
        if !r["certified_eps"].is_null() {
            rows.push(vec!["certified ε_M(δ)".into(), cell(&r["certified_eps"])]);
        }
        let range = &r["certified_eps_range"];
        if range.is_object() {
            for (end, name) in [("lower", "lower end"), ("upper", "upper end")] {
                let e = &range[end];
                let how = if e["background"].is_null() {
                    format!(
                        "<br><span class=\"sub\">the blanket divergence, largest for the ordered pair {} → {}</span>",
                        esc(&text(&e["x1"])),
                        esc(&text(&e["x1_prime"]))
                    )
                } else {
                    format!(
                        "<br><span class=\"sub\">witness: the pair switching one user {} → {}, the others holding {}</span>",
                        esc(&text(&e["x1"])),
                        esc(&text(&e["x1_prime"])),
                        esc(&text(&e["background"]))
                    )
                };
                rows.push(vec![
                    format!("certified range of ε_M(δ): {name}{how}"),
                    cell(&e["value"]),
                ]);
            }
        }
        if !r["boundary_pair_eps"].is_null() {
            rows.push(vec![
                "ε of the boundary pair k = 0".into(),
                cell(&r["boundary_pair_eps"]),
            ]);
        }
        html += &table_html(&["quantity", "certified enclosure"], rows);
        let bounds = array(&r["bounds"]);
        let rows = bounds
            .iter()
            .map(|b| {
                vec![
                    esc(&text(&b["name"])),
                    verdict_tag(&b["status"]),
                    cell(&b["eps"]),
                    cell(&b["ratio_to_certified"]),
                    format!(
                        "{}<br><span class=\"sub\">{}</span>",
                        esc(&text(&b["validity"])),
                        esc(&text(&b["source"]))
                    ),
                ]
            })
            .collect();
        html += &table_html(
            &[
                "published bound",
                "status",
                "its ε",
                "ratio to the certified ε",
                "validity and source",
            ],
            rows,
        );
        if let Some(x) = number(&r["n"]) {
            figure_points.push((x, certified, bounds));
        }
    }
    let mut figures = Vec::new();
    if !figure_points.is_empty() {
        let xs: Vec<f64> = figure_points.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = figure_points
            .iter()
            .flat_map(|p| {
                let c = p.1.map_or(vec![], |(lo, hi)| vec![lo, hi]);
                c.into_iter()
                    .chain(p.2.iter().filter_map(|b| ends(&b["eps"]).map(|e| e.1)))
            })
            .collect();
        let x = if xs.len() > 1
            && xs.iter().cloned().fold(0.0, f64::max)
                / xs.iter().cloned().fold(f64::INFINITY, f64::min)
                > 20.0
        {
            Scale::log(xs.iter().copied(), 30.0).expect("positive n")
        } else {
            Scale::linear(xs.iter().copied(), false)
        };
        let mut chart = Chart::new(x, Scale::linear(ys, true), "n", "ε at the target δ");
        let mut names: Vec<String> = Vec::new();
        for (n, certified, bounds) in &figure_points {
            if let Some((lo, hi)) = certified {
                chart.legend(svg::BLACK, Shape::Square, "certified ε_M(δ)");
                chart.vbar(
                    *n,
                    *lo,
                    *hi,
                    svg::BLACK,
                    &format!("n = {n}: certified ε_M(δ) ∈ [{lo:.6}, {hi:.6}]"),
                );
            }
            for (i, b) in bounds.iter().enumerate() {
                let Some((lo, hi)) = ends(&b["eps"]) else {
                    continue;
                };
                let (colour, label) = match b["status"].as_str() {
                    Some("holds") => (svg::GREEN, "holds"),
                    Some("VIOLATED") => (svg::RED, "VIOLATED"),
                    _ => (svg::GREY, "other status"),
                };
                // One shape per bound, named in the legend; the colour is its status.
                let bound = text(&b["name"]);
                let at = names.iter().position(|x| *x == bound).unwrap_or_else(|| {
                    names.push(bound.clone());
                    names.len() - 1
                });
                let shape = SHAPES[at % SHAPES.len()];
                chart.legend(colour, Shape::Circle, label);
                chart.legend(svg::GREY, shape, &bound);
                chart.marker_dx(
                    *n,
                    (i as f64 - bounds.len() as f64 / 2.0) * 5.0,
                    0.5 * (lo + hi),
                    colour,
                    shape,
                    &format!(
                        "n = {n}: {bound} ({}): ε ∈ {}",
                        text(&b["status"]),
                        enclosure(&b["eps"]).map_or(String::new(), |e| short(&e))
                    ),
                );
            }
        }
        figures.push(figure(
            chart.svg("published bounds against the certified ε"),
            "The certified ε at the target δ for each n (black interval) and the ε of each published bound that applies (one shape for each bound; green: holds, at or above the certified value; red: VIOLATED, below it). Bounds outside their validity give no ε and are in the tables only.",
        ));
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = base_command(cert) {
        let ns: Vec<String> = results.iter().map(|r| text(&r["n"])).collect();
        line.extend([
            "--n".into(),
            ns.join(","),
            "--delta".into(),
            text(&report["delta"]),
        ]);
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "published bounds against the certified ε at δ = {}, for n = {}",
            text(&report["delta"]),
            results
                .iter()
                .map(|r| text(&r["n"]))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        results: html,
        figures,
        reproduce,
    }
}

/// The certified ε of a compare row as doubles: the mechanism's, or the certified range.
fn certified_eps(r: &Value) -> Option<(f64, f64)> {
    ends(&r["certified_eps"]).or_else(|| {
        let range = &r["certified_eps_range"];
        Some((
            ends(&range["lower"]["value"])?.0,
            ends(&range["upper"]["value"])?.1,
        ))
    })
}
