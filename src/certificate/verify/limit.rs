//! `limit` and `berry-esseen` certificates re-derived (proofs-notes/certificates.md,
//! limit-study.md).
//!
//! `limit`: the sequence is rebuilt from its text (or family string); its geometry is checked
//! by its defining properties (Definition 2.10: Π_G symmetric, idempotent, fixing M and of
//! trace dim M by an elimination of its own; Δ, the jumps, ν and Σ from Π_J) and must be the
//! geometry the tool computes; the coverage labels, the limit pair, the resonance flags and the
//! compositions k_n are derived again.  Every finite-n δ and the limit δ are recomputed in MPFR
//! at a higher precision (the limit pair on deeper windows), exactly where affordable and by
//! the brute-force reference at n ≤ 12.  Each gap is re-derived as the distance of the verified
//! enclosures (and of each route's); δ_n from the limit curve by Lemma 2.4 on the verified limit
//! δ with the TV budget recomputed in 256-bit MPFR, and against the recomputed δ_n itself; each
//! `useful` flag from the certified limit δ and budget; Theorem 7.2's auxiliary TV exactly
//! (Theorem 7.1 at the binomial's mode).
//!
//! `berry-esseen`: c = λ^{-1/2} checked exactly (`c_lo²·λ ≤ 1 ≤ c_hi²·λ`), each ε against the
//! scale, the lattice curves recomputed like `--experiment` pairs, the Gaussian curve in MPFR
//! at a higher precision on a bracket of μ of verify's own, and each gap from the verified
//! enclosures.
//!
//! The observations (under `observed`, `certified: false`) and the proved order are not
//! certified: they are derived again from the certified values only so that an edited one does
//! not pass unnoticed, to a relative 1e-9.

