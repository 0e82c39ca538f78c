//! One model of inputs (issue 13 of the roadmap, issue 19 of the tracker): `k-rr:k=K,…` is K-ary
//! randomized response on K-valued inputs everywhere; its binary-input restriction is asked for
//! as `inputs=2`; every report states its input domain; commands that answer binary inputs only
//! refuse a randomizer with more inputs in one line naming what answers it; and `compare` holds
//! each published bound against the mechanism it was published for.

use crate::common::*;
use rug::Rational;
use serde_json::Value;
use shufflecert::enclosure::{Endpoint, parse_rational};

const K_RR_4: &str = "k-rr:k=4,exp_eps0=3";

#[test]
fn a_k_rr_family_string_means_k_valued_inputs() {
    let r = shufflecert::mechanism::randomizer::load_randomizer(K_RR_4).unwrap();
    assert_eq!(r.input_count(), 4);
    assert_eq!(r.inputs, ["0", "1", "2", "3"]);
    // A file with "family": "k-rr" means the same, and "inputs": 2 restricts it.
    let dir = std::env::temp_dir().join(format!("shufflecert-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("k-rr-5.toml");
    std::fs::write(&file, "family = \"k-rr\"\nk = 5\nexp_eps0 = \"3\"\n").unwrap();
    let r = shufflecert::mechanism::randomizer::load_randomizer(file.to_str().unwrap()).unwrap();
    assert_eq!(r.input_count(), 5);
    let restricted = shufflecert::mechanism::load_mechanism(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/mechanisms/k-rr-4.json"
    ))
    .unwrap();
    assert_eq!(restricted.restriction_of, Some(4));
    // binary-rr and k = 2 are binary already; inputs=2 is accepted, anything else refused.
    for spec in [
        "binary-rr:eps0=1",
        "binary-rr:eps0=1,inputs=2",
        "k-rr:k=2,exp_eps0=3",
    ] {
        assert!(
            shufflecert::mechanism::load_mechanism(spec).is_ok(),
            "{spec}"
        );
    }
}

#[test]
fn binary_only_commands_refuse_more_inputs_naming_what_answers() {
    // The trap of issue 13: a pair of k-rr:k=20 used to answer for binary inputs silently.
    let args = [
        "epsilon",
        "-m",
        "k-rr:k=20,eps0=2",
        "--n",
        "2000",
        "--k",
        "0",
        "--delta",
        "1e-6",
    ];
    assert_fails(&args, "profile");
    let run = cli(&args);
    assert!(
        run.stderr.contains("k-rr:k=20,eps0=2,inputs=2"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("20 inputs"), "{}", run.stderr);
    for (args, needle) in [
        (
            vec![
                "delta", "-m", K_RR_4, "--n", "60", "--k", "0", "--eps", "0.5",
            ],
            "--background",
        ),
        (
            vec![
                "epsilon", "-m", K_RR_4, "--n", "60", "--k", "0", "--delta", "1e-3",
            ],
            "--background",
        ),
        (
            vec!["divergences", "-m", K_RR_4, "--n", "60", "--k", "0"],
            "--background",
        ),
        (vec!["constants", "-m", K_RR_4, "--pi", "0.3"], "bounds"),
        (
            vec!["check", "-m", K_RR_4, "--n", "100", "--k", "30", "--t", "1"],
            "without --k",
        ),
        (
            vec![
                "limit",
                "--family",
                "k-rr:k=4,exp_eps0=n/2",
                "--n",
                "100",
                "--eps",
                "0.5",
            ],
            "inputs=2",
        ),
    ] {
        assert_fails(&args, needle);
    }
    // A randomizer file with three inputs names no `inputs=2` (it is not a family).
    let run = cli(&[
        "constants",
        "-m",
        "fixtures/randomizers/three-inputs.toml",
        "--pi",
        "0.3",
    ]);
    assert_eq!(run.status, 2);
    assert!(!run.stderr.contains("inputs=2") && run.stderr.contains("bounds"));
}

#[test]
fn the_binary_restriction_answers_as_before_and_says_so() {
    // inputs=2 gives exactly the pair the binary-input mechanism gave before 0.2.0: its rows
    // are those of 4-RR's inputs 0 and 1.
    let m = shufflecert::mechanism::load_mechanism("k-rr:k=4,exp_eps0=3,inputs=2").unwrap();
    let [w0, w1] = m.rational_rows().unwrap();
    let (t, o) = (Rational::from((1, 2)), Rational::from((1, 6)));
    assert_eq!(w0, [t.clone(), o.clone(), o.clone(), o.clone()]);
    assert_eq!(w1, [o.clone(), t, o.clone(), o]);
    let run = cli(&[
        "profile",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=2",
        "--n",
        "30",
        "--delta",
        "1e-3",
        "-q",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let second = run.stdout.lines().nth(1).unwrap();
    assert!(
        second.contains("binary inputs {0, 1}") && second.contains("4-input"),
        "{second}"
    );
    let json = cli_json(&[
        "profile",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=2",
        "--n",
        "30",
        "--delta",
        "1e-3",
        "-q",
    ]);
    assert_eq!(json["input_domain"]["count"], 2);
    assert_eq!(json["input_domain"]["restriction_of"], 4);
}

#[test]
fn every_report_states_its_input_domain() {
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "delta",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--k",
            "0",
            "--eps",
            "0.5",
        ],
        vec![
            "epsilon",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--k",
            "0",
            "--delta",
            "0.1",
        ],
        vec![
            "divergences",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--k",
            "0",
        ],
        vec![
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--eps",
            "0.5",
            "-q",
        ],
        vec![
            "constants",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--pi",
            "0.3",
        ],
        vec!["bounds", "-m", K_RR_4, "--n", "20", "--eps", "0.5"],
        vec!["compare", "-m", K_RR_4, "--n", "20", "--delta", "1e-3"],
        vec![
            "epsilon",
            "-m",
            K_RR_4,
            "--n",
            "20",
            "--background",
            "2=19",
            "--switch",
            "0:1",
            "--delta",
            "1e-3",
        ],
    ];
    for args in cases {
        let run = cli(&args);
        assert_eq!(run.status, 0, "{args:?}: {}", run.stderr);
        let head: String = run.stdout.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(head.contains("inputs {"), "{args:?}: {head}");
        let json = cli_json(&args);
        assert!(
            json["input_domain"]["count"].as_u64().unwrap() >= 2,
            "{args:?}"
        );
        let errors: Vec<String> = report_schema()
            .iter_errors(&json)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:?}");
        assert_eq!(json["schema"], "shufflecert/report/v1");
        assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    }
}

/// `schema/report-v1.schema.json`, compiled.
fn report_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/report-v1.schema.json"
    ))
    .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// The status of bound `id` in a compare report's first result.
