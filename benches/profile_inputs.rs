//! Speed of `profile` on randomizers with more than two inputs (issue 23): the exact worst case
//! over every dataset, ε_M at δ = 10⁻³ (release build, 2 cores). Targets: 4-RR (e^ε0 = 3) at
//! n = 10 in ≤ 1 s and n = 100 in ≤ 60 s; `fixtures/randomizers/three-inputs.toml` at n = 200
//! in ≤ 60 s. `SHUFFLECERT_BENCH_N100=1` adds the n = 100 row; `SHUFFLECERT_BENCH_K20=1` the
//! k-RR row of issue 23 on 20 inputs (e^ε0 = e², n = 1000, ε_M at δ = 10⁻⁶: ten samples of about
//! 40 s), where `bounds` gave a range of width 5.5·10⁻⁵ and the profile is now exact.

use criterion::{Criterion, criterion_group, criterion_main};
use rug::Rational;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::randomizer::load_randomizer;
use shufflecert::profile::Quantity;
use shufflecert::profile_inputs::{InputsProfileQuery, inputs_profile};
use shufflecert::query::Backend;
use std::hint::black_box;
use std::time::Duration;

fn query(spec: &str, n: u64, delta: Rational) -> InputsProfileQuery {
    InputsProfileQuery {
        randomizer: load_randomizer(spec).unwrap(),
        n,
        quantities: vec![Quantity::Epsilon(delta)],
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        escalate_above: Some(1e-9),
        symmetry: true,
        slice: None,
        ceiling: None,
    }
}

fn worst_case(c: &mut Criterion) {
    let mut g = c.benchmark_group("profile over every dataset: eps_M at delta = 1e-3");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let mut cases = vec![
        ("4-RR e^eps0 = 3, n = 10", "k-rr:k=4,exp_eps0=3", 10),
        (
            "three-inputs.toml, n = 200",
            "fixtures/randomizers/three-inputs.toml",
            200,
        ),
        ("k-RR k = 100, e^eps0 = e, n = 5", "k-rr:k=100,eps0=1", 5),
    ];
    if std::env::var_os("SHUFFLECERT_BENCH_N100").is_some() {
        cases.push(("4-RR e^eps0 = 3, n = 100", "k-rr:k=4,exp_eps0=3", 100));
    }
    for (name, spec, n) in cases {
        let q = query(spec, n, Rational::from((1, 1000)));
        g.bench_function(name, |b| b.iter(|| inputs_profile(black_box(&q)).unwrap()));
    }
    g.finish();
    if std::env::var_os("SHUFFLECERT_BENCH_K20").is_some() {
        let mut g = c.benchmark_group("profile over every dataset: eps_M at delta = 1e-6");
        g.sample_size(10).measurement_time(Duration::from_secs(60));
        let q = query("k-rr:k=20,eps0=2", 1000, Rational::from((1, 1_000_000)));
        g.bench_function("k-RR k = 20, e^eps0 = e^2, n = 1000", |b| {
            b.iter(|| inputs_profile(black_box(&q)).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, worst_case);
criterion_main!(benches);
