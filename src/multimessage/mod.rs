//! Multi-message shuffling (Part I §9; issue 24): each of the n users sends m messages.
//!
//! * **Bundled**: each user's m messages stay together, one symbol of `Y^m` with law
//!   `W_b^{⊗m}`. The histogram of per-user *types* (the counts of each output inside a bundle)
//!   is sufficient for the histogram over `Y^m` (given a bundle's type, its order is uniform
//!   whatever the input), so the bundled model is the single-message model of the mechanism
//!   [`bundled`] whose outputs are the types, `W_b′(t) = Mult(m, W_b)(t)`, on
//!   `τ = C(m + d − 1, d − 1)` outputs (proofs-notes/multi-message.md).
//! * **Unbundled**: all nm messages are shuffled individually; the message histogram has law
//!   `Mult((n − k)m; W0) ⊛ Mult(km; W1)`, the single-message law with nm users of whom km hold 1,
//!   and neighbours differ in m of those "message users".
//!
//! This module holds the mechanism transformation and the exact closed forms that check the
//! laws: the χ² of both models at k = 0 and their canonical likelihood ratios.

use crate::error::{Error, Result};
use crate::mechanism::{Entry, Mechanism, Messages, polynomial};
use rug::ops::PowAssign;
use rug::{Integer, Rational};

/// The most outputs a bundled mechanism may have (types of m messages over d outputs).
pub const MAX_TYPES: u64 = 10_000;

/// The most messages per user (`--messages`): the unbundled pair takes m shift steps per law.
pub const MAX_MESSAGES: u32 = 1000;

/// The mechanism of users sending `messages.count` messages each: the same rows marked
/// unbundled (the engines build the pair at distance m), or the [`bundled`] mechanism on types.
/// One message is the mechanism itself.
pub fn with_messages(mechanism: &Mechanism, messages: Messages) -> Result<Mechanism> {
    if messages.count == 0 || messages.count > MAX_MESSAGES {
        return Err(Error::argument(
            "--messages",
            format!(
                "must be between 1 and {MAX_MESSAGES}, got {}",
                messages.count
            ),
        ));
    }
    if mechanism.messages.is_some() {
        return Err(Error::Internal(format!(
            "{} already sends several messages",
            mechanism.name
        )));
    }
    if messages.count == 1 {
        return Ok(mechanism.clone());
    }
    let mut out = if messages.bundled {
        bundled(mechanism, messages.count)?
    } else {
        mechanism.clone()
    };
    out.source = mechanism.source.clone();
    out.restriction_of = mechanism.restriction_of;
    out.messages = Some(messages);
    Ok(out)
}

/// The types of `m` messages over `d` outputs: every `t ∈ ℕ^d` with `Σ t = m`, the first
/// coordinate largest first (`(m, 0, …), (m − 1, 1, 0, …), …`).
pub fn types(m: u32, d: usize) -> Vec<Vec<u32>> {
    if d == 1 {
        return vec![vec![m]];
    }
    (0..=m)
        .rev()
        .flat_map(|first| {
            types(m - first, d - 1).into_iter().map(move |mut rest| {
                rest.insert(0, first);
                rest
            })
        })
        .collect()
}

/// `τ = C(m + d − 1, d − 1)`, the number of types (saturating).
pub fn type_count(m: u32, d: usize) -> u64 {
    Integer::from(m + d as u32 - 1)
        .binomial(d as u32 - 1)
        .to_u64()
        .unwrap_or(u64::MAX)
}

/// The multinomial coefficient `m! / Π t_y!` of a type.
fn multinomial_coefficient(t: &[u32]) -> Integer {
    let m: u32 = t.iter().sum();
    t.iter()
        .fold(Integer::from(Integer::factorial(m)), |c, &k| {
            c / Integer::from(Integer::factorial(k))
        })
}

/// `Mult(m, row)(t) = m! / Π t_y! · Π row_y^{t_y}`, exactly.
pub fn type_probability(row: &[Rational], t: &[u32]) -> Rational {
    let mut p = Rational::from(multinomial_coefficient(t));
    for (w, &c) in row.iter().zip(t) {
        let mut power = w.clone();
        power.pow_assign(c);
        p *= power;
    }
    p
}

/// [`type_probability`] for entries in `e^{ε0}`: the numerators' and denominators' products,
/// polynomials of degree up to m times the entries'.
fn type_entry(row: &[Entry], t: &[u32]) -> Entry {
    let mut num = vec![Rational::from(multinomial_coefficient(t))];
    let mut den = vec![Rational::from(1)];
    for (e, &c) in row.iter().zip(t) {
        let (n, d) = match e {
            Entry::Exact(q) => (vec![q.clone()], vec![Rational::from(1)]),
            Entry::ExpFraction { num, den } => (num.clone(), den.clone()),
        };
        for _ in 0..c {
            num = polynomial::mul(&num, &n);
            den = polynomial::mul(&den, &d);
        }
    }
    Entry::ExpFraction { num, den }
}

/// The most rational operations the types of a real ε0 may take to build (about 2 s; measured
/// 0.25 s for `k-rr:k=3,eps0=1,inputs=2` with 20 messages, 2.8·10⁵ operations).
const MAX_POLYNOMIAL_WORK: f64 = 2e6;

