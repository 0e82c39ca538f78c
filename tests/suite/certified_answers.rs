//! Certificates of version 2: background pairs, limit experiments, TV balls, `bounds` and the
//! certified parts of `check`, `limit` and `berry-esseen`.  Each kind round-trips through
//! `verify`, and each kind of tampering (values, subjects, pairs, budgets, verdicts), its digest
//! recomputed, is rejected naming the field.

use crate::certificates::{Case, certify, certify_with_status, reject_all, verify};
use crate::common::{cli_json, enclosure};
use proptest::prelude::*;
use serde_json::{Value, json};
use shufflecert::certificate::schema_errors;

/// A certificate of version 2 that conforms and verifies.
fn verified(args: &[&str], name: &str) -> (String, Value) {
    let (file, cert) = certify(args, name);
    assert_eq!(cert["schema"], "shufflecert/certificate/v2", "{args:?}");
    assert_eq!(schema_errors(&cert), Vec::<String>::new(), "{args:?}");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{args:?}: {report}");
    (file, cert)
}

/// An enclosure moved to `[lo, hi]`.
fn set(v: &mut Value, lo: &str, hi: &str) {
    *v = json!({ "lo": lo, "hi": hi });
}

const THREE: &str = "fixtures/randomizers/three-inputs.toml";

#[test]
fn background_pairs_are_certified_and_checked_by_brute_force() {
    for command in [
        &["delta", "--eps", "0.3,1"][..],
        &["epsilon", "--delta", "1e-4"],
        &["divergences", "--renyi-order", "2"],
    ] {
        let mut args = vec![command[0], "-m", THREE, "--n", "10"];
        args.extend(["--background", "low=5,mid=4", "--switch", "low:high"]);
        args.extend(&command[1..]);
        let (file, cert) = verified(&args, &format!("background-{}.json", command[0]));
        assert!(
            cert["proofs_notes"]
                .to_string()
                .contains("background-pairs.md")
        );
        let (_, report) = verify(&file);
        let routes = report["routes"].to_string();
        assert!(routes.contains("exact"), "{routes}");
        if command[0] == "delta" {
            assert!(routes.contains("reference"), "{routes}");
        }
    }
    let args = [
        "delta",
        "-m",
        THREE,
        "--n",
        "10",
        "--background",
        "low=5,mid=4",
        "--switch",
        "low:high",
        "--eps",
        "0.3,1",
    ];
    let (_, cert) = certify(&args, "background-tamper.json");
    let cases: Vec<Case> = vec![
        (
            "value",
            Box::new(|c| set(&mut c["report"]["results"][0]["delta_qp"], "0.5", "0.6")),
            "results.0.delta_qp",
        ),
        (
            "background",
            Box::new(|c| {
                c["report"]["background"] =
                    json!([{ "input": "low", "count": 4 }, { "input": "mid", "count": 5 }])
            }),
            "results.",
        ),
        (
            "switch",
            Box::new(|c| c["report"]["switch"]["x1"] = json!("mid")),
            "results.",
        ),
        (
            "rows",
            Box::new(|c| c["mechanism"]["exact"]["rows"][0][0] = json!("0.4")),
            "mechanism.exact",
        ),
        (
            // Nothing recomputed reads the alphabet: it is re-derived from the rows.
            "alphabet",
            Box::new(|c| {
                let classes = c["report"]["alphabet"]["classes"].as_array_mut().unwrap();
                let last = classes.pop().unwrap();
                classes[0]
                    .as_array_mut()
                    .unwrap()
                    .extend(last.as_array().unwrap().clone());
            }),
            "report.alphabet",
        ),
    ];
    reject_all(&cert, "background", cases);
}

#[test]
fn limit_experiments_are_certified_and_rechecked_deeper() {
    for (args, name) in [
        (
            &[
                "delta",
                "--experiment",
                "poisson-shift:lambda=5",
                "--eps",
                "0.5,2",
            ][..],
            "poisson",
        ),
        (
            &[
                "epsilon",
                "--experiment",
                "gaussian-shift:mu=1",
                "--delta",
                "1e-3",
            ],
            "gaussian",
        ),
        (
            &["divergences", "--experiment", "skellam-shift:a=2,b=3"],
            "skellam",
        ),
        (
            &[
                "epsilon",
                "--experiment",
                "poisson-shift:lambda=5",
                "--delta",
                "1e-3",
            ],
            "poisson-eps",
        ),
    ] {
        let (_, cert) = verified(args, &format!("experiment-{name}.json"));
        assert!(cert["mechanism"].is_null());
        assert_eq!(cert["experiment"]["given"], json!(args[2]));
    }
    let args = [
        "delta",
        "--experiment",
        "poisson-shift:lambda=5",
        "--eps",
        "0.5,2",
    ];
    let (_, cert) = certify(&args, "experiment-tamper.json");
    let cases: Vec<Case> = vec![
        (
            "value",
            Box::new(|c| set(&mut c["report"]["results"][1]["delta_pq"], "0", "1e-9")),
            "results.1.delta_pq",
        ),
        (
            "experiment",
            Box::new(|c| c["experiment"]["given"] = json!("poisson-shift:lambda=6")),
            "experiment.exact",
        ),
        (
            "report-experiment",
            Box::new(|c| c["report"]["experiment"]["name"] = json!("other")),
            "report.experiment",
        ),
    ];
    reject_all(&cert, "experiment", cases);
}

