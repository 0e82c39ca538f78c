//! A certified local search over the others' compositions that raises a range's lower end
//! (issue 23; proofs-notes/inputs-profile.md, "Local search for `bounds`").
//!
//! The lower end of [`super::range`] is the best homogeneous background (every other user holds
//! one input x2).  The worst case can sit at a mixed background, so from the best homogeneous
//! one the search moves t users from one input to another, keeps a move when it raises the
//! certified lower end, and halves t when no move does, down to t = 1.  Every value it keeps is
//! the exact δ (or ε) of a concrete neighbouring pair of datasets, computed by the background
//! pair engine, so the raised lower end is certified whatever the search visits; the search
//! only decides which concrete pairs are tried.  Compositions are taken up to the rows'
//! symmetries fixing the switch, and each is evaluated at most once.

use super::range::{BoundsQuery, RangeRow, Target};
use crate::enclosure::{Enclosure, Endpoint};
use crate::error::Result;
use crate::exact::background::Background;
use crate::profile_inputs::orbits::Orbits;
use crate::query::{BackgroundQuery, DeltaJob, EpsilonJob, answer};
use rug::Rational;
use std::collections::HashMap;

/// The best concrete dataset pair the search found, when it raises some row's lower end: the
/// switch `x1 → x1′`, the others' counts, and per row its certified value in that direction.
#[derive(Clone, Debug)]
pub struct Found {
    pub pair: (usize, usize),
    pub others: Vec<u64>,
    pub values: Vec<Enclosure>,
}

/// What the search did.
#[derive(Clone, Debug, Default)]
pub struct SearchStats {
    /// Mixed compositions evaluated (each at most once, up to symmetry; the homogeneous starts
    /// are not counted).
    pub evaluated: usize,
    /// Whether it stopped at its budget (evaluations or time) rather than at a local maximum.
    pub stopped_early: bool,
}

