//! `--certificate OUT.json`: each command's report rendered with exact endpoints, its method and
//! the proofs-notes that justify it, sealed by `certificate::seal` and written before anything is
//! printed (a certificate that cannot be written is an error, and then nothing is reported).

use crate::audit::claims::Claim;
use crate::audit::compare::{Certified, CompareQuery, Comparison};
use crate::audit::{Audit, AuditQuery};
use crate::certificate::{Parts, Schema, Settings, Subject, seal};
use crate::enclosure::{bound_text, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::limits::experiment::ExperimentQuery;
use crate::profile::{Profile, ProfileQuery, Quantity};
use crate::query::BackgroundQuery;
use crate::query::{Backend, Computed, PairQuery};
use serde_json::{Value, json};

/// Seals and writes a certificate.
pub fn write(path: &str, parts: Parts<'_>) -> Result<()> {
    let cert = seal(parts)?;
    let text = serde_json::to_string_pretty(&cert).expect("JSON values serialise") + "\n";
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.to_string(),
        message: format!("cannot write the certificate: {e}"),
    })
}

/// The settings of a computation.
pub fn settings(
    backend: Backend,
    exact_ctx: crate::arith::exact::ExactCtx,
    options: &crate::exact::pair::PairOptions,
    escalate_above: Option<f64>,
) -> Settings {
    Settings {
        backend,
        exact_ctx,
        options: options.clone(),
        escalate_above,
    }
}

/// The truncation depth the backend uses, `2^-bits` of each step's largest value (`None`: none).
fn truncation_bits(backend: Backend, truncate: bool) -> Option<u32> {
    match backend {
        _ if !truncate => None,
        Backend::Interval => Some(100),
        Backend::Mpfr { precision } => Some(precision + 40),
        Backend::Exact => None,
    }
}

/// The notes behind every certified number, whatever the command.
fn base_notes(
    engine: &str,
    arithmetic: &str,
    options: &PairOptions,
    backend: Backend,
) -> Vec<&'static str> {
    let mut notes = vec![
        "README.md",
        "arithmetic.md",
        "mechanisms.md",
        "privacy-curves.md",
    ];
    if options.reduce {
        notes.push("sufficiency-reduction.md");
    }
    match engine {
        "binary" => notes.push("binary-fast-path.md"),
        "window" => {
            notes.extend(["histogram-law.md", "windowed-laws.md"]);
            if backend == Backend::Interval {
                notes.push("nonnegative-kernel.md");
            }
        }
        "ratio" => notes.extend(["histogram-law.md", "ratio-lattice.md"]),
        _ => notes.push("histogram-law.md"),
    }
    if backend == Backend::Interval && arithmetic.contains("mpfr") {
        notes.push("precision-escalation.md");
    }
    notes
}

/// What a pair certificate records of where its pair comes from.
pub trait CertifiedPair {
    /// What the certificate is about.
    fn subject(&self) -> Subject<'_>;
    fn settings(&self) -> Settings;
    /// How the pair was built.
    fn route(&self) -> &'static str;
    /// The notes behind the pair, beyond those of every pair.
    fn pair_notes(&self) -> &'static [&'static str];
    /// Version 1 for a binary-input mechanism's pair, version 2 otherwise.
    fn schema(&self) -> Schema;
    fn truncation_bits(&self) -> Option<u32>;
}

impl CertifiedPair for PairQuery {
    fn subject(&self) -> Subject<'_> {
        (&self.mechanism).into()
    }
    fn settings(&self) -> Settings {
        settings(
            self.backend,
            self.exact_ctx,
            &self.options,
            self.escalate_above,
        )
    }
    fn route(&self) -> &'static str {
        "the pair (T_{n,k}, T_{n,k+1}) from T_{n-1,k} by the shift identities (Part I Lemma 4.2)"
    }
    fn pair_notes(&self) -> &'static [&'static str] {
        if self.mechanism.messages.is_some() {
            &["multi-message.md"]
        } else {
            &[]
        }
    }
    fn schema(&self) -> Schema {
        Schema::for_mechanism(&self.mechanism)
    }
    fn truncation_bits(&self) -> Option<u32> {
        truncation_bits(self.backend, self.options.truncate)
    }
}

