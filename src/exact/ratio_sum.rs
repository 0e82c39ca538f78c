//! The canonical pair k = 0 through its sufficient statistic (proofs-notes/ratio-lattice.md).
//!
//! At k = 0 the likelihood ratio is linear in the histogram (Part I §4, §8.1):
//! `L_{n,0}(N) = (1/n) Σ_y N_y r(y)`, `r = W1/W0`.  For a rational channel with `W0 > 0`
//! write `r(y) = a_y / D` with integers `a_y ≥ 0` and `a_y = a_min + g·b_y`, `g` the gcd of the
//! differences.  Then `L = (n·a_min + g·s)/(n·D)` with `s = Σ_y N_y b_y`, so the lattice point
//! `s` is a sufficient statistic for the pair: the pair of its laws has the same privacy curves
//! and f-divergences as the pair of histogram laws.  Under `T_{n,0}` it is a sum of n
//! independent copies of `b_Y`, `Y ~ W0`, so both laws come from the law `H` of n − 1 such
//! copies through the shift identities of Part I Lemma 4.2 on the lattice:
//! `P(s) = Σ_y W0(y) H(s − b_y)`, `Q(s) = Σ_y W1(y) H(s − b_y)`.
//!
//! The lattice has at most `(n − 1)·max b + 1` points, so this route pays off when the
//! histogram windows are large and the ratios share a small denominator (e.g. a bundled
//! mechanism, whose type histograms fill most of a high-dimensional simplex).

use super::binary::{WindowLaw, trim};
use super::group::ratio_range;
use super::law::{Layout, Omission, PairLaw};
use crate::arith::Scalar;
use crate::mechanism::{Channel, Mechanism};
use rug::{Integer, Rational};

/// The lattice of the canonical ratio of a rational mechanism whose row `W0` has no zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatioLattice {
    /// `b_y`: the lattice step of output y.
    pub offsets: Vec<usize>,
    /// `a_min` and `g`: `r(y) = (a_min + g·b_y)/D`.
    a_min: Integer,
    g: Integer,
    denominator: Integer,
}

impl RatioLattice {
    /// The lattice of `mechanism`'s ratios; `None` when an entry is not rational, `W0` has a
    /// zero, or a step does not fit a `usize`.
    pub fn of(mechanism: &Mechanism) -> Option<RatioLattice> {
        let [w0, w1] = mechanism.rational_rows()?;
        if w0.iter().any(|x| *x <= 0) {
            return None;
        }
        let ratios: Vec<Rational> = w0.iter().zip(&w1).map(|(a, b)| b.clone() / a).collect();
        let denominator = ratios
            .iter()
            .fold(Integer::from(1), |l, r| l.lcm(r.denom()));
        let numerators: Vec<Integer> = ratios
            .iter()
            .map(|r| Integer::from(&denominator / r.denom()) * r.numer())
            .collect();
        let a_min = numerators.iter().min()?.clone();
        let g = numerators
            .iter()
            .fold(Integer::new(), |g, a| g.gcd(&Integer::from(a - &a_min)));
        let g = if g == 0 { Integer::from(1) } else { g };
        let offsets = numerators
            .iter()
            .map(|a| Integer::from(a - &a_min) / &g)
            .map(|b| b.to_usize())
            .collect::<Option<Vec<usize>>>()?;
        Some(RatioLattice {
            offsets,
            a_min,
            g,
            denominator,
        })
    }

    /// The largest step `max_y b_y`.
    pub fn span(&self) -> usize {
        self.offsets.iter().copied().max().unwrap_or(0)
    }

    /// The lattice points of the pair over n users (`None` beyond `usize`).
    pub fn points(&self, n: usize) -> Option<usize> {
        n.checked_mul(self.span())?.checked_add(1)
    }

