//! Speed targets of the audit layer (release build, 2 cores): 100 claims for binary randomized
//! response at n = 10⁴ (issue: ≤ 10 s, one profile scan serving every claim), and the
//! comparison of published bounds.

use criterion::{Criterion, criterion_group, criterion_main};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::audit::claims::read_claims;
use shufflecert::audit::compare::{CompareQuery, compare};
use shufflecert::audit::{AuditQuery, audit};
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::load_mechanism;
use shufflecert::query::Backend;
use std::hint::black_box;
use std::time::Duration;

fn claims_curve(c: &mut Criterion) {
    let query = AuditQuery {
        mechanism: load_mechanism("binary-rr:eps0=1").unwrap(),
        claims: read_claims("fixtures/claims/curve-binary-rr-n10000.csv")
            .unwrap()
            .1,
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        escalate_above: Some(1e-9),
    };
    assert_eq!(query.claims.len(), 100);
    let mut group = c.benchmark_group("audit: binary-rr eps0=1");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    group.bench_function("100 claims at n=10000", |b| {
        b.iter(|| audit(black_box(&query)).unwrap())
    });
    group.finish();
}

fn published_bounds(c: &mut Criterion) {
    let mut group = c.benchmark_group("compare: binary-rr eps0=1, delta=1e-5");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    for n in [1_000u64, 10_000] {
        let mechanism = load_mechanism("binary-rr:eps0=1").unwrap();
        let query = CompareQuery {
            randomizer: shufflecert::mechanism::randomizer::Randomizer::from_mechanism(
                mechanism.clone(),
            ),
            mechanism: Some(mechanism),
            ns: vec![n],
            delta: parse_rational("1e-5").unwrap(),
            options: PairOptions::default(),
            backend: Backend::Interval,
            exact_ctx: ExactCtx::default(),
            escalate_above: Some(1e-9),
        };
        group.bench_function(format!("n={n}"), |b| {
            b.iter(|| compare(black_box(&query)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, claims_curve, published_bounds);
criterion_main!(benches);
