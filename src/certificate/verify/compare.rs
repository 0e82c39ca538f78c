//! A compare certificate: per n, the profile's proof re-derived (`profile`), the boundary
//! pair's ε and every published bound recomputed in MPFR at a higher precision, and every
//! ratio and status derived again from the certified values.

use super::profile::{ProfileProof, verify_profile};
use super::{Tally, enclosure_at, higher_precision, pair_query, u64_at};
use crate::accountants::{LocalPrivacy, published_bounds};
use crate::audit::compare::BoundRow;
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, Endpoint, parse_rational, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::mechanism::Mechanism;
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Quantity;
use crate::progress::Stage;
use crate::query::{Backend, EpsilonJob, Threshold, answer};
use serde_json::Value;

/// The report's target δ, and its local parameters derived again from the mechanism (both
/// kinds of compare certificate; the input domain is checked by `verify` for every kind).
fn delta_and_local(report: &Value, r: &Randomizer, tally: &mut Tally) -> Result<rug::Rational> {
    let delta = report["delta"]
        .as_str()
        .and_then(parse_rational)
        .ok_or_else(|| Error::argument("report.delta", "not an exact number"))?;
    crate::exact::curve::check_target(&delta)?;
    match LocalPrivacy::of_randomizer(r)? {
        Some(local) => {
            let derived = with_exact_endpoints(|| local.to_json());
            if report["local"] != derived {
                tally.problem(format!(
                    "report.local: records {}, but the mechanism gives {derived}",
                    report["local"]
                ));
            }
        }
        None => tally.problem("report.local: the mechanism is not ε0-LDP for any finite ε0"),
    }
    Ok(delta)
}

