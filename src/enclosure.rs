//! [`Enclosure`]: an interval with exact endpoints, the form every certified result takes.
//!
//! Whatever backend computed a value (exact rationals, f64 intervals, MPFR intervals), the
//! result leaves the numeric layer as an `Enclosure` whose endpoints are exact rationals (or
//! ±∞), so that comparisons, JSON output and verification never round again.  Printing rounds
//! *outward*: the decimal printed for `lo` is ≤ the true `lo`, the one for `hi` is ≥ `hi`.

use rug::{Integer, Rational};
use std::cmp::Ordering;
use std::fmt;

/// One end of an [`Enclosure`]: an exact rational or an infinity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    NegInf,
    Finite(Rational),
    PosInf,
}

impl Endpoint {
    /// The finite value, if any.
    pub fn finite(&self) -> Option<&Rational> {
        match self {
            Endpoint::Finite(q) => Some(q),
            _ => None,
        }
    }

    /// A double near the endpoint, for display and uncertified diagnostics only.
    pub fn to_f64(&self) -> f64 {
        match self {
            Endpoint::NegInf => f64::NEG_INFINITY,
            Endpoint::Finite(q) => q.to_f64(),
            Endpoint::PosInf => f64::INFINITY,
        }
    }
}

impl PartialOrd for Endpoint {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Endpoint {
    fn cmp(&self, other: &Self) -> Ordering {
        use Endpoint::*;
        match (self, other) {
            (NegInf, NegInf) | (PosInf, PosInf) => Ordering::Equal,
            (NegInf, _) | (_, PosInf) => Ordering::Less,
            (_, NegInf) | (PosInf, _) => Ordering::Greater,
            (Finite(a), Finite(b)) => a.cmp(b),
        }
    }
}

impl From<Rational> for Endpoint {
    fn from(q: Rational) -> Self {
        Endpoint::Finite(q)
    }
}

/// The answer of a comparison between an enclosed value and a number: the enclosure decides
/// it only when it lies entirely on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// The enclosed value is certainly less than the number.
    Less,
    /// The enclosed value is certainly greater than the number.
    Greater,
    /// The enclosure is the single point equal to the number.
    Equal,
    /// The enclosure straddles the number: the comparison is undecided at this precision.
    Unknown,
}

/// A closed interval `[lo, hi]` with exact endpoints that is proven to contain a real value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enclosure {
    lo: Endpoint,
    hi: Endpoint,
}

impl Enclosure {
    /// The enclosure `[lo, hi]`.
    ///
    /// # Panics
    /// If `lo > hi`: an empty enclosure would mean a soundness bug upstream.
    pub fn new(lo: Endpoint, hi: Endpoint) -> Self {
        assert!(lo <= hi, "empty enclosure [{lo:?}, {hi:?}]");
        Enclosure { lo, hi }
    }

    /// The enclosure `[lo, hi]` of two rationals.
    pub fn from_rationals(lo: Rational, hi: Rational) -> Self {
        Self::new(Endpoint::Finite(lo), Endpoint::Finite(hi))
    }

    /// The exact value `q`.
    pub fn point(q: Rational) -> Self {
        Self::from_rationals(q.clone(), q)
    }

    /// The exact value +∞ (e.g. a KL divergence between laws that are not absolutely continuous).
    pub fn pos_infinity() -> Self {
        Self::new(Endpoint::PosInf, Endpoint::PosInf)
    }

    pub fn lo(&self) -> &Endpoint {
        &self.lo
    }

    pub fn hi(&self) -> &Endpoint {
        &self.hi
    }

    /// True when the enclosure is a single value (an exact result).
    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    /// True when `q` lies in the enclosure.
    pub fn contains(&self, q: &Rational) -> bool {
        let q = Endpoint::Finite(q.clone());
        self.lo <= q && q <= self.hi
    }

    /// True when `other` lies inside `self`.
    pub fn contains_enclosure(&self, other: &Enclosure) -> bool {
        self.lo <= other.lo && other.hi <= self.hi
    }

