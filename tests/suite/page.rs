//! The reviewer's page (`verify CERT.json --html OUT.html`): it shows every certified value, the
//! verdict and the digest of every kind of certificate, loads nothing, escapes whatever the
//! certificate says, changes nothing of what `verify` prints or returns, and renders in a real
//! browser without a script error.

use crate::common::*;
use serde_json::{Value, json};
use shufflecert::certificate::digest;
use shufflecert::certificate::page::page;
use shufflecert::certificate::verify::Verification;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh directory for this test process's files.
fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shufflecert-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

fn fixture(name: &str) -> String {
    format!("fixtures/certificates/{name}")
}

fn read(file: &str) -> Value {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    serde_json::from_str(&std::fs::read_to_string(full).unwrap()).unwrap()
}

/// Every certificate in `fixtures/certificates/` (and `legacy-0.1/`).
fn fixtures() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/certificates");
    let mut files = Vec::new();
    for d in [root.clone(), root.join("legacy-0.1")] {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") && !p.ends_with("manifest.json") {
                let rel = p.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
                files.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    assert!(files.len() >= 13, "{files:?}");
    files
}

/// A verification that found nothing wrong (the page does not recompute anything).
fn valid(cert: &Value) -> Verification {
    Verification {
        command: cert["command"].as_str().unwrap().to_string(),
        routes: vec!["mpfr-256".into(), "exact".into()],
        confirmed: 3,
        problems: Vec::new(),
    }
}

/// Every `{"lo", "hi"}` of a value.
fn enclosures(v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) if o.get("lo").is_some_and(Value::is_string) => out.push((
            o["lo"].as_str().unwrap().into(),
            o["hi"].as_str().unwrap().into(),
        )),
        Value::Object(o) => o.values().for_each(|x| enclosures(x, out)),
        Value::Array(a) => a.iter().for_each(|x| enclosures(x, out)),
        _ => {}
    }
}

/// The page loads nothing and runs no script but its own: no tag that could fetch anything
/// (`src=`, an `href` that leaves the page, `<link>`, `url(…)`) and one `<script>`.
fn assert_self_contained(html: &str, what: &str) {
    for needle in ["http://", "https://", "url(", "@import"] {
        assert!(!html.contains(needle), "{what}: the page contains {needle}");
    }
    assert_eq!(
        html.matches("<script").count(),
        1,
        "{what}: one script only"
    );
    assert!(html.contains("Content-Security-Policy"), "{what}");
    // Every tag outside the script (text from the certificate holds no raw `<`).
    let start = html.find("<script>").unwrap();
    let end = html.find("</script>").unwrap();
    let markup = format!("{}{}", &html[..start], &html[end..]);
    for tag in markup
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap())
    {
        let name = tag.split_whitespace().next().unwrap_or_default();
        assert!(
            ![
                "img", "link", "iframe", "object", "embed", "image", "use", "audio", "video"
            ]
            .contains(&name),
            "{what}: <{tag}>"
        );
        assert!(!tag.contains("src="), "{what}: <{tag}>");
        if let Some(i) = tag.find("href=") {
            assert!(tag[i..].starts_with("href=\"#"), "{what}: <{tag}>");
        }
        assert!(!tag.contains(" on"), "{what}: an event handler in <{tag}>");
    }
}

#[test]
fn every_fixture_certificate_gets_a_complete_page() {
    for file in fixtures() {
        let cert = read(&file);
        let html = page(&cert, &valid(&cert), &file);
        assert!(html.starts_with("<!DOCTYPE html>"), "{file}");
        assert_self_contained(&html, &file);
        assert!(html.contains("VALID: 3 certified values"), "{file}");
        let digest = cert["digest"]["value"].as_str().unwrap();
        assert!(html.contains(digest), "{file}: the digest");
        assert!(
            html.contains(&format!("shufflecert verify {file}")),
            "{file}"
        );
        // Every certified value of the report, with its exact endpoints.
        let mut all = Vec::new();
        enclosures(&cert["report"], &mut all);
        assert!(!all.is_empty(), "{file}");
        for (lo, hi) in all {
            assert!(
                html.contains(&lo) && html.contains(&hi),
                "{file}: [{lo}, {hi}] missing"
            );
        }
        // Pictures for every kind that has a curve, a claim or a bound to draw.
        let command = cert["command"].as_str().unwrap();
        assert_eq!(
            html.contains("<svg"),
            command != "divergences",
            "{file}: pictures"
        );
        assert!(html.contains("<h2 id=\"results\">"), "{file}");
        assert!(!html.contains("does not know this kind"), "{file}");
    }
}

