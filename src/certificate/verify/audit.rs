//! An audit certificate: its claims read again from the file text it holds, every scan's proof
//! re-derived (`profile`), and every verdict, ε, tightness, straddle, witness and boundary pair
//! judged again from the verified rows (`proofs-notes/audit-verdicts.md`).

use super::profile::{ProfileProof, VerifiedRows, verify_profile};
use super::{Tally, enclosure_at, higher_precision, pair_query, u64_at};
use crate::audit::claims::{Claim, ClaimKind, parse_claims};
use crate::audit::verdict::{Side, Verdict, judge, straddle};
use crate::audit::{
    REFINEMENT_BITS, claim_quantities, claim_side, position, straddle_json, tightness,
};
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::exact::curve::Direction;
use crate::mechanism::Mechanism;
use crate::profile::{Quantity, pair_values};
use crate::query::Backend;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A verified scan: its rows, its method (whose records witnesses must come from) and the
/// precision it was recomputed in.
struct Scan<'a> {
    verified: VerifiedRows,
    method: &'a Value,
    /// The arithmetic its report names (a claim's arithmetic starts with it).
    arithmetic: &'a str,
    precision: u32,
}

/// The report's summary of scan `s` must be what its proof and the claims say.
fn expect_scan_summary(
    report: &Value,
    s: usize,
    (n, k): (u64, Option<u64>),
    claims: &[Claim],
    verified: &VerifiedRows,
    scan: &Value,
    tally: &mut Tally,
) {
    let stats = &scan["report"]["stats"];
    let expected = json!({
        "n": n,
        "k": k,
        "claims": claims.iter().filter(|c| c.n == n && c.k == k).count(),
        "quantities": verified.quantities.len(),
        "pairs_evaluated": stats["pairs_evaluated"],
        "k_pruned": stats["k_pruned"],
        "nodes_bounded": stats["nodes_bounded"],
        "pairs_refined": stats["pairs_refined"],
        "arithmetic": scan["report"]["arithmetic"],
        "engine": scan["report"]["engine"],
    });
    if report["scans"][s] != expected {
        tally.problem(format!(
            "report.scans.{s}: records {}, but its proof gives {expected}",
            report["scans"][s]
        ));
    }
}

/// The pair values verify recomputes for evidence, each once: by (n, k, quantity, precision).
type Recomputed = BTreeMap<(u64, u64, String, u32), (Enclosure, Enclosure)>;

