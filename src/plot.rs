//! Pictures of privacy curves: δ against ε on a logarithmic δ axis, certified curves drawn as
//! bands (lower to upper end of each enclosure) and predictions as lines, written as SVG.

use crate::error::{Error, Result};
use plotters::prelude::*;

/// A certified curve: at each ε, the enclosure `(lo, hi)` of δ.
pub struct Band {
    pub label: String,
    pub points: Vec<(f64, f64, f64)>,
}

/// An uncertified curve (a prediction).
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

const BAND_COLOURS: [RGBColor; 2] = [RGBColor(31, 119, 180), RGBColor(214, 39, 40)];
const LINE_COLOURS: [RGBColor; 5] = [
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

/// Draws the bands and lines into an SVG file at `path`.
pub fn privacy_curves_svg(path: &str, title: &str, bands: &[Band], lines: &[Line]) -> Result<()> {
    let err = |e: String| Error::Io {
        path: path.to_string(),
        message: format!("cannot draw the plot: {e}"),
    };
    let positive = bands
        .iter()
        .flat_map(|b| b.points.iter().flat_map(|p| [p.1, p.2]))
        .chain(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)))
        .filter(|y| *y > 0.0 && y.is_finite());
    let (y_min, y_max) = positive.fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
    if y_max <= 0.0 || y_max.is_nan() {
        return Err(err("no positive δ to draw on a logarithmic axis".into()));
    }
    let y_min = (y_min / 2.0).max(y_max * 1e-30);
    let x_max = bands
        .iter()
        .flat_map(|b| b.points.iter().map(|p| p.0))
        .chain(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)))
        .fold(0.0f64, f64::max);
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, (y_min..y_max * 2.0).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("ε")
        .y_desc("δ(ε)  (log scale)")
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let clamp = |y: f64| if y > y_min { y } else { y_min };
    for (i, band) in bands.iter().enumerate() {
        let colour = BAND_COLOURS[i % BAND_COLOURS.len()];
        let mut outline: Vec<(f64, f64)> = band.points.iter().map(|p| (p.0, clamp(p.2))).collect();
        outline.extend(band.points.iter().rev().map(|p| (p.0, clamp(p.1))));
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                colour.mix(0.35).filled(),
            )))
            .map_err(|e| err(e.to_string()))?
            .label(band.label.clone())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 18, y + 5)], colour.mix(0.35).filled())
            });
        chart
            .draw_series(LineSeries::new(
                band.points.iter().map(|p| (p.0, clamp(p.2))),
                colour.stroke_width(1),
            ))
            .map_err(|e| err(e.to_string()))?;
    }
    for (i, line) in lines.iter().enumerate() {
        let colour = LINE_COLOURS[i % LINE_COLOURS.len()];
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .filter(|p| p.1 > 0.0 && p.1.is_finite())
            .map(|p| (p.0, clamp(p.1)))
            .collect();
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(line.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
