//! `check` certificates (`proofs-notes/check-points.md`): the pair's δ at both ends of each
//! point's ε bracket and its divergences are recomputed by the pair routes; each point's ε is
//! held in its bracket exactly (ε = tμ_n, μ_n² = I_π/n with I_π exact for a rational mechanism);
//! each comparison's certified enclosure must contain what the verified values give, and its
//! verdict is re-derived from it.  Predictions stay uncertified: they are made again by the
//! producing code and must match, labels, formulas and errors included.  A sweep's other sizes
//! are checked the same way (their k scaled, their points the base's, t kept), and its order
//! fits made again from the verified values.  `check` without `--k` is `index_check`.

use super::pair::{PairSubject, delta_routes};
use super::{Tally, enclosure_at, u64_at, users_at};
use crate::arith::Scalar;
use crate::asymptotic::constants;
use crate::certificate::Settings;
use crate::check::Verdict;
use crate::enclosure::{Enclosure, Endpoint, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::query::{Backend, DivergenceJob};
use rug::Rational;
use serde_json::Value;

/// The divergences a check compares, as its certificate names them.
const DIVERGENCES: [&str; 5] = ["jsd", "kl_qp", "kl_pq", "chi2_qp", "hellinger2"];

/// A point of the check: how it was given and the rational bracket of its ε.
struct Point {
    given: Given,
    bracket: (Rational, Rational),
}

enum Given {
    T(Rational),
    Eps(Rational),
}

fn exact(v: &Value, field: &str) -> Result<Rational> {
    v.as_str()
        .and_then(parse_rational)
        .ok_or_else(|| Error::argument(field, "not an exact number"))
}

fn points(method: &Value, mp: &str) -> Result<Vec<Point>> {
    method["points"]
        .as_array()
        .ok_or_else(|| Error::argument(format!("{mp}points"), "missing"))?
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let field = format!("{mp}points.{i}");
            let value = exact(&p["value"], &format!("{field}.value"))?;
            let given = match p["given"].as_str() {
                Some("t") => Given::T(value),
                Some("eps") => Given::Eps(value),
                _ => return Err(Error::argument(format!("{field}.given"), "not t or eps")),
            };
            let bracket = (
                exact(&p["eps_bracket"][0], &format!("{field}.eps_bracket"))?,
                exact(&p["eps_bracket"][1], &format!("{field}.eps_bracket"))?,
            );
            Ok(Point { given, bracket })
        })
        .collect()
}

/// `[a, b]` of a finite enclosure.
fn ends(e: &Enclosure) -> Option<(Rational, Rational)> {
    match (e.lo(), e.hi()) {
        (Endpoint::Finite(a), Endpoint::Finite(b)) => Some((a.clone(), b.clone())),
        _ => None,
    }
}

/// Whether `[lo, hi]` holds `√x` for every `x` in `[x_lo, x_hi]` (x ≥ 0).
fn holds_sqrt(lo: &Rational, hi: &Rational, (x_lo, x_hi): (&Rational, &Rational)) -> bool {
    let below = *lo <= 0 || Rational::from(lo * lo) <= *x_lo;
    let above = *hi >= 0 && Rational::from(hi * hi) >= *x_hi;
    below && above
}

/// Where one n's check sits in a certificate: its report fields (n, k, pi, constants,
/// comparisons) and its method fields (points, delta_rows, divergences, arithmetic), with the
/// prefixes problems name them by.  The base n's are `report.` and `method.`; a sweep's other
/// n each sit whole in `method.sweep.{i}.`.
struct At<'a> {
    report: &'a Value,
    method: &'a Value,
    rp: String,
    mp: String,
    /// For another n of a sweep: `I_π/n` of the base n (an enclosure `(lo, hi)`), at which the
    /// points given by ε were turned into t (t = ε/μ_n is what a sweep keeps).
    base_mu2: Option<(Rational, Rational)>,
}

