//! Rendering answers: human-readable tables and JSON, one file per family of commands.  Every certified number is printed as an
//! outward-rounded enclosure; JSON gives it as `{"lo": "…", "hi": "…"}`.

use crate::enclosure::{Enclosure, bound_text, exact_string};
use crate::exact::curve::EpsilonCertificate;
use crate::exact::divergence::Divergences;
use crate::exact::pair::PairOptions;
use crate::limits::experiment::ExperimentQuery;
use crate::mechanism::Mechanism;
use crate::query::{Computed, DeltaRow, EpsilonRow, PairQuery};
use rug::Rational;
use serde_json::{Value, json};

mod asymptotic;
mod audit;
mod bounds;
mod compare;
mod limit;
mod profile;
mod tv;

pub use asymptotic::{ConstantsRange, check_json, check_text, constants_json, constants_text};
pub use audit::{audit_json, audit_text};

/// `verify` as text: the verdict, the routes, and every problem.
pub fn verify_text(path: &str, v: &crate::certificate::verify::Verification) -> String {
    let mut s = format!("shufflecert verify: {path} ({} certificate)\n", v.command);
    if v.valid() {
        s += &format!(
            "VALID: {} certified value(s) confirmed by independent routes\n",
            v.confirmed
        );
    } else {
        s += &format!("INVALID: {} problem(s)\n", v.problems.len());
        for p in &v.problems {
            s += &format!("  - {p}\n");
        }
    }
    s += "routes:\n";
    for r in &v.routes {
        s += &format!("  - {r}\n");
    }
    s
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
pub use bounds::{BoundsReport, bounds_json, bounds_text};
pub use compare::{compare_json, compare_text};
pub use limit::{berry_esseen_json, berry_esseen_text, limit_json, limit_text};
pub use profile::{profile_json, profile_text};
pub use tv::{tv_ball_json, tv_ball_text};

fn header_json<R>(command: &str, query: &PairQuery, computed: &Computed<R>) -> Value {
    json!({
        "command": command,
        "certified": true,
        "mechanism": query.mechanism.to_json(),
        "n": query.n,
        "k": query.k,
        "pair": "P = T_{n,k}, Q = T_{n,k+1}; qp means delta_{Q||P}",
        "backend": query.backend.label(),
        "arithmetic": computed.arithmetic,
        "engine": computed.engine,
        "alphabet": alphabet_json(&query.mechanism, &query.options),
        "states": computed.states,
        "omitted_mass_bound": bound_text(&computed.omitted),
        "canonical_cross_check_states": computed.canonical_states_checked,
    })
}

/// The output alphabet the engines ran on: `{outputs, reduced_outputs, classes, dropped}` with
/// the sufficiency reduction, `{outputs, reduced: false}` with `--no-reduce`.
pub(super) fn alphabet_json(mechanism: &Mechanism, options: &PairOptions) -> Value {
    match options.reduce.then(|| mechanism.reduced()) {
        Some(Ok(r)) => r.to_json(mechanism),
        _ => json!({ "outputs": mechanism.d(), "reduced": false }),
    }
}

/// The alphabet line of a text report (empty when the reduction changed nothing).
pub(super) fn alphabet_text(mechanism: &Mechanism, options: &PairOptions) -> String {
    match options.reduce.then(|| mechanism.reduced()) {
        Some(Ok(r)) if !r.is_identity() => format!("alphabet: {}\n", r.summary(mechanism)),
        _ => String::new(),
    }
}

fn header_text(
    command: &str,
    query: &PairQuery,
    computed_arith: &str,
    engine: &str,
    states: usize,
    omitted: &Rational,
) -> String {
    let mut s = format!(
        "shufflecert {command}: {}  n = {}  k = {}  (P = T_{{n,k}}, Q = T_{{n,k+1}})\n",
        query.mechanism.name, query.n, query.k
    );
    s += &alphabet_text(&query.mechanism, &query.options);
    s += &format!("arithmetic {computed_arith} · engine {engine} · {states} histogram states");
    if *omitted != 0 {
        s += &format!(" · truncated, omitted mass ≤ {}", bound_text(omitted));
    }
    s += "\nevery [lo, hi] is a certified enclosure of the true value\n\n";
    s
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
    parts.join(", ")
}

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

pub fn delta_json(query: &PairQuery, computed: &Computed<Vec<DeltaRow>>) -> Value {
    let mut v = header_json("delta", query, computed);
    v["results"] = delta_results(&computed.result);
    v
}

fn delta_results(rows: &[DeltaRow]) -> Value {
    rows.iter()
        .map(|r| {
            json!({
                "eps": r.threshold.eps_text(),
                "delta_qp": r.qp.to_json(),
                "delta_pq": r.pq.to_json(),
                "delta_two_sided": r.two_sided.to_json(),
            })
        })
        .collect()
}

pub fn delta_text(query: &PairQuery, computed: &Computed<Vec<DeltaRow>>) -> String {
    let s = header_text(
        "delta",
        query,
        &computed.arithmetic,
        computed.engine,
        computed.states,
        &computed.omitted,
    );
    s + &delta_table(&computed.result)
}

fn delta_table(rows: &[DeltaRow]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.threshold.eps_text(),
                r.qp.to_string(),
                r.pq.to_string(),
                r.two_sided.to_string(),
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
    )
}

fn witness_json(c: &EpsilonCertificate) -> Value {
    json!({
        "exp_eps_lo": exact_string(&c.exp_lo),
        "exp_eps_hi": c.exp_hi.as_ref().map(exact_string),
        "delta_at_exp_eps_hi": c.delta_at_hi.as_ref().map(Enclosure::to_json),
        "singular_mass": c.singular_mass.as_ref().map(Enclosure::to_json),
    })
}

