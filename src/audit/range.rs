//! Audit of claims about randomizers with more than two inputs (issue 11, Deliver 5).
//!
//! Their exact profile `δ_M(ε)` (a maximum over every composition of n users over the inputs)
//! is out of reach, but `bounds` encloses it: `lower ≤ δ_M(ε) ≤ upper`, both certified
//! (proofs-notes/blanket-bounds.md).  A claim is judged on the enclosure `[lower.lo, upper.hi]`
//! with the same exact comparisons as every audit (`verdict::judge`):
//!
//! * "(ε, δ)-DP" (`upper`): **sound** when the upper bound meets it (`upper.hi ≤ δ`),
//!   **unsound** when the lower bound contradicts it (`lower.lo > δ`: a concrete neighbouring
//!   pair, named in the report, violates it), **undecided** in between;
//! * "not (ε, δ′)-DP for δ′ < δ" (`lower`): sound when `lower.lo ≥ δ`, unsound when
//!   `upper.hi < δ`.
//!
//! With `--eps-ranges`, upper claims with `0 < δ < 1` also get the certified range of `ε_M(δ)`
//! (one ε search per distinct n and δ; the verdicts need none of them).  Claims restricted to
//! one pair (`k`) and Rényi claims need the binary-input profile and are refused, naming the
//! line.
//!
//! Every range is kept with the sums behind it ([`AuditedRange`]): `--certificate` writes them
//! down, and `verify` re-derives each range, then each verdict from the verified ends
//! (`certificate::verify::range_audit`).

use super::claim_side;
use super::claims::{Claim, ClaimKind};
use super::verdict::{Verdict, judge};
use crate::bounds::range::{
    BoundsQuery, RangeProof, RangeRow, Target, bounds_shared, check_time_shared,
};
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::randomizer::Randomizer;
use crate::progress::Stage;
use crate::query::{Backend, Threshold};
use rug::Rational;
use std::collections::BTreeMap;

/// What a range audit certificate's `method.route` adds when ranges of ε_M are computed
/// (`--eps-ranges`); `verify` holds the route to `report.eps_ranges`.
pub const EPS_RANGES_ROUTE: &str =
    ", and per claimed delta of an upper claim the range of eps_M (--eps-ranges)";

/// An audit of claims against a randomizer's certified range.
#[derive(Clone, Debug)]
pub struct RangeAuditQuery {
    pub randomizer: Randomizer,
    pub claims: Vec<Claim>,
    /// The claims file (for errors naming its lines).
    pub path: String,
    pub options: PairOptions,
    pub backend: Backend,
    pub escalate_above: Option<f64>,
    /// Whether upper claims also get the range of `ε_M` at their δ (`--eps-ranges`): the
    /// verdicts need only the δ ranges, and each distinct δ costs an ε search.
    pub eps_ranges: bool,
}

/// The verdict on one claim with the range it rests on.
#[derive(Clone, Debug)]
pub struct RangeReport {
    pub claim: Claim,
    pub verdict: Verdict,
    /// The certified range of `δ_M` at the claimed ε, with the pairs attaining each end.
    pub range: RangeRow,
    /// The certified range of `ε_M` at the claimed δ (upper claims with 0 < δ < 1, with
    /// `--eps-ranges`).
    pub eps_range: Option<RangeRow>,
}

impl RangeReport {
    /// `[lower.lo, upper.hi]`: an enclosure of `δ_M` at the claimed ε.
    pub fn enclosure(&self) -> Enclosure {
        Enclosure::new(
            self.range.lower.value.lo().clone(),
            self.range.upper.value.hi().clone(),
        )
    }
}

/// What a range audit judges against, as its report and certificate state it.
pub const JUDGED_AGAINST: &str = "the certified range lower <= delta_M(eps) <= upper of `bounds` (blanket divergence above, concrete neighbouring pairs below)";

/// One `bounds` range an audit computed: at n, δ at every claimed ε of n (or ε at a claimed δ),
/// with every sum behind it (what a certificate records and `verify` re-derives).
#[derive(Clone, Debug)]
pub struct AuditedRange {
    pub n: u64,
    pub target: Target,
    pub rows: Vec<RangeRow>,
    pub proof: RangeProof,
}

/// A range audit: the verdicts, and the ranges they were judged on.
#[derive(Clone, Debug)]
pub struct RangeAudit {
    pub reports: Vec<RangeReport>,
    pub ranges: Vec<AuditedRange>,
}

