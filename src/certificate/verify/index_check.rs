//! A shuffle-index check's certificate (`check` without `--k`, `proofs-notes/check-index.md`):
//! both certified ranges it holds (δ_M at every ε, ε_M at δ = 1/n) re-derived as a `bounds`
//! certificate's are (`bounds::verify_range`), the shuffle index recomputed, the report's
//! ranges required to be the verified rows, and every prediction made again by the producing
//! code (they are uncertified) and held against the end it predicts, its verdict re-derived.

use super::bounds::{RangeAt, verify_index, verify_range};
use super::{Tally, enclosure_at, users_at};
use crate::bounds::index::shuffle_index_for;
use crate::bounds::predict::{PredictedRow, check_delta, compare, index_predictions};
use crate::bounds::range::Target;
use crate::certificate::Settings;
use crate::enclosure::{exact_string, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::query::Threshold;
use serde_json::{Value, json};

pub(super) fn verify_index_check(
    cert: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (report, method) = (&cert["report"], &cert["method"]);
    if report["mode"] != "shuffle-index" {
        return Err(Error::argument(
            "report.mode",
            "a check on a randomizer is the shuffle-index check",
        ));
    }
    let n = users_at(&report["n"], "report.n")?;
    let ranges = method["ranges"]
        .as_array()
        .filter(|r| r.len() == 2)
        .ok_or_else(|| {
            Error::argument(
                "method.ranges",
                "not two ranges (δ at every ε, ε at δ = 1/n)",
            )
        })?;
    let mut verified = Vec::with_capacity(2);
    for (j, v) in ranges.iter().enumerate() {
        let prefix = format!("method.ranges.{j}.");
        let at = RangeAt::read(v, &prefix, v, &prefix, &format!("{prefix}results."))?;
        if at.n != n {
            tally.problem(format!("{prefix}n: {} is not the check's n = {n}", at.n));
        }
        verify_range(&at, r, settings, tally)?;
        verified.push(at);
    }
    // The first range at the points ε, the second at δ = 1/n.
    let eps = match &verified[0].target {
        Target::Delta(t) => t
            .iter()
            .map(|t| match t {
                Threshold::Eps(e) => Ok(e.clone()),
                Threshold::ExpEps(_) => Err(Error::argument(
                    "method.ranges.0.results.eps",
                    "the check's points are values of ε",
                )),
            })
            .collect::<Result<Vec<_>>>()?,
        Target::Epsilon(_) => {
            return Err(Error::argument(
                "method.ranges.0.quantity",
                "the first range is δ_M at the points ε",
            ));
        }
    };
    let delta = check_delta(n);
    if !matches!(&verified[1].target, Target::Epsilon(d) if *d == delta) {
        tally.problem(format!(
            "method.ranges.1: not the range of ε_M at δ = 1/n = {}",
            exact_string(&delta)
        ));
    }
    // The report's ranges are the verified rows.
    let shown = |row: &Value| json!({ "lower": row["lower"], "upper": row["upper"] });
    let delta_ranges = report["delta_ranges"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if delta_ranges.len() != eps.len() {
        tally.problem(format!(
            "report.delta_ranges: {} rows for {} points",
            delta_ranges.len(),
            eps.len()
        ));
    }
    for (i, (got, row)) in delta_ranges.iter().zip(verified[0].rows).enumerate() {
        if got["eps"] != row["eps"] || got["range"] != shown(row) {
            tally.problem(format!(
                "report.delta_ranges.{i}: not the verified row method.ranges.0.results.{i}"
            ));
        }
    }
    let eps_row = &verified[1].rows[0];
    if report["epsilon_range"]["delta"] != exact_string(&delta)
        || report["epsilon_range"]["range"] != shown(eps_row)
    {
        tally.problem("report.epsilon_range: not the verified row method.ranges.1.results.0");
    }
    verify_index(report, r, settings, tally)?;
    // The predictions, made again (uncertified), each against the end it predicts.
    let index = shuffle_index_for(r, settings.backend)?;
    let wanted = index_predictions(&eps, n, &index);
    tally.route("predictions made again from the shuffle index (uncertified, by the producing code); verdicts re-derived against the verified ends");
    let recorded = report["predictions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if recorded.len() != wanted.len() {
        tally.problem(format!(
            "report.predictions: {} listed, but the shuffle index makes {}",
            recorded.len(),
            wanted.len()
        ));
    }
    for (j, (got, want)) in recorded.iter().zip(wanted).enumerate() {
        let field = format!("report.predictions.{j}");
        let formula = with_exact_endpoints(|| want.predicted.formula.to_json());
        if got["prediction"] != want.prediction
            || got["source"] != want.source
            || got["end"] != want.end
            || got["at"] != want.at.as_str()
            || got["predicted"] != formula
            || got["predicted_is_certified"] != Value::Bool(false)
        {
            tally.problem(format!(
                "{field}: not the prediction the shuffle index makes ({}, {} end, {})",
                want.prediction, want.end, want.at
            ));
            continue;
        }
        let row = match want.row {
            PredictedRow::Delta(i) => &verified[0].rows[i],
            PredictedRow::Epsilon => eps_row,
        };
        if got["certified"] != row[want.end]["value"] {
            tally.problem(format!(
                "{field}.certified: not the verified {} end of its row",
                want.end
            ));
            continue;
        }
        let certified = enclosure_at(&got["certified"], &format!("{field}.certified"))?;
        let made = compare(want, &certified);
        if got["rel_error"] != json!(made.rel_error) {
            tally.problem(format!(
                "{field}.rel_error: not the prediction's against the certified value"
            ));
        }
        let verdict = made.verdict;
        if got["verdict"] != verdict.name() {
            tally.problem(format!(
                "{field}.verdict: says {}, but the prediction against the certified value is {}",
                got["verdict"],
                verdict.name()
            ));
        }
    }
    Ok(())
}
