//! A `bounds` certificate re-derived: every ordered pair's blanket sum and every triple's
//! concrete pair recomputed in MPFR at a higher precision (and, at small n, by the blanket
//! divergence's definition over raw outputs and by brute-force convolution of the concrete
//! pair, in pure-Rust rationals); every unordered pair of inputs covered, each once, pairs
//! summed once shown to have equal classes; the upper end at or above every pair's sum; the
//! lower end re-derived as its pair's δ; the shuffle index recomputed; the bracket of an
//! irrational `e^eps0` checked; and for binary inputs the exact profile's proof.

use super::profile::{ProfileProof, verify_profile};
use super::{Tally, enclosure_at, higher_precision, reference, u64_at};
use crate::audit::verdict::{Side, Verdict, judge};
use crate::bounds::range::{
    BoundsQuery, EXP_EPS0_BRACKET_BITS, Target, blanket_pair, concrete_pair,
};
use crate::bounds::upper::Exact;
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, Endpoint, Tri, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::query::{Backend, Threshold};
use num_rational::BigRational;
use rug::Rational;
use serde_json::Value;

/// Largest number of histograms the rational references run over.
const REFERENCE_STATES: u64 = 20_000;

pub(super) fn verify_bounds(
    cert: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (report, method) = (&cert["report"], &cert["method"]);
    let n = u64_at(&report["n"], "report.n")?;
    let results = report["results"]
        .as_array()
        .ok_or_else(|| Error::argument("report.results", "missing"))?;
    let target = match report["quantity"].as_str() {
        Some("eps_M(delta)") => Target::Epsilon(
            report["delta"]
                .as_str()
                .and_then(parse_rational)
                .ok_or_else(|| Error::argument("report.delta", "unreadable"))?,
        ),
        Some("delta_M(eps)") => Target::Delta(
            results
                .iter()
                .map(|row| {
                    row["eps"]
                        .as_str()
                        .and_then(Threshold::from_text)
                        .ok_or_else(|| Error::argument("report.results.eps", "unreadable"))
                })
                .collect::<Result<_>>()?,
        ),
        _ => return Err(Error::argument("report.quantity", "unreadable")),
    };
    let rows = match &target {
        Target::Delta(t) => t.len(),
        Target::Epsilon(_) => 1,
    };
    if results.len() != rows {
        return Err(Error::argument("report.results", "one row per threshold"));
    }
    let precision = higher_precision(settings);
    let label = format!("mpfr-{precision}");
    tally.route(label.clone());
    let query = BoundsQuery {
        randomizer: r.clone(),
        n,
        target: target.clone(),
        options: settings.options.clone(),
        backend: Backend::Mpfr { precision },
        escalate_above: None,
    };
    // The rational randomizers the pairs (a_hi) and the triples (a_lo) are summed on.
    let bracket = r.rational_bracket(EXP_EPS0_BRACKET_BITS)?;
    check_bracket(method, r, bracket.as_ref().map(|b| &b.exp_eps0), tally);
    let (below, above) = match &bracket {
        Some(b) => (b.lower.clone(), b.upper.clone()),
        None => (r.clone(), r.clone()),
    };
    let on = |randomizer: &Randomizer| BoundsQuery {
        randomizer: randomizer.clone(),
        ..query.clone()
    };
    let name = |v: &Value, field: &str| -> Result<usize> {
        let text = v
            .as_str()
            .ok_or_else(|| Error::argument(field, "expected an input's name"))?;
        r.inputs
            .iter()
            .position(|x| x == text)
            .ok_or_else(|| Error::argument(field, format!("\"{text}\" is not an input")))
    };
    let small = |d: usize| {
        r.rows
            .iter()
            .flatten()
            .all(|e| matches!(e, crate::mechanism::Entry::Exact(_)))
            && reference::blanket_states(n, d).is_some_and(|c| c <= REFERENCE_STATES)
    };
    let thresholds = match &target {
        Target::Delta(t) => Some(t.clone()),
        Target::Epsilon(_) => None,
    };

    // Upper: every ordered pair's sum, each unordered pair covered once.
    let k = r.input_count();
    let mut covered = vec![vec![0u32; k]; k];
    let exact_above = Exact::of(&above)?;
    // Recomputed sums by ordered pair (for the upper end's dominance check).
    let mut sums: Vec<((usize, usize), Vec<Enclosure>)> = Vec::new();
    let mut representatives: Vec<(usize, usize)> = Vec::new();
    let upper_pairs = method["upper_pairs"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (j, p) in upper_pairs.iter().enumerate() {
        let field = format!("method.upper_pairs.{j}");
        let (x1, x1p) = (
            name(&p["x1"], &format!("{field}.x1"))?,
            name(&p["x1_prime"], &format!("{field}.x1_prime"))?,
        );
        let values = record_values(p, rows, &field)?;
        for (i, [f, b]) in values.iter().enumerate() {
            tally.certified(&format!("{field}.values.{i}.0"), f.clone(), true);
            tally.certified(&format!("{field}.values.{i}.1"), b.clone(), true);
        }
        let q_above = on(&above);
        let recomputed = check_record(tally, &field, &values, &target, &label, |t| {
            blanket_pair(
                &BoundsQuery {
                    target: t,
                    ..q_above.clone()
                },
                x1,
                x1p,
            )
        })?;
        if let Some(t) = &thresholds
            && small(r.d())
        {
            let big = big_rows(&above);
            let route = "blanket divergence by its definition over raw outputs (num-rational)";
            tally.route(route);
            for (i, threshold) in t.iter().enumerate() {
                for (side, (a, b)) in [(x1, x1p), (x1p, x1)].into_iter().enumerate() {
                    let e = between(threshold, |c| {
                        reference::blanket_divergence(&big, a, b, n, c)
                    });
                    tally.recomputed(&format!("{field}.values.{i}.{side}"), &e, route);
                }
            }
        }
        let mut members = vec![(x1, x1p)];
        for (m, same) in p["same_classes"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let pair = (
                name(&same[0], &format!("{field}.same_classes.{m}"))?,
                name(&same[1], &format!("{field}.same_classes.{m}"))?,
            );
            if exact_above.blanket_classes(pair.0, pair.1) != exact_above.blanket_classes(x1, x1p) {
                tally.problem(format!(
                    "{field}.same_classes.{m}: the pair {} -> {} does not have the classes of {} -> {}",
                    r.inputs[pair.0], r.inputs[pair.1], r.inputs[x1], r.inputs[x1p]
                ));
            }
            members.push(pair);
        }
        for (a, b) in members {
            covered[a.min(b)][a.max(b)] += 1;
            let forward: Vec<Enclosure> = recomputed.iter().map(|[f, _]| f.clone()).collect();
            let reverse: Vec<Enclosure> = recomputed.iter().map(|[_, r]| r.clone()).collect();
            sums.push(((a, b), forward));
            sums.push(((b, a), reverse));
        }
        representatives.push((x1, x1p));
    }
    for x1 in 0..k {
        for x1p in x1 + 1..k {
            if covered[x1][x1p] != 1 {
                tally.problem(format!(
                    "method.upper_pairs: the pair {{{}, {}}} is covered {} times, not once",
                    r.inputs[x1], r.inputs[x1p], covered[x1][x1p]
                ));
            }
        }
    }

    // Lower: every triple's concrete pair.
    let triples = method["lower_triples"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (j, p) in triples.iter().enumerate() {
        let field = format!("method.lower_triples.{j}");
        let (x1, x1p, x2) = (
            name(&p["x1"], &format!("{field}.x1"))?,
            name(&p["x1_prime"], &format!("{field}.x1_prime"))?,
            name(&p["x2"], &format!("{field}.x2"))?,
        );
        let values = record_values(p, rows, &field)?;
        for (i, [f, b]) in values.iter().enumerate() {
            tally.certified(&format!("{field}.values.{i}.0"), f.clone(), true);
            tally.certified(&format!("{field}.values.{i}.1"), b.clone(), true);
        }
        let q_below = on(&below);
        check_record(tally, &field, &values, &target, &label, |t| {
            let q = BoundsQuery {
                target: t,
                ..q_below.clone()
            };
            let forward = concrete_pair(&q, x1, x1p, x2)?;
            let reverse = concrete_pair(&q, x1p, x1, x2)?;
            Ok(forward
                .into_iter()
                .zip(reverse)
                .map(|(f, b)| [f, b])
                .collect())
        })?;
        if let Some(t) = &thresholds
            && n <= reference::MAX_USERS
            && small(r.d())
        {
            let route = "the concrete pair by brute-force convolution (num-rational, no GMP)";
            tally.route(route);
            let big = big_rows(&below);
            let rows_in_play: Vec<Option<Vec<BigRational>>> = big.into_iter().map(Some).collect();
            let mut counts = vec![0u64; k];
            counts[x2] = n - 1;
            let (pl, ql) = reference::background_pair(&rows_in_play, &counts, (x1, x1p));
            for (i, threshold) in t.iter().enumerate() {
                for (side, (a, b)) in [(&pl, &ql), (&ql, &pl)].into_iter().enumerate() {
                    let e = between(threshold, |c| reference::positive_part(a, b, c));
                    tally.recomputed(&format!("{field}.values.{i}.{side}"), &e, route);
                }
            }
        }
    }

    // The reported ends.
    for (i, row) in results.iter().enumerate() {
        let upper_field = format!("results.{i}.upper.value");
        let upper = enclosure_at(&row["upper"]["value"], &upper_field)?;
        tally.certified(&upper_field, upper.clone(), true);
        let pair = (
            name(&row["upper"]["x1"], &format!("results.{i}.upper.x1"))?,
            name(
                &row["upper"]["x1_prime"],
                &format!("results.{i}.upper.x1_prime"),
            )?,
        );
        let lower_field = format!("results.{i}.lower.value");
        let lower = enclosure_at(&row["lower"]["value"], &lower_field)?;
        tally.certified(&lower_field, lower.clone(), true);
        let (x1, x1p) = (
            name(&row["lower"]["x1"], &format!("results.{i}.lower.x1"))?,
            name(
                &row["lower"]["x1_prime"],
                &format!("results.{i}.lower.x1_prime"),
            )?,
        );
        let x2 = match &row["lower"]["background"] {
            Value::Null if n == 1 => x1,
            b => name(b, &format!("results.{i}.lower.background"))?,
        };
        match &target {
            Target::Delta(_) => {
                match sums.iter().find(|(p, _)| *p == pair) {
                    Some((_, v)) => tally.recomputed(&upper_field, &v[i], &label),
                    None => tally.problem(format!(
                        "{upper_field}: its pair {} -> {} is not among the summed pairs",
                        r.inputs[pair.0], r.inputs[pair.1]
                    )),
                }
                // Sound only if at or above every ordered pair's sum.
                if let Some(((a, b), v)) = sums.iter().find(|(_, v)| upper.hi() < v[i].hi()) {
                    tally.problem(format!(
                        "{upper_field}: its upper end {} is not above the sum {} of {} -> {}",
                        upper, v[i], r.inputs[*a], r.inputs[*b]
                    ));
                }
                let value = concrete_pair(&query, x1, x1p, x2)?;
                tally.recomputed(&lower_field, &value[i], &label);
            }
            Target::Epsilon(delta) => {
                // The upper end: every ordered pair's δ at e^hi is at most the target, and the
                // attaining pair's δ at e^lo above it.
                let (c_lo, c_hi) = witness_thresholds(&upper);
                if let Some(c) = &c_hi {
                    let at_hi = |(a, b): (usize, usize)| {
                        let t = Target::Delta(vec![Threshold::ExpEps(c.clone())]);
                        blanket_pair(
                            &BoundsQuery {
                                target: t,
                                ..on(&above)
                            },
                            a,
                            b,
                        )
                    };
                    let mut every = true;
                    for &p in &representatives {
                        let v = at_hi(p)?;
                        every &= v[0]
                            .iter()
                            .all(|d| judge(d, Side::AtMost, delta) == Verdict::Sound);
                    }
                    if every {
                        tally.upper_shown(&upper_field);
                    } else {
                        tally.problem(format!(
                            "{upper_field}: some pair's δ at e^(its upper end) is not certainly at most the target"
                        ));
                    }
                }
                if let Some(c) = &c_lo {
                    let t = Target::Delta(vec![Threshold::ExpEps(c.clone())]);
                    let v = blanket_pair(
                        &BoundsQuery {
                            target: t,
                            ..on(&above)
                        },
                        pair.0,
                        pair.1,
                    )?;
                    mark(
                        tally,
                        &upper_field,
                        &[v[0][0].clone()],
                        true,
                        false,
                        delta,
                        &label,
                    );
                }
                let (c_lo, c_hi) = witness_thresholds(&lower);
                let t: Vec<Threshold> = c_lo
                    .iter()
                    .chain(&c_hi)
                    .cloned()
                    .map(Threshold::ExpEps)
                    .collect();
                if !t.is_empty() {
                    let v = concrete_pair(
                        &BoundsQuery {
                            target: Target::Delta(t),
                            ..query.clone()
                        },
                        x1,
                        x1p,
                        x2,
                    )?;
                    mark(
                        tally,
                        &lower_field,
                        &v,
                        c_lo.is_some(),
                        c_hi.is_some(),
                        delta,
                        &label,
                    );
                }
            }
        }
    }

    verify_index(report, r, precision, tally)?;
    if !method["binary_profile"].is_null() {
        let profile = &method["binary_profile"];
        let rows: Vec<&Value> = match profile["report"]["results"].as_array() {
            Some(results) => results.iter().map(|row| &row["delta_profile"]).collect(),
            None => profile["report"]["eps_results"]
                .as_array()
                .map(|rows| rows.iter().map(|row| &row["eps_profile"]).collect())
                .unwrap_or_default(),
        };
        if report["binary_profile"]
            .as_array()
            .map(|v| v.iter().collect::<Vec<_>>())
            != Some(rows)
        {
            tally.problem(
                "report.binary_profile: not the rows of the profile in method.binary_profile",
            );
        }
        let proof = ProfileProof {
            prefix: "binary_profile.".into(),
            report: &profile["report"],
            method: &profile["method"],
            precision,
            finer: precision,
        };
        let mechanism = r.pair(0, 1)?;
        verify_profile(&proof, &mechanism, settings, tally)?;
    } else if k == 2 {
        tally.problem("method.binary_profile: binary inputs, but no exact profile");
    }
    Ok(())
}

/// A record's `[forward, reverse]` values, one pair per row.
fn record_values(p: &Value, rows: usize, field: &str) -> Result<Vec<[Enclosure; 2]>> {
    let values = p["values"]
        .as_array()
        .ok_or_else(|| Error::argument(format!("{field}.values"), "missing"))?;
    if values.len() != rows {
        return Err(Error::argument(
            format!("{field}.values"),
            "one pair of values per row",
        ));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Ok([
                enclosure_at(&v[0], &format!("{field}.values.{i}.0"))?,
                enclosure_at(&v[1], &format!("{field}.values.{i}.1"))?,
            ])
        })
        .collect()
}

/// Re-derives a record's `[forward, reverse]` values with `recompute` (the pair's values for a
/// target): δ recomputed and held against them; ε shown by δ at witness thresholds (a lower
/// end by δ above the target at `c ≥ e^lo`, an upper end by δ at most the target at
/// `c ≤ e^hi`).  Returns the recomputed δ rows (empty for ε).
fn check_record(
    tally: &mut Tally,
    field: &str,
    values: &[[Enclosure; 2]],
    target: &Target,
    route: &str,
    recompute: impl Fn(Target) -> Result<Vec<[Enclosure; 2]>>,
) -> Result<Vec<[Enclosure; 2]>> {
    match target {
        Target::Delta(_) => {
            let recomputed = recompute(target.clone())?;
            for (i, [f, b]) in recomputed.iter().enumerate() {
                tally.recomputed(&format!("{field}.values.{i}.0"), f, route);
                tally.recomputed(&format!("{field}.values.{i}.1"), b, route);
            }
            Ok(recomputed)
        }
        Target::Epsilon(delta) => {
            for side in 0..2 {
                let (c_lo, c_hi) = witness_thresholds(&values[0][side]);
                let t: Vec<Threshold> = c_lo
                    .iter()
                    .chain(&c_hi)
                    .cloned()
                    .map(Threshold::ExpEps)
                    .collect();
                if t.is_empty() {
                    continue;
                }
                let v: Vec<Enclosure> = recompute(Target::Delta(t))?
                    .into_iter()
                    .map(|pair| pair[side].clone())
                    .collect();
                let f = format!("{field}.values.0.{side}");
                mark(tally, &f, &v, c_lo.is_some(), c_hi.is_some(), delta, route);
            }
            Ok(Vec::new())
        }
    }
}

/// The witness thresholds of a certified ε: `c_lo ≥ e^lo` (when lo > 0) and `c_hi ≤ e^hi`
/// (when hi is finite).
fn witness_thresholds(eps: &Enclosure) -> (Option<Rational>, Option<Rational>) {
    let bits = 2 * EXP_EPS0_BRACKET_BITS;
    let c_lo = match eps.lo() {
        Endpoint::Finite(lo) if *lo > 0 => Some(crate::arith::exp_bracket(lo, bits).1),
        _ => None,
    };
    let c_hi = match eps.hi() {
        Endpoint::Finite(hi) => Some(crate::arith::exp_bracket(hi, bits).0),
        _ => None,
    };
    (c_lo, c_hi)
}

/// Marks the ends of a certified ε shown by δ at its witness thresholds (`values`: δ at `c_lo`
/// if given, then at `c_hi` if given).
fn mark(
    tally: &mut Tally,
    field: &str,
    values: &[Enclosure],
    has_lo: bool,
    has_hi: bool,
    delta: &Rational,
    route: &str,
) {
    let mut at = values.iter();
    if has_lo {
        let d = at.next().expect("δ at c_lo");
        if d.compare(delta) == Tri::Greater {
            tally.lower_shown(field, route);
        } else {
            tally.problem(format!(
                "{field}: δ at e^(its lower end) is {d}, not certainly above the target"
            ));
        }
    }
    if has_hi {
        let d = at.next().expect("δ at c_hi");
        if judge(d, Side::AtMost, delta) == Verdict::Sound {
            tally.upper_shown(field);
        } else {
            tally.problem(format!(
                "{field}: δ at e^(its upper end) is {d}, not certainly at most the target"
            ));
        }
    }
}

/// The rows as `BigRational`s (every entry exact).
fn big_rows(r: &Randomizer) -> Vec<Vec<BigRational>> {
    r.rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|e| reference::parse(&e.text()).expect("an exact entry"))
                .collect()
        })
        .collect()
}

