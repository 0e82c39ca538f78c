//! `bounds` (issue 11): the certified range [lower, upper] of a randomizer's profile.

use crate::common::*;
use rug::Rational;
use shufflecert::accountants::blanket::{Form, Randomizer as Published, delta as published};
use shufflecert::arith::Scalar;
use shufflecert::arith::mpfr::{MpfrCtx, MpfrInterval};
use shufflecert::enclosure::{Endpoint, parse_rational};

#[test]
fn binary_inputs_exact_profile_lies_inside_the_range() {
    for (spec, n) in [
        ("binary-rr:exp_eps0=3", "300"),
        ("fixtures/mechanisms/ternary.toml", "200"),
        ("fixtures/mechanisms/binary-asymmetric.toml", "150"),
    ] {
        let out = cli_json(&["bounds", "-m", spec, "--n", n, "--eps", "0.05,0.2,0.4"]);
        for (i, row) in out["results"].as_array().unwrap().iter().enumerate() {
            let lower = enclosure(&row["lower"]["value"]);
            let upper = enclosure(&row["upper"]["value"]);
            let exact = enclosure(&out["binary_profile"][i]);
            assert!(
                lower.lo() <= exact.hi(),
                "{spec} row {i}: lower {lower} above {exact}"
            );
            assert!(
                exact.lo() <= upper.hi(),
                "{spec} row {i}: {exact} above upper {upper}"
            );
            assert!(lower.lo() <= upper.hi());
        }
        assert!(
            out["binary_note"]
                .as_str()
                .unwrap()
                .contains("not always the worst case")
        );
    }
}

#[test]
fn lower_bound_is_the_pair_engine_value() {
    // k-RR on 4 inputs: the lower bound is attained with a third input as background, and it
    // is the δ of that concrete pair as the general-input pair engine computes it
    // (`delta --background x2=n−1 --switch x1:x1′`, δ_{P‖Q} with P the first dataset).
    let out = cli_json(&[
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=4",
        "--n",
        "60",
        "--eps",
        "0.3,0.5",
    ]);
    for (i, eps) in ["0.3", "0.5"].into_iter().enumerate() {
        let lower = &out["results"][i]["lower"];
        let (x1, x1p, x2) = (
            lower["x1"].as_str().unwrap(),
            lower["x1_prime"].as_str().unwrap(),
            lower["background"].as_str().unwrap(),
        );
        assert!(x2 != x1 && x2 != x1p, "a third input attains it for k-RR");
        let direct = cli_json(&[
            "delta",
            "-m",
            "k-rr:k=4,exp_eps0=3,inputs=4",
            "--n",
            "60",
            "--background",
            &format!("{x2}=59"),
            "--switch",
            &format!("{x1}:{x1p}"),
            "--eps",
            eps,
        ]);
        let engine = enclosure(&direct["results"][0]["delta_pq"]);
        let value = enclosure(&lower["value"]);
        assert!(value.overlaps(&engine), "{eps}: {value} vs engine {engine}");
        // The boundary pair of the binary engine (others holding x1) is below it.
        let boundary = cli_json(&[
            "delta",
            "-m",
            "k-rr:k=4,exp_eps0=3,inputs=2",
            "--n",
            "60",
            "--k",
            "0",
            "--eps",
            eps,
        ]);
        let b = enclosure(&boundary["results"][0]["delta_two_sided"]);
        assert!(value.lo() >= b.lo(), "{value} below the boundary pair {b}");
        let upper = enclosure(&out["results"][i]["upper"]["value"]);
        assert!(upper.lo() >= value.lo());
    }
}