#[test]
fn profiles_mark_the_argmax_and_audits_colour_each_claim() {
    let file = fixture("binary-rr-eps1-profile-n2000.json");
    let cert = read(&file);
    let html = page(&cert, &valid(&cert), &file);
    // One picture of the curve, one per quantity against k, each with its argmax.
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("argmax: k = 0 (pq)") && html.contains("argmax: k = 1999 (qp)"));
    assert!(html.contains("closed at a node (below)"));

    let file = fixture("binary-rr-eps1-audit-published.json");
    let cert = read(&file);
    let html = page(&cert, &valid(&cert), &file);
    let claims = cert["report"]["claims"].as_array().unwrap();
    for c in claims {
        let line = c["line"].as_u64().unwrap();
        assert!(
            html.contains(&format!("<title>line {line}: (")),
            "claim {line}"
        );
    }
    assert_eq!(
        html.matches("fill=\"#2ca02c\" stroke=\"white\"").count(),
        claims.len()
    );
}

#[test]
fn reconstructed_commands_reproduce_the_certificate() {
    // The cheaper fixtures: run the command the page shows and compare what it writes.
    for name in [
        "one-sided-delta-n20.json",
        "binary-asymmetric-delta-exact.json",
        "binary-rr-eps1-epsilon-n10000.json",
        "identical-profile-n10.json",
        "k-rr-4-profile-n30.json",
        "ternary-profile-n40.json",
        "binary-rr-eps1-profile-n2000.json",
        "k-rr-4-inputs-compare-n60.json",
        "three-inputs-bounds-n8.json",
        "three-inputs-background-n8.json",
        "two-jumps-experiment-delta.json",
        "binary-rr-eps1-tv-ball-n100.json",
        "ternary-check-n200.json",
        "binary-rr-limit-n100-n400.json",
        "poisson-berry-esseen.json",
    ] {
        let file = fixture(name);
        let cert = read(&file);
        let html = page(&cert, &valid(&cert), &file);
        let out = path(&format!("reproduced-{name}"));
        let (line, run) = reproduce(&html, &file, &out);
        assert!(!line.contains('\'') && !line.contains('&'), "{line}");
        assert!(
            run.status == 0 || run.status == 1,
            "{name}: {line}: {}",
            run.stderr
        );
        let again = read_abs(&out);
        assert_eq!(stable(&again), stable(&cert), "{name}: {line}");
    }
}

/// Runs the page's reproduce line for certificate `file`, writing to `out` instead of the
/// sibling it names; returns the line and the run.
fn reproduce(html: &str, file: &str, out: &str) -> (String, Run) {
    let start = html
        .find("<h3>Reproduce</h3>")
        .expect("a reproduce section");
    let line = html[start..]
        .lines()
        .find_map(|l| l.strip_prefix("<pre>shufflecert "))
        .expect("a command line");
    let expected_out = file.replace(".json", ".reproduced.json");
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|w| if w == expected_out { out } else { w })
        .collect();
    (line.to_string(), cli(&words))
}

