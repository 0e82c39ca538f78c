//! The privacy profile of the shuffled mechanism: the worst case over all compositions.
//!
//! By exchangeability (Part I §2.1) every neighbouring pair of datasets induces
//! `(T_{n,k}, T_{n,k+1})` for some `k ∈ {0, …, n−1}`, in one order or the other, so
//!
//! `δ_M(ε) = max_k max(δ_{T_{n,k+1}‖T_{n,k}}(ε), δ_{T_{n,k}‖T_{n,k+1}}(ε))`,
//!
//! and the smallest ε with `δ_M(ε) ≤ D` is `max_k ε_k` with `ε_k` the two-sided ε of pair k.
//! Nothing is assumed about which k is worst.
//!
//! **Scan.** A divide-and-conquer tree over k: the node for `[lo, hi)` holds the law `C` of a
//! group of `n − hi` W0-users and `lo` W1-users; its children add `hi − mid` W0-users (left,
//! `[lo, mid)`) or `mid − lo` W1-users (right, `[mid, hi)`), so neighbouring k share their
//! convolutions.  At a leaf `[k, k+1)` the group is exactly `T_{n−1,k}`.
//!
//! **Pruning (branch and bound).** For every k in `[lo, hi)`,
//! `T_{n,k} = (C ⊛ W0) ⊛ V_k` and `T_{n,k+1} = (C ⊛ W1) ⊛ V_k` with `V_k` the law of the
//! remaining `hi − 1 − k` W0-users and `k − lo` W1-users, independent of the distinguished
//! user.  Convolving both laws with `V_k` is one Markov kernel, so by the data-processing
//! inequality for the hockey-stick divergence both curves of pair k lie below those of the
//! node pair `(C ⊛ W0, C ⊛ W1) = (T_{m,lo}, T_{m,lo+1})`, `m = n − (hi − lo) + 1`.  A node
//! whose certified upper bound cannot reach the best certified lower bound found so far is
//! dropped with its whole range of k (strictly below, so ties are never dropped).

use crate::arith::Scalar;
use crate::arith::exact::ExactCtx;
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::enclosure::{Enclosure, Endpoint, Tri};
use crate::error::{Error, Result};
use crate::exact::curve::{self, Direction, epsilon_for_delta};
use crate::exact::group::{BinaryGroup, GeneralGroup, GroupLaw};
use crate::exact::histogram::SimplexIndex;
use crate::exact::law::PairLaw;
use crate::exact::pair::{PairOptions, check_composition, check_memory, plan};
use crate::mechanism::{Channel, Mechanism};
use crate::query::{Backend, DeltaJob, EpsilonJob, PairQuery, Threshold, answer};
use inari::Interval;
use rug::Rational;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the profile is asked for.
#[derive(Clone, Debug)]
pub enum ProfileQuestion {
    /// `δ_M` at each threshold.
    Deltas(Vec<Threshold>),
    /// The smallest ε with `δ_M(ε) ≤ D`.
    Epsilon(Rational),
}

/// A profile computation.
#[derive(Clone, Debug)]
pub struct ProfileQuery {
    pub mechanism: Mechanism,
    pub n: u64,
    /// Restrict the scan to `k ∈ [a, b]` (a partial profile).
    pub k_range: Option<(u64, u64)>,
    pub question: ProfileQuestion,
    pub options: PairOptions,
    pub backend: Backend,
    pub exact_ctx: ExactCtx,
    /// Branch and bound on (default); off scans every k (for cross-checks).
    pub prune: bool,
    /// With the interval backend: refine the maximising pairs with the pair engine when the
    /// profile's relative width exceeds this.
    pub escalate_above: Option<f64>,
}

/// One composition and direction with its certified value.
#[derive(Clone, Debug)]
pub struct KValue {
    pub k: u64,
    pub direction: Direction,
    pub value: Enclosure,
}

/// `δ_M` at one threshold.
#[derive(Clone, Debug)]
pub struct DeltaProfileRow {
    pub threshold: Threshold,
    pub delta: Enclosure,
    /// Every (k, direction) whose certified upper bound reaches the lower bound of `delta`.
    pub argmax: Vec<KValue>,
    /// False when the maximum's certified lower bound is 0 while its upper bound is not: δ_M
    /// lies below this computation's resolution (truncation or f64 underflow), so every k may
    /// attain it and pruning cannot help; `--no-truncation` or `--backend mpfr` resolve it.
    pub resolved: bool,
}

