//! Audit: "someone printed (ε, δ)" turned into a verdict with evidence.
//!
//! Claims (`claims`) are grouped by their n and, for claims restricted to one pair, their k.
//! Each group is answered by **one** profile scan over every quantity its claims need — δ_M at
//! each claimed ε, ε_M at each claimed δ (for tightness and witnesses), the Rényi profile at
//! each claimed order — so a whole privacy curve exported by another accountant costs one scan
//! per n, not one per row.  Each claim is then judged on the certified enclosure
//! (`verdict`).  A claim left undecided is refined: the pairs that could still decide it are
//! recomputed in MPFR at 256 and then 1024 bits without truncation, and judged again.  For an
//! unsound mechanism-wide upper claim the boundary pairs k = 0 and k = n − 1 are evaluated on
//! their own, to show whether the boundary alone would have refuted it.

pub mod claims;
pub mod compare;
pub mod range;
pub mod verdict;

use crate::arith::exact::ExactCtx;
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::curve::Direction;
use crate::exact::pair::PairOptions;
use crate::mechanism::Mechanism;
use crate::profile::{KValue, Profile, ProfileQuery, Quantity, profile, refine};
use crate::progress::Stage;
use crate::query::{Backend, PairQuery, Threshold};
use claims::{Claim, ClaimKind};
use rug::Rational;
use std::collections::BTreeMap;
use verdict::{Side, Verdict, judge, ratio, straddle};

/// An audit of a claims file against one mechanism.
#[derive(Clone, Debug)]
pub struct AuditQuery {
    pub mechanism: Mechanism,
    pub claims: Vec<Claim>,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
}

/// `claimed ε ÷ certified ε` and `claimed δ ÷ certified δ` for a decided upper claim: above 1
/// the claim is conservative by that factor, below 1 it under-reports.
#[derive(Clone, Debug)]
pub struct Tightness {
    /// `None` when the claimed δ is 0 or 1 (no finite ε target) or the ratio is `0/0`.
    pub eps_ratio: Option<Enclosure>,
    /// `None` when the ratio is `0/0`.
    pub delta_ratio: Option<Enclosure>,
}

impl Tightness {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "eps_ratio": self.eps_ratio.as_ref().map(Enclosure::to_json),
            "delta_ratio": self.delta_ratio.as_ref().map(Enclosure::to_json),
        })
    }
}

/// How far an undecided claim's enclosure reaches past it, each rounded up to six digits (for
/// display).
pub fn straddle_json((below, above): &(Option<Rational>, Option<Rational>)) -> serde_json::Value {
    serde_json::json!({
        "below": below.as_ref().map(|q| crate::enclosure::rounded_up(q, 6)),
        "above": above.as_ref().map(|q| crate::enclosure::rounded_up(q, 6)),
    })
}

/// What the boundary pairs alone say about an unsound mechanism-wide upper claim.
#[derive(Clone, Debug)]
pub struct BoundaryEvidence {
    /// δ of the pairs k = 0 and k = n − 1 at the claimed ε, both directions.
    pub pairs: Vec<KValue>,
    /// The claim judged on those pairs only: `Sound` means the boundary would *not* have
    /// refuted it — only a non-boundary composition does.
    pub verdict: Verdict,
}

/// The verdict on one claim with its evidence.
#[derive(Clone, Debug)]
pub struct ClaimReport {
    pub claim: Claim,
    pub verdict: Verdict,
    /// The certified value the claim is about: δ at the claimed ε (of the mechanism, or of
    /// the pair for a claim with k), or the Rényi profile at the claimed order.
    pub value: Enclosure,
    /// The certified ε at the claimed δ (upper claims with 0 < δ < 1).
    pub eps_at_delta: Option<Enclosure>,
    /// For decided upper claims.
    pub tightness: Option<Tightness>,
    /// The pair and direction that decide the claim: the largest certified value (it exceeds
    /// an unsound upper or rdp claim, or reaches a sound lower claim).
    pub witness: Option<KValue>,
    /// For unsound mechanism-wide upper claims.
    pub boundary: Option<BoundaryEvidence>,
    /// For undecided claims: `(claimed − lo, hi − claimed)`.
    pub straddle: Option<(Option<Rational>, Option<Rational>)>,
    /// How `value` was computed (arithmetic and any refinement).
    pub arithmetic: String,
}

