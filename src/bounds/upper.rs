//! The blanket divergence (Balle et al. 2019; Takagi–Liew Lemma 2.1 / Theorem 2.2) as a
//! certified pair of laws.
//!
//! For an ordered pair `x1 → x1′`, with `u_y = R_{x1}(y)/R̲(y)` and `v_y = R_{x1′}(y)/R̲(y)`,
//!
//! `D(t) = (1/n) Σ_N Mult(n; N; (R̲(y))_y, 1 − γ) · (Σ_y N_y (u_y − t v_y))₊`.
//!
//! Outputs with equal `(u_y, v_y)` are merged into classes (their counts only enter through
//! the class sum, which is multinomial with the summed probabilities).  With
//! `A(N) = Σ_c N_c u_c` and `B(N) = Σ_c N_c v_c`, the measures `Q′(N) = Mult(N)·A(N)/n` and
//! `P′(N) = Mult(N)·B(N)/n` are probability laws (`E[A]/n = Σ_y R_{x1}(y) = 1`), and
//! `D(t) = Σ_N (Q′(N) − t P′(N))₊` is their privacy curve `δ_{Q′‖P′}` at `e^ε = t`; the reverse
//! curve `δ_{P′‖Q′}` is the blanket divergence of `x1′ → x1`.  So the pair engine's curves, ε
//! search and truncation contract apply unchanged (proofs-notes/blanket-bounds.md).

use super::index::blanket;
use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::exact::law::{Layout, PairLaw};
use crate::exact::window::multinomial;
use crate::mechanism::randomizer::Randomizer;
use crate::query::{Backend, Built, PairSource};
use rug::Rational;

/// One class of outputs: `(u, v)` and the class's blanket probability `Σ R̲(y)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub u: Rational,
    pub v: Rational,
    pub mass: Rational,
}

/// A rational randomizer's rows and blanket, computed once for all its pairs.
#[derive(Clone, Debug)]
pub struct Exact {
    pub rows: Vec<Vec<Rational>>,
    pub blanket: super::index::Blanket<Rational>,
}

impl Exact {
    pub fn of(r: &Randomizer) -> Result<Exact> {
        let ctx = crate::arith::exact::ExactCtx::default();
        let rows = r.values::<Rational>(&ctx)?;
        let blanket = blanket(r, &rows, &ctx)?;
        Ok(Exact { rows, blanket })
    }
}

/// The classes of the ordered pair `x1 → x1′` (rational randomizers), in a canonical order, and
/// the blanket mass `γ`.  Two pairs with the same classes have the same blanket divergence.
pub fn classes(e: &Exact, x1: usize, x1p: usize) -> (Vec<Class>, Rational) {
    let (rows, b) = (&e.rows, &e.blanket);
    let mut out: Vec<Class> = Vec::new();
    for (y, floor) in b.floor.iter().enumerate() {
        if *floor == 0 {
            continue;
        }
        let u = Rational::from(&rows[x1][y] / floor);
        let v = Rational::from(&rows[x1p][y] / floor);
        match out.iter_mut().find(|c| c.u == u && c.v == v) {
            Some(c) => c.mass += floor,
            None => out.push(Class {
                u,
                v,
                mass: floor.clone(),
            }),
        }
    }
    out.sort_by(|a, b| (&a.u, &a.v).cmp(&(&b.u, &b.v)));
    (out, b.gamma.clone())
}

/// Estimated states of the blanket multinomial (windows of the same depth as the engine's).
fn estimated_states(w: &[f64], n: usize, bits: Option<u32>) -> f64 {
    let z = bits.map_or(f64::INFINITY, |b| {
        (2.0 * f64::from(b) * std::f64::consts::LN_2).sqrt()
    });
    // Every category but the largest varies; each spans about 2z standard deviations.
    let largest = w.iter().cloned().fold(0.0, f64::max);
    let mut skipped = false;
    w.iter()
        .filter(|&&p| {
            if p == largest && !skipped {
                skipped = true;
                false
            } else {
                true
            }
        })
        .map(|p| (2.0 * z * (n as f64 * p * (1.0 - p)).sqrt() + 3.0).min(n as f64 + 1.0))
        .product()
}

