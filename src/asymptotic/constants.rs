//! The constants of Part I §3 and §6, exactly (rational mechanisms) or as enclosures.
//!
//! * `v = W1 − W0`, `Σ_b = diag(W_b) − W_b W_bᵀ`, `Σ_π = (1−π)Σ_0 + πΣ_1`;
//! * the fixed-composition Fisher constant `I_π = vᵀ Σ_π⁺ v` (Part I (3)) and the score
//!   `s_π = Σ_π⁺ v`;
//! * the i.i.d. mixture proxy `I_π^mix = vᵀ (diag f_π − f_π f_πᵀ)⁺ v = Σ_y v(y)²/f_π(y)`,
//!   `f_π = (1−π)W0 + πW1` (Part I §3);
//! * `χ²(W1‖W0) = I_0`, `χ²(W0‖W1)`, and `μ3 = E_{W0}[r(Y)³]`, `r = W1/W0 − 1` (§6).
//!
//! With full support the null space of `Σ_π` is `span(1)`, and since `1ᵀv = 0`,
//! `Σ_π⁺ v = (Σ_π + 11ᵀ/d)⁻¹ v` (for `u = 1/√d`, `(Σ + uuᵀ)⁻¹ = Σ⁺ + uuᵀ`): one symmetric
//! positive definite solve, exact in rationals.

use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::mechanism::{Channel, Mechanism};
use rug::Rational;

/// A square matrix, row-major.
pub type Matrix<S> = Vec<Vec<S>>;

/// The constants at one composition π.
#[derive(Clone, Debug)]
pub struct FisherConstants<S> {
    pub pi: Rational,
    pub v: Vec<S>,
    pub sigma0: Matrix<S>,
    pub sigma1: Matrix<S>,
    pub sigma_pi: Matrix<S>,
    /// `I_π = vᵀ Σ_π⁺ v`.
    pub i_pi: S,
    /// `s_π = Σ_π⁺ v`.
    pub score: Vec<S>,
    /// `I_π^mix = Σ_y v(y)²/f_π(y)`.
    pub i_mix: S,
    /// `χ²(W1‖W0) = I_0`.
    pub chi2_10: S,
    /// `χ²(W0‖W1)`.
    pub chi2_01: S,
    /// `μ3 = E_{W0}[r(Y)³]`.
    pub mu3: S,
}

/// Checks `δ_full > 0` (Part I §2.3): both rows of full support.
pub fn require_full_support(mechanism: &Mechanism, what: &str) -> Result<()> {
    if mechanism.has_full_support() {
        return Ok(());
    }
    let zero = (0..mechanism.d())
        .flat_map(|y| [(0, y), (1, y)])
        .find(|&(b, y)| mechanism.is_zero(b, y))
        .expect("some entry is zero");
    Err(Error::Unsupported(format!(
        "{what} needs W0 and W1 of full support (δ_full > 0, Part I §2.3), but W{}({}) = 0 in {}",
        zero.0, mechanism.outputs[zero.1], mechanism.name
    )))
}

/// `diag(w) − wwᵀ`, with the diagonal computed as `w_i · Σ_{j≠i} w_j` (equal to `w_i(1 − w_i)`
/// when w sums to 1, without the cancellation when `w_i ≈ 1`).
fn covariance<S: Scalar>(w: &[S], ctx: &S::Ctx) -> Matrix<S> {
    (0..w.len())
        .map(|i| {
            (0..w.len())
                .map(|j| {
                    if i == j {
                        let mut rest = S::zero(ctx);
                        for (m, x) in w.iter().enumerate() {
                            if m != i {
                                rest.add_assign(x);
                            }
                        }
                        w[i].mul(&rest)
                    } else {
                        S::zero(ctx).sub(&w[i].mul(&w[j]))
                    }
                })
                .collect()
        })
        .collect()
}

