//! Verification of `compare-messages` (issue 24): each model's pair by the pair routes (for
//! several messages, the raw-message reference among them), each model's profile by its proof,
//! then the ratios and the data-processing check from the verified values.

use super::pair::{PairSubject, bracket_route, verify_pair};
use super::profile::{ProfileProof, verify_profile};
use super::{Tally, enclosure_at, higher_precision, u64_at, users_at};
use crate::certificate::Settings;
use crate::enclosure::{Enclosure, with_exact_endpoints};
use crate::error::{Error, Result};
use crate::mechanism::Mechanism;
use crate::multimessage::compare::{Dominance, Model, RATIOS, ratio};
use serde_json::Value;

const QUANTITIES: [&str; 3] = ["delta_qp", "delta_pq", "delta_two_sided"];

pub(super) fn verify_compare_messages(
    cert: &Value,
    mechanism: &Mechanism,
    settings: &Settings,
    tally: &mut Tally,
) -> Result<()> {
    let (report, method) = (&cert["report"], &cert["method"]);
    if mechanism.messages.is_some() {
        tally.problem("mechanism: compare-messages records the single-message mechanism");
        return Ok(());
    }
    let n = users_at(&report["n"], "report.n")?;
    let k = u64_at(&report["k"], "report.k")?;
    let m = u64_at(&report["messages"], "report.messages")?;
    let m = u32::try_from(m)
        .ok()
        .filter(|m| (2..=crate::multimessage::MAX_MESSAGES).contains(m))
        .ok_or_else(|| Error::argument("report.messages", format!("not a message count: {m}")))?;
    let models = report["models"].as_array().map_or(&[][..], Vec::as_slice);
    let methods = method["models"].as_array().map_or(&[][..], Vec::as_slice);
    if models.len() != Model::ALL.len() || methods.len() != Model::ALL.len() {
        tally.problem("report.models: not the four models (single, single_nm, unbundled, bundled)");
        return Ok(());
    }
    let rows = report["rows"].as_array().map_or(&[][..], Vec::as_slice);
    let profiled = !models[0]["profile"].is_null();
    // Per model, the verified values at each row: [qp, pq, two-sided, profile].
    let mut values: Vec<Vec<[Option<Enclosure>; 4]>> = Vec::new();
    for (i, model) in Model::ALL.into_iter().enumerate() {
        let (r, rm) = (&models[i], &methods[i]);
        if r["model"] != model.key() || rm["model"] != model.key() {
            tally.problem(format!("report.models.{i}.model: not {}", model.key()));
            return Ok(());
        }
        let (ni, ki) = model.users(n, k, m);
        if r["n"] != ni || r["k"] != ki {
            tally.problem(format!(
                "report.models.{i}: (n, k) is not ({ni}, {ki}) for the {} model",
                model.key()
            ));
        }
        let variant = model.mechanism(mechanism, m)?;
        let exact = with_exact_endpoints(|| variant.to_json());
        for part in ["pair", "profile"] {
            if !r[part].is_null() && r[part]["mechanism"] != exact {
                tally.problem(format!(
                    "report.models.{i}.{part}.mechanism: not the {} model of the mechanism",
                    model.key()
                ));
            }
        }
        if r["pair"]["n"] != ni || r["pair"]["k"] != ki {
            tally.problem(format!(
                "report.models.{i}.pair: (n, k) is not ({ni}, {ki})"
            ));
        }
        let mut sub = Tally::default();
        let subject = PairSubject::Binary {
            mechanism: &variant,
            n: ni,
            k: ki,
        };
        let alphabet = variant.alphabet_json(settings.options.reduce);
        super::check_alphabet("alphabet", &r["pair"], alphabet, &mut sub);
        verify_pair("delta", &r["pair"], &subject, settings, &mut sub)?;
        let precision = subject.precision(settings, &r["pair"]);
        let bracket = match mechanism.rational_bracket(precision) {
            Some([lo, hi]) => Some([model.mechanism(&lo, m)?, model.mechanism(&hi, m)?]),
            None => None,
        };
        if let Some([lower, upper]) = &bracket {
            let at = |mechanism| PairSubject::Binary {
                mechanism,
                n: ni,
                k: ki,
            };
            let ends = [&at(lower), &at(upper)];
            bracket_route("delta", &r["pair"], ends, settings, &mut sub)?;
        }
        tally.absorb(&format!("report.models.{i}.pair."), sub);
        let mut profile_rows = Vec::new();
        match (profiled, r["profile"].is_null()) {
            (true, false) => {
                let proof = ProfileProof {
                    prefix: format!("report.models.{i}.profile."),
                    report: &r["profile"],
                    method: &rm["profile"],
                    precision: higher_precision(settings),
                    finer: higher_precision(settings),
                    bracket: bracket.clone(),
                };
                verify_profile(&proof, &variant, settings, tally)?;
                if r["profile"]["n"] != ni
                    || r["profile"]["k_range"] != serde_json::json!([0, ni - 1])
                    || r["profile"]["partial"] != false
                {
                    tally.problem(format!(
                        "report.models.{i}.profile: not mechanism-wide over n = {ni}"
                    ));
                }
                let results = r["profile"]["results"].as_array().into_iter().flatten();
                for (j, row) in results.enumerate() {
                    if &row["eps"] != rows.get(j).map_or(&Value::Null, |r| &r["eps"]) {
                        tally.problem(format!(
                            "report.models.{i}.profile.results.{j}.eps: not the row's ε"
                        ));
                    }
                    let value = enclosure_at(&row["delta_profile"], "delta_profile")?;
                    profile_rows.push(Some(value));
                }
            }
            (false, true) => {}
            _ => {
                tally.problem(format!(
                    "report.models.{i}.profile: given for some models and not others"
                ));
                return Ok(());
            }
        }
        let results = r["pair"]["results"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if results.len() != rows.len() || profiled && profile_rows.len() != rows.len() {
            tally.problem(format!(
                "report.models.{i}: not one value per row of report.rows"
            ));
            return Ok(());
        }
        let mut at = Vec::new();
        for (j, res) in results.iter().enumerate() {
            if res["eps"] != rows[j]["eps"] {
                tally.problem(format!(
                    "report.models.{i}.pair.results.{j}.eps: not the row's ε"
                ));
            }
            let mut v: [Option<Enclosure>; 4] = Default::default();
            for (slot, key) in QUANTITIES.iter().enumerate() {
                v[slot] = Some(enclosure_at(&res[*key], key)?);
            }
            v[3] = profile_rows.get(j).cloned().flatten();
            at.push(v);
        }
        values.push(at);
    }
    let index = |model: Model| {
        Model::ALL
            .iter()
            .position(|x| *x == model)
            .expect("a model")
    };
    for (j, row) in rows.iter().enumerate() {
        for (key, a, b) in RATIOS {
            for (slot, quantity) in QUANTITIES.iter().chain(["profile"].iter()).enumerate() {
                if slot == 3 && !profiled {
                    continue;
                }
                let (x, y) = (&values[index(a)][j][slot], &values[index(b)][j][slot]);
                let want = match (x, y) {
                    (Some(x), Some(y)) => ratio(x, y).map(|e| with_exact_endpoints(|| e.to_json())),
                    _ => None,
                }
                .unwrap_or(Value::Null);
                if row["ratios"][key][*quantity] != want {
                    tally.problem(format!(
                        "report.rows.{j}.ratios.{key}.{quantity}: not the ratio of the verified values"
                    ));
                }
            }
        }
        let (u, b) = (
            &values[index(Model::Unbundled)][j],
            &values[index(Model::Bundled)][j],
        );
        for (slot, quantity) in [(0, "delta_qp"), (1, "delta_pq"), (3, "profile")] {
            let want = match (&u[slot], &b[slot]) {
                (Some(x), Some(y)) => match Dominance::of(x, y, quantity) {
                    Ok(d) => Value::from(d.key()),
                    Err(e) => {
                        tally.problem(format!("report.rows.{j}: {e}"));
                        continue;
                    }
                },
                _ => Value::Null,
            };
            if row["unbundled_le_bundled"][quantity] != want {
                tally.problem(format!(
                    "report.rows.{j}.unbundled_le_bundled.{quantity}: not what the verified values give"
                ));
            }
        }
    }
    tally.route("ratios and unbundled <= bundled re-derived from the verified values");
    Ok(())
}