    /// True when the two enclosures share a point (their values may be equal).
    pub fn overlaps(&self, other: &Enclosure) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }

    /// Three-valued comparison of the enclosed value with `q`.
    pub fn compare(&self, q: &Rational) -> Tri {
        let qe = Endpoint::Finite(q.clone());
        if self.hi < qe {
            Tri::Less
        } else if self.lo > qe {
            Tri::Greater
        } else if self.is_point() {
            Tri::Equal
        } else {
            Tri::Unknown
        }
    }

    /// An enclosure of `|x − y|` for `x ∈ self`, `y ∈ other` (e.g. the gap between a finite-n
    /// and a limit curve).
    pub fn distance(&self, other: &Enclosure) -> Enclosure {
        let diff = |x: &Endpoint, y: &Endpoint| match (x.finite(), y.finite()) {
            (Some(x), Some(y)) => Endpoint::Finite(Rational::from(x - y)),
            _ => Endpoint::PosInf,
        };
        let upper = diff(self.hi(), other.lo()).max(diff(other.hi(), self.lo()));
        let lower = [diff(self.lo(), other.hi()), diff(other.lo(), self.hi())]
            .into_iter()
            .filter_map(|e| e.finite().cloned())
            .fold(Rational::new(), |m, x| m.max(x));
        Enclosure::new(Endpoint::Finite(lower), upper)
    }

    /// An enclosure of `max(x, y)` for `x ∈ self`, `y ∈ other`.
    pub fn max(&self, other: &Enclosure) -> Enclosure {
        Enclosure::new(
            self.lo.clone().max(other.lo.clone()),
            self.hi.clone().max(other.hi.clone()),
        )
    }

    /// An enclosure of `x + y` for `x ∈ self`, `y ∈ other` (exact endpoint arithmetic; an
    /// undefined `∞ − ∞` end is left unbounded).
    pub fn add(&self, other: &Enclosure) -> Enclosure {
        use Endpoint::*;
        let lo = match (&self.lo, &other.lo) {
            (Finite(a), Finite(b)) => Finite(Rational::from(a + b)),
            (PosInf, PosInf) => PosInf,
            (PosInf, Finite(_)) | (Finite(_), PosInf) => PosInf,
            _ => NegInf,
        };
        let hi = match (&self.hi, &other.hi) {
            (Finite(a), Finite(b)) => Finite(Rational::from(a + b)),
            (NegInf, NegInf) => NegInf,
            (NegInf, Finite(_)) | (Finite(_), NegInf) => NegInf,
            _ => PosInf,
        };
        Enclosure::new(lo, hi)
    }

    /// Intersection with `[0, +∞)`, for quantities known to be non-negative.
    pub fn clamp_nonnegative(self) -> Enclosure {
        let zero = Endpoint::Finite(Rational::new());
        let lo = self.lo.max(zero.clone());
        let hi = self.hi.max(zero);
        Enclosure::new(lo, hi)
    }

    /// Intersection with `[0, 1]`, for probabilities and hockey-stick divergences (an
    /// enclosure widened past 1 by cancellation keeps its meaningful part).
    pub fn clamp_probability(self) -> Enclosure {
        let one = Endpoint::Finite(Rational::from(1));
        let e = self.clamp_nonnegative();
        let lo = e.lo.min(one.clone());
        let hi = e.hi.min(one);
        Enclosure::new(lo, hi)
    }

    /// The midpoint as a double: for display and uncertified diagnostics only.
    pub fn mid_f64(&self) -> f64 {
        match (&self.lo, &self.hi) {
            (Endpoint::Finite(a), Endpoint::Finite(b)) => (Rational::from(a + b) / 2u32).to_f64(),
            (lo, hi) => 0.5 * (lo.to_f64() + hi.to_f64()),
        }
    }

    /// `(hi − lo) / max(|lo|, |hi|)` as a double (display only); 0 for a point, ∞ when unbounded.
    pub fn relative_width(&self) -> f64 {
        if self.is_point() {
            return 0.0;
        }
        match (&self.lo, &self.hi) {
            (Endpoint::Finite(a), Endpoint::Finite(b)) => {
                let scale = Rational::from(a.abs_ref()).max(Rational::from(b.abs_ref()));
                (Rational::from(b - a) / scale).to_f64()
            }
            _ => f64::INFINITY,
        }
    }

    /// The endpoints as outward-rounded decimal strings: `lo` rounded down, `hi` rounded up,
    /// with enough significant digits to show the width; an exact point prints exactly.
    pub fn decimal_strings(&self) -> (String, String) {
        if self.is_point() {
            let s = match &self.lo {
                Endpoint::Finite(q) => exact_string(q),
                other => endpoint_word(other).to_string(),
            };
            return (s.clone(), s);
        }
        let digits = self.significant_digits();
        (
            endpoint_string(&self.lo, digits, Direction::Down),
            endpoint_string(&self.hi, digits, Direction::Up),
        )
    }

    /// The endpoints as text, each exact when that is no longer than `digits` significant
    /// digits, else rounded outward to them (so the result still encloses the true value).
    pub fn outward_strings(&self, digits: u32) -> (String, String) {
        let text = |e: &Endpoint, direction| match e {
            Endpoint::Finite(q) => {
                let exact = exact_string(q);
                let rounded = endpoint_string(e, digits, direction);
                if exact.len() <= rounded.len() {
                    exact
                } else {
                    rounded
                }
            }
            other => endpoint_word(other).to_string(),
        };
        (
            text(&self.lo, Direction::Down),
            text(&self.hi, Direction::Up),
        )
    }

    /// `[lo, hi]` rounded outward to `digits` significant digits (still an enclosure), whatever
    /// the text style: for strings that reports and certificates compare as text (validity
    /// conditions); an exact point prints exactly.
    pub fn short(&self, digits: u32) -> String {
        if self.is_point() {
            return self.decimal_strings().0;
        }
        let lo = endpoint_string(&self.lo, digits, Direction::Down);
        let hi = endpoint_string(&self.hi, digits, Direction::Up);
        format!("[{lo}, {hi}]")
    }

    /// The enclosure rounded outward to at most `digits` significant digits (still an
    /// enclosure; for tables that must be read at a glance), in the text style of
    /// [`with_text_style`]; an exact point prints exactly.
    /// `--wide` lifts the table's limit (every digit the width needs); `--digits` sets it.
    pub fn compact(&self, digits: u32) -> String {
        if self.is_point() {
            return self.to_string();
        }
        let style = text_style();
        let digits = match style.digits {
            Some(d) => d,
            None if style.wide => self.significant_digits(),
            None => digits,
        };
        self.styled(digits.min(self.significant_digits()))
    }

    /// `[lo, hi]` at `digits` significant digits, rounded outward, in the current text style:
    /// compact (`0.10537258[61, 62]`, the shared leading digits printed once) unless wide; at
    /// most `--digits` significant digits, and unless wide at most [`TEXT_DIGITS`] (a value
    /// resolved deep in MPFR would otherwise print a hundred digits).
    fn styled(&self, digits: u32) -> String {
        let style = text_style();
        let digits = match style.digits {
            Some(d) => d.min(digits),
            None if style.wide => digits,
            None => digits.min(TEXT_DIGITS),
        };
        let lo = endpoint_string(&self.lo, digits, Direction::Down);
        let hi = endpoint_string(&self.hi, digits, Direction::Up);
        if !style.wide
            && let Some(compact) = compact_pair(&lo, &hi)
        {
            return compact;
        }
        format!("[{lo}, {hi}]")
    }

    /// `{"lo": "…", "hi": "…"}`, the JSON form of every certified number: outward-rounded
    /// decimals, or the exact endpoints inside [`with_exact_endpoints`] (certificates).
    /// Resolved: a point, or relatively no wider than `rel` (an enclosure `[0, h]` whose
    /// upper end is set by a truncation depth is not).
    pub fn resolved(&self, rel: f64) -> bool {
        self.relative_width() <= rel
    }

    /// [`Enclosure::to_json`] with `"resolved"` ([`Enclosure::resolved`]).
    pub fn to_json_resolved(&self, rel: f64) -> serde_json::Value {
        let mut v = self.to_json();
        v["resolved"] = self.resolved(rel).into();
        v
    }

    pub fn to_json(&self) -> serde_json::Value {
        let (lo, hi) = if exact_endpoints() {
            (exact_endpoint(&self.lo), exact_endpoint(&self.hi))
        } else {
            self.decimal_strings()
        };
        serde_json::json!({ "lo": lo, "hi": hi })
    }

    fn significant_digits(&self) -> u32 {
        let (Endpoint::Finite(a), Endpoint::Finite(b)) = (&self.lo, &self.hi) else {
            return 17;
        };
        let width = Rational::from(b - a);
        let scale = Rational::from(a.abs_ref()).max(Rational::from(b.abs_ref()));
        if scale == 0 {
            return 17;
        }
        // digits ≈ log10(scale / width) + 3, so outward rounding widens by ≲ 1 %.
        let ratio = scale / width;
        let digits = decimal_exponent(&ratio) + 3;
        digits.clamp(6, 120) as u32
    }
}

