//! The dominant-block quotient geometry of a mechanism sequence (Part III Definition 2.10,
//! Lemma A.1, Theorem 3.1), in exact rational linear algebra, and which part of Theorem 3.1
//! covers it.
//!
//! From the expansion `W_b^{(n)}(y) = a + b/n + O(n⁻²)`: the dominant sets
//! `D_b = {y : a_b(y) > 0}` with laws `p_b = a_b` on them, the rare intensities
//! `α_b(y) = b_b(y)` off them, `μ_b = Σ p_b(y) e_y`, the tangent spaces
//! `M_b = span{e_y − μ_b : y ∈ D_b}`, `M = M_0 + M_1`, the orthogonal projections `Π_G` onto M
//! and `Π_J = I − Π_G`, the components of the hypergraph with hyperedges `D_0`, `D_1` and their
//! atoms `m_C = Π_J e_y`, the jumps `j_{b,y} = Π_J(e_y − μ_b)`, the Lévy measure
//! `ν = Σ (1 − π) α_0(y) δ_{j_{0,y}} + Σ π α_1(y) δ_{j_{1,y}}`, `Δ = Π_J(μ_1 − μ_0)` and
//! `Σ = (1 − π)Γ_0 + πΓ_1`.  Lemma A.1 and the component formula for Δ are checked, not
//! assumed.

use super::lattice::{CompoundPoisson, Jump};
use super::sequence::{KRule, MechanismSequence};
use crate::enclosure::exact_string;
use crate::error::{Error, Result};
use rug::Rational;

/// A square matrix of exact rationals, row-major.
pub type Matrix = Vec<Vec<Rational>>;

/// A jump of the compound-Poisson field: group b, rare output y, `j_{b,y}` and its intensity
/// in ν (`(1 − π)α_0(y)` or `πα_1(y)`).
#[derive(Clone, Debug)]
pub struct GeometryJump {
    pub group: usize,
    pub output: usize,
    pub vector: Vec<Rational>,
    pub intensity: Rational,
}

/// Whether the dominant sets meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    Disjoint,
    Overlap,
}

/// The composition regime of Theorem 3.1(iii).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// `π ∈ (0, 1)`.
    Interior,
    /// `π ∈ {0, 1}` with the minority group growing sublinearly.
    WeakBoundary,
    /// `π ∈ {0, 1}` with a bounded minority group.
    StrongBoundary,
}

/// The geometry of a sequence at a limiting composition π.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub d: usize,
    pub pi: Rational,
    /// `D_b`, in increasing order.
    pub dominant: [Vec<usize>; 2],
    /// `p_b(y)` (zero off `D_b`).
    pub p: [Vec<Rational>; 2],
    /// `α_b(y)` (zero on `D_b`).
    pub alpha: [Vec<Rational>; 2],
    pub mu: [Vec<Rational>; 2],
    /// Spanning vectors `e_y − e_{y₀}` (`y ∈ D_b`) of `M_0` and `M_1`.
    pub tangent: [Vec<Vec<Rational>>; 2],
    /// `dim M_0`, `dim M_1`, `dim M`.
    pub dims: [usize; 3],
    pub pi_g: Matrix,
    pub pi_j: Matrix,
    /// The hypergraph components (sets of outputs) and their atoms `m_C`.
    pub components: Vec<Vec<usize>>,
    pub atoms: Vec<Vec<Rational>>,
    pub delta: Vec<Rational>,
    /// Every `j_{b,y}` for `y ∉ D_b` (ν keeps those with a non-zero vector and intensity).
    pub jumps: Vec<GeometryJump>,
    pub sigma: Matrix,
}

fn dot(a: &[Rational], b: &[Rational]) -> Rational {
    a.iter().zip(b).map(|(x, y)| Rational::from(x * y)).sum()
}

fn unit(d: usize, y: usize) -> Vec<Rational> {
    (0..d).map(|i| Rational::from(u32::from(i == y))).collect()
}

fn apply(m: &Matrix, x: &[Rational]) -> Vec<Rational> {
    m.iter().map(|row| dot(row, x)).collect()
}

fn sub(a: &[Rational], b: &[Rational]) -> Vec<Rational> {
    a.iter()
        .zip(b)
        .map(|(x, y)| Rational::from(x - y))
        .collect()
}

