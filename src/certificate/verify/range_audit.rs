//! A range audit's certificate (a randomizer with more than two inputs): its claims read again
//! from the file text it holds; every range it records re-derived as a `bounds` certificate's
//! is (`bounds::verify_range`: every pair's blanket sum and every triple's concrete pair in MPFR
//! at a higher precision, the upper end above every sum, the lower end its pair's value); each
//! claim's range found again by its n and ε (and δ); every verdict, certified δ and the summary
//! derived again from the verified ends; and the concrete pair that refutes an upper claim (or
//! proves a lower one) rebuilt by the pair engine on its background
//! (`proofs-notes/audit-verdicts.md`, `proofs-notes/certificates.md`).

use super::audit::read_back_claims;
use super::bounds::{RangeAt, verify_range};
use super::compare::{WITNESS_PAIR_ENGINE_MAX_N, witness_query};
use super::{Tally, enclosure_at, higher_precision};
use crate::audit::claim_side;
use crate::audit::claims::ClaimKind;
use crate::audit::range::{JUDGED_AGAINST, check_claims, wants_eps_range};
use crate::audit::verdict::{Verdict, judge};
use crate::bounds::range::Target;
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::query::{DeltaJob, Threshold, answer};
use rug::Rational;
use serde_json::{Value, json};

/// The keys of a claim in a range audit's report beyond the claim's own.
const CLAIM_KEYS: [&str; 8] = [
    "scope",
    "verdict",
    "certified_delta",
    "decided_by",
    "undecided_because",
    "delta_profile",
    "delta_range",
    "eps_range",
];

/// A verified range: where it is, and what it bounds.
struct Verified {
    /// `method.ranges.{j}`.
    field: String,
    n: u64,
    target: Target,
    used: bool,
}

impl Verified {
    /// The row of this range answering ε (δ ranges) or the one row (ε ranges), if it is one of
    /// `n`'s ranges of that quantity.
    fn row(&self, n: u64, wanted: &Wanted) -> Option<usize> {
        if self.n != n {
            return None;
        }
        match (&self.target, wanted) {
            (Target::Delta(thresholds), Wanted::DeltaAt(eps)) => thresholds
                .iter()
                .position(|t| matches!(t, Threshold::Eps(e) if e == *eps)),
            (Target::Epsilon(d), Wanted::EpsAt(delta)) if d == *delta => Some(0),
            _ => None,
        }
    }
}

