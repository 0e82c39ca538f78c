//! The closed forms and the type reduction against laws built by brute force: every message
//! of every user convolved in, exactly.

use super::*;
use std::collections::HashMap;

type Law = HashMap<Vec<u32>, Rational>;

/// The law of the histogram of independent draws, one per row in `draws`, over `d` symbols.
fn histogram_law(draws: &[&[Rational]], d: usize) -> Law {
    let mut law: Law = HashMap::from([(vec![0; d], Rational::from(1))]);
    for row in draws {
        let mut next: Law = HashMap::new();
        for (h, p) in &law {
            for (y, w) in row.iter().enumerate().filter(|(_, w)| **w != 0) {
                let mut g = h.clone();
                g[y] += 1;
                *next.entry(g).or_default() += p.clone() * w;
            }
        }
        law = next;
    }
    law
}

/// `Σ_N (P(N) − c Q(N))₊`.
fn hockey(p: &Law, q: &Law, c: &Rational) -> Rational {
    let mut sum = Rational::new();
    for (h, pv) in p {
        let qv = q.get(h).cloned().unwrap_or_default();
        let diff = pv.clone() - c.clone() * qv;
        if diff > 0 {
            sum += diff;
        }
    }
    sum
}

fn chi2_of(p: &Law, q: &Law) -> Rational {
    let mut sum = Rational::new();
    for (h, qv) in q {
        let pv = &p[h];
        sum += qv.clone() * qv / pv;
    }
    sum - 1
}

fn q(a: i64, b: i64) -> Rational {
    Rational::from((a, b))
}

/// Channels with full support W0 (a zero in W1 allowed), over 2 and 3 outputs.
fn channels() -> Vec<[Vec<Rational>; 2]> {
    vec![
        [vec![q(3, 4), q(1, 4)], vec![q(1, 4), q(3, 4)]],
        [vec![q(1, 2), q(1, 2)], vec![q(9, 10), q(1, 10)]],
        [
            vec![q(7, 10), q(1, 5), q(1, 10)],
            vec![q(3, 20), q(11, 20), q(3, 10)],
        ],
        [
            vec![q(1, 3), q(1, 3), q(1, 3)],
            vec![q(1, 2), q(1, 2), q(0, 1)],
        ],
    ]
}

/// The unbundled laws at (n, k, m): message histograms of `(n − k)m` draws of W0 and `km` of
/// W1, and of one user's m messages switched.
fn unbundled_pair(w: &[Vec<Rational>; 2], n: usize, k: usize, m: usize) -> (Law, Law) {
    let d = w[0].len();
    let draws = |ones: usize| -> Vec<&[Rational]> {
        let mut v: Vec<&[Rational]> = vec![&w[0]; (n - ones) * m];
        v.extend(vec![&w[1][..]; ones * m]);
        v
    };
    (histogram_law(&draws(k), d), histogram_law(&draws(k + 1), d))
}

/// The bundled laws over `Y^m` itself (each bundle a symbol of `d^m`), at (n, k, m).
fn full_bundled_pair(w: &[Vec<Rational>; 2], n: usize, k: usize, m: u32) -> (Law, Law) {
    let d = w[0].len();
    let symbols = d.pow(m);
    let product = |b: usize| -> Vec<Rational> {
        (0..symbols)
            .map(|mut v| {
                let mut p = Rational::from(1);
                for _ in 0..m {
                    p *= &w[b][v % d];
                    v /= d;
                }
                p
            })
            .collect()
    };
    let rows = [product(0), product(1)];
    let draws = |ones: usize| -> Vec<&[Rational]> {
        let mut v: Vec<&[Rational]> = vec![&rows[0]; n - ones];
        v.extend(vec![&rows[1][..]; ones]);
        v
    };
    (
        histogram_law(&draws(k), symbols),
        histogram_law(&draws(k + 1), symbols),
    )
}

