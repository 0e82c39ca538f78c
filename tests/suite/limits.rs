//! The Le Cam / TV layer (Part III §2): transfers that must contain the exact finite-n δ of
//! every mechanism they claim to cover.

use crate::common::*;
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

/// One row of `limit --json`: the finite δ, the gap and the transfer at threshold t.
fn limit_run(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["limit"];
    all.extend(args);
    cli_json(&all)
}

#[test]
fn limit_binary_rr_sparse_sequence_converges_at_order_one() {
    // e^ε0 = n/2, k = 0: the Poisson-shift limit with λ = 2 (Part II / III single-dominant).
    let out = limit_run(&[
        "--family",
        "binary-rr:exp_eps0=n/2",
        "--n",
        "1000,10000,100000",
        "--eps",
        "0.5",
    ]);
    let g = &out["geometry"];
    assert_eq!(g["specialisation"], "(a) single-dominant");
    assert_eq!(g["dim_m"], 0);
    assert_eq!(strings(&g["delta_shift"]), ["-1", "1"]);
    assert_eq!(
        out["theorem_3_1_iii_part"],
        "(c) strong-boundary regularity"
    );
    assert_eq!(out["proved_order"]["power_of_one_over_n"], 1.0);
    assert_eq!(out["proved_order"]["certified"], false);
    // The limit δ is the Poisson shift's, which `--experiment` computes independently.
    let poisson = cli_json(&[
        "delta",
        "--experiment",
        "poisson-shift:lambda=2",
        "--eps",
        "0.5",
    ]);
    for dir in ["qp", "pq"] {
        let limit = enclosure(&out["thresholds"][0][format!("delta_limit_{dir}")]);
        let direct = enclosure(&poisson["results"][0][format!("delta_{dir}")]);
        assert!(limit.overlaps(&direct), "{dir}: {limit} vs {direct}");
    }
    let rows = out["rows"].as_array().unwrap();
    for (i, row) in rows.iter().enumerate() {
        let r = &row["results"][0];
        for dir in ["qp", "pq"] {
            // Deliver 1(b): the limit curve plus the TV budget encloses the exact finite δ.
            let finite = enclosure(&r[format!("delta_{dir}")]);
            let from_limit = enclosure(&r[format!("from_limit_{dir}")]);
            // Useful (budget below the limit δ) from n = 10⁴ on, at ε = 0.5.
            if i > 0 {
                assert_eq!(r[format!("from_limit_useful_{dir}")], true);
            }
            assert!(
                from_limit.contains_enclosure(&finite),
                "n = {}: {from_limit} misses {finite}",
                row["n"]
            );
            if i > 0 {
                let order = r["observed"][format!("order_{dir}")].as_f64().unwrap();
                assert!((order - 1.0).abs() < 0.05, "{dir}: order {order}");
            }
        }
    }
    // The budget shrinks like 1/n.
    let budget = |i: usize| {
        shufflecert::enclosure::parse_rational(rows[i]["tv_budget"]["tv_p"].as_str().unwrap())
            .unwrap()
            .to_f64()
    };
    assert!(budget(2) < budget(1) / 5.0);
}

#[test]
fn limit_k_rr_interior_runs_on_the_merged_alphabet() {
    let out = limit_run(&[
        "--family",
        "k-rr:k=4,exp_eps0=n/2,inputs=2",
        "--n",
        "1000,10000",
        "--k-rule",
        "fraction:1/2",
        "--eps",
        "0.5",
    ]);
    assert_eq!(out["limit_on_reduced_alphabet"], true);
    assert_eq!(out["regime"], "Interior");
    assert_eq!(out["geometry"]["levy_measure_atoms"], 6);
    let r = &out["rows"][1]["results"][0];
    let finite = enclosure(&r["delta_qp"]);
    assert!(enclosure(&r["from_limit_qp"]).contains_enclosure(&finite));
    let gap = enclosure(&r["gap_qp"]);
    assert!(gap.hi().to_f64() < 1e-4, "{gap}");
}