use super::pair::{PairSubject, delta_routes};
use super::{Settings, Tally, users_at};
use crate::arith::mpfr::{MpfrCtx, MpfrInterval};
use crate::arith::{Scalar, Transcendental, exp_bracket};
use crate::enclosure::{Enclosure, Endpoint, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::limits::berry_esseen;
use crate::limits::lattice::CompoundPoisson;
use crate::limits::sequence::{KRule, MechanismSequence, sequence_from_source};
use crate::limits::study::{self, single_dominant_budget_bits};
use crate::limits::tv::curve_transfer;
use crate::query::{Backend, DeltaRow, Threshold};
use rug::ops::Pow;
use rug::{Integer, Rational};
use serde_json::{Value, json};

/// The precision the TV budgets of a `limit` certificate are recomputed in.
const BUDGET_BITS: u32 = 256;

/// The largest binomial whose mode is evaluated in exact rationals (beyond, 512-bit MPFR).
const EXACT_BINOMIAL_USERS: u64 = 200_000;

/// What `limit` does not certify, and why it is looked at at all.
const LIMIT_OBSERVATIONS: &str = "not certified: the observations under `observed` (n·gap, √n·gap, the observed orders, relative widths, √n·TV) and the proved order (a prediction), derived again from the certified values only as a consistency check (relative 1e-9)";

/// What `berry-esseen` does not certify.
const BERRY_ESSEEN_OBSERVATIONS: &str = "not certified: the observations under `observed` (gap/c and the observed order), derived again from the certified values only as a consistency check (relative 1e-9)";

/// The route of a value derived from certified values that are verified themselves.
const FROM_CERTIFIED: &str =
    "derived from the certified enclosures, each verified (gap = distance of the two)";

/// An enclosure of the certificate, or a problem naming its field.
fn enclosure(v: &Value, field: &str, tally: &mut Tally) -> Option<Enclosure> {
    match super::enclosure_at(v, field) {
        Ok(e) => Some(e),
        Err(e) => {
            tally.problem(format!("{field}: {e}"));
            None
        }
    }
}

/// An exact number of the certificate, or a problem naming its field.
fn exact(v: &Value, field: &str, tally: &mut Tally) -> Option<Rational> {
    let q = v.as_str().and_then(parse_rational);
    if q.is_none() {
        tally.problem(format!("{field}: {v} is not an exact number"));
    }
    q
}

fn strings(v: &[Rational]) -> Value {
    v.iter().map(exact_string).collect()
}

/// An observation held against its value derived again from the certified values.
fn observation(recorded: &Value, derived: Option<f64>, field: &str, tally: &mut Tally) {
    let derived = derived.filter(|x| x.is_finite());
    let agrees = match (recorded.as_f64(), derived) {
        (None, None) => recorded.is_null(),
        (Some(r), Some(d)) => (r - d).abs() <= 1e-9 * d.abs().max(r.abs()) + 1e-300,
        _ => false,
    };
    if !agrees {
        tally.problem(format!(
            "{field}: records {recorded}, but the certified values give {} (an observation, not certified)",
            derived.map_or("none".to_string(), |d| d.to_string())
        ));
    }
}

/// An `observed` object must say it is not certified.
fn uncertified(observed: &Value, field: &str, tally: &mut Tally) {
    if observed["certified"] != json!(false) {
        tally.problem(format!(
            "{field}.certified: an observation must be labelled certified: false, got {}",
            observed["certified"]
        ));
    }
}

/// `e^ε` rounded up in `bits`-bit MPFR (exactly for a threshold given as `e^ε`).
fn exp_upper(t: &Threshold, bits: u32) -> Rational {
    match t {
        Threshold::Eps(e) => exp_bracket(e, bits).1,
        Threshold::ExpEps(c) => c.clone(),
    }
}

/// The thresholds of `list` (objects with `eps`), or a problem.
fn thresholds_of(list: &Value, field: &str, tally: &mut Tally) -> Option<Vec<Threshold>> {
    let items = list.as_array().filter(|a| !a.is_empty());
    let Some(items) = items else {
        tally.problem(format!("{field}: no thresholds"));
        return None;
    };
    items
        .iter()
        .enumerate()
        .map(|(t, item)| {
            let threshold = item["eps"].as_str().and_then(Threshold::from_text);
            if threshold.is_none() {
                tally.problem(format!("{field}.{t}.eps: unreadable: {}", item["eps"]));
            }
            threshold
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The geometry by its defining properties.

type Matrix = Vec<Vec<Rational>>;

fn vector_at(v: &Value) -> Option<Vec<Rational>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().and_then(parse_rational))
        .collect()
}

fn matrix_at(v: &Value, d: usize) -> Option<Matrix> {
    let m: Matrix = v.as_array()?.iter().map(vector_at).collect::<Option<_>>()?;
    (m.len() == d && m.iter().all(|r| r.len() == d)).then_some(m)
}

fn times(m: &Matrix, x: &[Rational]) -> Vec<Rational> {
    m.iter()
        .map(|row| row.iter().zip(x).map(|(a, b)| Rational::from(a * b)).sum())
        .collect()
}

fn unit(d: usize, y: usize) -> Vec<Rational> {
    (0..d).map(|i| Rational::from(u32::from(i == y))).collect()
}

fn minus(a: &[Rational], b: &[Rational]) -> Vec<Rational> {
    a.iter()
        .zip(b)
        .map(|(x, y)| Rational::from(x - y))
        .collect()
}

/// The rank of a list of vectors by row reduction (not Gram–Schmidt, which the tool uses).
fn rank(vectors: &[Vec<Rational>]) -> usize {
    let mut rows: Vec<Vec<Rational>> = vectors.to_vec();
    let cols = rows.first().map_or(0, Vec::len);
    let mut rank = 0;
    for col in 0..cols {
        let Some(pivot) = (rank..rows.len()).find(|&r| rows[r][col] != 0) else {
            continue;
        };
        rows.swap(rank, pivot);
        let lead = rows[rank].clone();
        for r in 0..rows.len() {
            if r != rank && rows[r][col] != 0 {
                let factor = Rational::from(&rows[r][col] / &lead[col]);
                for (x, l) in rows[r].iter_mut().zip(&lead) {
                    *x -= Rational::from(&factor * l);
                }
            }
        }
        rank += 1;
    }
    rank
}

/// Checks a geometry (as reports hold it) against Definition 2.10 for the expansion of `seq`
/// at the limiting composition `pi`, by the properties that determine it: the dominant sets,
/// laws, intensities and means from the expansion; Π_G the orthogonal projection onto
/// `M = span{e_y − e_{y₀} : y ∈ D_b}` (symmetric, idempotent, fixing every spanning vector,
/// trace = rank of the spanning vectors by row reduction: its range is then M); Π_J = I − Π_G;
/// Lemma A.1 on each component; Δ, the jumps, ν and Σ from their formulas.  Every failure is a
/// problem under `field`.
fn check_geometry(
    g: &Value,
    seq: &MechanismSequence,
    pi: &Rational,
    field: &str,
    tally: &mut Tally,
) {
    let mut fail = |what: &str| tally.problem(format!("{field}.{what}"));
    let d = seq.d();
    if g["d"].as_u64() != Some(d as u64) {
        fail(&format!(
            "d: records {}, the sequence has {d} outputs",
            g["d"]
        ));
        return;
    }
    if g["pi"].as_str().and_then(parse_rational).as_ref() != Some(pi) {
        fail(&format!(
            "pi: records {}, the rule's limit is {}",
            g["pi"],
            exact_string(pi)
        ));
    }
    let e = &seq.expansion;
    let dominant: [Vec<usize>; 2] = [0, 1].map(|b| (0..d).filter(|&y| e[b][y].0 > 0).collect());
    let p: [Vec<Rational>; 2] = [0, 1].map(|b| (0..d).map(|y| e[b][y].0.clone()).collect());
    let alpha: [Vec<Rational>; 2] = [0, 1].map(|b| {
        (0..d)
            .map(|y| {
                if e[b][y].0 == 0 {
                    e[b][y].1.clone()
                } else {
                    Rational::new()
                }
            })
            .collect()
    });
    if g["dominant_sets"] != json!(dominant) {
        fail(&format!(
            "dominant_sets: records {}, but D_b = {{y : a_b(y) > 0}} = {}",
            g["dominant_sets"],
            json!(dominant)
        ));
    }
    for (key, value) in [
        ("dominant_laws", &p),
        ("mu", &p),
        ("rare_intensities", &alpha),
    ] {
        let expected = json!([strings(&value[0]), strings(&value[1])]);
        if g[key] != expected {
            fail(&format!(
                "{key}: records {}, but the expansion gives {expected}",
                g[key]
            ));
        }
    }
    // M_b spanned by e_y − e_{y₀}, y ∈ D_b: independent, so dim M_b = |D_b| − 1.
    let tangent = |b: usize| -> Vec<Vec<Rational>> {
        dominant[b]
            .iter()
            .skip(1)
            .map(|&y| minus(&unit(d, y), &unit(d, dominant[b][0])))
            .collect()
    };
    let all: Vec<Vec<Rational>> = tangent(0).into_iter().chain(tangent(1)).collect();
    let dim = rank(&all);
    for (b, key) in ["tangent_m0", "tangent_m1"].iter().enumerate() {
        let t = tangent(b);
        let expected: Value = t.iter().map(|v| strings(v)).collect();
        if g[*key] != expected {
            fail(&format!(
                "{key}: records {}, but e_y − e_y0 over D_{b} is {expected}",
                g[*key]
            ));
        }
        if g[format!("dim_m{b}")].as_u64() != Some(t.len() as u64) {
            fail(&format!(
                "dim_m{b}: records {}, but dim M_{b} = {}",
                g[format!("dim_m{b}")],
                t.len()
            ));
        }
    }
    if g["dim_m"].as_u64() != Some(dim as u64) {
        fail(&format!(
            "dim_m: records {}, but row reduction gives rank {dim}",
            g["dim_m"]
        ));
    }
    let (Some(pg), Some(pj)) = (
        matrix_at(&g["projection_g"], d),
        matrix_at(&g["projection_j"], d),
    ) else {
        fail("projection_g: not two d × d matrices of exact numbers (with projection_j)");
        return;
    };
    let symmetric = (0..d).all(|i| (0..d).all(|j| pg[i][j] == pg[j][i]));
    let idempotent = (0..d).all(|i| {
        (0..d).all(|j| {
            (0..d)
                .map(|k| Rational::from(&pg[i][k] * &pg[k][j]))
                .sum::<Rational>()
                == pg[i][j]
        })
    });
    let fixes_m = all.iter().all(|v| times(&pg, v) == *v);
    let trace: Rational = (0..d).map(|i| pg[i][i].clone()).sum();
    if !(symmetric && idempotent && fixes_m && trace == dim as u64) {
        fail(&format!(
            "projection_g: not the orthogonal projection onto M (symmetric {symmetric}, idempotent {idempotent}, fixes M {fixes_m}, trace {} for dim M = {dim})",
            exact_string(&trace)
        ));
    }
    let identity_minus =
        (0..d).all(|i| (0..d).all(|j| pj[i][j] == unit(d, i)[j].clone() - &pg[i][j]));
    if !identity_minus {
        fail("projection_j: is not I − Π_G");
    }
    // Components of the hypergraph with hyperedges D_0, D_1, and Lemma A.1.
    let components: Vec<Vec<usize>> = if dominant[0].iter().any(|y| dominant[1].contains(y)) {
        let mut c: Vec<usize> = dominant[0].iter().chain(&dominant[1]).copied().collect();
        c.sort_unstable();
        c.dedup();
        vec![c]
    } else {
        vec![dominant[0].clone(), dominant[1].clone()]
    };
    if g["components"] != json!(components) {
        fail(&format!(
            "components: records {}, the hypergraph's are {}",
            g["components"],
            json!(components)
        ));
    }
    let atoms: Vec<Value> = components
        .iter()
        .map(|c| strings(&times(&pj, &unit(d, c.first().copied().unwrap_or(0)))))
        .collect();
    for c in &components {
        let first = times(&pj, &unit(d, c.first().copied().unwrap_or(0)));
        if c.iter().any(|&y| times(&pj, &unit(d, y)) != first) {
            fail("projection_j: Π_J e_y varies within a component (Lemma A.1)");
        }
    }
    if g["atoms"] != json!(atoms) {
        fail(&format!(
            "atoms: records {}, but Π_J e_y on each component is {}",
            g["atoms"],
            json!(atoms)
        ));
    }
    let delta = times(&pj, &minus(&p[1], &p[0]));
    if g["delta_shift"] != strings(&delta) {
        fail(&format!(
            "delta_shift: records {}, but Π_J(μ1 − μ0) = {}",
            g["delta_shift"],
            strings(&delta)
        ));
    }
    let weight = [1 - pi.clone(), pi.clone()];
    let mut jumps = Vec::new();
    let mut atoms_of_nu = 0u64;
    for b in 0..2 {
        for y in (0..d).filter(|y| !dominant[b].contains(y)) {
            let vector = times(&pj, &minus(&unit(d, y), &p[b]));
            let intensity = Rational::from(&weight[b] * &alpha[b][y]);
            if intensity > 0 && vector.iter().any(|x| *x != 0) {
                atoms_of_nu += 1;
            }
            jumps.push(json!({
                "group": b, "output": y,
                "vector": strings(&vector), "intensity": exact_string(&intensity),
            }));
        }
    }
    if g["jumps"] != json!(jumps) {
        fail(&format!(
            "jumps: records {}, but j_(b,y) = Π_J(e_y − μ_b) with intensity (1 − π)α_0 or πα_1 gives {}",
            g["jumps"],
            json!(jumps)
        ));
    }
    if g["levy_measure_atoms"].as_u64() != Some(atoms_of_nu) {
        fail(&format!(
            "levy_measure_atoms: records {}, ν has {atoms_of_nu}",
            g["levy_measure_atoms"]
        ));
    }
    let mut sigma = vec![vec![Rational::new(); d]; d];
    for b in 0..2 {
        for &y in &dominant[b] {
            let v = minus(&unit(d, y), &p[b]);
            let w = Rational::from(&weight[b] * &p[b][y]);
            for i in 0..d {
                for j in 0..d {
                    sigma[i][j] += Rational::from(&w * &v[i]) * &v[j];
                }
            }
        }
    }
    let sigma_json: Value = sigma.iter().map(|r| strings(r)).collect();
    if g["sigma"] != sigma_json {
        fail(&format!(
            "sigma: records {}, but (1 − π)Γ_0 + πΓ_1 = {sigma_json}",
            g["sigma"]
        ));
    }
}

/// The limit pair `(L(J), L(J + Δ))` of a checked geometry: ν's atoms and Δ.
fn limit_pair_of(g: &Value) -> Value {
    let jumps: Vec<Value> = g["jumps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|j| {
            let positive = j["intensity"]
                .as_str()
                .and_then(parse_rational)
                .is_some_and(|x| x > 0);
            let nonzero = vector_at(&j["vector"]).is_some_and(|v| v.iter().any(|x| *x != 0));
            positive && nonzero
        })
        .map(|j| json!({ "vector": j["vector"], "intensity": j["intensity"] }))
        .collect();
    json!({ "shift": g["delta_shift"], "jumps": jumps })
}

// ---------------------------------------------------------------------------------------------
// Theorem 7.1 exactly.

/// `|q − p|·max_j P(S = j)`, `S ~ Bin(m, p)`, exactly: the pmf is unimodal with its maximum at
/// `⌊(m + 1)p⌋` (the ratio `P(j+1)/P(j) = (m − j)p/((j + 1)(1 − p))` is ≥ 1 exactly when
/// `j + 1 ≤ (m + 1)p`); its neighbours are evaluated too.
fn binomial_plus_bernoulli_exact(m: u64, p: &Rational, q: &Rational) -> Rational {
    let one_minus = Rational::from(1) - p.clone();
    let pmf = |j: u64| -> Rational {
        let c = Integer::from(m).binomial(j as u32);
        Rational::from(c)
            * Rational::from(p.pow(j as u32))
            * Rational::from((&one_minus).pow((m - j) as u32))
    };
    let mode = Rational::from(p * (m + 1))
        .floor()
        .numer()
        .to_u64()
        .unwrap_or(0)
        .min(m);
    let best = [mode.saturating_sub(1), mode, (mode + 1).min(m)]
        .into_iter()
        .map(pmf)
        .fold(Rational::new(), |a, b| a.max(b));
    Rational::from(q - p).abs() * best
}

// ---------------------------------------------------------------------------------------------
// `limit`.

/// The settings every curve of a study runs with.
fn study_settings() -> Settings {
    Settings {
        backend: Backend::Interval,
        exact_ctx: Default::default(),
        options: Default::default(),
        escalate_above: Some(crate::query::DEFAULT_REL_WIDTH),
    }
}

/// Verifies a `limit` certificate.
pub(super) fn verify_limit(cert: &Value, tally: &mut Tally) -> Result<()> {
    let report = &cert["report"];
    let given = cert["sequence"]["given"].as_str().unwrap_or_default();
    let sequence = match sequence_from_source(given, cert["sequence"]["text"].as_str()) {
        Ok(s) => s,
        Err(e) => {
            tally.problem(format!("sequence.given: cannot be read back: {e}"));
            return Ok(());
        }
    };
    if report["sequence"] != json!(sequence.name) {
        tally.problem(format!(
            "report.sequence: records {}, but the sequence as given is named \"{}\"",
            report["sequence"], sequence.name
        ));
    }
    let settings = study_settings();
    if cert["settings"] != settings.to_json() {
        tally.problem(format!(
            "settings: records {}, but every curve of limit runs with {}",
            cert["settings"],
            settings.to_json()
        ));
    }
    let Some(rule) = report["k_rule"]
        .as_str()
        .and_then(|r| KRule::parse(r).ok())
        .filter(|r| report["k_rule"] == json!(r.text()))
    else {
        tally.problem(format!(
            "report.k_rule: {} is not a composition rule as written",
            report["k_rule"]
        ));
        return Ok(());
    };
    let setup = match study::setup(&sequence, &rule) {
        Ok(s) => s,
        Err(e) => {
            tally.problem(format!(
                "sequence.given: its geometry cannot be computed: {e}"
            ));
            return Ok(());
        }
    };
    // The geometry: by its defining properties, and as the tool computes it.
    let pi = rule.pi();
    tally.route("geometry by its defining properties (Definition 2.10: Π_G symmetric, idempotent, fixing M, trace = rank by row reduction; Lemma A.1; Δ, jumps, ν and Σ from Π_J)");
    check_geometry(
        &report["geometry"],
        &setup.described,
        &pi,
        "geometry",
        tally,
    );
    let recomputed = setup.geometry.to_json();
    if report["geometry"] != recomputed {
        tally.problem(format!(
            "report.geometry: differs from the geometry of the sequence as given ({recomputed})"
        ));
    }
    let working = setup.working_geometry.to_json();
    check_geometry(
        &working,
        &setup.working,
        &pi,
        "limit_pair (working geometry)",
        tally,
    );
    // The coverage labels.
    let c = &setup.coverage;
    for (key, expected) in [
        ("regime", json!(format!("{:?}", c.regime))),
        ("theorem_3_1_iii_part", json!(c.part)),
        (
            "proved_order",
            json!(c.order.map(
                |(o, src)| json!({"power_of_one_over_n": o, "source": src, "certified": false})
            )),
        ),
        ("note", json!(c.note)),
        ("limit_on_reduced_alphabet", json!(setup.limit_on_reduced)),
        (
            "geometry_on_reduced_alphabet",
            json!(setup.geometry_on_reduced),
        ),
    ] {
        if report[key] != expected {
            tally.problem(format!(
                "report.{key}: records {}, but the sequence and rule give {expected}",
                report[key]
            ));
        }
    }
    let Some(thresholds) = thresholds_of(&report["thresholds"], "thresholds", tally) else {
        return Ok(());
    };
    // The limit δ.
    let covered = c.part.is_some();
    let mut limit_routes: Vec<(String, Vec<DeltaRow>)> = Vec::new();
    let mut limit_certified: Vec<Option<[Enclosure; 2]>> = vec![None; thresholds.len()];
    let mut pair: Option<CompoundPoisson> = None;
    if covered {
        let expected = limit_pair_of(&working);
        let recorded = &report["limit_pair"];
        if recorded["shift"] != expected["shift"] || recorded["jumps"] != expected["jumps"] {
            tally.problem(format!(
                "report.limit_pair: records {recorded}, but the (checked) working geometry's ν and Δ are {expected}"
            ));
        }
        let built = setup.working_geometry.limit_pair()?;
        for (t, item) in report["thresholds"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let mut both = Vec::new();
            for dir in ["qp", "pq"] {
                let field = format!("thresholds.{t}.delta_limit_{dir}");
                if let Some(e) = enclosure(&item[format!("delta_limit_{dir}")], &field, tally) {
                    tally.certified(&field, e.clone(), true);
                    both.push(e);
                }
            }
            if let Ok(both) = <[Enclosure; 2]>::try_from(both) {
                limit_certified[t] = Some(both);
            }
        }
        let subject = PairSubject::Experiment(study::limit_experiment(&built));
        limit_routes = delta_routes(
            "thresholds.",
            &report["thresholds"],
            ["delta_limit_qp", "delta_limit_pq"],
            &report["limit_pair"]["arithmetic"],
            &subject,
            &settings,
            tally,
        )?;
        let resonant = study::resonances(&built, &thresholds)?;
        for (t, flag) in resonant.iter().enumerate() {
            if report["thresholds"][t]["resonant"] != json!(flag) {
                tally.problem(format!(
                    "thresholds.{t}.resonant: records {}, but the limit pair's likelihood ratios make it {flag}",
                    report["thresholds"][t]["resonant"]
                ));
            }
        }
        pair = Some(built);
    } else {
        if !report["limit_pair"].is_null() {
            tally.problem("report.limit_pair: Theorem 3.1(iii) does not cover the sequence, so there is no limit pair");
        }
        for (t, item) in report["thresholds"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            for key in ["delta_limit_qp", "delta_limit_pq"] {
                if !item[key].is_null() {
                    tally.problem(format!("thresholds.{t}.{key}: a limit δ where Theorem 3.1(iii) does not cover the sequence"));
                }
            }
            if item["resonant"] != json!(false) {
                tally.problem(format!(
                    "thresholds.{t}.resonant: flagged without a limit pair"
                ));
            }
        }
    }
    // Every n.
    let rows = report["rows"].as_array().map_or(&[][..], Vec::as_slice);
    if rows.is_empty() {
        tally.problem("report.rows: no n");
    }
    let mut previous: Option<(u64, Vec<[Option<Enclosure>; 2]>)> = None;
    for (i, row) in rows.iter().enumerate() {
        let prefix = format!("rows.{i}");
        let n = users_at(&row["n"], &format!("{prefix}.n"))?;
        if previous.as_ref().is_some_and(|(m, _)| *m >= n) {
            tally.problem(format!("{prefix}.n: the sizes must increase"));
        }
        let k = match rule.k(n) {
            Ok(k) => k,
            Err(e) => {
                tally.problem(format!("{prefix}.n: {e}"));
                continue;
            }
        };
        if row["k"].as_u64() != Some(k) {
            tally.problem(format!(
                "{prefix}.k: records {}, but {} gives k = {k} at n = {n}",
                row["k"],
                rule.text()
            ));
        }
        let results = row["results"].as_array().map_or(&[][..], Vec::as_slice);
        if results.len() != thresholds.len() {
            tally.problem(format!(
                "{prefix}.results: {} rows for {} thresholds",
                results.len(),
                thresholds.len()
            ));
            continue;
        }
        for (t, r) in results.iter().enumerate() {
            if r["eps"] != report["thresholds"][t]["eps"] {
                tally.problem(format!(
                    "{prefix}.results.{t}.eps: {} is not the threshold {}",
                    r["eps"], report["thresholds"][t]["eps"]
                ));
            }
        }
        let mechanism = match sequence.at(n) {
            Ok(m) => m,
            Err(e) => {
                tally.problem(format!(
                    "{prefix}.n: the sequence has no mechanism at n = {n}: {e}"
                ));
                continue;
            }
        };
        let mut finite: Vec<[Option<Enclosure>; 2]> = Vec::new();
        let mut gaps: Vec<[Option<Enclosure>; 2]> = vec![[None, None]; results.len()];
        for (t, r) in results.iter().enumerate() {
            let mut pair_of = [None, None];
            for (d, dir) in ["qp", "pq"].iter().enumerate() {
                let field = format!("{prefix}.results.{t}.delta_{dir}");
                if let Some(e) = enclosure(&r[format!("delta_{dir}")], &field, tally) {
                    tally.certified(&field, e.clone(), true);
                    pair_of[d] = Some(e);
                }
            }
            finite.push(pair_of);
        }
        let subject = PairSubject::Binary {
            mechanism: &mechanism,
            n,
            k,
        };
        let finite_routes = delta_routes(
            &format!("{prefix}.results."),
            &row["results"],
            ["delta_qp", "delta_pq"],
            &row["arithmetic"],
            &subject,
            &settings,
            tally,
        )?;
        // Gaps.
        for (t, r) in results.iter().enumerate() {
            for (d, dir) in ["qp", "pq"].iter().enumerate() {
                let key = format!("gap_{dir}");
                let field = format!("{prefix}.results.{t}.{key}");
                if !covered {
                    if !r[&key].is_null() {
                        tally.problem(format!("{field}: a gap where there is no limit δ"));
                    }
                    continue;
                }
                let Some(gap) = enclosure(&r[&key], &field, tally) else {
                    continue;
                };
                tally.certified(&field, gap.clone(), true);
                if let (Some(f), Some(l)) = (&finite[t][d], &limit_certified[t]) {
                    tally.route(FROM_CERTIFIED);
                    tally.recomputed(&field, &f.distance(&l[d]), FROM_CERTIFIED);
                }
                for ((a, f), (b, l)) in finite_routes.iter().zip(&limit_routes) {
                    let (f, l) = if d == 0 {
                        (&f[t].qp, &l[t].qp)
                    } else {
                        (&f[t].pq, &l[t].pq)
                    };
                    let label = if a == b {
                        a.clone()
                    } else {
                        format!("{a} and {b}")
                    };
                    tally.recomputed(&field, &f.distance(l), &label);
                }
                let observed = &r["observed"];
                let mid = gap.mid_f64();
                observation(
                    &observed[format!("n_gap_{dir}")],
                    Some(mid * n as f64),
                    &format!("{prefix}.results.{t}.observed.n_gap_{dir}"),
                    tally,
                );
                observation(
                    &observed[format!("sqrt_n_gap_{dir}")],
                    Some(mid * (n as f64).sqrt()),
                    &format!("{prefix}.results.{t}.observed.sqrt_n_gap_{dir}"),
                    tally,
                );
                let order = previous.as_ref().and_then(|(m, gaps)| {
                    gaps.get(t)
                        .and_then(|g| g[d].as_ref())
                        .and_then(|ga| study::order_between(ga, *m, &gap, n))
                });
                observation(
                    &observed[format!("order_{dir}")],
                    order,
                    &format!("{prefix}.results.{t}.observed.order_{dir}"),
                    tally,
                );
                gaps[t][d] = Some(gap);
            }
        }
        // δ_n from the limit curve (Lemma 2.4).
        let budget = match &pair {
            Some(_) => single_dominant_budget_bits(
                &setup.working_geometry,
                &setup.working,
                n,
                k,
                BUDGET_BITS,
            )?,
            None => None,
        };
        match &budget {
            None => {
                if !row["tv_budget"].is_null() {
                    tally.problem(format!("{prefix}.tv_budget: a TV budget for a sequence that is not single-dominant (or has no limit)"));
                }
                for (t, r) in results.iter().enumerate() {
                    for dir in ["qp", "pq"] {
                        if !r[format!("from_limit_{dir}")].is_null() {
                            tally.problem(format!("{prefix}.results.{t}.from_limit_{dir}: δ_n from the limit curve where no TV budget applies"));
                        }
                    }
                }
            }
            Some(b) => {
                let label = format!(
                    "Lemma 2.4 on the verified limit δ, TV budget in {BUDGET_BITS}-bit MPFR"
                );
                tally.route(label.clone());
                let tv = |key: &str, tally: &mut Tally| {
                    exact(
                        &row["tv_budget"][key],
                        &format!("{prefix}.tv_budget.{key}"),
                        tally,
                    )
                };
                for (key, bound) in [("tv_p", &b.tv_p), ("tv_q", &b.tv_q)] {
                    if let Some(certified) = tv(key, tally)
                        && certified < *bound
                    {
                        tally.problem(format!(
                            "{prefix}.tv_budget.{key}: the certified {} is below the bound {} recomputed in {BUDGET_BITS}-bit MPFR",
                            exact_string(&certified),
                            exact_string(bound)
                        ));
                    }
                }
                for (t, r) in results.iter().enumerate() {
                    let c = exp_upper(&thresholds[t], BUDGET_BITS);
                    for (d, dir) in ["qp", "pq"].iter().enumerate() {
                        let field = format!("{prefix}.results.{t}.from_limit_{dir}");
                        let Some(widened) =
                            enclosure(&r[format!("from_limit_{dir}")], &field, tally)
                        else {
                            continue;
                        };
                        tally.certified(&field, widened.clone(), true);
                        // δ_{Q‖P}: TV(Q) + e^ε TV(P); δ_{P‖Q}: the roles swapped.
                        let (upper, lower) = if d == 0 {
                            (&b.tv_q, &b.tv_p)
                        } else {
                            (&b.tv_p, &b.tv_q)
                        };
                        let budget_field = format!("{prefix}.results.{t}.from_limit_budget_{dir}");
                        let budget =
                            exact(&r[format!("from_limit_budget_{dir}")], &budget_field, tally);
                        if let Some(limit) = &limit_certified[t] {
                            let (e, bound) = curve_transfer(&limit[d], upper, lower, &c);
                            tally.recomputed(&field, &e, &label);
                            if let Some(budget) = &budget {
                                if *budget < bound {
                                    tally.problem(format!(
                                        "{budget_field}: the certified {} is below the budget {} (TV budget in {BUDGET_BITS}-bit MPFR)",
                                        exact_string(budget),
                                        exact_string(&bound)
                                    ));
                                }
                                let useful =
                                    matches!(limit[d].lo(), Endpoint::Finite(x) if x > budget);
                                if r[format!("from_limit_useful_{dir}")] != json!(useful) {
                                    tally.problem(format!(
                                        "{prefix}.results.{t}.from_limit_useful_{dir}: records {}, but the certified limit δ and budget make it {useful}",
                                        r[format!("from_limit_useful_{dir}")]
                                    ));
                                }
                            }
                        }
                        // δ_n itself, recomputed: the widened enclosure must hold it.
                        for (route, rows) in &finite_routes {
                            let e = if d == 0 { &rows[t].qp } else { &rows[t].pq };
                            let label = format!(
                                "δ_n from the limit curve held against δ_n itself ({route})"
                            );
                            tally.route(label.clone());
                            tally.recomputed(&field, e, &label);
                        }
                        observation(
                            &r["observed"][format!("from_limit_relative_width_{dir}")],
                            Some(widened.relative_width()),
                            &format!(
                                "{prefix}.results.{t}.observed.from_limit_relative_width_{dir}"
                            ),
                            tally,
                        );
                    }
                }
            }
        }
        for (t, r) in results.iter().enumerate() {
            if r.get("observed").is_some() {
                uncertified(
                    &r["observed"],
                    &format!("{prefix}.results.{t}.observed"),
                    tally,
                );
            }
        }
        // Theorem 7.2's auxiliary comparison.
        let expected = study::auxiliary(&setup.geometry, n, k);
        let recorded = row["theorem_7_2_auxiliary"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if recorded.len() != expected.len() {
            tally.problem(format!(
                "{prefix}.theorem_7_2_auxiliary: {} comparisons, the geometry has {}",
                recorded.len(),
                expected.len()
            ));
        }
        for (j, (a, r)) in expected.iter().zip(recorded).enumerate() {
            let field = format!("{prefix}.theorem_7_2_auxiliary.{j}");
            let parameters = json!({ "block": a.block, "m": a.m, "p": exact_string(&a.p), "q": exact_string(&a.q) });
            for key in ["block", "m", "p", "q"] {
                if r[key] != parameters[key] {
                    tally.problem(format!(
                        "{field}.{key}: records {}, but the geometry at n = {n}, k = {k} gives {}",
                        r[key], parameters[key]
                    ));
                }
            }
            let Some(tv) = enclosure(&r["tv"], &format!("{field}.tv"), tally) else {
                continue;
            };
            tally.certified(&format!("{field}.tv"), tv.clone(), true);
            let value = if a.m <= EXACT_BINOMIAL_USERS {
                let label = "exact (Theorem 7.1: |q − p|·P(S = j) at the binomial's mode)";
                tally.route(label);
                (
                    Enclosure::point(binomial_plus_bernoulli_exact(a.m, &a.p, &a.q)),
                    label.to_string(),
                )
            } else {
                let label = "mpfr-512 (Theorem 7.1 on the complete binomial)";
                tally.route(label);
                let ctx = MpfrCtx { precision: 512 };
                (
                    crate::limits::tv::binomial_plus_bernoulli_tv::<MpfrInterval>(
                        a.m as usize,
                        &a.p,
                        &a.q,
                        &ctx,
                    ),
                    label.to_string(),
                )
            };
            tally.recomputed(&format!("{field}.tv"), &value.0, &value.1);
            uncertified(&r["observed"], &format!("{field}.observed"), tally);
            observation(
                &r["observed"]["sqrt_n_tv"],
                Some(tv.mid_f64() * (n as f64).sqrt()),
                &format!("{field}.observed.sqrt_n_tv"),
                tally,
            );
        }
        previous = Some((n, gaps));
    }
    if report["proved_order"].is_object() && report["proved_order"]["certified"] != json!(false) {
        tally.problem(
            "report.proved_order.certified: the proved order is a prediction, never certified",
        );
    }
    tally.route(LIMIT_OBSERVATIONS);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// `berry-esseen`.

/// Rationals `lo ≤ λ^{-1/2} ≤ hi` in `bits`-bit MPFR, each end checked exactly
/// (`lo²·λ ≤ 1 ≤ hi²·λ`).
fn mu_bracket(lambda: &Rational, bits: u32) -> Result<(Rational, Rational)> {
    let ctx = MpfrCtx { precision: bits };
    let c = MpfrInterval::one(&ctx).div(&MpfrInterval::from_rational(lambda, &ctx).sqrt());
    let e = c.enclosure();
    let (Some(lo), Some(hi)) = (e.lo().finite().cloned(), e.hi().finite().cloned()) else {
        return Err(Error::Internal("λ^(-1/2) is not finite".into()));
    };
    let square = |x: &Rational| Rational::from(x * x) * lambda;
    if lo < 0 || square(&lo) > 1 || square(&hi) < 1 {
        return Err(Error::Internal(
            "the MPFR bracket of λ^(-1/2) fails its exact check".into(),
        ));
    }
    Ok((lo, hi))
}

/// Verifies a `berry-esseen` certificate.
pub(super) fn verify_berry_esseen(
    cert: &Value,
    resources: &super::Resources,
    tally: &mut Tally,
) -> Result<()> {
    let report = &cert["report"];
    let settings = resources.settings(&cert["settings"])?;
    let pi = match &report["pi"] {
        Value::Null => None,
        v => match exact(v, "report.pi", tally) {
            Some(p) if p > 0 && p < 1 => Some(p),
            Some(p) => {
                tally.problem(format!(
                    "report.pi: {} is not strictly between 0 and 1",
                    exact_string(&p)
                ));
                return Ok(());
            }
            None => return Ok(()),
        },
    };
    let kind = if pi.is_some() {
        "skellam-shift"
    } else {
        "poisson-shift"
    };
    if report["lattice_experiment"] != json!(kind) {
        tally.problem(format!(
            "report.lattice_experiment: records {}, but pi makes it {kind}",
            report["lattice_experiment"]
        ));
    }
    let scale = &report["scale"];
    enum Scale {
        Fixed(Vec<Value>),
        Local(Vec<Rational>),
    }
    let scale = match scale["kind"].as_str() {
        Some("fixed") => Scale::Fixed(scale["eps"].as_array().cloned().unwrap_or_default()),
        Some("local") => Scale::Local(
            scale["t"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, t)| exact(t, &format!("report.scale.t.{i}"), tally))
                .collect(),
        ),
        _ => {
            tally.problem(format!("report.scale: {scale} is neither fixed nor local"));
            return Ok(());
        }
    };
    let rows = report["rows"].as_array().map_or(&[][..], Vec::as_slice);
    if rows.is_empty() {
        tally.problem("report.rows: no λ");
    }
    let gaussian_label = |bits: u32| {
        format!("mpfr-{bits} (Gaussian shift, μ = λ^(-1/2) bracketed again and checked exactly)")
    };
    let mut previous: Option<(Enclosure, Vec<Option<Enclosure>>)> = None;
    for (i, row) in rows.iter().enumerate() {
        let prefix = format!("rows.{i}");
        let Some(lambda) = exact(&row["lambda"], &format!("{prefix}.lambda"), tally) else {
            continue;
        };
        if lambda <= 0 || lambda > crate::limits::lattice::MAX_INTENSITY {
            tally.problem(format!(
                "{prefix}.lambda: {} is not in (0, {}]",
                exact_string(&lambda),
                crate::limits::lattice::MAX_INTENSITY
            ));
            continue;
        }
        let name = match &pi {
            None => format!("poisson-shift:lambda={}", exact_string(&lambda)),
            Some(p) => format!(
                "skellam-shift:a={},b={}",
                exact_string(&((1 - p.clone()) * &lambda)),
                exact_string(&Rational::from(p * &lambda))
            ),
        };
        if row["experiment"] != json!(name) {
            tally.problem(format!(
                "{prefix}.experiment: records {}, but λ and π give {name}",
                row["experiment"]
            ));
        }
        let experiment = match crate::limits::experiment::load_experiment(&name) {
            Ok(e) => e,
            Err(e) => {
                tally.problem(format!("{prefix}.experiment: cannot be read back: {e}"));
                continue;
            }
        };
        // c = λ^{-1/2}, exactly.
        let c_field = format!("{prefix}.c");
        let Some(c) = enclosure(&row["c"], &c_field, tally) else {
            continue;
        };
        tally.certified(&c_field, c.clone(), true);
        let label = "exact (c_lo²·λ ≤ 1 ≤ c_hi²·λ)";
        tally.route(label);
        let square = |x: &Rational| Rational::from(x * x) * &lambda;
        match c.lo() {
            Endpoint::Finite(lo) if *lo <= 0 || square(lo) <= 1 => {
                tally.lower_shown(&c_field, label)
            }
            _ => tally.problem(format!(
                "{c_field}: its lower end {c} exceeds λ^(-1/2) (c_lo²·λ > 1)"
            )),
        }
        match c.hi() {
            Endpoint::Finite(hi) if *hi >= 0 && square(hi) >= 1 => tally.upper_shown(&c_field),
            Endpoint::PosInf => {}
            _ => tally.problem(format!(
                "{c_field}: its upper end {c} is below λ^(-1/2) (c_hi²·λ < 1)"
            )),
        }
        let results = row["results"].as_array().map_or(&[][..], Vec::as_slice);
        // The thresholds: the fixed ε, or t·c_lo with the certified c_lo.
        let expected_eps: Option<Vec<String>> = match (&scale, c.lo()) {
            (Scale::Fixed(list), _) => Some(
                list.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect(),
            ),
            (Scale::Local(ts), Endpoint::Finite(lo)) => Some(
                ts.iter()
                    .map(|t| exact_string(&Rational::from(t * lo)))
                    .collect(),
            ),
            _ => None,
        };
        match expected_eps {
            Some(list) if list.len() == results.len() => {
                for (t, (r, e)) in results.iter().zip(&list).enumerate() {
                    if r["eps"] != json!(e) {
                        tally.problem(format!(
                            "{prefix}.results.{t}.eps: records {}, but the scale gives {e}",
                            r["eps"]
                        ));
                    }
                }
            }
            _ => tally.problem(format!(
                "{prefix}.results: {} rows do not follow the scale",
                results.len()
            )),
        }
        let Some(thresholds) = thresholds_of(&row["results"], &format!("{prefix}.results"), tally)
        else {
            continue;
        };
        let mut lattice: Vec<[Option<Enclosure>; 2]> = Vec::new();
        let mut gaussian: Vec<Option<Enclosure>> = Vec::new();
        for (t, r) in results.iter().enumerate() {
            let mut both = [None, None];
            for (d, key) in ["delta_qp", "delta_pq"].iter().enumerate() {
                let field = format!("{prefix}.results.{t}.{key}");
                if let Some(e) = enclosure(&r[*key], &field, tally) {
                    tally.certified(&field, e.clone(), true);
                    both[d] = Some(e);
                }
            }
            lattice.push(both);
            let field = format!("{prefix}.results.{t}.delta_gaussian");
            let g = enclosure(&r["delta_gaussian"], &field, tally);
            if let Some(g) = &g {
                tally.certified(&field, g.clone(), true);
            }
            gaussian.push(g);
        }
        let subject = PairSubject::Experiment(experiment);
        let lattice_routes = delta_routes(
            &format!("{prefix}.results."),
            &row["results"],
            ["delta_qp", "delta_pq"],
            &row["arithmetic"],
            &subject,
            &settings,
            tally,
        )?;
        // The Gaussian curve at a higher precision on a bracket of μ of verify's own.
        let used = row["gaussian_arithmetic"]
            .as_str()
            .and_then(|a| a.strip_prefix("mpfr-"))
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(128);
        let bits = (2 * used).clamp(256, 4096);
        let mu = mu_bracket(&lambda, bits)?;
        let ctx = MpfrCtx { precision: bits };
        let glabel = gaussian_label(bits);
        tally.route(glabel.clone());
        let recomputed_gaussian: Vec<Enclosure> = thresholds
            .iter()
            .enumerate()
            .map(|(t, th)| {
                // δ increases in μ: between its values at the bracket's ends.
                let lo = crate::limits::gaussian::delta(&mu.0, th, &ctx);
                let hi = crate::limits::gaussian::delta(&mu.1, th, &ctx);
                let e = Enclosure::new(lo.lo().clone(), hi.hi().clone());
                tally.recomputed(&format!("{prefix}.results.{t}.delta_gaussian"), &e, &glabel);
                e
            })
            .collect();
        let mut gaps = Vec::new();
        for (t, r) in results.iter().enumerate() {
            let field = format!("{prefix}.results.{t}.gap");
            let Some(gap) = enclosure(&r["gap"], &field, tally) else {
                gaps.push(None);
                continue;
            };
            tally.certified(&field, gap.clone(), true);
            if let ([Some(qp), Some(pq)], Some(g)) = (&lattice[t], &gaussian[t]) {
                tally.route(FROM_CERTIFIED);
                tally.recomputed(&field, &qp.distance(g).max(&pq.distance(g)), FROM_CERTIFIED);
            }
            for (label, rows) in &lattice_routes {
                let g = &recomputed_gaussian[t];
                let e = rows[t].qp.distance(g).max(&rows[t].pq.distance(g));
                tally.recomputed(&field, &e, label);
            }
            let observed = &r["observed"];
            uncertified(observed, &format!("{prefix}.results.{t}.observed"), tally);
            observation(
                &observed["gap_over_c"],
                Some(berry_esseen::scaled_gap(&gap, &c)),
                &format!("{prefix}.results.{t}.observed.gap_over_c"),
                tally,
            );
            let order = previous.as_ref().and_then(|(pc, pg)| {
                pg.get(t)
                    .cloned()
                    .flatten()
                    .and_then(|ga| berry_esseen::order_between(&ga, pc, &gap, &c))
            });
            observation(
                &observed["order"],
                order,
                &format!("{prefix}.results.{t}.observed.order"),
                tally,
            );
            gaps.push(Some(gap));
        }
        previous = Some((c, gaps));
    }
    tally.route(BERRY_ESSEEN_OBSERVATIONS);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_mode_is_the_largest_probability() {
        // Against the maximum over every j, exactly.
        for (m, p) in [
            (0u64, (1, 3)),
            (1, (1, 2)),
            (7, (1, 3)),
            (20, (2, 7)),
            (9, (1, 10)),
            (5, (1, 1)),
        ] {
            let p = Rational::from(p);
            let q = Rational::from((1, 5));
            let one_minus = Rational::from(1) - p.clone();
            let brute = (0..=m)
                .map(|j| {
                    Rational::from(Integer::from(m).binomial(j as u32))
                        * Rational::from(p.clone().pow(j as u32))
                        * Rational::from(one_minus.clone().pow((m - j) as u32))
                })
                .fold(Rational::new(), |a, b| a.max(b));
            assert_eq!(
                binomial_plus_bernoulli_exact(m, &p, &q),
                Rational::from(&q - &p).abs() * brute,
                "m = {m}, p = {p}"
            );
        }
    }

    #[test]
    fn rank_by_row_reduction() {
        let v = |x: &[i32]| x.iter().map(|&a| Rational::from(a)).collect::<Vec<_>>();
        assert_eq!(rank(&[]), 0);
        assert_eq!(rank(&[v(&[1, -1, 0]), v(&[0, 1, -1]), v(&[1, 0, -1])]), 2);
        assert_eq!(rank(&[v(&[0, 0, 1]), v(&[1, 0, 0])]), 2);
    }
}
