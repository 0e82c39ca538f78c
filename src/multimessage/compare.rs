//! The comparison of issue 24 (Deliver 5): for one binary-input mechanism, n users and m
//! messages, the certified δ of four models side by side, and their certified ratios.
//!
//! * single-message with n users, the pair `(T_{n,k}, T_{n,k+1})`;
//! * single-message with nm users, the pair at `km` of them (the same composition fraction);
//! * unbundled: m messages per user shuffled one by one;
//! * bundled: each user's m messages kept together as one symbol of `Y^m`.
//!
//! Each model's pair (and, with `profile`, its mechanism-wide profile δ_M) is an ordinary
//! certified computation of the pair engine or the profile on the model's mechanism.  The
//! unbundled histogram is a function of the bundled one (count each bundle's messages), so data
//! processing gives `δ_unbundled ≤ δ_bundled` at every ε, k and direction, and for the profiles
//! (proofs-notes/multi-message.md); every row checks it on the enclosures and says whether they
//! decide it.  Part I §11 lists finite-n dominance between the two models as open: the report
//! gives the measured gap and nothing beyond it.

use crate::arith::exact::ExactCtx;
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::{Mechanism, Messages};
use crate::profile::{Profile, ProfileQuery, Quantity};
use crate::query::{Backend, Computed, DeltaJob, DeltaRow, PairQuery, Threshold, answer};
use rug::Rational;

/// One of the four models the comparison holds side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// One message per user, n users.
    Single,
    /// One message per user, nm users (km of them hold 1).
    SingleNm,
    Unbundled,
    Bundled,
}

impl Model {
    pub const ALL: [Model; 4] = [
        Model::Single,
        Model::SingleNm,
        Model::Unbundled,
        Model::Bundled,
    ];

    /// The key reports use.
    pub fn key(&self) -> &'static str {
        match self {
            Model::Single => "single",
            Model::SingleNm => "single_nm",
            Model::Unbundled => "unbundled",
            Model::Bundled => "bundled",
        }
    }

    /// The model read back from [`Model::key`].
    pub fn from_key(key: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Users and ones of the model's pair for the comparison's (n, k, m).
    pub fn users(&self, n: u64, k: u64, m: u32) -> (u64, u64) {
        match self {
            Model::SingleNm => (n * u64::from(m), k * u64::from(m)),
            _ => (n, k),
        }
    }

    /// The model's mechanism from the single-message one.
    pub fn mechanism(&self, base: &Mechanism, m: u32) -> Result<Mechanism> {
        match self {
            Model::Single | Model::SingleNm => Ok(base.clone()),
            Model::Unbundled | Model::Bundled => super::with_messages(
                base,
                Messages {
                    count: m,
                    bundled: *self == Model::Bundled,
                },
            ),
        }
    }

    /// A short description for the text report.
    pub fn text(&self, n: u64, m: u32) -> String {
        match self {
            Model::Single => format!("single message, n = {n}"),
            Model::SingleNm => format!("single message, n·m = {}", n * u64::from(m)),
            Model::Unbundled => format!("{m} messages, unbundled"),
            Model::Bundled => format!("{m} messages, bundled"),
        }
    }
}

/// The ratios the report shows, as (key, numerator, denominator).
pub const RATIOS: [(&str, Model, Model); 3] = [
    ("unbundled_over_single", Model::Unbundled, Model::Single),
    ("bundled_over_unbundled", Model::Bundled, Model::Unbundled),
    (
        "unbundled_over_single_nm",
        Model::Unbundled,
        Model::SingleNm,
    ),
];

/// The question: a single-message mechanism, n users (k of the others holding 1), m messages,
/// the thresholds, and whether to add each model's mechanism-wide profile.
#[derive(Clone, Debug)]
pub struct MessagesQuery {
    pub mechanism: Mechanism,
    pub n: u64,
    pub k: u64,
    pub messages: u32,
    pub thresholds: Vec<Threshold>,
    pub profile: bool,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    pub escalate_above: Option<f64>,
}

/// One model's certified answers.
pub struct ModelAnswer {
    pub model: Model,
    pub pair: PairQuery,
    pub computed: Computed<Vec<DeltaRow>>,
    pub profile: Option<(ProfileQuery, Profile)>,
}

/// What the enclosures say about `unbundled ≤ bundled` at one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dominance {
    /// `hi(unbundled) ≤ lo(bundled)`: certified.
    Certified,
    /// The enclosures overlap (e.g. both 0, or equal values): consistent, not decided at this
    /// precision.
    Overlapping,
}

impl Dominance {
    pub fn key(&self) -> &'static str {
        match self {
            Dominance::Certified => "certified",
            Dominance::Overlapping => "overlapping",
        }
    }

    /// Judges `unbundled ≤ bundled`; an unbundled value certainly above the bundled one
    /// contradicts data processing and is an internal error (no report).
    pub fn of(unbundled: &Enclosure, bundled: &Enclosure, what: &str) -> Result<Dominance> {
        if unbundled.hi() <= bundled.lo() {
            Ok(Dominance::Certified)
        } else if bundled.hi() < unbundled.lo() {
            Err(Error::Internal(format!(
                "{what}: the unbundled {unbundled} lies above the bundled {bundled}, against data \
                 processing; no result is reported"
            )))
        } else {
            Ok(Dominance::Overlapping)
        }
    }
}

