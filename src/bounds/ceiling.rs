//! The branch-and-bound ceiling of a range (`bounds --ceiling-seconds S`): the search over every
//! dataset of [`crate::profile_inputs`], with boxes closed at a level `c` between the range's
//! ends instead of at the best value found (proofs-notes/inputs-profile.md, "Ceiling").
//!
//! A search at level `c` that finishes proves the maximum over every dataset is at most
//! `max(c, largest evaluated upper end)`: every composition is evaluated or lies in a box whose
//! Lemma 2 bound is at most the larger of `c` and the best value found. The first level tried
//! is the middle of the range; each search that finishes within the time left is followed by
//! one at half the distance to the lower end, and the last that finished is kept.

use super::range::{BoundsQuery, RangeRow, Target};
use crate::enclosure::Endpoint;
use crate::error::{Error, Result};
use crate::profile::Quantity;
use crate::profile_inputs::{InputsProfile, InputsProfileQuery, inputs_profile};
use rug::Rational;

/// The most searches one ceiling tries (each at half the last level's distance to the lower
/// end).
const MAX_LEVELS: usize = 8;

/// A finished ceiling search: the query it answered (its levels in `query.ceiling`), the
/// profile with its proof (each row `[best found, max(level, largest evaluated)]`), and what the
/// whole ceiling took.
pub struct Ceiling {
    pub query: InputsProfileQuery,
    pub profile: InputsProfile,
    /// Searches started (the last may have stopped at the time left) and their seconds in all.
    pub searches: usize,
    pub seconds: f64,
}

/// The quantities of the range's rows, in order.
pub fn quantities(target: &Target) -> Vec<Quantity> {
    match target {
        Target::Delta(t) => t.iter().cloned().map(Quantity::Delta).collect(),
        Target::Epsilon(d) => vec![Quantity::Epsilon(d.clone())],
    }
}

/// Lowers the rows' upper ends within `seconds`: the last search that finished, or why none
/// did (the range has no room, or the first search did not finish in time or was out of reach).
pub fn ceiling(
    q: &BoundsQuery,
    rows: &[RangeRow],
    seconds: f64,
) -> Result<std::result::Result<Ceiling, String>> {
    let started = std::time::Instant::now();
    let mut ends = Vec::with_capacity(rows.len());
    for row in rows {
        match (row.lower.value.lo(), row.upper.value.hi()) {
            (Endpoint::Finite(lo), Endpoint::Finite(hi)) if lo < hi => {
                ends.push((lo.clone(), hi.clone()))
            }
            _ => {
                return Ok(Err(
                    "not tried: a row's ends meet or its upper end is infinite".into(),
                ));
            }
        }
    }
    let mut kept: Option<Ceiling> = None;
    let mut why = String::new();
    let mut fraction = Rational::from((1, 2));
    let mut tried = 0;
    for searches in 1..=MAX_LEVELS {
        tried = searches;
        let left = seconds - started.elapsed().as_secs_f64();
        if left <= 0.0 {
            break;
        }
        let levels: Vec<Rational> = ends
            .iter()
            .map(|(lo, hi)| dyadic_above(&(lo.clone() + (hi.clone() - lo) * &fraction)))
            .collect();
        let mut options = q.options.clone();
        options.time_limit_seconds = left;
        let query = InputsProfileQuery {
            randomizer: q.randomizer.clone(),
            n: q.n,
            quantities: quantities(&q.target),
            options,
            backend: q.backend,
            exact_ctx: Default::default(),
            escalate_above: q.escalate_above,
            symmetry: true,
            slice: None,
            ceiling: Some(levels),
        };
        crate::progress::note(&format!(
            "bounds: ceiling search {searches} at {} of the way up each range, {} left",
            fraction,
            crate::exact::pair::duration_text(left)
        ));
        match inputs_profile(&query) {
            Ok(profile) => {
                kept = Some(Ceiling {
                    query,
                    profile,
                    searches,
                    seconds: 0.0,
                });
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
        Some(mut c) => {
            c.seconds = started.elapsed().as_secs_f64();
            c.searches = tried;
            Ok(c)
        }
        None => Err(format!(
            "no search finished within {}: the first, at the middle of the range, stopped: {why}",
            crate::exact::pair::duration_text(seconds)
        )),
    })
}

/// `x` rounded up to a multiple of 2^-64 (a level anywhere is sound; this keeps it short).
fn dyadic_above(x: &Rational) -> Rational {
    let scale = rug::Integer::from(1) << 64u32;
    let scaled = (x.clone() * &scale).ceil();
    Rational::from((scaled.numer().clone(), scale))
}
