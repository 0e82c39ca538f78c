//! The limit experiments of Part III (`--experiment`): every certified value against an
//! independent mpmath computation at 60 digits (`fixtures/expected/limit-experiments.json`, made
//! by `fixtures/expected/limit-experiments.py` from the pmf / density formulas directly), and
//! the closed forms the paper states.

use crate::common::*;
use rug::Rational;
use serde_json::Value;
use shufflecert::enclosure::{Enclosure, Endpoint, parse_rational};

/// The reference value as a tiny interval (it is rounded to 30 significant digits), or +∞.
fn reference(text: &str) -> Enclosure {
    if text == "inf" {
        return Enclosure::pos_infinity();
    }
    let v = parse_rational(text).unwrap_or_else(|| panic!("reference {text}"));
    let slack = v.clone().abs() / Rational::from(10u64.pow(15)) / Rational::from(10u64.pow(14));
    Enclosure::from_rationals(Rational::from(&v - &slack), v + slack)
}

/// The certified enclosure contains the reference and, where the value is neither tiny nor
/// infinite, is tight (so the check could fail on a vacuous answer).
fn check(name: &str, what: &str, got: &Enclosure, want: &str, tight: f64) {
    let r = reference(want);
    assert!(
        got.overlaps(&r),
        "{name} {what}: certified {got} misses the reference {want}"
    );
    if want == "inf" {
        assert_eq!(got.hi(), &Endpoint::PosInf, "{name} {what}");
    } else if r.lo() > &Endpoint::Finite(Rational::from((1, 1_000_000_000_000u64))) {
        assert!(
            got.relative_width() < tight,
            "{name} {what}: {got} is wider than {tight:e} relative"
        );
    }
}

fn experiments() -> Vec<Value> {
    fixture("limit-experiments.json")["experiments"]
        .as_array()
        .unwrap()
        .clone()
}

fn run_experiment(e: &Value, backend: &[&str]) {
    let name = e["experiment"].as_str().unwrap();
    let eps = strings(&e["eps"]).join(",");
    let mut args = vec!["delta", "--experiment", name, "--eps", &eps];
    args.extend(backend);
    let delta = cli_json(&args);
    for (i, row) in delta["results"].as_array().unwrap().iter().enumerate() {
        for key in ["delta_qp", "delta_pq"] {
            let want = e[key][i].as_str().unwrap();
            check(
                name,
                &format!("{key}[{i}]"),
                &enclosure(&row[key]),
                want,
                1e-8,
            );
        }
    }
    let mut args = vec![
        "divergences",
        "--experiment",
        name,
        "--renyi-order",
        "2,3/2",
    ];
    args.extend(backend);
    let div = cli_json(&args);
    for key in ["tv", "kl_qp", "kl_pq", "jsd", "chi2_qp", "hellinger2"] {
        let want = e[key].as_str().unwrap();
        check(name, key, &enclosure(&div[key]), want, 1e-8);
    }
    for dir in ["renyi_qp", "renyi_pq"] {
        for entry in div[dir].as_array().unwrap() {
            let order = entry["order"].as_str().unwrap();
            let order = if order == "1.5" { "3/2" } else { order };
            let want = e[dir][order].as_str().unwrap();
            check(
                name,
                &format!("{dir}({order})"),
                &enclosure(&entry["value"]),
                want,
                1e-8,
            );
        }
    }
}

#[test]
fn every_experiment_contains_the_independent_reference_values() {
    for e in experiments() {
        run_experiment(&e, &[]);
    }
}

#[test]
fn mpfr_backend_contains_them_tightly() {
    for e in experiments().iter().filter(|e| {
        let n = e["experiment"].as_str().unwrap();
        n.ends_with("lambda=3") || n.contains("a=5/2") || n.ends_with("mu=1")
    }) {
        run_experiment(e, &["--backend", "mpfr", "--precision", "160"]);
    }
}

