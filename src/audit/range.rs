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
//! Upper claims with `0 < δ < 1` also get the certified range of `ε_M(δ)`.  Claims restricted to
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
    BoundsQuery, RangeProof, RangeRow, Target, bounds_with_proof, check_time,
};
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::randomizer::Randomizer;
use crate::progress::Stage;
use crate::query::{Backend, Threshold};
use rug::Rational;
use std::collections::BTreeMap;

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
}

/// The verdict on one claim with the range it rests on.
#[derive(Clone, Debug)]
pub struct RangeReport {
    pub claim: Claim,
    pub verdict: Verdict,
    /// The certified range of `δ_M` at the claimed ε, with the pairs attaining each end.
    pub range: RangeRow,
    /// The certified range of `ε_M` at the claimed δ (upper claims with 0 < δ < 1).
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

/// Whether an upper claim also gets the range of `ε_M` at its δ (`0 < δ < 1`).
pub fn wants_eps_range(c: &Claim) -> Option<&Rational> {
    match (&c.kind, &c.delta) {
        (ClaimKind::Upper, Some(d)) if *d > 0 && *d < 1 => Some(d),
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

/// Runs the audit: one `bounds` range per n at every claimed ε, and one per claimed δ.
pub fn audit_range(q: &RangeAuditQuery) -> Result<RangeAudit> {
    check_claims(&q.randomizer, &q.claims, &q.path)?;
    let mut ranges: Vec<AuditedRange> = Vec::new();
    let mut bounds_at = |n: u64, target: Target| -> Result<Vec<RangeRow>> {
        let query = BoundsQuery {
            randomizer: q.randomizer.clone(),
            n,
            target: target.clone(),
            options: q.options.clone(),
            backend: q.backend,
            escalate_above: q.escalate_above,
        };
        check_time(&query)?;
        let (rows, proof) = bounds_with_proof(&query)?;
        ranges.push(AuditedRange {
            n,
            target,
            rows: rows.clone(),
            proof,
        });
        Ok(rows)
    };
    // Per n: the distinct claimed ε (in order) and their ranges.
    let mut eps_by_n: BTreeMap<u64, Vec<Rational>> = BTreeMap::new();
    for c in &q.claims {
        let list = eps_by_n.entry(c.n).or_default();
        if !list.contains(&c.eps) {
            list.push(c.eps.clone());
        }
    }
    let mut delta_ranges: BTreeMap<(u64, Rational), RangeRow> = BTreeMap::new();
    let progress = Stage::start("audit", "claims", q.claims.len() as u64);
    for (n, eps) in &eps_by_n {
        let thresholds = eps.iter().cloned().map(Threshold::Eps).collect();
        for (e, row) in eps.iter().zip(bounds_at(*n, Target::Delta(thresholds))?) {
            delta_ranges.insert((*n, e.clone()), row);
        }
    }
    let mut eps_ranges: BTreeMap<(u64, Rational), RangeRow> = BTreeMap::new();
    let mut reports = Vec::with_capacity(q.claims.len());
    for c in &q.claims {
        let eps_range = match wants_eps_range(c) {
            Some(d) => {
                let key = (c.n, d.clone());
                if !eps_ranges.contains_key(&key) {
                    let row = bounds_at(c.n, Target::Epsilon(d.clone()))?.remove(0);
                    eps_ranges.insert(key.clone(), row);
                }
                eps_ranges.get(&key).cloned()
            }
            None => None,
        };
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
        progress.advance(1);
    }
    Ok(RangeAudit { reports, ranges })
}
