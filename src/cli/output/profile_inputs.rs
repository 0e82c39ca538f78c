//! `profile` output for a randomizer on more than two inputs: the worst case over every dataset.

use super::{marked, table};
use crate::enclosure::{exact_string, number_text};
use crate::profile::Quantity;
use crate::profile_inputs::boxes::CompositionBox;
use crate::profile_inputs::{Dataset, InputsProfile, InputsProfileQuery, InputsRow};
use serde_json::{Value, json};

/// How many attaining datasets the text lists per row (JSON lists every one).
const SHOWN: usize = 3;

/// What the report's maximum ranges over.
fn scope(q: &InputsProfileQuery) -> String {
    match q.slice {
        None if q.ceiling.is_some() => format!(
            "mechanism-wide range: every neighbouring pair of datasets (every composition of the \
             other {} users, every switch x1 → x1′, both orders), with boxes closed at the \
             ceiling's level: each row is [the best pair found, max(level, largest evaluated)], \
             not the exact maximum",
            q.n - 1
        ),
        None => format!(
            "mechanism-wide: every neighbouring pair of datasets (every composition of the other {} \
             users, every switch x1 → x1′, both orders)",
            q.n - 1
        ),
        Some(s) => format!(
            "slice {} of {}: the neighbouring pairs of datasets whose others' composition lies in \
             this slice's boxes (of the other {} users; every switch x1 → x1′, both orders), and \
             the homogeneous backgrounds; not the mechanism's guarantee alone: `merge` the {} \
             slices' certificates for it",
            s.index,
            s.of,
            q.n - 1,
            s.of
        ),
    }
}

const ORIENTATION: &str = "a dataset x1 → x1′ with C: the others' inputs are the counts C, the \
     switched user holds x1 in the first dataset and x1′ in the second; its δ is Σ_N (P_{x1}(N) − \
     e^ε P_{x1′}(N))₊ (`delta --background C --switch x1:x1′` gives it as pq)";

/// `x1 → x1′ with 0=8,2=1` (inputs held by no other user left out).
fn dataset_text(q: &InputsProfileQuery, d: &Dataset) -> String {
    let labels = &q.randomizer.inputs;
    format!(
        "{} → {} with {}",
        labels[d.x1],
        labels[d.x1_prime],
        background_text(q, &d.background)
    )
}

/// The background as `--background` takes it: `label=count`, comma-separated, zeros omitted.
/// The others' counts, as `delta --background` takes them (or "no others").
pub(crate) fn background_text(q: &InputsProfileQuery, counts: &[u64]) -> String {
    match q.randomizer.counts_text(counts) {
        t if t.is_empty() => "no others".into(),
        t => t,
    }
}

fn dataset_json(q: &InputsProfileQuery, d: &Dataset) -> Value {
    json!({
        "x1": q.randomizer.inputs[d.x1],
        "x1_prime": q.randomizer.inputs[d.x1_prime],
        "background": background_text(q, &d.background),
    })
}

fn argmax_text(q: &InputsProfileQuery, row: &InputsRow) -> String {
    // A maximum of exactly 0: every dataset pair attains it (each value is at least 0).
    if row.value.is_point() && row.value.lo() == &crate::enclosure::Endpoint::Finite(0.into()) {
        return "every dataset pair (exactly 0)".into();
    }
    let mut shown: Vec<String> = row
        .argmax
        .iter()
        .take(SHOWN)
        .map(|a| dataset_text(q, &a.dataset))
        .collect();
    if row.argmax.len() > SHOWN {
        shown.push(format!("and {} more", row.argmax.len() - SHOWN));
    }
    shown.join("; ")
}

fn argmax_json(q: &InputsProfileQuery, row: &InputsRow) -> Value {
    row.argmax
        .iter()
        .map(|a| {
            let mut v = dataset_json(q, &a.dataset);
            v["value"] = a.value.to_json();
            v
        })
        .collect()
}

