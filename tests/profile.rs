//! The privacy profile: the worst case over all compositions, checked against the pair engine.

mod common;

use common::*;
use proptest::prelude::*;
use rug::Rational;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::enclosure::{Endpoint, parse_rational};
use shufflecert::exact::curve::{Direction, delta_at_exp, singular_mass};
use shufflecert::exact::pair::{PairOptions, pair_law};
use shufflecert::mechanism::{Mechanism, load_mechanism};
use shufflecert::profile::{ProfileAnswer, ProfileQuery, ProfileQuestion, profile};
use shufflecert::query::{Backend, Threshold};

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};

fn query(
    m: &Mechanism,
    n: u64,
    question: ProfileQuestion,
    backend: Backend,
    prune: bool,
) -> ProfileQuery {
    ProfileQuery {
        mechanism: m.clone(),
        n,
        k_range: None,
        question,
        options: PairOptions::default(),
        backend,
        exact_ctx: EXACT,
        prune,
        escalate_above: Some(1e-9),
    }
}

/// Runs a profile without progress reporting.
fn run(
    m: &Mechanism,
    n: u64,
    question: ProfileQuestion,
    backend: Backend,
    prune: bool,
) -> shufflecert::profile::Profile {
    profile(&query(m, n, question, backend, prune), &|_| {}).unwrap()
}

fn deltas(answer: &ProfileAnswer) -> &[shufflecert::profile::DeltaProfileRow] {
    match answer {
        ProfileAnswer::Deltas(rows) => rows,
        ProfileAnswer::Epsilon { .. } => panic!("asked for δ"),
    }
}

fn thresholds() -> Vec<Threshold> {
    ["1", "6/5", "2"]
        .iter()
        .map(|c| Threshold::ExpEps(parse_rational(c).unwrap()))
        .collect()
}

