//! `audit`: each claim, its verdict and its evidence.

use super::*;
use crate::certificate::page::svg::{self, Chart, Scale, Shape};

pub(super) fn verdict_tag(v: &Value) -> String {
    let t = text(v);
    let class = match t.as_str() {
        "sound" | "unsound" | "undecided" | "holds" => t.clone(),
        "VIOLATED" => "violated".into(),
        // A check's verdicts: under-reporting is the unsafe one.
        "optimistic" => "unsound".into(),
        "conservative" => "sound".into(),
        "inside" => "undecided".into(),
        _ => "other".into(),
    };
    format!("<span class=\"tag {class}\">{}</span>", esc(&t))
}

fn verdict_colour(v: &Value) -> &'static str {
    match v.as_str() {
        Some("sound") => svg::GREEN,
        Some("unsound") => svg::RED,
        _ => svg::ORANGE,
    }
}

/// A claim's scope in words: `n = 1000` or `n = 1000, k = 500`.
fn claim_scope(c: &Value) -> String {
    match c["k"].as_u64() {
        Some(k) => format!("n = {}, k = {k}", text(&c["n"])),
        None => format!("n = {}", text(&c["n"])),
    }
}

fn claimed(c: &Value) -> String {
    match c["kind"].as_str() {
        Some("rdp") => format!("D_{} ≤ {}", text(&c["alpha"]), text(&c["eps"])),
        Some("lower") => format!("not ({}, {})-DP", text(&c["eps"]), text(&c["delta"])),
        _ => format!("({}, {})-DP", text(&c["eps"]), text(&c["delta"])),
    }
}

fn witness_words(c: &Value) -> String {
    let mut s = String::new();
    let w = &c["witness"];
    if w.is_object() {
        let _ = write!(
            s,
            "witness k = {} ({}): {}",
            esc(&text(&w["k"])),
            esc(&text(&w["direction"])),
            cell(&w["value"])
        );
    }
    // A range audit (more than two inputs): the end of the range that decides the claim.
    let range = &c["delta_range"];
    if range.is_object() {
        let decided_below = matches!(
            (c["kind"].as_str(), c["verdict"].as_str()),
            (Some("upper"), Some("unsound")) | (Some("lower"), Some("sound"))
        );
        let decided_above = matches!(
            (c["kind"].as_str(), c["verdict"].as_str()),
            (Some("upper"), Some("sound")) | (Some("lower"), Some("unsound"))
        );
        let (lower, upper) = (&range["lower"], &range["upper"]);
        if decided_below {
            let others = c["n"]
                .as_u64()
                .and_then(|n| n.checked_sub(1))
                .map_or("?".into(), |m| m.to_string());
            let background = text(&lower["background"]);
            let _ = write!(
                s,
                "witness pair ({}, {others} × {}) ≃ ({}, {others} × {}): δ ∈ {}",
                esc(&text(&lower["x1"])),
                esc(&background),
                esc(&text(&lower["x1_prime"])),
                esc(&background),
                cell(&lower["value"])
            );
        } else if decided_above {
            let _ = write!(
                s,
                "blanket bound over every ordered pair (largest {} → {}): δ ≤ {}",
                esc(&text(&upper["x1"])),
                esc(&text(&upper["x1_prime"])),
                cell(&upper["value"])
            );
        } else {
            let _ = write!(
                s,
                "inside the certified range: lower {}, upper {}",
                cell(&lower["value"]),
                cell(&upper["value"])
            );
        }
    }
    let b = &c["boundary"];
    if b.is_object() {
        let _ = write!(
            s,
            "{}boundary pairs alone: {}",
            if s.is_empty() { "" } else { "<br>" },
            verdict_tag(&b["verdict_on_boundary_alone"])
        );
    }
    let st = &c["straddle"];
    if st.is_object() {
        let _ = write!(
            s,
            "{}straddles the claim: reaches {} below, {} above",
            if s.is_empty() { "" } else { "<br>" },
            esc(&text(&st["below"])),
            esc(&text(&st["above"]))
        );
    }
    if s.is_empty() { "—".into() } else { s }
}

