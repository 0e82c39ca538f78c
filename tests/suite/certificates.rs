//! Certificates: every one the tool writes conforms to the schema and verifies; the same command
//! writes the same bytes; and every kind of tampering is rejected.

use crate::common::*;
use rug::Rational;
use serde_json::{Value, json};
use shufflecert::certificate::{digest, schema_errors};
use shufflecert::enclosure::{exact_string, parse_rational};

/// A fresh path for a certificate.
pub(crate) fn path(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("shufflecert-certs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

/// Runs a command with `--certificate`, returning the certificate.
pub(crate) fn certify(args: &[&str], name: &str) -> (String, Value) {
    let file = path(name);
    let mut all = args.to_vec();
    all.extend(["--certificate", &file]);
    let run = cli(&all);
    assert_eq!(run.status, 0, "{args:?}: {}", run.stderr);
    let cert = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (file, cert)
}

/// `verify` on a file: its exit status and report.
pub(crate) fn verify(file: &str) -> (i32, Value) {
    let run = cli(&["verify", file, "--json"]);
    let report = if run.stdout.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&run.stdout).unwrap()
    };
    (run.status, report)
}

/// Writes a tampered copy, with its digest recomputed when `redigest`.
pub(crate) fn tampered(
    cert: &Value,
    name: &str,
    redigest: bool,
    edit: impl FnOnce(&mut Value),
) -> String {
    let mut c = cert.clone();
    edit(&mut c);
    if redigest {
        c["digest"]["value"] = json!(digest(&c).unwrap());
    }
    let file = path(name);
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    file
}

const COMMANDS: [(&[&str], &str); 8] = [
    (
        &[
            "delta",
            "-m",
            "binary-rr:exp_eps0=3",
            "--n",
            "9",
            "--k",
            "2",
            "--eps",
            "0.1,0.4",
        ],
        "delta.json",
    ),
    (
        &[
            "epsilon",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "40",
            "--k",
            "12",
            "--delta",
            "1e-3",
        ],
        "epsilon.json",
    ),
    (
        &[
            "divergences",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "200",
            "--k",
            "0",
            "--renyi-order",
            "2,3/2",
        ],
        "divergences.json",
    ),
    (
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "500",
            "--delta",
            "1e-5",
            "--eps",
            "0.1",
            "-q",
        ],
        "profile-mixed.json",
    ),
    (
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "500",
            "--eps",
            "0.05,0.1,2",
            "--renyi-order",
            "2",
            "-q",
        ],
        "profile.json",
    ),
    (
        &[
            "profile",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "30",
            "--delta",
            "1e-3",
            "-q",
        ],
        "profile-ternary.json",
    ),
    (
        &[
            "audit",
            "-m",
            "binary-rr:eps0=1",
            "--claims",
            "fixtures/claims/published-binary-rr.csv",
        ],
        "audit-published.json",
    ),
    (
        &[
            "compare",
            "-m",
            "k-rr:k=4,exp_eps0=3,inputs=2",
            "--n",
            "30,60",
            "--delta",
            "1e-3",
        ],
        "compare.json",
    ),
];

#[test]
fn every_certificate_conforms_to_the_schema_and_verifies() {
    for (args, name) in COMMANDS {
        let (file, cert) = certify(args, name);
        assert_eq!(schema_errors(&cert), Vec::<String>::new(), "{args:?}");
        assert_eq!(cert["schema"], "shufflecert/certificate/v1");
        assert_eq!(cert["digest"]["value"], json!(digest(&cert).unwrap()));
        // Exact endpoints: fractions or terminating decimals, never rounded.
        assert!(!cert["proofs_notes"].as_array().unwrap().is_empty());
        let (status, report) = verify(&file);
        assert_eq!(status, 0, "{args:?}: {report}");
        assert_eq!(report["valid"], true);
        assert!(report["confirmed"].as_u64().unwrap() > 0);
        assert!(!report["routes"].as_array().unwrap().is_empty());
    }
}

