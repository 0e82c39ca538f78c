//! `--plot`: turns the computed curves into the library's SVG picture.

use crate::check::{CheckQuery, CurveSamples};
use crate::error::Result;
use crate::plot::{Band, Line, privacy_curves_svg};
use crate::query::{DeltaRow, PairQuery, Threshold};
use rug::Rational;

/// Samples per curve.
const SAMPLES: u64 = 48;

/// ε values (exact decimals) on `(0, 1.5 · max ε]` (at most 700) for a picture of the curves
/// near the asked thresholds.
pub fn grid(thresholds: &[Threshold]) -> Vec<Threshold> {
    let largest = thresholds
        .iter()
        .map(Threshold::eps_f64)
        .fold(0.0, f64::max);
    let top = if largest > 0.0 {
        (1.5 * largest).min(700.0)
    } else {
        1.0
    };
    let top = Rational::from_f64(top).expect("finite");
    (1..=SAMPLES)
        .map(|i| Threshold::Eps(&top * Rational::from((i, SAMPLES))))
        .collect()
}

/// Both certified curves of a pair as bands.
pub fn delta_plot(path: &str, query: &PairQuery, rows: &[DeltaRow]) -> Result<()> {
    let band = |label: &str, pick: &dyn Fn(&DeltaRow) -> &crate::enclosure::Enclosure| Band {
        label: label.to_string(),
        points: rows
            .iter()
            .map(|r| {
                (
                    r.threshold.eps_f64(),
                    pick(r).lo().to_f64(),
                    pick(r).hi().to_f64(),
                )
            })
            .collect(),
    };
    let title = format!(
        "{}: n = {}, k = {} (certified)",
        query.mechanism.name, query.n, query.k
    );
    privacy_curves_svg(
        path,
        &title,
        &[
            band("δ_{Q‖P} certified", &|r| &r.qp),
            band("δ_{P‖Q} certified", &|r| &r.pq),
        ],
        &[],
    )
}

/// The checker's picture: certified bands and each prediction as a line.
pub fn check_plot(path: &str, query: &CheckQuery, s: &CurveSamples) -> Result<()> {
    let band = |label: &str, v: &[(f64, f64)]| Band {
        label: label.to_string(),
        points: s
            .eps
            .iter()
            .zip(v)
            .map(|(e, (lo, hi))| (*e, *lo, *hi))
            .collect(),
    };
    let lines: Vec<Line> = s
        .lines
        .iter()
        .map(|(label, ys)| Line {
            label: format!("{label} (prediction)"),
            points: s.eps.iter().copied().zip(ys.iter().copied()).collect(),
        })
        .collect();
    let title = format!(
        "{}: n = {}, k = {}",
        query.pair.mechanism.name, query.pair.n, query.pair.k
    );
    privacy_curves_svg(
        path,
        &title,
        &[
            band("δ_{Q‖P} certified", &s.qp),
            band("δ_{P‖Q} certified", &s.pq),
        ],
        &lines,
    )
}