    /// About how many products [`RatioLattice::pair`] makes over n users: `d` per point of each
    /// of the n − 1 steps' laws and `2d` per point of the pair.  After j steps the law spans at
    /// most `j·max b + 1` points, and with truncation at `2^-tau_bits` about `2z·σ·√j` plus a
    /// step ([`RatioLattice::estimated_points`]; sums over j taken as integrals).
    pub fn estimated_work(&self, n: usize, w0: &[f64], tau_bits: Option<u32>) -> f64 {
        let (d, span, n_f) = (self.offsets.len() as f64, self.span() as f64, n as f64);
        let laws = match self.spread(w0, tau_bits) {
            // Widths `span·j` up to the crossing `j = c`, then `spread·√j`.
            Some(spread) if span > 0.0 => {
                let c = (spread / span).powi(2).min(n_f);
                span * c * c / 2.0 + spread * (2.0 / 3.0) * (n_f.powf(1.5) - c.powf(1.5))
            }
            _ => span * n_f * n_f / 2.0,
        } + (span + 1.0) * n_f;
        d * laws + 2.0 * d * self.estimated_points(n, w0, tau_bits)
    }

    /// About how many lattice points the pair over n users stores: at most `n·max b + 1`, and
    /// with truncation about `2z·σ·√n` plus a step.
    pub fn estimated_points(&self, n: usize, w0: &[f64], tau_bits: Option<u32>) -> f64 {
        let full = self.span() as f64 * n as f64 + 1.0;
        match self.spread(w0, tau_bits) {
            Some(spread) => full.min(spread * (n as f64).sqrt() + self.span() as f64 + 1.0),
            None => full,
        }
    }

    /// `2z·σ` with `σ²` the variance of `b_Y` under `w0` (doubles) and `z = √(2·tau·ln 2)`
    /// standard deviations (`None` without truncation).
    fn spread(&self, w0: &[f64], tau_bits: Option<u32>) -> Option<f64> {
        let mean: f64 = w0
            .iter()
            .zip(&self.offsets)
            .map(|(w, &b)| w * b as f64)
            .sum();
        let var: f64 = w0
            .iter()
            .zip(&self.offsets)
            .map(|(w, &b)| w * (b as f64 - mean).powi(2))
            .sum();
        tau_bits.map(|t| 2.0 * (2.0 * f64::from(t) * std::f64::consts::LN_2).sqrt() * var.sqrt())
    }

    /// `L_{n,0}` at lattice point `s` of the pair over n users.
    pub fn ratio_at(&self, n: usize, s: usize) -> Rational {
        let n = Integer::from(n);
        Rational::from((
            Integer::from(&n * &self.a_min) + Integer::from(&self.g * s),
            n * &self.denominator,
        ))
    }

    /// The pair `(T_{n,0}, T_{n,1})` on the lattice (`n ≥ 1`), the law of n − 1 users' lattice
    /// sums built step by step and trimmed below `2^-tau_bits` of its largest value.
    pub fn pair<S: Scalar>(
        &self,
        n: usize,
        channel: &Channel<S>,
        tau_bits: Option<u32>,
        ctx: &S::Ctx,
    ) -> PairLaw<S> {
        let mut h = WindowLaw {
            start: 0,
            values: vec![S::one(ctx)],
            omitted: Rational::new(),
        };
        for _ in 1..n {
            h = trim(self.step(&h, &channel.w[0], ctx), tau_bits, ctx);
        }
        let p = self.step(&h, &channel.w[0], ctx);
        let q = self.step(&h, &channel.w[1], ctx);
        let (ratio_lo, ratio_hi) = ratio_range(channel);
        PairLaw {
            p: p.values,
            q: q.values,
            omitted: h.omitted,
            ratio_lo,
            ratio_hi,
            layout: Layout::Ratio {
                n,
                start: p.start,
                lattice: std::sync::Arc::new(self.clone()),
            },
            omission: Omission::of_group(channel, n - 1, 0, 1, ctx),
        }
    }

