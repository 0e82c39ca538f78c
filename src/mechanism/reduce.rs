//! The sufficiency reduction: outputs with equal likelihood ratio `W1(y)/W0(y)` merged into one
//! symbol, outputs with `W0(y) = W1(y) = 0` dropped (proofs-notes/sufficiency-reduction.md).
//!
//! Within a class G of common ratio r, `W1(y) = r·W0(y)`, so a user's output given its class
//! is distributed as `W0(y)/W0(G) = W1(y)/W1(G)` whatever the user's input.  The histogram of
//! classes is therefore sufficient for every pair `(T_{n,k}, T_{n,k+1})`: the full histogram is
//! recovered from it by a Markov kernel that does not depend on the inputs, and every privacy
//! curve, divergence and profile of the reduced mechanism equals the original's.
//!
//! Ratios are compared exactly.  Family entries are functions of `a = e^{ε0}` with `ε0` a
//! non-zero rational, so `a` is transcendental (Lindemann) and two such ratios are equal iff
//! the polynomials `W1(y)W0(z)` and `W1(z)W0(y)` in `a` (cleared of denominators) agree
//! coefficient by coefficient.  A class whose family entries do not share a denominator (so
//! that their sum is not again of the form `(u·a + v)/(s·a + t)`) is split into sub-classes
//! that do: a finer partition is still sufficient, only less reduced.

use super::{Entry, Mechanism, polynomial};
use crate::error::Result;
use rug::Rational;

/// A mechanism with its outputs merged by likelihood ratio.
#[derive(Clone, Debug)]
pub struct Reduction {
    /// One output per class; rows are the class sums.
    pub mechanism: Mechanism,
    /// `classes[j]`: the original outputs merged into output j.
    pub classes: Vec<Vec<usize>>,
    /// Original outputs with `W0(y) = W1(y) = 0`, dropped.
    pub dropped: Vec<usize>,
}

/// An entry as a fraction of polynomials in `a = e^{ε0}`, coefficients highest degree first.
fn fraction(e: &Entry) -> (Vec<Rational>, Vec<Rational>) {
    match e {
        Entry::Exact(q) => (vec![q.clone()], vec![Rational::from(1)]),
        Entry::ExpFraction { num, den } => (num.clone(), den.clone()),
    }
}

/// `W1(y)/W0(y) = W1(z)/W0(z)` for outputs with positive entries in both rows, exactly.
fn same_ratio(m: &Mechanism, y: usize, z: usize) -> bool {
    let (n0y, d0y) = fraction(&m.rows[0][y]);
    let (n1y, d1y) = fraction(&m.rows[1][y]);
    let (n0z, d0z) = fraction(&m.rows[0][z]);
    let (n1z, d1z) = fraction(&m.rows[1][z]);
    // (n1y/d1y)(d0y/n0y) = (n1z/d1z)(d0z/n0z)  ⟺  n1y d0y d1z n0z = n1z d0z d1y n0y.
    let left = polynomial::mul(&polynomial::mul(&n1y, &d0y), &polynomial::mul(&d1z, &n0z));
    let right = polynomial::mul(&polynomial::mul(&n1z, &d0z), &polynomial::mul(&d1y, &n0y));
    polynomial::equal(&left, &right)
}

/// The lowest power of `a` with a non-zero coefficient (the polynomial is not zero).
fn pivot(p: &[Rational]) -> usize {
    (0..p.len())
        .find(|&j| polynomial::coefficient(p, j) != 0)
        .expect("non-zero denominator")
}

/// True when the denominators of two entries are proportional (so the entries can be added
/// over a common denominator): `d_a · d_b[j] = d_b · d_a[j]` at the pivot `j` of `d_a`.
fn proportional_denominators(a: &Entry, b: &Entry) -> bool {
    let (da, db) = (fraction(a).1, fraction(b).1);
    let j = pivot(&da);
    let scaled = |p: &[Rational], c: &Rational| -> Vec<Rational> {
        p.iter().map(|x| Rational::from(x * c)).collect()
    };
    polynomial::equal(
        &scaled(&da, &polynomial::coefficient(&db, j)),
        &scaled(&db, &polynomial::coefficient(&da, j)),
    )
}

/// The sum of entries with proportional denominators, exactly.
fn sum_entries(entries: &[&Entry]) -> Entry {
    // Common denominator: the first entry's.  Entry i = (num_i / λ_i) / den with
    // den_i = λ_i · den, λ_i the ratio of the pivot coefficients.
    let den = fraction(entries[0]).1;
    let j = pivot(&den);
    let degree = entries
        .iter()
        .map(|e| fraction(e).0.len())
        .max()
        .unwrap_or(1);
    let mut num = vec![Rational::new(); degree];
    for e in entries {
        let (n, d) = fraction(e);
        let lambda =
            Rational::from(&polynomial::coefficient(&d, j) / &polynomial::coefficient(&den, j));
        for (i, c) in n.iter().enumerate() {
            num[degree - n.len() + i] += Rational::from(c / &lambda);
        }
    }
    let constant = |p: &[Rational]| (1..p.len()).all(|j| polynomial::coefficient(p, j) == 0);
    if constant(&num) && constant(&den) {
        Entry::Exact(polynomial::coefficient(&num, 0) / polynomial::coefficient(&den, 0))
    } else {
        Entry::ExpFraction { num, den }
    }
}