/// The orthogonal projection onto the span of `vectors` (Gram–Schmidt, exact).
fn projection(d: usize, vectors: &[Vec<Rational>]) -> Matrix {
    let mut basis: Vec<Vec<Rational>> = Vec::new();
    for v in vectors {
        let mut u = v.clone();
        for b in &basis {
            let c = dot(v, b) / dot(b, b);
            u = u
                .iter()
                .zip(b)
                .map(|(x, y)| x - Rational::from(&c * y))
                .collect();
        }
        if u.iter().any(|x| *x != 0) {
            basis.push(u);
        }
    }
    let mut m = vec![vec![Rational::new(); d]; d];
    for b in &basis {
        let norm = dot(b, b);
        for i in 0..d {
            for j in 0..d {
                m[i][j] += Rational::from(&b[i] * &b[j]) / &norm;
            }
        }
    }
    m
}

/// The rank of a set of vectors (exact elimination).
fn rank(vectors: &[Vec<Rational>]) -> usize {
    let d = vectors.first().map_or(0, Vec::len);
    projection(d, vectors)
        .iter()
        .enumerate()
        .map(|(i, row)| row[i].clone())
        .sum::<Rational>()
        .to_f64()
        .round() as usize
}

/// The tangent vectors `e_y − e_{y_first}` spanning `M_b`.
fn tangent(d: usize, dominant: &[usize]) -> Vec<Vec<Rational>> {
    dominant
        .iter()
        .skip(1)
        .map(|&y| sub(&unit(d, y), &unit(d, dominant[0])))
        .collect()
}

