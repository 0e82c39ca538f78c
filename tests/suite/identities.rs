//! The exact identities of Part I §4 and §8 hold in the computed laws.

use crate::common::*;
use inari::Interval;
use num_rational::BigRational;
use rug::Rational;
use shufflecert::arith::Scalar;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::arith::mpfr::{MpfrCtx, MpfrInterval};
use shufflecert::enclosure::{Endpoint, Tri};
use shufflecert::exact::canonical::canonical_likelihood_ratio;
use shufflecert::exact::curve::{
    Direction, delta_at_exp, epsilon_for_delta, singular_mass, total_variation,
};
use shufflecert::exact::divergence::divergences;
use shufflecert::exact::histogram::SimplexIndex;
use shufflecert::exact::pair::{Engine, PairOptions, pair_law};
use shufflecert::mechanism::{Entry, Mechanism, load_mechanism};

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 256,
};

fn rational_mechanism(w0: &[(i64, i64)], w1: &[(i64, i64)]) -> Mechanism {
    let row = |w: &[(i64, i64)]| {
        w.iter()
            .map(|&(a, b)| Entry::Exact(Rational::from((a, b))))
            .collect()
    };
    Mechanism::new("test", "test".into(), None, [row(w0), row(w1)], None).unwrap()
}

fn exact_options(engine: Engine) -> PairOptions {
    PairOptions {
        engine,
        truncate: false,
        ..PairOptions::default()
    }
}

#[test]
fn shift_identities_match_the_laws_computed_directly() {
    // P(N) = Σ_y W0(y) T_{n−1,k}(N − e_y) must equal T_{n,k}(N), and Q likewise T_{n,k+1}(N).
    let m = rational_mechanism(&[(1, 2), (1, 3), (1, 6)], &[(1, 5), (1, 5), (3, 5)]);
    let channel = m.channel::<Rational>(&EXACT).unwrap();
    let n = 9;
    let index = SimplexIndex::new(3, n).unwrap();
    // T_{n,j} directly: the n users joined one at a time, without the shift identities.
    let direct = |ones: usize| {
        let mut h = vec![Rational::from(1)];
        for m in 1..=n {
            let w = if m <= n - ones {
                &channel.w[0]
            } else {
                &channel.w[1]
            };
            index.add_user(&mut h, m, w, None, &EXACT);
        }
        h
    };
    for k in 0..n {
        let law = pair_law::<Rational>(
            &m,
            n as u64,
            k as u64,
            &exact_options(Engine::General),
            &EXACT,
        )
        .unwrap();
        let (direct_p, direct_q) = (direct(k), direct(k + 1));
        assert_eq!(law.p, direct_p, "P at k = {k}");
        assert_eq!(law.q, direct_q, "Q at k = {k}");
        assert_eq!(law.p.iter().sum::<Rational>(), 1);
        assert_eq!(law.q.iter().sum::<Rational>(), 1);
    }
}

#[test]
fn canonical_closed_form_agrees_exactly() {
    // L_{n,0}(N) = (1/n) Σ_y N_y W1(y)/W0(y) (Part I §4).
    let m = rational_mechanism(&[(2, 5), (2, 5), (1, 5)], &[(1, 10), (3, 10), (3, 5)]);
    let channel = m.channel::<Rational>(&EXACT).unwrap();
    let law = pair_law::<Rational>(&m, 12, 0, &exact_options(Engine::General), &EXACT).unwrap();
    for i in 0..law.len() {
        let l = Rational::from(&law.q[i] / &law.p[i]);
        assert_eq!(
            l,
            canonical_likelihood_ratio(&channel, &law.histogram(i).unwrap(), 1, &EXACT)
        );
    }
}

