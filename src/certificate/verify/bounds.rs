//! A `bounds` certificate re-derived: every ordered pair's blanket sum and every triple's
//! concrete pair recomputed in MPFR at a higher precision (and, at small n, by the blanket
//! divergence's definition over raw outputs and by brute-force convolution of the concrete
//! pair, in pure-Rust rationals); every unordered pair of inputs covered, each once, pairs
//! summed once shown to have equal classes; the upper end at or above every pair's sum; the
//! lower end re-derived as its pair's δ; the shuffle index recomputed; the bracket of an
//! irrational `e^eps0` checked; and for binary inputs the exact profile's proof.  The range
//! itself (`verify_range`) is re-derived the same way wherever a certificate holds one: a range
//! audit's certificate holds one per group of claims (`range_audit`).

use super::profile::{ProfileProof, verify_profile};
use super::{Tally, enclosure_at, higher_precision, reference, users_at};
use crate::audit::verdict::{Side, Verdict, judge};
use crate::bounds::range::{
    BoundsQuery, EXP_EPS0_BRACKET_BITS, Target, blanket_pair, concrete_pair,
};
use crate::bounds::upper::Exact;
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, Endpoint, Tri, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Quantity;
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
    let range = RangeAt::read(report, "report.", method, "method.", "results.")?;
    if report["exp_eps0_bracket"] != method["exp_eps0_bracket"] {
        tally.problem("report.exp_eps0_bracket: not the bracket in method.exp_eps0_bracket");
    }
    verify_range(&range, r, settings, tally)?;
    let precision = higher_precision(settings);
    verify_index(report, r, settings, tally)?;
    let k = r.input_count();
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
        let mechanism = r.pair(0, 1)?;
        let proof = ProfileProof {
            prefix: "binary_profile.".into(),
            report: &profile["report"],
            method: &profile["method"],
            precision,
            finer: precision,
            // Randomized response given by a real ε0: also held against the profile on
            // rational rows at the two ends of a bracket of e^ε0 (data processing).
            bracket: mechanism.rational_bracket(precision),
        };
        let verified = verify_profile(&proof, &mechanism, settings, tally)?;
        // The proof must be of this n, every k, and the range's own thresholds or δ.
        let n = range.n;
        let wanted = range.target.quantities();
        let as_json = |q: &[Quantity]| q.iter().map(Quantity::to_json).collect::<Vec<_>>();
        if verified.n != n || verified.k_range != (0, n - 1) {
            tally.problem(format!(
                "method.binary_profile: covers n = {}, k in {:?}, not every k of n = {n}",
                verified.n, verified.k_range
            ));
        }
        if as_json(&verified.quantities) != as_json(&wanted) {
            tally.problem("method.binary_profile: profiles other quantities than the range's");
        }
    } else if k == 2 {
        tally.problem("method.binary_profile: binary inputs, but no exact profile");
    }
    verify_ceiling(cert, &range, r, settings, tally)
}

/// A ceiling (`--ceiling-seconds`): its search over every dataset re-derived from its proof
/// (`method.ceiling`), of this randomizer at this n and the range's quantities, mechanism-wide;
/// each row's `ceiling` must be that search's certified row.
fn verify_ceiling(
    cert: &Value,
    range: &RangeAt,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (report, method) = (&cert["report"], &cert["method"]);
    let given = &method["ceiling"];
    let rows_with = range
        .rows
        .iter()
        .filter(|row| !row["ceiling"].is_null())
        .count();
    if given.is_null() {
        if rows_with > 0 || report["ceiling"]["finished"] == true {
            tally.problem("report.ceiling: a ceiling without its search in method.ceiling");
        }
        return Ok(());
    }
    if report["ceiling"]["finished"] != true {
        tally.problem(
            "report.ceiling: a search in method.ceiling, but the report says none finished",
        );
    }
    if rows_with != range.rows.len() {
        tally.problem("report.results: not every row gives the ceiling's value");
    }
    let pre = "method.ceiling.";
    if given["report"]["randomizer"] != cert["mechanism"]["exact"]
        || given["report"]["n"].as_u64() != Some(range.n)
        || !given["method"]["slice"].is_null()
    {
        tally.problem(format!(
            "{pre}report: not a search over every dataset of this randomizer at n = {}",
            range.n
        ));
        return Ok(());
    }
    let levels = given["method"]["ceiling"].clone();
    if report["ceiling"]["levels"] != levels {
        tally.problem(format!(
            "report.ceiling.levels: not the levels of the search in {pre}method.ceiling"
        ));
    }
    let verified = super::profile_inputs::verify_inputs_proof(
        &given["report"],
        &given["method"],
        pre,
        r,
        settings,
        tally,
    )?;
    let wanted = range.target.quantities();
    let as_json = |q: &[Quantity]| q.iter().map(Quantity::to_json).collect::<Vec<_>>();
    let found: Vec<Quantity> = verified.iter().map(|(q, _)| q.clone()).collect();
    if as_json(&found) != as_json(&wanted) {
        tally.problem(format!(
            "{pre}method.quantities: not the range's quantities"
        ));
        return Ok(());
    }
    for (i, (row, (_, value))) in range.rows.iter().zip(&verified).enumerate() {
        let field = format!("report.{}{i}.ceiling", range.rows_prefix);
        let given = enclosure_at(&row["ceiling"], &field)?;
        if value.as_ref() != Some(&given) {
            tally.problem(format!(
                "{field}: {given} is not the search's certified row {}",
                value
                    .as_ref()
                    .map_or("(none)".to_string(), |v| v.to_string())
            ));
        }
    }
    Ok(())
}