/// A value non-increasing in `e^ε`, enclosed between its values at the ends of the threshold's
/// bracket.
fn between(threshold: &Threshold, at: impl Fn(&BigRational) -> BigRational) -> Enclosure {
    let (c_lo, c_hi) = match threshold {
        Threshold::ExpEps(c) => {
            let c = reference::parse(&exact_string(c)).expect("an exact rational");
            (c.clone(), c)
        }
        Threshold::Eps(e) => {
            reference::exp_bracket(&reference::parse(&exact_string(e)).expect("exact"))
        }
    };
    let from_big = |x: BigRational| {
        parse_rational(&format!("{}/{}", x.numer(), x.denom())).expect("a rational")
    };
    Enclosure::from_rationals(from_big(at(&c_hi)), from_big(at(&c_lo)))
}

/// The recorded bracket of `e^eps0` must be the one the ends are computed on, and a tighter
/// bracket must lie inside it.
fn check_bracket(
    method: &Value,
    r: &Randomizer,
    bracket: Option<&(Rational, Rational)>,
    tally: &mut Tally,
) {
    let recorded = &method["exp_eps0_bracket"];
    let Some((lo, hi)) = bracket else {
        if !recorded.is_null() {
            tally.problem("method.exp_eps0_bracket: the randomizer's entries are rational");
        }
        return;
    };
    let read = |i: usize| recorded[i].as_str().and_then(parse_rational);
    if read(0).as_ref() != Some(lo) || read(1).as_ref() != Some(hi) {
        tally.problem(format!(
            "method.exp_eps0_bracket: records {recorded}, not the {EXP_EPS0_BRACKET_BITS}-bit bracket [{}, {}]",
            exact_string(lo),
            exact_string(hi)
        ));
        return;
    }
    let eps0 = r.eps0.clone().unwrap_or_default();
    let (tight_lo, tight_hi) = crate::arith::exp_bracket(&eps0, 2 * EXP_EPS0_BRACKET_BITS);
    if !(*lo <= tight_lo && tight_hi <= *hi && lo < hi) {
        tally.problem("method.exp_eps0_bracket: does not contain e^eps0");
    } else {
        tally.route(format!(
            "e^eps0 bracket held against a {}-bit one",
            2 * EXP_EPS0_BRACKET_BITS
        ));
    }
}