fn status<'a>(report: &'a Value, id: &str) -> &'a str {
    report["results"][0]["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == id)
        .and_then(|b| b["status"].as_str())
        .unwrap()
}

#[test]
fn compare_holds_the_k_rr_bound_against_k_valued_inputs() {
    // The issue's case: Wang et al.'s k-RR bound, 0.315489, is below the certified ε of a
    // concrete pair of 4-input datasets, [0.316317098030885, 0.316317098031014].
    let out = cli_json(&["compare", "-m", K_RR_4, "--n", "60", "--delta", "1e-3"]);
    assert_eq!(status(&out, "wang-variation-ratio"), "VIOLATED");
    assert_eq!(status(&out, "fmt21-clone"), "holds");
    let range = &out["results"][0]["certified_eps_range"];
    let lower = enclosure(&range["lower"]["value"]);
    let issue = parse_rational("0.316317098030885").unwrap();
    assert!(lower.lo() <= &Endpoint::Finite(issue.clone()), "{lower}");
    assert!(lower.hi() >= &Endpoint::Finite(issue), "{lower}");
    assert_eq!(range["lower"]["background"], "2");
    // The witness is the pair `epsilon --background 2=59 --switch 0:1` certifies.
    let pair = cli_json(&[
        "epsilon",
        "-m",
        K_RR_4,
        "--n",
        "60",
        "--background",
        "2=59",
        "--switch",
        &format!(
            "{}:{}",
            range["lower"]["x1"].as_str().unwrap(),
            range["lower"]["x1_prime"].as_str().unwrap()
        ),
        "--delta",
        "1e-3",
    ]);
    assert!(enclosure(&pair["eps_two_sided"]).overlaps(&lower));
    // Each bound says what it is stated for.
    for b in out["results"][0]["bounds"].as_array().unwrap() {
        let stated = b["stated_for"].as_str().unwrap();
        if b["id"].as_str().unwrap().contains("rr") || b["id"] == "wang-variation-ratio" {
            assert!(stated.contains("4-valued inputs"), "{b}");
        } else {
            assert!(stated.contains("any input domain"), "{b}");
        }
    }
    // The same at n = 1000 (the issue's second case: 0.134943 below 0.134998).
    let out = cli_json(&["compare", "-m", K_RR_4, "--n", "1000", "--delta", "1e-3"]);
    assert_eq!(status(&out, "wang-variation-ratio"), "VIOLATED");
    // The text names the witness datasets.
    let run = cli(&["compare", "-m", K_RR_4, "--n", "60", "--delta", "1e-3"]);
    assert!(
        run.stdout
            .contains("VIOLATED: the witness pair (one user 0, 59 users 2)")
    );
    // The binary-input restriction is labelled as such.
    let run = cli(&[
        "compare",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=2",
        "--n",
        "60",
        "--delta",
        "1e-3",
    ]);
    assert!(
        run.stdout
            .contains("binary-input restriction of a 4-input randomizer")
    );
}

