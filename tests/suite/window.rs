//! General output alphabets: the sufficiency reduction, windowed laws and the non-negative f64
//! kernel, checked against exact rationals, the full-simplex route and MPFR-256.

use crate::common::*;
use inari::Interval;
use proptest::prelude::*;
use rug::Rational;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::arith::{MpfrCtx, MpfrInterval, Scalar};
use shufflecert::enclosure::Enclosure;
use shufflecert::exact::binary::binomial_window;
use shufflecert::exact::curve::{Direction, delta_at_exp, epsilon_for_delta};
use shufflecert::exact::nonneg;
use shufflecert::exact::pair::{Engine, PairOptions, pair_law};
use shufflecert::exact::window::{WindowedLaw, multinomial};
use shufflecert::mechanism::{Entry, Mechanism, load_mechanism};
use std::collections::HashMap;

const EXACT: ExactCtx = ExactCtx {
    bracket_precision: 192,
};

fn options(engine: Engine, reduce: bool, truncation_bits: Option<u32>) -> PairOptions {
    PairOptions {
        engine,
        reduce,
        truncation_bits,
        ..PairOptions::default()
    }
}

fn explicit(w0: Vec<Rational>, w1: Vec<Rational>) -> Mechanism {
    let entries = |r: Vec<Rational>| r.into_iter().map(Entry::Exact).collect();
    Mechanism::new("m", "m".into(), None, [entries(w0), entries(w1)], None).unwrap()
}

/// A mechanism with repeated likelihood ratios: a random base mechanism whose columns are split
/// (each part keeps the column's ratio), plus a column that is zero in both rows.
fn repeated_ratios() -> impl Strategy<Value = Mechanism> {
    (mechanism(6), prop::collection::vec(1u32..4, 4), 0usize..4).prop_map(|(m, splits, zero_at)| {
        let rows = m.rational_rows().unwrap();
        let (mut w0, mut w1) = (Vec::new(), Vec::new());
        for y in 0..m.d() {
            let parts = splits[y % splits.len()];
            for _ in 0..parts {
                w0.push(Rational::from(&rows[0][y] / parts));
                w1.push(Rational::from(&rows[1][y] / parts));
            }
        }
        let at = zero_at.min(w0.len());
        w0.insert(at, Rational::new());
        w1.insert(at, Rational::new());
        explicit(w0, w1)
    })
}