#[test]
fn epsilon_for_delta_brackets_the_reference_curve() {
    // δ_{Q‖P} at the certified ε bounds is on either side of the target.
    for name in [
        "poisson-shift:lambda=40",
        "skellam-shift:a=2,b=1",
        "gaussian-shift:mu=1",
        "fixtures/experiments/two-jumps.toml",
    ] {
        let out = cli_json(&["epsilon", "--experiment", name, "--delta", "1e-6"]);
        let eps = enclosure(&out["eps_qp"]);
        let (Endpoint::Finite(lo), Endpoint::Finite(hi)) = (eps.lo(), eps.hi()) else {
            panic!("{name}: finite ε expected, got {eps}")
        };
        assert!(eps.relative_width() < 1e-9, "{name}: {eps}");
        let at = |e: &Rational| {
            let text = shufflecert::enclosure::exact_string(e);
            // In MPFR, so that the printed (outward-rounded) ends resolve the 1e-12 relative
            // margin of the witnesses.
            let d = cli_json(&[
                "delta",
                "--experiment",
                name,
                "--eps",
                &text,
                "--backend",
                "mpfr",
                "--precision",
                "200",
            ]);
            enclosure(&d["results"][0]["delta_qp"])
        };
        let target = Endpoint::Finite(parse_rational("1e-6").unwrap());
        assert!(at(hi).hi() <= &target, "{name}: δ(ε_hi) above the target");
        if *lo > 0 {
            assert!(
                at(lo).lo() > &target,
                "{name}: δ(ε_lo) not above the target"
            );
        }
    }
    // The Poisson shift's reverse curve keeps its singular mass P(0) = e^{−λ}: ε = ∞ when the
    // target is below it.
    let out = cli_json(&[
        "epsilon",
        "--experiment",
        "poisson-shift:lambda=3",
        "--delta",
        "0.01",
    ]);
    assert_eq!(out["eps_pq"]["lo"], "inf");
}

#[test]
fn poisson_shift_closed_forms() {
    // TV(Poi(λ), 1 + Poi(λ)) = max_j P(N = j) (Theorem 7.1's unimodality argument), χ² = 1/λ,
    // and δ_{P‖Q}(ε) ≥ P(N = 0) = e^{−λ} for every ε.
    for (lambda, mode_pmf) in [
        ("3", "0.224041807655387743407040870425"),
        ("1/2", "0.606530659712633423603799534991"),
    ] {
        let spec = format!("poisson-shift:lambda={lambda}");
        let div = cli_json(&[
            "divergences",
            "--experiment",
            &spec,
            "--backend",
            "mpfr",
            "--precision",
            "200",
        ]);
        assert!(enclosure(&div["tv"]).overlaps(&reference(mode_pmf)));
        let l = parse_rational(lambda).unwrap();
        assert!(enclosure(&div["chi2_qp"]).contains(&Rational::from(l.recip_ref())));
        let far = cli_json(&["delta", "--experiment", &spec, "--eps", "30"]);
        let e_lambda = (-l.to_f64()).exp();
        let pq = enclosure(&far["results"][0]["delta_pq"]);
        assert!(pq.hi().to_f64() >= e_lambda * (1.0 - 1e-12));
        assert!(pq.lo().to_f64() <= e_lambda * (1.0 + 1e-12));
    }
}

#[test]
fn large_intensities_stay_certified_and_tight() {
    // λ = 10^4 (the target): a few thousand lattice states.
    let out = cli_json(&["divergences", "--experiment", "poisson-shift:lambda=10000"]);
    let chi2 = enclosure(&out["chi2_qp"]);
    assert!(chi2.contains(&Rational::from((1, 10000))));
    assert!(chi2.relative_width() < 1e-9);
    assert_eq!(out["kl_pq"]["hi"], "inf");
    let out = cli_json(&[
        "epsilon",
        "--experiment",
        "skellam-shift:a=10000,b=10000",
        "--delta",
        "1e-6",
    ]);
    let qp = enclosure(&out["eps_qp"]);
    let pq = enclosure(&out["eps_pq"]);
    // a = b: the pair is symmetric under x ↦ 1 − x, so the two curves agree.
    assert!(qp.overlaps(&pq) && qp.relative_width() < 1e-9);
}

#[test]
fn experiment_errors_name_the_field() {
    assert_fails(
        &[
            "delta",
            "--experiment",
            "poisson-shift:lambda=0",
            "--eps",
            "1",
        ],
        "lambda",
    );
    assert_fails(
        &["delta", "--experiment", "skellam-shift:a=1", "--eps", "1"],
        ": b:",
    );
    assert_fails(
        &[
            "delta",
            "--experiment",
            "gaussian-shift:mu=1",
            "--eps",
            "1",
            "--backend",
            "exact",
        ],
        "--backend",
    );
    assert_fails(
        &[
            "delta",
            "--experiment",
            "poisson-shift:lambda=2",
            "--eps",
            "1",
            "--tv-ball",
            "0.01",
        ],
        "--tv-ball",
    );
    assert_fails(
        &["delta", "--experiment", "no-such-file.toml", "--eps", "1"],
        "known experiments",
    );
    // check takes a mechanism.
    assert_fails(
        &[
            "check",
            "--experiment",
            "poisson-shift:lambda=2",
            "--t",
            "1",
        ],
        "--experiment",
    );
    let dir = std::env::temp_dir().join("shufflecert-experiment-errors");
    std::fs::create_dir_all(&dir).unwrap();
    for (text, field) in [
        (
            "shift = [\"1\"]\n[[jumps]]\nvector = [\"1\", \"0\"]\nintensity = \"1\"\n",
            "jumps[0].vector",
        ),
        (
            "shift = [\"1\"]\n[[jumps]]\nvector = [\"1\"]\nintensity = \"-1\"\n",
            "jumps[0].intensity",
        ),
        (
            "shift = [\"1\"]\n[[jumps]]\nvector = [\"1\"]\nrate = \"1\"\n",
            "jumps[0].rate",
        ),
        ("shift = [0.5]\njumps = []\n", "shift[0]"),
        ("kind = \"poisson\"\nshift = [\"1\"]\njumps = []\n", "kind"),
    ] {
        let path = dir.join(format!("{}.toml", field.replace(['[', ']', '.'], "_")));
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        assert_fails(&["delta", "--experiment", p, "--eps", "1"], field);
    }
}