impl fmt::Display for Enclosure {
    /// Text reports: an exact point exactly, otherwise outward-rounded endpoints with enough
    /// digits to show the width, in the text style of [`with_text_style`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_point() {
            let (lo, _) = self.decimal_strings();
            return write!(f, "{lo}");
        }
        write!(f, "{}", self.styled(self.significant_digits()))
    }
}

/// The most significant digits a text report prints by default (`--wide` prints every digit the
/// width needs, `--digits` sets another limit); rounded outward, so still an enclosure.
pub const TEXT_DIGITS: u32 = 20;

/// How text reports print enclosures (JSON and certificates are never affected).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextStyle {
    /// `[lo, hi]` in full instead of the compact form.
    pub wide: bool,
    /// At most this many significant digits (rounded outward, so still an enclosure).
    pub digits: Option<u32>,
}

thread_local! {
    static TEXT_STYLE: std::cell::Cell<TextStyle> = const {
        std::cell::Cell::new(TextStyle { wide: false, digits: None })
    };
}

fn text_style() -> TextStyle {
    TEXT_STYLE.with(|s| s.get())
}

/// Runs `f` with text reports printing enclosures in `style`.
pub fn with_text_style<T>(style: TextStyle, f: impl FnOnce() -> T) -> T {
    TEXT_STYLE.with(|cell| {
        let previous = cell.replace(style);
        let out = f();
        cell.set(previous);
        out
    })
}