/// Searches from each row's lower end for at most `budget` evaluated compositions; returns,
/// per row, the best pair found when it is above the row's lower end, and what it did.
/// A pair the engine refuses (too large, or past the time left of `--max-seconds`) ends the
/// search there: what it found so far stands.
pub fn raise_lower(
    q: &BoundsQuery,
    rows: &[RangeRow],
    budget: usize,
) -> Result<(Vec<Option<Found>>, SearchStats)> {
    let started = std::time::Instant::now();
    let inputs = q.randomizer.rows.len();
    let m = q.n - 1;
    let mut stats = SearchStats::default();
    let mut best: Vec<Option<Found>> = vec![None; rows.len()];
    if budget == 0 || m == 0 || inputs < 3 {
        return Ok((best, stats));
    }
    let orbits = Orbits::detect(&q.randomizer.rows);
    // Per (unordered switch, canonical composition): [x1 → x1′ values, x1′ → x1 values].
    let mut seen: HashMap<((usize, usize), Vec<u64>), [Vec<Enclosure>; 2]> = HashMap::new();
    let lower_of = |e: &Enclosure| match e.lo() {
        Endpoint::Finite(q) => q.clone(),
        _ => Rational::new(),
    };
    // The score of a composition: the sum over rows of its lower end over the row's, in the
    // better direction; each row's best is kept on its own.
    let floors: Vec<Rational> = rows
        .iter()
        .map(|r| lower_of(&r.lower.value).max(Rational::from((1, 1u64 << 60))))
        .collect();
    let score = |v: &[Enclosure]| -> f64 {
        v.iter()
            .zip(&floors)
            .map(|(e, f)| (lower_of(e) / f).to_f64())
            .sum()
    };
    let mut starts: Vec<(usize, usize, usize)> = Vec::new();
    for row in rows {
        let (x1, x1p) = row.lower.pair;
        let x2 = row.lower.background.unwrap_or(x1);
        if !starts.contains(&(x1, x1p, x2)) {
            starts.push((x1, x1p, x2));
        }
    }
    'starts: for (x1, x1p, x2) in starts {
        let switch = (x1.min(x1p), x1.max(x1p));
        let mut current = vec![0u64; inputs];
        current[x2] = m;
        let mut current_score = f64::NEG_INFINITY;
        let mut step = (m / 4).max(1);
        loop {
            // Every move of `step` users from one input to another, from the current one.
            let mut moves = vec![current.clone()];
            for u in 0..inputs {
                if current[u] < step {
                    continue;
                }
                for v in (0..inputs).filter(|&v| v != u) {
                    let mut c = current.clone();
                    c[u] -= step;
                    c[v] += step;
                    moves.push(c);
                }
            }
            let mut improved = None;
            for c in moves {
                let key = (switch, orbits.canonical(switch, &c));
                let values = match seen.get(&key) {
                    Some(v) => v.clone(),
                    None => {
                        // A homogeneous background (the start) is the range's own lower end
                        // already: it is the reference, not one of the N mixed ones.
                        let mixed = key.1.iter().filter(|c| **c > 0).count() > 1;
                        if mixed && stats.evaluated >= budget {
                            stats.stopped_early = true;
                            break 'starts;
                        }
                        let left = q.options.time_limit_seconds - started.elapsed().as_secs_f64();
                        let Some(values) = evaluate(q, switch, &key.1, left)? else {
                            stats.stopped_early = true;
                            break 'starts;
                        };
                        stats.evaluated += usize::from(mixed);
                        seen.insert(key.clone(), values.clone());
                        for (side, v) in values.iter().enumerate().filter(|_| mixed) {
                            let pair = if side == 0 {
                                switch
                            } else {
                                (switch.1, switch.0)
                            };
                            for (i, e) in v.iter().enumerate() {
                                let above = match &best[i] {
                                    Some(f) => lower_of(e) > lower_of(&f.values[i]),
                                    None => lower_of(e) > lower_of(&rows[i].lower.value),
                                };
                                if above {
                                    best[i] = Some(Found {
                                        pair,
                                        others: key.1.clone(),
                                        values: v.clone(),
                                    });
                                }
                            }
                        }
                        values
                    }
                };
                let s = score(&values[0]).max(score(&values[1]));
                if s > current_score && improved.as_ref().is_none_or(|(b, _)| s > *b) {
                    improved = Some((s, key.1));
                }
            }
            match improved {
                Some((s, c)) => {
                    current_score = s;
                    current = c;
                }
                None if step > 1 => step /= 2,
                None => break,
            }
        }
    }
    // A row's best keeps the values of its own pair; other rows may be attained elsewhere.
    Ok((best, stats))
}

/// Both directions of one composition's pair at every row (`[switch, reversed]`), or `None`
/// when the engine refuses it within the time left.
fn evaluate(
    q: &BoundsQuery,
    switch: (usize, usize),
    counts: &[u64],
    seconds_left: f64,
) -> Result<Option<[Vec<Enclosure>; 2]>> {
    if seconds_left <= 0.0 {
        return Ok(None);
    }
    let mut options = q.options.clone();
    options.time_limit_seconds = seconds_left;
    let bq = BackgroundQuery {
        randomizer: q.randomizer.clone(),
        background: Background {
            counts: counts.to_vec(),
            switch,
        },
        options,
        backend: q.backend,
        exact_ctx: Default::default(),
        escalate_above: q.escalate_above,
    };
    // `pq` is δ(P_a ‖ P_b), the dataset pair a → b (the switch's order); `qp` the reverse.
    let computed = match &q.target {
        Target::Delta(thresholds) => answer(
            &bq,
            &DeltaJob {
                thresholds: thresholds.clone(),
            },
        )
        .map(|c| {
            let (pq, qp) = c.result.into_iter().map(|r| (r.pq, r.qp)).unzip();
            [pq, qp]
        }),
        Target::Epsilon(delta) => answer(
            &bq,
            &EpsilonJob {
                delta: delta.clone(),
            },
        )
        .map(|c| [vec![c.result.pq.eps], vec![c.result.qp.eps]]),
    };
    match computed {
        Ok(v) => Ok(Some(v)),
        Err(crate::error::Error::TooLarge(_)) => Ok(None),
        Err(crate::error::Error::Argument { field, .. }) if field == "--max-seconds" => Ok(None),
        Err(e) => Err(e),
    }
}
