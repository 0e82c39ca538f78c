//! The command-line contract: subcommands, JSON keys, exact printing, and clear failures.

use crate::common::*;
use rug::Rational;
use shufflecert::enclosure::{Endpoint, parse_rational};

#[test]
fn delta_json_has_the_contract_keys() {
    let out = cli_json(&[
        "delta",
        "--mechanism",
        "binary-rr:eps0=1",
        "--n",
        "100",
        "--k",
        "0",
        "--eps",
        "0.1,0.5",
    ]);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["eps"], "0.1");
    for r in results {
        let qp = enclosure(&r["delta_qp"]);
        let pq = enclosure(&r["delta_pq"]);
        let two = enclosure(&r["delta_two_sided"]);
        assert!(qp.lo() <= qp.hi() && pq.lo() <= pq.hi());
        assert_eq!(two.hi(), qp.hi().max(pq.hi()));
    }
    // δ decreases in ε.
    assert!(enclosure(&results[1]["delta_qp"]).hi() < enclosure(&results[0]["delta_qp"]).lo());
    assert_eq!(out["certified"], true);
    assert_eq!(out["engine"], "binary");
}

#[test]
fn epsilon_and_divergences_json_keys() {
    let out = cli_json(&[
        "epsilon",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "30",
        "--k",
        "9",
        "--delta",
        "1e-3",
    ]);
    for key in ["eps_qp", "eps_pq", "eps_two_sided"] {
        let e = enclosure(&out[key]);
        assert!(
            matches!(e.lo(), Endpoint::Finite(_)) && e.lo() < e.hi(),
            "{key}"
        );
    }
    let two = enclosure(&out["eps_two_sided"]);
    assert_eq!(
        two.hi(),
        enclosure(&out["eps_qp"])
            .hi()
            .max(enclosure(&out["eps_pq"]).hi())
    );
    let out = cli_json(&[
        "divergences",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "30",
        "--k",
        "9",
        "--renyi-order",
        "2,1.5",
    ]);
    for key in ["tv", "kl_qp", "kl_pq", "jsd", "chi2_qp", "hellinger2"] {
        let e = enclosure(&out[key]);
        assert!(
            e.lo() > &Endpoint::Finite(Rational::new()),
            "{key} should be positive"
        );
    }
    let renyi = out["renyi_qp"].as_array().unwrap();
    assert_eq!(renyi.len(), 2);
    assert_eq!(renyi[1]["order"], "1.5");
    // D_α is non-decreasing in α and D_α → KL as α → 1: D_1.5 ≤ D_2, and KL ≤ D_1.5.
    let d2 = enclosure(&renyi[0]["value"]);
    let d15 = enclosure(&renyi[1]["value"]);
    assert!(d15.hi() <= d2.hi());
    assert!(enclosure(&out["kl_qp"]).lo() <= d15.hi());
}

#[test]
fn exact_backend_prints_exact_rationals() {
    let out = cli_json(&[
        "delta",
        "-m",
        "fixtures/mechanisms/binary-asymmetric.toml",
        "--n",
        "5",
        "--k",
        "2",
        "--exp-eps",
        "1,3/2",
        "--backend",
        "exact",
    ]);
    for r in out["results"].as_array().unwrap() {
        for key in ["delta_qp", "delta_pq"] {
            assert_eq!(r[key]["lo"], r[key]["hi"], "exact results are points");
            assert!(parse_rational(r[key]["lo"].as_str().unwrap()).is_some());
        }
    }
    // At e^ε = 1 both directions equal the total variation distance.
    let r0 = &out["results"][0];
    assert_eq!(r0["delta_qp"], r0["delta_pq"]);
    assert_eq!(r0["eps"], "ln(1)");
}

