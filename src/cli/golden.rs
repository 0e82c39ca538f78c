//! `shufflecert golden --out DIR`: the golden fixture corpus, for regression tests in any
//! language.
//!
//! Every family of cases is one command of this tool over one standard mechanism
//! ([`crate::mechanism::standard`]), run in process with `--certificate`.  The cases are read
//! back from the certificate's report (exact endpoints), so the corpus and its certificates agree
//! by construction, and `shufflecert verify` re-derives every family.  Nothing in the corpus
//! depends on where it was written or when, except each certificate's `created` and `tool`
//! (which the digest of `manifest.json` does not cover).

use super::args::{Cli, GoldenArgs};
use crate::arith::interval::f64_bounds;
use crate::enclosure::{Enclosure, Endpoint, parse_rational};
use crate::error::{Error, Result};
use crate::mechanism::standard::{STANDARD, Standard};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The corpus format this command writes.
pub const SCHEMA: &str = "shufflecert/golden/v1";

/// δ(ε) of single pairs: the (n, k) and the ε grid.
const DELTA_PAIRS: [(u64, u64); 4] = [(10, 0), (10, 5), (100, 0), (100, 50)];
const DELTA_EPS: &str = "0,0.25,0.5,1";
/// ε(δ) of single pairs at k = 0: (n, δ).
const EPSILON_POINTS: [(u64, &str); 3] = [(100, "1e-3"), (100, "1e-6"), (1000, "1e-6")];
/// Divergences of single pairs at k = 0 (Rényi of order 2).
const DIVERGENCE_SIZES: [u64; 2] = [10, 100];
/// The mechanism-wide profile: n, and the ε and δ grids.
const PROFILE_N: u64 = 100;
const PROFILE_EPS: &str = "0.5,1";
const PROFILE_DELTA: &str = "1e-3,1e-6";
/// The range of `bounds` for randomizers on more than two inputs.
const BOUNDS_SIZES: [u64; 2] = [10, 100];
const BOUNDS_EPS: &str = "0.5,1";

/// The case files, by question.
const QUESTIONS: [(&str, &str); 5] = [
    (
        "delta",
        "δ(ε) of the pair (T_{n,k}, T_{n,k+1}) in each direction, and two-sided",
    ),
    (
        "epsilon",
        "the smallest ε ≥ 0 with δ(ε) ≤ the target, in each direction, and two-sided",
    ),
    (
        "divergences",
        "TV, KL, JSD, χ², squared Hellinger and Rényi (order 2), in nats",
    ),
    (
        "profile",
        "the mechanism-wide worst case over every k: δ_M(ε) and ε_M(δ)",
    ),
    (
        "bounds",
        "a certified range [lower, upper] of δ_M(ε) on any input domain",
    ),
];

/// One family of cases: one command, one certificate.
struct Family {
    id: String,
    mechanism: &'static Standard,
    /// The question (`QUESTIONS`) its cases answer: the command that answers it.
    question: &'static str,
    /// The command's arguments after `-m SPEC`.
    args: Vec<String>,
}

impl Family {
    fn new(m: &'static Standard, question: &'static str, label: String, args: &[String]) -> Self {
        Family {
            id: format!("{}.{question}.{label}", m.name),
            mechanism: m,
            question,
            args: args.to_vec(),
        }
    }

    fn certificate(&self) -> String {
        format!("certificates/{}.json", self.id)
    }

