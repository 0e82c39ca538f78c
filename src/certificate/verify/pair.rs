//! A pair certificate (`delta`, `epsilon`, `divergences`) re-derived: a binary-input
//! mechanism's pair `(T_{n,k}, T_{n,k+1})`, a randomizer's pair with a background composition
//! (`--background`), or a Part III limit experiment (`--experiment`), with its TV ball
//! (`--tv-ball`) when the certificate holds one.
//!
//! Routes: the same pair in MPFR at a higher precision (for the experiments, whose windows grow
//! with the precision, also deeper windows); exact rationals where the pair is rational and
//! small; a pure-Rust rational reference by brute-force convolution over raw outputs (no output
//! merging, no windows, no GMP) at small n; and for ε, δ re-evaluated at the certified witnesses.

use super::{
    Tally, enclosure_at, exact_affordable, higher_precision, pair_query, reference, u64_at,
    users_at,
};
use crate::arith::ln_bracket;
use crate::audit::verdict::{Side, Verdict, judge};
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, Endpoint, Tri, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::exact::background::Background;
use crate::exact::curve::Direction;
use crate::limits::experiment::{self, ExperimentQuery, LimitExperiment, MAX_EXPERIMENT_BITS};
use crate::limits::tv::{tv_ball, tv_ball_budgets};
use crate::mechanism::randomizer::Randomizer;
use crate::mechanism::{Entry, Mechanism};
use crate::query::{
    Backend, BackgroundQuery, Computed, DeltaJob, DeltaRow, DivergenceJob, EpsilonJob, EpsilonRow,
    PairQuery, SingularJob, Threshold, answer,
};
use num_rational::BigRational;
use rug::Rational;
use serde_json::Value;

/// The highest precision a pair is recomputed in.
const MAX_VERIFY_BITS: u32 = 4096;

/// A pair rebuilt in one route's backend, answering each job of a pair command.
pub(super) trait Recompute {
    fn delta(&self, job: &DeltaJob) -> Result<Computed<Vec<DeltaRow>>>;
    fn epsilon(&self, job: &EpsilonJob) -> Result<Computed<EpsilonRow>>;
    fn divergences(
        &self,
        job: &DivergenceJob,
    ) -> Result<Computed<crate::exact::divergence::Divergences>>;
    /// The pair's singular masses `[Q(P = 0), P(Q = 0)]` (`curve::singular_mass`: the closed
    /// form a mechanism's pair carries, else the stored mass where the other law is zero).
    fn singular(&self) -> Result<[Enclosure; 2]>;
}

macro_rules! recompute_by {
    ($source:ty, $answer:path) => {
        impl Recompute for $source {
            fn delta(&self, job: &DeltaJob) -> Result<Computed<Vec<DeltaRow>>> {
                $answer(self, job)
            }
            fn epsilon(&self, job: &EpsilonJob) -> Result<Computed<EpsilonRow>> {
                $answer(self, job)
            }
            fn divergences(
                &self,
                job: &DivergenceJob,
            ) -> Result<Computed<crate::exact::divergence::Divergences>> {
                $answer(self, job)
            }
            fn singular(&self) -> Result<[Enclosure; 2]> {
                $answer(self, &SingularJob).map(|c| c.result)
            }
        }
    };
}

recompute_by!(PairQuery, answer);
recompute_by!(BackgroundQuery, answer);
recompute_by!(ExperimentQuery, experiment::answer);

/// Which pair a certificate is about.
pub(super) enum PairSubject<'a> {
    Binary {
        mechanism: &'a Mechanism,
        n: u64,
        k: u64,
    },
    Background {
        randomizer: &'a Randomizer,
        background: Background,
    },
    Experiment(LimitExperiment),
}

