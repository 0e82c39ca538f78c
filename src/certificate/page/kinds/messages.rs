//! `compare-messages`: one message (n and n·m users), m messages unbundled and bundled, side by
//! side per ε, with the certified ratios and the data-processing check unbundled ≤ bundled.

use super::*;
use crate::multimessage::compare::{Model, RATIOS};

/// The model of a report's `models` entry, in words.
fn model_words(model: &Value, n: u64, m: u32) -> String {
    match model["model"].as_str().and_then(Model::from_key) {
        Some(model) => model.text(n, m),
        None => format!("unknown model {}", text(&model["model"])),
    }
}

pub(super) fn compare_messages(cert: &Value) -> Kind {
    let report = &cert["report"];
    let (n, k) = (report["n"].as_u64(), report["k"].as_u64());
    let m = report["messages"]
        .as_u64()
        .and_then(|m| u32::try_from(m).ok());
    let (Some(n), Some(k), Some(m)) = (n, k, m) else {
        return Kind {
            summary: "a compare-messages certificate without n, k or m (shown generically)".into(),
            ..Kind::default()
        };
    };
    let models = array(&report["models"]);
    let rows = array(&report["rows"]);
    let profile = models.iter().any(|model| model["profile"].is_object());
    let mut html = format!(
        "<p>The neighbouring pair with k = {k}, then k + 1, of n = {n} users holding input 1, each \
         user sending m = {m} messages: shuffled one by one (unbundled) or kept together as one \
         symbol (bundled), beside one message with n and with n·m users (k·m, then k·m + 1).</p>\n"
    );
    for (i, row) in rows.iter().enumerate() {
        let eps = text(&row["eps"]);
        let _ = writeln!(html, "<h3>ε = {}</h3>", esc(&eps));
        let mut header = vec![
            "model".to_string(),
            esc(&name("delta_qp")),
            esc(&name("delta_pq")),
        ];
        if profile {
            header.push("mechanism-wide δ_M (profile)".into());
        }
        let table = models
            .iter()
            .map(|model| {
                let at = &model["pair"]["results"][i];
                let mut cells = vec![
                    esc(&model_words(model, n, m)),
                    cell(&at["delta_qp"]),
                    cell(&at["delta_pq"]),
                ];
                if profile {
                    cells.push(cell(&model["profile"]["results"][i]["delta_profile"]));
                }
                cells
            })
            .collect();
        html += &table_html(&header, table);
        let ratio_rows = RATIOS
            .iter()
            .map(|(key, top, bottom)| {
                let r = &row["ratios"][*key];
                let mut cells = vec![
                    format!("{} / {}", esc(&top.text(n, m)), esc(&bottom.text(n, m))),
                    cell(&r["delta_qp"]),
                    cell(&r["delta_pq"]),
                    cell(&r["delta_two_sided"]),
                ];
                if profile {
                    cells.push(cell(&r["profile"]));
                }
                cells
            })
            .collect();
        let mut header = vec!["ratio", "δ_{Q‖P}", "δ_{P‖Q}", "two-sided"];
        if profile {
            header.push("profile");
        }
        html += &table_html(&header, ratio_rows);
        let check = &row["unbundled_le_bundled"];
        let mut verdicts = vec![
            vec!["δ_{Q‖P}".to_string(), esc(&text(&check["delta_qp"]))],
            vec!["δ_{P‖Q}".to_string(), esc(&text(&check["delta_pq"]))],
        ];
        if profile {
            verdicts.push(vec!["profile".into(), esc(&text(&check["profile"]))]);
        }
        html += "<p>unbundled ≤ bundled (data processing), as decided by the enclosures:</p>\n";
        html += &table_html(&["quantity", "verdict"], verdicts);
    }
    let _ = writeln!(
        html,
        "<p class=\"sub\">A ratio reads <code>inf</code> at its upper end when the denominator's \
         enclosure reaches 0. {}</p>",
        esc(&text(&report["note"]))
    );
    let reproduce = base_command(cert)
        .map(|mut line| {
            line.extend([
                "--n".into(),
                n.to_string(),
                "--k".into(),
                k.to_string(),
                "--messages".into(),
                m.to_string(),
            ]);
            line.extend(threshold_flags(rows));
            if profile {
                line.push("--profile".into());
            }
            vec![finish(line, cert)]
        })
        .unwrap_or_default();
    Kind {
        summary: format!(
            "compare-messages: {m} messages per user, unbundled and bundled, against one message \
             (n = {n}, k = {k}, {} ε)",
            rows.len()
        ),
        results: html,
        figures: Vec::new(),
        reproduce,
    }
}
