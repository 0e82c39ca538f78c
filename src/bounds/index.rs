//! The blanket decomposition and the shuffle index of a randomizer (Takagi–Liew,
//! `../shared/papers/002_51d498152c20ebe0.txt` §3; issue 11's definitions where the excerpt is
//! silent, see proofs-notes/shuffle-index.md).
//!
//! * The blanket: `R̲(y) = min_x R_x(y)`, `γ = Σ_y R̲(y)`, `R_BG = R̲/γ`.
//! * For a pair `x1 → x1′` and a reference law `R_ref`,
//!   `σ² = Σ_y (R_{x1}(y) − R_{x1′}(y))² / R_ref(y)` and `χ = √γ/σ`.
//! * `χ_up`: the minimum over pairs with `R_ref = R_BG` (it governs the upper bound); then
//!   `χ² = γ/σ² = 1 / Σ_y (R_{x1} − R_{x1′})²/R̲(y)`.
//! * `χ_lo`: the minimum over `(x1, x1′, x2)` with `R_ref = R_{x2}` and `γ = 1` (the lower bound),
//!   `χ² = 1 / Σ_y (R_{x1} − R_{x1′})²/R_{x2}(y)`.
//!
//! Values are computed as `χ²` in the chosen backend: exact rationals for rational randomizers,
//! enclosures otherwise; `χ` is its square root.

use crate::arith::{Scalar, Transcendental};
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;

/// `R̲` and `γ` of a randomizer, in backend `S`.
#[derive(Clone, Debug)]
pub struct Blanket<S> {
    /// `R̲(y) = min_x R_x(y)`.
    pub floor: Vec<S>,
    /// `γ = Σ_y R̲(y)`.
    pub gamma: S,
}

/// The blanket of `r`.  Refused (the blanket bound is infinite) when `R̲(y) = 0` for an output
/// that some input can produce.
pub fn blanket<S: Scalar>(r: &Randomizer, rows: &[Vec<S>], ctx: &S::Ctx) -> Result<Blanket<S>> {
    let d = r.d();
    let mut floor = Vec::with_capacity(d);
    for y in 0..d {
        let zero_somewhere = (0..r.input_count()).any(|x| r.is_zero(x, y));
        let used_somewhere = (0..r.input_count()).any(|x| !r.is_zero(x, y));
        if zero_somewhere && used_somewhere {
            return Err(Error::Mechanism {
                source_name: r.name.clone(),
                field: format!("rows[*][{y}]"),
                message: format!(
                    "output {} has probability 0 under some input but not all: min_x R_x(y) = 0 there, so the blanket bound is infinite",
                    r.outputs[y]
                ),
            });
        }
        let candidates: Vec<&S> = rows.iter().map(|row| &row[y]).collect();
        floor.push(minimum(&candidates));
    }
    let mut gamma = S::zero(ctx);
    for f in &floor {
        gamma.add_assign(f);
    }
    Ok(Blanket { floor, gamma })
}

/// An enclosure of `min_i v_i`: the candidates whose lower end is at most the smallest upper
/// end (the others are certainly not the minimum), combined by `min(a, b) = a + b − max(a, b)`
/// (exact for rationals; an enclosure in interval backends).
fn minimum<S: Scalar>(values: &[&S]) -> S {
    let hi = values
        .iter()
        .map(|v| v.f64_bounds().1)
        .fold(f64::INFINITY, f64::min);
    values
        .iter()
        .filter(|v| v.f64_bounds().0 <= hi)
        .map(|v| (*v).clone())
        .reduce(|m, v| m.add(&v).sub(&m.max(&v)))
        .expect("at least one input")
}

/// One value of the shuffle index and the inputs attaining it.
#[derive(Clone, Debug)]
pub struct IndexValue {
    /// `χ²` (`+∞` when the pair's rows are equal: no privacy loss; 0 when `σ² = ∞`).
    pub chi2: Enclosure,
    /// `χ = √(χ²)`.
    pub chi: Enclosure,
    /// `(x1, x1′)` and, for `χ_lo`, the reference input `x2`.
    pub pair: (usize, usize),
    pub reference: Option<usize>,
}

