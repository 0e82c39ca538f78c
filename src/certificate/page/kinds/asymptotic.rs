//! `check`, `limit` and `berry-esseen`: certified values beside what they are held against
//! (predictions, limits, a Gaussian shift), the uncertified parts labelled as such.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

/// A chart of certified enclosures (bars) against x, with markers beside them; `None` when
/// nothing can be drawn.
fn bars_and_markers(
    bars: &[(f64, f64, f64, String)],
    markers: &[(f64, f64, &'static str, Shape, String)],
    (x, decades): (Scale, f64),
    labels: (&str, &str),
    legend: &[(&'static str, Shape, &str)],
) -> Option<(String, Vec<f64>)> {
    let all: Vec<f64> = bars
        .iter()
        .flat_map(|b| [b.1, b.2])
        .chain(markers.iter().map(|m| m.1))
        .filter(|v| v.is_finite())
        .collect();
    if bars.is_empty() || all.is_empty() {
        return None;
    }
    let mut chart = Chart::new(x, Scale::auto_within(&all, decades), labels.0, labels.1);
    for (colour, shape, label) in legend {
        chart.legend(colour, *shape, label);
    }
    for (x, lo, hi, title) in bars {
        chart.vbar(*x, *lo, *hi, svg::BLUE, title);
    }
    for (x, y, colour, shape, title) in markers {
        chart.marker(*x, *y, colour, *shape, title);
    }
    Some((chart.svg(labels.1), all))
}

/// A prediction's marker colour by its verdict.
fn verdict_colour(verdict: &Value) -> &'static str {
    match verdict.as_str() {
        Some("optimistic") => svg::RED,
        Some("conservative") => svg::GREEN,
        _ => svg::GREY,
    }
}

/// The legend of predictions coloured by verdict.
const VERDICT_LEGEND: [(&str, Shape, &str); 3] = [
    (svg::RED, Shape::Diamond, "optimistic prediction"),
    (svg::GREEN, Shape::Diamond, "conservative prediction"),
    (svg::GREY, Shape::Diamond, "prediction inside"),
];

/// The x scale of values that may span decades.
fn x_scale(xs: &[f64]) -> Scale {
    Scale::log(xs.iter().copied(), 1.0).unwrap_or_else(|| Scale::linear(xs.iter().copied(), true))
}

/// The flags `--t`/`--eps` of a check's points, as given.
fn point_flags(method: &Value) -> Vec<String> {
    let mut t = Vec::new();
    let mut eps = Vec::new();
    for p in array(&method["points"]) {
        match p["given"].as_str() {
            Some("t") => t.push(text(&p["value"])),
            Some("eps") => eps.push(text(&p["value"])),
            _ => {}
        }
    }
    let mut flags = Vec::new();
    for (flag, values) in [("--t", t), ("--eps", eps)] {
        if !values.is_empty() {
            flags.extend([flag.into(), values.join(",")]);
        }
    }
    flags
}

pub(super) fn check(cert: &Value) -> Kind {
    let report = &cert["report"];
    let comparisons = array(&report["comparisons"]);
    let mut html = format!(
        "<p>Every asymptotic prediction of Part I for {} held against the certified value it \
         approximates. Predictions are <b>uncertified</b>; the certified column is proven, and \
         each verdict compares the prediction's formula with it: <i>optimistic</i> (below: \
         unsafe as a guarantee), <i>conservative</i> (above) or <i>inside</i>.</p>\n",
        esc(&pair_words(report))
    );
    let header = [
        "quantity",
        "at",
        "prediction (uncertified)",
        "predicted",
        "certified",
        "verdict",
    ];
    let rows = comparisons
        .iter()
        .map(|c| {
            let at = if c["eps"].is_object() {
                format!("ε = {}", cell(&c["eps"]))
            } else {
                "–".into()
            };
            vec![
                esc(&name(&text(&c["quantity"]))),
                at,
                format!(
                    "{}<br><span class=\"sub\">{}</span>",
                    esc(&text(&c["prediction"])),
                    esc(&text(&c["source"]))
                ),
                c["predicted"]["value"]
                    .as_f64()
                    .map_or("–".into(), |v| format!("{v:.6e}")),
                cell(&c["certified"]),
                verdict_tag(&c["verdict"]),
            ]
        })
        .collect();
    html += &table_html(&header, rows);
    let optimistic = report["optimistic"].as_u64().unwrap_or(0);
    let mut figures = Vec::new();
    let mut bars = Vec::new();
    let mut markers = Vec::new();
    for c in comparisons
        .iter()
        .filter(|c| c["quantity"] == "delta_qp" || c["quantity"] == "delta_pq")
    {
        let (Some(x), Some((lo, hi)), Some(p)) = (
            ends(&c["eps"]).map(|(a, b)| 0.5 * (a + b)),
            ends(&c["certified"]),
            c["predicted"]["value"].as_f64(),
        ) else {
            continue;
        };
        let what = format!("{} at ε ≈ {x:.4}", name(&text(&c["quantity"])));
        bars.push((x, lo, hi, format!("certified {what}")));
        let colour = verdict_colour(&c["verdict"]);
        markers.push((
            x,
            p,
            colour,
            Shape::Diamond,
            format!(
                "{}: {p:.4e} ({})",
                text(&c["prediction"]),
                text(&c["verdict"])
            ),
        ));
    }
    let xs: Vec<f64> = bars.iter().map(|b| b.0).collect();
    if let Some((chart, all)) = bars_and_markers(
        &bars,
        &markers,
        (Scale::linear(xs.iter().copied(), true), 30.0),
        ("ε", "δ"),
        &VERDICT_LEGEND,
    ) {
        figures.push(figure(
            chart,
            &format!(
                "Certified δ (bars) at each point, and each prediction (diamonds, uncertified) coloured by its verdict. {}",
                zero_note(&all)
            ),
        ));
    }
    let sizes = array(&cert["method"]["sweep"]);
    if !sizes.is_empty() {
        html += "<p>The other sizes of the sweep, each checked as above (t fixed, k/n kept as near \
                 as whole users allow); the certificate holds every comparison at each.</p>\n";
        let header = [
            "n",
            "k",
            "comparisons",
            "optimistic",
            "inside",
            "conservative",
        ];
        html += &table_html(
            &header,
            sizes
                .iter()
                .map(|e| {
                    let count = |v: &str| {
                        array(&e["comparisons"])
                            .iter()
                            .filter(|c| c["verdict"] == v)
                            .count()
                            .to_string()
                    };
                    vec![
                        code(&text(&e["n"])),
                        code(&text(&e["k"])),
                        array(&e["comparisons"]).len().to_string(),
                        count("optimistic"),
                        count("inside"),
                        count("conservative"),
                    ]
                })
                .collect(),
        );
    }
    let fits = array(&report["sweep"]);
    if !fits.is_empty() {
        html += "<p>Over the sweep, each comparison's error against n and the order observed by \
                 a least-squares fit of ln |error| against ln n: <b>uncertified</b> doubles, for \
                 reading (the certificate holds every n's certified values, and verify makes the \
                 fits again from them).</p>\n";
        let header = [
            "quantity",
            "prediction",
            "errors (n: error)",
            "observed order",
            "claimed",
        ];
        html += &table_html(
            &header,
            fits.iter()
                .map(|f| {
                    let errors: Vec<String> = array(&f["errors"])
                        .iter()
                        .map(|e| {
                            format!(
                                "{}: {}",
                                text(&e["n"]),
                                e["abs_error"]
                                    .as_f64()
                                    .map_or("–".into(), |v| format!("{v:.3e}"))
                            )
                        })
                        .collect();
                    vec![
                        esc(&name(&text(&f["quantity"]))),
                        esc(&text(&f["prediction"])),
                        esc(&errors.join(", ")),
                        f["observed_order"]
                            .as_f64()
                            .map_or("–".into(), |v| format!("n^{v:.3}")),
                        esc(&text(&f["claimed_order"])),
                    ]
                })
                .collect(),
        );
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = pair_command(cert) {
        line.extend(point_flags(&cert["method"]));
        if let Some(sizes) = cert["method"]["n_sweep"].as_array() {
            let sizes: Vec<String> = sizes.iter().map(text).collect();
            line.extend(["--n-sweep".into(), sizes.join(",")]);
        }
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "a check of {} predictions at n = {}{} ({optimistic} optimistic)",
            comparisons.len(),
            text(&report["n"]),
            match array(&cert["method"]["sweep"]).len() {
                0 => String::new(),
                m => format!(" and {m} more sizes"),
            }
        ),
        results: html,
        figures,
        reproduce,
    }
}

/// `check` without `--k`: the shuffle index's predictions against the certified range.
pub(super) fn index_check(cert: &Value) -> Kind {
    let report = &cert["report"];
    let predictions = array(&report["predictions"]);
    let mut html = format!(
        "<p>The shuffle index of {} (Takagi–Liew §3) at n = {}: χ_up ∈ {} and χ_lo ∈ {}. Each \
         leading-term prediction is held against the end of the certified range it predicts \
         (χ_up the upper end, the blanket bound; χ_lo the lower end, a concrete neighbouring \
         pair). Predictions are <b>uncertified</b>; each verdict compares the prediction's \
         formula with the certified value.</p>\n",
        esc(&text(&cert["mechanism"]["exact"]["name"])),
        esc(&text(&report["n"])),
        code(
            &enclosure(&report["shuffle_index"]["chi_up"]["chi"])
                .map_or("–".into(), |e| short(&e))
        ),
        code(
            &enclosure(&report["shuffle_index"]["chi_lo"]["chi"])
                .map_or("–".into(), |e| short(&e))
        ),
    );
    let header = [
        "at",
        "end",
        "prediction (uncertified)",
        "predicted",
        "certified",
        "verdict",
    ];
    html += &table_html(
        &header,
        predictions
            .iter()
            .map(|p| {
                vec![
                    esc(&text(&p["at"])),
                    esc(&text(&p["end"])),
                    format!(
                        "{}<br><span class=\"sub\">{}</span>",
                        esc(&text(&p["prediction"])),
                        esc(&text(&p["source"]))
                    ),
                    cell(&p["predicted"]),
                    cell(&p["certified"]),
                    verdict_tag(&p["verdict"]),
                ]
            })
            .collect(),
    );
    // δ at each ε: the certified range (bar from the lower end's lower edge to the upper end's
    // upper edge) and the predictions of δ.
    let mut bars = Vec::new();
    let mut markers = Vec::new();
    for row in array(&report["delta_ranges"]) {
        let (Some(x), Some((lo, _)), Some((_, hi))) = (
            row["eps"]
                .as_str()
                .and_then(crate::enclosure::parse_rational)
                .map(|e| e.to_f64()),
            ends(&row["range"]["lower"]["value"]),
            ends(&row["range"]["upper"]["value"]),
        ) else {
            continue;
        };
        bars.push((
            x,
            lo,
            hi,
            format!("certified range of δ_M at ε = {}", text(&row["eps"])),
        ));
        for p in predictions
            .iter()
            .filter(|p| p["at"] == format!("δ at ε = {}", text(&row["eps"])))
        {
            let Some((a, b)) = ends(&p["predicted"]) else {
                continue;
            };
            let colour = verdict_colour(&p["verdict"]);
            let shape = if p["end"] == "upper" {
                Shape::Diamond
            } else {
                Shape::Circle
            };
            let v = 0.5 * (a + b);
            markers.push((
                x,
                v,
                colour,
                shape,
                format!(
                    "{}: {v:.4e} ({})",
                    text(&p["prediction"]),
                    text(&p["verdict"])
                ),
            ));
        }
    }
    let xs: Vec<f64> = bars.iter().map(|b| b.0).collect();
    let mut figures = Vec::new();
    if let Some((chart, all)) = bars_and_markers(
        &bars,
        &markers,
        (Scale::linear(xs.iter().copied(), true), 200.0),
        ("ε", "δ"),
        &VERDICT_LEGEND,
    ) {
        figures.push(figure(
            chart,
            &format!(
                "The certified range of δ_M (bars, lower end to upper end) at each ε, and the leading-term predictions (diamonds: χ_up, circles: χ_lo; uncertified) coloured by verdict. {}",
                zero_note(&all)
            ),
        ));
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = base_command(cert) {
        let eps: Vec<String> = array(&report["delta_ranges"])
            .iter()
            .map(|r| text(&r["eps"]))
            .collect();
        line.extend([
            "--n".into(),
            text(&report["n"]),
            "--eps".into(),
            eps.join(","),
        ]);
        reproduce.push(finish(line, cert));
    }
    let optimistic = predictions
        .iter()
        .filter(|p| p["verdict"] == "optimistic")
        .count();
    Kind {
        summary: format!(
            "a shuffle-index check of {} predictions at n = {} ({optimistic} optimistic)",
            predictions.len(),
            text(&report["n"])
        ),
        results: html,
        figures,
        reproduce,
    }
}

pub(super) fn limit(cert: &Value) -> Kind {
    let report = &cert["report"];
    let mut html = format!(
        "<p>The sequence {} against its Part III limit ({}; composition rule {}): per n the \
         certified finite-n δ, the certified limit δ and their gap; where the sequence is \
         single-dominant, δ_n from the limit curve with its TV budget. The observed orders are \
         <b>uncertified</b> observations.</p>\n",
        code(&text(&cert["sequence"]["given"])),
        esc(&text(&report["theorem_3_1_iii_part"])),
        code(&text(&report["k_rule"]))
    );
    let thresholds = array(&report["thresholds"]);
    let header = ["ε", "limit δ_{Q‖P}", "limit δ_{P‖Q}"];
    html += &table_html(
        &header,
        thresholds
            .iter()
            .map(|t| {
                vec![
                    code(&text(&t["eps"])),
                    cell(&t["delta_limit_qp"]),
                    cell(&t["delta_limit_pq"]),
                ]
            })
            .collect(),
    );
    let header = [
        "n",
        "k",
        "ε",
        "δ_{Q‖P}",
        "gap to the limit",
        "δ_{P‖Q}",
        "gap to the limit",
    ];
    let mut rows = Vec::new();
    for row in array(&report["rows"]) {
        for r in array(&row["results"]) {
            rows.push(vec![
                code(&text(&row["n"])),
                code(&text(&row["k"])),
                code(&text(&r["eps"])),
                cell(&r["delta_qp"]),
                cell(&r["gap_qp"]),
                cell(&r["delta_pq"]),
                cell(&r["gap_pq"]),
            ]);
        }
    }
    html += &table_html(&header, rows);
    let mut figures = Vec::new();
    if let Some(first) = thresholds.first() {
        let eps = text(&first["eps"]);
        let mut bars = Vec::new();
        for row in array(&report["rows"]) {
            let (Some(n), Some(r)) = (
                number(&row["n"]),
                array(&row["results"])
                    .iter()
                    .find(|r| text(&r["eps"]) == eps),
            ) else {
                continue;
            };
            if let Some((lo, hi)) = ends(&r["delta_qp"]) {
                bars.push((n, lo, hi, format!("n = {n}: certified δ_{{Q‖P}}")));
            }
        }
        let xs: Vec<f64> = bars.iter().map(|b| b.0).collect();
        let limit = ends(&first["delta_limit_qp"]);
        let markers: Vec<_> = limit
            .map(|(lo, hi)| {
                xs.iter()
                    .map(|x| {
                        (
                            *x,
                            0.5 * (lo + hi),
                            svg::PURPLE,
                            Shape::Square,
                            "the limit δ".to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some((chart, all)) = bars_and_markers(
            &bars,
            &markers,
            (x_scale(&xs), 30.0),
            ("n", "δ_{Q‖P}"),
            &[(svg::PURPLE, Shape::Square, "limit δ (certified)")],
        ) {
            figures.push(figure(
                chart,
                &format!(
                    "At ε = {}: the certified finite-n δ_{{Q‖P}} (bars) approaching the certified limit δ (squares). {}",
                    esc(&eps),
                    zero_note(&all)
                ),
            ));
        }
    }
    let mut line = vec![
        "shufflecert".to_string(),
        "limit".into(),
        "--family".into(),
        text(&cert["sequence"]["given"]),
        "--n".into(),
        array(&report["rows"])
            .iter()
            .map(|r| text(&r["n"]))
            .collect::<Vec<_>>()
            .join(","),
        "--k-rule".into(),
        text(&report["k_rule"]),
    ];
    line.extend(threshold_flags(&thresholds));
    line.extend(["--certificate".into(), OUT.into()]);
    Kind {
        summary: format!(
            "a limit study of {} at {} values of n",
            text(&cert["sequence"]["given"]),
            array(&report["rows"]).len()
        ),
        results: html,
        figures,
        reproduce: vec![command::join(&line)],
    }
}

pub(super) fn berry_esseen(cert: &Value) -> Kind {
    let report = &cert["report"];
    let mut html = format!(
        "<p>The certified lattice curve of Part III §8 against the Gaussian shift N(0, 1) vs \
         N(c, 1), c = λ^(-1/2): {} The gap is certified; gap/c and the observed order are \
         <b>uncertified</b> observations.</p>\n",
        esc(&text(&report["scope"]))
    );
    let header = ["λ", "c", "ε", "δ_{Q‖P}", "δ_{P‖Q}", "Gaussian δ", "gap"];
    let mut rows = Vec::new();
    let rows_json = array(&report["rows"]);
    for row in rows_json {
        for r in array(&row["results"]) {
            rows.push(vec![
                code(&text(&row["lambda"])),
                cell(&row["c"]),
                cell(&r["eps"]),
                cell(&r["delta_qp"]),
                cell(&r["delta_pq"]),
                cell(&r["delta_gaussian"]),
                cell(&r["gap"]),
            ]);
        }
    }
    html += &table_html(&header, rows);
    let mut bars = Vec::new();
    let mut markers = Vec::new();
    for row in rows_json {
        let (Some(lambda), Some(r)) = (number(&row["lambda"]), array(&row["results"]).first())
        else {
            continue;
        };
        if let (Some((lo, hi)), Some((g_lo, g_hi))) =
            (ends(&r["delta_qp"]), ends(&r["delta_gaussian"]))
        {
            bars.push((lambda, lo, hi, format!("λ = {lambda}: lattice δ_{{Q‖P}}")));
            markers.push((
                lambda,
                0.5 * (g_lo + g_hi),
                svg::ORANGE,
                Shape::Triangle,
                format!("λ = {lambda}: Gaussian δ"),
            ));
        }
    }
    let xs: Vec<f64> = bars.iter().map(|b| b.0).collect();
    let mut figures = Vec::new();
    if let Some((chart, all)) = bars_and_markers(
        &bars,
        &markers,
        (x_scale(&xs), 30.0),
        ("λ", "δ_{Q‖P}"),
        &[(svg::ORANGE, Shape::Triangle, "Gaussian shift (certified)")],
    ) {
        figures.push(figure(
            chart,
            &format!(
                "At the first point: the certified lattice δ_{{Q‖P}} (bars) against the Gaussian shift's (triangles) as λ grows. {}",
                zero_note(&all)
            ),
        ));
    }
    let mut line = vec![
        "shufflecert".to_string(),
        "berry-esseen".into(),
        "--lambda".into(),
        rows_json
            .iter()
            .map(|r| text(&r["lambda"]))
            .collect::<Vec<_>>()
            .join(","),
    ];
    let scale = &report["scale"];
    let points: Vec<String> = array(&scale["eps"])
        .iter()
        .chain(array(&scale["t"]).iter())
        .map(text)
        .collect();
    line.extend([
        if scale["kind"] == "fixed" {
            "--eps"
        } else {
            "--t"
        }
        .to_string(),
        points.join(","),
    ]);
    if !report["pi"].is_null() {
        line.extend(["--pi".into(), text(&report["pi"])]);
    }
    line.extend(["--certificate".into(), OUT.into()]);
    Kind {
        summary: format!(
            "a Berry–Esseen diagnostic at {} intensities",
            rows_json.len()
        ),
        results: html,
        figures,
        reproduce: vec![command::join(&line)],
    }
}
