//! The privacy profile: the worst case over all compositions, checked against the pair engine.

use crate::common::*;
use proptest::prelude::*;
use rug::Rational;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::enclosure::{Enclosure, Endpoint, parse_rational};
use shufflecert::exact::curve::{Direction, delta_at_exp, singular_mass};
use shufflecert::exact::divergence::divergences;
use shufflecert::exact::pair::{PairOptions, pair_law};
use shufflecert::mechanism::{Mechanism, load_mechanism};
use shufflecert::profile::{ProfileQuery, ProfileRow, Quantity, profile};
use shufflecert::query::{Backend, Threshold};

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};

fn query(
    m: &Mechanism,
    n: u64,
    quantities: Vec<Quantity>,
    backend: Backend,
    prune: bool,
) -> ProfileQuery {
    ProfileQuery {
        mechanism: m.clone(),
        n,
        k_range: None,
        quantities,
        options: PairOptions::default(),
        backend,
        exact_ctx: EXACT,
        prune,
        with_ends: false,
        escalate_above: Some(1e-9),
    }
}

/// Runs a profile without progress reporting.
fn run(
    m: &Mechanism,
    n: u64,
    quantities: Vec<Quantity>,
    backend: Backend,
    prune: bool,
) -> shufflecert::profile::Profile {
    profile(&query(m, n, quantities, backend, prune)).unwrap()
}

/// δ at each threshold.
fn at(thresholds: Vec<Threshold>) -> Vec<Quantity> {
    thresholds.into_iter().map(Quantity::Delta).collect()
}

