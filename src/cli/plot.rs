//! `--plot`: turns the computed curves into the library's SVG picture.

use crate::check::{CheckQuery, CurveSamples};
use crate::error::Result;
use crate::plot::{Band, Line, Mark, privacy_curves_svg};
use crate::query::{DeltaRow, PairQuery, Threshold};
use rug::Rational;

/// Samples per curve.
const SAMPLES: u64 = 60;

/// ε values (exact decimals) on `(0, top]` (at most 700) for a picture of the curves.
pub fn grid_to(top: f64) -> Vec<Threshold> {
    let top = if top > 0.0 && top.is_finite() {
        top.min(700.0)
    } else {
        1.0
    };
    let top = Rational::from_f64(top).expect("finite");
    (0..=SAMPLES)
        .map(|i| Threshold::Eps(&top * Rational::from((i, SAMPLES))))
        .collect()
}

/// The grid around the asked thresholds: `(0, 1.5 · max ε]`, and at least up to `negligible`,
/// the ε where δ falls below [`NEGLIGIBLE_DELTA`].
pub fn grid(thresholds: &[Threshold], negligible: Option<f64>) -> Vec<Threshold> {
    let largest = thresholds
        .iter()
        .map(Threshold::eps_f64)
        .fold(0.0, f64::max);
    grid_to((1.5 * largest).max(negligible.unwrap_or(0.0) * 1.05))
}

/// Where a picture without asked thresholds ends: δ below this is not drawn.
pub const NEGLIGIBLE_DELTA: &str = "1e-12";

/// The requested points of a `delta` report, to mark on its picture.
pub fn marks(rows: &[DeltaRow]) -> Vec<Mark> {
    rows.iter()
        .map(|r| Mark {
            label: format!(" ε = {}", r.threshold.eps_text()),
            point: (
                r.threshold.eps_f64(),
                r.two_sided.lo().to_f64(),
                r.two_sided.hi().to_f64(),
            ),
        })
        .collect()
}

/// Both certified curves of a pair as bands.
pub fn delta_plot(path: &str, query: &PairQuery, rows: &[DeltaRow], marks: &[Mark]) -> Result<()> {
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
        marks,
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
        &[],
    )
}
