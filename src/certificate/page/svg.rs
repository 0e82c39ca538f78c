//! A small inline-SVG chart for the reviewer's page: two axes (linear or logarithmic), bands,
//! intervals, markers and shaded regions, each with a hover `<title>`.  Every piece of text is
//! escaped; coordinates are numbers this module computes.

use super::esc;
use std::fmt::Write;

const WIDTH: f64 = 820.0;
const HEIGHT: f64 = 400.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 46.0;

pub const BLUE: &str = "#1f77b4";
pub const PURPLE: &str = "#9467bd";
pub const GREEN: &str = "#2ca02c";
pub const RED: &str = "#d62728";
pub const ORANGE: &str = "#e6820e";
pub const GREY: &str = "#8c8c8c";
pub const BLACK: &str = "#222222";

/// One axis: the range it shows and whether it is logarithmic.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    /// A linear axis over the values (padded a little; from 0 when `from_zero`).
    pub fn linear(values: impl IntoIterator<Item = f64>, from_zero: bool) -> Scale {
        let (mut lo, mut hi) = finite_range(values);
        if from_zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        let pad = if hi > lo {
            0.05 * (hi - lo)
        } else {
            0.5 * lo.abs().max(1.0)
        };
        Scale {
            lo: if from_zero && lo >= 0.0 { lo } else { lo - pad },
            hi: hi + pad,
            log: false,
        }
    }

    /// A linear axis from `lo` to `hi` exactly.
    pub fn span(lo: f64, hi: f64) -> Scale {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Scale { lo, hi, log: false }
    }

    /// A logarithmic axis over whole decades around the positive values, at least two and at
    /// most `decades` of them (below the largest); `None` when no value is positive.
    pub fn log(values: impl IntoIterator<Item = f64>, decades: f64) -> Option<Scale> {
        let (lo, hi) = finite_range(values.into_iter().filter(|v| *v > 0.0));
        if hi.is_nan() || hi <= 0.0 {
            return None;
        }
        let top = hi.log10().floor() + 1.0;
        let bottom = lo.log10().floor().max(top - decades).min(top - 2.0);
        Some(Scale {
            lo: bottom,
            hi: top,
            log: true,
        })
    }

    /// Logarithmic when the positive values span more than two decades, else linear from 0.
    pub fn auto(values: &[f64]) -> Scale {
        Scale::auto_within(values, 30.0)
    }

    /// As [`Scale::auto`], a logarithmic axis spanning at most `decades`.
    pub fn auto_within(values: &[f64], decades: f64) -> Scale {
        let (lo, hi) = finite_range(values.iter().copied().filter(|v| *v > 0.0));
        match Scale::log(values.iter().copied(), decades) {
            Some(s) if hi / lo > 100.0 => s,
            _ => Scale::linear(values.iter().copied(), true),
        }
    }

    pub fn is_log(&self) -> bool {
        self.log
    }

    /// The position of `v` in [0, 1] along the axis (clamped; non-positive values of a
    /// logarithmic axis go to its floor).
    fn at(&self, v: f64) -> f64 {
        let t = if self.log {
            if v > 0.0 { v.log10() } else { self.lo }
        } else {
            v
        };
        ((t - self.lo) / (self.hi - self.lo)).clamp(-0.02, 1.02)
    }

    /// Tick positions (in data units) with their labels.
    fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            let decades = (self.hi - self.lo).round().max(1.0) as i64;
            let step = (decades as f64 / 8.0).ceil().max(1.0) as i64;
            let first = self.lo.ceil() as i64;
            return (first..=self.hi.floor() as i64)
                .filter(|e| (e - first) % step == 0)
                .map(|e| (10f64.powi(e as i32), format!("1e{e}")))
                .collect();
        }
        let raw = (self.hi - self.lo) / 6.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * magnitude)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * magnitude);
        let mut ticks = Vec::new();
        let mut t = (self.lo / step).ceil() * step;
        while t <= self.hi + step * 1e-9 && ticks.len() < 20 {
            ticks.push((t, tick_label(t, step)));
            t += step;
        }
        ticks
    }
}