impl CertifiedPair for BackgroundQuery {
    fn subject(&self) -> Subject<'_> {
        Subject::Randomizer(&self.randomizer)
    }
    fn settings(&self) -> Settings {
        settings(
            self.backend,
            self.exact_ctx,
            &self.options,
            self.escalate_above,
        )
    }
    fn route(&self) -> &'static str {
        "the pair (R_x1 * B, R_x1' * B) with B the background's histogram law, by the shift identities (Part I Lemma 4.2) on windowed laws"
    }
    fn pair_notes(&self) -> &'static [&'static str] {
        &["background-pairs.md", "windowed-laws.md"]
    }
    fn schema(&self) -> Schema {
        Schema::V2
    }
    fn truncation_bits(&self) -> Option<u32> {
        truncation_bits(self.backend, self.options.truncate)
    }
}

impl CertifiedPair for ExperimentQuery {
    fn subject(&self) -> Subject<'_> {
        Subject::Experiment(&self.experiment)
    }
    fn settings(&self) -> Settings {
        // A limit experiment has no engine options: it is built on windows of its lattice (or
        // answered in closed form), truncated at the backend's depth.
        settings(
            self.backend,
            Default::default(),
            &PairOptions::default(),
            self.escalate_above,
        )
    }
    fn route(&self) -> &'static str {
        "the limit experiment's pair on certified windows of its lattice (Part III), or the Gaussian shift in closed form"
    }
    fn pair_notes(&self) -> &'static [&'static str] {
        &["limit-experiments.md"]
    }
    fn schema(&self) -> Schema {
        Schema::V2
    }
    fn truncation_bits(&self) -> Option<u32> {
        truncation_bits(self.backend, true)
    }
}

/// The method of a pair computation.
fn pair_method<Src: CertifiedPair, R>(source: &Src, computed: &Computed<R>) -> Value {
    let route = if computed.engine == "ratio" {
        "the pair (T_{n,0}, T_{n,1}) on the lattice of its likelihood ratio L_{n,0}, a sufficient statistic, from the lattice law of n - 1 users by the shift identities (Part I Lemma 4.2)"
    } else {
        source.route()
    };
    json!({
        "route": route,
        "engine": computed.engine,
        "arithmetic": computed.arithmetic,
        "states": computed.states,
        "truncation_bits": source.truncation_bits(),
        "omitted_mass_bound": bound_text(&computed.omitted),
        "canonical_cross_check_states": computed.canonical_states_checked,
    })
}

/// The parts of a pair command's certificate.
pub fn pair_parts<'a, Src: CertifiedPair, R>(
    command: &'static str,
    source: &'a Src,
    computed: &Computed<R>,
    report: Value,
    extra_notes: &[&'static str],
) -> Parts<'a> {
    let settings = source.settings();
    let mut notes = base_notes(
        computed.engine,
        &computed.arithmetic,
        &settings.options,
        settings.backend,
    );
    notes.extend_from_slice(source.pair_notes());
    notes.extend_from_slice(extra_notes);
    if computed.canonical_states_checked.is_some() {
        notes.push("canonical-cross-check.md");
    }
    Parts {
        schema: source.schema(),
        command,
        mechanism: source.subject(),
        settings,
        claims: None,
        report,
        method: with_exact_endpoints(|| pair_method(source, computed)),
        proofs_notes: notes,
    }
}

/// The method of a profile: the scan, and every pair it evaluated.
pub fn profile_method(q: &ProfileQuery, p: &Profile) -> Value {
    with_exact_endpoints(|| {
        json!({
            "route": "divide-and-conquer scan over k with data-processing pruning",
            "engine": p.engine,
            "arithmetic": p.arithmetic,
            "truncation_bits": truncation_bits(q.backend, q.options.truncate),
            "k_range": [p.k_range.0, p.k_range.1],
            "pairs_evaluated": p.stats.pairs_evaluated,
            "k_pruned": p.stats.k_pruned,
            "nodes_bounded": p.stats.nodes_bounded,
            "pairs_refined": p.stats.pairs_refined,
            "quantities": q.quantities.iter().map(Quantity::to_json).collect::<Vec<_>>(),
            "records": p.records.iter().map(|r| {
                let values = |v: &[Option<crate::enclosure::Enclosure>]| -> Vec<Value> {
                    v.iter()
                        .map(|e| e.as_ref().map_or(Value::Null, |e| e.to_json()))
                        .collect()
                };
                json!({ "k": r.k, "qp": values(&r.qp), "pq": values(&r.pq) })
            }).collect::<Vec<_>>(),
            "closures": p.closures.iter().map(|c| json!({
                "range": [c.range.0, c.range.1],
                "quantity": c.quantity,
                "kind": c.kind.name(),
            })).collect::<Vec<_>>(),
        })
    })
}