pub fn verify_audit(
    cert: &Value,
    m: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let Some(claims) = read_back_claims(cert, tally) else {
        return Ok(());
    };
    let report = &cert["report"];
    // Randomized response given by a real ε0: every scan is also held against the same profile
    // on rational rows at the two ends of a bracket of e^ε0 (data processing).
    let bracket = crate::certificate::recorded_bracket(
        cert,
        crate::certificate::family_meaning(cert),
        higher_precision(settings),
    )?;
    // Every scan's proof.
    let mut scans: BTreeMap<(u64, Option<u64>), Scan<'_>> = BTreeMap::new();
    for (s, scan) in cert["method"]["scans"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let prefix = format!("method.scans.{s}.");
        let n = u64_at(&scan["n"], "method.scans.n")?;
        let k = scan["k"].as_u64();
        if scan["report"]["mechanism"] != cert["mechanism"]["exact"] {
            tally.problem(format!(
                "{prefix}report.mechanism: differs from mechanism.exact"
            ));
        }
        // Refined values were computed in MPFR at up to `refined_bits` (truncation
        // 2^-(bits+40) or none): recompute 64 bits finer, so the recomputation is the tighter.
        let refined = match &scan["refined_bits"] {
            Value::Null => 0,
            b => match b.as_u64().and_then(|b| u32::try_from(b).ok()) {
                Some(bits) if REFINEMENT_BITS.contains(&bits) => bits + 64,
                _ => {
                    tally.problem(format!(
                        "{prefix}refined_bits: {b} is not a refinement stage of audit ({REFINEMENT_BITS:?})"
                    ));
                    continue;
                }
            },
        };
        // Every pair and node is recomputed at the certificate's higher precision first; only
        // what that does not settle (the refined values among them) at the finer one.
        let precision = higher_precision(settings).max(refined);
        let proof = ProfileProof {
            prefix,
            report: &scan["report"],
            method: &scan["method"],
            precision: higher_precision(settings),
            finer: precision,
            bracket: bracket.clone(),
        };
        let verified = verify_profile(&proof, m, settings, tally)?;
        // The proof must cover what the scan answers: every k of n, or the one pair k.
        let wanted = match k {
            None => (0, n.saturating_sub(1)),
            Some(k) => (k, k),
        };
        if verified.n != n || verified.k_range != wanted {
            tally.problem(format!(
                "method.scans.{s}: answers n = {n}, k = {k:?}, but its proof covers n = {}, k in {:?}",
                verified.n, verified.k_range
            ));
            continue;
        }
        expect_scan_summary(report, s, (n, k), &claims, &verified, scan, tally);
        if scans
            .insert(
                (n, k),
                Scan {
                    verified,
                    method: &scan["method"],
                    arithmetic: scan["report"]["arithmetic"].as_str().unwrap_or_default(),
                    precision,
                },
            )
            .is_some()
        {
            tally.problem(format!(
                "method.scans.{s}: a second scan of n = {n}, k = {k:?}"
            ));
        }
    }
    let scans_listed = report["scans"].as_array().map_or(0, Vec::len);
    if scans_listed != scans.len() {
        tally.problem(format!(
            "report.scans: lists {scans_listed} scans, but the method proves {}",
            scans.len()
        ));
    }
    for (key, expected) in [
        ("backend", json!(settings.backend.label())),
        ("claims_file", cert["claims"]["given"].clone()),
    ] {
        if report[key] != expected {
            tally.problem(format!(
                "report.{key}: records {}, but the certificate says {expected}",
                report[key]
            ));
        }
    }
    let mut cache = Recomputed::new();
    let mut counts = [0usize; 3];
    for (i, (claim, r)) in claims
        .iter()
        .zip(report["claims"].as_array().into_iter().flatten())
        .enumerate()
    {
        let field = format!("report.claims.{i}");
        let Some(scan) = scans.get(&(claim.n, claim.k)) else {
            tally.problem(format!(
                "{field}: no scan of n = {}, k = {:?} answers it",
                claim.n, claim.k
            ));
            continue;
        };
        // Certificates hold exact endpoints: derive the values the same way.
        let Some(verdict) = with_exact_endpoints(|| judge_claim(claim, r, &field, scan, tally))
        else {
            continue;
        };
        counts[match verdict {
            Verdict::Sound => 0,
            Verdict::Unsound => 1,
            Verdict::Undecided => 2,
        }] += 1;
        let evidence = Evidence {
            m,
            settings,
            claim,
            precision: scan.precision,
            scan: &scan.verified,
        };
        if !r["witness"].is_null() {
            let w = &r["witness"];
            check_record(claim, w, scan, &format!("{field}.witness"), tally)?;
            evidence.pair(w, &format!("{field}.witness"), &mut cache, tally)?;
        }
        check_boundary(&evidence, verdict, r, &field, &mut cache, tally)?;
    }
    check_summary(report, claims.len(), counts, tally);
    Ok(())
}

/// The report's summary must count the verdicts re-derived: `[sound, unsound, undecided]` of
/// `claims` claims.
pub(super) fn check_summary(report: &Value, claims: usize, counts: [usize; 3], tally: &mut Tally) {
    let summary = json!({
        "claims": claims,
        "sound": counts[0],
        "unsound": counts[1],
        "undecided": counts[2],
    });
    if report["summary"] != summary {
        tally.problem(format!(
            "report.summary: records {}, but the claims' verdicts give {summary}",
            report["summary"]
        ));
    }
}