/// `Σ_y (a_y − b_y)²/c_y`, or `None` when some `c_y = 0` with `a_y ≠ b_y` (σ² = ∞).
fn chi_denominator<S: Scalar>(
    a: &[S],
    b: &[S],
    c: &[S],
    zero_c: impl Fn(usize) -> bool,
    ctx: &S::Ctx,
) -> Option<S> {
    let mut sum = S::zero(ctx);
    for y in 0..a.len() {
        let diff = a[y].sub(&b[y]);
        if zero_c(y) {
            if diff.is_exact_zero() {
                continue;
            }
            return None;
        }
        sum.add_assign(&diff.mul(&diff).div(&c[y]));
    }
    Some(sum)
}

fn index_value<S: Scalar>(
    denominator: Option<S>,
    pair: (usize, usize),
    reference: Option<usize>,
    ctx: &S::Ctx,
) -> IndexValue {
    let (chi2, chi) = match denominator {
        None => (
            Enclosure::point(rug::Rational::new()),
            Enclosure::point(rug::Rational::new()),
        ),
        Some(d) if d.is_exact_zero() => (Enclosure::pos_infinity(), Enclosure::pos_infinity()),
        Some(d) => {
            let chi2 = S::one(ctx).div(&d);
            let chi = chi2.to_elementary(ctx).sqrt();
            (chi2.enclosure(), chi.enclosure())
        }
    };
    IndexValue {
        chi2,
        chi,
        pair,
        reference,
    }
}

/// A candidate's `σ²` (`None`: infinite) with the inputs it comes from.
struct Candidate<S> {
    sigma2: Option<S>,
    pair: (usize, usize),
    reference: Option<usize>,
}

/// The larger `σ²` of two candidates (the smaller `χ`), enclosed: an enclosure of the maximum
/// (so it holds when the two overlap), labelled with the candidate of larger upper end.
fn larger<S: Scalar>(a: Candidate<S>, b: Candidate<S>) -> Candidate<S> {
    match (&a.sigma2, &b.sigma2) {
        (None, _) => a,
        (_, None) => b,
        (Some(x), Some(y)) => {
            let sigma2 = Some(x.max(y));
            let winner = if y.f64_bounds().1 > x.f64_bounds().1 {
                b
            } else {
                a
            };
            Candidate { sigma2, ..winner }
        }
    }
}

/// `χ_up` and `χ_lo` of `r` as the question's backend gives them: exact rationals, or MPFR
/// enclosures with `--backend mpfr` (entries in an irrational `e^eps0` are enclosed in 256-bit
/// MPFR intervals whatever the backend).
pub fn shuffle_index_for(
    r: &Randomizer,
    backend: crate::query::Backend,
) -> Result<(IndexValue, IndexValue)> {
    use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
    use crate::query::Backend;
    let rational = r
        .rows
        .iter()
        .flatten()
        .all(|e| matches!(e, crate::mechanism::Entry::Exact(_)));
    match backend {
        Backend::Interval | Backend::Exact if !rational => {
            shuffle_index::<MpfrInterval>(r, &MpfrCtx { precision: 256 })
        }
        Backend::Mpfr { precision } => shuffle_index::<MpfrInterval>(r, &MpfrCtx { precision }),
        _ => shuffle_index::<rug::Rational>(r, &Default::default()),
    }
}