#[test]
fn upper_bound_never_exceeds_the_published_blanket_bounds() {
    // k-RR with k = 4 symbols on 4 inputs, e^eps0 = 3: Balle et al.'s Hoeffding and Bennett
    // forms bound the same blanket divergence from above.
    let ctx = MpfrCtx { precision: 128 };
    let a = MpfrInterval::from_rational(&Rational::from(3), &ctx);
    for (n, eps) in [(100u64, "0.5"), (400, "0.3"), (400, "0.6")] {
        let out = cli_json(&[
            "bounds",
            "-m",
            "k-rr:k=4,exp_eps0=3,inputs=4",
            "--n",
            &n.to_string(),
            "--eps",
            eps,
        ]);
        let upper = enclosure(&out["results"][0]["upper"]["value"]);
        let e = parse_rational(eps).unwrap();
        for form in [Form::Hoeffding, Form::Bennett] {
            let p = published(form, Published::KRr(4), &a, n, &e, &ctx).enclosure();
            assert!(
                upper.hi() <= p.hi(),
                "n = {n}, eps = {eps}, {form:?}: blanket {upper} above the published {p}"
            );
        }
    }
}

#[test]
fn epsilon_range_and_shuffle_index() {
    let out = cli_json(&[
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=4",
        "--n",
        "200",
        "--delta",
        "0.005",
    ]);
    let lower = enclosure(&out["results"][0]["lower"]["value"]);
    let upper = enclosure(&out["results"][0]["upper"]["value"]);
    assert!(lower.hi() <= upper.lo(), "{lower} vs {upper}");
    assert!(lower.lo() > &Endpoint::Finite(Rational::new()));
    // χ² = (a + k − 1)/(2(a − 1)²) = 3/4 for both indices (k-RR, k ≥ 3).
    for key in ["chi_up", "chi_lo"] {
        let chi2 = enclosure(&out["shuffle_index"][key]["chi2"]);
        assert!(chi2.contains(&Rational::from((3, 4))), "{key}: {chi2}");
    }
    assert_eq!(out["quantity"], "eps_M(delta)");
}

#[test]
fn a_tilted_sum_past_the_memory_left_keeps_the_first_enclosure() {
    // δ far below the truncation depth asks for tilted sums; with little memory left for them
    // the range is still given (the untilted enclosure, wider) and contains the full answer.
    let args = [
        "bounds",
        "-m",
        "k-rr:k=3,exp_eps0=3,inputs=3",
        "--n",
        "300",
        "--eps",
        "0.9",
    ];
    let full = cli_json(&args);
    let tight = cli_json(&[&args[..], &["--max-memory-gib", "0.02"]].concat());
    for end in ["lower", "upper"] {
        let want = enclosure(&full["results"][0][end]["value"]);
        let got = enclosure(&tight["results"][0][end]["value"]);
        assert!(
            got.lo() <= want.lo() && want.hi() <= got.hi(),
            "{end}: {got} vs {want}"
        );
    }
}

#[test]
fn bad_randomizers_are_refused() {
    // An output one input never produces while another does: the blanket bound is infinite.
    assert_fails(
        &[
            "bounds",
            "-m",
            "fixtures/mechanisms/one-sided.toml",
            "--n",
            "10",
            "--eps",
            "1",
        ],
        "blanket bound is infinite",
    );
    assert_fails(
        &[
            "bounds",
            "-m",
            "k-rr:k=3,exp_eps0=2,inputs=4",
            "--n",
            "10",
            "--eps",
            "1",
        ],
        "inputs",
    );
    let dir = std::env::temp_dir().join("shufflecert-bounds-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sum.toml");
    std::fs::write(
        &file,
        "inputs = [\"a\", \"b\", \"c\"]\nrows = [[\"1/2\", \"1/2\"], [\"1/2\", \"1/2\"], [\"1/2\", \"1/3\"]]\n",
    )
    .unwrap();
    assert_fails(
        &[
            "bounds",
            "-m",
            file.to_str().unwrap(),
            "--n",
            "10",
            "--eps",
            "1",
        ],
        "rows[2]",
    );
}