impl PairSubject<'_> {
    /// The pair in `backend`.
    pub(super) fn query(&self, settings: &Settings, backend: Backend) -> Box<dyn Recompute> {
        match self {
            PairSubject::Binary { mechanism, n, k } => {
                Box::new(pair_query(mechanism, *n, *k, settings, backend))
            }
            PairSubject::Background {
                randomizer,
                background,
            } => Box::new(BackgroundQuery {
                randomizer: (*randomizer).clone(),
                background: background.clone(),
                options: settings.options.clone(),
                backend,
                exact_ctx: settings.exact_ctx,
                escalate_above: None,
            }),
            PairSubject::Experiment(e) => Box::new(ExperimentQuery {
                experiment: e.clone(),
                backend,
                escalate_above: None,
            }),
        }
    }

    /// The MPFR precision of the independent route: higher than the original's (for the
    /// experiments at most their ceiling, which also deepens their windows).
    ///
    /// A computation deepened past its backend (`mpfr-N (deepened…)` in the report's
    /// arithmetic) is recomputed at twice that precision.
    pub(super) fn precision(&self, settings: &Settings, report: &Value) -> u32 {
        let used = report["arithmetic"]
            .as_str()
            .and_then(|a| a.strip_prefix("mpfr-"))
            .and_then(|a| a.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse::<u32>().ok())
            .map_or(0, |p| p.saturating_mul(2).min(MAX_VERIFY_BITS));
        let higher = higher_precision(settings).max(used);
        match self {
            PairSubject::Experiment(_) => higher.min(MAX_EXPERIMENT_BITS),
            _ => higher,
        }
    }

    /// The routes a recomputation of this pair takes: MPFR at `precision`, and exact
    /// rationals where affordable.
    pub(super) fn routes(&self, settings: &Settings, precision: u32) -> Vec<(String, Backend)> {
        let mut routes = vec![(format!("mpfr-{precision}"), Backend::Mpfr { precision })];
        if self.exact_affordable(settings) {
            routes.push(("exact".to_string(), Backend::Exact));
        }
        routes
    }

    /// Whether exact rationals can redo the pair in reasonable time and memory.
    pub(super) fn exact_affordable(&self, settings: &Settings) -> bool {
        match self {
            PairSubject::Binary { mechanism, n, .. } => exact_affordable(mechanism, *n, settings),
            PairSubject::Background {
                randomizer,
                background,
            } => {
                in_play_rows(randomizer, background).is_some()
                    && crate::exact::histogram::histogram_count(background.n(), randomizer.d())
                        .is_some_and(|c| c <= 5000)
            }
            PairSubject::Experiment(_) => false,
        }
    }
}

/// The background pair a report records: its randomizer's inputs by name, counts adding up to
/// n − 1.
pub(super) fn background_of(report: &Value, r: &Randomizer) -> Result<Background> {
    let n = users_at(&report["n"], "report.n")?;
    let index = |field: &str, v: &Value| -> Result<usize> {
        let name = v
            .as_str()
            .ok_or_else(|| Error::argument(field, "expected an input's name"))?;
        r.inputs
            .iter()
            .position(|x| x == name)
            .ok_or_else(|| Error::argument(field, format!("\"{name}\" is not an input")))
    };
    let mut counts = vec![0u64; r.input_count()];
    for (i, item) in report["background"]
        .as_array()
        .ok_or_else(|| Error::argument("report.background", "missing"))?
        .iter()
        .enumerate()
    {
        let x = index(&format!("report.background.{i}.input"), &item["input"])?;
        counts[x] += u64_at(&item["count"], &format!("report.background.{i}.count"))?;
    }
    if counts.iter().sum::<u64>().checked_add(1) != Some(n) {
        return Err(Error::argument(
            "report.background",
            format!(
                "the counts do not add up to n − 1 = {}",
                n.saturating_sub(1)
            ),
        ));
    }
    let switch = (
        index("report.switch.x1", &report["switch"]["x1"])?,
        index("report.switch.x1_prime", &report["switch"]["x1_prime"])?,
    );
    Ok(Background { counts, switch })
}

/// The rows of every input in play, when they are all exact.
fn in_play_rows(r: &Randomizer, b: &Background) -> Option<Vec<Option<Vec<Rational>>>> {
    let exact = |x: usize| -> Option<Vec<Rational>> {
        r.rows[x]
            .iter()
            .map(|e| match e {
                Entry::Exact(q) => Some(q.clone()),
                Entry::ExpFraction { .. } => None,
            })
            .collect()
    };
    (0..r.input_count())
        .map(|x| {
            let in_play = b.counts[x] > 0 || x == b.switch.0 || x == b.switch.1;
            if in_play {
                exact(x).map(Some)
            } else {
                Some(None)
            }
        })
        .collect()
}