/// The bundled laws over types, from the [`bundled`] mechanism's rows.
fn typed_pair(w: &[Vec<Rational>; 2], n: usize, k: usize, m: u32) -> (Law, Law) {
    let mechanism = Mechanism::new(
        "test",
        "test".into(),
        None,
        [
            w[0].iter().cloned().map(Entry::Exact).collect(),
            w[1].iter().cloned().map(Entry::Exact).collect(),
        ],
        None,
    )
    .unwrap();
    let rows = bundled(&mechanism, m).unwrap().rational_rows().unwrap();
    let tau = rows[0].len();
    let draws = |ones: usize| -> Vec<&[Rational]> {
        let mut v: Vec<&[Rational]> = vec![&rows[0]; n - ones];
        v.extend(vec![&rows[1][..]; ones]);
        v
    };
    (
        histogram_law(&draws(k), tau),
        histogram_law(&draws(k + 1), tau),
    )
}

fn thresholds() -> Vec<Rational> {
    vec![q(1, 1), q(11, 10), q(3, 2), q(3, 1)]
}

#[test]
fn types_are_every_composition_once() {
    for d in 1..=4 {
        for m in 0..=5 {
            let all = types(m, d);
            assert_eq!(all.len() as u64, type_count(m, d));
            assert!(
                all.iter()
                    .all(|t| t.len() == d && t.iter().sum::<u32>() == m)
            );
            let mut sorted = all.clone();
            sorted.dedup();
            assert_eq!(sorted.len(), all.len());
        }
    }
}

