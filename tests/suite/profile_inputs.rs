//! `profile` for randomizers on more than two inputs (issue 23): the exact worst case over every
//! dataset, held against brute force over every dataset (every sequence of the others' inputs,
//! no exchangeability assumed) and every assignment of outputs.

use crate::common::*;
use num_rational::BigRational;
use num_traits::Zero;
use proptest::prelude::*;

const THREE: &str = "fixtures/randomizers/three-inputs.toml";
const FORTY: &str = "fixtures/randomizers/forty-inputs.toml";

fn rows_of(doc: &serde_json::Value) -> Vec<Vec<BigRational>> {
    doc["randomizer"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            strings(row)
                .iter()
                .map(|x| to_big(&shufflecert::enclosure::parse_rational(x).unwrap()))
                .collect()
        })
        .collect()
}

/// `max over (others, x1 ≠ x1′) of Σ_N (P_{x1}(N) − c P_{x1′}(N))₊`, every dataset one by one.
fn brute_force_max(rows: &[Vec<BigRational>], n: usize, c: &BigRational) -> BigRational {
    let inputs = rows.len();
    let mut best = BigRational::zero();
    let mut others = vec![0usize; n - 1];
    loop {
        let own: Vec<&[BigRational]> = others.iter().map(|&x| rows[x].as_slice()).collect();
        for x1 in 0..inputs {
            for x1p in 0..inputs {
                if x1 != x1p {
                    let (p, q) = brute_force_histograms(&own, &rows[x1], &rows[x1p]);
                    let v = positive_part(&p, &q, c);
                    if v > best {
                        best = v;
                    }
                }
            }
        }
        let mut i = 0;
        while i < others.len() && others[i] == inputs - 1 {
            others[i] = 0;
            i += 1;
        }
        if i == others.len() {
            return best;
        }
        others[i] += 1;
    }
}

/// The exact profile at `--exp-eps C` or `--delta D` (`quantity` names the option).
fn exact_profile(spec: &str, n: usize, quantity: &str, value: &str) -> serde_json::Value {
    cli_json(&[
        "profile",
        "-m",
        spec,
        "--n",
        &n.to_string(),
        quantity,
        value,
        "--backend",
        "exact",
        "-q",
    ])
}

#[test]
fn the_profile_equals_brute_force_over_every_dataset() {
    let generic = std::env::temp_dir().join(format!(
        "shufflecert-inputs-generic-{}.toml",
        std::process::id()
    ));
    // No symmetry: every row and column distinct, one zero entry.
    std::fs::write(
        &generic,
        "inputs = [\"a\", \"b\", \"c\"]\nrows = [[\"3/5\", \"1/5\", \"1/5\"], \
         [\"1/10\", \"7/10\", \"1/5\"], [\"0\", \"1/4\", \"3/4\"]]\n",
    )
    .unwrap();
    let generic = generic.to_str().unwrap().to_string();
    for (spec, sizes, exp_eps) in [
        (THREE, vec![2, 3, 5], "3/2"),
        (generic.as_str(), vec![2, 4, 5], "6/5"),
        ("k-rr:k=4,exp_eps0=3", vec![3, 4], "5/4"),
    ] {
        for n in sizes {
            let doc = exact_profile(spec, n, "--exp-eps", exp_eps);
            let value = enclosure(&doc["results"][0]["delta_profile"]);
            assert!(value.is_point(), "{spec} n = {n}: exact backend");
            let c = to_big(&shufflecert::enclosure::parse_rational(exp_eps).unwrap());
            let expected = brute_force_max(&rows_of(&doc), n, &c);
            let shufflecert::enclosure::Endpoint::Finite(lo) = value.lo() else {
                panic!("{spec} n = {n}: {value}")
            };
            assert_eq!(to_big(lo), expected, "{spec} n = {n}");
            // Every listed dataset attains it (`delta --background` recomputes one: pq).
            for a in doc["results"][0]["argmax"].as_array().unwrap() {
                let switch = format!(
                    "{}:{}",
                    a["x1"].as_str().unwrap(),
                    a["x1_prime"].as_str().unwrap()
                );
                let n_text = n.to_string();
                let mut args = vec!["delta", "-m", spec, "--n", &n_text];
                args.extend(["--background", a["background"].as_str().unwrap()]);
                args.extend([
                    "--switch",
                    &switch,
                    "--exp-eps",
                    exp_eps,
                    "--backend",
                    "exact",
                ]);
                let pair = cli_json(&args);
                assert_eq!(
                    enclosure(&pair["results"][0]["delta_pq"]),
                    value,
                    "{spec} n = {n}: {a}"
                );
            }
        }
    }
    std::fs::remove_file(&generic).unwrap();
}

