//! `shufflecert limit`: a mechanism sequence against its Part III limit.  For each n, the
//! certified finite-n δ (pair engine) beside the certified limit δ of the projected jump
//! experiment `(L(J), L(J + Δ))`, their enclosed gap, `n·gap`, `√n·gap` and the order observed
//! between consecutive n, next to the order the paper proves (a prediction: its constants are
//! not explicit).
//!
//! For single-dominant sequences (`|D_0| = |D_1| = 1`, so `Π_J = I`) the centered histogram is
//! exactly `Σ_b Σ_{y rare} X_{b,y} j_{b,y}` (plus Δ under Q), with `X_b` the multinomial rare
//! counts of group b, while the limit replaces them by independent Poisson counts.  A TV budget
//! for that replacement (Barbour–Hall for one rare output, the per-trial bound of Part III §5
//! otherwise, plus the Poisson mean perturbation) turns the limit curve into a certified
//! enclosure of the finite-n δ by Lemma 2.4 — Deliver 1(b), checked against the exact value.

use super::experiment::{ExperimentQuery, LimitExperiment, Model, answer};
use super::geometry::{Coverage, Geometry, coverage};
use super::lattice::{self, CompoundPoisson};
use super::sequence::{KRule, MechanismSequence};
use super::tv::{
    barbour_hall_binomial_bits, curve_transfer, per_trial_poisson_bits,
    poisson_mean_perturbation_bits,
};
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental};
use crate::enclosure::Enclosure;
use crate::error::{Error, Result};
use crate::exact::pair::PairOptions;
use crate::progress::Stage;
use crate::query::{Backend, DeltaJob, DeltaRow, PairQuery, Threshold};
use rug::Rational;
use serde_json::json;

/// A TV budget from the finite-n pair to the limit pair: `TV(P_n, P_∞) ≤ tv_p`,
/// `TV(Q_n, Q_∞) ≤ tv_q`.
#[derive(Clone, Debug)]
pub struct Budget {
    pub tv_p: Rational,
    pub tv_q: Rational,
}

/// One n of the study.
#[derive(Clone, Debug)]
pub struct StudyRow {
    pub n: u64,
    pub k: u64,
    /// The certified finite-n δ at each threshold, both directions.
    pub finite: Vec<DeltaRow>,
    /// How `finite` was computed.
    pub provenance: Provenance,
    /// `|δ_n − δ_∞|` per threshold, `[qp, pq]`, enclosed (empty when no limit is printed).
    pub gap: Vec<[Enclosure; 2]>,
    /// The TV budget and the limit-based enclosure of δ_n per threshold, `[qp, pq]`
    /// (single-dominant only).
    pub transfer: Option<(Budget, Vec<[Transfer; 2]>)>,
    /// Theorem 7.2's auxiliary comparison in each two-output dominant block reached by cross
    /// messages.
    pub auxiliary: Vec<Auxiliary>,
}

/// How a curve was computed (for reports and certificates).
#[derive(Clone, Debug)]
pub struct Provenance {
    /// e.g. `interval`, `mpfr-256`.
    pub arithmetic: String,
    pub engine: &'static str,
    pub states: usize,
    /// The certified bound on the mass truncation left out.
    pub omitted: Rational,
}

impl Provenance {
    pub fn of<R>(c: &crate::query::Computed<R>) -> Self {
        Provenance {
            arithmetic: c.arithmetic.clone(),
            engine: c.engine,
            states: c.states,
            omitted: c.omitted.clone(),
        }
    }
}

/// The finite-n δ from the limit curve (Lemma 2.4).
#[derive(Clone, Debug)]
pub struct Transfer {
    /// The certified enclosure of δ_n.
    pub delta: Enclosure,
    /// `TV(Q_n, Q_∞) + e^ε TV(P_n, P_∞)` (roles swapped for the reverse curve).
    pub budget: Rational,
    /// The budget is below the limit δ's lower end: δ_n is then certified positive.
    pub useful: bool,
}

impl Transfer {
    fn of(limit: &Enclosure, tv_upper: &Rational, tv_lower: &Rational, c: &Rational) -> Self {
        let (delta, budget) = curve_transfer(limit, tv_upper, tv_lower, c);
        let useful = matches!(limit.lo(), crate::enclosure::Endpoint::Finite(x) if *x > budget);
        Transfer {
            delta,
            budget,
            useful,
        }
    }
}