#[test]
fn binary_fast_path_agrees_with_the_general_engine() {
    let m = rational_mechanism(&[(7, 10), (3, 10)], &[(2, 5), (3, 5)]);
    for k in [0, 1, 7, 19] {
        let general =
            pair_law::<Rational>(&m, 20, k, &exact_options(Engine::General), &EXACT).unwrap();
        let binary =
            pair_law::<Rational>(&m, 20, k, &exact_options(Engine::Binary), &EXACT).unwrap();
        for i in 0..binary.len() {
            let h = binary.histogram(i).unwrap();
            let j = (0..general.len())
                .find(|&j| general.histogram(j).as_ref() == Some(&h))
                .unwrap();
            assert_eq!(binary.p[i], general.p[j]);
            assert_eq!(binary.q[i], general.q[j]);
        }
    }
    // Truncated f64 intervals on a larger n: the two engines' curves overlap.
    let m = load_mechanism("binary-rr:eps0=1/2").unwrap();
    for k in [0u64, 3, 150, 299] {
        let b = pair_law::<Interval>(&m, 300, k, &PairOptions::default(), &()).unwrap();
        let g = pair_law::<Interval>(
            &m,
            300,
            k,
            &PairOptions {
                engine: Engine::General,
                ..PairOptions::default()
            },
            &(),
        )
        .unwrap();
        for c in ["1", "21/20", "6/5"] {
            let c = shufflecert::enclosure::parse_rational(c).unwrap();
            for dir in [Direction::Qp, Direction::Pq] {
                let db = delta_at_exp(&b, dir, &c, &());
                let dg = delta_at_exp(&g, dir, &c, &());
                assert!(db.overlaps(&dg), "k = {k}, c = {c}: {db} vs {dg}");
                assert!(db.relative_width() < 1e-9 || db.hi().to_f64() < 1e-12);
            }
        }
    }
}

#[test]
fn exact_curves_equal_an_independent_brute_force() {
    // Brute force over every assignment of outputs to users, with num-rational.
    let w0 = [(1, 2), (1, 4), (1, 4)];
    let w1 = [(1, 8), (1, 8), (3, 4)];
    let m = rational_mechanism(&w0, &w1);
    let b0: Vec<BigRational> = w0.iter().map(|&(a, b)| big(a, b)).collect();
    let b1: Vec<BigRational> = w1.iter().map(|&(a, b)| big(a, b)).collect();
    for (n, k) in [(1, 0), (4, 0), (5, 2), (6, 5)] {
        let law =
            pair_law::<Rational>(&m, n as u64, k as u64, &exact_options(Engine::Auto), &EXACT)
                .unwrap();
        let (bp, bq) = brute_force_pair(&b0, &b1, n, k);
        for c in [big(1, 1), big(3, 2), big(4, 1)] {
            let c_rug = from_big(&c);
            let ours_qp = delta_at_exp(&law, Direction::Qp, &c_rug, &EXACT);
            let ours_pq = delta_at_exp(&law, Direction::Pq, &c_rug, &EXACT);
            assert!(ours_qp.is_point() && ours_pq.is_point());
            assert_eq!(
                ours_qp.lo().finite().map(to_big),
                Some(positive_part(&bq, &bp, &c)),
                "qp n={n} k={k}"
            );
            assert_eq!(
                ours_pq.lo().finite().map(to_big),
                Some(positive_part(&bp, &bq, &c)),
                "pq n={n} k={k}"
            );
        }
    }
}

#[test]
fn sums_of_p_and_q_enclose_one_in_every_backend() {
    let m = load_mechanism("fixtures/mechanisms/ternary.toml").unwrap();
    let one = Rational::from(1);
    let law = pair_law::<Interval>(&m, 120, 40, &PairOptions::default(), &()).unwrap();
    let sum = |v: &[Interval]| {
        v.iter()
            .fold(Interval::zero(&()), |s, x| s.add(x))
            .with_upper_slack(&Interval::from_rational(&law.omitted, &()))
    };
    assert!(sum(&law.p).enclosure().contains(&one));
    assert!(sum(&law.q).enclosure().contains(&one));
    let ctx = MpfrCtx { precision: 100 };
    let law = pair_law::<MpfrInterval>(
        &m,
        120,
        40,
        &PairOptions {
            truncate: false,
            ..PairOptions::default()
        },
        &ctx,
    )
    .unwrap();
    let total = law
        .p
        .iter()
        .fold(MpfrInterval::zero(&ctx), |s, x| s.add(x))
        .enclosure();
    assert!(total.contains(&one) && total.relative_width() < 1e-25);
}