/// `lo` and `hi` with their shared leading digits printed once: `0.10537[258, 262]`,
/// `1.23[4, 6]e-30`.  `None` when they share no significant digit, differ in sign, exponent or
/// the length of their integer part, or differ before the decimal point (then `[lo, hi]` is
/// clearer).
fn compact_pair(lo: &str, hi: &str) -> Option<String> {
    let split = |s: &str| match s.find('e') {
        Some(i) => (s[..i].to_string(), s[i..].to_string()),
        None => (s.to_string(), String::new()),
    };
    let ((mut a, ea), (mut b, eb)) = (split(lo), split(hi));
    if ea != eb || a.starts_with('-') != b.starts_with('-') {
        return None;
    }
    let int_len = |m: &str| m.find('.').unwrap_or(m.len());
    if int_len(&a) != int_len(&b) {
        return None;
    }
    // Equal lengths: pad the shorter fraction with zeros (which changes no value).
    let frac_len = |m: &str| m.find('.').map_or(0, |i| m.len() - i - 1);
    let width = frac_len(&a).max(frac_len(&b));
    for m in [&mut a, &mut b] {
        if width > 0 && !m.contains('.') {
            m.push('.');
        }
        let missing = width - frac_len(m);
        m.extend(std::iter::repeat_n('0', missing));
    }
    let shared = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let prefix = &a[..shared];
    // At least one significant digit shared, and something left to tell the ends apart.
    if !prefix.bytes().any(|c| (b'1'..=b'9').contains(&c)) || shared == a.len() {
        return None;
    }
    // Never split a number at its decimal point, nor inside its integer part
    // (`2203[40000, 50000]` reads as a fraction).
    if prefix.ends_with('.') || shared < int_len(&a) {
        return None;
    }
    Some(format!("{prefix}[{}, {}]{ea}", &a[shared..], &b[shared..]))
}

