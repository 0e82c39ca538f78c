//! Speed of `bounds` (issue 11): the certified range of ε at δ = 1/n for k-ary randomized
//! response on k-valued inputs, e^ε0 = 3 (release build, 2 cores).  The target is
//! n = 10⁴ in ≤ 5 s for k = 4 and k = 100.

use criterion::{Criterion, criterion_group, criterion_main};
use rug::Rational;
use shufflecert::bounds::range::{BoundsQuery, Target, bounds};
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::randomizer::load_randomizer;
use shufflecert::query::Backend;
use std::hint::black_box;
use std::time::Duration;

fn k_rr(c: &mut Criterion) {
    let mut g = c.benchmark_group("bounds: eps at delta = 1/n, k-RR e^eps0 = 3 on k inputs");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    for (k, n) in [(4u32, 1000u64), (4, 10_000), (100, 10_000)] {
        let q = BoundsQuery {
            randomizer: load_randomizer(&format!("k-rr:k={k},exp_eps0=3,inputs={k}")).unwrap(),
            n,
            target: Target::Epsilon(Rational::from((1, n))),
            options: PairOptions::default(),
            backend: Backend::Interval,
            escalate_above: Some(1e-9),
        };
        g.bench_function(format!("k={k}, n={n}"), |b| {
            b.iter(|| bounds(black_box(&q)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, k_rr);
criterion_main!(benches);