pub fn verify_compare(
    cert: &Value,
    m: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let report = &cert["report"];
    let delta = delta_and_local(report, &Randomizer::from_mechanism(m.clone()), tally)?;
    let precision = higher_precision(settings);
    // Randomized response given by a real ε0: every scan is also held against the same profile
    // on rational rows at the two ends of a bracket of e^ε0 (data processing).
    let bracket = crate::certificate::recorded_bracket(
        cert,
        crate::certificate::family_meaning(cert),
        precision,
    )?;
    let label = format!("mpfr-{precision}");
    let results = report["results"].as_array().cloned().unwrap_or_default();
    let scans = cert["method"]["scans"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if results.len() != scans.len() {
        tally.problem(format!(
            "method.scans: {} scans for {} results",
            scans.len(),
            results.len()
        ));
        return Ok(());
    }
    for (i, (result, scan)) in results.iter().zip(&scans).enumerate() {
        let field = format!("report.results.{i}");
        let n = u64_at(&result["n"], &format!("{field}.n"))?;
        // The mechanism's ε: the scan's row, whose proof is re-derived.
        if scan["report"]["n"].as_u64() != Some(n)
            || scan["report"]["mechanism"] != cert["mechanism"]["exact"]
        {
            tally.problem(format!(
                "method.scans.{i}: not a scan of this mechanism at n = {n}"
            ));
            continue;
        }
        let proof = ProfileProof {
            prefix: format!("method.scans.{i}."),
            report: &scan["report"],
            method: &scan["method"],
            precision,
            finer: precision,
            bracket: bracket.clone(),
        };
        let verified = verify_profile(&proof, m, settings, tally)?;
        if verified.n != n || verified.k_range != (0, n.saturating_sub(1)) {
            tally.problem(format!(
                "method.scans.{i}: covers n = {}, k in {:?}, not every k of n = {n}",
                verified.n, verified.k_range
            ));
            continue;
        }
        let target_row = match verified.quantities.as_slice() {
            [Quantity::Epsilon(d)] if *d == delta => verified.rows[0].1.clone(),
            _ => {
                tally.problem(format!(
                    "method.scans.{i}: scans other quantities than ε at δ = {}",
                    report["delta"]
                ));
                continue;
            }
        };
        let scanned = &scan["report"]["eps_results"][0];
        for (key, from) in [
            ("certified_eps", "eps_profile"),
            ("argmax_k", "argmax_k"),
            ("argmax_k_ranges", "argmax_k_ranges"),
        ] {
            if result[key] != scanned[from] {
                tally.problem(format!("{field}.{key}: differs from its scan's {from}"));
            }
        }
        // The boundary pair's ε.
        let boundary_field = format!("{field}.boundary_pair_eps");
        tally.certified(
            &boundary_field,
            enclosure_at(&result["boundary_pair_eps"], &boundary_field)?,
            true,
        );
        let query = pair_query(m, n, 0, settings, Backend::Mpfr { precision });
        let fresh = answer(
            &query,
            &EpsilonJob {
                delta: delta.clone(),
            },
        )?;
        tally.route(label.clone());
        tally.recomputed(&boundary_field, &fresh.result.two_sided, &label);
        // Every published bound, recomputed; its ratio and status derived again.
        let fresh = published_bounds(
            &Randomizer::from_mechanism(m.clone()),
            n,
            &delta,
            settings.options.memory_limit,
            Some(precision),
        )?;
        let check = BoundCheck {
            cert,
            field: &field,
            label: &label,
        };
        check.bounds(&result["bounds"], fresh, &target_row, &target_row, tally)?;
    }
    Ok(())
}

/// The precision and window cut of the range's recomputation (see `verify_compare_range`).
const RANGE_BITS: u32 = 128;
const RANGE_CUT_BITS: u32 = 110;

/// Up to this n a witness pair is also rebuilt by the pair engine on its background (its
/// windowed laws grow like n^{d−1} for d output classes).
pub(super) const WITNESS_PAIR_ENGINE_MAX_N: u64 = 200;

/// The concrete neighbouring pair `(x1, x2^{n−1}) ≃ (x1′, x2^{n−1})` as the pair engine builds
/// it on its background, in MPFR at `precision`: a witness rebuilt by a route that shares
/// nothing with the blanket sum that found it (`proofs-notes/background-pairs.md`).
pub(super) fn witness_query(
    r: &Randomizer,
    settings: &Settings,
    n: u64,
    (x1, x1p, x2): (usize, usize, usize),
    precision: u32,
) -> crate::query::BackgroundQuery {
    let mut counts = vec![0; r.input_count()];
    counts[x2] = n - 1;
    crate::query::BackgroundQuery {
        randomizer: r.clone(),
        background: crate::exact::background::Background {
            counts,
            switch: (x1, x1p),
        },
        options: settings.options.clone(),
        backend: Backend::Mpfr { precision },
        exact_ctx: settings.exact_ctx,
        escalate_above: None,
    }
}

/// A compare certificate on a randomizer with more than two inputs: per n, the lower end's
/// witness pair recomputed by the pair engine on its background (a route that shares nothing
/// with the blanket sum that found it), the whole range recomputed by `bounds` in MPFR at a
/// higher precision, every published bound recomputed, and every ratio and status derived
/// again from the certified ends.
pub fn verify_compare_range(
    cert: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    use crate::bounds::range::{BoundsQuery, Target, bounds, concrete_pair};
    let report = &cert["report"];
    let delta = delta_and_local(report, r, tally)?;
    let precision = higher_precision(settings);
    let label = format!("mpfr-{precision}");
    if report["command"] != "compare" {
        tally.problem(format!(
            "report.command: {} in a compare certificate",
            report["command"]
        ));
    }
    if report["results"].as_array().is_none_or(|r| r.is_empty()) {
        tally.problem("report.results: no result to verify");
    }
    let input = |v: &Value, field: &str| -> Result<usize> {
        v.as_str()
            .and_then(|l| r.inputs.iter().position(|x| x == l))
            .ok_or_else(|| Error::argument(field, format!("{v} is not an input of the randomizer")))
    };
    let results = report["results"].as_array().map_or(0, Vec::len);
    let progress = Stage::start("verify: compare", "sizes n", results as u64);
    for (i, result) in report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let _advance = progress.advance_on_drop(1);
        let field = format!("report.results.{i}");
        let n = u64_at(&result["n"], &format!("{field}.n"))?;
        if n < 2 {
            tally.problem(format!("{field}.n: a witness pair needs n ≥ 2"));
            continue;
        }
        let range = &result["certified_eps_range"];
        let lower_field = format!("{field}.certified_eps_range.lower.value");
        let upper_field = format!("{field}.certified_eps_range.upper.value");
        let lower = enclosure_at(&range["lower"]["value"], &lower_field)?;
        let upper = enclosure_at(&range["upper"]["value"], &upper_field)?;
        tally.certified(&lower_field, lower.clone(), true);
        tally.certified(&upper_field, upper.clone(), true);
        // The witness: the concrete neighbouring pair (x1, x2^{n−1}) ≃ (x1′, x2^{n−1}),
        // rebuilt by the pair engine on its background.
        let x1 = input(
            &range["lower"]["x1"],
            &format!("{field}.certified_eps_range.lower.x1"),
        )?;
        let x1p = input(
            &range["lower"]["x1_prime"],
            &format!("{field}.certified_eps_range.lower.x1_prime"),
        )?;
        let x2 = input(
            &range["lower"]["background"],
            &format!("{field}.certified_eps_range.lower.background"),
        )?;
        let u1 = input(
            &range["upper"]["x1"],
            &format!("{field}.certified_eps_range.upper.x1"),
        )?;
        let u1p = input(
            &range["upper"]["x1_prime"],
            &format!("{field}.certified_eps_range.upper.x1_prime"),
        )?;
        if u1 == u1p || !range["upper"]["background"].is_null() {
            tally.problem(format!(
                "{field}.certified_eps_range.upper: not an ordered pair of two inputs"
            ));
        }
        if x1 == x1p {
            tally.problem(format!(
                "{field}.certified_eps_range.lower: x1 = x1' is no pair"
            ));
            continue;
        }
        // The range in MPFR at 128 bits, its windows cut 2^-110 below their mode (deeper than
        // the f64 route's 2^-100): the blanket sums' cost grows with the cut, and a range of
        // 4-input k-RR at n = 1000 takes seconds this way but minutes at 256 bits.
        let mpfr_bounds = |target: Target| BoundsQuery {
            randomizer: r.clone(),
            n,
            target,
            options: PairOptions {
                truncation_bits: Some(RANGE_CUT_BITS),
                ..settings.options.clone()
            },
            backend: Backend::Mpfr {
                precision: RANGE_BITS,
            },
            escalate_above: None,
        };
        let range_label = format!("mpfr-{RANGE_BITS}, windows cut at 2^-{RANGE_CUT_BITS}");
        // Each end of an ε enclosure is shown by δ at that end (δ is non-increasing in ε):
        // `ε > lo` when δ(lo) > δ certainly, `ε ≤ hi` when δ(hi) ≤ δ certainly.
        let at_ends = |e: &Enclosure| -> Option<Vec<Threshold>> {
            Some(vec![
                Threshold::Eps(e.lo().finite()?.clone()),
                Threshold::Eps(e.hi().finite()?.clone()),
            ])
        };
        let show_ends = |tally: &mut Tally, field: &str, values: &[Enclosure], route: &str| {
            let target = Endpoint::Finite(delta.clone());
            if values[0].lo() > &target {
                tally.lower_shown(field, route);
            }
            if values[1].hi() <= &target {
                tally.upper_shown(field);
            }
        };
        if let Some(thresholds) = at_ends(&lower) {
            let values = concrete_pair(&mpfr_bounds(Target::Delta(thresholds)), x1, x1p, x2)?;
            let route =
                format!("the witness pair's δ at both ends, merged-class sum in {range_label}");
            tally.route(route.clone());
            show_ends(tally, &lower_field, &values, &route);
        }
        // A second, independent route where affordable: the pair engine on the background.
        if n <= WITNESS_PAIR_ENGINE_MAX_N {
            let witness = witness_query(r, settings, n, (x1, x1p, x2), precision);
            let fresh = answer(
                &witness,
                &EpsilonJob {
                    delta: delta.clone(),
                },
            )?;
            let route = format!("the witness pair rebuilt by the pair engine in {label}");
            tally.route(route.clone());
            tally.recomputed(&lower_field, &fresh.result.two_sided, &route);
        }
        // The upper end: the blanket divergence of every ordered pair at both ends.
        if let Some(thresholds) = at_ends(&upper) {
            let rows = bounds(&mpfr_bounds(Target::Delta(thresholds)))?;
            let values: Vec<Enclosure> = rows.into_iter().map(|row| row.upper.value).collect();
            let route = format!(
                "the blanket divergence of every ordered pair at both ends, in {range_label}"
            );
            tally.route(route.clone());
            show_ends(tally, &upper_field, &values, &route);
        }
        if lower.lo() > upper.hi() {
            tally.problem(format!(
                "{field}.certified_eps_range: the lower end {lower} exceeds the upper end {upper}"
            ));
            continue;
        }
        // Every published bound, recomputed; its ratio and status derived again.
        let fresh = published_bounds(r, n, &delta, settings.options.memory_limit, Some(precision))?;
        let check = BoundCheck {
            cert,
            field: &field,
            label: &label,
        };
        check.bounds(&result["bounds"], fresh, &lower, &upper, tally)?;
    }
    Ok(())
}