/// Verifies a `check` certificate of a binary-input pair: the base n, every other n of a sweep
/// (its k scaled as `check` scales it), and the order fits made again from the verified values.
pub(super) fn verify_check(
    cert: &Value,
    mechanism: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (report, method) = (&cert["report"], &cert["method"]);
    let n = users_at(&report["n"], "report.n")?;
    let k = u64_at(&report["k"], "report.k")?;
    if k >= n {
        return Err(Error::argument("report.k", "must be below n"));
    }
    let n_sweep: Vec<u64> = match &method["n_sweep"] {
        Value::Null => Vec::new(),
        v => v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>())
            .ok_or_else(|| Error::argument("method.n_sweep", "not a list of sizes"))?,
    };
    if n_sweep.contains(&0) {
        return Err(Error::argument(
            "method.n_sweep",
            "every n must be at least 1",
        ));
    }
    // The predictions, made again by the producing code at every n (they are uncertified; the
    // certified values it computes on the way are not used).
    let again = {
        use crate::check::{CheckQuery, CurvePoint};
        let points = points(method, "method.")?
            .into_iter()
            .map(|p| match p.given {
                Given::T(t) => CurvePoint::T(t),
                Given::Eps(e) => CurvePoint::Eps(e),
            })
            .collect();
        crate::check::check(&CheckQuery {
            pair: super::pair_query(mechanism, n, k, settings, Backend::Interval),
            points,
            sweep: n_sweep.clone(),
            plot_samples: 0,
        })?
    };
    tally.route("predictions, labels and points recomputed (uncertified, by the producing code)");
    let base = At {
        report,
        method,
        rp: "report.".into(),
        mp: "method.".into(),
        base_mu2: None,
    };
    let (base_mu2, base_comparisons, optimistic) =
        verify_at(&base, (n, k), &again.base, mechanism, settings, tally)?;
    if report["optimistic"] != optimistic {
        tally.problem(format!(
            "report.optimistic: says {}, but {optimistic} verdicts are optimistic",
            report["optimistic"]
        ));
    }
    // The other sizes, each once, in the order given.
    let mut others: Vec<u64> = Vec::new();
    for &m in &n_sweep {
        if m != n && !others.contains(&m) {
            others.push(m);
        }
    }
    let entries = method["sweep"].as_array().map_or(&[][..], Vec::as_slice);
    if entries.len() != others.len() {
        tally.problem(format!(
            "method.sweep: {} sizes recorded, but --n-sweep {:?} has {} besides n = {n}",
            entries.len(),
            n_sweep,
            others.len()
        ));
    }
    let mut verified = Vec::with_capacity(entries.len());
    for (i, (entry, &m)) in entries.iter().zip(&others).enumerate() {
        let prefix = format!("method.sweep.{i}.");
        // The same points as the base n, as given (a sweep keeps each point's t).
        let given = |v: &Value| -> Vec<Value> {
            v["points"]
                .as_array()
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|p| serde_json::json!([p["given"], p["value"]]))
                .collect()
        };
        if given(entry) != given(method) {
            tally.problem(format!(
                "{prefix}points: not the base n's points (a sweep keeps each point's t)"
            ));
            continue;
        }
        let want_k = crate::check::sweep_k(n, k, m);
        let (em, ek) = (
            users_at(&entry["n"], &format!("{prefix}n"))?,
            u64_at(&entry["k"], &format!("{prefix}k"))?,
        );
        if (em, ek) != (m, want_k) {
            tally.problem(format!(
                "{prefix}n: (n, k) = ({em}, {ek}), but the sweep's size {m} has k = {want_k} (k/n kept as near as whole users allow)"
            ));
            continue;
        }
        let Some(made) = again.sweep.iter().find(|a| a.n == m) else {
            return Err(Error::Internal(format!(
                "the sweep made again has no n = {m}"
            )));
        };
        let at = At {
            report: entry,
            method: entry,
            rp: prefix.clone(),
            mp: prefix.clone(),
            base_mu2: Some(base_mu2.clone()),
        };
        let (_, comparisons, _) = verify_at(&at, (m, want_k), made, mechanism, settings, tally)?;
        verified.push((m, comparisons));
    }
    // The fits, made again from the verified values (uncertified doubles, for reading).
    let mut all: Vec<(u64, &[crate::check::Comparison])> =
        verified.iter().map(|(m, c)| (*m, &c[..])).collect();
    if !n_sweep.is_empty() {
        all.push((n, &base_comparisons));
    }
    let fits = if n_sweep.is_empty() {
        Vec::new()
    } else {
        crate::check::order_fits(&base_comparisons, all)
    };
    if !fits.is_empty() {
        tally.route("order fits made again from the verified certified values and the predictions (uncertified)");
    }
    let want: Vec<Value> = fits.iter().map(crate::check::OrderFit::to_json).collect();
    if report["sweep"].as_array().map_or(&[][..], Vec::as_slice) != want.as_slice() {
        tally.problem("report.sweep: not the order fits the verified values give");
    }
    Ok(())
}

