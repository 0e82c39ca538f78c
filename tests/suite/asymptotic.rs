//! The asymptotic layer and the checker: Part I Tables 3–5, the binary closed form, the
//! Chernoff bound, verdicts, convergence orders, the regression gate and the picture.

use crate::common::*;
use rug::Rational;
use serde_json::Value;
use shufflecert::enclosure::{Endpoint, parse_rational};

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

/// `value` rounds to `printed` (half a unit in the printed value's last place).
fn rounds_to(value: f64, printed: &str) -> bool {
    let decimals = printed.split_once('.').map_or(0, |(_, f)| f.len());
    let p: f64 = printed.parse().unwrap();
    (value - p).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) * (1.0 + 1e-9)
}

#[test]
fn table3_constants_are_exact_and_match_the_paper() {
    let fx = fixture("table3-constants.json");
    let mechanism = fx["mechanism"].as_str().unwrap();
    for row in fx["rows"].as_array().unwrap() {
        let pi = row["pi"].as_str().unwrap();
        let out = cli_json(&["constants", "-m", mechanism, "--pi", pi]);
        for key in ["i_pi", "chi2_w1_w0", "i_mix"] {
            let v = &out[key];
            assert_eq!(v["lo"], v["hi"], "{key} is exact");
            assert_eq!(v["lo"], row[key]["certified"], "{key} at π = {pi} changed");
            assert!(
                rounds_to(
                    v["f64"].as_f64().unwrap(),
                    row[key]["printed"].as_str().unwrap()
                ),
                "{key} at π = {pi}"
            );
        }
        let under = &out["mixture_underestimate"];
        assert_eq!(
            under["lo"],
            row["mixture_underestimate_percent"]["certified"]
        );
        let percent = 100.0 * under["f64"].as_f64().unwrap();
        assert!(
            rounds_to(
                percent,
                row["mixture_underestimate_percent"]["printed"]
                    .as_str()
                    .unwrap()
            ),
            "underestimate at π = {pi}: {percent}"
        );
    }
    let r = &fx["range"];
    let out = cli_json(&[
        "constants",
        "-m",
        mechanism,
        "--pi-range",
        r["pi_range"].as_str().unwrap(),
        "--grid",
        r["grid"].as_str().unwrap(),
    ]);
    let range = &out["range"];
    let lo = range["i_pi"]["min"]["value"]["f64"].as_f64().unwrap();
    let hi = range["i_pi"]["max"]["value"]["f64"].as_f64().unwrap();
    assert!(
        rounds_to(lo, r["i_pi"][0].as_str().unwrap())
            && rounds_to(hi, r["i_pi"][1].as_str().unwrap()),
        "{lo} {hi}"
    );
    assert!(rounds_to(hi / lo, r["factor"].as_str().unwrap()));
    let ulo = 100.0
        * range["mixture_underestimate"]["min"]["value"]["f64"]
            .as_f64()
            .unwrap();
    let uhi = 100.0
        * range["mixture_underestimate"]["max"]["value"]["f64"]
            .as_f64()
            .unwrap();
    assert!(
        rounds_to(ulo, r["mixture_underestimate_percent"][0].as_str().unwrap()),
        "{ulo}"
    );
    assert!(
        rounds_to(uhi, r["mixture_underestimate_percent"][1].as_str().unwrap()),
        "{uhi}"
    );
}

#[test]
fn binary_output_closed_form() {
    // W0 = (0.7, 0.3), W1 = (0.4, 0.6): I_π = 0.09/(0.21 + 0.03π) exactly.
    for pi in ["0", "0.05", "1/3", "0.5", "0.95", "1"] {
        let out = cli_json(&[
            "constants",
            "-m",
            "fixtures/mechanisms/binary-asymmetric.toml",
            "--pi",
            pi,
        ]);
        let p = q(pi);
        let closed =
            Rational::from((9, 100)) / (Rational::from((21, 100)) + Rational::from((3, 100)) * &p);
        assert_eq!(out["i_pi"]["lo"], out["i_pi"]["hi"]);
        assert_eq!(q(out["i_pi"]["lo"].as_str().unwrap()), closed, "π = {pi}");
    }
}

