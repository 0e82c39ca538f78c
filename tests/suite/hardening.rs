//! Issue 12: extreme but valid inputs get an exact answer or one clear refusal, never a crash
//! or a runaway.

use crate::common::*;
use shufflecert::enclosure::Endpoint;

#[test]
fn epsilon_past_e709_is_answered_exactly() {
    // Thresholds beyond the double range (e^ε > 1.8e308): finite certified ε, every backend.
    let tiny = std::env::temp_dir().join("shufflecert-tiny-entry.toml");
    let one_minus = {
        let mut s = String::from("9");
        s.push_str(&"9".repeat(319));
        format!("{s}/1{}", "0".repeat(320))
    };
    std::fs::write(
        &tiny,
        format!("w0 = [\"1e-320\", \"{one_minus}\"]\nw1 = [\"1/2\", \"1/2\"]\n"),
    )
    .unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "epsilon",
            "-m",
            "binary-rr:exp_eps0=1e310",
            "--n",
            "2",
            "--k",
            "0",
            "--delta",
            "0.5",
        ],
        vec![
            "epsilon",
            "-m",
            "binary-rr:exp_eps0=1e400",
            "--n",
            "1",
            "--k",
            "0",
            "--delta",
            "0.00001",
        ],
        vec![
            "epsilon",
            "-m",
            tiny.to_str().unwrap(),
            "--n",
            "2",
            "--k",
            "0",
            "--delta",
            "0.3",
        ],
    ];
    for args in cases {
        for backend in ["interval", "mpfr", "exact"] {
            let mut a = args.clone();
            a.extend(["--backend", backend]);
            let out = cli_json(&a);
            let e = enclosure(&out["eps_two_sided"]);
            assert!(
                e.hi() != &Endpoint::PosInf && e.lo().to_f64() > 700.0,
                "{a:?}: {e}"
            );
        }
    }
    // The profile too: ε_M at δ = 1e-30 for e^ε0 = 1e400 is about ln(1e400) = 921.03.
    let out = cli_json(&[
        "profile",
        "-m",
        "binary-rr:exp_eps0=1e400",
        "--n",
        "2",
        "--delta",
        "1e-30",
    ]);
    let e = enclosure(&out["eps_profile"]);
    assert!(
        e.hi() != &Endpoint::PosInf && (e.mid_f64() - 921.034).abs() < 0.01,
        "{e}"
    );
    // Many pairs tied at the maximum (too many to refine one by one): the scan is redone in
    // MPFR (review finding).
    let out = cli_json(&[
        "profile",
        "-m",
        "fixtures/mechanisms/underflow.toml",
        "--n",
        "50",
        "--delta",
        "1e-300",
    ]);
    let e = enclosure(&out["eps_profile"]);
    assert!(
        e.hi() != &Endpoint::PosInf && e.relative_width() < 1e-9,
        "{e}"
    );
}

#[test]
fn json_files_with_a_repeated_key_are_refused() {
    let dir = std::env::temp_dir().join("shufflecert-duplicate-keys");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text, key) in [
        (
            "rows.json",
            r#"{"w0": ["1/2", "1/2"], "w0": ["1/3", "2/3"], "w1": ["1/2", "1/2"]}"#,
            "\"w0\" is given twice",
        ),
        (
            "family.json",
            r#"{"family": "binary-rr", "eps0": "1", "eps0": "2"}"#,
            "\"eps0\" is given twice",
        ),
        (
            "nested.json",
            r#"{"inputs": ["a", "b"], "rows": [["1/2", "1/2"], ["1/2", "1/2"]], "outputs": ["x", "y"], "name": "n", "name": "m"}"#,
            "\"name\" is given twice",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let spec = file.to_str().unwrap();
        assert_fails(
            &["delta", "-m", spec, "--n", "3", "--k", "0", "--eps", "1"],
            key,
        );
        assert_fails(&["bounds", "-m", spec, "--n", "3", "--eps", "1"], key);
    }
}

#[test]
fn usage_errors_take_one_line() {
    // A missing option, an unknown flag, a repeated flag, a bad enum value, --eps with --delta,
    // a negative number read as a flag, no subcommand: one line (and a one-line hint), exit 2.
    for (args, needle) in [
        (vec!["delta", "-m", "binary-rr:eps0=1"], "--n"),
        (vec!["delta", "--bogus"], "--bogus"),
        (
            vec![
                "delta", "-m", "a", "-m", "b", "--n", "1", "--k", "0", "--eps", "1",
            ],
            "cannot be used multiple times",
        ),
        (
            vec![
                "delta",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "2",
                "--k",
                "0",
                "--eps",
                "1",
                "--backend",
                "nope",
            ],
            "possible values",
        ),
        (
            vec![
                "epsilon",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "2",
                "--k",
                "0",
                "--eps",
                "1",
                "--delta",
                "0.1",
            ],
            "--eps",
        ),
        (
            vec![
                "profile",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "4",
                "--eps",
                "-x",
            ],
            "-x",
        ),
        (vec![], "a command is required"),
    ] {
        assert_fails(&args, needle);
    }
}