#[test]
fn text_report_names_the_experiment() {
    let run = cli(&[
        "delta",
        "--experiment",
        "skellam-shift:a=2,b=1",
        "--eps",
        "0.5",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("limit experiment skellam-shift:a=2,b=1")
    );
    assert!(run.stdout.contains("engine lattice"));
    assert!(run.stdout.contains("certified enclosure"));
}

#[test]
fn review_regressions() {
    // Cuts deeper than 2^-1000 (MPFR above ~960 bits) used to underflow in doubles and hang.
    let out = cli_json(&[
        "delta",
        "--experiment",
        "poisson-shift:lambda=3",
        "--backend",
        "mpfr",
        "--precision",
        "1100",
        "--eps",
        "1",
    ]);
    let qp = enclosure(&out["results"][0]["delta_qp"]);
    assert!(qp.overlaps(&reference("0.00156689964132963425817589216300")));
    // Far narrower than doubles could give (the printed ends carry about 120 digits).
    assert!(qp.relative_width() < 1e-100, "{qp}");
    let omitted = parse_rational(out["omitted_mass_bound"].as_str().unwrap()).unwrap();
    // The cut at 2^-(1100+40) of the mode leaves far less than 10^-300.
    assert!(omitted.to_f64() < 1e-300, "omitted {}", omitted.to_f64());
    // A huge dense span is refused in one line, not allocated.
    let dir = std::env::temp_dir().join("shufflecert-review-regressions");
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("bigstep.toml");
    std::fs::write(
        &big,
        "shift = [\"1\"]\n[[jumps]]\nvector = [\"1\"]\nintensity = \"1\"\n[[jumps]]\nvector = [\"1/999999937\"]\nintensity = \"1\"\n",
    )
    .unwrap();
    assert_fails(
        &["delta", "--experiment", big.to_str().unwrap(), "--eps", "0"],
        "convolution steps",
    );
    // A tiny intensity keeps its neighbour state: TV(Poi(λ), 1 + Poi(λ)) = e^{−λ} ≈ 1, with a
    // tiny omitted mass.
    let out = cli_json(&[
        "delta",
        "--experiment",
        "poisson-shift:lambda=1/1000000000000000000000000000000",
        "--eps",
        "0",
    ]);
    let omitted = parse_rational(out["omitted_mass_bound"].as_str().unwrap()).unwrap();
    assert!(omitted < Rational::from((1, 1_000_000_000_000u64)));
    assert!(enclosure(&out["results"][0]["delta_qp"]).lo().to_f64() > 0.999_999);
    // Δ = 0: P = Q, every divergence is 0 (the omitted tail has ratio 1).
    let null = dir.join("null-shift.toml");
    std::fs::write(
        &null,
        "shift = [\"0\"]\n[[jumps]]\nvector = [\"1\"]\nintensity = \"2\"\n",
    )
    .unwrap();
    let out = cli_json(&["divergences", "--experiment", null.to_str().unwrap()]);
    for key in ["tv", "kl_qp", "kl_pq", "chi2_qp", "jsd"] {
        let e = enclosure(&out[key]);
        assert!(
            e.contains(&Rational::new()) && e.hi().to_f64() < 1e-12,
            "{key}: {e}"
        );
    }
    // More than 2048 bits is refused for experiments.
    assert_fails(
        &[
            "delta",
            "--experiment",
            "gaussian-shift:mu=1",
            "--eps",
            "1",
            "--backend",
            "mpfr",
            "--precision",
            "4096",
        ],
        "--precision",
    );
}
