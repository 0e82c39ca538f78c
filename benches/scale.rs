//! Issue 21: questions at deployment scale, whole process (the release binary), 2 cores.
//! Targets: binary RR ε0 = 1, ε_M at δ = 1e-6, n = 10⁵ in ≤ 2 s and n = 10⁶ in ≤ 60 s; the
//! ternary pair of the issue (`fixtures/mechanisms/ternary.toml`) at n = 10⁴, k = 5000, ε at δ = 1e-6 in ≤ 1 s;
//! three-output profiles (the ternary channel at n = 2·10⁴, k-RR k = 20 on binary inputs at
//! n = 5·10⁴) in ≤ 60 s each; a range audit of 20 claims in ≤ 1.5× one `bounds` run;
//! `bounds` on a generic 40-input randomizer at n = 10⁴ in ≤ 30 s; Theorem 7.2's array (zero
//! entries) at n = 3200 in ≤ 2 s, and the divergences of a mechanism with a zero entry on
//! truncated windows.  Run one row with
//! `cargo bench --bench scale -- "n=100000"`.

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

fn binary_profile(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: binary-rr eps0=1 profile, eps at delta=1e-6");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    for n in ["100000", "1000000"] {
        group.bench_function(format!("n={n}"), |b| {
            b.iter(|| {
                run(&[
                    "profile",
                    "-m",
                    "binary-rr:eps0=1",
                    "--n",
                    n,
                    "--delta",
                    "1e-6",
                ])
            })
        });
    }
    group.finish();
}

fn ternary_pair(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: ternary pair");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("n=10000 k=5000, eps at delta=1e-6", |b| {
        b.iter(|| {
            run(&[
                "epsilon",
                "-m",
                "fixtures/mechanisms/ternary.toml",
                "--n",
                "10000",
                "--k",
                "5000",
                "--delta",
                "1e-6",
            ])
        })
    });
    group.finish();
}

/// Profiles of three-output mechanisms, ε_M at δ = 1e-6 (targets: ≤ 60 s each): the ternary
/// channel at n = 2·10⁴, and k-RR with k = 20, e^ε0 = e² on binary inputs (its three-symbol
/// reduction) at n = 5·10⁴.
fn three_output_profiles(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: three-output profile, eps at delta=1e-6");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(300));
    for (name, mechanism, n) in [
        (
            "ternary n=20000",
            "fixtures/mechanisms/ternary.toml",
            "20000",
        ),
        (
            "k-rr k=20 eps0=2 inputs=2 n=50000",
            "k-rr:k=20,eps0=2,inputs=2",
            "50000",
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| run(&["profile", "-m", mechanism, "--n", n, "--delta", "1e-6"]))
        });
    }
    group.finish();
}

/// A range audit of 20 claims at one n against one `bounds` run at that n (target: ≤ 1.5×).
/// The audit exits 1 (some claims are unsound), so only its output is required.
fn range_audit(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: k-rr k=4 exp_eps0=3 on 4 inputs, n=10000");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(40));
    let mechanism = "k-rr:k=4,exp_eps0=3,inputs=4";
    group.bench_function("bounds, eps at delta=1e-6", |b| {
        b.iter(|| run(&["bounds", "-m", mechanism, "--n", "10000", "--delta", "1e-6"]))
    });
    group.bench_function("audit, 20 claims", |b| {
        b.iter(|| {
            let out = Command::new(BIN)
                .args([
                    "audit",
                    "-m",
                    mechanism,
                    "--claims",
                    "fixtures/claims/range-k-rr-4-n10000.csv",
                ])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("the binary runs");
            assert_eq!(
                out.status.code(),
                Some(1),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        })
    });
    group.finish();
}

/// `bounds` on a generic randomizer of 40 inputs and 3 outputs (`fixtures/randomizers/
/// forty-inputs.toml`) at n = 10⁴, ε at δ = 1e-6 (target: ≤ 30 s).
fn many_inputs(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: 40-input randomizer, bounds at n=10000");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(60));
    group.bench_function("eps at delta=1e-6", |b| {
        b.iter(|| {
            run(&[
                "bounds",
                "-m",
                "fixtures/randomizers/forty-inputs.toml",
                "--n",
                "10000",
                "--delta",
                "1e-6",
            ])
        })
    });
    group.finish();
}

/// Zero entries on windows: Part III Theorem 7.2's array (`fixtures/sequences/theorem-7-2.toml`,
/// W0 vanishes on two of four outputs) at n = 3200, k = 1600, against its limit (target: ≤ 2 s).
fn zero_entries(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale: Theorem 7.2 array, limit at n=3200");
    group.sample_size(10);
    group.bench_function("k=n/2 eps=0.5", |b| {
        b.iter(|| {
            run(&[
                "limit",
                "--family",
                "fixtures/sequences/theorem-7-2.toml",
                "--n",
                "3200",
                "--k-rule",
                "fraction:1/2",
                "--eps",
                "0.5",
            ])
        })
    });
    group.finish();
    // Divergences need the omitted part bounded with a ratio range reaching 0 (one-sided.toml:
    // W1 never reports c): truncated windows too (divergences.md; 26 s on every histogram).
    let mut group = c.benchmark_group("scale: one-sided, divergences at n=1600");
    group.sample_size(10);
    group.bench_function("k=800", |b| {
        b.iter(|| {
            run(&[
                "divergences",
                "-m",
                "fixtures/mechanisms/one-sided.toml",
                "--n",
                "1600",
                "--k",
                "800",
            ])
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    binary_profile,
    ternary_pair,
    three_output_profiles,
    range_audit,
    many_inputs,
    zero_entries
);
criterion_main!(benches);