#[test]
fn proposition_6_1_strong_boundary_obstruction() {
    let spec = "fixtures/sequences/proposition-6-1.toml";
    let out = limit_run(&["--family", spec, "--n", "50,200", "--eps", "0,1"]);
    assert!(out["theorem_3_1_iii_part"].is_null());
    assert!(out["note"].as_str().unwrap().contains("Proposition 6.1"));
    assert!(out["thresholds"][0]["delta_limit_qp"].is_null());
    assert_eq!(out["geometry"]["overlap"], "overlap");
    assert_eq!(strings(&out["geometry"]["delta_shift"]), ["0", "0", "0"]);
    // Exactly: δ_{Q‖P}(ε) = 1/2 for every n and ε (the 1-user's output c is singular), and
    // δ_{P‖Q}(ε) = E[(1 − e^ε B/n)₊], B ~ Bin(n, 1/2), which is 1/2 at ε = 0 and tends to
    // (1 − e^ε/2)₊ (= 1/4 at e^ε = 3/2, 0 for e^ε ≥ 2, reached at rate n^{-1/2} at e^ε = 2).
    for n in ["3", "40"] {
        let exact = cli_json(&[
            "delta",
            "-m",
            "fixtures/mechanisms/proposition-6-1.toml",
            "--n",
            n,
            "--k",
            "0",
            "--exp-eps",
            "1,3/2,2",
            "--backend",
            "exact",
        ]);
        for (i, row) in exact["results"].as_array().unwrap().iter().enumerate() {
            let qp = enclosure(&row["delta_qp"]);
            assert!(
                qp.is_point() && qp.contains(&Rational::from((1, 2))),
                "n = {n}: {qp}"
            );
            let pq = enclosure(&row["delta_pq"]);
            match i {
                0 => assert!(pq.contains(&Rational::from((1, 2)))),
                1 if n == "40" => {
                    assert!((pq.mid_f64() - 0.25).abs() < 1e-3, "n = 40: {pq}")
                }
                // At e^ε = 2 the limit (1 − e^ε/2)₊ = 0 sits at the kink: the finite value is
                // ½E|1 − 2B/n| ≈ √(1/(2πn)), 0.063 at n = 40.
                2 if n == "40" => assert!((0.05..0.07).contains(&pq.mid_f64()), "n = 40: {pq}"),
                _ => {}
            }
        }
    }
}

#[test]
fn theorem_7_2_sharpness_and_theorem_7_3_compatibility() {
    let sharp = limit_run(&[
        "--family",
        "fixtures/sequences/theorem-7-2.toml",
        "--n",
        "100,400",
        "--k-rule",
        "fraction:1/2",
        "--eps",
        "0.5",
    ]);
    assert_eq!(
        sharp["geometry"]["specialisation"],
        "(b) two-dominant disjoint"
    );
    assert_eq!(sharp["geometry"]["compatible_theorem_7_3"], false);
    // M_0 = span{e_b − e_a}, M_1 = span{e_d − e_c}.
    assert_eq!(
        sharp["geometry"]["tangent_m0"],
        serde_json::json!([["-1", "1", "0", "0"]])
    );
    assert_eq!(
        sharp["geometry"]["tangent_m1"],
        serde_json::json!([["0", "0", "-1", "1"]])
    );
    assert_eq!(sharp["proved_order"]["power_of_one_over_n"], 0.5);
    // √n·TV of the auxiliary comparison stays of order one (Theorem 7.2): |q − p| max P(S = j)
    // with S ~ Bin(n/2, 1/3), ≈ (1/3)/√(2π·(n/2)·(2/9)) → 0.3989… · √n/√n.
    for row in sharp["rows"].as_array().unwrap() {
        let aux = &row["theorem_7_2_auxiliary"][0];
        let scaled = aux["observed"]["sqrt_n_tv"].as_f64().unwrap();
        assert!((0.35..0.45).contains(&scaled), "√n·TV = {scaled}");
        assert_eq!(aux["q"], "2/3");
    }
    let compatible = limit_run(&[
        "--family",
        "fixtures/sequences/theorem-7-3.toml",
        "--n",
        "100,400",
        "--k-rule",
        "fraction:1/2",
        "--eps",
        "0.5",
    ]);
    assert_eq!(compatible["geometry"]["compatible_theorem_7_3"], true);
    assert_eq!(compatible["proved_order"]["power_of_one_over_n"], 1.0);
    let aux = &compatible["rows"][0]["theorem_7_2_auxiliary"][0];
    assert!(enclosure(&aux["tv"]).contains(&Rational::new()));
}