/// The δ at which a claim gets the range of `ε_M`, when ranges of ε are asked for
/// (`eps_ranges`): upper claims with `0 < δ < 1`.
pub fn wants_eps_range(c: &Claim, eps_ranges: bool) -> Option<&Rational> {
    match (&c.kind, &c.delta) {
        (ClaimKind::Upper, Some(d)) if eps_ranges && *d > 0 && *d < 1 => Some(d),
        _ => None,
    }
}

/// Refuses what the range cannot decide: pair claims and Rényi claims (`path` names the
/// claims file).
pub fn check_claims(randomizer: &Randomizer, claims: &[Claim], path: &str) -> Result<()> {
    let inputs = randomizer.input_count();
    for c in claims {
        let column = match (&c.kind, c.k) {
            (_, Some(_)) => "k",
            (ClaimKind::Rdp { .. }, _) => "kind",
            _ => continue,
        };
        return Err(Error::Argument {
            field: format!("{path}: line {}, column {column}", c.line),
            message: format!(
                "{} has {inputs} inputs: only mechanism-wide (ε, δ) claims (kind upper or lower, no k) are judged against its certified range; pair and Rényi claims need a binary-input mechanism",
                randomizer.name
            ),
        });
    }
    Ok(())
}

/// Runs the audit: per n, one shared `bounds` computation (every pair's windows built once) that
/// gives the range of δ at every claimed ε (and with `eps_ranges`, of ε at every claimed δ).  Every n is timed
/// before any is computed, and only one n's windows are held at a time.
pub fn audit_range(q: &RangeAuditQuery) -> Result<RangeAudit> {
    check_claims(&q.randomizer, &q.claims, &q.path)?;
    // Per n: the distinct claimed ε and δ, in order.
    let mut by_n: BTreeMap<u64, (Vec<Rational>, Vec<Rational>)> = BTreeMap::new();
    for c in &q.claims {
        let (eps, deltas) = by_n.entry(c.n).or_default();
        if !eps.contains(&c.eps) {
            eps.push(c.eps.clone());
        }
        if let Some(d) = wants_eps_range(c, q.eps_ranges).filter(|d| !deltas.contains(d)) {
            deltas.push(d.clone());
        }
    }
    let plans: Vec<(BoundsQuery, Vec<Target>)> = by_n
        .into_iter()
        .map(|(n, (eps, deltas))| {
            let thresholds = eps.into_iter().map(Threshold::Eps).collect();
            let targets = std::iter::once(Target::Delta(thresholds))
                .chain(deltas.into_iter().map(Target::Epsilon))
                .collect();
            let query = BoundsQuery {
                randomizer: q.randomizer.clone(),
                n,
                target: Target::Delta(Vec::new()),
                options: q.options.clone(),
                backend: q.backend,
                escalate_above: q.escalate_above,
            };
            (query, targets)
        })
        .collect();
    for (query, targets) in &plans {
        check_time_shared(query, targets)?;
    }
    let mut ranges: Vec<AuditedRange> = Vec::new();
    let mut delta_ranges: BTreeMap<(u64, Rational), RangeRow> = BTreeMap::new();
    let mut eps_ranges: BTreeMap<(u64, Rational), RangeRow> = BTreeMap::new();
    let progress = Stage::start("audit", "sizes n", plans.len() as u64);
    for (query, targets) in &plans {
        let n = query.n;
        for (target, (rows, proof)) in targets.iter().zip(bounds_shared(query, targets)?) {
            match target {
                Target::Delta(thresholds) => {
                    for (t, row) in thresholds.iter().zip(&rows) {
                        let Threshold::Eps(e) = t else {
                            unreachable!("claims give ε")
                        };
                        delta_ranges.insert((n, e.clone()), row.clone());
                    }
                }
                Target::Epsilon(d) => {
                    eps_ranges.insert((n, d.clone()), rows[0].clone());
                }
            }
            ranges.push(AuditedRange {
                n,
                target: target.clone(),
                rows,
                proof,
            });
        }
        progress.advance(1);
    }
    let mut reports = Vec::with_capacity(q.claims.len());
    for c in &q.claims {
        let eps_range =
            wants_eps_range(c, q.eps_ranges).map(|d| eps_ranges[&(c.n, d.clone())].clone());
        let range = delta_ranges[&(c.n, c.eps.clone())].clone();
        let (side, claimed) = claim_side(c);
        let report = RangeReport {
            claim: c.clone(),
            verdict: Verdict::Undecided,
            range,
            eps_range,
        };
        reports.push(RangeReport {
            verdict: judge(&report.enclosure(), side, &claimed),
            ..report
        });
    }
    Ok(RangeAudit { reports, ranges })
}
