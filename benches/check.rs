//! Speed target of issue 4: `check` on the ternary channel at n = 800 with four t values and an
//! n-sweep 100, 200, 400, 800 (release, 2 cores).

use criterion::{Criterion, criterion_group, criterion_main};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::check::{CheckQuery, CurvePoint, check};
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::load_mechanism;
use shufflecert::query::{Backend, PairQuery};
use std::hint::black_box;
use std::time::Duration;

fn ternary_check(c: &mut Criterion) {
    let query = CheckQuery {
        pair: PairQuery {
            mechanism: load_mechanism("fixtures/mechanisms/ternary.toml").unwrap(),
            n: 800,
            k: 240,
            options: PairOptions::default(),
            backend: Backend::Interval,
            exact_ctx: ExactCtx::default(),
            escalate_above: Some(1e-9),
        },
        points: ["0.5", "1", "1.5", "2"]
            .iter()
            .map(|t| CurvePoint::T(parse_rational(t).unwrap()))
            .collect(),
        sweep: vec![100, 200, 400, 800],
        plot_samples: 0,
    };
    let mut group = c.benchmark_group("check");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    group.bench_function("ternary n=800 k=240, four t, n-sweep 100..800", |b| {
        b.iter(|| check(black_box(&query)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, ternary_check);
criterion_main!(benches);