/// The parts of an audit's certificate: the claims as given and as read, and per scan the
/// profile's report and proof (as a profile certificate holds them), with the precision of
/// any refinement.
pub fn audit_parts<'a>(
    query: &'a AuditQuery,
    claims_path: &str,
    claims_text: &str,
    audit: &Audit,
    report: Value,
) -> Parts<'a> {
    let claims = json!({
        "given": claims_path,
        "text": claims_text,
        "parsed": query.claims.iter().map(Claim::to_json).collect::<Vec<_>>(),
    });
    let mut notes = vec!["audit-verdicts.md"];
    let scans: Vec<Value> = audit
        .scans
        .iter()
        .map(|s| {
            notes.extend(profile_notes(&s.query, &s.profile));
            let mut scan = scan_json(&s.query, &s.profile);
            scan["n"] = json!(s.n());
            scan["k"] = json!(s.k());
            scan["refined_bits"] = json!(s.refined_bits);
            scan
        })
        .collect();
    Parts {
        schema: Schema::for_mechanism(&query.mechanism),
        command: "audit",
        mechanism: (&query.mechanism).into(),
        settings: settings(
            query.backend,
            query.exact_ctx,
            &query.options,
            query.escalate_above,
        ),
        claims: Some(claims),
        report,
        method: json!({
            "route": "one profile scan per group of claims with the same n (and k), refined in MPFR where a claim was undecided; each claim judged on its scan's certified row; boundary pairs k = 0 and k = n - 1 for unsound mechanism-wide upper claims",
            "scans": scans,
        }),
        proofs_notes: notes,
    }
}

/// A scan as a certificate holds it: the profile's report and its proof.
fn scan_json(query: &ProfileQuery, profile: &Profile) -> Value {
    json!({
        "report": with_exact_endpoints(|| super::output::profile_json(query, profile)),
        "method": profile_method(query, profile),
    })
}

/// The parts of a comparison's certificate: per n, the scan behind the mechanism's ε (binary
/// inputs), or the certified range with its witness pair (more inputs).
pub fn compare_parts<'a>(query: &'a CompareQuery, rows: &[Comparison], report: Value) -> Parts<'a> {
    let mut notes = vec!["reference-accountants.md", "epsilon-for-delta.md"];
    let settings = settings(
        query.backend,
        query.exact_ctx,
        &query.options,
        query.escalate_above,
    );
    let Some(mechanism) = &query.mechanism else {
        notes.extend([
            "blanket-bounds.md",
            "background-pairs.md",
            "ordered-curves.md",
        ]);
        return Parts {
            schema: Schema::V1,
            command: "compare",
            mechanism: Subject::Randomizer(&query.randomizer),
            settings,
            claims: None,
            report,
            method: json!({
                "route": "per n: the certified range of eps_M(delta) by `bounds` (upper: the blanket divergence over every ordered pair of inputs; lower: the exact eps of the concrete neighbouring pair that attains it), and every published bound in MPFR interval arithmetic; each bound holds above the upper end, is violated below the lower end (the lower pair is the witness), undecided in between",
            }),
            proofs_notes: notes,
        };
    };
    for c in rows {
        if let Certified::Exact { scan, .. } = &c.certified {
            notes.extend(profile_notes(&scan.0, &scan.1));
        }
    }
    Parts {
        schema: Schema::V1,
        command: "compare",
        mechanism: mechanism.into(),
        settings,
        claims: None,
        report,
        method: json!({
            "route": "per n: the mechanism's ε by a profile scan over every k, the boundary pair's ε by the pair engine, and every published bound in MPFR interval arithmetic (closed forms, certified inversions, reduced experiments)",
            "scans": rows.iter().filter_map(|c| match &c.certified {
                Certified::Exact { scan, .. } => Some(scan_json(&scan.0, &scan.1)),
                Certified::Range(_) => None,
            }).collect::<Vec<_>>(),
        }),
        proofs_notes: notes,
    }
}

