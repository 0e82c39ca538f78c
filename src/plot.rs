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

/// A requested point, marked on the picture: ε and the enclosure `(lo, hi)` of δ there.
pub struct Mark {
    pub label: String,
    pub point: (f64, f64, f64),
}

const BAND_COLOURS: [RGBColor; 2] = [RGBColor(31, 119, 180), RGBColor(214, 39, 40)];
const LINE_COLOURS: [RGBColor; 5] = [
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

/// Draws the bands, lines and marks into an SVG file at `path`.  Each band is drawn at least as
/// wide as a thick line (a certified enclosure is usually far narrower than a pixel), and the
/// axes span the data: ε from 0 to the last sample, δ over whole decades around every value.
pub fn privacy_curves_svg(
    path: &str,
    title: &str,
    bands: &[Band],
    lines: &[Line],
    marks: &[Mark],
) -> Result<()> {
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
    // Whole decades around the data (at most 30 of them below the largest value).
    let y_min = 10f64.powf(y_min.log10().floor()).max(y_max * 1e-30);
    let y_top = 10f64.powf(y_max.log10().ceil().max(y_max.log10() + 0.1));
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
        // log10 δ on a linear axis, labelled as powers of ten: plotters' logarithmic axis stops
        // labelling near 1e-15, and certified curves go far below.
        .build_cartesian_2d(0.0..x_max, y_min.log10()..y_top.log10())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("ε")
        .y_desc("δ(ε)  (log scale)")
        // Enough labels that the whole logarithmic axis is labelled, not just its top.
        .y_labels(((y_top / y_min).log10().ceil() as usize + 1).clamp(4, 31))
        .y_label_formatter(&|y| format!("1e{:.0}", y.round()))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let clamp = |y: f64| if y > y_min { y.log10() } else { y_min.log10() };
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
        // The band at least as wide as a line: a thick translucent stroke along the upper end.
        chart
            .draw_series(LineSeries::new(
                band.points.iter().map(|p| (p.0, clamp(p.2))),
                colour.mix(0.6).stroke_width(5),
            ))
            .map_err(|e| err(e.to_string()))?;
        chart
            .draw_series(LineSeries::new(
                band.points.iter().map(|p| (p.0, clamp(p.1))),
                colour.stroke_width(1),
            ))
            .map_err(|e| err(e.to_string()))?;
    }
    for mark in marks {
        let (x, lo, hi) = mark.point;
        if !(hi > 0.0 && hi.is_finite()) {
            continue;
        }
        chart
            .draw_series(std::iter::once(Circle::new(
                (x, clamp(hi)),
                6,
                BLACK.stroke_width(2),
            )))
            .map_err(|e| err(e.to_string()))?;
        chart
            .draw_series(std::iter::once(Text::new(
                mark.label.clone(),
                (x, clamp(lo.max(hi))),
                ("sans-serif", 14).into_font(),
            )))
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