#[test]
fn profile_threads_are_bounded() {
    assert_fails(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "5",
            "--eps",
            "1",
            "--threads",
            "1000000000",
        ],
        "--threads: at most",
    );
}

#[test]
fn n_near_two_to_the_64_is_refused_in_one_line() {
    for args in [
        vec![
            "delta",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "18446744073709551614",
            "--k",
            "0",
            "--eps",
            "1",
        ],
        vec![
            "delta",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "18446744073709551615",
            "--k",
            "0",
            "--eps",
            "1",
            "--max-memory-gib",
            "0.001",
        ],
        vec![
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "18446744073709551615",
            "--eps",
            "1",
        ],
        vec![
            "bounds",
            "-m",
            "k-rr:k=3,exp_eps0=2,inputs=3",
            "--n",
            "18446744073709551615",
            "--eps",
            "1",
        ],
    ] {
        assert_fails(&args, "too large");
    }
}

#[test]
fn a_binary_pair_past_the_time_budget_is_refused_up_front() {
    // n = 10⁹, k = n/2: two binomial windows of ~2.5·10⁵ values convolved pairwise (minutes
    // to weeks as n grows): refused at once with the estimate; --max-seconds moves the limit.
    let spec = "fixtures/mechanisms/binary-asymmetric.toml";
    let start = std::time::Instant::now();
    assert_fails(
        &[
            "delta",
            "-m",
            spec,
            "--n",
            "1000000000",
            "--k",
            "500000000",
            "--eps",
            "0.1",
        ],
        "--max-seconds",
    );
    assert!(start.elapsed().as_secs() < 10);
    assert_fails(
        &[
            "delta",
            "-m",
            spec,
            "--n",
            "10000000",
            "--k",
            "5000000",
            "--eps",
            "0.1",
            "--max-seconds",
            "1",
        ],
        "estimated",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            spec,
            "--n",
            "10",
            "--k",
            "5",
            "--eps",
            "0.1",
            "--max-seconds",
            "0",
        ],
        "--max-seconds",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            spec,
            "--n",
            "10",
            "--k",
            "5",
            "--eps",
            "0.1",
            "--max-seconds",
            "1e-400",
        ],
        "at least 0.001",
    );
    // Small problems are untouched.
    let out = cli_json(&[
        "delta", "-m", spec, "--n", "1000", "--k", "500", "--eps", "0.1",
    ]);
    assert!(out["results"][0]["delta_two_sided"].is_object());
}

#[test]
fn check_on_nearly_identical_rows_answers_in_seconds() {
    // Rows that differ by 1e-30 (t = ε/μ_n huge) and the adversarial run's C87: predictions
    // such as e^{-t²/2} reach exponents near 2^-34 000 000 000, whose exact rationals took
    // gigabytes; endpoints beyond 2^(±2^20) are now moved outward.
    let dir = std::env::temp_dir().join("shufflecert-near-identical");
    std::fs::create_dir_all(&dir).unwrap();
    let near = dir.join("near.toml");
    std::fs::write(
        &near,
        "w0 = [\"1/3\", \"2/3\"]\nw1 = [\"1000000000000000000000000000003/3000000000000000000000000000000\", \"1999999999999999999999999999997/3000000000000000000000000000000\"]\n",
    )
    .unwrap();
    let c87 = dir.join("C87.json");
    std::fs::write(
        &c87,
        r#"{"w0": ["154/265", "167/530", "37/795", "91/1590"], "w1": ["154/265", "167/530", "7400000000159/159000000000000", "9099999999841/159000000000000"]}"#,
    )
    .unwrap();
    let start = std::time::Instant::now();
    for args in [
        vec![
            "check",
            "-m",
            near.to_str().unwrap(),
            "--n",
            "3",
            "--k",
            "1",
            "--t",
            "100000",
        ],
        vec![
            "check",
            "-m",
            near.to_str().unwrap(),
            "--n",
            "3",
            "--k",
            "1",
            "--t",
            "10000000",
        ],
        vec![
            "check",
            "-m",
            c87.to_str().unwrap(),
            "--n",
            "5",
            "--k",
            "4",
            "--eps",
            "1,0.1",
            "--backend",
            "mpfr",
        ],
    ] {
        let run = cli(&args);
        assert!(
            run.status == 0 || run.status == 1,
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.contains("prediction"), "{args:?}");
    }
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
