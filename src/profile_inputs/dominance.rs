//! Backgrounds off the switch: when the rows have the shape of randomized response around the
//! switch `{a, b}`, every background with no user on `a` or `b` is dominated by a homogeneous
//! one (proofs-notes/inputs-profile.md, "Backgrounds off the switch").
//!
//! With `O_R = {y : R_a(y) = R_b(y)}` (the outputs the switch does not move), the shape is:
//! - `R_a` is constant on `O_R`;
//! - the rows of the other inputs (the *rest*) agree off `O_R`;
//! - on `O_R`, every rest row is one value `hi` at one output (its own) and one value `lo` at
//!   the others, with `hi` and `lo` the same for every rest row.
//!
//! Then the pair of any background composition on the rest inputs is a garbling (one Markov
//! kernel applied to both laws) of the pair of the background with all those users on a single
//! rest input, so its δ is at most that one's at every ε, and its ε at every δ.  Entries are
//! compared exactly (a formula in `e^ε0` only to an identical formula), so a shape is never
//! assumed: k-RR has it for every switch, and any randomizer may.

use crate::mechanism::Entry;

/// Whether the rows have the shape above around the switch `(a, b)` (`a ≠ b`), with at least one
/// rest input and one output in `O_R`.
pub fn rest_is_dominated(rows: &[Vec<Entry>], (a, b): (usize, usize)) -> bool {
    let outputs = rows[a].len();
    let moved: Vec<bool> = (0..outputs).map(|y| rows[a][y] != rows[b][y]).collect();
    let kept: Vec<usize> = (0..outputs).filter(|&y| !moved[y]).collect();
    let rest: Vec<usize> = (0..rows.len()).filter(|&x| x != a && x != b).collect();
    let (Some(&first_kept), Some(&first_rest)) = (kept.first(), rest.first()) else {
        return false;
    };
    if kept.iter().any(|&y| rows[a][y] != rows[a][first_kept]) {
        return false;
    }
    let off_kept_agree = rest.iter().all(|&x| {
        (0..outputs)
            .filter(|&y| moved[y])
            .all(|y| rows[x][y] == rows[first_rest][y])
    });
    if !off_kept_agree {
        return false;
    }
    // A common `lo` met at all but one kept output of every rest row, the one left `hi` in
    // each (K = 2 leaves both values a candidate for `lo`); or every rest row constant there.
    let values = |x: usize| -> Vec<&Entry> { kept.iter().map(|&y| &rows[x][y]).collect() };
    let candidates = values(first_rest);
    candidates.iter().any(|&lo| {
        let mut hi: Option<Option<&Entry>> = None;
        rest.iter().all(|&x| {
            let raised: Vec<&Entry> = values(x).into_iter().filter(|v| *v != lo).collect();
            let this = match raised.as_slice() {
                [] => None,
                [v] => Some(*v),
                _ => return false,
            };
            *hi.get_or_insert(this) == this
        })
    })
}

/// The composition a box of a dominated switch `(a, b)` is bounded by (Lemma 3 of
/// proofs-notes/inputs-profile.md): `lo_a` users on `a`, `lo_b` on `b`, and the
/// `m − hi_a − hi_b` users left on the rest input `y` (`None` when that is negative).
pub fn reference(
    inputs: usize,
    (a, b): (usize, usize),
    (lo_a, hi_a): (u64, u64),
    (lo_b, hi_b): (u64, u64),
    y: usize,
    m: u64,
) -> Option<Vec<u64>> {
    let left = m.checked_sub(hi_a.checked_add(hi_b)?)?;
    let mut c = vec![0; inputs];
    c[a] = lo_a;
    c[b] = lo_b;
    c[y] = left;
    Some(c)
}

/// The most users [`switch_tail`] computes for (its exact powers hold about 64 bits a user).
pub const MAX_TAIL_USERS: u64 = 1 << 20;