    /// One more user with output law `w` on the lattice: `H'(s) = Σ_y w(y) H(s − b_y)`.
    fn step<S: Scalar>(&self, h: &WindowLaw<S>, w: &[S], ctx: &S::Ctx) -> WindowLaw<S> {
        let mut values = vec![S::zero(ctx); h.values.len() + self.span()];
        for (weight, &b) in w.iter().zip(&self.offsets) {
            if weight.is_exact_zero() {
                continue;
            }
            for (out, v) in values[b..].iter_mut().zip(&h.values) {
                if !v.is_exact_zero() {
                    out.add_mul_assign(weight, v);
                }
            }
        }
        WindowLaw {
            start: h.start,
            values,
            omitted: h.omitted.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::exact::curve::{Direction, delta};
    use crate::exact::pair::{Engine, PairOptions, pair_law};
    use crate::mechanism::parse::load_mechanism;

    fn fixture(name: &str) -> Mechanism {
        load_mechanism(&format!(
            "{}/fixtures/mechanisms/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn the_lattice_of_the_ternary_channel() {
        // r = (3/14, 11/4, 3) = (6, 77, 84)/28: steps (0, 71, 78), gcd 1.
        let lattice = RatioLattice::of(&fixture("ternary")).unwrap();
        assert_eq!(lattice.offsets, vec![0, 71, 78]);
        assert_eq!(lattice.ratio_at(1, 71), Rational::from((77, 28)));
    }

    #[test]
    fn exact_lattice_pair_has_the_histogram_pairs_curve() {
        // ternary.toml; one-sided.toml, whose W1 has a zero (P keeps a singular mass).
        let ctx = ExactCtx::default();
        let options = PairOptions {
            engine: Engine::General,
            ..PairOptions::default()
        };
        for name in ["ternary", "one-sided"] {
            let m = fixture(name);
            let lattice = RatioLattice::of(&m).unwrap();
            let channel = m.channel::<Rational>(&ctx).unwrap();
            for n in [1usize, 2, 5, 9] {
                let reduced = lattice.pair::<Rational>(n, &channel, None, &ctx);
                let full = pair_law::<Rational>(&m, n as u64, 0, &options, &ctx).unwrap();
                let checked =
                    crate::exact::canonical::cross_check_canonical(&reduced, &channel, 1, &ctx);
                assert!(checked.unwrap() > 0);
                for eps in [Rational::new(), Rational::from((1, 2)), Rational::from(2)] {
                    for dir in [Direction::Qp, Direction::Pq] {
                        let a = delta(&reduced, dir, &eps, &ctx);
                        let b = delta(&full, dir, &eps, &ctx);
                        assert_eq!(a, b, "{name}, n = {n}, eps = {eps}, {dir:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn estimates_are_finite_with_and_without_truncation() {
        let lattice = RatioLattice::of(&fixture("ternary")).unwrap();
        let w0 = [0.7, 0.2, 0.1];
        for tau in [None, Some(100)] {
            let (work, points) = (
                lattice.estimated_work(2000, &w0, tau),
                lattice.estimated_points(2000, &w0, tau),
            );
            assert!(work.is_finite() && work > 0.0, "{tau:?}: {work}");
            assert!(
                points.is_finite() && points <= 2000.0 * 78.0 + 1.0,
                "{tau:?}: {points}"
            );
        }
        // Untruncated: every point of every step, about d·span·n²/2 products.
        let work = lattice.estimated_work(2000, &w0, None);
        assert!(work >= 3.0 * 78.0 * 2000.0 * 1999.0 / 2.0);
    }

    #[test]
    fn a_zero_in_w0_or_a_real_entry_has_no_lattice() {
        let m = load_mechanism("binary-rr:eps0=1").unwrap();
        assert!(RatioLattice::of(&m).is_none());
        let exact = |q: (i32, i32)| crate::mechanism::Entry::Exact(Rational::from(q));
        let zero = Mechanism::new(
            "test",
            "W0 never reports a".into(),
            None,
            [
                vec![exact((0, 1)), exact((1, 1))],
                vec![exact((1, 2)), exact((1, 2))],
            ],
            None,
        );
        assert!(RatioLattice::of(&zero.unwrap()).is_none());
    }
}
