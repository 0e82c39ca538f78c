//! Published bounds beside the certified ε (Part I Table 6, extended): per n, the certified ε
//! of the mechanism the bound was published for, and every published bound with its ratio to
//! it and whether it holds.
//!
//! * **Binary inputs** (two rows): the exact ε_M(δ), the worst case over every composition k
//!   (the profile), and the boundary pair k = 0 beside it.
//! * **More inputs** (`k-rr:k=K,…` is K-ary randomized response on K-valued inputs, which is
//!   what the k-RR bounds are stated for): the certified range `[lower, upper]` of ε_M(δ) from
//!   `bounds`.  A bound **holds** when it is at or above the upper end, is **violated** when it
//!   is below the lower end — a concrete pair of neighbouring datasets (the witness) has a
//!   larger certified ε — and is **undecided** in between.

use crate::accountants::{Bound, LocalPrivacy, Validity, published_bounds};
use crate::arith::exact::ExactCtx;
use crate::audit::verdict::quotient;
use crate::bounds::range::{BoundsQuery, RangeRow, Target, bounds};
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::Mechanism;
use crate::mechanism::randomizer::Randomizer;
use crate::profile::{Profile, ProfileQuery, ProfileRow, Quantity, profile};
use crate::progress::Stage;
use crate::query::{Backend, EpsilonJob, PairQuery, answer};
use rug::Rational;

/// A comparison over several n at one δ.
#[derive(Clone, Debug)]
pub struct CompareQuery {
    /// The randomizer on its whole input domain.
    pub randomizer: Randomizer,
    /// Its binary-input mechanism when it has two inputs (the exact profile applies).
    pub mechanism: Option<Mechanism>,
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
    /// Certified: `ε_M > bound` — the bound under-reports (with more than two inputs: a
    /// concrete neighbouring pair, the witness, has a larger ε).
    Violated,
    /// The enclosures overlap (or the bound lies inside the certified range).
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
            "stated_for": b.stated_for,
            "eps": b.eps.as_ref().map(Enclosure::to_json),
            "ratio_to_certified": self.ratio.as_ref().map(Enclosure::to_json),
            "status": self.status.name(),
            "arithmetic": b.arithmetic,
        })
    }

    /// A bound held against the certified ε of the mechanism, enclosed below by `lower` and
    /// above by `upper` (the same enclosure for the exact profile; the two ends of the range
    /// otherwise).
    pub fn judged(bound: Bound, lower: &Enclosure, upper: &Enclosure) -> BoundRow {
        let (ratio, status) = match &bound.eps {
            None => (None, Status::Outside),
            Some(eps) => {
                let status = if upper.hi() <= eps.lo() {
                    Status::Holds
                } else if lower.lo() > eps.hi() {
                    Status::Violated
                } else {
                    Status::Undecided
                };
                let certified = Enclosure::new(lower.lo().clone(), upper.hi().clone());
                (quotient(eps, &certified), status)
            }
        };
        BoundRow {
            bound,
            ratio,
            status,
        }
    }
}

/// The certified ε of the mechanism at one n.
#[derive(Clone, Debug)]
pub enum Certified {
    /// Binary inputs: the profile scan over every k behind the mechanism's ε (its proof, for a
    /// certificate), and the certified two-sided ε of the boundary pair `(T_{n,0}, T_{n,1})`.
    Exact {
        scan: Box<(ProfileQuery, Profile)>,
        boundary: Enclosure,
    },
    /// More inputs: the certified range of ε_M(δ), with the pairs attaining each end.
    Range(RangeRow),
}

/// One n.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub n: u64,
    pub certified: Certified,
    pub bounds: Vec<BoundRow>,
}

impl Comparison {
    /// The exact profile's row (binary inputs), or `None` for a range.
    pub fn mechanism(&self) -> Option<&ProfileRow> {
        match &self.certified {
            Certified::Exact { scan, .. } => Some(&scan.1.rows[0]),
            Certified::Range(_) => None,
        }
    }

    /// Enclosures of ε_M(δ) from below and from above.
    pub fn ends(&self) -> (&Enclosure, &Enclosure) {
        match &self.certified {
            Certified::Exact { scan, .. } => (&scan.1.rows[0].value, &scan.1.rows[0].value),
            Certified::Range(row) => (&row.lower.value, &row.upper.value),
        }
    }
}

/// The local parameters and one comparison per n.
pub fn compare(query: &CompareQuery) -> Result<(LocalPrivacy, Vec<Comparison>)> {
    crate::exact::curve::check_target(&query.delta)?;
    let local = LocalPrivacy::of_randomizer(&query.randomizer)?.ok_or_else(|| {
        Error::Unsupported(format!(
            "{}: not ε0-LDP for any finite ε0 (an output has probability 0 under some inputs only); \
             no published amplification bound applies",
            query.randomizer.name
        ))
    })?;
    let mut out = Vec::new();
    let progress = Stage::start("compare", "sizes n", query.ns.len() as u64);
    for &n in &query.ns {
        let certified = match &query.mechanism {
            Some(mechanism) => exact_certified(query, mechanism, n)?,
            None => Certified::Range(
                bounds(&BoundsQuery {
                    randomizer: query.randomizer.clone(),
                    n,
                    target: Target::Epsilon(query.delta.clone()),
                    options: query.options.clone(),
                    backend: query.backend,
                    escalate_above: query.escalate_above,
                })?
                .remove(0),
            ),
        };
        let comparison = Comparison {
            n,
            certified,
            bounds: Vec::new(),
        };
        let (lower, upper) = comparison.ends();
        let bounds = published_bounds(
            &query.randomizer,
            n,
            &query.delta,
            query.options.memory_limit,
            None,
        )?
        .into_iter()
        .map(|bound| BoundRow::judged(bound, lower, upper))
        .collect();
        out.push(Comparison {
            bounds,
            ..comparison
        });
        progress.advance(1);
    }
    Ok((local, out))
}

/// The exact ε_M(δ) of a binary-input mechanism (a profile scan over every k) and its boundary
/// pair's ε.
fn exact_certified(query: &CompareQuery, mechanism: &Mechanism, n: u64) -> Result<Certified> {
    let scan_query = ProfileQuery {
        mechanism: mechanism.clone(),
        n,
        k_range: None,
        quantities: vec![Quantity::Epsilon(query.delta.clone())],
        options: query.options.clone(),
        backend: query.backend,
        exact_ctx: query.exact_ctx,
        prune: true,
        with_ends: false,
        escalate_above: query.escalate_above,
    };
    let scan = profile(&scan_query)?;
    let boundary = answer(
        &PairQuery {
            mechanism: mechanism.clone(),
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
    Ok(Certified::Exact {
        scan: Box::new((scan_query, scan)),
        boundary,
    })
}