/// The notes behind a profile.
pub fn profile_notes(q: &ProfileQuery, p: &Profile) -> Vec<&'static str> {
    let mut notes = base_notes(p.engine, &p.arithmetic, &q.options, q.backend);
    notes.extend(["profile.md", "epsilon-for-delta.md", "ordered-curves.md"]);
    if q.mechanism.messages.is_some() {
        notes.push("multi-message.md");
    }
    if q.quantities
        .iter()
        .any(|x| matches!(x, crate::profile::Quantity::Renyi(_)))
    {
        notes.push("divergences.md");
    }
    notes
}

/// The notes behind a certified range of `bounds` (and the shuffle index beside it).
const RANGE_NOTES: [&str; 7] = [
    "README.md",
    "arithmetic.md",
    "mechanisms.md",
    "privacy-curves.md",
    "blanket-bounds.md",
    "chernoff-pruning.md",
    "shuffle-index.md",
];

/// The parts of a range's certificate: the report, and every sum behind it (each ordered
/// pair's blanket sum, each triple's concrete pair, the bracket of an irrational `e^eps0`) and,
/// for binary inputs, the exact profile's proof.
pub fn bounds_parts<'a>(
    query: &'a crate::bounds::range::BoundsQuery,
    report: &super::output::BoundsReport<'_>,
    proof: &crate::bounds::range::RangeProof,
    profile: Option<&(ProfileQuery, Profile)>,
) -> Parts<'a> {
    let r = &query.randomizer;
    let mut notes = RANGE_NOTES.to_vec();
    if matches!(query.target, crate::bounds::range::Target::Epsilon(_)) {
        notes.push("epsilon-for-delta.md");
    }
    let mut method = with_exact_endpoints(|| {
        let mut v = range_proof_json(r, proof);
        v["route"] = json!(
            "upper: the blanket divergence of every ordered pair of inputs (pairs with equal classes summed once, pairs whose Chernoff bound is below the end recorded with it instead), the largest reported; lower: the exact delta of the concrete neighbouring pair of every summed triple (x1, x1', x2), the largest reported; the shuffle index from the rows"
        );
        v
    });
    if let Some((q, p)) = profile {
        notes.extend(profile_notes(q, p));
        method["binary_profile"] = scan_json(q, p);
    }
    if let Some(c) = report.ceiling {
        notes.push("inputs-profile.md");
        method["ceiling"] = with_exact_endpoints(|| {
            json!({
                "report": super::output::inputs_profile_json(&c.query, &c.profile),
                "method": crate::certificate::inputs_proof::to_json(&c.query, &c.profile),
            })
        });
    }
    Parts {
        schema: Schema::V2,
        command: "bounds",
        mechanism: Subject::Randomizer(r),
        settings: bounds_settings(query),
        claims: None,
        report: with_exact_endpoints(|| super::output::bounds_json(report)),
        method,
        proofs_notes: notes,
    }
}

/// Every sum behind a range, as its certificate records it (call with exact endpoints): each
/// ordered pair's blanket sum (`upper_pairs`, with the pairs of equal classes it stands for),
/// each triple's concrete pair (`lower_triples`), and the bracket of an irrational `e^eps0`.
fn range_proof_json(
    r: &crate::mechanism::randomizer::Randomizer,
    proof: &crate::bounds::range::RangeProof,
) -> Value {
    let record = |p: &crate::bounds::range::PairRecord| {
        let mut v = json!({
            "x1": r.inputs[p.pair.0],
            "x1_prime": r.inputs[p.pair.1],
            "values": p.values.iter().map(|[a, b]| json!([a.to_json(), b.to_json()])).collect::<Vec<_>>(),
        });
        if let Some(x2) = p.background {
            v["x2"] = json!(r.inputs[x2]);
        } else {
            v["same_classes"] = p
                .same_classes
                .iter()
                .map(|(a, b)| json!([r.inputs[*a], r.inputs[*b]]))
                .collect();
        }
        v
    };
    let pruned = |p: &crate::bounds::range::PrunedRecord| {
        let mut v = json!({
            "x1": r.inputs[p.pair.0],
            "x1_prime": r.inputs[p.pair.1],
            "chernoff": p.bounds.iter().map(|row| row.iter().map(|b| json!({
                "t": crate::enclosure::exact_string(&b.t),
                "s": crate::enclosure::exact_string(&b.s),
                "bound": crate::enclosure::exact_string(&b.value),
            })).collect::<Vec<_>>()).collect::<Vec<_>>(),
        });
        match p.background {
            Some(x2) => v["x2"] = json!(r.inputs[x2]),
            None => {
                v["same_classes"] = p
                    .same_classes
                    .iter()
                    .map(|(a, b)| json!([r.inputs[*a], r.inputs[*b]]))
                    .collect()
            }
        }
        v
    };
    json!({
        "upper_pairs": proof.upper.iter().map(record).collect::<Vec<_>>(),
        "lower_triples": proof.lower.iter().map(record).collect::<Vec<_>>(),
        "upper_pruned": proof.upper_pruned.iter().map(pruned).collect::<Vec<_>>(),
        "lower_pruned": proof.lower_pruned.iter().map(pruned).collect::<Vec<_>>(),
        "exp_eps0_bracket": proof.exp_eps0.as_ref().map(|(lo, hi)| json!([crate::enclosure::exact_string(lo), crate::enclosure::exact_string(hi)])),
    })
}

