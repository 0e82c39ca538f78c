//! The `bounds` report: the certified range, the pairs attaining it, the shuffle index, and
//! for binary inputs the exact profile beside it.

use super::table;
use crate::bounds::index::IndexValue;
use crate::bounds::predict::IndexCheck;
use crate::bounds::range::{Attained, BoundsQuery, RangeRow, Target};
use crate::enclosure::{Enclosure, exact_string};
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Profile;
use crate::profile_inputs::boxes::CompositionBox;
use serde_json::{Value, json};

/// Everything `bounds` prints.
pub struct BoundsReport<'a> {
    pub query: &'a BoundsQuery,
    pub rows: &'a [RangeRow],
    pub index: &'a (IndexValue, IndexValue),
    /// The exact profile (binary inputs only).
    pub profile: Option<&'a Profile>,
    /// What `--search` did, when asked.
    pub search: Option<&'a crate::bounds::search::SearchStats>,
    /// The branch-and-bound ceiling (`--ceiling-seconds`), when one finished.
    pub ceiling: Option<&'a crate::bounds::ceiling::Ceiling>,
    /// Why no ceiling search finished, when one was asked for.
    pub ceiling_missed: Option<&'a String>,
}

const CEILING_SCOPE: &str = "upper, lowered by --ceiling-seconds: a branch and bound over every dataset (every composition of the others, every switch) with boxes closed at a level c between the ends: the maximum is at most max(c, the largest pair evaluated)";

/// What the ceiling did, as a line of the report.
fn ceiling_text(c: &crate::bounds::ceiling::Ceiling) -> String {
    let stats = &c.profile.stats;
    format!(
        "ceiling: {} of {} searches finished; the last: {} pairs evaluated, {} boxes bounded, {} of \
         {} compositions closed without their own pair",
        c.finished,
        c.started,
        stats.pairs_evaluated,
        stats.boxes_bounded,
        CompositionBox::count_text(stats.compositions_closed),
        CompositionBox::count_text(stats.compositions_total)
    )
}

/// Row `i`'s upper end: the ceiling's (the upper end of its row) when it is below the
/// blanket's.
fn effective_upper(b: &BoundsReport, i: usize) -> Option<rug::Rational> {
    let c = &b.ceiling?.profile.rows[i].value;
    match c.hi() {
        crate::enclosure::Endpoint::Finite(h) if c.hi() < b.rows[i].upper.value.hi() => {
            Some(h.clone())
        }
        _ => None,
    }
}

const SEARCH_SCOPE: &str = "lower, raised by --search: the exact delta of the best concrete neighbouring pair found by a local search over mixed backgrounds (t users moved between inputs, t halved down to 1), from the best homogeneous one";

/// What the search did, as a line of the report.
fn search_text(s: &crate::bounds::search::SearchStats) -> String {
    format!(
        "search: {} mixed backgrounds evaluated; {}",
        s.evaluated,
        if s.stopped_early {
            "stopped at the budget (--search, or the time left of --max-seconds), not at a local maximum"
        } else {
            "ended at a local maximum"
        }
    )
}

const LOWER_SCOPE: &str = "lower: the exact delta of the concrete neighbouring pairs (x1, x2, ..., x2) ~ (x1', x2, ..., x2), max over every x1, x1', x2 (Takagi-Liew's reference sum with R_x2, gamma = 1)";
const UPPER_SCOPE: &str = "upper: the blanket divergence max over ordered pairs (Balle et al. 2019; Takagi-Liew Thm 2.2), certified as an exact finite sum";

pub(super) fn attained_json(r: &crate::mechanism::randomizer::Randomizer, a: &Attained) -> Value {
    let mut v = json!({
        "value": a.value.to_json(),
        "x1": r.inputs[a.pair.0],
        "x1_prime": r.inputs[a.pair.1],
        "background": a.background.map(|x| r.inputs[x].clone()),
    });
    if let Some(others) = &a.others {
        v["others"] = others
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(x, c)| (r.inputs[x].clone(), json!(c)))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    v
}

/// The rows of a range: per threshold (or at the target δ) each end with the pair attaining it,
/// and their ratio (as `bounds` reports them, and a range audit's certificate records them).
pub fn rows_json(r: &Randomizer, rows: &[RangeRow]) -> Value {
    rows.iter()
        .map(|row| {
            json!({
                "eps": row.threshold.as_ref().map(|t| t.eps_text()),
                "lower": attained_json(r, &row.lower),
                "upper": attained_json(r, &row.upper),
                "ratio_upper_over_lower": ratio(row),
            })
        })
        .collect()
}

