//! Reference accountants: the published shuffle-model amplification bounds, computed with
//! certified arithmetic so that they can be set beside the mechanism's certified ε.
//!
//! A published bound is a theorem's upper bound on ε for every ε0-LDP randomizer (or for a
//! family such as k-ary randomized response).  Each is computed here in one of two ways:
//!
//! * a **closed form** (FMT21, FMT23, and the blanket bounds' δ(ε) inverted for ε) is evaluated
//!   in MPFR interval arithmetic: the enclosure contains the formula's exact value;
//! * a bound that is the exact privacy curve of a **reduced experiment** (the FMT21 clone
//!   reduction, the variation-ratio reduction of Wang et al.) is computed as a certified pair of
//!   laws (`count_pair`) with this toolkit's curves: the enclosure contains the reduced
//!   experiment's exact ε, i.e. the true value of the bound, which the authors' code prints
//!   in floating point.
//!
//! The theorems apply to ε0-LDP mechanisms; for a mechanism given by `W0`, `W1` the local
//! parameter is `ε0 = max_y |ln W1(y)/W0(y)|`, certified ([`LocalPrivacy`]).

pub mod blanket;
pub mod closed_form;
pub mod count_pair;

use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::{Error, Result};
use crate::exact::curve::{Direction, epsilon_for_delta};
use crate::mechanism::randomizer::Randomizer;
use crate::mechanism::{Channel, Entry, Mechanism};
use count_pair::CountPair;
use inari::Interval;
use rug::Rational;

/// Precision of the closed forms and of the local parameter.
const CLOSED_FORM: MpfrCtx = MpfrCtx { precision: 256 };

/// Whether a bound's theorem covers the case, with the condition as evaluated.
#[derive(Clone, Debug)]
pub enum Validity {
    Valid(String),
    Outside(String),
}

impl Validity {
    /// The condition as evaluated, or why the theorem does not apply.
    pub fn text(&self) -> &str {
        match self {
            Validity::Valid(s) | Validity::Outside(s) => s,
        }
    }
}

/// `e^{ε0} = max_y max(W1(y)/W0(y), W0(y)/W1(y))` in a backend, or `None` when a ratio is
/// infinite (some output has probability 0 under one input only: not ε0-LDP for finite ε0).
pub fn local_ratio<S: Scalar>(channel: &Channel<S>) -> Option<S> {
    let mut best: Option<S> = None;
    for (w0, w1) in channel.w[0].iter().zip(&channel.w[1]) {
        match (w0.is_exact_zero(), w1.is_exact_zero()) {
            (true, true) => continue,
            (true, false) | (false, true) => return None,
            (false, false) => {}
        }
        let r = w1.div(w0).max(&w0.div(w1));
        if r.enclosure().hi() == &Endpoint::PosInf {
            return None;
        }
        best = Some(match best {
            Some(b) => b.max(&r),
            None => r,
        });
    }
    best
}

/// `e^{ε0} = max_y max_x R_x(y) / min_x R_x(y)` of a randomizer on any input domain, in a
/// backend (`None` when some output has probability 0 under some inputs only).  Binary inputs
/// take [`local_ratio`] of their channel, so both forms agree to the last rounding.
pub fn randomizer_ratio<S: Scalar>(r: &Randomizer, ctx: &S::Ctx) -> Result<Option<S>> {
    if r.input_count() == 2 {
        return Ok(local_ratio(&r.pair(0, 1)?.channel::<S>(ctx)?));
    }
    let rows = r.values::<S>(ctx)?;
    let mut best: Option<S> = None;
    for y in 0..r.d() {
        let zeros = (0..r.input_count()).filter(|&x| r.is_zero(x, y)).count();
        if zeros == r.input_count() {
            continue;
        }
        if zeros > 0 {
            return Ok(None);
        }
        // max_x R_x(y) · max_x 1/R_x(y) = max_x R_x(y) / min_x R_x(y) (all positive here).
        let one = S::one(ctx);
        let (mut hi, mut inv_hi) = (rows[0][y].clone(), one.div(&rows[0][y]));
        for row in &rows[1..] {
            hi = hi.max(&row[y]);
            inv_hi = inv_hi.max(&one.div(&row[y]));
        }
        let ratio = hi.mul(&inv_hi);
        if ratio.enclosure().hi() == &Endpoint::PosInf {
            return Ok(None);
        }
        best = Some(match best {
            Some(b) => b.max(&ratio),
            None => ratio,
        });
    }
    Ok(best)
}