/// One certified range as a certificate records it: its `n`, quantity (and δ), its rows
/// (`results`, as `bounds --json` prints them) and every sum behind them.
fn range_json(
    r: &crate::mechanism::randomizer::Randomizer,
    n: u64,
    target: &crate::bounds::range::Target,
    rows: &[crate::bounds::range::RangeRow],
    proof: &crate::bounds::range::RangeProof,
) -> Value {
    use crate::bounds::range::Target;
    with_exact_endpoints(|| {
        let mut v = range_proof_json(r, proof);
        v["n"] = json!(n);
        match target {
            Target::Delta(_) => v["quantity"] = json!("delta_M(eps)"),
            Target::Epsilon(d) => {
                v["quantity"] = json!("eps_M(delta)");
                v["delta"] = json!(crate::enclosure::exact_string(d));
            }
        }
        v["results"] = super::output::rows_json(r, rows);
        v
    })
}

/// The parts of a shuffle-index check's certificate (`check` without `--k`): the certified
/// range at every ε and at δ = 1/n, each as a range audit records it, with every sum behind
/// it; the report holds the shuffle index and each (uncertified) prediction against the end it
/// predicts.
pub fn index_check_parts<'a>(
    query: &'a crate::bounds::range::BoundsQuery,
    eps: &[rug::Rational],
    check: &crate::bounds::predict::IndexCheck,
    report: Value,
) -> Parts<'a> {
    use crate::bounds::range::Target;
    use crate::query::Threshold;
    let r = &query.randomizer;
    let ranges = vec![
        range_json(
            r,
            query.n,
            &Target::Delta(eps.iter().cloned().map(Threshold::Eps).collect()),
            &check.delta_rows,
            &check.delta_proof,
        ),
        range_json(
            r,
            query.n,
            &Target::Epsilon(check.delta.clone()),
            std::slice::from_ref(&check.epsilon_row),
            &check.epsilon_proof,
        ),
    ];
    Parts {
        schema: Schema::V2,
        command: "check",
        mechanism: Subject::Randomizer(r),
        settings: bounds_settings(query),
        claims: None,
        report,
        method: json!({
            "route": "the certified range of delta_M at every eps and of eps_M at delta = 1/n, as `bounds` computes them (upper: the blanket divergence of every ordered pair of inputs; lower: the exact delta of the concrete neighbouring pair of every summed triple); each prediction of the shuffle index held against the end it predicts",
            "ranges": ranges,
        }),
        proofs_notes: [
            &RANGE_NOTES[..],
            &["epsilon-for-delta.md", "check-index.md"],
        ]
        .concat(),
    }
}