/// `upper/lower` from the midpoints, when the lower bound is resolved away from 0.
fn ratio(row: &RangeRow) -> Option<f64> {
    crate::bounds::range::upper_over_lower(&row.lower.value, &row.upper.value)
}

fn index_json(r: &crate::mechanism::randomizer::Randomizer, v: &IndexValue) -> Value {
    json!({
        "chi2": v.chi2.to_json(),
        "chi": v.chi.to_json(),
        "x1": r.inputs[v.pair.0],
        "x1_prime": r.inputs[v.pair.1],
        "reference": v.reference.map(|x| r.inputs[x].clone()),
    })
}

/// When the lower bound sums a subset of the triples, which (`None` when it sums them all).
fn lower_subset_note(rows: &[RangeRow]) -> Option<String> {
    let (kept, total) = rows.first()?.lower_triples;
    (kept < total).then(|| {
        format!(
            "lower: the {kept} of {total} distinct (x1, x1', x2) with the smallest shuffle index (each an exact concrete pair: still a lower bound)"
        )
    })
}

/// How many candidates each end did without (their Chernoff bound below the end), if any.
fn pruned_note(rows: &[RangeRow]) -> Option<String> {
    let [(pu, cu), (pl, cl)] = rows.first()?.pruned;
    (pu + pl > 0).then(|| {
        format!(
            "not summed, as their Chernoff bound is below the end (proofs-notes/chernoff-pruning.md): {pu} of {cu} class-distinct pairs, {pl} of {cl} triples"
        )
    })
}

/// The lines of `χ_up` and `χ_lo` with their attaining inputs.
fn index_text(r: &Randomizer, (up, lo): &(IndexValue, IndexValue)) -> String {
    let mut s = String::new();
    for (name, v) in [("chi_up", up), ("chi_lo", lo)] {
        let reference = v
            .reference
            .map_or(String::new(), |x| format!(", reference {}", r.inputs[x]));
        s += &format!(
            "shuffle index {name} = {} (chi² = {}; {} -> {}{reference})\n",
            short(&v.chi),
            short(&v.chi2),
            r.inputs[v.pair.0],
            r.inputs[v.pair.1]
        );
    }
    s
}

/// For randomized response given by a real ε0: the rational bracket of `e^eps0` the ends were
/// computed at, and what that means.
fn bracket_note(r: &Randomizer) -> Option<(Value, String)> {
    let b = r
        .rational_bracket(crate::bounds::range::EXP_EPS0_BRACKET_BITS)
        .ok()
        .flatten()?;
    let (lo, hi) = &b.exp_eps0;
    Some((
        json!([exact_string(lo), exact_string(hi)]),
        format!(
            "e^eps0 is irrational: the ends are computed on a rational bracket a_lo < e^eps0 < a_hi \
             ({} bits): upper at a_hi, lower at a_lo (its pair's value enclosed between a_lo and a_hi); \
             k-RR at a smaller a is a post-processing of k-RR at a larger one",
            crate::bounds::range::EXP_EPS0_BRACKET_BITS
        ),
    ))
}

