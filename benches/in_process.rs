//! Issue 22's speed target: a Python call adds at most 1 ms over the same computation in the
//! Rust library.  These are the Rust side of that comparison, for the questions that
//! `python/benchmarks/overhead.py` times through the package: the library's answer alone, and
//! the whole in-process command (`cli::run` with `--json`: parsing, computing, the JSON report),
//! which is what the package calls.

use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};
use shufflecert::arith::exact::ExactCtx;
use shufflecert::cli::args::Cli;
use shufflecert::enclosure::parse_rational;
use shufflecert::exact::pair::PairOptions;
use shufflecert::mechanism::load_mechanism;
use shufflecert::query::{Backend, EpsilonJob, PairQuery, answer};
use std::hint::black_box;

/// The questions, as the command line (and `overhead.py`) asks them.
const QUESTIONS: [(&str, &[&str]); 3] = [
    (
        "epsilon binary-rr eps0=1 n=1000 k=0 delta=1e-5",
        &[
            "epsilon",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "1000",
            "--k",
            "0",
            "--delta",
            "1e-5",
        ],
    ),
    (
        "delta ternary n=30 k=7 eps=0.25,1",
        &[
            "delta",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--n",
            "30",
            "--k",
            "7",
            "--eps",
            "0.25,1",
        ],
    ),
    (
        "profile binary-rr eps0=1 n=1000 delta=1e-6",
        &[
            "profile",
            "-m",
            "binary-rr:eps0=1",
            "--n",
            "1000",
            "--delta",
            "1e-6",
        ],
    ),
];

fn whole_command(c: &mut Criterion) {
    let mut group = c.benchmark_group("in-process command (cli::run --json)");
    for (name, args) in QUESTIONS {
        let mut argv = vec!["shufflecert"];
        argv.extend_from_slice(args);
        argv.extend(["--json", "--progress", "none"]);
        let cli = Cli::parse_from(&argv);
        assert!(shufflecert::cli::run(&cli).is_ok(), "{name}");
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    shufflecert::cli::run(&Cli::parse_from(&argv))
                        .unwrap()
                        .stdout,
                )
            })
        });
    }
    group.finish();
}

fn library_answer(c: &mut Criterion) {
    let query = PairQuery {
        mechanism: load_mechanism("binary-rr:eps0=1").unwrap(),
        n: 1000,
        k: 0,
        options: PairOptions::default(),
        backend: Backend::Interval,
        exact_ctx: ExactCtx::default(),
        escalate_above: Some(1e-9),
    };
    let job = EpsilonJob {
        delta: parse_rational("1e-5").unwrap(),
    };
    c.bench_function(
        "library answer: epsilon binary-rr eps0=1 n=1000 k=0 delta=1e-5",
        |b| b.iter(|| black_box(answer(&query, &job).unwrap())),
    );
}

criterion_group!(benches, whole_command, library_answer);
criterion_main!(benches);
