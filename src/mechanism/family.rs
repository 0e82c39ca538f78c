//! The randomized-response families.
//!
//! * binary RR: `W0 = (e^{ε0}, 1)/(1+e^{ε0})`, `W1 = (1, e^{ε0})/(1+e^{ε0})` over outputs (0, 1);
//! * k-RR: input b is reported truthfully with probability `e^{ε0}/(e^{ε0}+k−1)` and as each of
//!   the other `k−1` symbols with probability `1/(e^{ε0}+k−1)`.

use super::{Entry, Mechanism};
use crate::error::{Error, Result};
use rug::Rational;

/// A family of mechanisms with a privacy parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    BinaryRr,
    /// k-ary randomized response on a binary input (inputs map to symbols 0 and 1).
    KRr {
        k: u32,
    },
}

/// How the local parameter was given.
#[derive(Clone, Debug)]
pub enum LocalParameter {
    /// The real ε0 (a decimal); `e^{ε0}` is irrational unless ε0 = 0.
    Eps0(Rational),
    /// `e^{ε0}` itself, a rational ≥ 1.
    ExpEps0(Rational),
}

impl Family {
    /// The family's name as files and the CLI spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Family::BinaryRr => "binary-rr",
            Family::KRr { .. } => "k-rr",
        }
    }

    fn alphabet(&self) -> u32 {
        match self {
            Family::BinaryRr => 2,
            Family::KRr { k } => *k,
        }
    }

    /// The mechanism of this family at the given parameter.
    pub fn mechanism(
        &self,
        source_name: &str,
        name: String,
        parameter: LocalParameter,
    ) -> Result<Mechanism> {
        let err = |field: &str, message: String| Error::Mechanism {
            source_name: source_name.to_string(),
            field: field.to_string(),
            message,
        };
        let k = self.alphabet();
        if k < 2 {
            return Err(err(
                "k",
                format!("must be at least 2 (binary inputs need two distinct outputs), got {k}"),
            ));
        }
        let m = Rational::from(k - 1);
        // Entry for "truthful" (a / (a + k − 1)) and "other" (1 / (a + k − 1)).
        let (truthful, other, eps0) = match parameter {
            LocalParameter::ExpEps0(a) => {
                if a < 1 {
                    return Err(err(
                        "exp_eps0",
                        "must be at least 1 (eps0 >= 0)".to_string(),
                    ));
                }
                let den = Rational::from(&a + &m);
                (
                    Entry::Exact(Rational::from(&a / &den)),
                    Entry::Exact(Rational::from(1) / den),
                    None,
                )
            }
            LocalParameter::Eps0(eps0) => {
                if eps0 < 0 {
                    return Err(err("eps0", "must be non-negative".to_string()));
                }
                if eps0 > 700 {
                    return Err(err(
                        "eps0",
                        "must be at most 700 (e^eps0 would overflow a double)".to_string(),
                    ));
                }
                if eps0 == 0 {
                    let uniform = Entry::Exact(Rational::from((1, k)));
                    (uniform.clone(), uniform, None)
                } else {
                    let [truthful, other] = Entry::randomized_response(k as usize);
                    (truthful, other, Some(eps0))
                }
            }
        };
        let row = |b: usize| truthful_row(k as usize, b, &truthful, &other);
        let outputs = (0..k).map(|y| y.to_string()).collect();
        Mechanism::new(source_name, name, Some(outputs), [row(0), row(1)], eps0)
    }
}

/// The randomized-response row of input `x` over `k` symbols: `truthful` at symbol x, `other`
/// elsewhere.
pub(crate) fn truthful_row(k: usize, x: usize, truthful: &Entry, other: &Entry) -> Vec<Entry> {
    (0..k)
        .map(|y| {
            if y == x {
                truthful.clone()
            } else {
                other.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_rr_rows() {
        let m = Family::KRr { k: 4 }
            .mechanism(
                "k-rr",
                "k-rr".into(),
                LocalParameter::ExpEps0(Rational::from(3)),
            )
            .unwrap();
        let [w0, w1] = m.rational_rows().unwrap();
        assert_eq!(w0[0], Rational::from((1, 2)));
        assert_eq!(w0[1], Rational::from((1, 6)));
        assert_eq!(w1[1], Rational::from((1, 2)));
        assert_eq!(w1[3], Rational::from((1, 6)));
    }

    #[test]
    fn binary_rr_irrational() {
        let m = Family::BinaryRr
            .mechanism(
                "binary-rr",
                "binary-rr".into(),
                LocalParameter::Eps0(Rational::from(1)),
            )
            .unwrap();
        assert!(!m.is_rational());
        assert!(m.has_full_support());
        let c = m.channel::<inari::Interval>(&()).unwrap();
        // e/(1+e) = 0.7310585786300049
        assert!((c.w[0][0].mid() - 0.731_058_578_630_004_9).abs() < 1e-15);
    }
}