/// Solves `A x = b` for a symmetric positive definite `A` by Gaussian elimination without
/// pivoting (every pivot of an SPD matrix is positive).
fn solve_spd<S: Scalar>(mut a: Matrix<S>, mut b: Vec<S>) -> Vec<S> {
    let d = b.len();
    for col in 0..d {
        for row in col + 1..d {
            let factor = a[row][col].div(&a[col][col]);
            let pivot_row = a[col].clone();
            for (x, p) in a[row].iter_mut().zip(&pivot_row).skip(col) {
                *x = x.sub(&factor.mul(p));
            }
            let t = factor.mul(&b[col]);
            b[row] = b[row].sub(&t);
        }
    }
    let mut x: Vec<S> = b.clone();
    for row in (0..d).rev() {
        let mut acc = b[row].clone();
        for j in row + 1..d {
            acc = acc.sub(&a[row][j].mul(&x[j]));
        }
        x[row] = acc.div(&a[row][row]);
    }
    x
}

fn dot<S: Scalar>(a: &[S], b: &[S], ctx: &S::Ctx) -> S {
    let mut s = S::zero(ctx);
    for (x, y) in a.iter().zip(b) {
        s.add_mul_assign(x, y);
    }
    s
}

/// The constants of `channel` at composition π ∈ [0, 1] (the channel must have full support).
pub fn fisher_constants<S: Scalar>(
    channel: &Channel<S>,
    pi: &Rational,
    ctx: &S::Ctx,
) -> FisherConstants<S> {
    let [w0, w1] = &channel.w;
    let d = w0.len();
    let one = S::one(ctx);
    let p = S::from_rational(pi, ctx);
    let q = one.sub(&p);
    let v: Vec<S> = w1.iter().zip(w0).map(|(a, b)| a.sub(b)).collect();
    let sigma0 = covariance(w0, ctx);
    let sigma1 = covariance(w1, ctx);
    let sigma_pi: Matrix<S> = (0..d)
        .map(|i| {
            (0..d)
                .map(|j| q.mul(&sigma0[i][j]).add(&p.mul(&sigma1[i][j])))
                .collect()
        })
        .collect();
    let shift = S::one(ctx).div(&S::from_u64(d as u64, ctx));
    let shifted: Matrix<S> = (0..d)
        .map(|i| (0..d).map(|j| sigma_pi[i][j].add(&shift)).collect())
        .collect();
    let score = solve_spd(shifted, v.clone());
    let i_pi = dot(&v, &score, ctx);
    let f: Vec<S> = w0
        .iter()
        .zip(w1)
        .map(|(a, b)| q.mul(a).add(&p.mul(b)))
        .collect();
    let sum_over = |num: &dyn Fn(usize) -> S, den: &[S]| {
        let mut s = S::zero(ctx);
        for (y, w) in den.iter().enumerate() {
            s.add_assign(&num(y).div(w));
        }
        s
    };
    let square = |y: usize| v[y].mul(&v[y]);
    let i_mix = sum_over(&square, &f);
    let chi2_10 = sum_over(&square, w0);
    let chi2_01 = sum_over(&square, w1);
    // μ3 = Σ W0 (W1/W0 − 1)³ = Σ v³/W0².
    let cube = |y: usize| v[y].mul(&v[y]).mul(&v[y]).div(&w0[y]);
    let mu3 = sum_over(&cube, w0);
    FisherConstants {
        pi: pi.clone(),
        v,
        sigma0,
        sigma1,
        sigma_pi,
        i_pi,
        score,
        i_mix,
        chi2_10,
        chi2_01,
        mu3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::mechanism::load_mechanism;

    #[test]
    fn binary_output_closed_form() {
        // W0 = (0.7, 0.3), W1 = (0.4, 0.6): I_π = 0.09/(0.21 + 0.03π) (Part I §8.3).
        let m = load_mechanism("fixtures/mechanisms/binary-asymmetric.toml").unwrap();
        let ctx = ExactCtx::default();
        let c = m.channel::<Rational>(&ctx).unwrap();
        for pi in ["0", "1/10", "0.3", "1/2", "1"] {
            let pi = crate::enclosure::parse_rational(pi).unwrap();
            let k = fisher_constants(&c, &pi, &ctx);
            let closed = Rational::from((9, 100))
                / (Rational::from((21, 100)) + Rational::from((3, 100)) * &pi);
            assert_eq!(k.i_pi, closed, "π = {pi}");
        }
        let k0 = fisher_constants(&c, &Rational::new(), &ctx);
        assert_eq!(k0.i_pi, k0.chi2_10, "I_0 = χ²(W1‖W0)");
    }
}
