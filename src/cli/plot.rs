//! `--plot`: turns the computed curves into the library's SVG picture.

use crate::check::{CheckQuery, CurveSamples};
use crate::error::Result;
use crate::plot::{Band, Line, privacy_curves_svg};
use crate::query::{DeltaRow, PairQuery, Threshold};
use rug::Rational;

/// Samples per curve.
const SAMPLES: u64 = 48;

/// ε values (exact decimals) on `(0, 1.5 · max ε]` for a picture of the curves near the asked
/// thresholds.
pub fn grid(thresholds: &[Threshold]) -> Vec<Threshold> {
    let largest = thresholds
        .iter()
        .map(|t| match t {
            Threshold::Eps(e) => e.to_f64(),
            Threshold::ExpEps(c) => c.to_f64().ln(),
        })
        .fold(0.0, f64::max);
    let top = if largest > 0.0 { 1.5 * largest } else { 1.0 };
    let top = Rational::from_f64(top).expect("finite");
    (1..=SAMPLES)
        .map(|i| Threshold::Eps(&top * Rational::from((i, SAMPLES))))
        .collect()
}

fn eps_of(t: &Threshold) -> f64 {
    match t {
        Threshold::Eps(e) => e.to_f64(),
        Threshold::ExpEps(c) => c.to_f64().ln(),
    }
}

/// Both certified curves of a pair as bands.
pub fn delta_plot(path: &str, query: &PairQuery, rows: &[DeltaRow]) -> Result<()> {
    let band = |label: &str, pick: &dyn Fn(&DeltaRow) -> &crate::enclosure::Enclosure| Band {
        label: label.to_string(),
        points: rows
            .iter()
            .map(|r| {
                (
                    eps_of(&r.threshold),
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