/// The auxiliary comparison of Theorem 7.2 in block `D_b` (disjoint, `|D_b| = 2`): on the
/// event of one cross message, the block is `S + Ber(q)` in the true experiment and
/// `S + Ber(p)` in the common-factor one, `S ~ Bin(m, p)` with m the native users, p the
/// native split and q the cross split; Theorem 7.1 gives `TV = |q − p| max_j P(S = j)` exactly.
#[derive(Clone, Debug)]
pub struct Auxiliary {
    pub block: usize,
    pub m: u64,
    pub p: Rational,
    pub q: Rational,
    pub tv: Enclosure,
}

/// The auxiliary comparisons at (n, k) (see [`Auxiliary`]).
pub fn auxiliary(g: &Geometry, n: u64, k: u64) -> Vec<Auxiliary> {
    if g.overlap() != super::geometry::Overlap::Disjoint {
        return Vec::new();
    }
    (0..2)
        .filter_map(|b| {
            let block = &g.dominant[b];
            let cross: Rational = block.iter().map(|&y| g.alpha[1 - b][y].clone()).sum();
            if block.len() != 2 || cross == 0 {
                return None;
            }
            let m = if b == 0 { n - k } else { k };
            let p = g.p[b][block[0]].clone();
            let q = Rational::from(&g.alpha[1 - b][block[0]] / &cross);
            let tv =
                super::tv::binomial_plus_bernoulli_tv::<inari::Interval>(m as usize, &p, &q, &());
            Some(Auxiliary {
                block: b,
                m,
                p,
                q,
                tv,
            })
        })
        .collect()
}

/// The whole study.
#[derive(Clone, Debug)]
pub struct Study {
    pub sequence: MechanismSequence,
    pub rule: KRule,
    pub geometry: Geometry,
    pub coverage: Coverage,
    pub thresholds: Vec<Threshold>,
    /// The limit δ per threshold (None when Theorem 3.1(iii) does not cover the sequence).
    pub limit: Option<Vec<DeltaRow>>,
    /// The limit pair `(L(J), L(J + Δ))` the limit δ is computed on, and how.
    pub limit_pair: Option<(CompoundPoisson, Provenance)>,
    /// True when the limit pair and the transfer were computed on the sufficiency-reduced
    /// alphabet.
    pub limit_on_reduced: bool,
    /// True when the geometry describes the sufficiency-reduced sequence (large alphabets).
    pub geometry_on_reduced: bool,
    /// Per threshold: a limit likelihood ratio equals `e^{±ε}` within 2^-200 (resonant ε).
    pub resonant: Vec<bool>,
    pub rows: Vec<StudyRow>,
}

/// The limit pair as an experiment to query.
pub fn limit_experiment(pair: &CompoundPoisson) -> LimitExperiment {
    LimitExperiment {
        name: "projected jump limit (L(J), L(J + Δ))".into(),
        kind: "compound-poisson",
        model: Model::Lattice(pair.clone()),
        parameters: json!({}),
        file: None,
    }
}

/// The limit pair's δ at the thresholds (interval backend with escalation), and how it was
/// computed.
fn limit_curve(
    pair: &CompoundPoisson,
    thresholds: &[Threshold],
) -> Result<(Vec<DeltaRow>, Provenance)> {
    let query = ExperimentQuery {
        experiment: limit_experiment(pair),
        backend: Backend::Interval,
        escalate_above: Some(1e-9),
    };
    let computed = answer(
        &query,
        &DeltaJob {
            thresholds: thresholds.to_vec(),
        },
    )?;
    let provenance = Provenance::of(&computed);
    Ok((computed.result, provenance))
}

/// Whether some likelihood ratio of the limit pair equals `e^{±ε}` within 2^-200, per
/// threshold (computed in 256-bit MPFR).
pub fn resonances(pair: &CompoundPoisson, thresholds: &[Threshold]) -> Result<Vec<bool>> {
    let ctx = MpfrCtx { precision: 256 };
    let law = lattice::pair_law::<MpfrInterval>(pair, &ctx)?;
    let ratios: Vec<MpfrInterval> = law
        .p
        .iter()
        .zip(&law.q)
        .filter(|(p, q)| !p.is_exact_zero() && !q.is_exact_zero())
        .map(|(p, q)| q.div(p))
        .collect();
    let tolerance = rug::Float::with_val(256, rug::Float::i_exp(1, -200));
    Ok(thresholds
        .iter()
        .map(|t| {
            let c = match t {
                Threshold::Eps(e) => MpfrInterval::from_rational(e, &ctx).exp(),
                Threshold::ExpEps(c) => MpfrInterval::from_rational(c, &ctx),
            };
            let inv = MpfrInterval::one(&ctx).div(&c);
            ratios.iter().any(|r| {
                [&c, &inv].iter().any(|x| {
                    let d = r.sub(x);
                    let m = d.lo().clone().abs().max(&d.hi().clone().abs());
                    (d.lo() <= &0 && d.hi() >= &0) || m <= tolerance.clone() * r.hi()
                })
            })
        })
        .collect())
}

