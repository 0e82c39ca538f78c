//! A profile's proof re-derived: every evaluated pair recomputed, every closed range borne out
//! by its node pair built from scratch, and every k covered exactly once.

use super::{Tally, enclosure_at, pair_query, u64_at, users_at};
use crate::arith::exp_bracket;
use crate::audit::verdict::{Side, Verdict, judge};
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, Endpoint, Tri};
use crate::error::{Error, Result};
use crate::exact::curve::Direction;
use crate::mechanism::Mechanism;
use crate::profile::{
    self, ClosureKind, ProfileQuery, Quantity, block_values, node_compare, node_values, pair_values,
};
use crate::progress::Stage;
use crate::query::{Backend, Threshold};
use rayon::prelude::*;
use rug::Rational;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A profile's report and proof, and where they sit in the certificate.
pub struct ProfileProof<'a> {
    /// Prefixed to every field the verification names (`""` for a profile certificate).
    pub prefix: String,
    pub report: &'a Value,
    pub method: &'a Value,
    /// The MPFR precision every evaluated pair and node is recomputed in first: max(256, twice
    /// the certificate's).
    pub precision: u32,
    /// The MPFR precision of a value that first recomputation does not settle (a refined audit
    /// scan's: `refined_bits` + 64, finer than its refined values); at least `precision`.
    pub finer: u32,
    /// For randomized response given by a real ε0: the mechanism on rational rows at both ends
    /// of a bracket of `e^{ε0}` (`Mechanism::rational_bracket`); each row is then also held
    /// against the profile at the two ends (data processing, proofs-notes/certificates.md).
    pub bracket: Option<[Mechanism; 2]>,
}

/// A node's range of k and the closures `(quantity, kind)` made there.
type NodeClosures = ((u64, u64), Vec<(usize, ClosureKind)>);

/// A profile's quantities and certified rows, as a verified proof yields them.
pub struct VerifiedRows {
    /// The n and the range of k `[a, b]` the proof covers.
    pub n: u64,
    pub k_range: (u64, u64),
    pub quantities: Vec<Quantity>,
    pub rows: Vec<Row>,
    /// The recomputed δ and Rényi values of the evaluated pairs, `[qp, pq]`, by (k, quantity),
    /// with the precision they were recomputed in (an audit's evidence reuses them).
    pub recomputed: BTreeMap<(u64, usize), ([Enclosure; 2], u32)>,
}