#[test]
fn the_type_reduction_keeps_every_curve_exactly() {
    for w in channels() {
        for m in 1..=3u32 {
            for n in 1..=3usize {
                if w[0].len().pow(m) * n > 60 {
                    continue;
                }
                for k in 0..n {
                    let (pf, qf) = full_bundled_pair(&w, n, k, m);
                    let (pt, qt) = typed_pair(&w, n, k, m);
                    for c in thresholds() {
                        assert_eq!(
                            hockey(&pf, &qf, &c),
                            hockey(&pt, &qt, &c),
                            "n={n} k={k} m={m}"
                        );
                        assert_eq!(
                            hockey(&qf, &pf, &c),
                            hockey(&qt, &pt, &c),
                            "n={n} k={k} m={m}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn both_chi2_closed_forms_equal_the_laws() {
    for w in channels() {
        let x = chi2(&w[0], &w[1]).unwrap();
        for m in 1..=3u32 {
            for n in 1..=4usize {
                let (p, qlaw) = unbundled_pair(&w, n, 0, m as usize);
                assert_eq!(
                    chi2_of(&p, &qlaw),
                    unbundled_chi2(&x, n as u64, m),
                    "n={n} m={m}"
                );
                {
                    let (p, qlaw) = typed_pair(&w, n, 0, m);
                    assert_eq!(
                        chi2_of(&p, &qlaw),
                        bundled_chi2(&x, n as u64, m),
                        "n={n} m={m}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_canonical_ratios_are_the_likelihood_ratios() {
    for w in channels() {
        for m in 1..=3u32 {
            let n = 3usize;
            let (p, qlaw) = unbundled_pair(&w, n, 0, m as usize);
            for (h, pv) in &p {
                let expected = qlaw.get(h).cloned().unwrap_or_default() / pv;
                assert_eq!(unbundled_ratio(&w[0], &w[1], h, m), expected, "{h:?} m={m}");
            }
            let (p, qlaw) = typed_pair(&w, n, 0, m);
            for (h, pv) in &p {
                let expected = qlaw.get(h).cloned().unwrap_or_default() / pv;
                assert_eq!(bundled_ratio(&w[0], &w[1], h, m), expected, "{h:?} m={m}");
            }
        }
    }
}

#[test]
fn unbundled_is_at_most_bundled_and_both_are_single_message_at_one_message() {
    for w in channels() {
        for m in 1..=3u32 {
            for n in 1..=3usize {
                for k in 0..n {
                    let (pu, qu) = unbundled_pair(&w, n, k, m as usize);
                    let (pb, qb) = typed_pair(&w, n, k, m);
                    for c in thresholds() {
                        assert!(hockey(&pu, &qu, &c) <= hockey(&pb, &qb, &c));
                        assert!(hockey(&qu, &pu, &c) <= hockey(&qb, &pb, &c));
                    }
                }
            }
        }
        // m = 1: both are the single-message pair.
        let (pu, qu) = unbundled_pair(&w, 3, 1, 1);
        let (pb, qb) = typed_pair(&w, 3, 1, 1);
        for c in thresholds() {
            assert_eq!(hockey(&pu, &qu, &c), hockey(&pb, &qb, &c));
        }
    }
}

#[test]
fn bundled_refuses_what_it_cannot_build() {
    // (A real ε0 is built: `bundled_types_of_a_real_eps0_are_polynomial_fractions`.)
    let rr = crate::mechanism::load_mechanism("binary-rr:exp_eps0=3").unwrap();
    assert!(bundled(&rr, 0).is_err());
    assert!(
        bundled(&rr, 20_000)
            .unwrap_err()
            .to_string()
            .contains("types")
    );
    let two = bundled(&rr, 2).unwrap();
    assert_eq!(two.outputs, ["(2,0)", "(1,1)", "(0,2)"]);
    // W0 = (3/4, 1/4): Mult(2, W0) = (9/16, 6/16, 1/16).
    assert_eq!(
        two.rational_rows().unwrap()[0],
        [q(9, 16), q(3, 8), q(1, 16)]
    );
}

/// Bundled types of a family with a real ε0 (entries `num(a)/den(a)` of degree ≤ m in
/// `a = e^{ε0}`) are, at any rational `a`, exactly the types of the rows at `a`; and the pair's
/// δ encloses that of `exp_eps0 = A` for a rational A within 10⁻⁶⁰ of `e^{ε0}`.
#[test]
fn bundled_types_of_a_real_eps0_are_polynomial_fractions() {
    use crate::exact::curve::{Direction, delta};
    use crate::exact::pair::{PairOptions, pair_law};
    use crate::mechanism::load_mechanism;
    let real = load_mechanism("k-rr:k=3,eps0=1,inputs=2").unwrap();
    let typed = bundled(&real, 3).unwrap();
    for a in [Rational::from(2), Rational::from((27, 10))] {
        let rows = |m: &Mechanism, b: usize| -> Vec<Rational> {
            m.rows[b].iter().map(|e| e.value_at(&a)).collect()
        };
        for b in 0..2 {
            let at_a: Vec<Rational> = types(3, real.d())
                .iter()
                .map(|t| type_probability(&rows(&real, b), t))
                .collect();
            assert_eq!(rows(&typed, b), at_a);
        }
    }
    // e to 70 digits.
    let e = "2.718281828459045235360287471352662497757247093699959574966967627724077";
    let close = load_mechanism(&format!("k-rr:k=3,exp_eps0={e},inputs=2")).unwrap();
    let options = PairOptions::default();
    for k in [0u64, 7] {
        let with = |m: &Mechanism| {
            let m = with_messages(
                m,
                Messages {
                    count: 3,
                    bundled: true,
                },
            )
            .unwrap();
            pair_law::<inari::Interval>(&m, 20, k, &options, &()).unwrap()
        };
        let (law_real, law_close) = (with(&real), with(&close));
        for eps in [Rational::from((1, 4)), Rational::from(1)] {
            for dir in [Direction::Qp, Direction::Pq] {
                let (x, y) = (
                    delta(&law_real, dir, &eps, &()),
                    delta(&law_close, dir, &eps, &()),
                );
                assert!(x.overlaps(&y), "k = {k} {dir:?} ε = {eps}: {x} vs {y}");
            }
        }
    }
}