/// The TV budget of the single-dominant replacement at (n, k) (module doc), or `None` when
/// the sequence is not single-dominant.
pub fn single_dominant_budget(
    g: &Geometry,
    seq: &MechanismSequence,
    n: u64,
    k: u64,
) -> Result<Option<Budget>> {
    single_dominant_budget_bits(g, seq, n, k, super::tv::EXP_BITS)
}

/// [`single_dominant_budget`] with every exponential bracketed in `bits`-bit MPFR (`verify`
/// recomputes it finer).
pub fn single_dominant_budget_bits(
    g: &Geometry,
    seq: &MechanismSequence,
    n: u64,
    k: u64,
    bits: u32,
) -> Result<Option<Budget>> {
    if g.dominant.iter().any(|d| d.len() != 1) {
        return Ok(None);
    }
    let rows = seq
        .at(n)?
        .rational_rows()
        .ok_or_else(|| Error::Internal("a sequence's mechanism has rational rows".into()))?;
    let weight = [1 - g.pi.clone(), g.pi.clone()];
    let group_tv = |b: usize, m: u64| -> Rational {
        let rare: Vec<usize> = (0..g.d).filter(|y| !g.dominant[b].contains(y)).collect();
        let total: Rational = rare.iter().map(|&y| rows[b][y].clone()).sum();
        let approximation = if rare.len() == 1 {
            barbour_hall_binomial_bits(m, &total, bits)
        } else {
            per_trial_poisson_bits(m, &total, bits)
        };
        let perturbation: Rational = rare
            .iter()
            .map(|&y| {
                poisson_mean_perturbation_bits(
                    &Rational::from(&rows[b][y] * m),
                    &Rational::from(&weight[b] * &g.alpha[b][y]),
                    bits,
                )
            })
            .sum();
        approximation + perturbation
    };
    let cap = |x: Rational| x.min(Rational::from(1));
    Ok(Some(Budget {
        tv_p: cap(group_tv(0, n - k) + group_tv(1, k)),
        tv_q: cap(group_tv(0, n - k - 1) + group_tv(1, k + 1)),
    }))
}

/// The per-n transfer of Lemma 2.4: each limit δ widened by the budget (`[qp, pq]` per
/// threshold), `c` the upper end of `e^ε` for each row.
pub fn transfers(
    limit: &[DeltaRow],
    budget: &Budget,
    c: impl Fn(&Threshold) -> Rational,
) -> Vec<[Transfer; 2]> {
    limit
        .iter()
        .map(|row| {
            let c = c(&row.threshold);
            [
                Transfer::of(&row.qp, &budget.tv_q, &budget.tv_p, &c),
                Transfer::of(&row.pq, &budget.tv_p, &budget.tv_q, &c),
            ]
        })
        .collect()
}

/// The largest alphabet whose geometry is computed (exact d × d projections).
const MAX_GEOMETRY_OUTPUTS: usize = 64;

/// What a study computes on before any n: the geometry of the sequence described (the
/// sufficiency-reduced one for large alphabets), its coverage, and the sequence and geometry
/// the limit pair and the transfer run on.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The sequence the geometry describes (the sufficiency-reduced one when
    /// `geometry_on_reduced`).
    pub described: MechanismSequence,
    pub geometry: Geometry,
    pub geometry_on_reduced: bool,
    pub coverage: Coverage,
    pub working: MechanismSequence,
    pub working_geometry: Geometry,
    pub limit_on_reduced: bool,
}