/// The bytes of the certificate a command writes with a fixed time stamp, the command
/// exiting with `status`.
fn written(args: &[&str], name: &str, status: i32) -> Vec<u8> {
    let file = path(name);
    let mut all = args.to_vec();
    all.extend(["--certificate", &file]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shufflecert"))
        .args(&all)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SOURCE_DATE_EPOCH", "1800000000")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(status), "{args:?}");
    std::fs::read(&file).unwrap()
}

#[test]
fn the_same_command_writes_the_same_bytes() {
    for (args, name) in [COMMANDS[0], COMMANDS[4]] {
        assert_eq!(
            written(args, &format!("a-{name}"), 0),
            written(args, &format!("b-{name}"), 0),
            "{args:?}"
        );
    }
}

#[test]
fn tampering_is_rejected() {
    let (_, delta) = certify(COMMANDS[0].0, "tamper-delta.json");
    let (_, profile) = certify(COMMANDS[5].0, "tamper-profile.json");
    let edit_value = |c: &mut Value| {
        // Claim a δ far above the true one.
        c["report"]["results"][0]["delta_qp"] = json!({ "lo": "1/2", "hi": "3/4" });
    };
    for (name, cert, redigest, edit, needle) in [
        (
            "value",
            &delta,
            false,
            Box::new(edit_value) as Box<dyn FnOnce(&mut Value)>,
            "digest",
        ),
        (
            "value-redigested",
            &delta,
            true,
            Box::new(edit_value),
            "results.0.delta_qp",
        ),
        (
            "mechanism",
            &delta,
            true,
            Box::new(|c: &mut Value| c["mechanism"]["given"] = json!("binary-rr:exp_eps0=4")),
            "mechanism",
        ),
        (
            "mechanism-rows",
            &delta,
            true,
            Box::new(|c: &mut Value| c["mechanism"]["exact"]["w0"][0] = json!("7/10")),
            "mechanism.exact",
        ),
        (
            "parameter",
            &delta,
            true,
            Box::new(|c: &mut Value| c["report"]["n"] = json!(10)),
            "delta",
        ),
        (
            "alphabet",
            &delta,
            true,
            Box::new(|c: &mut Value| c["report"]["alphabet"]["outputs"] = json!(3)),
            "report.alphabet",
        ),
        (
            "profile-alphabet",
            &profile,
            true,
            Box::new(|c: &mut Value| {
                c["report"]["alphabet"] = json!({ "outputs": 2, "reduced": false })
            }),
            "report.alphabet",
        ),
        (
            "digest",
            &delta,
            false,
            Box::new(|c: &mut Value| {
                c["digest"]["value"] = json!("0".repeat(64));
            }),
            "digest",
        ),
        (
            "method-closure",
            &profile,
            true,
            Box::new(|c: &mut Value| {
                let closures = c["method"]["closures"].as_array_mut().unwrap();
                closures.pop();
            }),
            "not covered",
        ),
        (
            "method-record",
            &profile,
            true,
            Box::new(|c: &mut Value| {
                let records = c["method"]["records"].as_array_mut().unwrap();
                records.remove(0);
            }),
            "covered",
        ),
        (
            "profile-value",
            &profile,
            true,
            Box::new(|c: &mut Value| {
                c["report"]["eps_results"][0]["eps_profile"] = json!({ "lo": "0", "hi": "1/1000" })
            }),
            "eps_profile",
        ),
    ] {
        let file = tampered(cert, &format!("tampered-{name}.json"), redigest, edit);
        let (status, report) = verify(&file);
        assert_eq!(status, 1, "{name}: {report}");
        assert_eq!(report["valid"], false, "{name}");
        let problems = report["problems"].to_string();
        assert!(problems.contains(needle), "{name}: {problems}");
    }
    // Malformed: not JSON, or not a certificate.
    let file = path("garbage.json");
    std::fs::write(&file, "{ not json").unwrap();
    assert_eq!(verify(&file).0, 2);
    let file = tampered(&delta, "no-settings.json", true, |c| {
        c.as_object_mut().unwrap().remove("settings");
    });
    assert_eq!(verify(&file).0, 2);
    assert_fails(&["verify", &path("missing.json")], "missing.json");
}

/// Every enclosure in an ε certificate's witnesses is confirmed by a recomputation:
/// `delta_at_exp_eps_hi` against δ recomputed at `exp_eps_hi` (given exactly when it is), and
/// `singular_mass` against the pair's singular mass recomputed (given exactly when no finite
/// threshold is), an ε of +∞ only with a singular mass certainly above δ.
#[test]
fn epsilon_witnesses_are_each_confirmed() {
    // Q(P = 0) = 1/16 for the pair (T_{10,3}, T_{10,4}): ε_qp = +∞ at δ = 10⁻³.
    let m = mechanism_file(
        "singular-sixteenth.json",
        &["1/2", "1/2", "0"].map(String::from),
        &["1/4", "1/4", "1/2"].map(String::from),
    );
    let (file, infinite) = certify(
        &[
            "epsilon",
            "-m",
            &m,
            "--n",
            "10",
            "--k",
            "3",
            "--delta",
            "1e-3",
            "--no-reduce",
        ],
        "witnesses-infinite.json",
    );
    assert_valid(&file, "ε = +∞");
    let w = &infinite["report"]["witnesses"];
    assert_eq!(
        w["qp"]["singular_mass"],
        json!({ "lo": "0.0625", "hi": "0.0625" })
    );
    // P(Q = 0) = (1/5)^300 is far below δ: ε_pq is finite, with no singular mass.
    let (file, finite) = certify(
        &[
            "epsilon",
            "-m",
            "fixtures/mechanisms/one-sided.toml",
            "--n",
            "300",
            "--k",
            "0",
            "--delta",
            "1e-12",
        ],
        "witnesses-finite.json",
    );
    assert_valid(&file, "one-sided");
    assert!(finite["report"]["witnesses"]["pq"]["singular_mass"].is_null());
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let set = |dir: &'static str, key: &'static str, v: Value| -> Edit {
        Box::new(move |c: &mut Value| c["report"]["witnesses"][dir][key] = v)
    };
    let cases: Vec<(&str, &Value, Edit, &str)> = vec![
        (
            "singular-below",
            &infinite,
            set(
                "qp",
                "singular_mass",
                json!({ "lo": "0.001", "hi": "0.002" }),
            ),
            "witnesses.qp.singular_mass: the certified",
        ),
        (
            "singular-above",
            &infinite,
            set("qp", "singular_mass", json!({ "lo": "0.7", "hi": "0.8" })),
            "witnesses.qp.singular_mass: the certified",
        ),
        (
            "singular-dropped",
            &infinite,
            set("qp", "singular_mass", Value::Null),
            "witnesses.qp.singular_mass: missing",
        ),
        (
            "singular-added",
            &finite,
            set("pq", "singular_mass", json!({ "lo": "0.5", "hi": "0.5" })),
            "witnesses.pq.singular_mass: given",
        ),
        (
            "delta-at-hi",
            &finite,
            set(
                "pq",
                "delta_at_exp_eps_hi",
                json!({ "lo": "0.5", "hi": "0.6" }),
            ),
            "witnesses.pq.delta_at_exp_eps_hi: the certified",
        ),
        (
            "delta-at-hi-dropped",
            &finite,
            set("pq", "delta_at_exp_eps_hi", Value::Null),
            "witnesses.pq.delta_at_exp_eps_hi: missing",
        ),
        (
            "delta-at-hi-added",
            &infinite,
            set(
                "qp",
                "delta_at_exp_eps_hi",
                json!({ "lo": "0", "hi": "0.001" }),
            ),
            "witnesses.qp.delta_at_exp_eps_hi: given",
        ),
    ];
    for (name, cert, edit, needle) in cases {
        let file = tampered(cert, &format!("tampered-witness-{name}.json"), true, edit);
        let (status, report) = verify(&file);
        assert_eq!(status, 1, "{name}: {report}");
        let problems = report["problems"].to_string();
        assert!(problems.contains(needle), "{name}: {problems}");
    }
}

/// A profile row's maximisers are part of what is certified: its `resolved` flag, `argmax_k`
/// and `argmax_k_ranges` are checked against the proof, not only its value.
#[test]
fn profile_maximisers_are_checked() {
    let (_, profile) = certify(COMMANDS[4].0, "maximisers.json");
    let (_, ties) = certify(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "30",
            "--delta",
            "0.5",
            "-q",
        ],
        "maximisers-ties.json",
    );
    let (_, unresolved) = certify(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "1000",
            "--eps",
            "0.6",
            "-q",
        ],
        "maximisers-unresolved.json",
    );
    for cert in [&ties, &unresolved] {
        assert_eq!(cert["report"]["eps_results"].is_array(), cert == &ties);
    }
    assert_eq!(unresolved["report"]["results"][0]["resolved"], false);
    reject_all(
        &profile,
        "maximisers",
        vec![
            (
                "unresolved-flag",
                Box::new(|c: &mut Value| {
                    let row = &mut c["report"]["results"][0];
                    row["resolved"] = json!(false);
                    row["argmax_k"] = json!([]);
                }),
                "marked unresolved",
            ),
            (
                "argmax-dropped",
                Box::new(|c: &mut Value| {
                    c["report"]["results"][1]["argmax_k"] = json!([]);
                }),
                "not in the argmax",
            ),
            (
                "argmax-invented",
                Box::new(|c: &mut Value| {
                    let list = c["report"]["results"][1]["argmax_k"]
                        .as_array_mut()
                        .unwrap();
                    let mut extra = list[0].clone();
                    extra["k"] = json!(5000);
                    list.push(extra);
                }),
                "not an evaluated pair",
            ),
        ],
    );
    reject_all(
        &ties,
        "maximisers-ties",
        vec![
            (
                "ranges",
                Box::new(|c: &mut Value| {
                    c["report"]["eps_results"][0]["argmax_k_ranges"] = json!([[0, 3]]);
                    c["report"]["argmax_k_ranges"] = json!([[0, 3]]);
                }),
                "argmax_k_ranges",
            ),
            (
                "ties-as-ceilings",
                Box::new(|c: &mut Value| {
                    for closure in c["method"]["closures"].as_array_mut().unwrap() {
                        closure["kind"] = json!("ceiling");
                    }
                    c["report"]["eps_results"][0]["argmax_k_ranges"] = json!([]);
                    c["report"]["argmax_k_ranges"] = json!([]);
                }),
                "closed as `ceiling`",
            ),
        ],
    );
    reject_all(
        &unresolved,
        "maximisers-unresolved",
        vec![(
            "resolved-flag",
            Box::new(|c: &mut Value| c["report"]["results"][0]["resolved"] = json!(true)),
            "marked resolved",
        )],
    );
}