#[test]
fn tv_balls_are_certified_in_full() {
    let args = [
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "100",
        "--k",
        "3",
        "--eps",
        "0.5,1",
        "--tv-ball",
        "0.001",
    ];
    let (_, cert) = verified(&args, "tv-ball.json");
    let ball = &cert["report"]["tv_ball"];
    assert_eq!(ball["results"].as_array().unwrap().len(), 2);
    assert!(
        cert["proofs_notes"]
            .to_string()
            .contains("tv-and-le-cam.md")
    );
    let cases: Vec<Case> = vec![
        (
            "widened",
            Box::new(|c| {
                let v = &mut c["report"]["tv_ball"]["results"][0]["delta_qp"];
                let hi = v["hi"].as_str().unwrap().to_string();
                set(v, &hi, &hi);
            }),
            "tv_ball.results.0.delta_qp",
        ),
        (
            "budget",
            Box::new(|c| c["report"]["tv_ball"]["results"][1]["budget_pq"] = json!("1e-9")),
            "tv_ball.results.1.budget_pq",
        ),
        (
            "tv-bound",
            Box::new(|c| c["report"]["tv_ball"]["tv_p_bound"] = json!("0.0001")),
            "tv_ball.tv_p_bound",
        ),
        (
            "useful",
            Box::new(|c| {
                let u = c["report"]["tv_ball"]["results"][0]["useful"]
                    .as_bool()
                    .unwrap();
                c["report"]["tv_ball"]["results"][0]["useful"] = json!(!u);
            }),
            "tv_ball.results.0.useful",
        ),
        (
            "radius",
            Box::new(|c| c["report"]["tv_ball"]["eta"] = json!("0.0001")),
            "tv_ball",
        ),
        (
            "dropped",
            Box::new(|c| {
                c["report"]["tv_ball"]["results"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            "tv_ball.results",
        ),
    ];
    reject_all(&cert, "tv-ball", cases);
}

#[test]
fn bounds_certificates_hold_every_sum_and_reject_tampering() {
    for (args, name) in [
        (
            &[
                "bounds",
                "-m",
                "k-rr:k=4,exp_eps0=3",
                "--n",
                "10",
                "--eps",
                "0.5,1",
            ][..],
            "krr",
        ),
        (
            &["bounds", "-m", THREE, "--n", "8", "--delta", "1e-3"],
            "three",
        ),
        (
            &[
                "bounds",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "30",
                "--eps",
                "0.3",
            ],
            "binary",
        ),
        (
            &[
                "bounds",
                "-m",
                "k-rr:k=3,eps0=1.5",
                "--n",
                "40",
                "--delta",
                "1e-4",
            ],
            "real-eps0",
        ),
    ] {
        let (file, cert) = verified(args, &format!("bounds-{name}.json"));
        let (_, report) = verify(&file);
        if name == "krr" {
            assert!(
                report["routes"]
                    .to_string()
                    .contains("definition over raw outputs")
            );
        }
        if name == "real-eps0" {
            assert!(!cert["method"]["exp_eps0_bracket"].is_null());
        }
    }
    let args = ["bounds", "-m", THREE, "--n", "8", "--eps", "0.5,1"];
    let (_, cert) = certify(&args, "bounds-tamper.json");
    let cases: Vec<Case> = vec![
        (
            "upper-end",
            Box::new(|c| {
                set(
                    &mut c["report"]["results"][0]["upper"]["value"],
                    "0",
                    "1e-12",
                )
            }),
            "results.0.upper.value",
        ),
        (
            "lower-end",
            Box::new(|c| {
                set(
                    &mut c["report"]["results"][1]["lower"]["value"],
                    "0.5",
                    "0.9",
                )
            }),
            "results.1.lower.value",
        ),
        (
            "pair-sum",
            Box::new(|c| {
                set(
                    &mut c["method"]["upper_pairs"][0]["values"][0][1],
                    "0.5",
                    "0.6",
                )
            }),
            "method.upper_pairs.0.values.0.1",
        ),
        (
            "triple",
            Box::new(|c| {
                set(
                    &mut c["method"]["lower_triples"][1]["values"][1][0],
                    "0.5",
                    "0.6",
                )
            }),
            "method.lower_triples.1.values.1.0",
        ),
        (
            // Refuted at once: a value this deep would choose an unbounded recomputation.
            "deep-pair-sum",
            Box::new(|c| {
                let deep = format!("1/{}", rug::Integer::from(1) << 60_000u32);
                set(
                    &mut c["method"]["upper_pairs"][0]["values"][0][0],
                    "0",
                    &deep,
                )
            }),
            "method.upper_pairs.0.values.0.0",
        ),
        (
            "dropped-pair",
            Box::new(|c| {
                c["method"]["upper_pairs"].as_array_mut().unwrap().pop();
            }),
            "method.upper_pairs",
        ),
        (
            "index",
            Box::new(|c| {
                set(
                    &mut c["report"]["shuffle_index"]["chi_up"]["chi2"],
                    "0.1",
                    "0.1",
                )
            }),
            "shuffle_index.chi_up.chi2",
        ),
        (
            "upper-pair",
            Box::new(|c| {
                // The attaining pair moved to one whose sum is smaller.
                let row = &mut c["report"]["results"][0]["upper"];
                row["x1"] = json!("low");
                row["x1_prime"] = json!("mid");
            }),
            "results.0.upper.value",
        ),
    ];
    reject_all(&cert, "bounds", cases);
    // ε: a tampered end fails its witness.
    let args = [
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--n",
        "10",
        "--delta",
        "1e-3",
    ];
    let (_, cert) = certify(&args, "bounds-eps-tamper.json");
    let cases: Vec<Case> = vec![(
        "eps-upper",
        Box::new(|c| {
            set(
                &mut c["report"]["results"][0]["upper"]["value"],
                "0",
                "0.001",
            )
        }),
        "results.0.upper.value",
    )];
    reject_all(&cert, "bounds-eps", cases);
}

#[test]
fn real_eps0_bounds_agree_with_a_tight_rational_bracket() {
    // e^1.5 = 4.4816890703380648226020554601192758190057...: the certified ranges from eps0 and
    // from a 40-digit rational exp_eps0 overlap at both ends.
    let range = |spec: &str| -> Value {
        cli_json(&["bounds", "-m", spec, "--n", "300", "--eps", "0.2,0.6"])
    };
    let real = range("k-rr:k=4,eps0=1.5");
    let rational = range("k-rr:k=4,exp_eps0=4.4816890703380648226020554601192758190057");
    for i in 0..2 {
        for end in ["lower", "upper"] {
            let a = enclosure(&real["results"][i][end]["value"]);
            let b = enclosure(&rational["results"][i][end]["value"]);
            assert!(a.overlaps(&b), "{end} {i}: {a} vs {b}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// `bounds` on k-RR given by a real ε0 and on a tight rational bracket of e^ε0 (its
    /// 128-bit lower end) give overlapping ranges at both ends.
    #[test]
    fn eps0_and_its_rational_bracket_agree(k in 2u64..5, tenths in 1u32..30, n in 2u64..60) {
        use shufflecert::bounds::range::{BoundsQuery, Target, bounds};
        use shufflecert::mechanism::randomizer::load_randomizer;
        let eps0 = rug::Rational::from((tenths, 10));
        let (a_lo, _) = shufflecert::arith::exp_bracket(&eps0, 128);
        let query = |spec: String| BoundsQuery {
            randomizer: load_randomizer(&spec).unwrap(),
            n,
            target: Target::Delta(vec![shufflecert::query::Threshold::Eps(rug::Rational::from((1, 4)))]),
            options: Default::default(),
            backend: shufflecert::query::Backend::Interval,
            escalate_above: Some(1e-9),
        };
        let real = bounds(&query(format!("k-rr:k={k},eps0={}/10", tenths))).unwrap();
        let rational = bounds(&query(format!(
            "k-rr:k={k},exp_eps0={}",
            shufflecert::enclosure::exact_string(&a_lo)
        )))
        .unwrap();
        for (a, b) in real.iter().zip(&rational) {
            prop_assert!(a.lower.value.overlaps(&b.lower.value), "lower {} vs {}", a.lower.value, b.lower.value);
            prop_assert!(a.upper.value.overlaps(&b.upper.value), "upper {} vs {}", a.upper.value, b.upper.value);
        }
    }
}

/// With one target δ a profile repeats its row at the top level, and `bounds` copies that
/// row into `binary_profile`: both copies are certified, so a halved copy must not verify.
#[test]
fn repeated_profile_rows_are_checked() {
    let halved = |c: &mut Value, pointer: &str| {
        let v = c.pointer_mut(pointer).unwrap();
        let hi = v["hi"].as_str().unwrap().to_string();
        set(v, "0", &format!("{hi}/2"));
    };
    let profile = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "20",
        "--delta",
        "1e-3",
    ];
    let (_, cert) = certify(&profile, "profile-top-row.json");
    let cases: Vec<Case> = vec![(
        "top-level",
        Box::new(move |c| halved(c, "/report/eps_profile")),
        "report.eps_profile",
    )];
    reject_all(&cert, "profile-top-row", cases);
    let bounds = [
        "bounds",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "20",
        "--delta",
        "1e-3",
    ];
    let (_, cert) = certify(&bounds, "bounds-binary-row.json");
    let cases: Vec<Case> = vec![
        (
            "copied-row",
            Box::new(move |c| halved(c, "/report/binary_profile/0")),
            "report.binary_profile",
        ),
        (
            "embedded-top-level",
            Box::new(move |c| halved(c, "/method/binary_profile/report/eps_profile")),
            "binary_profile.report.eps_profile",
        ),
    ];
    reject_all(&cert, "bounds-binary-row", cases);
}

/// Genuine `bounds` certificates at the edges: ε = ε0 (where no tilt helps), values below the
/// windows' default cut (certified narrower than a first recomputation, so verify recomputes
/// finer), and the MPFR backend at a high precision; and a certificate with no users is
/// malformed, not a crash.
#[test]
fn bounds_certificates_at_the_edges_verify() {
    for (args, finer) in [
        (
            &["-m", "binary-rr:eps0=1", "--n", "10", "--eps", "0.5,1"][..],
            false,
        ),
        (
            &[
                "-m",
                "k-rr:k=3,eps0=1",
                "--n",
                "10",
                "--eps",
                "1",
                "--backend",
                "mpfr",
                "--precision",
                "256",
            ],
            false,
        ),
        (
            &["-m", "k-rr:k=4,eps0=1", "--n", "200", "--eps", "0.8"],
            true,
        ),
    ] {
        let mut all = vec!["bounds"];
        all.extend(args);
        let (file, cert) = certify(&all, "bounds-edge.json");
        let (status, report) = verify(&file);
        assert_eq!(status, 0, "{args:?}: {report}");
        if finer {
            assert!(
                report["routes"].to_string().contains("windows cut at"),
                "{report}"
            );
        }
        let zero = crate::certificates::tampered(&cert, "bounds-no-users.json", true, |c| {
            c["report"]["n"] = json!(0)
        });
        let run = crate::common::cli(&["verify", &zero]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(run.stderr.contains("report.n"), "{}", run.stderr);
    }
}

/// Genuine certificates that verify refused: a compound-Poisson experiment whose file is gone
/// (its text is recorded), a TV ball of radius 0 (the CLI accepts it), and `bounds` at a large
/// real ε0 (whose δ enclosures, widened past 1 by cancellation, are held to [0, 1]).
#[test]
fn genuine_edge_certificates_verify() {
    let source = format!(
        "{}/fixtures/experiments/two-jumps.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let copy = crate::certificates::path("two-jumps-copy.toml");
    std::fs::copy(&source, &copy).unwrap();
    let (file, cert) = certify(
        &["delta", "--experiment", &copy, "--eps", "0.5"],
        "experiment-file.json",
    );
    std::fs::remove_file(&copy).unwrap();
    assert_eq!(
        cert["experiment"]["text"],
        json!(std::fs::read_to_string(&source).unwrap())
    );
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    // The recorded text is what is verified: edited, it no longer matches the parameters.
    let edited = crate::certificates::tampered(&cert, "experiment-file-edited.json", true, |c| {
        let text = c["experiment"]["text"].as_str().unwrap().replacen(
            "intensity = \"1/2\"",
            "intensity = \"1/3\"",
            1,
        );
        c["experiment"]["text"] = json!(text);
    });
    assert_eq!(verify(&edited).0, 1);

    let args = [
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "100",
        "--k",
        "3",
        "--eps",
        "0.5",
        "--tv-ball",
        "0",
    ];
    verified(&args, "tv-ball-zero.json");

    let args = [
        "bounds",
        "-m",
        "k-rr:k=3,eps0=700",
        "--n",
        "10",
        "--eps",
        "0.5",
    ];
    let (file, cert) = certify(&args, "bounds-eps0-700.json");
    for end in ["lower", "upper"] {
        let e = enclosure(&cert["report"]["results"][0][end]["value"]);
        assert!(
            e.hi() <= &shufflecert::enclosure::Endpoint::Finite(1.into()),
            "{end}: {e}"
        );
        assert!(
            e.lo() > &shufflecert::enclosure::Endpoint::Finite((9, 10).into()),
            "{end}: {e}"
        );
    }
    assert_eq!(verify(&file).0, 0);
    // ε near ε0 = 700: δ at e^ε ≈ 2^1010 loses about 1010 bits to cancellation, which the
    // finer recomputation of a triple's witness adds to its precision.
    let args = [
        "bounds",
        "-m",
        "k-rr:k=3,eps0=700",
        "--n",
        "30",
        "--delta",
        "1e-10",
    ];
    verified(&args, "bounds-eps0-700-delta.json");
}

/// The labels a report derives from its certified values are checked too: `resolved` flags,
/// the range's ratio, the copy of the e^ε0 bracket, and the version a kind needs.
#[test]
fn derived_labels_are_checked() {
    let args = [
        "delta",
        "-m",
        THREE,
        "--n",
        "8",
        "--background",
        "low=3,mid=4",
        "--switch",
        "low:high",
        "--eps",
        "0.3",
    ];
    let (_, cert) = certify(&args, "labels-background.json");
    let cases: Vec<Case> = vec![
        (
            "resolved",
            Box::new(|c| {
                let flag = c["report"]["results"][0]["delta_qp"]["resolved"]
                    .as_bool()
                    .unwrap();
                c["report"]["results"][0]["delta_qp"]["resolved"] = json!(!flag);
            }),
            "report.results.0.delta_qp.resolved",
        ),
        (
            "version-1",
            Box::new(|c| {
                c["schema"] = json!("shufflecert/certificate/v1");
                c["tool"]["version"] = json!("0.1.9");
            }),
            "which never wrote a background pair",
        ),
    ];
    reject_all(&cert, "labels-background", cases);
    let args = [
        "bounds",
        "-m",
        "k-rr:k=3,eps0=1",
        "--n",
        "8",
        "--eps",
        "0.5",
    ];
    let (_, cert) = certify(&args, "labels-bounds.json");
    let cases: Vec<Case> = vec![
        (
            "ratio",
            Box::new(|c| c["report"]["results"][0]["ratio_upper_over_lower"] = json!(1.0)),
            "results.0.ratio_upper_over_lower",
        ),
        (
            "bracket",
            Box::new(|c| c["report"]["exp_eps0_bracket"][0] = json!("2")),
            "report.exp_eps0_bracket",
        ),
    ];
    reject_all(&cert, "labels-bounds", cases);
}

/// Review findings: a range's ε is not held to [0, 1] (only δ is); a profile's labels and scope
/// are bound to its proof; `bounds`' exact profile must be of the range's own n and target.
#[test]
fn labels_and_scope_are_bound_to_the_proof() {
    let v = cli_json(&[
        "bounds",
        "-m",
        "binary-rr:eps0=2",
        "--n",
        "100",
        "--delta",
        "1e-6",
    ]);
    let lower = enclosure(&v["results"][0]["lower"]["value"]);
    assert!(
        lower.lo() > &shufflecert::enclosure::Endpoint::Finite((3, 2).into()),
        "{lower}"
    );

    let profile = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "40",
        "--delta",
        "1e-3",
    ];
    let (_, cert) = certify(&profile, "labels-profile.json");
    let cases: Vec<Case> = vec![(
        "relabelled-delta",
        Box::new(|c| {
            c["report"]["eps_results"][0]["delta"] = json!("1e-6");
            c["report"]["delta"] = json!("1e-6");
        }),
        "report.eps_results.0.delta",
    )];
    reject_all(&cert, "labels-profile", cases);
    let shard = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "40",
        "--delta",
        "1e-3",
        "--k-range",
        "10..29",
    ];
    let (_, cert) = certify(&shard, "labels-shard.json");
    let cases: Vec<Case> = vec![(
        "shard-as-whole",
        Box::new(|c| {
            c["report"]["partial"] = json!(false);
            c["report"]["scope"] =
                json!("mechanism-wide: all k in 0..39 (every neighbouring pair, both orders)");
        }),
        "report.partial",
    )];
    reject_all(&cert, "labels-shard", cases);

    // A bounds certificate carrying the exact profile of another n.
    let (_, other) = certify(&profile, "labels-other-profile.json");
    let args = [
        "bounds",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "20",
        "--delta",
        "1e-3",
    ];
    let (_, cert) = certify(&args, "labels-bounds-profile.json");
    let cases: Vec<Case> = vec![(
        "profile-of-another-n",
        Box::new(move |c| {
            c["method"]["binary_profile"]["report"] = other["report"].clone();
            c["method"]["binary_profile"]["method"] = other["method"].clone();
            c["report"]["binary_profile"] = json!([other["report"]["eps_profile"].clone()]);
        }),
        "method.binary_profile: covers n = 40",
    )];
    reject_all(&cert, "labels-bounds-profile", cases);
}

/// Writes a claims file in the certificates' scratch directory.
fn claims_file(name: &str, text: &str) -> String {
    let file = crate::certificates::path(name);
    std::fs::write(&file, text).unwrap();
    file
}

/// Range audits (more than two inputs) write a certificate of version 2 that holds the claims
/// file, every range the verdicts were judged on with every sum behind it, and the verdicts;
/// `verify` re-derives each range, each verdict from the verified ends and each witness pair,
/// and the exit status is the audit's (1: a claim is unsound; 0: all sound).
#[test]
fn range_audit_certificates_round_trip() {
    // k-RR on 4 inputs at n = 6, ε = 0.5: lower ≈ 0.0399727 (the pair (0, 5 × 2) ≃ (1, 5 × 2)),
    // upper ≈ 0.0423637. An upper claim above the range (sound), below it (unsound: the
    // witness), inside it (undecided), and a lower claim below it (sound: the witness).
    let text = "n,eps,delta,kind,source\n6,0.5,0.05,upper,above\n6,0.5,0.01,upper,below\n6,0.5,0.041,upper,between\n6,0.5,0.03,lower,lower\n";
    let claims = claims_file("range-audit-claims.csv", text);
    let args = [
        "audit",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--claims",
        &claims,
        "--eps-ranges",
        // The range alone (the exact profile would decide the claim it leaves undecided).
        "--narrow-seconds",
        "0",
    ];
    let (file, cert) = certify_with_status(&args, "range-audit.json", 1);
    assert_eq!(cert["schema"], "shufflecert/certificate/v2");
    assert_eq!(schema_errors(&cert), Vec::<String>::new());
    assert_eq!(cert["claims"]["text"], json!(text));
    let notes = cert["proofs_notes"].to_string();
    assert!(
        notes.contains("audit-verdicts.md") && notes.contains("blanket-bounds.md"),
        "{notes}"
    );
    let verdicts: Vec<&str> = cert["report"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["sound", "unsound", "undecided", "sound"]);
    // One range of δ_M at n = 6 and one of ε_M per claimed δ of an upper claim, each with its
    // sums; each claim's range is a row of the first.
    let ranges = cert["method"]["ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), 4);
    assert_eq!(ranges[0]["quantity"], "delta_M(eps)");
    assert!(!ranges[0]["upper_pairs"].as_array().unwrap().is_empty());
    assert!(!ranges[0]["lower_triples"].as_array().unwrap().is_empty());
    let row = &ranges[0]["results"][0];
    assert_eq!(
        cert["report"]["claims"][1]["delta_range"],
        json!({ "lower": row["lower"], "upper": row["upper"] })
    );
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let routes = report["routes"].to_string();
    assert!(
        routes.contains("mpfr-256") && routes.contains("witness pair rebuilt by the pair engine"),
        "{routes}"
    );
    // The reviewer's page names each claim's deciding end: the witness pair for the unsound one.
    let html = crate::certificates::path("range-audit.html");
    let run = crate::common::cli(&["verify", &file, "--html", &html]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    let lower = &row["lower"];
    let witness = format!(
        "witness pair ({}, 5 × {}) ≃ ({}, 5 × {})",
        lower["x1"].as_str().unwrap(),
        lower["background"].as_str().unwrap(),
        lower["x1_prime"].as_str().unwrap(),
        lower["background"].as_str().unwrap()
    );
    assert!(page.contains(&witness), "{witness}");
    assert!(page.contains("blanket bound over every ordered pair"));
    // All sound: exit 0. Real ε0 (the ranges on a rational bracket of e^eps0).
    let claims = claims_file(
        "range-audit-sound.csv",
        "n,eps,delta\n5,0.5,0.5\n6,1,1e-2\n",
    );
    let args = ["audit", "-m", "k-rr:k=3,eps0=1", "--claims", &claims];
    let (file, cert) = certify_with_status(&args, "range-audit-sound.json", 0);
    assert_eq!(schema_errors(&cert), Vec::<String>::new());
    // Without --eps-ranges: one range of δ_M per n, and no range of ε_M.
    assert_eq!(cert["report"]["eps_ranges"], false);
    assert_eq!(cert["method"]["ranges"].as_array().unwrap().len(), 2);
    assert!(cert["report"]["claims"][1]["eps_range"].is_null());
    assert!(!cert["method"]["ranges"][0]["exp_eps0_bracket"].is_null());
    assert_eq!(cert["report"]["summary"]["sound"], 2);
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    // A file randomizer on three inputs.
    let claims = claims_file(
        "range-audit-three.csv",
        "n,eps,delta,kind\n4,1,1e-9,upper\n",
    );
    let args = ["audit", "-m", THREE, "--claims", &claims];
    let (file, _) = certify_with_status(&args, "range-audit-three.json", 1);
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
}

/// Every kind of tampering with a range audit's certificate, its digest recomputed, is
/// rejected naming the field; and relabelled as version 1 or as written by 0.1.x, it is invalid.
#[test]
fn range_audit_certificates_reject_tampering() {
    let text = "n,eps,delta,kind\n6,0.5,0.05,upper\n6,0.5,0.01,upper\n6,0.5,0.041,upper\n6,0.5,0.03,lower\n";
    let claims = claims_file("range-audit-tamper.csv", text);
    let args = [
        "audit",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--claims",
        &claims,
        "--eps-ranges",
        // The range alone (the exact profile would decide the claim it leaves undecided).
        "--narrow-seconds",
        "0",
    ];
    let (_, cert) = certify_with_status(&args, "range-audit-tamper.json", 1);
    let row = "/method/ranges/0/results/0";
    let cases: Vec<Case> = vec![
        (
            "verdict",
            Box::new(|c| c["report"]["claims"][1]["verdict"] = json!("sound")),
            "report.claims.1.verdict",
        ),
        (
            "summary",
            Box::new(|c| c["report"]["summary"]["sound"] = json!(3)),
            "report.summary",
        ),
        (
            "claim-text",
            Box::new(|c| {
                let t = c["claims"]["text"]
                    .as_str()
                    .unwrap()
                    .replace("0.01,", "0.001,");
                c["claims"]["text"] = json!(t);
            }),
            "claims.parsed",
        ),
        (
            // The file's text and its reading edited alike: the report judged another claim.
            "claim-text-and-parsed",
            Box::new(|c| {
                let t = c["claims"]["text"]
                    .as_str()
                    .unwrap()
                    .replace("0.01,", "0.001,");
                c["claims"]["text"] = json!(t);
                c["claims"]["parsed"][1]["delta"] = json!("0.001");
                c["claims"]["parsed"][3]["delta"] = json!("0.001");
            }),
            "report.claims.1.delta",
        ),
        (
            // The upper end lowered below the blanket sums (the claims' copies alike).
            "upper-end",
            Box::new(move |c| {
                for pointer in [
                    format!("{row}/upper/value"),
                    "/report/claims/2/delta_range/upper/value".to_string(),
                ] {
                    set(c.pointer_mut(&pointer).unwrap(), "0.04", "0.0401");
                }
            }),
            "method.ranges.0.results.0.upper.value",
        ),
        (
            "claim-copy-of-the-range",
            Box::new(|c| {
                set(
                    &mut c["report"]["claims"][0]["delta_range"]["upper"]["value"],
                    "0.04",
                    "0.045",
                )
            }),
            "report.claims.0.delta_range",
        ),
        (
            "certified-delta",
            Box::new(|c| {
                set(
                    &mut c["report"]["claims"][2]["certified_delta"],
                    "0.04",
                    "0.041",
                )
            }),
            "report.claims.2.certified_delta",
        ),
        (
            // The witness's value raised above what its pair has.
            "witness-value",
            Box::new(move |c| {
                set(
                    c.pointer_mut(&format!("{row}/lower/value")).unwrap(),
                    "0.0410",
                    "0.0411",
                )
            }),
            "method.ranges.0.results.0.lower.value",
        ),
        (
            // The witness moved to another background, whose pair has another δ.
            "witness-pair",
            Box::new(move |c| {
                let x1_prime = c.pointer(&format!("{row}/lower/x1_prime")).unwrap().clone();
                *c.pointer_mut(&format!("{row}/lower/background")).unwrap() = x1_prime;
            }),
            "method.ranges.0.results.0.lower.value",
        ),
        (
            "dropped-sums",
            Box::new(|c| c["method"]["ranges"][0]["upper_pairs"] = json!([])),
            "method.ranges.0.upper_pairs",
        ),
        (
            "dropped-range",
            Box::new(|c| {
                c["method"]["ranges"].as_array_mut().unwrap().remove(0);
            }),
            "report.claims.0.delta_range",
        ),
        (
            // Ranges of ε_M recorded, but the flag says none were asked for.
            "eps-ranges-flag",
            Box::new(|c| c["report"]["eps_ranges"] = json!(false)),
            "report.claims.0.eps_range",
        ),
        (
            // The route no longer mentions the ε searches the flag asked for.
            "eps-ranges-route",
            Box::new(|c| {
                let route = c["method"]["route"].as_str().unwrap().replace(
                    ", and per claimed delta of an upper claim the range of eps_M (--eps-ranges)",
                    "",
                );
                c["method"]["route"] = json!(route);
            }),
            "method.route",
        ),
        (
            "dropped-eps-range",
            Box::new(|c| {
                c["method"]["ranges"].as_array_mut().unwrap().remove(2);
            }),
            "report.claims.1.eps_range",
        ),
        (
            "schema-v1",
            Box::new(|c| c["schema"] = json!("shufflecert/certificate/v1")),
            "schema",
        ),
        (
            "tool-0.1.9",
            Box::new(|c| c["tool"]["version"] = json!("0.1.9")),
            "tool.version",
        ),
    ];
    reject_all(&cert, "range-audit", cases);
    // Without its ranges the certificate does not conform to the schema: malformed.
    let bare = crate::certificates::tampered(&cert, "range-audit-bare.json", true, |c| {
        c["method"].as_object_mut().unwrap().remove("ranges");
    });
    let run = crate::common::cli(&["verify", &bare]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("ranges"), "{}", run.stderr);
}

/// An exact number of a certificate, halved.
fn halved(v: &mut Value) {
    let q = shufflecert::enclosure::parse_rational(v.as_str().unwrap()).unwrap();
    *v = json!(shufflecert::enclosure::exact_string(&(q / 2u32)));
}

#[test]
fn limit_certificates_hold_every_certified_number() {
    // Single-dominant (limit δ, gaps, δ_n from the limit curve and its TV budgets; exact and
    // the brute-force reference at n = 10), Theorem 7.2's array (the auxiliary TV, exactly), an
    // interior k-RR sequence whose limit runs on the merged alphabet, and Proposition 6.1
    // (no limit: only the finite δ is certified).
    let single = [
        "limit",
        "--family",
        "binary-rr:exp_eps0=n/2",
        "--n",
        "10,100",
        "--eps",
        "0.5",
    ];
    let (file, cert) = verified(&single, "limit-single.json");
    assert_eq!(
        cert["sequence"],
        json!({ "given": single[2], "text": null })
    );
    assert!(cert["mechanism"].is_null());
    for note in ["limit-study.md", "limit-experiments.md", "tv-and-le-cam.md"] {
        assert!(cert["proofs_notes"].to_string().contains(note), "{note}");
    }
    let routes = verify(&file).1["routes"].to_string();
    for route in [
        "defining properties",
        "exact",
        "reference",
        "Lemma 2.4",
        "δ_n itself",
        "not certified",
    ] {
        assert!(routes.contains(route), "{route}: {routes}");
    }
    let observed = &cert["report"]["rows"][1]["results"][0]["observed"];
    assert_eq!(observed["certified"], false);
    assert!(observed["order_qp"].is_f64());
    let seven_two = "fixtures/sequences/theorem-7-2.toml";
    let sharp = [
        "limit",
        "--family",
        seven_two,
        "--n",
        "20,40",
        "--k-rule",
        "fraction:1/2",
        "--eps",
        "0.5",
    ];
    let (file, sharp_cert) = verified(&sharp, "limit-theorem-7-2.json");
    assert_eq!(
        sharp_cert["sequence"]["text"],
        json!(
            std::fs::read_to_string(format!("{}/{seven_two}", env!("CARGO_MANIFEST_DIR"))).unwrap()
        )
    );
    assert!(
        verify(&file).1["routes"]
            .to_string()
            .contains("Theorem 7.1")
    );
    let (_, reduced) = verified(
        &[
            "limit",
            "--family",
            "k-rr:k=4,exp_eps0=n/2,inputs=2",
            "--n",
            "40,80",
            "--k-rule",
            "fraction:1/2",
            "--eps",
            "0.5",
        ],
        "limit-reduced.json",
    );
    assert_eq!(reduced["report"]["limit_on_reduced_alphabet"], true);
    let (_, uncovered) = verified(
        &[
            "limit",
            "--family",
            "fixtures/sequences/proposition-6-1.toml",
            "--n",
            "20",
            "--eps",
            "0,1",
        ],
        "limit-uncovered.json",
    );
    assert!(uncovered["report"]["limit_pair"].is_null());

    let cases: Vec<Case> = vec![
        (
            "finite",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][1]["results"][0]["delta_qp"],
                    "0.2",
                    "0.3",
                )
            }),
            "rows.1.results.0.delta_qp",
        ),
        (
            "limit",
            Box::new(|c| {
                set(
                    &mut c["report"]["thresholds"][0]["delta_limit_pq"],
                    "0.1",
                    "0.11",
                )
            }),
            "thresholds.0.delta_limit_pq",
        ),
        (
            "gap",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][0]["results"][0]["gap_qp"],
                    "0.5",
                    "0.6",
                )
            }),
            "rows.0.results.0.gap_qp",
        ),
        (
            "narrowed-transfer",
            Box::new(|c| {
                let v = &mut c["report"]["rows"][1]["results"][0]["from_limit_pq"];
                let hi = v["hi"].as_str().unwrap().to_string();
                set(v, &hi, &hi);
            }),
            "rows.1.results.0.from_limit_pq",
        ),
        (
            "budget",
            Box::new(|c| halved(&mut c["report"]["rows"][1]["results"][0]["from_limit_budget_qp"])),
            "rows.1.results.0.from_limit_budget_qp",
        ),
        (
            "tv-budget",
            Box::new(|c| halved(&mut c["report"]["rows"][0]["tv_budget"]["tv_q"])),
            "rows.0.tv_budget.tv_q",
        ),
        (
            "useful",
            Box::new(|c| {
                let r = &mut c["report"]["rows"][1]["results"][0];
                let u = r["from_limit_useful_qp"].as_bool().unwrap();
                r["from_limit_useful_qp"] = json!(!u);
            }),
            "rows.1.results.0.from_limit_useful_qp",
        ),
        (
            "resonant",
            Box::new(|c| c["report"]["thresholds"][0]["resonant"] = json!(true)),
            "thresholds.0.resonant",
        ),
        (
            "k",
            Box::new(|c| c["report"]["rows"][1]["k"] = json!(1)),
            "rows.1.k",
        ),
        (
            "order",
            Box::new(|c| c["report"]["rows"][1]["results"][0]["observed"]["order_pq"] = json!(0.5)),
            "rows.1.results.0.observed.order_pq",
        ),
        (
            "observation-certified",
            Box::new(|c| {
                c["report"]["rows"][1]["results"][0]["observed"]["certified"] = json!(true)
            }),
            "rows.1.results.0.observed.certified",
        ),
        (
            "proved-order",
            Box::new(|c| c["report"]["proved_order"]["certified"] = json!(true)),
            "report.proved_order",
        ),
        (
            "regime",
            Box::new(|c| c["report"]["theorem_3_1_iii_part"] = json!("(a) interior")),
            "report.theorem_3_1_iii_part",
        ),
        (
            "geometry",
            Box::new(|c| c["report"]["geometry"]["delta_shift"] = json!(["-2", "2"])),
            "geometry.delta_shift",
        ),
        (
            "limit-pair",
            Box::new(|c| c["report"]["limit_pair"]["jumps"][0]["intensity"] = json!("3")),
            "report.limit_pair",
        ),
        (
            "sequence",
            Box::new(|c| c["sequence"]["given"] = json!("binary-rr:exp_eps0=n/3")),
            "report.sequence",
        ),
        (
            "tool-version",
            Box::new(|c| c["tool"]["version"] = json!("0.1.9")),
            "which never wrote a limit study",
        ),
        (
            "version-1",
            Box::new(|c| {
                c["schema"] = json!("shufflecert/certificate/v1");
                c["tool"]["version"] = json!("0.1.9");
            }),
            "names version 1, which does not describe a limit study",
        ),
    ];
    reject_all(&cert, "limit", cases);
    let cases: Vec<Case> = vec![
        (
            "text",
            Box::new(|c| {
                let text = c["sequence"]["text"].as_str().unwrap().replacen(
                    "[\"0\", \"2/3\"], [\"0\", \"1/3\"]",
                    "[\"0\", \"1/3\"], [\"0\", \"2/3\"]",
                    1,
                );
                c["sequence"]["text"] = json!(text);
            }),
            "report.geometry",
        ),
        (
            "auxiliary-tv",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][0]["theorem_7_2_auxiliary"][0]["tv"],
                    "0.01",
                    "0.02",
                )
            }),
            "rows.0.theorem_7_2_auxiliary.0.tv",
        ),
        (
            "auxiliary-split",
            Box::new(|c| c["report"]["rows"][1]["theorem_7_2_auxiliary"][0]["q"] = json!("1/3")),
            "rows.1.theorem_7_2_auxiliary.0.q",
        ),
    ];
    reject_all(&sharp_cert, "limit-sharp", cases);
}