/// The study's setup (exact; see [`Setup`]).
pub fn setup(sequence: &MechanismSequence, rule: &KRule) -> Result<Setup> {
    // The exact geometry is cubic in the alphabet: large alphabets are described by their
    // sufficiency-reduced sequence (same finite-n curves), and refused when that is large too.
    let (described, geometry_on_reduced) = if sequence.d() > MAX_GEOMETRY_OUTPUTS {
        match sequence.reduced() {
            Some(r) if r.d() <= MAX_GEOMETRY_OUTPUTS => (r, true),
            _ => {
                return Err(Error::argument(
                    "--family",
                    format!(
                        "{} outputs after merging equal likelihood ratios: the exact geometry handles at most {MAX_GEOMETRY_OUTPUTS}",
                        sequence.reduced().map_or(sequence.d(), |r| r.d())
                    ),
                ));
            }
        }
    } else {
        (sequence.clone(), false)
    };
    let geometry = Geometry::of(&described, &rule.pi())?;
    let coverage = coverage(&geometry, rule);
    // The limit pair and the TV transfer run on the sufficiency-reduced sequence when it is
    // smaller and covered too (identical finite-n curves, fewer jumps); the geometry and its
    // classification are reported for the sequence described.
    let working = described.reduced().filter(|r| {
        Geometry::of(r, &rule.pi())
            .is_ok_and(|g| super::geometry::coverage(&g, rule).part.is_some())
    });
    let limit_on_reduced = working.is_some() || geometry_on_reduced;
    let working = working.unwrap_or_else(|| described.clone());
    let working_geometry = Geometry::of(&working, &rule.pi())?;
    Ok(Setup {
        described,
        geometry,
        geometry_on_reduced,
        coverage,
        working,
        working_geometry,
        limit_on_reduced,
    })
}

/// Runs the study at each n.
pub fn study(
    sequence: MechanismSequence,
    rule: KRule,
    ns: &[u64],
    thresholds: Vec<Threshold>,
) -> Result<Study> {
    let Setup {
        described: _,
        geometry,
        geometry_on_reduced,
        coverage: cover,
        working,
        working_geometry,
        limit_on_reduced,
    } = setup(&sequence, &rule)?;
    let (limit, limit_pair, resonant) = if cover.part.is_some() {
        let pair = working_geometry.limit_pair()?;
        let (rows, provenance) = limit_curve(&pair, &thresholds)?;
        let resonant = resonances(&pair, &thresholds)?;
        (Some(rows), Some((pair, provenance)), resonant)
    } else {
        (None, None, vec![false; thresholds.len()])
    };
    let mut rows = Vec::new();
    let progress = Stage::start("limit", "sizes n", ns.len() as u64);
    for &n in ns {
        let k = rule.k(n)?;
        let query = PairQuery {
            mechanism: sequence.at(n)?,
            n,
            k,
            options: PairOptions::default(),
            backend: Backend::Interval,
            exact_ctx: Default::default(),
            escalate_above: Some(1e-9),
        };
        let computed = crate::query::answer(
            &query,
            &DeltaJob {
                thresholds: thresholds.clone(),
            },
        )?;
        let provenance = Provenance::of(&computed);
        let finite = computed.result;
        let gaps = match &limit {
            Some(l) => finite
                .iter()
                .zip(l)
                .map(|(f, l)| [f.qp.distance(&l.qp), f.pq.distance(&l.pq)])
                .collect(),
            None => Vec::new(),
        };
        let transfer = match &limit {
            Some(l) => single_dominant_budget(&working_geometry, &working, n, k)?.map(|budget| {
                let widened = transfers(l, &budget, Threshold::exp_upper_bound);
                (budget, widened)
            }),
            None => None,
        };
        rows.push(StudyRow {
            n,
            k,
            finite,
            provenance,
            gap: gaps,
            transfer,
            auxiliary: auxiliary(&geometry, n, k),
        });
        progress.advance(1);
    }
    Ok(Study {
        sequence,
        rule,
        geometry,
        geometry_on_reduced,
        coverage: cover,
        thresholds,
        limit,
        limit_pair,
        limit_on_reduced,
        resonant,
        rows,
    })
}

/// The order `−log(gap_i/gap_j)/log(n_i/n_j)` observed between rows `j = i − 1` and i at
/// threshold t in direction dir (`None` when a gap is not resolved away from 0).
pub fn observed_order(rows: &[StudyRow], i: usize, t: usize, dir: usize) -> Option<f64> {
    if i == 0 || rows[i].gap.is_empty() {
        return None;
    }
    let (a, b) = (&rows[i - 1], &rows[i]);
    order_between(&a.gap[t][dir], a.n, &b.gap[t][dir], b.n)
}

/// The order `−log(gb/ga)/log(nb/na)` observed between the gaps `ga` at `na` and `gb` at `nb`
/// (`None` when a gap is not resolved away from 0): an observation in doubles, not a
/// certificate.
pub fn order_between(ga: &Enclosure, na: u64, gb: &Enclosure, nb: u64) -> Option<f64> {
    if ga.lo().to_f64() <= 0.0 || gb.lo().to_f64() <= 0.0 {
        return None;
    }
    Some(-(gb.mid_f64() / ga.mid_f64()).ln() / (nb as f64 / na as f64).ln())
}
