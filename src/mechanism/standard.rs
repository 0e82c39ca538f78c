//! The standard mechanisms: the fixture set other accountants are tested on (`shufflecert
//! golden`, and `shufflecert.testing.standard_mechanisms()` in Python).
//!
//! Families are given by their strings; the others by the text of a mechanism file, named as the
//! golden corpus stores it (`mechanisms/NAME.toml`).

/// One standard mechanism.
#[derive(Clone, Copy, Debug)]
pub struct Standard {
    /// A short name, also the file stem of its cases (`binary-rr-eps1`).
    pub name: &'static str,
    /// What `-m` takes: a family string, or `mechanisms/NAME.toml` for a file.
    pub spec: &'static str,
    /// The file's text, for a mechanism given by a file.
    pub text: Option<&'static str>,
    /// Whether it is a randomizer on more than two inputs (answered by `bounds`, not by the
    /// pair commands and `profile`).
    pub many_inputs: bool,
    /// Why it is in the set.
    pub about: &'static str,
}

/// The standard set, in the order reports list it.
pub const STANDARD: [Standard; 8] = [
    family(
        "binary-rr-eps0.5",
        "binary-rr:eps0=0.5",
        "binary randomized response, ε0 = 0.5",
    ),
    family(
        "binary-rr-eps1",
        "binary-rr:eps0=1",
        "binary randomized response, ε0 = 1",
    ),
    family(
        "binary-rr-eps2",
        "binary-rr:eps0=2",
        "binary randomized response, ε0 = 2",
    ),
    Standard {
        many_inputs: true,
        ..family(
            "k-rr-4",
            "k-rr:k=4,exp_eps0=3",
            "4-ary randomized response, e^ε0 = 3, on 4 inputs",
        )
    },
    family(
        "k-rr-4-binary-inputs",
        "k-rr:k=4,exp_eps0=3,inputs=2",
        "4-ary randomized response, e^ε0 = 3, restricted to inputs {0, 1}",
    ),
    file(
        "ternary",
        "mechanisms/ternary.toml",
        include_str!("../../fixtures/mechanisms/ternary.toml"),
        "the three-symbol channel of Part I §8.3",
    ),
    file(
        "one-sided",
        "mechanisms/one-sided.toml",
        include_str!("../../fixtures/mechanisms/one-sided.toml"),
        "a zero entry: W1 never reports c, so δ_{P‖Q} keeps a singular mass",
    ),
    file(
        "near-identical",
        "mechanisms/near-identical.toml",
        include_str!("../../fixtures/mechanisms/near-identical.toml"),
        "two nearly identical rows: tiny curves",
    ),
];

const fn family(name: &'static str, spec: &'static str, about: &'static str) -> Standard {
    Standard {
        name,
        spec,
        text: None,
        many_inputs: false,
        about,
    }
}

const fn file(
    name: &'static str,
    spec: &'static str,
    text: &'static str,
    about: &'static str,
) -> Standard {
    Standard {
        name,
        spec,
        text: Some(text),
        many_inputs: false,
        about,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::randomizer::{load_randomizer, randomizer_from_text};

    #[test]
    fn every_standard_mechanism_reads_with_the_input_domain_it_declares() {
        for s in STANDARD {
            let r = match s.text {
                Some(text) => randomizer_from_text(s.spec, text),
                None => load_randomizer(s.spec),
            }
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
            assert_eq!(r.rows.len() > 2, s.many_inputs, "{}", s.name);
            if let Some(stem) = s.spec.strip_prefix("mechanisms/") {
                assert_eq!(stem, format!("{}.toml", s.name));
            }
        }
    }
}