/// The shuffle index recomputed in MPFR and, for rational rows, in exact rationals (whose
/// enclosures the certificate's, computed exactly, must then contain).
fn verify_index(report: &Value, r: &Randomizer, precision: u32, tally: &mut Tally) -> Result<()> {
    let mut routes = vec![(
        format!("mpfr-{precision}"),
        crate::bounds::index::shuffle_index::<crate::arith::mpfr::MpfrInterval>(
            r,
            &crate::arith::mpfr::MpfrCtx { precision },
        )?,
    )];
    let rational = r
        .rows
        .iter()
        .flatten()
        .all(|e| matches!(e, crate::mechanism::Entry::Exact(_)));
    if rational {
        routes.push((
            "exact".to_string(),
            crate::bounds::index::shuffle_index::<Rational>(r, &Default::default())?,
        ));
    }
    for key in ["chi_up", "chi_lo"] {
        for part in ["chi", "chi2"] {
            let field = format!("shuffle_index.{key}.{part}");
            let certified = enclosure_at(&report["shuffle_index"][key][part], &field)?;
            tally.certified(&field, certified, true);
        }
    }
    for (label, (up, lo)) in routes {
        tally.route(label.clone());
        for (key, v) in [("chi_up", &up), ("chi_lo", &lo)] {
            for (part, value) in [("chi", &v.chi), ("chi2", &v.chi2)] {
                tally.recomputed(&format!("shuffle_index.{key}.{part}"), value, &label);
            }
        }
    }
    Ok(())
}