/// The certified values of a pair report, by field.
fn pair_fields(command: &str, report: &Value) -> Result<Vec<(String, Enclosure)>> {
    let mut fields = Vec::new();
    let mut add = |path: String, v: &Value| -> Result<()> {
        let e = enclosure_at(v, &path)?;
        fields.push((path, e));
        Ok(())
    };
    match command {
        "delta" => {
            for (i, r) in report["results"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                for key in ["delta_qp", "delta_pq", "delta_two_sided"] {
                    add(format!("results.{i}.{key}"), &r[key])?;
                }
            }
            for (i, r) in report["tv_ball"]["results"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                for key in ["delta_qp", "delta_pq", "delta_two_sided"] {
                    add(format!("tv_ball.results.{i}.{key}"), &r[key])?;
                }
            }
        }
        "epsilon" => {
            for key in ["eps_qp", "eps_pq", "eps_two_sided"] {
                add(key.to_string(), &report[key])?;
            }
        }
        _ => {
            for key in ["tv", "kl_qp", "kl_pq", "jsd", "chi2_qp", "hellinger2"] {
                add(key.to_string(), &report[key])?;
            }
            for key in ["renyi_qp", "renyi_pq"] {
                for (i, r) in report[key].as_array().into_iter().flatten().enumerate() {
                    add(format!("{key}.{i}.value"), &r["value"])?;
                }
            }
        }
    }
    Ok(fields)
}

/// The thresholds of a δ report's rows.
fn thresholds(report: &Value) -> Result<Vec<Threshold>> {
    report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            r["eps"]
                .as_str()
                .and_then(Threshold::from_text)
                .ok_or_else(|| Error::argument("report.results.eps", "unreadable"))
        })
        .collect()
}

/// A pair report's values recomputed in one route: each value by field, whether the k = 0
/// closed form checked the pair, and the δ rows (for a TV ball).
struct Recomputed {
    values: Vec<(String, Enclosure)>,
    canonical: bool,
    delta_rows: Vec<DeltaRow>,
}

/// Recomputes a pair report's values in one route.
fn pair_route(command: &str, report: &Value, query: &dyn Recompute) -> Result<Recomputed> {
    let mut values = Vec::new();
    let mut delta_rows = Vec::new();
    let canonical;
    match command {
        "delta" => {
            let c = query.delta(&DeltaJob {
                thresholds: thresholds(report)?,
            })?;
            canonical = c.canonical_states_checked.is_some();
            for (i, r) in c.result.iter().enumerate() {
                values.push((format!("results.{i}.delta_qp"), r.qp.clone()));
                values.push((format!("results.{i}.delta_pq"), r.pq.clone()));
                values.push((format!("results.{i}.delta_two_sided"), r.two_sided.clone()));
            }
            delta_rows = c.result;
        }
        "epsilon" => {
            let delta = report["delta"]
                .as_str()
                .and_then(parse_rational)
                .ok_or_else(|| Error::argument("report.delta", "unreadable"))?;
            let c = query.epsilon(&EpsilonJob { delta })?;
            canonical = c.canonical_states_checked.is_some();
            values.push(("eps_qp".into(), c.result.qp.eps.clone()));
            values.push(("eps_pq".into(), c.result.pq.eps.clone()));
            values.push(("eps_two_sided".into(), c.result.two_sided.clone()));
        }
        _ => {
            let renyi_orders = report["renyi_qp"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    r["order"]
                        .as_str()
                        .and_then(parse_rational)
                        .ok_or_else(|| Error::argument("report.renyi_qp.order", "unreadable"))
                })
                .collect::<Result<Vec<_>>>()?;
            let c = query.divergences(&DivergenceJob { renyi_orders })?;
            canonical = c.canonical_states_checked.is_some();
            let d = c.result;
            for (key, e) in [
                ("tv", d.tv),
                ("kl_qp", d.kl_qp),
                ("kl_pq", d.kl_pq),
                ("jsd", d.jsd),
                ("chi2_qp", d.chi2_qp),
                ("hellinger2", d.hellinger2),
            ] {
                values.push((key.into(), e));
            }
            for (key, list) in [("renyi_qp", d.renyi_qp), ("renyi_pq", d.renyi_pq)] {
                for (i, (_, e)) in list.into_iter().enumerate() {
                    values.push((format!("{key}.{i}.value"), e));
                }
            }
        }
    }
    Ok(Recomputed {
        values,
        canonical,
        delta_rows,
    })
}

