//! A small reference for `verify` that shares no arithmetic code with the engine: the pair
//! `(T_{n,k}, T_{n,k+1})` and its curves in pure-Rust rationals (`num-rational`/`num-bigint`,
//! not GMP), by a plain dynamic program over histograms in a hash map, for rational mechanisms
//! of modest size.  An irrational `e^ε` is bracketed by a Taylor series with an explicit
//! remainder bound, so δ, non-increasing in `e^ε`, is enclosed between its values at the two
//! ends.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::collections::HashMap;

/// Largest number of users the reference takes on.
pub const MAX_USERS: u64 = 12;

type Law = HashMap<Vec<u32>, BigRational>;

/// A decimal or fraction string as a `BigRational` (`None` when malformed).
pub fn parse(text: &str) -> Option<BigRational> {
    let q = crate::enclosure::parse_rational(text)?;
    Some(BigRational::new(
        q.numer().to_string().parse::<BigInt>().ok()?,
        q.denom().to_string().parse::<BigInt>().ok()?,
    ))
}

/// `law` after one more user with output law `w`.
fn add_user(law: &Law, w: &[BigRational]) -> Law {
    let mut out = Law::new();
    for (h, p) in law {
        for (y, wy) in w.iter().enumerate() {
            if wy.is_zero() {
                continue;
            }
            let mut g = h.clone();
            g[y] += 1;
            *out.entry(g).or_insert_with(BigRational::zero) += p * wy;
        }
    }
    out
}

/// `(T_{n,k}, T_{n,k+1})` on histograms.
pub fn pair(w0: &[BigRational], w1: &[BigRational], n: u64, k: u64) -> (Law, Law) {
    let mut common = Law::new();
    common.insert(vec![0; w0.len()], BigRational::one());
    for user in 0..n - 1 {
        common = add_user(&common, if user < k { w1 } else { w0 });
    }
    (add_user(&common, w0), add_user(&common, w1))
}

/// The most histogram states a multi-message reference pair may hold.
pub const MAX_MESSAGE_STATES: u64 = 200_000;

/// The pair of users sending `messages = m` messages each (Part I §9), on raw message outputs
/// and without the type reduction: unbundled, the histogram of the nm messages over Y (the
/// others' messages one draw at a time, then the switched user's m); bundled, the histogram of
/// the n users' symbols in `Y^m`, each tuple with probability `Π_i W_b(y_i)`.  `None` when it
/// would hold more than [`MAX_MESSAGE_STATES`] histograms.
pub fn messages_pair(
    w0: &[BigRational],
    w1: &[BigRational],
    n: u64,
    k: u64,
    messages: u32,
    bundled: bool,
) -> Option<(Law, Law)> {
    let d = w0.len() as u64;
    let (symbols, size) = if bundled {
        (d.checked_pow(messages)?, n)
    } else {
        (d, n.checked_mul(u64::from(messages))?)
    };
    let states = crate::exact::histogram::histogram_count(size, symbols as usize)?;
    if states > MAX_MESSAGE_STATES {
        return None;
    }
    if bundled {
        // The law of one user's tuple: index i has digits (base d) y_1, …, y_m.
        let tuples = |w: &[BigRational]| -> Vec<BigRational> {
            (0..symbols)
                .map(|mut i| {
                    let mut p = BigRational::one();
                    for _ in 0..messages {
                        p *= &w[(i % d) as usize];
                        i /= d;
                    }
                    p
                })
                .collect()
        };
        return Some(pair(&tuples(w0), &tuples(w1), n, k));
    }
    let m = u64::from(messages);
    let mut common = Law::new();
    common.insert(vec![0; w0.len()], BigRational::one());
    for draw in 0..(n - 1) * m {
        common = add_user(&common, if draw < k * m { w1 } else { w0 });
    }
    let (mut p, mut q) = (common.clone(), common);
    for _ in 0..m {
        p = add_user(&p, w0);
        q = add_user(&q, w1);
    }
    Some((p, q))
}

/// The pair of a background composition: `counts[x]` users with row `rows[x]` and the switched
/// user with row `rows[switch.0]` (P) or `rows[switch.1]` (Q), on raw output histograms (rows
/// not in play are `None`).
pub fn background_pair(
    rows: &[Option<Vec<BigRational>>],
    counts: &[u64],
    switch: (usize, usize),
) -> (Law, Law) {
    let row = |x: usize| rows[x].as_deref().expect("every row in play is given");
    let d = row(switch.0).len();
    let mut common = Law::new();
    common.insert(vec![0; d], BigRational::one());
    for (x, &c) in counts.iter().enumerate() {
        for _ in 0..c {
            common = add_user(&common, row(x));
        }
    }
    (
        add_user(&common, row(switch.0)),
        add_user(&common, row(switch.1)),
    )
}