/// The answer.
#[derive(Clone, Debug)]
pub enum ProfileAnswer {
    Deltas(Vec<DeltaProfileRow>),
    Epsilon { eps: Enclosure, argmax: Vec<KValue> },
}

/// Work done by the scan.
#[derive(Clone, Debug, Default)]
pub struct ProfileStats {
    /// Pairs evaluated in full at a leaf.
    pub pairs_evaluated: u64,
    /// Values of k dropped by the data-processing bound without their own pair.
    pub k_pruned: u64,
    /// Tree nodes whose bound was evaluated.
    pub nodes_bounded: u64,
    /// Maximising pairs recomputed with the pair engine to tighten the result.
    pub pairs_refined: u64,
}

/// A profile with how it was obtained.
#[derive(Clone, Debug)]
pub struct Profile {
    pub answer: ProfileAnswer,
    pub stats: ProfileStats,
    /// The scanned range `[a, b]` of k; `partial` when it is not `[0, n−1]`.
    pub k_range: (u64, u64),
    pub partial: bool,
    pub arithmetic: String,
    pub engine: &'static str,
    /// Every pair evaluated in full (pruned k have none).
    pub records: Vec<LeafRecord>,
}

/// Runs the profile; `progress` is told how many values of k each step resolves.
pub fn profile(query: &ProfileQuery, progress: &(dyn Fn(u64) + Sync)) -> Result<Profile> {
    let n = query.n;
    if n < 1 {
        return Err(Error::argument("--n", "must be at least 1"));
    }
    let (a, b) = query.k_range.unwrap_or((0, n - 1));
    for end in [a, b] {
        check_composition(n, end)
            .map_err(|_| Error::argument("--k-range", format!("must lie within 0..{}", n - 1)))?;
    }
    if a > b {
        return Err(Error::argument(
            "--k-range",
            format!("start {a} exceeds end {b}"),
        ));
    }
    if let ProfileQuestion::Epsilon(d) = &query.question {
        curve::check_target(d)?;
    }
    let partial = (a, b) != (0, n - 1);
    let mut result = match query.backend {
        Backend::Exact => {
            query.mechanism.require_rational()?;
            scan_in::<Rational>(query, (a, b), &query.exact_ctx, progress)?
        }
        Backend::Interval => scan_in::<Interval>(query, (a, b), &(), progress)?,
        Backend::Mpfr { precision } => {
            scan_in::<MpfrInterval>(query, (a, b), &MpfrCtx { precision }, progress)?
        }
    };
    result.partial = partial;
    if let (Backend::Interval, Some(target)) = (query.backend, query.escalate_above) {
        refine(query, &mut result, target)?;
    }
    Ok(result)
}

/// What a leaf records: per threshold (or the single ε), both directions.
#[derive(Clone, Debug)]
pub struct LeafRecord {
    pub k: u64,
    pub qp: Vec<Enclosure>,
    pub pq: Vec<Enclosure>,
}

struct ScanState {
    /// Best certified lower bound of the maximum, per threshold (δ) or the single ε.
    best: Vec<Rational>,
    records: Vec<LeafRecord>,
    stats: ProfileStats,
}

struct Scan<'a, S: Scalar> {
    question: &'a ProfileQuestion,
    channel: Channel<S>,
    ctx: &'a S::Ctx,
    prune: bool,
    state: Mutex<ScanState>,
    progress: &'a (dyn Fn(u64) + Sync),
    resolved: AtomicU64,
}

/// Largest finite value used as a lower bound of ε: an infinite ε (singular mass above the
/// target) is recorded as this (still a valid lower bound, and e^700 stays representable).
const EPS_CAP: u32 = 700;

/// A certified lower bound usable as a threshold: the lower end, capped at [`EPS_CAP`].
fn lower(e: &Enclosure) -> Rational {
    match e.lo() {
        Endpoint::Finite(x) => x.clone().min(Rational::from(EPS_CAP)),
        Endpoint::PosInf => Rational::from(EPS_CAP),
        Endpoint::NegInf => Rational::new(),
    }
}

