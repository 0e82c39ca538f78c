//! The verdict on one claim from a certified enclosure, and the tightness ratios.
//!
//! Everything here is exact comparison of rationals: an enclosure `[lo, hi]` contains the true
//! value, so a claim is decided only when the whole enclosure lies on one side of it.
//!
//! * upper claim "value ≤ c": `sound` iff `hi ≤ c`, `unsound` iff `lo > c`;
//! * lower claim "value ≥ c": `sound` iff `lo ≥ c`, `unsound` iff `hi < c`;
//! * otherwise `undecided`, with the straddle `(c − lo, hi − c)`.
//!
//! An exact tie (the enclosure is the point c) satisfies both kinds of claim, and a claim
//! exactly at a certified endpoint is decided when that endpoint is on the claim's side
//! (`hi = c` proves an upper claim) and undecided otherwise (`lo = c < hi` does not refute it:
//! the true value may be c).

use crate::enclosure::{Enclosure, Endpoint};
use rug::Rational;

/// The outcome of an audit of one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Proven true.
    Sound,
    /// Proven false.
    Unsound,
    /// The certified enclosure straddles the claimed value.
    Undecided,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Sound => "sound",
            Verdict::Unsound => "unsound",
            Verdict::Undecided => "undecided",
        }
    }
}

/// Which side of the claimed value the claim puts the true value on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// "the true value is ≤ the claimed value".
    AtMost,
    /// "the true value is ≥ the claimed value".
    AtLeast,
}

/// The verdict on "the value enclosed by `value` is ≤ (or ≥) `claimed`".
pub fn judge(value: &Enclosure, side: Side, claimed: &Rational) -> Verdict {
    let c = Endpoint::Finite(claimed.clone());
    let (proves, refutes) = match side {
        Side::AtMost => (value.hi() <= &c, value.lo() > &c),
        Side::AtLeast => (value.lo() >= &c, value.hi() < &c),
    };
    if proves {
        Verdict::Sound
    } else if refutes {
        Verdict::Unsound
    } else {
        Verdict::Undecided
    }
}

/// How far an undecided enclosure reaches on either side of the claimed value:
/// `(claimed − lo, hi − claimed)`, both ≥ 0 (`None` for an unbounded end).
pub fn straddle(value: &Enclosure, claimed: &Rational) -> (Option<Rational>, Option<Rational>) {
    let below = value.lo().finite().map(|lo| Rational::from(claimed - lo));
    let above = value.hi().finite().map(|hi| Rational::from(hi - claimed));
    (below, above)
}

/// An enclosure of `x / y` for non-negative `x ∈ numerator`, `y ∈ denominator` (`+∞` where y
/// may be 0), or `None` when both may be 0: the ratio `0/0` is undefined.
pub fn quotient(numerator: &Enclosure, denominator: &Enclosure) -> Option<Enclosure> {
    let zero = Endpoint::Finite(Rational::new());
    if numerator.lo() <= &zero && denominator.lo() <= &zero {
        return None;
    }
    let divide = |x: &Endpoint, y: &Endpoint| match (x, y) {
        (_, Endpoint::Finite(y)) if *y <= 0 => Endpoint::PosInf,
        (Endpoint::Finite(x), Endpoint::Finite(y)) => Endpoint::Finite(Rational::from(x / y)),
        (Endpoint::Finite(_), Endpoint::PosInf) => zero.clone(),
        _ => Endpoint::PosInf,
    };
    Some(Enclosure::new(
        divide(numerator.lo(), denominator.hi()),
        divide(numerator.hi(), denominator.lo()),
    ))
}

/// `claimed / x` for `x` in `value` (see [`quotient`]).
pub fn ratio(claimed: &Rational, value: &Enclosure) -> Option<Enclosure> {
    quotient(&Enclosure::point(claimed.clone()), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(a: i64, b: i64) -> Rational {
        Rational::from((a, b))
    }

    fn e(a: i64, b: i64, c: i64, d: i64) -> Enclosure {
        Enclosure::from_rationals(q(a, b), q(c, d))
    }

    #[test]
    fn upper_claims() {
        let v = e(1, 10, 2, 10);
        assert_eq!(judge(&v, Side::AtMost, &q(3, 10)), Verdict::Sound);
        assert_eq!(judge(&v, Side::AtMost, &q(1, 20)), Verdict::Unsound);
        assert_eq!(judge(&v, Side::AtMost, &q(15, 100)), Verdict::Undecided);
        // Exactly at the upper end proves it; exactly at the lower end decides nothing.
        assert_eq!(judge(&v, Side::AtMost, &q(2, 10)), Verdict::Sound);
        assert_eq!(judge(&v, Side::AtMost, &q(1, 10)), Verdict::Undecided);
        // An exact tie satisfies the claim.
        assert_eq!(
            judge(&Enclosure::point(q(1, 3)), Side::AtMost, &q(1, 3)),
            Verdict::Sound
        );
        assert_eq!(
            judge(&Enclosure::pos_infinity(), Side::AtMost, &q(700, 1)),
            Verdict::Unsound
        );
    }

    #[test]
    fn lower_claims() {
        let v = e(1, 10, 2, 10);
        assert_eq!(judge(&v, Side::AtLeast, &q(1, 20)), Verdict::Sound);
        assert_eq!(judge(&v, Side::AtLeast, &q(3, 10)), Verdict::Unsound);
        assert_eq!(judge(&v, Side::AtLeast, &q(15, 100)), Verdict::Undecided);
        assert_eq!(judge(&v, Side::AtLeast, &q(1, 10)), Verdict::Sound);
        assert_eq!(judge(&v, Side::AtLeast, &q(2, 10)), Verdict::Undecided);
        assert_eq!(
            judge(&Enclosure::point(q(1, 3)), Side::AtLeast, &q(1, 3)),
            Verdict::Sound
        );
    }

    #[test]
    fn straddles_and_ratios() {
        let v = e(1, 10, 2, 10);
        assert_eq!(
            straddle(&v, &q(15, 100)),
            (Some(q(5, 100)), Some(q(5, 100)))
        );
        // 1/5 ÷ [1/10, 2/10] = [1, 2].
        assert_eq!(ratio(&q(1, 5), &v), Some(e(1, 1, 2, 1)));
        let from_zero = e(0, 1, 1, 10);
        assert_eq!(ratio(&q(1, 5), &from_zero).unwrap().hi(), &Endpoint::PosInf);
        assert_eq!(ratio(&q(0, 1), &v), Some(Enclosure::point(q(0, 1))));
        // 0/0 is undefined: a claim of δ = 0 against a value that may be 0.
        assert_eq!(ratio(&q(0, 1), &from_zero), None);
        assert_eq!(quotient(&e(0, 1, 1, 1), &from_zero), None);
        assert_eq!(
            quotient(&e(2, 1, 3, 1), &e(1, 1, 2, 1)),
            Some(e(1, 1, 3, 1))
        );
    }
}