/// The blanket divergence of `x1 → x1′` at `e^ε = c` for n users, by its definition over raw
/// outputs: with `R̲(y) = min_x R_x(y)` and `γ = Σ R̲`, the histogram `N` of n users over the
/// outputs and "outside the blanket" (probabilities `R̲(y)` and `1 − γ`), and
/// `D = (1/n) E[(Σ_y N_y (R_{x1}(y) − c R_{x1′}(y))/R̲(y))₊]`.  No output merging, no closed-form
/// inner sum, no windows.
pub fn blanket_divergence(
    rows: &[Vec<BigRational>],
    x1: usize,
    x1p: usize,
    n: u64,
    c: &BigRational,
) -> BigRational {
    let d = rows[0].len();
    let floor: Vec<BigRational> = (0..d)
        .map(|y| rows.iter().map(|r| r[y].clone()).min().expect("rows"))
        .collect();
    let gamma = floor.iter().fold(BigRational::zero(), |s, f| s + f);
    let mut probabilities = floor.clone();
    probabilities.push(BigRational::one() - gamma);
    let mut law = Law::new();
    law.insert(vec![0; d + 1], BigRational::one());
    for _ in 0..n {
        law = add_user(&law, &probabilities);
    }
    let mut total = BigRational::zero();
    for (h, p) in &law {
        let mut s = BigRational::zero();
        for y in 0..d {
            if h[y] > 0 {
                let count = BigRational::from_integer(BigInt::from(h[y]));
                s += count * (&rows[x1][y] - c * &rows[x1p][y]) / &floor[y];
            }
        }
        if s.is_positive() {
            total += p * s;
        }
    }
    total / BigRational::from_integer(BigInt::from(n))
}

/// How many histograms the blanket divergence's definition runs over: `C(n + d, d)`.
pub fn blanket_states(n: u64, d: usize) -> Option<u64> {
    crate::exact::histogram::histogram_count(n, d + 1)
}

/// `Σ_N (a(N) − c b(N))₊`.
pub fn positive_part(a: &Law, b: &Law, c: &BigRational) -> BigRational {
    let zero = BigRational::zero();
    let mut keys: Vec<&Vec<u32>> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|h| a.get(h).unwrap_or(&zero) - c * b.get(h).unwrap_or(&zero))
        .filter(|x| x.is_positive())
        .fold(BigRational::zero(), |s, x| s + x)
}

/// Rationals `lo ≤ e^x ≤ hi` for a rational `x ≥ 0`: `e^x = (e^{x/m})^m` with `x/m ≤ 1/2`, and
/// `e^y` for `0 ≤ y ≤ 1/2` between the Taylor sum `S_N` and `S_N + 2 y^{N+1}/(N+1)!` (the
/// remainder is `e^ξ y^{N+1}/(N+1)!` with `e^ξ ≤ e^{1/2} < 2`).
pub fn exp_bracket(x: &BigRational) -> (BigRational, BigRational) {
    assert!(!x.is_negative());
    let half = BigRational::new(BigInt::from(1), BigInt::from(2));
    let mut m: u32 = 1;
    while x / BigRational::from_integer(BigInt::from(m)) > half {
        m *= 2;
    }
    let y = x / BigRational::from_integer(BigInt::from(m));
    let (mut sum, mut term) = (BigRational::one(), BigRational::one());
    let terms = 40;
    for j in 1..=terms {
        term = term * &y / BigRational::from_integer(BigInt::from(j));
        sum += &term;
    }
    let remainder = &term * &y / BigRational::from_integer(BigInt::from(terms + 1))
        * BigRational::from_integer(BigInt::from(2));
    let (lo, hi) = (sum.clone(), sum + remainder);
    (
        num_traits::pow(lo, m as usize),
        num_traits::pow(hi, m as usize),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_brackets_contain_e() {
        let (lo, hi) = exp_bracket(&BigRational::one());
        let e_lo = parse("2.718281828459045235360287471352").unwrap();
        let e_hi = parse("2.718281828459045235360287471353").unwrap();
        assert!(lo <= e_hi && hi >= e_lo && lo < hi);
        assert!(&hi - &lo < parse("1e-30").unwrap());
        let (lo, hi) = exp_bracket(&parse("3.7").unwrap());
        // e^3.7 = 40.4473043600674...
        assert!(lo < parse("40.44730436006739").unwrap() + parse("1e-12").unwrap());
        assert!(hi > parse("40.44730436006738").unwrap());
    }

    #[test]
    fn a_background_of_one_input_is_the_binary_pair() {
        let w0 = vec![parse("1/3").unwrap(), parse("2/3").unwrap()];
        let w1 = vec![parse("3/4").unwrap(), parse("1/4").unwrap()];
        // n = 5, k = 2: two others hold 1, two hold 0; the switched user goes 0 → 1.
        let rows = [Some(w0.clone()), Some(w1.clone())];
        assert_eq!(
            background_pair(&rows, &[2, 2], (0, 1)),
            pair(&w0, &w1, 5, 2)
        );
    }

    #[test]
    fn the_pair_is_two_laws() {
        let w0 = [parse("1/3").unwrap(), parse("2/3").unwrap()];
        let w1 = [parse("3/4").unwrap(), parse("1/4").unwrap()];
        let (p, q) = pair(&w0, &w1, 4, 1);
        let total = |l: &Law| l.values().fold(BigRational::zero(), |s, x| s + x);
        assert!(total(&p).is_one() && total(&q).is_one());
        // TV(P, Q) = δ at c = 1 is symmetric.
        let one = BigRational::one();
        assert_eq!(positive_part(&q, &p, &one), positive_part(&p, &q, &one));
    }
}