#[test]
fn lower_bound_names_the_pair_that_attains_it() {
    // The printed (x1 → x1′, others x2) is δ(M(x1, x2, …) ‖ M(x1′, x2, …)): with the mechanism
    // (W0, W1) = (R_x1, R_x1′) that is the engine's reverse curve δ_{P‖Q} at k = 0 (x2 = x1) or
    // k = n − 1 (x2 = x1′).
    let spec = "fixtures/mechanisms/binary-asymmetric.toml";
    let out = cli_json(&[
        "bounds",
        "-m",
        spec,
        "--n",
        "5",
        "--exp-eps",
        "6/5",
        "--backend",
        "exact",
    ]);
    let lower = &out["results"][0]["lower"];
    let (x1, background) = (
        lower["x1"].as_str().unwrap(),
        lower["background"].as_str().unwrap(),
    );
    let rows = &out["randomizer"]["rows"];
    let (first, second) = if x1 == "0" {
        (&rows[0], &rows[1])
    } else {
        (&rows[1], &rows[0])
    };
    let dir = std::env::temp_dir().join("shufflecert-bounds-attained");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ordered.json");
    std::fs::write(
        &file,
        serde_json::json!({ "w0": first, "w1": second }).to_string(),
    )
    .unwrap();
    let k = if background == x1 { "0" } else { "4" };
    let direct = cli_json(&[
        "delta",
        "-m",
        file.to_str().unwrap(),
        "--n",
        "5",
        "--k",
        k,
        "--exp-eps",
        "6/5",
        "--backend",
        "exact",
    ]);
    let want = enclosure(&direct["results"][0]["delta_pq"]);
    let got = enclosure(&lower["value"]);
    assert!(got.overlaps(&want), "printed {got}, engine {want}");
}