pub(super) fn audit(cert: &Value) -> Kind {
    let report = &cert["report"];
    let claims = array(&report["claims"]);
    let summary = &report["summary"];
    let mut html = format!(
        "<p>The claims of <code>{}</code>, each judged against the certified value: {} claims, {} sound, {} unsound, {} undecided.</p>\n",
        esc(&text(&report["claims_file"])),
        esc(&text(&summary["claims"])),
        esc(&text(&summary["sound"])),
        esc(&text(&summary["unsound"])),
        esc(&text(&summary["undecided"]))
    );
    let rows = claims
        .iter()
        .map(|c| {
            let mut claim = format!(
                "{} <span class=\"nw\">for {}</span><br><span class=\"sub\">{}",
                code(&claimed(c)),
                esc(&claim_scope(c)),
                esc(&text(&c["source"]))
            );
            if !c["note"].is_null() {
                let _ = write!(claim, ": {}", esc(&text(&c["note"])));
            }
            claim += "</span>";
            let mut certified = if c["certified_renyi"].is_null() {
                format!(
                    "δ({}) ∈ {}",
                    esc(&text(&c["eps"])),
                    cell(&c["certified_delta"])
                )
            } else {
                format!(
                    "D_{} ∈ {}",
                    esc(&text(&c["alpha"])),
                    cell(&c["certified_renyi"])
                )
            };
            if !c["certified_eps"].is_null() {
                let _ = write!(
                    certified,
                    "<br>ε({}) ∈ {}",
                    esc(&text(&c["delta"])),
                    cell(&c["certified_eps"])
                );
            }
            vec![
                esc(&text(&c["line"])),
                claim,
                verdict_tag(&c["verdict"]),
                certified,
                witness_words(c),
            ]
        })
        .collect();
    html += &table_html(
        &[
            "line",
            "claim",
            "verdict",
            "certified values at the claim",
            "evidence",
        ],
        rows,
    );

    let mut figures = Vec::new();
    let placed: Vec<(f64, f64, &Value)> = claims
        .iter()
        .filter(|c| c["kind"] != "rdp")
        .filter_map(|c| Some((number(&c["eps"])?, number(&c["delta"])?, c)))
        .filter(|p| p.1 > 0.0)
        .collect();
    if !placed.is_empty() {
        let xs: Vec<f64> = placed
            .iter()
            .flat_map(|p| {
                let (lo, hi) = ends(&p.2["certified_eps"]).unwrap_or((p.0, p.0));
                [p.0, lo, hi]
            })
            .collect();
        let ys: Vec<f64> = placed.iter().map(|p| p.1).collect();
        let mut chart = Chart::new(
            Scale::linear(xs, false),
            Scale::log(ys, 30.0).expect("positive"),
            "claimed ε",
            "claimed δ",
        );
        let mut drawn: Vec<(String, String)> = Vec::new();
        for (x, y, c) in &placed {
            let colour = verdict_colour(&c["verdict"]);
            let mut title = format!(
                "line {}: {} for {} ({}): {}",
                text(&c["line"]),
                claimed(c),
                claim_scope(c),
                text(&c["source"]),
                text(&c["verdict"]).to_uppercase()
            );
            if let Some(e) = enclosure(&c["certified_delta"]) {
                let _ = write!(title, "; certified δ({}) ∈ {}", text(&c["eps"]), short(&e));
            }
            if let Some(e) = enclosure(&c["certified_eps"]) {
                let _ = write!(
                    title,
                    "; certified ε({}) ∈ {}",
                    text(&c["delta"]),
                    short(&e)
                );
            }
            let w = &c["witness"];
            if let Some(e) = enclosure(&w["value"]) {
                let _ = write!(
                    title,
                    "; witness k = {} ({}): δ ∈ {}",
                    text(&w["k"]),
                    text(&w["direction"]),
                    short(&e)
                );
            }
            // The certified ε at the claim's δ, once for each n (and k) and δ.
            let scope = (claim_scope(c), text(&c["delta"]));
            if let (Some((lo, hi)), Some(e)) =
                (ends(&c["certified_eps"]), enclosure(&c["certified_eps"]))
            {
                if !drawn.contains(&scope) {
                    chart.legend(svg::BLACK, Shape::Square, "certified ε at the claimed δ");
                    chart.hbar(
                        lo,
                        hi,
                        *y,
                        svg::BLACK,
                        &format!("{}: certified ε at δ = {}: {}", scope.0, scope.1, short(&e)),
                    );
                    chart.label(
                        0.5 * (lo + hi),
                        *y,
                        12.0 + 13.0 * (drawn.len() % 3) as f64,
                        &scope.0,
                    );
                    drawn.push(scope);
                }
            }
            let shape = match (c["kind"].as_str(), c["k"].is_null()) {
                (Some("lower"), _) => Shape::Triangle,
                (_, false) => Shape::Square,
                _ => Shape::Circle,
            };
            chart.legend(colour, Shape::Circle, &text(&c["verdict"]));
            chart.marker(*x, *y, colour, shape, &title);
        }
        let rdp = claims.len() - placed.len();
        figures.push(figure(
            chart.svg("the claims in the (ε, δ) plane"),
            &format!(
                "Each claim at its (ε, δ), coloured by verdict (green sound, red unsound, orange undecided): a circle for a mechanism-wide claim, a square for a claim about one pair k, a triangle for a lower claim. The black intervals are the certified ε at the claimed δ, one for each n (and k) the claims are about: an upper claim to their right is sound, one to their left unsound. {}",
                if rdp > 0 {
                    format!("{} (Rényi claims, or claims without δ) are in the table only.", count(rdp, "claim", "claims"))
                } else {
                    String::new()
                }
            ),
        ));
    }
    let mut reproduce = Vec::new();
    if let Some(mut line) = base_command(cert) {
        line.extend(["--claims".into(), text(&cert["claims"]["given"])]);
        reproduce.push(finish(line, cert));
    }
    Kind {
        summary: format!(
            "{} judged against certified values",
            count(claims.len(), "published claim", "published claims")
        ),
        results: html,
        figures,
        reproduce,
    }
}