/// `bounds` as JSON.
pub fn bounds_json(b: &BoundsReport) -> Value {
    let r = &b.query.randomizer;
    let mut v = json!({
        "command": "bounds",
        "certified": true,
        "randomizer": r.to_json(),
        "input_domain": r.domain_json(),
        "n": b.query.n,
        "scope": [LOWER_SCOPE, UPPER_SCOPE],
        "lower_subset": lower_subset_note(b.rows),
        "chernoff_pruned": b.rows.first().map(|row| json!({
            "upper_pairs": [row.pruned[0].0, row.pruned[0].1],
            "lower_triples": [row.pruned[1].0, row.pruned[1].1],
        })),
        "shuffle_index": {
            "chi_up": index_json(r, &b.index.0),
            "chi_lo": index_json(r, &b.index.1),
        },
        "results": rows_json(r, b.rows),
    });
    if let Some((bracket, note)) = bracket_note(r) {
        v["exp_eps0_bracket"] = bracket;
        v["exp_eps0_note"] = json!(note);
    }
    if let Some(search) = b.search {
        v["scope"] = json!([LOWER_SCOPE, SEARCH_SCOPE, UPPER_SCOPE]);
        v["search"] = json!({
            "evaluated": search.evaluated,
            "stopped_early": search.stopped_early,
        });
    }
    if let Some(c) = b.ceiling {
        v["scope"]
            .as_array_mut()
            .expect("a list")
            .push(json!(CEILING_SCOPE));
        let stats = &c.profile.stats;
        v["ceiling"] = json!({
            "finished": true,
            "levels": c.query.ceiling.iter().flatten().map(exact_string).collect::<Vec<_>>(),
            "searches_started": c.started,
            "searches_finished": c.finished,
            "pairs_evaluated": stats.pairs_evaluated,
            "boxes_bounded": stats.boxes_bounded,
            "compositions_closed": stats.compositions_closed.to_string(),
            "compositions_sorted": stats.compositions_sorted.to_string(),
            "compositions_total": stats.compositions_total.to_string(),
        });
        for ((row, c), range) in v["results"]
            .as_array_mut()
            .expect("rows")
            .iter_mut()
            .zip(&c.profile.rows)
            .zip(b.rows)
        {
            row["ceiling"] = c.value.to_json();
            let top = Enclosure::new(c.value.hi().clone(), c.value.hi().clone());
            // The ratio of the ceiling's upper end (not of its row's midpoint) to the lower end.
            row["ceiling_over_lower"] = json!(crate::bounds::range::upper_over_lower(
                &range.lower.value,
                &top
            ));
        }
    }
    if let Some(why) = b.ceiling_missed {
        v["ceiling"] = json!({ "finished": false, "why": why });
    }
    if let Target::Epsilon(d) = &b.query.target {
        v["delta"] = json!(exact_string(d));
        v["quantity"] = json!("eps_M(delta)");
    } else {
        v["quantity"] = json!("delta_M(eps)");
    }
    if let Some(p) = b.profile {
        v["binary_profile"] = p
            .rows
            .iter()
            .map(|row| {
                // As the profile's rows give them.
                super::profile::row_value_json(
                    row,
                    super::profile::rel_width(b.query.escalate_above),
                )
            })
            .collect::<Vec<_>>()
            .into();
        v["binary_note"] = json!(
            "binary inputs: the lower bound is the boundary pair k = 0 / n - 1, which is not always the worst case; the exact profile over every k is given beside it"
        );
    }
    v
}

pub(super) fn cell(r: &crate::mechanism::randomizer::Randomizer, a: &Attained) -> String {
    format!("{} ({})", short(&a.value), pair_label(r, a))
}

/// The pair attaining an end: `x1 -> x1'`, with `, others x2` for a concrete pair.
pub(super) fn pair_label(r: &crate::mechanism::randomizer::Randomizer, a: &Attained) -> String {
    let background = match (&a.others, a.background) {
        (Some(others), _) => format!(", others {}", r.counts_text(others)),
        (None, Some(x)) => format!(", others {}", r.inputs[x]),
        (None, None) => String::new(),
    };
    format!(
        "{} -> {}{background}",
        r.inputs[a.pair.0], r.inputs[a.pair.1]
    )
}

pub(super) fn short(e: &Enclosure) -> String {
    e.compact(6)
}

/// `bounds` as text.
pub fn bounds_text(b: &BoundsReport) -> String {
    let r = &b.query.randomizer;
    let mut s = format!(
        "shufflecert bounds: {}  n = {}\n{}; {} outputs\n",
        r.name,
        b.query.n,
        r.domain_text(),
        r.d()
    );
    s += &format!("{LOWER_SCOPE}\n");
    if let Some(search) = b.search {
        s += &format!("{SEARCH_SCOPE}\n{}\n", search_text(search));
    }
    s += &format!("{UPPER_SCOPE}\n");
    if let Some(c) = b.ceiling {
        s += &format!("{CEILING_SCOPE}\n{}\n", ceiling_text(c));
    }
    if let Some(why) = b.ceiling_missed {
        s += &format!("ceiling (--ceiling-seconds): {why}; the upper end is the blanket's\n");
    }
    if let Some(note) = lower_subset_note(b.rows) {
        s += &format!("{note}\n");
    }
    if let Some(note) = pruned_note(b.rows) {
        s += &format!("{note}\n");
    }
    if let Some((_, note)) = bracket_note(r) {
        s += &format!("{note}\n");
    }
    s += &index_text(r, b.index);
    s += "every [lo, hi] is a certified enclosure\n\n";
    let quantity = match &b.query.target {
        Target::Epsilon(d) => format!("eps_M at delta = {}", crate::enclosure::number_text(d)),
        Target::Delta(_) => "delta_M(eps)".into(),
    };
    // Rows of δ_M at each ε say so in the header; rows of ε_M say it in their first cell.
    let mut header = match &b.query.target {
        Target::Epsilon(_) => vec!["eps", "lower", "upper", "upper/lower"],
        Target::Delta(_) => vec!["eps", "delta_M lower", "delta_M upper", "upper/lower"],
    };
    if b.profile.is_some() {
        header.push("exact profile (binary inputs)");
    }
    let body: Vec<Vec<String>> = b
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let (upper, ratio) = match effective_upper(b, i) {
                Some(c) => (
                    format!("{} (ceiling)", crate::enclosure::bound_text(&c)),
                    crate::bounds::range::upper_over_lower(&row.lower.value, &Enclosure::point(c)),
                ),
                None => (cell(r, &row.upper), ratio(row)),
            };
            let mut cells = vec![
                row.threshold
                    .as_ref()
                    .map_or(quantity.clone(), |t| t.eps_text()),
                cell(r, &row.lower),
                upper,
                ratio.map_or("-".into(), |x| {
                    if x < 1e6 {
                        format!("{x:.3}")
                    } else {
                        format!("{x:.3e}")
                    }
                }),
            ];
            if let Some(p) = b.profile {
                cells.push(short(&p.rows[i].value));
            }
            cells
        })
        .collect();
    s += &table(&header, &body);
    if b.profile.is_some() {
        s += "\nbinary inputs: the lower bound is the boundary pair k = 0 / n − 1, which is not always the worst case; the exact profile is the maximum over every k\n";
    }
    s
}