    /// The command line, as run from the corpus folder.
    fn command_line(&self) -> String {
        let mut words = vec!["shufflecert", self.question, "-m", self.mechanism.spec];
        words.extend(self.args.iter().map(String::as_str));
        let certificate = self.certificate();
        words.extend(["--certificate", &certificate]);
        words.join(" ")
    }
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

/// Every family of the grid, in the order the corpus lists them.
fn grid() -> Vec<Family> {
    let mut families = Vec::new();
    for m in STANDARD.iter() {
        if m.many_inputs {
            for n in BOUNDS_SIZES {
                let args = strings(&["--n", &n.to_string(), "--eps", BOUNDS_EPS]);
                families.push(Family::new(m, "bounds", format!("n{n}"), &args));
            }
            continue;
        }
        for (n, k) in DELTA_PAIRS {
            let args = strings(&[
                "--n",
                &n.to_string(),
                "--k",
                &k.to_string(),
                "--eps",
                DELTA_EPS,
            ]);
            families.push(Family::new(m, "delta", format!("n{n}-k{k}"), &args));
        }
        for (n, delta) in EPSILON_POINTS {
            let args = strings(&["--n", &n.to_string(), "--k", "0", "--delta", delta]);
            let label = format!("n{n}-k0-delta{delta}");
            families.push(Family::new(m, "epsilon", label, &args));
        }
        for n in DIVERGENCE_SIZES {
            let args = strings(&["--n", &n.to_string(), "--k", "0"]);
            families.push(Family::new(m, "divergences", format!("n{n}-k0"), &args));
        }
        let n = PROFILE_N.to_string();
        for (flag, values, label) in [
            ("--eps", PROFILE_EPS, "eps"),
            ("--delta", PROFILE_DELTA, "delta"),
        ] {
            let args = strings(&["--n", &n, flag, values]);
            families.push(Family::new(m, "profile", format!("n{n}-{label}"), &args));
        }
    }
    families
}

/// The grid as the manifest records it.
fn grid_json() -> Value {
    json!({
        "delta": { "n_k": DELTA_PAIRS, "eps": DELTA_EPS.split(',').collect::<Vec<_>>() },
        "epsilon": { "n_delta": EPSILON_POINTS, "k": 0 },
        "divergences": { "n": DIVERGENCE_SIZES, "k": 0, "renyi_order": "2" },
        "profile": {
            "n": PROFILE_N,
            "eps": PROFILE_EPS.split(',').collect::<Vec<_>>(),
            "delta": PROFILE_DELTA.split(',').collect::<Vec<_>>(),
        },
        "bounds": { "n": BOUNDS_SIZES, "eps": BOUNDS_EPS.split(',').collect::<Vec<_>>() },
    })
}

/// What `golden` wrote.
pub struct Written {
    pub manifest: Value,
    pub manifest_sha256: String,
}

/// Writes the corpus into `args.out` (new or empty).
/// The corpus is written whole into a sibling folder and renamed into place only once every
/// family has run, so a failure or an interrupt leaves no partial corpus at `--out`.
pub fn write(args: &GoldenArgs) -> Result<Written> {
    if args.out.trim().is_empty() {
        return Err(Error::argument(
            "--out",
            "give a folder to write the corpus into",
        ));
    }
    let target = PathBuf::from(&args.out);
    check_empty(&target, &args.out)?;
    let name = target
        .file_name()
        .ok_or_else(|| Error::argument("--out", format!("{} names no folder", args.out)))?
        .to_string_lossy()
        .into_owned();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::argument(
            "--out",
            format!("{} does not exist", parent.display()),
        ));
    }
    let staging =
        std::path::absolute(parent.join(format!(".{name}.partial-{}", std::process::id())))
            .map_err(|e| Error::Io {
                path: args.out.clone(),
                message: format!("cannot resolve the folder: {e}"),
            })?;
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| Error::Io {
            path: staging.display().to_string(),
            message: format!("cannot remove a stale partial corpus: {e}"),
        })?;
    }
    /// Removes the staging folder unless the corpus moved into place (also when a cancelled
    /// computation unwinds).
    struct Staging<'a>(&'a Path);
    impl Drop for Staging<'_> {
        fn drop(&mut self) {
            if self.0.exists() {
                // Best effort: the error that stopped the corpus is the one to report.
                let _ = std::fs::remove_dir_all(self.0);
            }
        }
    }
    let _cleanup = Staging(&staging);
    let written = write_into(&staging)?;
    if target.is_dir() {
        std::fs::remove_dir(&target).map_err(|e| Error::Io {
            path: args.out.clone(),
            message: format!("cannot replace the empty folder: {e}"),
        })?;
    }
    std::fs::rename(&staging, &target).map_err(|e| Error::Io {
        path: args.out.clone(),
        message: format!("cannot move the corpus into place: {e}"),
    })?;
    Ok(written)
}

