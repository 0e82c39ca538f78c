//! Property tests: on random rational mechanisms the exact backend's values lie inside the
//! f64-interval and MPFR enclosures (truncated or not), and the enclosures of the same
//! quantity from different backends always overlap.

use crate::common::mechanism;
use inari::Interval;
use proptest::prelude::*;
use rug::Rational;
use shufflecert::arith::Scalar;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::arith::mpfr::{MpfrCtx, MpfrInterval};
use shufflecert::exact::curve::{Direction, delta_at_exp, epsilon_for_delta};
use shufflecert::exact::divergence::divergences;
use shufflecert::exact::law::PairLaw;
use shufflecert::exact::pair::{PairOptions, pair_law};
use shufflecert::mechanism::Mechanism;

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};
const MPFR: MpfrCtx = MpfrCtx { precision: 96 };

/// A random mechanism, n ≤ 25 and a composition k < n.
fn case() -> impl Strategy<Value = (Mechanism, u64, u64)> {
    (mechanism(30), 1u64..=25).prop_flat_map(|(m, n)| (Just(m), Just(n), 0..n))
}

fn thresholds() -> Vec<Rational> {
    ["1", "9/8", "3/2", "4"]
        .iter()
        .map(|s| shufflecert::enclosure::parse_rational(s).unwrap())
        .collect()
}

