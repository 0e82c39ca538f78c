//! The Le Cam / TV layer (Part III §2): transfers that must contain the exact finite-n δ of
//! every mechanism they claim to cover.

mod common;

use common::*;
use proptest::prelude::*;
use rug::Rational;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::exact::curve::{Direction, delta_at_exp};
use shufflecert::exact::pair::{PairOptions, pair_law};
use shufflecert::limits::tv::{tv_ball, tv_finite};
use shufflecert::mechanism::{Entry, Mechanism};
use shufflecert::query::{Backend, DeltaJob, PairQuery, Threshold, answer};

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};

/// `w` with mass `shift ≤ w[from]` moved from output `from` to output `to`: at TV `shift`.
fn moved(w: &[Rational], from: usize, to: usize, shift: &Rational) -> Vec<Rational> {
    let mut out = w.to_vec();
    out[from] -= shift;
    out[to] += shift;
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every mechanism in the ball (here: mass moved between two outputs of each row, at TV at
    /// most η) has its exact δ inside the `--tv-ball` enclosure of the centre.
    #[test]
    fn tv_ball_contains_the_exact_delta_of_perturbed_mechanisms(
        m in mechanism(8), n in 2u64..9, k in 0u64..8, moves in (0usize..4, 0usize..4, 0usize..4, 0usize..4), c in 1u32..4,
    ) {
        let k = k % n;
        let rows = m.rational_rows().unwrap();
        let d = m.d();
        let eta = Rational::from((1, 50));
        // Move min(η, available) from one output to another in each row.
        let perturb = |w: &[Rational], from: usize, to: usize| {
            let (from, to) = (from % d, to % d);
            let shift = w[from].clone().min(eta.clone());
            moved(w, from, to, &shift)
        };
        let w0 = perturb(&rows[0], moves.0, moves.1);
        let w1 = perturb(&rows[1], moves.2, moves.3);
        let entries = |r: &[Rational]| r.iter().cloned().map(Entry::Exact).collect();
        let other = Mechanism::new("p", "p".into(), None, [entries(&w0), entries(&w1)], None).unwrap();
        // The perturbation is within the ball.
        for (a, b) in [(&rows[0], &w0), (&rows[1], &w1)] {
            let tv = tv_finite(a, b, &EXACT);
            prop_assert!(tv.hi() <= &shufflecert::enclosure::Endpoint::Finite(eta.clone()));
        }
        let exp = Rational::from((c + 1, 2));
        let query = PairQuery {
            mechanism: m.clone(),
            n,
            k,
            options: PairOptions::default(),
            backend: Backend::Interval,
            exact_ctx: EXACT,
            escalate_above: None,
        };
        let centre = answer(&query, &DeltaJob { thresholds: vec![Threshold::ExpEps(exp.clone())] }).unwrap();
        let ball = tv_ball(n, k, &eta, &centre.result);
        let law = pair_law::<Rational>(&other, n, k, &PairOptions::default(), &EXACT).unwrap();
        let qp = delta_at_exp(&law, Direction::Qp, &exp, &EXACT);
        let pq = delta_at_exp(&law, Direction::Pq, &exp, &EXACT);
        prop_assert!(ball[0].qp.contains(qp.lo().finite().unwrap()), "{} misses {}", ball[0].qp, qp);
        prop_assert!(ball[0].pq.contains(pq.lo().finite().unwrap()), "{} misses {}", ball[0].pq, pq);
    }
}

#[test]
fn tv_ball_on_the_command_line() {
    let out = cli_json(&[
        "delta",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "800",
        "--k",
        "0",
        "--eps",
        "0.1",
        "--tv-ball",
        "1e-9",
    ]);
    let ball = &out["tv_ball"];
    assert_eq!(ball["eta"], "1e-9");
    // TV(P, P′) ≤ n·η = 8e-7 and TV(Q, Q′) ≤ n·η, exactly.
    for key in ["tv_p_bound", "tv_q_bound"] {
        let bound = shufflecert::enclosure::parse_rational(ball[key].as_str().unwrap()).unwrap();
        assert_eq!(bound, Rational::from((8, 10_000_000)), "{key}");
    }
    let row = &ball["results"][0];
    assert_eq!(row["useful"], true);
    let centre = enclosure(&out["results"][0]["delta_qp"]);
    let widened = enclosure(&row["delta_qp"]);
    assert!(widened.lo() <= centre.lo() && centre.hi() <= widened.hi());
    assert!(row["relative_width"].as_f64().unwrap() < 0.1);
    // A radius outside [0, 1] is refused in one line with exit code 2, naming the option; a
    // negative one, as its own word, is read as a value, not a flag.
    for eta in ["-0.1", "1.5", "abc"] {
        let run = cli(&[
            "delta",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "10",
            "--k",
            "0",
            "--eps",
            "0.1",
            "--tv-ball",
            eta,
        ]);
        assert_eq!(run.status, 2, "{eta}: {}", run.stderr);
        assert!(
            run.stdout.is_empty() && run.stderr.trim().lines().count() == 1,
            "{eta}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("--tv-ball"), "{eta}: {}", run.stderr);
    }
}
