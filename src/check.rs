//! The checker: every asymptotic prediction of Part I held against the certified value it
//! approximates, with the error, a verdict, and (over a sweep of n at fixed k/n and fixed t)
//! the observed order of convergence beside the order the theorem claims.
//!
//! Verdicts compare the prediction formula's enclosure `p` with the certified enclosure `e`:
//! `optimistic` when `p < e` certainly (the prediction under-reports: unsafe as a guarantee),
//! `conservative` when `p ≥ e` certainly, `inside` when the two overlap.

use crate::arith::mpfr::MpfrInterval;
use crate::arith::{Scalar, Transcendental};
use crate::asymptotic::chernoff::{ChernoffBound, chernoff_bound};
use crate::asymptotic::predictions::{self, PREDICTION_CTX, Prediction};
use crate::asymptotic::{Constants, constants};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::curve::{self, Direction};
use crate::exact::divergence::{Divergence, f_divergence};
use crate::exact::law::PairLaw;
use crate::mechanism::Mechanism;
use crate::query::{Computed, PairJob, PairQuery, Widths, answer};
use rug::Rational;

/// Where a curve prediction is checked: at `t` (ε = tμ_n) or at ε.
#[derive(Clone, Debug)]
pub enum CurvePoint {
    T(Rational),
    Eps(Rational),
}

/// The question: a pair, points on the curve, and optionally a sweep of n.
#[derive(Clone, Debug)]
pub struct CheckQuery {
    pub pair: PairQuery,
    pub points: Vec<CurvePoint>,
    /// Further values of n (k scaled to keep k/n fixed, t fixed).
    pub sweep: Vec<u64>,
    /// Also sample the curves on this many ε in `[0, ε_max]` for a picture.
    pub plot_samples: usize,
}

/// How a prediction compares with the certified value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Inside,
    Conservative,
    Optimistic,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Inside => "inside",
            Verdict::Conservative => "conservative",
            Verdict::Optimistic => "optimistic",
        }
    }

    pub(crate) fn of(p: &Enclosure, e: &Enclosure) -> Verdict {
        if p.hi() < e.lo() {
            Verdict::Optimistic
        } else if p.lo() >= e.hi() {
            Verdict::Conservative
        } else {
            Verdict::Inside
        }
    }
}

/// One prediction against one certified value.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// What predicts, e.g. `local curve`.
    pub prediction: &'static str,
    /// The result it comes from, e.g. `Part I Theorem 7.3`.
    pub source: &'static str,
    /// The certified quantity, e.g. `delta_qp`.
    pub quantity: &'static str,
    /// Index into the check's points, for curve quantities.
    pub point: Option<usize>,
    pub predicted: Prediction,
    pub certified: Enclosure,
    /// `predicted − certified` (midpoints; display).
    pub abs_error: f64,
    /// `abs_error / certified`.
    pub rel_error: f64,
    pub verdict: Verdict,
    /// The error order the theorem claims, as text, and as an exponent of n when it has one.
    pub claimed: &'static str,
    pub claimed_exponent: Option<f64>,
    /// Set when the composition lies outside the theorem's stated range (interior k/n).
    pub scope_note: Option<&'static str>,
}

impl Comparison {
    /// The same prediction against another certified enclosure: errors and verdict follow it.
    pub fn against(self, certified: Enclosure) -> Comparison {
        let exact = certified.mid_f64();
        let abs_error = self.predicted.value() - exact;
        Comparison {
            verdict: Verdict::of(&self.predicted.formula, &certified),
            certified,
            abs_error,
            rel_error: abs_error / exact,
            ..self
        }
    }
}

/// A curve point resolved at one n.
#[derive(Clone, Debug)]
pub struct ResolvedPoint {
    pub t: Enclosure,
    pub eps: Enclosure,
}