/// Verifies one n of a check, `(n, k)` read and checked by the caller, against `again`, the
/// check made again there; returns its `I_π/n` (enclosed), its comparisons as verified (the
/// predictions made again, against the verified certified values) and its count of optimistic
/// verdicts.
fn verify_at(
    at: &At<'_>,
    (n, k): (u64, u64),
    again: &crate::check::CheckAt,
    mechanism: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<((Rational, Rational), Vec<crate::check::Comparison>, usize)> {
    let (report, method, rp, mp) = (at.report, at.method, &at.rp, &at.mp);
    let pi = Rational::from((k, n));
    if report["pi"] != exact_string(&pi) {
        tally.problem(format!("{rp}pi: not k/n = {}", exact_string(&pi)));
    }
    // I_π exactly where the mechanism is rational, else its enclosure; μ_n² = I_π/n.
    let c = constants(mechanism, &pi)?;
    let i_pi = match &c.exact {
        Some(e) => Enclosure::point(e.i_pi.clone()),
        None => c.enclosed.i_pi.enclosure(),
    };
    let Some((i_lo, i_hi)) = ends(&i_pi) else {
        return Err(Error::Internal(format!(
            "I_π could not be enclosed: {i_pi}"
        )));
    };
    tally.route(
        "I_pi at k/n (exact for a rational mechanism); eps = t mu_n held in each bracket exactly",
    );
    let recorded = enclosure_at(&report["constants"]["i_pi"], &format!("{rp}constants.i_pi"))?;
    if !(recorded.lo() <= i_pi.lo() && recorded.hi() >= i_pi.hi()) {
        tally.problem(format!(
            "{rp}constants.i_pi: {recorded} does not hold I_π = {i_pi}"
        ));
    }
    // m unbundled messages: μ² = m·I_π/n.
    let messages = mechanism.unbundled_messages() as u64;
    let mu2 = (
        Rational::from(&i_lo * messages) / n,
        Rational::from(&i_hi * messages) / n,
    );
    match ends(&enclosure_at(
        &report["constants"]["mu_n"],
        &format!("{rp}constants.mu_n"),
    )?) {
        Some((lo, hi)) if holds_sqrt(&lo, &hi, (&mu2.0, &mu2.1)) => {}
        _ => tally.problem(format!("{rp}constants.mu_n: does not hold √(m·I_π/n)")),
    }
    let points = points(method, mp)?;
    for (i, p) in points.iter().enumerate() {
        let (lo, hi) = &p.bracket;
        let held = match &p.given {
            // ε² = t²·I_π/n.
            Given::T(t) => {
                let t2 = Rational::from(t * t);
                *t >= 0
                    && holds_sqrt(
                        lo,
                        hi,
                        (&Rational::from(&t2 * &mu2.0), &Rational::from(&t2 * &mu2.1)),
                    )
            }
            Given::Eps(e) => match &at.base_mu2 {
                None => lo <= e && e <= hi,
                // Another n of a sweep: ε_m = t μ_m with t = ε/μ_n, so ε_m² = ε² (I_m/m)/(I_n/n).
                Some((b_lo, b_hi)) => {
                    let e2 = Rational::from(e * e);
                    *b_lo > 0
                        && holds_sqrt(
                            lo,
                            hi,
                            (
                                &(Rational::from(&e2 * &mu2.0) / b_hi),
                                &(Rational::from(&e2 * &mu2.1) / b_lo),
                            ),
                        )
                }
            },
        };
        if !held {
            tally.problem(format!(
                "{mp}points.{i}.eps_bracket: [{}, {}] does not hold the point's ε",
                exact_string(lo),
                exact_string(hi)
            ));
        }
    }
    // δ at both ends of every bracket, by the pair routes.
    let rows = method["delta_rows"]
        .as_array()
        .ok_or_else(|| Error::argument(format!("{mp}delta_rows"), "missing"))?;
    if rows.len() != 2 * points.len() {
        return Err(Error::argument(
            format!("{mp}delta_rows"),
            "not two rows (ε_lo, ε_hi) per point",
        ));
    }
    let mut at_ends = Vec::with_capacity(rows.len());
    for (j, row) in rows.iter().enumerate() {
        let p = &points[j / 2];
        let wanted = if j % 2 == 0 {
            &p.bracket.0
        } else {
            &p.bracket.1
        };
        if exact(&row["eps"], &format!("{mp}delta_rows.{j}.eps"))? != *wanted {
            tally.problem(format!(
                "{mp}delta_rows.{j}.eps: not its point's bracket end"
            ));
        }
        let mut both = Vec::with_capacity(2);
        for key in ["delta_qp", "delta_pq"] {
            let field = format!("{mp}delta_rows.{j}.{key}");
            let e = enclosure_at(&row[key], &field)?;
            tally.certified(&field, e.clone(), true);
            both.push(e);
        }
        at_ends.push(both);
    }
    let subject = PairSubject::Binary { mechanism, n, k };
    let mut divergences = Vec::with_capacity(DIVERGENCES.len());
    for name in DIVERGENCES {
        let field = format!("{mp}divergences.{name}");
        let e = enclosure_at(&method["divergences"][name], &field)?;
        tally.certified(&field, e.clone(), true);
        divergences.push((name, e));
    }
    let arithmetic = serde_json::json!({ "arithmetic": method["arithmetic"] });
    let precision = subject.precision(settings, &arithmetic);
    let label = format!("mpfr-{precision}");
    // The δ rows by the pair routes, and the divergences as a `divergences` certificate's are
    // recomputed: two independent recomputations, side by side.
    let (rows_checked, recomputed) = rayon::join(
        || {
            delta_routes(
                &format!("{mp}delta_rows."),
                &method["delta_rows"],
                ["delta_qp", "delta_pq"],
                &method["arithmetic"],
                &subject,
                settings,
                tally,
            )
        },
        || {
            subject
                .query(settings, Backend::Mpfr { precision })
                .divergences(&DivergenceJob {
                    renyi_orders: Vec::new(),
                })
        },
    );
    rows_checked?;
    let d = recomputed?.result;
    tally.route(label.clone());
    for (name, e) in [
        ("jsd", d.jsd),
        ("kl_qp", d.kl_qp),
        ("kl_pq", d.kl_pq),
        ("chi2_qp", d.chi2_qp),
        ("hellinger2", d.hellinger2),
    ] {
        tally.recomputed(&format!("{mp}divergences.{name}"), &e, &label);
    }
    // Each comparison: its certified enclosure holds what the verified values give, and its
    // verdict follows from it.
    let comparisons = report["comparisons"]
        .as_array()
        .ok_or_else(|| Error::argument(format!("{rp}comparisons"), "missing"))?;
    let derived =
        "delta non-increasing in eps: [delta(eps_hi).lo, delta(eps_lo).hi] of the verified rows";
    tally.route(derived);
    let mut optimistic = 0;
    for (j, c) in comparisons.iter().enumerate() {
        let field = format!("{rp}comparisons.{j}");
        let certified = enclosure_at(&c["certified"], &format!("{field}.certified"))?;
        let quantity = c["quantity"].as_str().unwrap_or_default();
        let backing = match quantity {
            "delta_qp" | "delta_pq" => {
                let d = usize::from(quantity == "delta_pq");
                let point = c["point"]
                    .as_u64()
                    .map(|p| p as usize)
                    .filter(|p| *p < points.len())
                    .ok_or_else(|| Error::argument(format!("{field}.point"), "out of range"))?;
                let (lo, hi) = &points[point].bracket;
                if enclosure_at(&c["eps"], &format!("{field}.eps"))?
                    != Enclosure::from_rationals(lo.clone(), hi.clone())
                {
                    tally.problem(format!("{field}.eps: not its point's bracket"));
                }
                let (at_hi, at_lo) = (&at_ends[2 * point + 1][d], &at_ends[2 * point][d]);
                if at_hi.lo() > at_lo.hi() {
                    // δ is non-increasing in ε: rows like these cannot both hold.
                    tally.problem(format!(
                        "{mp}delta_rows.{}: δ at ε_hi lies above δ at ε_lo",
                        2 * point + 1
                    ));
                    continue;
                }
                Enclosure::new(at_hi.lo().clone(), at_lo.hi().clone())
            }
            name => match divergences.iter().find(|(d, _)| *d == name) {
                Some((_, e)) => e.clone(),
                None => {
                    tally.problem(format!(
                        "{field}.quantity: {name:?} is not a checked quantity"
                    ));
                    continue;
                }
            },
        };
        let cfield = format!("{field}.certified");
        tally.certified(&cfield, certified.clone(), true);
        if certified.lo() <= backing.lo() {
            tally.lower_shown(&cfield, derived);
        }
        if certified.hi() >= backing.hi() {
            tally.upper_shown(&cfield);
        }
        if c["predicted"]["certified"] != Value::Bool(false) {
            tally.problem(format!(
                "{field}.predicted.certified: a prediction is uncertified"
            ));
        }
        let formula = enclosure_at(
            &c["predicted"]["formula_enclosure"],
            &format!("{field}.predicted.formula_enclosure"),
        )?;
        let verdict = Verdict::of(&formula, &certified);
        if verdict == Verdict::Optimistic {
            optimistic += 1;
        }
        if c["verdict"] != verdict.name() {
            tally.problem(format!(
                "{field}.verdict: says {}, but the prediction against the certified value is {}",
                c["verdict"],
                verdict.name()
            ));
        }
    }
    let verified = check_predictions(at, again, tally)?;
    Ok((mu2, verified, optimistic))
}

/// The recorded comparisons held against `again`, the check made again by the producing code
/// (the predictions depend only on the mechanism, n, k and the points, and are uncertified):
/// the certificate must show every comparison it makes, with the same labels, points, formula
/// enclosures and errors (the verdicts then follow from the verified certified values), and
/// the same mixture constants.
fn check_predictions(
    at: &At<'_>,
    again: &crate::check::CheckAt,
    tally: &mut Tally,
) -> Result<Vec<crate::check::Comparison>> {
    let (report, rp) = (at.report, &at.rp);
    let recorded = report["comparisons"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if recorded.len() != again.comparisons.len() {
        tally.problem(format!(
            "{rp}comparisons: {} listed, but the points make {}",
            recorded.len(),
            again.comparisons.len()
        ));
    }
    crate::enclosure::with_exact_endpoints(|| {
        for (j, (c, want)) in recorded.iter().zip(&again.comparisons).enumerate() {
            let point = want.point.map(|i| &again.points[i]);
            let same = c["prediction"] == want.prediction
                && c["source"] == want.source
                && c["quantity"] == want.quantity
                && c["claimed_order"] == want.claimed
                && c["scope_note"] == serde_json::json!(want.scope_note)
                && c["point"] == serde_json::json!(want.point)
                && c["t"] == point.map_or(Value::Null, |p| p.t.to_json())
                && c["predicted"]["formula_enclosure"] == want.predicted.formula.to_json()
                && c["predicted"]["value"] == serde_json::json!(want.predicted.value());
            if !same {
                tally.problem(format!(
                    "{rp}comparisons.{j}: not the comparison the points make ({} of {} at point {:?})",
                    want.prediction, want.quantity, want.point
                ));
            }
        }
        let values = |e: &Enclosure| e.to_json();
        let c = match &again.constants.exact {
            Some(x) => x.map(crate::arith::Scalar::enclosure),
            None => again
                .constants
                .enclosed
                .map(crate::arith::Scalar::enclosure),
        };
        for (key, want) in [
            ("i_mix", values(&c.i_mix)),
            ("mu_mix", values(&again.mu_mix)),
        ] {
            let got = &report["constants"][key];
            if got["lo"] != want["lo"] || got["hi"] != want["hi"] {
                tally.problem(format!(
                    "{rp}constants.{key}: not the mixture constant of the mechanism at k/n"
                ));
            }
        }
    });
    // The comparisons as verified: the predictions made again, against the recorded certified
    // values (each shown to hold its verified values above).
    recorded
        .iter()
        .zip(&again.comparisons)
        .enumerate()
        .map(|(j, (c, want))| {
            let field = format!("{rp}comparisons.{j}");
            let made = want.clone().against(enclosure_at(
                &c["certified"],
                &format!("{field}.certified"),
            )?);
            if c["abs_error"] != serde_json::json!(made.abs_error)
                || c["rel_error"] != serde_json::json!(made.rel_error)
            {
                tally.problem(format!(
                    "{field}: its errors are not the prediction's against the certified value"
                ));
            }
            Ok(made)
        })
        .collect()
}
