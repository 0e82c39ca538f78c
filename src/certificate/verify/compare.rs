//! A compare certificate: per n, the profile's proof re-derived (`profile`), the boundary
//! pair's ε and every published bound recomputed in MPFR at a higher precision, and every
//! ratio and status derived again from the certified values.

use super::profile::{ProfileProof, verify_profile};
use super::{Tally, enclosure_at, higher_precision, pair_query, u64_at};
use crate::accountants::{LocalPrivacy, published_bounds};
use crate::audit::compare::BoundRow;
use crate::certificate::Settings;
use crate::enclosure::{parse_rational, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::profile::Quantity;
use crate::query::{Backend, EpsilonJob, answer};
use serde_json::Value;

pub fn verify_compare(
    cert: &Value,
    m: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let report = &cert["report"];
    let delta = report["delta"]
        .as_str()
        .and_then(parse_rational)
        .ok_or_else(|| Error::argument("report.delta", "not an exact number"))?;
    match LocalPrivacy::of(m)? {
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
    let precision = higher_precision(settings);
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
        let bounds = result["bounds"].as_array().cloned().unwrap_or_default();
        let fresh = published_bounds(m, n, &delta, settings.options.memory_limit, Some(precision))?;
        if bounds.len() != fresh.len() {
            tally.problem(format!(
                "{field}.bounds: {} bounds, but {} apply",
                bounds.len(),
                fresh.len()
            ));
            continue;
        }
        tally.route(format!("published bounds recomputed in {label}"));
        for (j, (certified, bound)) in bounds.iter().zip(fresh).enumerate() {
            let bound_field = format!("{field}.bounds.{j}");
            let eps = match (&certified["eps"], &bound.eps) {
                (Value::Null, None) => None,
                (v, Some(recomputed)) if !v.is_null() => {
                    let eps_field = format!("{bound_field}.eps");
                    let eps = enclosure_at(v, &eps_field)?;
                    tally.certified(&eps_field, eps.clone(), true);
                    tally.recomputed(&eps_field, recomputed, &label);
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
                BoundRow::judged(crate::accountants::Bound { eps, ..bound }, &target_row).to_json()
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
    }
    Ok(())
}