thread_local! {
    /// Set while a certificate is rendered: enclosures give their exact endpoints.
    static EXACT_ENDPOINTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every [`Enclosure::to_json`] (and [`bound_text`]) giving exact endpoints — the
/// proven rationals themselves, as terminating decimals or `p/q` — instead of outward-rounded
/// decimals.  Certificates are rendered this way, by the same report builders as `--json`.
pub fn with_exact_endpoints<T>(f: impl FnOnce() -> T) -> T {
    EXACT_ENDPOINTS.with(|flag| {
        let previous = flag.replace(true);
        let result = f();
        flag.set(previous);
        result
    })
}

fn exact_endpoints() -> bool {
    EXACT_ENDPOINTS.with(|flag| flag.get())
}

/// An endpoint exactly: `exact_string`, or `inf` / `-inf`.
fn exact_endpoint(e: &Endpoint) -> String {
    match e {
        Endpoint::Finite(q) => exact_string(q),
        other => endpoint_word(other).to_string(),
    }
}

/// A certified upper bound as text: exact when short (or when exact endpoints are asked for),
/// otherwise rounded up to a few digits.
pub fn bound_text(q: &Rational) -> String {
    let exact = exact_string(q);
    if exact.len() <= 24 || exact_endpoints() {
        return exact;
    }
    decimal_rounded(q, 6, Direction::Up)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Down,
    Up,
}

fn endpoint_word(e: &Endpoint) -> &'static str {
    match e {
        Endpoint::NegInf => "-inf",
        Endpoint::PosInf => "inf",
        Endpoint::Finite(_) => unreachable!(),
    }
}

fn endpoint_string(e: &Endpoint, digits: u32, dir: Direction) -> String {
    match e {
        Endpoint::Finite(q) => decimal_rounded(q, digits, dir),
        other => endpoint_word(other).to_string(),
    }
}

/// `floor(log10 |q|)` for `q ≠ 0`, computed exactly.
fn decimal_exponent(q: &Rational) -> i64 {
    let a = Rational::from(q.abs_ref());
    let num_bits = i64::from(a.numer().significant_bits());
    let den_bits = i64::from(a.denom().significant_bits());
    // log10(a) ∈ ((num_bits − 1 − den_bits) log10 2, (num_bits − den_bits + 1) log10 2): a guess
    // within one or two of the truth, then corrected by exact comparisons.
    let mut e = ((num_bits - den_bits) as f64 * std::f64::consts::LOG10_2).floor() as i64;
    loop {
        let p = pow10(e);
        if a < p {
            e -= 1;
        } else if a >= pow10(e + 1) {
            e += 1;
        } else {
            return e;
        }
    }
}

fn pow10(e: i64) -> Rational {
    let p = Integer::from(Integer::u_pow_u(10, e.unsigned_abs() as u32));
    if e >= 0 {
        Rational::from(p)
    } else {
        Rational::from((Integer::from(1), p))
    }
}

impl Enclosure {
    /// `[lo, hi]` rounded outward to `digits` significant digits, in scientific notation when
    /// an end is at least 10⁶ (for ratios that span many orders of magnitude).
    pub fn ratio_text(&self, digits: u32) -> String {
        let big = |e: &Endpoint| matches!(e, Endpoint::Finite(q) if *q >= 1_000_000);
        if !big(&self.lo) && !big(&self.hi) {
            return self.compact(digits);
        }
        let end = |e: &Endpoint, dir: Direction| match e {
            Endpoint::Finite(q) if *q > 0 => {
                let x = decimal_exponent(q);
                let scaled = Rational::from(q / pow10(x));
                format!("{}e{x}", decimal_rounded(&scaled, digits, dir))
            }
            other => endpoint_string(other, digits, dir),
        };
        format!(
            "[{}, {}]",
            end(&self.lo, Direction::Down),
            end(&self.hi, Direction::Up)
        )
    }
}

