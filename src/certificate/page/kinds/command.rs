//! The command lines that reproduce a certificate, rebuilt from its fields.

use super::*;

/// `shufflecert COMMAND -m GIVEN`, with `--messages M [--bundled]` for a multi-message
/// mechanism (except `compare-messages`, whose own flags carry M).
pub(super) fn base_command(cert: &Value) -> Option<Vec<String>> {
    let command = cert["command"].as_str()?;
    let given = cert["mechanism"]["given"].as_str()?;
    let mut line = vec![
        "shufflecert".into(),
        command.into(),
        "-m".into(),
        given.into(),
    ];
    let messages = &cert["mechanism"]["exact"]["messages"];
    if let (Some(count), false) = (messages["count"].as_u64(), command == "compare-messages") {
        line.extend(["--messages".into(), count.to_string()]);
        if messages["model"] == "bundled" {
            line.push("--bundled".into());
        }
    }
    Some(line)
}

/// The command line of a pair report, without its thresholds: `shufflecert COMMAND -m GIVEN
/// --n N --k K`, `… --n N --background x=c,… --switch a:b` for a background pair, or
/// `shufflecert COMMAND --experiment GIVEN` for a limit experiment's.
pub(super) fn pair_command(cert: &Value) -> Option<Vec<String>> {
    let report = &cert["report"];
    if let Some(given) = cert["experiment"]["given"].as_str() {
        let command = cert["command"].as_str()?;
        return Some(vec![
            "shufflecert".into(),
            command.into(),
            "--experiment".into(),
            given.into(),
        ]);
    }
    let n = report["n"].as_u64()?;
    let mut line = base_command(cert)?;
    line.extend(["--n".into(), n.to_string()]);
    if let Some(groups) = report["background"].as_array() {
        let counts: Vec<String> = groups
            .iter()
            .map(|g| format!("{}={}", text(&g["input"]), text(&g["count"])))
            .collect();
        let switch = &report["switch"];
        line.extend([
            "--background".into(),
            counts.join(","),
            "--switch".into(),
            format!("{}:{}", text(&switch["x1"]), text(&switch["x1_prime"])),
        ]);
        return Some(line);
    }
    line.extend(["--k".into(), report["k"].as_u64()?.to_string()]);
    Some(line)
}

pub(super) fn profile_command(cert: &Value) -> Vec<String> {
    let report = &cert["report"];
    let Some(mut line) = base_command(cert) else {
        return Vec::new();
    };
    line.extend(["--n".into(), text(&report["n"])]);
    let (mut eps, mut exp, mut delta, mut renyi) = (vec![], vec![], vec![], vec![]);
    for q in array(&cert["method"]["quantities"]) {
        match q["kind"].as_str() {
            Some("delta") => {
                let e = text(&q["eps"]);
                match e.strip_prefix("ln(").and_then(|x| x.strip_suffix(')')) {
                    Some(c) => exp.push(c.to_string()),
                    None => eps.push(e),
                }
            }
            Some("epsilon") => delta.push(text(&q["delta"])),
            Some("renyi") => renyi.push(text(&q["order"])),
            _ => {}
        }
    }
    for (flag, values) in [
        ("--eps", eps),
        ("--exp-eps", exp),
        ("--delta", delta),
        ("--renyi-order", renyi),
    ] {
        if !values.is_empty() {
            line.extend([flag.into(), values.join(",")]);
        }
    }
    line.push("-q".into());
    let shards = array(&cert["method"]["shards"]);
    if shards.is_empty() {
        if report["partial"] == Value::Bool(true) {
            line.extend([
                "--k-range".into(),
                format!(
                    "{}..{}",
                    text(&report["k_range"][0]),
                    text(&report["k_range"][1])
                ),
            ]);
        }
        return vec![finish(line, cert)];
    }
    // A merged profile: each shard, then the merge.
    let mut lines = Vec::new();
    let mut files = Vec::new();
    for s in shards {
        let file = text(&s["file"]);
        let mut shard = line.clone();
        shard.extend([
            "--k-range".into(),
            format!("{}..{}", text(&s["k_range"][0]), text(&s["k_range"][1])),
        ]);
        shard.extend(settings_flags(&cert["settings"]));
        shard.extend(["--certificate".into(), file.clone()]);
        lines.push(join(&shard));
        files.push(file);
    }
    let mut merge = vec!["shufflecert".to_string(), "merge".into()];
    merge.extend(files);
    merge.extend(["--certificate".into(), OUT.into()]);
    lines.push(join(&merge));
    lines
}

/// The settings as command-line flags (only those that differ from the defaults).
pub(super) fn settings_flags(s: &Value) -> Vec<String> {
    let mut flags = Vec::new();
    match s["backend"].as_str() {
        Some("mpfr") => flags.extend([
            "--backend".into(),
            "mpfr".into(),
            "--precision".into(),
            text(&s["precision"]),
        ]),
        Some("exact") => {
            flags.extend(["--backend".into(), "exact".into()]);
            if s["bracket_precision"].as_u64().is_some_and(|b| b != 256) {
                flags.extend(["--precision".into(), text(&s["bracket_precision"])]);
            }
        }
        _ => match s["escalate_above"].as_str() {
            None => flags.push("--no-escalate".into()),
            Some(w) => {
                let w = w.parse::<f64>().unwrap_or(1e-9);
                if (w / 1e-9 - 1.0).abs() > 1e-9 {
                    flags.extend(["--rel-width".into(), format!("{w:e}")]);
                }
            }
        },
    }
    if let Some(engine) = s["engine"].as_str().filter(|e| *e != "auto") {
        flags.extend(["--engine".into(), engine.into()]);
    }
    if s["reduce"] == Value::Bool(false) {
        flags.push("--no-reduce".into());
    }
    if s["truncate"] == Value::Bool(false) {
        flags.push("--no-truncation".into());
    }
    if let Some(bytes) = s["max_memory_bytes"].as_u64().filter(|b| *b != 8 << 30) {
        flags.extend([
            "--max-memory-gib".into(),
            format!("{}", bytes as f64 / f64::from(1u32 << 30)),
        ]);
    }
    flags
}

/// `--eps E,…` and `--exp-eps C,…` for result rows labelled `eps` (`ln(C)` for a given e^ε).
pub(super) fn threshold_flags(results: &[Value]) -> Vec<String> {
    let (mut eps, mut exp) = (Vec::new(), Vec::new());
    for r in results {
        let e = text(&r["eps"]);
        match e.strip_prefix("ln(").and_then(|x| x.strip_suffix(')')) {
            Some(c) => exp.push(c.to_string()),
            None => eps.push(e),
        }
    }
    let mut flags = Vec::new();
    if !eps.is_empty() {
        flags.extend(["--eps".into(), eps.join(",")]);
    }
    if !exp.is_empty() {
        flags.extend(["--exp-eps".into(), exp.join(",")]);
    }
    flags
}

/// The line with the settings and `--certificate CERT.json`, as shell text.
pub(super) fn finish(mut line: Vec<String>, cert: &Value) -> String {
    line.extend(settings_flags(&cert["settings"]));
    line.extend(["--certificate".into(), OUT.into()]);
    join(&line)
}

pub(super) fn join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}