/// The claims read back from the certificate's copy of the file, which must match both the
/// parsed claims it records and the claims its report judges.
pub(super) fn read_back_claims(cert: &Value, tally: &mut Tally) -> Option<Vec<Claim>> {
    let given = cert["claims"]["given"].as_str().unwrap_or_default();
    let text = cert["claims"]["text"].as_str().unwrap_or_default();
    let claims = match parse_claims(given, text) {
        Ok(c) => c,
        Err(e) => {
            tally.problem(format!("claims.text: cannot be read back: {e}"));
            return None;
        }
    };
    let parsed: Vec<Value> = claims.iter().map(Claim::to_json).collect();
    if Value::Array(parsed.clone()) != cert["claims"]["parsed"] {
        tally.problem("claims.parsed: differs from the claims read back from claims.text");
    }
    let reported = cert["report"]["claims"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if reported.len() != parsed.len() {
        tally.problem(format!(
            "report.claims: {} claims judged, but the file holds {}",
            reported.len(),
            parsed.len()
        ));
        return None;
    }
    for (i, (p, r)) in parsed.iter().zip(&reported).enumerate() {
        for (key, value) in p.as_object().expect("a claim is an object") {
            if &r[key] != value {
                tally.problem(format!(
                    "report.claims.{i}.{key}: {} differs from the file's {value}",
                    r[key]
                ));
            }
        }
    }
    Some(claims)
}

/// The row of quantity `q` in a verified scan (a problem when it has none).
fn row<'a>(
    scan: &'a Scan<'_>,
    q: &Quantity,
    field: &str,
    tally: &mut Tally,
) -> Option<&'a Enclosure> {
    let row = position(&scan.verified.quantities, q).map(|i| &scan.verified.rows[i].1);
    if row.is_none() {
        tally.problem(format!("{field}: its scan has no row for {}", q.describe()));
    }
    row
}

/// A claim's verdict, value, ε, tightness and straddle judged again from its scan's rows
/// (`None` when the scan lacks them).
fn judge_claim(
    claim: &Claim,
    r: &Value,
    field: &str,
    scan: &Scan<'_>,
    tally: &mut Tally,
) -> Option<Verdict> {
    let value_key = match claim.kind {
        ClaimKind::Rdp { .. } => "certified_renyi",
        _ => "certified_delta",
    };
    let mut known: Vec<String> = claim
        .to_json()
        .as_object()
        .expect("a claim is an object")
        .keys()
        .cloned()
        .collect();
    known.extend(
        [
            "scope",
            "verdict",
            "witness",
            "arithmetic",
            value_key,
            "certified_eps",
            "tightness",
            "boundary",
            "straddle",
        ]
        .map(String::from),
    );
    for key in r.as_object().into_iter().flat_map(|o| o.keys()) {
        if !known.contains(key) {
            tally.problem(format!("{field}.{key}: not a field of an audited claim"));
        }
    }
    let scope = if claim.k.is_some() {
        "pair"
    } else {
        "mechanism"
    };
    if r["scope"] != scope {
        tally.problem(format!(
            "{field}.scope: records {}, but the claim's is {scope}",
            r["scope"]
        ));
    }
    let scanned = scan.arithmetic;
    if !r["arithmetic"]
        .as_str()
        .is_some_and(|a| a.starts_with(scanned))
    {
        tally.problem(format!(
            "{field}.arithmetic: records {}, but its scan's is {scanned}",
            r["arithmetic"]
        ));
    }
    let (value_q, eps_q) = claim_quantities(claim);
    let value = row(scan, &value_q, field, tally)?;
    let eps = match &eps_q {
        Some(q) => Some(row(scan, q, field, tally)?),
        None => None,
    };
    let key = value_key;
    let mut expect = |key: &str, recorded: &Value, derived: Value| {
        if recorded != &derived {
            tally.problem(format!(
                "{field}.{key}: records {recorded}, but its scan's verified rows give {derived}"
            ));
        }
    };
    expect(key, &r[key], value.to_json());
    let (side, claimed) = claim_side(claim);
    let verdict = judge(value, side, &claimed);
    expect("verdict", &r["verdict"], json!(verdict.name()));
    expect(
        "certified_eps",
        &r["certified_eps"],
        eps.map_or(Value::Null, Enclosure::to_json),
    );
    expect(
        "tightness",
        &r["tightness"],
        tightness(claim, verdict, value, eps).map_or(Value::Null, |t| t.to_json()),
    );
    expect(
        "straddle",
        &r["straddle"],
        if verdict == Verdict::Undecided {
            straddle_json(&straddle(value, &claimed))
        } else {
            Value::Null
        },
    );
    let wants_witness = matches!(
        (&claim.kind, verdict),
        (ClaimKind::Upper | ClaimKind::Rdp { .. }, Verdict::Unsound)
            | (ClaimKind::Lower, Verdict::Sound)
    );
    if wants_witness == r["witness"].is_null() {
        tally.problem(format!(
            "{field}.witness: {} for a {} {} claim",
            if wants_witness { "missing" } else { "present" },
            verdict.name(),
            claim.kind.name()
        ));
    }
    Some(verdict)
}

