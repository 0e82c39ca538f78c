//! `delta`, `epsilon` and `divergences`: one pair's curves and divergences.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

pub(super) fn delta(cert: &Value) -> Kind {
    let report = &cert["report"];
    let results = array(&report["results"]);
    // Every enclosure field of the rows, the usual ones first.
    let mut keys: Vec<String> = ["delta_qp", "delta_pq", "delta_two_sided"]
        .iter()
        .map(|k| k.to_string())
        .filter(|k| results.iter().any(|r| enclosure(&r[k]).is_some()))
        .collect();
    for r in results {
        for (k, v) in r.as_object().into_iter().flatten() {
            if enclosure(v).is_some() && !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut header = vec!["ε".to_string()];
    header.extend(keys.iter().map(|k| esc(&name(k))));
    let rows = results
        .iter()
        .map(|r| {
            let mut row = vec![code(&text(&r["eps"]))];
            row.extend(keys.iter().map(|k| cell(&r[k.as_str()])));
            row
        })
        .collect();
    let mut html = format!("<p>δ(ε) of {}.</p>\n", esc(&pair_words(report)));
    html += &table_html(&header, rows);
    other_fields(report, &["results"], &mut html);

    let mut figures = Vec::new();
    let curves: Vec<(&str, &str)> = [("delta_qp", svg::BLUE), ("delta_pq", svg::PURPLE)]
        .into_iter()
        .filter(|(k, _)| keys.iter().any(|x| x == k))
        .collect();
    let points = |key: &str| -> Vec<(f64, f64, f64, String)> {
        results
            .iter()
            .filter_map(|r| {
                let x = number(&r["eps"])?;
                let (lo, hi) = ends(&r[key])?;
                let e = enclosure(&r[key])?;
                Some((
                    x,
                    lo,
                    hi,
                    format!("ε = {}: {} ∈ {}", text(&r["eps"]), name(key), short(&e)),
                ))
            })
            .collect()
    };
    let all: Vec<f64> = curves
        .iter()
        .flat_map(|(k, _)| points(k))
        .flat_map(|p| [p.1, p.2])
        .collect();
    let xs: Vec<f64> = curves
        .iter()
        .flat_map(|(k, _)| points(k))
        .map(|p| p.0)
        .collect();
    if !xs.is_empty() {
        let mut chart = Chart::new(
            Scale::linear(xs.iter().copied(), true),
            Scale::auto(&all),
            "ε",
            "δ(ε)",
        );
        for (key, colour) in &curves {
            let p = points(key);
            let band: Vec<(f64, f64, f64)> = p.iter().map(|p| (p.0, p.1, p.2)).collect();
            let titles: Vec<String> = p.into_iter().map(|p| p.3).collect();
            chart.band(&band, colour, &name(key), &titles);
        }
        figures.push(figure(
            chart.svg("the certified privacy curves"),
            &format!(
                "The certified privacy curves δ(ε) of the pair: at each certified ε, the interval from the lower to the upper end of its enclosure{}. {}",
                if xs.len() > curves.len() {
                    "; the band joins those intervals and is certified only at them"
                } else {
                    ""
                },
                zero_note(&all)
            ),
        ));
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = pair_command(cert) {
        line.extend(threshold_flags(results));
        if let Some(eta) = report["tv_ball"]["eta"].as_str() {
            line.extend(["--tv-ball".into(), eta.to_string()]);
        }
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "δ(ε) at {} of {}",
            count(results.len(), "value of ε", "values of ε"),
            pair_words(report)
        ),
        results: html,
        figures,
        reproduce,
    }
}

pub(super) fn epsilon(cert: &Value) -> Kind {
    let report = &cert["report"];
    let keys = ["eps_qp", "eps_pq", "eps_two_sided"];
    let rows = keys
        .iter()
        .filter(|k| !report[**k].is_null())
        .map(|k| vec![esc(&name(k)), cell(&report[*k])])
        .collect();
    let mut html = format!(
        "<p>The smallest ε with δ(ε) ≤ {} for {}.</p>\n",
        code(&text(&report["delta"])),
        esc(&pair_words(report))
    );
    html += &table_html(&["quantity", "certified enclosure"], rows);
    let witnesses = &report["witnesses"];
    if let Some(w) = witnesses.as_object() {
        html += "<h3>Witnesses</h3>\n<p class=\"sub\">δ at the certified thresholds: δ(c_hi) ≤ D and δ(c_lo) > D, so ε lies in [ln c_lo, ln c_hi].</p>\n";
        let rows = w
            .iter()
            .map(|(dir, v)| {
                vec![
                    code(dir),
                    code(&text(&v["exp_eps_lo"])),
                    code(&text(&v["exp_eps_hi"])),
                    cell(&v["delta_at_exp_eps_hi"]),
                    cell(&v["singular_mass"]),
                ]
            })
            .collect();
        html += &table_html(
            &["direction", "c_lo", "c_hi", "δ(c_hi)", "singular mass"],
            rows,
        );
    }
    other_fields(report, &["witnesses"], &mut html);

    let mut figures = Vec::new();
    let d = number(&report["delta"]);
    if let Some(d) = d.filter(|d| *d > 0.0) {
        let bars: Vec<(&str, &str, (f64, f64))> = [("eps_qp", svg::BLUE), ("eps_pq", svg::PURPLE)]
            .into_iter()
            .filter_map(|(k, c)| Some((k, c, ends(&report[k])?)))
            .collect();
        let xs: Vec<f64> = bars.iter().flat_map(|b| [b.2.0, b.2.1]).collect();
        if !xs.is_empty() {
            let mut chart = Chart::new(
                Scale::linear(xs.iter().copied(), true),
                Scale::log([d], 30.0).expect("positive"),
                "ε",
                "δ",
            );
            chart.hline(
                d,
                svg::GREY,
                &format!("target δ = {}", text(&report["delta"])),
            );
            for (k, colour, (lo, hi)) in bars {
                let e = enclosure(&report[k]).expect("read above");
                chart.legend(colour, Shape::Square, &name(k));
                chart.hbar(lo, hi, d, colour, &format!("{} ∈ {}", name(k), short(&e)));
            }
            figures.push(figure(
                chart.svg("the certified ε at the target δ"),
                "The certified ε of each direction at the target δ (dashed line): the point where the privacy curve crosses it.",
            ));
        }
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = pair_command(cert) {
        line.extend(["--delta".into(), text(&report["delta"])]);
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "ε at δ = {} of {}",
            text(&report["delta"]),
            pair_words(report)
        ),
        results: html,
        figures,
        reproduce,
    }
}

pub(super) fn divergences(cert: &Value) -> Kind {
    let report = &cert["report"];
    let mut rows = Vec::new();
    for (k, v) in report.as_object().into_iter().flatten() {
        if enclosure(v).is_some() {
            rows.push(vec![esc(&name(k)), cell(v)]);
        }
    }
    let mut orders = Vec::new();
    for (key, dir) in [("renyi_qp", "Q‖P"), ("renyi_pq", "P‖Q")] {
        for r in array(&report[key]) {
            let order = text(&r["order"]);
            if !orders.contains(&order) {
                orders.push(order.clone());
            }
            rows.push(vec![
                esc(&format!("Rényi divergence D_{order}({dir})")),
                cell(&r["value"]),
            ]);
        }
    }
    let mut html = format!(
        "<p>Divergences of {}, in {}.</p>\n",
        esc(&pair_words(report)),
        esc(&text(&report["units"]))
    );
    html += &table_html(&["quantity", "certified enclosure"], rows);
    let mut reproduce = Vec::new();
    if let Some(mut line) = pair_command(cert) {
        if !orders.is_empty() {
            line.extend(["--renyi-order".into(), orders.join(",")]);
        }
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!("divergences of {}", pair_words(report)),
        results: html,
        figures: Vec::new(),
        reproduce,
    }
}

/// Arrays of enclosures that a pair report holds besides the ones shown (future fields), as a
/// note pointing to the full table.
fn other_fields(report: &Value, shown: &[&str], html: &mut String) {
    let extra: Vec<&String> = report
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| {
            !shown.contains(&k.as_str())
                && !k.starts_with("eps_")
                && (v.is_array() || v.is_object())
                && !crate::certificate::page::enclosures(v).is_empty()
        })
        .map(|(k, _)| k)
        .collect();
    if !extra.is_empty() {
        let names: Vec<String> = extra.iter().map(|k| code(k)).collect();
        let _ = writeln!(
            html,
            "<p class=\"sub\">Further certified values ({}) are listed in <a href=\"#enclosures\">every enclosure in the report</a>.</p>",
            names.join(", ")
        );
    }
}