/// Verifies a pair certificate's report.
pub(super) fn verify_pair(
    command: &str,
    report: &Value,
    subject: &PairSubject<'_>,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    // Curves, divergences and ε are ≥ 0 (a log-ratio divergence too), and so is every δ in a
    // TV ball.
    for (field, e) in pair_fields(command, report)? {
        tally.certified(&field, e, true);
    }
    let ball = match (&report["tv_ball"], subject) {
        (Value::Null, _) => None,
        (b, PairSubject::Binary { n, k, .. }) if command == "delta" => {
            Some(TvBall::read(b, report, *n, *k, tally)?)
        }
        _ => {
            tally.problem("report.tv_ball: a TV ball belongs to a binary-input mechanism's δ");
            None
        }
    };
    let precision = subject.precision(settings, report);
    if command == "epsilon" {
        witness_fields(report, precision, tally)?;
    }
    let routes = subject.routes(settings, precision);
    for (label, backend) in routes {
        let query = subject.query(settings, backend);
        let recomputed = pair_route(command, report, &*query)?;
        tally.route(label.clone());
        if recomputed.canonical {
            tally.route("k = 0 closed form (every state of the recomputed pair)");
        }
        for (field, e) in &recomputed.values {
            tally.recomputed(field, e, &label);
        }
        if let Some(ball) = &ball {
            ball.hold(&recomputed.delta_rows, &label, tally);
        }
        if command == "epsilon" {
            witnesses(report, &*query, &label, precision, tally)?;
        }
    }
    if command == "delta" {
        reference_route(
            "results.",
            &report["results"],
            ["delta_qp", "delta_pq"],
            subject,
            tally,
        )?;
    }
    Ok(())
}

/// The route of [`crate::certificate::recorded_bracket`]: a pair report of randomized response
/// given by a real ε0 held against the same pair on rational rows at `a_lo < e^{ε0} < a_hi`
/// (the bracket's bits are the MPFR route's precision).  W at `a_lo` is a post-processing of W
/// at `e^{ε0}`, itself one of W at `a_hi` (per message, so also for m messages bundled or not),
/// so every δ, ε and divergence lies between the lower end at `a_lo` and the upper end at
/// `a_hi`; nothing here evaluates an entry in `e^{ε0}`.  Both pairs run in f64 intervals without
/// escalation: the MPFR route checks the digits, this one the construction.
pub(super) fn bracket_route(
    command: &str,
    report: &Value,
    [lower, upper]: [&PairSubject<'_>; 2],
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let route = |subject: &PairSubject<'_>| {
        pair_route(
            command,
            report,
            subject.query(settings, Backend::Interval).as_ref(),
        )
    };
    let (at_lower, at_upper) = (route(lower)?, route(upper)?);
    let label = "interval on rational rows at a_lo < e^eps0 < a_hi (data processing)";
    tally.route(label);
    for ((field, lo), (upper_field, hi)) in at_lower.values.iter().zip(&at_upper.values) {
        debug_assert_eq!(field, upper_field);
        let between = Enclosure::new(lo.lo().clone(), hi.hi().clone());
        tally.recomputed(field, &between, label);
    }
    Ok(())
}

