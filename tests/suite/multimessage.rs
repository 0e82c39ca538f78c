//! Multi-message shuffling (Part I §9, issue 24): the unbundled pair at distance m and the
//! bundled model on message types, held against brute force over raw messages (every output of
//! every message, no type reduction), the single-message engine at nm users, the §9.1 ratio and
//! both χ² closed forms, and each other (unbundled ≤ bundled).

use crate::common::*;
use inari::Interval;
use num_rational::BigRational;
use num_traits::{One, Zero};
use proptest::prelude::*;
use rug::Rational;
use serde_json::{Value, json};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::exact::curve::{Direction, delta_at_exp};
use shufflecert::exact::law::PairLaw;
use shufflecert::exact::pair::{Engine, PairOptions, pair_law};
use shufflecert::exact::ratio_sum::RatioLattice;
use shufflecert::mechanism::{Entry, Mechanism, Messages, load_mechanism};
use shufflecert::multimessage::{
    bundled_chi2, bundled_ratio, chi2, type_probability, types, unbundled_chi2, unbundled_ratio,
    with_messages,
};
use std::collections::HashMap;

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};

type Law = HashMap<Vec<u64>, BigRational>;

fn explicit(w0: &[(i64, i64)], w1: &[(i64, i64)]) -> Mechanism {
    let entries = |r: &[(i64, i64)]| r.iter().map(|&q| Entry::Exact(Rational::from(q))).collect();
    Mechanism::new("m", "m".into(), None, [entries(w0), entries(w1)], None).unwrap()
}

fn sending(m: &Mechanism, count: u32, bundled: bool) -> Mechanism {
    with_messages(m, Messages { count, bundled }).unwrap()
}

fn exact_options(engine: Engine) -> PairOptions {
    PairOptions {
        engine,
        truncate: false,
        ..PairOptions::default()
    }
}

/// The law's two lists as maps from histograms.
fn maps(law: &PairLaw<Rational>) -> (Law, Law) {
    let (mut p, mut q) = (Law::new(), Law::new());
    for i in 0..law.len() {
        let h = law.histogram(i).unwrap();
        if law.p[i] != 0 {
            p.insert(h.clone(), to_big(&law.p[i]));
        }
        if law.q[i] != 0 {
            q.insert(h, to_big(&law.q[i]));
        }
    }
    (p, q)
}

/// Every assignment of outputs to the n users' m messages each (users 0..k hold 1, user k is
/// the switched one), summed into message histograms (unbundled) or into histograms of the
/// users' tuples in `Y^m` (bundled).  Exponential in nm: tiny cases only.
fn brute_force(
    w0: &[BigRational],
    w1: &[BigRational],
    n: usize,
    k: usize,
    m: usize,
    bundled: bool,
) -> (Law, Law) {
    let d = w0.len();
    let draws = n * m;
    let symbols = if bundled { d.pow(m as u32) } else { d };
    let (mut p, mut q) = (Law::new(), Law::new());
    let mut outputs = vec![0usize; draws];
    loop {
        let mut hist = vec![0u64; symbols];
        let (mut under_p, mut under_q) = (BigRational::one(), BigRational::one());
        for user in 0..n {
            let mut tuple = 0;
            for j in 0..m {
                let y = outputs[user * m + j];
                tuple = tuple * d + y;
                if !bundled {
                    hist[y] += 1;
                }
                let (row_p, row_q) = match user.cmp(&k) {
                    std::cmp::Ordering::Less => (w1, w1),
                    std::cmp::Ordering::Equal => (w0, w1),
                    std::cmp::Ordering::Greater => (w0, w0),
                };
                under_p *= &row_p[y];
                under_q *= &row_q[y];
            }
            if bundled {
                hist[tuple] += 1;
            }
        }
        *p.entry(hist.clone()).or_insert_with(BigRational::zero) += under_p;
        *q.entry(hist).or_insert_with(BigRational::zero) += under_q;
        let mut i = 0;
        while i < draws && outputs[i] == d - 1 {
            outputs[i] = 0;
            i += 1;
        }
        if i == draws {
            break;
        }
        outputs[i] += 1;
    }
    (p, q)
}