/// One profile scan of the audit: a group's claims answered together.
#[derive(Clone, Debug)]
pub struct Scan {
    /// How many claims it answers.
    pub claims: usize,
    pub query: ProfileQuery,
    /// Its rows, records and closures, after any refinement: the proof a certificate carries.
    pub profile: Profile,
    /// The highest MPFR precision a refinement recomputed any of its values in.
    pub refined_bits: Option<u32>,
}

impl Scan {
    pub fn n(&self) -> u64 {
        self.query.n
    }

    /// The one pair it is restricted to (`None`: every k).
    pub fn k(&self) -> Option<u64> {
        self.query.k_range.map(|(k, _)| k)
    }
}

/// The audit's result: one report per claim, in file order.
#[derive(Clone, Debug)]
pub struct Audit {
    pub reports: Vec<ClaimReport>,
    pub scans: Vec<Scan>,
}

impl Audit {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.reports.iter().filter(|r| r.verdict == verdict).count()
    }
}

/// MPFR precisions of the refinement stages (no truncation).
pub const REFINEMENT_BITS: [u32; 2] = [256, 1024];

/// Pairs recomputed per refinement stage at most.
const MAX_REFINED_PAIRS: usize = 32;

/// The quantities of one group of claims, deduplicated, and where each claim's live.
struct Plan {
    quantities: Vec<Quantity>,
    /// Per claim of the group: (its value's quantity, its ε-at-δ quantity).
    slots: Vec<(usize, Option<usize>)>,
}

/// Where `q` is among `quantities`, if there.
pub fn position(quantities: &[Quantity], q: &Quantity) -> Option<usize> {
    quantities.iter().position(|a| match (a, q) {
        (Quantity::Delta(Threshold::Eps(x)), Quantity::Delta(Threshold::Eps(y)))
        | (Quantity::Epsilon(x), Quantity::Epsilon(y))
        | (Quantity::Renyi(x), Quantity::Renyi(y)) => x == y,
        _ => false,
    })
}

fn slot(quantities: &mut Vec<Quantity>, q: Quantity) -> usize {
    position(quantities, &q).unwrap_or_else(|| {
        quantities.push(q);
        quantities.len() - 1
    })
}

/// The quantities a claim needs: its value (δ at the claimed ε, or the Rényi profile at the
/// claimed order) and, for an upper claim with 0 < δ < 1, ε at the claimed δ.
pub fn claim_quantities(c: &Claim) -> (Quantity, Option<Quantity>) {
    match (&c.kind, &c.delta) {
        (ClaimKind::Rdp { alpha }, _) => (Quantity::Renyi(alpha.clone()), None),
        (kind, delta) => (
            Quantity::Delta(Threshold::Eps(c.eps.clone())),
            match (kind, delta) {
                (ClaimKind::Upper, Some(d)) if *d > 0 && *d < 1 => {
                    Some(Quantity::Epsilon(d.clone()))
                }
                _ => None,
            },
        ),
    }
}

fn plan(claims: &[&Claim]) -> Plan {
    let mut quantities = Vec::new();
    let slots = claims
        .iter()
        .map(|c| {
            let (value, eps) = claim_quantities(c);
            (
                slot(&mut quantities, value),
                eps.map(|e| slot(&mut quantities, e)),
            )
        })
        .collect();
    Plan { quantities, slots }
}