/// Writes the whole corpus into `out`, a folder this run owns.
fn write_into(out: &Path) -> Result<Written> {
    let out = out.to_path_buf();
    for folder in ["mechanisms", "certificates", "cases"] {
        create_dir(&out.join(folder))?;
    }
    let mut mechanisms = Vec::new();
    for m in STANDARD.iter() {
        let mut entry = json!({ "name": m.name, "spec": m.spec, "about": m.about });
        if let Some(text) = m.text {
            write_file(&out.join(m.spec), text)?;
            entry["sha256"] = json!(sha256(text.as_bytes()));
        }
        mechanisms.push(entry);
    }
    let families = grid();
    let stage = crate::progress::Stage::start("golden corpus", "families", families.len() as u64);
    let mut cases: Vec<(&str, Vec<Value>)> =
        QUESTIONS.iter().map(|(q, _)| (*q, Vec::new())).collect();
    let mut certificates = Vec::new();
    for family in &families {
        let _step = stage.advance_on_drop(1);
        let report = run_family(&out, family)?;
        let found = cases_of(family, &report)?;
        if found.is_empty() {
            return Err(Error::Internal(format!(
                "golden: {} gave no cases",
                family.id
            )));
        }
        certificates.push(json!({
            "family": family.id,
            "path": family.certificate(),
            "command": family.command_line(),
            "cases": found.len(),
            "report_sha256": sha256(&canonical(&report)?),
        }));
        let list = cases
            .iter_mut()
            .find(|(q, _)| *q == family.question)
            .map(|(_, list)| list)
            .ok_or_else(|| {
                Error::Internal(format!("golden: no case file for {}", family.question))
            })?;
        list.extend(found);
    }
    let mut files = Vec::new();
    for ((question, list), (_, about)) in cases.iter().zip(QUESTIONS) {
        let text: String = list.iter().map(|c| format!("{c}\n")).collect();
        let path = format!("cases/{question}.jsonl");
        write_file(&out.join(&path), &text)?;
        files.push(json!({
            "path": path,
            "question": about,
            "cases": list.len(),
            "sha256": sha256(text.as_bytes()),
        }));
    }
    let readme = corpus_readme(&files, families.len());
    write_file(&out.join("README.md"), &readme)?;
    let manifest = json!({
        "schema": SCHEMA,
        "tool": { "name": "shufflecert", "version": env!("CARGO_PKG_VERSION") },
        "contract": CONTRACT,
        "grid": grid_json(),
        "mechanisms": mechanisms,
        "cases": files,
        "certificates": certificates,
        "readme_sha256": sha256(readme.as_bytes()),
    });
    let text = serde_json::to_string_pretty(&manifest).expect("JSON values serialise") + "\n";
    write_file(&out.join("manifest.json"), &text)?;
    let manifest_sha256 = sha256(text.as_bytes());
    write_file(
        &out.join("manifest.json.sha256"),
        &format!("{manifest_sha256}  manifest.json\n"),
    )?;
    Ok(Written {
        manifest,
        manifest_sha256,
    })
}

/// What a case promises, as the manifest states it.
const CONTRACT: &str = "Each case's true value lies in [value.lo, value.hi]: exact decimals or \
fractions p/q (\"inf\" is +infinity), the enclosure of the family's certificate, each endpoint \
exact or rounded outward to 34 significant digits. lo_f64 and hi_f64 are those endpoints rounded \
outward to doubles (null: +infinity). Every certificate re-derives under `shufflecert verify`.";

/// Refuses an `--out` that holds anything: the corpus is written whole.
fn check_empty(out: &Path, given: &str) -> Result<()> {
    if out.is_file() {
        return Err(Error::argument(
            "--out",
            format!("{given} is a file; give a new or empty folder"),
        ));
    }
    if out.is_dir() {
        let mut entries = std::fs::read_dir(out).map_err(|e| Error::Io {
            path: given.to_string(),
            message: format!("cannot read the folder: {e}"),
        })?;
        if entries.next().is_some() {
            return Err(Error::argument(
                "--out",
                format!(
                    "{given} is not empty; give a new or empty folder (the corpus is written whole)"
                ),
            ));
        }
    }
    Ok(())
}

fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: format!("cannot create the folder: {e}"),
    })
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    })
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The RFC 8785 canonical form of `value`.
fn canonical(value: &Value) -> Result<Vec<u8>> {
    serde_json_canonicalizer::to_vec(value)
        .map_err(|e| Error::Internal(format!("canonical JSON: {e}")))
}

