//! `audit` output.

use super::table;
use crate::audit::claims::{Claim, ClaimKind};
use crate::audit::range::{DecidedBy, RangeAuditQuery, RangeReport};
use crate::audit::verdict::Verdict;
use crate::audit::{Audit, AuditQuery, ClaimReport, Tightness, straddle_json};
use crate::enclosure::{Enclosure, exact_string, number_text, rounded_up};
use crate::profile::KValue;
use rug::Rational;
use serde_json::{Value, json};

/// Digits of the table's enclosures (rounded outward, so still certified).
const SHORT: u32 = 5;

fn claim_text(c: &Claim) -> String {
    let delta = c.delta.as_ref().map(number_text).unwrap_or_default();
    match &c.kind {
        ClaimKind::Upper => format!("({}, {delta})-DP", number_text(&c.eps)),
        ClaimKind::Lower => format!("not ({}, <{delta})-DP", number_text(&c.eps)),
        ClaimKind::Rdp { alpha } => {
            format!("D_{} ≤ {}", exact_string(alpha), exact_string(&c.eps))
        }
    }
}

fn scope_text(c: &Claim) -> String {
    match c.k {
        Some(k) => format!("pair k={k}"),
        None => "all k".into(),
    }
}

fn value_label(c: &Claim) -> String {
    let of = if c.k.is_some() { "δ" } else { "δ_M" };
    match &c.kind {
        ClaimKind::Rdp { alpha } => format!("max D_{}", exact_string(alpha)),
        _ => format!("{of}({})", exact_string(&c.eps)),
    }
}

fn witness_text(w: &KValue, c: &Claim) -> String {
    let name = match (&c.kind, w.direction.key()) {
        (ClaimKind::Rdp { alpha }, "qp") => format!("D_{}(Q‖P)", exact_string(alpha)),
        (ClaimKind::Rdp { alpha }, _) => format!("D_{}(P‖Q)", exact_string(alpha)),
        (_, "qp") => format!("δ_{{Q‖P}}({})", exact_string(&c.eps)),
        _ => format!("δ_{{P‖Q}}({})", exact_string(&c.eps)),
    };
    format!("k = {} ({}): {name} ∈ {}", w.k, w.direction.key(), w.value)
}

/// A distance, rounded up to three digits (`∞` when unbounded).
fn distance(q: &Option<Rational>) -> String {
    q.as_ref().map_or("∞".into(), |q| rounded_up(q, 3))
}

/// The sentences of evidence below the table, for claims that are not plainly sound.
fn details(r: &ClaimReport, out: &mut String) {
    let c = &r.claim;
    let line = c.line;
    match r.verdict {
        Verdict::Unsound => {
            *out += &format!("line {line}: UNSOUND — {}", claim_text(c));
            match &c.kind {
                ClaimKind::Lower => {
                    *out += &format!(
                        ": the certified {} ∈ {} lies below the claimed {}",
                        value_label(c),
                        r.value,
                        number_text(c.delta.as_ref().expect("δ"))
                    );
                }
                _ => {
                    if let Some(w) = &r.witness {
                        *out += &format!("\n  witness: {}", witness_text(w, c));
                    }
                }
            }
            if let Some(e) = &r.eps_at_delta {
                *out += &format!(
                    "\n  certified ε at δ = {}: {}",
                    number_text(c.delta.as_ref().expect("δ")),
                    e
                );
            }
            if let Some(b) = &r.boundary {
                let worst = b
                    .pairs
                    .iter()
                    .map(|v| v.value.clone())
                    .reduce(|a, b| a.max(&b))
                    .expect("boundary pairs");
                let ks: Vec<String> = {
                    let mut ks: Vec<u64> = b.pairs.iter().map(|v| v.k).collect();
                    ks.dedup();
                    ks.iter().map(u64::to_string).collect()
                };
                *out += &format!(
                    "\n  boundary pairs k = {} alone: max δ({}) ∈ {}",
                    ks.join(" and k = "),
                    exact_string(&c.eps),
                    worst.compact(SHORT)
                );
                *out += match b.verdict {
                    Verdict::Sound => {
                        ", which does NOT refute the claim: only a non-boundary composition does \
                         (taking the boundary k = 0 as the worst case is exactly this mistake)"
                    }
                    Verdict::Unsound => ", which refutes the claim already",
                    Verdict::Undecided => ", which alone leaves the claim undecided",
                };
            }
            *out += "\n";
        }
        Verdict::Undecided => {
            let (below, above) = r.straddle.clone().unwrap_or((None, None));
            let claimed = match &c.kind {
                ClaimKind::Rdp { .. } => c.eps.clone(),
                _ => c.delta.clone().expect("δ"),
            };
            *out += &format!(
                "line {line}: undecided — the certified {} ∈ {} straddles the claimed {}: \
                 it reaches {} below and {} above it (relative width {:.1e}); {}\n",
                value_label(c),
                r.value,
                exact_string(&claimed),
                distance(&below),
                distance(&above),
                r.value.relative_width(),
                r.arithmetic
            );
        }
        Verdict::Sound => {}
    }
}