pub fn inputs_profile_json(q: &InputsProfileQuery, p: &InputsProfile) -> Value {
    let rel = super::profile::rel_width(q.escalate_above);
    let mut v = json!({
        "command": "profile",
        "certified": true,
        "randomizer": q.randomizer.to_json(),
        "input_domain": q.randomizer.domain_json(),
        "n": q.n,
        "scope": scope(q),
        "slice": q.slice.map(|s| json!({ "index": s.index, "of": s.of })),
        "orientation": ORIENTATION,
        "backend": q.backend.label(),
        "arithmetic": p.arithmetic,
        "stats": {
            "pairs_evaluated": p.stats.pairs_evaluated,
            "boxes_bounded": p.stats.boxes_bounded,
            "bound_pairs": p.stats.bound_pairs,
            "switches_searched": p.stats.switches.0,
            "switches": p.stats.switches.1,
            "compositions_closed": p.stats.compositions_closed.to_string(),
            "compositions_sorted": p.stats.compositions_sorted.to_string(),
            "compositions_total": p.stats.compositions_total.to_string(),
        },
    });
    let (mut deltas, mut epsilons) = (Vec::new(), Vec::new());
    for row in &p.rows {
        match &row.quantity {
            Quantity::Delta(t) => deltas.push(json!({
                "eps": t.eps_text(),
                "delta_profile": row.value.to_json(),
                "argmax": argmax_json(q, row),
            })),
            Quantity::Epsilon(d) => epsilons.push(json!({
                "delta": exact_string(d),
                "eps_profile": row.value.to_json_resolved(rel),
                "argmax": argmax_json(q, row),
            })),
            Quantity::Renyi(_) => {}
        }
    }
    if !deltas.is_empty() {
        v["results"] = Value::Array(deltas);
    }
    if let [single] = epsilons.as_slice() {
        for key in ["delta", "eps_profile", "argmax"] {
            v[key] = single[key].clone();
        }
    }
    if !epsilons.is_empty() {
        v["eps_results"] = Value::Array(epsilons);
    }
    v
}

pub fn inputs_profile_text(q: &InputsProfileQuery, p: &InputsProfile) -> String {
    let r = &q.randomizer;
    let mut s = format!(
        "shufflecert profile: {}  n = {}\n{}; {} outputs\n{}\n",
        r.name,
        q.n,
        r.domain_text(),
        r.d(),
        scope(q)
    );
    s += &format!(
        "arithmetic {} · {} dataset pairs evaluated (both orders each), {} boxes of compositions \
         bounded by {} pairs; {} of {} compositions × switches searched closed by the \
         data-processing bounds, {} left to their images sorted within the symmetries\n",
        p.arithmetic,
        p.stats.pairs_evaluated,
        p.stats.boxes_bounded,
        p.stats.bound_pairs,
        CompositionBox::count_text(p.stats.compositions_closed),
        CompositionBox::count_text(p.stats.compositions_total),
        CompositionBox::count_text(p.stats.compositions_sorted)
    );
    let (searched, all) = p.stats.switches;
    if searched < all {
        s += &format!(
            "symmetry: {searched} of {all} unordered switches searched, compositions up to the \
             symmetries that fix each; the rest are their images under the rows' symmetries \
             (relabelled inputs and outputs, the same curves); the attaining datasets are listed \
             up to them\n"
        );
    }
    s += &format!("{ORIENTATION}\n");
    s += "every [lo, hi] is a certified enclosure of the true value\n";
    let rel = super::profile::rel_width(q.escalate_above);
    let mut deltas = Vec::new();
    let mut epsilons = String::new();
    for row in &p.rows {
        match &row.quantity {
            Quantity::Delta(t) => deltas.push(vec![
                t.eps_text(),
                row.value.to_string(),
                argmax_text(q, row),
            ]),
            Quantity::Epsilon(d) => {
                epsilons += &format!("\nsmallest ε ≥ 0 with δ_M(ε) ≤ {}\n\n", number_text(d));
                epsilons += &table(
                    &["eps_profile", "attained at"],
                    &[vec![marked(&row.value, rel), argmax_text(q, row)]],
                );
            }
            Quantity::Renyi(_) => {}
        }
    }
    if !deltas.is_empty() {
        s += "\n";
        s += &table(&["eps", "delta_profile = max δ", "attained at"], &deltas);
    }
    s += &epsilons;
    s
}