impl<S: Scalar> Scan<'_, S> {
    fn resolve(&self, count: u64) {
        self.resolved.fetch_add(count, Ordering::Relaxed);
        (self.progress)(count);
    }

    /// Which questions (thresholds, or the single ε) are still open below this node: a question
    /// closes when the node pair's curves certainly stay below the best lower bound found so
    /// far, for then no k below can reach the maximum (the data-processing bound of the module
    /// docs).  A node with no open question is dropped.
    fn still_open(&self, pair: &PairLaw<S>, open: &[bool]) -> Vec<bool> {
        if !self.prune {
            return open.to_vec();
        }
        let best = self.state.lock().expect("scan state").best.clone();
        let both = [Direction::Qp, Direction::Pq];
        match self.question {
            ProfileQuestion::Deltas(thresholds) => thresholds
                .iter()
                .zip(&best)
                .zip(open)
                .map(|((t, b), &is_open)| {
                    is_open
                        && !(*b > 0
                            && both
                                .iter()
                                .all(|&dir| t.delta(pair, dir, self.ctx).compare(b) == Tri::Less))
                })
                .collect(),
            ProfileQuestion::Epsilon(target) => {
                // δ(best) < D strictly ⇒ ε_k < best for every k below (δ is continuous and
                // non-increasing in ε).
                let eps = &best[0];
                let closed = *eps > 0
                    && both.iter().all(|&dir| {
                        curve::delta(pair, dir, eps, self.ctx).compare(target) == Tri::Less
                    });
                vec![open[0] && !closed]
            }
        }
    }

    /// A steering score of a node: how likely it holds the maximum (larger first).
    fn score(&self, pair: &PairLaw<S>) -> f64 {
        let best = self.state.lock().expect("scan state").best.clone();
        let eps = match self.question {
            ProfileQuestion::Deltas(t) => match &t[0] {
                Threshold::Eps(e) => e.clone(),
                Threshold::ExpEps(_) => Rational::new(),
            },
            ProfileQuestion::Epsilon(_) => best[0].clone(),
        };
        [Direction::Qp, Direction::Pq]
            .iter()
            .map(|&dir| curve::delta(pair, dir, &eps, self.ctx).mid_f64())
            .fold(0.0, f64::max)
    }

    fn leaf(&self, k: u64, pair: &PairLaw<S>) -> Result<()> {
        let (qp, pq) = match self.question {
            ProfileQuestion::Deltas(thresholds) => (
                thresholds
                    .iter()
                    .map(|t| t.delta(pair, Direction::Qp, self.ctx))
                    .collect::<Vec<_>>(),
                thresholds
                    .iter()
                    .map(|t| t.delta(pair, Direction::Pq, self.ctx))
                    .collect::<Vec<_>>(),
            ),
            ProfileQuestion::Epsilon(target) => (
                vec![epsilon_for_delta(pair, Direction::Qp, target, self.ctx)?.eps],
                vec![epsilon_for_delta(pair, Direction::Pq, target, self.ctx)?.eps],
            ),
        };
        let mut state = self.state.lock().expect("scan state");
        for (i, (a, b)) in qp.iter().zip(&pq).enumerate() {
            let lo = lower(a).max(lower(b));
            if lo > state.best[i] {
                state.best[i] = lo;
            }
        }
        state.records.push(LeafRecord { k, qp, pq });
        state.stats.pairs_evaluated += 1;
        Ok(())
    }

    /// Visits the node `[lo, hi)` whose group is `group` (and whose pair, when already
    /// computed, is `pair`), with the questions still `open` at its parent.  Memory: down the
    /// recursion each level keeps only the sibling's group; a pair lives while it is used.
    fn visit<G: GroupLaw<S>>(
        &self,
        group: G,
        pair: Option<PairLaw<S>>,
        lo: u64,
        hi: u64,
        open: &[bool],
    ) -> Result<()> {
        let pair = pair.unwrap_or_else(|| group.pair(&self.channel, self.ctx));
        self.state.lock().expect("scan state").stats.nodes_bounded += 1;
        let open = self.still_open(&pair, open);
        if !open.contains(&true) {
            self.state.lock().expect("scan state").stats.k_pruned += hi - lo;
            self.resolve(hi - lo);
            return Ok(());
        }
        if hi - lo == 1 {
            self.leaf(lo, &pair)?;
            self.resolve(1);
            return Ok(());
        }
        drop(pair);
        let mid = lo + (hi - lo) / 2;
        let left = group.with_users((hi - mid) as usize, 0, &self.channel, self.ctx);
        let right = group.with_users(0, (mid - lo) as usize, &self.channel, self.ctx);
        drop(group);
        let left_pair = left.pair(&self.channel, self.ctx);
        let right_pair = right.pair(&self.channel, self.ctx);
        if hi - lo >= PARALLEL_MIN {
            let (a, b) = rayon::join(
                || self.visit(left, Some(left_pair), lo, mid, &open),
                || self.visit(right, Some(right_pair), mid, hi, &open),
            );
            return a.and(b);
        }
        // The more dangerous child first (it raises the best bound sooner); the other's pair is
        // recomputed when its turn comes rather than held through the recursion.
        if self.score(&right_pair) > self.score(&left_pair) {
            drop(left_pair);
            self.visit(right, Some(right_pair), mid, hi, &open)?;
            self.visit(left, None, lo, mid, &open)
        } else {
            drop(right_pair);
            self.visit(left, Some(left_pair), lo, mid, &open)?;
            self.visit(right, None, mid, hi, &open)
        }
    }
}