#[test]
fn berry_esseen_certificates_hold_every_certified_number() {
    let local = ["berry-esseen", "--lambda", "16,256", "--t", "1"];
    let (file, cert) = verified(&local, "berry-esseen-local.json");
    assert!(cert["mechanism"].is_null() && cert["sequence"].is_null());
    let routes = verify(&file).1["routes"].to_string();
    for route in ["c_lo²·λ ≤ 1", "Gaussian shift", "not certified"] {
        assert!(routes.contains(route), "{route}: {routes}");
    }
    verified(
        &[
            "berry-esseen",
            "--lambda",
            "4,9",
            "--eps",
            "0.5",
            "--pi",
            "1/3",
            "--precision",
            "160",
        ],
        "berry-esseen-skellam.json",
    );
    let cases: Vec<Case> = vec![
        (
            "c",
            Box::new(|c| set(&mut c["report"]["rows"][0]["c"], "0.2500001", "0.2500002")),
            "rows.0.c",
        ),
        (
            "lattice",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][1]["results"][0]["delta_pq"],
                    "0",
                    "0.001",
                )
            }),
            "rows.1.results.0.delta_pq",
        ),
        (
            "gaussian",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][0]["results"][0]["delta_gaussian"],
                    "0.02",
                    "0.021",
                )
            }),
            "rows.0.results.0.delta_gaussian",
        ),
        (
            "gap",
            Box::new(|c| {
                set(
                    &mut c["report"]["rows"][1]["results"][0]["gap"],
                    "0",
                    "1e-6",
                )
            }),
            "rows.1.results.0.gap",
        ),
        (
            "eps",
            Box::new(|c| c["report"]["rows"][0]["results"][0]["eps"] = json!("0.3")),
            "rows.0.results.0.eps",
        ),
        (
            "lambda",
            Box::new(|c| c["report"]["rows"][1]["lambda"] = json!("255")),
            "rows.1.experiment",
        ),
        (
            "order",
            Box::new(|c| c["report"]["rows"][1]["results"][0]["observed"]["order"] = json!(1.0)),
            "rows.1.results.0.observed.order",
        ),
        (
            "tool-version",
            Box::new(|c| c["tool"]["version"] = json!("0.1.9")),
            "which never wrote a Berry–Esseen diagnostic",
        ),
        (
            "version-1",
            Box::new(|c| c["schema"] = json!("shufflecert/certificate/v1")),
            "names version 1",
        ),
    ];
    reject_all(&cert, "berry-esseen", cases);
}

