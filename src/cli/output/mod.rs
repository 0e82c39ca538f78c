//! Rendering answers: human-readable tables and JSON, one file per family of commands.  Every certified number is printed as an
//! outward-rounded enclosure; JSON gives it as `{"lo": "…", "hi": "…"}`.

use crate::enclosure::{Enclosure, bound_text, exact_string};
use crate::exact::background::{Background, output_classes};
use crate::exact::curve::EpsilonCertificate;
use crate::exact::divergence::Divergences;
use crate::exact::pair::PairOptions;
use crate::limits::experiment::ExperimentQuery;
use crate::mechanism::Mechanism;
use crate::mechanism::randomizer::Randomizer;
use crate::query::{BackgroundQuery, Computed, DeltaRow, EpsilonRow, PairQuery};
use rug::Rational;
use serde_json::{Value, json};

mod asymptotic;
mod audit;
mod bounds;
mod compare;
mod limit;
mod messages;
mod profile;
mod profile_inputs;
mod tv;

pub use asymptotic::{
    ConstantsRange, check_at_json, check_json, check_text, constants_json, constants_text,
};
pub use audit::{audit_json, audit_text, range_audit_json, range_audit_text};
pub use messages::{compare_messages_json, compare_messages_text};
pub use profile_inputs::{inputs_profile_json, inputs_profile_text};

/// `verify` as text: the verdict, the routes, and every problem (long numbers abbreviated).
pub fn verify_text(path: &str, v: &crate::certificate::verify::Verification) -> String {
    let mut s = format!("shufflecert verify: {path} ({} certificate)\n", v.command);
    if v.valid() {
        s += &format!(
            "VALID: {} confirmed by independent routes\n",
            crate::enclosure::count_of(v.confirmed, "certified value", "certified values")
        );
    } else {
        s += &format!(
            "INVALID: {}\n",
            crate::enclosure::count_of(v.problems.len(), "problem", "problems")
        );
        for p in &v.problems {
            s += &format!("  - {}\n", abbreviated_numbers(p));
        }
    }
    s += "routes:\n";
    for r in &v.routes {
        s += &format!("  - {r}\n");
    }
    s
}

/// Longest exact number a text line shows in full; longer ones (a rational of thousands of
/// digits in a problem) as `≈` and 12 significant digits (`--json` keeps them exact).
const LONGEST_NUMBER: usize = 40;

/// `text` with every exact number longer than [`LONGEST_NUMBER`] characters (`p/q` or a
/// decimal) written as `≈` and its value to 12 significant digits.
fn abbreviated_numbers(text: &str) -> String {
    let is_number_char = |c: char| c.is_ascii_digit() || c == '/' || c == '.' || c == '-';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        // A leading minus sign belongs to the number.
        let start = if rest[..start].ends_with('-') {
            start - 1
        } else {
            start
        };
        let len = rest[start..]
            .find(|c: char| !is_number_char(c))
            .unwrap_or(rest.len() - start);
        let token = rest[start..start + len].trim_end_matches(['.', '/', '-']);
        out += &rest[..start];
        match crate::enclosure::parse_rational(token).filter(|_| token.len() > LONGEST_NUMBER) {
            Some(q) => {
                let approx = format!("{:.12}", rug::Float::with_val(64, &q));
                out += &format!("≈{approx}");
            }
            None => out += token,
        }
        rest = &rest[start + token.len()..];
    }
    out + rest
}