/// Nodes covering at least this many k split their children across threads.
const PARALLEL_MIN: u64 = 256;

fn scan_in<S: Scalar>(
    query: &ProfileQuery,
    (a, b): (u64, u64),
    ctx: &S::Ctx,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Profile> {
    let mechanism = &query.mechanism;
    let channel = mechanism.channel::<S>(ctx)?;
    let n = query.n;
    let nu = n as usize;
    let plan = plan::<S>(mechanism, nu, &query.options, ctx)?;
    // Per worker thread: one sibling group per level of the tree, plus the node's group, its
    // two children and two pairs (each pair two arrays).
    let depth = 2 + (nu.max(2) as f64).log2().ceil() as u64;
    let arrays = (depth + 7) * rayon::current_num_threads() as u64;
    check_memory::<S>(
        "the profile scan",
        &plan,
        arrays,
        nu,
        query.options.memory_limit,
        ctx,
    )?;
    let slots = match &query.question {
        ProfileQuestion::Deltas(t) => t.len(),
        ProfileQuestion::Epsilon(_) => 1,
    };
    let scan = Scan {
        question: &query.question,
        channel,
        ctx,
        prune: query.prune,
        state: Mutex::new(ScanState {
            best: vec![Rational::new(); slots],
            records: Vec::new(),
            stats: ProfileStats::default(),
        }),
        progress,
        resolved: AtomicU64::new(0),
    };
    let (zeros, ones) = ((n - 1 - b) as usize, a as usize);
    let open = vec![true; slots];
    let engine = if plan.binary {
        let root =
            BinaryGroup::empty(plan.tau_bits, ctx).with_users(zeros, ones, &scan.channel, ctx);
        scan.visit(root, None, a, b + 1, &open)?;
        "binary"
    } else {
        let index = std::sync::Arc::new(SimplexIndex::new(mechanism.d(), nu)?);
        let root = GeneralGroup::empty(index, plan.tau_bits, ctx).with_users(
            zeros,
            ones,
            &scan.channel,
            ctx,
        );
        scan.visit(root, None, a, b + 1, &open)?;
        "general"
    };
    debug_assert_eq!(scan.resolved.load(Ordering::Relaxed), b - a + 1);
    let state = scan.state.into_inner().expect("scan state");
    let answer = assemble(&query.question, &state.records);
    Ok(Profile {
        answer,
        stats: state.stats,
        k_range: (a, b),
        partial: false,
        arithmetic: S::BACKEND.to_string(),
        engine,
        records: state.records,
    })
}

/// The maximum over the recorded pairs and the argmax; pruned k lie strictly below the
/// maximum's lower bound, so they can neither raise it nor belong to the argmax.
fn assemble(question: &ProfileQuestion, records: &[LeafRecord]) -> ProfileAnswer {
    let max_at = |i: usize| -> (Enclosure, Vec<KValue>) {
        let mut max: Option<Enclosure> = None;
        for r in records {
            for e in [&r.qp[i], &r.pq[i]] {
                max = Some(match max {
                    Some(m) => m.max(e),
                    None => e.clone(),
                });
            }
        }
        let max = max.expect("the scan evaluates at least one pair");
        let mut argmax: Vec<KValue> = records
            .iter()
            .flat_map(|r| {
                [
                    (r.k, Direction::Qp, &r.qp[i]),
                    (r.k, Direction::Pq, &r.pq[i]),
                ]
            })
            .filter(|(_, _, e)| e.hi() >= max.lo())
            .map(|(k, direction, e)| KValue {
                k,
                direction,
                value: e.clone(),
            })
            .collect();
        argmax.sort_by_key(|v| (v.k, v.direction.key()));
        (max, argmax)
    };
    match question {
        ProfileQuestion::Deltas(thresholds) => ProfileAnswer::Deltas(
            thresholds
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let (delta, argmax) = max_at(i);
                    let zero = Endpoint::Finite(Rational::new());
                    let resolved = delta.lo() > &zero || delta.hi() == &zero;
                    DeltaProfileRow {
                        threshold: t.clone(),
                        delta,
                        argmax,
                        resolved,
                    }
                })
                .collect(),
        ),
        ProfileQuestion::Epsilon(_) => {
            let (eps, argmax) = max_at(0);
            ProfileAnswer::Epsilon { eps, argmax }
        }
    }
}