/// δ of one pair in every route a δ certificate gets (MPFR at a higher precision, exact where
/// affordable, the brute-force reference at small n), at the thresholds of `results` (rows with
/// an `eps`), each row i held at `{prefix}{i}.{keys[0]}` (δ_{Q‖P}) and `{prefix}{i}.{keys[1]}`
/// (δ_{P‖Q}); `arithmetic` is what produced the certified rows.  Returns each route's rows.
pub(super) fn delta_routes(
    prefix: &str,
    results: &Value,
    keys: [&str; 2],
    arithmetic: &Value,
    subject: &PairSubject<'_>,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<Vec<(String, Vec<DeltaRow>)>> {
    let report = serde_json::json!({ "results": results, "arithmetic": arithmetic });
    let thresholds = thresholds(&report)?;
    let precision = subject.precision(settings, &report);
    let routes = subject.routes(settings, precision);
    let mut out = Vec::new();
    for (label, backend) in routes {
        let c = subject.query(settings, backend).delta(&DeltaJob {
            thresholds: thresholds.clone(),
        })?;
        tally.route(label.clone());
        if c.canonical_states_checked.is_some() {
            tally.route("k = 0 closed form (every state of the recomputed pair)");
        }
        for (i, r) in c.result.iter().enumerate() {
            tally.recomputed(&format!("{prefix}{i}.{}", keys[0]), &r.qp, &label);
            tally.recomputed(&format!("{prefix}{i}.{}", keys[1]), &r.pq, &label);
        }
        out.push((label, c.result));
    }
    reference_route(prefix, results, keys, subject, tally)?;
    Ok(out)
}

/// A certificate's TV ball (Part III Lemma 2.4 with Lemmas 2.1–2.2): its radius and, per
/// threshold, the certified budgets `(qp, pq)`.
struct TvBall {
    n: u64,
    k: u64,
    eta: Rational,
    budgets: Vec<(Rational, Rational)>,
}

impl TvBall {
    /// Reads the ball and checks what needs no recomputation: the TV bounds of P and Q (a
    /// function of n, k and η), one row per threshold of the report, and each `useful` flag
    /// against the certified centre and budgets.
    fn read(b: &Value, report: &Value, n: u64, k: u64, tally: &mut Tally) -> Result<TvBall> {
        let exact = |v: &Value, field: &str| -> Result<Rational> {
            v.as_str()
                .and_then(parse_rational)
                .ok_or_else(|| Error::argument(field, "not an exact number"))
        };
        let eta = exact(&b["eta"], "report.tv_ball.eta")?;
        // η = 0 is the mechanism alone, as `--tv-ball 0` accepts it.
        if eta < 0 || eta > 1 || k >= n {
            return Err(Error::argument(
                "report.tv_ball.eta",
                "not a radius in [0, 1] of a pair with k < n",
            ));
        }
        let (tv_p, tv_q) = tv_ball_budgets(n, k, &eta);
        for (key, value) in [("tv_p_bound", &tv_p), ("tv_q_bound", &tv_q)] {
            if b[key].as_str().and_then(parse_rational).as_ref() != Some(value) {
                tally.problem(format!(
                    "tv_ball.{key}: records {}, but (Part III Lemmas 2.1–2.2) it is {}",
                    b[key],
                    exact_string(value)
                ));
            }
        }
        let centre = report["results"].as_array().map_or(&[][..], Vec::as_slice);
        let rows = b["results"].as_array().map_or(&[][..], Vec::as_slice);
        if rows.len() != centre.len() {
            tally.problem(format!(
                "tv_ball.results: {} rows for {} thresholds",
                rows.len(),
                centre.len()
            ));
        }
        let mut budgets = Vec::new();
        for (i, (row, c)) in rows.iter().zip(centre).enumerate() {
            let field = format!("tv_ball.results.{i}");
            if row["eps"] != c["eps"] {
                tally.problem(format!(
                    "{field}.eps: {} is not the row's {}",
                    row["eps"], c["eps"]
                ));
            }
            let qp = exact(&row["budget_qp"], &format!("{field}.budget_qp"))?;
            let pq = exact(&row["budget_pq"], &format!("{field}.budget_pq"))?;
            // Useful: each budget below the certified lower end of its curve at the centre.
            let above = |budget: &Rational, key: &str| -> Result<bool> {
                let d = enclosure_at(&c[key], &format!("results.{i}.{key}"))?;
                Ok(matches!(d.lo(), Endpoint::Finite(x) if *x > *budget))
            };
            let useful = above(&qp, "delta_qp")? && above(&pq, "delta_pq")?;
            if row["useful"].as_bool() != Some(useful) {
                tally.problem(format!(
                    "{field}.useful: records {}, but the certified budgets and centre make it {useful}",
                    row["useful"]
                ));
            }
            budgets.push((qp, pq));
        }
        Ok(TvBall { n, k, eta, budgets })
    }