/// `golden` as text: where the corpus went, what it holds, and how to check it.
pub fn golden_text(out: &str, manifest: &Value, manifest_sha256: &str) -> String {
    let count = |key: &str| manifest[key].as_array().map_or(0, Vec::len);
    let cases: u64 = manifest["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["cases"].as_u64())
        .sum();
    let mut s = format!("shufflecert golden: the corpus is in {out}\n");
    s += &format!(
        "{cases} cases in {} families (one certificate each), {} standard mechanisms\n",
        count("certificates"),
        count("mechanisms"),
    );
    for f in manifest["cases"].as_array().into_iter().flatten() {
        s += &format!(
            "  {:<24} {:>4} cases\n",
            f["path"].as_str().unwrap_or_default(),
            f["cases"].as_u64().unwrap_or_default()
        );
    }
    s += &format!("manifest.json SHA-256 {manifest_sha256}\n");
    s += "check it: sha256sum -c manifest.json.sha256 in the folder, and\n";
    s += "          shufflecert verify on each file in certificates/ (README.md says more)\n";
    s
}

/// `golden` as JSON: the manifest and its digest.
pub fn golden_json(out: &str, manifest: &Value, manifest_sha256: &str) -> Value {
    json!({
        "command": "golden",
        "out": out,
        "manifest": manifest,
        "manifest_sha256": manifest_sha256,
    })
}

/// `verify` as JSON.
pub fn verify_json(path: &str, v: &crate::certificate::verify::Verification) -> Value {
    json!({
        "command": "verify",
        "certificate": path,
        "certificate_command": v.command,
        "valid": v.valid(),
        "confirmed": v.confirmed,
        "routes": v.routes,
        "problems": v.problems,
    })
}
pub use bounds::{
    BoundsReport, bounds_json, bounds_text, index_check_json, index_check_text, rows_json,
};
pub use compare::{compare_json, compare_text};
pub use limit::{berry_esseen_json, berry_esseen_text, limit_json, limit_text};
pub use profile::{profile_grid_text, profile_json, profile_text};
pub use tv::{tv_ball_json, tv_ball_text};

/// What a pair report's header describes: a mechanism's pair `(T_{n,k}, T_{n,k+1})`, a
/// randomizer's pair with a background, or a limit experiment.  `delta`, `epsilon` and
/// `divergences` render every source through it.
pub trait PairReport {
    /// The relative width a δ or ε counts as resolved to (`--rel-width`).
    fn rel_width(&self) -> f64;
    fn header_json<R>(&self, command: &str, computed: &Computed<R>) -> Value;
    fn header_text<R>(&self, command: &str, computed: &Computed<R>) -> String;
}

/// The common tail of the text headers: arithmetic, engine, states, truncation.
fn computed_text<R>(computed: &Computed<R>, states: &str) -> String {
    let mut s = format!(
        "arithmetic {} · engine {}",
        computed.arithmetic, computed.engine
    );
    if computed.states > 0 {
        // The ratio engine's states are lattice points of L_{n,0} (values it may take), each a
        // set of histograms.
        let states = if computed.engine == "ratio" {
            "lattice points of the k = 0 likelihood ratio"
        } else {
            states
        };
        s += &format!(" · {} {states}", computed.states);
    }
    if computed.omitted != 0 {
        s += &format!(
            " · truncated, omitted mass ≤ {}",
            bound_text(&computed.omitted)
        );
    }
    s + "\nevery [lo, hi] is a certified enclosure of the true value\n\n"
}

impl PairReport for PairQuery {
    fn rel_width(&self) -> f64 {
        self.escalate_above
            .unwrap_or(crate::query::DEFAULT_REL_WIDTH)
    }

    fn header_json<R>(&self, command: &str, computed: &Computed<R>) -> Value {
        json!({
            "command": command,
            "certified": true,
            "mechanism": self.mechanism.to_json(),
            "input_domain": self.mechanism.domain_json(),
            "n": self.n,
            "k": self.k,
            "pair": "P = T_{n,k}, Q = T_{n,k+1}; qp means delta_{Q||P}",
            "backend": self.backend.label(),
            "arithmetic": computed.arithmetic,
            "engine": computed.engine,
            "alphabet": self.mechanism.alphabet_json(self.options.reduce),
            "states": computed.states,
            "omitted_mass_bound": bound_text(&computed.omitted),
            "canonical_cross_check_states": computed.canonical_states_checked,
        })
    }

    fn header_text<R>(&self, command: &str, computed: &Computed<R>) -> String {
        format!(
            "shufflecert {command}: {}  n = {}  k = {}\n{}; P = T_{{n,k}}, Q = T_{{n,k+1}}: k, then k + 1, of the n users hold input 1\n",
            self.mechanism.name,
            self.n,
            self.k,
            self.mechanism.domain_text()
        ) + &alphabet_text(&self.mechanism, &self.options)
            + &computed_text(computed, "histogram states")
    }
}

impl PairReport for BackgroundQuery {
    fn rel_width(&self) -> f64 {
        self.escalate_above
            .unwrap_or(crate::query::DEFAULT_REL_WIDTH)
    }

    fn header_json<R>(&self, command: &str, computed: &Computed<R>) -> Value {
        let r = &self.randomizer;
        let b = &self.background;
        json!({
            "command": command,
            "certified": true,
            "randomizer": r.to_json(),
            "input_domain": r.domain_json(),
            "n": b.n(),
            "background": background_counts(r, b)
                .into_iter()
                .map(|(label, count)| json!({ "input": label, "count": count }))
                .collect::<Vec<_>>(),
            "switch": { "x1": r.inputs[b.switch.0], "x1_prime": r.inputs[b.switch.1] },
            "pair": "P: the switched user holds x1, Q: x1'; the others as in background; qp means delta_{Q||P}",
            "backend": self.backend.label(),
            "arithmetic": computed.arithmetic,
            "engine": computed.engine,
            "alphabet": crate::exact::background::alphabet_json(r, b, self.options.reduce),
            "states": computed.states,
            "omitted_mass_bound": bound_text(&computed.omitted),
        })
    }

    fn header_text<R>(&self, command: &str, computed: &Computed<R>) -> String {
        let r = &self.randomizer;
        let b = &self.background;
        let others: Vec<String> = background_counts(r, b)
            .into_iter()
            .map(|(label, count)| format!("{count} × {label}"))
            .collect();
        let classes = output_classes(r, b, self.options.reduce).len();
        let mut s = format!(
            "shufflecert {command}: {}  n = {}\n{}; P: ({}, others), Q: ({}, others); others = {}\n",
            r.name,
            b.n(),
            r.domain_text(),
            r.inputs[b.switch.0],
            r.inputs[b.switch.1],
            if others.is_empty() {
                "none".to_string()
            } else {
                others.join(", ")
            }
        );
        if classes < r.d() {
            s += &format!(
                "alphabet: {} outputs → {classes} classes (outputs with proportional columns over the rows in play merged)\n",
                r.d()
            );
        }
        s + &computed_text(computed, "histogram states")
    }
}

/// The background's nonzero counts with their inputs' labels.
fn background_counts<'a>(r: &'a Randomizer, b: &Background) -> Vec<(&'a str, u64)> {
    b.counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(x, c)| (r.inputs[x].as_str(), *c))
        .collect()
}