#[test]
fn exact_result_lies_inside_the_interval_result() {
    let args = [
        "delta",
        "-m",
        "fixtures/mechanisms/k-rr-4.json",
        "--n",
        "12",
        "--k",
        "5",
        "--eps",
        "0.25",
    ];
    let interval = cli_json(&args);
    let mut exact_args = args.to_vec();
    exact_args.extend(["--backend", "exact"]);
    let exact = cli_json(&exact_args);
    let mut mpfr_args = args.to_vec();
    mpfr_args.extend(["--backend", "mpfr", "--precision", "200"]);
    let mpfr = cli_json(&mpfr_args);
    for key in ["delta_qp", "delta_pq"] {
        let e = enclosure(&exact["results"][0][key]);
        let i = enclosure(&interval["results"][0][key]);
        let m = enclosure(&mpfr["results"][0][key]);
        // e^0.25 is irrational: the exact backend brackets it, so its answer is a tiny interval.
        assert!(i.contains_enclosure(&e) || i.overlaps(&e));
        assert!(m.overlaps(&e) && m.relative_width() < 1e-50);
    }
}

#[test]
fn bad_mechanism_files_fail_clearly() {
    fn with(file: &str) -> Vec<&str> {
        vec!["delta", "--n", "10", "--k", "1", "--eps", "0.1", "-m", file]
    }
    assert_fails(
        &with("fixtures/bad/not-normalised.toml"),
        "w0: entries sum to 0.9, not exactly 1",
    );
    assert_fails(&with("fixtures/bad/negative.toml"), "w0[0]");
    assert_fails(&with("fixtures/bad/ragged.toml"), "w1: has 3 entries");
    assert_fails(&with("fixtures/bad/malformed.toml"), "invalid TOML");
    assert_fails(
        &with("fixtures/bad/unknown-field.toml"),
        "delta: unknown field",
    );
    assert_fails(&with("fixtures/bad/not-a-number.json"), "w0[1]");
    assert_fails(&with("fixtures/bad/one-output.toml"), "at least 2 outputs");
    assert_fails(
        &with("fixtures/no-such-file.toml"),
        "cannot read mechanism file",
    );
    assert_fails(&with("k-rr:k=4"), "exp_eps0");
}

#[test]
fn bad_parameters_fail_clearly() {
    let m = "binary-rr:eps0=1";
    assert_fails(
        &["delta", "-m", m, "--n", "0", "--k", "0", "--eps", "1"],
        "--n",
    );
    assert_fails(
        &["delta", "-m", m, "--n", "10", "--k", "10", "--eps", "1"],
        "--k",
    );
    assert_fails(
        &["delta", "-m", m, "--n", "ten", "--k", "1", "--eps", "1"],
        "--n",
    );
    assert_fails(
        &["delta", "-m", m, "--n", "10", "--k", "1", "--eps", "-1"],
        "--eps",
    );
    assert_fails(
        &[
            "delta", "-m", m, "--n", "10", "--k", "1", "--eps", "0.1,,0.2",
        ],
        "--eps",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            m,
            "--n",
            "10",
            "--k",
            "1",
            "--exp-eps",
            "1/2",
        ],
        "--exp-eps",
    );
    assert_fails(
        &[
            "epsilon", "-m", m, "--n", "10", "--k", "1", "--delta", "1.5",
        ],
        "--delta",
    );
    assert_fails(
        &["epsilon", "-m", m, "--n", "10", "--k", "1", "--delta", "0"],
        "--delta",
    );
    assert_fails(
        &[
            "divergences",
            "-m",
            m,
            "--n",
            "10",
            "--k",
            "1",
            "--renyi-order",
            "1",
        ],
        "--renyi-order",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            m,
            "--n",
            "10",
            "--k",
            "1",
            "--eps",
            "1",
            "--backend",
            "exact",
        ],
        "exact backend needs rational",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            m,
            "--n",
            "10",
            "--k",
            "1",
            "--eps",
            "1",
            "--precision",
            "100",
        ],
        "--precision",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "10",
            "--k",
            "1",
            "--eps",
            "1",
            "--engine",
            "binary",
        ],
        "--engine",
    );
    // Too large for memory: refused with the estimate, before any allocation.
    assert_fails(
        &[
            "delta",
            "-m",
            "k-rr:k=6,exp_eps0=3,inputs=2",
            "--n",
            "100000",
            "--k",
            "1",
            "--eps",
            "1",
            "--engine",
            "general",
        ],
        "problem too large",
    );
}