    /// Holds the ball built on one route's δ rows against the certified one: each widened
    /// enclosure, and each budget (the certified one must be at least the route's, an upper
    /// bound of `TV(Q, Q′) + e^ε TV(P, P′)`).
    fn hold(&self, rows: &[DeltaRow], route: &str, tally: &mut Tally) {
        let ball = tv_ball(self.n, self.k, &self.eta, rows);
        for (i, (b, (qp, pq))) in ball.iter().zip(&self.budgets).enumerate() {
            for (key, e) in [
                ("delta_qp", &b.qp),
                ("delta_pq", &b.pq),
                ("delta_two_sided", &b.two_sided),
            ] {
                tally.recomputed(&format!("tv_ball.results.{i}.{key}"), e, route);
            }
            for (key, certified, recomputed) in [
                ("budget_qp", qp, &b.budget_qp),
                ("budget_pq", pq, &b.budget_pq),
            ] {
                if certified < recomputed {
                    tally.problem(format!(
                        "tv_ball.results.{i}.{key}: the certified {} is below the budget {} ({route})",
                        exact_string(certified),
                        exact_string(recomputed)
                    ));
                }
            }
        }
    }
}

/// The pure-Rust rational reference, for δ of rational pairs with at most 12 users: the
/// binary-input pair, or a background pair convolved user by user over raw outputs.  Each row
/// i of `results` is held at `{prefix}{i}.{keys[0]}` (δ_{Q‖P}) and `{prefix}{i}.{keys[1]}`.
fn reference_route(
    prefix: &str,
    results: &Value,
    keys: [&str; 2],
    subject: &PairSubject<'_>,
    tally: &mut Tally,
) -> Result<()> {
    let big = |row: &[Rational]| -> Vec<BigRational> {
        row.iter()
            .map(|q| reference::parse(&exact_string(q)).expect("an exact rational"))
            .collect()
    };
    let (p, q) = match subject {
        PairSubject::Binary { mechanism, n, k } => match (mechanism.messages, &mechanism.source) {
            // Several messages: the per-message channel as given, on raw message outputs.
            (Some(messages), Some(source)) => {
                let Some([w0, w1]) = source.load()?.rational_rows() else {
                    return Ok(());
                };
                let pair = reference::messages_pair(
                    &big(&w0),
                    &big(&w1),
                    *n,
                    *k,
                    messages.count,
                    messages.bundled,
                );
                match pair {
                    Some(pair) => pair,
                    None => return Ok(()),
                }
            }
            (Some(_), None) => return Ok(()),
            (None, _) => {
                let Some([w0, w1]) = mechanism.rational_rows() else {
                    return Ok(());
                };
                if *n > reference::MAX_USERS || mechanism.d() > 4 {
                    return Ok(());
                }
                reference::pair(&big(&w0), &big(&w1), *n, *k)
            }
        },
        PairSubject::Background {
            randomizer,
            background,
        } => {
            let Some(rows) = in_play_rows(randomizer, background) else {
                return Ok(());
            };
            if background.n() > reference::MAX_USERS || randomizer.d() > 4 {
                return Ok(());
            }
            let rows: Vec<Option<Vec<BigRational>>> =
                rows.iter().map(|r| r.as_deref().map(big)).collect();
            reference::background_pair(&rows, &background.counts, background.switch)
        }
        PairSubject::Experiment(_) => return Ok(()),
    };
    let label = match subject {
        PairSubject::Binary { mechanism, .. } if mechanism.messages.is_some() => {
            "reference (num-rational, no GMP, raw message outputs)"
        }
        _ => "reference (num-rational, no GMP)",
    };
    tally.route(label);
    let from_big = |x: &BigRational| {
        parse_rational(&format!("{}/{}", x.numer(), x.denom())).expect("a rational")
    };
    for (i, r) in results.as_array().into_iter().flatten().enumerate() {
        let Some(threshold) = r["eps"].as_str().and_then(Threshold::from_text) else {
            continue;
        };
        let (c_lo, c_hi) = match threshold {
            Threshold::ExpEps(c) => {
                let c = reference::parse(&exact_string(&c)).expect("an exact rational");
                (c.clone(), c)
            }
            Threshold::Eps(e) => reference::exp_bracket(
                &reference::parse(&exact_string(&e)).expect("an exact rational"),
            ),
        };
        for (key, upper, lower) in [(keys[0], &q, &p), (keys[1], &p, &q)] {
            // δ is non-increasing in e^ε: between its values at the bracket's two ends.
            let e = Enclosure::from_rationals(
                from_big(&reference::positive_part(upper, lower, &c_hi)),
                from_big(&reference::positive_part(upper, lower, &c_lo)),
            );
            tally.recomputed(&format!("{prefix}{i}.{key}"), &e, label);
        }
    }
    Ok(())
}