/// Every (k, direction) a row lists as a maximiser: evaluated pairs and ranges of exact ties.
fn maximisers(row: &ProfileRow) -> Vec<(u64, &'static str)> {
    let mut all: Vec<(u64, &'static str)> = row
        .argmax
        .iter()
        .map(|v| (v.k, v.direction.key()))
        .chain(
            row.argmax_ranges
                .iter()
                .flat_map(|&(a, b)| (a..b).flat_map(|k| [(k, "pq"), (k, "qp")])),
        )
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The single row of a one-quantity profile.
fn only(p: &shufflecert::profile::Profile) -> &ProfileRow {
    assert_eq!(p.rows.len(), 1);
    &p.rows[0]
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
            let exact = run(&m, n, at(thresholds()), Backend::Exact, prune);
            for (row, (max, at)) in exact.rows.iter().zip(&expected) {
                prop_assert!(row.value.is_point());
                prop_assert_eq!(row.value.lo().finite().unwrap(), max);
                prop_assert_eq!(&maximisers(row), at, "prune = {}", prune);
            }
            let f64_profile = run(&m, n, at(thresholds()), Backend::Interval, prune);
            for (row, (max, at)) in f64_profile.rows.iter().zip(&expected) {
                prop_assert!(row.value.contains(max), "{} misses {}", row.value, max);
                // A row below f64 resolution starts at 0 and names no maximiser; otherwise every
                // exact maximiser is in the interval argmax (which may hold near-ties too).
                if !row.resolved {
                    prop_assert!(row.value.lo() == &Endpoint::Finite(Rational::new()));
                    continue;
                }
                let listed = maximisers(row);
                for kd in at {
                    prop_assert!(listed.contains(kd), "{:?} not listed", kd);
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
        "k-rr:k=4,exp_eps0=3,inputs=2",
        "k-rr:k=3,exp_eps0=5/2,inputs=2",
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
        let p = run(&m, n, at(thresholds()), Backend::Exact, true);
        for row in &p.rows {
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
            vec![Quantity::Epsilon(target.clone())],
            Backend::Interval,
            prune,
        )
    };
    let (pruned, full) = (run(true), run(false));
    assert!(pruned.stats.k_pruned > 0 && full.stats.k_pruned == 0);
    assert_eq!(full.stats.pairs_evaluated, 600);
    let (a, aa) = (&only(&pruned).value, &only(&pruned).argmax);
    let (b, ba) = (&only(&full).value, &only(&full).argmax);
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
            at(vec![Threshold::Eps(parse_rational("0.3").unwrap())]),
            Backend::Interval,
            prune,
        )
    };
    let (pruned, full) = (profile(&q(true)).unwrap(), profile(&q(false)).unwrap());
    let (a, b) = (only(&pruned), only(&full));
    assert!(a.value.overlaps(&b.value));
    assert_eq!(ks(&a.argmax), ks(&b.argmax));
}

#[test]
fn identical_rows_have_profile_zero() {
    let m = load_mechanism("k-rr:k=3,exp_eps0=1,inputs=2").unwrap();
    let p = run(&m, 30, at(thresholds()), Backend::Exact, true);
    for row in &p.rows {
        assert_eq!(row.value.lo().finite(), Some(&Rational::new()));
        assert!(row.value.is_point());
    }
    let p = run(
        &m,
        30,
        vec![Quantity::Epsilon(parse_rational("1e-9").unwrap())],
        Backend::Interval,
        true,
    );
    let eps = &only(&p).value;
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
    let p = run(&m, n, at(huge), Backend::Interval, true);
    assert!(
        p.rows[0].value.contains(&singular)
            || p.rows[0].value.lo() >= &Endpoint::Finite(singular.clone())
    );
    // No finite ε reaches a δ below the singular mass.
    let small = Rational::from(&singular / 2u32);
    let p = run(
        &m,
        n,
        vec![Quantity::Epsilon(small)],
        Backend::Interval,
        true,
    );
    let (eps, argmax) = (&only(&p).value, &only(&p).argmax);
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

/// The Rényi divergences of every pair in both orders, by the pair engine.
fn renyi_by_pair(m: &Mechanism, n: u64, alpha: &Rational) -> Vec<(u64, Direction, Enclosure)> {
    let mut out = Vec::new();
    for k in 0..n {
        let law = pair_law::<Rational>(m, n, k, &PairOptions::default(), &EXACT).unwrap();
        let d = divergences(&law, std::slice::from_ref(alpha), &EXACT);
        out.push((k, Direction::Qp, d.renyi_qp[0].1.clone()));
        out.push((k, Direction::Pq, d.renyi_pq[0].1.clone()));
    }
    out
}

#[test]
fn renyi_profile_is_the_worst_pair_in_both_orders() {
    let orders: Vec<Rational> = ["2", "3/2", "6"]
        .iter()
        .map(|a| parse_rational(a).unwrap())
        .collect();
    let quantities: Vec<Quantity> = orders.iter().cloned().map(Quantity::Renyi).collect();
    for (spec, n) in [
        ("fixtures/mechanisms/ternary.toml", 10),
        ("fixtures/mechanisms/binary-asymmetric.toml", 14),
        ("k-rr:k=3,exp_eps0=5/2,inputs=2", 9),
    ] {
        let m = load_mechanism(spec).unwrap();
        let scans = [
            run(&m, n, quantities.clone(), Backend::Exact, true),
            run(&m, n, quantities.clone(), Backend::Exact, false),
            run(&m, n, quantities.clone(), Backend::Interval, true),
        ];
        for (i, alpha) in orders.iter().enumerate() {
            let all = renyi_by_pair(&m, n, alpha);
            let best = all.iter().max_by(|a, b| a.2.lo().cmp(b.2.lo())).unwrap();
            let max = all
                .iter()
                .map(|v| v.2.clone())
                .reduce(|a, b| a.max(&b))
                .unwrap();
            for p in &scans {
                let row = &p.rows[i];
                assert!(
                    row.value.overlaps(&max),
                    "{spec} α = {alpha}: {} vs {max}",
                    row.value
                );
                // The pair with the largest certified lower bound is among the maximisers.
                assert!(
                    row.argmax
                        .iter()
                        .any(|v| v.k == best.0 && v.direction == best.1),
                    "{spec} α = {alpha}: argmax misses k = {} {:?}",
                    best.0,
                    best.1
                );
            }
        }
        // Pruning evaluated fewer pairs than the full scan, yet found the same value.
        assert!(scans[0].stats.pairs_evaluated <= scans[1].stats.pairs_evaluated);
        assert_eq!(scans[1].stats.pairs_evaluated, n);
    }
}

#[test]
fn renyi_of_order_two_is_ln_one_plus_chi_square() {
    // D_2(Q‖P) = ln Σ Q²/P = ln(1 + χ²(Q‖P)) for the same pair.
    let m = load_mechanism("fixtures/mechanisms/ternary.toml").unwrap();
    let law = pair_law::<inari::Interval>(&m, 40, 12, &PairOptions::default(), &()).unwrap();
    let d = divergences(&law, &[Rational::from(2)], &());
    let chi2 = &d.chi2_qp;
    let ln1p = |x: &Rational, up: bool| {
        let (lo, hi) = shufflecert::arith::ln_bracket(&Rational::from(x + 1u32), 128);
        if up { hi } else { lo }
    };
    let via_chi2 = Enclosure::from_rationals(
        ln1p(chi2.lo().finite().unwrap(), false),
        ln1p(chi2.hi().finite().unwrap(), true),
    );
    let renyi2 = &d.renyi_qp[0].1;
    assert!(renyi2.overlaps(&via_chi2), "{renyi2} vs {via_chi2}");
    assert!(renyi2.relative_width() < 1e-9 && via_chi2.relative_width() < 1e-9);
    // And the profile's Rényi value at this single k (a partial profile) is the same number.
    let mut q = query(
        &m,
        40,
        vec![Quantity::Renyi(Rational::from(2))],
        Backend::Interval,
        true,
    );
    q.k_range = Some((12, 12));
    let p = profile(&q).unwrap();
    assert!(p.partial);
    let qp = p.records[0].qp[0].as_ref().unwrap();
    assert!(qp.overlaps(renyi2));
}

#[test]
fn cli_profile_lists_targets_renyi_orders_and_tie_ranges() {
    let out = cli_json(&[
        "profile",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "500",
        "--delta",
        "1e-5,1e-6,0.5",
        "--renyi-order",
        "2,4",
    ]);
    let eps = out["eps_results"].as_array().unwrap();
    assert_eq!(eps.len(), 3);
    // Several targets: no single top-level ε.
    assert!(out.get("eps_profile").is_none());
    // ε_M decreases as δ grows.
    assert!(enclosure(&eps[1]["eps_profile"]).lo() > enclosure(&eps[0]["eps_profile"]).hi());
    // At δ = 0.5 every pair has TV ≤ δ: ε_M = 0 exactly, all k tie, listed as one range.
    assert_eq!(
        enclosure(&eps[2]["eps_profile"]),
        shufflecert::enclosure::Enclosure::point(Rational::new())
    );
    assert_eq!(eps[2]["argmax_k_ranges"], serde_json::json!([[0, 499]]));
    let renyi = out["renyi_profile"].as_array().unwrap();
    assert_eq!(renyi.len(), 2);
    assert_eq!(renyi[0]["order"], "2");
    // D_α grows with α.
    assert!(enclosure(&renyi[1]["value"]).lo() > enclosure(&renyi[0]["value"]).hi());
    assert_fails(
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "50",
            "--renyi-order",
            "1",
        ],
        "--renyi-order",
    );
}

#[test]
fn block_values_agree_with_the_pair_engine() {
    // `verify` recomputes a profile's pairs by blocks of k (one group per block, then halving):
    // each pair must come out as the pair engine gives it — exactly in rationals, and as
    // overlapping tight enclosures in MPFR — on every route, for δ, ε and Rényi probes in either
    // direction.
    use shufflecert::exact::pair::Engine;
    use shufflecert::profile::{block_values, pair_values};
    use shufflecert::query::PairQuery;
    let probes = vec![
        (
            Quantity::Delta(Threshold::Eps(parse_rational("0.3").unwrap())),
            Direction::Qp,
        ),
        (
            Quantity::Delta(Threshold::ExpEps(parse_rational("1.2").unwrap())),
            Direction::Pq,
        ),
        (
            Quantity::Epsilon(parse_rational("1e-3").unwrap()),
            Direction::Pq,
        ),
        (Quantity::Renyi(Rational::from(2)), Direction::Qp),
        (Quantity::Renyi(Rational::from(2)), Direction::Pq),
    ];
    let quantities: Vec<Quantity> = probes.iter().map(|(q, _)| q.clone()).collect();
    let ks = [5u64, 6, 11, 16];
    for (spec, engine) in [
        ("binary-rr:exp_eps0=3", Engine::Auto),
        ("fixtures/mechanisms/ternary.toml", Engine::Auto),
        ("fixtures/mechanisms/one-sided.toml", Engine::General),
    ] {
        let m = load_mechanism(&format!("{}/{spec}", env!("CARGO_MANIFEST_DIR")))
            .or_else(|_| load_mechanism(spec))
            .unwrap();
        let options = PairOptions {
            engine,
            ..PairOptions::default()
        };
        for backend in [Backend::Exact, Backend::Mpfr { precision: 192 }] {
            let q = ProfileQuery {
                options: options.clone(),
                ..query(&m, 20, quantities.clone(), backend, true)
            };
            let leaves: Vec<(u64, Vec<_>)> = ks.iter().map(|&k| (k, probes.clone())).collect();
            let blocked = block_values(&q, (5, 17), &leaves).unwrap();
            for (&k, values) in ks.iter().zip(&blocked) {
                let pair = PairQuery {
                    mechanism: m.clone(),
                    n: 20,
                    k,
                    options: options.clone(),
                    backend,
                    exact_ctx: EXACT,
                    escalate_above: None,
                };
                let open = vec![true; quantities.len()];
                let engine = pair_values(&pair, &quantities, &open).unwrap().result;
                for (j, ((_, dir), value)) in probes.iter().zip(values).enumerate() {
                    let expected = match dir {
                        Direction::Qp => engine.qp[j].as_ref().unwrap(),
                        Direction::Pq => engine.pq[j].as_ref().unwrap(),
                    };
                    let what = format!("{spec}, {backend:?}, k = {k}, probe {j}");
                    match backend {
                        Backend::Exact if !matches!(probes[j].0, Quantity::Epsilon(_)) => {
                            assert_eq!(value, expected, "{what}")
                        }
                        _ => {
                            assert!(value.overlaps(expected), "{what}: {value} vs {expected}");
                            if value.hi() != &Endpoint::PosInf && value.lo() != &Endpoint::PosInf {
                                assert!(value.relative_width() < 1e-20, "{what}: {value}");
                            }
                        }
                    }
                }
            }
        }
    }
    // A block that does not hold its leaves is refused.
    let m = load_mechanism("binary-rr:exp_eps0=3").unwrap();
    let q = query(&m, 20, quantities, Backend::Mpfr { precision: 128 }, true);
    assert!(block_values(&q, (5, 8), &[(9, probes)]).is_err());
}