/// A certificate's memory limit is the producing machine's: `verify` applies its own
/// `--max-memory-gib`, and a recomputation over it is refused as such, not as malformed.
#[test]
fn verify_applies_its_own_memory_limit() {
    let (file, _) = certify(
        &[
            "profile",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "200",
            "--delta",
            "1e-3",
            "-q",
            "--max-memory-gib",
            "0.015",
        ],
        "own-memory-limit.json",
    );
    assert_eq!(verify(&file).0, 0);
    let run = cli(&["verify", &file, "--max-memory-gib", "0.001"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("(--max-memory-gib): a block of pairs"),
        "{}",
        run.stderr
    );
    assert_fails(
        &["verify", &file, "--max-memory-gib", "0"],
        "--max-memory-gib",
    );
}

#[test]
fn bad_input_writes_no_certificate() {
    let file = path("never.json");
    let run = cli(&[
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "10",
        "--k",
        "10",
        "--eps",
        "0.1",
        "--certificate",
        &file,
    ]);
    assert_eq!(run.status, 2);
    assert!(run.stdout.is_empty());
    assert!(!std::path::Path::new(&file).exists());
    // A picture is never drawn over the certificate.
    let svg = format!("{file}.svg");
    assert_fails(
        &[
            "check",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "10",
            "--k",
            "0",
            "--t",
            "1",
            "--plot",
            &svg,
            "--certificate",
            &svg,
        ],
        "--plot",
    );
    assert!(!std::path::Path::new(&svg).exists());
    // A check (with a sweep, or of the shuffle index) given bad input writes nothing.
    for (extra, field) in [
        (
            &["--k", "0", "--t", "1", "--n-sweep", "20,0"][..],
            "--n-sweep",
        ),
        (&["--eps", "0.5,-1"][..], "--eps"),
    ] {
        let mut args = vec!["check", "-m", "binary-rr:eps0=1", "--n", "10"];
        args.extend(extra);
        args.extend(["--certificate", &file]);
        assert_fails(&args, field);
        assert!(!std::path::Path::new(&file).exists());
    }
}

#[test]
fn shards_merge_into_the_unsharded_profile() {
    let base = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "600",
        "--delta",
        "1e-5",
        "--eps",
        "0.2",
        "-q",
    ];
    let whole = cli_json(&base[..base.len()]);
    let mut shards = Vec::new();
    for (i, range) in ["0..149", "150..299", "300..449", "450..599"]
        .iter()
        .enumerate()
    {
        let mut args = base.to_vec();
        args.extend(["--k-range", range]);
        shards.push(certify(&args, &format!("shard-{i}.json")).0);
    }
    let merged = path("merged.json");
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["--certificate", &merged, "--json"]);
    let run = cli(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["partial"], false);
    for (a, b) in [
        (&out["eps_profile"], &whole["eps_profile"]),
        (
            &out["results"][0]["delta_profile"],
            &whole["results"][0]["delta_profile"],
        ),
    ] {
        assert!(enclosure(a).overlaps(&enclosure(b)), "{a} vs {b}");
    }
    let ks = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["k"].as_u64().unwrap(),
                    e["direction"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ks(&out["argmax_k"]), ks(&whole["argmax_k"]));
    let (status, report) = verify(&merged);
    assert_eq!(status, 0, "{report}");
    // The shards it records must tile 0..n−1 exactly once and agree with its proof (issue 20).
    let merged_cert: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        merged_cert["method"]["shards"][0]["k_range"],
        json!([0, 149])
    );
    // A closed range of at least two k in 0..299, and a boundary between the first two shards
    // moved to cut it: still a tiling, but one no pair of shard scans can have produced.
    let (cut_lo, _) = merged_cert["method"]["closures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["range"][0].as_u64().unwrap(),
                c["range"][1].as_u64().unwrap(),
            )
        })
        .find(|(lo, hi)| hi - lo >= 2 && *hi <= 300)
        .expect("a closed range of two k or more");
    let cases: Vec<Case> = vec![
        (
            "gap",
            Box::new(|c| c["method"]["shards"][0]["k_range"] = json!([1, 149])),
            "k = 0..0 is covered by no shard",
        ),
        (
            "gap-inside",
            Box::new(|c| c["method"]["shards"][1]["k_range"] = json!([150, 290])),
            "k = 291..299 is covered by no shard",
        ),
        (
            "overlap",
            Box::new(|c| c["method"]["shards"][1]["k_range"] = json!([140, 299])),
            "covered by two shards",
        ),
        (
            "beyond",
            Box::new(|c| c["method"]["shards"][3]["k_range"] = json!([450, 600])),
            "beyond",
        ),
        (
            "dropped",
            Box::new(|c| {
                c["method"]["shards"].as_array_mut().unwrap().pop();
            }),
            "k = 450..599 is covered by no shard",
        ),
        (
            "empty",
            Box::new(|c| c["method"]["shards"] = json!([])),
            "method.shards",
        ),
        (
            "digest",
            Box::new(|c| {
                c["method"]["shards"][1]["digest"] = c["method"]["shards"][0]["digest"].clone()
            }),
            "listed for another shard",
        ),
        (
            "moved",
            Box::new(move |c| {
                c["method"]["shards"][0]["k_range"] = json!([0, cut_lo]);
                c["method"]["shards"][1]["k_range"] = json!([cut_lo + 1, 299]);
            }),
            "closed across shards",
        ),
    ];
    reject_all(&merged_cert, "merged", cases);
    // An unreadable range is malformed: one line, exit 2.
    let file = tampered(&merged_cert, "merged-unreadable.json", true, |c| {
        c["method"]["shards"][0]["k_range"] = json!(["zero", 149])
    });
    let run = cli(&["verify", &file]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("method.shards.0.k_range"),
        "{}",
        run.stderr
    );
    // Gaps, overlaps, disagreeing or edited shards are refused, naming the problem.
    let refuse = |files: Vec<&str>, needle: &str| {
        let mut args = vec!["merge"];
        args.extend(files);
        assert_fails(&args, needle);
    };
    refuse(
        vec![&shards[0], &shards[2], &shards[3]],
        "k = 150..299 is covered by no shard",
    );
    refuse(
        vec![&shards[0], &shards[0], &shards[1], &shards[2], &shards[3]],
        "covered by both",
    );
    let other = certify(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "600",
            "--delta",
            "1e-6",
            "--eps",
            "0.2",
            "-q",
            "--k-range",
            "150..299",
        ],
        "shard-other.json",
    )
    .0;
    refuse(
        vec![&shards[0], &other, &shards[2], &shards[3]],
        "method.quantities",
    );
    let edited = tampered(
        &serde_json::from_str(&std::fs::read_to_string(&shards[1]).unwrap()).unwrap(),
        "shard-edited.json",
        false,
        |c| c["report"]["n"] = json!(601),
    );
    refuse(vec![&shards[0], &edited, &shards[2], &shards[3]], "digest");
}

