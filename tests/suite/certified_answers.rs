//! Certificates of version 2: background pairs, limit experiments, TV balls, `bounds` and the
//! certified parts of `check`, `limit` and `berry-esseen`.  Each kind round-trips through
//! `verify`, and each kind of tampering (values, subjects, pairs, budgets, verdicts), its digest
//! recomputed, is rejected naming the field.

use crate::certificates::{Case, certify, reject_all, verify};
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