fn read_abs(file: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// A certificate without what varies between builds and runs.
fn stable(cert: &Value) -> Value {
    let mut c = cert.clone();
    for key in ["tool", "created", "digest"] {
        c.as_object_mut().unwrap().remove(key);
    }
    c
}

#[test]
fn bounds_pages_show_the_range_its_pairs_and_triples() {
    let file = fixture("three-inputs-bounds-n8.json");
    let cert = read(&file);
    let html = page(&cert, &valid(&cert), &file);
    for needle in [
        "the certified range of δ_M(ε) over every dataset of n = 8 users",
        "lower end (a concrete pair)",
        "The upper end: 1 ordered pair and its reverse summed",
        "2 pairs left out of the upper end: each one's Chernoff bound is below the end",
        "The lower end: 2 concrete pairs of datasets summed",
        "3 concrete pairs left out of the lower end",
        "one user switching low → high, the others holding low",
        "χ_up (upper end's pair)",
        "The certified range of δ_M(ε): the true worst case over every dataset",
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
    // The background pair is named by its datasets.
    let file = fixture("three-inputs-background-n8.json");
    let cert = read(&file);
    let html = page(&cert, &valid(&cert), &file);
    assert!(
        html.contains("one user switches low → high, the others holding 3 × low, 4 × mid"),
        "background pair words"
    );
}

#[test]
fn asymptotic_pages_label_what_is_uncertified() {
    for (name, needles) in [
        (
            "ternary-check-n200.json",
            &[
                "a check of",
                "prediction (uncertified)",
                "Predictions are <b>uncertified</b>",
                "<span class=\"tag unsound\">optimistic</span>",
            ][..],
        ),
        (
            "binary-rr-limit-n100-n400.json",
            &[
                "a limit study of",
                "gap to the limit",
                "<b>uncertified</b> observations",
            ][..],
        ),
        (
            "poisson-berry-esseen.json",
            &[
                "a Berry–Esseen diagnostic",
                "Gaussian δ",
                "<b>uncertified</b> observations",
            ][..],
        ),
    ] {
        let file = fixture(name);
        let cert = read(&file);
        let html = page(&cert, &valid(&cert), &file);
        for needle in needles {
            assert!(html.contains(needle), "{name}: missing {needle:?}");
        }
        assert!(!html.contains("shown generically"), "{name}");
        assert_self_contained(&html, name);
    }
}

#[test]
fn unknown_kinds_list_every_enclosure() {
    let mut cert = read(&fixture("one-sided-delta-n20.json"));
    cert["command"] = json!("frobnicate");
    cert["report"]["extra"] = json!({"nested": [{"value": {"lo": "1/7", "hi": "2/7"}}]});
    let html = page(&cert, &valid(&cert), "x.json");
    assert!(html.contains("does not know this kind"));
    assert!(html.contains("extra.nested[0].value"));
    assert!(html.contains("1/7") && html.contains("2/7"));
    let mut all = Vec::new();
    enclosures(&cert["report"], &mut all);
    for (lo, hi) in all {
        assert!(html.contains(&lo) && html.contains(&hi));
    }
    assert_self_contained(&html, "unknown kind");
    // Nothing in a certificate makes the builder panic: every field emptied or mistyped.
    for key in [
        "report",
        "method",
        "mechanism",
        "settings",
        "digest",
        "claims",
    ] {
        for command in [
            "delta",
            "epsilon",
            "divergences",
            "profile",
            "audit",
            "compare",
            "bounds",
            "check",
            "limit",
            "berry-esseen",
        ] {
            let mut c = read(&fixture("k-rr-4-profile-n30.json"));
            c["command"] = json!(command);
            c[key] = json!(["not", {"an": "object"}, 7]);
            let html = page(&c, &valid(&c), "x.json");
            assert!(html.contains("</html>"));
        }
    }
}

/// A tampered copy of a certificate: text that would be markup in several string fields, a
/// result moved, the digest recomputed.
fn tampered() -> (String, Value) {
    let mut c = read(&fixture("one-sided-delta-n20.json"));
    c["mechanism"]["exact"]["name"] = json!("<script>document.title='pwned'</script>");
    c["report"]["pair"] = json!("<img src=x onerror=\"document.title='pwned'\">");
    c["tool"]["commit"] = json!("</code><script>alert(1)</script>");
    c["report"]["results"][1]["delta_pq"] = json!({"lo": "1/3", "hi": "1/3"});
    c["digest"]["value"] = json!(digest(&c).unwrap());
    let file = path("tampered.json");
    std::fs::write(&file, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    (file, c)
}

#[test]
fn an_invalid_certificate_gets_its_page_with_every_string_escaped() {
    let (file, _) = tampered();
    let plain = cli(&["verify", &file]);
    let out = path("tampered.html");
    let run = cli(&["verify", &file, "--html", &out]);
    assert_eq!(plain.status, 1);
    assert_eq!(run.status, plain.status);
    assert_eq!(run.stdout, plain.stdout);
    assert_eq!(run.stderr, plain.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<div class=\"verdict invalid\">INVALID"));
    assert!(html.contains("<title>INVALID certificate: delta</title>"));
    assert_self_contained(&html, "tampered");
    assert!(!html.contains("<script>document") && !html.contains("<img"));
    assert!(html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror="));
    // Each problem, escaped, and the value a problem names marked.
    let report: Value = serde_json::from_str(&cli(&["verify", &file, "--json"]).stdout).unwrap();
    for p in report["problems"].as_array().unwrap() {
        let p = p.as_str().unwrap();
        let escaped = p
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        assert!(html.contains(&escaped), "{p}");
    }
    assert!(html.contains("a problem names it"));
}

#[test]
fn the_page_changes_nothing_of_verify() {
    let file = fixture("one-sided-delta-n20.json");
    for json in [false, true] {
        let mut args = vec!["verify", file.as_str()];
        if json {
            args.push("--json");
        }
        let plain = cli(&args);
        let out = path(&format!("delta-{json}.html"));
        let mut with = args.clone();
        with.extend(["--html", &out]);
        let run = cli(&with);
        assert_eq!(
            (run.status, &run.stdout, &run.stderr),
            (0, &plain.stdout, &plain.stderr)
        );
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.contains("<div class=\"verdict valid\">VALID"));
    }
}

#[test]
fn malformed_certificates_and_bad_paths_write_no_page() {
    let not_json = path("not-json.json");
    std::fs::write(&not_json, "{ this is not JSON").unwrap();
    let mut off_schema = read(&fixture("one-sided-delta-n20.json"));
    off_schema["settings"] = json!("<script>");
    let off = path("off-schema.json");
    std::fs::write(&off, off_schema.to_string()).unwrap();
    for (i, cert) in [not_json, off].iter().enumerate() {
        let out = path(&format!("malformed-{i}.html"));
        let run = cli(&["verify", cert, "--html", &out]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stdout.is_empty());
        assert!(
            !Path::new(&out).exists(),
            "a page for a malformed certificate"
        );
    }
    // The page's path is checked before any work, even before the certificate is read.
    let missing_dir = path("no-such-dir/page.html");
    for (out, needle) in [
        ("page.htm".to_string(), "ending in .html"),
        (path("page.svg"), "ending in .html"),
        (missing_dir, "does not exist"),
    ] {
        let run = cli(&["verify", "no-such-certificate.json", "--html", &out]);
        assert_eq!(run.status, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains("--html") && run.stderr.contains(needle),
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty());
    }
}

// ---- in a browser ----

const CHROMIUM: &str = "/usr/bin/chromium";

/// Renders a page headless and returns the DOM after its script ran, and the browser's log
/// (console messages included).  `None` when no browser is installed.
fn render(page: &str) -> Option<(String, String)> {
    if !Path::new(CHROMIUM).exists() {
        if std::env::var_os("SHUFFLECERT_REQUIRE_BROWSER").is_some() {
            panic!("SHUFFLECERT_REQUIRE_BROWSER is set but {CHROMIUM} is missing");
        }
        return None;
    }
    let profile = dir().join(format!(
        "chromium-{}",
        Path::new(page).file_stem().unwrap().to_string_lossy()
    ));
    let (out, err) = (profile.with_extension("dom"), profile.with_extension("log"));
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{page}"),
        ])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("run chromium");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("chromium did not finish rendering {page} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&err).unwrap(),
    ))
}