/// The blanket pair `(P′, Q′)` of `x1 → x1′` for n users, in backend `S` (rational randomizers).
pub fn blanket_law<S: Scalar>(
    exact: &Exact,
    x1: usize,
    x1p: usize,
    n: u64,
    options: &crate::exact::pair::PairOptions,
    ctx: &S::Ctx,
) -> Result<PairLaw<S>> {
    let (classes, gamma) = classes(exact, x1, x1p);
    let m = usize::try_from(n).map_err(|_| Error::argument("--n", "too large"))?;
    // Categories: 0 = outside the blanket (coefficients 0), then the classes.
    let probabilities: Vec<Rational> = std::iter::once(1 - gamma.clone())
        .chain(classes.iter().map(|c| c.mass.clone()))
        .collect();
    let w: Vec<S> = probabilities
        .iter()
        .map(|p| S::from_rational(p, ctx))
        .collect();
    let tau = if options.truncate {
        S::truncation_bits(ctx)
    } else {
        None
    };
    // The memory guard: three arrays (the law and the pair) of the estimated states.
    let states = estimated_states(
        &probabilities
            .iter()
            .map(Rational::to_f64)
            .collect::<Vec<_>>(),
        m,
        tau,
    );
    let bytes = states * 3.0 * S::estimated_bytes(m, ctx) as f64;
    if bytes > options.memory_limit as f64 {
        return Err(Error::TooLarge(format!(
            "the blanket sum over {} output classes at n = {n} would hold about {states:.2e} multinomial states ({:.3} GiB), over the {:.3} GiB limit (raise --max-memory-gib or use a smaller n)",
            classes.len(),
            bytes / (1u64 << 30) as f64,
            options.memory_limit as f64 / (1u64 << 30) as f64
        )));
    }
    let law = multinomial::<S>(m, &w, tau, ctx);
    let us: Vec<S> = classes
        .iter()
        .map(|c| S::from_rational(&c.u, ctx))
        .collect();
    let vs: Vec<S> = classes
        .iter()
        .map(|c| S::from_rational(&c.v, ctx))
        .collect();
    let inv_n = S::from_rational(&Rational::from((1, n)), ctx);
    let (mut p, mut q) = (Vec::with_capacity(law.values.len()), Vec::new());
    q.reserve(law.values.len());
    for (i, value) in law.values.iter().enumerate() {
        let h = law.set.histogram(i);
        let (mut a, mut b) = (S::zero(ctx), S::zero(ctx));
        for (c, count) in h.iter().skip(1).enumerate() {
            let k = S::from_u64(*count, ctx);
            a.add_assign(&k.mul(&us[c]));
            b.add_assign(&k.mul(&vs[c]));
        }
        let weight = value.mul(&inv_n);
        q.push(weight.mul(&a));
        p.push(weight.mul(&b));
    }
    // The omitted states carry Q′ ≤ max u · (their Mult mass) and P′ ≤ max v · (their mass),
    // since A ≤ n max u and B ≤ n max v.
    let max_coefficient = classes
        .iter()
        .flat_map(|c| [c.u.clone(), c.v.clone()])
        .max()
        .unwrap_or_default();
    let ratios = classes
        .iter()
        .map(|c| Rational::from(&c.u / &c.v))
        .collect::<Vec<_>>();
    Ok(PairLaw {
        p,
        q,
        omitted: Rational::from(&law.omitted * &max_coefficient),
        // A/B is a weighted mean of the classes' u/v (v > 0 on the blanket's support).
        ratio_lo: ratios.iter().min().cloned().unwrap_or_default(),
        ratio_hi: ratios.iter().max().cloned(),
        layout: Layout::Reduced,
        omission: Default::default(),
    })
}

/// The blanket divergence of one unordered pair `{x1, x1′}`, as a pair source: `qp` is
/// `D(x1 → x1′)` and `pq` is `D(x1′ → x1)`.
#[derive(Clone, Debug)]
pub struct BlanketQuery<'a> {
    pub exact: &'a Exact,
    pub x1: usize,
    pub x1p: usize,
    pub n: u64,
    pub options: crate::exact::pair::PairOptions,
    pub backend: Backend,
    pub escalate_above: Option<f64>,
}

