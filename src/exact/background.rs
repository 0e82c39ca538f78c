//! One neighbouring pair of a randomizer on any input domain (issue 11, Deliver 2).
//!
//! The other n − 1 users hold inputs in given counts `c_x`; the switched user holds `x1` in the
//! first dataset and `x1′` in the second.  With the common part `B = ⊛_x Mult(c_x, R_x)` (the
//! histogram of the others), the shift identities of Part I Lemma 4.2 give
//! `P(N) = Σ_y R_{x1}(y) B(N − e_y)` and `Q(N) = Σ_y R_{x1′}(y) B(N − e_y)`: the pair engine's
//! `(T_{n,k}, T_{n,k+1})` with `(W0, W1) = (R_{x1}, R_{x1′})` and a background of any rows.
//! A binary-input mechanism's `(n, k)` is the background `(n − 1 − k, k)`.
//!
//! The laws live on windowed histograms (`exact::window`): `B` is built as the multinomial of
//! the largest group, then one block per other input; truncation and its certified omitted mass
//! are those of the window engine (proofs-notes/windowed-laws.md).
//!
//! Outputs are merged first when their columns `(R_x(y))_x` over the rows in play (the
//! background's inputs and both of the switched user's) are proportional: each user's output,
//! given that it falls in such a class, is then a member with probabilities that do not depend
//! on the user's input, so the class counts are sufficient for the pair and every divergence and
//! curve is unchanged (proofs-notes/background-pairs.md).

use super::group::ratio_range;
use super::law::{Layout, PairLaw};
use super::pair::{
    PairOptions, Plan, Route, SECONDS_PER_STEP_PRODUCT, SLOWER_THAN_VALUE_SIZE, WINDOW_MAX_N,
    check_memory, window_states_of,
};
use super::window::{WindowedLaw, add_block, multinomial, pair};
use crate::arith::Scalar;
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::mechanism::{Channel, Entry};
use rug::Rational;

/// Who the other users are and which input the switched user changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Background {
    /// `counts[x]`: how many of the other n − 1 users hold input x.
    pub counts: Vec<u64>,
    /// `(x1, x1′)`: the switched user's input in the first and the second dataset.
    pub switch: (usize, usize),
}

impl Background {
    /// n: the others and the switched user.
    pub fn n(&self) -> u64 {
        1 + self.counts.iter().sum::<u64>()
    }

    /// The inputs whose rows enter the pair: the background's and the switched user's.
    fn in_play(&self) -> Vec<usize> {
        (0..self.counts.len())
            .filter(|&x| self.counts[x] > 0 || x == self.switch.0 || x == self.switch.1)
            .collect()
    }
}

/// The output classes of the rows in play: outputs with proportional columns merged (only with
/// `reduce`; for symbolic rows, identical columns), outputs that no row in play produces
/// dropped.  Each
/// class lists its outputs.
pub fn output_classes(r: &Randomizer, b: &Background, reduce: bool) -> Vec<Vec<usize>> {
    let play = b.in_play();
    let produced: Vec<usize> = (0..r.d())
        .filter(|&y| play.iter().any(|&x| !r.is_zero(x, y)))
        .collect();
    let exact = play
        .iter()
        .all(|&x| r.rows[x].iter().all(|e| matches!(e, Entry::Exact(_))));
    if !reduce {
        return produced.into_iter().map(|y| vec![y]).collect();
    }
    if !exact {
        // Randomized response given by a real ε0: its entries are symbolic, and outputs whose
        // columns are identical entry by entry (proportional with ratio 1) merge.
        let mut classes: Vec<(Vec<&Entry>, Vec<usize>)> = Vec::new();
        for y in produced {
            let column: Vec<&Entry> = play.iter().map(|&x| &r.rows[x][y]).collect();
            match classes.iter_mut().find(|(c, _)| *c == column) {
                Some((_, ys)) => ys.push(y),
                None => classes.push((column, vec![y])),
            }
        }
        return classes.into_iter().map(|(_, ys)| ys).collect();
    }
    let value = |x: usize, y: usize| match &r.rows[x][y] {
        Entry::Exact(q) => q.clone(),
        Entry::ExpFraction { .. } => unreachable!("checked exact"),
    };
    // The column divided by its first nonzero entry.
    let key = |y: usize| -> Vec<Rational> {
        let column: Vec<Rational> = play.iter().map(|&x| value(x, y)).collect();
        let first = column.iter().find(|v| **v != 0).cloned().expect("produced");
        column.into_iter().map(|v| v / &first).collect()
    };
    let mut classes: Vec<(Vec<Rational>, Vec<usize>)> = Vec::new();
    for y in produced {
        let k = key(y);
        match classes.iter_mut().find(|(c, _)| *c == k) {
            Some((_, ys)) => ys.push(y),
            None => classes.push((k, vec![y])),
        }
    }
    classes.into_iter().map(|(_, ys)| ys).collect()
}