/// Which range a claim is judged on.
enum Wanted<'a> {
    DeltaAt(&'a Rational),
    EpsAt(&'a Rational),
}

pub(super) fn verify_range_audit(
    cert: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let Some(claims) = read_back_claims(cert, tally) else {
        return Ok(());
    };
    let given = cert["claims"]["given"].as_str().unwrap_or_default();
    if let Err(e) = check_claims(r, &claims, given) {
        tally.problem(format!("claims.text: {e}"));
        return Ok(());
    }
    let report = &cert["report"];
    // Whether ranges of ε_M were asked for (`--eps-ranges`); certificates written before the
    // flag existed always hold them.
    let eps_ranges = match &report["eps_ranges"] {
        Value::Null => true,
        Value::Bool(b) => *b,
        other => {
            tally.problem(format!(
                "report.eps_ranges: records {other}, not true or false"
            ));
            return Ok(());
        }
    };
    // The route describes the ε searches the flag asked for, and only those.
    let route_says = cert["method"]["route"]
        .as_str()
        .is_some_and(|r| r.contains(crate::audit::range::EPS_RANGES_ROUTE));
    if report["eps_ranges"].is_boolean() && route_says != eps_ranges {
        tally.problem(format!(
            "method.route: {} ranges of eps_M, but report.eps_ranges is {eps_ranges}",
            if route_says { "describes" } else { "omits" }
        ));
    }
    for (key, expected) in [
        ("backend", json!(settings.backend.label())),
        ("claims_file", cert["claims"]["given"].clone()),
        ("judged_against", json!(JUDGED_AGAINST)),
    ] {
        if report[key] != expected {
            tally.problem(format!(
                "report.{key}: records {}, but the certificate says {expected}",
                report[key]
            ));
        }
    }
    // Every range, re-derived as `bounds` certificates are.
    let mut ranges: Vec<Verified> = Vec::new();
    for (j, v) in cert["method"]["ranges"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let field = format!("method.ranges.{j}");
        let prefix = format!("{field}.");
        let at = RangeAt::read(v, &prefix, v, &prefix, &format!("{prefix}results."))?;
        verify_range(&at, r, settings, tally)?;
        if let Some(other) = ranges.iter().find(|o| {
            o.n == at.n
                && match (&o.target, &at.target) {
                    (Target::Delta(_), Target::Delta(_)) => true,
                    (Target::Epsilon(a), Target::Epsilon(b)) => a == b,
                    _ => false,
                }
        }) {
            tally.problem(format!(
                "{field}: a second range of the same quantity at n = {} as {}",
                at.n, other.field
            ));
        }
        ranges.push(Verified {
            field,
            n: at.n,
            target: at.target,
            used: false,
        });
    }
    // Every exact profile that narrowed claims, re-derived from its proof; its δ rows by ε.
    let mut profiles: Vec<(u64, Vec<(Rational, Enclosure)>, bool)> = Vec::new();
    for (j, p) in cert["method"]["profiles"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let pre = format!("method.profiles.{j}.");
        // A slice's maximum is over part of the datasets only: no verdict may rest on it.
        if !p["method"]["slice"].is_null() || !p["report"]["slice"].is_null() {
            tally.problem(format!(
                "{pre}method.slice: a slice of the search, not the worst case over every dataset"
            ));
            continue;
        }
        if p["report"]["randomizer"] != cert["mechanism"]["exact"] || p["n"] != p["report"]["n"] {
            tally.problem(format!(
                "{pre}report: not a profile of this randomizer at its n"
            ));
            continue;
        }
        let rows = super::profile_inputs::verify_inputs_proof(
            &p["report"],
            &p["method"],
            &pre,
            r,
            settings,
            tally,
        )?;
        let rows = rows
            .into_iter()
            .filter_map(|(q, e)| match (q, e) {
                (crate::profile::Quantity::Delta(Threshold::Eps(eps)), Some(e)) => Some((eps, e)),
                _ => None,
            })
            .collect();
        profiles.push((p["n"].as_u64().unwrap_or_default(), rows, false));
    }
    let precision = higher_precision(settings);
    let mut witnesses: Vec<(u64, Rational, [usize; 3])> = Vec::new();
    let mut counts = [0usize; 3];
    for (i, (claim, rc)) in claims
        .iter()
        .zip(report["claims"].as_array().into_iter().flatten())
        .enumerate()
    {
        let field = format!("report.claims.{i}");
        let mut known: Vec<String> = claim
            .to_json()
            .as_object()
            .expect("a claim is an object")
            .keys()
            .cloned()
            .collect();
        known.extend(CLAIM_KEYS.map(String::from));
        for key in rc.as_object().into_iter().flat_map(|o| o.keys()) {
            if !known.contains(key) {
                tally.problem(format!("{field}.{key}: not a field of an audited claim"));
            }
        }
        if rc["scope"] != "mechanism" {
            tally.problem(format!(
                "{field}.scope: records {}, but a range audit judges mechanism-wide claims",
                rc["scope"]
            ));
        }
        // The range of δ_M at the claimed ε the claim was judged on, and its ends as verified.
        let Some((j, row)) = find(&mut ranges, claim.n, &Wanted::DeltaAt(&claim.eps)) else {
            tally.problem(format!(
                "{field}.delta_range: no range in method.ranges bounds δ_M at n = {}, ε = {}",
                claim.n,
                crate::enclosure::exact_string(&claim.eps)
            ));
            continue;
        };
        let row_field = format!("{}.results.{row}", ranges[j].field);
        let recorded = &cert["method"]["ranges"][j]["results"][row];
        same_range(
            &rc["delta_range"],
            recorded,
            &field,
            "delta_range",
            &row_field,
            tally,
        );
        let lower_field = format!("{row_field}.lower.value");
        let lower = enclosure_at(&recorded["lower"]["value"], &lower_field)?;
        let upper = enclosure_at(
            &recorded["upper"]["value"],
            &format!("{row_field}.upper.value"),
        )?;
        // The verdict, from the verified ends alone; where they leave it undecided, from the
        // verified exact profile at the claimed ε when the claim was judged on one.
        let mut enclosure = Enclosure::new(lower.lo().clone(), upper.hi().clone());
        let (side, claimed) = claim_side(claim);
        let mut verdict = judge(&enclosure, side, &claimed);
        let mut decided_by = "range";
        match (&rc["delta_profile"], verdict) {
            (Value::Null, Verdict::Undecided) => decided_by = "neither",
            (Value::Null, _) => {}
            (_, Verdict::Undecided) => {
                let found = profiles.iter_mut().find_map(|(n, rows, used)| {
                    let row = rows
                        .iter()
                        .find(|(e, _)| *n == claim.n && *e == claim.eps)?;
                    *used = true;
                    Some(row.1.clone())
                });
                match found {
                    Some(profile) => {
                        if rc["delta_profile"] != with_exact_endpoints(|| profile.to_json()) {
                            tally.problem(format!(
                                "{field}.delta_profile: not the verified exact profile's δ_M at n = {}, ε = {}",
                                claim.n,
                                crate::enclosure::exact_string(&claim.eps)
                            ));
                        }
                        verdict = judge(&profile, side, &claimed);
                        decided_by = match verdict {
                            Verdict::Undecided => "neither",
                            _ => "exact profile",
                        };
                        enclosure = profile;
                    }
                    None => tally.problem(format!(
                        "{field}.delta_profile: no profile in method.profiles answers n = {}, ε = {}",
                        claim.n,
                        crate::enclosure::exact_string(&claim.eps)
                    )),
                }
            }
            (_, _) => tally.problem(format!(
                "{field}.delta_profile: present, but the range decides the claim"
            )),
        }
        if rc["decided_by"] != decided_by {
            tally.problem(format!(
                "{field}.decided_by: records {}, but the verified values make it {decided_by}",
                rc["decided_by"]
            ));
        }
        counts[match verdict {
            Verdict::Sound => 0,
            Verdict::Unsound => 1,
            Verdict::Undecided => 2,
        }] += 1;
        let derived = with_exact_endpoints(|| enclosure.to_json());
        if rc["certified_delta"] != derived {
            tally.problem(format!(
                "{field}.certified_delta: records {}, but the ends of {row_field} give {derived}",
                rc["certified_delta"]
            ));
        }
        if rc["verdict"] != verdict.name() {
            tally.problem(format!(
                "{field}.verdict: records {}, but [lower.lo, upper.hi] = {enclosure} of {row_field} makes the claim {}",
                rc["verdict"],
                verdict.name()
            ));
        }
        // The range of ε_M at the claimed δ (upper claims with 0 < δ < 1, when asked for), and
        // none otherwise.
        match wants_eps_range(claim, eps_ranges) {
            Some(delta) => match find(&mut ranges, claim.n, &Wanted::EpsAt(delta)) {
                Some((j, row)) => {
                    let row_field = format!("{}.results.{row}", ranges[j].field);
                    let recorded = &cert["method"]["ranges"][j]["results"][row];
                    same_range(&rc["eps_range"], recorded, &field, "eps_range", &row_field, tally);
                }
                None => tally.problem(format!(
                    "{field}.eps_range: no range in method.ranges bounds ε_M at n = {}, δ = {}",
                    claim.n,
                    crate::enclosure::exact_string(delta)
                )),
            },
            None if !rc["eps_range"].is_null() => tally.problem(format!(
                "{field}.eps_range: present for a claim that has none (with --eps-ranges, an upper claim with 0 < δ < 1 has one)"
            )),
            None => {}
        }
        // The concrete pair deciding the claim from below (it refutes an upper claim, proves a
        // lower one), rebuilt by the pair engine on its background: a route sharing nothing
        // with the sum that found it.
        let decided_from_below = matches!(
            (&claim.kind, verdict),
            (ClaimKind::Upper, Verdict::Unsound) | (ClaimKind::Lower, Verdict::Sound)
        );
        if decided_from_below && (2..=WITNESS_PAIR_ENGINE_MAX_N).contains(&claim.n) {
            let lower_row = &recorded["lower"];
            let input = |key: &str| -> Result<usize> {
                let v = &lower_row[key];
                v.as_str()
                    .and_then(|l| r.inputs.iter().position(|x| x == l))
                    .ok_or_else(|| {
                        Error::argument(
                            format!("{row_field}.lower.{key}"),
                            format!("{v} is not an input of the randomizer"),
                        )
                    })
            };
            let (x1, x1p, x2) = (input("x1")?, input("x1_prime")?, input("background")?);
            if x1 == x1p {
                tally.problem(format!("{row_field}.lower: x1 = x1' is no pair"));
                continue;
            }
            let key = (claim.n, claim.eps.clone(), [x1, x1p, x2]);
            // Claims of one n and ε share their row: each pair is rebuilt and held once.
            if witnesses.contains(&key) {
                continue;
            }
            let query = witness_query(r, settings, claim.n, (x1, x1p, x2), precision);
            let job = DeltaJob {
                thresholds: vec![Threshold::Eps(claim.eps.clone())],
            };
            // Either order of the two datasets is a neighbouring pair: the larger δ of the two
            // is what the row's pair attains (the range keeps the larger direction).
            let fresh = answer(&query, &job)?.result.remove(0).two_sided;
            witnesses.push(key);
            let route = format!("the witness pair rebuilt by the pair engine in mpfr-{precision}");
            tally.route(route.clone());
            tally.recomputed(&lower_field, &fresh, &route);
        }
    }
    for range in &ranges {
        if !range.used {
            tally.problem(format!("{}: answers no claim", range.field));
        }
    }
    for (j, (_, _, used)) in profiles.iter().enumerate() {
        if !used {
            tally.problem(format!("method.profiles.{j}: decides no claim"));
        }
    }
    super::audit::check_summary(report, claims.len(), counts, tally);
    Ok(())
}

/// The range (its index) and row answering `wanted` at `n`, marked used.
fn find(ranges: &mut [Verified], n: u64, wanted: &Wanted<'_>) -> Option<(usize, usize)> {
    ranges.iter_mut().enumerate().find_map(|(j, range)| {
        let row = range.row(n, wanted)?;
        range.used = true;
        Some((j, row))
    })
}

/// A claim's copy of a range row (`{lower, upper}`) must be the verified row's.
fn same_range(
    copy: &Value,
    row: &Value,
    field: &str,
    key: &str,
    row_field: &str,
    tally: &mut Tally,
) {
    let expected = json!({ "lower": row["lower"], "upper": row["upper"] });
    if *copy != expected {
        tally.problem(format!(
            "{field}.{key}: records {copy}, but the verified {row_field} is {expected}"
        ));
    }
}
