//! `merge`: partial profile certificates (shards over ranges of k, e.g. from a job array) combined
//! into the mechanism-wide profile.
//!
//! The shards must be intact (schema and digest), agree on everything but their range of k (the
//! mechanism as given, the settings, n and the quantities), and cover `0..n−1` exactly once.  The
//! combined value of a quantity is `[max lo, max hi]` over the shards' values (each encloses its
//! shard's maximum, so this encloses the maximum of the maxima).  The combined argmax is
//! recomputed from every shard's evaluated pairs: each (k, direction) whose certified upper end
//! reaches the combined lower end.  Pairs a shard pruned lie below that shard's maximum, hence
//! below the combined one.  The merged certificate keeps every shard's pairs and closed ranges,
//! so `verify` re-derives it like any profile.

use super::{SCHEMA_ID, Settings, digest, schema_errors};
use crate::enclosure::{Enclosure, Endpoint, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::profile::{
    ClosedNodes, Closure, ClosureKind, LeafRecord, Profile, ProfileQuery, ProfileRow, ProfileStats,
    Quantity, reaching, tidy_ties,
};
use rug::Rational;
use serde_json::Value;

/// A shard, read and checked.
struct Shard {
    name: String,
    cert: Value,
    range: (u64, u64),
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::argument(field, message)
}

fn enclosure(v: &Value, field: &str) -> Result<Enclosure> {
    let end = |key: &str| -> Result<Endpoint> {
        match v[key].as_str() {
            Some("inf") => Ok(Endpoint::PosInf),
            Some("-inf") => Ok(Endpoint::NegInf),
            Some(t) => parse_rational(t)
                .map(Endpoint::Finite)
                .ok_or_else(|| bad(field, format!("{key}: not an exact number"))),
            None => Err(bad(field, format!("{key} is missing"))),
        }
    };
    let (lo, hi) = (end("lo")?, end("hi")?);
    if lo > hi {
        return Err(bad(field, "its lower end exceeds its upper end"));
    }
    Ok(Enclosure::new(lo, hi))
}

/// Two shards must agree on each field (a dotted path): the same question, cut differently.
pub(super) fn agree<'a>(
    first: (&str, &'a Value),
    other: (&str, &'a Value),
    fields: &[&str],
) -> Result<()> {
    // By reference: a certificate holds every record, and cloning it per field made merges of
    // many shards slower.
    let at = |v: &'a Value, path: &str| path.split('.').fold(v, |v, k| &v[k]);
    for field in fields {
        let (a, b) = (at(first.1, field), at(other.1, field));
        if a != b {
            return Err(bad(
                format!("{}: {field}", other.0),
                format!("differs from {} ({a} vs {b})", first.0),
            ));
        }
    }
    Ok(())
}

/// Reads one shard: a profile certificate, intact.
fn read(name: &str, text: &str) -> Result<Shard> {
    let cert: Value =
        serde_json::from_str(text).map_err(|e| bad(name, format!("not JSON: {e}")))?;
    // A binary-input profile is version 1, or version 2 for users sending several messages.
    let several_messages = !cert["mechanism"]["exact"]["messages"].is_null();
    let schema = if several_messages {
        super::SCHEMA_V2_ID
    } else {
        SCHEMA_ID
    };
    if cert["schema"] != schema {
        return Err(bad(name, "not a shufflecert certificate"));
    }
    if let Some(first) = schema_errors(&cert).first() {
        return Err(bad(
            name,
            format!("does not conform to the schema: {first}"),
        ));
    }
    if cert["command"] != "profile" {
        return Err(bad(
            name,
            format!("a {} certificate, not a profile", cert["command"]),
        ));
    }
    if cert["digest"]["value"] != Value::String(digest(&cert)?) {
        return Err(bad(
            name,
            "its digest does not match its contents (edited?)",
        ));
    }
    let range = &cert["report"]["k_range"];
    let range = (
        range[0]
            .as_u64()
            .ok_or_else(|| bad(name, "report.k_range"))?,
        range[1]
            .as_u64()
            .ok_or_else(|| bad(name, "report.k_range"))?,
    );
    Ok(Shard {
        name: name.to_string(),
        cert,
        range,
    })
}

/// Joins the boundary pairs that shards run with `--with-ends` evaluated outside their range
/// into the records (sorted by k) of the shard whose range holds them: each value becomes the
/// intersection of the two enclosures of the same pair (disjoint ones prove a bug and are
/// refused).  A boundary pair that shard closed is dropped: its closure already covers it, and
/// its value lies below that shard's maximum, hence below the combined one.
fn join_ends(records: &mut [LeafRecord], ends: Vec<LeafRecord>) -> Result<()> {
    for record in ends {
        let Ok(at) = records.binary_search_by_key(&record.k, |r| r.k) else {
            continue;
        };
        let (kept, k) = (&mut records[at], record.k);
        for (kept, other) in [(&mut kept.qp, record.qp), (&mut kept.pq, record.pq)] {
            for (kept, other) in kept.iter_mut().zip(other) {
                *kept = match (kept.take(), other) {
                    (Some(a), Some(b)) if !a.overlaps(&b) => {
                        return Err(Error::Internal(format!(
                            "k = {k}: two shards give disjoint values {a} and {b}; nothing is merged"
                        )));
                    }
                    (Some(a), Some(b)) => Some(Enclosure::new(
                        a.lo().clone().max(b.lo().clone()),
                        a.hi().clone().min(b.hi().clone()),
                    )),
                    // Closed above the leaf in its own shard: the closure covers it.
                    (a, _) => a,
                };
            }
        }
    }
    Ok(())
}

/// The combined profile, with the query and settings it answers.
pub struct Merged {
    pub query: ProfileQuery,
    pub settings: Settings,
    pub profile: Profile,
    /// `(file, k range, digest)` of each shard, in order of k.
    pub shards: Vec<(String, (u64, u64), String)>,
}

/// Checks and combines shards given as `(name, text)`.
pub fn merge(files: &[(String, String)]) -> Result<Merged> {
    if files.is_empty() {
        return Err(bad("merge", "give at least one certificate"));
    }
    let mut shards = files
        .iter()
        .map(|(name, text)| read(name, text))
        .collect::<Result<Vec<_>>>()?;
    shards.sort_by_key(|s| s.range);
    let first = &shards[0];
    for s in &shards[1..] {
        agree(
            (&first.name, &first.cert),
            (&s.name, &s.cert),
            &["mechanism", "settings", "report.n", "method.quantities"],
        )?;
    }
    let n = first.cert["report"]["n"]
        .as_u64()
        .ok_or_else(|| bad("report.n", "missing"))?;
    // Coverage of 0..n−1, exactly once.
    let mut next = 0;
    let mut previous: Option<&Shard> = None;
    for s in &shards {
        let (a, b) = s.range;
        if a > next {
            return Err(bad(
                "merge",
                format!("k = {next}..{} is covered by no shard", a - 1),
            ));
        }
        if let (true, Some(p)) = (a < next, previous) {
            return Err(bad(
                "merge",
                format!(
                    "k = {a}..{} is covered by both {} and {}",
                    (next - 1).min(b),
                    p.name,
                    s.name
                ),
            ));
        }
        next = b + 1;
        previous = Some(s);
    }
    if next != n {
        return Err(bad(
            "merge",
            format!("k = {next}..{} is covered by no shard", n - 1),
        ));
    }
    let mechanism: Mechanism =
        super::recorded_mechanism(&first.cert, crate::mechanism::FamilyMeaning::Current)?;
    let settings = Settings::from_json(&first.cert["settings"])?;
    let quantities = first.cert["method"]["quantities"]
        .as_array()
        .ok_or_else(|| bad("method.quantities", "missing"))?
        .iter()
        .map(|q| {
            Quantity::from_json(q)
                .ok_or_else(|| bad("method.quantities", format!("unreadable: {q}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut records = Vec::new();
    let mut ends = Vec::new();
    let mut closures = Vec::new();
    let mut stats = ProfileStats::default();
    for s in &shards {
        let method = &s.cert["method"];
        let ends_before = ends.len();
        for r in method["records"].as_array().into_iter().flatten() {
            let values = |dir: &str| -> Result<Vec<Option<Enclosure>>> {
                (0..quantities.len())
                    .map(|i| match &r[dir][i] {
                        Value::Null => Ok(None),
                        v => enclosure(v, &format!("{}: method.records", s.name)).map(Some),
                    })
                    .collect()
            };
            let record = LeafRecord {
                k: r["k"]
                    .as_u64()
                    .ok_or_else(|| bad(&s.name, "method.records.k"))?,
                qp: values("qp")?,
                pq: values("pq")?,
            };
            if (s.range.0..=s.range.1).contains(&record.k) {
                records.push(record);
            } else {
                ends.push(record);
            }
        }
        for c in method["closures"].as_array().into_iter().flatten() {
            let kind = match c["kind"].as_str() {
                Some("below") => ClosureKind::Below,
                Some("ceiling") => ClosureKind::Ceiling,
                Some("tie") => ClosureKind::Tie,
                _ => return Err(bad(&s.name, "method.closures.kind")),
            };
            closures.push(Closure {
                range: (
                    c["range"][0]
                        .as_u64()
                        .ok_or_else(|| bad(&s.name, "method.closures"))?,
                    c["range"][1]
                        .as_u64()
                        .ok_or_else(|| bad(&s.name, "method.closures"))?,
                ),
                quantity: c["quantity"]
                    .as_u64()
                    .ok_or_else(|| bad(&s.name, "method.closures"))?
                    as usize,
                kind,
            });
        }
        let count = |key: &str| method[key].as_u64().unwrap_or(0);
        // A shard's end pairs are evaluated again by the shard that holds them.
        stats.pairs_evaluated +=
            count("pairs_evaluated").saturating_sub((ends.len() - ends_before) as u64);
        stats.k_pruned += count("k_pruned");
        stats.nodes_bounded += count("nodes_bounded");
        stats.pairs_refined += count("pairs_refined");
    }
    records.sort_by_key(|r| r.k);
    join_ends(&mut records, ends)?;
    closures.sort_by_key(|c| (c.quantity, c.range.0, c.range.1));
    let rows = combine_rows(&shards, &quantities, &records)?;
    let arithmetic = {
        let mut all: Vec<&str> = shards
            .iter()
            .filter_map(|s| s.cert["report"]["arithmetic"].as_str())
            .collect();
        all.dedup();
        all.join("; ")
    };
    let engine = match first.cert["report"]["engine"].as_str() {
        Some("binary") => "binary",
        _ => "general",
    };
    let profile = Profile {
        rows,
        stats,
        k_range: (0, n - 1),
        partial: false,
        ends: Vec::new(),
        arithmetic,
        engine,
        records,
        closed: vec![ClosedNodes::default(); quantities.len()],
        closures,
    };
    Ok(Merged {
        query: ProfileQuery {
            mechanism,
            n,
            k_range: None,
            quantities,
            options: settings.options.clone(),
            backend: settings.backend,
            exact_ctx: settings.exact_ctx,
            prune: true,
            with_ends: false,
            escalate_above: settings.escalate_above,
        },
        settings,
        shards: shards
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.range,
                    s.cert["digest"]["value"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect(),
        profile,
    })
}

/// The shard rows of quantity i, as (value, resolved, ranges of ties at 0).
fn shard_row(
    cert: &Value,
    quantities: &[Quantity],
    i: usize,
) -> Result<(Enclosure, bool, Vec<(u64, u64)>)> {
    let report = &cert["report"];
    let index = quantities[..i]
        .iter()
        .filter(|q| std::mem::discriminant(*q) == std::mem::discriminant(&quantities[i]))
        .count();
    let (row, key) = match quantities[i] {
        Quantity::Delta(_) => (&report["results"][index], "delta_profile"),
        Quantity::Epsilon(_) => (&report["eps_results"][index], "eps_profile"),
        Quantity::Renyi(_) => (&report["renyi_profile"][index], "value"),
    };
    let value = enclosure(&row[key], key)?;
    let resolved = row["resolved"].as_bool().unwrap_or(true);
    let ranges = row["argmax_k_ranges"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r[0].as_u64()?, r[1].as_u64()? + 1)))
        .collect();
    Ok((value, resolved, ranges))
}

/// The combined rows: the maximum of the shards' maxima, and the argmax from every evaluated pair.
fn combine_rows(
    shards: &[Shard],
    quantities: &[Quantity],
    records: &[LeafRecord],
) -> Result<Vec<ProfileRow>> {
    let zero = Endpoint::Finite(Rational::new());
    quantities
        .iter()
        .enumerate()
        .map(|(i, quantity)| {
            let parts = shards
                .iter()
                .map(|s| shard_row(&s.cert, quantities, i))
                .collect::<Result<Vec<_>>>()?;
            let value = parts
                .iter()
                .map(|(v, _, _)| v.clone())
                .reduce(|a, b| a.max(&b))
                .expect("at least one shard");
            // A shard whose row is unresolved may hide maximisers unless it lies below.
            let hidden = parts
                .iter()
                .any(|(v, resolved, _)| !resolved && v.hi() >= value.lo());
            let resolved = matches!(quantity, Quantity::Epsilon(_))
                || value.hi() == &zero
                || (value.lo() > &zero && !hidden);
            let mut argmax = reaching(records, i, value.lo());
            let mut argmax_ranges: Vec<(u64, u64)> = if value.lo() <= &zero {
                parts.iter().flat_map(|(_, _, r)| r.clone()).collect()
            } else {
                Vec::new()
            };
            tidy_ties(&mut argmax, &mut argmax_ranges);
            Ok(ProfileRow {
                quantity: quantity.clone(),
                value,
                argmax,
                argmax_ranges,
                resolved,
            })
        })
        .collect()
}