#[test]
fn four_ary_rr_at_ten_users_lies_inside_the_range_above_its_lower_end() {
    // The example: bounds gives ε ∈ [0.7949, 0.8382]; the worst case mixes inputs.
    let base = ["-m", "k-rr:k=4,exp_eps0=3", "--n", "10", "--delta", "1e-3"];
    let profile = cli_json(&[&["profile"], &base[..], &["-q"]].concat());
    let bounds = cli_json(&[&["bounds"], &base[..]].concat());
    let exact = enclosure(&profile["eps_profile"]);
    let lower = enclosure(&bounds["results"][0]["lower"]["value"]);
    let upper = enclosure(&bounds["results"][0]["upper"]["value"]);
    assert!(
        exact.lo() > lower.hi(),
        "{exact} above the lower end {lower}"
    );
    assert!(
        exact.hi() <= upper.hi(),
        "{exact} within the upper end {upper}"
    );
    let first = &profile["argmax"][0]["background"];
    assert!(
        first.as_str().unwrap().contains(','),
        "attained at a mixed background: {first}"
    );
}

#[test]
fn scan_options_and_renyi_orders_are_refused_for_more_inputs() {
    let base = ["profile", "-m", THREE, "--n", "20", "--eps", "1"];
    for (extra, needle) in [
        (vec!["--k-range", "0..5"], "--k-range"),
        (vec!["--no-prune"], "--no-prune"),
        (vec!["--plot", "x.svg"], "--plot"),
        (vec!["--renyi-order", "2"], "--renyi-order"),
        (vec!["--engine", "general"], "--engine"),
    ] {
        assert_fails(&[&base[..], &extra[..]].concat(), needle);
    }
    assert_fails(&["profile", "-m", THREE, "--n", "20"], "--eps");
}