/// `q` rounded up to `digits` significant decimal digits (a bound from above, for display).
pub fn rounded_up(q: &Rational, digits: u32) -> String {
    decimal_rounded(q, digits, Direction::Up)
}

/// `q` rounded to `digits` significant decimal digits in the direction `dir` (towards −∞ for
/// `Down`, towards +∞ for `Up`).
fn decimal_rounded(q: &Rational, digits: u32, dir: Direction) -> String {
    if *q == 0 {
        return "0".to_string();
    }
    let e = decimal_exponent(q);
    let shift = i64::from(digits) - 1 - e;
    let scaled = q * pow10(shift);
    let mut m = Integer::from(scaled.floor_ref());
    let exact = m == scaled;
    if dir == Direction::Up && !exact {
        m += 1;
    }
    format_scaled(m, shift)
}

/// The decimal string of the integer `m` times `10^-shift`, trailing zeros removed.
fn format_scaled(m: Integer, shift: i64) -> String {
    let negative = m < 0;
    let mut digits = m.abs().to_string();
    let mut shift = shift;
    while shift > 0 && digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        shift -= 1;
    }
    if digits == "0" {
        return "0".to_string();
    }
    // Value = digits × 10^-shift; exponent of the leading digit:
    let lead_exp = digits.len() as i64 - 1 - shift;
    let body = if (-5..17).contains(&lead_exp) {
        positional(&digits, shift)
    } else {
        let trimmed = digits.trim_end_matches('0');
        let (first, rest) = trimmed.split_at(1);
        if rest.is_empty() {
            format!("{first}e{lead_exp}")
        } else {
            format!("{first}.{rest}e{lead_exp}")
        }
    };
    if negative { format!("-{body}") } else { body }
}

fn positional(digits: &str, shift: i64) -> String {
    if shift <= 0 {
        let mut s = digits.to_string();
        s.extend(std::iter::repeat_n('0', (-shift) as usize));
        return s;
    }
    let shift = shift as usize;
    if digits.len() > shift {
        let (int, frac) = digits.split_at(digits.len() - shift);
        format!("{int}.{frac}")
    } else {
        let zeros = "0".repeat(shift - digits.len());
        format!("0.{zeros}{digits}")
    }
}