/// The local privacy of a randomizer as the published theorems take it.
#[derive(Clone, Debug)]
pub struct LocalPrivacy {
    /// `e^{ε0}`, enclosed.
    pub exp_eps0: MpfrInterval,
    /// `ε0`, enclosed.
    pub eps0: Enclosure,
    /// `Some(k)` when the mechanism is k-ary randomized response (its two rows each report the
    /// truth with one probability and every other symbol with another, smaller one).
    pub k_rr: Option<u32>,
}

impl LocalPrivacy {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "eps0": self.eps0.to_json(),
            "exp_eps0": self.exp_eps0.enclosure().to_json(),
            "k_rr": self.k_rr,
        })
    }

    /// The mechanism's ε0, or `None` when it is not ε0-LDP for any finite ε0.
    pub fn of(mechanism: &Mechanism) -> Result<Option<LocalPrivacy>> {
        LocalPrivacy::of_randomizer(&Randomizer::from_mechanism(mechanism.clone()))
    }

    /// The randomizer's ε0 (the largest log-ratio over every pair of inputs), or `None` when it
    /// is not ε0-LDP for any finite ε0.
    pub fn of_randomizer(randomizer: &Randomizer) -> Result<Option<LocalPrivacy>> {
        let Some(ratio) = randomizer_ratio::<MpfrInterval>(randomizer, &CLOSED_FORM)? else {
            return Ok(None);
        };
        // The randomized-response families given by a real ε0 have exactly that ε0 (their
        // largest ratio is e^{ε0}); otherwise ε0 is enclosed as ln of the largest ratio.
        let (exp_eps0, eps0) = match &randomizer.eps0 {
            Some(e) => (
                Transcendental::exp(&MpfrInterval::from_rational(e, &CLOSED_FORM)),
                Enclosure::point(e.clone()),
            ),
            None => {
                let eps0 = Transcendental::ln(&ratio).enclosure().clamp_nonnegative();
                (ratio, eps0)
            }
        };
        let k_rr = if randomizer.input_count() == 2 {
            let mechanism = randomizer.pair(0, 1)?;
            k_rr_alphabet(
                &mechanism,
                &mechanism.channel::<MpfrInterval>(&CLOSED_FORM)?,
            )
        } else {
            k_rr_inputs(randomizer)
        };
        Ok(Some(LocalPrivacy {
            k_rr,
            exp_eps0,
            eps0,
        }))
    }
}

/// The alphabet size k when `W0`, `W1` are the rows of k-ary randomized response for two
/// distinct inputs: each row has one "truthful" entry T, all others equal to O, with the same
/// T and O in both rows, at different positions, and T > O certainly (for k = 2 any T ≠ O is
/// randomized response up to relabelling the outputs).
fn k_rr_alphabet(mechanism: &Mechanism, channel: &Channel<MpfrInterval>) -> Option<u32> {
    let d = mechanism.d();
    let [w0, w1] = &mechanism.rows;
    let distinguished = |row: &[Entry]| -> Option<usize> {
        (0..d).find(|&y| {
            row.iter()
                .enumerate()
                .all(|(z, e)| z == y || *e == row[(y + 1) % d])
        })
    };
    let (t0, t1) = if d == 2 {
        (0, 1)
    } else {
        (distinguished(w0)?, distinguished(w1)?)
    };
    let other = |y: usize| (y + 1) % d;
    let same = t0 != t1
        && w0[t0] == w1[t1]
        && w0[other(t0)] == w1[other(t1)]
        && w0[t0] != w0[other(t0)]
        && (d == 2 || (0..d).all(|y| y == t0 || w0[y] == w0[other(t0)]));
    if !same {
        return None;
    }
    let truthful_larger = channel.w[0][other(t0)].certainly_below(&channel.w[0][t0]);
    (d == 2 || truthful_larger).then_some(d as u32)
}

