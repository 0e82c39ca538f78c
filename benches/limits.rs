//! Speed targets of issue 10 (release build, 2 cores): the certified limit experiments of
//! Part III at λ up to 10⁴ ("≤ 1 s each"), answering `delta`, `epsilon` and `divergences`
//! through the library as the CLI would (interval backend with escalation at 1e-9).

use criterion::{Criterion, criterion_group, criterion_main};
use rug::Rational;
use shufflecert::enclosure::parse_rational;
use shufflecert::limits::experiment::{ExperimentQuery, answer, load_experiment};
use shufflecert::limits::sequence::{KRule, load_sequence};
use shufflecert::limits::study::study;
use shufflecert::query::{Backend, DeltaJob, DivergenceJob, EpsilonJob, Threshold};
use std::hint::black_box;

fn query(spec: &str) -> ExperimentQuery {
    ExperimentQuery {
        experiment: load_experiment(spec).unwrap(),
        backend: Backend::Interval,
        escalate_above: Some(1e-9),
    }
}

fn experiments(c: &mut Criterion) {
    let specs = [
        "poisson-shift:lambda=100",
        "poisson-shift:lambda=10000",
        "skellam-shift:a=10000,b=10000",
        "gaussian-shift:mu=1",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/experiments/two-jumps.toml"
        ),
    ];
    let delta = DeltaJob {
        thresholds: ["0.01", "0.1", "0.5", "1"]
            .iter()
            .map(|e| Threshold::Eps(parse_rational(e).unwrap()))
            .collect(),
    };
    let epsilon = EpsilonJob {
        delta: parse_rational("1e-6").unwrap(),
    };
    let divergences = DivergenceJob {
        renyi_orders: vec![Rational::from(2)],
    };
    let mut g = c.benchmark_group("limit experiments");
    g.sample_size(10);
    for spec in specs {
        let q = query(spec);
        let short = spec.rsplit('/').next().unwrap();
        g.bench_function(format!("delta at 4 eps: {short}"), |b| {
            b.iter(|| answer(black_box(&q), &delta).unwrap())
        });
        g.bench_function(format!("epsilon at 1e-6: {short}"), |b| {
            b.iter(|| answer(black_box(&q), &epsilon).unwrap())
        });
        g.bench_function(format!("divergences: {short}"), |b| {
            b.iter(|| answer(black_box(&q), &divergences).unwrap())
        });
    }
    g.finish();
}

/// `limit`: geometry, the limit curve, and the finite-n curves at three n.
fn limit_studies(c: &mut Criterion) {
    let eps = vec![Threshold::Eps(parse_rational("0.5").unwrap())];
    let mut g = c.benchmark_group("limit studies");
    g.sample_size(10);
    for (name, family, rule, ns) in [
        (
            "binary-rr n/2, fixed:0, n = 1e3..1e5",
            "binary-rr:exp_eps0=n/2",
            "fixed:0",
            vec![1_000u64, 10_000, 100_000],
        ),
        (
            "k-rr k=4 n/2, fraction:1/2, n = 1e2..1e4",
            "k-rr:k=4,exp_eps0=n/2,inputs=2",
            "fraction:1/2",
            vec![100, 1_000, 10_000],
        ),
    ] {
        let sequence = load_sequence(family).unwrap();
        let rule = KRule::parse(rule).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| study(black_box(sequence.clone()), rule.clone(), &ns, eps.clone()).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, experiments, limit_studies);
criterion_main!(benches);