/// An upper bound on the mass Lemma 3 gives away for a box whose switch inputs hold
/// `[lo_a, hi_a]` and `[lo_b, hi_b]` users: `P(t' ≤ hi_a + hi_b)` with
/// `t' = Bin(m − hi_a − hi_b, q_r) + Bin(lo_a + lo_b + 1, q_s)`, where `q_r` (`q_s`) is a
/// rational lower bound on the probability that a rest user (a user on a switch input, or the
/// switched one) lands on the outputs the switch moves, from `floor` (a lower bound on every
/// entry), rounded down to 64 bits. Exact rationals throughout; 0 when no switch input can hold
/// a user (every composition is then dominated outright).
pub fn switch_tail(
    rows: &[Vec<Entry>],
    floor: &[Vec<rug::Rational>],
    (a, b): (usize, usize),
    (lo_a, hi_a): (u64, u64),
    (lo_b, hi_b): (u64, u64),
    m: u64,
) -> Option<rug::Rational> {
    use rug::Rational;
    use rug::ops::PowAssign;
    if hi_a == 0 && hi_b == 0 {
        return Some(Rational::new());
    }
    let top = hi_a.checked_add(hi_b)?;
    let regular = m.checked_sub(top)?;
    // Exact powers of n users hold about 64 n bits: beyond the windowed laws' reach, no tail.
    if m > MAX_TAIL_USERS {
        return None;
    }
    let special = lo_a + lo_b + 1;
    let moved: Vec<usize> = (0..rows[a].len())
        .filter(|&y| rows[a][y] != rows[b][y])
        .collect();
    let mass = |x: usize| -> Rational { moved.iter().map(|&y| floor[x][y].clone()).sum() };
    let down = |q: Rational| -> Rational {
        let scaled = (q << 64u32).floor();
        (scaled >> 64u32).max(Rational::new())
    };
    let q_r = down(
        (0..rows.len())
            .filter(|&x| x != a && x != b)
            .map(mass)
            .min()?,
    );
    let q_s = down(mass(a).min(mass(b)));
    // P(Bin(n, q) = j) for j ≤ top, exactly.
    let pmf = |n: u64, q: &Rational| -> Vec<Rational> {
        let keep = top.min(n);
        let one_minus = Rational::from(1) - q;
        if one_minus == 0 {
            return (0..=keep)
                .map(|j| Rational::from(u8::from(j == n)))
                .collect();
        }
        let mut term = one_minus.clone();
        term.pow_assign(u32::try_from(n).expect("n is at most the windowed laws' limit"));
        let mut out = Vec::with_capacity(keep as usize + 1);
        for j in 0..=keep {
            out.push(term.clone());
            term = term * Rational::from((n - j, j + 1)) * q.clone() / &one_minus;
        }
        out
    };
    let (r, s) = (pmf(regular, &q_r), pmf(special, &q_s));
    let mut total = Rational::new();
    for (i, pi) in r.iter().enumerate() {
        for (j, pj) in s.iter().enumerate() {
            if (i + j) as u64 <= top {
                total += pi.clone() * pj;
            }
        }
    }
    Some(total.min(Rational::from(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rug::Rational;

    fn exact(rows: &[&[i64]], den: i64) -> Vec<Vec<Entry>> {
        rows.iter()
            .map(|r| {
                r.iter()
                    .map(|&p| Entry::Exact(Rational::from((p, den))))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn randomized_response_has_the_shape_around_every_switch() {
        // 4-RR with e^ε0 = 3: s = 6.
        let rows = exact(
            &[&[3, 1, 1, 1], &[1, 3, 1, 1], &[1, 1, 3, 1], &[1, 1, 1, 3]],
            6,
        );
        for a in 0..4 {
            for b in a + 1..4 {
                assert!(rest_is_dominated(&rows, (a, b)), "switch {a}, {b}");
            }
        }
        // k-RR restricted to 3 of its 5 outputs' inputs, and with real ε0.
        let r = crate::mechanism::randomizer::load_randomizer("k-rr:k=5,eps0=2,inputs=3")
            .expect("a family");
        assert!(rest_is_dominated(&r.rows, (0, 1)));
        assert!(rest_is_dominated(&r.rows, (0, 2)));
        let r = crate::mechanism::randomizer::load_randomizer("k-rr:k=20,eps0=2").expect("k-RR");
        assert!(rest_is_dominated(&r.rows, (0, 1)));
        // Two inputs only: no rest to dominate.
        let r = crate::mechanism::randomizer::load_randomizer("k-rr:k=3,eps0=1,inputs=2")
            .expect("k-RR");
        assert!(!rest_is_dominated(&r.rows, (0, 1)));
    }

    #[test]
    fn the_tail_is_the_binomial_sum_rounded_up() {
        // 4-RR, e^ε0 = 3: q_r = 2/6, q_s = 4/6. A box [1, 2] × [0, 1] at m = 6: t' = Bin(3, 1/3)
        // + Bin(2, 2/3), and P(t' ≤ 3) = 1 − (1/27 · 8/9 + 6/27 · 4/9) = 211/243.
        let rows = exact(
            &[&[3, 1, 1, 1], &[1, 3, 1, 1], &[1, 1, 3, 1], &[1, 1, 1, 3]],
            6,
        );
        let floor: Vec<Vec<Rational>> = rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| match e {
                        Entry::Exact(q) => q.clone(),
                        _ => unreachable!(),
                    })
                    .collect()
            })
            .collect();
        let tail = switch_tail(&rows, &floor, (0, 1), (1, 2), (0, 1), 6).unwrap();
        let exact = Rational::from((211, 243));
        assert!(tail >= exact && tail - &exact < Rational::from((1, 1u64 << 50)));
        assert_eq!(
            switch_tail(&rows, &floor, (0, 1), (0, 0), (0, 0), 6),
            Some(Rational::new())
        );
        assert_eq!(switch_tail(&rows, &floor, (0, 1), (0, 4), (0, 3), 6), None);
        assert_eq!(
            reference(4, (0, 1), (1, 2), (0, 1), 3, 6),
            Some(vec![1, 0, 0, 3])
        );
    }

    #[test]
    fn rows_off_the_shape_are_refused() {
        // The rest rows' values on O_R differ (3, 1 against 0, 4).
        let rows = exact(
            &[&[3, 1, 1, 1], &[1, 3, 1, 1], &[1, 1, 3, 1], &[1, 1, 0, 4]],
            6,
        );
        assert!(!rest_is_dominated(&rows, (0, 1)));
        // The switch rows are not constant on the outputs they share.
        let rows = exact(
            &[&[3, 1, 2, 0], &[1, 3, 2, 0], &[1, 1, 3, 1], &[1, 1, 1, 3]],
            6,
        );
        assert!(!rest_is_dominated(&rows, (0, 1)));
        // A rest row with two raised outputs.
        let rows = exact(
            &[
                &[2, 1, 1, 1, 1],
                &[1, 2, 1, 1, 1],
                &[1, 1, 2, 2, 0],
                &[1, 1, 1, 1, 2],
            ],
            6,
        );
        assert!(!rest_is_dominated(&rows, (0, 1)));
        // The rest rows disagree off O_R.
        let rows = exact(
            &[&[3, 1, 1, 1], &[1, 3, 1, 1], &[2, 0, 3, 1], &[1, 1, 1, 3]],
            6,
        );
        assert!(!rest_is_dominated(&rows, (0, 1)));
    }

    #[test]
    fn a_shape_other_than_randomized_response_is_found() {
        // O_R = outputs 2..5; the switch rows put 1/10 on each; the rest rows 11/20 at their own
        // output and 1/20 at the others, and agree on outputs 0 and 1 (1/4, 1/20).
        let rows = exact(
            &[
                &[12, 0, 2, 2, 2, 2],
                &[2, 10, 2, 2, 2, 2],
                &[5, 1, 11, 1, 1, 1],
                &[5, 1, 1, 1, 11, 1],
                &[5, 1, 1, 11, 1, 1],
            ],
            20,
        );
        assert!(rest_is_dominated(&rows, (0, 1)));
        assert!(!rest_is_dominated(&rows, (0, 2)));
    }
}