/// The alphabet size k when a randomizer on more than two inputs is k-ary randomized response
/// on some of its k symbols: every pair of its inputs is ([`k_rr_alphabet`]).
fn k_rr_inputs(r: &Randomizer) -> Option<u32> {
    let pairs: Vec<Mechanism> = (1..r.input_count())
        .map(|x| r.pair(0, x).ok())
        .collect::<Option<_>>()?;
    let truthful = |m: &Mechanism| -> Option<usize> {
        (0..m.d()).find(|&y| {
            m.rows[1]
                .iter()
                .enumerate()
                .all(|(z, e)| z == y || *e != m.rows[1][y])
        })
    };
    let mut seen = Vec::new();
    for m in &pairs {
        let channel = m.channel::<MpfrInterval>(&CLOSED_FORM).ok()?;
        k_rr_alphabet(m, &channel)?;
        seen.push(truthful(m)?);
    }
    seen.sort_unstable();
    seen.dedup();
    (seen.len() == pairs.len()).then_some(r.d() as u32)
}

/// How a bound's value is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A closed-form ε, evaluated in MPFR interval arithmetic.
    ClosedForm,
    /// A closed-form δ(ε), inverted for ε by a certified bisection.
    InvertedClosedForm,
    /// The exact privacy curve of a reduced experiment, certified.
    ReducedExperiment,
}

impl Method {
    pub fn describe(&self) -> &'static str {
        match self {
            Method::ClosedForm => "closed form, evaluated in interval arithmetic",
            Method::InvertedClosedForm => "closed-form δ(ε) inverted for ε (certified bisection)",
            Method::ReducedExperiment => "exact privacy curve of the reduced experiment, certified",
        }
    }
}

/// One published bound at one n and δ.
#[derive(Clone, Debug)]
pub struct Bound {
    /// A stable key, e.g. `fmt21-closed`.
    pub id: &'static str,
    pub name: String,
    /// The publication the statement comes from.
    pub source: &'static str,
    pub method: Method,
    /// The theorem's validity condition as evaluated, or why it does not apply.
    pub validity: Validity,
    /// The bound's ε, enclosed (`None` outside its validity).
    pub eps: Option<Enclosure>,
    /// The mechanisms and input domain the theorem is stated for.
    pub stated_for: String,
    /// The arithmetic that produced `eps`.
    pub arithmetic: String,
}

/// What the generic theorems are stated for.
const ANY_RANDOMIZER: &str = "every ε0-LDP randomizer, on any input domain";

/// What the k-RR parameters are stated for.
fn k_rr_domain(k: u32) -> String {
    format!("k-ary randomized response with k = {k}, on {k}-valued inputs")
}

const FMT21: &str = "Feldman, McMillan, Talwar. Hiding among the clones (FOCS 2021), Thm 3.1";
const FMT21_CLONE: &str =
    "Feldman, McMillan, Talwar. Hiding among the clones (FOCS 2021), the clone reduction (Thm 3.2)";
const FMT23: &str = "Feldman, McMillan, Talwar. Stronger privacy amplification by shuffling (SODA 2023), Thm 3.2 with its erratum";
const WANG: &str = "Wang et al. Privacy amplification via shuffling: unified, simplified, and tightened (VLDB 2024), variation-ratio reduction";
const BALLE: &str = "Balle, Bell, Gascón, Nissim. The privacy blanket of the shuffle model (CRYPTO 2019), as in their reference code";