/// `a / b` for enclosures of non-negative values, with exact endpoints: `+∞` where b may be 0
/// and a is not (one message with δ = 0 exactly, m messages with δ > 0); `None` for 0/0 (both
/// may be 0) or a negative end.
pub fn ratio(a: &Enclosure, b: &Enclosure) -> Option<Enclosure> {
    let finite = |e: &Endpoint| match e {
        Endpoint::Finite(q) => Some(q.clone()),
        _ => None,
    };
    let (a_lo, b_lo) = (finite(a.lo())?, finite(b.lo())?);
    if a_lo < 0 || b_lo < 0 {
        return None;
    }
    let upper = |x: &Endpoint| finite(x);
    let (a_hi, b_hi) = (upper(a.hi()), upper(b.hi()));
    let lo = match &b_hi {
        Some(h) if *h > 0 => Endpoint::Finite(Rational::from(&a_lo / h)),
        // b = 0 exactly: a/b is +∞ where a > 0.
        Some(_) if a_lo > 0 => Endpoint::PosInf,
        Some(_) => return None,
        None => Endpoint::Finite(Rational::new()),
    };
    let hi = match (&a_hi, b_lo > 0) {
        (Some(h), true) => Endpoint::Finite(Rational::from(h / &b_lo)),
        (Some(h), false) if *h == 0 => return None,
        _ => Endpoint::PosInf,
    };
    Some(Enclosure::new(lo, hi))
}

/// Every model's pair and (with `profile`) profile, certified, with the data-processing check
/// of every row ([`dominance`]).
pub fn compare_messages(q: &MessagesQuery) -> Result<(Vec<ModelAnswer>, Vec<RowDominance>)> {
    if q.messages < 2 {
        return Err(Error::argument(
            "--messages",
            "the comparison needs at least 2 messages per user",
        ));
    }
    crate::exact::pair::check_composition(q.n, q.k)?;
    let mut out = Vec::new();
    for model in Model::ALL {
        let mechanism = model.mechanism(&q.mechanism, q.messages)?;
        let (n, k) = model.users(q.n, q.k, q.messages);
        let pair = PairQuery {
            mechanism: mechanism.clone(),
            n,
            k,
            options: q.options.clone(),
            backend: q.backend,
            exact_ctx: q.exact_ctx,
            escalate_above: q.escalate_above,
        };
        let named = |e: Error| match e {
            Error::TooLarge(why) => Error::TooLarge(format!(
                "the {} model: {why} (or fewer --messages)",
                model.key()
            )),
            other => other,
        };
        let computed = answer(
            &pair,
            &DeltaJob {
                thresholds: q.thresholds.clone(),
            },
        )
        .map_err(named)?;
        let profile = if q.profile {
            let query = ProfileQuery {
                mechanism,
                n,
                k_range: None,
                quantities: q.thresholds.iter().cloned().map(Quantity::Delta).collect(),
                options: q.options.clone(),
                backend: q.backend,
                exact_ctx: q.exact_ctx,
                prune: true,
                with_ends: false,
                escalate_above: q.escalate_above,
            };
            let profile = crate::profile::profile(&query).map_err(named)?;
            Some((query, profile))
        } else {
            None
        };
        out.push(ModelAnswer {
            model,
            pair,
            computed,
            profile,
        });
    }
    let rows = dominance(&out)?;
    Ok((out, rows))
}

/// What the enclosures say about `unbundled ≤ bundled` at one threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowDominance {
    pub qp: Dominance,
    pub pq: Dominance,
    /// The mechanism-wide profiles (when computed).
    pub profile: Option<Dominance>,
}

/// The model's answer among `answers`.
pub fn answer_of(answers: &[ModelAnswer], model: Model) -> Result<&ModelAnswer> {
    answers
        .iter()
        .find(|a| a.model == model)
        .ok_or_else(|| Error::Internal(format!("the {} model is missing", model.key())))
}

/// The data-processing check on every value: `unbundled ≤ bundled` (pairs and profiles).
pub fn dominance(answers: &[ModelAnswer]) -> Result<Vec<RowDominance>> {
    let (u, b) = (
        answer_of(answers, Model::Unbundled)?,
        answer_of(answers, Model::Bundled)?,
    );
    let mut rows = Vec::new();
    for (i, (ru, rb)) in u.computed.result.iter().zip(&b.computed.result).enumerate() {
        let eps = ru.threshold.eps_text();
        let profile = match (&u.profile, &b.profile) {
            (Some((_, pu)), Some((_, pb))) => Some(Dominance::of(
                &pu.rows[i].value,
                &pb.rows[i].value,
                &format!("profile δ_M at ε = {eps}"),
            )?),
            _ => None,
        };
        rows.push(RowDominance {
            qp: Dominance::of(&ru.qp, &rb.qp, &format!("δ_{{Q‖P}} at ε = {eps}"))?,
            pq: Dominance::of(&ru.pq, &rb.pq, &format!("δ_{{P‖Q}} at ε = {eps}"))?,
            profile,
        });
    }
    Ok(rows)
}