impl PairReport for ExperimentQuery {
    fn rel_width(&self) -> f64 {
        self.escalate_above
            .unwrap_or(crate::query::DEFAULT_REL_WIDTH)
    }

    fn header_json<R>(&self, command: &str, computed: &Computed<R>) -> Value {
        json!({
            "command": command,
            "certified": true,
            "experiment": self.experiment.to_json(),
            "pair": self.experiment.pair_text(),
            "backend": self.backend.label(),
            "arithmetic": computed.arithmetic,
            "engine": computed.engine,
            "states": computed.states,
            "omitted_mass_bound": bound_text(&computed.omitted),
        })
    }

    fn header_text<R>(&self, command: &str, computed: &Computed<R>) -> String {
        let e = &self.experiment;
        format!(
            "shufflecert {command}: limit experiment {} ({})\n{}\n",
            e.name,
            e.kind,
            e.pair_text().replace("; qp means delta_{Q||P}", "")
        ) + &computed_text(computed, "lattice states")
    }
}

/// The alphabet line of a text report (empty when the reduction changed nothing).
pub(super) fn alphabet_text(mechanism: &Mechanism, options: &PairOptions) -> String {
    match options.reduce.then(|| mechanism.reduced()) {
        Some(Ok(r)) if !r.is_identity() => format!("alphabet: {}\n", r.summary(mechanism)),
        _ => String::new(),
    }
}