#[test]
fn one_sided_domination_keeps_the_singular_mass() {
    // W1 never outputs "c": Q << P but not P << Q.  δ_{P‖Q}(ε) ≥ P(Q = 0) for every ε.
    let m = load_mechanism("fixtures/mechanisms/one-sided.toml").unwrap();
    assert!(!m.has_full_support());
    let (n, k) = (10u64, 3u64);
    let law = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
    let singular_pq = singular_mass(&law, Direction::Pq, &EXACT);
    let singular_qp = singular_mass(&law, Direction::Qp, &EXACT);
    assert_eq!(
        singular_qp,
        shufflecert::enclosure::Enclosure::point(Rational::new())
    );
    // P(Q = 0): histograms with N_c = n and ... — at least the all-"c" histogram is reachable only
    // without W1 users, so Q = 0 there; independent brute force gives the same mass.
    let w0: Vec<BigRational> = [(1, 2), (3, 10), (1, 5)]
        .iter()
        .map(|&(a, b)| big(a, b))
        .collect();
    let w1: Vec<BigRational> = [(3, 5), (2, 5), (0, 1)]
        .iter()
        .map(|&(a, b)| big(a, b))
        .collect();
    let (bp, bq) = brute_force_pair(&w0, &w1, n as usize, k as usize);
    let brute_singular: BigRational = bp
        .iter()
        .filter(|(h, _)| !bq.contains_key(*h) || bq[*h] == BigRational::from_integer(0.into()))
        .map(|(_, v)| v.clone())
        .sum();
    assert!(brute_singular > BigRational::from_integer(0.into()));
    assert_eq!(
        singular_pq.lo().finite().map(to_big),
        Some(brute_singular.clone())
    );
    for c in [
        Rational::from(1),
        Rational::from(10),
        Rational::from(1_000_000),
    ] {
        let d = delta_at_exp(&law, Direction::Pq, &c, &EXACT);
        assert!(
            d.lo() >= singular_pq.lo(),
            "δ_pq at {c} below the singular mass"
        );
        assert_eq!(
            d.lo().finite().map(to_big),
            Some(positive_part(&bp, &bq, &to_big(&c)))
        );
    }
    // δ_{P‖Q} never falls below the singular mass: ε = ∞ for a smaller target; KL(P‖Q) = ∞.
    let tiny = Rational::from((1, 1_000_000_000_000i64));
    let eps = epsilon_for_delta(&law, Direction::Pq, &tiny, &EXACT).unwrap();
    assert_eq!(eps.eps.lo(), &Endpoint::PosInf);
    let qp = epsilon_for_delta(&law, Direction::Qp, &tiny, &EXACT).unwrap();
    assert!(matches!(qp.eps.hi(), Endpoint::Finite(_)));
    let div = divergences(&law, &[Rational::from(2)], &EXACT);
    assert_eq!(div.kl_pq.lo(), &Endpoint::PosInf);
    assert!(matches!(div.kl_qp.hi(), Endpoint::Finite(_)));
    // The interval backend agrees on all of this.
    let ilaw = pair_law::<Interval>(&m, n, k, &PairOptions::default(), &()).unwrap();
    assert!(singular_mass(&ilaw, Direction::Pq, &()).contains(&from_big(&brute_singular)));
    assert_eq!(
        epsilon_for_delta(&ilaw, Direction::Pq, &tiny, &())
            .unwrap()
            .eps
            .lo(),
        &Endpoint::PosInf
    );
}

#[test]
fn identical_rows_give_zero_everywhere() {
    let m = rational_mechanism(&[(1, 3), (2, 3)], &[(1, 3), (2, 3)]);
    let law = pair_law::<Interval>(&m, 50, 10, &PairOptions::default(), &()).unwrap();
    assert_eq!(
        total_variation(&law, &()).compare(&Rational::from((1, 1_000_000_000_000i64))),
        Tri::Less
    );
    let eps = epsilon_for_delta(&law, Direction::Qp, &Rational::from((1, 100_000)), &()).unwrap();
    assert!(eps.eps.is_point() && eps.eps.contains(&Rational::new()));
}