/// The output alphabet a background pair's report shows: the number of outputs and each class
/// of [`output_classes`] by its outputs' labels.
pub fn alphabet_json(r: &Randomizer, b: &Background, reduce: bool) -> serde_json::Value {
    let classes: Vec<Vec<&str>> = output_classes(r, b, reduce)
        .iter()
        .map(|ys| ys.iter().map(|&y| r.outputs[y].as_str()).collect())
        .collect();
    serde_json::json!({ "outputs": r.d(), "classes": classes })
}

/// The pair `(P, Q)` of the background `b` in backend `S` (see the module docs).
pub fn background_pair<S: Scalar>(
    r: &Randomizer,
    b: &Background,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<PairLaw<S>> {
    let n = usize::try_from(b.n())
        .ok()
        .filter(|n| *n <= WINDOW_MAX_N)
        .ok_or_else(|| {
            Error::argument(
                "--background",
                format!("n = {} users: windowed laws need n ≤ {WINDOW_MAX_N}", b.n()),
            )
        })?;
    let classes = output_classes(r, b, options.reduce);
    let values = r.values::<S>(ctx)?;
    // Each row on the classes (sums over the merged outputs).
    let merged = |x: usize| -> Vec<S> {
        classes
            .iter()
            .map(|ys| {
                let mut sum = S::zero(ctx);
                for &y in ys {
                    sum.add_assign(&values[x][y]);
                }
                sum
            })
            .collect()
    };
    let (x1, x1p) = b.switch;
    let channel = Channel {
        w: [merged(x1), merged(x1p)],
    };
    let (ratio_lo, ratio_hi) = ratio_range(&channel);
    if classes.len() == 1 {
        // One class: the histogram is certain, P = Q = the point mass.
        return Ok(PairLaw {
            p: vec![S::one(ctx)],
            q: vec![S::one(ctx)],
            omitted: Rational::new(),
            ratio_lo,
            ratio_hi,
            layout: Layout::Reduced,
            omission: Default::default(),
        });
    }
    let groups: Vec<(u64, Vec<S>)> = {
        let mut g: Vec<(u64, usize)> = (0..b.counts.len())
            .filter(|&x| b.counts[x] > 0)
            .map(|x| (b.counts[x], x))
            .collect();
        g.sort_by(|a, c| c.0.cmp(&a.0).then(a.1.cmp(&c.1)));
        g.into_iter().map(|(c, x)| (c, merged(x))).collect()
    };
    // Truncation needs every row in play positive on every class (bounded likelihood ratios,
    // nothing singular dropped), as for the pair engine.
    let full_support = b
        .in_play()
        .iter()
        .all(|&x| merged(x).iter().all(|v| !v.is_exact_zero()));
    let tau = if options.truncate && full_support && !S::EXACT {
        options.truncation_bits.or_else(|| S::truncation_bits(ctx))
    } else {
        None
    };
    let d = classes.len();
    let rows_f64: Vec<Vec<f64>> = b
        .in_play()
        .iter()
        .map(|&x| merged(x).iter().map(|v| v.approx_f64()).collect())
        .collect();
    let states = match tau {
        Some(bits) => window_states_of(&rows_f64, n, bits),
        None => super::histogram::histogram_count(n as u64, d).unwrap_or(u64::MAX),
    };
    let plan = Plan {
        route: Route::Window,
        tau_bits: tau,
        states,
        index_bytes: states.saturating_mul(4 * (d as u64 - 2) + 16 * d as u64),
        messages: 1,
    };
    check_memory::<S>("the pair", &plan, 3, n, options.memory_limit, ctx)?;
    check_time::<S>(&groups, &plan, n, tau, options, ctx)?;
    let mut common: Option<WindowedLaw<S>> = None;
    for (count, row) in &groups {
        let count = *count as usize;
        common = Some(match common {
            None => multinomial(count, row, tau, ctx),
            Some(law) => add_block(law, count, row, tau, ctx),
        });
    }
    let common = common.unwrap_or_else(|| WindowedLaw::empty(d, ctx));
    Ok(pair(&common, &channel, ctx))
}

/// Refuses, with the estimate, a background whose common law would take longer than
/// `--max-seconds` to build.  After the largest group, each group of `c` users costs at most
/// `c · states · d` products added user by user (`states` the final window's), or one
/// convolution of its block's window with the law's when that is cheaper.
fn check_time<S: Scalar>(
    groups: &[(u64, Vec<S>)],
    plan: &Plan,
    n: usize,
    tau: Option<u32>,
    options: &PairOptions,
    ctx: &S::Ctx,
) -> Result<()> {
    let states = plan.states as f64;
    let d = groups.first().map_or(1, |(_, row)| row.len()) as f64;
    let mut products = 0.0;
    for (count, row) in groups.iter().skip(1) {
        let steps = *count as f64 * states * d;
        let block = match tau {
            Some(bits) => {
                let row: Vec<f64> = row.iter().map(S::approx_f64).collect();
                window_states_of(&[row], *count as usize, bits) as f64 * states
            }
            None => f64::INFINITY,
        };
        products += steps.min(block);
    }
    let mut scale = (S::estimated_bytes(n, ctx) as f64 / 16.0).max(1.0);
    if S::BACKEND != "interval" {
        scale *= SLOWER_THAN_VALUE_SIZE;
    }
    let seconds = products * SECONDS_PER_STEP_PRODUCT * scale;
    if seconds > options.time_limit_seconds {
        return Err(Error::TooLarge(format!(
            "the background's law would take about {:.2e} products over {} histogram states, an estimated {} with the {} backend, over --max-seconds {} (raise it or use a smaller n)",
            products,
            plan.states,
            super::pair::duration_text(seconds),
            S::BACKEND,
            super::pair::duration_text(options.time_limit_seconds)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::exact::ExactCtx;
    use crate::exact::curve::{Direction, delta_at_exp};
    use crate::exact::pair::pair_law;
    use crate::mechanism::randomizer::load_randomizer;

    fn exact_options() -> PairOptions {
        PairOptions {
            truncate: false,
            ..Default::default()
        }
    }

    #[test]
    fn a_binary_background_is_the_pair_engine() {
        // Two inputs: the background (n − 1 − k, k) is the pair (T_{n,k}, T_{n,k+1}).
        let r = load_randomizer("k-rr:k=3,exp_eps0=2,inputs=2").unwrap();
        let m = r.pair(0, 1).unwrap();
        let ctx = ExactCtx::default();
        for (n, k) in [(1u64, 0u64), (4, 0), (6, 2), (5, 4)] {
            let b = Background {
                counts: vec![n - 1 - k, k],
                switch: (0, 1),
            };
            let general = background_pair::<Rational>(&r, &b, &exact_options(), &ctx).unwrap();
            let engine = pair_law::<Rational>(&m, n, k, &exact_options(), &ctx).unwrap();
            for t in [(1, 1), (3, 2), (2, 1)] {
                let t = Rational::from(t);
                for dir in [Direction::Qp, Direction::Pq] {
                    assert_eq!(
                        delta_at_exp(&general, dir, &t, &ctx),
                        delta_at_exp(&engine, dir, &t, &ctx),
                        "n = {n}, k = {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn proportional_columns_merge_and_nothing_else() {
        // k-RR on 5 inputs, background on input 2 and switch 0 → 1: outputs 3 and 4 have
        // the same column over the rows in play (0, 1, 2), output 2 does not.
        let r = load_randomizer("k-rr:k=5,exp_eps0=3,inputs=5").unwrap();
        let b = Background {
            counts: vec![0, 0, 4, 0, 0],
            switch: (0, 1),
        };
        let classes = output_classes(&r, &b, true);
        assert_eq!(classes, vec![vec![0], vec![1], vec![2], vec![3, 4]]);
        assert_eq!(output_classes(&r, &b, false).len(), 5);
        // Merged or not, the same pair.
        let ctx = ExactCtx::default();
        let merged = background_pair::<Rational>(&r, &b, &exact_options(), &ctx).unwrap();
        let unmerged = background_pair::<Rational>(
            &r,
            &b,
            &PairOptions {
                reduce: false,
                ..exact_options()
            },
            &ctx,
        )
        .unwrap();
        for t in [(1, 1), (5, 4), (2, 1)] {
            let t = Rational::from(t);
            assert_eq!(
                delta_at_exp(&merged, Direction::Qp, &t, &ctx),
                delta_at_exp(&unmerged, Direction::Qp, &t, &ctx)
            );
        }
    }

    #[test]
    fn identical_symbolic_columns_merge_and_give_the_same_pair() {
        // k-RR with a real ε0 (e^ε0 irrational, entries symbolic): outputs 3..5 share one
        // column over the rows in play; the merged pair encloses the same δ as the unmerged.
        use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
        let r = load_randomizer("k-rr:k=6,eps0=1.5").unwrap();
        let b = Background {
            counts: vec![2, 0, 3, 0, 0, 0],
            switch: (0, 1),
        };
        let classes = output_classes(&r, &b, true);
        assert_eq!(classes, vec![vec![0], vec![1], vec![2], vec![3, 4, 5]]);
        let ctx = MpfrCtx { precision: 128 };
        let options = PairOptions::default();
        let merged = background_pair::<MpfrInterval>(&r, &b, &options, &ctx).unwrap();
        let unmerged = background_pair::<MpfrInterval>(
            &r,
            &b,
            &PairOptions {
                reduce: false,
                ..options.clone()
            },
            &ctx,
        )
        .unwrap();
        for t in [(1, 1), (5, 4), (2, 1)] {
            let t = Rational::from(t);
            for dir in [Direction::Qp, Direction::Pq] {
                let (a, b) = (
                    delta_at_exp(&merged, dir, &t, &ctx),
                    delta_at_exp(&unmerged, dir, &t, &ctx),
                );
                assert!(a.overlaps(&b), "{a} vs {b}");
            }
        }
    }
}