/// `check` certificates: the pair's δ at both ends of each point's ε bracket and its
/// divergences are re-derived, each bracket is held against tμ_n exactly, and every
/// comparison's certified value and verdict follow from them.
#[test]
fn check_certificates_verify_and_reject_tampering() {
    for (args, name) in [
        (
            &[
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "100",
                "--k",
                "10",
                "--t",
                "1,2",
            ][..],
            "check-rr",
        ),
        (
            &[
                "-m",
                "fixtures/mechanisms/ternary.toml",
                "--n",
                "60",
                "--k",
                "0",
                "--eps",
                "0.3",
            ],
            "check-ternary",
        ),
        (
            &[
                "-m",
                "binary-rr:exp_eps0=3",
                "--n",
                "40",
                "--k",
                "3",
                "--t",
                "1",
                "--backend",
                "exact",
            ],
            "check-exact",
        ),
    ] {
        let mut all = vec!["check"];
        all.extend(args);
        let (file, cert) = verified(&all, &format!("{name}.json"));
        assert_eq!(cert["schema"], "shufflecert/certificate/v2");
        let (_, report) = verify(&file);
        assert!(
            report["routes"]
                .to_string()
                .contains("held in each bracket"),
            "{report}"
        );
    }
    let args = [
        "check",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "100",
        "--k",
        "10",
        "--t",
        "1,2",
    ];
    let (_, cert) = certify(&args, "check-tamper.json");
    let first_verdict = cert["report"]["comparisons"][0]["verdict"].clone();
    let cases: Vec<Case> = vec![
        (
            "certified",
            Box::new(|c| {
                set(
                    &mut c["report"]["comparisons"][0]["certified"],
                    "1/2",
                    "3/5",
                )
            }),
            "comparisons.0.certified",
        ),
        (
            "verdict",
            Box::new(move |c| {
                let other = if first_verdict == "inside" {
                    "optimistic"
                } else {
                    "inside"
                };
                c["report"]["comparisons"][0]["verdict"] = json!(other);
            }),
            "comparisons.0.verdict",
        ),
        (
            "optimistic-count",
            Box::new(|c| c["report"]["optimistic"] = json!(0)),
            "report.optimistic",
        ),
        (
            "prediction-label",
            Box::new(|c| c["report"]["comparisons"][1]["predicted"]["certified"] = json!(true)),
            "predicted.certified",
        ),
        (
            "bracket",
            Box::new(|c| {
                c["method"]["points"][1]["eps_bracket"] = json!(["1/10", "1/5"]);
            }),
            "method.points.1.eps_bracket",
        ),
        (
            "delta-row",
            Box::new(|c| set(&mut c["method"]["delta_rows"][0]["delta_qp"], "1/2", "3/4")),
            "method.delta_rows.0.delta_qp",
        ),
        (
            "divergence",
            Box::new(|c| set(&mut c["method"]["divergences"]["jsd"], "1/2", "3/4")),
            "method.divergences.jsd",
        ),
        (
            "fisher-constant",
            Box::new(|c| set(&mut c["report"]["constants"]["i_pi"], "1/2", "3/5")),
            "constants.i_pi",
        ),
        (
            "mixture-constant",
            Box::new(|c| set(&mut c["report"]["constants"]["i_mix"], "5", "5")),
            "constants.i_mix",
        ),
        (
            // A verdict flipped through its (uncertified) prediction.
            "prediction-formula",
            Box::new(|c| {
                let cmp = &mut c["report"]["comparisons"][2];
                let hi = cmp["certified"]["hi"].clone();
                cmp["predicted"]["formula_enclosure"] = json!({ "lo": hi, "hi": hi });
            }),
            "comparisons.2",
        ),
        (
            "comparison-dropped",
            Box::new(|c| {
                c["report"]["comparisons"].as_array_mut().unwrap().pop();
            }),
            "report.comparisons",
        ),
        (
            "label",
            Box::new(|c| c["report"]["comparisons"][0]["source"] = json!("folklore")),
            "comparisons.0",
        ),
    ];
    reject_all(&cert, "check", cases);
}