/// `χ_up` and `χ_lo` of `r` in backend `S` (module doc).
pub fn shuffle_index<S: Scalar>(r: &Randomizer, ctx: &S::Ctx) -> Result<(IndexValue, IndexValue)> {
    let rows = r.values::<S>(ctx)?;
    let b = blanket(r, &rows, ctx)?;
    let k = r.input_count();
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|x| (0..k).map(move |x2| (x, x2)))
        .filter(|(x, x2)| x < x2)
        .collect();
    let floor_zero = |y: usize| (0..k).all(|x| r.is_zero(x, y));
    let up = pairs
        .iter()
        .map(|&(x1, x2)| Candidate {
            sigma2: chi_denominator(&rows[x1], &rows[x2], &b.floor, floor_zero, ctx),
            pair: (x1, x2),
            reference: None,
        })
        .reduce(larger)
        .expect("at least two inputs");
    // χ_lo over (x1, x1′, x2): only the outputs where the pair's entries differ enter σ², so
    // each pair's squared differences are formed once and divided by every reference row.
    let lo = pairs
        .iter()
        .flat_map(|&(x1, x1p)| {
            let differences: Vec<(usize, S)> = (0..r.d())
                .filter(|&y| r.rows[x1][y] != r.rows[x1p][y])
                .map(|y| {
                    let diff = rows[x1][y].sub(&rows[x1p][y]);
                    (y, diff.mul(&diff))
                })
                .collect();
            (0..k)
                .map(|x2| {
                    let mut sum = Some(S::zero(ctx));
                    for (y, square) in &differences {
                        sum = match sum {
                            Some(_) if r.is_zero(x2, *y) => None,
                            Some(total) => Some(total.add(&square.div(&rows[x2][*y]))),
                            None => None,
                        };
                    }
                    Candidate {
                        sigma2: sum,
                        pair: (x1, x1p),
                        reference: Some(x2),
                    }
                })
                .collect::<Vec<_>>()
        })
        .reduce(larger)
        .expect("at least two inputs");
    let value = |c: Candidate<S>| index_value(c.sigma2, c.pair, c.reference, ctx);
    Ok((value(up), value(lo)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::mechanism::randomizer::load_randomizer;
    use rug::Rational;

    #[test]
    fn k_rr_index_in_closed_form() {
        // k-RR with e^eps0 = a, k symbols, k inputs: R̲ = 1/(a+k−1) everywhere, γ = k/(a+k−1);
        // a pair differs by ±(a−1)/(a+k−1) on two outputs, so Σ Δ²/R̲ = 2(a−1)²/(a+k−1) and
        // χ_up² = (a+k−1)/(2(a−1)²).  With R_ref = R_x2 the smallest χ² puts both differing
        // outputs at the reference's "other" entries: χ_lo² = χ_up² for k ≥ 3.
        let r = load_randomizer("k-rr:k=4,exp_eps0=3,inputs=4").unwrap();
        let ctx = ExactCtx::default();
        let (up, lo) = shuffle_index::<Rational>(&r, &ctx).unwrap();
        let want = Rational::from((6, 8));
        assert!(up.chi2.is_point() && up.chi2.contains(&want));
        assert!(lo.chi2.contains(&want));
        // χ_lo's reference differs from the switched inputs.
        let x2 = lo.reference.unwrap();
        assert!(x2 != lo.pair.0 && x2 != lo.pair.1);
        // The same in f64 intervals encloses it.
        let (up_f, _) = shuffle_index::<inari::Interval>(&r, &()).unwrap();
        assert!(up_f.chi2.contains(&want));
    }

    #[test]
    fn binary_rr_and_refusals() {
        // Binary RR, e^eps0 = 3: R̲ = (1/4, 1/4), γ = 1/2, Δ = ±1/2: Σ Δ²/R̲ = 2, χ_up² = 1/2;
        // with R_ref = R_0 = (3/4, 1/4): Σ = 1/3 + 1 = 4/3, χ_lo² = 3/4.
        let r = load_randomizer("binary-rr:exp_eps0=3").unwrap();
        let (up, lo) = shuffle_index::<Rational>(&r, &ExactCtx::default()).unwrap();
        assert!(up.chi2.contains(&Rational::from((1, 2))));
        assert!(lo.chi2.contains(&Rational::from((3, 4))));
        // An output that one input never produces and another does: infinite blanket bound.
        let one_sided = load_randomizer(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/mechanisms/one-sided.toml"
        ))
        .unwrap();
        let e = shuffle_index::<Rational>(&one_sided, &ExactCtx::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("blanket bound is infinite"), "{e}");
    }
}