#[test]
fn audit_judges_general_input_claims_against_the_range() {
    // Claims about k-RR on 4 inputs at n = 1000, ε = 0.0779: above the upper bound (sound),
    // below the lower bound (unsound, with the concrete pair), between them (undecided), and a
    // lower claim; every verdict checked against the `bounds` range printed on its own.
    let spec = "k-rr:k=4,exp_eps0=3,inputs=4";
    let range = cli_json(&["bounds", "-m", spec, "--n", "1000", "--eps", "0.0779"]);
    let lower = enclosure(&range["results"][0]["lower"]["value"]);
    let upper = enclosure(&range["results"][0]["upper"]["value"]);
    let (Endpoint::Finite(lo), Endpoint::Finite(hi)) = (lower.lo(), upper.hi()) else {
        panic!("finite range")
    };
    let between = Rational::from(lo + hi) / 2u32;
    assert!(lower.hi() < &Endpoint::Finite(between.clone()));
    let text = |q: &Rational| shufflecert::enclosure::exact_string(q);
    let dir = std::env::temp_dir().join("shufflecert-range-audit");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("claims.csv");
    std::fs::write(
        &file,
        format!(
            "n,eps,delta,kind\n1000,0.0779,{},upper\n1000,0.0779,{},upper\n1000,0.0779,{},upper\n1000,0.0779,{},lower\n",
            text(&(hi.clone() * 2u32)),
            text(&(lo.clone() / 2u32)),
            text(&between),
            text(&(lo.clone() / 2u32)),
        ),
    )
    .unwrap();
    // The range's verdicts alone (narrowing with the exact profile is tested in
    // profile_inputs.rs; at n = 1000 it would spend its whole minute here).
    let run = cli(&[
        "audit",
        "-m",
        spec,
        "--claims",
        file.to_str().unwrap(),
        "--json",
        "--narrow-seconds",
        "0",
    ]);
    assert_eq!(
        run.status, 1,
        "an unsound claim fails the run: {}",
        run.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let verdicts: Vec<&str> = out["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["sound", "unsound", "undecided", "sound"]);
    let unsound = &out["claims"][1];
    assert_eq!(unsound["delta_range"]["lower"]["background"], "2");
    assert!(enclosure(&unsound["certified_delta"]).contains(&between));
    assert!(out["claims"][0]["eps_range"].is_null());
    assert_eq!(out["eps_ranges"], false);
    // With --eps-ranges, upper claims also get the range of ε_M at their δ.
    let run = cli(&[
        "audit",
        "-m",
        spec,
        "--claims",
        file.to_str().unwrap(),
        "--json",
        "--eps-ranges",
        "--narrow-seconds",
        "0",
    ]);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let eps_range = &out["claims"][0]["eps_range"];
    assert!(
        enclosure(&eps_range["lower"]["value"]).hi()
            <= enclosure(&eps_range["upper"]["value"]).hi()
    );
    assert!(
        out["claims"][3]["eps_range"].is_null(),
        "a lower claim has none"
    );
    // Pair and Rényi claims need the exact profile of a binary-input mechanism.
    for (header, row, needle) in [
        ("n,eps,delta,kind,k", "1000,0.1,0.001,upper,3", "column k"),
        ("n,eps,delta,kind,alpha", "1000,0.1,,rdp,2", "column kind"),
    ] {
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, format!("{header}\n{row}\n")).unwrap();
        assert_fails(
            &["audit", "-m", spec, "--claims", bad.to_str().unwrap()],
            needle,
        );
    }
}

#[test]
fn check_holds_the_shuffle_index_predictions_against_the_range() {
    // Without --k, check compares the leading terms of Takagi–Liew §3 with the certified range
    // (k-RR on 4 inputs, χ² = 3/4 for both ends): each prediction is the formula's value, each
    // certified value is the range `bounds` prints, and at n = 10⁴ the leading term solved for
    // ε is within 10 % of the certified ε at δ = 1/n.
    let spec = "k-rr:k=4,exp_eps0=3,inputs=4";
    let out = cli_json(&["check", "-m", spec, "--n", "10000", "--eps", "0.02,0.03"]);
    assert_eq!(out["mode"], "shuffle-index");
    let range = cli_json(&["bounds", "-m", spec, "--n", "10000", "--eps", "0.02,0.03"]);
    let chi = 0.75f64.sqrt();
    let n = 10000f64;
    let predictions = out["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 8);
    for p in predictions {
        assert_eq!(p["predicted_is_certified"], false);
        let at = p["at"].as_str().unwrap();
        let end = p["end"].as_str().unwrap();
        let certified = enclosure(&p["certified"]);
        let predicted = enclosure(&p["predicted"]).mid_f64();
        if let Some(eps) = at.strip_prefix("δ at ε = ") {
            let i = if eps == "0.02" { 0 } else { 1 };
            let want = enclosure(&range["results"][i][end]["value"]);
            assert_eq!(certified, want, "{at} {end}");
            let x = eps.parse::<f64>().unwrap().exp_m1();
            let z = chi * x * n.sqrt();
            let formula = (-z * z / 2.0).exp()
                / (2.0 * std::f64::consts::PI).sqrt()
                / (chi.powi(3) * x * x * n.powf(1.5));
            assert!(
                (predicted / formula - 1.0).abs() < 1e-9,
                "{predicted} vs {formula}"
            );
        } else if p["prediction"]
            .as_str()
            .unwrap()
            .starts_with("leading term")
        {
            let c = certified.mid_f64();
            assert!((predicted / c - 1.0).abs() < 0.1, "{predicted} vs {c}");
        } else {
            let want = (n.ln() / n).sqrt() / chi;
            assert!((predicted / want - 1.0).abs() < 1e-9);
        }
    }
    for (flag, value) in [("--t", "1"), ("--n-sweep", "100")] {
        assert_fails(
            &[
                "check", "-m", spec, "--n", "100", "--eps", "0.1", flag, value,
            ],
            flag,
        );
    }
    assert_fails(&["check", "-m", spec, "--n", "1", "--eps", "0.1"], "--n");
    assert_fails(&["check", "-m", spec, "--n", "100"], "--t");
}

#[test]
fn values_far_below_the_double_range_match_the_independent_reference() {
    // fixtures/expected/deep-bounds.json: both ends of the range at values down to 10^-449,
    // against an independent log-space summation over every multinomial state (11 digits).
    let fixture: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/expected/deep-bounds.json"
        ))
        .unwrap(),
    )
    .unwrap();
    for case in fixture["cases"].as_array().unwrap().iter().take(3) {
        let spec = case["spec"].as_str().unwrap();
        let n = case["n"].to_string();
        let eps = case["eps"].as_str().unwrap();
        let out = cli_json(&["bounds", "-m", spec, "--n", &n, "--eps", eps]);
        let row = &out["results"][0];
        for (end, key) in [("upper", "max_up"), ("lower", "max_lo")] {
            let got = enclosure(&row[end]["value"]);
            let want = parse_rational(case[key].as_str().unwrap()).unwrap();
            // The reference has 11 significant digits.
            let tolerance = Rational::from(&want / 10_000_000_000u64);
            let (Endpoint::Finite(lo), Endpoint::Finite(hi)) = (got.lo(), got.hi()) else {
                panic!("{spec} n = {n}: {end} {got} is not finite")
            };
            assert!(
                Rational::from(lo - &want).abs() <= tolerance
                    && Rational::from(hi - &want).abs() <= tolerance,
                "{spec} n = {n} ε = {eps}: {end} {got} vs {want}"
            );
            assert!(got.relative_width() < 1e-12, "{got}");
        }
    }
}

