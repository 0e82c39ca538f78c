//! `bounds`: the certified range of a randomizer's profile, its pairs and triples.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

pub(super) fn bounds(cert: &Value) -> Kind {
    let report = &cert["report"];
    let method = &cert["method"];
    let results = array(&report["results"]);
    let eps_target = report["delta"].is_string();
    let mut html = format!(
        "<p>The certified range of {} over every dataset of n = {} users: the <b>upper end</b> is \
         the blanket divergence, the largest over the ordered pairs of inputs; the <b>lower end</b> \
         is the exact value of a concrete pair of neighbouring datasets (one user switches input, \
         the others all hold the same one), the largest over the pairs summed.</p>\n",
        if eps_target {
            format!("ε_M(δ) at δ = {}", code(&text(&report["delta"])))
        } else {
            "δ_M(ε)".into()
        },
        esc(&text(&report["n"]))
    );
    if let Some(note) = report["exp_eps0_note"].as_str() {
        let _ = writeln!(html, "<p class=\"sub\">{}</p>", esc(note));
    }
    let end = |e: &Value, upper: bool| -> String {
        let how = if upper {
            format!(
                "the ordered pair {} → {}",
                esc(&text(&e["x1"])),
                esc(&text(&e["x1_prime"]))
            )
        } else if e["background"].is_null() {
            format!(
                "one user, switching {} → {}",
                esc(&text(&e["x1"])),
                esc(&text(&e["x1_prime"]))
            )
        } else {
            format!(
                "one user switching {} → {}, the others holding {}",
                esc(&text(&e["x1"])),
                esc(&text(&e["x1_prime"])),
                esc(&text(&e["background"]))
            )
        };
        format!("{}<br><span class=\"sub\">{how}</span>", cell(&e["value"]))
    };
    let header = vec![
        if eps_target { "δ" } else { "ε" }.to_string(),
        "lower end (a concrete pair)".into(),
        "upper end (blanket divergence)".into(),
        "upper / lower".into(),
    ];
    let rows = results
        .iter()
        .map(|r| {
            vec![
                code(&if eps_target {
                    text(&report["delta"])
                } else {
                    text(&r["eps"])
                }),
                end(&r["lower"], false),
                end(&r["upper"], true),
                r["ratio_upper_over_lower"]
                    .as_f64()
                    .map_or("–".into(), |x| format!("{x:.3}")),
            ]
        })
        .collect();
    html += &table_html(&header, rows);
    if let Some(profile) = report["binary_profile"].as_array() {
        let _ = writeln!(
            html,
            "<p>Binary inputs: the exact profile over every composition, certified beside the range: {}.</p>",
            profile.iter().map(cell).collect::<Vec<_>>().join(", ")
        );
    }

    // Every summed pair and triple, as recorded in the method.
    let column = |i: usize| -> String {
        if eps_target {
            format!("δ = {}", esc(&text(&report["delta"])))
        } else {
            format!(
                "ε = {}",
                esc(&results.get(i).map_or(String::new(), |r| text(&r["eps"])))
            )
        }
    };
    // A recorded pair (with its background, and the pairs of equal classes it stands for).
    let who = |p: &Value, with_background: bool| -> String {
        let mut who = format!("{} → {}", esc(&text(&p["x1"])), esc(&text(&p["x1_prime"])));
        if with_background {
            let _ = write!(who, ", others {}", esc(&text(&p["x2"])));
        }
        let same = array(&p["same_classes"]);
        if !same.is_empty() {
            let _ = write!(
                who,
                "<br><span class=\"sub\">also {}</span>",
                same.iter()
                    .map(|s| format!("{} → {}", esc(&text(&s[0])), esc(&text(&s[1]))))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        who
    };
    let record_rows = |records: &[Value], with_background: bool| -> Vec<Vec<String>> {
        records
            .iter()
            .map(|p| {
                let mut row = vec![who(p, with_background)];
                for values in array(&p["values"]) {
                    row.push(format!("{}<br>{}", cell(&values[0]), cell(&values[1])));
                }
                row
            })
            .collect()
    };
    let record_header = |what: &str| -> Vec<String> {
        let mut h = vec![what.to_string()];
        h.extend((0..results.len().max(1)).map(|i| format!("{} (forward, reverse)", column(i))));
        h
    };
    let pairs = array(&method["upper_pairs"]);
    if !pairs.is_empty() {
        let _ = writeln!(
            html,
            "<h3>The upper end: {} summed</h3>",
            count(
                pairs.len(),
                "ordered pair and its reverse",
                "ordered pairs and their reverses"
            )
        );
        html += &table_html(&record_header("pair"), record_rows(pairs, false));
    }
    let triples = array(&method["lower_triples"]);
    if !triples.is_empty() {
        let _ = writeln!(
            html,
            "<h3>The lower end: {} summed</h3>",
            count(
                triples.len(),
                "concrete pair of datasets",
                "concrete pairs of datasets"
            )
        );
        if let Some(note) = report["lower_subset"].as_str() {
            let _ = writeln!(html, "<p class=\"sub\">{}</p>", esc(note));
        }
        html += &table_html(
            &record_header("pair (x1 → x1′, others x2)"),
            record_rows(triples, true),
        );
    }
    // Every candidate left out, with its Chernoff bounds (proofs-notes/chernoff-pruning.md).
    let bound_cell = |b: &Value| -> String {
        match b["bound"]
            .as_str()
            .and_then(crate::enclosure::parse_rational)
        {
            Some(q) => format!("≤ {}", esc(&crate::enclosure::bound_text(&q))),
            None => "?".into(),
        }
    };
    let pruned_rows = |records: &[Value], with_background: bool| -> Vec<Vec<String>> {
        records
            .iter()
            .map(|p| {
                let mut row = vec![who(p, with_background)];
                for bounds in array(&p["chernoff"]) {
                    row.push(format!(
                        "{}<br>{}",
                        bound_cell(&bounds[0]),
                        bound_cell(&bounds[1])
                    ));
                }
                row
            })
            .collect()
    };
    for (key, what, with_background) in [
        ("upper_pruned", "pairs left out of the upper end", false),
        (
            "lower_pruned",
            "concrete pairs left out of the lower end",
            true,
        ),
    ] {
        let records = array(&method[key]);
        if records.is_empty() {
            continue;
        }
        let _ = writeln!(
            html,
            "<h3>{} {what}: each one's Chernoff bound is below the end</h3>",
            records.len()
        );
        html += "<p class=\"sub\">Each bound is evaluated in MPFR at the recorded threshold and \
                 tilt; `verify` evaluates it again (proofs-notes/chernoff-pruning.md).</p>\n";
        html += &table_html(
            &record_header(if with_background {
                "pair (x1 → x1′, others x2)"
            } else {
                "pair"
            }),
            pruned_rows(records, with_background),
        );
    }
    let index = &report["shuffle_index"];
    if index.is_object() {
        html += "<h3>The shuffle index</h3>\n";
        let rows = [
            ("chi_up", "χ_up (upper end's pair)"),
            ("chi_lo", "χ_lo (lower end's pair)"),
        ]
        .iter()
        .filter(|(k, _)| index[*k].is_object())
        .map(|(k, label)| {
            let v = &index[*k];
            vec![
                label.to_string(),
                cell(&v["chi"]),
                cell(&v["chi2"]),
                format!("{} → {}", esc(&text(&v["x1"])), esc(&text(&v["x1_prime"]))),
            ]
        })
        .collect();
        html += &table_html(&["index", "χ", "χ²", "pair"], rows);
    }

    // The range against ε (δ targets with several thresholds).
    let mut figures = Vec::new();
    if !eps_target && results.len() > 1 {
        let points = |side: &str| -> Vec<(f64, f64, f64, String)> {
            results
                .iter()
                .filter_map(|r| {
                    let x = number(&r["eps"])?;
                    let (lo, hi) = ends(&r[side]["value"])?;
                    let e = enclosure(&r[side]["value"])?;
                    Some((
                        x,
                        lo,
                        hi,
                        format!("ε = {}: {side} end ∈ {}", text(&r["eps"]), short(&e)),
                    ))
                })
                .collect()
        };
        let (lower, upper) = (points("lower"), points("upper"));
        let all: Vec<f64> = lower
            .iter()
            .chain(&upper)
            .flat_map(|p| [p.1, p.2])
            .collect();
        let mut chart = Chart::new(
            Scale::linear(lower.iter().map(|p| p.0), true),
            Scale::auto(&all),
            "ε",
            "δ_M(ε)",
        );
        for (p, colour, label) in [
            (&lower, svg::BLUE, "lower end"),
            (&upper, svg::PURPLE, "upper end"),
        ] {
            let band: Vec<(f64, f64, f64)> = p.iter().map(|p| (p.0, p.1, p.2)).collect();
            let titles: Vec<String> = p.iter().map(|p| p.3.clone()).collect();
            chart.band(&band, colour, label, &titles);
            for q in p.iter() {
                chart.marker(q.0, q.2, colour, Shape::Circle, &q.3);
            }
        }
        figures.push(figure(
            chart.svg("the certified range of δ_M(ε)"),
            &format!(
                "The certified range of δ_M(ε): the true worst case over every dataset lies between the lower and the upper band at each certified ε (certified only there). {}",
                zero_note(&all)
            ),
        ));
    }

    let mut reproduce = Vec::new();
    if let Some(mut line) = base_command(cert) {
        line.extend(["--n".into(), text(&report["n"])]);
        if eps_target {
            line.extend(["--delta".into(), text(&report["delta"])]);
        } else {
            line.extend(threshold_flags(results));
        }
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "the certified range of {} over every dataset of n = {} users, at {}",
            if eps_target { "ε_M(δ)" } else { "δ_M(ε)" },
            text(&report["n"]),
            if eps_target {
                format!("δ = {}", text(&report["delta"]))
            } else {
                count(results.len(), "value of ε", "values of ε")
            }
        ),
        results: html,
        figures,
        reproduce,
    }
}