/// A linear tick's label: plain decimals with as many places as the step needs, or scientific
/// form for very small or very large numbers.
fn tick_label(t: f64, step: f64) -> String {
    if t.abs() < step * 1e-6 {
        return "0".into();
    }
    let places = (-step.log10().floor()).max(0.0) as usize;
    if step >= 1e-3 && t.abs() < 1e6 {
        return format!("{:.places$}", t + 0.0);
    }
    let digits = (t.abs().log10().floor() - step.log10().floor()).max(0.0) as usize;
    format!("{t:.digits$e}")
}

/// The smallest and largest finite values (∞ and −∞ when there are none).
fn finite_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        })
}

/// How a point is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    /// An open ring, drawn around another marker (an argmax).
    Ring,
}

/// A chart under construction.
pub struct Chart {
    x: Scale,
    y: Scale,
    x_label: String,
    y_label: String,
    body: String,
    legend: Vec<(String, Shape, String)>,
}

impl Chart {
    pub fn new(x: Scale, y: Scale, x_label: &str, y_label: &str) -> Chart {
        Chart {
            x,
            y,
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            body: String::new(),
            legend: Vec::new(),
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + self.x.at(x) * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT - BOTTOM - self.y.at(y) * (HEIGHT - TOP - BOTTOM)
    }

    /// Adds a legend entry.
    pub fn legend(&mut self, colour: &str, shape: Shape, label: &str) {
        if !self.legend.iter().any(|(_, _, l)| l == label) {
            self.legend
                .push((colour.to_string(), shape, label.to_string()));
        }
    }

    /// A certified curve: at each x the enclosure `(lo, hi)` of y, filled between the two ends
    /// and drawn at least as wide as a thick line.  A single point is drawn as an interval.
    pub fn band(
        &mut self,
        points: &[(f64, f64, f64)],
        colour: &str,
        label: &str,
        titles: &[String],
    ) {
        self.legend(colour, Shape::Square, label);
        if points.len() > 1 {
            let upper: Vec<String> = points
                .iter()
                .map(|p| format!("{:.1},{:.1}", self.px(p.0), self.py(p.2)))
                .collect();
            let lower: Vec<String> = points
                .iter()
                .rev()
                .map(|p| format!("{:.1},{:.1}", self.px(p.0), self.py(p.1)))
                .collect();
            let _ = writeln!(
                self.body,
                "<g><title>{}</title><polygon points=\"{} {}\" fill=\"{colour}\" fill-opacity=\"0.3\" stroke=\"{colour}\" stroke-opacity=\"0.6\" stroke-width=\"3\" stroke-linejoin=\"round\"/></g>",
                esc(label),
                upper.join(" "),
                lower.join(" ")
            );
        }
        for (i, p) in points.iter().enumerate() {
            let title = titles.get(i).map_or(label, String::as_str).to_string();
            self.vbar(p.0, p.1, p.2, colour, &title);
        }
    }

    /// A vertical interval at `x` from `lo` to `hi`, with caps and a dot at its middle.
    pub fn vbar(&mut self, x: f64, lo: f64, hi: f64, colour: &str, title: &str) {
        let (cx, y0, y1) = (self.px(x), self.py(lo), self.py(hi));
        let _ = writeln!(
            self.body,
            "<g><title>{}</title><line x1=\"{cx:.1}\" y1=\"{y0:.1}\" x2=\"{cx:.1}\" y2=\"{y1:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><line x1=\"{:.1}\" y1=\"{y0:.1}\" x2=\"{:.1}\" y2=\"{y0:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><line x1=\"{:.1}\" y1=\"{y1:.1}\" x2=\"{:.1}\" y2=\"{y1:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{colour}\"/></g>",
            esc(title),
            cx - 4.0,
            cx + 4.0,
            cx - 4.0,
            cx + 4.0,
            0.5 * (y0 + y1)
        );
    }

    /// A horizontal interval at `y` from `lo` to `hi`, with caps and a dot at its middle.
    pub fn hbar(&mut self, lo: f64, hi: f64, y: f64, colour: &str, title: &str) {
        let (x0, x1, cy) = (self.px(lo), self.px(hi), self.py(y));
        let _ = writeln!(
            self.body,
            "<g><title>{}</title><line x1=\"{x0:.1}\" y1=\"{cy:.1}\" x2=\"{x1:.1}\" y2=\"{cy:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><line x1=\"{x0:.1}\" y1=\"{:.1}\" x2=\"{x0:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><line x1=\"{x1:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/><circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"3.5\" fill=\"{colour}\"/></g>",
            esc(title),
            cy - 5.0,
            cy + 5.0,
            cy - 5.0,
            cy + 5.0,
            0.5 * (x0 + x1)
        );
    }

    /// A short text at `(x, y)`, `dy` pixels above it.
    pub fn label(&mut self, x: f64, y: f64, dy: f64, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#333\">{}</text>",
            self.px(x),
            self.py(y) - dy,
            esc(text)
        );
    }

