//! `merge` for the slices of a profile over every dataset (a randomizer on more than two
//! inputs, `profile --slice I/N`): the N slices' certificates combined into the mechanism-wide
//! profile and its proof (proofs-notes/inputs-profile.md, "Slices").
//!
//! The slices must be intact (schema and digest), agree on everything but their slice (the
//! randomizer as given, the settings, n, the quantities, the symmetries and switches), and be
//! slices 0..N−1 of one N, each once.  Their boxes then cover every composition of every switch
//! searched exactly once.  The merged proof keeps every slice's evaluated pairs (one record per
//! switch and composition), bounds and closures; a closure made against its slice's best value
//! holds against the combined best, which is at least as large.  The rows are recomputed from
//! the pairs, and `verify` re-derives the merged certificate like any profile.

use super::inputs_proof::{self, Proof};
use super::{SCHEMA_V2_ID, Settings, digest, schema_errors};
use crate::error::{Error, Result};
use crate::mechanism::MechanismSource;
use crate::profile_inputs::{
    ClosedBy, InputsProfile, InputsProfileQuery, InputsStats, PairRecord, rows_of,
};
use serde_json::Value;

fn bad(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::argument(field, message)
}

/// Whether a certificate's text is a profile over every dataset (so `merge` combines slices).
pub fn is_inputs_profile(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .is_ok_and(|c| c["command"] == "profile" && c["mechanism"]["exact"].get("rows").is_some())
}

/// The combined profile, with the query and settings it answers.
pub struct MergedInputs {
    pub query: InputsProfileQuery,
    pub settings: Settings,
    pub profile: InputsProfile,
    /// `(file, slice index, digest)` of each slice, in order.
    pub shards: Vec<(String, u64, String)>,
}

struct Shard {
    name: String,
    cert: Value,
    proof: Proof,
}

