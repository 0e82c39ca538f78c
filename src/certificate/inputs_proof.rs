//! The proof of a profile over every dataset (a randomizer on more than two inputs) as a
//! certificate holds it: written by `profile --certificate` and `merge`, read back by `verify`
//! and `merge` (proofs-notes/inputs-profile.md, "Certificate and `verify`").
//!
//! Counts are over the inputs in the order of `mechanism.exact.inputs`; a switch `[a, b]`
//! evaluates both datasets `b → a` (`qp`) and `a → b` (`pq`).

use super::verify::enclosure_at;
use crate::enclosure::{Enclosure, exact_string, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::randomizer::Randomizer;
use crate::profile::Quantity;
use crate::profile_inputs::boxes::CompositionBox;
use crate::profile_inputs::{
    BoundRecord, ClosedBy, Closure, InputsProfile, InputsProfileQuery, MAX_SLICES, PairRecord,
    Slice,
};
use crate::query::Threshold;
use serde_json::{Value, json};

/// A proof read back.
pub struct Proof {
    pub quantities: Vec<Quantity>,
    /// The symmetry components claimed (each to be checked on the rows before use).
    pub symmetry: Vec<Vec<usize>>,
    pub switches: Vec<(usize, usize)>,
    pub records: Vec<PairRecord>,
    pub bounds: Vec<BoundRecord>,
    pub closures: Vec<Closure>,
    pub slice: Option<Slice>,
    /// A ceiling search's level per quantity (`bounds --ceiling-seconds`).
    pub ceiling: Option<Vec<rug::Rational>>,
    /// Whether each switch's tree starts from the compositions sorted within the symmetry
    /// blocks (`"roots": "sorted"`, `profile_inputs::slice_roots`) rather than from every one.
    pub sorted_roots: bool,
    /// Whether the search split the switch inputs at zero first where the rows make the
    /// backgrounds off the switch dominated, and may close those by it (`"dominance":
    /// "off-switch"`, `profile_inputs::dominance`); older certificates did neither.
    pub dominance: bool,
}

/// The proof of `p` (call with exact endpoints).
pub fn to_json(q: &InputsProfileQuery, p: &InputsProfile) -> Value {
    let r = &q.randomizer;
    let switch = |s: (usize, usize)| json!([r.inputs[s.0], r.inputs[s.1]]);
    let pair = |v: &Option<[Enclosure; 2]>| {
        v.as_ref()
            .map_or(Value::Null, |[qp, pq]| json!([qp.to_json(), pq.to_json()]))
    };
    let mut proof = json!({
        "quantities": q.quantities.iter().map(Quantity::to_json).collect::<Vec<_>>(),
        "slice": q.slice.map(|s| json!({ "index": s.index, "of": s.of })),
        "roots": "sorted",
        "dominance": "off-switch",
        "symmetry": p.symmetry.iter().map(|c| c.iter().map(|&x| r.inputs[x].clone()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "switches": p.switches.iter().map(|&s| switch(s)).collect::<Vec<_>>(),
        "records": p.records.iter().map(|p| json!({
            "switch": switch(p.switch),
            "counts": p.counts,
            "values": p.values.iter().map(pair).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "bounds": p.bounds.iter().map(|b| json!({
            "switch": switch(b.switch),
            "lo": b.boxed.lo,
            "hi": b.boxed.hi,
            "breakpoints": b.breakpoints,
            "reference": b.reference,
            "values": b.values.iter().map(|v| v.as_ref().map_or(Value::Null, |(t, e)| json!({
                "eps": t.eps_text(),
                "bound": e.to_json(),
            }))).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "closures": p.closures.iter().map(|c| {
            let mut v = json!({
                "switch": switch(c.switch),
                "lo": c.boxed.lo,
                "hi": c.boxed.hi,
                "quantity": c.quantity,
            });
            match &c.reason {
                ClosedBy::Bound(i) => {
                    v["reason"] = json!("bound");
                    v["bound"] = json!(i);
                }
                ClosedBy::Screened { at, delta } => {
                    v["reason"] = json!("screened");
                    v["at"] = json!(exact_string(at));
                    v["delta"] = delta.to_json();
                }
                ClosedBy::Dominated { by } => {
                    v["reason"] = json!("dominated");
                    v["by"] = json!(by);
                }
            }
            v
        }).collect::<Vec<_>>(),
    });
    if let Some(c) = &q.ceiling {
        proof["ceiling"] = c.iter().map(exact_string).collect();
    }
    proof
}

/// Reads `method` back, checking that every switch, composition and box is one of this
/// randomizer at n − 1 = `m` other users.
pub fn read(method: &Value, r: &Randomizer, m: u64) -> Result<Proof> {
    let inputs = r.rows.len();
    let quantities: Vec<Quantity> = method["quantities"]
        .as_array()
        .ok_or_else(|| Error::argument("method.quantities", "missing"))?
        .iter()
        .enumerate()
        .map(|(i, q)| {
            Quantity::from_json(q)
                .filter(|q| !matches!(q, Quantity::Renyi(_)))
                .ok_or_else(|| Error::argument(format!("method.quantities.{i}"), "malformed"))
        })
        .collect::<Result<_>>()?;
    let switch = |v: &Value, field: &str| -> Result<(usize, usize)> {
        let names = names_list(v, r, field)?;
        match names.as_slice() {
            [a, b] if a < b => Ok((*a, *b)),
            _ => Err(Error::argument(
                field,
                "a switch is two distinct inputs in order",
            )),
        }
    };
    let counts = |v: &Value, field: &str| -> Result<Vec<u64>> {
        let c: Vec<u64> = v
            .as_array()
            .ok_or_else(|| Error::argument(field, "expected counts"))?
            .iter()
            .map(|x| {
                x.as_u64()
                    .ok_or_else(|| Error::argument(field, "expected counts"))
            })
            .collect::<Result<_>>()?;
        if c.len() != inputs {
            return Err(Error::argument(field, "one count per input"));
        }
        Ok(c)
    };
    let boxed = |v: &Value, field: &str| -> Result<CompositionBox> {
        let lo = counts(&v["lo"], &format!("{field}.lo"))?;
        let hi = counts(&v["hi"], &format!("{field}.hi"))?;
        let sum_lo = lo.iter().try_fold(0u64, |s, x| s.checked_add(*x));
        let sum_hi = hi.iter().try_fold(0u64, |s, x| s.checked_add(*x));
        if lo.iter().zip(&hi).any(|(l, h)| l > h)
            || sum_lo.is_none_or(|s| s > m)
            || sum_hi.is_none_or(|s| s < m)
        {
            return Err(Error::argument(
                field,
                "not a box of compositions of the others",
            ));
        }
        Ok(CompositionBox { lo, hi })
    };
    let list = |key: &str| -> Result<&Vec<Value>> {
        method[key]
            .as_array()
            .ok_or_else(|| Error::argument(format!("method.{key}"), "missing"))
    };
    let switches = list("switches")?
        .iter()
        .enumerate()
        .map(|(i, v)| switch(v, &format!("method.switches.{i}")))
        .collect::<Result<_>>()?;
    let per_quantity = |v: &Value, field: &str| -> Result<Vec<Value>> {
        match v.as_array() {
            Some(a) if a.len() == quantities.len() => Ok(a.clone()),
            _ => Err(Error::argument(field, "one entry per quantity")),
        }
    };
    let records = list("records")?
        .iter()
        .enumerate()
        .map(|(j, v)| {
            let field = format!("method.records.{j}");
            let c = counts(&v["counts"], &format!("{field}.counts"))?;
            if c.iter().try_fold(0u64, |s, x| s.checked_add(*x)) != Some(m) {
                return Err(Error::argument(
                    format!("{field}.counts"),
                    format!("must add up to n − 1 = {m}"),
                ));
            }
            let values = per_quantity(&v["values"], &format!("{field}.values"))?
                .iter()
                .enumerate()
                .map(|(i, p)| -> Result<Option<[Enclosure; 2]>> {
                    if p.is_null() {
                        return Ok(None);
                    }
                    let at = |s: usize| enclosure_at(&p[s], &format!("{field}.values.{i}.{s}"));
                    Ok(Some([at(0)?, at(1)?]))
                })
                .collect::<Result<_>>()?;
            Ok(PairRecord {
                switch: switch(&v["switch"], &format!("{field}.switch"))?,
                counts: c,
                values,
            })
        })
        .collect::<Result<_>>()?;
    let bounds = list("bounds")?
        .iter()
        .enumerate()
        .map(|(j, v)| {
            let field = format!("method.bounds.{j}");
            let breakpoints: Vec<u64> = v["breakpoints"]
                .as_array()
                .ok_or_else(|| Error::argument(format!("{field}.breakpoints"), "missing"))?
                .iter()
                .map(|x| {
                    x.as_u64()
                        .ok_or_else(|| Error::argument(format!("{field}.breakpoints"), "malformed"))
                })
                .collect::<Result<_>>()?;
            let values = per_quantity(&v["values"], &format!("{field}.values"))?
                .iter()
                .enumerate()
                .map(|(i, t)| -> Result<Option<(Threshold, Enclosure)>> {
                    if t.is_null() {
                        return Ok(None);
                    }
                    let threshold = t["eps"]
                        .as_str()
                        .and_then(Threshold::from_text)
                        .ok_or_else(|| {
                            Error::argument(format!("{field}.values.{i}.eps"), "malformed")
                        })?;
                    Ok(Some((
                        threshold,
                        enclosure_at(&t["bound"], &format!("{field}.values.{i}.bound"))?,
                    )))
                })
                .collect::<Result<_>>()?;
            Ok(BoundRecord {
                switch: switch(&v["switch"], &format!("{field}.switch"))?,
                boxed: boxed(v, &field)?,
                breakpoints,
                reference: match &v["reference"] {
                    Value::Null => None,
                    c => Some(counts(c, &format!("{field}.reference"))?),
                },
                values,
            })
        })
        .collect::<Result<_>>()?;
    let closures = list("closures")?
        .iter()
        .enumerate()
        .map(|(j, v)| {
            let field = format!("method.closures.{j}");
            let quantity = v["quantity"]
                .as_u64()
                .map(|q| q as usize)
                .filter(|q| *q < quantities.len())
                .ok_or_else(|| Error::argument(format!("{field}.quantity"), "malformed"))?;
            let reason = match v["reason"].as_str() {
                Some("bound") => ClosedBy::Bound(
                    v["bound"]
                        .as_u64()
                        .ok_or_else(|| Error::argument(format!("{field}.bound"), "malformed"))?
                        as usize,
                ),
                Some("screened") => ClosedBy::Screened {
                    at: v["at"]
                        .as_str()
                        .and_then(parse_rational)
                        .filter(|a| *a >= 0)
                        .ok_or_else(|| Error::argument(format!("{field}.at"), "malformed"))?,
                    delta: enclosure_at(&v["delta"], &format!("{field}.delta"))?,
                },
                Some("dominated") => ClosedBy::Dominated {
                    by: counts(&v["by"], &format!("{field}.by"))?,
                },
                _ => return Err(Error::argument(format!("{field}.reason"), "malformed")),
            };
            Ok(Closure {
                switch: switch(&v["switch"], &format!("{field}.switch"))?,
                boxed: boxed(v, &field)?,
                quantity,
                reason,
            })
        })
        .collect::<Result<_>>()?;
    let slice = match &method["slice"] {
        Value::Null => None,
        v => Some(match (v["index"].as_u64(), v["of"].as_u64()) {
            (Some(index), Some(of)) if index < of && of <= MAX_SLICES => Slice { index, of },
            _ => return Err(Error::argument("method.slice", "malformed")),
        }),
    };
    let symmetry = names_lists(&method["symmetry"], r, "method.symmetry")?;
    let sorted_roots = match &method["roots"] {
        Value::Null => false,
        v if v == "sorted" => true,
        _ => return Err(Error::argument("method.roots", "\"sorted\" or absent")),
    };
    let dominance = match &method["dominance"] {
        Value::Null => false,
        v if v == "off-switch" => true,
        _ => {
            return Err(Error::argument(
                "method.dominance",
                "\"off-switch\" or absent",
            ));
        }
    };
    let ceiling = match &method["ceiling"] {
        Value::Null => None,
        v => Some(
            v.as_array()
                .filter(|c| c.len() == quantities.len())
                .ok_or_else(|| {
                    Error::argument("method.ceiling", "one level per quantity expected")
                })?
                .iter()
                .map(|c| {
                    c.as_str()
                        .and_then(parse_rational)
                        .filter(|c| *c >= 0)
                        .ok_or_else(|| Error::argument("method.ceiling", "malformed"))
                })
                .collect::<Result<_>>()?,
        ),
    };
    Ok(Proof {
        quantities,
        symmetry,
        switches,
        records,
        bounds,
        closures,
        slice,
        ceiling,
        sorted_roots,
        dominance,
    })
}

/// Input names back to indices.
fn names_list(v: &Value, r: &Randomizer, field: &str) -> Result<Vec<usize>> {
    v.as_array()
        .ok_or_else(|| Error::argument(field, "expected a list of inputs"))?
        .iter()
        .map(|name| {
            name.as_str()
                .and_then(|name| r.inputs.iter().position(|x| x == name))
                .ok_or_else(|| Error::argument(field, format!("{name} is not an input")))
        })
        .collect()
}

fn names_lists(v: &Value, r: &Randomizer, field: &str) -> Result<Vec<Vec<usize>>> {
    v.as_array()
        .ok_or_else(|| Error::argument(field, "expected lists of inputs"))?
        .iter()
        .enumerate()
        .map(|(i, c)| names_list(c, r, &format!("{field}.{i}")))
        .collect()
}