pub fn epsilon_json(query: &PairQuery, delta: &Rational, computed: &Computed<EpsilonRow>) -> Value {
    let mut v = header_json("epsilon", query, computed);
    epsilon_fields(&mut v, delta, &computed.result);
    v
}

fn epsilon_fields(v: &mut Value, delta: &Rational, r: &EpsilonRow) {
    v["delta"] = json!(exact_string(delta));
    v["eps_qp"] = r.qp.eps.to_json();
    v["eps_pq"] = r.pq.eps.to_json();
    v["eps_two_sided"] = r.two_sided.to_json();
    v["witnesses"] = json!({ "qp": witness_json(&r.qp), "pq": witness_json(&r.pq) });
}

pub fn epsilon_text(
    query: &PairQuery,
    delta: &Rational,
    computed: &Computed<EpsilonRow>,
) -> String {
    let s = header_text(
        "epsilon",
        query,
        &computed.arithmetic,
        computed.engine,
        computed.states,
        &computed.omitted,
    );
    s + &epsilon_table(delta, &computed.result)
}

fn epsilon_table(delta: &Rational, r: &EpsilonRow) -> String {
    format!("smallest ε ≥ 0 with δ(ε) ≤ {}\n\n", exact_string(delta))
        + &table(
            &["direction", "eps"],
            &[
                vec!["qp  δ_{Q‖P}".into(), r.qp.eps.to_string()],
                vec!["pq  δ_{P‖Q}".into(), r.pq.eps.to_string()],
                vec!["two-sided".into(), r.two_sided.to_string()],
            ],
        )
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

pub fn divergences_json(query: &PairQuery, computed: &Computed<Divergences>) -> Value {
    let mut v = header_json("divergences", query, computed);
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

pub fn divergences_text(query: &PairQuery, computed: &Computed<Divergences>) -> String {
    let s = header_text(
        "divergences",
        query,
        &computed.arithmetic,
        computed.engine,
        computed.states,
        &computed.omitted,
    );
    s + &divergence_table(&computed.result)
}

fn divergence_table(d: &Divergences) -> String {
    let rows: Vec<Vec<String>> = divergence_rows(d)
        .into_iter()
        .map(|(name, e)| vec![name, e.to_string()])
        .collect();
    table(&["divergence (nats)", "value"], &rows)
}

/// The header of a limit experiment's report (JSON).
fn experiment_header_json<R>(
    command: &str,
    query: &ExperimentQuery,
    computed: &Computed<R>,
) -> Value {
    json!({
        "command": command,
        "certified": true,
        "experiment": query.experiment.to_json(),
        "pair": query.experiment.pair_text(),
        "backend": query.backend.label(),
        "arithmetic": computed.arithmetic,
        "engine": computed.engine,
        "states": computed.states,
        "omitted_mass_bound": bound_text(&computed.omitted),
    })
}

/// The header of a limit experiment's report (text).
fn experiment_header_text<R>(
    command: &str,
    query: &ExperimentQuery,
    computed: &Computed<R>,
) -> String {
    let e = &query.experiment;
    let mut s = format!(
        "shufflecert {command}: limit experiment {} ({})\n{}\n",
        e.name,
        e.kind,
        e.pair_text().replace("; qp means delta_{Q||P}", "")
    );
    s += &format!(
        "arithmetic {} · engine {}",
        computed.arithmetic, computed.engine
    );
    if computed.states > 0 {
        s += &format!(" · {} lattice states", computed.states);
    }
    if computed.omitted != 0 {
        s += &format!(
            " · truncated, omitted mass ≤ {}",
            bound_text(&computed.omitted)
        );
    }
    s += "\nevery [lo, hi] is a certified enclosure of the true value\n\n";
    s
}

/// `delta` on a limit experiment (JSON).
pub fn experiment_delta_json(query: &ExperimentQuery, computed: &Computed<Vec<DeltaRow>>) -> Value {
    let mut v = experiment_header_json("delta", query, computed);
    v["results"] = delta_results(&computed.result);
    v
}

/// `delta` on a limit experiment (text).
pub fn experiment_delta_text(
    query: &ExperimentQuery,
    computed: &Computed<Vec<DeltaRow>>,
) -> String {
    experiment_header_text("delta", query, computed) + &delta_table(&computed.result)
}

/// `epsilon` on a limit experiment (JSON).
pub fn experiment_epsilon_json(
    query: &ExperimentQuery,
    delta: &Rational,
    computed: &Computed<EpsilonRow>,
) -> Value {
    let mut v = experiment_header_json("epsilon", query, computed);
    epsilon_fields(&mut v, delta, &computed.result);
    v
}

/// `epsilon` on a limit experiment (text).
pub fn experiment_epsilon_text(
    query: &ExperimentQuery,
    delta: &Rational,
    computed: &Computed<EpsilonRow>,
) -> String {
    experiment_header_text("epsilon", query, computed) + &epsilon_table(delta, &computed.result)
}

/// `divergences` on a limit experiment (JSON).
pub fn experiment_divergences_json(
    query: &ExperimentQuery,
    computed: &Computed<Divergences>,
) -> Value {
    let mut v = experiment_header_json("divergences", query, computed);
    divergence_fields(&mut v, &computed.result);
    v
}

/// `divergences` on a limit experiment (text).
pub fn experiment_divergences_text(
    query: &ExperimentQuery,
    computed: &Computed<Divergences>,
) -> String {
    experiment_header_text("divergences", query, computed) + &divergence_table(&computed.result)
}