/// A label for a class of outputs: the labels joined by `+`, abbreviated for long classes.
fn class_label(labels: &[&str]) -> String {
    match labels {
        [one] => one.to_string(),
        _ if labels.len() <= 4 => labels.join("+"),
        _ => format!(
            "{}+{}+…+{} ({} outputs)",
            labels[0],
            labels[1],
            labels[labels.len() - 1],
            labels.len()
        ),
    }
}

impl Mechanism {
    /// The output alphabet the engines run on, as reports show it: the sufficiency reduction's
    /// [`Reduction::to_json`] with `reduce`, `{outputs, reduced: false}` without it (or when the
    /// rows cannot be reduced).
    pub fn alphabet_json(&self, reduce: bool) -> serde_json::Value {
        match reduce.then(|| self.reduced()) {
            Some(Ok(r)) => r.to_json(self),
            _ => serde_json::json!({ "outputs": self.d(), "reduced": false }),
        }
    }

    /// The sufficiency reduction of this mechanism.  With fewer than two classes (both rows
    /// equal on their support) the mechanism is kept as it is, zero columns included: the
    /// engines need two outputs, and every curve is then 0 either way.
    pub fn reduced(&self) -> Result<Reduction> {
        let d = self.d();
        let mut dropped = Vec::new();
        // Ratio classes in order of first appearance, each split by denominators.
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let rational = self.rational_rows();
        let mut by_ratio: std::collections::HashMap<Option<Rational>, usize> =
            std::collections::HashMap::new();
        let mut by_value: std::collections::HashMap<Option<[Rational; 2]>, Vec<usize>> =
            std::collections::HashMap::new();
        for y in 0..d {
            let (z0, z1) = (self.is_zero(0, y), self.is_zero(1, y));
            if z0 && z1 {
                dropped.push(y);
                continue;
            }
            let joins = |class: &Vec<usize>| -> bool {
                let r = class[0];
                let (r0, r1) = (self.is_zero(0, r), self.is_zero(1, r));
                let ratio = match (z0, z1) {
                    (true, _) => r0,
                    (_, true) => r1,
                    _ => !r0 && !r1 && same_ratio(self, y, r),
                };
                ratio
                    && proportional_denominators(&self.rows[0][y], &self.rows[0][r])
                    && proportional_denominators(&self.rows[1][y], &self.rows[1][r])
            };
            // Rational rows: classes keyed by the exact ratio (`None` for +∞), found by hashing.
            if let Some(rows) = &rational {
                let key = (!z0).then(|| Rational::from(&rows[1][y] / &rows[0][y]));
                match by_ratio.get(&key) {
                    Some(&c) => classes[c].push(y),
                    None => {
                        by_ratio.insert(key, classes.len());
                        classes.push(vec![y]);
                    }
                }
                continue;
            }
            // Entries in e^eps0: candidates share the ratio's values at a = 2 and a = 3 (equal
            // ratios agree everywhere), then `joins` decides exactly.
            let key = (!z0 && !z1).then(|| {
                [2, 3].map(|a| {
                    let a = Rational::from(a);
                    self.rows[1][y].value_at(&a) / self.rows[0][y].value_at(&a)
                })
            });
            let bucket = by_value.entry(key).or_default();
            match bucket.iter().copied().find(|&c| joins(&classes[c])) {
                Some(c) => classes[c].push(y),
                None => {
                    bucket.push(classes.len());
                    classes.push(vec![y]);
                }
            }
        }
        if classes.len() < 2 {
            return Ok(Reduction {
                mechanism: self.clone(),
                classes: (0..d).map(|y| vec![y]).collect(),
                dropped: Vec::new(),
            });
        }
        let row = |b: usize| -> Vec<Entry> {
            classes
                .iter()
                .map(|c| sum_entries(&c.iter().map(|&y| &self.rows[b][y]).collect::<Vec<_>>()))
                .collect()
        };
        let labels = classes
            .iter()
            .map(|c| {
                class_label(
                    &c.iter()
                        .map(|&y| self.outputs[y].as_str())
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        let mut mechanism = Mechanism::new(
            &self.name,
            self.name.clone(),
            Some(labels),
            [row(0), row(1)],
            self.eps0.clone(),
        )?;
        mechanism.source = self.source.clone();
        mechanism.restriction_of = self.restriction_of;
        mechanism.messages = self.messages;
        Ok(Reduction {
            mechanism,
            classes,
            dropped,
        })
    }
}

impl Reduction {
    /// True when nothing was merged or dropped.
    pub fn is_identity(&self) -> bool {
        self.dropped.is_empty() && self.classes.iter().all(|c| c.len() == 1)
    }

    /// The reduced alphabet as reports show it: sizes, the classes (original labels) and the
    /// dropped outputs.
    pub fn to_json(&self, original: &Mechanism) -> serde_json::Value {
        let labels = |ys: &[usize]| -> Vec<&str> {
            ys.iter().map(|&y| original.outputs[y].as_str()).collect()
        };
        serde_json::json!({
            "outputs": original.d(),
            "reduced_outputs": self.mechanism.d(),
            "classes": self.classes.iter().map(|c| labels(c)).collect::<Vec<_>>(),
            "dropped": labels(&self.dropped),
        })
    }

    /// One line: `d = 1000 outputs reduced to 3 classes of equal likelihood ratio`.
    pub fn summary(&self, original: &Mechanism) -> String {
        if self.is_identity() {
            return format!(
                "{} outputs, no two with the same likelihood ratio",
                original.d()
            );
        }
        let mut s = format!(
            "{} outputs reduced to {} classes of equal likelihood ratio",
            original.d(),
            self.mechanism.d()
        );
        if !self.dropped.is_empty() {
            s += &format!(" ({} outputs of probability 0 dropped)", self.dropped.len());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use crate::mechanism::{Entry, Mechanism, load_mechanism};
    use rug::Rational;

    fn q(s: &str) -> Rational {
        crate::enclosure::parse_rational(s).unwrap()
    }

    fn explicit(w0: &[&str], w1: &[&str]) -> Mechanism {
        let row = |r: &[&str]| r.iter().map(|s| Entry::Exact(q(s))).collect();
        Mechanism::new("m", "m".into(), None, [row(w0), row(w1)], None).unwrap()
    }

    #[test]
    fn binary_input_k_rr_becomes_three_symbols() {
        for spec in [
            "k-rr:k=50,exp_eps0=3,inputs=2",
            "k-rr:k=1000,eps0=1.5,inputs=2",
        ] {
            let m = load_mechanism(spec).unwrap();
            let r = m.reduced().unwrap();
            assert_eq!(r.mechanism.d(), 3, "{spec}");
            assert_eq!(r.classes[0], vec![0]);
            assert_eq!(r.classes[1], vec![1]);
            assert_eq!(r.classes[2].len(), m.d() - 2);
            assert!(r.dropped.is_empty());
        }
        let m = load_mechanism("k-rr:k=50,exp_eps0=3,inputs=2").unwrap();
        let r = m.reduced().unwrap().mechanism;
        let rows = r.rational_rows().unwrap();
        assert_eq!(rows[0], vec![q("3/52"), q("1/52"), q("48/52")]);
        assert_eq!(rows[1], vec![q("1/52"), q("3/52"), q("48/52")]);
        // Irrational e^eps0: the merged entry is again a fraction in e^eps0.
        let m = load_mechanism("k-rr:k=5,eps0=1,inputs=2").unwrap();
        let r = m.reduced().unwrap().mechanism;
        assert_eq!(r.rows[0][2].text(), "(3)/(e^eps0 + 4)");
    }

    #[test]
    fn merges_equal_ratios_drops_empty_outputs_and_keeps_distinct_ones() {
        let m = explicit(
            &["1/10", "2/10", "0", "3/10", "0", "4/10"],
            &["2/10", "4/10", "0", "1/10", "1/10", "2/10"],
        );
        let r = m.reduced().unwrap();
        // Ratios 2, 2, –, 1/3, ∞, 1/2.
        assert_eq!(r.classes, vec![vec![0, 1], vec![3], vec![4], vec![5]]);
        assert_eq!(r.dropped, vec![2]);
        let rows = r.mechanism.rational_rows().unwrap();
        assert_eq!(rows[0], vec![q("3/10"), q("3/10"), q("0"), q("4/10")]);
        assert_eq!(rows[1], vec![q("6/10"), q("1/10"), q("1/10"), q("2/10")]);
        assert_eq!(r.mechanism.outputs[0], "0+1");
        // Distinct ratios everywhere: nothing changes.
        let t = explicit(&["0.70", "0.20", "0.10"], &["0.15", "0.55", "0.30"]);
        assert!(t.reduced().unwrap().is_identity());
        // Identical rows: a single class, kept as it is.
        let same = explicit(&["1/2", "1/2", "0"], &["1/2", "1/2", "0"]);
        let r = same.reduced().unwrap();
        assert!(r.is_identity());
        assert_eq!(r.mechanism.d(), 3);
    }
}