#[test]
fn table4_jsd_against_the_two_constants() {
    let fx = fixture("table4-jsd.json");
    for case in fx["cases"].as_array().unwrap() {
        let args = strings(&case["args"]);
        let n: f64 = args[args.iter().position(|a| *a == "--n").unwrap() + 1]
            .parse()
            .unwrap();
        let k = args[args.iter().position(|a| *a == "--k").unwrap() + 1];
        let jsd = enclosure(&cli_json(&args)["jsd"]).mid_f64();
        let pi = format!("{}/{}", k, n as u64);
        let c = cli_json(&[
            "constants",
            "-m",
            "fixtures/mechanisms/ternary.toml",
            "--pi",
            &pi,
        ]);
        let (i_pi, i_mix) = (
            c["i_pi"]["f64"].as_f64().unwrap(),
            c["i_mix"]["f64"].as_f64().unwrap(),
        );
        let scaled = 8.0 * n * jsd;
        let rel_i = 100.0 * (scaled / i_pi - 1.0);
        let rel_mix = 100.0 * (scaled / i_mix - 1.0);
        assert!(
            rounds_to(rel_i, case["printed_rel_to_i_pi_percent"].as_str().unwrap()),
            "n = {n}: {rel_i}"
        );
        assert!(
            rounds_to(
                rel_mix,
                case["printed_rel_to_i_mix_percent"].as_str().unwrap()
            ),
            "n = {n}: {rel_mix}"
        );
    }
}

#[test]
fn table5_gdp_columns_and_verdicts() {
    let fx = fixture("table5-predictions.json");
    let args = strings(&fx["args"]);
    let out = cli_json(&args);
    for (i, row) in fx["rows"].as_array().unwrap().iter().enumerate() {
        let at = |prefix: &str| {
            out["comparisons"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| {
                    c["point"] == i
                        && c["quantity"] == "delta_qp"
                        && c["prediction"].as_str().unwrap().starts_with(prefix)
                })
                .unwrap()
                .clone()
        };
        let (fixed, mix) = (at("GDP, fixed"), at("GDP, mixture"));
        let exact = enclosure(&fixed["certified"]);
        assert!(exact.overlaps(&enclosure(&row["delta_exact"]["certified"])));
        let exact_printed = row["delta_exact"]["printed"].as_str().unwrap();
        assert!(
            rounds_to(exact.mid_f64(), exact_printed)
                || (exact.mid_f64() / exact_printed.parse::<f64>().unwrap() - 1.0).abs() < 0.002
        );
        for (c, key) in [(&fixed, "gdp_fixed"), (&mix, "gdp_mixture")] {
            assert_eq!(
                c["predicted"]["formula_enclosure"], row[key]["formula"],
                "{key} formula changed"
            );
            assert_eq!(
                c["predicted"]["certified"], false,
                "predictions are labelled uncertified"
            );
            let value = c["predicted"]["value"].as_f64().unwrap();
            let printed = row[key]["printed"].as_str().unwrap();
            assert!(
                (value / printed.parse::<f64>().unwrap() - 1.0).abs() < 0.01,
                "{key} t={}: {value} vs {printed}",
                row["t"]
            );
            let percent = 100.0 * c["rel_error"].as_f64().unwrap();
            let printed_error = row[key]["printed_error_percent"].as_str().unwrap();
            assert!(
                rounds_to(percent, printed_error.trim_start_matches('+')),
                "{key} t={}: {percent} vs {printed_error}",
                row["t"]
            );
        }
        // The mixture proxy is privacy-optimistic, the fixed-composition GDP conservative here.
        assert_eq!(mix["verdict"], "optimistic");
        assert_eq!(fixed["verdict"], "conservative");
    }
}

#[test]
fn convergence_orders_match_the_theorems() {
    let out = cli_json(&[
        "check",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "400",
        "--k",
        "120",
        "--t",
        "1",
        "--n-sweep",
        "100,200,400",
    ]);
    let order = |prediction: &str, quantity: &str| {
        out["sweep"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["prediction"].as_str().unwrap().starts_with(prediction)
                    && f["quantity"] == quantity
            })
            .unwrap()["observed_order"]
            .as_f64()
            .unwrap()
    };
    // Local curve and fixed-composition GDP: O(n^-1); JSD − I/(8n): O(n^-2); mixture: ~n^-1/2.
    for quantity in ["delta_qp", "delta_pq"] {
        let local = order("local curve", quantity);
        assert!((-1.3..-0.8).contains(&local), "{quantity}: {local}");
        let mix = order("GDP, mixture", quantity);
        assert!((-0.8..-0.2).contains(&mix), "{quantity}: {mix}");
    }
    let jsd = order("I_π/(8n)", "jsd");
    assert!((-2.3..-1.7).contains(&jsd), "{jsd}");
}

