//! Speed targets of issue 3 (release build, 2 cores): the privacy profile over all k.

use criterion::{Criterion, criterion_group, criterion_main};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::load_mechanism;
use shufflecert::profile::{ProfileQuery, Quantity, profile};
use shufflecert::query::{Backend, Threshold};
use std::hint::black_box;
use std::time::Duration;

fn query(spec: &str, n: u64, quantities: Vec<Quantity>) -> ProfileQuery {
    ProfileQuery {
        mechanism: load_mechanism(spec).unwrap(),
        n,
        k_range: None,
        quantities,
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        prune: true,
        with_ends: false,
        escalate_above: Some(1e-9),
    }
}

fn eps(list: &[&str]) -> Vec<Quantity> {
    list.iter()
        .map(|e| Quantity::Delta(Threshold::Eps(parse_rational(e).unwrap())))
        .collect()
}

fn binary_rr(c: &mut Criterion) {
    let mut group = c.benchmark_group("profile: binary-rr eps0=1, eps at delta=1e-5");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for n in [2_000u64, 10_000, 100_000] {
        let q = query(
            "binary-rr:eps0=1",
            n,
            vec![Quantity::Epsilon(parse_rational("1e-5").unwrap())],
        );
        group.bench_function(format!("n={n}"), |b| {
            b.iter(|| profile(black_box(&q)).unwrap())
        });
    }
    group.finish();
}

fn general(c: &mut Criterion) {
    let mut group = c.benchmark_group("profile: delta at given eps, general engine");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    let ternary = query(
        "fixtures/mechanisms/ternary.toml",
        200,
        eps(&["0.05", "0.1", "0.2", "0.3"]),
    );
    group.bench_function("ternary, n=200, four eps", |b| {
        b.iter(|| profile(black_box(&ternary)).unwrap())
    });
    let krr = query("k-rr:k=4,exp_eps0=3,inputs=2", 100, eps(&["0.5"]));
    group.bench_function("4-RR e^eps0=3, n=100, one eps", |b| {
        b.iter(|| profile(black_box(&krr)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, binary_rr, general);
criterion_main!(benches);
