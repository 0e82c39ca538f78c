//! Helpers shared by the integration tests: running the CLI, reading enclosures back, and an
//! independent reference evaluator written with num-rational (a different bignum library and a
//! different algorithm from the crate's dynamic program).
#![allow(dead_code)]

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use proptest::prelude::*;
use rug::Rational;
use serde_json::Value;
use shufflecert::enclosure::{Enclosure, Endpoint, parse_rational};
use shufflecert::mechanism::{Entry, Mechanism};
use std::collections::HashMap;
use std::process::Command;

/// The result of one CLI run.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the `shufflecert` binary from the crate root.
pub fn cli(args: &[&str]) -> Run {
    cli_env(args, &[])
}

/// Runs the `shufflecert` binary from the crate root with extra environment variables.
pub fn cli_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_shufflecert"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run shufflecert");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// Runs the CLI with `--json` and parses stdout, asserting success.
pub fn cli_json(args: &[&str]) -> Value {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--json");
    let run = cli(&all);
    assert_eq!(run.status, 0, "{args:?} failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("valid JSON on stdout")
}

fn endpoint(text: &str) -> Endpoint {
    match text {
        "inf" => Endpoint::PosInf,
        "-inf" => Endpoint::NegInf,
        t => Endpoint::Finite(parse_rational(t).unwrap_or_else(|| panic!("not a number: {t}"))),
    }
}

/// Reads `{"lo": "…", "hi": "…"}` back into an enclosure.
pub fn enclosure(v: &Value) -> Enclosure {
    let lo = v["lo"].as_str().expect("lo is a string");
    let hi = v["hi"].as_str().expect("hi is a string");
    Enclosure::new(endpoint(lo), endpoint(hi))
}

/// Follows a dotted path such as `results.0.delta_qp`.
pub fn at<'a>(doc: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(doc, |v, part| match part.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[part],
        })
}

/// A rug rational as a num-rational one.
pub fn to_big(q: &Rational) -> BigRational {
    BigRational::new(
        q.numer().to_string().parse().unwrap(),
        q.denom().to_string().parse().unwrap(),
    )
}

/// A num-rational as a rug rational.
pub fn from_big(q: &BigRational) -> Rational {
    Rational::from((
        q.numer().to_string().parse::<rug::Integer>().unwrap(),
        q.denom().to_string().parse::<rug::Integer>().unwrap(),
    ))
}

/// The laws `T_{n,k}` and `T_{n,k+1}` by brute force: every assignment of outputs to the users
/// (n − k − 1 users with W0, k with W1, and one distinguished user with W0 resp. W1), summed into
/// histograms.  Exponential in n: for tiny cases only.
pub fn brute_force_pair(
    w0: &[BigRational],
    w1: &[BigRational],
    n: usize,
    k: usize,
) -> (
    HashMap<Vec<u64>, BigRational>,
    HashMap<Vec<u64>, BigRational>,
) {
    // users 0..k hold a 1; user k is the distinguished one (0 in P, 1 in Q); the rest hold 0.
    let others: Vec<&[BigRational]> = (0..n - 1).map(|u| if u < k { w1 } else { w0 }).collect();
    brute_force_histograms(&others, w0, w1)
}

/// The histogram laws of the datasets `(first, others)` and `(second, others)` by brute force:
/// every assignment of outputs to the users, summed into histograms.  `others[u]` is the row of
/// user u, `first`/`second` the switched user's rows.
pub fn brute_force_histograms(
    others: &[&[BigRational]],
    first: &[BigRational],
    second: &[BigRational],
) -> (
    HashMap<Vec<u64>, BigRational>,
    HashMap<Vec<u64>, BigRational>,
) {
    let d = first.len();
    let n = others.len() + 1;
    let mut p = HashMap::new();
    let mut q = HashMap::new();
    let mut outputs = vec![0usize; n];
    loop {
        // user 0 is the switched one.
        let mut hist = vec![0u64; d];
        let mut common = BigRational::one();
        for (u, &y) in outputs.iter().enumerate() {
            hist[y] += 1;
            if u > 0 {
                common *= &others[u - 1][y];
            }
        }
        let y = outputs[0];
        *p.entry(hist.clone()).or_insert_with(BigRational::zero) += &common * &first[y];
        *q.entry(hist).or_insert_with(BigRational::zero) += &common * &second[y];
        // next assignment
        let mut i = 0;
        while i < n && outputs[i] == d - 1 {
            outputs[i] = 0;
            i += 1;
        }
        if i == n {
            break;
        }
        outputs[i] += 1;
    }
    (p, q)
}

/// `Σ_N (a(N) − c b(N))₊` over the union of supports.
pub fn positive_part(
    a: &HashMap<Vec<u64>, BigRational>,
    b: &HashMap<Vec<u64>, BigRational>,
    c: &BigRational,
) -> BigRational {
    let zero = BigRational::zero();
    let mut keys: Vec<&Vec<u64>> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|h| {
            let x = a.get(h).unwrap_or(&zero) - c * b.get(h).unwrap_or(&zero);
            if x > zero { x } else { zero.clone() }
        })
        .fold(BigRational::zero(), |s, x| s + x)
}

/// A rational from a small fraction.
pub fn big(num: i64, den: i64) -> BigRational {
    BigRational::new(BigInt::from(num), BigInt::from(den))
}

/// A row of d probabilities from integer weights in `0..max_weight` (zeros allowed, not all zero).
pub fn row(d: usize, max_weight: u32) -> impl Strategy<Value = Vec<Rational>> {
    prop::collection::vec(prop_oneof![1 => Just(0u32), 6 => 1u32..max_weight], d)
        .prop_filter("some positive weight", |w| w.iter().any(|&x| x > 0))
        .prop_map(|w| {
            let total: u32 = w.iter().sum();
            w.iter().map(|&x| Rational::from((x, total))).collect()
        })
}

/// A random rational mechanism with d ∈ {2, 3, 4} outputs.
pub fn mechanism(max_weight: u32) -> impl Strategy<Value = Mechanism> {
    (2usize..=4)
        .prop_flat_map(move |d| (row(d, max_weight), row(d, max_weight)))
        .prop_map(|(a, b)| {
            let entries = |r: Vec<Rational>| r.into_iter().map(Entry::Exact).collect();
            Mechanism::new(
                "random",
                "random".into(),
                None,
                [entries(a), entries(b)],
                None,
            )
            .unwrap()
        })
}

/// A file of `fixtures/expected/`.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/expected/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
        .expect("valid JSON fixture")
}

/// A JSON list of strings (e.g. a fixture's CLI arguments).
pub fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|a| a.as_str().expect("a string"))
        .collect()
}

/// A failing run: non-zero exit, nothing on stdout, one line on stderr mentioning `needle`.
pub fn assert_fails(args: &[&str], needle: &str) {
    let run = cli(args);
    assert_ne!(run.status, 0, "{args:?} should fail");
    assert!(
        run.stdout.is_empty(),
        "{args:?} printed a result: {}",
        run.stdout
    );
    assert!(
        run.stderr.contains(needle),
        "{args:?}: stderr lacks {needle:?}: {}",
        run.stderr
    );
    // One clear line.
    let lines: Vec<&str> = run.stderr.trim_end().lines().collect();
    assert!(lines.len() == 1, "one clear line: {}", run.stderr);
    assert_eq!(run.status, 2, "{args:?}: exit code");
}