#[test]
fn pages_render_in_chromium_without_a_script_error() {
    if !Path::new(CHROMIUM).exists() && std::env::var_os("SHUFFLECERT_REQUIRE_BROWSER").is_none() {
        println!(
            "SKIPPED pages_render_in_chromium_without_a_script_error: no browser at {CHROMIUM} \
             (install Debian's chromium package to run it; set SHUFFLECERT_REQUIRE_BROWSER to \
             make its absence a failure)"
        );
        return;
    }
    let mut pages = Vec::new();
    for name in [
        "one-sided-delta-n20.json",
        "binary-rr-eps1-profile-n2000.json",
        "binary-rr-eps1-audit-published.json",
        "k-rr-4-compare-n30-n60.json",
    ] {
        let file = fixture(name);
        let cert = read(&file);
        let out = path(&name.replace(".json", ".html"));
        std::fs::write(&out, page(&cert, &valid(&cert), &file)).unwrap();
        pages.push(out);
    }
    let (tampered, _) = tampered();
    let out = path("tampered-browser.html");
    assert_eq!(cli(&["verify", &tampered, "--html", &out]).status, 1);
    pages.push(out);
    for p in &pages {
        let (dom, log) = render(p).expect("chromium is installed");
        assert!(
            dom.contains("data-page-script=\"ok\""),
            "{p}: the page's script did not run to its end\n{log}"
        );
        let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
        assert!(console.is_empty(), "{p}: console messages {console:#?}");
        assert!(!dom.contains("<title>pwned"), "{p}: injected text ran");
        assert!(dom.contains("certificate: "), "{p}: the page's own title");
        assert!(dom.contains("<svg"), "{p}: no picture");
    }
}