/// A witness must be an evaluated pair of the scan, with the value the scan recorded, and
/// decide the claim on its own.
fn check_record(
    claim: &Claim,
    w: &Value,
    scan: &Scan<'_>,
    field: &str,
    tally: &mut Tally,
) -> Result<()> {
    let k = u64_at(&w["k"], field)?;
    let direction = w["direction"].as_str().unwrap_or_default();
    let value = enclosure_at(&w["value"], field)?;
    let (value_q, _) = claim_quantities(claim);
    let slot = position(&scan.verified.quantities, &value_q).expect("judged on this scan");
    let recorded = scan.method["records"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["k"].as_u64() == Some(k))
        .map(|r| &r[direction][slot]);
    match recorded {
        Some(v) if !v.is_null() && enclosure_at(v, field)? == value => {}
        _ => tally.problem(format!(
            "{field}: k = {k} ({direction}) with {value} is not a pair its scan evaluated"
        )),
    }
    let (side, claimed) = claim_side(claim);
    let decides = match side {
        Side::AtMost => judge(&value, side, &claimed) == Verdict::Unsound,
        Side::AtLeast => judge(&value, side, &claimed) == Verdict::Sound,
    };
    if !decides {
        tally.problem(format!("{field}: {value} does not decide the claim"));
    }
    Ok(())
}

/// What recomputing a claim's evidence needs.
struct Evidence<'a> {
    m: &'a Mechanism,
    settings: &'a Settings,
    claim: &'a Claim,
    precision: u32,
    /// The verified scan, whose recomputed pairs serve where they show the value.
    scan: &'a VerifiedRows,
}