#[test]
fn table_output_is_human_readable() {
    let run = cli(&[
        "epsilon",
        "-m",
        "fixtures/mechanisms/binary-rr-eps1.toml",
        "--n",
        "1000",
        "--k",
        "0",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("two-sided"));
    assert!(run.stdout.contains("0.1053725861"), "{}", run.stdout);
    assert!(run.stderr.is_empty());
}

/// Inputs that once crashed: each now gives a result or one clear error line, never a panic.
#[test]
fn extreme_inputs_fail_cleanly_or_succeed() {
    let no_panic = |run: &Run| {
        assert!(
            !run.stderr.contains("panicked") && !run.stderr.contains("internal error"),
            "{}",
            run.stderr
        );
    };
    // An entry that underflows f64: divergences fall back to a backend that represents it.
    let run = cli(&[
        "divergences",
        "-m",
        "fixtures/mechanisms/underflow.toml",
        "--n",
        "20",
        "--k",
        "3",
    ]);
    no_panic(&run);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // ε = ∞ for some k in an exact profile (singular mass above δ).
    let run = cli(&[
        "profile",
        "-m",
        "fixtures/mechanisms/one-sided.toml",
        "--n",
        "5",
        "--delta",
        "0.01",
        "--backend",
        "exact",
    ]);
    no_panic(&run);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("inf"));
    // The reason for an infinite ε is reported.
    let out = cli_json(&[
        "epsilon",
        "-m",
        "fixtures/mechanisms/one-sided.toml",
        "--n",
        "10",
        "--k",
        "3",
        "--delta",
        "1e-12",
    ]);
    assert_eq!(out["eps_pq"]["lo"], "inf");
    assert!(out["witnesses"]["pq"]["singular_mass"].is_object());
    // Thresholds beyond e^700 on the local scale.
    let run = cli(&[
        "check",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "50",
        "--k",
        "10",
        "--t",
        "1e12",
        "--backend",
        "exact",
    ]);
    no_panic(&run);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("--t"));
    // Extreme local parameters: constants resolved at higher precision, never unbounded.
    let out = cli_json(&["constants", "-m", "binary-rr:eps0=115", "--pi", "0.3"]);
    assert!(enclosure(&out["i_pi"]).relative_width() < 1e-30);
    // W0 = W1: no signal.
    let run = cli(&[
        "constants",
        "-m",
        "fixtures/mechanisms/identical.toml",
        "--pi",
        "0.5",
    ]);
    no_panic(&run);
    assert_eq!(run.status, 0);
    assert!(run.stdout.contains("undefined"));
    let run = cli(&[
        "check",
        "-m",
        "fixtures/mechanisms/identical.toml",
        "--n",
        "10",
        "--k",
        "2",
        "--t",
        "1",
    ]);
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("no signal"));
    // A plot that cannot be drawn: the certified table is still printed, then the failure.
    let svg = std::env::temp_dir().join(format!("shufflecert-empty-{}.svg", std::process::id()));
    let run = cli(&[
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "100",
        "--k",
        "0",
        "--exp-eps",
        "1e400",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    no_panic(&run);
    // The picture spans ε from 0, where δ is positive, so it can be drawn.
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("ln(1e400)") && run.stdout.contains("plot: "));
    // A huge alphabet kept as it is (--no-reduce) on windows is refused by the memory guard,
    // which counts the window's rows too; the automatic engine answers on the canonical
    // ratio's lattice (k = 0); reduced (the default) it is three symbols.
    let huge = [
        "delta",
        "-m",
        "k-rr:k=20000,exp_eps0=3,inputs=2",
        "--n",
        "1",
        "--k",
        "0",
        "--eps",
        "0.1",
        "--max-memory-gib",
        "0.01",
    ];
    let run = cli(&[&huge[..], &["--no-reduce", "--engine", "window"]].concat());
    assert_eq!(run.status, 2);
    assert!(run.stderr.contains("problem too large"));
    let run = cli(&[&huge[..], &["--no-reduce"]].concat());
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("engine ratio"));
    let run = cli(&huge);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("20000 outputs reduced to 3 classes"));
}