#[test]
fn help_lists_only_what_each_command_accepts() {
    for (command, refused) in [
        ("check", &["--experiment", "--background"][..]),
        ("bounds", &["--engine"][..]),
    ] {
        let help = cli(&[command, "--help"]).stdout;
        for flag in refused {
            assert!(
                !help.lines().any(|l| l.trim_start().starts_with(flag)),
                "{command} --help lists {flag}"
            );
        }
    }
    // Every command that writes a certificate says so, in its options and its usage line.
    for command in ["bounds", "check", "limit", "berry-esseen"] {
        let help = cli(&[command, "--help"]).stdout;
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with("--certificate")),
            "{command} --help does not list --certificate"
        );
    }
    for command in ["limit", "berry-esseen"] {
        let help = cli(&[command, "--help"]).stdout;
        let usage = help
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or_default();
        assert!(usage.contains("--certificate"), "{command}: {usage}");
    }
    // Usage lines show what is required, every form.
    let help = cli(&["delta", "--help"]).stdout;
    assert!(
        help.contains("--background X=C") && help.contains("--experiment EXP"),
        "{help}"
    );
    // A missing target names every alternative.
    let run = cli(&["profile", "-m", "binary-rr:eps0=1", "--n", "10"]);
    assert_eq!(run.status, 2);
    for flag in ["--eps", "--exp-eps", "--delta", "--renyi-order"] {
        assert!(run.stderr.contains(flag), "{}", run.stderr);
    }
    let run = cli(&["delta", "-m", "binary-rr:eps0=1", "--n", "10", "--k", "0"]);
    assert!(run.stderr.contains("--eps") && run.stderr.contains("--exp-eps"));
    // An unknown family string lists the known ones.
    assert_fails(
        &[
            "profile",
            "-m",
            "krr:k=4,exp_eps0=3",
            "--n",
            "10",
            "--eps",
            "1",
        ],
        "binary-rr, k-rr",
    );
}

#[test]
fn text_reports_fit_one_hundred_columns() {
    for args in [
        vec![
            "compare",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "1000",
            "--delta",
            "1e-5",
        ],
        vec!["compare", "-m", K_RR_4, "--n", "60", "--delta", "1e-3"],
        vec![
            "audit",
            "-m",
            "binary-rr:eps0=1",
            "--claims",
            "fixtures/claims/examples.jsonl",
        ],
        vec!["bounds", "-m", K_RR_4, "--n", "100", "--eps", "0.5,1"],
        vec![
            "limit",
            "--family",
            "binary-rr:exp_eps0=n/2",
            "--n",
            "1000,10000",
            "--eps",
            "0.5",
        ],
    ] {
        let run = cli(&args);
        for line in run.stdout.lines() {
            assert!(line.chars().count() <= 100, "{args:?}: {line}");
        }
    }
    // --wide prints both ends in full; --digits caps the digits (rounded outward).
    let args = [
        "epsilon",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "1000",
        "--k",
        "0",
        "--delta",
        "1e-5",
    ];
    let compact = cli(&args).stdout;
    assert!(compact.contains("0.105372586161[51, 96]"), "{compact}");
    let mut wide = args.to_vec();
    wide.push("--wide");
    assert!(
        cli(&wide)
            .stdout
            .contains("[0.10537258616151, 0.10537258616196]")
    );
    let mut digits = args.to_vec();
    digits.extend(["--digits", "4"]);
    assert!(
        cli(&digits).stdout.contains("0.105[3, 4]"),
        "{}",
        cli(&digits).stdout
    );
    assert_fails(&[&args[..], &["--digits", "1"]].concat(), "--digits");
}