/// `compare-messages` has its own section: each ε's four models (and profiles), the ratios and
/// the unbundled ≤ bundled verdicts, and a command line that writes the same certificate.
#[test]
fn compare_messages_pages_show_every_model_and_reproduce() {
    use crate::certificates::certify;
    let (file, cert) = certify(
        &[
            "compare-messages",
            "-m",
            "binary-rr:exp_eps0=3",
            "--n",
            "12",
            "--messages",
            "2",
            "--eps",
            "0.5,1",
            "--profile",
        ],
        "page-compare-messages.json",
    );
    let html = page(&cert, &valid(&cert), &file);
    assert!(html.contains("compare-messages: 2 messages per user"));
    // A multi-message pair certificate's line keeps its messages (helper-33).
    let (pair_file, pair_cert) = certify(
        &[
            "delta",
            "-m",
            "binary-rr:exp_eps0=3",
            "--messages",
            "2",
            "--bundled",
            "--n",
            "5",
            "--k",
            "1",
            "--eps",
            "1",
        ],
        "page-bundled-delta.json",
    );
    let pair_html = page(&pair_cert, &valid(&pair_cert), &pair_file);
    let (line, run) = reproduce(&pair_html, &pair_file, &path("bundled-delta-again.json"));
    assert!(line.contains("--messages 2 --bundled"), "{line}");
    assert_eq!(run.status, 0, "{line}: {}", run.stderr);
    assert_eq!(
        stable(&read_abs(&path("bundled-delta-again.json"))),
        stable(&pair_cert)
    );
    assert_eq!(html.matches("<h3>ε = ").count(), 2);
    for words in [
        "single message, n = 12",
        "single message, n·m = 24",
        "2 messages, unbundled",
        "2 messages, bundled",
        "mechanism-wide δ_M (profile)",
        "unbundled ≤ bundled (data processing)",
    ] {
        assert!(html.contains(words), "{words}");
    }
    assert!(!html.contains("does not know this kind"));
    let out = path("compare-messages-again.json");
    let (line, run) = reproduce(&html, &file, &out);
    assert_eq!(run.status, 0, "{line}: {}", run.stderr);
    assert_eq!(stable(&read_abs(&out)), stable(&cert), "{line}");
}