#[test]
fn canonical_pair_chernoff_bound_and_jsd_expansion() {
    let out = cli_json(&[
        "check",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "500",
        "--k",
        "0",
        "--t",
        "1,3",
        "--n-sweep",
        "250,500,1000",
    ]);
    let comparisons = out["comparisons"].as_array().unwrap();
    let chernoff: Vec<&Value> = comparisons
        .iter()
        .filter(|c| c["prediction"].as_str().unwrap().starts_with("Chernoff"))
        .collect();
    assert_eq!(chernoff.len(), 2);
    for c in chernoff {
        // A certified upper bound: always at or above the certified δ, and non-trivial at t = 3.
        assert_eq!(c["verdict"], "conservative");
        assert!(
            enclosure(&c["predicted"]["formula_enclosure"]).lo() >= enclosure(&c["certified"]).hi()
        );
    }
    let at_t3 = comparisons
        .iter()
        .find(|c| c["prediction"].as_str().unwrap().starts_with("Chernoff") && c["point"] == 1)
        .unwrap();
    assert!(at_t3["predicted"]["value"].as_f64().unwrap() < 0.05);
    let expansion = out["sweep"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["prediction"].as_str().unwrap().starts_with("χ²/(8n)"))
        .unwrap();
    let o = expansion["observed_order"].as_f64().unwrap();
    assert!(
        (-3.4..-2.6).contains(&o),
        "canonical JSD expansion order {o}"
    );
    assert!(comparisons.iter().any(|c| {
        c["prediction"]
            .as_str()
            .unwrap()
            .starts_with("randomized-response normal approximation")
    }));
}

#[test]
fn fail_on_optimistic_is_a_regression_gate() {
    let args = [
        "check",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "200",
        "--k",
        "60",
        "--t",
        "1",
    ];
    let run = cli(&args);
    assert_eq!(
        run.status, 0,
        "verdicts never change the exit code by default"
    );
    assert!(run.stdout.contains("optimistic") && run.stdout.contains("unsafe as guarantees"));
    let mut gated = args.to_vec();
    gated.extend(["--fail-on", "optimistic"]);
    let run = cli(&gated);
    assert_eq!(run.status, 1);
    assert!(
        run.stdout.contains("GDP mixture"),
        "the report is still printed"
    );
    assert!(run.stderr.contains("check failed") && run.stderr.contains("optimistic"));
}

#[test]
fn plots_are_svg_with_bands_lines_and_log_axis() {
    let dir = std::env::temp_dir().join(format!("shufflecert-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let check_svg = dir.join("check.svg");
    let out = cli(&[
        "check",
        "-m",
        "fixtures/mechanisms/ternary.toml",
        "--n",
        "100",
        "--k",
        "30",
        "--t",
        "1,2",
        "--plot",
        check_svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let svg = std::fs::read_to_string(&check_svg).unwrap();
    assert!(svg.starts_with("<svg") || svg.contains("<svg"));
    for label in [
        "certified",
        "GDP, mixture proxy (prediction)",
        "log scale",
        "ε",
        "<polygon",
    ] {
        assert!(svg.contains(label), "missing {label}");
    }
    let delta_svg = dir.join("delta.svg");
    let out = cli(&[
        "delta",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "1000",
        "--k",
        "0",
        "--eps",
        "0.1",
        "--plot",
        delta_svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let svg = std::fs::read_to_string(&delta_svg).unwrap();
    assert!(svg.contains("δ_{P‖Q} certified") && svg.contains("<polygon"));
    // The reported results are unaffected by the extra plot samples.
    assert!(out.stdout.lines().filter(|l| l.starts_with("0.1 ")).count() == 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn constants_need_full_support_and_valid_compositions() {
    let run = cli(&[
        "constants",
        "-m",
        "fixtures/mechanisms/one-sided.toml",
        "--pi",
        "0.5",
    ]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains("full support") && run.stderr.contains("W1(c) = 0"),
        "{}",
        run.stderr
    );
    let run = cli(&["constants", "-m", "binary-rr:eps0=1", "--pi", "1.5"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("--pi"));
    // Irrational entries: enclosures, not points, with μ_n.
    let out = cli_json(&[
        "constants",
        "-m",
        "binary-rr:eps0=1",
        "--n",
        "1000",
        "--k",
        "0",
    ]);
    let i = enclosure(&out["i_pi"]);
    assert!(!i.is_point() && i.relative_width() < 1e-40);
    // Binary RR: I_0 = χ² = (e − 1)²/e; μ_n = √(I/n).
    let e = std::f64::consts::E;
    assert!((i.mid_f64() - (e - 1.0) * (e - 1.0) / e).abs() < 1e-12);
    let mu = enclosure(&out["mu_n"]).mid_f64();
    assert!((mu - (i.mid_f64() / 1000.0).sqrt()).abs() < 1e-15);
    assert!(matches!(enclosure(&out["mu_n"]).lo(), Endpoint::Finite(_)));
}