/// Shards run with `--with-ends` also evaluate the boundary pairs k = 0 and n − 1 and prune
/// against them: a middle shard then evaluates only those, its report says so, and the merge of
/// such shards is the unsharded profile, verified like any other (issue 21).
#[test]
fn shards_with_ends_merge_into_the_unsharded_profile() {
    let base = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "2000",
        "--delta",
        "1e-6",
        "--eps",
        "0.1",
        "-q",
    ];
    let whole = cli_json(&base);
    let mut shards = Vec::new();
    for (i, range) in ["0..499", "500..999", "1000..1499", "1500..1999"]
        .iter()
        .enumerate()
    {
        let mut args = base.to_vec();
        args.extend(["--k-range", range, "--with-ends"]);
        let (file, cert) = certify(&args, &format!("ends-shard-{i}.json"));
        let (status, report) = verify(&file);
        assert_eq!(status, 0, "shard {i}: {report}");
        shards.push((file, cert));
    }
    let middle = &shards[1].1["report"];
    assert_eq!(middle["ends"], json!([0, 1999]));
    assert!(
        middle["scope"]
            .as_str()
            .unwrap()
            .contains("500..999 and the boundary pairs k = 0, 1999"),
        "{}",
        middle["scope"]
    );
    // The first shard holds k = 0 itself: only the other end is evaluated besides.
    assert_eq!(shards[0].1["report"]["ends"], json!([1999]));
    let pairs = |cert: &Value| cert["method"]["records"].as_array().unwrap().len();
    assert_eq!(
        pairs(&shards[1].1),
        2,
        "the middle shard prunes against the ends"
    );
    let merged = path("ends-merged.json");
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(shards.iter().map(|(f, _)| f.as_str()));
    args.extend(["--certificate", &merged, "--json"]);
    let run = cli(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["partial"], false);
    assert!(out.get("ends").is_none());
    for key in ["eps_profile", "argmax_k"] {
        if key == "eps_profile" {
            assert!(enclosure(&out[key]).overlaps(&enclosure(&whole[key])));
        } else {
            let ks = |v: &Value| {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|e| (e["k"].as_u64().unwrap(), e["direction"].clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ks(&out[key]), ks(&whole[key]));
        }
    }
    let (status, report) = verify(&merged);
    assert_eq!(status, 0, "{report}");
    // Each end pair counts once, in the shard that holds it.
    let merged_cert: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        out["stats"]["pairs_evaluated"],
        json!(pairs(&merged_cert)),
        "{}",
        out["stats"]
    );
    // A shard that claims other boundary pairs, or hides them, is not what it proves.
    let cert = &shards[1].1;
    let cases: Vec<Case> = vec![
        (
            "ends-inside",
            Box::new(|c| c["report"]["ends"] = json!([0, 700])),
            "report.ends",
        ),
        (
            "ends-hidden",
            Box::new(|c| {
                c["report"].as_object_mut().unwrap().remove("ends");
            }),
            "report.partial",
        ),
        (
            "end-record-dropped",
            Box::new(|c| {
                let records = c["method"]["records"].as_array_mut().unwrap();
                records.retain(|r| r["k"] != json!(1999));
            }),
            "no evaluated pair at k = 1999",
        ),
    ];
    reject_all(cert, "ends-shard", cases);
    // --with-ends needs a --k-range.
    let mut args = base.to_vec();
    args.push("--with-ends");
    assert_fails(&args, "--k-range");
}

/// A certificate without the fields that change with the build or the clock.
fn stable(cert: &Value) -> Value {
    let mut c = cert.clone();
    for key in ["tool", "created", "digest"] {
        c.as_object_mut().unwrap().remove(key);
    }
    c
}

#[test]
fn the_fixture_certificates_verify_and_are_reproduced() {
    let dir = format!("{}/fixtures/certificates", env!("CARGO_MANIFEST_DIR"));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/manifest.json")).unwrap())
            .unwrap();
    let update = std::env::var("UPDATE_CERTIFICATES").is_ok();
    let entries = manifest["certificates"].as_array().unwrap();
    assert!(entries.len() >= 8);
    for entry in entries {
        let stored_path = format!("{dir}/{}", entry["file"].as_str().unwrap());
        let args = strings(&entry["args"]);
        let (fresh_path, fresh) = certify(&args, entry["file"].as_str().unwrap());
        if update {
            std::fs::copy(&fresh_path, &stored_path).unwrap();
        }
        let stored: Value =
            serde_json::from_str(&std::fs::read_to_string(&stored_path).unwrap_or_else(|e| {
                panic!("{stored_path}: {e} (UPDATE_CERTIFICATES=1 writes it)")
            }))
            .unwrap();
        let (status, report) = verify(&stored_path);
        assert_eq!(status, 0, "{stored_path}: {report}");
        assert!(
            stable(&stored) == stable(&fresh),
            "{stored_path}: the certificate written today differs from the stored one; if the change is \
             intended, regenerate with UPDATE_CERTIFICATES=1 cargo test --test suite certificates::"
        );
    }
}