/// What a claim asserts about its value: the side and the claimed number.
pub fn claim_side(c: &Claim) -> (Side, Rational) {
    match &c.kind {
        ClaimKind::Upper => (Side::AtMost, c.delta.clone().expect("upper claims have δ")),
        ClaimKind::Lower => (Side::AtLeast, c.delta.clone().expect("lower claims have δ")),
        ClaimKind::Rdp { .. } => (Side::AtMost, c.eps.clone()),
    }
}

/// Runs the audit.
pub fn audit(query: &AuditQuery) -> Result<Audit> {
    let mut groups: BTreeMap<(u64, Option<u64>), Vec<usize>> = BTreeMap::new();
    for (i, c) in query.claims.iter().enumerate() {
        groups.entry((c.n, c.k)).or_default().push(i);
    }
    let mut reports: Vec<Option<ClaimReport>> = vec![None; query.claims.len()];
    let mut scans = Vec::new();
    let progress = Stage::start("audit", "claims", query.claims.len() as u64);
    for ((n, k), members) in groups {
        let claims: Vec<&Claim> = members.iter().map(|&i| &query.claims[i]).collect();
        let plan = plan(&claims);
        let profile_query = ProfileQuery {
            mechanism: query.mechanism.clone(),
            n,
            k_range: k.map(|k| (k, k)),
            quantities: plan.quantities.clone(),
            options: query.options.clone(),
            backend: query.backend,
            exact_ctx: query.exact_ctx,
            prune: true,
            with_ends: false,
            escalate_above: query.escalate_above,
        };
        let mut scan = profile(&profile_query)?;
        let mut arithmetic = vec![scan.arithmetic.clone(); claims.len()];
        let refined_bits = refine_undecided(
            query,
            &profile_query,
            &mut scan,
            &plan,
            &claims,
            &mut arithmetic,
        )?;
        for (j, &i) in members.iter().enumerate() {
            reports[i] = Some(report(
                claims[j],
                &scan,
                plan.slots[j],
                arithmetic[j].clone(),
            ));
        }
        progress.advance(claims.len() as u64);
        scans.push(Scan {
            claims: claims.len(),
            query: profile_query,
            profile: scan,
            refined_bits,
        });
    }
    let mut reports: Vec<ClaimReport> = reports
        .into_iter()
        .map(|r| r.expect("every claim judged"))
        .collect();
    add_boundary_evidence(query, &mut reports)?;
    Ok(Audit { reports, scans })
}

