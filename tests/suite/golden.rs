//! The golden corpus: `fixtures/golden/` regenerates byte for byte (certificates up to their
//! `created`, `tool` and digest), every certificate in it verifies, and every case encloses its
//! certificate's value.

use crate::certificates::verify;
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/golden")
}

/// Every file under `root`, by path relative to it.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    found
}

/// A certificate without what names its writing (`created`, `tool`) and the digest over them.
fn without_provenance(bytes: &[u8]) -> Value {
    let mut cert: Value = serde_json::from_slice(bytes).unwrap();
    let map = cert.as_object_mut().unwrap();
    for key in ["created", "tool", "digest"] {
        assert!(map.remove(key).is_some(), "a certificate has {key}");
    }
    cert
}

fn fresh_folder(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("shufflecert-golden-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_committed_corpus_regenerates_byte_for_byte() {
    let out = fresh_folder("regenerate");
    let run = cli(&["golden", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.is_empty(),
        "golden is quiet when not on a terminal: {}",
        run.stderr
    );
    let (old, new) = (files(&committed()), files(&out));
    assert_eq!(
        old.keys().collect::<Vec<_>>(),
        new.keys().collect::<Vec<_>>(),
        "the same files (regenerate with `shufflecert golden --out fixtures/golden` after removing it)"
    );
    for (name, bytes) in &old {
        if name.starts_with("certificates/") {
            assert_eq!(
                without_provenance(bytes),
                without_provenance(&new[name]),
                "{name}"
            );
        } else {
            assert!(
                bytes == &new[name],
                "{name} differs from a fresh `shufflecert golden`"
            );
        }
    }
    let name = out.file_name().unwrap().to_str().unwrap().to_string();
    let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with(&format!(".{name}.partial")))
        .collect();
    assert!(left.is_empty(), "the staging folder is gone: {left:?}");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_manifest_digest_and_file_hashes_hold() {
    use sha2::{Digest, Sha256};
    let hex = |bytes: &[u8]| -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let all = files(&committed());
    let manifest = &all["manifest.json"];
    let line = String::from_utf8(all["manifest.json.sha256"].clone()).unwrap();
    assert_eq!(line, format!("{}  manifest.json\n", hex(manifest)));
    let manifest: Value = serde_json::from_slice(manifest).unwrap();
    assert_eq!(manifest["schema"], "shufflecert/golden/v1");
    for f in manifest["cases"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        assert_eq!(f["sha256"].as_str().unwrap(), hex(&all[path]), "{path}");
        let lines = all[path].iter().filter(|b| **b == b'\n').count();
        assert_eq!(f["cases"].as_u64().unwrap() as usize, lines, "{path}");
    }
    for m in manifest["mechanisms"].as_array().unwrap() {
        if let Some(sha) = m["sha256"].as_str() {
            assert_eq!(sha, hex(&all[m["spec"].as_str().unwrap()]));
        }
    }
    for c in manifest["certificates"].as_array().unwrap() {
        let cert: Value = serde_json::from_slice(&all[c["path"].as_str().unwrap()]).unwrap();
        let report = serde_json_canonicalizer::to_vec(&cert["report"]).unwrap();
        assert_eq!(
            c["report_sha256"].as_str().unwrap(),
            hex(&report),
            "{}",
            c["path"]
        );
    }
}

#[test]
fn every_committed_certificate_verifies() {
    let certificates: Vec<PathBuf> = std::fs::read_dir(committed().join("certificates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(certificates.len() > 50);
    std::thread::scope(|s| {
        for chunk in certificates.chunks(certificates.len().div_ceil(4)) {
            s.spawn(move || {
                for path in chunk {
                    let (status, report) = verify(path.to_str().unwrap());
                    assert_eq!(status, 0, "{}: {report}", path.display());
                    assert_eq!(report["valid"], true, "{}", path.display());
                }
            });
        }
    });
}

/// The certificate's enclosure of a case, found by the case's point.
fn certified(case: &Value, report: &Value) -> Value {
    let direction = case["direction"].as_str().unwrap_or_default();
    let row = |list: &Value, key: &str| -> Value {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r[key] == case[key])
            .unwrap_or_else(|| panic!("no row for {case}"))
            .clone()
    };
    match case["question"].as_str().unwrap() {
        "delta" => row(&report["results"], "eps")[format!("delta_{direction}")].clone(),
        "epsilon" => report[format!("eps_{direction}")].clone(),
        "divergences" => match case.get("order") {
            Some(_) => row(&report[case["divergence"].as_str().unwrap()], "order")["value"].clone(),
            None => report[case["divergence"].as_str().unwrap()].clone(),
        },
        "profile" if case["quantity"] == "delta_M" => {
            row(&report["results"], "eps")["delta_profile"].clone()
        }
        "profile" => row(&report["eps_results"], "delta")["eps_profile"].clone(),
        "bounds" => {
            let r = row(&report["results"], "eps");
            serde_json::json!({ "lo": r["lower"]["value"]["lo"], "hi": r["upper"]["value"]["hi"] })
        }
        other => panic!("unknown question {other}"),
    }
}

#[test]
fn every_case_encloses_its_certificates_value() {
    let all = files(&committed());
    let mut count = 0;
    for (name, bytes) in all.iter().filter(|(n, _)| n.starts_with("cases/")) {
        for line in String::from_utf8(bytes.clone()).unwrap().lines() {
            let case: Value = serde_json::from_str(line).unwrap();
            let cert_path = format!("certificates/{}.json", case["family"].as_str().unwrap());
            let cert: Value = serde_json::from_slice(&all[&cert_path]).unwrap();
            let exact = enclosure(&certified(&case, &cert["report"]));
            let given = enclosure(&case["value"]);
            assert!(given.contains_enclosure(&exact), "{name}: {line}");
            // The doubles enclose the case's value.
            let (lo, hi) = (case["lo_f64"].as_f64(), case["hi_f64"].as_f64());
            if let Some(lo) = lo {
                assert!(
                    rug::Rational::from_f64(lo).unwrap() <= *given.lo().finite().unwrap(),
                    "{line}"
                );
            }
            match hi {
                Some(hi) => assert!(
                    rug::Rational::from_f64(hi).unwrap() >= *given.hi().finite().unwrap(),
                    "{line}"
                ),
                None => assert!(given.hi().finite().is_none(), "{line}"),
            }
            count += 1;
        }
    }
    assert!(count > 500, "{count} cases");
}

#[test]
fn golden_refuses_a_folder_that_is_not_empty_and_a_file() {
    let out = fresh_folder("refuse");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    assert_fails(&["golden", "--out", out.to_str().unwrap()], "--out");
    assert_eq!(files(&out).len(), 1, "nothing written");
    assert_fails(
        &["golden", "--out", out.join("keep.txt").to_str().unwrap()],
        "is a file",
    );
    assert_fails(&["golden", "--out", ""], "--out");
    assert_fails(
        &[
            "golden",
            "--out",
            out.join("no/such/corpus").to_str().unwrap(),
        ],
        "does not exist",
    );
    std::fs::remove_dir_all(&out).unwrap();
}