impl Geometry {
    /// The geometry of `sequence` at the limiting composition `pi`.
    pub fn of(sequence: &MechanismSequence, pi: &Rational) -> Result<Geometry> {
        let d = sequence.d();
        let e = &sequence.expansion;
        let dominant: [Vec<usize>; 2] =
            [0, 1].map(|b| (0..d).filter(|&y| e[b][y].0 > 0).collect::<Vec<_>>());
        let p = [0, 1].map(|b| (0..d).map(|y| e[b][y].0.clone()).collect::<Vec<Rational>>());
        let alpha = [0, 1].map(|b| {
            (0..d)
                .map(|y| {
                    if e[b][y].0 == 0 {
                        e[b][y].1.clone()
                    } else {
                        Rational::new()
                    }
                })
                .collect::<Vec<Rational>>()
        });
        let mu = p.clone();
        let t0 = tangent(d, &dominant[0]);
        let t1 = tangent(d, &dominant[1]);
        let all: Vec<Vec<Rational>> = t0.iter().chain(&t1).cloned().collect();
        let dims = [t0.len(), t1.len(), rank(&all)];
        let pi_g = projection(d, &all);
        let pi_j: Matrix = (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| Rational::from(u32::from(i == j)) - &pi_g[i][j])
                    .collect()
            })
            .collect();
        // Components of the hypergraph on D_0 ∪ D_1 with hyperedges D_0, D_1.
        let meet = dominant[0].iter().any(|y| dominant[1].contains(y));
        let components: Vec<Vec<usize>> = if meet {
            let mut c: Vec<usize> = dominant[0].iter().chain(&dominant[1]).copied().collect();
            c.sort_unstable();
            c.dedup();
            vec![c]
        } else {
            vec![dominant[0].clone(), dominant[1].clone()]
        };
        let atoms: Vec<Vec<Rational>> = components
            .iter()
            .map(|c| apply(&pi_j, &unit(d, c[0])))
            .collect();
        // Lemma A.1: Π_J e_y is constant on each component (and differs across components).
        for (c, atom) in components.iter().zip(&atoms) {
            if c.iter().any(|&y| apply(&pi_j, &unit(d, y)) != *atom) {
                return Err(Error::Internal(
                    "Lemma A.1 check failed: Π_J e_y varies within a component".into(),
                ));
            }
        }
        let delta = apply(&pi_j, &sub(&mu[1], &mu[0]));
        // Δ = Σ_C (p̄_1(C) − p̄_0(C)) m_C.
        let mut by_components = vec![Rational::new(); d];
        for (c, atom) in components.iter().zip(&atoms) {
            let weight: Rational = c.iter().map(|&y| Rational::from(&p[1][y] - &p[0][y])).sum();
            for (x, a) in by_components.iter_mut().zip(atom) {
                *x += Rational::from(&weight * a);
            }
        }
        if by_components != delta {
            return Err(Error::Internal(
                "the component formula for Δ disagrees with Π_J(μ1 − μ0)".into(),
            ));
        }
        let weight = [1 - pi.clone(), pi.clone()];
        let mut jumps = Vec::new();
        for b in 0..2 {
            for y in (0..d).filter(|y| !dominant[b].contains(y)) {
                jumps.push(GeometryJump {
                    group: b,
                    output: y,
                    vector: apply(&pi_j, &sub(&unit(d, y), &mu[b])),
                    intensity: Rational::from(&weight[b] * &alpha[b][y]),
                });
            }
        }
        let mut sigma = vec![vec![Rational::new(); d]; d];
        for b in 0..2 {
            for &y in &dominant[b] {
                let v = sub(&unit(d, y), &mu[b]);
                let w = Rational::from(&weight[b] * &p[b][y]);
                for i in 0..d {
                    for j in 0..d {
                        sigma[i][j] += Rational::from(&w * &v[i]) * &v[j];
                    }
                }
            }
        }
        Ok(Geometry {
            d,
            pi: pi.clone(),
            dominant,
            p,
            alpha,
            mu,
            tangent: [t0, t1],
            dims,
            pi_g,
            pi_j,
            components,
            atoms,
            delta,
            jumps,
            sigma,
        })
    }

    /// Whether `D_0 ∩ D_1` is empty.
    pub fn overlap(&self) -> Overlap {
        if self.components.len() == 1 {
            Overlap::Overlap
        } else {
            Overlap::Disjoint
        }
    }

    /// The specialisation after Theorem 3.1 that the sizes of the dominant sets name.
    pub fn specialisation(&self) -> String {
        let (a, b) = (self.dominant[0].len(), self.dominant[1].len());
        match (a, b, self.overlap()) {
            (1, 1, Overlap::Disjoint) => "(a) single-dominant".into(),
            (1, 1, Overlap::Overlap) => {
                "(a) single-dominant, common dominant output (Δ = 0)".into()
            }
            (2, 2, Overlap::Disjoint) => "(b) two-dominant disjoint".into(),
            (2, 2, Overlap::Overlap) => "(c) two-dominant overlap (Δ = 0)".into(),
            (1, _, Overlap::Disjoint) | (_, 1, Overlap::Disjoint) => {
                format!("(d) mixed-size (|D0| = {a}, |D1| = {b})")
            }
            _ => format!("general (|D0| = {a}, |D1| = {b}, {:?})", self.overlap()),
        }
    }

    /// The Lévy measure ν: the jumps with a non-zero vector and a positive intensity.
    pub fn nu(&self) -> Vec<&GeometryJump> {
        self.jumps
            .iter()
            .filter(|j| j.intensity > 0 && j.vector.iter().any(|x| *x != 0))
            .collect()
    }

    /// The projected jump experiment `(L(J), L(J + Δ))` of Theorem 3.1(ii).
    pub fn limit_pair(&self) -> Result<CompoundPoisson> {
        CompoundPoisson::new(
            "the limit jump field",
            self.nu()
                .into_iter()
                .map(|j| Jump {
                    vector: j.vector.clone(),
                    intensity: j.intensity.clone(),
                })
                .collect(),
            self.delta.clone(),
        )
    }

    /// Theorem 7.3's compatibility in the disjoint case: for each block `D_b` reached by the
    /// other group's rare outputs, their split law `α_{1−b}|D_b` (normalised) equals `p_b`.
    pub fn compatible(&self) -> bool {
        (0..2).all(|b| {
            let cross: Rational = self.dominant[b]
                .iter()
                .map(|&y| self.alpha[1 - b][y].clone())
                .sum();
            cross == 0
                || self.dominant[b]
                    .iter()
                    .all(|&y| Rational::from(&self.alpha[1 - b][y] / &cross) == self.p[b][y])
        })
    }
}