fn big_rows(m: &Mechanism) -> [Vec<BigRational>; 2] {
    m.rational_rows()
        .unwrap()
        .map(|r| r.iter().map(to_big).collect())
}

fn thresholds() -> Vec<Rational> {
    [(1, 1), (3, 2), (3, 1), (7, 1)]
        .map(Rational::from)
        .to_vec()
}

#[test]
fn unbundled_is_the_single_message_law_at_nm_users_at_distance_m() {
    // P = T_{nm, km}, Q = T_{nm, km+m}, on every engine that takes the alphabet.
    let rr = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    let ternary = explicit(
        &[(7, 10), (2, 10), (1, 10)],
        &[(15, 100), (55, 100), (30, 100)],
    );
    for (base, engines) in [
        (&rr, vec![Engine::Binary, Engine::General]),
        (&ternary, vec![Engine::Window, Engine::General]),
    ] {
        for (n, k, m) in [(3u64, 0u64, 2u32), (4, 1, 3), (5, 4, 2), (2, 1, 4)] {
            let mm = sending(base, m, false);
            let size = n * u64::from(m);
            let (k_m, mu) = (k * u64::from(m), u64::from(m));
            for &engine in &engines {
                let o = exact_options(engine);
                let law = pair_law::<Rational>(&mm, n, k, &o, &EXACT).unwrap();
                let p_single = pair_law::<Rational>(base, size, k_m, &o, &EXACT).unwrap();
                let q_single = pair_law::<Rational>(base, size, k_m + mu - 1, &o, &EXACT).unwrap();
                let (p, q) = maps(&law);
                assert_eq!(p, maps(&p_single).0, "{engine:?} n={n} k={k} m={m}: P");
                assert_eq!(q, maps(&q_single).1, "{engine:?} n={n} k={k} m={m}: Q");
            }
        }
    }
}

#[test]
fn both_models_equal_brute_force_over_raw_messages() {
    let rr = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    let ternary = explicit(&[(1, 2), (1, 3), (1, 6)], &[(1, 6), (1, 2), (1, 3)]);
    // Zeros: A = {2} (W0 = 0 < W1), B = {0}.
    let zeros = explicit(&[(1, 2), (1, 2), (0, 1)], &[(0, 1), (1, 3), (2, 3)]);
    for base in [&rr, &ternary, &zeros] {
        let [w0, w1] = big_rows(base);
        for (n, m) in [(2usize, 2usize), (3, 2), (2, 3), (4, 2)] {
            if base.d().pow((n * m) as u32) > 20_000 {
                continue;
            }
            for k in 0..n {
                for bundled in [false, true] {
                    let mm = sending(base, m as u32, bundled);
                    let law = pair_law::<Rational>(
                        &mm,
                        n as u64,
                        k as u64,
                        &PairOptions::default(),
                        &EXACT,
                    )
                    .unwrap();
                    let (bp, bq) = brute_force(&w0, &w1, n, k, m, bundled);
                    for c in thresholds() {
                        for (dir, upper, lower) in
                            [(Direction::Qp, &bq, &bp), (Direction::Pq, &bp, &bq)]
                        {
                            let engine = delta_at_exp(&law, dir, &c, &EXACT);
                            let brute = from_big(&positive_part(upper, lower, &to_big(&c)));
                            assert!(
                                engine.is_point() && engine.contains(&brute),
                                "{} n={n} k={k} m={m} bundled={bundled} {dir:?} at {c}: {engine} vs {brute}",
                                base.d()
                            );
                        }
                    }
                    // Singular masses in closed form equal the exact laws'.
                    if let Some([qp, pq]) = &law.omission.singular {
                        let singular = |a: &Law, b: &Law| -> Rational {
                            from_big(
                                &a.iter()
                                    .filter(|(h, _)| b.get(*h).is_none_or(|v| v.is_zero()))
                                    .map(|(_, v)| v.clone())
                                    .fold(BigRational::zero(), |s, v| s + v),
                            )
                        };
                        assert!(
                            qp.contains(&singular(&bq, &bp)),
                            "n={n} k={k} m={m} bundled={bundled}: Q(P = 0) {qp} vs {}",
                            singular(&bq, &bp)
                        );
                        assert!(
                            pq.contains(&singular(&bp, &bq)),
                            "n={n} k={k} m={m} bundled={bundled}: P(Q = 0) {pq} vs {}",
                            singular(&bp, &bq)
                        );
                    }
                }
            }
        }
    }
}

