//! Polynomials in `a = e^{ε0}` with rational coefficients, highest degree first: the
//! numerators and denominators of [`super::Entry::ExpFraction`] (degree 1 for a family's
//! entries, `m` for the types of m bundled messages).

use rug::Rational;

/// The product of two polynomials.
pub fn mul(a: &[Rational], b: &[Rational]) -> Vec<Rational> {
    let mut out = vec![Rational::new(); a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += Rational::from(x * y);
        }
    }
    out
}

/// Equality of polynomials, possibly of different lengths.
pub fn equal(a: &[Rational], b: &[Rational]) -> bool {
    let len = a.len().max(b.len());
    let at = |p: &[Rational], i: usize| -> Rational {
        (i + p.len())
            .checked_sub(len)
            .map_or(Rational::new(), |j| p[j].clone())
    };
    (0..len).all(|i| at(a, i) == at(b, i))
}

/// The coefficient of `a^j` of a polynomial given highest degree first.
pub fn coefficient(p: &[Rational], j: usize) -> Rational {
    p.len()
        .checked_sub(j + 1)
        .map_or(Rational::new(), |i| p[i].clone())
}

/// A polynomial in `a = e^eps0` as text.
pub fn text(c: &[Rational]) -> String {
    use crate::enclosure::exact_string;
    let degree = c.len().saturating_sub(1);
    let terms: Vec<String> = c
        .iter()
        .enumerate()
        .filter(|(_, x)| **x != 0)
        .map(|(i, x)| {
            let power = match degree - i {
                0 => return exact_string(x),
                1 => "e^eps0".to_string(),
                j => format!("e^({j}*eps0)"),
            };
            if *x == 1 {
                power
            } else {
                format!("{}*{power}", exact_string(x))
            }
        })
        .collect();
    if terms.is_empty() {
        "0".to_string()
    } else {
        terms.join(" + ")
    }
}

/// A polynomial (coefficients highest degree first) at `a`, by Horner's rule.
pub fn at(c: &[Rational], a: &Rational) -> Rational {
    c.iter().fold(Rational::new(), |acc, x| acc * a + x)
}