/// Runs one family's command with `--certificate`, records the mechanism as the corpus names it
/// (`mechanisms/NAME.toml`, not where the corpus was written), and returns the report.
fn run_family(out: &Path, family: &Family) -> Result<Value> {
    let certificate = out.join(family.certificate());
    let spec = match family.mechanism.text {
        Some(_) => out.join(family.mechanism.spec).display().to_string(),
        None => family.mechanism.spec.to_string(),
    };
    let mut argv = vec!["shufflecert", family.question, "-m", &spec];
    argv.extend(family.args.iter().map(String::as_str));
    let certificate_arg = certificate.display().to_string();
    argv.extend(["--certificate", &certificate_arg]);
    let cli = <Cli as clap::Parser>::try_parse_from(&argv)
        .map_err(|e| Error::Internal(format!("golden: {}: {e}", family.id)))?;
    crate::progress::without_notes(|| super::run_command(&cli))?;
    let text = std::fs::read_to_string(&certificate).map_err(|e| Error::Io {
        path: certificate_arg.clone(),
        message: format!("cannot read the certificate back: {e}"),
    })?;
    let mut cert: Value = serde_json::from_str(&text)
        .map_err(|e| Error::Internal(format!("golden: {}: {e}", family.id)))?;
    if family.mechanism.text.is_some() {
        cert["mechanism"]["given"] = json!(family.mechanism.spec);
        if serde_json::to_string(&cert)
            .expect("JSON values serialise")
            .contains(&spec)
        {
            return Err(Error::Internal(format!(
                "golden: {}: the certificate names the folder it was written in",
                family.id
            )));
        }
        cert["digest"]["value"] = json!(crate::certificate::digest(&cert)?);
        let text = serde_json::to_string_pretty(&cert).expect("JSON values serialise") + "\n";
        write_file(&certificate, &text)?;
    }
    Ok(cert["report"].take())
}

/// Significant digits of a case's endpoints beyond which they are rounded outward (a certificate
/// keeps them exact; a fraction of a thousand digits helps no regression test).
const CASE_DIGITS: u32 = 34;

/// One case: where it comes from, what it asks, and its enclosure.
fn case(family: &Family, point: Map<String, Value>, value: &Value) -> Result<Value> {
    let endpoint = |key: &str| -> Result<Endpoint> {
        match value[key].as_str() {
            Some("inf") => Some(Endpoint::PosInf),
            Some(text) => parse_rational(text).map(Endpoint::Finite),
            None => None,
        }
        .ok_or_else(|| Error::Internal(format!("golden: {}: not an enclosure: {value}", family.id)))
    };
    let enclosure = Enclosure::new(endpoint("lo")?, endpoint("hi")?);
    let (lo, hi) = enclosure.outward_strings(CASE_DIGITS);
    let double = |e: &Endpoint, up: bool| match e {
        Endpoint::Finite(q) => {
            let (lo, hi) = f64_bounds(q);
            json!(if up { hi } else { lo })
        }
        _ => Value::Null,
    };
    let rounded = Enclosure::new(
        endpoint_of(&lo).unwrap_or(Endpoint::PosInf),
        endpoint_of(&hi).unwrap_or(Endpoint::PosInf),
    );
    let mut c = Map::new();
    c.insert("family".into(), json!(family.id));
    c.insert("mechanism".into(), json!(family.mechanism.name));
    c.insert("question".into(), json!(family.question));
    c.extend(point);
    c.insert("value".into(), json!({ "lo": lo, "hi": hi }));
    c.insert("lo_f64".into(), double(rounded.lo(), false));
    c.insert("hi_f64".into(), double(rounded.hi(), true));
    if let Some(resolved) = value.get("resolved") {
        c.insert("resolved".into(), resolved.clone());
    }
    Ok(Value::Object(c))
}

/// An endpoint's text read back (`None` for +∞).
fn endpoint_of(text: &str) -> Option<Endpoint> {
    parse_rational(text).map(Endpoint::Finite)
}