#[test]
fn extreme_inputs_answer_or_refuse_cleanly() {
    // A likelihood ratio near 1e400 takes the ε search past the double range: it bisects there.
    let run = cli(&[
        "profile",
        "-m",
        "fixtures/mechanisms/underflow.toml",
        "--n",
        "5",
        "--delta",
        "1e-5",
        "--backend",
        "mpfr",
        "--json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // n = 2^64 − 1 and 2^64 − 2 are refused by the memory guard, never overflowing it.
    for (mechanism, n) in [
        ("binary-rr:eps0=1", "18446744073709551615"),
        ("fixtures/mechanisms/ternary.toml", "18446744073709551615"),
        ("fixtures/mechanisms/ternary.toml", "18446744073709551614"),
    ] {
        assert_fails(
            &[
                "profile",
                "-m",
                mechanism,
                "--n",
                n,
                "--delta",
                "1e-5",
                "--max-memory-gib",
                "0.001",
            ],
            "problem too large",
        );
    }
    assert_fails(
        &[
            "compare",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "18446744073709551615",
            "--delta",
            "1e-5",
        ],
        "problem too large",
    );
}

#[test]
fn thresholds_where_delta_is_exactly_zero_still_prune() {
    // ε = 3 ≥ ε0 = 1: δ is exactly 0 for every pair; those k tie at 0 as ranges, and the scan
    // still prunes for the other threshold.
    let out = cli_json(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "200",
        "--eps",
        "0.1,3",
    ]);
    assert!(
        out["stats"]["pairs_evaluated"].as_u64().unwrap() < 20,
        "{}",
        out["stats"]
    );
    let at3 = &out["results"][1];
    assert_eq!(at3["delta_profile"]["hi"], "0");
    assert_eq!(at3["resolved"], true);
}

/// A fresh scratch directory for this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("shufflecert-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn progress_json_writes_one_object_per_line_on_stderr_and_leaves_stdout_alone() {
    let args = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "300",
        "--delta",
        "1e-6",
    ];
    let plain = cli(&[&args[..], &["--progress", "none"]].concat());
    let run = cli(&[&args[..], &["--progress=json"]].concat());
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, plain.stdout);
    assert!(plain.stderr.is_empty(), "{}", plain.stderr);
    let lines: Vec<serde_json::Value> = run
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(lines.first().unwrap()["event"], "start");
    assert_eq!(lines.first().unwrap()["stage"], "profile scan");
    assert_eq!(lines.first().unwrap()["total"], 300);
    let last = lines.last().unwrap();
    assert_eq!(
        (last["event"].as_str(), last["done"].as_u64()),
        (Some("finish"), Some(300))
    );
    // Progress only grows.
    let done: Vec<u64> = lines.iter().map(|l| l["done"].as_u64().unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
}