/// The published bounds of one result checked against their recomputation (`fresh`, MPFR at
/// `label`): each ε confirmed, and its validity, statement, ratio and status derived again from
/// the certified ends `lower` and `upper` of the mechanism's ε.
struct BoundCheck<'a> {
    cert: &'a Value,
    field: &'a str,
    label: &'a str,
}

impl BoundCheck<'_> {
    fn bounds(
        &self,
        recorded: &Value,
        fresh: Vec<crate::accountants::Bound>,
        lower: &Enclosure,
        upper: &Enclosure,
        tally: &mut Tally,
    ) -> Result<()> {
        let field = self.field;
        let recorded = recorded.as_array().cloned().unwrap_or_default();
        if recorded.len() != fresh.len() {
            tally.problem(format!(
                "{field}.bounds: {} bounds, but {} apply",
                recorded.len(),
                fresh.len()
            ));
            return Ok(());
        }
        tally.route(format!("published bounds recomputed in {}", self.label));
        // Certificates of 0.1.x predate `stated_for`; every later one records it.
        let legacy = crate::certificate::family_meaning(self.cert)
            == crate::mechanism::FamilyMeaning::Legacy;
        for (j, (certified, bound)) in recorded.iter().zip(fresh).enumerate() {
            let bound_field = format!("{field}.bounds.{j}");
            let eps = match (&certified["eps"], &bound.eps) {
                (Value::Null, None) => None,
                (v, Some(recomputed)) if !v.is_null() => {
                    let eps_field = format!("{bound_field}.eps");
                    let eps = enclosure_at(v, &eps_field)?;
                    tally.certified(&eps_field, eps.clone(), true);
                    tally.recomputed(&eps_field, recomputed, self.label);
                    Some(eps)
                }
                (v, recomputed) => {
                    tally.problem(format!(
                        "{bound_field}.eps: records {v}, but recomputed {}",
                        recomputed
                            .as_ref()
                            .map_or("no value (outside its validity)".into(), |e| e.to_string())
                    ));
                    continue;
                }
            };
            let derived = with_exact_endpoints(|| {
                BoundRow::judged(crate::accountants::Bound { eps, ..bound }, lower, upper).to_json()
            });
            let arithmetic = certified["arithmetic"].as_str().unwrap_or_default();
            if !(arithmetic == "interval"
                || arithmetic
                    .strip_prefix("mpfr-")
                    .is_some_and(|b| b.parse::<u32>().is_ok()))
            {
                tally.problem(format!(
                    "{bound_field}.arithmetic: {arithmetic:?} names no arithmetic of this tool"
                ));
            }
            if !(legacy && certified["stated_for"].is_null())
                && certified["stated_for"] != derived["stated_for"]
            {
                tally.problem(format!(
                    "{bound_field}.stated_for: records {}, but the bound is stated for {}",
                    certified["stated_for"], derived["stated_for"]
                ));
            }
            for key in [
                "validity",
                "id",
                "name",
                "source",
                "method",
                "valid",
                "ratio_to_certified",
                "status",
            ] {
                if certified[key] != derived[key] {
                    tally.problem(format!(
                        "{bound_field}.{key}: records {}, but the certified values give {}",
                        certified[key], derived[key]
                    ));
                }
            }
        }
        Ok(())
    }
}