/// The maximisers of a profile row, runs of consecutive k with the same directions compressed
/// (`k=3..9 qp+pq`), ties at exactly 0 as ranges.
pub(super) fn argmax_text(row: &crate::profile::ProfileRow) -> String {
    // (k, directions) in order of k.
    let mut by_k: Vec<(u64, String)> = Vec::new();
    for v in &row.argmax {
        match by_k.last_mut() {
            Some((k, dirs)) if *k == v.k => *dirs = format!("{dirs}+{}", v.direction.key()),
            _ => by_k.push((v.k, v.direction.key().to_string())),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < by_k.len() {
        let mut j = i;
        while j + 1 < by_k.len() && by_k[j + 1].0 == by_k[j].0 + 1 && by_k[j + 1].1 == by_k[i].1 {
            j += 1;
        }
        parts.push(if j == i {
            format!("k={} {}", by_k[i].0, by_k[i].1)
        } else {
            format!("k={}..{} {}", by_k[i].0, by_k[j].0, by_k[i].1)
        });
        i = j + 1;
    }
    for (a, b) in &row.argmax_ranges {
        parts.push(format!("k={}..{} qp+pq (exactly 0)", a, b - 1));
    }
    // Many runs (ties at the resolution of a large n) are cut to the first few; --json keeps all.
    if parts.len() > ARGMAX_RUNS_SHOWN + 2 {
        let more = parts.len() - ARGMAX_RUNS_SHOWN;
        parts.truncate(ARGMAX_RUNS_SHOWN);
        parts.push(format!("and {more} more runs of k (all in --json)"));
    }
    parts.join(", ")
}

/// How many runs of maximisers a text report lists before it cuts the rest.
const ARGMAX_RUNS_SHOWN: usize = 6;

/// The maximisers as JSON: `argmax_k` (evaluated pairs) and `argmax_k_ranges` (inclusive ranges
/// of k tied at exactly 0, both directions); both empty for a row below resolution, whose
/// maximisers are not identified.
pub(super) fn argmax_json(row: &crate::profile::ProfileRow) -> (Value, Value) {
    if !row.resolved {
        return (json!([]), json!([]));
    }
    (
        row.argmax
            .iter()
            .map(crate::profile::KValue::to_json)
            .collect(),
        row.argmax_ranges
            .iter()
            .map(|(a, b)| json!([a, b - 1]))
            .collect(),
    )
}

/// A left-aligned table with a header row.
pub(super) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width = header.iter().map(|h| h.chars().count()).collect::<Vec<_>>();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            s += c;
            if i + 1 < cols {
                s += &" ".repeat(width[i] - c.chars().count() + 2);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for r in rows {
        out += &line(r.clone());
    }
    out
}

pub fn delta_json<Q: PairReport>(query: &Q, computed: &Computed<Vec<DeltaRow>>) -> Value {
    let mut v = query.header_json("delta", computed);
    v["results"] = delta_results(&computed.result, query.rel_width());
    v
}

fn delta_results(rows: &[DeltaRow], rel: f64) -> Value {
    rows.iter()
        .map(|r| {
            json!({
                "eps": r.threshold.eps_text(),
                "delta_qp": r.qp.to_json_resolved(rel),
                "delta_pq": r.pq.to_json_resolved(rel),
                "delta_two_sided": r.two_sided.to_json_resolved(rel),
            })
        })
        .collect()
}

pub fn delta_text<Q: PairReport>(query: &Q, computed: &Computed<Vec<DeltaRow>>) -> String {
    query.header_text("delta", computed) + &delta_table(&computed.result, query.rel_width())
}

/// An enclosure's text, marked `(unresolved)` when its width is set by the truncation depth or
/// the precision rather than the value.
fn marked(e: &Enclosure, rel: f64) -> String {
    if e.resolved(rel) {
        e.to_string()
    } else {
        format!("{e} (unresolved)")
    }
}

/// The note under a table with unresolved values.
fn unresolved_note(any: bool) -> &'static str {
    if any {
        "\n(unresolved): the enclosure is certified but wider than --rel-width, its upper end set by the truncation depth or the precision (the arithmetic line says how deep it went); --backend mpfr --precision P computes deeper\n"
    } else {
        ""
    }
}

fn delta_table(rows: &[DeltaRow], rel: f64) -> String {
    let any = rows
        .iter()
        .any(|r| !(r.qp.resolved(rel) && r.pq.resolved(rel)));
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.threshold.eps_text(),
                marked(&r.qp, rel),
                marked(&r.pq, rel),
                marked(&r.two_sided, rel),
            ]
        })
        .collect();
    table(
        &[
            "eps",
            "delta_qp = δ_{Q‖P}",
            "delta_pq = δ_{P‖Q}",
            "two-sided",
        ],
        &rows,
    ) + unresolved_note(any)
}