fn point(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

const DIRECTIONS: [&str; 3] = ["qp", "pq", "two_sided"];

/// The cases of one family, from its certificate's report.
fn cases_of(family: &Family, r: &Value) -> Result<Vec<Value>> {
    let at = |pairs: &[(&str, Value)], value: &Value| case(family, point(pairs), value);
    let (n, k) = (r["n"].clone(), r["k"].clone());
    let mut cases = Vec::new();
    match family.question {
        "delta" => {
            for row in rows(family, &r["results"])? {
                for d in DIRECTIONS {
                    let where_ = [
                        ("n", n.clone()),
                        ("k", k.clone()),
                        ("eps", row["eps"].clone()),
                        ("direction", json!(d)),
                    ];
                    cases.push(at(&where_, &row[format!("delta_{d}")])?);
                }
            }
        }
        "epsilon" => {
            for d in DIRECTIONS {
                let where_ = [
                    ("n", n.clone()),
                    ("k", k.clone()),
                    ("delta", r["delta"].clone()),
                    ("direction", json!(d)),
                ];
                cases.push(at(&where_, &r[format!("eps_{d}")])?);
            }
        }
        "divergences" => {
            let Value::Object(fields) = r else {
                return Err(Error::Internal(format!(
                    "golden: {}: the report is not an object",
                    family.id
                )));
            };
            for (name, value) in fields {
                if value.get("lo").is_some() {
                    let where_ = [
                        ("n", n.clone()),
                        ("k", k.clone()),
                        ("divergence", json!(name)),
                    ];
                    cases.push(at(&where_, value)?);
                } else if let Value::Array(orders) = value {
                    for o in orders.iter().filter(|o| o.get("order").is_some()) {
                        let where_ = [
                            ("n", n.clone()),
                            ("k", k.clone()),
                            ("divergence", json!(name)),
                            ("order", o["order"].clone()),
                        ];
                        cases.push(at(&where_, &o["value"])?);
                    }
                }
            }
        }
        "profile" => {
            for row in r["results"].as_array().into_iter().flatten() {
                let where_ = [
                    ("n", n.clone()),
                    ("quantity", json!("delta_M")),
                    ("eps", row["eps"].clone()),
                    ("argmax", argmax(&row["argmax_k"])),
                    ("argmax_k_ranges", row["argmax_k_ranges"].clone()),
                ];
                cases.push(profile_case(family, &where_, row, "delta_profile")?);
            }
            for row in r["eps_results"].as_array().into_iter().flatten() {
                let where_ = [
                    ("n", n.clone()),
                    ("quantity", json!("eps_M")),
                    ("delta", row["delta"].clone()),
                    ("argmax", argmax(&row["argmax_k"])),
                    ("argmax_k_ranges", row["argmax_k_ranges"].clone()),
                ];
                cases.push(profile_case(family, &where_, row, "eps_profile")?);
            }
        }
        "bounds" => {
            for row in rows(family, &r["results"])? {
                let (lower, upper) = (&row["lower"]["value"], &row["upper"]["value"]);
                let range = json!({ "lo": lower["lo"], "hi": upper["hi"] });
                let dataset = json!({
                    "x1": row["lower"]["x1"],
                    "x1_prime": row["lower"]["x1_prime"],
                    "background": row["lower"]["background"],
                });
                let where_ = [
                    ("n", n.clone()),
                    ("quantity", json!("delta_M")),
                    ("eps", row["eps"].clone()),
                    ("lower", json!({ "lo": lower["lo"], "hi": lower["hi"] })),
                    ("upper", json!({ "lo": upper["lo"], "hi": upper["hi"] })),
                    ("lower_dataset", dataset),
                ];
                cases.push(at(&where_, &range)?);
            }
        }
        other => return Err(Error::Internal(format!("golden: unknown question {other}"))),
    }
    Ok(cases)
}

/// A profile case: its value, `resolved` taken from the row when the value does not say, and
/// `argmax_k_ranges` only when the row has them (ties over whole ranges of k).
fn profile_case(
    family: &Family,
    pairs: &[(&str, Value)],
    row: &Value,
    field: &str,
) -> Result<Value> {
    let kept: Vec<(&str, Value)> = pairs
        .iter()
        .filter(|(_, v)| !v.is_null())
        .cloned()
        .collect();
    let mut value = row[field].clone();
    if value.get("resolved").is_none() {
        if let Some(resolved) = row.get("resolved") {
            value["resolved"] = resolved.clone();
        }
    }
    case(family, point(&kept), &value)
}

fn rows<'a>(family: &Family, results: &'a Value) -> Result<&'a Vec<Value>> {
    results
        .as_array()
        .ok_or_else(|| Error::Internal(format!("golden: {}: the report has no results", family.id)))
}