/// Both curves of `approx` hold the exact pair's values at every threshold.
fn assert_encloses(exact: &PairLaw<Rational>, approx: &PairLaw<Interval>, what: &str) {
    for c in thresholds() {
        for dir in [Direction::Qp, Direction::Pq] {
            let e = delta_at_exp(exact, dir, &c, &EXACT);
            let a = delta_at_exp(approx, dir, &c, &());
            assert!(
                a.contains(e.lo().finite().unwrap()),
                "{what} {dir:?} {c}: {a} ∌ {e}"
            );
        }
    }
}

#[test]
fn truncated_pairs_enclose_the_exact_values() {
    let rr = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    let ternary = explicit(
        &[(7, 10), (2, 10), (1, 10)],
        &[(15, 100), (55, 100), (30, 100)],
    );
    for base in [&rr, &ternary] {
        for bundled in [false, true] {
            // Bundled ternary: 2 messages (6 types); the others 3.
            let m = if bundled && base.d() == 3 { 2 } else { 3 };
            let mm = sending(base, m, bundled);
            let (n, k) = if bundled { (25u64, 6u64) } else { (60, 15) };
            let exact =
                pair_law::<Rational>(&mm, n, k, &exact_options(Engine::Auto), &EXACT).unwrap();
            // The default depth, and a coarse one whose omitted mass shows.
            for bits in [None, Some(14)] {
                let o = PairOptions {
                    truncation_bits: bits,
                    ..PairOptions::default()
                };
                let approx = pair_law::<Interval>(&mm, n, k, &o, &()).unwrap();
                if bits.is_some() {
                    assert!(approx.omitted > 0 && approx.len() < exact.len());
                }
                assert_encloses(&exact, &approx, &format!("{} bundled={bundled}", base.d()));
            }
        }
    }
}