/// The bundled mechanism: outputs the types of m messages, `W_b′(t) = Mult(m, W_b)(t)`
/// (entries in `e^{ε0}` become fractions of polynomials of degree up to m); refuses more than
/// [`MAX_TYPES`] types.
pub fn bundled(mechanism: &Mechanism, m: u32) -> Result<Mechanism> {
    if m == 0 {
        return Err(Error::argument("--messages", "must be at least 1"));
    }
    let d = mechanism.d();
    let tau = type_count(m, d);
    if tau > MAX_TYPES {
        return Err(Error::argument(
            "--messages",
            format!(
                "{m} messages over {d} outputs have {tau} types (bundles up to order), more than \
                 the {MAX_TYPES} a bundled mechanism may have"
            ),
        ));
    }
    let rows = mechanism.rational_rows();
    // Entries in e^eps0: each type's numerator and denominator take m polynomial products of
    // growing degree, about τ·m²·d rational operations.
    let polynomial_work = tau as f64 * f64::from(m) * f64::from(m) * d as f64;
    if rows.is_none() && polynomial_work > MAX_POLYNOMIAL_WORK {
        return Err(Error::argument(
            "--messages",
            format!(
                "{m} bundled messages over {d} outputs with a real eps0: the {tau} types' \
                 entries are polynomials of degree {m} in e^eps0, about {polynomial_work:.1e} \
                 exact operations to build, over the {MAX_POLYNOMIAL_WORK:.0e} allowed; use \
                 fewer --messages or give e^eps0 as a rational (exp_eps0=…)"
            ),
        ));
    }
    let all = types(m, d);
    let row = |b: usize| -> Vec<Entry> {
        all.iter()
            .map(|t| match &rows {
                Some(rows) => Entry::Exact(type_probability(&rows[b], t)),
                None => type_entry(&mechanism.rows[b], t),
            })
            .collect()
    };
    let outputs = all
        .iter()
        .map(|t| {
            let parts: Vec<String> = t.iter().map(u32::to_string).collect();
            format!("({})", parts.join(","))
        })
        .collect();
    Mechanism::new(
        &mechanism.name,
        mechanism.name.clone(),
        Some(outputs),
        [row(0), row(1)],
        mechanism.eps0.clone(),
    )
}

/// `χ²(W1 ‖ W0) = Σ_y W1(y)²/W0(y) − 1`; `None` when W1 charges an output W0 does not.
pub fn chi2(w0: &[Rational], w1: &[Rational]) -> Option<Rational> {
    let mut sum = Rational::new();
    for (a, b) in w0.iter().zip(w1) {
        if *a == 0 {
            if *b != 0 {
                return None;
            }
            continue;
        }
        sum += b.clone() * b / a;
    }
    Some(sum - 1)
}

/// The bundled pair's χ²(Q ‖ P) at k = 0: `((1 + χ²)^m − 1)/n` (§9.3's tensorization, with the
/// single-message identity χ²(T_{n,1} ‖ T_{n,0}) = χ²/n).
pub fn bundled_chi2(chi2: &Rational, n: u64, m: u32) -> Rational {
    let mut power = Rational::from(1) + chi2;
    power.pow_assign(m);
    (power - 1) / Rational::from(n)
}

/// The unbundled pair's χ²(Q ‖ P) at k = 0, by Hoeffding's variance of a U-statistic:
/// `Σ_{c=1}^{m} C(m, c) C(nm − m, m − c)/C(nm, m) · ((1 + χ²)^c − 1)`.
pub fn unbundled_chi2(chi2: &Rational, n: u64, m: u32) -> Rational {
    let total = Integer::from(n) * m;
    let all = Integer::from(&total).binomial(m);
    let mut sum = Rational::new();
    for c in 1..=m {
        let ways = Integer::from(m).binomial(c) * (Integer::from(&total) - m).binomial(m - c);
        let mut power = Rational::from(1) + chi2;
        power.pow_assign(c);
        sum += Rational::from((ways, all.clone())) * (power - 1);
    }
    sum
}

/// §9.1's canonical ratio of the unbundled pair at k = 0 at message histogram `counts`:
/// `L(N) = C(nm, m)^{-1} Σ Π_y C(N_y, m_y) w(y)^{m_y}` over `0 ≤ m_y ≤ N_y`, `Σ m_y = m`,
/// with `w = W1/W0` (outputs with `W0(y) > 0`).
pub fn unbundled_ratio(w0: &[Rational], w1: &[Rational], counts: &[u32], m: u32) -> Rational {
    let total: u32 = counts.iter().sum();
    let mut sum = Rational::new();
    for split in types(m, counts.len()) {
        if split.iter().zip(counts).any(|(s, c)| s > c) {
            continue;
        }
        let mut term = Rational::from(1);
        for y in 0..counts.len() {
            if split[y] == 0 {
                continue;
            }
            let mut w = w1[y].clone() / &w0[y];
            w.pow_assign(split[y]);
            term *= Rational::from(Integer::from(counts[y]).binomial(split[y])) * w;
        }
        sum += term;
    }
    sum / Rational::from(Integer::from(total).binomial(m))
}

/// The bundled pair's canonical ratio at k = 0 at a histogram of types `counts` (over
/// [`types`]`(m, d)`): `(1/n) Σ_t N_t W1′(t)/W0′(t)`.
pub fn bundled_ratio(w0: &[Rational], w1: &[Rational], counts: &[u32], m: u32) -> Rational {
    let n: u32 = counts.iter().sum();
    let mut sum = Rational::new();
    for (t, &c) in types(m, w0.len()).iter().zip(counts) {
        if c > 0 {
            sum += Rational::from(c) * type_probability(w1, t) / type_probability(w0, t);
        }
    }
    sum / Rational::from(n)
}

pub mod compare;

#[cfg(test)]
mod tests;