/// Every published bound at n users and target δ for the mechanism: closed forms in MPFR at
/// 256 bits, reduced experiments in f64 intervals (MPFR at 128, then 256 bits, when wide), or,
/// with `precision`, everything in MPFR at that precision (`verify`'s route).
pub fn published_bounds(
    mechanism: &Randomizer,
    n: u64,
    delta: &Rational,
    memory_limit: u64,
    precision: Option<u32>,
) -> Result<Vec<Bound>> {
    let Some(local) = LocalPrivacy::of_randomizer(mechanism)? else {
        return Err(Error::Unsupported(format!(
            "{}: some output has probability 0 under some inputs only, so the mechanism is not ε0-LDP \
             for any finite ε0 and no published amplification bound applies",
            mechanism.name
        )));
    };
    let a = &local.exp_eps0;
    let ctx = &precision.map_or(CLOSED_FORM, |precision| MpfrCtx { precision });
    let mut bounds = Vec::new();
    let closed = |id, name: &str, source, (eps, validity): (Enclosure, Validity)| Bound {
        id,
        name: name.to_string(),
        source,
        stated_for: ANY_RANDOMIZER.into(),
        method: Method::ClosedForm,
        eps: matches!(validity, Validity::Valid(_)).then_some(eps),
        validity,
        arithmetic: format!("mpfr-{}", ctx.precision),
    };
    let reduced = |reduction: Reduction| -> Result<Bound> {
        let (eps, arithmetic) = match precision {
            None => reduction_epsilon(mechanism, reduction, n, delta, memory_limit)?,
            Some(_) => (
                reduction_epsilon_in::<MpfrInterval>(
                    mechanism,
                    reduction,
                    n,
                    delta,
                    memory_limit,
                    ctx,
                )?,
                format!("mpfr-{}", ctx.precision),
            ),
        };
        Ok(Bound {
            id: reduction.id(),
            name: reduction.name(),
            source: reduction.source(),
            stated_for: match reduction {
                Reduction::VariationRatio(Some(k)) => k_rr_domain(k),
                _ => ANY_RANDOMIZER.into(),
            },
            method: Method::ReducedExperiment,
            validity: match reduction {
                Reduction::VariationRatio(Some(k)) => Validity::Valid(format!(
                    "k-ary randomized response (k = {k}): p = q = e^ε0, β = (e^ε0−1)/(e^ε0+k−1)"
                )),
                _ => Validity::Valid("any ε0-LDP randomizer".into()),
            },
            eps: Some(eps),
            arithmetic,
        })
    };
    bounds.push(closed(
        "fmt21-closed",
        "FMT21 closed form",
        FMT21,
        closed_form::fmt21(a, n, delta, ctx),
    ));
    bounds.push(reduced(Reduction::Clone)?);
    bounds.push(closed(
        "fmt23-closed",
        "FMT23 closed form",
        FMT23,
        closed_form::fmt23(a, n, delta, ctx),
    ));
    bounds.push(reduced(Reduction::VariationRatio(local.k_rr))?);
    let eps0_lo = local.eps0.lo().finite().cloned().unwrap_or_default();
    for form in [blanket::Form::Hoeffding, blanket::Form::Bennett] {
        let randomizers = [
            Some(blanket::Randomizer::Generic),
            local.k_rr.map(blanket::Randomizer::KRr),
        ];
        for randomizer in randomizers.into_iter().flatten() {
            let (id, label) = match (form, randomizer) {
                (blanket::Form::Hoeffding, blanket::Randomizer::Generic) => (
                    "balle-hoeffding-generic",
                    "Hoeffding, generic ε0-LDP".to_string(),
                ),
                (blanket::Form::Hoeffding, blanket::Randomizer::KRr(k)) => {
                    ("balle-hoeffding-rr", format!("Hoeffding, RR k = {k}"))
                }
                (blanket::Form::Bennett, blanket::Randomizer::Generic) => (
                    "balle-bennett-generic",
                    "Bennett, generic ε0-LDP".to_string(),
                ),
                (blanket::Form::Bennett, blanket::Randomizer::KRr(k)) => {
                    ("balle-bennett-rr", format!("Bennett, RR k = {k}"))
                }
            };
            let eps = blanket::epsilon(form, randomizer, a, n, delta, &eps0_lo, ctx);
            let validity = match &eps {
                Some(_) => Validity::Valid(format!(
                    "ε < ε0; {}",
                    match randomizer {
                        blanket::Randomizer::Generic => "any ε0-LDP randomizer".to_string(),
                        blanket::Randomizer::KRr(k) =>
                            format!("k-ary randomized response, k = {k}"),
                    }
                )),
                None if eps0_lo <= 0 => Validity::Outside(
                    "ε0 = 0: the randomizer is already 0-LDP, there is nothing to amplify".into(),
                ),
                None => Validity::Outside(
                    "δ ≤ the target could not be certified at any point of a grid on (0, ε0)"
                        .into(),
                ),
            };
            bounds.push(Bound {
                id,
                name: format!("Balle et al. {label}"),
                source: BALLE,
                stated_for: match randomizer {
                    blanket::Randomizer::Generic => ANY_RANDOMIZER.into(),
                    blanket::Randomizer::KRr(k) => k_rr_domain(k),
                },
                method: Method::InvertedClosedForm,
                validity,
                eps,
                arithmetic: format!("mpfr-{}", ctx.precision),
            });
        }
    }
    Ok(bounds)
}