impl Geometry {
    /// The geometry as reports and certificates hold it: every vector and matrix exactly.
    pub fn to_json(&self) -> serde_json::Value {
        let vector = |v: &[Rational]| -> serde_json::Value { v.iter().map(exact_string).collect() };
        let matrix = |m: &Matrix| -> serde_json::Value { m.iter().map(|r| vector(r)).collect() };
        serde_json::json!({
            "d": self.d,
            "pi": exact_string(&self.pi),
            "dominant_sets": [self.dominant[0], self.dominant[1]],
            "dominant_laws": [vector(&self.p[0]), vector(&self.p[1])],
            "rare_intensities": [vector(&self.alpha[0]), vector(&self.alpha[1])],
            "mu": [vector(&self.mu[0]), vector(&self.mu[1])],
            "tangent_m0": self.tangent[0].iter().map(|v| vector(v)).collect::<Vec<_>>(),
            "tangent_m1": self.tangent[1].iter().map(|v| vector(v)).collect::<Vec<_>>(),
            "dim_m0": self.dims[0],
            "dim_m1": self.dims[1],
            "dim_m": self.dims[2],
            "projection_g": matrix(&self.pi_g),
            "projection_j": matrix(&self.pi_j),
            "components": self.components,
            "atoms": self.atoms.iter().map(|a| vector(a)).collect::<Vec<_>>(),
            "delta_shift": vector(&self.delta),
            "jumps": self.jumps.iter().map(|j| serde_json::json!({
                "group": j.group, "output": j.output,
                "vector": vector(&j.vector), "intensity": exact_string(&j.intensity),
            })).collect::<Vec<_>>(),
            "levy_measure_atoms": self.nu().len(),
            "sigma": matrix(&self.sigma),
            "overlap": format!("{:?}", self.overlap()).to_lowercase(),
            "specialisation": self.specialisation(),
            "compatible_theorem_7_3": self.compatible(),
        })
    }
}