fn witness_json(c: &EpsilonCertificate) -> Value {
    json!({
        "exp_eps_lo": exact_string(&c.exp_lo),
        "exp_eps_hi": c.exp_hi.as_ref().map(exact_string),
        "delta_at_exp_eps_hi": c.delta_at_hi.as_ref().map(Enclosure::to_json),
        "singular_mass": c.singular_mass.as_ref().map(Enclosure::to_json),
    })
}

pub fn epsilon_json<Q: PairReport>(
    query: &Q,
    delta: &Rational,
    computed: &Computed<EpsilonRow>,
) -> Value {
    let mut v = query.header_json("epsilon", computed);
    epsilon_fields(&mut v, delta, &computed.result, query.rel_width());
    v
}

fn epsilon_fields(v: &mut Value, delta: &Rational, r: &EpsilonRow, rel: f64) {
    v["delta"] = json!(exact_string(delta));
    v["eps_qp"] = r.qp.eps.to_json_resolved(rel);
    v["eps_pq"] = r.pq.eps.to_json_resolved(rel);
    v["eps_two_sided"] = r.two_sided.to_json_resolved(rel);
    v["witnesses"] = json!({ "qp": witness_json(&r.qp), "pq": witness_json(&r.pq) });
}

pub fn epsilon_text<Q: PairReport>(
    query: &Q,
    delta: &Rational,
    computed: &Computed<EpsilonRow>,
) -> String {
    query.header_text("epsilon", computed)
        + &epsilon_table(delta, &computed.result, query.rel_width())
}

fn epsilon_table(delta: &Rational, r: &EpsilonRow, rel: f64) -> String {
    format!(
        "smallest ε ≥ 0 with δ(ε) ≤ {}\n\n",
        crate::enclosure::number_text(delta)
    ) + &table(
        &["direction", "eps"],
        &[
            vec!["qp  δ_{Q‖P}".into(), marked(&r.qp.eps, rel)],
            vec!["pq  δ_{P‖Q}".into(), marked(&r.pq.eps, rel)],
            vec!["two-sided".into(), marked(&r.two_sided, rel)],
        ],
    ) + &epsilon_note(r, rel)
}

