//! Issue 24: multi-message shuffling, whole process (the release binary), 2 cores.
//! Targets: unbundled binary RR (ε0 = 1), m = 3, n = 10⁴, any k: ε at δ = 1e-6 in ≤ 0.1 s;
//! bundled binary RR (e^ε0 = 3), m = 3, n = 200, k = 0: δ at three ε in ≤ 5 s, and its
//! mechanism-wide profile in ≤ 60 s; bundled ternary (`fixtures/mechanisms/ternary.toml`),
//! m = 2, n = 100, k = 0: δ at three ε in ≤ 10 s (the type histograms number C(105, 5) ≈ 9.7·10⁷;
//! the k = 0 pair runs on the canonical ratio's lattice, proofs-notes/ratio-lattice.md; n = 50
//! for comparison); `compare-messages` at n = 200, m = 3.  Run one row with
//! `cargo bench --bench multimessage -- unbundled`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_shufflecert");

fn run(args: &[&str]) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn unbundled(c: &mut Criterion) {
    let mut group = c.benchmark_group("messages: unbundled binary-rr eps0=1 m=3 n=10000");
    group.sample_size(20);
    for k in ["0", "5000", "9999"] {
        group.bench_function(format!("k={k}, eps at delta=1e-6"), |b| {
            b.iter(|| {
                run(&[
                    "epsilon",
                    "-m",
                    "binary-rr:eps0=1",
                    "--n",
                    "10000",
                    "--k",
                    k,
                    "--delta",
                    "1e-6",
                    "--messages",
                    "3",
                ])
            })
        });
    }
    group.finish();
}

fn bundled(c: &mut Criterion) {
    let mut group = c.benchmark_group("messages: bundled");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("binary-rr exp_eps0=3 m=3 n=200 k=0, delta at 3 eps", |b| {
        b.iter(|| {
            run(&[
                "delta",
                "-m",
                "binary-rr:exp_eps0=3",
                "--n",
                "200",
                "--k",
                "0",
                "--eps",
                "0.5,1,2",
                "--messages",
                "3",
                "--bundled",
            ])
        })
    });
    group.bench_function("binary-rr exp_eps0=3 m=3 n=200, profile at 3 eps", |b| {
        b.iter(|| {
            run(&[
                "profile",
                "-m",
                "binary-rr:exp_eps0=3",
                "--n",
                "200",
                "--eps",
                "0.5,1,2",
                "--messages",
                "3",
                "--bundled",
            ])
        })
    });
    for n in ["50", "100"] {
        group.bench_function(format!("ternary m=2 n={n} k=0, delta at 3 eps"), |b| {
            b.iter(|| {
                run(&[
                    "delta",
                    "-m",
                    "fixtures/mechanisms/ternary.toml",
                    "--n",
                    n,
                    "--k",
                    "0",
                    "--eps",
                    "0.5,1,2",
                    "--messages",
                    "2",
                    "--bundled",
                ])
            })
        });
    }
    group.bench_function(
        "compare-messages binary-rr exp_eps0=3 m=3 n=200, 3 eps",
        |b| {
            b.iter(|| {
                run(&[
                    "compare-messages",
                    "-m",
                    "binary-rr:exp_eps0=3",
                    "--n",
                    "200",
                    "--messages",
                    "3",
                    "--eps",
                    "0.5,1,2",
                ])
            })
        },
    );
    group.finish();
}

criterion_group!(benches, unbundled, bundled);
criterion_main!(benches);
