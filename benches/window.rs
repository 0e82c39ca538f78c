//! Speed targets of issue 9 (release build, 2 cores): general output alphabets through the
//! sufficiency reduction, windowed laws and the non-negative kernel.  Each benchmark answers one
//! whole question through the library, as the CLI would.  The float64 peer for the ternary
//! case is `benches/peer/ternary_numpy.py`; `bench_with_peer` below runs it once per size, when
//! python3 with numpy and scipy is available, and prints its time beside ours.

use criterion::{Criterion, criterion_group, criterion_main};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::load_mechanism;
use shufflecert::profile::{ProfileQuery, Quantity, profile};
use shufflecert::query::{Backend, EpsilonJob, PairQuery, answer};
use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

const TERNARY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/mechanisms/ternary.toml"
);

fn query(spec: &str, n: u64, k: u64) -> PairQuery {
    PairQuery {
        mechanism: load_mechanism(spec).unwrap(),
        n,
        k,
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        escalate_above: Some(1e-9),
    }
}

/// The two-sided ε at δ = 1e-6, checked to relative width ≤ 1e-9 before timing.
fn bench_epsilon(c: &mut Criterion, group: &str, spec: &str, sizes: &[(u64, u64)]) {
    let job = EpsilonJob {
        delta: parse_rational("1e-6").unwrap(),
    };
    let mut g = c.benchmark_group(group);
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for &(n, k) in sizes {
        let q = query(spec, n, k);
        let check = answer(&q, &job).unwrap();
        assert!(check.result.two_sided.relative_width() <= 1e-9);
        println!(
            "{group} n={n} k={k}: eps = {} ({} states, {})",
            check.result.two_sided, check.states, check.arithmetic
        );
        g.bench_function(format!("n={n},k={k}"), |b| {
            b.iter(|| answer(black_box(&q), &job).unwrap())
        });
    }
    g.finish();
}

/// The numpy/scipy float64 peer, once per size (skipped when python3 lacks numpy or scipy).
fn peer(n: u64) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peer/ternary_numpy.py");
    match Command::new("python3")
        .args([script, &n.to_string()])
        .output()
    {
        Ok(out) if out.status.success() => {
            print!(
                "numpy float64 peer: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        }
        _ => println!("numpy float64 peer: not available (python3 with numpy and scipy)"),
    }
}

fn ternary(c: &mut Criterion) {
    for n in [800, 3200] {
        peer(n);
    }
    bench_epsilon(
        c,
        "ternary k=0, eps at delta=1e-6",
        TERNARY,
        &[(800, 0), (3200, 0), (10_000, 0), (100_000, 0)],
    );
    bench_epsilon(
        c,
        "ternary middle k, eps at delta=1e-6",
        TERNARY,
        &[(3200, 1600)],
    );
}

fn k_rr(c: &mut Criterion) {
    for k in [6, 50, 1000] {
        let n = if k == 6 { 100 } else { 10_000 };
        bench_epsilon(
            c,
            &format!("k-rr k={k} exp_eps0=3, k=0, eps at delta=1e-6"),
            &format!("k-rr:k={k},exp_eps0=3,inputs=2"),
            &[(n, 0)],
        );
    }
}

/// The sparse regime: k-RR with e^ε0 = n/2 (rare outputs of probability O(1/n)), n = 10⁹.
fn sparse(c: &mut Criterion) {
    bench_epsilon(
        c,
        "sparse k-rr k=4 exp_eps0=n/2, n=1e9, eps at delta=1e-6",
        "k-rr:k=4,exp_eps0=500000000,inputs=2",
        &[(1_000_000_000, 0), (1_000_000_000, 400_000_000)],
    );
}

fn four_symbols(c: &mut Criterion) {
    let path = std::env::temp_dir().join("shufflecert-bench-four.toml");
    std::fs::write(
        &path,
        "name = \"four distinct ratios\"\nw0 = [\"0.4\", \"0.3\", \"0.2\", \"0.1\"]\nw1 = [\"0.1\", \"0.2\", \"0.3\", \"0.4\"]\n",
    )
    .unwrap();
    bench_epsilon(
        c,
        "4 symbols, four ratios, eps at delta=1e-6",
        path.to_str().unwrap(),
        &[(400, 0), (400, 200)],
    );
}

fn ternary_profile(c: &mut Criterion) {
    let q = ProfileQuery {
        mechanism: load_mechanism(TERNARY).unwrap(),
        n: 5000,
        k_range: None,
        quantities: vec![Quantity::Epsilon(parse_rational("1e-6").unwrap())],
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        prune: true,
        with_ends: false,
        escalate_above: Some(1e-9),
    };
    let mut g = c.benchmark_group("ternary profile over all k, eps at delta=1e-6");
    g.sample_size(10).measurement_time(Duration::from_secs(60));
    g.bench_function("n=5000", |b| b.iter(|| profile(black_box(&q)).unwrap()));
    g.finish();
}

criterion_group!(
    benches,
    ternary,
    k_rr,
    sparse,
    four_symbols,
    ternary_profile
);
criterion_main!(benches);
