//! `--plot`: turns the computed curves into the library's SVG picture.

use crate::check::{CheckAt, CheckQuery, CurveSamples};
use crate::enclosure::{Endpoint, parse_rational};
use crate::error::Result;
use crate::exact::curve::Direction;
use crate::plot::{Band, Line, Mark, privacy_curves_svg};
use crate::profile::{Profile, ProfileQuery, Quantity, profile};
use crate::query::{DeltaJob, DeltaRow, PairQuery, Threshold, answer};
use rug::Rational;
use rug::ops::Pow;

/// Samples per curve.
const SAMPLES: u64 = 60;

/// ε values on `[0, top]` (top at most 700) for a picture of the curves: about [`SAMPLES`]
/// steps of a round decimal (1, 2 or 5 times a power of ten), so that every ε prints short.
pub fn grid_to(top: f64) -> Vec<Threshold> {
    // An ε beyond the double range (a huge --exp-eps) is drawn up to the largest ε drawn.
    let top = if top > 0.0 { top.min(700.0) } else { 1.0 };
    let raw = top / SAMPLES as f64;
    let exponent = raw.log10().floor() as i32;
    let power = 10f64.powi(exponent);
    let digit = [1u32, 2, 5, 10]
        .into_iter()
        .find(|&c| f64::from(c) * power >= raw)
        .unwrap_or(10);
    let power = Rational::from(rug::Integer::from(10).pow(exponent.unsigned_abs()));
    let power = if exponent >= 0 { power } else { power.recip() };
    let step = power * digit;
    let count = (top / step.to_f64()).ceil() as u64;
    (0..=count)
        .map(|i| Threshold::Eps(Rational::from(&step * i)))
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
        query.mechanism.title(),
        query.n,
        query.k
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

/// The checker's picture: certified bands and each prediction as a line, the checked points
/// marked at their certified δ (the larger direction).
pub fn check_plot(path: &str, query: &CheckQuery, at: &CheckAt, s: &CurveSamples) -> Result<()> {
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
        query.pair.mechanism.title(),
        query.pair.n,
        query.pair.k
    );
    let marks: Vec<Mark> = at
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let certified = at
                .comparisons
                .iter()
                .filter(|c| c.point == Some(i) && c.quantity.starts_with("delta_"))
                .map(|c| (c.certified.lo().to_f64(), c.certified.hi().to_f64()))
                .fold((0.0, 0.0), |a: (f64, f64), b| (a.0.max(b.0), a.1.max(b.1)));
            let eps = p.eps.hi().to_f64();
            let text = if eps != 0.0 && eps.abs() < 1e-3 {
                format!("{eps:.3e}")
            } else {
                let fixed = format!("{eps:.4}");
                fixed
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            };
            Mark {
                label: format!(" ε = {text}"),
                point: (eps, certified.0, certified.1),
            }
        })
        .collect();
    privacy_curves_svg(
        path,
        &title,
        &[
            band("δ_{Q‖P} certified", &s.qp),
            band("δ_{P‖Q} certified", &s.pq),
        ],
        &lines,
        &marks,
    )
}

/// The ε grid of a profile's picture: from 0 past every asked ε (and every certified ε_M of an
/// asked δ, from `asked`), and at least to where δ_M falls below [`NEGLIGIBLE_DELTA`].
pub fn profile_grid(query: &ProfileQuery, asked: Option<&Profile>) -> Result<Vec<Threshold>> {
    let negligible = profile(&ProfileQuery {
        quantities: vec![Quantity::Epsilon(
            parse_rational(NEGLIGIBLE_DELTA).expect("an exact number"),
        )],
        escalate_above: None,
        ..query.clone()
    })?;
    let mut top = 1.05 * negligible.rows[0].value.hi().to_f64();
    for row in asked.map_or(&[][..], |p| &p.rows[..]) {
        match &row.quantity {
            Quantity::Delta(t) => top = top.max(1.5 * t.eps_f64()),
            Quantity::Epsilon(_) => top = top.max(1.05 * row.value.hi().to_f64()),
            Quantity::Renyi(_) => {}
        }
    }
    Ok(grid_to(top))
}

/// At most this many attaining pairs are drawn (the most frequent over the grid).
const ATTAINING_CURVES: usize = 4;