/// A sampled picture: ε grid, certified bands and prediction lines (all as doubles).
#[derive(Clone, Debug, Default)]
pub struct CurveSamples {
    pub eps: Vec<f64>,
    pub qp: Vec<(f64, f64)>,
    pub pq: Vec<(f64, f64)>,
    pub lines: Vec<(&'static str, Vec<f64>)>,
}

/// The certified values a check's comparisons rest on, as its certificate records them.
#[derive(Clone, Debug)]
pub struct CheckEvidence {
    /// Per point, the rational bracket `[ε_lo, ε_hi]` of its ε.
    pub brackets: Vec<(Rational, Rational)>,
    /// Per point, `[[δ_qp, δ_pq] at ε_lo, [δ_qp, δ_pq] at ε_hi]`; a point's certified δ is
    /// `[δ(ε_hi).lo, δ(ε_lo).hi]` (δ is non-increasing in ε).
    pub at_ends: Vec<[[Enclosure; 2]; 2]>,
    /// The certified divergences, by name.
    pub divergences: Vec<(&'static str, Enclosure)>,
}

/// Everything computed at one n.
#[derive(Clone, Debug)]
pub struct CheckAt {
    pub n: u64,
    pub k: u64,
    pub pi: Rational,
    pub constants: Constants,
    pub mu_n: Enclosure,
    pub mu_mix: Enclosure,
    pub points: Vec<ResolvedPoint>,
    pub comparisons: Vec<Comparison>,
    pub chernoff: Vec<Option<ChernoffBound>>,
    pub samples: Option<CurveSamples>,
    pub arithmetic: String,
    /// The pair engine that computed the certified values.
    pub engine: &'static str,
    pub evidence: CheckEvidence,
}

/// The fit of `ln |error|` against `ln n` for one comparison over the sweep.
#[derive(Clone, Debug)]
pub struct OrderFit {
    pub prediction: &'static str,
    pub quantity: &'static str,
    pub point: Option<usize>,
    /// `(n, abs error)`.
    pub errors: Vec<(u64, f64)>,
    pub observed_exponent: Option<f64>,
    pub claimed: &'static str,
    pub claimed_exponent: Option<f64>,
}

impl OrderFit {
    /// As `check --json` prints it under `sweep`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "prediction": self.prediction,
            "quantity": self.quantity,
            "point": self.point,
            "errors": self.errors.iter().map(|(n, e)| serde_json::json!({ "n": n, "abs_error": e })).collect::<Vec<_>>(),
            "observed_order": self.observed_exponent,
            "claimed_order": self.claimed,
            "claimed_exponent": self.claimed_exponent,
        })
    }
}

/// The whole check.
#[derive(Clone, Debug)]
pub struct CheckReport {
    pub base: CheckAt,
    pub sweep: Vec<CheckAt>,
    pub fits: Vec<OrderFit>,
}

impl CheckReport {
    /// The comparisons whose prediction certainly under-reports.
    pub fn optimistic(&self) -> impl Iterator<Item = &Comparison> {
        self.base
            .comparisons
            .iter()
            .filter(|c| c.verdict == Verdict::Optimistic)
    }
}

/// Rational bounds `lo ≤ x ≤ hi` of an enclosure of a finite ε.
fn bracket(x: &Enclosure) -> Result<(Rational, Rational)> {
    match (x.lo(), x.hi()) {
        (Endpoint::Finite(a), Endpoint::Finite(b)) => Ok((a.clone(), b.clone())),
        _ => Err(Error::Unsupported(format!(
            "ε = tμ_n could not be enclosed (got {x})"
        ))),
    }
}

/// The certified values one pair provides to the checker.
struct CheckJob {
    /// Rational brackets `[ε_lo, ε_hi]` of the points' ε.
    brackets: Vec<(Rational, Rational)>,
    /// ε grid for a picture.
    grid: Vec<Rational>,
}

