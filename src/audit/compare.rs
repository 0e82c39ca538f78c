//! Published bounds beside the certified ε (Part I Table 6, extended): per n, the certified ε
//! of the whole mechanism (the profile), of the boundary pair k = 0, and every published bound
//! with its ratio to the certified ε and whether it holds.

use crate::accountants::{Bound, LocalPrivacy, Validity, published_bounds};
use crate::arith::exact::ExactCtx;
use crate::audit::verdict::quotient;
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::Mechanism;
use crate::profile::{Profile, ProfileQuery, ProfileRow, Quantity, profile};
use crate::query::{Backend, EpsilonJob, PairQuery, answer};
use rug::Rational;

/// A comparison over several n at one δ.
#[derive(Clone, Debug)]
pub struct CompareQuery {
    pub mechanism: Mechanism,
    pub ns: Vec<u64>,
    pub delta: Rational,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
}

/// Whether a published bound holds against the certified ε of the mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Certified: `ε_M ≤ bound`.
    Holds,
    /// Certified: `ε_M > bound` — the bound under-reports.
    Violated,
    /// The enclosures overlap.
    Undecided,
    /// Outside the theorem's validity: no number.
    Outside,
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::Holds => "holds",
            Status::Violated => "VIOLATED",
            Status::Undecided => "undecided",
            Status::Outside => "outside validity",
        }
    }
}

/// A bound with its ratio to the certified ε.
#[derive(Clone, Debug)]
pub struct BoundRow {
    pub bound: Bound,
    /// `bound ÷ ε_M`, enclosed (`None` when both may be 0).
    pub ratio: Option<Enclosure>,
    pub status: Status,
}

impl BoundRow {
    pub fn to_json(&self) -> serde_json::Value {
        let b = &self.bound;
        serde_json::json!({
            "id": b.id,
            "name": b.name,
            "source": b.source,
            "method": b.method.describe(),
            "valid": matches!(b.validity, Validity::Valid(_)),
            "validity": b.validity.text(),
            "eps": b.eps.as_ref().map(Enclosure::to_json),
            "ratio_to_certified": self.ratio.as_ref().map(Enclosure::to_json),
            "status": self.status.name(),
            "arithmetic": b.arithmetic,
        })
    }

    /// A bound held against the certified ε of the mechanism.
    pub fn judged(bound: Bound, certified: &Enclosure) -> BoundRow {
        let (ratio, status) = match &bound.eps {
            None => (None, Status::Outside),
            Some(eps) => {
                let status = if certified.hi() <= eps.lo() {
                    Status::Holds
                } else if certified.lo() > eps.hi() {
                    Status::Violated
                } else {
                    Status::Undecided
                };
                (quotient(eps, certified), status)
            }
        };
        BoundRow {
            bound,
            ratio,
            status,
        }
    }
}

/// One n.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub n: u64,
    /// The profile scan over every k behind the mechanism's ε (its proof, for a certificate).
    pub scan: (ProfileQuery, Profile),
    /// The certified two-sided ε of the boundary pair `(T_{n,0}, T_{n,1})`.
    pub boundary: Enclosure,
    pub bounds: Vec<BoundRow>,
}

impl Comparison {
    /// The certified ε of the mechanism: the profile's row.
    pub fn mechanism(&self) -> &ProfileRow {
        &self.scan.1.rows[0]
    }
}

/// The local parameters and one comparison per n.
pub fn compare(query: &CompareQuery) -> Result<(LocalPrivacy, Vec<Comparison>)> {
    crate::exact::curve::check_target(&query.delta)?;
    let local = LocalPrivacy::of(&query.mechanism)?.ok_or_else(|| {
        Error::Unsupported(format!(
            "{}: not ε0-LDP for any finite ε0 (an output has probability 0 under one input only); \
             no published amplification bound applies",
            query.mechanism.name
        ))
    })?;
    let mut out = Vec::new();
    for &n in &query.ns {
        let scan_query = ProfileQuery {
            mechanism: query.mechanism.clone(),
            n,
            k_range: None,
            quantities: vec![Quantity::Epsilon(query.delta.clone())],
            options: query.options.clone(),
            backend: query.backend,
            exact_ctx: query.exact_ctx,
            prune: true,
            escalate_above: query.escalate_above,
        };
        let scan = profile(&scan_query, &|_| {})?;
        let boundary = answer(
            &PairQuery {
                mechanism: query.mechanism.clone(),
                n,
                k: 0,
                options: query.options.clone(),
                backend: query.backend,
                exact_ctx: query.exact_ctx,
                escalate_above: query.escalate_above,
            },
            &EpsilonJob {
                delta: query.delta.clone(),
            },
        )?
        .result
        .two_sided;
        let bounds = published_bounds(
            &query.mechanism,
            n,
            &query.delta,
            query.options.memory_limit,
            None,
        )?
        .into_iter()
        .map(|bound| BoundRow::judged(bound, &scan.rows[0].value))
        .collect();
        out.push(Comparison {
            n,
            scan: (scan_query, scan),
            boundary,
            bounds,
        });
    }
    Ok((local, out))
}
