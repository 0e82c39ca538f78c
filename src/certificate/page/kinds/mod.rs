//! What the page shows for each kind of certificate it knows: a one-line summary, the results
//! table, the pictures, and the command line that reproduces the certificate.  Every reader is
//! total: a field that is missing or of the wrong type is shown as missing, never a panic (a
//! certificate that verifies invalid is still drawn).

mod asymptotic;
mod audit;
mod bounds;
mod command;
mod compare;
mod messages;
mod pair;
mod profile;

use super::svg::Scale;
use super::{
    array, cell, code, count, enclosure, ends, esc, number, shell_word, short, table_html, text,
};
use audit::verdict_tag;
use command::{base_command, finish, pair_command, profile_command, threshold_flags};
use serde_json::Value;
use std::fmt::Write;

/// A kind's part of the page (HTML strings, except `summary` and `reproduce`, which are text).
#[derive(Default)]
pub struct Kind {
    pub summary: String,
    pub results: String,
    pub figures: Vec<String>,
    pub reproduce: Vec<String>,
}

/// The kind-specific parts of the page (empty results for a kind this page does not know).
pub fn describe(cert: &Value, reproduced: &str) -> Kind {
    let mut kind = match cert["command"].as_str().unwrap_or_default() {
        "delta" => pair::delta(cert),
        "epsilon" => pair::epsilon(cert),
        "divergences" => pair::divergences(cert),
        "profile" => profile::profile(cert),
        "audit" => audit::audit(cert),
        "compare" => compare::compare(cert),
        "compare-messages" => messages::compare_messages(cert),
        "bounds" => bounds::bounds(cert),
        "check" if cert["report"]["mode"] == "shuffle-index" => asymptotic::index_check(cert),
        "check" => asymptotic::check(cert),
        "limit" => asymptotic::limit(cert),
        "berry-esseen" => asymptotic::berry_esseen(cert),
        other => Kind {
            summary: format!("a {other} certificate (shown generically)"),
            ..Kind::default()
        },
    };
    // The reproduction writes a file of its own, next to the certificate, never over it.
    for line in &mut kind.reproduce {
        *line = line.replace(OUT, &shell_word(reproduced));
    }
    kind
}

/// Where the reconstructed command lines write their certificate (replaced by the real name).
const OUT: &str = "@OUT@";

/// A readable name for a report field.
fn name(key: &str) -> String {
    match key {
        "delta_qp" => "δ_{Q‖P}".into(),
        "delta_pq" => "δ_{P‖Q}".into(),
        "delta_two_sided" => "two-sided δ (the larger)".into(),
        "eps_qp" => "ε_{Q‖P}".into(),
        "eps_pq" => "ε_{P‖Q}".into(),
        "eps_two_sided" => "two-sided ε (the larger)".into(),
        "tv" => "total variation TV(P, Q)".into(),
        "kl_qp" => "KL(Q‖P)".into(),
        "kl_pq" => "KL(P‖Q)".into(),
        "chi2_qp" => "χ²(Q‖P)".into(),
        "chi2_pq" => "χ²(P‖Q)".into(),
        "hellinger2" => "squared Hellinger distance H²(P, Q)".into(),
        "jsd" => "Jensen–Shannon divergence".into(),
        other => other.to_string(),
    }
}

/// The pair a report is about, in words.
fn pair_words(report: &Value) -> String {
    if let Some(groups) = report["background"].as_array() {
        let others: Vec<String> = groups
            .iter()
            .map(|g| format!("{} × {}", text(&g["count"]), text(&g["input"])))
            .collect();
        return format!(
            "the neighbouring pair of n = {} users in which one user switches {} → {}, the others holding {}",
            text(&report["n"]),
            text(&report["switch"]["x1"]),
            text(&report["switch"]["x1_prime"]),
            others.join(", ")
        );
    }
    if report["experiment"].is_object() {
        return format!(
            "the limit experiment {} ({})",
            text(&report["experiment"]["name"]),
            text(&report["pair"])
        );
    }
    match (report["n"].as_u64(), report["k"].as_u64()) {
        (Some(n), Some(k)) => format!(
            "the neighbouring pair P = T_{{n,k}}, Q = T_{{n,k+1}} with n = {n} users, k = {k}"
        ),
        _ => text(&report["pair"]),
    }
}

/// A figure: the picture and its caption (caption text is HTML).
fn figure(svg: String, caption: &str) -> String {
    format!("<figure>\n{svg}<figcaption>{caption}</figcaption>\n</figure>\n")
}

/// The caption's note on a logarithmic δ axis where some value is 0.
fn zero_note(values: &[f64]) -> &'static str {
    if values.iter().any(|v| *v <= 0.0) && Scale::auto(values).is_log() {
        "On the logarithmic axis a value 0, or below the axis, is drawn on its floor."
    } else {
        ""
    }
}