/// Refines the group's undecided claims, stage by stage (MPFR at 256, then 1024 bits):
/// a claim whose row lies below the scan's resolution gets its quantity rescanned at that
/// precision (truncation `2^-(bits+40)`); any other is decided by recomputing, without
/// truncation, the recorded pairs whose values reach the claimed number.  Returns the highest
/// precision that changed the scan.
fn refine_undecided(
    query: &AuditQuery,
    profile_query: &ProfileQuery,
    scan: &mut Profile,
    plan: &Plan,
    claims: &[&Claim],
    arithmetic: &mut [String],
) -> Result<Option<u32>> {
    let mut refined_bits = None;
    for bits in REFINEMENT_BITS {
        let undecided = |scan: &Profile| -> Vec<usize> {
            (0..claims.len())
                .filter(|&j| {
                    let (side, claimed) = claim_side(claims[j]);
                    judge(&scan.rows[plan.slots[j].0].value, side, &claimed) == Verdict::Undecided
                })
                .collect()
        };
        let pending = undecided(scan);
        if pending.is_empty() {
            return Ok(refined_bits);
        }
        let note = |arithmetic: &mut [String], js: &[usize], text: &str| {
            for &j in js {
                arithmetic[j] += text;
            }
        };
        // Rows below resolution: rescan their quantities at this precision.
        let (below, resolved): (Vec<usize>, Vec<usize>) = pending
            .iter()
            .partition(|&&j| !scan.rows[plan.slots[j].0].resolved);
        if !below.is_empty() {
            let mut slots: Vec<usize> = below.iter().map(|&j| plan.slots[j].0).collect();
            slots.sort_unstable();
            slots.dedup();
            let rescan = ProfileQuery {
                quantities: slots.iter().map(|&s| plan.quantities[s].clone()).collect(),
                backend: Backend::Mpfr { precision: bits },
                escalate_above: None,
                ..profile_query.clone()
            };
            match profile(&rescan) {
                Ok(fresh) => {
                    scan.merge_rescan(&slots, &fresh)?;
                    refined_bits = Some(bits);
                    let truncation = if rescan.options.truncate {
                        format!("truncation 2^-{}", bits + 40)
                    } else {
                        "no truncation".into()
                    };
                    note(
                        arithmetic,
                        &below,
                        &format!("; below resolution, rescanned in mpfr-{bits} ({truncation})"),
                    );
                }
                Err(Error::TooLarge(message)) => {
                    note(
                        arithmetic,
                        &below,
                        &format!("; rescan at {bits} bits refused: {message}"),
                    );
                }
                Err(e) => return Err(e),
            }
        }
        if resolved.is_empty() {
            continue;
        }
        let ks = candidates(scan, plan, claims, &resolved);
        if ks.is_empty() || ks.len() > MAX_REFINED_PAIRS {
            note(
                arithmetic,
                &resolved,
                &format!(
                    "; not refined ({} pairs could decide it, more than {MAX_REFINED_PAIRS})",
                    ks.len()
                ),
            );
            continue;
        }
        let pairs = PairQuery {
            mechanism: query.mechanism.clone(),
            n: profile_query.n,
            k: 0,
            options: PairOptions {
                truncate: false,
                ..query.options.clone()
            },
            backend: Backend::Mpfr { precision: bits },
            exact_ctx: query.exact_ctx,
            escalate_above: None,
        };
        let mut which: Vec<usize> = resolved.iter().map(|&j| plan.slots[j].0).collect();
        which.sort_unstable();
        which.dedup();
        match refine(profile_query, scan, &ks, &which, &pairs) {
            Ok(()) => {
                refined_bits = Some(bits);
                note(
                    arithmetic,
                    &resolved,
                    &format!(
                        "; refined: {} pair(s) recomputed in mpfr-{bits} without truncation",
                        ks.len()
                    ),
                );
            }
            Err(Error::TooLarge(message)) => {
                note(
                    arithmetic,
                    &resolved,
                    &format!("; refinement at {bits} bits refused: {message}"),
                );
            }
            Err(e) => return Err(e),
        }
    }
    Ok(refined_bits)
}