/// Registers an ε certificate's witness enclosures: `delta_at_exp_eps_hi` is given exactly when
/// `exp_eps_hi` is, and `singular_mass` exactly when it is not (the search stopped without a
/// finite threshold: `epsilon_for_delta`); an ε of +∞ needs a singular mass certified above
/// the target; and the certified ε must hold `ln` of its thresholds.  Each given enclosure is
/// then confirmed by [`witnesses`] in every route.
fn witness_fields(report: &Value, precision: u32, tally: &mut Tally) -> Result<()> {
    let delta = report["delta"]
        .as_str()
        .and_then(parse_rational)
        .unwrap_or_default();
    for dir in [Direction::Qp, Direction::Pq] {
        let w = &report["witnesses"][dir.key()];
        let field = format!("witnesses.{}", dir.key());
        let finite = !w["exp_eps_hi"].is_null();
        for (key, wanted, when) in [
            ("delta_at_exp_eps_hi", finite, "exp_eps_hi"),
            ("singular_mass", !finite, "no exp_eps_hi"),
        ] {
            match (w[key].is_null(), wanted) {
                (true, true) => tally.problem(format!(
                    "{field}.{key}: missing, but the certificate gives {when}"
                )),
                (false, false) => tally.problem(format!(
                    "{field}.{key}: given, but the certificate gives {}",
                    if finite {
                        "exp_eps_hi"
                    } else {
                        "no exp_eps_hi"
                    }
                )),
                _ => {}
            }
            if !w[key].is_null() {
                let path = format!("{field}.{key}");
                tally.certified(&path, enclosure_at(&w[key], &path)?, true);
            }
        }
        let eps = enclosure_at(&report[format!("eps_{}", dir.key())], "eps")?;
        let threshold = |key: &str| w[key].as_str().and_then(parse_rational);
        // e^ε of an ε ≥ 0 is at least 1 (and ln is taken of it only then).
        if threshold("exp_eps_hi").is_some_and(|c| c < 1) {
            tally.problem(format!("{field}.exp_eps_hi: below 1, the e^ε of no ε ≥ 0"));
        }
        if let Some(hi) = threshold("exp_eps_hi").filter(|c| *c >= 1)
            && eps.hi() < &Endpoint::Finite(ln_bracket(&hi, precision).1)
        {
            tally.problem(format!(
                "eps_{}: upper end {} below ln of its witness",
                dir.key(),
                eps
            ));
        }
        if let Some(lo) = threshold("exp_eps_lo").filter(|c| *c > 1)
            && eps.lo() > &Endpoint::Finite(ln_bracket(&lo, precision).0)
        {
            tally.problem(format!(
                "eps_{}: lower end {} above ln of its witness",
                dir.key(),
                eps
            ));
        }
        if eps.lo() == &Endpoint::PosInf {
            let above = !w["singular_mass"].is_null()
                && enclosure_at(&w["singular_mass"], &field)?.compare(&delta) == Tri::Greater;
            if !above {
                tally.problem(format!(
                    "eps_{}: +∞, but the certificate's singular mass {} is not certainly > {}",
                    dir.key(),
                    w["singular_mass"],
                    exact_string(&delta)
                ));
            }
        }
    }
    Ok(())
}