/// One certified range as a certificate holds it: at `n`, its rows (`results`: per threshold,
/// or at the target δ, each end's value and attaining pair) and every sum behind them
/// (`upper_pairs`, `lower_triples`, `exp_eps0_bracket`), with the field paths problems name.
pub(super) struct RangeAt<'a> {
    pub n: u64,
    pub target: Target,
    pub rows: &'a [Value],
    /// Prefix of the rows' fields (`results.` in a `bounds` certificate).
    pub rows_prefix: String,
    /// The object holding the sums, and the prefix of its fields (`method.` for `bounds`).
    pub proof: &'a Value,
    pub proof_prefix: String,
}

impl<'a> RangeAt<'a> {
    /// The range in `at` (its `n`, `quantity`, `delta` and `results`, the fields at `prefix`)
    /// with the sums in `proof`.
    pub fn read(
        at: &'a Value,
        prefix: &str,
        proof: &'a Value,
        proof_prefix: &str,
        rows_prefix: &str,
    ) -> Result<RangeAt<'a>> {
        let n = users_at(&at["n"], &format!("{prefix}n"))?;
        let results = at["results"]
            .as_array()
            .ok_or_else(|| Error::argument(format!("{prefix}results"), "missing"))?;
        let target = match at["quantity"].as_str() {
            Some("eps_M(delta)") => Target::Epsilon(
                at["delta"]
                    .as_str()
                    .and_then(parse_rational)
                    .ok_or_else(|| Error::argument(format!("{prefix}delta"), "unreadable"))?,
            ),
            Some("delta_M(eps)") => Target::Delta(
                results
                    .iter()
                    .map(|row| {
                        row["eps"]
                            .as_str()
                            .and_then(Threshold::from_text)
                            .ok_or_else(|| {
                                Error::argument(format!("{prefix}results.eps"), "unreadable")
                            })
                    })
                    .collect::<Result<_>>()?,
            ),
            _ => return Err(Error::argument(format!("{prefix}quantity"), "unreadable")),
        };
        let rows = match &target {
            Target::Delta(t) => t.len(),
            Target::Epsilon(_) => 1,
        };
        if results.len() != rows {
            return Err(Error::argument(
                format!("{prefix}results"),
                "one row per threshold",
            ));
        }
        Ok(RangeAt {
            n,
            target,
            rows: results,
            rows_prefix: rows_prefix.to_string(),
            proof,
            proof_prefix: proof_prefix.to_string(),
        })
    }
}