#[derive(Clone, Debug)]
struct CertifiedValues {
    qp: Vec<Enclosure>,
    pq: Vec<Enclosure>,
    /// Per point, `[[δ_qp, δ_pq] at ε_lo, [δ_qp, δ_pq] at ε_hi]`.
    at_ends: Vec<[[Enclosure; 2]; 2]>,
    grid_qp: Vec<Enclosure>,
    grid_pq: Vec<Enclosure>,
    divergences: Vec<(&'static str, Enclosure)>,
}

impl PairJob for CheckJob {
    type Output = CertifiedValues;
    fn run<S: Scalar>(&self, law: &PairLaw<S>, ctx: &S::Ctx) -> Result<CertifiedValues> {
        // δ is non-increasing in ε: at an ε known only to lie in [lo, hi] it lies in
        // [δ(hi).lo, δ(lo).hi].
        let at_ends: Vec<[[Enclosure; 2]; 2]> = self
            .brackets
            .iter()
            .map(|(lo, hi)| {
                [lo, hi].map(|e| {
                    [Direction::Qp, Direction::Pq].map(|dir| curve::delta(law, dir, e, ctx))
                })
            })
            .collect();
        let at = |d: usize| -> Vec<Enclosure> {
            at_ends
                .iter()
                .map(|[lo, hi]| Enclosure::new(hi[d].lo().clone(), lo[d].hi().clone()))
                .collect()
        };
        let el = law.to_elementary(ctx);
        let ectx = S::elementary_ctx(ctx);
        let divergences = [
            ("jsd", Divergence::Jsd),
            ("kl_qp", Divergence::KlQp),
            ("kl_pq", Divergence::KlPq),
            ("chi2_qp", Divergence::Chi2Qp),
            ("hellinger2", Divergence::Hellinger2),
        ]
        .into_iter()
        .map(|(name, d)| (name, f_divergence(&el, &d, &ectx)))
        .collect();
        Ok(CertifiedValues {
            qp: at(0),
            pq: at(1),
            at_ends,
            grid_qp: self
                .grid
                .iter()
                .map(|e| curve::delta(law, Direction::Qp, e, ctx))
                .collect(),
            grid_pq: self
                .grid
                .iter()
                .map(|e| curve::delta(law, Direction::Pq, e, ctx))
                .collect(),
            divergences,
        })
    }
}

impl Widths for CertifiedValues {
    fn worst_relative_width(&self, floor: f64) -> f64 {
        self.qp
            .iter()
            .chain(&self.pq)
            .chain(self.divergences.iter().map(|(_, e)| e))
            .filter(|e| e.hi().to_f64() >= floor)
            .map(|e| e.relative_width())
            .fold(0.0, f64::max)
    }
}

/// A prediction's provenance: its formula's name, the result it comes from, and the error
/// order that result claims.
struct Claim {
    prediction: &'static str,
    source: &'static str,
    order: &'static str,
    exponent: Option<f64>,
}

const LOCAL_QP: Claim = Claim {
    prediction: "local curve μ_n{φ(t) − tΦ(−t)}",
    source: "Part I Theorem 7.3",
    order: "O(n^-1)",
    exponent: Some(-1.0),
};
const LOCAL_PQ: Claim = Claim {
    source: "Part I Corollary 7.5",
    ..LOCAL_QP
};
const GDP_QP: Claim = Claim {
    prediction: "GDP, fixed composition μ_n = √(I_π/n)",
    source: "Part I Corollary 7.4",
    order: "O(n^-1)",
    exponent: Some(-1.0),
};
const GDP_PQ: Claim = Claim {
    source: "Part I Corollary 7.5 with (9)",
    ..GDP_QP
};
const GDP_MIX: Claim = Claim {
    prediction: "GDP, mixture proxy μ = √(I_π^mix/n)",
    source: "Part I §8.3 (privacy-optimistic)",
    order: "inconsistent (wrong √n-limit)",
    exponent: None,
};
const RR_BOUNDARY: Claim = Claim {
    prediction: "randomized-response normal approximation (§10; equals the fixed-composition GDP at fixed ε0)",
    source: "Part I §10 (error C√a_n, a_n = e^ε0/n)",
    order: "O(n^-1/2)",
    exponent: Some(-0.5),
};
const CHERNOFF: Claim = Claim {
    prediction: "Chernoff bound (certified upper bound)",
    source: "Part I §8.2",
    order: "upper bound",
    exponent: None,
};
const JSD_LEADING: Claim = Claim {
    prediction: "I_π/(8n)",
    source: "Part I §6",
    order: "O(n^-2)",
    exponent: Some(-2.0),
};
const JSD_CANONICAL: Claim = Claim {
    prediction: "χ²/(8n) − μ3/(16n²) + 7(χ²)²/(64n²)",
    source: "Part I §6 (canonical expansion)",
    order: "O(n^-3)",
    exponent: Some(-3.0),
};
/// The predictions for users sending m unbundled messages: the pair is the single-message one
/// at nm users and distance m, whose log-likelihood ratio is m single steps, so the local scale
/// is `μ = √(m·I_π/n)` (Part I §9.2, whose statement is lost: proofs-notes/multi-message.md).
/// No error order is proved for them; `--n-sweep` measures one.
const LOCAL_UNBUNDLED: Claim = Claim {
    prediction: "local curve μ{φ(t) − tΦ(−t)}, μ = √(m·I_π/n)",
    source: "Part I Theorem 7.3 at distance m (§9.2; multi-message.md)",
    order: "not proved for m > 1",
    exponent: None,
};
const GDP_UNBUNDLED: Claim = Claim {
    prediction: "GDP, unbundled μ = √(m·I_π/n)",
    source: "Part I §9.2 (its statement is lost; derived in multi-message.md)",
    ..LOCAL_UNBUNDLED
};
const GDP_MIX_UNBUNDLED: Claim = Claim {
    prediction: "GDP, mixture proxy μ = √(m·I_π^mix/n)",
    source: "Part I §8.3 at distance m (privacy-optimistic)",
    ..LOCAL_UNBUNDLED
};
const JSD_UNBUNDLED: Claim = Claim {
    prediction: "m·I_π/(8n)",
    source: "Part I §6 at distance m (multi-message.md)",
    ..LOCAL_UNBUNDLED
};

const SMOOTH_UNBUNDLED: Claim = Claim {
    prediction: "",
    source: "Part I §6 at distance m (multi-message.md)",
    order: "not proved for m > 1",
    exponent: None,
};

const SMOOTH: Claim = Claim {
    prediction: "",
    source: "Part I §6 (smooth f-divergences)",
    order: "o(n^-1)",
    exponent: None,
};

fn compare(
    claim: &Claim,
    quantity: &'static str,
    point: Option<usize>,
    predicted: Prediction,
    certified: &Enclosure,
) -> Comparison {
    Comparison {
        prediction: claim.prediction,
        source: claim.source,
        quantity,
        point,
        verdict: Verdict::Inside,
        predicted,
        certified: certified.clone(),
        abs_error: 0.0,
        rel_error: 0.0,
        claimed: claim.order,
        claimed_exponent: claim.exponent,
        scope_note: None,
    }
    .against(certified.clone())
}

/// Marks a Gaussian-tangent comparison at a boundary composition, where Part I states its
/// rates for interior k/n only.
fn at_boundary(mut c: Comparison, boundary: bool) -> Comparison {
    if boundary {
        c.scope_note = Some("the theorem is stated for interior k/n");
    }
    c
}

/// True for binary randomized response (two outputs, W1 the mirror of W0): the setting of
/// Part I §10.
fn is_binary_rr(m: &Mechanism) -> bool {
    m.d() == 2 && m.rows[0][0] == m.rows[1][1] && m.rows[0][1] == m.rows[1][0]
}

/// Runs the checker at one (n, k) with t given (as enclosures) for every point.
fn check_at(
    query: &CheckQuery,
    n: u64,
    k: u64,
    ts: &[MpfrInterval],
    eps_max: Option<&Rational>,
) -> Result<CheckAt> {
    let mechanism = &query.pair.mechanism;
    let pi = Rational::from((k, n));
    let consts = constants(mechanism, &pi)?;
    let c = &consts.enclosed;
    let ctx = &PREDICTION_CTX;
    // Users sending m unbundled messages: the pair is m single steps apart, the constants of
    // the local scale m times the per-message ones.
    let messages = mechanism.unbundled_messages() as u64;
    let unbundled = messages > 1;
    let scale = MpfrInterval::from_u64(messages, ctx);
    let i_pi = c.i_pi.mul(&scale);
    let mu = predictions::mu_messages(&c.i_pi, messages, n);
    let mu_mix = predictions::mu_messages(&c.i_mix, messages, n);
    let (local_claims, gdp_claims, mix_claim) = if unbundled {
        (
            [&LOCAL_UNBUNDLED, &LOCAL_UNBUNDLED],
            [&GDP_UNBUNDLED, &GDP_UNBUNDLED],
            &GDP_MIX_UNBUNDLED,
        )
    } else {
        ([&LOCAL_QP, &LOCAL_PQ], [&GDP_QP, &GDP_PQ], &GDP_MIX)
    };
    let eps: Vec<MpfrInterval> = ts.iter().map(|t| t.mul(&mu)).collect();
    let grid: Vec<Rational> = match (eps_max, query.plot_samples) {
        (Some(max), s) if s > 1 => (1..=s)
            .map(|i| max * Rational::from((i as u64, s as u64)))
            .collect(),
        _ => Vec::new(),
    };
    let brackets: Vec<(Rational, Rational)> = eps
        .iter()
        .map(|e| bracket(&e.enclosure()))
        .collect::<Result<_>>()?;
    let job = CheckJob {
        brackets: brackets.clone(),
        grid: grid.clone(),
    };
    let pair_query = PairQuery {
        n,
        k,
        ..query.pair.clone()
    };
    let Computed {
        result: certified,
        arithmetic,
        engine,
        ..
    } = answer(&pair_query, &job)?;
    let mut comparisons = Vec::new();
    let canonical = k == 0;
    let boundary = k == 0 || k + 1 == n;
    let rr = canonical && !unbundled && is_binary_rr(mechanism);
    let channel = mechanism.channel::<MpfrInterval>(ctx)?;
    let mut chernoff = Vec::new();
    for (i, (t, e)) in ts.iter().zip(&eps).enumerate() {
        let local = predictions::local_curve(&mu, t);
        let gdp_fixed = predictions::gdp(e, &mu);
        let gdp_mix = predictions::gdp(e, &mu_mix);
        for (quantity, value, local_claim, gdp_claim) in [
            ("delta_qp", &certified.qp[i], local_claims[0], gdp_claims[0]),
            ("delta_pq", &certified.pq[i], local_claims[1], gdp_claims[1]),
        ] {
            let local_cmp = compare(local_claim, quantity, Some(i), local.clone(), value);
            comparisons.push(at_boundary(local_cmp, boundary));
            let gdp_cmp = compare(gdp_claim, quantity, Some(i), gdp_fixed.clone(), value);
            comparisons.push(at_boundary(gdp_cmp, boundary));
            // At π = 0 the mixture constant equals I_0: the proxy coincides with the
            // fixed-composition prediction and is not reported twice.
            if k > 0 {
                comparisons.push(compare(
                    mix_claim,
                    quantity,
                    Some(i),
                    gdp_mix.clone(),
                    value,
                ));
            }
            if rr {
                let chi = predictions::mu_n(&c.chi2_10, n);
                comparisons.push(compare(
                    &RR_BOUNDARY,
                    quantity,
                    Some(i),
                    predictions::gdp(e, &chi),
                    value,
                ));
            }
        }
        // The Chernoff bound is the single-message canonical pair's.
        if canonical && !unbundled {
            let bound = chernoff_bound(&channel, n, &e.exp());
            let as_prediction = Prediction {
                formula: bound.bound.clone(),
            };
            let cmp = compare(
                &CHERNOFF,
                "delta_qp",
                Some(i),
                as_prediction,
                &certified.qp[i],
            );
            if cmp.verdict == Verdict::Optimistic {
                return Err(Error::Internal(format!(
                    "the certified Chernoff bound {} lies below the certified δ {}; no result is reported",
                    cmp.predicted.formula, cmp.certified
                )));
            }
            comparisons.push(cmp);
            chernoff.push(Some(bound));
        } else {
            chernoff.push(None);
        }
    }
    let divergence = |name: &str| {
        certified
            .divergences
            .iter()
            .find(|(d, _)| *d == name)
            .map(|(_, e)| e.clone())
            .expect("computed")
    };
    let jsd = divergence("jsd");
    comparisons.push(compare(
        if unbundled {
            &JSD_UNBUNDLED
        } else {
            &JSD_LEADING
        },
        "jsd",
        None,
        predictions::jsd_leading(&i_pi, n),
        &jsd,
    ));
    if canonical && !unbundled {
        comparisons.push(compare(
            &JSD_CANONICAL,
            "jsd",
            None,
            predictions::jsd_canonical(&c.chi2_10, &c.mu3, n),
            &jsd,
        ));
    }
    let single = [
        "f''(1)/2 · I_π/n = I_π/(2n)",
        "f''(1)/2 · I_π/n = I_π/n",
        "f''(1)/2 · I_π/n = I_π/(8n)",
    ];
    let at_distance_m = [
        "f''(1)/2 · m·I_π/n = m·I_π/(2n)",
        "f''(1)/2 · m·I_π/n = m·I_π/n",
        "f''(1)/2 · m·I_π/n = m·I_π/(8n)",
    ];
    let labels = if unbundled { at_distance_m } else { single };
    for (quantity, f_second, label) in [
        ("kl_qp", Rational::from(1), labels[0]),
        ("kl_pq", Rational::from(1), labels[0]),
        ("chi2_qp", Rational::from(2), labels[1]),
        ("hellinger2", Rational::from((1, 4)), labels[2]),
    ] {
        let claim = Claim {
            prediction: label,
            ..if unbundled { SMOOTH_UNBUNDLED } else { SMOOTH }
        };
        let predicted = predictions::f_divergence_leading(&f_second, &i_pi, n);
        comparisons.push(compare(
            &claim,
            quantity,
            None,
            predicted,
            &divergence(quantity),
        ));
    }
    let samples = (!grid.is_empty()).then(|| {
        let grid_eps: Vec<MpfrInterval> = grid
            .iter()
            .map(|g| MpfrInterval::from_rational(g, ctx))
            .collect();
        let band = |v: &[Enclosure]| {
            v.iter()
                .map(|e| (e.lo().to_f64(), e.hi().to_f64()))
                .collect()
        };
        let line = |f: &dyn Fn(&MpfrInterval) -> Prediction| {
            grid_eps.iter().map(|e| f(e).value()).collect::<Vec<f64>>()
        };
        let mut lines = vec![
            (
                "local curve μ_n{φ(t) − tΦ(−t)}",
                line(&|e| predictions::local_curve(&mu, &e.div(&mu))),
            ),
            (
                "GDP, fixed composition",
                line(&|e| predictions::gdp(e, &mu)),
            ),
            (
                "GDP, mixture proxy",
                line(&|e| predictions::gdp(e, &mu_mix)),
            ),
        ];
        if canonical && !unbundled {
            lines.push((
                "Chernoff bound",
                line(&|e| Prediction {
                    formula: chernoff_bound(&channel, n, &e.exp()).bound,
                }),
            ));
        }
        CurveSamples {
            eps: grid.iter().map(|g| g.to_f64()).collect(),
            qp: band(&certified.grid_qp),
            pq: band(&certified.grid_pq),
            lines,
        }
    });
    Ok(CheckAt {
        n,
        k,
        pi,
        mu_n: mu.enclosure(),
        mu_mix: mu_mix.enclosure(),
        points: ts
            .iter()
            .zip(&eps)
            .map(|(t, e)| ResolvedPoint {
                t: t.enclosure(),
                eps: e.enclosure(),
            })
            .collect(),
        comparisons,
        chernoff,
        samples,
        constants: consts,
        arithmetic,
        engine,
        evidence: CheckEvidence {
            brackets,
            at_ends: certified.at_ends.clone(),
            divergences: certified.divergences.clone(),
        },
    })
}

/// Least-squares slope of `ln |e|` against `ln n` (at least two non-zero errors).
fn slope(errors: &[(u64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = errors
        .iter()
        .filter(|(_, e)| *e != 0.0 && e.is_finite())
        .map(|(n, e)| ((*n as f64).ln(), e.abs().ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let m = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / m, sy / m);
    let (num, den) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    (den > 0.0).then(|| num / den)
}

/// The k of a sweep's size `m`: `k·m/n` rounded to nearest (halves up), below `m`, so that
/// k/n stays fixed as far as whole users allow.
pub fn sweep_k(n: u64, k: u64, m: u64) -> u64 {
    (Rational::from(k) * m / n + Rational::from((1, 2)))
        .floor()
        .numer()
        .to_u64()
        .unwrap_or(0)
        .min(m - 1)
}

/// The order fits of a sweep: for every comparison of the base n (but the Chernoff bound's,
/// which claims no order), its errors at every n where the same comparison is made, and the
/// slope of their logarithms.  `all` holds each n's comparisons; an n given twice counts once.
pub fn order_fits(base: &[Comparison], mut all: Vec<(u64, &[Comparison])>) -> Vec<OrderFit> {
    all.sort_by_key(|a| a.0);
    all.dedup_by_key(|a| a.0);
    base.iter()
        .filter(|c| c.claimed != CHERNOFF.order)
        .map(|c| {
            // Matched by what is compared (the set of comparisons can differ between n, e.g.
            // when k/n rounds to 0 and the canonical ones appear).
            let errors: Vec<(u64, f64)> = all
                .iter()
                .filter_map(|(n, comparisons)| {
                    comparisons
                        .iter()
                        .find(|d| {
                            d.prediction == c.prediction
                                && d.quantity == c.quantity
                                && d.point == c.point
                        })
                        .map(|d| (*n, d.abs_error))
                })
                .collect();
            OrderFit {
                prediction: c.prediction,
                quantity: c.quantity,
                point: c.point,
                observed_exponent: slope(&errors),
                errors,
                claimed: c.claimed,
                claimed_exponent: c.claimed_exponent,
            }
        })
        .collect()
}

/// Runs the whole check.
pub fn check(query: &CheckQuery) -> Result<CheckReport> {
    let (n, k) = (query.pair.n, query.pair.k);
    crate::exact::pair::check_composition(n, k)?;
    if query.points.is_empty() {
        return Err(Error::argument("--t", "give at least one t (or --eps)"));
    }
    let pi = Rational::from((k, n));
    let base_constants = constants(&query.pair.mechanism, &pi)?;
    if base_constants.enclosed.i_pi.is_exact_zero()
        || !MpfrInterval::zero(&PREDICTION_CTX).certainly_below(&base_constants.enclosed.i_pi)
    {
        return Err(Error::Unsupported(format!(
            "{}: I_π = 0 (W0 = W1 carries no signal), so the local scale μ_n = 0 and the predictions are undefined",
            query.pair.mechanism.name
        )));
    }
    let messages = query.pair.mechanism.unbundled_messages() as u64;
    let mu = predictions::mu_messages(&base_constants.enclosed.i_pi, messages, n);
    // t for every point: given, or ε/μ_n at the base n (kept fixed across the sweep).
    let ts: Vec<MpfrInterval> = query
        .points
        .iter()
        .map(|p| match p {
            CurvePoint::T(t) => MpfrInterval::from_rational(t, &PREDICTION_CTX),
            CurvePoint::Eps(e) => MpfrInterval::from_rational(e, &PREDICTION_CTX).div(&mu),
        })
        .collect();
    for (t, p) in ts.iter().zip(&query.points) {
        let eps = t.mul(&mu).approx_f64();
        if eps.is_nan() || eps > 700.0 {
            let field = if matches!(p, CurvePoint::T(_)) {
                "--t"
            } else {
                "--eps"
            };
            return Err(Error::argument(
                field,
                format!("ε = tμ_n ≈ {eps:e} exceeds 700"),
            ));
        }
    }
    let eps_max = query.plot_samples.gt(&1).then(|| {
        let largest = ts
            .iter()
            .map(|t| t.mul(&mu).approx_f64())
            .fold(0.0, f64::max);
        Rational::from_f64((1.5 * largest).clamp(1e-6, 700.0)).expect("finite")
    });
    let base = check_at(query, n, k, &ts, eps_max.as_ref())?;
    let mut sweep = Vec::new();
    for &m in &query.sweep {
        if m == 0 {
            return Err(Error::argument("--n-sweep", "every n must be at least 1"));
        }
        if m == n {
            sweep.push(CheckAt {
                samples: None,
                ..base.clone()
            });
            continue;
        }
        sweep.push(check_at(query, m, sweep_k(n, k, m), &ts, None)?);
    }
    let fits = if sweep.is_empty() {
        Vec::new()
    } else {
        let mut all: Vec<(u64, &[Comparison])> =
            sweep.iter().map(|a| (a.n, &a.comparisons[..])).collect();
        all.push((base.n, &base.comparisons));
        order_fits(&base.comparisons, all)
    };
    Ok(CheckReport { base, sweep, fits })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(lo: i64, hi: i64) -> Enclosure {
        Enclosure::from_rationals(Rational::from(lo), Rational::from(hi))
    }

    #[test]
    fn verdicts_are_decided_by_the_enclosures() {
        assert_eq!(Verdict::of(&e(1, 2), &e(3, 4)), Verdict::Optimistic);
        assert_eq!(Verdict::of(&e(5, 6), &e(3, 4)), Verdict::Conservative);
        assert_eq!(Verdict::of(&e(4, 6), &e(3, 4)), Verdict::Conservative);
        assert_eq!(Verdict::of(&e(2, 3), &e(3, 4)), Verdict::Inside);
        assert_eq!(Verdict::of(&e(3, 4), &e(2, 5)), Verdict::Inside);
    }

    #[test]
    fn slope_recovers_a_power_law() {
        let errors: Vec<(u64, f64)> = [100u64, 200, 400, 800]
            .iter()
            .map(|&n| (n, 3.0 * (n as f64).powf(-1.5)))
            .collect();
        assert!((slope(&errors).unwrap() + 1.5).abs() < 1e-12);
        assert_eq!(slope(&errors[..1]), None);
        // Signs do not matter, zeros are skipped.
        let mixed = vec![(10, -0.1), (20, 0.0), (100, 0.001)];
        assert!((slope(&mixed).unwrap() + 2.0).abs() < 1e-12);
    }
}