/// A profile's proof re-derived; its rows are registered with the tally (and confirmed there
/// only when every step holds).
pub fn verify_profile(
    proof: &ProfileProof<'_>,
    m: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<VerifiedRows> {
    let (report, method, prefix) = (proof.report, proof.method, proof.prefix.as_str());
    let n = users_at(&report["n"], "report.n")?;
    let range = &report["k_range"];
    let (a, b) = (
        u64_at(&range[0], "report.k_range")?,
        u64_at(&range[1], "report.k_range")?,
    );
    // The boundary pairs a shard run with `--with-ends` also evaluated: k = 0 or n − 1, outside
    // its range, in order; its rows are maxima over them too.
    let ends: Vec<u64> = match &report["ends"] {
        Value::Null => Vec::new(),
        v => v
            .as_array()
            .ok_or_else(|| Error::argument("report.ends", "not a list"))?
            .iter()
            .map(|k| u64_at(k, "report.ends"))
            .collect::<Result<_>>()?,
    };
    let valid_ends = ends.windows(2).all(|w| w[0] < w[1])
        && ends
            .iter()
            .all(|k| (*k == 0 || *k == n - 1) && !(a..=b).contains(k));
    if !valid_ends {
        tally.problem(format!(
            "{prefix}report.ends: {ends:?} are not boundary pairs (k = 0, n − 1) outside {a}..{b}"
        ));
    }
    let quantities = method["quantities"]
        .as_array()
        .ok_or_else(|| Error::argument("method.quantities", "missing"))?
        .iter()
        .map(|q| {
            Quantity::from_json(q)
                .ok_or_else(|| Error::argument("method.quantities", format!("unreadable: {q}")))
        })
        .collect::<Result<Vec<_>>>()?;
    // The certified rows, by quantity.  A row's lower end is shown by a recomputed pair that
    // reaches it; its upper end by every k being covered — by recomputed pairs below it, or by
    // closed ranges that their node pairs bear out.
    let rows = profile_rows(prefix, report, &quantities)?;
    // What the engines ran on, held like the top-level reports' (nothing recomputed reads it).
    let path = if prefix.is_empty() {
        "report.alphabet".to_string()
    } else {
        format!("{prefix}alphabet")
    };
    super::check_alphabet(
        &path,
        report,
        m.alphabet_json(settings.options.reduce),
        tally,
    );
    check_top_level_row(prefix, report, tally);
    check_labels(prefix, report, &quantities, n, (a, b), &ends, tally);
    for (field, value, _) in &rows {
        tally.certified(field, value.clone(), true);
    }
    let problems_before = tally.problems.len();
    let mut upper_ok = vec![true; quantities.len()];
    let query = ProfileQuery {
        mechanism: m.clone(),
        n,
        k_range: Some((a, b)),
        quantities: quantities.clone(),
        options: settings.options.clone(),
        backend: settings.backend,
        exact_ctx: settings.exact_ctx,
        prune: true,
        with_ends: false,
        escalate_above: None,
    };
    let (precision, finer) = (proof.precision, proof.finer.max(proof.precision));
    let leaf_label = format!("every evaluated pair recomputed in mpfr-{precision}");
    tally.route(leaf_label.clone());
    // Coverage: per quantity, the k each piece of the proof accounts for.
    let mut covered: Vec<Vec<(u64, u64)>> = vec![Vec::new(); quantities.len()];
    let records = read_records(method, &quantities)?;
    // The rows are maxima over the ends too: each listed end must be an evaluated record of
    // every quantity, recomputed below like the range's own.
    for &k in &ends {
        let record = records.iter().find(|r| r.k == k);
        for (i, q) in quantities.iter().enumerate() {
            if !record.is_some_and(|r| r.values[i].is_some()) {
                tally.problem(format!(
                    "{prefix}report.ends lists k = {k}, but method.records holds no evaluated pair at k = {k} for {}",
                    q.describe()
                ));
            }
        }
    }
    for record in records.iter().filter(|r| !ends.contains(&r.k)) {
        for (i, values) in record.values.iter().enumerate() {
            if values.is_some() {
                covered[i].push((record.k, record.k + 1));
            }
        }
    }
    // First every evaluated pair in MPFR at `precision`, built by blocks of consecutive k: a
    // value is settled there when the recomputation shows the certified enclosure holds the
    // true value and stays within its row (for ε: δ at both ends of the certified enclosure).
    let first = first_pass(&query, precision, &records, &quantities)?;
    let mut lower_shown: Vec<bool> = rows
        .iter()
        .map(|(_, row, _)| row.lo() <= &Endpoint::Finite(Rational::new()))
        .collect();
    let mut outcomes: Vec<Vec<Option<Outcome>>> = Vec::with_capacity(records.len());
    for (record, probes) in records.iter().zip(&first) {
        let mut per_quantity = vec![None; quantities.len()];
        for (i, values) in record.values.iter().enumerate() {
            let Some(certified) = values else { continue };
            let outcome = settle(&quantities[i], certified, &rows[i].1, &probes[i]);
            if let Outcome::Settled {
                shows_lower: true, ..
            } = outcome
            {
                lower_shown[i] = true;
            }
            per_quantity[i] = Some(outcome);
        }
        outcomes.push(per_quantity);
    }
    // Then, by the pair engine in MPFR at `finer` (above any refinement), each value the first
    // pass did not settle, and, for a row whose lower end no settled value shows, every pair
    // that can reach it: each checked as the whole recomputation is (disjoint, above the row,
    // showing its lower end).
    let again: Vec<(usize, Vec<bool>)> = records
        .iter()
        .enumerate()
        .filter_map(|(r, record)| {
            let open: Vec<bool> = (0..quantities.len())
                .map(|i| match (&outcomes[r][i], &record.values[i]) {
                    (Some(Outcome::Settled { .. }), Some([qp, pq])) => {
                        !lower_shown[i] && (qp.hi() >= rows[i].1.lo() || pq.hi() >= rows[i].1.lo())
                    }
                    (Some(Outcome::Again), _) => true,
                    _ => false,
                })
                .collect();
            open.contains(&true).then_some((r, open))
        })
        .collect();
    let pairs = format!(
        "{} of {}",
        again.len(),
        crate::enclosure::count_of(records.len(), "pair", "pairs")
    );
    let again_label = if finer > precision {
        format!(
            "values mpfr-{precision} does not settle ({pairs}) recomputed in mpfr-{finer} by the pair engine"
        )
    } else {
        format!(
            "values the first recomputation does not settle ({pairs}) recomputed by the pair engine"
        )
    };
    if !again.is_empty() {
        tally.route(again_label.clone());
    }
    let progress = Stage::start("verify: evaluated pairs again", "pairs", again.len() as u64);
    let fresh = again
        .par_iter()
        .map(|(r, open)| {
            let _advance = progress.advance_on_drop(1);
            let query = pair_query(
                m,
                n,
                records[*r].k,
                settings,
                Backend::Mpfr { precision: finer },
            );
            Ok(pair_values(&query, &quantities, open)?.result)
        })
        .collect::<Result<Vec<_>>>()?;
    drop(progress);
    for ((r, open), fresh) in again.iter().zip(fresh) {
        for (i, is_open) in open.iter().enumerate() {
            if *is_open {
                let both = [&fresh.qp[i], &fresh.pq[i]].map(|e| e.clone().expect("evaluated"));
                outcomes[*r][i] = Some(Outcome::Recomputed(both, finer));
            }
        }
    }
    // Every value's checks, with the recomputation that settled it; the evaluated pairs that
    // can reach their row's maximum (quantity, k, direction, exactly 0) are kept for the argmax.
    let mut recomputed = BTreeMap::new();
    let mut reaching = Vec::new();
    for (record, outcome) in records.iter().zip(&outcomes) {
        let k = record.k;
        for (i, values) in record.values.iter().enumerate() {
            let (Some(certified), Some(outcome)) = (values, &outcome[i]) else {
                continue;
            };
            let (field, row, _) = &rows[i];
            match outcome {
                Outcome::Settled { shows_lower, values } => {
                    if *shows_lower {
                        tally.lower_shown(field, &leaf_label);
                    }
                    if let Some(values) = values {
                        recomputed.insert((k, i), (values.clone(), precision));
                    }
                }
                Outcome::Disjoint(dir, value) => tally.problem(format!(
                    "{prefix}method.records.{} (k = {k}, {}): the certified {} and the recomputed {value} are disjoint",
                    record.index,
                    dir.key(),
                    certified[dir_slot(*dir)]
                )),
                Outcome::Again => unreachable!("every unsettled value is recomputed again"),
                Outcome::Recomputed(both, bits) => {
                    for (dir, value) in [(Direction::Qp, &both[0]), (Direction::Pq, &both[1])] {
                        let certified = &certified[dir_slot(dir)];
                        if !certified.overlaps(value) {
                            tally.problem(format!(
                                "{prefix}method.records.{} (k = {k}, {}): the certified {certified} and the recomputed {value} are disjoint",
                                record.index,
                                dir.key()
                            ));
                        }
                        if row.lo() <= value.lo() {
                            tally.lower_shown(field, &again_label);
                        }
                        if value.hi() > row.hi() {
                            upper_ok[i] = false;
                            tally.problem(format!(
                                "{field}: k = {k} ({}) reaches {value}, above the certified {row}",
                                dir.key()
                            ));
                        }
                    }
                    if !matches!(quantities[i], Quantity::Epsilon(_)) {
                        recomputed.insert((k, i), (both.clone(), *bits));
                    }
                }
            }
            // An honest argmax lists every evaluated pair that can reach the maximum.
            for dir in [Direction::Qp, Direction::Pq] {
                let value = &certified[dir_slot(dir)];
                if value.hi() >= row.lo() {
                    reaching.push((i, k, dir, value.hi() == &Endpoint::Finite(Rational::new())));
                }
            }
        }
    }
    let node_label = "every closed range re-derived from its node pair, built from scratch";
    tally.route(node_label);
    // The closures, grouped by node: each node pair is built once for all it closes.
    let mut by_node: BTreeMap<(u64, u64), Vec<(usize, ClosureKind)>> = BTreeMap::new();
    let mut closed_by_quantity: Vec<Vec<((u64, u64), ClosureKind)>> =
        vec![Vec::new(); quantities.len()];
    for closure in method["closures"].as_array().into_iter().flatten() {
        let lo = u64_at(&closure["range"][0], "method.closures.range")?;
        let hi = u64_at(&closure["range"][1], "method.closures.range")?;
        let i = closure["quantity"]
            .as_u64()
            .map(|i| i as usize)
            .filter(|i| *i < quantities.len())
            .ok_or_else(|| Error::argument("method.closures.quantity", "out of range"))?;
        let kind = match closure["kind"].as_str() {
            Some("below") => ClosureKind::Below,
            Some("ceiling") => ClosureKind::Ceiling,
            Some("tie") => ClosureKind::Tie,
            other => {
                return Err(Error::argument(
                    "method.closures.kind",
                    format!("unknown: {other:?}"),
                ));
            }
        };
        covered[i].push((lo, hi));
        closed_by_quantity[i].push(((lo, hi), kind));
        by_node.entry((lo, hi)).or_default().push((i, kind));
    }
    for (i, row) in rows.iter().enumerate() {
        // The scan closes an ε quantity only below its row or as ties at 0, never as a ceiling.
        if matches!(quantities[i], Quantity::Epsilon(_))
            && closed_by_quantity[i]
                .iter()
                .any(|(_, kind)| matches!(kind, ClosureKind::Ceiling))
        {
            tally.problem(format!(
                "{}: closed as `ceiling`, which an ε row never is",
                row.0
            ));
        }
        check_maximisers(row, &quantities[i], &closed_by_quantity[i], tally);
        // Every maximiser listed is an evaluated pair, with its recorded value, that reaches
        // the row's lower end.
        for (k, dir, value) in &row.2.listed {
            let recorded = records.iter().find(|r| r.k == *k).and_then(|r| {
                let slot = if dir == "qp" { 0 } else { 1 };
                r.values[i].as_ref().map(|both| both[slot].clone())
            });
            match recorded {
                Some(v) if value.as_ref() == Some(&v) && v.hi() >= row.1.lo() => {}
                _ => tally.problem(format!(
                    "{}: argmax k = {k} ({dir}) is not an evaluated pair reaching the maximum with its recorded value",
                    row.0
                )),
            }
        }
    }
    for (i, k, dir, exactly_zero) in reaching {
        let (field, _, says) = &rows[i];
        let tied = exactly_zero
            && closed_by_quantity[i]
                .iter()
                .any(|&((a, b), kind)| matches!(kind, ClosureKind::Tie) && (a..b).contains(&k));
        if says.resolved && !tied && !says.names(k, dir.key(), exactly_zero) {
            tally.problem(format!(
                "{field}: k = {k} ({}) can reach the maximum but is not in the argmax",
                dir.key()
            ));
        }
    }
    // Node pairs are independent of each other: built on every core.
    let row_values: Vec<(Enclosure, bool)> = rows
        .iter()
        .map(|(_, value, says)| (value.clone(), says.resolved))
        .collect();
    let nodes: Vec<NodeClosures> = by_node.into_iter().collect();
    let progress = Stage::start("verify: closed ranges", "node pairs", nodes.len() as u64);
    let held = nodes
        .par_iter()
        .map(|(range, closed)| {
            let _advance = progress.advance_on_drop(1);
            closures_hold(&query, *range, closed, &row_values, (precision, finer))
        })
        .collect::<Result<Vec<_>>>()?;
    for (((lo, hi), closed), held) in nodes.iter().zip(held) {
        for (&(i, kind), holds) in closed.iter().zip(held) {
            if !holds {
                let (field, row, _) = &rows[i];
                upper_ok[i] = false;
                tally.problem(format!(
                    "{prefix}method.closures: k in [{lo}, {hi}) closed for {} as `{}`, which its node pair does not bear out ({field} = {row})",
                    quantities[i].describe(),
                    kind.name()
                ));
            }
        }
    }
    for (i, pieces) in covered.iter_mut().enumerate() {
        pieces.sort_unstable();
        let mut next = a;
        for &(lo, hi) in pieces.iter() {
            if lo != next {
                upper_ok[i] = false;
                tally.problem(format!(
                    "{}: k = {} is {} (coverage of {a}..{b})",
                    rows[i].0,
                    lo.min(next),
                    if lo > next {
                        "not covered by any pair or closed range"
                    } else {
                        "covered twice"
                    }
                ));
            }
            next = next.max(hi);
        }
        if next != b + 1 {
            upper_ok[i] = false;
            tally.problem(format!("{}: k = {next}..{b} not covered", rows[i].0));
        }
    }
    if tally.problems.len() == problems_before {
        for (i, (field, _, _)) in rows.iter().enumerate() {
            if upper_ok[i] {
                tally.upper_shown(field);
            }
        }
    }
    if let Some([at_lo, at_hi]) = &proof.bracket {
        // Every pair (T_{n,k}, T_{n,k+1}) at a_lo is a post-processing of the pair at e^ε0, user
        // by user, and that one of the pair at a_hi. So each row is at least the value at a_lo
        // of any pair it maximises over (its listed argmax pairs: one pair each, not a search)
        // and at most the profile at a_hi.
        // Only evaluated pairs of the proof (an argmax lists no other; this also bounds the
        // work a hostile list could ask for).
        let evaluated: std::collections::BTreeSet<u64> = records.iter().map(|r| r.k).collect();
        let valid_end = |k: &u64| valid_ends && ends.contains(k);
        let in_proof = |k: u64| ((a..=b).contains(&k) || valid_end(&k)) && evaluated.contains(&k);
        let mut wanted: BTreeMap<u64, Vec<bool>> = BTreeMap::new();
        for (i, (_, _, maximisers)) in rows.iter().enumerate() {
            for (k, _, _) in maximisers.listed.iter().filter(|(k, _, _)| in_proof(*k)) {
                wanted
                    .entry(*k)
                    .or_insert_with(|| vec![false; quantities.len()])[i] = true;
            }
        }
        let at_lo_values = wanted
            .par_iter()
            .map(|(k, open)| {
                let query = pair_query(at_lo, n, *k, settings, Backend::Interval);
                Ok((*k, pair_values(&query, &quantities, open)?.result))
            })
            .collect::<Result<BTreeMap<_, _>>>()?;
        let upper = crate::progress::without_notes(|| {
            crate::profile::profile(&ProfileQuery {
                mechanism: at_hi.clone(),
                backend: Backend::Interval,
                with_ends: !ends.is_empty(),
                ..query.clone()
            })
        })?;
        let label = "profile on rational rows at a_lo < e^eps0 < a_hi (data processing)";
        tally.route(label);
        for (i, (field, _, maximisers)) in rows.iter().enumerate() {
            // No listed pair (a row tied at exactly 0): every quantity is at least 0.
            let lower = maximisers
                .listed
                .iter()
                .filter_map(|(k, direction, _)| {
                    let values = at_lo_values.get(k)?;
                    let side = match direction.as_str() {
                        "qp" => &values.qp,
                        "pq" => &values.pq,
                        _ => return None,
                    };
                    side[i].as_ref().map(|e| e.lo().clone())
                })
                .fold(Endpoint::Finite(Rational::new()), Endpoint::max);
            let upper = upper.rows[i].value.hi();
            if &lower > upper {
                // Only a pair the row does not maximise over can do this.
                tally.problem(format!(
                    "{field}: an argmax pair at a_lo exceeds the profile at a_hi ({label})"
                ));
                continue;
            }
            tally.recomputed(field, &Enclosure::new(lower, upper.clone()), label);
        }
    }
    Ok(VerifiedRows {
        n,
        k_range: (a, b),
        quantities,
        rows,
        recomputed,
    })
}

/// An evaluated pair of the proof: its position in `method.records`, its k, and per quantity
/// its certified `[qp, pq]` where it was evaluated.
struct Record {
    index: usize,
    k: u64,
    values: Vec<Option<[Enclosure; 2]>>,
}

fn read_records(method: &Value, quantities: &[Quantity]) -> Result<Vec<Record>> {
    method["records"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, record)| {
            let k = u64_at(&record["k"], "method.records.k")?;
            let values = (0..quantities.len())
                .map(|i| {
                    if record["qp"][i].is_null() {
                        return Ok(None);
                    }
                    Ok(Some([
                        enclosure_at(&record["qp"][i], "method.records")?,
                        enclosure_at(&record["pq"][i], "method.records")?,
                    ]))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Record { index, k, values })
        })
        .collect()
}

fn dir_slot(dir: Direction) -> usize {
    match dir {
        Direction::Qp => 0,
        Direction::Pq => 1,
    }
}

/// What the first pass computed for one certified value.
enum Probe {
    /// Not evaluated at this pair (its quantity was closed above it).
    Closed,
    /// A δ or Rényi value recomputed, `[qp, pq]`.
    Value([Enclosure; 2]),
    /// An ε: per direction, δ at the certified enclosure's lower end (`None` when that end is
    /// ≤ 0) and at its upper end (`None` when +∞); `None` for a direction whose enclosure δ at
    /// its ends cannot test (an end of +∞ or beyond the cap 700).
    EpsEnds([Option<(Option<Enclosure>, Option<Enclosure>)>; 2]),
}

/// How one certified value of one pair was checked.
#[derive(Clone)]
enum Outcome {
    /// The first pass showed that the certified enclosure holds the true value and lies within
    /// its row; `shows_lower` when it also shows the row's lower end; `values` the recomputed
    /// δ or Rényi values.
    Settled {
        shows_lower: bool,
        values: Option<[Enclosure; 2]>,
    },
    /// The certified value and the first pass's recomputation are disjoint: one is wrong.
    Disjoint(Direction, Enclosure),
    /// Not settled by the first pass: recomputed again.
    Again,
    /// Recomputed again, `[qp, pq]`, at this precision.
    Recomputed([Enclosure; 2], u32),
}

/// A first-pass probe held against a certified value and its row (`profile.md`): δ or Rényi
/// settle when the recomputation lies inside the certified enclosure (which then holds the true
/// value) and its upper end within the row; an ε `[c_lo, c_hi]` at target D when
/// `δ(c_lo) > D` (or `c_lo ≤ 0`) and `δ(c_hi) ≤ D` in that direction, for then
/// `c_lo < ε_k ≤ c_hi` (δ is non-increasing and continuous), and `c_hi` lies within the row.
fn settle(q: &Quantity, certified: &[Enclosure; 2], row: &Enclosure, probe: &Probe) -> Outcome {
    match probe {
        Probe::Closed => Outcome::Again,
        Probe::Value(both) => {
            for dir in [Direction::Qp, Direction::Pq] {
                let d = dir_slot(dir);
                if !certified[d].overlaps(&both[d]) {
                    return Outcome::Disjoint(dir, both[d].clone());
                }
            }
            if (0..2).all(|d| certified[d].contains_enclosure(&both[d]) && both[d].hi() <= row.hi())
            {
                Outcome::Settled {
                    shows_lower: both.iter().any(|e| row.lo() <= e.lo()),
                    values: Some(both.clone()),
                }
            } else {
                Outcome::Again
            }
        }
        Probe::EpsEnds(ends) => {
            let Quantity::Epsilon(target) = q else {
                return Outcome::Again;
            };
            let holds = (0..2).all(|d| {
                let Some((at_lo, at_hi)) = &ends[d] else {
                    return false;
                };
                let lo_ok = at_lo
                    .as_ref()
                    .is_none_or(|e| e.compare(target) == Tri::Greater);
                let hi_ok = at_hi
                    .as_ref()
                    .is_none_or(|e| judge(e, Side::AtMost, target) == Verdict::Sound);
                lo_ok && hi_ok && certified[d].hi() <= row.hi()
            });
            if holds {
                Outcome::Settled {
                    shows_lower: certified.iter().any(|c| row.lo() <= c.lo()),
                    values: None,
                }
            } else {
                Outcome::Again
            }
        }
    }
}

/// The first pass: every evaluated pair recomputed in MPFR at `precision`, consecutive k in
/// blocks of at most 2⌈√n⌉ sharing their block's group (`profile::block_values`), on every core.
/// Returns, per record and quantity, its probe.
fn first_pass(
    query: &ProfileQuery,
    precision: u32,
    records: &[Record],
    quantities: &[Quantity],
) -> Result<Vec<Vec<Probe>>> {
    // Per record: the values to compute, and where each certified value reads them.
    enum Slot {
        Closed,
        Value([usize; 2]),
        EpsEnds([Option<(Option<usize>, Option<usize>)>; 2]),
    }
    let cap = Endpoint::Finite(Rational::from(700));
    let zero = Endpoint::Finite(Rational::new());
    let plans: Vec<(Vec<profile::Probe>, Vec<Slot>)> = records
        .iter()
        .map(|record| {
            let mut asked: Vec<profile::Probe> = Vec::new();
            let mut ask = |q: Quantity, dir: Direction| {
                asked.push((q, dir));
                asked.len() - 1
            };
            let slots = record
                .values
                .iter()
                .zip(quantities)
                .map(|(values, q)| match (values, q) {
                    (None, _) => Slot::Closed,
                    (Some(_), Quantity::Delta(_) | Quantity::Renyi(_)) => {
                        Slot::Value([ask(q.clone(), Direction::Qp), ask(q.clone(), Direction::Pq)])
                    }
                    (Some(both), Quantity::Epsilon(_)) => {
                        let mut ends = [None, None];
                        for (d, dir) in [Direction::Qp, Direction::Pq].into_iter().enumerate() {
                            let c = &both[d];
                            // δ at an end of +∞, or beyond the scan's cap, is not asked: such
                            // a value is recomputed by the pair engine.
                            let testable = c.lo() >= &zero
                                && c.lo() != &Endpoint::PosInf
                                && (c.hi() <= &cap || c.hi() == &Endpoint::PosInf);
                            if !testable {
                                continue;
                            }
                            // δ is non-increasing in e^ε: δ at a rational above e^{c_lo} is at
                            // most δ(c_lo), and δ at one below e^{c_hi} at least δ(c_hi), so
                            // each end is tested at one exact threshold.
                            let mut at = |end: &Endpoint, upper: bool| match end {
                                Endpoint::Finite(x) => {
                                    let (below, above) = exp_bracket(x, precision);
                                    let c = if upper { above } else { below };
                                    Some(ask(Quantity::Delta(Threshold::ExpEps(c)), dir))
                                }
                                _ => None,
                            };
                            let lo = if c.lo() > &zero {
                                at(c.lo(), true)
                            } else {
                                None
                            };
                            ends[d] = Some((lo, at(c.hi(), false)));
                        }
                        Slot::EpsEnds(ends)
                    }
                })
                .collect();
            (asked, slots)
        })
        .collect();
    let mut order: Vec<usize> = (0..records.len())
        .filter(|&r| !plans[r].0.is_empty())
        .collect();
    order.sort_by_key(|&r| records[r].k);
    // Blocks of up to 2⌈√n⌉ k: the block's group, built once, is the costly convolution.
    let span = 2 * ((query.n as f64).sqrt().ceil() as u64).max(1);
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    for r in order {
        match blocks.last_mut() {
            Some(block) if records[r].k - records[block[0]].k < span => block.push(r),
            _ => blocks.push(vec![r]),
        }
    }
    let at = ProfileQuery {
        backend: Backend::Mpfr { precision },
        ..query.clone()
    };
    let progress = Stage::start("verify: evaluated pairs", "pairs", records.len() as u64);
    progress.advance((records.len() - blocks.iter().map(Vec::len).sum::<usize>()) as u64);
    let evaluated = blocks
        .par_iter()
        .map(|block| {
            let _advance = progress.advance_on_drop(block.len() as u64);
            let lo = records[block[0]].k;
            let hi = records[*block.last().expect("a block holds a pair")].k + 1;
            let leaves: Vec<(u64, Vec<profile::Probe>)> = block
                .iter()
                .map(|&r| (records[r].k, plans[r].0.clone()))
                .collect();
            Ok(block
                .iter()
                .copied()
                .zip(block_values(&at, (lo, hi), &leaves)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut values: Vec<Vec<Enclosure>> = vec![Vec::new(); records.len()];
    for (r, v) in evaluated.into_iter().flatten() {
        values[r] = v;
    }
    Ok(plans
        .iter()
        .zip(values)
        .map(|((_, slots), v)| {
            slots
                .iter()
                .map(|slot| match slot {
                    Slot::Closed => Probe::Closed,
                    Slot::Value([qp, pq]) => Probe::Value([v[*qp].clone(), v[*pq].clone()]),
                    Slot::EpsEnds(ends) => Probe::EpsEnds(ends.map(|end| {
                        end.map(|(lo, hi)| (lo.map(|s| v[s].clone()), hi.map(|s| v[s].clone())))
                    })),
                })
                .collect()
        })
        .collect())
}

/// A merged certificate (`merge`) lists the shards it combines, each with its file, range of k
/// and digest.  Their ranges must tile `0..n−1` exactly once, as `merge` required; the merged
/// proof must be mechanism-wide; and every closed range of the proof must lie within one shard,
/// since a shard's scan closes only nodes of its own range.
pub fn check_shards(report: &Value, method: &Value, tally: &mut Tally) -> Result<()> {
    let Some(listed) = method.get("shards") else {
        return Ok(());
    };
    let Some(listed) = listed.as_array().filter(|l| !l.is_empty()) else {
        tally.problem(format!(
            "method.shards: {listed} is not a list of the shards merged"
        ));
        return Ok(());
    };
    tally.route("the merged shards' ranges of k re-checked against n and the proof");
    let n = users_at(&report["n"], "report.n")?;
    let mut ranges = Vec::with_capacity(listed.len());
    let mut digests = std::collections::BTreeSet::new();
    for (j, shard) in listed.iter().enumerate() {
        let field = format!("method.shards.{j}");
        let (a, b) = (
            u64_at(&shard["k_range"][0], &format!("{field}.k_range"))?,
            u64_at(&shard["k_range"][1], &format!("{field}.k_range"))?,
        );
        if shard["k_range"].as_array().map(Vec::len) != Some(2) || a > b {
            tally.problem(format!(
                "{field}.k_range: {} is not a range A..B of k",
                shard["k_range"]
            ));
            continue;
        }
        if shard["file"].as_str().is_none_or(str::is_empty) {
            tally.problem(format!("{field}.file: {} names no file", shard["file"]));
        }
        let digest = shard["digest"].as_str().unwrap_or_default();
        if digest.len() != 64
            || !digest
                .bytes()
                .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        {
            tally.problem(format!(
                "{field}.digest: {} is not a SHA-256 digest",
                shard["digest"]
            ));
        } else if !digests.insert(digest) {
            // Shards of different ranges are different certificates.
            tally.problem(format!(
                "{field}.digest: {digest} is listed for another shard too"
            ));
        }
        ranges.push((a, b, j));
    }
    ranges.sort_unstable();
    let mut next = 0;
    for &(a, b, j) in &ranges {
        if a > next {
            tally.problem(format!(
                "method.shards: k = {next}..{} is covered by no shard (the shards must tile 0..{} exactly once)",
                a - 1,
                n.saturating_sub(1)
            ));
        } else if a < next {
            tally.problem(format!(
                "method.shards.{j}: k = {a}..{} is covered by two shards",
                b.min(next - 1)
            ));
        }
        next = next.max(b.saturating_add(1));
    }
    if next != n {
        tally.problem(format!(
            "method.shards: {}",
            if next < n {
                format!("k = {next}..{} is covered by no shard", n - 1)
            } else {
                format!(
                    "they reach k = {}, beyond n − 1 = {}",
                    next - 1,
                    n.saturating_sub(1)
                )
            }
        ));
    }
    let range = &report["k_range"];
    if (range[0].as_u64(), range[1].as_u64()) != (Some(0), n.checked_sub(1))
        || report["partial"] != Value::Bool(false)
    {
        tally.problem(format!(
            "report.k_range: a merged profile covers every k of 0..{}, but records {range} (partial: {})",
            n.saturating_sub(1),
            report["partial"]
        ));
    }
    // Each closed range within one shard.
    for (c, closure) in method["closures"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let lo = u64_at(&closure["range"][0], "method.closures.range")?;
        let hi = u64_at(&closure["range"][1], "method.closures.range")?;
        let inside = ranges
            .iter()
            .any(|&(a, b, _)| a <= lo && hi <= b.saturating_add(1));
        if !inside {
            tally.problem(format!(
                "method.closures.{c}: k in [{lo}, {hi}) is closed across shards, which no shard's scan does"
            ));
        }
    }
    Ok(())
}

/// What a closure asks of its node pair: the node's value of some quantity, and the test it
/// must pass.
enum Test {
    /// Not checkable: the closure cannot hold.
    Fails,
    /// The value (both directions) is certainly below the target (ε closed below: δ at the
    /// row's lower end stays under D).
    Less(Rational),
    /// The value is certainly at most the target.
    AtMost(Rational),
    /// The value's upper end is below (`strict`) or at most the endpoint.
    UpperBelow(Endpoint, bool),
}

/// The node quantity and test that bear out closing quantity `i` as `kind` (`profile.md`); a
/// row that says it is `resolved` claims its argmax is complete, so a node closed below
/// resolution must then stay strictly below the row's positive lower end.
fn closure_test(
    query: &ProfileQuery,
    i: usize,
    kind: ClosureKind,
    row: &Enclosure,
    resolved: bool,
) -> (Quantity, Test) {
    let zero = Endpoint::Finite(Rational::new());
    let q = query.quantities[i].clone();
    match (&query.quantities[i], kind) {
        // ε_k < x ≤ row.lo for every k below: δ_node(x) < D in both directions, at the finite
        // x = min(row.lo, 700) the scan prunes with (a row of +∞, singular mass above D, is
        // closed against 700: every k below then has a finite ε_k < 700).
        // A row.lo ≤ 0 leaves nothing strictly below it (ties at 0 are closed as `tie`).
        (Quantity::Epsilon(target), ClosureKind::Below) => match row.lo() {
            end if *end <= zero => (q, Test::Fails),
            _ => (
                Quantity::Delta(Threshold::Eps(crate::profile::lower(row))),
                Test::Less(target.clone()),
            ),
        },
        // ε_k = 0 for every k below: TV of the node ≤ D in both directions.
        (Quantity::Epsilon(target), _) => (
            Quantity::Delta(Threshold::ExpEps(Rational::from(1))),
            Test::AtMost(target.clone()),
        ),
        (_, ClosureKind::Below) => (q, Test::UpperBelow(row.lo().clone(), true)),
        (_, ClosureKind::Ceiling) if resolved && row.lo() > &zero => {
            (q, Test::UpperBelow(row.lo().clone(), true))
        }
        (_, ClosureKind::Ceiling) => (q, Test::UpperBelow(row.hi().clone(), false)),
        (_, ClosureKind::Tie) => (q, Test::UpperBelow(zero, false)),
    }
}

impl Test {
    /// The test as a comparison of δ with a target, which certified f64 bounds can often
    /// settle, and whether equality passes.
    fn as_comparison(&self, q: &Quantity) -> Option<(Threshold, Rational, bool)> {
        let Quantity::Delta(t) = q else {
            return None;
        };
        match self {
            Test::Less(target) => Some((t.clone(), target.clone(), false)),
            Test::AtMost(target) => Some((t.clone(), target.clone(), true)),
            Test::UpperBelow(Endpoint::Finite(end), true) => Some((t.clone(), end.clone(), false)),
            _ => None,
        }
    }

    fn passes(&self, e: &Enclosure) -> bool {
        match self {
            Test::Fails => false,
            Test::Less(target) => e.compare(target) == Tri::Less,
            Test::AtMost(target) => judge(e, Side::AtMost, target) == Verdict::Sound,
            Test::UpperBelow(end, true) => e.hi() < end,
            Test::UpperBelow(end, false) => e.hi() <= end,
        }
    }
}

/// Whether the node pair of `[lo, hi)` bears out each of its closures `(quantity, kind)`: in
/// the certificate's backend first (δ tests by certified f64 bounds where they settle it, as
/// the scan decided them), then, for those that cannot tell, in MPFR at `precision`.  The node
/// pair is built at most once per way for all its closures.
fn closures_hold(
    query: &ProfileQuery,
    range: (u64, u64),
    closed: &[(usize, ClosureKind)],
    rows: &[(Enclosure, bool)],
    (precision, finer): (u32, u32),
) -> Result<Vec<bool>> {
    let tests: Vec<(Quantity, Test)> = closed
        .iter()
        .map(|&(i, kind)| closure_test(query, i, kind, &rows[i].0, rows[i].1))
        .collect();
    let run = |q: &ProfileQuery, which: &[usize]| -> Result<Vec<bool>> {
        let at = ProfileQuery {
            quantities: which.iter().map(|&j| tests[j].0.clone()).collect(),
            ..q.clone()
        };
        let v = node_values(&at, range, &vec![true; which.len()])?;
        Ok(which
            .iter()
            .enumerate()
            .map(|(slot, &j)| {
                [&v.qp[slot], &v.pq[slot]]
                    .iter()
                    .all(|e| tests[j].1.passes(e.as_ref().expect("open")))
            })
            .collect())
    };
    let mut held = vec![false; tests.len()];
    let comparisons: Vec<(usize, (Threshold, Rational, bool))> = tests
        .iter()
        .enumerate()
        .filter_map(|(j, (q, test))| Some((j, test.as_comparison(q)?)))
        .collect();
    if !comparisons.is_empty() {
        let checks: Vec<(Threshold, Rational)> = comparisons
            .iter()
            .map(|(_, (t, target, _))| (t.clone(), target.clone()))
            .collect();
        for ((j, (_, _, equal_passes)), tri) in
            comparisons.iter().zip(node_compare(query, range, &checks)?)
        {
            held[*j] = tri
                .iter()
                .all(|t| *t == Tri::Less || *equal_passes && *t == Tri::Equal);
        }
    }
    // A strict comparison `node_compare` could not settle stays unsettled in this backend;
    // the other tests are run on the full enclosures.
    let strict: Vec<bool> = tests
        .iter()
        .map(|(q, test)| test.as_comparison(q).is_some_and(|(_, _, equal)| !equal))
        .collect();
    let rest: Vec<usize> = (0..tests.len())
        .filter(|&j| !held[j] && !strict[j])
        .collect();
    if !rest.is_empty() {
        for (j, holds) in rest.iter().zip(run(query, &rest)?) {
            held[*j] = holds;
        }
    }
    // Then in MPFR, and at the finer precision what that still cannot tell.
    let mut bits = vec![precision];
    if finer > precision {
        bits.push(finer);
    }
    for precision in bits {
        let retry: Vec<usize> = (0..tests.len()).filter(|&j| !held[j]).collect();
        if retry.is_empty() {
            break;
        }
        let at = ProfileQuery {
            backend: Backend::Mpfr { precision },
            ..query.clone()
        };
        for (j, holds) in retry.iter().zip(run(&at, &retry)?) {
            held[*j] = holds;
        }
    }
    Ok(held)
}

/// The labels of the rows (the ε, δ or order each answers) must be the proof's quantities, in
/// order, and the scope what its range of k covers: a relabelled row or a shard passed off as
/// mechanism-wide is not the certified answer.
fn check_labels(
    prefix: &str,
    report: &Value,
    quantities: &[Quantity],
    n: u64,
    k_range: (u64, u64),
    ends: &[u64],
    tally: &mut Tally,
) {
    let (mut d, mut e, mut r) = (0, 0, 0);
    for q in quantities {
        let (field, got, wanted) = match q {
            Quantity::Delta(t) => {
                d += 1;
                (
                    format!("results.{}.eps", d - 1),
                    &report["results"][d - 1]["eps"],
                    json!(t.eps_text()),
                )
            }
            Quantity::Epsilon(delta) => {
                e += 1;
                (
                    format!("eps_results.{}.delta", e - 1),
                    &report["eps_results"][e - 1]["delta"],
                    json!(crate::enclosure::exact_string(delta)),
                )
            }
            Quantity::Renyi(alpha) => {
                r += 1;
                (
                    format!("renyi_profile.{}.order", r - 1),
                    &report["renyi_profile"][r - 1]["order"],
                    json!(crate::enclosure::exact_string(alpha)),
                )
            }
        };
        if *got != wanted {
            tally.problem(format!(
                "{prefix}report.{field}: says {got}, but the proof is of {wanted}"
            ));
        }
    }
    let partial = k_range != (0, n - 1);
    if report["partial"] != json!(partial)
        || report["scope"] != json!(crate::profile::scope_text(n, k_range, ends))
    {
        tally.problem(format!(
            "{prefix}report.partial: the scope is not what k in {}..{} of n = {n} covers",
            k_range.0, k_range.1
        ));
    }
}

/// A report with one target δ repeats that row's keys at its top level (as `profile --json`
/// prints them); the repetition is part of what is certified, so it must equal the row that
/// is verified, key for key.
fn check_top_level_row(prefix: &str, report: &Value, tally: &mut Tally) {
    let single = match report["eps_results"].as_array() {
        Some(rows) if rows.len() == 1 => Some(&rows[0]),
        _ => None,
    };
    for key in ["delta", "eps_profile", "argmax_k", "argmax_k_ranges"] {
        let top = report.get(key);
        let wanted = single.and_then(|row| row.get(key));
        if top != wanted {
            tally.problem(format!(
                "{prefix}report.{key}: not the key of the one row in eps_results"
            ));
        }
    }
}

/// What a profile row says of its maximisers.
#[derive(Clone, Debug)]
pub struct Maximisers {
    /// The row's `resolved` flag (δ and Rényi rows; an ε row is always resolved).
    pub resolved: bool,
    /// `argmax_k`: the evaluated pairs (k, direction, value) that can reach the maximum.
    pub listed: Vec<(u64, String, Option<Enclosure>)>,
    /// `argmax_k_ranges`: inclusive ranges `[a, b]` of k tied at exactly 0.
    pub ranges: Vec<(u64, u64)>,
}

impl Maximisers {
    /// Whether the row names (k, direction) among its maximisers; an evaluated value of exactly
    /// 0 may be named by a range of ties instead (`profile::tidy_ties`).
    fn names(&self, k: u64, dir: &str, exactly_zero: bool) -> bool {
        self.listed.iter().any(|(j, d, _)| *j == k && d == dir)
            || (exactly_zero && self.ranges.iter().any(|&(a, b)| (a..=b).contains(&k)))
    }
}

/// Per quantity: the field name in the report, the certified value, and its maximisers.
pub type Row = (String, Enclosure, Maximisers);

fn profile_rows(prefix: &str, report: &Value, quantities: &[Quantity]) -> Result<Vec<Row>> {
    let maximisers = |v: &Value, field: &str, is_epsilon: bool| -> Result<Maximisers> {
        let resolved = match &v["resolved"] {
            Value::Null if is_epsilon => true,
            Value::Bool(b) if !is_epsilon => *b,
            _ => {
                return Err(Error::argument(
                    format!("report.{field}.resolved"),
                    if is_epsilon {
                        "an ε row has no such flag"
                    } else {
                        "missing or not true/false"
                    },
                ));
            }
        };
        let listed = v["argmax_k"]
            .as_array()
            .ok_or_else(|| Error::argument(format!("report.{field}.argmax_k"), "missing"))?
            .iter()
            .map(|e| match (e["k"].as_u64(), e["direction"].as_str()) {
                (Some(k), Some(d)) => Ok((k, d.to_string(), enclosure_at(&e["value"], field).ok())),
                _ => Err(Error::argument(
                    format!("report.{field}.argmax_k"),
                    format!("unreadable: {e}"),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let ranges = match &v["argmax_k_ranges"] {
            Value::Null if !is_epsilon => Vec::new(),
            _ if !is_epsilon => {
                return Err(Error::argument(
                    format!("report.{field}.argmax_k_ranges"),
                    "a δ or Rényi row lists no ranges",
                ));
            }
            Value::Array(list) => list
                .iter()
                .map(|r| {
                    let field = format!("report.{field}.argmax_k_ranges");
                    Ok((u64_at(&r[0], &field)?, u64_at(&r[1], &field)?))
                })
                .collect::<Result<Vec<_>>>()?,
            _ => {
                return Err(Error::argument(
                    format!("report.{field}.argmax_k_ranges"),
                    "missing",
                ));
            }
        };
        Ok(Maximisers {
            resolved,
            listed,
            ranges,
        })
    };
    let (mut d, mut e, mut r) = (0, 0, 0);
    quantities
        .iter()
        .map(|q| {
            let (field, v, key) = match q {
                Quantity::Delta(_) => {
                    d += 1;
                    (
                        format!("results.{}", d - 1),
                        &report["results"][d - 1],
                        "delta_profile",
                    )
                }
                Quantity::Epsilon(_) => {
                    e += 1;
                    (
                        format!("eps_results.{}", e - 1),
                        &report["eps_results"][e - 1],
                        "eps_profile",
                    )
                }
                Quantity::Renyi(_) => {
                    r += 1;
                    (
                        format!("renyi_profile.{}", r - 1),
                        &report["renyi_profile"][r - 1],
                        "value",
                    )
                }
            };
            Ok((
                format!("{prefix}{field}.{key}"),
                enclosure_at(&v[key], &field)?,
                maximisers(v, &field, matches!(q, Quantity::Epsilon(_)))?,
            ))
        })
        .collect()
}

/// What a row's maximisers must be, given its value and the closures of its quantity: a
/// resolved δ or Rényi row has a positive lower end (or is exactly 0), an unresolved one names
/// no maximiser and has a reason to be unresolved (a lower end of 0, or nodes closed below
/// resolution), and the ranges of ties at 0 are exactly the `tie` closures, listed only when
/// the maximum may be 0 (`profile::assemble`).
fn check_maximisers(
    row: &Row,
    quantity: &Quantity,
    closures: &[((u64, u64), ClosureKind)],
    tally: &mut Tally,
) {
    let (field, value, says) = row;
    let zero = Endpoint::Finite(Rational::new());
    let may_be_zero = value.lo() <= &zero;
    let exactly_zero = value.hi() == &zero;
    let has_ceiling = closures
        .iter()
        .any(|(_, kind)| matches!(kind, ClosureKind::Ceiling));
    if !matches!(quantity, Quantity::Epsilon(_)) {
        if says.resolved && !exactly_zero && may_be_zero {
            tally.problem(format!(
                "{field}: marked resolved, but its lower end is 0 while its upper end is not"
            ));
        }
        if !says.resolved {
            if !says.listed.is_empty() || !says.ranges.is_empty() {
                tally.problem(format!(
                    "{field}: marked unresolved, yet it names maximisers"
                ));
            }
            if exactly_zero || (!may_be_zero && !has_ceiling) {
                tally.problem(format!(
                    "{field}: marked unresolved, but its value {value} and its closures leave nothing unresolved"
                ));
            }
            return;
        }
    }
    let mut ties: Vec<(u64, u64)> = closures
        .iter()
        .filter(|(_, kind)| matches!(kind, ClosureKind::Tie))
        .map(|&((a, b), _)| (a, b - 1))
        .collect();
    ties.sort_unstable();
    ties.dedup_by(|next, run| {
        let adjacent = next.0 == run.1 + 1;
        if adjacent {
            run.1 = next.1;
        }
        adjacent
    });
    let wanted = if may_be_zero { ties } else { Vec::new() };
    // δ and Rényi rows print no ranges (their ties only excuse exact zeros from `argmax_k`).
    if matches!(quantity, Quantity::Epsilon(_)) && says.ranges != wanted {
        tally.problem(format!(
            "{field}: argmax_k_ranges {:?} are not the ranges of k tied at 0 that can reach the maximum ({wanted:?})",
            says.ranges
        ));
    }
}