fn assert_contains<S: Scalar>(
    exact: &PairLaw<Rational>,
    other: &PairLaw<S>,
    ctx: &S::Ctx,
    label: &str,
) {
    for c in thresholds() {
        for dir in [Direction::Qp, Direction::Pq] {
            let e = delta_at_exp(exact, dir, &c, &EXACT);
            let v = e.lo().finite().expect("exact δ is finite").clone();
            let enc = delta_at_exp(other, dir, &c, ctx);
            assert!(
                enc.contains(&v),
                "{label} δ_{dir:?}({c}) = {enc} misses the exact {e}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn exact_values_lie_inside_interval_and_mpfr_enclosures((m, n, k) in case()) {
        let exact = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
        prop_assert_eq!(exact.p.iter().sum::<Rational>(), 1);
        prop_assert_eq!(exact.q.iter().sum::<Rational>(), 1);
        // No truncation, the default, and a coarse 2^-12 truncation that drops visible mass.
        for (truncate, bits) in [(false, None), (true, None), (true, Some(12))] {
            let opts = PairOptions { truncate, truncation_bits: bits, ..PairOptions::default() };
            let f64_law = pair_law::<Interval>(&m, n, k, &opts, &()).unwrap();
            assert_contains(&exact, &f64_law, &(), "interval");
            let mpfr_law = pair_law::<MpfrInterval>(&m, n, k, &opts, &MPFR).unwrap();
            assert_contains(&exact, &mpfr_law, &MPFR, "mpfr");
        }
        // Divergences: TV is exact in the exact backend; the others are MPFR enclosures of the
        // exact laws, which must overlap the f64 ones.
        let orders = [Rational::from(2), Rational::from((7, 2))];
        let de = divergences(&exact, &orders, &EXACT);
        let f64_law = pair_law::<Interval>(&m, n, k, &PairOptions::default(), &()).unwrap();
        let coarse = pair_law::<Interval>(&m, n, k, &PairOptions { truncation_bits: Some(10), ..PairOptions::default() }, &()).unwrap();
        for law in [&f64_law, &coarse] {
            let di = divergences(law, &orders, &());
            prop_assert!(di.tv.contains(de.tv.lo().finite().unwrap()));
            for (a, b) in [(&de.kl_qp, &di.kl_qp), (&de.kl_pq, &di.kl_pq), (&de.jsd, &di.jsd), (&de.chi2_qp, &di.chi2_qp), (&de.hellinger2, &di.hellinger2)] {
                prop_assert!(a.overlaps(b), "{} vs {}", a, b);
            }
            for ((_, a), (_, b)) in de.renyi_qp.iter().zip(&di.renyi_qp) {
                prop_assert!(a.overlaps(b), "Rényi {} vs {}", a, b);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn epsilon_enclosures_of_all_backends_overlap((m, n, k) in case(), target in prop_oneof![Just((1i64, 1000i64)), Just((1, 20))]) {
        let target = Rational::from(target);
        let exact = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
        let f64_law = pair_law::<Interval>(&m, n, k, &PairOptions::default(), &()).unwrap();
        for dir in [Direction::Qp, Direction::Pq] {
            let a = epsilon_for_delta(&exact, dir, &target, &EXACT).unwrap();
            let b = epsilon_for_delta(&f64_law, dir, &target, &()).unwrap();
            prop_assert!(a.eps.overlaps(&b.eps), "{:?}: exact {} vs interval {}", dir, a.eps, b.eps);
            // The witness really certifies: δ at exp_hi is ≤ target in exact arithmetic.
            if let Some(c) = &a.exp_hi {
                let d = delta_at_exp(&exact, dir, c, &EXACT);
                prop_assert!(d.hi().finite().unwrap() <= &target);
            }
        }
    }
}

/// A random mechanism with at least one zero entry, n ≤ 36 and a composition k < n.
fn zero_entry_case() -> impl Strategy<Value = (Mechanism, u64, u64)> {
    (
        mechanism(30).prop_filter("a zero entry", |m| !m.has_full_support()),
        1u64..=36,
    )
        .prop_flat_map(|(m, n)| (Just(m), Just(n), 0..n))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Zero entries on truncated laws (windowed-laws.md, "Zero entries"): a coarse truncation
    /// drops visible mass, singular states included, yet every δ (up to e^ε = 10⁶, where only
    /// the singular mass is left), the closed-form singular masses and ε for a target δ (+∞
    /// included) agree with the exact untruncated pair, on every engine.
    #[test]
    fn truncation_with_zero_entries_keeps_curves_and_singular_masses(
        (m, n, k) in zero_entry_case(),
        target in prop_oneof![Just((1i64, 1000i64)), Just((1, 20)), Just((1, 2))],
    ) {
        use shufflecert::exact::curve::singular_mass;
        use shufflecert::exact::pair::Engine;
        let exact = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
        let target = Rational::from(target);
        let far = [Rational::from(1000), Rational::from(1_000_000)];
        let orders = [Rational::from(2)];
        let exact_divergences = divergences(&exact, &orders, &EXACT);
        for engine in [Engine::Auto, Engine::General, Engine::Window] {
            if engine == Engine::Window && m.d() < 3 {
                continue;
            }
            for bits in [None, Some(12)] {
                let opts = PairOptions { engine, truncation_bits: bits, ..PairOptions::default() };
                let law = pair_law::<Interval>(&m, n, k, &opts, &()).unwrap();
                assert_contains(&exact, &law, &(), "interval");
                for dir in [Direction::Qp, Direction::Pq] {
                    let s = singular_mass(&exact, dir, &EXACT);
                    let t = singular_mass(&law, dir, &());
                    prop_assert!(t.contains(s.lo().finite().unwrap()), "{:?}: singular {} vs exact {}", dir, t, s);
                    for c in &far {
                        let e = delta_at_exp(&exact, dir, c, &EXACT);
                        let v = delta_at_exp(&law, dir, c, &());
                        prop_assert!(v.contains(e.lo().finite().unwrap()), "{:?} δ({}) = {} misses {}", dir, c, v, e);
                    }
                    let a = epsilon_for_delta(&exact, dir, &target, &EXACT).unwrap();
                    let b = epsilon_for_delta(&law, dir, &target, &()).unwrap();
                    prop_assert!(a.eps.overlaps(&b.eps), "{:?} {:?}: exact {} vs interval {}", engine, dir, a.eps, b.eps);
                }
                let mpfr = pair_law::<MpfrInterval>(&m, n, k, &opts, &MPFR).unwrap();
                assert_contains(&exact, &mpfr, &MPFR, "mpfr");
                // Divergences of the truncated pair (divergences.md, "Truncated pairs with zero
                // entries"): the supported lower bound and the closed-form singular terms.
                if engine != Engine::Auto {
                    continue;
                }
                let (e, v) = (&exact_divergences, divergences(&law, &orders, &()));
                let pairs = [
                    ("kl_qp", &e.kl_qp, &v.kl_qp),
                    ("kl_pq", &e.kl_pq, &v.kl_pq),
                    ("jsd", &e.jsd, &v.jsd),
                    ("chi2", &e.chi2_qp, &v.chi2_qp),
                    ("hellinger2", &e.hellinger2, &v.hellinger2),
                    ("renyi_qp", &e.renyi_qp[0].1, &v.renyi_qp[0].1),
                    ("renyi_pq", &e.renyi_pq[0].1, &v.renyi_pq[0].1),
                ];
                for (name, e, v) in pairs {
                    match e.lo().finite() {
                        None => prop_assert!(v.lo().finite().is_none(), "{} {:?}: {} but exact ∞", name, bits, v),
                        Some(_) => prop_assert!(v.overlaps(e), "{} {:?} {:?}: {} vs exact {}", name, engine, bits, v, e),
                    }
                }
            }
        }
    }
}

/// Zeros in W0 only: the ratio range is `[lo, ∞)` with `lo > 0`, and KL(P‖Q)'s omitted part is
/// bounded by `ω (f̃(lo) + K∞)` (divergences.md): a truncated pair keeps a finite upper end that
/// holds the exact value (review finding: it was `+∞`).
#[test]
fn kl_pq_of_a_truncated_pair_with_zeros_in_w0_stays_finite() {
    let q = |a: i64, b: i64| shufflecert::mechanism::Entry::Exact(Rational::from((a, b)));
    let m = Mechanism::new(
        "test",
        "zeros in W0 only".into(),
        None,
        [
            vec![q(0, 1), q(1, 4), q(1, 4), q(1, 2)],
            vec![q(1, 4), q(1, 8), q(3, 8), q(1, 4)],
        ],
        None,
    )
    .unwrap();
    let orders = [Rational::from(2)];
    for (n, k) in [(30u64, 0u64), (30, 12)] {
        let exact = pair_law::<Rational>(&m, n, k, &PairOptions::default(), &EXACT).unwrap();
        let e = divergences(&exact, &orders, &EXACT).kl_pq;
        for bits in [None, Some(12)] {
            let opts = PairOptions {
                truncation_bits: bits,
                ..PairOptions::default()
            };
            let law = pair_law::<Interval>(&m, n, k, &opts, &()).unwrap();
            if bits.is_some() {
                assert!(law.omitted > 0);
            }
            let v = divergences(&law, &orders, &()).kl_pq;
            assert!(v.hi().finite().is_some(), "n = {n}, k = {k}, {bits:?}: {v}");
            assert!(
                v.overlaps(&e),
                "n = {n}, k = {k}, {bits:?}: {v} vs exact {e}"
            );
        }
    }
}