/// Runs a command with `--certificate`, expecting exit status `status`.
pub(crate) fn certify_with_status(args: &[&str], name: &str, status: i32) -> (String, Value) {
    let file = path(name);
    let mut all = args.to_vec();
    all.extend(["--certificate", &file]);
    let run = cli(&all);
    assert_eq!(run.status, status, "{args:?}: {}", run.stderr);
    let cert = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (file, cert)
}

/// An edit of a certificate, and what `verify` must name when it rejects it.
pub(crate) type Case = (&'static str, Box<dyn FnOnce(&mut Value)>, &'static str);

/// Each edit, its digest recomputed, must be rejected as invalid, naming the needle.
pub(crate) fn reject_all(cert: &Value, prefix: &str, cases: Vec<Case>) {
    for (name, edit, needle) in cases {
        let file = tampered(cert, &format!("tampered-{prefix}-{name}.json"), true, edit);
        let (status, report) = verify(&file);
        assert_eq!(status, 1, "{name}: {report}");
        let problems = report["problems"].to_string();
        assert!(problems.contains(needle), "{name}: {problems}");
    }
}

#[test]
fn audit_certificates_verify_and_reject_tampering() {
    // Sound, unsound (with witness and boundary pairs), a pair claim, a lower and an rdp claim.
    let claims = "fixtures/claims/examples.jsonl";
    let args = ["audit", "-m", "binary-rr:eps0=1", "--claims", claims];
    let (file, cert) = certify_with_status(&args, "audit.json", 1);
    assert_eq!(schema_errors(&cert), Vec::<String>::new());
    assert_eq!(
        cert["claims"]["text"],
        json!(std::fs::read_to_string(format!("{}/{claims}", env!("CARGO_MANIFEST_DIR"))).unwrap())
    );
    assert_eq!(cert["claims"]["parsed"].as_array().unwrap().len(), 5);
    assert!(
        cert["proofs_notes"]
            .as_array()
            .unwrap()
            .contains(&json!("audit-verdicts.md"))
    );
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    assert!(report["routes"].to_string().contains("evidence pairs"));
    // Reproducible, though the audit fails.
    assert_eq!(
        written(&args, "audit-a.json", 1),
        written(&args, "audit-b.json", 1)
    );
    let unsound = cert["report"]["claims"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| !c["boundary"].is_null())
        .unwrap();
    let cases: Vec<Case> = vec![
        (
            "verdict",
            Box::new(move |c| c["report"]["claims"][unsound]["verdict"] = json!("sound")),
            "verdict",
        ),
        (
            "claims-text",
            Box::new(|c| {
                let text = c["claims"]["text"]
                    .as_str()
                    .unwrap()
                    .replacen("0.1", "0.2", 1);
                c["claims"]["text"] = json!(text);
            }),
            "claims",
        ),
        (
            "claims-parsed",
            Box::new(|c| c["claims"]["parsed"][0]["delta"] = json!("1/10")),
            "claims.parsed",
        ),
        (
            "certified-delta",
            Box::new(|c| {
                c["report"]["claims"][2]["certified_delta"] =
                    json!({ "lo": "0", "hi": "1/1000000" })
            }),
            "certified_delta",
        ),
        (
            "witness",
            Box::new(move |c| {
                c["report"]["claims"][unsound]["witness"]["value"] =
                    json!({ "lo": "1/2", "hi": "1/2" })
            }),
            "witness",
        ),
        (
            "boundary",
            Box::new(move |c| {
                c["report"]["claims"][unsound]["boundary"]["verdict_on_boundary_alone"] =
                    json!("undecided")
            }),
            "boundary",
        ),
        (
            "scan-record",
            Box::new(|c| {
                c["method"]["scans"][0]["method"]["records"]
                    .as_array_mut()
                    .unwrap()
                    .remove(0);
            }),
            "covered",
        ),
        (
            "summary",
            Box::new(|c| c["report"]["summary"]["unsound"] = json!(0)),
            "summary",
        ),
    ];
    reject_all(&cert, "audit", cases);
    // An audit certificate without its claims is malformed.
    let no_claims = tampered(&cert, "audit-no-claims.json", true, |c| {
        c.as_object_mut().unwrap().remove("claims");
    });
    assert_eq!(verify(&no_claims).0, 2);
}