/// `check` without `--k`: the shuffle index's predictions against the certified range (text).
pub fn index_check_text(
    q: &BoundsQuery,
    index: &(IndexValue, IndexValue),
    c: &IndexCheck,
) -> String {
    let r = &q.randomizer;
    let mut s = format!(
        "shufflecert check: {}  n = {}\n{}; {} outputs\n",
        r.name,
        q.n,
        r.domain_text(),
        r.d()
    );
    s += &index_text(r, index);
    s += "predictions (uncertified; Takagi–Liew §3, leading terms, valid for ε_n = ω(n^-1/2), O(√(ln n/n))) held against the certified range: the upper end is the blanket bound, the lower end a concrete neighbouring pair\n";
    s += "verdict: inside = the prediction's formula meets the certified value's enclosure; optimistic = below it; conservative = above it\n\n";
    let rows: Vec<Vec<String>> = c
        .comparisons
        .iter()
        .map(|x| {
            vec![
                x.at.clone(),
                x.end.to_string(),
                short(&x.certified),
                index_prediction_label(x.prediction).to_string(),
                format!("{:.6e}", x.predicted.value()),
                if x.rel_error.is_finite() {
                    format!("{:+.2} %", 100.0 * x.rel_error)
                } else {
                    "-".to_string()
                },
                x.verdict.name().to_string(),
            ]
        })
        .collect();
    s += &table(
        &[
            "at",
            "end",
            "certified",
            "prediction",
            "predicted",
            "rel. error",
            "verdict",
        ],
        &rows,
    );
    s + "\nleading term = φ(χ(t−1)√n)/(χ³(t−1)²n^{3/2}), t = e^ε (Lemma 3.2, Cor. 3.3); inverted = the leading term solved for ε at δ (Thm 3.4); expansion = (1/χ)√(ln n/n) (Thm 3.4); χ is χ_up against the upper end, χ_lo against the lower\n"
}

/// The short name of a shuffle-index prediction in the table (its formula is in the legend).
fn index_prediction_label(prediction: &str) -> &'static str {
    if prediction.starts_with("φ(") {
        "leading term"
    } else if prediction.starts_with("leading term solved") {
        "inverted"
    } else {
        "expansion"
    }
}

/// `check` without `--k` (JSON).
pub fn index_check_json(
    q: &BoundsQuery,
    index: &(IndexValue, IndexValue),
    c: &IndexCheck,
) -> Value {
    let r = &q.randomizer;
    let range = |row: &RangeRow| {
        json!({
            "lower": attained_json(r, &row.lower),
            "upper": attained_json(r, &row.upper),
        })
    };
    json!({
        "command": "check",
        "certified": true,
        "mode": "shuffle-index",
        "randomizer": r.to_json(),
        "input_domain": r.domain_json(),
        "n": q.n,
        "shuffle_index": { "chi_up": index_json(r, &index.0), "chi_lo": index_json(r, &index.1) },
        "delta_ranges": c.delta_rows.iter().map(|row| json!({
            "eps": row.threshold.as_ref().map(|t| t.eps_text()),
            "range": range(row),
        })).collect::<Vec<_>>(),
        "epsilon_range": { "delta": exact_string(&c.delta), "range": range(&c.epsilon_row) },
        "predictions": c.comparisons.iter().map(|x| json!({
            "at": x.at,
            "end": x.end,
            "prediction": x.prediction,
            "source": x.source,
            "certified": x.certified.to_json(),
            "predicted": x.predicted.formula.to_json(),
            "predicted_is_certified": false,
            "rel_error": x.rel_error,
            "verdict": x.verdict.name(),
        })).collect::<Vec<_>>(),
    })
}