impl Evidence<'_> {
    /// Registers the pair value `{k, direction, value}` at `field` and recomputes it.
    fn pair(
        &self,
        v: &Value,
        field: &str,
        cache: &mut Recomputed,
        tally: &mut Tally,
    ) -> Result<Enclosure> {
        let k = u64_at(&v["k"], field)?;
        let value = enclosure_at(&v["value"], field)?;
        let direction = match v["direction"].as_str() {
            Some("qp") => Direction::Qp,
            Some("pq") => Direction::Pq,
            other => {
                return Err(Error::argument(
                    field,
                    format!("unknown direction {other:?}"),
                ));
            }
        };
        let (q, _) = claim_quantities(self.claim);
        tally.certified(&format!("{field}.value"), value.clone(), true);
        // The scan's own recomputation of this pair, where it is fine enough to show the value.
        let reused = position(&self.scan.quantities, &q)
            .and_then(|i| self.scan.recomputed.get(&(k, i)))
            .map(|(both, bits)| (both[usize::from(direction == Direction::Pq)].clone(), *bits))
            .filter(|(r, _)| value.contains_enclosure(r));
        if let Some((r, bits)) = reused {
            let label = format!("evidence pairs: the scan's pairs recomputed in mpfr-{bits}");
            tally.route(label.clone());
            tally.recomputed(&format!("{field}.value"), &r, &label);
            return Ok(value);
        }
        let key = (self.claim.n, k, q.describe(), self.precision);
        if !cache.contains_key(&key) {
            let query = pair_query(
                self.m,
                self.claim.n,
                k,
                self.settings,
                Backend::Mpfr {
                    precision: self.precision,
                },
            );
            let fresh = pair_values(&query, std::slice::from_ref(&q), &[true])?.result;
            let take = |v: &[Option<Enclosure>]| v[0].clone().expect("evaluated");
            cache.insert(key.clone(), (take(&fresh.qp), take(&fresh.pq)));
        }
        let (qp, pq) = &cache[&key];
        let label = format!("evidence pairs recomputed in mpfr-{}", self.precision);
        tally.route(label.clone());
        tally.recomputed(
            &format!("{field}.value"),
            match direction {
                Direction::Qp => qp,
                Direction::Pq => pq,
            },
            &label,
        );
        Ok(value)
    }
}

/// An unsound mechanism-wide upper claim carries the boundary pairs k = 0 and k = n − 1, both
/// directions, recomputed here, and the claim judged on them alone; no other claim has them.
fn check_boundary(
    evidence: &Evidence<'_>,
    verdict: Verdict,
    r: &Value,
    field: &str,
    cache: &mut Recomputed,
    tally: &mut Tally,
) -> Result<()> {
    let claim = evidence.claim;
    let wanted = verdict == Verdict::Unsound && claim.kind == ClaimKind::Upper && claim.k.is_none();
    let b = &r["boundary"];
    if wanted == b.is_null() {
        tally.problem(format!(
            "{field}.boundary: {}",
            if wanted {
                "missing for an unsound mechanism-wide upper claim"
            } else {
                "present for a claim that has none"
            }
        ));
        return Ok(());
    }
    if !wanted {
        return Ok(());
    }
    let pairs = b["pairs"].as_array().cloned().unwrap_or_default();
    let mut ends = vec![0];
    if claim.n > 1 {
        ends.push(claim.n - 1);
    }
    let expected: Vec<(u64, &str)> = ends.iter().flat_map(|&k| [(k, "qp"), (k, "pq")]).collect();
    let listed: Vec<(u64, &str)> = pairs
        .iter()
        .map(|p| {
            (
                p["k"].as_u64().unwrap_or(u64::MAX),
                p["direction"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    if listed != expected {
        tally.problem(format!(
            "{field}.boundary.pairs: lists {listed:?}, expected {expected:?}"
        ));
        return Ok(());
    }
    let mut max: Option<Enclosure> = None;
    for (j, p) in pairs.iter().enumerate() {
        let value = evidence.pair(p, &format!("{field}.boundary.pairs.{j}"), cache, tally)?;
        max = Some(match max {
            Some(m) => m.max(&value),
            None => value,
        });
    }
    let (_, claimed) = claim_side(claim);
    let alone = judge(&max.expect("boundary pairs"), Side::AtMost, &claimed);
    let derived = json!({ "verdict": alone.name(), "refutes": alone == Verdict::Unsound });
    let recorded = json!({ "verdict": b["verdict_on_boundary_alone"], "refutes": b["refutes"] });
    if derived != recorded {
        tally.problem(format!(
            "{field}.boundary: records {recorded}, but its pairs give {derived}"
        ));
    }
    Ok(())
}
