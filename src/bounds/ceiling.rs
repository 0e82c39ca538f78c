//! The branch-and-bound ceiling of a range (`bounds --ceiling-seconds S`): the search over every
//! dataset of [`crate::profile_inputs`], with boxes closed at a level `c` between the range's
//! ends instead of at the best value found (proofs-notes/inputs-profile.md, "Ceiling").
//!
//! A search at level `c` that finishes proves the maximum over every dataset is at most
//! `max(c, largest evaluated upper end)`: every composition is evaluated or lies in a box whose
//! Lemma 2 bound is at most the larger of `c` and the best value found. The first level tried
//! is the middle of the range; each search that finishes within the time left is followed by
//! one at half the distance to the lower end, and the last that finished is kept.

use super::range::{BoundsQuery, RangeRow};
use crate::enclosure::Endpoint;
use crate::error::{Error, Result};
use crate::profile_inputs::{InputsProfile, InputsProfileQuery, inputs_profile};
use rug::Rational;
use rug::ops::Pow;

/// The most searches one ceiling tries (each at half the last level's distance to the lower
/// end).
const MAX_LEVELS: usize = 8;

/// A finished ceiling search: the query it answered (its levels in `query.ceiling`), the
/// profile with its proof (each row `[best found, max(level, largest evaluated)]`), and how many
/// searches the ceiling started and finished.
pub struct Ceiling {
    pub query: InputsProfileQuery,
    pub profile: InputsProfile,
    /// Searches started, and of them finished (the kept one is the last finished).
    pub started: usize,
    pub finished: usize,
}

/// Lowers the rows' upper ends within `seconds`: the last search that finished, or why none
/// did (no room in any row, or the first search did not finish in time or was out of reach).
pub fn ceiling(
    q: &BoundsQuery,
    rows: &[RangeRow],
    seconds: f64,
) -> Result<std::result::Result<Ceiling, String>> {
    let clock = std::time::Instant::now();
    // Per row its ends; a row whose ends meet has no room and keeps its upper end as level.
    let mut ends = Vec::with_capacity(rows.len());
    for row in rows {
        match (row.lower.value.lo(), row.upper.value.hi()) {
            (Endpoint::Finite(lo), Endpoint::Finite(hi)) => ends.push((lo.clone(), hi.clone())),
            _ => return Ok(Err("not tried: a row's upper end is infinite".into())),
        }
    }
    if ends.iter().all(|(lo, hi)| lo >= hi) {
        return Ok(Err("not tried: every row's ends meet".into()));
    }
    let mut kept: Option<(InputsProfileQuery, InputsProfile)> = None;
    let mut why = "no time was left for a search".to_string();
    let mut fraction = Rational::from((1, 2));
    let (mut started, mut finished) = (0, 0);
    for _ in 0..MAX_LEVELS {
        let left = seconds - clock.elapsed().as_secs_f64();
        if left <= 0.0 {
            break;
        }
        started += 1;
        let levels: Vec<Rational> = ends
            .iter()
            .map(|(lo, hi)| {
                if lo < hi {
                    rounded_up(&(lo.clone() + (hi.clone() - lo) * &fraction)).min(hi.clone())
                } else {
                    hi.clone()
                }
            })
            .collect();
        let mut options = q.options.clone();
        options.time_limit_seconds = left;
        let query = InputsProfileQuery {
            ceiling: Some(levels),
            ..InputsProfileQuery::new(
                q.randomizer.clone(),
                q.n,
                q.target.quantities(),
                options,
                q.backend,
                q.escalate_above,
            )
        };
        crate::progress::note(&format!(
            "bounds: ceiling search {started} at {fraction} of the way up each range, {} left",
            crate::exact::pair::duration_text(left)
        ));
        match inputs_profile(&query) {
            Ok(profile) => {
                finished += 1;
                kept = Some((query, profile));
            }
            // Out of time or out of reach: the last search that finished stands.
            Err(Error::TooLarge(message)) => {
                why = message;
                break;
            }
            Err(Error::Argument { field, message }) if field == "--max-seconds" => {
                why = message;
                break;
            }
            Err(e) => return Err(e),
        }
        fraction /= 2;
    }
    Ok(match kept {
        Some((query, profile)) => Ok(Ceiling {
            query,
            profile,
            started,
            finished,
        }),
        None => Err(format!(
            "no search finished within {}: {why}",
            crate::exact::pair::duration_text(seconds)
        )),
    })
}

/// `x` rounded up to 64 significant bits (a level anywhere is sound; this keeps it short
/// whatever its size: δ levels can be 1e-20 and below).
fn rounded_up(x: &Rational) -> Rational {
    if *x <= 0 {
        return x.clone();
    }
    // 2^e ≤ x < 2^(e + 2) with e from the bit lengths (exact, whatever the size of x).
    let e = i64::from(x.numer().significant_bits()) - i64::from(x.denom().significant_bits());
    let scale = Rational::from(2).pow((64 - e) as i32);
    let scaled = (x.clone() * &scale).ceil();
    scaled / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_round_up_relative_to_their_size() {
        for x in [
            Rational::from((1, 3)),
            Rational::from((7, 3)) / Rational::from(10).pow(22),
            Rational::from(12345),
            // Below the smallest double: its f64 is 0.
            Rational::from((1, rug::Integer::from(10).pow(400))),
        ] {
            let r = rounded_up(&x);
            assert!(r >= x);
            assert!((r.clone() - &x) / &x < Rational::from((1, 1u64 << 62)));
        }
        assert_eq!(rounded_up(&Rational::new()), 0);
    }
}
