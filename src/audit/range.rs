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
use crate::profile::Quantity;
use crate::profile_inputs::{InputsProfile, InputsProfileQuery};
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
    /// Seconds the exact profile over every dataset may take, per n, to narrow the claims the
    /// range leaves undecided (`--narrow-seconds`; 0: not tried).
    pub narrow_seconds: f64,
}

/// What decided a claim.
#[derive(Clone, Debug, PartialEq)]
pub enum DecidedBy {
    /// The certified range `[lower.lo, upper.hi]`.
    Range,
    /// The exact profile over every dataset (the range left it undecided).
    ExactProfile,
    /// Neither: undecided, with why the exact profile did not decide it (not tried, out of
    /// reach, or the claim lies inside its enclosure too).
    Neither(String),
}

impl DecidedBy {
    pub fn name(&self) -> &'static str {
        match self {
            DecidedBy::Range => "range",
            DecidedBy::ExactProfile => "exact profile",
            DecidedBy::Neither(_) => "neither",
        }
    }
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
    /// `δ_M` at the claimed ε from the exact profile over every dataset, when the range left
    /// the claim undecided and the profile was affordable.
    pub profile: Option<Enclosure>,
    /// A dataset pair attaining the exact profile's value (with it).
    pub profile_attained: Option<crate::profile_inputs::Dataset>,
    pub decided_by: DecidedBy,
}

impl RangeReport {
    /// `[lower.lo, upper.hi]`: an enclosure of `δ_M` at the claimed ε.
    pub fn range_enclosure(&self) -> Enclosure {
        Enclosure::new(
            self.range.lower.value.lo().clone(),
            self.range.upper.value.hi().clone(),
        )
    }

    /// The enclosure of `δ_M` at the claimed ε the verdict rests on: the exact profile's when
    /// computed, else the range's.
    pub fn enclosure(&self) -> Enclosure {
        self.profile
            .clone()
            .unwrap_or_else(|| self.range_enclosure())
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

/// A range audit: the verdicts, and the ranges (and exact profiles) they were judged on.
#[derive(Clone, Debug)]
pub struct RangeAudit {
    pub reports: Vec<RangeReport>,
    pub ranges: Vec<AuditedRange>,
    /// Per n with claims the range left undecided: the exact profile at their ε, when
    /// affordable within `narrow_seconds`.
    pub profiles: Vec<(InputsProfileQuery, InputsProfile)>,
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
            profile: None,
            profile_attained: None,
            decided_by: DecidedBy::Range,
        };
        let verdict = judge(&report.enclosure(), side, &claimed);
        reports.push(RangeReport {
            verdict,
            decided_by: match verdict {
                Verdict::Undecided => DecidedBy::Neither(
                    "the exact profile was not tried (--narrow-seconds 0)".into(),
                ),
                _ => DecidedBy::Range,
            },
            ..report
        });
    }
    let profiles = if q.narrow_seconds > 0.0 {
        narrow(q, &mut reports)?
    } else {
        Vec::new()
    };
    Ok(RangeAudit {
        reports,
        ranges,
        profiles,
    })
}

/// Narrows the undecided claims: per n, the exact profile over every dataset at their claimed
/// ε (proofs-notes/inputs-profile.md), within `narrow_seconds`; each claim it decides is
/// judged on it.  A profile out of reach (too large, or past the time) leaves its claims
/// undecided, saying so.
fn narrow(
    q: &RangeAuditQuery,
    reports: &mut [RangeReport],
) -> Result<Vec<(InputsProfileQuery, InputsProfile)>> {
    let mut by_n: BTreeMap<u64, Vec<Rational>> = BTreeMap::new();
    for x in reports.iter().filter(|x| x.verdict == Verdict::Undecided) {
        let eps = by_n.entry(x.claim.n).or_default();
        if !eps.contains(&x.claim.eps) {
            eps.push(x.claim.eps.clone());
        }
    }
    let mut profiles = Vec::new();
    for (n, eps) in by_n {
        crate::progress::note(&format!(
            "audit: the range leaves claims at n = {n} undecided; the exact profile over every \
             dataset at their {} ε gets at most {} (--narrow-seconds)",
            eps.len(),
            crate::exact::pair::duration_text(q.narrow_seconds)
        ));
        let mut options = q.options.clone();
        options.time_limit_seconds = q.narrow_seconds;
        let query = InputsProfileQuery::new(
            q.randomizer.clone(),
            n,
            eps.iter()
                .cloned()
                .map(|e| Quantity::Delta(Threshold::Eps(e)))
                .collect(),
            options,
            q.backend,
            q.escalate_above,
        );
        let profile = match crate::profile_inputs::inputs_profile(&query) {
            Ok(p) => p,
            Err(e @ (Error::TooLarge(_) | Error::Argument { .. })) => {
                let why = match e {
                    Error::Argument { field, message } if field == "--max-seconds" => format!(
                        "the exact profile at n = {n} is out of reach within --narrow-seconds: \
                         {message}"
                    ),
                    Error::TooLarge(message) => {
                        format!("the exact profile at n = {n} is out of reach: {message}")
                    }
                    e => return Err(e),
                };
                for x in reports
                    .iter_mut()
                    .filter(|x| x.claim.n == n && x.verdict == Verdict::Undecided)
                {
                    x.decided_by = DecidedBy::Neither(why.clone());
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        for x in reports
            .iter_mut()
            .filter(|x| x.claim.n == n && x.verdict == Verdict::Undecided)
        {
            let row = eps
                .iter()
                .position(|e| *e == x.claim.eps)
                .expect("every undecided ε is a quantity");
            let value = profile.rows[row].value.clone();
            x.profile_attained = profile.rows[row].argmax.first().map(|a| a.dataset.clone());
            let (side, claimed) = claim_side(&x.claim);
            x.verdict = judge(&value, side, &claimed);
            x.decided_by = match x.verdict {
                Verdict::Undecided => DecidedBy::Neither(
                    "the claimed δ lies inside the exact profile's enclosure too".into(),
                ),
                _ => DecidedBy::ExactProfile,
            };
            x.profile = Some(value);
        }
        profiles.push((query, profile));
    }
    Ok(profiles)
}