/// Brute force: every k with the pair engine, exact rationals; returns per threshold the maximum
/// and every (k, direction) attaining it.
fn brute_force(m: &Mechanism, n: u64) -> Vec<(Rational, Vec<(u64, &'static str)>)> {
    let mut per_k = Vec::new();
    for k in 0..n {
        let law = pair_law::<Rational>(m, n, k, &PairOptions::default(), &EXACT).unwrap();
        for (i, t) in thresholds().iter().enumerate() {
            let Threshold::ExpEps(c) = t else {
                unreachable!()
            };
            for dir in [Direction::Qp, Direction::Pq] {
                let v = delta_at_exp(&law, dir, c, &EXACT)
                    .lo()
                    .finite()
                    .unwrap()
                    .clone();
                per_k.push((i, k, dir.key(), v));
            }
        }
    }
    (0..thresholds().len())
        .map(|i| {
            let max = per_k
                .iter()
                .filter(|r| r.0 == i)
                .map(|r| r.3.clone())
                .max()
                .unwrap();
            let mut at: Vec<(u64, &'static str)> = per_k
                .iter()
                .filter(|r| r.0 == i && r.3 == max)
                .map(|r| (r.1, r.2))
                .collect();
            at.sort();
            (max, at)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn profile_equals_brute_force_over_all_k(m in mechanism(20), n in 1u64..=9) {
        let expected = brute_force(&m, n);
        for prune in [true, false] {
            let exact = run(&m, n, ProfileQuestion::Deltas(thresholds()), Backend::Exact, prune);
            for (row, (max, at)) in deltas(&exact.answer).iter().zip(&expected) {
                prop_assert!(row.delta.is_point());
                prop_assert_eq!(row.delta.lo().finite().unwrap(), max);
                let argmax: Vec<(u64, &str)> = row.argmax.iter().map(|v| (v.k, v.direction.key())).collect();
                prop_assert_eq!(&argmax, at, "prune = {}", prune);
            }
            let f64_profile = run(&m, n, ProfileQuestion::Deltas(thresholds()), Backend::Interval, prune);
            for (row, (max, at)) in deltas(&f64_profile.answer).iter().zip(&expected) {
                prop_assert!(row.delta.contains(max), "{} misses {}", row.delta, max);
                // Every exact maximiser is in the interval argmax (which may hold near-ties too).
                for (k, dir) in at {
                    prop_assert!(row.argmax.iter().any(|v| v.k == *k && v.direction.key() == *dir));
                }
            }
        }
    }
}

#[test]
fn symmetric_mechanisms_mirror_the_two_directions() {
    // Swapping inputs and relabelling outputs maps (T_{n,k}, T_{n,k+1}) to (T_{n,n−k}, T_{n,n−k−1}):
    // δ_{Q‖P} at k equals δ_{P‖Q} at n − 1 − k.
    for spec in [
        "binary-rr:exp_eps0=3",
        "k-rr:k=4,exp_eps0=3",
        "k-rr:k=3,exp_eps0=5/2",
    ] {
        let m = load_mechanism(spec).unwrap();
        let n = 9;
        let c = Rational::from((5, 4));
        for k in 0..n {
            let a = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
            let b =
                pair_law::<Rational>(&m, n, n - 1 - k, &PairOptions::default(), &EXACT).unwrap();
            assert_eq!(
                delta_at_exp(&a, Direction::Qp, &c, &EXACT),
                delta_at_exp(&b, Direction::Pq, &c, &EXACT),
                "{spec} k = {k}"
            );
        }
        // So the profile's argmax comes in mirrored pairs.
        let p = run(
            &m,
            n,
            ProfileQuestion::Deltas(thresholds()),
            Backend::Exact,
            true,
        );
        for row in deltas(&p.answer) {
            for v in &row.argmax {
                let mirror = if v.direction == Direction::Qp {
                    "pq"
                } else {
                    "qp"
                };
                assert!(
                    row.argmax
                        .iter()
                        .any(|w| w.k == n - 1 - v.k && w.direction.key() == mirror),
                    "{spec}"
                );
            }
        }
    }
}

#[test]
fn pruned_and_unpruned_scans_agree_at_scale() {
    let m = load_mechanism("binary-rr:eps0=1/2").unwrap();
    let target = parse_rational("1e-4").unwrap();
    let run = |prune| {
        run(
            &m,
            600,
            ProfileQuestion::Epsilon(target.clone()),
            Backend::Interval,
            prune,
        )
    };
    let (pruned, full) = (run(true), run(false));
    assert!(pruned.stats.k_pruned > 0 && full.stats.k_pruned == 0);
    assert_eq!(full.stats.pairs_evaluated, 600);
    let (
        ProfileAnswer::Epsilon { eps: a, argmax: aa },
        ProfileAnswer::Epsilon { eps: b, argmax: ba },
    ) = (&pruned.answer, &full.answer)
    else {
        panic!("asked for ε")
    };
    assert!(a.overlaps(b), "{a} vs {b}");
    let ks = |v: &[shufflecert::profile::KValue]| {
        v.iter()
            .map(|x| (x.k, x.direction.key()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ks(aa), ks(ba));
    // The ternary channel, δ at several ε, general engine.
    let m = load_mechanism("fixtures/mechanisms/ternary.toml").unwrap();
    let q = |prune| {
        query(
            &m,
            40,
            ProfileQuestion::Deltas(vec![Threshold::Eps(parse_rational("0.3").unwrap())]),
            Backend::Interval,
            prune,
        )
    };
    let (pruned, full) = (
        profile(&q(true), &|_| {}).unwrap(),
        profile(&q(false), &|_| {}).unwrap(),
    );
    let (a, b) = (&deltas(&pruned.answer)[0], &deltas(&full.answer)[0]);
    assert!(a.delta.overlaps(&b.delta));
    assert_eq!(ks(&a.argmax), ks(&b.argmax));
}

#[test]
fn identical_rows_have_profile_zero() {
    let m = load_mechanism("k-rr:k=3,exp_eps0=1").unwrap();
    let p = run(
        &m,
        30,
        ProfileQuestion::Deltas(thresholds()),
        Backend::Exact,
        true,
    );
    for row in deltas(&p.answer) {
        assert_eq!(row.delta.lo().finite(), Some(&Rational::new()));
        assert!(row.delta.is_point());
    }
    let p = run(
        &m,
        30,
        ProfileQuestion::Epsilon(parse_rational("1e-9").unwrap()),
        Backend::Interval,
        true,
    );
    let ProfileAnswer::Epsilon { eps, .. } = &p.answer else {
        panic!()
    };
    assert!(eps.is_point() && eps.contains(&Rational::new()));
}

#[test]
fn one_sided_domination_keeps_the_singular_mass() {
    let m = load_mechanism("fixtures/mechanisms/one-sided.toml").unwrap();
    let n = 8;
    // The largest singular mass over k bounds the profile from below at every ε.
    let mut singular = Rational::new();
    for k in 0..n {
        let law = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
        let s = singular_mass(&law, Direction::Pq, &EXACT)
            .lo()
            .finite()
            .unwrap()
            .clone();
        singular = singular.max(s);
    }
    assert!(singular > 0);
    let huge = vec![Threshold::ExpEps(Rational::from(1_000_000))];
    let p = run(
        &m,
        n,
        ProfileQuestion::Deltas(huge),
        Backend::Interval,
        true,
    );
    assert!(
        deltas(&p.answer)[0].delta.contains(&singular)
            || deltas(&p.answer)[0].delta.lo() >= &Endpoint::Finite(singular.clone())
    );
    // No finite ε reaches a δ below the singular mass.
    let small = Rational::from(&singular / 2u32);
    let p = run(
        &m,
        n,
        ProfileQuestion::Epsilon(small),
        Backend::Interval,
        true,
    );
    let ProfileAnswer::Epsilon { eps, argmax } = &p.answer else {
        panic!()
    };
    assert_eq!(eps.lo(), &Endpoint::PosInf);
    assert!(argmax.iter().all(|v| v.direction == Direction::Pq));
}

#[test]
fn cli_profile_contract() {
    let out = cli_json(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "300",
        "--eps",
        "0.1,0.3",
    ]);
    assert_eq!(out["partial"], false);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let d = enclosure(&r["delta_profile"]);
        let argmax = r["argmax_k"].as_array().unwrap();
        assert!(!argmax.is_empty());
        for a in argmax {
            assert!(a["k"].as_u64().unwrap() < 300);
            assert!(["qp", "pq"].contains(&a["direction"].as_str().unwrap()));
            assert!(enclosure(&a["value"]).hi() >= d.lo());
        }
    }
    let out = cli_json(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "300",
        "--delta",
        "1e-5",
        "--k-range",
        "10..20",
    ]);
    assert_eq!(out["partial"], true);
    assert!(
        out["scope"]
            .as_str()
            .unwrap()
            .contains("not the mechanism's guarantee")
    );
    for a in out["argmax_k"].as_array().unwrap() {
        assert!((10..=20).contains(&a["k"].as_u64().unwrap()));
    }
    let base = [
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "300",
        "--delta",
        "1e-5",
    ];
    for (extra, needle) in [
        (["--k-range", "20..10"], "--k-range"),
        (["--k-range", "0..300"], "--k-range"),
        (["--threads", "0"], "--threads"),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        assert_fails(&args, needle);
    }
}