/// ε certificates in one route: δ re-evaluated at each certified threshold (`δ(exp_eps_hi)`
/// also held against `delta_at_exp_eps_hi`), and the pair's singular masses recomputed and held
/// against `singular_mass`.
fn witnesses(
    report: &Value,
    query: &dyn Recompute,
    route: &str,
    precision: u32,
    tally: &mut Tally,
) -> Result<()> {
    let delta = report["delta"]
        .as_str()
        .and_then(parse_rational)
        .unwrap_or_default();
    let label = format!("witnesses (δ at the certified thresholds, singular masses; {route})");
    tally.route(label.clone());
    let singular = if ["qp", "pq"]
        .iter()
        .any(|d| !report["witnesses"][d]["singular_mass"].is_null())
    {
        Some(query.singular()?)
    } else {
        None
    };
    // What the held witnesses prove of each direction's ε*: a lower bound (ln c_lo's lower end)
    // and an upper bound (ln c_hi's upper end); the two-sided ε* is the larger direction's.
    let mut proved_below: Vec<Rational> = Vec::new();
    let mut proved_above: Vec<Rational> = Vec::new();
    for dir in [Direction::Qp, Direction::Pq] {
        let w = &report["witnesses"][dir.key()];
        let threshold = |key: &str| w[key].as_str().and_then(parse_rational);
        let at = |c: &Rational| -> Result<Enclosure> {
            let rows = query.delta(&DeltaJob {
                thresholds: vec![Threshold::ExpEps(c.clone())],
            })?;
            Ok(match dir {
                Direction::Qp => rows.result[0].qp.clone(),
                Direction::Pq => rows.result[0].pq.clone(),
            })
        };
        let field = format!("witnesses.{}", dir.key());
        if let (Some([qp, pq]), false) = (&singular, w["singular_mass"].is_null()) {
            let s = match dir {
                Direction::Qp => qp,
                Direction::Pq => pq,
            };
            tally.recomputed(&format!("{field}.singular_mass"), s, &label);
        }
        // A witness that holds proves its end of ε by itself (epsilon-for-delta.md): δ(c_hi) ≤ D
        // gives ε* ≤ ln c_hi ≤ ε.hi, and δ(c_lo) > D gives ε.lo ≤ ln c_lo ≤ ε* (δ is
        // non-increasing); so the end is shown even when a recomputed ε is wider than the
        // certified one (its search stops at a width, not at the precision).
        let eps_field = format!("eps_{}", dir.key());
        let eps = enclosure_at(&report[&eps_field], &eps_field)?;
        if let Some(hi) = threshold("exp_eps_hi").filter(|c| *c >= 1) {
            let d = at(&hi)?;
            if !w["delta_at_exp_eps_hi"].is_null() {
                tally.recomputed(&format!("{field}.delta_at_exp_eps_hi"), &d, &label);
            }
            if judge(&d, Side::AtMost, &delta) != Verdict::Sound {
                tally.problem(format!(
                    "{field}.exp_eps_hi: δ there is {d} ({route}), not certainly ≤ {}",
                    exact_string(&delta)
                ));
            } else {
                let above = ln_bracket(&hi, precision).1;
                if eps.hi() >= &Endpoint::Finite(above.clone()) {
                    tally.upper_shown(&eps_field);
                }
                proved_above.push(above);
            }
        }
        if let Some(lo) = threshold("exp_eps_lo").filter(|c| *c > 1) {
            let d = at(&lo)?;
            if d.compare(&delta) != Tri::Greater {
                tally.problem(format!(
                    "{field}.exp_eps_lo: δ there is {d} ({route}), not certainly > {}",
                    exact_string(&delta)
                ));
            } else {
                let below = ln_bracket(&lo, precision).0;
                if eps.lo() <= &Endpoint::Finite(below.clone()) {
                    tally.lower_shown(&eps_field, &label);
                }
                proved_below.push(below);
            }
        }
    }
    // ε*_two-sided = max(ε*_qp, ε*_pq): at least either direction's proven lower bound, and at
    // most the larger proven upper bound when both directions have one.
    let two_sided = enclosure_at(&report["eps_two_sided"], "eps_two_sided")?;
    if let Some(below) = proved_below.into_iter().max()
        && two_sided.lo() <= &Endpoint::Finite(below)
    {
        tally.lower_shown("eps_two_sided", &label);
    }
    if proved_above.len() == 2
        && let Some(above) = proved_above.into_iter().max()
        && two_sided.hi() >= &Endpoint::Finite(above)
    {
        tally.upper_shown("eps_two_sided");
    }
    Ok(())
}