/// The reduced experiments.
#[derive(Clone, Copy, Debug)]
enum Reduction {
    /// FMT21: clones with probability e^{−ε0}.
    Clone,
    /// Wang et al., with the k-RR variation parameters when the mechanism is k-RR.
    VariationRatio(Option<u32>),
}

impl Reduction {
    fn id(&self) -> &'static str {
        match self {
            Reduction::Clone => "fmt21-clone",
            Reduction::VariationRatio(_) => "wang-variation-ratio",
        }
    }

    fn name(&self) -> String {
        match self {
            Reduction::Clone => "FMT21 clone reduction".into(),
            Reduction::VariationRatio(None) => "Wang et al. variation ratio, generic ε0-LDP".into(),
            Reduction::VariationRatio(Some(k)) => {
                format!("Wang et al. variation ratio, k-RR k = {k}")
            }
        }
    }

    fn source(&self) -> &'static str {
        match self {
            Reduction::Clone => FMT21_CLONE,
            Reduction::VariationRatio(_) => WANG,
        }
    }

    /// The count pair for `a = e^{ε0}` in a backend.
    fn count_pair<S: Scalar>(&self, a: &S, n: u64, ctx: &S::Ctx) -> CountPair<S> {
        let one = S::one(ctx);
        let a1 = a.add(&one);
        match self {
            // x = a/(a+1), y = 1/(a+1); clones (1,0) and (0,1) each with e^{−ε0}/2.
            Reduction::Clone => {
                let half_clone = one.div(&S::from_u64(2, ctx).mul(a));
                CountPair {
                    n,
                    x: a.div(&a1),
                    y: one.div(&a1),
                    w: S::zero(ctx),
                    r0: half_clone.clone(),
                    r1: half_clone,
                }
            }
            // p = q0 = q1 = a, β = (a − 1)/(a + k − 1) (k = 2 for a generic ε0-LDP randomizer):
            // α = β/(p − 1) = 1/(a + k − 1), x = pα, y = α, w = (k − 2)α, r0 = r1 = αp/q = α.
            Reduction::VariationRatio(k) => {
                let k = u64::from(k.unwrap_or(2));
                let alpha = one.div(&a.add(&S::from_u64(k - 1, ctx)));
                CountPair {
                    n,
                    x: a.mul(&alpha),
                    y: alpha.clone(),
                    w: S::from_u64(k - 2, ctx).mul(&alpha),
                    r0: alpha.clone(),
                    r1: alpha,
                }
            }
        }
    }
}

/// The two-sided ε of a reduced experiment at `delta` in backend `S`.
fn reduction_epsilon_in<S: Scalar>(
    mechanism: &Randomizer,
    reduction: Reduction,
    n: u64,
    delta: &Rational,
    memory_limit: u64,
    ctx: &S::Ctx,
) -> Result<Enclosure> {
    let a = randomizer_ratio::<S>(mechanism, ctx)?
        .ok_or_else(|| Error::Unsupported("the mechanism is not ε0-LDP".into()))?;
    let law = reduction
        .count_pair(&a, n, ctx)
        .law(S::truncation_bits(ctx), memory_limit, ctx)?;
    let qp = epsilon_for_delta(&law, Direction::Qp, delta, ctx)?.eps;
    let pq = epsilon_for_delta(&law, Direction::Pq, delta, ctx)?.eps;
    Ok(qp.max(&pq))
}

/// The reduced experiment's ε in f64 intervals, recomputed in MPFR (128, then 256 bits) when
/// wider than 1e-9 relative.
fn reduction_epsilon(
    mechanism: &Randomizer,
    reduction: Reduction,
    n: u64,
    delta: &Rational,
    memory_limit: u64,
) -> Result<(Enclosure, String)> {
    let mut eps =
        reduction_epsilon_in::<Interval>(mechanism, reduction, n, delta, memory_limit, &())?;
    let mut arithmetic = "interval".to_string();
    for precision in [128, 256] {
        if eps.relative_width() <= 1e-9 {
            break;
        }
        eps = reduction_epsilon_in::<MpfrInterval>(
            mechanism,
            reduction,
            n,
            delta,
            memory_limit,
            &MpfrCtx { precision },
        )?;
        arithmetic = format!("mpfr-{precision}");
    }
    Ok((eps, arithmetic))
}