#[test]
fn bounds_reports_its_two_stages() {
    let run = cli(&[
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--n",
        "40",
        "--delta",
        "1e-3",
        "--progress",
        "json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let stages: Vec<serde_json::Value> = run
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &serde_json::Value| l["event"] == "finish")
        .collect();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bounds: upper end", "bounds: lower end"]);
    // Six pairs of inputs, every one resolved.
    assert_eq!(stages[0]["done"], 6);
    assert_eq!(stages[0]["total"], 6);
}

#[test]
fn certified_runs_write_the_same_bytes_at_any_thread_count() {
    let dir = scratch("threads");
    let epoch = [("SOURCE_DATE_EPOCH", "1700000000")];
    let mut outputs = Vec::new();
    for threads in ["1", "4"] {
        let cert = dir.join(format!("profile-{threads}.json"));
        let run = cli_env(
            &[
                "profile",
                "-m",
                "fixtures/mechanisms/binary-asymmetric.toml",
                "--n",
                "700",
                "--eps",
                "0.1,0.3",
                "--delta",
                "1e-7",
                "--threads",
                threads,
                "--certificate",
                cert.to_str().unwrap(),
            ],
            &epoch,
        );
        assert_eq!(run.status, 0, "{}", run.stderr);
        let audit_cert = dir.join(format!("audit-{threads}.json"));
        let audit = cli_env(
            &[
                "audit",
                "-m",
                "binary-rr:eps0=1",
                "--claims",
                "fixtures/claims/examples.jsonl",
                "--certificate",
                audit_cert.to_str().unwrap(),
            ],
            &[epoch[0], ("RAYON_NUM_THREADS", threads)],
        );
        assert!(audit.status == 0 || audit.status == 1, "{}", audit.stderr);
        outputs.push((
            run.stdout,
            std::fs::read(&cert).unwrap(),
            audit.stdout,
            std::fs::read(&audit_cert).unwrap(),
        ));
    }
    assert!(
        outputs[0] == outputs[1],
        "the outputs differ between 1 and 4 threads"
    );
}

#[test]
fn a_multi_output_profile_states_its_estimate_up_front_and_refuses_what_exceeds_the_time_limit() {
    let args = [
        "profile",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "60",
        "--delta",
        "1e-6",
    ];
    let run = cli(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let estimate = run.stderr.lines().next().unwrap_or_default();
    assert!(
        estimate.starts_with("profile: 3 outputs, laws of about")
            && estimate.contains("per node pair; at least"),
        "{}",
        run.stderr
    );
    let quiet = cli(&[&args[..], &["--quiet"]].concat());
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    let refused = cli(&[
        "profile",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "4000",
        "--delta",
        "1e-6",
        "--max-seconds",
        "1",
    ]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(refused.stdout.is_empty());
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("at least") && refused.stderr.contains("--max-seconds"),
        "{}",
        refused.stderr
    );
}

#[test]
fn binary_profile_past_its_time_limit_is_refused_with_a_sharding_recipe() {
    // n = 10⁷ is typically several minutes on 2 cores: refused at once under --max-seconds 60,
    // with shards that each fit.
    let refused = cli(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "10000000",
        "--delta",
        "1e-6",
        "--max-seconds",
        "60",
    ]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(refused.stdout.is_empty());
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    for part in [
        "typically",
        "--max-seconds 60 s",
        "shards of about",
        "--k-range 0..",
        "merge",
    ] {
        assert!(refused.stderr.contains(part), "{part}: {}", refused.stderr);
    }
    // A short scan keeps quiet about its estimate.
    let run = cli(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "2000",
        "--delta",
        "1e-6",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn profile_plot_draws_the_worst_case_with_the_pairs_attaining_it() {
    let svg = scratch("profile-plot").join("profile.svg");
    let out = cli_json(&[
        "profile",
        "-m",
        "fixtures/mechanisms/binary-asymmetric.toml",
        "--n",
        "200",
        "--delta",
        "1e-6",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out["plot"], svg.to_str().unwrap());
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("δ_M = max over k"), "no δ_M band");
    assert!(picture.contains("pair k = 0"), "no attaining pair");
    assert!(
        picture.contains("δ = 1e-6"),
        "the asked point is not marked"
    );
    // Alone, the report is δ_M on the picture's grid: round decimals from 0.
    let alone = cli_json(&[
        "profile",
        "-m",
        "fixtures/mechanisms/binary-asymmetric.toml",
        "--n",
        "200",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let eps: Vec<&str> = alone["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["eps"].as_str().unwrap())
        .collect();
    assert!(eps.len() > 20 && eps[0] == "0", "{eps:?}");
    assert!(eps.iter().all(|e| e.len() <= 6), "{eps:?}");
}

#[test]
fn a_plot_path_is_checked_before_any_work() {
    for (path, says) in [
        ("curves.png", "ending in .svg"),
        ("no-such-directory/curves.svg", "does not exist"),
    ] {
        for args in [
            vec!["delta", "-m", "binary-rr:eps0=1", "--n", "100", "--k", "0"],
            vec!["profile", "-m", "binary-rr:eps0=1", "--n", "100"],
            vec![
                "check",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "100",
                "--k",
                "30",
                "--eps",
                "0.1",
            ],
        ] {
            let run = cli(&[&args[..], &["--plot", path]].concat());
            assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
            assert!(run.stdout.is_empty(), "{args:?}");
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            assert!(
                run.stderr.contains("--plot") && run.stderr.contains(says),
                "{}",
                run.stderr
            );
        }
    }
}

#[test]
fn without_pruning_the_estimate_counts_every_node() {
    let run = cli(&[
        "profile",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "2000",
        "--eps",
        "0.5",
        "--no-prune",
        "--max-seconds",
        "30",
    ]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("at least 4024 node pairs"),
        "{}",
        run.stderr
    );
}

/// A range whose first sum leaves too many pairs for `--max-seconds` is refused after it, in
/// one line that says how many pairs the Chernoff bounds could not rule out (issue 21). The
/// up-front estimate (about 0.5 s) passes; the calibrated rest (about 4 s here) leaves a margin
/// of four against a faster machine.
#[test]
fn bounds_past_its_time_after_the_first_sum_is_refused() {
    let run = cli(&[
        "bounds",
        "-m",
        "fixtures/randomizers/forty-inputs.toml",
        "--n",
        "1000",
        "--eps",
        "0.01",
        "--max-seconds",
        "1",
    ]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("not ruled out by their Chernoff bound"),
        "{}",
        run.stderr
    );
}

/// A four-output mechanism whose curves keep a singular mass on both sides:
/// `Q(P = 0) = (1/2)^(k+1)`, `P(Q = 0) = (1/2)^(n−k)`.
fn four_outputs(dir: &std::path::Path) -> String {
    let file = dir.join("four-outputs.toml");
    std::fs::write(
        &file,
        "w0 = [\"1/2\", \"1/4\", \"1/4\", \"0\"]\nw1 = [\"0\", \"1/3\", \"1/6\", \"1/2\"]\n",
    )
    .unwrap();
    file.to_string_lossy().into_owned()
}

/// Every curve stays at or above its singular mass: where the truncation leaves only a bound
/// on δ at a large ε, its lower end is still the closed-form singular mass, not 0.
#[test]
fn delta_at_large_eps_stays_above_the_singular_mass() {
    let m = four_outputs(&scratch("singular-floor"));
    let out = cli_json(&["delta", "-m", &m, "--n", "150", "--k", "75", "--eps", "20"]);
    let row = &out["results"][0];
    for (key, power) in [("delta_qp", 76u32), ("delta_pq", 75)] {
        // (1/2)^power, less the outward rounding of the printed decimal.
        let floor = Rational::from((999_999, rug::Integer::from(1_000_000) << power));
        let d = enclosure(&row[key]);
        assert!(d.lo() >= &Endpoint::Finite(floor), "{key}: {d}");
    }
}

/// A text's words joined by single spaces (a report wraps its long lines).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An ε_M that is not resolved is marked so, in text and JSON, as `epsilon` marks ε; and the
/// hint under an ε of upper end inf at a singular mass equal to δ names the backend that
/// decides it (exact rationals), not more MPFR precision.
#[test]
fn unresolved_eps_is_marked_and_the_singular_mass_hint_names_exact() {
    let m = four_outputs(&scratch("unresolved-eps"));
    // k = 0: Q(P = 0) = 1/2 = δ exactly.
    let args = ["profile", "-m", &m, "--n", "8", "--delta", "0.5", "-q"];
    let run = cli(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let text = words(&run.stdout);
    assert!(text.contains("inf] (unresolved)"), "{}", run.stdout);
    assert!(text.contains("--backend exact does"), "{}", run.stdout);
    let out = cli_json(&args);
    assert_eq!(out["eps_results"][0]["eps_profile"]["resolved"], false);
    assert_eq!(out["eps_profile"]["resolved"], false);
    let mut exact = args.to_vec();
    exact.extend(["--backend", "exact"]);
    let out = cli_json(&exact);
    assert_eq!(out["eps_profile"]["resolved"], true, "{out}");
    // The pair command's hint.
    let args = [
        "epsilon", "-m", &m, "--n", "8", "--k", "0", "--delta", "0.5",
    ];
    let run = cli(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let hint = words(&run.stdout);
    assert!(hint.contains("[0, inf] (unresolved)"), "{}", run.stdout);
    assert!(hint.contains("--backend exact does"), "{}", run.stdout);
    assert!(
        !hint.contains("--precision P computes deeper"),
        "{}",
        run.stdout
    );
    let mut exact = args.to_vec();
    exact.extend(["--backend", "exact"]);
    assert_eq!(cli_json(&exact)["eps_qp"]["resolved"], true);
}
