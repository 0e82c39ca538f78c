//! A profile over every dataset (a randomizer on more than two inputs) re-derived from its
//! proof (proofs-notes/inputs-profile.md): the symmetries checked on the rows, every evaluated
//! pair recomputed, every closure borne out by a bound rebuilt from scratch (the blanket's
//! binomial weights exact, the breakpoints' pairs recomputed), and every composition of every
//! switch reached, in the tree of boxes, by a closure or an evaluated pair.

use super::pair::PairSubject;
use super::{Tally, enclosure_at, higher_precision, users_at};
use crate::certificate::Settings;
use crate::certificate::inputs_proof::Proof;
use crate::enclosure::{Enclosure, Endpoint, exact_string};
use crate::error::Result;
use crate::exact::background::Background;
use crate::mechanism::Entry;
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Quantity;
use crate::profile_inputs::boxes::CompositionBox;
use crate::profile_inputs::orbits::Orbits;
use crate::profile_inputs::{
    BoundRecord, ClosedBy, PairRecord, answered_at, children, dominated_switches,
};
use crate::query::{Backend, DeltaJob, EpsilonJob, Threshold};
use rayon::prelude::*;
use rug::Rational;
use rug::ops::PowAssign;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// An unordered switch and a composition (or a box's two corners).
type Key = ((usize, usize), Vec<u64>);

/// Bounds' pairs by (switch, canonical lower corner and free inputs, the blanket's users, route,
/// thresholds): their two-sided upper ends.
type PairCache = std::sync::Mutex<
    HashMap<((usize, usize), Vec<u64>, u64, usize, Vec<String>), Vec<Option<Rational>>>,
>;

/// Verifies a `profile` certificate of a randomizer on more than two inputs.
pub(super) fn verify_inputs_profile(
    cert: &Value,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    verify_inputs_proof(&cert["report"], &cert["method"], "", r, settings, tally).map(|_| ())
}