/// The k = 0 pair on the canonical ratio's lattice (proofs-notes/ratio-lattice.md), truncated
/// at the default and a coarse depth, encloses the exact histogram pair's curves; the CLI picks
/// it for bundled types and agrees with `--engine window`.
#[test]
fn the_ratio_lattice_route_encloses_the_histogram_pair() {
    let ternary = explicit(
        &[(7, 10), (2, 10), (1, 10)],
        &[(15, 100), (55, 100), (30, 100)],
    );
    let rr = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    for (base, m, n) in [(&ternary, 2, 20u64), (&rr, 3, 40)] {
        let mm = sending(base, m, true).reduced().unwrap().mechanism;
        let exact = pair_law::<Rational>(&mm, n, 0, &exact_options(Engine::Auto), &EXACT).unwrap();
        let lattice = RatioLattice::of(&mm).unwrap();
        let channel = mm.channel::<Interval>(&()).unwrap();
        for bits in [Some(100), Some(14)] {
            let approx = lattice.pair::<Interval>(n as usize, &channel, bits, &());
            if bits == Some(14) {
                assert!(approx.omitted > 0);
            }
            assert_encloses(&exact, &approx, &format!("d = {} {bits:?}", base.d()));
        }
    }
    let args = |engine: &str| {
        cli_json(&[
            "delta",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--messages",
            "2",
            "--bundled",
            "--n",
            "60",
            "--k",
            "0",
            "--eps",
            "0.5,1",
            "--engine",
            engine,
        ])
    };
    let (auto, window) = (args("auto"), args("window"));
    assert_eq!(auto["engine"], "ratio");
    assert_eq!(window["engine"], "window");
    for (a, w) in auto["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(window["results"].as_array().unwrap())
    {
        for key in ["delta_qp", "delta_pq"] {
            let (a, w) = (enclosure(&a[key]), enclosure(&w[key]));
            assert!(a.overlaps(&w), "{key}: {a} vs {w}");
        }
    }
}

#[test]
fn the_canonical_ratios_and_chi2_closed_forms_hold_on_the_laws() {
    let rr = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    let ternary = explicit(&[(1, 2), (1, 3), (1, 6)], &[(1, 6), (1, 2), (1, 3)]);
    for base in [&rr, &ternary] {
        let [w0, w1] = base.rational_rows().unwrap();
        let x2 = chi2(&w0, &w1).unwrap();
        for (n, m) in [(4u64, 2u32), (6, 3), (3, 4)] {
            let o = PairOptions {
                reduce: false,
                ..exact_options(Engine::Auto)
            };
            // Unbundled: §9.1's L^{(m)} at every state and Hoeffding's χ²; bundled:
            // (1/n) Σ N_t W1′(t)/W0′(t) and ((1 + χ²)^m − 1)/n.
            type Ratio = fn(&[Rational], &[Rational], &[u32], u32) -> Rational;
            let cases: [(bool, Ratio, Rational); 2] = [
                (false, unbundled_ratio, unbundled_chi2(&x2, n, m)),
                (true, bundled_ratio, bundled_chi2(&x2, n, m)),
            ];
            for (bundled, ratio, want) in cases {
                let law =
                    pair_law::<Rational>(&sending(base, m, bundled), n, 0, &o, &EXACT).unwrap();
                let mut chi = Rational::from(-1);
                for i in 0..law.len() {
                    let l = Rational::from(&law.q[i] / &law.p[i]);
                    let h: Vec<u32> = law
                        .histogram(i)
                        .unwrap()
                        .iter()
                        .map(|&c| c as u32)
                        .collect();
                    assert_eq!(l, ratio(&w0, &w1, &h, m), "bundled={bundled} {h:?}");
                    chi += Rational::from(&law.q[i] * &law.q[i]) / &law.p[i];
                }
                assert_eq!(chi, want, "bundled={bundled} n={n} m={m}");
            }
            // The bundled rows are the types' multinomial probabilities, in `types` order.
            let rows = sending(base, m, true).rational_rows().unwrap();
            for (t, v) in types(m, base.d()).iter().zip(&rows[1]) {
                assert_eq!(*v, type_probability(&w1, t));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The unbundled histogram is a function of the bundled one, so its δ is never larger
    /// (data processing), at every k, in both directions.
    #[test]
    fn unbundled_never_exceeds_bundled(
        base in (2usize..=3).prop_flat_map(|d| (row(d, 6), row(d, 6))),
        n in 1u64..5,
        m in 2u32..4,
        k_seed in 0u64..8,
    ) {
        let entries = |r: &Vec<Rational>| r.iter().cloned().map(Entry::Exact).collect();
        let base = Mechanism::new("r", "r".into(), None, [entries(&base.0), entries(&base.1)], None).unwrap();
        let k = k_seed % n;
        let unbundled = pair_law::<Rational>(&sending(&base, m, false), n, k, &PairOptions::default(), &EXACT).unwrap();
        let bundled = pair_law::<Rational>(&sending(&base, m, true), n, k, &PairOptions::default(), &EXACT).unwrap();
        for c in thresholds() {
            for dir in [Direction::Qp, Direction::Pq] {
                let u = delta_at_exp(&unbundled, dir, &c, &EXACT);
                let b = delta_at_exp(&bundled, dir, &c, &EXACT);
                prop_assert!(u.hi() <= b.lo(), "{:?} at {}: unbundled {} > bundled {}", dir, c, u, b);
            }
        }
    }
}

#[test]
fn bad_multi_message_input_gets_one_line_and_exit_2() {
    let pair = [
        "delta",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "10",
        "--k",
        "0",
        "--eps",
        "1",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        pair.iter().chain(extra).copied().collect()
    };
    // The same question on another mechanism.
    let on = |mechanism: &'static str, extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = with(extra);
        args[2] = mechanism;
        args
    };
    assert_fails(
        &with(&["--messages", "0"]),
        "--messages: must be at least 1",
    );
    assert_fails(&with(&["--bundled"]), "--bundled: needs --messages");
    assert_fails(&with(&["--messages", "1001"]), "--messages: at most 1000");
    assert_fails(&with(&["--messages", "-2"]), "--messages");
    // A real ε0 is no bad input: the types' entries are polynomial fractions in e^ε0.
    let run = cli(&on(
        "binary-rr:eps0=1",
        &["--messages", "3", "--bundled", "--no-reduce"],
    ));
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("3 messages per user, bundled"));
    assert_fails(
        &on(
            "k-rr:k=20,exp_eps0=3,inputs=2",
            &["--messages", "12", "--bundled"],
        ),
        "--messages: 12 messages over 20 outputs have",
    );
    // A huge m·n: refused before any work.
    assert_fails(
        &[
            "delta",
            "-m",
            "k-rr:k=3,exp_eps0=3,inputs=2",
            "--n",
            "3000000000",
            "--k",
            "0",
            "--eps",
            "1",
            "--messages",
            "1000",
        ],
        "messages over 3 outputs",
    );
    // Many messages: answered (the §9.1 cross-check is skipped where its binomials would cost
    // more than the pair), not stuck.
    let v = cli_json(&[
        "delta",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "100",
        "--k",
        "0",
        "--eps",
        "1",
        "--messages",
        "1000",
    ]);
    assert!(v["canonical_cross_check_states"].is_null(), "{v}");
    // Questions without a multi-message form.
    assert_fails(
        &[
            "bounds",
            "-m",
            "k-rr:k=3,exp_eps0=3",
            "--n",
            "10",
            "--eps",
            "1",
            "--messages",
            "2",
        ],
        "--messages: users sending several messages (Part I §9) are answered for binary-input",
    );
}

/// `compare-messages` of two messages at n = 6, k = 1, with profiles: small enough to certify
/// and verify in a test.
fn small_compare(mechanism: &'static str, eps: &'static str) -> [&'static str; 12] {
    [
        "compare-messages",
        "-m",
        mechanism,
        "--n",
        "6",
        "--k",
        "1",
        "--messages",
        "2",
        "--eps",
        eps,
        "--profile",
    ]
}

#[test]
fn multi_message_certificates_verify_and_tampering_is_rejected() {
    use crate::certificates::{certify, tampered, verify};
    let pair = [
        "delta",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "8",
        "--k",
        "2",
        "--eps",
        "0.5,1",
        "--messages",
        "3",
    ];
    let (file, cert) = certify(&pair, "mm-delta.json");
    assert_eq!(cert["schema"], "shufflecert/certificate/v2");
    assert_eq!(cert["mechanism"]["exact"]["messages"]["model"], "unbundled");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let routes = report["routes"].to_string();
    assert!(routes.contains("raw message outputs"), "{routes}");
    // The messages changed (3 → 2, or unbundled → bundled): the values no longer verify.
    for (name, edit) in [
        ("mm-two.json", json!({ "count": 2, "model": "unbundled" })),
        ("mm-bundled.json", json!({ "count": 3, "model": "bundled" })),
    ] {
        let bad = tampered(&cert, name, true, |c| {
            c["mechanism"]["exact"]["messages"] = edit.clone();
            c["report"]["mechanism"]["messages"] = edit.clone();
        });
        assert_ne!(verify(&bad).0, 0, "{name}");
    }
    // The messages removed: a single-message pair's values do not match either.
    let bad = tampered(&cert, "mm-none.json", true, |c| {
        c["mechanism"]["exact"]
            .as_object_mut()
            .unwrap()
            .remove("messages");
        c["report"]["mechanism"]
            .as_object_mut()
            .unwrap()
            .remove("messages");
        c["report"]["input_domain"]
            .as_object_mut()
            .unwrap()
            .remove("messages");
    });
    assert_ne!(verify(&bad).0, 0);

    let (file, cert) = certify(
        &small_compare("binary-rr:exp_eps0=3", "0.5,1"),
        "mm-compare.json",
    );
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let bad = tampered(&cert, "mm-ratio.json", true, |c| {
        c["report"]["rows"][0]["ratios"]["bundled_over_unbundled"]["delta_qp"]["lo"] = json!("1");
    });
    assert_ne!(verify(&bad).0, 0);
    let bad = tampered(&cert, "mm-models.json", true, |c| {
        c["report"]["models"].as_array_mut().unwrap().pop();
    });
    assert_ne!(verify(&bad).0, 0);
    // A sub-report's alphabet (read by no recomputation) is re-derived from its model's rows.
    for part in ["pair", "profile"] {
        let bad = tampered(&cert, &format!("mm-alphabet-{part}.json"), true, |c| {
            c["report"]["models"][3][part]["alphabet"] = json!({ "outputs": 99, "reduced": false });
        });
        let (status, report) = verify(&bad);
        assert_eq!(status, 1, "{part}: {report}");
        let problems = report["problems"].to_string();
        assert!(
            problems.contains(&format!("models.3.{part}.alphabet")),
            "{problems}"
        );
    }
    // Swapping the unbundled and bundled models' reports.
    let bad = tampered(&cert, "mm-swap.json", true, |c| {
        let models = c["report"]["models"].as_array_mut().unwrap();
        let (u, b) = (models[2]["pair"].clone(), models[3]["pair"].clone());
        models[2]["pair"] = b;
        models[3]["pair"] = u;
    });
    assert_ne!(verify(&bad).0, 0);
}

/// Randomized response given by a real ε0 (one message, bundled, and every model of
/// compare-messages) is also verified on rational rows at the two ends of the bracket of
/// `e^{ε0}` (data processing), a route that never evaluates an entry in `e^{ε0}`: it holds a
/// value moved just past the true one.
#[test]
fn real_eps0_certificates_are_held_on_the_bracket_of_exp_eps0() {
    use crate::certificates::{certify, tampered, verify};
    use shufflecert::enclosure::{exact_string, parse_rational};
    const ROUTE: &str = "on rational rows at a_lo < e^eps0 < a_hi";
    let single = [
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "30",
        "--k",
        "4",
        "--eps",
        "0.5",
    ];
    let mut bundled = single.to_vec();
    bundled[2] = "k-rr:k=3,eps0=1,inputs=2";
    bundled.extend(["--messages", "2", "--bundled"]);
    for (args, name) in [
        (&single[..], "bracket-single.json"),
        (&bundled[..], "bracket-bundled.json"),
    ] {
        let (file, cert) = certify(args, name);
        let (status, report) = verify(&file);
        assert_eq!(status, 0, "{report}");
        assert!(report["routes"].to_string().contains(ROUTE), "{report}");
        // Just above the certified upper end: disjoint from every route's enclosure.
        let moved = tampered(&cert, &format!("moved-{name}"), true, |c| {
            let field = &mut c["report"]["results"][0]["delta_qp"];
            let hi = parse_rational(field["hi"].as_str().unwrap()).unwrap();
            let above =
                Rational::from(&hi * Rational::from((1_000_000_000_001u64, 1_000_000_000_000u64)));
            field["lo"] = json!(exact_string(&above));
            field["hi"] = json!(exact_string(&Rational::from(&above * 2u32)));
        });
        let (status, report) = verify(&moved);
        assert_eq!(status, 1, "{report}");
        assert!(report["problems"].to_string().contains(ROUTE), "{report}");
    }
    let (file, _) = certify(
        &small_compare("binary-rr:eps0=1", "0.5"),
        "bracket-compare.json",
    );
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    let routes = report["routes"].to_string();
    assert!(
        routes.contains(ROUTE) && routes.contains("profile on rational rows"),
        "{routes}"
    );
    // A profile's rows too: the profile at both ends of the bracket.
    let profile = [
        "profile",
        "-m",
        "k-rr:k=3,eps0=1,inputs=2",
        "--n",
        "12",
        "--messages",
        "2",
        "--bundled",
        "--eps",
        "0.5",
    ];
    let (file, cert) = certify(&profile, "bracket-profile.json");
    let (status, report) = verify(&file);
    assert_eq!(status, 0, "{report}");
    assert!(
        report["routes"]
            .to_string()
            .contains("profile on rational rows"),
        "{report}"
    );
    // Just above the row (the profile at a_hi) and just below it (its argmax pair at a_lo).
    for (name, up) in [("above", true), ("below", false)] {
        let moved = tampered(&cert, &format!("{name}-bracket-profile.json"), true, |c| {
            let row = &mut c["report"]["results"][0]["delta_profile"];
            if up {
                let hi = parse_rational(row["hi"].as_str().unwrap()).unwrap();
                let above =
                    Rational::from(&hi * Rational::from((1_000_000_001u64, 1_000_000_000u64)));
                row["lo"] = json!(exact_string(&above));
                row["hi"] = json!(exact_string(&Rational::from(&above * 2u32)));
            } else {
                let lo = parse_rational(row["lo"].as_str().unwrap()).unwrap();
                let below =
                    Rational::from(&lo * Rational::from((999_999_999u64, 1_000_000_000u64)));
                row["lo"] = json!(exact_string(&Rational::from(&below / 2u32)));
                row["hi"] = json!(exact_string(&below));
            }
        });
        let (status, report) = verify(&moved);
        assert_eq!(status, 1, "{name}: {report}");
        let problems = report["problems"].to_string();
        assert!(
            problems.contains("profile on rational rows"),
            "{name}: {problems}"
        );
    }
}

#[test]
fn compare_messages_reports_every_model_and_refuses_what_it_cannot_answer() {
    let v = cli_json(&[
        "compare-messages",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "20",
        "--messages",
        "3",
        "--eps",
        "1",
        "--profile",
    ]);
    let keys: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["single", "single_nm", "unbundled", "bundled"]);
    assert_eq!(v["models"][1]["n"], 60);
    assert_eq!(
        v["rows"][0]["unbundled_le_bundled"]["delta_qp"],
        "certified"
    );
    assert_eq!(v["rows"][0]["unbundled_le_bundled"]["profile"], "certified");
    // The unbundled pair at n users equals the single-message pair at distance m: more than
    // one message leaks more than one.
    let value = |i: usize| enclosure(&v["models"][i]["pair"]["results"][0]["delta_pq"]);
    assert!(value(0).hi() < value(2).lo());
    let base = [
        "compare-messages",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "20",
        "--eps",
        "1",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    assert_fails(&with(&[]), "--messages: is required");
    assert_fails(&with(&["--messages", "1"]), "at least 2 messages");
    assert_fails(
        &with(&["--messages", "2", "--bundled"]),
        "--bundled: compare-messages shows",
    );
    let run = cli(&[
        "compare-messages",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "20",
        "--eps",
        "1",
        "--messages",
        "2",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("2 messages, bundled"));
    assert_fails(
        &[
            "compare",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "20",
            "--delta",
            "1e-3",
            "--messages",
            "2",
        ],
        "--messages: the published bounds",
    );
}

#[test]
fn predictions_use_the_scale_of_m_messages_and_are_labelled() {
    // Unbundled: μ = √(m·I_π/n); at k = 0 for randomized response e^ε0 = 3, I_0 = χ² = 4/3.
    let v = cli_json(&[
        "constants",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "200",
        "--k",
        "0",
        "--messages",
        "3",
    ]);
    let mu = enclosure(&v["mu_n"]);
    let squared = |e: &shufflecert::enclosure::Enclosure| {
        let (lo, hi) = (
            e.lo().finite().unwrap().clone(),
            e.hi().finite().unwrap().clone(),
        );
        (Rational::from(&lo * &lo), Rational::from(&hi * &hi))
    };
    let (lo, hi) = squared(&mu);
    assert!(
        lo <= Rational::from((1, 50)) && Rational::from((1, 50)) <= hi,
        "μ² = m·χ²/n = 1/50"
    );
    assert_eq!(v["mu_n_formula"], "√(m·I_π/n)");
    // Bundled: the types' χ² is (1 + χ²)^m − 1 = 316/27, μ² = 316/(27·200).
    let v = cli_json(&[
        "constants",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "200",
        "--k",
        "0",
        "--messages",
        "3",
        "--bundled",
    ]);
    assert_eq!(v["chi2_w1_w0"]["lo"], "316/27");
    let (lo, hi) = squared(&enclosure(&v["mu_n"]));
    let want = Rational::from((316, 27 * 200));
    assert!(lo <= want && want <= hi);
    // check: the unbundled predictions say so, and the single-message Chernoff bound is absent.
    let v = cli_json(&[
        "check",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "100",
        "--k",
        "0",
        "--t",
        "1",
        "--messages",
        "2",
    ]);
    let text = v.to_string();
    assert!(text.contains("GDP, unbundled μ = √(m·I_π/n)"), "{text}");
    assert!(!text.contains("Chernoff"), "{text}");
}

#[test]
fn shards_of_a_multi_message_profile_merge_and_verify() {
    use crate::certificates::{certify, path, verify};
    let shard = |range: &'static str, extra: &[&'static str], name: &str| {
        let mut args = vec![
            "profile",
            "-m",
            "binary-rr:exp_eps0=3",
            "--n",
            "30",
            "--eps",
            "1",
            "--k-range",
            range,
        ];
        args.extend_from_slice(extra);
        certify(&args, name).0
    };
    let a = shard("0..14", &["--messages", "2"], "mm-shard-a.json");
    let b = shard("15..29", &["--messages", "2"], "mm-shard-b.json");
    let merged = path("mm-merged.json");
    let run = cli(&["merge", &a, &b, "--certificate", &merged, "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let whole = cli_json(&[
        "profile",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "30",
        "--eps",
        "1",
        "--messages",
        "2",
    ]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        enclosure(&v["results"][0]["delta_profile"])
            .overlaps(&enclosure(&whole["results"][0]["delta_profile"]))
    );
    assert_eq!(verify(&merged).0, 0);
    // A shard of one message does not merge with a shard of two.
    let single = shard("15..29", &[], "mm-shard-single.json");
    assert_fails(&["merge", &a, &single], "mechanism: differs");
}

#[test]
fn review_findings_stay_fixed() {
    // helper-33: a real ε0 with many bundled messages: `a^m` beyond the double range is
    // evaluated in 1/a (it panicked), and types too costly to build are refused up front.
    let run = cli(&[
        "delta",
        "-m",
        "binary-rr:eps0=360",
        "--n",
        "3",
        "--k",
        "0",
        "--messages",
        "2",
        "--bundled",
        "--eps",
        "1",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_fails(
        &[
            "delta",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "2",
            "--k",
            "0",
            "--messages",
            "400",
            "--bundled",
            "--eps",
            "1",
        ],
        "--messages: 400 bundled messages over 2 outputs with a real eps0",
    );

    use crate::certificates::{certify, tampered, verify};
    // `check --eps` with m unbundled messages converts ε to t with μ = √(m·I_π/n), and its
    // certificate verifies.
    let args = [
        "check",
        "-m",
        "binary-rr:exp_eps0=3",
        "--n",
        "200",
        "--k",
        "50",
        "--messages",
        "4",
        "--eps",
        "1/2",
    ];
    let (file, _) = certify(&args, "mm-check-eps.json");
    assert_eq!(verify(&file).0, 0);
    let report = cli_json(&args);
    let eps = enclosure(&report["comparisons"][0]["eps"]);
    assert!(eps.contains(&Rational::from((1, 2))), "{eps}");
    // A tampered message count beyond the cap is refused at once, not computed.
    let (file, cert) = certify(
        &[
            "delta",
            "-m",
            "binary-rr:exp_eps0=3",
            "--n",
            "6",
            "--k",
            "1",
            "--eps",
            "1",
            "--messages",
            "2",
        ],
        "mm-count.json",
    );
    assert_eq!(verify(&file).0, 0);
    let bad = tampered(&cert, "mm-count-bad.json", true, |c| {
        c["mechanism"]["exact"]["messages"]["count"] = json!(100000);
    });
    assert_ne!(verify(&bad).0, 0);
    // 2m shift steps over a large window are estimated and refused up front.
    assert_fails(
        &[
            "delta",
            "-m",
            "binary-rr:exp_eps0=3",
            "--n",
            "1000000",
            "--k",
            "0",
            "--messages",
            "1000",
            "--eps",
            "1",
            "--max-seconds",
            "1",
        ],
        "by 1000 messages, twice",
    );
}