/// The recorded pairs that could still decide the undecided claims: those whose certified
/// value reaches the claimed number.
fn candidates(scan: &Profile, plan: &Plan, claims: &[&Claim], undecided: &[usize]) -> Vec<u64> {
    let mut ks: Vec<u64> = undecided
        .iter()
        .flat_map(|&j| {
            let (_, claimed) = claim_side(claims[j]);
            let c = Endpoint::Finite(claimed);
            let slot = plan.slots[j].0;
            scan.records
                .iter()
                .filter(move |r| {
                    [&r.qp[slot], &r.pq[slot]]
                        .iter()
                        .any(|e| e.as_ref().is_some_and(|e| e.hi() >= &c))
                })
                .map(|r| r.k)
                .collect::<Vec<_>>()
        })
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// The largest certified value of a row: the pair with the largest lower bound (the smallest
/// k, `qp` first, among equals).
fn strongest(argmax: &[KValue]) -> Option<KValue> {
    argmax
        .iter()
        .fold(None, |best: Option<&KValue>, v| match best {
            Some(b) if b.value.lo() >= v.value.lo() => Some(b),
            _ => Some(v),
        })
        .cloned()
}

/// The tightness of a decided upper claim, from its certified value and ε at its δ.
pub fn tightness(
    claim: &Claim,
    verdict: Verdict,
    value: &Enclosure,
    eps_at_delta: Option<&Enclosure>,
) -> Option<Tightness> {
    match (&claim.kind, verdict) {
        (ClaimKind::Upper, Verdict::Sound | Verdict::Unsound) => Some(Tightness {
            eps_ratio: eps_at_delta.and_then(|e| ratio(&claim.eps, e)),
            delta_ratio: ratio(claim.delta.as_ref().expect("upper claims have δ"), value),
        }),
        _ => None,
    }
}

fn report(
    claim: &Claim,
    scan: &Profile,
    (value_slot, eps_slot): (usize, Option<usize>),
    arithmetic: String,
) -> ClaimReport {
    let row = &scan.rows[value_slot];
    let (side, claimed) = claim_side(claim);
    let verdict = judge(&row.value, side, &claimed);
    let eps_at_delta = eps_slot.map(|s| scan.rows[s].value.clone());
    let tightness = tightness(claim, verdict, &row.value, eps_at_delta.as_ref());
    let witness = match (&claim.kind, verdict) {
        (ClaimKind::Upper | ClaimKind::Rdp { .. }, Verdict::Unsound)
        | (ClaimKind::Lower, Verdict::Sound) => strongest(&row.argmax),
        _ => None,
    };
    ClaimReport {
        claim: claim.clone(),
        verdict,
        value: row.value.clone(),
        eps_at_delta,
        tightness,
        witness,
        boundary: None,
        straddle: (verdict == Verdict::Undecided).then(|| straddle(&row.value, &claimed)),
        arithmetic,
    }
}

/// For every unsound mechanism-wide upper claim: δ of the boundary pairs k = 0 and k = n − 1
/// at the claimed ε, and the claim judged on them alone.
fn add_boundary_evidence(query: &AuditQuery, reports: &mut [ClaimReport]) -> Result<()> {
    let mut by_n: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        if r.verdict == Verdict::Unsound && r.claim.kind == ClaimKind::Upper && r.claim.k.is_none()
        {
            by_n.entry(r.claim.n).or_default().push(i);
        }
    }
    for (n, members) in by_n {
        let mut quantities = Vec::new();
        let slots: Vec<usize> = members
            .iter()
            .map(|&i| {
                slot(
                    &mut quantities,
                    Quantity::Delta(Threshold::Eps(reports[i].claim.eps.clone())),
                )
            })
            .collect();
        let mut ends = vec![0];
        if n > 1 {
            ends.push(n - 1);
        }
        let mut boundary: Vec<Vec<KValue>> = vec![Vec::new(); quantities.len()];
        for k in ends {
            let scan = profile(&ProfileQuery {
                mechanism: query.mechanism.clone(),
                n,
                k_range: Some((k, k)),
                quantities: quantities.clone(),
                options: query.options.clone(),
                backend: query.backend,
                exact_ctx: query.exact_ctx,
                with_ends: false,
                prune: false,
                escalate_above: query.escalate_above,
            })?;
            // A one-pair scan records both directions of every quantity.
            for record in &scan.records {
                for (s, values) in boundary.iter_mut().enumerate() {
                    for (direction, value) in [
                        (Direction::Qp, &record.qp[s]),
                        (Direction::Pq, &record.pq[s]),
                    ] {
                        let value = value.clone().ok_or_else(|| {
                            Error::Internal("a one-pair scan left a quantity unevaluated".into())
                        })?;
                        values.push(KValue {
                            k: record.k,
                            direction,
                            value,
                        });
                    }
                }
            }
        }
        for (&i, &s) in members.iter().zip(&slots) {
            let pairs = boundary[s].clone();
            let max = pairs
                .iter()
                .map(|v| v.value.clone())
                .reduce(|a, b| a.max(&b))
                .expect("the boundary has a pair");
            let claimed = reports[i].claim.delta.clone().expect("upper claims have δ");
            reports[i].boundary = Some(BoundaryEvidence {
                pairs,
                verdict: judge(&max, Side::AtMost, &claimed),
            });
        }
    }
    Ok(())
}