/// Verifies a profile's report and proof found at `{pre}report` and `{pre}method` (a profile
/// certificate's, or one an audit holds); returns its quantities and certified rows (confirmed
/// in the tally only if every step holds).
pub(super) fn verify_inputs_proof(
    report: &Value,
    method: &Value,
    pre: &str,
    r: &Randomizer,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<Vec<(Quantity, Option<Enclosure>)>> {
    let n = users_at(&report["n"], &format!("{pre}report.n"))?;
    let m = n - 1;
    let inputs = r.rows.len();
    // A proof that cannot be read is a broken certificate (INVALID), not bad input to verify.
    let proof = match crate::certificate::inputs_proof::read(method, r, m) {
        Ok(proof) => proof,
        Err(e) => {
            tally.problem(format!("{pre}method: cannot be read: {e}"));
            return Ok(Vec::new());
        }
    };
    let fields = row_fields(report, &proof.quantities, pre, tally);
    // A slice is not the mechanism's guarantee: the report must say which it is.
    let wide = report["scope"]
        .as_str()
        .is_some_and(|s| s.starts_with("mechanism-wide"));
    if report["slice"] != method["slice"] || wide != proof.slice.is_none() {
        tally.problem(format!(
            "{pre}report.scope: the report says {} but the proof is {}",
            report["scope"],
            match proof.slice {
                Some(s) => format!("slice {} of {}", s.index, s.of),
                None => "mechanism-wide".to_string(),
            }
        ));
    }
    if let Some(shards) = method["shards"].as_array() {
        let mut slices: Vec<Option<u64>> = shards.iter().map(|s| s["slice"].as_u64()).collect();
        slices.sort_unstable();
        let expected: Vec<Option<u64>> = (0..shards.len() as u64).map(Some).collect();
        if slices != expected || proof.slice.is_some() {
            tally.problem(format!(
                "{pre}method.shards: not the slices 0..N−1 of one search, each once"
            ));
        }
    }
    tally.route(match proof.slice {
        Some(slice) => format!(
            "inputs profile proof of slice {} of {} only, not the mechanism's guarantee (symmetries checked on the rows, each closure's bound rebuilt with exact binomial weights, every composition of the slice reached)",
            slice.index, slice.of
        ),
        None => "inputs profile proof (symmetries checked on the rows, each closure's bound rebuilt with exact binomial weights, every composition of every switch reached)".to_string(),
    });

    // The symmetries: each recorded component's transpositions (x0 xi) checked on the rows.
    let components = &proof.symmetry;
    for members in components {
        let least = members.iter().copied().min().unwrap_or_default();
        for &x in members.iter().filter(|&&x| x != least) {
            if !transposition_is_symmetry(&r.rows, least, x) {
                tally.problem(format!("{pre}method.symmetry: swapping inputs {} and {} does not map the rows to rows up to a permutation of the outputs",
                    r.inputs[least], r.inputs[x]
                ));
            }
        }
    }
    let Some(orbits) = Orbits::from_components(inputs, components) else {
        tally.problem(format!(
            "{pre}method.symmetry: components overlap or are empty"
        ));
        return Ok(Vec::new());
    };
    let mut expected: Vec<(usize, usize)> = orbits
        .switch_representatives()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    expected.sort_unstable();
    let mut switches = proof.switches.clone();
    switches.sort_unstable();
    if switches != expected {
        tally.problem(
            format!("{pre}method.switches: not one switch per orbit of the recorded symmetries on pairs of inputs"),
        );
    }

    // Every evaluated pair recomputed, in MPFR at a higher precision and exactly where
    // affordable; per quantity and route the largest recomputed value, and over every route the
    // largest recomputed lower end (a concrete dataset's value, so at most the maximum).
    let precision = higher_precision(settings);
    let quantities = &proof.quantities;
    let mut best: Vec<Option<Rational>> = vec![None; quantities.len()];
    // Per route: per quantity, the largest recomputed value and how many records it covers (a
    // route's maximum stands for the row only when it covers every record).
    let mut maxima: HashMap<String, (Vec<Option<Enclosure>>, Vec<usize>)> = HashMap::new();
    let recomputed: Vec<Vec<(String, Vec<Option<[Enclosure; 2]>>)>> = proof
        .records
        .par_iter()
        .map(|rec| recompute_record(rec, r, settings, quantities, precision))
        .collect::<Result<_>>()?;
    for (j, (rec, routes)) in proof.records.iter().zip(&recomputed).enumerate() {
        for (i, v) in rec.values.iter().enumerate() {
            if let Some([qp, pq]) = v {
                tally.certified(
                    &format!("{pre}method.records.{j}.values.{i}.0"),
                    qp.clone(),
                    true,
                );
                tally.certified(
                    &format!("{pre}method.records.{j}.values.{i}.1"),
                    pq.clone(),
                    true,
                );
            }
        }
        for (label, values) in routes {
            tally.route(label.clone());
            let (max, covered) = maxima
                .entry(label.clone())
                .or_insert_with(|| (vec![None; quantities.len()], vec![0; quantities.len()]));
            for (i, v) in values.iter().enumerate() {
                let Some(pair) = v else { continue };
                covered[i] += 1;
                for (side, e) in pair.iter().enumerate() {
                    tally.recomputed(
                        &format!("{pre}method.records.{j}.values.{i}.{side}"),
                        e,
                        label,
                    );
                    if let Endpoint::Finite(lo) = e.lo()
                        && best[i].as_ref().is_none_or(|b| lo > b)
                    {
                        best[i] = Some(lo.clone());
                    }
                    max[i] = Some(match max[i].take() {
                        Some(prev) => prev.max(e),
                        None => e.clone(),
                    });
                }
            }
        }
    }

    // Every closure borne out.
    let floor = crate::profile_inputs::entry_floor(r);
    let mut cache: HashMap<(usize, usize), Vec<Option<Rational>>> = HashMap::new();
    // Every bound a closure names, rebuilt side by side in the certificate's backend first.
    let mut named: Vec<usize> = proof
        .closures
        .iter()
        .filter_map(|c| match c.reason {
            ClosedBy::Bound(i) if i < proof.bounds.len() => Some(i),
            _ => None,
        })
        .collect();
    named.sort_unstable();
    named.dedup();
    // The pairs bounds are made of, shared between bounds (split halves share lower corners).
    let pairs = PairCache::default();
    let rebuild = |i: usize, route: usize, backend: Backend| {
        rebuild_bound(
            &proof.bounds[i],
            r,
            m,
            floor.as_ref(),
            settings,
            (backend, route),
            (&orbits, &pairs),
            proof.dominance,
        )
    };
    let rebuilt: Vec<(usize, std::result::Result<Vec<Option<Rational>>, String>)> = named
        .into_par_iter()
        .map(|i| (i, rebuild(i, 0, settings.backend)))
        .collect();
    // A bound that cannot be rebuilt (breakpoints out of order, …) bounds nothing.
    let unbuildable =
        |tally: &mut Tally,
         i: usize,
         e: String,
         cache: &mut HashMap<(usize, usize), Vec<Option<Rational>>>| {
            tally.problem(format!("{pre}method.bounds.{i}: cannot be rebuilt: {e}"));
            let none = vec![None; proof.bounds[i].values.iter().flatten().count()];
            cache.insert((i, 0), none.clone());
            cache.insert((i, 1), none);
        };
    for (i, v) in rebuilt {
        match v {
            Ok(v) => {
                cache.insert((i, 0), v);
            }
            Err(e) => unbuildable(tally, i, e, &mut cache),
        }
    }
    for (c_index, c) in proof.closures.iter().enumerate() {
        let field = format!("{pre}method.closures.{c_index}");
        let q = &quantities[c.quantity];
        // A ceiling search closes at its level when that is above the best value found.
        let level = match (&best[c.quantity], &proof.ceiling) {
            (Some(b), Some(levels)) => b.clone().max(levels[c.quantity].clone()),
            (None, Some(levels)) => levels[c.quantity].clone(),
            (Some(b), None) => b.clone(),
            (None, None) => {
                tally.problem(format!(
                    "{field}: closes quantity {} but no evaluated pair gives it a value",
                    c.quantity
                ));
                continue;
            }
        };
        let best = &level;
        match &c.reason {
            ClosedBy::Dominated { by } => {
                if let Err(e) = dominance_holds(&proof, r, m, c.switch, &c.boxed, by, c.quantity) {
                    tally.problem(format!("{field}: {e}"));
                }
            }
            ClosedBy::Screened { at, .. } => {
                let Quantity::Epsilon(target) = q else {
                    tally.problem(format!("{field}: screened closures belong to ε quantities"));
                    continue;
                };
                if !c.boxed.is_point() {
                    tally.problem(format!("{field}: a screened closure is one composition"));
                    continue;
                }
                if at > best {
                    tally.problem(format!(
                        "{field}: screened at ε = {}, above the best value found ({})",
                        exact_string(at),
                        exact_string(best)
                    ));
                    continue;
                }
                let bq = background_query(
                    r,
                    c.switch,
                    &c.boxed.lo,
                    settings,
                    Backend::Mpfr { precision },
                );
                let rows = crate::query::answer(
                    &bq,
                    &DeltaJob {
                        thresholds: vec![Threshold::Eps(at.clone())],
                    },
                )?
                .result;
                let two_sided = rows[0].qp.max(&rows[0].pq);
                if !hi_at_most(&two_sided, target) {
                    tally.problem(format!(
                        "{field}: δ at ε = {} is {two_sided} (mpfr-{precision}), not certainly ≤ {}",
                        exact_string(at),
                        exact_string(target)
                    ));
                }
            }
            ClosedBy::Bound(b_index) => {
                let Some(b) = proof.bounds.get(*b_index) else {
                    tally.problem(format!(
                        "{field}: names bound {b_index}, which is not recorded"
                    ));
                    continue;
                };
                if b.switch != c.switch || !contains(&b.boxed, &c.boxed) {
                    tally.problem(format!(
                        "{field}: its box does not lie in the box of bound {b_index} under the same switch"
                    ));
                    continue;
                }
                let Some((threshold, _)) = &b.values[c.quantity] else {
                    tally.problem(format!(
                        "{field}: bound {b_index} bounds no value of quantity {}",
                        c.quantity
                    ));
                    continue;
                };
                // What the bound must be at most, and for an ε quantity the threshold it must
                // be at most the best ε found at.
                let (limit, threshold_ok) = match (q, threshold) {
                    (Quantity::Delta(t), _) => (best.clone(), threshold.eps_text() == t.eps_text()),
                    (Quantity::Epsilon(target), Threshold::Eps(at)) => (target.clone(), at <= best),
                    _ => (Rational::new(), false),
                };
                if !threshold_ok {
                    tally.problem(format!(
                        "{field}: bound {b_index}'s threshold for quantity {} is not its ε (δ quantities) or at most the best ε found (ε quantities)",
                        c.quantity
                    ));
                    continue;
                }
                let mut held = false;
                let mut last = None;
                for (route, backend) in [settings.backend, Backend::Mpfr { precision }]
                    .into_iter()
                    .enumerate()
                {
                    let bound = match cache.get(&(*b_index, route)) {
                        Some(v) => v.clone(),
                        None => match rebuild(*b_index, route, backend) {
                            Ok(v) => {
                                cache.insert((*b_index, route), v.clone());
                                v
                            }
                            Err(e) => {
                                unbuildable(tally, *b_index, e, &mut cache);
                                cache[&(*b_index, route)].clone()
                            }
                        },
                    };
                    let slot = b.values[..c.quantity]
                        .iter()
                        .filter(|t| t.is_some())
                        .count();
                    match &bound[slot] {
                        Some(value) if *value <= limit => {
                            held = true;
                            break;
                        }
                        other => last = Some(other.clone()),
                    }
                }
                if !held {
                    tally.problem(format!(
                        "{field}: bound {b_index} rebuilt is {}, not at most {}",
                        last.flatten()
                            .map_or("unbounded".to_string(), |v| exact_string(&v)),
                        exact_string(&limit)
                    ));
                }
            }
        }
    }

    // Every composition of every switch reached by a closure or an evaluated pair.
    // A merge of N slices walks the levels its slices were cut from, which no slice recorded.
    let merged_from = method["shards"].as_array().map_or(0, |s| {
        s.len().min(crate::profile_inputs::MAX_SLICES as usize)
    });
    check_coverage(&proof, &orbits, &r.rows, m, merged_from, pre, tally);

    // The rows: the largest evaluated value, given that everything else is closed below it
    // (or, in a ceiling search, below the larger of it and the level).
    for (i, field) in fields.iter().enumerate() {
        let Some((field, row)) = field else { continue };
        tally.certified(field, row.clone(), true);
        let records = proof
            .records
            .iter()
            .filter(|rec| rec.values[i].is_some())
            .count();
        if let Some(c) = proof.ceiling.as_ref().map(|c| &c[i]) {
            if row.hi() < &Endpoint::Finite(c.clone()) {
                tally.problem(format!(
                    "{field}: its upper end {} is below the ceiling's level {}",
                    row,
                    exact_string(c)
                ));
            } else if records == 0 {
                // Every pair screened at the level: the level is the whole upper end.
                tally.upper_shown(field);
            }
        }
        for (label, (max, covered)) in &maxima {
            if let (Some(e), true) = (&max[i], covered[i] == records) {
                tally.recomputed(field, e, label);
            }
        }
    }
    check_argmax(report, &proof, r, &fields, pre, tally);
    let stats = &report["stats"];
    if stats["pairs_evaluated"].as_u64() != Some(proof.records.len() as u64)
        || stats["boxes_bounded"].as_u64() != Some(proof.bounds.len() as u64)
    {
        tally.problem(format!(
            "{pre}report.stats: the pairs evaluated and boxes bounded are not those of the proof"
        ));
    }
    Ok(proof
        .quantities
        .iter()
        .cloned()
        .zip(fields.into_iter().map(|f| f.map(|(_, e)| e)))
        .collect())
}

/// Whether swapping rows `a` and `b` leaves the multiset of columns unchanged (entries compared
/// exactly): then some permutation of the outputs maps the rows to the swapped rows.
fn transposition_is_symmetry(rows: &[Vec<Entry>], a: usize, b: usize) -> bool {
    let d = rows[0].len();
    let column = |y: usize, swap: bool| -> Vec<&Entry> {
        (0..rows.len())
            .map(|x| {
                let from = match x {
                    _ if !swap => x,
                    x if x == a => b,
                    x if x == b => a,
                    x => x,
                };
                &rows[from][y]
            })
            .collect()
    };
    let mut unused: Vec<Vec<&Entry>> = (0..d).map(|y| column(y, false)).collect();
    (0..d).all(|y| {
        let swapped = column(y, true);
        match unused.iter().position(|c| *c == swapped) {
            Some(i) => {
                unused.swap_remove(i);
                true
            }
            None => false,
        }
    })
}

fn background_query(
    r: &Randomizer,
    switch: (usize, usize),
    counts: &[u64],
    settings: &Settings,
    backend: Backend,
) -> crate::query::BackgroundQuery {
    crate::query::BackgroundQuery {
        randomizer: r.clone(),
        background: Background {
            counts: counts.to_vec(),
            switch,
        },
        options: settings.options.clone(),
        backend,
        exact_ctx: settings.exact_ctx,
        escalate_above: None,
    }
}

/// One record's values recomputed in each route: MPFR at `precision`, and exactly where
/// affordable.
fn recompute_record(
    rec: &PairRecord,
    r: &Randomizer,
    settings: &Settings,
    quantities: &[Quantity],
    precision: u32,
) -> Result<Vec<(String, Vec<Option<[Enclosure; 2]>>)>> {
    let background = Background {
        counts: rec.counts.clone(),
        switch: rec.switch,
    };
    let subject = PairSubject::Background {
        randomizer: r,
        background: background.clone(),
    };
    let mut routes = subject
        .routes(settings, precision)
        .into_iter()
        .map(|(label, backend)| {
            let values = record_values(&subject, backend, rec, settings, quantities)?;
            Ok((label, values))
        })
        .collect::<Result<Vec<_>>>()?;
    // A value the search escalated (MPFR up to 2048 bits) can be tighter than `precision`
    // shows: MPFR again at twice the bits until both ends are shown, up to twice the deepest;
    // a value disjoint from its recomputation is a problem already (no finer pass for it).
    let every_side = |values: &[Option<[Enclosure; 2]>],
                      holds: fn(&Enclosure, &Enclosure) -> bool| {
        rec.values
            .iter()
            .zip(values)
            .all(|(certified, recomputed)| match (certified, recomputed) {
                (Some(c), Some(r)) => (0..2).all(|side| holds(&c[side], &r[side])),
                _ => true,
            })
    };
    let shows = |c: &Enclosure, r: &Enclosure| c.lo() <= r.lo() && c.hi() >= r.hi();
    let shows_all = |values: &[Option<[Enclosure; 2]>]| every_side(values, shows);
    let meets_all = |values: &[Option<[Enclosure; 2]>]| every_side(values, Enclosure::overlaps);
    let mut bits = precision;
    while bits < MAX_RECOMPUTE_BITS
        && meets_all(&routes[0].1)
        && !routes.iter().any(|(_, values)| shows_all(values))
    {
        bits *= 2;
        let backend = Backend::Mpfr { precision: bits };
        routes[0].1 = record_values(&subject, backend, rec, settings, quantities)?;
    }
    // One label for the MPFR route of every record (each route's maximum is over all records).
    routes[0].0 = format!(
        "mpfr-{precision} (a value escalated by the search again at up to {MAX_RECOMPUTE_BITS} bits)"
    );
    // Randomized response given by a real ε0: the same pair on rational rows at both ends of a
    // bracket of e^ε0 (every user's row post-processed alike, so each value lies between).
    if let Some(bracket) = r.rational_bracket(precision).ok().flatten() {
        let at = |randomizer| {
            let subject = PairSubject::Background {
                randomizer,
                background: background.clone(),
            };
            record_values(&subject, Backend::Interval, rec, settings, quantities)
        };
        let (lower, upper) = (at(&bracket.lower)?, at(&bracket.upper)?);
        let values = lower
            .into_iter()
            .zip(upper)
            .map(|(lo, hi)| {
                let (lo, hi) = (lo?, hi?);
                Some(
                    [0, 1].map(|side| Enclosure::new(lo[side].lo().clone(), hi[side].hi().clone())),
                )
            })
            .collect();
        routes.push((BRACKET_ROUTE.to_string(), values));
    }
    Ok(routes)
}

/// The finest MPFR precision a record is recomputed in: twice the search's deepest escalation
/// (`query::DEEPER_PRECISIONS`).
const MAX_RECOMPUTE_BITS: u32 = 4096;

/// The route of a randomized response given by a real ε0 held on the bracket of `e^{ε0}`.
const BRACKET_ROUTE: &str =
    "background pairs on rational rows at a_lo < e^eps0 < a_hi (data processing)";

/// A record's recorded quantities on its pair in `backend`, `[qp, pq]` each.
fn record_values(
    subject: &PairSubject<'_>,
    backend: Backend,
    rec: &PairRecord,
    settings: &Settings,
    quantities: &[Quantity],
) -> Result<Vec<Option<[Enclosure; 2]>>> {
    let query = subject.query(settings, backend);
    let thresholds: Vec<Threshold> = quantities
        .iter()
        .zip(&rec.values)
        .filter_map(|(q, v)| match (q, v) {
            (Quantity::Delta(t), Some(_)) => Some(t.clone()),
            _ => None,
        })
        .collect();
    let mut deltas = if thresholds.is_empty() {
        Vec::new()
    } else {
        query.delta(&DeltaJob { thresholds })?.result
    }
    .into_iter();
    quantities
        .iter()
        .zip(&rec.values)
        .map(|(q, v)| -> Result<Option<[Enclosure; 2]>> {
            Ok(match (q, v) {
                (_, None) => None,
                (Quantity::Delta(_), Some(_)) => {
                    let row = deltas.next().expect("one row per threshold");
                    Some([row.qp, row.pq])
                }
                (Quantity::Epsilon(delta), Some(_)) => {
                    let e = query.epsilon(&EpsilonJob {
                        delta: delta.clone(),
                    })?;
                    Some([e.result.qp.eps, e.result.pq.eps])
                }
                (Quantity::Renyi(_), _) => None,
            })
        })
        .collect()
}

/// A bound rebuilt from scratch in `backend` (Lemma 2 of proofs-notes/inputs-profile.md): per
/// threshold recorded, an upper bound on the two-sided δ of every composition of the box
/// (`None`: unbounded).  Without breakpoints it is the pair of the lower corner (Lemma 1); with
/// breakpoints `j_1 < … < j_L ≤ r` it is `P(J < j_1) + Σ_i P(j_i ≤ J < j_{i+1}) δ(lo + j_i U)`
/// with `J ~ Bin(r, γ)`, the weights exact.
fn rebuild_bound(
    b: &BoundRecord,
    r: &Randomizer,
    m: u64,
    floor: Option<&Vec<Vec<Rational>>>,
    settings: &Settings,
    (backend, route): (Backend, usize),
    (orbits, pairs): (&Orbits, &PairCache),
    dominance: bool,
) -> std::result::Result<Vec<Option<Rational>>, String> {
    let thresholds: Vec<Threshold> = b.values.iter().flatten().map(|(t, _)| t.clone()).collect();
    let lo = &b.boxed.lo;
    // A pair's two-sided upper ends, keyed by the lower corner and the free inputs up to the
    // symmetries fixing the switch (checked on the rows above; a symmetric image has the same
    // values), the blanket's users, the route and the thresholds.
    let key: Vec<u64> = (0..lo.len())
        .map(|x| 2 * lo[x] + u64::from(lo[x] < b.boxed.hi[x]))
        .collect();
    let key = orbits.canonical(b.switch, &key);
    let thresholds_text: Vec<String> = thresholds.iter().map(Threshold::eps_text).collect();
    let two_sided_hi = |query: crate::query::BackgroundQuery,
                        key: Vec<u64>,
                        users: u64|
     -> std::result::Result<Vec<Option<Rational>>, String> {
        let cache_key = (b.switch, key, users, route, thresholds_text.clone());
        if let Some(v) = pairs.lock().expect("not poisoned").get(&cache_key) {
            return Ok(v.clone());
        }
        let rows = crate::query::answer(
            &query,
            &DeltaJob {
                thresholds: thresholds.clone(),
            },
        )
        .map_err(|e| e.to_string())?
        .result;
        let v: Vec<Option<Rational>> = rows
            .iter()
            .map(|row| match row.qp.max(&row.pq).hi() {
                Endpoint::Finite(h) => Some(h.clone()),
                _ => None,
            })
            .collect();
        pairs
            .lock()
            .expect("not poisoned")
            .insert(cache_key, v.clone());
        Ok(v)
    };
    if let Some(c) = &b.reference {
        // Lemma 3: the reference composition's pair plus the tail, both re-derived here.
        if !b.breakpoints.is_empty() {
            return Err("a reference composition and breakpoints both".into());
        }
        let tail = reference_tail(b, c, r, m, floor, dominance)?;
        let query = background_query(r, b.switch, c, settings, backend);
        let hi = two_sided_hi(query, orbits.canonical(b.switch, c), u64::MAX)?;
        return Ok(hi.into_iter().map(|h| h.map(|h| h + &tail)).collect());
    }
    if b.breakpoints.is_empty() {
        // The lower corner's own pair (the free inputs do not matter, but stay in the key).
        return two_sided_hi(
            background_query(r, b.switch, lo, settings, backend),
            key.clone(),
            0,
        );
    }
    let free: Vec<usize> = (0..lo.len()).filter(|&x| lo[x] < b.boxed.hi[x]).collect();
    let users = m - lo.iter().sum::<u64>();
    let floor = floor.ok_or("breakpoints need rational lower bounds on the entries")?;
    if free.is_empty() || users == 0 {
        return Err("breakpoints, but the box has no free users".into());
    }
    if !b.breakpoints.windows(2).all(|w| w[0] < w[1]) || b.breakpoints.last() > Some(&users) {
        return Err(format!(
            "the breakpoints must increase and stay at most the {users} free users"
        ));
    }
    let common: Vec<Rational> = (0..floor[0].len())
        .map(|y| {
            free.iter()
                .map(|&x| floor[x][y].clone())
                .min()
                .expect("free inputs")
        })
        .collect();
    let gamma: Rational = common.iter().sum();
    if gamma <= 0 {
        return Err("the free inputs have no common floor".into());
    }
    let row: Vec<Entry> = common
        .iter()
        .map(|v| Entry::Exact(v.clone() / &gamma))
        .collect();
    let pmf = binomial_pmf(users, &gamma)?;
    let tail: Rational = pmf[..b.breakpoints[0] as usize].iter().sum();
    let mut sums: Vec<Option<Rational>> = vec![Some(tail); thresholds.len()];
    for (i, &j) in b.breakpoints.iter().enumerate() {
        let end = b
            .breakpoints
            .get(i + 1)
            .map_or(users as usize + 1, |&e| e as usize);
        let weight: Rational = pmf[j as usize..end].iter().sum();
        let mut query = background_query(r, b.switch, lo, settings, backend);
        if j > 0 {
            query.randomizer.inputs.push("(blanket)".into());
            query.randomizer.rows.push(row.clone());
            query.background.counts.push(j);
        }
        for (sum, hi) in sums.iter_mut().zip(two_sided_hi(query, key.clone(), j)?) {
            *sum = match (sum.take(), hi) {
                (Some(s), Some(h)) => Some(s + weight.clone() * h),
                _ => None,
            };
        }
    }
    Ok(sums)
}

/// Lemma 3's tail for a bound made from the reference composition `c`, once `c` is checked to
/// be the one the box and rows call for: the proof declares dominance, the rows (checked here)
/// have its shape around the switch, and `c` holds the box's least users on the switch inputs
/// and `m − hi_a − hi_b` on one rest input.
fn reference_tail(
    b: &BoundRecord,
    c: &[u64],
    r: &Randomizer,
    m: u64,
    floor: Option<&Vec<Vec<Rational>>>,
    dominance: bool,
) -> std::result::Result<Rational, String> {
    use crate::profile_inputs::dominance as lemma3;
    let (a, s) = b.switch;
    let (lo, hi) = (&b.boxed.lo, &b.boxed.hi);
    if !dominance || !lemma3::rest_is_dominated(&r.rows, b.switch) {
        return Err("a reference composition, but dominance is not declared or the rows do not have its shape around the switch".into());
    }
    let inputs = lo.len();
    let y = (0..inputs)
        .find(|&x| x != a && x != s && c[x] > 0)
        .or_else(|| (0..inputs).find(|&x| x != a && x != s))
        .ok_or("no rest input")?;
    let (sa, sb) = ((lo[a], hi[a]), (lo[s], hi[s]));
    if lemma3::reference(inputs, b.switch, sa, sb, y, m).as_deref() != Some(c) {
        return Err(format!("the reference composition {c:?} is not the box's"));
    }
    let floor =
        floor.ok_or("a reference composition needs rational lower bounds on the entries")?;
    lemma3::switch_tail(&r.rows, floor, b.switch, sa, sb, m).ok_or_else(|| "no tail".to_string())
}

/// The law of `Bin(r, γ)`, exactly.
fn binomial_pmf(r: u64, gamma: &Rational) -> std::result::Result<Vec<Rational>, String> {
    let r32 = u32::try_from(r).map_err(|_| "too many free users".to_string())?;
    if *gamma >= 1 {
        let mut pmf = vec![Rational::new(); r as usize + 1];
        pmf[r as usize] = Rational::from(1);
        return Ok(pmf);
    }
    // pmf_0 = (1 − γ)^r and pmf_{j+1} = pmf_j · (r − j)/(j + 1) · γ/(1 − γ).
    let q = Rational::from(1) - gamma;
    let odds = gamma.clone() / &q;
    let mut term = q;
    term.pow_assign(r32);
    let mut pmf = Vec::with_capacity(r as usize + 1);
    for j in 0..=r {
        pmf.push(term.clone());
        if j < r {
            term *= Rational::from((r - j, j + 1)) * &odds;
        }
    }
    Ok(pmf)
}

/// Whether a closure by dominance holds: the proof says the search used it, the rows (checked
/// here) have the shape of `profile_inputs::dominance` around the switch, no composition of the
/// box has a user on the switch inputs, and `by` is the homogeneous background on a rest input
/// that answered the quantity under the same switch: an evaluated pair (re-derived with the
/// records; the row is at least it), or screened at an ε at most the best (checked as such).
fn dominance_holds(
    proof: &Proof,
    r: &Randomizer,
    m: u64,
    switch: (usize, usize),
    boxed: &CompositionBox,
    by: &[u64],
    quantity: usize,
) -> std::result::Result<(), String> {
    let (a, b) = switch;
    if !proof.dominance {
        return Err(
            "closed by dominance, which this proof does not declare (method.dominance)".into(),
        );
    }
    if !crate::profile_inputs::dominance::rest_is_dominated(&r.rows, switch) {
        return Err(format!(
            "closed by dominance, but the rows do not have its shape around the switch {{{}, {}}}",
            r.inputs[a], r.inputs[b]
        ));
    }
    if boxed.hi[a] > 0 || boxed.hi[b] > 0 {
        return Err("closed by dominance, but its box holds users on a switch input".into());
    }
    let held: Vec<usize> = (0..by.len()).filter(|&y| by[y] > 0).collect();
    let homogeneous = by.iter().sum::<u64>() == m
        && match held.as_slice() {
            [] => m == 0,
            [y] => *y != a && *y != b,
            _ => false,
        };
    if !homogeneous {
        return Err(format!(
            "closed by dominance of {by:?}, which is not every other user on one rest input"
        ));
    }
    // A record's value is recomputed with the records, a screened closure by its own check.
    if !answered_at(&proof.records, &proof.closures, switch, by, quantity) {
        return Err(format!(
            "closed by dominance of {by:?}, which is neither an evaluated pair nor screened for quantity {quantity} under the same switch"
        ));
    }
    Ok(())
}

fn contains(outer: &CompositionBox, inner: &CompositionBox) -> bool {
    outer.lo.iter().zip(&inner.lo).all(|(o, i)| o <= i)
        && inner.hi.iter().zip(&outer.hi).all(|(i, o)| i <= o)
}

fn hi_at_most(e: &Enclosure, q: &Rational) -> bool {
    matches!(e.hi(), Endpoint::Finite(h) if h <= q)
}

/// Walks each searched switch's tree of boxes from all compositions, splitting as the search
/// does: every box must have each quantity closed there or above, or be one composition whose
/// canonical form was evaluated (or screened) for it; every closure must sit in the tree.
fn check_coverage(
    proof: &Proof,
    orbits: &Orbits,
    rows: &[Vec<Entry>],
    m: u64,
    merged_from: usize,
    pre: &str,
    tally: &mut Tally,
) {
    let mut at_box: HashMap<(Key, Vec<u64>), Vec<(usize, usize)>> = HashMap::new();
    let mut screened: HashSet<(Key, usize)> = HashSet::new();
    for (j, c) in proof.closures.iter().enumerate() {
        if matches!(c.reason, ClosedBy::Screened { .. }) {
            screened.insert(((c.switch, c.boxed.lo.clone()), c.quantity));
        }
        at_box
            .entry(((c.switch, c.boxed.lo.clone()), c.boxed.hi.clone()))
            .or_default()
            .push((j, c.quantity));
    }
    let mut evaluated: HashSet<(Key, usize)> = HashSet::new();
    for rec in &proof.records {
        for (i, v) in rec.values.iter().enumerate() {
            if v.is_some() {
                evaluated.insert(((rec.switch, rec.counts.clone()), i));
            }
        }
    }
    let mut reached = vec![false; proof.closures.len()];
    let mut problems = 0usize;
    // The tree has at most a bounded box, a closure or an evaluated pair per leaf or split,
    // plus, for a merge of N slices, the levels cut into fewer than 8N boxes per switch above them.
    let budget = 4 * (proof.bounds.len() + proof.closures.len() + proof.records.len())
        + 16 * merged_from * proof.switches.len()
        + 64;
    // Sorted roots (0.2.0 from this version) hold an image of every composition under the
    // checked symmetries fixing the switch; older certificates start from every composition.
    let inputs = rows.len();
    let sorted = proof.sorted_roots.then_some(orbits);
    // Switch inputs split at zero first where the rows (checked here) allow it, from 0.2.0's
    // `"dominance": "off-switch"` on.
    let dominated = if proof.dominance {
        dominated_switches(rows, &proof.switches)
    } else {
        Vec::new()
    };
    let split = |switch, boxed: &CompositionBox| {
        if proof.dominance {
            children(boxed, m, switch, &dominated, orbits)
        } else {
            boxed.split(m)
        }
    };
    let roots =
        crate::profile_inputs::slice_roots(&proof.switches, inputs, m, sorted, proof.slice, &split);
    let mut budget = budget + 2 * roots.len();
    for (switch, root) in roots {
        let mut stack = vec![(root, vec![true; proof.quantities.len()])];
        while let Some((boxed, mut open)) = stack.pop() {
            if budget == 0 {
                tally.problem(
                    "method: the tree of boxes is larger than the proof accounts for (closures missing)",
                );
                return;
            }
            budget -= 1;
            let key = ((switch, boxed.lo.clone()), boxed.hi.clone());
            for &(j, i) in at_box.get(&key).into_iter().flatten() {
                // A screened closure is found by the canonical form below.
                if !matches!(proof.closures[j].reason, ClosedBy::Screened { .. }) {
                    reached[j] = true;
                    open[i] = false;
                }
            }
            if open.iter().all(|o| !o) {
                continue;
            }
            if boxed.is_point() {
                let canonical = orbits.canonical(switch, &boxed.lo);
                for (i, _) in open.iter().enumerate().filter(|(_, o)| **o) {
                    let k = ((switch, canonical.clone()), i);
                    if evaluated.contains(&k) {
                        continue;
                    }
                    if screened.contains(&k) {
                        for &(j, q) in at_box
                            .get(&((switch, canonical.clone()), canonical.clone()))
                            .into_iter()
                            .flatten()
                        {
                            if q == i {
                                reached[j] = true;
                            }
                        }
                        continue;
                    }
                    problems += 1;
                    if problems <= 5 {
                        tally.problem(format!(
                            "method: the composition {:?} under switch {:?} is neither evaluated nor closed for quantity {i}",
                            boxed.lo, switch
                        ));
                    }
                }
                continue;
            }
            for child in split(switch, &boxed) {
                stack.push((child, open.clone()));
            }
        }
    }
    if problems > 5 {
        tally.problem(format!(
            "method: {} more compositions uncovered",
            problems - 5
        ));
    }
    // A screened composition may also lie in a box closed above it (the floor's are screened
    // before the tree is searched); a bound's closure is always met where it was made.
    for (j, r) in reached.iter().enumerate() {
        if !r && !matches!(proof.closures[j].reason, ClosedBy::Screened { .. }) {
            tally.problem(format!("{pre}method.closures.{j}: not a box of the search tree (nothing it closes is reached)"
            ));
        }
    }
}

/// Per quantity, the report's field for its row and the row's value; the labels must be the
/// proof's quantities in order (and a single ε row's copy at the top level equal to it).
fn row_fields(
    report: &Value,
    quantities: &[Quantity],
    pre: &str,
    tally: &mut Tally,
) -> Vec<Option<(String, Enclosure)>> {
    let (mut d, mut e) = (0usize, 0usize);
    let fields: Vec<Option<(String, Enclosure)>> = quantities
        .iter()
        .map(|q| {
            let (field, label_ok, key) = match q {
                Quantity::Delta(t) => {
                    let f = format!("{pre}report.results.{d}");
                    d += 1;
                    let row = &report["results"][d - 1];
                    (
                        f,
                        row["eps"].as_str() == Some(&t.eps_text()),
                        "delta_profile",
                    )
                }
                Quantity::Epsilon(delta) => {
                    let f = format!("{pre}report.eps_results.{e}");
                    e += 1;
                    let row = &report["eps_results"][e - 1];
                    (
                        f,
                        row["delta"].as_str() == Some(&exact_string(delta)),
                        "eps_profile",
                    )
                }
                Quantity::Renyi(_) => return None,
            };
            if !label_ok {
                tally.problem(format!(
                    "{field}: its label is not quantity {q:?} of the proof"
                ));
                return None;
            }
            let path = field
                .strip_prefix(&format!("{pre}report."))
                .expect("a report field");
            let v = path
                .split('.')
                .fold(report, |v, k| match k.parse::<usize>() {
                    Ok(i) => &v[i],
                    Err(_) => &v[k],
                });
            match enclosure_at(&v[key], &format!("{field}.{key}")) {
                Ok(value) => Some((format!("{field}.{key}"), value)),
                Err(err) => {
                    tally.problem(err.to_string());
                    None
                }
            }
        })
        .collect();
    let listed = |key: &str| report[key].as_array().map_or(0, Vec::len);
    if listed("results") != d || listed("eps_results") != e {
        tally.problem(format!(
            "{pre}report: its rows are not the proof's quantities"
        ));
    }
    if e == 1 {
        for key in ["delta", "eps_profile", "argmax"] {
            if report[key] != report["eps_results"][0][key] {
                tally.problem(format!(
                    "{pre}report.{key}: differs from report.eps_results.0.{key}"
                ));
            }
        }
    }
    fields
}

/// Each row's maximisers must be exactly the evaluated dataset pairs whose upper end reaches
/// the row's lower end, with their recorded values.
fn check_argmax(
    report: &Value,
    proof: &Proof,
    r: &Randomizer,
    fields: &[Option<(String, Enclosure)>],
    pre: &str,
    tally: &mut Tally,
) {
    let background = |counts: &[u64]| match r.counts_text(counts) {
        t if t.is_empty() => "no others".to_string(),
        t => t,
    };
    for (i, field) in fields.iter().enumerate() {
        let Some((field, row)) = field else { continue };
        let mut expected: Vec<Value> = Vec::new();
        for rec in &proof.records {
            let Some([qp, pq]) = &rec.values[i] else {
                continue;
            };
            let (a, b) = rec.switch;
            for (x1, x1_prime, value) in [(b, a, qp), (a, b, pq)] {
                if value.hi() >= row.lo() {
                    expected.push(serde_json::json!({
                        "x1": r.inputs[x1],
                        "x1_prime": r.inputs[x1_prime],
                        "background": background(&rec.counts),
                        "value": crate::enclosure::with_exact_endpoints(|| value.to_json()),
                    }));
                }
            }
        }
        let argmax_field = field.rsplit_once('.').map_or(field.as_str(), |(f, _)| f);
        let path = argmax_field
            .strip_prefix(&format!("{pre}report."))
            .unwrap_or(argmax_field);
        let listed = path
            .split('.')
            .fold(report, |v, k| match k.parse::<usize>() {
                Ok(i) => &v[i],
                Err(_) => &v[k],
            })["argmax"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let key = |v: &Value| v.to_string();
        let mut a: Vec<String> = listed.iter().map(key).collect();
        let mut b: Vec<String> = expected.iter().map(key).collect();
        a.sort();
        b.sort();
        if a != b {
            tally.problem(format!(
                "{argmax_field}.argmax: not the evaluated dataset pairs that reach the row's lower end"
            ));
        }
    }
}