#[test]
fn an_audit_refined_in_mpfr_verifies_at_a_higher_precision() {
    // δ_M(0.8) at n = 400 lies below the f64 scan's resolution: rescanned at 256 bits.
    let dir = std::env::temp_dir().join(format!("shufflecert-certs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let claims = dir.join("tiny.csv");
    std::fs::write(&claims, "n,eps,delta\n400,0.8,1e-300\n").unwrap();
    let claims = claims.to_string_lossy().into_owned();
    let (file, cert) = certify_with_status(
        &["audit", "-m", "binary-rr:eps0=1", "--claims", &claims],
        "audit-refined.json",
        1,
    );
    assert_eq!(cert["method"]["scans"][0]["refined_bits"], 256);
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    // Incrementally (issue 20): every pair at 256 bits, and at 320 only the few values that
    // needs (the refined δ), not the 400 pairs of its scan, nearly all of them the f64 scan's
    // values of ε at 1e-300.
    let routes: Vec<String> = report["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    assert!(
        routes.contains(&"every evaluated pair recomputed in mpfr-256".to_string()),
        "{routes:?}"
    );
    let again = routes
        .iter()
        .find(|r| r.contains("recomputed in mpfr-320"))
        .unwrap_or_else(|| panic!("{routes:?}"));
    let counts: Vec<usize> = again
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|t| t.parse().ok())
        .collect();
    assert_eq!(
        [counts[0], counts[2], counts[3]],
        [256, 400, 320],
        "{again}"
    );
    assert!(counts[1] <= 4, "{again}");
    let records = cert["method"]["scans"][0]["method"]["records"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(records.len(), 400);
    let refined = records.iter().position(|r| !r["qp"][0].is_null()).unwrap();
    let unrefined = records.iter().position(|r| r["qp"][0].is_null()).unwrap();
    // Edited records are still caught, whichever pass settles them: an f64 ε (at 1e-300, of
    // which the row's lower end is above 0.44) made small, and a refined δ moved by a millionth.
    let moved = |v: &Value| {
        let e = enclosure(v);
        let scale = |end: &shufflecert::enclosure::Endpoint| {
            let x = end.finite().unwrap().clone() * rug::Rational::from((1_000_001, 1_000_000));
            json!(shufflecert::enclosure::exact_string(&x))
        };
        json!({ "lo": scale(e.lo()), "hi": scale(e.hi()) })
    };
    let moved_delta = moved(&records[refined]["pq"][0]);
    let cases: Vec<Case> = vec![
        (
            "unrefined-eps",
            Box::new(move |c| {
                c["method"]["scans"][0]["method"]["records"][unrefined]["qp"][1] =
                    json!({ "lo": "0", "hi": "1/1000" })
            }),
            "disjoint",
        ),
        (
            "refined-delta",
            Box::new(move |c| {
                c["method"]["scans"][0]["method"]["records"][refined]["pq"][0] = moved_delta
            }),
            "disjoint",
        ),
    ];
    reject_all(&cert, "audit-refined", cases);
}

#[test]
fn compare_certificates_reject_edited_bounds_and_verdicts() {
    let args = [
        "compare",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "500",
        "--delta",
        "1e-5",
    ];
    let (file, cert) = certify(&args, "compare-binary.json");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    assert!(report["routes"].to_string().contains("published bounds"));
    let bounds = cert["report"]["results"][0]["bounds"].as_array().unwrap();
    let holds = bounds.iter().position(|b| b["status"] == "holds").unwrap();
    let cases: Vec<Case> = vec![
        (
            "status",
            Box::new(move |c| {
                c["report"]["results"][0]["bounds"][holds]["status"] = json!("VIOLATED")
            }),
            "status",
        ),
        (
            "bound-eps",
            Box::new(move |c| {
                c["report"]["results"][0]["bounds"][holds]["eps"] = json!({ "lo": "3", "hi": "4" })
            }),
            "eps",
        ),
        (
            "boundary",
            Box::new(|c| {
                c["report"]["results"][0]["boundary_pair_eps"] = json!({ "lo": "0", "hi": "1/100" })
            }),
            "boundary_pair_eps",
        ),
        (
            "certified-eps",
            Box::new(|c| {
                c["report"]["results"][0]["certified_eps"] = json!({ "lo": "0", "hi": "1/100" })
            }),
            "certified_eps",
        ),
        (
            "local",
            Box::new(|c| c["report"]["local"]["k_rr"] = json!(3)),
            "local",
        ),
    ];
    reject_all(&cert, "compare", cases);
}

#[test]
fn certificates_written_by_0_1_still_verify() {
    // 0.1.x read `k-rr:k=4,…` as the binary-input restriction; verify reads them so.
    let dir = format!(
        "{}/fixtures/certificates/legacy-0.1",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let (status, report) = verify(path.to_str().unwrap());
            assert_eq!(status, 0, "{}: {report}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 2);
}

#[test]
fn range_compare_certificates_name_a_witness_and_reject_tampering() {
    let args = [
        "compare",
        "-m",
        "k-rr:k=4,exp_eps0=3",
        "--n",
        "60",
        "--delta",
        "1e-3",
    ];
    let (file, cert) = certify(&args, "compare-range.json");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let routes = report["routes"].to_string();
    assert!(
        routes.contains("witness pair") && routes.contains("pair engine"),
        "{routes}"
    );
    assert!(cert["mechanism"]["exact"]["rows"].is_array());
    let bounds = cert["report"]["results"][0]["bounds"].as_array().unwrap();
    let wang = bounds
        .iter()
        .position(|b| b["id"] == "wang-variation-ratio")
        .unwrap();
    assert_eq!(bounds[wang]["status"], "VIOLATED");
    let cases: Vec<Case> = vec![
        (
            "status",
            Box::new(move |c| c["report"]["results"][0]["bounds"][wang]["status"] = json!("holds")),
            "status",
        ),
        (
            "stated-for",
            Box::new(move |c| {
                c["report"]["results"][0]["bounds"][wang]["stated_for"] =
                    json!("binary inputs only")
            }),
            "stated_for",
        ),
        (
            // A witness ε raised above what the pair has.
            "witness",
            Box::new(|c| {
                c["report"]["results"][0]["certified_eps_range"]["lower"]["value"] =
                    json!({ "lo": "0.4", "hi": "0.41" })
            }),
            "lower.value",
        ),
        (
            // An upper end lowered below the blanket bound's.
            "upper",
            Box::new(|c| {
                c["report"]["results"][0]["certified_eps_range"]["upper"]["value"] =
                    json!({ "lo": "0.2", "hi": "0.3" })
            }),
            "upper.value",
        ),
        (
            "witness-inputs",
            Box::new(|c| {
                c["report"]["results"][0]["certified_eps_range"]["lower"]["background"] = json!("0")
            }),
            "lower.value",
        ),
        (
            "rows",
            Box::new(|c| c["mechanism"]["exact"]["rows"][0][0] = json!("1/3")),
            "mechanism.exact",
        ),
        (
            "local",
            Box::new(|c| c["report"]["local"]["k_rr"] = json!(3)),
            "local",
        ),
    ];
    reject_all(&cert, "compare-range", cases);
}

/// Writes a claims file in the test's scratch directory.
fn claims_file(name: &str, text: &str) -> String {
    let file = path(name);
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_scan_proves_only_the_n_and_k_it_covers() {
    let run = |claims: &str, name: &str, status: i32| {
        let file = claims_file(&format!("{name}.jsonl"), claims);
        certify_with_status(
            &["audit", "-m", "binary-rr:eps0=1", "--claims", &file],
            &format!("{name}.json"),
            status,
        )
        .1
    };
    let expect_rejected = |forged: &Value, name: &str, needle: &str| {
        let file = tampered(forged, &format!("forged-{name}.json"), true, |_| {});
        let (status, report) = verify(&file);
        assert_eq!(status, 1, "{name}: {report}");
        assert!(
            report["problems"].to_string().contains(needle),
            "{name}: {report}"
        );
    };
    // A claim unsound at n = 1000 "proved" by the scan of a sound claim at n = 2000.
    let at_1000 = run(r#"{"n": 1000, "eps": 0.1, "delta": 1e-5}"#, "at-1000", 1);
    let mut forged = run(r#"{"n": 2000, "eps": 0.1, "delta": 1e-5}"#, "at-2000", 0);
    forged["claims"] = at_1000["claims"].clone();
    forged["report"]["claims_file"] = at_1000["report"]["claims_file"].clone();
    forged["report"]["claims"][0]["n"] = json!(1000);
    forged["report"]["scans"][0]["n"] = json!(1000);
    forged["method"]["scans"][0]["n"] = json!(1000);
    expect_rejected(&forged, "scan-n", "proof covers");
    // A mechanism-wide claim "proved" by the scan of the boundary pair alone.
    let mut forged = run(
        r#"{"n": 1000, "k": 0, "eps": 0.11, "delta": 1e-5}"#,
        "pair-k0",
        0,
    );
    let wide = claims_file("wide.jsonl", r#"{"n": 1000, "eps": 0.11, "delta": 1e-5}"#);
    let text = std::fs::read_to_string(&wide).unwrap();
    forged["claims"]["given"] = json!(wide);
    forged["claims"]["text"] = json!(text);
    forged["claims"]["parsed"][0]["k"] = Value::Null;
    forged["report"]["claims_file"] = json!(wide);
    let claim = &mut forged["report"]["claims"][0];
    claim["k"] = Value::Null;
    claim["scope"] = json!("mechanism");
    forged["report"]["scans"][0]["k"] = Value::Null;
    forged["method"]["scans"][0]["k"] = Value::Null;
    expect_rejected(&forged, "scan-k", "proof covers");
    // compare: the mechanism's ε "proved" by a partial profile.
    let (_, mut compare) = certify(
        &[
            "compare",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "500",
            "--delta",
            "1e-5",
        ],
        "compare-500.json",
    );
    let (_, partial) = certify(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "500",
            "--delta",
            "1e-5",
            "--k-range",
            "250..250",
            "-q",
        ],
        "partial-500.json",
    );
    compare["method"]["scans"][0]["report"] = partial["report"].clone();
    compare["method"]["scans"][0]["method"] = partial["method"].clone();
    expect_rejected(&compare, "compare-partial", "not every k");
    // Hostile settings and refinement labels are reported, not run.
    let mut huge = at_1000.clone();
    huge["method"]["scans"][0]["refined_bits"] = json!(1u64 << 40);
    expect_rejected(&huge, "refined-bits", "refined_bits");
    let mut wide_precision = at_1000.clone();
    wide_precision["settings"]["backend"] = json!("mpfr");
    wide_precision["settings"]["precision"] = json!(1u64 << 32);
    let file = tampered(&wide_precision, "forged-precision.json", true, |_| {});
    assert_eq!(verify(&file).0, 2);
}

/// Audit, compare and bounds certificates of randomized response given by a real ε0 hold every
/// scan's profile against the same profile on rational rows at the two ends of a bracket of
/// `e^{ε0}` (data processing), a route that never evaluates an entry in `e^{ε0}`: it rejects a
/// scan's row moved just past the true value.
#[test]
fn real_eps0_scans_are_held_on_the_bracket_of_exp_eps0() {
    const ROUTE: &str = "profile on rational rows at a_lo < e^eps0 < a_hi";
    let claims = claims_file(
        "bracket-claims.jsonl",
        r#"{"n": 200, "eps": 0.3, "delta": 1e-5}"#,
    );
    let cases = [
        (
            vec!["audit", "-m", "binary-rr:eps0=1", "--claims", &claims],
            "bracket-audit",
            "/method/scans/0/report/results/0/delta_profile",
        ),
        (
            vec![
                "compare",
                "-m",
                "binary-rr:eps0=1",
                "--n",
                "100",
                "--delta",
                "1e-5",
            ],
            "bracket-compare",
            "/method/scans/0/report/eps_results/0/eps_profile",
        ),
        (
            vec![
                "bounds",
                "-m",
                "k-rr:k=3,eps0=1,inputs=2",
                "--n",
                "20",
                "--delta",
                "1e-3",
            ],
            "bracket-bounds",
            "/method/binary_profile/report/eps_results/0/eps_profile",
        ),
    ];
    // Ends that are not boundary pairs (k = 1 claimed as an end of the range 0..0): INVALID,
    // and the bracket route does not take their pair for a maximiser.
    let partial = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "5000",
        "--delta",
        "1e-5",
        "--k-range",
        "0..1",
    ];
    let (_, cert) = certify(&partial, "bracket-partial.json");
    let forged = tampered(&cert, "bracket-forged-ends.json", true, |c| {
        c["report"]["k_range"] = json!([0, 0]);
        c["report"]["ends"] = json!([1]);
    });
    let (status, report) = verify(&forged);
    assert_eq!(status, 1, "{report}");
    assert!(
        report["problems"].to_string().contains("report.ends"),
        "{report}"
    );
    for (args, name, row) in cases {
        held_by_route(&args, name, ROUTE, row);
    }
}

/// Certifies `args` (as `{name}.json`): `verify` must pass naming `route`, and reject the value
/// at `pointer` moved just above its certified upper end (disjoint from the route's enclosure)
/// with a problem naming `route`.
pub(crate) fn held_by_route(args: &[&str], name: &str, route: &str, pointer: &str) {
    let (file, cert) = certify(args, &format!("{name}.json"));
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{name}: {report}");
    assert!(
        report["routes"].to_string().contains(route),
        "{name}: {report}"
    );
    let moved = tampered(&cert, &format!("moved-{name}.json"), true, |c| {
        let field = c.pointer_mut(pointer).unwrap();
        let hi = parse_rational(field["hi"].as_str().unwrap()).unwrap();
        let above = Rational::from(&hi * Rational::from((1_000_000_001u64, 1_000_000_000u64)));
        field["lo"] = json!(exact_string(&above));
        field["hi"] = json!(exact_string(&Rational::from(&above * 2u32)));
    });
    let (status, report) = verify(&moved);
    assert_eq!(status, 1, "{name}: {report}");
    assert!(
        report["problems"].to_string().contains(route),
        "{name}: {report}"
    );
}

/// Writes a mechanism file (exact rows over outputs a, b, …) in the scratch directory.
fn mechanism_file(name: &str, w0: &[String], w1: &[String]) -> String {
    let outputs: Vec<String> = (0..w0.len())
        .map(|i| ((b'a' + i as u8) as char).to_string())
        .collect();
    let file = path(name);
    let m = json!({ "name": name, "outputs": outputs, "w0": w0, "w1": w1 });
    std::fs::write(&file, m.to_string()).unwrap();
    file
}

/// `verify` must find the certificate at `file` valid.
fn assert_valid(file: &str, what: &str) {
    let (status, report) = verify(file);
    assert_eq!(status, 0, "{what}: {report}");
    assert_eq!(report["valid"], true, "{what}");
}

/// Profile, shard-and-merge and audit certificates of a mechanism, each verified: the shards
/// split `0..n−1` after `cut`.
fn certify_all_ways(m: &str, n: u64, eps: &str, delta: &str, cut: u64, name: &str) -> Value {
    let n_text = n.to_string();
    let base = [
        "profile", "-m", m, "--n", &n_text, "-q", "--eps", eps, "--delta", delta,
    ];
    let mut args = base.to_vec();
    args.extend(["--renyi-order", "2"]);
    let (file, cert) = certify(&args, &format!("{name}-profile.json"));
    assert_valid(&file, &format!("{name}: {args:?}"));
    if n >= 2 {
        let mut shards = Vec::new();
        for (i, range) in [format!("0..{cut}"), format!("{}..{}", cut + 1, n - 1)]
            .iter()
            .enumerate()
        {
            let mut args = base.to_vec();
            args.extend(["--k-range", range]);
            let (file, _) = certify(&args, &format!("{name}-shard-{i}.json"));
            assert_valid(&file, &format!("{name}: {args:?}"));
            shards.push(file);
        }
        let merged = path(&format!("{name}-merged.json"));
        let run = cli(&["merge", &shards[0], &shards[1], "--certificate", &merged]);
        assert_eq!(run.status, 0, "{name}: {}", run.stderr);
        assert_valid(&merged, &format!("{name}: merged"));
    }
    // An upper, a lower, a Rényi and a pair claim.
    let first_eps = eps.split(',').next().unwrap();
    let claims = [
        json!({ "n": n, "eps": first_eps.parse::<f64>().unwrap(), "delta": delta.parse::<f64>().unwrap() }),
        json!({ "n": n, "eps": 0.5, "delta": delta.parse::<f64>().unwrap(), "kind": "lower" }),
        json!({ "n": n, "eps": 0.7, "kind": "rdp", "alpha": 2 }),
        json!({ "n": n, "k": n - 1, "eps": 0.3, "delta": delta.parse::<f64>().unwrap() }),
    ]
    .map(|c| c.to_string())
    .join("\n");
    let claims = claims_file(&format!("{name}-claims.jsonl"), &claims);
    let run = cli(&[
        "audit",
        "-m",
        m,
        "--claims",
        &claims,
        "--certificate",
        &path(&format!("{name}-audit.json")),
    ]);
    assert!(matches!(run.status, 0 | 1), "{name}: {}", run.stderr);
    assert_valid(
        &path(&format!("{name}-audit.json")),
        &format!("{name}: audit"),
    );
    cert
}

#[test]
fn certificates_whose_eps_profile_is_infinite_verify() {
    // Issue 20's adversarial example: W1 never outputs "a", so T_{6,5} has singular mass 3/7
    // against T_{6,6}: δ_M(0.5) = 3/7 at k = 5 (pq), and ε_M(0.01) = +∞.  The ε closures are
    // made against the cap 700 (profile.md), which verify must re-derive, not refuse.
    let m = mechanism_file(
        "zero-entry.json",
        &["3/7", "5/14", "3/14"].map(String::from),
        &["0", "9/20", "11/20"].map(String::from),
    );
    let (file, cert) = certify(
        &[
            "profile", "-m", &m, "--n", "6", "-q", "--eps", "0.5", "--delta", "0.01",
        ],
        "zero-entry-issue.json",
    );
    assert_valid(&file, "the issue's profile");
    let report = &cert["report"];
    assert_eq!(
        report["eps_profile"],
        json!({ "lo": "inf", "hi": "inf", "resolved": true })
    );
    let delta = &report["results"][0];
    assert!(enclosure(&delta["delta_profile"]).contains(&rug::Rational::from((3, 7))));
    assert_eq!(delta["argmax_k"][0]["k"], 5);
    assert_eq!(delta["argmax_k"][0]["direction"], "pq");
    assert!(
        cert["method"]["closures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "below" && c["quantity"] == 1),
        "the ε row is closed below somewhere"
    );
    certify_all_ways(&m, 6, "0.5", "0.01", 2, "zero-entry-issue");
}

#[test]
fn certificates_of_mechanisms_with_zero_entries_verify() {
    // Small mechanisms with zero entries, many with singular mass above δ (ε_M = +∞), from a
    // fixed linear congruential sequence: every genuine certificate must verify.
    let mut state: u64 = 0x5eed_2020;
    let mut next = |bound: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % bound
    };
    let mut infinite = 0;
    for case in 0..20 {
        let d = [2, 3, 3, 4][next(4) as usize];
        let row = |next: &mut dyn FnMut(u64) -> u64, zero: Option<usize>| -> Vec<String> {
            let weights: Vec<u64> = (0..d)
                .map(|i| if Some(i) == zero { 0 } else { 1 + next(20) })
                .collect();
            let total: u64 = weights.iter().sum();
            weights.iter().map(|w| format!("{w}/{total}")).collect()
        };
        // W1 has a zero entry in every case, W0 in every third (on another output).
        let z1 = next(d as u64) as usize;
        let z0 = (case % 3 == 0 && d > 2).then(|| (z1 + 1 + next(d as u64 - 1) as usize) % d);
        let (w0, w1) = (row(&mut next, z0), row(&mut next, Some(z1)));
        let m = mechanism_file(&format!("zeros-{case}.json"), &w0, &w1);
        let n = 1 + next(8);
        let eps = ["0", "0.1", "0.5", "1", "2"][next(5) as usize].to_string() + ",3";
        let delta = ["0.5", "0.1", "0.01", "1e-5"][next(4) as usize];
        let cut = if n >= 2 { next(n - 1) } else { 0 };
        let cert = certify_all_ways(&m, n, &eps, delta, cut, &format!("zeros-{case}"));
        if cert["report"]["eps_profile"]["lo"] == "inf" {
            infinite += 1;
        }
    }
    assert!(infinite >= 5, "only {infinite} cases with ε_M = +∞");
}

/// At a large ε0 the recomputed ε (a search stopped at a width) can be wider than the certified
/// one at every precision; the witnesses (δ at `c_lo` above the target, at `c_hi` at most it)
/// prove both ends by themselves (helper-34's reproduction: INVALID before).
/// The two-sided ε is the larger direction's: its ends follow from the directions' witnesses
/// (k = 20, where the qp direction is the larger, failed for the two-sided lower end).
#[test]
fn epsilon_ends_are_shown_by_their_witnesses() {
    for k in ["3", "20"] {
        let args = [
            "epsilon",
            "-m",
            "k-rr:k=3,eps0=300,inputs=2",
            "--n",
            "30",
            "--k",
            k,
            "--delta",
            "1e-9",
        ];
        let (file, cert) = certify(&args, &format!("eps-witnesses-{k}.json"));
        let (status, report) = verify(&file);
        assert_eq!(status, 0, "k = {k}: {report}");
        // A witness e^ε below 1 is refused as such (it panicked in ln before).
        for (i, bad) in ["0", "-1", "1/2"].into_iter().enumerate() {
            let file = tampered(&cert, &format!("eps-witness-{k}-{i}.json"), true, |c| {
                c["report"]["witnesses"]["qp"]["exp_eps_hi"] = json!(bad);
            });
            let (status, report) = verify(&file);
            assert_eq!(status, 1, "{bad}: {report}");
            assert!(
                report["problems"].to_string().contains("exp_eps_hi"),
                "{report}"
            );
        }
    }
}