/// The parts of a range audit's certificate (a randomizer with more than two inputs): the claims
/// as given and as read, and every range the verdicts were judged on, each as a `bounds`
/// certificate holds it (its rows, every pair's blanket sum and every triple's concrete pair).
pub fn range_audit_parts<'a>(
    query: &'a crate::audit::range::RangeAuditQuery,
    claims_text: &str,
    audit: &crate::audit::range::RangeAudit,
    report: Value,
) -> Parts<'a> {
    use crate::bounds::range::Target;
    let r = &query.randomizer;
    let claims = json!({
        "given": query.path,
        "text": claims_text,
        "parsed": query.claims.iter().map(Claim::to_json).collect::<Vec<_>>(),
    });
    let mut notes = vec![
        "README.md",
        "arithmetic.md",
        "mechanisms.md",
        "privacy-curves.md",
        "audit-verdicts.md",
        "blanket-bounds.md",
        "background-pairs.md",
        "certificates.md",
    ];
    if audit
        .ranges
        .iter()
        .any(|range| matches!(range.target, Target::Epsilon(_)))
    {
        notes.push("epsilon-for-delta.md");
    }
    let ranges: Vec<Value> = audit
        .ranges
        .iter()
        .map(|range| range_json(r, range.n, &range.target, &range.rows, &range.proof))
        .collect();
    // The exact profiles that narrowed undecided claims, each with its whole proof.
    let profiles: Vec<Value> = audit
        .profiles
        .iter()
        .map(|(q, p)| {
            with_exact_endpoints(|| {
                json!({
                    "n": q.n,
                    "report": super::output::inputs_profile_json(q, p),
                    "method": crate::certificate::inputs_proof::to_json(q, p),
                })
            })
        })
        .collect();
    if !profiles.is_empty() {
        notes.extend(["inputs-profile.md", "windowed-laws.md", "histogram-law.md"]);
    }
    Parts {
        schema: Schema::V2,
        command: "audit",
        mechanism: Subject::Randomizer(r),
        settings: settings(
            query.backend,
            Default::default(),
            &query.options,
            query.escalate_above,
        ),
        claims: Some(claims),
        report,
        method: json!({
            "route": format!("per n: the certified range of delta_M at every claimed eps by `bounds` (upper: the blanket divergence of every ordered pair of inputs; lower: the exact delta of the concrete neighbouring pair (x1, x2, ..., x2) ~ (x1', x2, ..., x2) of every summed triple){}; each claim judged on [lower.lo, upper.hi]: an upper claim sound at or above the upper end, unsound below the lower end (its pair is the witness), undecided in between; per n, the claims undecided there judged on the exact profile over every dataset at their eps where it was affordable (method.profiles, each with its proof)", if query.eps_ranges { crate::audit::range::EPS_RANGES_ROUTE } else { "" }),
            "ranges": ranges,
            "profiles": profiles,
        }),
        proofs_notes: notes,
    }
}

/// The settings a `bounds` range is computed with (exact rationals are not bracketed there).
fn bounds_settings(query: &crate::bounds::range::BoundsQuery) -> Settings {
    settings(
        query.backend,
        Default::default(),
        &query.options,
        query.escalate_above,
    )
}

/// The parts of a `limit` certificate: the sequence as given (and its file's text), the
/// settings every curve ran with, and how each curve was computed.
pub fn limit_parts<'a>(
    given: &'a str,
    text: Option<&'a str>,
    study: &crate::limits::study::Study,
    report: Value,
) -> Parts<'a> {
    // Every curve of the study runs on the interval backend with the default options and
    // escalation (study.rs).
    let settings = settings(
        Backend::Interval,
        Default::default(),
        &PairOptions::default(),
        Some(crate::query::DEFAULT_REL_WIDTH),
    );
    let mut notes = vec!["limit-study.md", "limit-experiments.md"];
    for row in &study.rows {
        let p = &row.provenance;
        notes.extend(base_notes(
            p.engine,
            &p.arithmetic,
            &settings.options,
            settings.backend,
        ));
    }
    if let Some((_, p)) = &study.limit_pair {
        notes.extend(base_notes(
            p.engine,
            &p.arithmetic,
            &settings.options,
            settings.backend,
        ));
    }
    if study
        .rows
        .iter()
        .any(|r| r.transfer.is_some() || !r.auxiliary.is_empty())
    {
        notes.push("tv-and-le-cam.md");
    }
    let provenance = |p: &crate::limits::study::Provenance| {
        json!({
            "engine": p.engine,
            "arithmetic": p.arithmetic,
            "states": p.states,
            "omitted_mass_bound": bound_text(&p.omitted),
        })
    };
    let method = with_exact_endpoints(|| {
        json!({
            "route": "per n: the pair (T_{n,k}, T_{n,k+1}) of W^(n) by the pair engine (Part I Lemma 4.2); the limit delta of the projected jump pair (L(J), L(J + Delta)) on certified lattice windows (Part III Theorem 3.1); each gap as the distance of the two enclosures; for single-dominant sequences delta_n from the limit curve by Lemma 2.4 with the TV budget of the Poisson replacement; Theorem 7.2's auxiliary TV by Theorem 7.1's formula",
            "finite": study.rows.iter().map(|r| {
                let mut v = provenance(&r.provenance);
                v["n"] = json!(r.n);
                v
            }).collect::<Vec<_>>(),
            "limit": study.limit_pair.as_ref().map(|(_, p)| provenance(p)),
            "tv_exp_bits": crate::limits::tv::EXP_BITS,
        })
    });
    Parts {
        schema: Schema::V2,
        command: "limit",
        mechanism: Subject::Sequence { given, text },
        settings,
        claims: None,
        report,
        method,
        proofs_notes: notes,
    }
}