/// A random rational randomizer on three inputs; with `twin`, input 2 repeats input 0 with two
/// outputs swapped (so the search has a symmetry to use).
fn randomizer() -> impl Strategy<Value = shufflecert::mechanism::randomizer::Randomizer> {
    (2usize..=3)
        .prop_flat_map(|d| (row(d, 12), row(d, 12), row(d, 12), any::<bool>()))
        .prop_map(|(a, b, c, twin)| {
            let c = if twin {
                let mut t = a.clone();
                t.swap(0, 1);
                t
            } else {
                c
            };
            let d = a.len();
            shufflecert::mechanism::randomizer::Randomizer {
                name: "random".into(),
                inputs: vec!["0".into(), "1".into(), "2".into()],
                outputs: (0..d).map(|y| y.to_string()).collect(),
                rows: [a, b, c]
                    .into_iter()
                    .map(|r| {
                        r.into_iter()
                            .map(shufflecert::mechanism::Entry::Exact)
                            .collect()
                    })
                    .collect(),
                eps0: None,
                source: None,
                restriction_of: None,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Pruning never closes a box that holds the maximum, with and without the symmetry
    /// reduction: both searches equal brute force over every dataset, exactly.
    #[test]
    fn pruning_and_symmetry_keep_the_maximum(r in randomizer(), n in 1u64..=4) {
        use shufflecert::profile_inputs::{InputsProfileQuery, inputs_profile};
        let c = rug::Rational::from((3, 2));
        let rows: Vec<Vec<BigRational>> = r
            .rows
            .iter()
            .map(|row| row.iter().map(|e| match e {
                shufflecert::mechanism::Entry::Exact(v) => to_big(v),
                _ => unreachable!("exact rows"),
            }).collect())
            .collect();
        let expected = brute_force_max(&rows, n as usize, &to_big(&c));
        for symmetry in [true, false] {
            let q = InputsProfileQuery {
                randomizer: r.clone(),
                n,
                quantities: vec![shufflecert::profile::Quantity::Delta(
                    shufflecert::query::Threshold::ExpEps(c.clone()),
                )],
                options: Default::default(),
                backend: shufflecert::query::Backend::Exact,
                exact_ctx: Default::default(),
                escalate_above: None,
                symmetry,
                slice: None,
                ceiling: None,
            };
            let p = inputs_profile(&q).unwrap();
            let shufflecert::enclosure::Endpoint::Finite(lo) = p.rows[0].value.lo() else {
                panic!("finite")
            };
            prop_assert!(p.rows[0].value.is_point(), "exact backend");
            prop_assert_eq!(to_big(lo), expected.clone(), "symmetry {}", symmetry);
        }
    }
}

/// A profile certificate and what `verify` says of a copy edited by `edit` (digest recomputed).
fn verdict_after(
    cert: &serde_json::Value,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> (i32, String) {
    let file = crate::certificates::tampered(cert, name, true, edit);
    let (status, report) = crate::certificates::verify(&file);
    (status, report["problems"].to_string())
}

#[test]
fn certificates_verify_and_every_tampering_is_rejected() {
    use serde_json::json;
    let (file, cert) = crate::certificates::certify(
        &[
            "profile",
            "-m",
            "k-rr:k=4,exp_eps0=3",
            "--n",
            "10",
            "--eps",
            "0.3",
            "--delta",
            "1e-3",
        ],
        "inputs-profile.json",
    );
    assert!(shufflecert::certificate::schema_errors(&cert).is_empty());
    assert_eq!(cert["schema"], "shufflecert/certificate/v2");
    let (status, report) = crate::certificates::verify(&file);
    assert_eq!(status, 0, "{report}");
    assert!(report["confirmed"].as_u64().unwrap() >= 3, "{report}");
    let method = &cert["method"];
    let closure = |reason: &str| {
        method["closures"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["reason"] == reason)
            .unwrap()
    };
    let bound = closure("bound");
    let screened = closure("screened");

    // A missing subtree: its compositions are neither evaluated nor closed.
    let (status, problems) = verdict_after(&cert, "missing.json", |c| {
        c["method"]["closures"]
            .as_array_mut()
            .unwrap()
            .remove(bound);
    });
    assert_eq!(status, 1);
    assert!(
        problems.contains("neither evaluated nor closed"),
        "{problems}"
    );
    // A closure pointed at a bound that does not close it: one over a larger box, bounding the
    // same quantity, that closed nothing for it.
    let counts = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    let inside = |outer: &serde_json::Value, inner: &serde_json::Value| {
        let (olo, ohi, ilo, ihi) = (
            counts(&outer["lo"]),
            counts(&outer["hi"]),
            counts(&inner["lo"]),
            counts(&inner["hi"]),
        );
        (0..olo.len()).all(|x| olo[x] <= ilo[x] && ihi[x] <= ohi[x])
    };
    let closures = method["closures"].as_array().unwrap();
    let bounds = method["bounds"].as_array().unwrap();
    let (wrong, wrong_bound) = closures
        .iter()
        .enumerate()
        .filter(|(_, c)| c["reason"] == "bound")
        .find_map(|(j, c)| {
            let q = c["quantity"].as_u64().unwrap() as usize;
            let closed_by = |i: usize| {
                closures.iter().any(|d| {
                    d["reason"] == "bound" && d["bound"] == json!(i) && d["quantity"] == json!(q)
                })
            };
            (0..bounds.len())
                .find(|&i| {
                    !bounds[i]["values"][q].is_null() && inside(&bounds[i], c) && !closed_by(i)
                })
                .map(|i| (j, i))
        })
        .expect("a closure inside a bound that closed nothing for its quantity");
    let (status, problems) = verdict_after(&cert, "root.json", |c| {
        c["method"]["closures"][wrong]["bound"] = json!(wrong_bound);
    });
    assert_eq!(status, 1);
    assert!(problems.contains("rebuilt is"), "{problems}");
    // A bound whose blanket keeps almost nothing: every free user in the tail.
    let index = method["closures"][bound]["bound"].as_u64().unwrap() as usize;
    let (status, problems) = verdict_after(&cert, "breakpoints.json", |c| {
        let b = &mut c["method"]["bounds"][index];
        let users = 9 - b["lo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>();
        b["breakpoints"] = json!([users]);
    });
    assert_eq!(status, 1, "{problems}");
    // Breakpoints that are not whole numbers, or out of order: a broken proof, INVALID (not
    // bad input to verify).
    for (name, breakpoints, says) in [
        ("breakpoints-text.json", json!([-1]), "cannot be read"),
        ("breakpoints-order.json", json!([2, 1]), "cannot be rebuilt"),
    ] {
        let (status, problems) = verdict_after(&cert, name, |c| {
            c["method"]["bounds"][index]["breakpoints"] = breakpoints;
        });
        assert_eq!(status, 1, "{problems}");
        assert!(problems.contains(says), "{problems}");
    }
    // A closure moved to a box its bound does not contain.
    let (status, problems) = verdict_after(&cert, "moved.json", |c| {
        let cl = &mut c["method"]["closures"][bound];
        cl["lo"] = json!([0, 0, 0, 0]);
        cl["hi"] = json!([9, 9, 9, 9]);
        cl["bound"] = json!(index);
    });
    assert_eq!(status, 1);
    assert!(problems.contains("does not lie in the box"), "{problems}");
    // A screened composition at an ε above the best found.
    let (status, problems) = verdict_after(&cert, "screened.json", |c| {
        c["method"]["closures"][screened]["at"] = json!("5");
    });
    assert_eq!(status, 1);
    assert!(problems.contains("above the best value"), "{problems}");
    // A symmetry the rows do not have, and switches that drop an orbit.
    let three = crate::certificates::certify(
        &[
            "profile",
            "-m",
            THREE,
            "--n",
            "6",
            "--eps",
            "0.5",
            "--backend",
            "exact",
        ],
        "three.json",
    );
    assert_eq!(crate::certificates::verify(&three.0).0, 0);
    let (status, problems) = verdict_after(&three.1, "symmetry.json", |c| {
        c["method"]["symmetry"] = json!([["low", "mid", "high"]]);
        c["method"]["switches"] = json!([["low", "mid"]]);
    });
    assert_eq!(status, 1);
    assert!(problems.contains("does not map the rows"), "{problems}");
    let (status, problems) = verdict_after(&three.1, "switches.json", |c| {
        c["method"]["switches"].as_array_mut().unwrap().pop();
    });
    assert_eq!(status, 1);
    assert!(problems.contains("method.switches"), "{problems}");
    // A recorded value, and the row, moved off the true value.
    let (status, _) = verdict_after(&cert, "record.json", |c| {
        c["method"]["records"][0]["values"][0][1] = json!({"lo": "1/2", "hi": "1/2"});
    });
    assert_eq!(status, 1);
    let (status, problems) = verdict_after(&cert, "row.json", |c| {
        c["report"]["results"][0]["delta_profile"] = json!({"lo": "0", "hi": "1/1000000"});
    });
    assert_eq!(status, 1, "{problems}");
    // Edited without a new digest.
    let file = crate::certificates::tampered(&cert, "digest.json", false, |c| {
        c["method"]["closures"]
            .as_array_mut()
            .unwrap()
            .remove(bound);
    });
    assert_eq!(crate::certificates::verify(&file).0, 1);
}

#[test]
fn slices_merge_into_the_whole_profile_and_each_verifies() {
    use serde_json::json;
    let base = [
        "profile", "-m", THREE, "--n", "9", "--eps", "0.4", "--delta", "1e-2",
    ];
    let whole = cli_json(&base);
    let mut files = Vec::new();
    for i in 0..3 {
        let slice = format!("{i}/3");
        let (file, cert) = crate::certificates::certify(
            &[&base[..], &["--slice", &slice]].concat(),
            &format!("slice-{i}.json"),
        );
        assert_eq!(cert["report"]["slice"], json!({"index": i, "of": 3}));
        assert!(
            cert["report"]["scope"]
                .as_str()
                .unwrap()
                .starts_with("slice")
        );
        assert_eq!(crate::certificates::verify(&file).0, 0, "slice {i}");
        files.push(file);
    }
    let merged_cert = crate::certificates::path("merged-slices.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = cli_json(&[&args[..], &["--certificate", &merged_cert]].concat());
    for key in ["results", "eps_results"] {
        for (a, b) in merged[key]
            .as_array()
            .unwrap()
            .iter()
            .zip(whole[key].as_array().unwrap())
        {
            let value = |v: &serde_json::Value| {
                v.get("delta_profile")
                    .or(v.get("eps_profile"))
                    .unwrap()
                    .clone()
            };
            assert_eq!(value(a)["lo"], value(b)["lo"], "{key}");
            assert_eq!(value(a)["hi"], value(b)["hi"], "{key}");
        }
    }
    assert!(
        merged["scope"]
            .as_str()
            .unwrap()
            .starts_with("mechanism-wide")
    );
    let (status, report) = crate::certificates::verify(&merged_cert);
    assert_eq!(status, 0, "{report}");

    // A slice passed off as mechanism-wide, and a merged proof missing a slice's work.
    let slice: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    let (status, problems) = verdict_after(&slice, "wide.json", |c| {
        c["method"]["slice"] = serde_json::Value::Null;
        c["report"]["slice"] = serde_json::Value::Null;
    });
    assert_eq!(status, 1);
    assert!(
        problems.contains("scope") || problems.contains("neither"),
        "{problems}"
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_cert).unwrap()).unwrap();
    let (status, _) = verdict_after(&merged, "merged-short.json", |c| {
        let closures = c["method"]["closures"].as_array_mut().unwrap();
        let keep = closures.len() / 2;
        closures.truncate(keep);
    });
    assert_eq!(status, 1);

    // Bad sets of slices.
    assert_fails(&["merge", &files[0], &files[2]], "slice 1 of 3 is missing");
    assert_fails(&["merge", &files[0], &files[0], &files[1]], "given twice");
    assert_fails(&["merge", &merged_cert], "already mechanism-wide");
    let other = crate::certificates::certify(
        &[
            "profile", "-m", THREE, "--n", "8", "--eps", "0.4", "--delta", "1e-2", "--slice", "2/3",
        ],
        "other-n.json",
    );
    assert_fails(&["merge", &files[0], &files[1], &other.0], "report.n");
    // --slice belongs to randomizers on more inputs, and is I/N with I < N.
    assert_fails(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "20",
            "--eps",
            "1",
            "--slice",
            "0/2",
        ],
        "--slice",
    );
    for bad in ["3/3", "1", "0/0", "a/2", "1/2/3", "-1/2"] {
        assert_fails(&[&base[..], &["--slice", bad]].concat(), "--slice");
    }
    // Slices and shards over ranges of k are not merged together; the file that differs is named.
    let (shard, _) = crate::certificates::certify(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "20",
            "--eps",
            "1",
            "--k-range",
            "0..9",
        ],
        "binary-shard.json",
    );
    assert_fails(&["merge", &files[0], &shard], "one kind at a time");
    // Slices whose records lost every value (forged, re-digested) are refused, not a crash.
    let forged: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let cert: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            crate::certificates::tampered(&cert, &format!("no-values-{i}.json"), true, |c| {
                for r in c["method"]["records"].as_array_mut().unwrap() {
                    for v in r["values"].as_array_mut().unwrap() {
                        *v = serde_json::Value::Null;
                    }
                }
            })
        })
        .collect();
    let forged: Vec<&str> = forged.iter().map(String::as_str).collect();
    assert_fails(
        &[&["merge"][..], &forged[..]].concat(),
        "no slice gives quantity",
    );
    assert_fails(&["merge", &shard, &files[0]], "one kind at a time");
}

#[test]
fn a_merge_of_many_slices_verifies() {
    // 30 slices of 6-RR at n = 5: the levels the slices were cut from are walked by verify.
    let base = [
        "profile",
        "-m",
        "k-rr:k=6,exp_eps0=3",
        "--n",
        "5",
        "--eps",
        "0.5",
    ];
    let whole = cli_json(&base);
    let mut args = vec!["merge".to_string()];
    for i in 0..30 {
        let (file, _) = crate::certificates::certify(
            &[&base[..], &["--slice", &format!("{i}/30")]].concat(),
            &format!("many-slice-{i}.json"),
        );
        args.push(file);
    }
    let merged_cert = crate::certificates::path("many-slices-merged.json");
    args.extend(["--certificate".to_string(), merged_cert.clone()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let merged = cli_json(&args);
    assert_eq!(merged["results"], whole["results"]);
    let (status, report) = crate::certificates::verify(&merged_cert);
    assert_eq!(status, 0, "{report}");
}

#[test]
fn bounds_search_raises_the_lower_end_to_a_mixed_background() {
    use serde_json::json;
    // 4-RR at n = 10: the homogeneous backgrounds stop at 0.7949; the worst case (the exact
    // profile) is a mixed background, and the search finds it.
    let args = [
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--n",
        "10",
        "--delta",
        "1e-3",
        "--backend",
        "exact",
    ];
    let plain = cli_json(&args);
    let (file, cert) =
        crate::certificates::certify(&[&args[..], &["--search", "50"]].concat(), "search.json");
    let searched = &cert["report"];
    let profile =
        exact_profile("k-rr:k=4,exp_eps0=3", 10, "--delta", "1e-3")["eps_profile"].clone();
    let lower = &searched["results"][0]["lower"];
    assert!(lower["others"].as_object().unwrap().len() > 1, "{lower}");
    assert!(lower["background"].is_null());
    let value = |v: &serde_json::Value| {
        shufflecert::enclosure::parse_rational(v["lo"].as_str().unwrap()).unwrap()
    };
    assert!(value(&lower["value"]) > value(&plain["results"][0]["lower"]["value"]));
    let hi = shufflecert::enclosure::parse_rational(profile["hi"].as_str().unwrap()).unwrap();
    assert!(value(&lower["value"]) <= hi);
    assert!(searched["search"]["evaluated"].as_u64().unwrap() >= 1);
    assert_eq!(crate::certificates::verify(&file).0, 0);
    // Tampered: the dataset moved (its δ is then not the recorded one).
    let (status, _) = verdict_after(&cert, "search-moved.json", |c| {
        c["report"]["results"][0]["lower"]["others"] = json!({"0": 5, "2": 4});
    });
    assert_eq!(status, 1);
    for bad in ["0", "-3"] {
        assert_fails(&[&args[..], &["--search", bad]].concat(), "--search");
    }
    assert_fails(
        &[
            "bounds",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--eps",
            "1",
            "--search",
            "5",
        ],
        "--search",
    );
}

#[test]
fn range_audits_narrow_undecided_claims_with_the_exact_profile() {
    use serde_json::json;
    // 4-RR at n = 10, ε = 0.796: the range is [0.000993, 0.00163] and the exact worst case
    // 0.001021 (a mixed background).  Claims at 0.00101 and 0.00103 fall inside the range.
    let dir = std::env::temp_dir().join(format!("shufflecert-narrow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let claims = dir.join("claims.csv");
    std::fs::write(
        &claims,
        "n,eps,delta\n10,0.796,0.00101\n10,0.796,0.00103\n10,0.796,0.002\n10,0.796,0.0009\n",
    )
    .unwrap();
    let claims = claims.to_string_lossy().into_owned();
    let args = ["audit", "-m", "k-rr:k=4,exp_eps0=3", "--claims", &claims];
    // Unsound claims make `audit` exit 1; the certificate is written all the same.
    let file = crate::certificates::path("narrow.json");
    let run = cli(&[&args[..], &["--certificate", &file]].concat());
    assert_eq!(run.status, 1, "{}", run.stderr);
    let cert: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let report = &cert["report"];
    let by = |key: &str| -> Vec<String> {
        report["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[key].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(by("verdict"), ["unsound", "sound", "sound", "unsound"]);
    assert_eq!(
        by("decided_by"),
        ["exact profile", "exact profile", "range", "range"]
    );
    assert_eq!(
        report["claims"][0]["certified_delta"],
        report["claims"][0]["delta_profile"]
    );
    assert_eq!(crate::certificates::verify(&file).0, 0);
    // Without narrowing the two stay undecided, and say why.
    // An audit exits 1 when a claim is unsound; its report is on stdout all the same.
    let json_of = |args: &[&str]| -> serde_json::Value {
        let run = cli(&[args, &["--json"]].concat());
        assert!(run.status <= 1, "{args:?}: {}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap()
    };
    let plain = json_of(&[&args[..], &["--narrow-seconds", "0"]].concat());
    assert_eq!(plain["summary"]["undecided"], 2);
    assert!(
        plain["claims"][0]["undecided_because"]
            .as_str()
            .unwrap()
            .contains("not tried")
    );
    // Tampered: the profile's value, the route named, the profile removed.
    for (name, edit) in [
        (
            "profile-value.json",
            Box::new(|c: &mut serde_json::Value| {
                c["report"]["claims"][0]["delta_profile"] = json!({"lo": "1/1000", "hi": "1/1000"});
            }) as Box<dyn Fn(&mut serde_json::Value)>,
        ),
        (
            "decided-by.json",
            Box::new(|c: &mut serde_json::Value| {
                c["report"]["claims"][1]["decided_by"] = json!("range");
            }),
        ),
        (
            "no-profile.json",
            Box::new(|c: &mut serde_json::Value| {
                c["method"]["profiles"] = json!([]);
            }),
        ),
        (
            "profile-closure.json",
            Box::new(|c: &mut serde_json::Value| {
                c["method"]["profiles"][0]["method"]["closures"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        ),
    ] {
        let (status, problems) = verdict_after(&cert, name, edit);
        assert_eq!(status, 1, "{name}: {problems}");
    }
    // A slice's profile in its place: its maximum is over part of the datasets only.
    let (_, slice) = crate::certificates::certify(
        &[
            "profile",
            "-m",
            "k-rr:k=4,exp_eps0=3",
            "--n",
            "10",
            "--eps",
            "0.796",
            "--slice",
            "0/2",
        ],
        "narrow-slice.json",
    );
    let (status, problems) = verdict_after(&cert, "profile-slice.json", |c| {
        let p = &mut c["method"]["profiles"][0];
        p["report"] = slice["report"].clone();
        p["method"] = slice["method"].clone();
    });
    assert_eq!(status, 1, "{problems}");
    assert!(problems.contains("a slice of the search"), "{problems}");
    // k-RR on 20 inputs at n = 20: the range leaves the claim undecided, the exact profile
    // (backgrounds off the switch dominated, Lemma 3) decides it.
    std::fs::write(dir.join("k20.csv"), "n,eps,delta\n20,0.9,0.00065\n").unwrap();
    let k20 = dir.join("k20.csv").to_string_lossy().into_owned();
    let out = json_of(&["audit", "-m", "k-rr:k=20,eps0=2", "--claims", &k20]);
    assert_eq!(out["claims"][0]["verdict"], "sound", "{out}");
    assert_eq!(out["claims"][0]["decided_by"], "exact profile", "{out}");
    // Out of reach: the claims stay undecided, with the reason (a generic randomizer on 40
    // inputs, whose range at n = 20 is [0.9886, 1.0474]; k-RR on 20 inputs is decided now).
    std::fs::write(dir.join("forty.csv"), "n,eps,delta\n20,1.02,0.00065\n").unwrap();
    let forty = dir.join("forty.csv").to_string_lossy().into_owned();
    let out = json_of(&["audit", "-m", FORTY, "--claims", &forty]);
    let claim = &out["claims"][0];
    assert_eq!(claim["verdict"], "undecided");
    assert_eq!(claim["decided_by"], "neither");
    assert!(
        claim["undecided_because"]
            .as_str()
            .unwrap()
            .contains("out of reach")
    );
    assert_fails(
        &[
            "audit",
            "-m",
            "binary-rr:eps0=1",
            "--claims",
            &claims,
            "--narrow-seconds",
            "5",
        ],
        "--narrow-seconds",
    );
    assert_fails(
        &[&args[..], &["--narrow-seconds", "-1"]].concat(),
        "--narrow-seconds",
    );
}

#[test]
fn bounds_ceiling_lowers_the_upper_end_and_verifies() {
    use serde_json::json;
    let parse = |v: &serde_json::Value| {
        shufflecert::enclosure::parse_rational(v.as_str().unwrap()).unwrap()
    };
    // δ rows (three inputs, n = 12) and an ε row (4-RR, n = 10): the ceiling lies between the
    // exact worst case and the blanket, and its search verifies.
    for (spec, quantity, value) in [
        (THREE, "--eps", "0.5,1"),
        ("k-rr:k=4,exp_eps0=3", "--delta", "1e-3"),
    ] {
        let args = [
            "bounds",
            "-m",
            spec,
            "--n",
            "12",
            quantity,
            value,
            "--backend",
            "exact",
        ];
        let name = format!("ceiling-{}.json", quantity.trim_start_matches('-'));
        let (file, cert) = crate::certificates::certify(
            &[&args[..], &["--ceiling-seconds", "20"]].concat(),
            &name,
        );
        let report = &cert["report"];
        let exact = exact_profile(spec, 12, quantity, value);
        let exact_rows: Vec<serde_json::Value> = match quantity {
            "--eps" => exact["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["delta_profile"].clone())
                .collect(),
            _ => vec![exact["eps_profile"].clone()],
        };
        assert!(
            report["ceiling"]["searches_finished"].as_u64().unwrap() >= 1,
            "{report}"
        );
        for (row, exact) in report["results"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&exact_rows)
        {
            let ceiling = parse(&row["ceiling"]["hi"]);
            assert!(ceiling >= parse(&exact["lo"]), "{row} vs {exact}");
            assert!(ceiling <= parse(&row["upper"]["value"]["hi"]), "{row}");
        }
        let (status, problems) = crate::certificates::verify(&file);
        assert_eq!(status, 0, "{problems}");
        // Tampered: a row's ceiling lowered, the search removed, a closure dropped.
        for (tamper, edit) in [
            (
                "lowered",
                Box::new(|c: &mut serde_json::Value| {
                    c["report"]["results"][0]["ceiling"] =
                        json!({"lo": "0", "hi": "1/1000000000000"});
                }) as Box<dyn Fn(&mut serde_json::Value)>,
            ),
            (
                "no-search",
                Box::new(|c: &mut serde_json::Value| {
                    c["method"]["ceiling"] = serde_json::Value::Null;
                }),
            ),
            (
                "closure",
                Box::new(|c: &mut serde_json::Value| {
                    let closures = c["method"]["ceiling"]["method"]["closures"]
                        .as_array_mut()
                        .unwrap();
                    let first = closures
                        .iter()
                        .position(|c| c["reason"] == "bound")
                        .expect("a bound's closure");
                    closures.remove(first);
                }),
            ),
            (
                "level",
                Box::new(|c: &mut serde_json::Value| {
                    let levels = c["method"]["ceiling"]["method"]["ceiling"].clone();
                    let high: Vec<String> = levels
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|_| "1".to_string())
                        .collect();
                    c["method"]["ceiling"]["method"]["ceiling"] = json!(high);
                    c["report"]["ceiling"]["levels"] = json!(high);
                }),
            ),
        ] {
            let (status, problems) = verdict_after(&cert, &format!("{tamper}-{name}"), edit);
            assert_eq!(status, 1, "{tamper}: {problems}");
        }
    }
    // A row whose ends meet (δ = 0 at ε = 1.2) keeps its end; the other row is lowered.
    let out = cli_json(&[
        "bounds",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--n",
        "8",
        "--eps",
        "0.5,1.2",
        "--ceiling-seconds",
        "20",
    ]);
    let row = &out["results"][0];
    assert!(
        parse(&row["ceiling"]["hi"]) < parse(&row["upper"]["value"]["lo"]),
        "{row}"
    );
    assert!(row["ceiling_over_lower"].as_f64().unwrap() >= 1.0);
    // No search finishes (a generic randomizer on 40 inputs: its floor alone would take hours;
    // 20-RR at n = 40 finishes now, Lemma 3): the report says why, the upper end stays the
    // blanket's, and the certificate verifies; claiming a ceiling without its search does not.
    let (file, cert) = crate::certificates::certify(
        &[
            "bounds",
            "-m",
            FORTY,
            "--n",
            "40",
            "--delta",
            "1e-3",
            "--ceiling-seconds",
            "5",
        ],
        "ceiling-missed.json",
    );
    assert_eq!(cert["report"]["ceiling"]["finished"], false);
    assert!(
        cert["report"]["ceiling"]["why"]
            .as_str()
            .unwrap()
            .contains("no search finished")
    );
    assert!(cert["report"]["results"][0]["ceiling"].is_null());
    assert_eq!(crate::certificates::verify(&file).0, 0);
    let (status, _) = verdict_after(&cert, "ceiling-claimed.json", |c| {
        c["report"]["ceiling"]["finished"] = json!(true);
    });
    assert_eq!(status, 1);
    // Binary inputs have the exact profile beside the range; seconds must be positive and at
    // most --max-seconds.
    assert_fails(
        &[
            "bounds",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--eps",
            "1",
            "--ceiling-seconds",
            "5",
        ],
        "--ceiling-seconds",
    );
    for bad in ["0", "-1", "x", "1000"] {
        assert_fails(
            &[
                "bounds",
                "-m",
                THREE,
                "--n",
                "10",
                "--eps",
                "1",
                "--max-seconds",
                "100",
                "--ceiling-seconds",
                bad,
            ],
            "--ceiling-seconds",
        );
    }
}

/// k-ary randomized response given by a real ε0, on every input: each evaluated dataset pair of
/// an inputs profile, and a `--background` pair, is also held on rational rows at the two ends of
/// a bracket of `e^{ε0}` (every user's row post-processed alike, data processing), a route that
/// never evaluates an entry in `e^{ε0}`: it rejects a value moved just past the true one.
#[test]
fn real_eps0_randomizers_are_held_on_the_bracket_of_exp_eps0() {
    use crate::certificates::{certify, held_by_route, verify};
    let profile = [
        "profile",
        "-m",
        "k-rr:k=4,eps0=1",
        "--n",
        "12",
        "--delta",
        "1e-3",
    ];
    // Values the search escalated to MPFR-512 are recomputed finer (256 bits cannot show them).
    let escalated = [
        "profile",
        "-m",
        "k-rr:k=4,eps0=8",
        "--n",
        "20",
        "--eps",
        "2",
        "--delta",
        "1e-6",
    ];
    let (file, _) = certify(&escalated, "bracket-escalated.json");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let pair = [
        "delta",
        "-m",
        "k-rr:k=4,eps0=1",
        "--n",
        "30",
        "--background",
        "2=20,3=9",
        "--switch",
        "0:1",
        "--eps",
        "0.5",
    ];
    for (args, name, route, value) in [
        (
            &profile[..],
            "bracket-inputs-profile",
            "background pairs on rational rows at a_lo < e^eps0 < a_hi",
            "/method/records/0/values/0/0",
        ),
        (
            &pair[..],
            "bracket-background-pair",
            "interval on rational rows at a_lo < e^eps0 < a_hi",
            "/report/results/0/delta_qp",
        ),
    ] {
        held_by_route(args, name, route, value);
    }
}