/// δ in both directions at `e^ε = c` for a list of thresholds.
fn curve<S: Scalar>(
    m: &Mechanism,
    n: u64,
    k: u64,
    opts: &PairOptions,
    ctx: &S::Ctx,
) -> Vec<Enclosure> {
    let law = pair_law::<S>(m, n, k, opts, ctx).unwrap();
    ["1", "3/2", "2", "5"]
        .iter()
        .flat_map(|c| {
            let c = shufflecert::enclosure::parse_rational(c).unwrap();
            [Direction::Qp, Direction::Pq].map(|dir| delta_at_exp(&law, dir, &c, ctx))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Merging outputs of equal ratio changes no value: exact rationals agree exactly.
    #[test]
    fn reduced_and_unreduced_answers_are_equal(m in repeated_ratios(), n in 1u64..6, k in 0u64..5) {
        let k = k % n;
        let reduced = m.reduced().unwrap();
        // At most the base mechanism's four ratios, unless the rows are equal (kept as given).
        prop_assert!(reduced.mechanism.d() <= 4 || reduced.is_identity());
        let full = curve::<Rational>(&m, n, k, &options(Engine::General, false, None), &EXACT);
        let merged = curve::<Rational>(&m, n, k, &options(Engine::Window, true, None), &EXACT);
        prop_assert_eq!(full, merged);
    }

    /// Truncated windows (in f64 intervals, with the non-negative kernel for k > 0) contain the
    /// exact values of the full simplex.
    #[test]
    fn windowed_enclosures_contain_the_exact_values(m in mechanism(9), n in 2u64..12, k in 0u64..11, bits in 8u32..40) {
        let k = k % n;
        let exact = curve::<Rational>(&m, n, k, &options(Engine::General, false, None), &EXACT);
        let window = curve::<Interval>(&m, n, k, &options(Engine::Window, false, Some(bits)), &());
        let simplex = curve::<Interval>(&m, n, k, &options(Engine::General, false, Some(bits)), &());
        for ((e, w), s) in exact.iter().zip(&window).zip(&simplex) {
            prop_assert!(w.lo() <= e.lo() && e.hi() <= w.hi(), "window {} misses {}", w, e);
            prop_assert!(w.overlaps(s), "window {} and simplex {} disagree", w, s);
        }
    }
}

#[test]
fn one_pass_epsilon_matches_the_full_simplex_route() {
    let m = load_mechanism(&format!(
        "{}/fixtures/mechanisms/ternary.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let target = Rational::from((1, 1_000_000));
    for (n, k) in [(200, 0), (120, 40), (90, 89)] {
        let eps = |engine| {
            let law = pair_law::<Interval>(&m, n, k, &options(engine, true, None), &()).unwrap();
            [Direction::Qp, Direction::Pq]
                .map(|dir| epsilon_for_delta(&law, dir, &target, &()).unwrap().eps)
        };
        let (w, g) = (eps(Engine::Window), eps(Engine::General));
        for (a, b) in w.iter().zip(&g) {
            assert!(a.overlaps(b), "n = {n}, k = {k}: window {a} vs simplex {b}");
            assert!(a.relative_width() < 1e-9, "{a}");
        }
    }
}

#[test]
fn k_rr_with_many_symbols_runs_as_three() {
    let m = load_mechanism("k-rr:k=50,exp_eps0=3,inputs=2").unwrap();
    let reduced = pair_law::<Interval>(&m, 300, 2, &PairOptions::default(), &()).unwrap();
    let full = pair_law::<Interval>(
        &load_mechanism("k-rr:k=3,exp_eps0=3,inputs=2").unwrap(),
        10,
        2,
        &PairOptions::default(),
        &(),
    )
    .unwrap();
    assert_eq!(reduced.histogram(0).unwrap().len(), 3);
    assert_eq!(full.histogram(0).unwrap().len(), 3);
    // The 6-symbol k-RR against its unreduced full simplex.
    let m = load_mechanism("k-rr:k=6,exp_eps0=3,inputs=2").unwrap();
    let c = Rational::from((3, 2));
    for k in [0, 4] {
        let a = pair_law::<Interval>(&m, 14, k, &PairOptions::default(), &()).unwrap();
        let b =
            pair_law::<Interval>(&m, 14, k, &options(Engine::General, false, None), &()).unwrap();
        for dir in [Direction::Qp, Direction::Pq] {
            let (x, y) = (
                delta_at_exp(&a, dir, &c, &()),
                delta_at_exp(&b, dir, &c, &()),
            );
            assert!(x.overlaps(&y) && x.relative_width() < 1e-12, "{x} vs {y}");
        }
    }
}

/// The kernel's contract against the true law `H`: stored values `h ≤ H`, `H − h ≤ omitted`.
fn assert_kernel_contract(kernel: &WindowedLaw<Interval>, truth: &HashMap<Vec<u64>, Enclosure>) {
    let omitted = Enclosure::from_rationals(kernel.omitted.clone(), kernel.omitted.clone());
    assert!(
        kernel.omitted < Rational::from((1, 1u64 << 50)),
        "{}",
        kernel.omitted
    );
    let mut total = Rational::new();
    for (i, v) in kernel.values.iter().enumerate() {
        let h = kernel.set.histogram(i);
        let e = v.enclosure();
        let t = truth
            .get(&h)
            .unwrap_or_else(|| panic!("{h:?} not in the reference"));
        assert!(e.lo() <= t.hi(), "{h:?}: kernel {e} above the true {t}");
        assert!(
            t.lo() <= &e.add(&omitted).hi().clone(),
            "{h:?}: true {t} beyond kernel {e} + omitted"
        );
        // Away from the window's edge (where pruned mass is missing, within `omitted`) the
        // kernel is as precise as it claims.
        if t.lo().to_f64() > 1e-8 {
            assert!(
                e.relative_width() < 1e-9 && e.overlaps(t),
                "{h:?}: {e} vs {t}"
            );
        }
        total += e.lo().finite().unwrap();
    }
    assert!(total + &kernel.omitted > Rational::from((999_999, 1_000_000)));
}

#[test]
fn kernel_encloses_mpfr_256_at_a_hundred_thousand_users() {
    let mpfr = MpfrCtx { precision: 256 };
    let (p, q) = (Rational::from((3, 10)), Rational::from((7, 10)));
    let m = 100_000usize;
    let reference = binomial_window(
        m,
        &MpfrInterval::from_rational(&p, &mpfr),
        &MpfrInterval::from_rational(&q, &mpfr),
        Some(300),
        &mpfr,
    );
    assert!(reference.omitted < Rational::from((1, 1u128 << 100)));
    let truth: HashMap<Vec<u64>, Enclosure> = reference
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let k = (reference.start + i) as u64;
            (vec![m as u64 - k, k], v.enclosure())
        })
        .collect();
    let w = [
        Interval::from_rational(&q, &()),
        Interval::from_rational(&p, &()),
    ];
    let start = WindowedLaw::<Interval>::empty(2, &());
    let kernel = nonneg::add_users(&start, m, &w, 64, &()).expect("the kernel applies");
    assert!(kernel.values.len() > 1000);
    assert_kernel_contract(&kernel, &truth);
}

#[test]
fn ternary_kernel_steps_enclose_the_direct_multinomial() {
    let mpfr = MpfrCtx { precision: 256 };
    let w = ["0.70", "0.20", "0.10"].map(|s| shufflecert::enclosure::parse_rational(s).unwrap());
    let m = 2000;
    let reference = multinomial(
        m,
        &w.each_ref().map(|x| MpfrInterval::from_rational(x, &mpfr)),
        Some(300),
        &mpfr,
    );
    let truth: HashMap<Vec<u64>, Enclosure> = (0..reference.values.len())
        .map(|i| (reference.set.histogram(i), reference.values[i].enclosure()))
        .collect();
    let wi = w.each_ref().map(|x| Interval::from_rational(x, &()));
    let start = WindowedLaw::<Interval>::empty(3, &());
    let kernel = nonneg::add_users(&start, m, &wi, 64, &()).expect("the kernel applies");
    assert_kernel_contract(&kernel, &truth);
}

/// Review findings: the k = 0 cross-check runs on the reduced alphabet (it once compared the
/// reduced law with the unreduced channel and reported a false internal error), and the report
/// shows the classes.
#[test]
fn merged_outputs_pass_the_canonical_cross_check_and_are_reported() {
    for command in [
        &["delta", "--eps", "0,1"][..],
        &["epsilon", "--delta", "1e-3"],
        &["divergences"],
    ] {
        let mut args = command.to_vec();
        args.extend([
            "-m",
            "fixtures/mechanisms/merged-ratios.toml",
            "--n",
            "5",
            "--k",
            "0",
        ]);
        let out = cli_json(&args);
        assert!(
            out["canonical_cross_check_states"].as_u64().unwrap() > 0,
            "{args:?}"
        );
        assert_eq!(out["alphabet"]["reduced_outputs"], 2);
        assert_eq!(out["alphabet"]["classes"][0], serde_json::json!(["a", "b"]));
        assert_eq!(out["alphabet"]["dropped"], serde_json::json!(["d"]));
        args.push("--no-reduce");
        let full = cli_json(&args);
        assert_eq!(full["alphabet"]["reduced"], false);
        assert!(full["canonical_cross_check_states"].is_null());
    }
    // The same δ with and without the reduction, exactly.
    let args = [
        "delta",
        "-m",
        "fixtures/mechanisms/merged-ratios.toml",
        "--n",
        "6",
        "--k",
        "2",
        "--exp-eps",
        "3/2",
        "--backend",
        "exact",
    ];
    let a = cli_json(&args);
    let b = cli_json(&[&args[..], &["--no-reduce"]].concat());
    assert_eq!(a["results"], b["results"]);
}

/// Review finding: counts at or above 2^32 − 2 would wrap the window's u32 coordinates; such
/// n is refused on the window route (the binary route takes it).
#[test]
fn the_window_route_refuses_counts_beyond_32_bits() {
    let run = cli(&[
        "delta",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "4294967301",
        "--k",
        "0",
        "--eps",
        "0",
    ]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("below 2^32") && run.stdout.is_empty(),
        "{}",
        run.stderr
    );
}

/// Many outputs with distinct rational ratios (the review timed 28 s for d = 3000 before the
/// reduction hashed exact ratios; `cargo bench` is where speed is measured): every class kept.
#[test]
fn reduction_of_thousands_of_distinct_ratios_keeps_them_all() {
    let d = 3000u32;
    let total: u32 = (1..=d).sum();
    let w0: Vec<Rational> = (1..=d).map(|i| Rational::from((i, total))).collect();
    let w1: Vec<Rational> = (1..=d).rev().map(|i| Rational::from((i, total))).collect();
    let m = explicit(w0, w1);
    let r = m.reduced().unwrap();
    // The ratios (d + 1 − i)/i are pairwise distinct: every class is kept, nothing merged.
    assert_eq!(r.mechanism.d(), d as usize);
    assert!(r.is_identity());
}

/// A convolution of two windows equals adding the users one at a time (exactly, in rationals).
#[test]
fn convolution_of_windows_equals_user_steps() {
    use shufflecert::exact::window::{convolve, step};
    let q = |s: &str| shufflecert::enclosure::parse_rational(s).unwrap();
    let w0 = [q("1/2"), q("1/3"), q("1/12"), q("1/12")];
    let w1 = [q("1/10"), q("0"), q("3/10"), q("6/10")];
    let a = multinomial(5, &w0, None, &EXACT);
    let b = multinomial(4, &w1, None, &EXACT);
    let conv = convolve(&a, &b, None, &EXACT);
    let mut steps = a.clone();
    for _ in 0..4 {
        steps = step(&steps, &w1, None, &EXACT);
    }
    let by_histogram = |law: &WindowedLaw<Rational>| -> HashMap<Vec<u64>, Rational> {
        (0..law.values.len())
            .filter(|&i| law.values[i] != 0)
            .map(|i| (law.set.histogram(i), law.values[i].clone()))
            .collect()
    };
    assert_eq!(by_histogram(&conv), by_histogram(&steps));
    assert_eq!(conv.values.iter().sum::<Rational>(), 1);
}

/// Sparse outputs (k-RR with e^ε0 ≫ n): the smaller block's window has fewer states than its
/// users, so it joins by one convolution of two small windows; the answer matches the full
/// simplex, and a proportional composition at n = 10⁹ is a short computation.
#[test]
fn sparse_blocks_join_by_convolution() {
    let m = load_mechanism("k-rr:k=4,exp_eps0=100000,inputs=2").unwrap();
    let reduced = m.reduced().unwrap().mechanism;
    let w1 = reduced.channel::<Interval>(&()).unwrap().w[1].clone();
    assert!(multinomial(120, &w1, Some(100), &()).values.len() < 120);
    let c = Rational::from(2);
    for k in [50, 120] {
        let a = pair_law::<Interval>(&m, 500, k, &PairOptions::default(), &()).unwrap();
        let b =
            pair_law::<Interval>(&m, 500, k, &options(Engine::General, true, None), &()).unwrap();
        assert!(a.len() < b.len() / 4, "{} vs {}", a.len(), b.len());
        for dir in [Direction::Qp, Direction::Pq] {
            let (x, y) = (
                delta_at_exp(&a, dir, &c, &()),
                delta_at_exp(&b, dir, &c, &()),
            );
            assert!(
                x.overlaps(&y) && x.relative_width() < 1e-9,
                "k = {k}: {x} vs {y}"
            );
        }
    }
    let m = load_mechanism("k-rr:k=4,exp_eps0=500000000,inputs=2").unwrap();
    let law =
        pair_law::<Interval>(&m, 1_000_000_000, 400_000_000, &PairOptions::default(), &()).unwrap();
    assert!(law.len() < 100_000 && law.omitted < Rational::from((1, 1u64 << 60)));
}