pub fn audit_text(query: &AuditQuery, path: &str, audit: &Audit) -> String {
    let mut s = format!(
        "shufflecert audit: {} · {} from {path}\n{}\n",
        query.mechanism.name,
        crate::enclosure::count_of(audit.reports.len(), "claim", "claims"),
        query.mechanism.domain_text()
    );
    s += &format!(
        "verdicts: {} sound, {} unsound, {} undecided · every [lo, hi] is a certified enclosure \
         (rounded outward)\n",
        audit.count(Verdict::Sound),
        audit.count(Verdict::Unsound),
        audit.count(Verdict::Undecided)
    );
    s += "\n";
    let rows: Vec<Vec<String>> = audit
        .reports
        .iter()
        .map(|r| {
            let c = &r.claim;
            vec![
                c.line.to_string(),
                c.n.to_string(),
                claim_text(c),
                scope_text(c),
                match r.verdict {
                    Verdict::Unsound => "UNSOUND".into(),
                    v => v.name().into(),
                },
                r.value.compact(SHORT),
                r.eps_at_delta
                    .as_ref()
                    .map_or("—".into(), |e| e.compact(SHORT)),
            ]
        })
        .collect();
    s += &table(
        &[
            "line",
            "n",
            "claim",
            "scope",
            "verdict",
            "certified δ at ε",
            "certified ε at δ",
        ],
        &rows,
    );
    // How tight each decided claim is, and where it came from.
    let rows: Vec<Vec<String>> = audit
        .reports
        .iter()
        .filter(|r| r.tightness.is_some() || r.claim.source.is_some())
        .map(|r| {
            let (eps_ratio, delta_ratio) = match &r.tightness {
                Some(t) => (
                    t.eps_ratio
                        .as_ref()
                        .map_or("—".into(), |e| e.compact(SHORT)),
                    t.delta_ratio
                        .as_ref()
                        .map_or("—".into(), |e| e.compact(SHORT)),
                ),
                None => ("—".into(), "—".into()),
            };
            vec![
                r.claim.line.to_string(),
                eps_ratio,
                delta_ratio,
                r.claim.source.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        s += "\ntightness: claimed ε ÷ certified ε at the claimed δ, and claimed δ ÷ certified δ at the \
              claimed ε (> 1: conservative, < 1: under-reports)\n";
        s += &table(&["line", "ε ÷ ε_cert", "δ ÷ δ_cert", "source"], &rows);
    }
    let mut evidence = String::new();
    for r in &audit.reports {
        details(r, &mut evidence);
    }
    if !evidence.is_empty() {
        s += "\n";
        s += &evidence;
    }
    s
}

pub fn audit_json(query: &AuditQuery, path: &str, audit: &Audit) -> Value {
    let claims: Vec<Value> = audit
        .reports
        .iter()
        .map(|r| {
            let c = &r.claim;
            let mut v = c.to_json();
            v["scope"] = json!(if c.k.is_some() { "pair" } else { "mechanism" });
            v["verdict"] = json!(r.verdict.name());
            v["witness"] = r.witness.as_ref().map_or(Value::Null, KValue::to_json);
            v["arithmetic"] = json!(r.arithmetic);
            let key = match &c.kind {
                ClaimKind::Rdp { .. } => "certified_renyi",
                _ => "certified_delta",
            };
            v[key] = r.value.to_json();
            v["certified_eps"] = r
                .eps_at_delta
                .as_ref()
                .map_or(Value::Null, Enclosure::to_json);
            v["tightness"] = r.tightness.as_ref().map_or(Value::Null, Tightness::to_json);
            v["boundary"] = r.boundary.as_ref().map_or(Value::Null, |b| {
                json!({
                    "pairs": b.pairs.iter().map(KValue::to_json).collect::<Vec<_>>(),
                    "refutes": b.verdict == Verdict::Unsound,
                    "verdict_on_boundary_alone": b.verdict.name(),
                })
            });
            // How far the enclosure reaches past the claim, rounded up (display).
            v["straddle"] = r.straddle.as_ref().map_or(Value::Null, straddle_json);
            v
        })
        .collect();
    json!({
        "command": "audit",
        "certified": true,
        "mechanism": query.mechanism.to_json(),
        "input_domain": query.mechanism.domain_json(),
        "claims_file": path,
        "backend": query.backend.label(),
        "summary": {
            "claims": audit.reports.len(),
            "sound": audit.count(Verdict::Sound),
            "unsound": audit.count(Verdict::Unsound),
            "undecided": audit.count(Verdict::Undecided),
        },
        "scans": audit.scans.iter().map(|s| json!({
            "n": s.n(),
            "k": s.k(),
            "claims": s.claims,
            "quantities": s.query.quantities.len(),
            "pairs_evaluated": s.profile.stats.pairs_evaluated,
            "k_pruned": s.profile.stats.k_pruned,
            "nodes_bounded": s.profile.stats.nodes_bounded,
            "pairs_refined": s.profile.stats.pairs_refined,
            "arithmetic": s.profile.arithmetic,
            "engine": s.profile.engine,
        })).collect::<Vec<_>>(),
        "claims": claims,
    })
}

/// `audit` against a randomizer's certified range (more than two inputs), as text.
pub fn range_audit_text(query: &RangeAuditQuery, reports: &[RangeReport]) -> String {
    let r = &query.randomizer;
    let count = |v: Verdict| reports.iter().filter(|x| x.verdict == v).count();
    let mut s = format!(
        "shufflecert audit: {} · {} from {}\n{}\n",
        r.name,
        crate::enclosure::count_of(reports.len(), "claim", "claims"),
        query.path,
        r.domain_text()
    );
    s += "judged against the certified range lower ≤ δ_M(ε) ≤ upper (as `bounds`): sound when\n  \
          the upper bound meets the claim, unsound when the lower bound contradicts it; a claim it\n  \
          leaves undecided is judged on the exact profile over every dataset where that is\n  \
          affordable (--narrow-seconds)\n";
    s += &format!(
        "verdicts: {} sound, {} unsound, {} undecided · every [lo, hi] is a certified enclosure \
         (rounded outward)\n",
        count(Verdict::Sound),
        count(Verdict::Unsound),
        count(Verdict::Undecided)
    );
    let narrowed = reports
        .iter()
        .filter(|x| x.decided_by == DecidedBy::ExactProfile)
        .count();
    if narrowed > 0 {
        s += &format!(
            "decided by the exact profile over every dataset: {}\n",
            crate::enclosure::count_of(narrowed, "claim", "claims")
        );
    }
    if !query.eps_ranges {
        s += "ε_M at the claimed δ: not computed (--eps-ranges adds its certified range)\n";
    }
    // The pairs attaining the ends, named once: "on every row" when one pair attains each end
    // everywhere, else numbered in a legend that the cells cite.
    type Attained = crate::bounds::range::Attained;
    type End = fn(&RangeReport) -> &Attained;
    let kinds: [(&str, End); 2] = [
        ("concrete", |x| &x.range.lower),
        ("blanket", |x| &x.range.upper),
    ];
    let mut legend: Vec<String> = Vec::new();
    for (kind, end) in kinds {
        for x in reports {
            let entry = format!("the {kind} pair {}", super::bounds::pair_label(r, end(x)));
            if !legend.contains(&entry) {
                legend.push(entry);
            }
        }
    }
    let uniform = legend.len() == 2;
    if uniform {
        s += &format!(
            "lower end on every row: {}\nupper end on every row: {}\n",
            legend[0], legend[1]
        );
    } else {
        s += "pairs attaining the ends:\n";
        for (i, entry) in legend.iter().enumerate() {
            s += &format!("  ({}) {entry}\n", i + 1);
        }
    }
    // Sources, like the pairs, are named once when every claim has the same; else numbered in
    // a legend and cited after each claim (a column of them would pass 100 columns).
    let mut sources: Vec<String> = Vec::new();
    for x in reports {
        if let Some(source) = &x.claim.source {
            if !sources.contains(source) {
                sources.push(source.clone());
            }
        }
    }
    let every_sourced = reports.iter().all(|x| x.claim.source.is_some());
    let numbered = !(sources.is_empty() || (sources.len() == 1 && every_sourced));
    if numbered {
        s += "sources:\n";
        for (i, source) in sources.iter().enumerate() {
            s += &format!("  [{}] {source}\n", i + 1);
        }
    } else if let [only] = &sources[..] {
        s += &format!("source of every claim: {only}\n");
    }
    s += "\n";
    let cell = |kind: &str, a: &Attained| {
        let value = super::bounds::short(&a.value);
        if uniform {
            return value;
        }
        let entry = format!("the {kind} pair {}", super::bounds::pair_label(r, a));
        let i = legend
            .iter()
            .position(|e| *e == entry)
            .expect("in the legend");
        format!("{value} ({})", i + 1)
    };
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|x| {
            let c = &x.claim;
            // A numbered source is cited after the claim: "(0.03, 1e-5)-DP [1]".
            let claim = match c.source.as_ref().filter(|_| numbered) {
                Some(source) => {
                    let i = sources.iter().position(|e| e == source).expect("listed");
                    format!("{} [{}]", claim_text(c), i + 1)
                }
                None => claim_text(c),
            };
            let mut row = vec![
                c.line.to_string(),
                c.n.to_string(),
                claim,
                match x.verdict {
                    Verdict::Unsound => "UNSOUND".into(),
                    v => v.name().into(),
                },
                cell("concrete", &x.range.lower),
                cell("blanket", &x.range.upper),
            ];
            if query.eps_ranges {
                // [lower.lo, upper.hi] rounded outward: an enclosure of ε_M(δ).
                row.push(x.eps_range.as_ref().map_or("—".into(), |e| {
                    super::bounds::short(&Enclosure::new(
                        e.lower.value.lo().clone(),
                        e.upper.value.hi().clone(),
                    ))
                }));
            }
            row
        })
        .collect();
    let mut header = vec![
        "line",
        "n",
        "claim",
        "verdict",
        "lower δ_M(ε)",
        "upper δ_M(ε)",
    ];
    if query.eps_ranges {
        header.push("ε_M(δ) in");
    }
    s += &table(&header, &rows);
    let mut evidence = String::new();
    for x in reports {
        let c = &x.claim;
        let Some(delta) = &c.delta else { continue };
        let lower = &x.range.lower;
        let pair = |a: &crate::bounds::range::Attained| {
            let background = a.background.map_or(String::new(), |b| {
                format!(", {} × {}", c.n - 1, r.inputs[b])
            });
            (
                format!("({}{background})", r.inputs[a.pair.0]),
                format!("({}{background})", r.inputs[a.pair.1]),
            )
        };
        if x.decided_by == DecidedBy::ExactProfile {
            let profile = x.profile.as_ref().expect("decided by it");
            let at = x.profile_attained.as_ref().map_or(String::new(), |d| {
                format!(
                    ", attained at {} → {} with others {}",
                    r.inputs[d.x1],
                    r.inputs[d.x1_prime],
                    others_text(r, &d.background)
                )
            });
            evidence += &format!(
                "line {}: {} — the exact worst case over every dataset has δ_M({}) ∈ {}{at}\n",
                c.line,
                match x.verdict {
                    Verdict::Unsound => "UNSOUND",
                    v => v.name(),
                },
                exact_string(&c.eps),
                profile.compact(SHORT)
            );
            continue;
        }
        match (x.verdict, &c.kind) {
            (Verdict::Unsound, ClaimKind::Upper) => {
                let (first, second) = pair(lower);
                evidence += &format!(
                    "line {}: UNSOUND — the neighbouring datasets {first} and {second} have δ ∈ {} > {} at ε = {}\n",
                    c.line,
                    lower.value,
                    number_text(delta),
                    exact_string(&c.eps)
                );
            }
            (Verdict::Unsound, _) => {
                evidence += &format!(
                    "line {}: UNSOUND — the blanket bound gives δ_M({}) ≤ {} < {}\n",
                    c.line,
                    exact_string(&c.eps),
                    x.range.upper.value,
                    number_text(delta)
                );
            }
            (Verdict::Undecided, _) => {
                evidence += &format!(
                    "line {}: undecided — the claimed {} lies inside the certified range [{}, {}]{}\n",
                    c.line,
                    number_text(delta),
                    x.range.lower.value.compact(SHORT),
                    x.range.upper.value.compact(SHORT),
                    match &x.decided_by {
                        DecidedBy::Neither(why) => format!("; {why}"),
                        _ => String::new(),
                    }
                );
            }
            _ => {}
        }
    }
    if !evidence.is_empty() {
        s += "\n";
        s += &evidence;
    }
    s
}

/// `audit` against a randomizer's certified range, as JSON.
pub fn range_audit_json(query: &RangeAuditQuery, reports: &[RangeReport]) -> Value {
    let r = &query.randomizer;
    let row = |x: &crate::bounds::range::RangeRow| {
        json!({
            "lower": super::bounds::attained_json(r, &x.lower),
            "upper": super::bounds::attained_json(r, &x.upper),
        })
    };
    let claims: Vec<Value> = reports
        .iter()
        .map(|x| {
            let mut v = x.claim.to_json();
            v["scope"] = json!("mechanism");
            v["verdict"] = json!(x.verdict.name());
            v["certified_delta"] = x.enclosure().to_json();
            v["decided_by"] = json!(x.decided_by.name());
            if let DecidedBy::Neither(why) = &x.decided_by {
                v["undecided_because"] = json!(why);
            }
            if let Some(p) = &x.profile {
                v["delta_profile"] = p.to_json();
            }
            v["delta_range"] = row(&x.range);
            v["eps_range"] = x.eps_range.as_ref().map_or(Value::Null, row);
            v
        })
        .collect();
    let count = |v: Verdict| reports.iter().filter(|x| x.verdict == v).count();
    json!({
        "command": "audit",
        "certified": true,
        "randomizer": r.to_json(),
        "input_domain": r.domain_json(),
        "claims_file": query.path,
        "judged_against": crate::audit::range::JUDGED_AGAINST,
        "eps_ranges": query.eps_ranges,
        "backend": query.backend.label(),
        "summary": {
            "claims": reports.len(),
            "sound": count(Verdict::Sound),
            "unsound": count(Verdict::Unsound),
            "undecided": count(Verdict::Undecided),
        },
        "claims": claims,
    })
}

/// The others' counts as `input=count,…` (or "none").
fn others_text(r: &crate::mechanism::randomizer::Randomizer, counts: &[u64]) -> String {
    match r.counts_text(counts) {
        t if t.is_empty() => "none".into(),
        t => t,
    }
}