impl PairSource for BlanketQuery<'_> {
    fn backend(&self) -> Backend {
        self.backend
    }

    fn escalate_above(&self) -> Option<f64> {
        self.escalate_above
    }

    fn exact_ctx(&self) -> crate::arith::exact::ExactCtx {
        Default::default()
    }

    fn check_exact(&self) -> Result<()> {
        Ok(())
    }

    fn build<S: Scalar>(&self, ctx: &S::Ctx) -> Result<Built<S>> {
        Ok(Built {
            law: blanket_law(self.exact, self.x1, self.x1p, self.n, &self.options, ctx)?,
            canonical_states_checked: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::exact::curve::{Direction, delta_at_exp};
    use crate::mechanism::randomizer::load_randomizer;
    use rug::ops::Pow;

    /// The expectation form `(1/(nγ)) E_M E[(Σ_{i≤M} l(Y_i))₊]`, `M ~ Bin(n, γ)`,
    /// `Y_i ~ R_BG`, `l = (R_{x1} − t R_{x1′})/R_BG`, by enumerating every sequence (exact).
    fn expectation_form(r: &Randomizer, x1: usize, x1p: usize, n: u64, t: &Rational) -> Rational {
        let ctx = ExactCtx::default();
        let rows = r.values::<Rational>(&ctx).unwrap();
        let b = blanket(r, &rows, &ctx).unwrap();
        let bg: Vec<Rational> = b
            .floor
            .iter()
            .map(|f| Rational::from(f / &b.gamma))
            .collect();
        let l: Vec<Rational> = (0..r.d())
            .map(|y| {
                if bg[y] == 0 {
                    Rational::new()
                } else {
                    (&rows[x1][y] - Rational::from(t * &rows[x1p][y])) / &bg[y]
                }
            })
            .collect();
        let mut total = Rational::new();
        let binom = |n: u64, k: u64| -> Rational {
            Rational::from(rug::Integer::from(n).binomial(k as u32))
        };
        for m in 0..=n {
            // E[(Σ l(Y_i))₊] over all d^m sequences.
            let mut inner = Rational::new();
            let d = r.d();
            for code in 0..d.pow(m as u32) {
                let (mut c, mut prob, mut sum) = (code, Rational::from(1), Rational::new());
                for _ in 0..m {
                    let y = c % d;
                    c /= d;
                    prob *= &bg[y];
                    sum += &l[y];
                }
                if sum > 0 {
                    inner += prob * sum;
                }
            }
            let g = b.gamma.clone();
            let weight =
                binom(n, m) * g.clone().pow(m as i32) * (Rational::from(1) - g).pow((n - m) as i32);
            total += weight * inner;
        }
        total / (Rational::from(n) * b.gamma)
    }

    fn exact_options() -> crate::exact::pair::PairOptions {
        crate::exact::pair::PairOptions {
            truncate: false,
            ..Default::default()
        }
    }

    #[test]
    fn finite_sum_equals_the_expectation_form() {
        let r = load_randomizer("k-rr:k=3,exp_eps0=2,inputs=3").unwrap();
        let ctx = ExactCtx::default();
        for n in [1u64, 3, 5] {
            let law =
                blanket_law::<Rational>(&Exact::of(&r).unwrap(), 0, 1, n, &exact_options(), &ctx)
                    .unwrap();
            assert_eq!(law.omitted, 0);
            for t in [
                Rational::from(1),
                Rational::from((3, 2)),
                Rational::from((19, 10)),
            ] {
                let d = delta_at_exp(&law, Direction::Qp, &t, &ctx);
                let want = expectation_form(&r, 0, 1, n, &t);
                assert!(
                    d.is_point() && d.contains(&want),
                    "n = {n}, t = {t}: {d} vs {want}"
                );
                let reverse = delta_at_exp(&law, Direction::Pq, &t, &ctx);
                assert!(reverse.contains(&expectation_form(&r, 1, 0, n, &t)));
            }
            // The exact zero for t ≥ max u/v = e^eps0.
            let d = delta_at_exp(&law, Direction::Qp, &Rational::from(2), &ctx);
            assert!(d.contains(&Rational::new()));
        }
        // A randomizer with distinct ratios in every output (no merging), two inputs.
        let file = std::env::temp_dir().join("shufflecert-blanket-three.toml");
        std::fs::write(
            &file,
            "inputs = [\"a\", \"b\"]\nrows = [[\"1/2\", \"1/3\", \"1/6\"], [\"1/5\", \"1/5\", \"3/5\"]]\n",
        )
        .unwrap();
        let r = load_randomizer(file.to_str().unwrap()).unwrap();
        let law = blanket_law::<Rational>(&Exact::of(&r).unwrap(), 1, 0, 4, &exact_options(), &ctx)
            .unwrap();
        let t = Rational::from((6, 5));
        let d = delta_at_exp(&law, Direction::Qp, &t, &ctx);
        assert!(d.contains(&expectation_form(&r, 1, 0, 4, &t)));
    }

    #[test]
    fn classes_merge_equal_coefficients_and_carry_unit_mass() {
        let r = load_randomizer("k-rr:k=6,exp_eps0=3,inputs=6").unwrap();
        let (cl, gamma) = classes(&Exact::of(&r).unwrap(), 0, 1);
        assert_eq!(cl.len(), 3);
        assert_eq!(gamma, Rational::from((6, 8)));
        let (a, b) = cl
            .iter()
            .fold((Rational::new(), Rational::new()), |(a, b), c| {
                (
                    a + Rational::from(&c.mass * &c.u),
                    b + Rational::from(&c.mass * &c.v),
                )
            });
        assert_eq!((a, b), (Rational::from(1), Rational::from(1)));
    }
}