/// Checks and combines slices given as `(name, text)`.
pub fn merge_inputs(files: &[(String, String)]) -> Result<MergedInputs> {
    let mut randomizer = None;
    let mut shards = Vec::new();
    for (name, text) in files {
        let cert: Value =
            serde_json::from_str(text).map_err(|e| bad(name, format!("not JSON: {e}")))?;
        if cert["schema"] != SCHEMA_V2_ID {
            return Err(bad(name, "not a version-2 shufflecert certificate"));
        }
        if let Some(first) = schema_errors(&cert).first() {
            return Err(bad(
                name,
                format!("does not conform to the schema: {first}"),
            ));
        }
        if cert["command"] != "profile" || cert["mechanism"]["exact"].get("rows").is_none() {
            return Err(bad(
                name,
                "not a profile of a randomizer on more than two inputs",
            ));
        }
        if cert["digest"]["value"] != Value::String(digest(&cert)?) {
            return Err(bad(
                name,
                "its digest does not match its contents (edited?)",
            ));
        }
        let r = match &randomizer {
            Some(r) => r,
            None => randomizer.insert(crate::mechanism::randomizer::randomizer_from_source(
                &MechanismSource {
                    spec: cert["mechanism"]["given"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    text: cert["mechanism"]["text"].as_str().map(str::to_string),
                },
            )?),
        };
        let n = cert["report"]["n"]
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| bad(format!("{name}: report.n"), "missing"))?;
        let proof =
            inputs_proof::read(&cert["method"], r, n - 1).map_err(|e| bad(name, e.to_string()))?;
        if proof.ceiling.is_some() {
            return Err(bad(
                format!("{name}: method.ceiling"),
                "a ceiling search (bounds --ceiling-seconds), not a slice of the exact profile",
            ));
        }
        if proof.slice.is_none() {
            let why = match cert["method"]["shards"].as_array() {
                Some(s) => format!(
                    "already mechanism-wide (a merge of {} slices); merge the slices it came from",
                    s.len()
                ),
                None => "already mechanism-wide (made without --slice); nothing to merge".into(),
            };
            return Err(bad(name, why));
        }
        shards.push(Shard {
            name: name.clone(),
            cert,
            proof,
        });
    }
    let Some(randomizer) = randomizer else {
        return Err(bad("merge", "give at least one certificate"));
    };
    shards.sort_by_key(|s| s.proof.slice.map(|s| s.index));
    let first = &shards[0];
    for s in &shards[1..] {
        super::merge::agree(
            (&first.name, &first.cert),
            (&s.name, &s.cert),
            &[
                "mechanism",
                "settings",
                "report.n",
                "method.quantities",
                "method.symmetry",
                "method.switches",
                "method.roots",
                "method.dominance",
            ],
        )?;
    }
    // The merged proof starts each switch from its sorted root, as this version's slices do.
    if !first.proof.sorted_roots {
        return Err(bad(
            format!("{}: method.roots", first.name),
            "made by an earlier version (its slices start from every composition); run the \
             slices again with this version",
        ));
    }
    // … and splits the switch inputs at zero first where the rows allow (`method.dominance`).
    if !first.proof.dominance {
        return Err(bad(
            format!("{}: method.dominance", first.name),
            "made by an earlier version (its slices split every box at the middle); run the \
             slices again with this version",
        ));
    }
    let of = first.proof.slice.expect("checked").of;
    for (i, s) in shards.iter().enumerate() {
        let slice = s.proof.slice.expect("checked");
        if slice.of != of {
            return Err(bad(
                format!("{}: method.slice", s.name),
                format!("a slice of {}, the others of {of}", slice.of),
            ));
        }
        if slice.index != i as u64 {
            let missing_or_twice = if slice.index < i as u64 {
                format!("slice {} is given twice", slice.index)
            } else {
                format!("slice {i} of {of} is missing")
            };
            return Err(bad("merge", missing_or_twice));
        }
    }
    if shards.len() as u64 != of {
        return Err(bad(
            "merge",
            format!("slice {} of {of} is missing", shards.len()),
        ));
    }
    let n = first.cert["report"]["n"].as_u64().expect("read above");
    let settings = Settings::from_json(&first.cert["settings"])?;
    let quantities = first.proof.quantities.clone();
    let symmetry = first.proof.symmetry.clone();
    let switches = first.proof.switches.clone();

    let mut records: Vec<PairRecord> = Vec::new();
    let mut index: std::collections::HashMap<((usize, usize), Vec<u64>), usize> =
        Default::default();
    let mut bounds = Vec::new();
    let mut closures = Vec::new();
    let mut stats = InputsStats {
        switches: (
            switches.len(),
            randomizer.rows.len() * (randomizer.rows.len() - 1) / 2,
        ),
        ..Default::default()
    };
    let mut arithmetic = std::collections::BTreeSet::new();
    for s in shards.iter() {
        let reported = &s.cert["report"]["stats"];
        let count = |key: &str| -> Result<u128> {
            reported[key]
                .as_str()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| bad(format!("{}: report.stats.{key}", s.name), "malformed"))
        };
        stats.bound_pairs += reported["bound_pairs"].as_u64().unwrap_or_default();
        stats.compositions_closed = stats
            .compositions_closed
            .saturating_add(count("compositions_closed")?);
        stats.compositions_sorted = stats
            .compositions_sorted
            .saturating_add(count("compositions_sorted")?);
        stats.compositions_total = stats
            .compositions_total
            .saturating_add(count("compositions_total")?);
        for a in s.cert["report"]["arithmetic"]
            .as_str()
            .unwrap_or_default()
            .split(", ")
            .filter(|a| !a.is_empty())
        {
            arithmetic.insert(a.to_string());
        }
        // One record per switch and composition (every slice evaluates the homogeneous
        // backgrounds): a quantity one slice screened another may have evaluated.
        for record in &s.proof.records {
            let key = (record.switch, record.counts.clone());
            match index.get(&key) {
                Some(&at) => {
                    for (kept, other) in records[at].values.iter_mut().zip(&record.values) {
                        if kept.is_none() {
                            kept.clone_from(other);
                        }
                    }
                }
                None => {
                    index.insert(key, records.len());
                    records.push(record.clone());
                }
            }
        }
        let offset = bounds.len();
        bounds.extend(s.proof.bounds.iter().cloned());
        closures.extend(s.proof.closures.iter().cloned().map(|mut c| {
            if let ClosedBy::Bound(i) = &mut c.reason {
                *i += offset;
            }
            c
        }));
    }
    stats.pairs_evaluated = records.len() as u64;
    stats.boxes_bounded = bounds.len() as u64;
    // Every search evaluates the floor in full: a quantity with no value anywhere is a forgery.
    if let Some(i) = (0..quantities.len()).find(|&i| records.iter().all(|r| r.values[i].is_none()))
    {
        return Err(bad(
            "merge",
            format!("no slice gives quantity {i} a value (the floor's pairs are missing)"),
        ));
    }
    let profile = InputsProfile {
        rows: rows_of(&quantities, &records, None),
        stats,
        symmetry,
        switches,
        records,
        bounds,
        closures,
        arithmetic: arithmetic.into_iter().collect::<Vec<_>>().join(", "),
    };
    Ok(MergedInputs {
        query: InputsProfileQuery {
            randomizer,
            n,
            quantities,
            options: settings.options.clone(),
            backend: settings.backend,
            exact_ctx: settings.exact_ctx,
            escalate_above: settings.escalate_above,
            symmetry: true,
            slice: None,
            ceiling: None,
        },
        shards: shards
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.proof.slice.expect("checked").index,
                    s.cert["digest"]["value"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect(),
        settings,
        profile,
    })
}