#[test]
fn review_regressions_for_bounds() {
    // A target δ below the truncation depth: the ε search ends in seconds with a finite upper
    // end (D vanishes exactly beyond max u/v = 3, and probes below the depth are tilted).
    let out = cli_json(&[
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3,inputs=4",
        "--n",
        "300",
        "--delta",
        "1e-100",
    ]);
    let upper = enclosure(&out["results"][0]["upper"]["value"]);
    assert!(upper.hi().to_f64() <= 3f64.ln() + 1e-9, "{upper}");
    assert!(upper.relative_width() < 1e-6, "{upper}");
    // An escalation refused by the memory limit keeps the interval answer.
    let run = cli(&[
        "bounds",
        "-m",
        "k-rr:k=3,exp_eps0=2,inputs=3",
        "--n",
        "300",
        "--delta",
        "1e-40",
        "--max-memory-gib",
        "0.01",
        "--json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // Engine options that do not apply are refused, not ignored.
    assert_fails(
        &[
            "bounds",
            "-m",
            "k-rr:k=3,exp_eps0=2,inputs=3",
            "--n",
            "10",
            "--eps",
            "1",
            "--engine",
            "general",
        ],
        "--engine",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            "fixtures/randomizers/three-inputs.toml",
            "--n",
            "5",
            "--background",
            "mid=4",
            "--switch",
            "low:high",
            "--eps",
            "1",
            "--engine",
            "binary",
        ],
        "--engine",
    );
    assert_fails(
        &[
            "delta",
            "-m",
            "fixtures/randomizers/three-inputs.toml",
            "--n",
            "5",
            "--background",
            "mid=4,",
            "--switch",
            "low:high",
            "--eps",
            "1",
        ],
        "empty entry",
    );
}

/// Pairs and triples left to their Chernoff bound (issue 21): the ends are those of every
/// candidate summed, the certificate records each pruned one, and `verify` re-evaluates them.
#[test]
fn pruned_pairs_change_no_end_and_are_verified() {
    use crate::certificates::{certify, tampered, verify};
    use serde_json::{Value, json};
    use shufflecert::bounds::range::{BoundsQuery, Target, blanket_pair, concrete_pair};
    use shufflecert::bounds::upper::Exact;
    use shufflecert::enclosure::Enclosure;
    use shufflecert::exact::pair::PairOptions;
    use shufflecert::query::{Backend, Threshold};
    let spec = "fixtures/randomizers/six-inputs.toml";
    let args = ["bounds", "-m", spec, "--n", "200", "--eps", "0.2,0.4"];
    let out = cli_json(&args);
    let pruned = &out["chernoff_pruned"];
    assert!(pruned["upper_pairs"][0].as_u64().unwrap() >= 10, "{pruned}");
    assert!(
        pruned["lower_triples"][0].as_u64().unwrap() >= 30,
        "{pruned}"
    );
    // Every candidate summed, by the library: the same ends.
    let r = shufflecert::mechanism::randomizer::load_randomizer(spec).unwrap();
    let thresholds: Vec<Threshold> = ["1/5", "2/5"]
        .iter()
        .map(|e| Threshold::Eps(parse_rational(e).unwrap()))
        .collect();
    let q = BoundsQuery {
        randomizer: r.clone(),
        n: 200,
        target: Target::Delta(thresholds),
        options: PairOptions::default(),
        backend: Backend::Interval,
        escalate_above: None,
    };
    let exact = Exact::of(&r).unwrap();
    let (triples, _) = shufflecert::bounds::range::lower_triples(&exact);
    for (i, row) in out["results"].as_array().unwrap().iter().enumerate() {
        let largest = |values: Vec<Enclosure>| {
            values
                .into_iter()
                .max_by(|a, b| a.hi().cmp(b.hi()))
                .unwrap()
        };
        let mut every_pair = Vec::new();
        for x1 in 0..6 {
            for x1p in x1 + 1..6 {
                let [f, b] = blanket_pair(&q, x1, x1p).unwrap()[i].clone();
                every_pair.extend([f, b]);
            }
        }
        // (The JSON rounds outward to a few digits.)
        let upper = enclosure(&row["upper"]["value"]);
        assert!(upper.contains_enclosure(&largest(every_pair)), "row {i}");
        let every_triple = triples
            .iter()
            .flat_map(|&(x1, x1p, x2)| {
                [
                    concrete_pair(&q, x1, x1p, x2).unwrap()[i].clone(),
                    concrete_pair(&q, x1p, x1, x2).unwrap()[i].clone(),
                ]
            })
            .collect();
        let lower = enclosure(&row["lower"]["value"]);
        assert!(lower.contains_enclosure(&largest(every_triple)), "row {i}");
    }
    // The certificate records them; verify re-evaluates each and notices a changed one.
    let (file, cert) = certify(&args, "pruned-six.json");
    assert_eq!(verify(&file).0, 0);
    let pruned = cert["method"]["upper_pruned"].as_array().unwrap();
    assert!(!pruned.is_empty());
    for (name, edit, needle) in [
        (
            "bound",
            Box::new(|c: &mut Value| {
                c["method"]["upper_pruned"][0]["chernoff"][0][0]["bound"] = json!("1/10000000000")
            }) as Box<dyn FnOnce(&mut Value)>,
            "upper_pruned.0.chernoff.0.0.bound",
        ),
        (
            "threshold",
            Box::new(|c: &mut Value| {
                c["method"]["upper_pruned"][0]["chernoff"][1][1]["t"] = json!("3")
            }),
            "upper_pruned.0.chernoff.1.1",
        ),
        (
            "record",
            Box::new(|c: &mut Value| {
                c["method"]["upper_pruned"]
                    .as_array_mut()
                    .unwrap()
                    .remove(0);
            }),
            "covered 0 times",
        ),
    ] {
        let file = tampered(&cert, &format!("pruned-{name}.json"), true, edit);
        let (status, report) = verify(&file);
        assert_eq!(status, 1, "{name}: {report}");
        assert!(
            report["problems"].to_string().contains(needle),
            "{name}: {report}"
        );
    }
}

/// An exact-backend range with point values (δ at ε = 0 is rational) verifies: its sums are redone
/// in exact rationals, since no MPFR enclosure confirms a point.  A changed point is refused.
#[test]
fn exact_range_certificates_with_point_values_verify() {
    use crate::certificates::{certify, tampered, verify};
    let args = [
        "bounds",
        "-m",
        "k-rr:k=3,exp_eps0=2",
        "--n",
        "4",
        "--eps",
        "0,0.5",
        "--backend",
        "exact",
    ];
    let (file, cert) = certify(&args, "bounds-exact-points.json");
    let upper = &cert["report"]["results"][0]["upper"]["value"];
    assert_eq!(upper["lo"], upper["hi"], "a point at ε = 0: {upper}");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    assert!(
        report["routes"].to_string().contains("exact rationals"),
        "{report}"
    );
    let edited = tampered(&cert, "bounds-exact-points-edited.json", true, |c| {
        c["report"]["results"][0]["upper"]["value"] =
            serde_json::json!({ "lo": "0.1328125", "hi": "0.1328125" })
    });
    assert_ne!(verify(&edited).0, 0);
}
