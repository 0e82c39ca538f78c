//! Speed targets of issue 2 (release build, one core).  Each benchmark answers one whole
//! question through the library, as the CLI would, including the law's computation.

use criterion::{Criterion, criterion_group, criterion_main};
use rug::Rational;
use shufflecert::arith::Scalar;
use shufflecert::arith::exact::ExactCtx;
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::curve::{Direction, delta};
use shufflecert::exact::divergence::{Divergence, f_divergence};
use shufflecert::exact::pair::{PairOptions, pair_law};
use shufflecert::mechanism::load_mechanism;
use shufflecert::query::{Backend, EpsilonJob, PairQuery, answer};
use std::hint::black_box;
use std::time::Duration;

fn epsilon_query(n: u64) -> PairQuery {
    PairQuery {
        mechanism: load_mechanism("binary-rr:eps0=1").unwrap(),
        n,
        k: 0,
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        escalate_above: Some(1e-9),
    }
}

/// Binary RR ε0 = 1, boundary pair k = 0: two-sided ε at δ = 1e-5, relative width ≤ 1e-9.
fn boundary_epsilon(c: &mut Criterion) {
    let target = parse_rational("1e-5").unwrap();
    let mut group = c.benchmark_group("binary-rr eps0=1, k=0, two-sided eps at delta=1e-5");
    for n in [10_000u64, 100_000, 1_000_000] {
        let query = epsilon_query(n);
        let check = answer(
            &query,
            &EpsilonJob {
                delta: target.clone(),
            },
        )
        .unwrap();
        assert!(check.result.two_sided.relative_width() <= 1e-9);
        group.bench_function(format!("n={n}"), |b| {
            b.iter(|| {
                answer(
                    black_box(&query),
                    &EpsilonJob {
                        delta: target.clone(),
                    },
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

/// Both curves at four ε plus JSD: law + 8 curve values + one divergence.
fn curves_and_jsd<S: Scalar>(n: u64, k: u64, ctx: &S::Ctx) {
    let m = load_mechanism("fixtures/mechanisms/ternary.toml").unwrap();
    let law = pair_law::<S>(&m, n, k, &PairOptions::default(), ctx).unwrap();
    for eps in ["0.0226", "0.0452", "0.0678", "0.0904"] {
        let e = parse_rational(eps).unwrap();
        black_box(delta(&law, Direction::Qp, &e, ctx));
        black_box(delta(&law, Direction::Pq, &e, ctx));
    }
    let el = law.to_elementary(ctx);
    black_box(f_divergence(&el, &Divergence::Jsd, &S::elementary_ctx(ctx)));
}

fn ternary(c: &mut Criterion) {
    let mut group = c.benchmark_group("ternary channel, both curves at four eps plus JSD");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("interval, n=800 k=240", |b| {
        b.iter(|| curves_and_jsd::<inari::Interval>(800, 240, &()))
    });
    group.bench_function("exact, n=200 k=60", |b| {
        b.iter(|| curves_and_jsd::<Rational>(200, 60, &ExactCtx::default()))
    });
    group.finish();
}

criterion_group!(benches, boundary_epsilon, ternary);
criterion_main!(benches);