#[test]
fn check_sweep_certificates_verify_every_n_and_the_fits() {
    let args = [
        "check",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "100",
        "--k",
        "10",
        "--t",
        "1,2",
        "--n-sweep",
        "200,400,100,200",
    ];
    let (file, cert) = verified(&args, "check-sweep.json");
    // The other sizes once each, in the order given, k scaled to keep k/n.
    let sizes: Vec<(u64, u64)> = cert["method"]["sweep"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["n"].as_u64().unwrap(), e["k"].as_u64().unwrap()))
        .collect();
    assert_eq!(sizes, [(200, 20), (400, 40)]);
    let (_, report) = verify(&file);
    assert!(
        report["routes"].to_string().contains("order fits"),
        "{report}"
    );
    let cases: Vec<Case> = vec![
        (
            "sweep-row",
            Box::new(|c| {
                set(
                    &mut c["method"]["sweep"][1]["delta_rows"][2]["delta_pq"],
                    "1/2",
                    "3/4",
                )
            }),
            "method.sweep.1.delta_rows.2.delta_pq",
        ),
        (
            "sweep-divergence",
            Box::new(|c| {
                set(
                    &mut c["method"]["sweep"][0]["divergences"]["kl_qp"],
                    "1/2",
                    "3/4",
                )
            }),
            "method.sweep.0.divergences.kl_qp",
        ),
        (
            "sweep-k",
            Box::new(|c| {
                c["method"]["sweep"][0]["k"] = json!(21);
                c["method"]["sweep"][0]["pi"] = json!("21/200");
            }),
            "method.sweep.0.n",
        ),
        (
            "sweep-verdict",
            Box::new(|c| {
                let v = &mut c["method"]["sweep"][1]["comparisons"][0]["verdict"];
                *v = json!(if *v == "inside" {
                    "optimistic"
                } else {
                    "inside"
                });
            }),
            "method.sweep.1.comparisons.0.verdict",
        ),
        (
            "sweep-dropped",
            Box::new(|c| {
                c["method"]["sweep"].as_array_mut().unwrap().pop();
            }),
            "method.sweep",
        ),
        (
            "sweep-points",
            Box::new(|c| c["method"]["sweep"][0]["points"][0]["value"] = json!("3/2")),
            "method.sweep.0.points",
        ),
        (
            "errors",
            Box::new(|c| c["report"]["comparisons"][0]["abs_error"] = json!(1e-3)),
            "report.comparisons.0: its errors",
        ),
        (
            "sweep-errors",
            Box::new(|c| c["method"]["sweep"][1]["comparisons"][2]["rel_error"] = json!(0.5)),
            "method.sweep.1.comparisons.2: its errors",
        ),
        (
            "fit-order",
            Box::new(|c| c["report"]["sweep"][0]["observed_order"] = json!(-0.5)),
            "report.sweep",
        ),
        (
            "fit-error",
            Box::new(|c| c["report"]["sweep"][1]["errors"][0]["abs_error"] = json!(1e-9)),
            "report.sweep",
        ),
    ];
    reject_all(&cert, "check-sweep", cases);
    // Points given by ε keep their t = ε/μ_n at every other size.
    verified(
        &[
            "check",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "12",
            "--k",
            "4",
            "--eps",
            "0.4,0.7",
            "--n-sweep",
            "24,6",
        ],
        "check-sweep-eps.json",
    );
}