/// Draws δ_M(ε) as a certified band over the picture's grid, with the δ curves of the pairs
/// (k, direction) that attain it, and marks the asked points; `result` is the reported profile
/// (`alone`: already on the grid).  Returns the grid's last ε.
pub fn profile_plot(
    path: &str,
    query: &ProfileQuery,
    result: &Profile,
    alone: bool,
) -> Result<f64> {
    let scanned;
    let on_grid = if alone {
        result
    } else {
        let quantities = profile_grid(query, Some(result))?
            .into_iter()
            .map(Quantity::Delta)
            .collect();
        scanned = profile(&ProfileQuery {
            quantities,
            escalate_above: None,
            ..query.clone()
        })?;
        &scanned
    };
    let eps_of = |q: &Quantity| match q {
        Quantity::Delta(t) => t.eps_f64(),
        _ => 0.0,
    };
    let band = Band {
        label: if result.partial {
            "max over the scanned k, both orders (certified)".into()
        } else {
            "δ_M = max over k, both orders (certified)".into()
        },
        points: on_grid
            .rows
            .iter()
            .map(|r| {
                (
                    eps_of(&r.quantity),
                    r.value.lo().to_f64(),
                    r.value.hi().to_f64(),
                )
            })
            .collect(),
    };
    // The pairs that attain δ_M somewhere on the grid, most often first.
    let mut attaining: Vec<((u64, Direction), usize)> = Vec::new();
    for row in &on_grid.rows {
        if !row.resolved || row.value.hi() <= &Endpoint::Finite(Rational::new()) {
            continue;
        }
        for v in &row.argmax {
            match attaining
                .iter_mut()
                .find(|(key, _)| *key == (v.k, v.direction))
            {
                Some((_, count)) => *count += 1,
                None => attaining.push(((v.k, v.direction), 1)),
            }
        }
    }
    attaining.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.0.cmp(&b.0.0)));
    attaining.truncate(ATTAINING_CURVES);
    let thresholds: Vec<Threshold> = on_grid
        .rows
        .iter()
        .filter_map(|r| match &r.quantity {
            Quantity::Delta(t) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let mut lines = Vec::new();
    for ((k, direction), _) in &attaining {
        let pair = PairQuery {
            mechanism: query.mechanism.clone(),
            n: query.n,
            k: *k,
            options: query.options.clone(),
            backend: query.backend,
            exact_ctx: query.exact_ctx,
            escalate_above: None,
        };
        let rows = answer(
            &pair,
            &DeltaJob {
                thresholds: thresholds.clone(),
            },
        )?
        .result;
        let (name, pick): (&str, fn(&DeltaRow) -> &crate::enclosure::Enclosure) = match direction {
            Direction::Qp => ("δ_{Q‖P}", |r| &r.qp),
            Direction::Pq => ("δ_{P‖Q}", |r| &r.pq),
        };
        // Drawn where resolved (a positive lower end), at the upper end.
        lines.push(Line {
            label: format!("pair k = {k}: {name}"),
            points: rows
                .iter()
                .filter(|r| pick(r).lo().to_f64() > 0.0)
                .map(|r| (r.threshold.eps_f64(), pick(r).hi().to_f64()))
                .collect(),
        });
    }
    let marks: Vec<Mark> = result
        .rows
        .iter()
        .filter(|_| !alone)
        .filter_map(|r| match &r.quantity {
            Quantity::Delta(t) => Some(Mark {
                label: format!(" ε = {}", t.eps_text()),
                point: (t.eps_f64(), r.value.lo().to_f64(), r.value.hi().to_f64()),
            }),
            Quantity::Epsilon(d) => Some(Mark {
                label: format!(" δ = {}", crate::enclosure::number_text(d)),
                point: (r.value.hi().to_f64(), d.to_f64(), d.to_f64()),
            }),
            Quantity::Renyi(_) => None,
        })
        .collect();
    let scope = if result.partial {
        let ends: String = result.ends.iter().map(|k| format!(", k = {k}")).collect();
        format!(
            "k in {}..{}{ends} only (partial)",
            result.k_range.0, result.k_range.1
        )
    } else {
        "every k".to_string()
    };
    let title = format!(
        "{}: n = {}, δ_M over {scope}",
        query.mechanism.title(),
        query.n
    );
    privacy_curves_svg(path, &title, &[band], &lines, &marks)?;
    Ok(thresholds.last().map_or(0.0, Threshold::eps_f64))
}
