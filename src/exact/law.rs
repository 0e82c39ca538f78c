//! [`PairLaw`]: two laws `(P, Q)` on a common finite list of states, as enclosures — what every
//! privacy curve and divergence is computed on.
//!
//! The pair of a shuffled mechanism, `(T_{n,k}, T_{n,k+1})`, lives on histograms
//! ([`Layout::Binary`], [`Layout::General`], [`Layout::Window`]); the reduced experiments behind published
//! amplification bounds (the clone and variation-ratio count pairs) live on states that are not
//! histograms of the mechanism ([`Layout::Reduced`]).  The curves of `exact::curve` and the
//! divergences of `exact::divergence` need only the two lists, the omitted mass and the
//! likelihood-ratio range.

use super::group::singular_masses;
use super::histogram::SimplexIndex;
use super::ratio_sum::RatioLattice;
use super::window::WindowSet;
use crate::arith::Scalar;
use crate::enclosure::Enclosure;
use crate::mechanism::Channel;
use rug::Rational;
use std::sync::Arc;

/// Where the states of a [`PairLaw`] live.
#[derive(Clone, Debug)]
pub enum Layout {
    /// State i is the binary histogram of n outputs with `K = start + i` ones.
    Binary { n: usize, start: usize },
    /// State i is the histogram of size n with rank i in the index.
    General { n: usize, index: Arc<SimplexIndex> },
    /// State i is the i-th histogram of a window of histograms of size n.
    Window { n: usize, set: Arc<WindowSet> },
    /// State i is the lattice point `start + i` of the canonical ratio at k = 0
    /// (`exact::ratio_sum`): the histograms of n users with `L_{n,0} = lattice.ratio_at(n, start + i)`.
    Ratio {
        n: usize,
        start: usize,
        lattice: Arc<RatioLattice>,
    },
    /// The states of a reduced experiment: they carry no histogram of the mechanism.
    Reduced,
    /// State i is the lattice point `points[i] / scale` of a limit experiment (Part III).
    Lattice {
        points: Arc<Vec<Vec<i64>>>,
        scale: rug::Integer,
    },
}

/// Two laws `P`, `Q` on a common list of states, each value an enclosure.
///
/// When `omitted > 0` the lists are truncated: the true laws are `P = p + P_d`, `Q = q + Q_d`
/// with `P_d, Q_d ≥ 0` each of total mass at most `omitted`, and with `Q_d/P_d` pointwise in
/// the ratio range (for a mechanism's pair they come from the omitted part of `T_{n−1,k}`
/// through the same shift).
#[derive(Clone, Debug)]
pub struct PairLaw<S> {
    pub p: Vec<S>,
    pub q: Vec<S>,
    pub omitted: Rational,
    /// `[ratio_lo, ratio_hi]` contains every value of the likelihood ratio `L = Q/P` (hi = +∞
    /// when `None`).  For a mechanism's pair it is `[min_y w(y), max_y w(y)]` with
    /// `w = W1/W0`: L is a conditional expectation of `w(Y*)` (Part I (6)).
    pub ratio_lo: Rational,
    pub ratio_hi: Option<Rational>,
    pub layout: Layout,
    /// What is known about the omitted part beyond its mass.
    pub omission: Omission,
}

/// What is known about a truncated pair's omitted part beyond its mass (the default assumes
/// nothing more than the contract of [`PairLaw`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Omission {
    /// The stored values enclose the true `P` and `Q` on the stored states, so the omitted
    /// parts `P_d`, `Q_d` live only on states that are not stored (the limit experiments of
    /// `limits::experiment`).
    pub disjoint: bool,
    /// `Some(λ)`: the likelihood ratio is a conditional size-bias ratio of a Poisson count,
    /// `L(x) = E_P[C/λ | x]` with `C ~ Poi(λ)` (Part III's jump shifts, where `Q = L(J + v)`
    /// and `v` is a jump of intensity λ).  It bounds the ratio's moments on the omitted states
    /// (see `exact::divergence`).
    pub size_bias_qp: Option<Rational>,
    /// The same for the reverse ratio `P/Q`.
    pub size_bias_pq: Option<Rational>,
    /// The true laws' singular masses `[Q(P = 0), P(Q = 0)]`, in closed form for a mechanism's
    /// pair ([`singular_masses`]): a truncated pair's stored zeros can be truncation's, so the
    /// stored lists alone do not give them.  `None`: the stored zeros are the true ones.
    pub singular: Option<[Enclosure; 2]>,
}