/// `"1 claim"`, `"2 claims"`: a count with its noun, singular or plural (text reports).
pub fn count_of(n: usize, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// An exact number as text reports write it: [`exact_string`], except that a short decimal
/// below 10⁻³ is written in scientific form (`1e-5`, `2.5e-7`), so that every δ reads alike.
pub fn number_text(q: &Rational) -> String {
    let exact = exact_string(q);
    let digits = exact.trim_start_matches('-').trim_start_matches("0.");
    if !exact.trim_start_matches('-').starts_with("0.000") || exact.contains('/') {
        return exact;
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() > 6 {
        return exact;
    }
    let exponent = -((digits.len() - significant.len()) as i64 + 1);
    let mantissa = match significant.split_at(1) {
        (first, "") => first.to_string(),
        (first, rest) => format!("{first}.{rest}"),
    };
    let sign = if exact.starts_with('-') { "-" } else { "" };
    format!("{sign}{mantissa}e{exponent}")
}

/// The exact value of `q`: a terminating decimal when its denominator is `2^a 5^b` and that is
/// not much longer than `p/q`, otherwise `p/q`.
pub fn exact_string(q: &Rational) -> String {
    let den = q.denom();
    let twos = den.find_one(0).unwrap_or(0);
    let rest = Integer::from(den >> twos);
    let mut fives = 0u32;
    let mut r = rest;
    while r.is_divisible_u(5) {
        r /= 5u32;
        fives += 1;
    }
    let fraction = if *den == 1 {
        q.numer().to_string()
    } else {
        format!("{}/{}", q.numer(), den)
    };
    if r != 1 {
        return fraction;
    }
    let shift = twos.max(fives);
    let scaled = q * pow10(i64::from(shift));
    let decimal = format_scaled(scaled.numer().clone(), i64::from(shift));
    if decimal.len() <= fraction.len() + 8 {
        decimal
    } else {
        fraction
    }
}

/// Parses a decimal (`0.7`, `-1.5e-3`, `2`) or a fraction (`7/10`) exactly.
pub fn parse_rational(text: &str) -> Option<Rational> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Some((p, q)) = t.split_once('/') {
        let p: Integer = p.trim().parse().ok()?;
        let q: Integer = q.trim().parse().ok()?;
        if q == 0 {
            return None;
        }
        return Some(Rational::from((p, q)));
    }
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    if exponent.abs() > 100_000 {
        return None;
    }
    let digits: Integer = format!("{int}{frac}").parse().ok()?;
    let mut value = Rational::from(digits) * pow10(exponent - frac.len() as i64);
    if negative {
        value = -value;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Rational {
        parse_rational(s).unwrap()
    }

    #[test]
    fn small_numbers_read_alike() {
        for (q, text) in [
            ("0.00001", "1e-5"),
            ("1e-6", "1e-6"),
            ("0.0000125", "1.25e-5"),
            ("0.001", "0.001"),
            ("0.5", "0.5"),
            ("1/3", "1/3"),
        ] {
            assert_eq!(number_text(&parse_rational(q).unwrap()), text);
            assert_eq!(parse_rational(text), parse_rational(q));
        }
    }

    #[test]
    fn compact_enclosures_print_shared_digits_once() {
        assert_eq!(
            compact_pair("0.10537258616154", "0.10537258616196").as_deref(),
            Some("0.105372586161[54, 96]")
        );
        // Trailing zeros removed by the rounding are put back for equal lengths.
        assert_eq!(
            compact_pair("0.1053", "0.10531").as_deref(),
            Some("0.1053[0, 1]")
        );
        assert_eq!(
            compact_pair("1.234e-30", "1.236e-30").as_deref(),
            Some("1.23[4, 6]e-30")
        );
        assert_eq!(
            compact_pair("123.45", "123.47").as_deref(),
            Some("123.4[5, 7]")
        );
        for (lo, hi) in [
            ("123.5", "124.5"),
            ("220340000", "220350000"),
            ("0.0999", "0.1001"),
            ("9.99", "10.01"),
            ("1.2e-30", "1.2e-29"),
            ("-0.5", "0.5"),
            ("12.5", "12.7"),
            ("0", "1e-30"),
        ] {
            assert_eq!(compact_pair(lo, hi), None, "{lo}, {hi}");
        }
        let e = Enclosure::from_rationals(q("0.10537258616154"), q("0.10537258616196"));
        assert_eq!(e.to_string(), "0.105372586161[54, 96]");
        let wide = TextStyle {
            wide: true,
            digits: None,
        };
        assert_eq!(
            with_text_style(wide, || e.to_string()),
            "[0.10537258616154, 0.10537258616196]"
        );
        // At most 6 digits, rounded outward: still an enclosure.
        let six = TextStyle {
            wide: false,
            digits: Some(6),
        };
        assert_eq!(with_text_style(six, || e.to_string()), "0.10537[2, 3]");
        assert_eq!(with_text_style(six, || e.compact(12)), "0.10537[2, 3]");
        // `short` is the same in every style.
        assert_eq!(with_text_style(six, || e.short(6)), "[0.105372, 0.105373]");
    }

    #[test]
    fn distance_encloses_every_difference() {
        let a = Enclosure::from_rationals(q("1"), q("2"));
        let b = Enclosure::from_rationals(q("5"), q("7"));
        let d = a.distance(&b);
        assert_eq!(d, Enclosure::from_rationals(q("3"), q("6")));
        // Overlapping enclosures can be at distance 0.
        let c = Enclosure::from_rationals(q("1.5"), q("5.5"));
        assert_eq!(a.distance(&c), Enclosure::from_rationals(q("0"), q("4.5")));
        assert_eq!(
            a.distance(&Enclosure::pos_infinity()).hi(),
            &Endpoint::PosInf
        );
    }

    #[test]
    fn parses_decimals_and_fractions_exactly() {
        assert_eq!(q("0.7"), Rational::from((7, 10)));
        assert_eq!(q("7/10"), Rational::from((7, 10)));
        assert_eq!(q("-1.5e-3"), Rational::from((-3, 2000)));
        assert_eq!(q("1e5"), Rational::from(100000));
        assert_eq!(q(".25"), Rational::from((1, 4)));
        assert!(parse_rational("abc").is_none());
        assert!(parse_rational("1/0").is_none());
        assert!(parse_rational("0.7.1").is_none());
        assert!(parse_rational("").is_none());
        assert!(parse_rational("-").is_none());
    }

    #[test]
    fn rounding_is_outward() {
        let third = Rational::from((1, 3));
        assert_eq!(decimal_rounded(&third, 5, Direction::Down), "0.33333");
        assert_eq!(decimal_rounded(&third, 5, Direction::Up), "0.33334");
        let neg = Rational::from((-1, 3));
        assert_eq!(decimal_rounded(&neg, 3, Direction::Down), "-0.334");
        assert_eq!(decimal_rounded(&neg, 3, Direction::Up), "-0.333");
        let small = Rational::from((1, 300_000_000));
        assert_eq!(decimal_rounded(&small, 3, Direction::Up), "3.34e-9");
        assert_eq!(
            decimal_rounded(&Rational::from(12345), 2, Direction::Up),
            "13000"
        );
        // Rounding up across a power of ten.
        assert_eq!(
            decimal_rounded(&Rational::from((9999, 1000)), 2, Direction::Up),
            "10"
        );
    }

    #[test]
    fn short_forms_stay_outward() {
        let e = Enclosure::from_rationals(Rational::from((1, 7)), Rational::from((1, 6)));
        assert_eq!(e.short(3), "[0.142, 0.167]");
        let tight = Enclosure::from_rationals(
            Rational::from((10_000, 30_001)),
            Rational::from((10_001, 30_001)),
        );
        assert_eq!(tight.short(2), "[0.33, 0.34]");
        assert_eq!(Enclosure::point(Rational::from((1, 4))).short(1), "0.25");
    }

    #[test]
    fn exact_points_print_exactly() {
        assert_eq!(exact_string(&Rational::from((3, 1024))), "0.0029296875");
        assert_eq!(exact_string(&Rational::from((1, 3))), "1/3");
        assert_eq!(exact_string(&Rational::from(-7)), "-7");
        assert_eq!(exact_string(&Rational::from((7, 10))), "0.7");
    }

    #[test]
    fn printed_endpoints_enclose_the_true_ones() {
        let e = Enclosure::from_rationals(Rational::from((1, 7)), Rational::from((1, 6)));
        let (lo, hi) = e.decimal_strings();
        assert!(q(&lo) <= Rational::from((1, 7)));
        assert!(q(&hi) >= Rational::from((1, 6)));
        let tight = Enclosure::from_rationals(
            Rational::from((100_000_000_000i64, 700_000_000_001i64)),
            Rational::from((100_000_000_001i64, 700_000_000_001i64)),
        );
        let (lo, hi) = tight.decimal_strings();
        assert!(q(&lo) <= *tight.lo().finite().unwrap());
        assert!(q(&hi) >= *tight.hi().finite().unwrap());
        assert!(q(&hi) - q(&lo) < Rational::from((1, 10_000_000_000i64)));
    }

    #[test]
    fn three_valued_comparison() {
        let e = Enclosure::from_rationals(Rational::from(1), Rational::from(2));
        assert_eq!(e.compare(&Rational::from(3)), Tri::Less);
        assert_eq!(e.compare(&Rational::from(0)), Tri::Greater);
        assert_eq!(e.compare(&Rational::from((3, 2))), Tri::Unknown);
        assert_eq!(
            Enclosure::point(Rational::from(1)).compare(&Rational::from(1)),
            Tri::Equal
        );
    }
}