/// Most maximising pairs to recompute when tightening.
const MAX_REFINED: usize = 16;

fn too_wide(e: &Enclosure, target: f64) -> bool {
    e.hi().to_f64() >= 1e-12 && e.relative_width() > target
}

/// Tightens a wide interval-backend profile: each maximising pair is recomputed on its own by
/// the pair engine (which escalates to MPFR where f64 is too wide), and its enclosures replaced
/// by the intersection with the scan's (each contains the true value).  The maximum and argmax
/// are then assembled again; the argmax can only shrink.
fn refine(query: &ProfileQuery, profile: &mut Profile, target: f64) -> Result<()> {
    let (wide, mut ks): (bool, Vec<u64>) = match &profile.answer {
        ProfileAnswer::Deltas(rows) => (
            rows.iter().any(|r| too_wide(&r.delta, target)),
            rows.iter()
                .flat_map(|r| r.argmax.iter().map(|v| v.k))
                .collect(),
        ),
        ProfileAnswer::Epsilon { eps, argmax } => {
            (too_wide(eps, target), argmax.iter().map(|v| v.k).collect())
        }
    };
    ks.sort_unstable();
    ks.dedup();
    if !wide || ks.len() > MAX_REFINED {
        return Ok(());
    }
    for k in ks {
        let pair_query = PairQuery {
            mechanism: query.mechanism.clone(),
            n: query.n,
            k,
            options: query.options.clone(),
            backend: query.backend,
            exact_ctx: query.exact_ctx,
            escalate_above: Some(target),
        };
        let (qp, pq): (Vec<Enclosure>, Vec<Enclosure>) = match &query.question {
            ProfileQuestion::Deltas(thresholds) => {
                let rows = answer(
                    &pair_query,
                    &DeltaJob {
                        thresholds: thresholds.clone(),
                    },
                )?
                .result;
                rows.into_iter().map(|r| (r.qp, r.pq)).unzip()
            }
            ProfileQuestion::Epsilon(d) => {
                let row = answer(&pair_query, &EpsilonJob { delta: d.clone() })?.result;
                (vec![row.qp.eps], vec![row.pq.eps])
            }
        };
        let record = profile
            .records
            .iter_mut()
            .find(|r| r.k == k)
            .expect("argmax k was recorded");
        for (old, new) in record
            .qp
            .iter_mut()
            .zip(&qp)
            .chain(record.pq.iter_mut().zip(&pq))
        {
            if !old.overlaps(new) {
                return Err(Error::Internal(format!(
                    "refining k = {k} gave {new}, disjoint from the scan's {old}; no result is reported"
                )));
            }
            *old = Enclosure::new(
                old.lo().clone().max(new.lo().clone()),
                old.hi().clone().min(new.hi().clone()),
            );
        }
        profile.stats.pairs_refined += 1;
    }
    profile.answer = assemble(&query.question, &profile.records);
    profile.arithmetic = format!(
        "{}, maximising pairs refined by the pair engine",
        profile.arithmetic
    );
    Ok(())
}