    /// A marker at `(x, y)`.
    pub fn marker(&mut self, x: f64, y: f64, colour: &str, shape: Shape, title: &str) {
        self.marker_dx(x, 0.0, y, colour, shape, title);
    }

    /// A marker at `(x, y)` moved `dx` pixels sideways (to tell apart marks at one x).
    pub fn marker_dx(&mut self, x: f64, dx: f64, y: f64, colour: &str, shape: Shape, title: &str) {
        let (cx, cy) = (self.px(x) + dx, self.py(y));
        let mark = match shape {
            Shape::Circle => format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"6\" fill=\"{colour}\" stroke=\"white\"/>"
            ),
            Shape::Square => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"11\" height=\"11\" fill=\"{colour}\" stroke=\"white\"/>",
                cx - 5.5,
                cy - 5.5
            ),
            Shape::Triangle => format!(
                "<polygon points=\"{cx:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{colour}\" stroke=\"white\"/>",
                cy - 7.0,
                cx - 6.5,
                cy + 5.0,
                cx + 6.5,
                cy + 5.0
            ),
            Shape::Diamond => format!(
                "<polygon points=\"{cx:.1},{:.1} {:.1},{cy:.1} {cx:.1},{:.1} {:.1},{cy:.1}\" fill=\"{colour}\" stroke=\"white\"/>",
                cy - 7.0,
                cx + 7.0,
                cy + 7.0,
                cx - 7.0
            ),
            Shape::Ring => format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"10\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2.5\"/>"
            ),
        };
        let _ = writeln!(self.body, "<g><title>{}</title>{mark}</g>", esc(title));
    }

    /// A shaded rectangle from `(x0, y0)` to `(x1, y1)` (data units).
    pub fn region(&mut self, x: (f64, f64), y: (f64, f64), colour: &str, title: &str) {
        let (a, b) = (self.px(x.0), self.px(x.1));
        let (c, d) = (self.py(y.1), self.py(y.0));
        let _ = writeln!(
            self.body,
            "<g><title>{}</title><rect x=\"{a:.1}\" y=\"{c:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\" fill-opacity=\"0.14\"/></g>",
            esc(title),
            (b - a).max(1.0),
            (d - c).max(1.0)
        );
    }

    /// A horizontal band across the whole chart from `lo` to `hi`, at least two pixels tall.
    pub fn hband(&mut self, lo: f64, hi: f64, colour: &str, title: &str) {
        let (y0, y1) = (self.py(lo), self.py(hi));
        let top = y1.min(y0 - 2.0);
        let _ = writeln!(
            self.body,
            "<g><title>{}</title><rect x=\"{LEFT:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\" fill-opacity=\"0.35\"/></g>",
            esc(title),
            WIDTH - LEFT - RIGHT,
            (y0 - top).max(2.0)
        );
    }

    /// A dashed horizontal line at `y`.
    pub fn hline(&mut self, y: f64, colour: &str, title: &str) {
        let cy = self.py(y);
        let _ = writeln!(
            self.body,
            "<g><title>{}</title><line x1=\"{LEFT:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/></g>",
            esc(title),
            WIDTH - RIGHT
        );
    }

    /// The legend below the plot, entries side by side, wrapping: its SVG and its height.
    fn legend_svg(&self) -> (String, f64) {
        let mut s = String::new();
        let (mut x, mut row) = (LEFT, 0.0);
        for (colour, shape, label) in &self.legend {
            let width = 34.0 + 6.8 * label.chars().count() as f64;
            if x + width > WIDTH - RIGHT && x > LEFT {
                (x, row) = (LEFT, row + 1.0);
            }
            let y = HEIGHT + 6.0 + 20.0 * row;
            let mark = match shape {
                Shape::Ring => format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                    x + 8.0,
                    y - 4.0
                ),
                Shape::Circle => format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{colour}\"/>",
                    x + 8.0,
                    y - 4.0
                ),
                Shape::Triangle => format!(
                    "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{colour}\"/>",
                    x + 8.0,
                    y - 10.0,
                    x + 2.0,
                    y + 1.0,
                    x + 14.0,
                    y + 1.0
                ),
                Shape::Diamond => format!(
                    "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{colour}\"/>",
                    x + 8.0,
                    y - 10.0,
                    x + 14.0,
                    y - 4.0,
                    x + 8.0,
                    y + 2.0,
                    x + 2.0,
                    y - 4.0
                ),
                Shape::Square => format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"14\" height=\"10\" fill=\"{colour}\" fill-opacity=\"0.6\"/>",
                    x + 1.0,
                    y - 9.0
                ),
            };
            let _ = writeln!(
                s,
                "{mark}<text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
                x + 20.0,
                esc(label)
            );
            x += width;
        }
        let height = if self.legend.is_empty() {
            0.0
        } else {
            20.0 * (row + 1.0) + 4.0
        };
        (s, height)
    }

    /// The finished `<svg>` element, with `label` as its accessible name.
    pub fn svg(&self, label: &str) -> String {
        let (legend, extra) = self.legend_svg();
        let height = HEIGHT + extra;
        let mut s = format!(
            "<svg viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n",
            esc(label)
        );
        let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
        let _ = writeln!(
            s,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\" fill=\"#fbfbfb\" stroke=\"#999\"/>",
            x1 - x0,
            y1 - y0
        );
        for (v, label) in self.x.ticks() {
            let x = self.px(v);
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y0}\" x2=\"{x:.1}\" y2=\"{y1}\" stroke=\"#e4e4e4\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y1 + 16.0,
                esc(&label)
            );
        }
        for (v, label) in self.y.ticks() {
            let y = self.py(v);
            let _ = writeln!(
                s,
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x0 - 6.0,
                y + 4.0,
                esc(&label)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
            0.5 * (x0 + x1),
            HEIGHT - 8.0,
            esc(&self.x_label)
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">{}{}</text>",
            0.5 * (y0 + y1),
            esc(&self.y_label),
            if self.y.log { " (log scale)" } else { "" }
        );
        s += &self.body;
        s += &legend;
        s += "</svg>\n";
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scales_cover_whole_decades_and_linear_ticks_are_round() {
        let s = Scale::log([3e-7, 0.02], 30.0).unwrap();
        assert_eq!((s.lo, s.hi), (-7.0, -1.0));
        let one = Scale::log([1e-5], 30.0).unwrap();
        assert_eq!((one.lo, one.hi), (-6.0, -4.0));
        assert_eq!(tick_label(8e-8, 2e-8), "8e-8");
        assert_eq!(tick_label(1.5e-4, 5e-5), "1.5e-4");
        assert_eq!(tick_label(-0.0, 500.0), "0");
        assert_eq!(tick_label(1500.0, 500.0), "1500");
        assert!(Scale::log([0.0, -1.0], 30.0).is_none());
        let t = Scale::span(0.0, 1.0).ticks();
        assert_eq!(t.first().unwrap().1, "0");
        assert_eq!(t.last().unwrap().1, "1.0");
        assert!(Scale::auto(&[1e-30, 0.1]).is_log());
        assert!(!Scale::auto(&[0.01, 0.1, 0.0]).is_log());
    }

    #[test]
    fn titles_and_labels_are_escaped() {
        let mut c = Chart::new(Scale::span(0.0, 1.0), Scale::span(0.0, 1.0), "<x>", "y&");
        c.marker(0.5, 0.5, RED, Shape::Circle, "<script>alert(1)</script>");
        let svg = c.svg("\"quoted\"");
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;") && svg.contains("&lt;x&gt;"));
        assert!(svg.contains("y&amp;") && svg.contains("&quot;quoted&quot;"));
    }
}