/// The parts of a `berry-esseen` certificate (its parameters are in the report).
pub fn berry_esseen_parts(
    backend: Backend,
    escalate_above: Option<f64>,
    rows: &[crate::limits::berry_esseen::BerryEsseenRow],
    report: Value,
) -> Parts<'static> {
    let settings = settings(
        backend,
        Default::default(),
        &PairOptions::default(),
        escalate_above,
    );
    let mut notes = vec![
        "README.md",
        "arithmetic.md",
        "privacy-curves.md",
        "limit-experiments.md",
        "limit-study.md",
    ];
    if backend == Backend::Interval && rows.iter().any(|r| r.arithmetic.contains("mpfr")) {
        notes.push("precision-escalation.md");
    }
    Parts {
        schema: Schema::V2,
        command: "berry-esseen",
        mechanism: Subject::None,
        settings,
        claims: None,
        report,
        method: json!({
            "route": "per lambda: c = lambda^(-1/2) bracketed in MPFR; the lattice pair (Poisson or Skellam shift) on certified windows of its lattice; the Gaussian shift's delta in closed form (MPFR erfc) at both ends of c's bracket (delta increases in mu); each gap as the distance of the enclosures, the larger of the two directions",
            "truncation_bits": truncation_bits(backend, true),
        }),
        proofs_notes: notes,
    }
}

/// The parts of a `check` certificate: at the base n (and at every other n of a sweep) the
/// rational bracket of each point's ε, δ in both directions at both ends, and the divergences
/// (`proofs-notes/check-points.md`).
pub fn check_parts<'a>(
    query: &'a crate::check::CheckQuery,
    report: &crate::check::CheckReport,
    report_json: Value,
) -> Parts<'a> {
    let pair = &query.pair;
    let settings = pair.settings();
    let at = &report.base;
    let mut notes = base_notes(
        at.engine,
        &at.arithmetic,
        &settings.options,
        settings.backend,
    );
    notes.extend([
        "check-points.md",
        "divergences.md",
        "asymptotic-and-checker.md",
    ]);
    let mut method = check_evidence_json(query, at);
    method["route"] = json!(
        "the pair (T_{n,k}, T_{n,k+1}) by the pair engine (Part I Lemma 4.2); at each point, delta at both ends of a rational bracket of its eps (delta is non-increasing in eps); the divergences of the same pair"
    );
    if !query.sweep.is_empty() {
        method["sweep_route"] = json!(
            "at every other n of the sweep, the same (k scaled to keep k/n); the order fits are uncertified doubles made from the certified values"
        );
        let mut seen = vec![at.n];
        let sweep: Vec<Value> = report
            .sweep
            .iter()
            .filter(|s| {
                let new = !seen.contains(&s.n);
                seen.push(s.n);
                new
            })
            .map(|s| {
                let mut v = check_evidence_json(query, s);
                if let (Value::Object(v), Value::Object(at)) = (
                    &mut v,
                    with_exact_endpoints(|| super::output::check_at_json(s)),
                ) {
                    v.extend(at);
                }
                v
            })
            .collect();
        method["n_sweep"] = json!(query.sweep);
        method["sweep"] = json!(sweep);
    }
    Parts {
        schema: Schema::V2,
        command: "check",
        mechanism: pair.subject(),
        settings,
        claims: None,
        report: report_json,
        method,
        proofs_notes: notes,
    }
}

