//! Published values of Part I (Tables 4, 5, 6), stored with our certified enclosures in
//! `fixtures/expected/`.  Each case checks that
//! 1. a fresh certified enclosure overlaps the stored one (two enclosures of the same number
//!    must meet: a disjoint pair proves one of them wrong), and stays as tight as before;
//! 2. the paper's printed value agrees with the certified one to the printed precision.

use crate::common::*;
use rug::Rational;
use shufflecert::enclosure::{Enclosure, parse_rational};

fn check_fixture(file: &str) {
    let doc = fixture(file);
    let cases = doc["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        let args = strings(&case["args"]);
        let out = cli_json(&args);
        let fresh = enclosure(at(&out, case["key"].as_str().unwrap()));
        let stored = enclosure(&case["certified"]);
        assert!(
            fresh.overlaps(&stored),
            "{args:?}: fresh {fresh} is disjoint from the stored {stored}"
        );
        assert!(
            fresh.relative_width() <= 2.0 * stored.relative_width() + 1e-30,
            "{args:?}: enclosure got wider: {fresh} vs stored {stored}"
        );
        // The paper's rounded value.
        let multiplier = case.get("multiplier").map_or(Rational::from(1), |m| {
            parse_rational(m.as_str().unwrap()).unwrap()
        });
        let scaled = Enclosure::from_rationals(
            fresh.lo().finite().unwrap().clone() * &multiplier,
            fresh.hi().finite().unwrap().clone() * &multiplier,
        );
        let printed = parse_rational(case["printed"].as_str().unwrap()).unwrap();
        let tolerance = parse_rational(case["tolerance"].as_str().unwrap()).unwrap();
        let widened = Enclosure::from_rationals(
            Rational::from(&printed - &tolerance),
            Rational::from(&printed + &tolerance),
        );
        assert!(
            widened.contains_enclosure(&scaled),
            "{args:?}: certified {scaled} does not round to the printed {}",
            case["printed"]
        );
    }
}

#[test]
fn table6_exact_boundary_pair_epsilon() {
    check_fixture("table6-boundary-pair-eps.json");
}

#[test]
fn table4_jensen_shannon() {
    check_fixture("table4-jsd.json");
}

#[test]
fn table5_exact_privacy_curve() {
    check_fixture("table5-delta-exact.json");
}