#[test]
fn shuffle_index_check_certificates_verify_and_reject_tampering() {
    let args = ["check", "-m", THREE, "--n", "60", "--eps", "0.5,1"];
    let (file, cert) = verified(&args, "check-index.json");
    assert_eq!(cert["schema"], "shufflecert/certificate/v2");
    let (_, report) = verify(&file);
    let routes = report["routes"].to_string();
    assert!(routes.contains("predictions made again"), "{routes}");
    assert!(routes.contains("exact"), "{routes}");
    let cases: Vec<Case> = vec![
        (
            "upper-pair",
            Box::new(|c| {
                set(
                    &mut c["method"]["ranges"][0]["upper_pairs"][0]["values"][0][0],
                    "1/2",
                    "3/4",
                )
            }),
            "method.ranges.0.upper_pairs.0",
        ),
        (
            "report-range",
            Box::new(|c| {
                set(
                    &mut c["report"]["delta_ranges"][1]["range"]["upper"]["value"],
                    "0",
                    "1",
                )
            }),
            "report.delta_ranges.1",
        ),
        (
            "epsilon-range",
            Box::new(|c| {
                set(
                    &mut c["report"]["epsilon_range"]["range"]["lower"]["value"],
                    "0",
                    "1",
                )
            }),
            "report.epsilon_range",
        ),
        (
            "index",
            Box::new(|c| {
                set(
                    &mut c["report"]["shuffle_index"]["chi_up"]["chi2"],
                    "2",
                    "3",
                )
            }),
            "shuffle_index.chi_up.chi2",
        ),
        (
            "certified",
            Box::new(|c| set(&mut c["report"]["predictions"][0]["certified"], "0", "1")),
            "report.predictions.0.certified",
        ),
        (
            "verdict",
            Box::new(|c| {
                let v = &mut c["report"]["predictions"][2]["verdict"];
                *v = json!(if *v == "inside" {
                    "optimistic"
                } else {
                    "inside"
                });
            }),
            "report.predictions.2.verdict",
        ),
        (
            "prediction",
            Box::new(|c| set(&mut c["report"]["predictions"][1]["predicted"], "1", "1")),
            "report.predictions.1",
        ),
        (
            "label",
            Box::new(|c| c["report"]["predictions"][0]["predicted_is_certified"] = json!(true)),
            "report.predictions.0",
        ),
        (
            "dropped",
            Box::new(|c| {
                c["report"]["predictions"].as_array_mut().unwrap().pop();
            }),
            "report.predictions",
        ),
        (
            "rel-error",
            Box::new(|c| c["report"]["predictions"][3]["rel_error"] = json!(0.25)),
            "report.predictions.3.rel_error",
        ),
        (
            "index-inputs",
            Box::new(|c| c["report"]["shuffle_index"]["chi_up"]["x1"] = json!("mid")),
            "shuffle_index.chi_up.x1",
        ),
        (
            "delta-target",
            Box::new(|c| c["method"]["ranges"][1]["delta"] = json!("1/100")),
            "method.ranges.1",
        ),
    ];
    reject_all(&cert, "check-index", cases);
}