/// The certified values behind a check's comparisons at one n (exact endpoints).
fn check_evidence_json(query: &crate::check::CheckQuery, at: &crate::check::CheckAt) -> Value {
    let e = &at.evidence;
    with_exact_endpoints(|| {
        json!({
            "arithmetic": at.arithmetic,
            "points": query.points.iter().zip(&e.brackets).map(|(p, (lo, hi))| {
                let (given, value) = match p {
                    crate::check::CurvePoint::T(t) => ("t", t),
                    crate::check::CurvePoint::Eps(x) => ("eps", x),
                };
                json!({
                    "given": given,
                    "value": crate::enclosure::exact_string(value),
                    "eps_bracket": [crate::enclosure::exact_string(lo), crate::enclosure::exact_string(hi)],
                })
            }).collect::<Vec<_>>(),
            "delta_rows": e.brackets.iter().zip(&e.at_ends).flat_map(|((lo, hi), ends)| {
                [lo, hi].into_iter().zip(ends).map(|(eps, [qp, pq])| json!({
                    "eps": crate::enclosure::exact_string(eps),
                    "delta_qp": qp.to_json(),
                    "delta_pq": pq.to_json(),
                })).collect::<Vec<_>>()
            }).collect::<Vec<_>>(),
            "divergences": e.divergences.iter().map(|(name, v)| (name.to_string(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        })
    })
}

/// The parts of the certificate of a profile over every dataset (a randomizer on more than two
/// inputs, proofs-notes/inputs-profile.md): the report, and its proof as `verify` re-derives
/// it (`certificate::inputs_proof`).
pub fn inputs_profile_parts<'a>(
    query: &'a crate::profile_inputs::InputsProfileQuery,
    profile: &crate::profile_inputs::InputsProfile,
) -> Parts<'a> {
    let r = &query.randomizer;
    let mut method =
        with_exact_endpoints(|| crate::certificate::inputs_proof::to_json(query, profile));
    method["route"] = json!(
        "certified branch and bound over boxes of the others' compositions, per switch up to the rows' symmetries: every box closed by its lower corner's bound (data processing) sharpened by the common floor of its free inputs (the blanket's binomial mixture), or split; every composition left evaluated by the background pair engine"
    );
    method["arithmetic"] = json!(profile.arithmetic);
    method["truncation_bits"] = json!(truncation_bits(query.backend, query.options.truncate));
    let mut notes = base_notes("window", &profile.arithmetic, &query.options, query.backend);
    notes.extend(["background-pairs.md", "inputs-profile.md"]);
    if query
        .quantities
        .iter()
        .any(|x| matches!(x, Quantity::Epsilon(_)))
    {
        notes.push("epsilon-for-delta.md");
    }
    Parts {
        schema: Schema::V2,
        command: "profile",
        mechanism: Subject::Randomizer(r),
        settings: settings(
            query.backend,
            query.exact_ctx,
            &query.options,
            query.escalate_above,
        ),
        claims: None,
        report: with_exact_endpoints(|| super::output::inputs_profile_json(query, profile)),
        method,
        proofs_notes: notes,
    }
}

/// The parts of `compare-messages`'s certificate: per model, its pair's report and method (and
/// its profile's, with `--profile`), as the pair and profile certificates hold them.
pub fn compare_messages_parts<'a>(
    query: &'a crate::multimessage::compare::MessagesQuery,
    answers: &[crate::multimessage::compare::ModelAnswer],
    report: Value,
) -> Parts<'a> {
    let mut notes = vec!["multi-message.md"];
    let models: Vec<Value> = answers
        .iter()
        .map(|a| {
            notes.extend(base_notes(
                a.computed.engine,
                &a.computed.arithmetic,
                &query.options,
                query.backend,
            ));
            if a.computed.canonical_states_checked.is_some() {
                notes.push("canonical-cross-check.md");
            }
            let profile = a.profile.as_ref().map(|(q, p)| {
                notes.extend(profile_notes(q, p));
                profile_method(q, p)
            });
            json!({
                "model": a.model.key(),
                "pair": with_exact_endpoints(|| pair_method(&a.pair, &a.computed)),
                "profile": profile,
            })
        })
        .collect();
    Parts {
        schema: Schema::V2,
        command: "compare-messages",
        mechanism: (&query.mechanism).into(),
        settings: settings(
            query.backend,
            query.exact_ctx,
            &query.options,
            query.escalate_above,
        ),
        claims: None,
        report,
        method: json!({
            "route": "per model (one message with n and with nm users, m messages unbundled and bundled): its pair by the pair engine and, with --profile, its profile scan; the ratios from the certified ends; unbundled <= bundled checked on the enclosures",
            "models": models,
        }),
        proofs_notes: notes,
    }
}