#[test]
fn specialisations_after_theorem_3_1() {
    for (file, specialisation, overlap, dim_m) in [
        (
            "two-dominant-overlap",
            "(c) two-dominant overlap (Δ = 0)",
            "overlap",
            2,
        ),
        (
            "mixed-size",
            "(d) mixed-size (|D0| = 1, |D1| = 2)",
            "disjoint",
            1,
        ),
    ] {
        let out = limit_run(&[
            "--family",
            &format!("fixtures/sequences/{file}.toml"),
            "--n",
            "200",
            "--k-rule",
            "fraction:1/2",
            "--eps",
            "0.5",
        ]);
        let g = &out["geometry"];
        assert_eq!(g["specialisation"], specialisation, "{file}");
        assert_eq!(g["overlap"], overlap, "{file}");
        assert_eq!(g["dim_m"], dim_m, "{file}");
        // Π_G + Π_J = I and Π_G is idempotent (exact).
        let pg: Vec<Vec<Rational>> = g["projection_g"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                strings(r)
                    .iter()
                    .map(|x| shufflecert::enclosure::parse_rational(x).unwrap())
                    .collect()
            })
            .collect();
        let d = pg.len();
        for i in 0..d {
            for j in 0..d {
                let sq: Rational = (0..d).map(|k| Rational::from(&pg[i][k] * &pg[k][j])).sum();
                assert_eq!(sq, pg[i][j], "{file}: Π_G² ≠ Π_G at ({i}, {j})");
            }
        }
    }
    // The strong boundary with |D1| = 2 disjoint from |D0| = 1 is outside part (c).
    let out = limit_run(&[
        "--family",
        "fixtures/sequences/mixed-size.toml",
        "--n",
        "200",
        "--eps",
        "0.5",
    ]);
    assert!(out["theorem_3_1_iii_part"].is_null());
}

#[test]
fn resonant_thresholds_are_flagged() {
    // The Poisson-shift limit with λ = 2 has ratios N/2: e^ε = 3/2 (N = 3) and ε = 0 (N = 2)
    // are resonant, e^ε = 7/5 is not.
    let out = limit_run(&[
        "--family",
        "binary-rr:exp_eps0=n/2",
        "--n",
        "100",
        "--exp-eps",
        "3/2,7/5",
        "--eps",
        "0",
    ]);
    let flags: Vec<bool> = out["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["resonant"].as_bool().unwrap())
        .collect();
    // Thresholds are listed --eps first, then --exp-eps.
    assert_eq!(flags, [true, true, false]);
}

#[test]
fn limit_arguments_are_validated() {
    assert_fails(
        &[
            "limit",
            "--family",
            "binary-rr:exp_eps0=2",
            "--n",
            "10",
            "--eps",
            "1",
        ],
        "exp_eps0",
    );
    assert_fails(
        &[
            "limit",
            "--family",
            "binary-rr:exp_eps0=n/2",
            "--n",
            "100,10",
            "--eps",
            "1",
        ],
        "--n",
    );
    assert_fails(
        &[
            "limit",
            "--family",
            "binary-rr:exp_eps0=n/2",
            "--n",
            "10",
            "--k-rule",
            "fixed:10",
            "--eps",
            "1",
        ],
        "--k-rule",
    );
    assert_fails(
        &[
            "limit",
            "--family",
            "binary-rr:exp_eps0=n/2",
            "--n",
            "10",
            "--k-rule",
            "half",
            "--eps",
            "1",
        ],
        "--k-rule",
    );
}

#[test]
fn berry_esseen_on_the_command_line() {
    let out = cli_json(&["berry-esseen", "--lambda", "16,256", "--t", "1"]);
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows[0]["c"]["lo"], "0.25");
    let gap = |i: usize| enclosure(&rows[i]["results"][0]["gap"]);
    assert!(gap(1).hi() < gap(0).lo());
    let order = rows[1]["results"][0]["observed"]["order"].as_f64().unwrap();
    assert!(order > 1.0, "observed order {order}");
    assert!(out["scope"].as_str().unwrap().contains("not explicit"));
}

#[test]
fn limit_review_regressions() {
    // A large alphabet is described by its reduced sequence (3 outputs) instead of hanging.
    let out = limit_run(&[
        "--family",
        "k-rr:k=500,exp_eps0=n/2,inputs=2",
        "--n",
        "10000",
        "--eps",
        "1",
    ]);
    assert_eq!(out["geometry_on_reduced_alphabet"], true);
    assert_eq!(out["geometry"]["d"], 3);
    // W0 = W1: nothing to merge into a one-output mechanism; the limit δ is 0.
    let dir = std::env::temp_dir().join("shufflecert-limit-regressions");
    std::fs::create_dir_all(&dir).unwrap();
    let same = dir.join("same.toml");
    std::fs::write(&same, "w0 = [\"1/2\", \"1/2\"]\nw1 = [\"1/2\", \"1/2\"]\n").unwrap();
    let out = limit_run(&[
        "--family",
        same.to_str().unwrap(),
        "--n",
        "10",
        "--k-rule",
        "fraction:1/2",
        "--eps",
        "0",
    ]);
    assert!(enclosure(&out["thresholds"][0]["delta_limit_qp"]).contains(&Rational::new()));
    // A power rule with a huge denominator is refused.
    assert_fails(
        &[
            "limit",
            "--family",
            "k-rr:k=3,exp_eps0=n/2,inputs=2",
            "--k-rule",
            "power:1/5000000000",
            "--n",
            "100",
            "--eps",
            "1",
        ],
        "--k-rule",
    );
}