/// Which part of Theorem 3.1(iii) covers a sequence, and the rate the paper proves.
#[derive(Clone, Debug)]
pub struct Coverage {
    pub regime: Regime,
    /// The part of Theorem 3.1(iii) that gives `δ_n → δ_∞` (`None`: not covered).
    pub part: Option<&'static str>,
    /// The proved order of `|δ_n − δ_∞|` as a power of `1/n`, and its source (`None`: none).
    pub order: Option<(f64, &'static str)>,
    pub note: String,
}

/// Classifies the sequence with composition rule `rule`.
pub fn coverage(g: &Geometry, rule: &KRule) -> Coverage {
    let pi = rule.pi();
    let regime = if pi > 0 && pi < 1 {
        Regime::Interior
    } else if rule.bounded_minority() {
        Regime::StrongBoundary
    } else {
        Regime::WeakBoundary
    };
    let condition_3 = rule.rate_one_over_n();
    let part = match regime {
        Regime::Interior => Some("(a) interior"),
        Regime::WeakBoundary => Some("(b) weak boundary"),
        Regime::StrongBoundary => {
            let (major, minor) = if pi == 0 { (0, 1) } else { (1, 0) };
            let absorbed = g.dominant[minor]
                .iter()
                .all(|y| g.dominant[major].contains(y));
            (absorbed || g.dominant[minor].len() == 1).then_some("(c) strong-boundary regularity")
        }
    };
    let order = if part.is_none() || !condition_3 {
        None
    } else if g.dims[2] == 0 {
        Some((
            1.0,
            "Theorem 3.1(ii): M = {0}, so the full statistic is the projected one; TV O(1/n)",
        ))
    } else if regime == Regime::Interior && g.overlap() == Overlap::Disjoint && g.compatible() {
        Some((
            1.0,
            "Theorem 7.3: compatible cross split laws restore O(1/n)",
        ))
    } else if regime == Regime::Interior {
        Some((
            0.5,
            "Theorem 3.1(iii)(a): C(1 + e^ε)/√n, sharp in general (Theorem 7.2)",
        ))
    } else {
        None
    };
    let note = match (part, regime) {
        (None, _) => format!(
            "strong boundary (π = {}, bounded minority) without D_minor ⊆ D_major or |D_minor| = 1: \
             Theorem 3.1(iii) does not cover it, and the projected jump limit need not govern the \
             privacy curve (Proposition 6.1); no limit is printed",
            exact_string(&pi)
        ),
        (Some(_), _) if order.is_none() => {
            "δ_n → δ_∞ is proved, without a rate for this case".to_string()
        }
        (Some(_), _) => "the paper's constants are not explicit: the rate is a prediction".into(),
    };
    Coverage {
        regime,
        part,
        order,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::sequence::load_sequence;

    fn sequence(text: &str) -> MechanismSequence {
        let path = std::env::temp_dir().join(format!(
            "shufflecert-geometry-{}.toml",
            text.len() * 31 + text.bytes().map(usize::from).sum::<usize>()
        ));
        std::fs::write(&path, text).unwrap();
        load_sequence(path.to_str().unwrap()).unwrap()
    }

    #[test]
    fn single_dominant_k_rr() {
        let s = load_sequence("k-rr:k=3,exp_eps0=n/2,inputs=2").unwrap();
        let g = Geometry::of(&s, &Rational::new()).unwrap();
        assert_eq!(g.dominant, [vec![0], vec![1]]);
        assert_eq!(g.dims, [0, 0, 0]);
        assert_eq!(
            g.delta,
            vec![Rational::from(-1), Rational::from(1), Rational::new()]
        );
        // ν at π = 0: the two rare outputs of the 0-group, intensity 2 each.
        let nu = g.nu();
        assert_eq!(nu.len(), 2);
        assert!(nu.iter().all(|j| j.intensity == 2 && j.group == 0));
        assert_eq!(g.specialisation(), "(a) single-dominant");
        let c = coverage(&g, &KRule::Fixed(0));
        assert_eq!(c.regime, Regime::StrongBoundary);
        assert!(c.part.is_some() && c.order.unwrap().0 == 1.0);
    }

    #[test]
    fn proposition_6_1_is_not_covered() {
        let s = sequence("w0 = [\"1/2\", \"1/2\", \"0\"]\nw1 = [\"0\", \"1/2\", \"1/2\"]\n");
        let g = Geometry::of(&s, &Rational::new()).unwrap();
        assert_eq!(g.overlap(), Overlap::Overlap);
        assert!(g.delta.iter().all(|x| *x == 0));
        assert!(g.nu().is_empty());
        // M is the zero-sum subspace of R^3 (dim 2).
        assert_eq!(g.dims, [1, 1, 2]);
        let c = coverage(&g, &KRule::Fixed(0));
        assert!(c.part.is_none() && c.note.contains("Proposition 6.1"));
        // In the interior it is covered (Δ = 0, δ_∞ = 0).
        let c = coverage(&g, &KRule::Fraction(Rational::from((1, 2))));
        assert_eq!(c.part, Some("(a) interior"));
    }

    #[test]
    fn two_dominant_disjoint_geometry_and_theorem_7_2_incompatibility() {
        // Theorem 7.2's array with p = 1/3, q = 2/3, λ = 1.
        let s = sequence(
            "w0 = [\"1/3\", \"2/3\", \"0\", \"0\"]\n\
             w1 = [[\"0\", \"2/3\"], [\"0\", \"1/3\"], [\"1/3\", \"-1/3\"], [\"2/3\", \"-2/3\"]]\n",
        );
        let g = Geometry::of(&s, &Rational::from((1, 2))).unwrap();
        assert_eq!(g.overlap(), Overlap::Disjoint);
        assert_eq!(g.dims, [1, 1, 2]);
        assert_eq!(g.specialisation(), "(b) two-dominant disjoint");
        assert!(!g.compatible());
        // Π_J projects onto the block indicators: atoms (1/2, 1/2, 0, 0) and (0, 0, 1/2, 1/2).
        let half = Rational::from((1, 2));
        assert_eq!(
            g.atoms[0],
            vec![half.clone(), half.clone(), Rational::new(), Rational::new()]
        );
        // Δ = m_{D1} − m_{D0}.
        assert_eq!(
            g.delta,
            vec![-half.clone(), -half.clone(), half.clone(), half]
        );
        // Σ = ½ Γ0 + ½ Γ1 with Γ0 = (1/3)(2/3) g0 g0ᵀ.
        assert_eq!(g.sigma[0][0], Rational::from((1, 9)));
        assert_eq!(g.sigma[0][1], Rational::from((-1, 9)));
        let c = coverage(&g, &KRule::Fraction(Rational::from((1, 2))));
        assert_eq!(c.order.unwrap().0, 0.5);
    }
}
