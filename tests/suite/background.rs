//! Neighbouring pairs of randomizers on any input domain (issue 11, Deliver 2): `delta`,
//! `epsilon` and `divergences` with `--background` and `--switch`.

use crate::common::*;
use num_rational::BigRational;
use std::collections::HashMap;

const THREE: &str = "fixtures/randomizers/three-inputs.toml";

/// The rows of `fixtures/randomizers/three-inputs.toml` (low, mid, high).
fn three_rows() -> Vec<Vec<BigRational>> {
    vec![
        vec![big(1, 2), big(1, 3), big(1, 6)],
        vec![big(1, 4), big(1, 2), big(1, 4)],
        vec![big(1, 6), big(1, 3), big(1, 2)],
    ]
}

/// The histogram laws of the datasets `(x1, others)` and `(x1′, others)` by brute force.
fn brute_force(
    rows: &[Vec<BigRational>],
    others: &[usize],
    (x1, x1p): (usize, usize),
) -> (
    HashMap<Vec<u64>, BigRational>,
    HashMap<Vec<u64>, BigRational>,
) {
    let others: Vec<&[BigRational]> = others.iter().map(|&x| rows[x].as_slice()).collect();
    brute_force_histograms(&others, &rows[x1], &rows[x1p])
}

#[test]
fn background_pairs_equal_brute_force() {
    // Others: 1 × low, 2 × mid, 1 × high; the switched user low → high (n = 5), and
    // others 3 × mid with mid → low (n = 4): δ in both directions, exactly.
    for (background, others, switch, label, n) in [
        (
            "low=1,mid=2,high=1",
            vec![0, 1, 1, 2],
            (0, 2),
            "low:high",
            "5",
        ),
        ("mid=3", vec![1, 1, 1], (1, 0), "mid:low", "4"),
    ] {
        let (p, q) = brute_force(&three_rows(), &others, switch);
        for (exp_eps, c) in [("1", big(1, 1)), ("6/5", big(6, 5)), ("3", big(3, 1))] {
            for reduce in [true, false] {
                let mut args = vec![
                    "delta",
                    "-m",
                    THREE,
                    "--n",
                    n,
                    "--background",
                    background,
                    "--switch",
                    label,
                    "--exp-eps",
                    exp_eps,
                    "--backend",
                    "exact",
                ];
                if !reduce {
                    args.push("--no-reduce");
                }
                let out = cli_json(&args);
                let row = &out["results"][0];
                let qp = enclosure(&row["delta_qp"]);
                let pq = enclosure(&row["delta_pq"]);
                let want_qp = from_big(&positive_part(&q, &p, &c));
                let want_pq = from_big(&positive_part(&p, &q, &c));
                assert!(
                    qp.is_point() && qp.contains(&want_qp),
                    "{background} {exp_eps}: {qp} vs {want_qp}"
                );
                assert!(
                    pq.is_point() && pq.contains(&want_pq),
                    "{background} {exp_eps}: {pq}"
                );
            }
        }
    }
}

#[test]
fn a_two_input_background_is_the_binary_pair() {
    // k-RR on binary inputs: --background 0=n−1−k,1=k --switch 0:1 is --k k.
    for (k, background) in [("0", "0=29"), ("7", "0=22,1=7"), ("29", "1=29")] {
        let general = cli_json(&[
            "divergences",
            "-m",
            "k-rr:k=3,exp_eps0=2,inputs=2",
            "--n",
            "30",
            "--background",
            background,
            "--switch",
            "0:1",
        ]);
        let binary = cli_json(&[
            "divergences",
            "-m",
            "k-rr:k=3,exp_eps0=2,inputs=2",
            "--n",
            "30",
            "--k",
            k,
        ]);
        for key in ["tv", "kl_qp", "kl_pq", "jsd", "chi2_qp", "hellinger2"] {
            let (a, b) = (enclosure(&general[key]), enclosure(&binary[key]));
            assert!(a.overlaps(&b), "k = {k}, {key}: {a} vs {b}");
        }
    }
}

#[test]
fn epsilon_with_a_background_brackets_the_curve() {
    // ε at δ: δ at the ε's upper end is at most the target, at its lower end above it.
    let base = [
        "-m",
        THREE,
        "--n",
        "40",
        "--background",
        "low=10,mid=20,high=9",
        "--switch",
        "mid:high",
    ];
    let eps = cli_json(&[&["epsilon"], &base[..], &["--delta", "1/100"]].concat());
    let e = enclosure(&eps["eps_two_sided"]);
    let (lo, hi) = e.decimal_strings();
    let at = |x: &str| {
        let out = cli_json(&[&["delta"], &base[..], &["--eps", x]].concat());
        enclosure(&out["results"][0]["delta_two_sided"])
    };
    let target = shufflecert::enclosure::parse_rational("1/100").unwrap();
    assert!(at(&hi).hi() <= &shufflecert::enclosure::Endpoint::Finite(target.clone()));
    assert!(at(&lo).lo() >= &shufflecert::enclosure::Endpoint::Finite(target));
    assert_eq!(eps["switch"]["x1"], "mid");
    assert_eq!(eps["background"][0]["input"], "low");
}

#[test]
fn background_arguments_are_validated() {
    let base = ["delta", "-m", THREE, "--n", "5", "--eps", "1"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    for (extra, needle) in [
        (
            vec!["--background", "low=1,mid=2", "--switch", "low:high"],
            "n − 1 = 4",
        ),
        (
            vec!["--background", "top=4", "--switch", "low:high"],
            "no input \"top\"",
        ),
        (
            vec!["--background", "low=2,low=2", "--switch", "low:high"],
            "given twice",
        ),
        (
            vec!["--background", "low=4", "--switch", "low:low"],
            "must differ",
        ),
        (vec!["--background", "low=4", "--switch", "low"], "X1:X1'"),
        (
            vec!["--background", "low", "--switch", "low:mid"],
            "LABEL=COUNT",
        ),
        (
            vec!["--background", "low=x", "--switch", "low:mid"],
            "--background",
        ),
        (
            vec![
                "--background",
                "low=4",
                "--switch",
                "low:mid",
                "--tv-ball",
                "1/10",
            ],
            "--tv-ball",
        ),
        (vec!["--background", "low=4"], "--switch"),
        (
            vec!["--background", "low=4", "--switch", "low:mid", "--k", "1"],
            "--k",
        ),
    ] {
        assert_fails(&with(&extra), needle);
    }
    // A pair too large for the window engine is refused up front, with the estimate.
    assert_fails(
        &[
            "epsilon",
            "-m",
            "k-rr:k=4,exp_eps0=3,inputs=4",
            "--n",
            "10000",
            "--background",
            "2=9999",
            "--switch",
            "0:1",
            "--delta",
            "1/10000",
            "--max-memory-gib",
            "1",
        ],
        "GiB",
    );
}