/// A range re-derived: every ordered pair's blanket sum and every triple's concrete pair
/// recomputed in MPFR at a higher precision (and by the rational references where small), every
/// unordered pair of inputs covered once, the bracket of an irrational `e^eps0` checked, and
/// each row's ends: the upper at or above every pair's sum (for ε, by δ at its witness
/// thresholds), the lower re-derived as its pair's value.
pub(super) fn verify_range(
    at: &RangeAt<'_>,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (n, target, results, method) = (at.n, &at.target, at.rows, at.proof);
    let (pp, rp) = (&at.proof_prefix, &at.rows_prefix);
    let rows = results.len();
    let precision = higher_precision(settings);
    // The largest threshold e^ε any sum is evaluated at: the target's, or e^(the largest
    // certified finite ε end).
    let largest_eps = match target {
        Target::Delta(thresholds) => thresholds
            .iter()
            .map(|t| match t {
                Threshold::Eps(e) => e.clone(),
                Threshold::ExpEps(c) => crate::arith::ln_bracket(c, 64).1,
            })
            .max(),
        Target::Epsilon(_) => results
            .iter()
            .flat_map(|row| [&row["upper"]["value"], &row["lower"]["value"]])
            .filter_map(|v| match enclosure_at(v, "results.value").ok()?.hi() {
                Endpoint::Finite(hi) => Some(hi.clone()),
                _ => None,
            })
            .max(),
    };
    // An exact certificate's values can be points (δ at ε = 0): no MPFR enclosure confirms a
    // point, so its sums are redone in exact rationals, at the cost of the producing run.
    let exact = settings.backend == Backend::Exact
        && r.rows
            .iter()
            .flatten()
            .all(|e| matches!(e, crate::mechanism::Entry::Exact(_)));
    let depth = Depth {
        exact,
        precision,
        truncation_bits: settings.options.truncation_bits,
        cancellation_bits: largest_eps.map_or(0, |e| {
            // log2(e) < 1.443; only a steering figure (any depth is sound).
            let bits = (e * Rational::from((1443, 1000))).to_f64().ceil();
            bits.clamp(0.0, f64::from(MAX_FINER_CUT_BITS)) as u32
        }),
    };
    let label = depth.label();
    tally.route(label.clone());
    let query = BoundsQuery {
        randomizer: r.clone(),
        n,
        target: target.clone(),
        options: settings.options.clone(),
        backend: if exact {
            Backend::Exact
        } else {
            Backend::Mpfr { precision }
        },
        escalate_above: None,
    };
    // The rational randomizers the pairs (a_hi) and the triples (a_lo) are summed on.
    let bracket = r.rational_bracket(EXP_EPS0_BRACKET_BITS)?;
    check_bracket(method, pp, r, bracket.as_ref().map(|b| &b.exp_eps0), tally);
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
    let thresholds = match target {
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
    // For ε: e^(the upper end's ends), evaluated on each pair's recomputed sum in its pass.
    let upper_witness = match &target {
        Target::Epsilon(_) => witness_thresholds(&enclosure_at(
            &results[0]["upper"]["value"],
            "results.0.upper.value",
        )?),
        Target::Delta(_) => (None, None),
    };
    let extra: Vec<Rational> = upper_witness
        .0
        .iter()
        .chain(&upper_witness.1)
        .cloned()
        .collect();
    // Each representative pair's `[forward, reverse]` δ at those thresholds.
    let mut at_upper_witness: Vec<((usize, usize), Vec<[Enclosure; 2]>)> = Vec::new();
    let upper_pairs = method["upper_pairs"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (j, p) in upper_pairs.iter().enumerate() {
        let field = format!("{pp}upper_pairs.{j}");
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
        let recomputed = check_record(tally, &field, &values, target, depth, &extra, |t, d| {
            blanket_pair(
                &BoundsQuery {
                    target: t,
                    ..deeper(&q_above, d)
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
        let members = same_classes(tally, p, &field, (x1, x1p), &r.inputs, &name, |a, b| {
            exact_above.blanket_classes(a, b) == exact_above.blanket_classes(x1, x1p)
        })?;
        for (a, b) in members {
            covered[a.min(b)][a.max(b)] += 1;
            if thresholds.is_some() {
                let forward: Vec<Enclosure> = recomputed.iter().map(|[f, _]| f.clone()).collect();
                let reverse: Vec<Enclosure> = recomputed.iter().map(|[_, r]| r.clone()).collect();
                sums.push(((a, b), forward));
                sums.push(((b, a), reverse));
            }
        }
        if thresholds.is_none() {
            at_upper_witness.push(((x1, x1p), recomputed));
        }
        representatives.push((x1, x1p));
    }
    let pruned_field = format!("{pp}upper_pruned");
    let pruned = method["upper_pruned"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let pruned_members = check_pruned(
        tally,
        &Pruned {
            records: pruned,
            field: &pruned_field,
            end: "upper",
            results,
            rows_prefix: rp,
            target,
            n,
            inputs: &r.inputs,
        },
        |x1, x1p, _| exact_above.blanket_classes(x1, x1p),
        &name,
    )?;
    for (a, b) in pruned_members {
        covered[a.min(b)][a.max(b)] += 1;
    }
    for x1 in 0..k {
        for x1p in x1 + 1..k {
            if covered[x1][x1p] != 1 {
                tally.problem(format!(
                    "{pp}upper_pairs: the pair {{{}, {}}} is covered {} times, not once",
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
        let field = format!("{pp}lower_triples.{j}");
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
        check_record(tally, &field, &values, target, depth, &[], |t, d| {
            let q = BoundsQuery {
                target: t,
                ..deeper(&q_below, d)
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

    let pruned_field = format!("{pp}lower_pruned");
    let pruned = method["lower_pruned"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let exact_below = Exact::of(&below)?;
    check_pruned(
        tally,
        &Pruned {
            records: pruned,
            field: &pruned_field,
            end: "lower",
            results,
            rows_prefix: rp,
            target,
            n,
            inputs: &r.inputs,
        },
        |x1, x1p, x2| exact_below.reference_classes(x1, x1p, x2.unwrap_or(x1)),
        &name,
    )?;

    // The reported ends.
    for (i, row) in results.iter().enumerate() {
        let upper_field = format!("{rp}{i}.upper.value");
        let upper = enclosure_at(&row["upper"]["value"], &upper_field)?;
        tally.certified(&upper_field, upper.clone(), true);
        let pair = (
            name(&row["upper"]["x1"], &format!("{rp}{i}.upper.x1"))?,
            name(
                &row["upper"]["x1_prime"],
                &format!("{rp}{i}.upper.x1_prime"),
            )?,
        );
        let lower_field = format!("{rp}{i}.lower.value");
        let lower = enclosure_at(&row["lower"]["value"], &lower_field)?;
        tally.certified(&lower_field, lower.clone(), true);
        let ratio = crate::bounds::range::upper_over_lower(&lower, &upper);
        if row["ratio_upper_over_lower"].as_f64() != ratio {
            tally.problem(format!(
                "{rp}{i}.ratio_upper_over_lower: records {}, but the ends give {}",
                row["ratio_upper_over_lower"],
                ratio.map_or("none".into(), |r| r.to_string())
            ));
        }
        let (x1, x1p) = (
            name(&row["lower"]["x1"], &format!("{rp}{i}.lower.x1"))?,
            name(
                &row["lower"]["x1_prime"],
                &format!("{rp}{i}.lower.x1_prime"),
            )?,
        );
        // A lower end raised by `--search`: a mixed background's pair, recomputed by the
        // background pair engine (MPFR at the higher precision, exactly where rational).
        let searched = match &row["lower"]["others"] {
            Value::Null => None,
            others => Some(searched_counts(
                others,
                r,
                n,
                &format!("{rp}{i}.lower.others"),
            )?),
        };
        if let Some(counts) = &searched {
            let values = searched_pair(&query, r, (x1, x1p), counts, i, settings)?;
            for (route, value) in values {
                tally.recomputed(&lower_field, &value, &route);
            }
        }
        let x2 = match &row["lower"]["background"] {
            _ if searched.is_some() => x1,
            Value::Null if n == 1 => x1,
            b => name(b, &format!("{rp}{i}.lower.background"))?,
        };
        match target {
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
                let value = match &searched {
                    Some(_) => None,
                    None => Some(concrete_pair(&query, x1, x1p, x2)?[i].clone()),
                };
                if let Some(value) = &value {
                    tally.recomputed(&lower_field, value, &label);
                }
                if value.as_ref().is_some_and(|v| narrower_than(&lower, v)) {
                    let (m, w) = depth_for(&lower);
                    let finer = depth.finer(m, w);
                    tally.route(finer.label());
                    let value = concrete_pair(&deeper(&query, finer), x1, x1p, x2)?;
                    tally.recomputed(&lower_field, &value[i], &finer.label());
                }
            }
            Target::Epsilon(delta) => {
                // The upper end: every ordered pair's δ at e^hi is at most the target, and the
                // attaining pair's δ at e^lo above it.
                let (c_lo, c_hi) = witness_thresholds(&upper);
                let at = |c: &Rational, (a, b): (usize, usize), d: Depth| {
                    let t = Target::Delta(vec![Threshold::ExpEps(c.clone())]);
                    blanket_pair(
                        &BoundsQuery {
                            target: t,
                            ..deeper(&on(&above), d)
                        },
                        a,
                        b,
                    )
                };
                // The values at e^lo and e^hi from each pair's pass (`extra` above).
                let from_pass = |p: (usize, usize), which: usize| -> Option<[Enclosure; 2]> {
                    at_upper_witness
                        .iter()
                        .find(|(q, _)| *q == p)
                        .and_then(|(_, v)| v.get(which).cloned())
                };
                let hi_index = usize::from(c_lo.is_some());
                if let Some(c) = &c_hi {
                    let mut every = true;
                    for &p in &representatives {
                        for side in 0..2 {
                            let first = from_pass(p, hi_index).map(|v| v[side].clone());
                            if let Some(v) = &first
                                && witnessed(std::slice::from_ref(v), false, true, delta).1
                            {
                                continue;
                            }
                            let (v, _) = witness_values(tally, depth, false, true, delta, |d| {
                                Ok(vec![at(c, p, d)?[0][side].clone()])
                            })?;
                            every &= witnessed(&v, false, true, delta).1;
                        }
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
                    let first = from_pass(pair, 0)
                        .map(|v| v[0].clone())
                        .or_else(|| from_pass((pair.1, pair.0), 0).map(|v| v[1].clone()));
                    match first {
                        Some(v) if witnessed(std::slice::from_ref(&v), true, false, delta).0 => {
                            tally.lower_shown(&upper_field, &label);
                        }
                        _ => {
                            let (v, route) =
                                witness_values(tally, depth, true, false, delta, |d| {
                                    Ok(vec![at(c, pair, d)?[0][0].clone()])
                                })?;
                            mark(tally, &upper_field, &v, true, false, delta, &route);
                        }
                    }
                }
                let (c_lo, c_hi) = witness_thresholds(&lower);
                let t: Vec<Threshold> = c_lo
                    .iter()
                    .chain(&c_hi)
                    .cloned()
                    .map(Threshold::ExpEps)
                    .collect();
                if !t.is_empty() && searched.is_none() {
                    let (v, route) =
                        witness_values(tally, depth, c_lo.is_some(), c_hi.is_some(), delta, |d| {
                            concrete_pair(
                                &BoundsQuery {
                                    target: Target::Delta(t.clone()),
                                    ..deeper(&query, d)
                                },
                                x1,
                                x1p,
                                x2,
                            )
                        })?;
                    mark(
                        tally,
                        &lower_field,
                        &v,
                        c_lo.is_some(),
                        c_hi.is_some(),
                        delta,
                        &route,
                    );
                }
            }
        }
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

/// The deepest windows' cut a finer recomputation uses: a certificate's numbers choose the
/// depth, so they must not choose an unbounded one (a value it cannot show at this depth is
/// named as a problem).
const MAX_FINER_CUT_BITS: u32 = 16_384;

/// Whether a recomputation `r` leaves an end of the certified `c` unshown while still agreeing
/// with it: `c` is narrower than `r` but overlaps it.  A disjoint `c` is refuted, and no finer
/// recomputation can change that.
fn narrower_than(c: &Enclosure, r: &Enclosure) -> bool {
    (c.lo() > r.lo() || c.hi() < r.hi()) && c.overlaps(r)
}

/// How deep a record is recomputed: the MPFR precision and the windows' cut (`None`: the
/// backend's default).
#[derive(Clone, Copy)]
struct Depth {
    /// In exact rationals (an exact certificate of a rational randomizer): every depth is the
    /// same exact computation.
    exact: bool,
    precision: u32,
    truncation_bits: Option<u32>,
    /// log2 of the largest threshold `t = e^ε` summed at: `a − t·b` loses about this many bits
    /// to cancellation.
    cancellation_bits: u32,
}

impl Depth {
    /// Deep enough that a value around `2^-magnitude` comes out with `2^-resolution` relative
    /// width: windows cut 32 bits below both, in at least twice the precision and 64 bits more
    /// than the cut plus the bits cancellation takes.  (Any depth is sound; this one only has
    /// to be fine enough.)
    fn finer(self, magnitude: u32, resolution: u32) -> Depth {
        let cut = magnitude
            .saturating_add(resolution)
            .saturating_add(32)
            .min(MAX_FINER_CUT_BITS);
        Depth {
            exact: self.exact,
            precision: (2 * self.precision).max(cut + 64 + self.cancellation_bits),
            truncation_bits: Some(cut.max(self.truncation_bits.unwrap_or(0))),
            cancellation_bits: self.cancellation_bits,
        }
    }

    fn label(self) -> String {
        if self.exact {
            return "exact rationals".into();
        }
        match self.truncation_bits {
            Some(bits) => format!("mpfr-{}, windows cut at 2^-{bits}", self.precision),
            None => format!("mpfr-{}", self.precision),
        }
    }
}

/// `q` recomputed at `depth`.
fn deeper(q: &BoundsQuery, depth: Depth) -> BoundsQuery {
    let mut q = q.clone();
    if depth.exact {
        q.backend = Backend::Exact;
        return q;
    }
    q.backend = Backend::Mpfr {
        precision: depth.precision,
    };
    if depth.truncation_bits.is_some() {
        q.options.truncation_bits = depth.truncation_bits;
    }
    q
}

/// δ at an ε's witness thresholds (`c_lo` if `has_lo`, then `c_hi` if `has_hi`), recomputed at
/// `depth`, and once more at a depth that resolves values near the target when that neither
/// shows nor refutes both ends; with the route that gave them.
fn witness_values(
    tally: &mut Tally,
    depth: Depth,
    has_lo: bool,
    has_hi: bool,
    delta: &Rational,
    at: impl Fn(Depth) -> Result<Vec<Enclosure>>,
) -> Result<(Vec<Enclosure>, String)> {
    let v = at(depth)?;
    let (lo, hi) = witnessed(&v, has_lo, has_hi, delta);
    let (lo_refuted, hi_refuted) = refuted(&v, has_lo, has_hi, delta);
    if (lo && hi) || lo_refuted || hi_refuted {
        return Ok((v, depth.label()));
    }
    let target_value = Enclosure::from_rationals(delta.clone(), delta.clone());
    let finer = depth.finer(depth_for(&target_value).0, 64);
    tally.route(finer.label());
    Ok((at(finer)?, finer.label()))
}

/// `-log2(x)` rounded up, for a positive rational (0 for x ≥ 1).
fn bits_below_one(x: &Rational) -> u32 {
    let (num, den) = (x.numer().significant_bits(), x.denom().significant_bits());
    den.saturating_sub(num).saturating_add(1)
}

/// The depth at which values like `v` show both their ends: `2^-magnitude` and the relative
/// width they certify.
fn depth_for(v: &Enclosure) -> (u32, u32) {
    let magnitude = match v.hi() {
        Endpoint::Finite(hi) if *hi > 0 => bits_below_one(hi),
        _ => 0,
    };
    let width = v.relative_width();
    let resolution = if width > 0.0 && width.is_finite() {
        (-width.log2()).ceil().clamp(0.0, 4096.0) as u32
    } else {
        64
    };
    (magnitude, resolution)
}

/// Holds a record's values (`[forward, reverse]` per row) against a recomputation at `depth`:
/// δ rows value by value, an ε row by δ at its witness thresholds.  Where that leaves an end
/// unshown (a certified value narrower than the recomputation, as a tilted sum's can be), the
/// record is recomputed once more at a finer depth before a problem is named.  Returns the
/// recomputed δ values; for ε, the values at the `extra` thresholds (e^ε of the range's ends,
/// which the caller's checks need from the same sum).
fn check_record(
    tally: &mut Tally,
    field: &str,
    values: &[[Enclosure; 2]],
    target: &Target,
    depth: Depth,
    extra: &[Rational],
    recompute: impl Fn(Target, Depth) -> Result<Vec<[Enclosure; 2]>>,
) -> Result<Vec<[Enclosure; 2]>> {
    match target {
        Target::Delta(_) => {
            let first = recompute(target.clone(), depth)?;
            let mut needed = None::<(u32, u32)>;
            for (row, got) in values.iter().zip(&first) {
                for side in 0..2 {
                    let (c, r) = (&row[side], &got[side]);
                    if narrower_than(c, r) {
                        let (m, w) = depth_for(c);
                        let (m0, w0) = needed.unwrap_or((0, 0));
                        needed = Some((m.max(m0), w.max(w0)));
                    }
                }
            }
            let record = |tally: &mut Tally, recomputed: &[[Enclosure; 2]], route: &str| {
                for (i, [f, b]) in recomputed.iter().enumerate() {
                    tally.recomputed(&format!("{field}.values.{i}.0"), f, route);
                    tally.recomputed(&format!("{field}.values.{i}.1"), b, route);
                }
            };
            record(tally, &first, &depth.label());
            let Some((magnitude, resolution)) = needed else {
                return Ok(first);
            };
            let finer = depth.finer(magnitude, resolution);
            let second = recompute(target.clone(), finer)?;
            tally.route(finer.label());
            record(tally, &second, &finer.label());
            Ok(second)
        }
        Target::Epsilon(delta) => {
            // Both sides' witness thresholds and the caller's `extra` ones, in one recomputation
            // (one sum evaluated at each), once more finer if an end is not shown.
            let sides = [0, 1].map(|side| witness_thresholds(&values[0][side]));
            let mut thresholds: Vec<Rational> = Vec::new();
            let mut spans = Vec::new();
            for (lo, hi) in &sides {
                let start = thresholds.len();
                thresholds.extend(lo.iter().chain(hi).cloned());
                spans.push(start..thresholds.len());
            }
            let base = thresholds.len();
            thresholds.extend(extra.iter().cloned());
            if thresholds.is_empty() {
                return Ok(Vec::new());
            }
            let run = |d: Depth| {
                recompute(
                    Target::Delta(thresholds.iter().cloned().map(Threshold::ExpEps).collect()),
                    d,
                )
            };
            let shown = |all: &[[Enclosure; 2]]| {
                (0..2).all(|side| {
                    let v: Vec<Enclosure> = all[spans[side].clone()]
                        .iter()
                        .map(|p| p[side].clone())
                        .collect();
                    let (lo, hi) =
                        witnessed(&v, sides[side].0.is_some(), sides[side].1.is_some(), delta);
                    lo && hi
                })
            };
            let refuted = |all: &[[Enclosure; 2]]| {
                (0..2).any(|side| {
                    let v: Vec<Enclosure> = all[spans[side].clone()]
                        .iter()
                        .map(|p| p[side].clone())
                        .collect();
                    let (lo, hi) =
                        refuted(&v, sides[side].0.is_some(), sides[side].1.is_some(), delta);
                    lo || hi
                })
            };
            let mut all = run(depth)?;
            let mut route = depth.label();
            if !shown(&all) && !refuted(&all) {
                // δ at the witnesses lies near the target: resolve it relative to that.
                let target_value = Enclosure::from_rationals(delta.clone(), delta.clone());
                let finer = depth.finer(depth_for(&target_value).0, 64);
                all = run(finer)?;
                route = finer.label();
                tally.route(route.clone());
            }
            for side in 0..2 {
                let v: Vec<Enclosure> = all[spans[side].clone()]
                    .iter()
                    .map(|p| p[side].clone())
                    .collect();
                let (c_lo, c_hi) = &sides[side];
                let f = format!("{field}.values.0.{side}");
                mark(tally, &f, &v, c_lo.is_some(), c_hi.is_some(), delta, &route);
            }
            Ok(all[base..].to_vec())
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

/// A recorded pair and the pairs of equal classes it stands for (`same_classes`), each checked
/// by `same` to have them.
fn same_classes(
    tally: &mut Tally,
    record: &Value,
    field: &str,
    pair: (usize, usize),
    inputs: &[String],
    name: &impl Fn(&Value, &str) -> Result<usize>,
    same: impl Fn(usize, usize) -> bool,
) -> Result<Vec<(usize, usize)>> {
    let mut members = vec![pair];
    for (m, other) in record["same_classes"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{field}.same_classes.{m}");
        let other = (name(&other[0], &at)?, name(&other[1], &at)?);
        if !same(other.0, other.1) {
            tally.problem(format!(
                "{at}: the pair {} -> {} does not have the classes of {} -> {}",
                inputs[other.0], inputs[other.1], inputs[pair.0], inputs[pair.1]
            ));
        }
        members.push(other);
    }
    Ok(members)
}

/// The pairs (or triples) one end of a range did without, as a certificate records them.
struct Pruned<'a> {
    records: &'a [Value],
    /// Their field (`method.upper_pruned`), and the end they were left out of.
    field: &'a str,
    end: &'a str,
    results: &'a [Value],
    rows_prefix: &'a str,
    target: &'a Target,
    n: u64,
    inputs: &'a [String],
}

/// Each pruned pair's (or triple's) Chernoff bounds re-evaluated in MPFR at their recorded `t`
/// and `s` (proofs-notes/chernoff-pruning.md), and shown to keep it at or below the end at every
/// row, both directions: `t` at most the row's threshold and the bound at most the end's upper
/// endpoint (for ε: `t` at most `e^{hi}` of the end, and the bound at most the target δ).  An
/// unbounded end needs nothing.  Pairs
/// of equal classes are checked to have them.  Returns every pair the records stand for.
fn check_pruned(
    tally: &mut Tally,
    p: &Pruned<'_>,
    classes_of: impl Fn(usize, usize, Option<usize>) -> (Vec<crate::bounds::upper::Class>, Rational),
    name: &impl Fn(&Value, &str) -> Result<usize>,
) -> Result<Vec<(usize, usize)>> {
    let mut members = Vec::new();
    if !p.records.is_empty() {
        tally.route(
            "Chernoff bounds of the pairs not summed, re-evaluated in MPFR at their t and s",
        );
    }
    for (j, record) in p.records.iter().enumerate() {
        let field = format!("{}.{j}", p.field);
        let x1 = name(&record["x1"], &format!("{field}.x1"))?;
        let x1p = name(&record["x1_prime"], &format!("{field}.x1_prime"))?;
        let x2 = match &record["x2"] {
            Value::Null => None,
            v => Some(name(v, &format!("{field}.x2"))?),
        };
        let (classes, gamma) = classes_of(x1, x1p, x2);
        let sum = crate::bounds::chernoff::Sum {
            classes: &classes,
            gamma: &gamma,
            n: p.n,
        };
        let rows = record["chernoff"].as_array().map_or(&[][..], Vec::as_slice);
        if rows.len() != p.results.len() {
            tally.problem(format!("{field}.chernoff: not one entry per row"));
            continue;
        }
        for (i, row) in rows.iter().enumerate() {
            let end_field = format!("{}{i}.{}.value", p.rows_prefix, p.end);
            let end = enclosure_at(&p.results[i][p.end]["value"], &end_field)?;
            // Sound when the pair's value is at most the end's upper endpoint (the run pruned
            // against the lower endpoint it had then, which a later sum may have replaced).
            let Endpoint::Finite(hi) = end.hi() else {
                continue;
            };
            // The largest t allowed and the largest bound allowed at this row.
            let (t_max, limit) = match p.target {
                Target::Delta(thresholds) => (
                    crate::bounds::range::threshold_below(&thresholds[i]),
                    hi.clone(),
                ),
                Target::Epsilon(delta) => (
                    crate::bounds::chernoff::threshold_below_exp(hi),
                    delta.clone(),
                ),
            };
            for side in 0..2 {
                let at = format!("{field}.chernoff.{i}.{side}");
                let read = |key: &str| -> Result<Rational> {
                    row.get(side)
                        .and_then(|b| b[key].as_str())
                        .and_then(parse_rational)
                        .ok_or_else(|| Error::argument(format!("{at}.{key}"), "unreadable"))
                };
                let (t, s, bound) = (read("t")?, read("s")?, read("bound")?);
                let again = sum.bound_at(&t, &s, side == 1);
                if again.as_ref().is_none_or(|v| *v > bound) {
                    tally.problem(format!(
                        "{at}.bound: the Chernoff bound at t = {}, s = {} is {}, not at most {}",
                        exact_string(&t),
                        exact_string(&s),
                        again.map_or("undefined".into(), |v| exact_string(&v)),
                        exact_string(&bound)
                    ));
                }
                if t > t_max || bound > limit {
                    let (a, b) = if side == 0 { (x1, x1p) } else { (x1p, x1) };
                    tally.problem(format!(
                        "{at}: {} -> {} is not shown below the {} end (t {} above {} or bound {} above {})",
                        p.inputs[a],
                        p.inputs[b],
                        p.end,
                        exact_string(&t),
                        exact_string(&t_max),
                        exact_string(&bound),
                        exact_string(&limit)
                    ));
                }
            }
        }
        members.extend(same_classes(
            tally,
            record,
            &field,
            (x1, x1p),
            p.inputs,
            name,
            |a, b| classes_of(a, b, x2).0 == classes,
        )?);
    }
    Ok(members)
}

/// Whether δ at an ε's witness thresholds shows its ends (`values`: δ at `c_lo` if given, then
/// at `c_hi` if given): above the target at `c_lo`, at most it at `c_hi`.
fn witnessed(values: &[Enclosure], has_lo: bool, has_hi: bool, delta: &Rational) -> (bool, bool) {
    let mut at = values.iter();
    let lo = !has_lo || at.next().is_some_and(|d| d.compare(delta) == Tri::Greater);
    let hi = !has_hi
        || at
            .next()
            .is_some_and(|d| judge(d, Side::AtMost, delta) == Verdict::Sound);
    (lo, hi)
}

/// Whether δ at an ε's witness thresholds refutes its ends: at most the target at `c_lo`, above
/// it at `c_hi` (no finer recomputation can show such an end).
fn refuted(values: &[Enclosure], has_lo: bool, has_hi: bool, delta: &Rational) -> (bool, bool) {
    let mut at = values.iter();
    let lo = has_lo
        && at
            .next()
            .is_some_and(|d| judge(d, Side::AtMost, delta) == Verdict::Sound);
    let hi = has_hi && at.next().is_some_and(|d| d.compare(delta) == Tri::Greater);
    (lo, hi)
}

/// Marks the ends of a certified ε shown by δ at its witness thresholds, naming each that is
/// not.
fn mark(
    tally: &mut Tally,
    field: &str,
    values: &[Enclosure],
    has_lo: bool,
    has_hi: bool,
    delta: &Rational,
    route: &str,
) {
    let (lo, hi) = witnessed(values, has_lo, has_hi, delta);
    let mut at = values.iter();
    if has_lo {
        let d = at.next().expect("δ at c_lo");
        if lo {
            tally.lower_shown(field, route);
        } else {
            tally.problem(format!(
                "{field}: δ at e^(its lower end) is {d}, not certainly above the target"
            ));
        }
    }
    if has_hi {
        let d = at.next().expect("δ at c_hi");
        if hi {
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
    prefix: &str,
    r: &Randomizer,
    bracket: Option<&(Rational, Rational)>,
    tally: &mut Tally,
) {
    let recorded = &method["exp_eps0_bracket"];
    let Some((lo, hi)) = bracket else {
        if !recorded.is_null() {
            tally.problem(format!(
                "{prefix}exp_eps0_bracket: the randomizer's entries are rational"
            ));
        }
        return;
    };
    let read = |i: usize| recorded[i].as_str().and_then(parse_rational);
    if read(0).as_ref() != Some(lo) || read(1).as_ref() != Some(hi) {
        tally.problem(format!(
            "{prefix}exp_eps0_bracket: records {recorded}, not the {EXP_EPS0_BRACKET_BITS}-bit bracket [{}, {}]",
            exact_string(lo),
            exact_string(hi)
        ));
        return;
    }
    let eps0 = r.eps0.clone().unwrap_or_default();
    let (tight_lo, tight_hi) = crate::arith::exp_bracket(&eps0, 2 * EXP_EPS0_BRACKET_BITS);
    if !(*lo <= tight_lo && tight_hi <= *hi && lo < hi) {
        tally.problem(format!("{prefix}exp_eps0_bracket: does not contain e^eps0"));
    } else {
        tally.route(format!(
            "e^eps0 bracket held against a {}-bit one",
            2 * EXP_EPS0_BRACKET_BITS
        ));
    }
}

/// The shuffle index recomputed in MPFR and, for rational rows, in exact rationals (whose
/// enclosures the certificate's, computed exactly, must then contain).
pub(super) fn verify_index(
    report: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let precision = higher_precision(settings);
    // Which inputs attain each index, as the producing backend finds them.
    let (up, lo) = crate::bounds::index::shuffle_index_for(r, settings.backend)?;
    for (key, v) in [("chi_up", &up), ("chi_lo", &lo)] {
        let shown = &report["shuffle_index"][key];
        let want = [
            ("x1", serde_json::json!(r.inputs[v.pair.0])),
            ("x1_prime", serde_json::json!(r.inputs[v.pair.1])),
            (
                "reference",
                serde_json::json!(v.reference.map(|x| &r.inputs[x])),
            ),
        ];
        for (part, value) in want {
            if shown[part] != value {
                tally.problem(format!(
                    "shuffle_index.{key}.{part}: records {}, but the index is attained at {value}",
                    shown[part]
                ));
            }
        }
    }
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

/// The others' counts of a searched lower end (`{"input": count, …}`), adding up to n − 1.
fn searched_counts(v: &Value, r: &Randomizer, n: u64, field: &str) -> Result<Vec<u64>> {
    let map = v
        .as_object()
        .ok_or_else(|| Error::argument(field, "expected counts by input"))?;
    let mut counts = vec![0u64; r.inputs.len()];
    for (input, count) in map {
        let x = r
            .inputs
            .iter()
            .position(|name| name == input)
            .ok_or_else(|| Error::argument(field, format!("{input} is not an input")))?;
        counts[x] = count
            .as_u64()
            .ok_or_else(|| Error::argument(field, "expected whole counts"))?;
    }
    if counts.iter().try_fold(0u64, |s, c| s.checked_add(*c)) != Some(n - 1) {
        return Err(Error::argument(
            field,
            format!("must add up to n − 1 = {}", n - 1),
        ));
    }
    Ok(counts)
}

/// Row `i` of a searched lower end, `x1 → x1′` with the others' `counts`, recomputed in each
/// route (MPFR at the verifying precision, exactly where affordable).
fn searched_pair(
    query: &BoundsQuery,
    r: &Randomizer,
    (x1, x1p): (usize, usize),
    counts: &[u64],
    i: usize,
    settings: &Settings,
) -> Result<Vec<(String, Enclosure)>> {
    let subject = super::pair::PairSubject::Background {
        randomizer: r,
        background: crate::exact::background::Background {
            counts: counts.to_vec(),
            switch: (x1, x1p),
        },
    };
    subject
        .routes(settings, higher_precision(settings))
        .into_iter()
        .map(|(label, backend)| {
            let pair = subject.query(settings, backend);
            // The switch (x1, x1′): `pq` is δ(P_{x1} ‖ P_{x1′}), the dataset pair x1 → x1′.
            let value = match &query.target {
                Target::Delta(thresholds) => {
                    pair.delta(&crate::query::DeltaJob {
                        thresholds: vec![thresholds[i].clone()],
                    })?
                    .result
                    .remove(0)
                    .pq
                }
                Target::Epsilon(delta) => {
                    pair.epsilon(&crate::query::EpsilonJob {
                        delta: delta.clone(),
                    })?
                    .result
                    .pq
                    .eps
                }
            };
            Ok((label, value))
        })
        .collect()
}