impl Omission {
    /// What is known about the pair of a group of `zeros` W0-draws and `ones` W1-draws and a
    /// distinguished user sending `messages` draws: its singular masses.
    pub fn of_group<S: Scalar>(
        channel: &Channel<S>,
        zeros: usize,
        ones: usize,
        messages: usize,
        ctx: &S::Ctx,
    ) -> Self {
        Omission {
            singular: Some(singular_masses(channel, zeros, ones, messages, ctx)),
            ..Default::default()
        }
    }
}

impl<S: Scalar> PairLaw<S> {
    /// Number of stored states.
    pub fn len(&self) -> usize {
        self.p.len()
    }

    pub fn is_empty(&self) -> bool {
        self.p.is_empty()
    }

    /// The histogram `(N_0, …, N_{d−1})` of state i (`None` for a reduced experiment).
    pub fn histogram(&self, i: usize) -> Option<Vec<u64>> {
        match &self.layout {
            Layout::Binary { n, start } => {
                let k = (start + i) as u64;
                Some(vec![*n as u64 - k, k])
            }
            Layout::General { n, index } => Some(index.histogram(*n, i)),
            Layout::Window { set, .. } => Some(set.histogram(i)),
            Layout::Reduced | Layout::Lattice { .. } | Layout::Ratio { .. } => None,
        }
    }

    /// The same pair with every value mapped (e.g. into another backend).
    pub fn map<T>(&self, f: impl Fn(&S) -> T) -> PairLaw<T> {
        PairLaw {
            p: self.p.iter().map(&f).collect(),
            q: self.q.iter().map(&f).collect(),
            omitted: self.omitted.clone(),
            ratio_lo: self.ratio_lo.clone(),
            ratio_hi: self.ratio_hi.clone(),
            layout: self.layout.clone(),
            omission: self.omission.clone(),
        }
    }

    /// The pair in the backend that evaluates elementary functions of `S`.
    pub fn to_elementary(&self, ctx: &S::Ctx) -> PairLaw<S::Elementary> {
        self.map(|x| x.to_elementary(ctx))
    }

    /// True when nothing was truncated.
    pub fn is_complete(&self) -> bool {
        self.omitted == 0
    }

    /// The pair in the other order, `(Q, P)`: its likelihood ratio is `1/L`, in
    /// `[1/ratio_hi, 1/ratio_lo]` (0 and +∞ where an end is +∞ or 0).  The omitted parts swap
    /// too, so the truncation contract carries over.
    pub fn reversed(&self) -> PairLaw<S> {
        let ratio_lo = match &self.ratio_hi {
            Some(h) if *h > 0 => Rational::from(h.recip_ref()),
            // hi = +∞ gives 1/hi = 0; hi = 0 means P and Q share no state, any lower bound holds.
            _ => Rational::new(),
        };
        let ratio_hi = (self.ratio_lo > 0).then(|| Rational::from(self.ratio_lo.recip_ref()));
        PairLaw {
            p: self.q.clone(),
            q: self.p.clone(),
            omitted: self.omitted.clone(),
            ratio_lo,
            ratio_hi,
            layout: self.layout.clone(),
            omission: Omission {
                disjoint: self.omission.disjoint,
                size_bias_qp: self.omission.size_bias_pq.clone(),
                size_bias_pq: self.omission.size_bias_qp.clone(),
                singular: self.omission.singular.clone().map(|[qp, pq]| [pq, qp]),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::exact::pair::{PairOptions, pair_law};
    use crate::mechanism::load_mechanism;

    #[test]
    fn reversing_swaps_the_laws_and_inverts_the_ratio_range() {
        let m = load_mechanism("binary-rr:exp_eps0=3").unwrap();
        let law =
            pair_law::<Rational>(&m, 4, 1, &PairOptions::default(), &ExactCtx::default()).unwrap();
        let r = law.reversed();
        assert_eq!(r.p, law.q);
        assert_eq!(r.q, law.p);
        assert_eq!(law.ratio_lo, Rational::from((1, 3)));
        assert_eq!(r.ratio_lo, Rational::from((1, 3)));
        assert_eq!(r.ratio_hi, Some(Rational::from(3)));
        for (p, q) in r.p.iter().zip(&r.q) {
            let l = Rational::from(q / p);
            assert!(r.ratio_lo <= l && l <= *r.ratio_hi.as_ref().unwrap());
        }
        // An unbounded ratio (W0(y) = 0 < W1(y)) reverses to a zero lower end.
        let one_sided = PairLaw {
            ratio_lo: Rational::new(),
            ratio_hi: None,
            ..law
        };
        let r = one_sided.reversed();
        assert_eq!(r.ratio_lo, 0);
        assert_eq!(r.ratio_hi, None);
    }
}