/// The compositions attaining a profile, as `[{direction, k}]`.
fn argmax(list: &Value) -> Value {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|a| json!({ "direction": a["direction"], "k": a["k"] }))
        .collect()
}

/// The corpus's own README: layout, contract, grid, how to check it.
fn corpus_readme(files: &[Value], families: usize) -> String {
    let mut text = String::from(
        "# shufflecert golden corpus\n\n\
         Written by `shufflecert golden --out DIR`. Regression-test any privacy accountant, in any\n\
         language, against certified values of the shuffle model.\n\n\
         ## Contract\n\n",
    );
    text += CONTRACT;
    text += "\n\n## Layout\n\n";
    text += "- `manifest.json`: the grid, the mechanisms, every file's SHA-256, every certificate's\n  command line and the SHA-256 of its report (RFC 8785); `manifest.json.sha256` is its digest.\n";
    text += "- `mechanisms/`: the mechanisms given by files (the others are family strings).\n";
    text += &format!("- `certificates/`: one certificate per case family ({families} families).\n");
    for f in files {
        text += &format!(
            "- `{}`: {} cases; {}.\n",
            f["path"].as_str().unwrap_or_default(),
            f["cases"],
            f["question"].as_str().unwrap_or_default()
        );
    }
    text += "\nEach line of a case file is one JSON object: `family` (its certificate is\n\
             `certificates/FAMILY.json`), `mechanism`, `question`, the point (`n`, `k`, `eps` or\n\
             `delta`, `direction`: `qp` is δ_{Q‖P}(ε) = Σ_N (Q(N) − e^ε P(N))₊ with P = T_{n,k},\n\
             Q = T_{n,k+1}; `pq` the reverse; `two_sided` the larger), `value`, `lo_f64` and\n\
             `hi_f64`, and `resolved` where the command reports it (the enclosure is as narrow as\n\
             asked; divergence and bounds cases do not carry it).\n\n\
             Divergences are in nats, of the pair (P, Q) above: a `_qp` suffix means D(Q‖P) and\n\
             `_pq` means D(P‖Q); `tv`, `jsd` and `hellinger2` are symmetric, with squared\n\
             Hellinger H² = ½ Σ_N (√P(N) − √Q(N))². Profile cases also list the attaining\n\
             compositions (`argmax`, each a `direction` and the k of the pair (T_{n,k}, T_{n,k+1}));\n\
             when whole ranges of k tie, `argmax_k_ranges` lists them as [first, last]. Bounds\n\
             cases give the lower and upper enclosures and the dataset attaining the lower end\n\
             (`lower_dataset`): the datasets (x1, x2, …, x2) and (x1_prime, x2, …, x2), with\n\
             `background` = x2 the input every other user holds; its δ is\n\
             Σ_N (P_{x1}(N) − e^ε P_{x1_prime}(N))₊, P_x the law of the dataset holding x.\n\n\
             The manifest covers each case file and the README by their SHA-256, and each\n\
             certificate by the SHA-256 of its report in RFC 8785 canonical JSON (the\n\
             certificate's own `created` and `tool` fields may differ between runs).\n\n\
             ## The mechanisms\n\n";
    for m in STANDARD.iter() {
        text += &format!("- `{}` (`-m {}`): {}.\n", m.name, m.spec, m.about);
    }
    text += &format!(
        "\n## The grid\n\n\
         - delta: (n, k) in {DELTA_PAIRS:?}, ε in {{{DELTA_EPS}}}.\n\
         - epsilon: k = 0, (n, δ) in {EPSILON_POINTS:?}.\n\
         - divergences: k = 0, n in {DIVERGENCE_SIZES:?}.\n\
         - profile: n = {PROFILE_N}, ε in {{{PROFILE_EPS}}} and δ in {{{PROFILE_DELTA}}}.\n\
         - bounds (randomizers on more than two inputs): n in {BOUNDS_SIZES:?}, ε in {{{BOUNDS_EPS}}}.\n\n\
         ## Check it\n\n\
         ```\n\
         sha256sum -c manifest.json.sha256\n\
         for c in certificates/*.json; do shufflecert verify \"$c\"; done\n\
         ```\n"
    );
    super::fold(&text, super::TEXT_WIDTH)
}