/// The note under an ε table with unresolved values.  An ε whose upper end is +∞ with a
/// singular mass not certainly above δ (δ(ε) tends to it as ε → ∞) is unresolved for another
/// reason than depth: when the singular mass equals δ exactly, no interval enclosure at any
/// precision shows δ(ε) ≤ δ, and only exact rationals decide it.
fn epsilon_note(r: &EpsilonRow, rel: f64) -> String {
    let unresolved = |c: &EpsilonCertificate| !c.eps.resolved(rel);
    let at_singular = |c: &EpsilonCertificate| {
        unresolved(c)
            && c.eps.hi() == &crate::enclosure::Endpoint::PosInf
            && c.singular_mass.is_some()
    };
    if at_singular(&r.qp) || at_singular(&r.pq) {
        let others = [&r.qp, &r.pq]
            .into_iter()
            .any(|c| unresolved(c) && !at_singular(c));
        let mut note = "\n(unresolved) with upper end inf: δ(ε) decreases to the curve's singular mass (its limit as ε → ∞, in witnesses.*.singular_mass of --json), which is not certainly below the target δ, and no finite ε was certified; when the singular mass equals δ exactly, no precision of --backend mpfr decides it, --backend exact does (rational mechanisms)\n".to_string();
        if others {
            note += unresolved_note(true);
        }
        note
    } else {
        unresolved_note(unresolved(&r.qp) || unresolved(&r.pq)).to_string()
    }
}

fn divergence_rows(d: &Divergences) -> Vec<(String, &Enclosure)> {
    let mut rows = vec![
        ("tv".to_string(), &d.tv),
        ("kl_qp".to_string(), &d.kl_qp),
        ("kl_pq".to_string(), &d.kl_pq),
        ("jsd".to_string(), &d.jsd),
        ("chi2_qp".to_string(), &d.chi2_qp),
        ("hellinger2".to_string(), &d.hellinger2),
    ];
    for (a, e) in &d.renyi_qp {
        rows.push((format!("renyi_qp (order {})", exact_string(a)), e));
    }
    for (a, e) in &d.renyi_pq {
        rows.push((format!("renyi_pq (order {})", exact_string(a)), e));
    }
    rows
}

pub fn divergences_json<Q: PairReport>(query: &Q, computed: &Computed<Divergences>) -> Value {
    let mut v = query.header_json("divergences", computed);
    divergence_fields(&mut v, &computed.result);
    v
}

fn divergence_fields(v: &mut Value, d: &Divergences) {
    v["units"] = json!("nats");
    v["tv"] = d.tv.to_json();
    v["kl_qp"] = d.kl_qp.to_json();
    v["kl_pq"] = d.kl_pq.to_json();
    v["jsd"] = d.jsd.to_json();
    v["chi2_qp"] = d.chi2_qp.to_json();
    v["hellinger2"] = d.hellinger2.to_json();
    let orders = |list: &[(Rational, Enclosure)]| -> Value {
        list.iter()
            .map(|(a, e)| json!({ "order": exact_string(a), "value": e.to_json() }))
            .collect()
    };
    v["renyi_qp"] = orders(&d.renyi_qp);
    v["renyi_pq"] = orders(&d.renyi_pq);
}

pub fn divergences_text<Q: PairReport>(query: &Q, computed: &Computed<Divergences>) -> String {
    query.header_text("divergences", computed) + &divergence_table(&computed.result)
}

fn divergence_table(d: &Divergences) -> String {
    let rows: Vec<Vec<String>> = divergence_rows(d)
        .into_iter()
        .map(|(name, e)| vec![name, e.to_string()])
        .collect();
    table(&["divergence (nats)", "value"], &rows)
}

#[cfg(test)]
mod tests {
    use super::abbreviated_numbers;

    #[test]
    fn long_numbers_are_abbreviated_and_short_ones_kept() {
        let long = format!("{}/{}", "1".repeat(30), "3".repeat(30));
        let text = format!("bound 3 rebuilt is {long}, not at most 1/7 (k = 0..5, -2)");
        let out = abbreviated_numbers(&text);
        assert_eq!(
            out,
            "bound 3 rebuilt is ≈3.33333333333e-1, not at most 1/7 (k = 0..5, -2)"
        );
        let json = format!(r#"records {{"hi":"-{long}","lo":"0.5"}}"#);
        assert_eq!(
            abbreviated_numbers(&json),
            r#"records {"hi":"≈-3.33333333333e-1","lo":"0.5"}"#
        );
        assert_eq!(abbreviated_numbers("no numbers"), "no numbers");
    }
}
