//! The reviewer's page: one self-contained HTML file (`verify CERT.json --html OUT.html`) showing
//! what a certificate certifies, the outcome of its verification, and pictures of its results.
//!
//! [`page`] takes the certificate as parsed JSON and the [`Verification`] of it, so any front end
//! can write it.  The page loads nothing: its style and its one small script are inline, pinned
//! by a Content-Security-Policy that allows only them (no network, no other script even if some
//! text slipped through unescaped), and its pictures are inline SVG.  Every string taken from
//! the certificate, which is untrusted input, passes through [`esc`].
//!
//! Kinds the page knows (`delta`, `epsilon`, `divergences`, `profile`, `audit`, `compare`) get
//! their own tables and pictures (`kinds.rs`); every kind, known or not, also gets the table of
//! every enclosure `{"lo", "hi"}` found in its report, so nothing certified goes unshown.

mod kinds;
mod svg;

use super::verify::Verification;
use crate::enclosure::{Enclosure, Endpoint, TextStyle, parse_rational, with_text_style};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write;

/// The page's style sheet (inline; pinned by its hash in the page's security policy).
const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px; padding: 0 24px 48px; color: #1d1d1d; line-height: 1.45; }
h1 { font-size: 1.6em; margin: 20px 0 6px; }
h2 { font-size: 1.25em; margin: 30px 0 8px; border-bottom: 2px solid #ddd; padding-bottom: 3px; }
h3 { font-size: 1.05em; margin: 18px 0 6px; }
code, pre, .num { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
pre { background: #f4f4f4; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: left; vertical-align: top; }
td.wide { min-width: 16em; }
th { background: #f0f0f0; font-weight: 600; }
td.key { color: #555; white-space: nowrap; }
.verdict { font-size: 1.3em; font-weight: 700; padding: 12px 16px; border-radius: 6px; margin: 10px 0; }
.verdict.valid { background: #e3f4e1; border: 2px solid #2ca02c; color: #1b5e20; }
.verdict.invalid { background: #fde4e4; border: 3px solid #d62728; color: #8b0000; }
.verdict ul { font-size: 0.8em; font-weight: 400; margin: 6px 0 0; }
.sub { color: #555; font-size: 0.92em; }
.tag { display: inline-block; padding: 0 7px; border-radius: 4px; font-weight: 600; }
.tag.sound, .tag.holds, .tag.valid, .tag.yes { background: #e3f4e1; color: #1b5e20; }
.tag.unsound, .tag.violated, .tag.invalid, .tag.no { background: #fde4e4; color: #8b0000; }
.tag.undecided { background: #fff0d9; color: #8a4b00; }
.tag.other { background: #eee; color: #444; }
details.exact { display: inline; }
details.exact summary { display: inline; cursor: pointer; color: #1f5fa0; font-size: 0.85em; margin-left: 6px; }
details.exact div { font-size: 0.85em; word-break: break-all; max-width: 640px; }
figure { margin: 14px 0 22px; }
figcaption { color: #444; font-size: 0.92em; max-width: 820px; }
svg { max-width: 100%; height: auto; }
span.num, .nw, .tag { white-space: nowrap; }
td > code { overflow-wrap: anywhere; }
div.para { margin: 1em 0; }
.problems li { color: #8b0000; }
.toggle { font-size: 0.9em; color: #333; }
"#;

/// The page's one script: a switch that opens every exact-endpoint box at once, then a marker
/// that it ran (`data-page-script="ok"` on `<html>`, which the browser test looks for).
const SCRIPT: &str = r#"
(function () {
  var box = document.getElementById("show-exact");
  if (box) {
    box.addEventListener("change", function () {
      var all = document.querySelectorAll("details.exact");
      for (var i = 0; i < all.length; i++) { all[i].open = box.checked; }
    });
  }
  document.documentElement.setAttribute("data-page-script", "ok");
})();
"#;

/// Significant digits of the short decimal form of an enclosure.
const SHORT_DIGITS: u32 = 10;

/// The reviewer's page of a certificate and its verification, as one HTML document.
/// `certificate` names the certificate file in the commands the page shows.
pub fn page(cert: &Value, verification: &Verification, certificate: &str) -> String {
    let command = cert["command"].as_str().unwrap_or("unknown");
    let kind = kinds::describe(cert, &sibling(certificate, ".reproduced.json"));
    let mut body = String::new();
    let _ = writeln!(
        body,
        "<h1>shufflecert certificate: <code>{}</code></h1>\n<p class=\"sub\">{} · {}</p>",
        esc(command),
        esc(certificate),
        esc(&kind.summary)
    );
    body += &verdict_banner(verification);
    body += "<nav class=\"sub\"><a href=\"#certified\">What was certified</a> · <a href=\"#results\">Results</a>";
    if !kind.figures.is_empty() {
        body += " · <a href=\"#pictures\">Pictures</a>";
    }
    body += " · <a href=\"#verification\">Verification</a> · <a href=\"#digest\">Digest and commands</a>";
    if !kind.results.is_empty() {
        body += " · <a href=\"#enclosures\">Every enclosure</a>";
    }
    body += "</nav>\n";
    body += "<p class=\"toggle\"><label><input type=\"checkbox\" id=\"show-exact\"> show every exact endpoint</label> (each result shows a short decimal form, rounded outward; “exact” opens the proven endpoints as the certificate records them)</p>\n";

    body += "<h2 id=\"certified\">What was certified</h2>\n";
    body += &mechanism_section(cert);
    body += "<h3>Parameters (from the report)</h3>\n";
    body += &scalars_table(&cert["report"]);
    body += "<h3>Settings</h3>\n";
    body += &scalars_table(&cert["settings"]);

    body += "<h2 id=\"results\">Results</h2>\n";
    if kind.results.is_empty() {
        body += "<p>This page does not know this kind of certificate; every enclosure its report holds is listed below.</p>\n";
        body += &enclosures_table(&cert["report"], &verification.problems);
    } else {
        body += &kind.results;
    }
    if !kind.figures.is_empty() {
        body += "<h2 id=\"pictures\">Pictures</h2>\n";
        body += "<p class=\"sub\">Hover over a mark for its numbers. Pictures are drawn from the certified enclosures in double precision; the tables hold the exact values.</p>\n";
        for f in &kind.figures {
            body += f;
        }
    }

    body += &verification_section(verification);
    body += &digest_section(cert, verification, certificate, &kind.reproduce);

    if !kind.results.is_empty() {
        let count = enclosures(&cert["report"]).len();
        let _ = writeln!(
            body,
            "<h2 id=\"enclosures\">Every enclosure in the report</h2>\n<details{}><summary>{count} enclosures, by their place in the report</summary>\n{}</details>",
            if verification.valid() { "" } else { " open" },
            enclosures_table(&cert["report"], &verification.problems)
        );
    }
    body += &footer(cert);

    let style_hash = csp_hash(STYLE);
    let script_hash = csp_hash(SCRIPT);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src '{style_hash}'; script-src '{script_hash}'; img-src 'none'; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} certificate: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}<script>{SCRIPT}</script>\n</body>\n</html>\n",
        if verification.valid() {
            "VALID"
        } else {
            "INVALID"
        },
        esc(command)
    )
}

/// The verdict, large: VALID with the confirmed count, or INVALID with every problem.
fn verdict_banner(v: &Verification) -> String {
    if v.valid() {
        format!(
            "<div class=\"verdict valid\">VALID: {} confirmed by independent routes ({})</div>\n",
            count(v.confirmed, "certified value", "certified values"),
            count(v.routes.len(), "route", "routes")
        )
    } else {
        let mut s = format!(
            "<div class=\"verdict invalid\">INVALID: {}. Do not rely on this certificate.\n<ul>\n",
            count(v.problems.len(), "problem", "problems")
        );
        for p in &v.problems {
            let _ = writeln!(s, "<li>{}</li>", esc(p));
        }
        s + "</ul></div>\n"
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    crate::enclosure::count_of(n, one, many)
}

/// The mechanism as given (family string or file, with the file's text) and exactly, and the
/// input domain.
fn mechanism_section(cert: &Value) -> String {
    let m = &cert["mechanism"];
    let mut s = String::from("<h3>Mechanism</h3>\n");
    if !m.is_object() {
        let q = &cert["sequence"];
        if !q.is_object() {
            return s + "<p>This certificate records no mechanism.</p>\n";
        }
        let _ = writeln!(
            s,
            "<p>A mechanism sequence W^(n), as given: <code>{}</code></p>",
            esc(&text(&q["given"]))
        );
        if let Some(t) = q["text"].as_str() {
            let _ = writeln!(
                s,
                "<details><summary>the file's text, as written</summary><pre>{}</pre></details>",
                esc(t)
            );
        }
        return s;
    }
    let _ = writeln!(
        s,
        "<p>As given: <code>{}</code></p>",
        esc(&text(&m["given"]))
    );
    if let Some(t) = m["text"].as_str() {
        let _ = writeln!(
            s,
            "<details><summary>the file's text, as written</summary><pre>{}</pre></details>",
            esc(t)
        );
    }
    let exact = &m["exact"];
    s += "<p>Exactly";
    if let Some(name) = exact["name"].as_str() {
        let _ = write!(s, " (<em>{}</em>)", esc(name));
    }
    if !exact["eps0"].is_null() {
        let _ = write!(s, ", with ε0 = <code>{}</code>", esc(&text(&exact["eps0"])));
    }
    s += ":</p>\n";
    let outputs: Vec<String> = array(&exact["outputs"]).iter().map(text).collect();
    if exact.get("w0").is_some() {
        let mut header = vec!["".to_string()];
        header.extend(outputs.iter().map(|o| format!("output {}", esc(o))));
        let rows = ["w0", "w1"]
            .iter()
            .map(|w| {
                let mut row = vec![format!("W{} (input {})", &w[1..], &w[1..])];
                row.extend(array(&exact[*w]).iter().map(|e| code(&text(e))));
                row
            })
            .collect();
        s += &table_html(&header, rows);
    } else if exact.get("rows").is_some() {
        let inputs = array(&exact["inputs"]);
        let mut header = vec!["input".to_string()];
        header.extend(outputs.iter().map(|o| format!("output {}", esc(o))));
        let rows = array(&exact["rows"])
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut row = vec![esc(&inputs.get(i).map_or(i.to_string(), text))];
                row.extend(array(r).iter().map(|e| code(&text(e))));
                row
            })
            .collect();
        s += &table_html(&header, rows);
    } else {
        let _ = writeln!(s, "<pre>{}</pre>", esc(&pretty(exact)));
    }
    let domain = &cert["report"]["input_domain"];
    if domain.is_object() {
        let inputs: Vec<String> = array(&domain["inputs"]).iter().map(text).collect();
        let _ = write!(
            s,
            "<p>Input domain: {} inputs ({})",
            esc(&text(&domain["count"])),
            esc(&inputs.join(", "))
        );
        if !domain["restriction_of"].is_null() {
            let _ = write!(
                s,
                ": the binary-input restriction of a randomizer on {} inputs",
                esc(&text(&domain["restriction_of"]))
            );
        }
        if let Some(m) = crate::mechanism::Messages::from_json(&domain["messages"]) {
            let _ = write!(s, "; {}", esc(&m.text()));
            if m.bundled {
                s += " (the outputs below are the message types of one bundle)";
            }
        }
        s += ".</p>\n";
    } else {
        s += "<p>Input domain: not recorded (a certificate written by 0.1.x).</p>\n";
    }
    s
}

/// The scalar fields of an object (strings, numbers, booleans, null), as a two-column table.
fn scalars_table(v: &Value) -> String {
    let Some(obj) = v.as_object() else {
        return "<p>—</p>\n".into();
    };
    let rows: Vec<Vec<String>> = obj
        .iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .map(|(k, v)| {
            vec![
                format!("<span class=\"key\">{}</span>", esc(k)),
                code(&text(v)),
            ]
        })
        .collect();
    if rows.is_empty() {
        return "<p>—</p>\n".into();
    }
    table_html(&["field", "value"], rows)
}

/// Routes, confirmed count and problems.
fn verification_section(v: &Verification) -> String {
    let mut s = String::from("<h2 id=\"verification\">Verification</h2>\n");
    let _ = writeln!(
        s,
        "<p>Outcome: {} · {} confirmed (both endpoints shown sound by some route) · {}</p>",
        if v.valid() {
            "<span class=\"tag valid\">VALID</span>"
        } else {
            "<span class=\"tag invalid\">INVALID</span>"
        },
        count(v.confirmed, "certified value", "certified values"),
        count(v.problems.len(), "problem", "problems")
    );
    s += "<h3>Routes</h3>\n<ol>\n";
    for r in &v.routes {
        let _ = writeln!(s, "<li>{}</li>", esc(r));
    }
    s += "</ol>\n<h3>Problems</h3>\n";
    if v.problems.is_empty() {
        s += "<p>None.</p>\n";
    } else {
        s += "<ol class=\"problems\">\n";
        for p in &v.problems {
            let _ = writeln!(s, "<li>{}</li>", esc(p));
        }
        s += "</ol>\n";
    }
    s
}

/// The digest, and the commands that re-verify and reproduce the certificate.
fn digest_section(
    cert: &Value,
    v: &Verification,
    certificate: &str,
    reproduce: &[String],
) -> String {
    let d = &cert["digest"];
    let mismatch = v.problems.iter().any(|p| p.starts_with("digest"));
    let mut s = String::from("<h2 id=\"digest\">Digest and commands</h2>\n");
    let _ = writeln!(
        s,
        "<p>{} <code>{}</code> over {} ({}): {}</p>",
        esc(&text(&d["algorithm"])),
        esc(&text(&d["value"])),
        esc(&text(&d["covers"])),
        esc(&text(&d["canonicalization"])),
        if mismatch {
            "<span class=\"tag invalid\">does not match the contents</span>"
        } else {
            "<span class=\"tag valid\">recomputed by verify: matches</span>"
        }
    );
    let file = shell_word(certificate);
    let _ = writeln!(
        s,
        "<h3>Re-verify</h3>\n<pre>shufflecert verify {}\nshufflecert verify {} --html {}</pre>",
        esc(&file),
        esc(&file),
        esc(&shell_word(&sibling(certificate, ".html")))
    );
    s += "<h3>Reproduce</h3>\n";
    if reproduce.is_empty() {
        s += "<p>The command line of this kind of certificate is not reconstructed here: see <code>command</code>, <code>mechanism.given</code>, <code>settings</code> and the report above.</p>\n";
    } else {
        let _ = writeln!(
            s,
            "<p class=\"sub\">Reconstructed from <code>command</code>, <code>mechanism.given</code>, the settings and the report (a certificate does not record its command line), run where the mechanism and claims files named are. The same command writes the same certificate except <code>created</code> (with <code>SOURCE_DATE_EPOCH</code> set, byte for byte).</p>\n<pre>{}\nshufflecert verify {}</pre>",
            esc(&reproduce.join("\n")),
            esc(&shell_word(&sibling(certificate, ".reproduced.json")))
        );
    }
    s
}

/// `cert.json` → `cert` + `suffix` (`cert.html`), for the commands the page shows.
fn sibling(certificate: &str, suffix: &str) -> String {
    let stem = certificate
        .strip_suffix(".json")
        .or_else(|| certificate.strip_suffix(".JSON"))
        .unwrap_or(certificate);
    format!("{stem}{suffix}")
}

fn footer(cert: &Value) -> String {
    let tool = &cert["tool"];
    let notes: Vec<String> = array(&cert["proofs_notes"])
        .iter()
        .map(|n| code(&text(n)))
        .collect();
    format!(
        "<h2 id=\"about\">About this certificate</h2>\n<p>Written by {} {} (commit <code>{}</code>) on {}; schema <code>{}</code>.</p>\n<p>Proofs notes (in the source tree's <code>proofs-notes/</code>): {}</p>\n",
        esc(&text(&tool["name"])),
        esc(&text(&tool["version"])),
        esc(&text(&tool["commit"])),
        esc(&text(&cert["created"])),
        esc(&text(&cert["schema"])),
        if notes.is_empty() {
            "—".into()
        } else {
            notes.join(", ")
        }
    )
}

/// Every `{"lo", "hi"}` object under `v`, with its place (`results[0].delta_qp`).
pub(crate) fn enclosures(v: &Value) -> Vec<(String, &Value)> {
    fn walk<'a>(v: &'a Value, place: String, out: &mut Vec<(String, &'a Value)>) {
        match v {
            Value::Object(o)
                if o.get("lo").is_some_and(Value::is_string)
                    && o.get("hi").is_some_and(Value::is_string) =>
            {
                out.push((place, v));
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let p = if place.is_empty() {
                        k.clone()
                    } else {
                        format!("{place}.{k}")
                    };
                    walk(x, p, out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{place}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

/// The generic table: every enclosure of the report with its place, those a problem names
/// (`results.1.delta_pq: …`) marked.
fn enclosures_table(report: &Value, problems: &[String]) -> String {
    let rows: Vec<Vec<String>> = enclosures(report)
        .into_iter()
        .map(|(place, e)| {
            // `results[1].delta_pq` as verify names it: `results.1.delta_pq`.
            let dotted = place.replace('[', ".").replace(']', "");
            let named = problems
                .iter()
                .any(|p| p.strip_prefix(&dotted).is_some_and(|r| r.starts_with(':')));
            let verdict = if named {
                "<span class=\"tag invalid\">a problem names it</span>"
            } else {
                ""
            };
            vec![code(&place), cell(e), verdict.into()]
        })
        .collect();
    if rows.is_empty() {
        return "<p>The report holds no enclosure.</p>\n".into();
    }
    table_html(&["place in the report", "enclosure", ""], rows)
}

// ---- small helpers shared with `kinds` ----

/// Text made safe for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            c => out.push(c),
        }
    }
    out
}

/// `<code>` around escaped text.
fn code(t: &str) -> String {
    format!("<code>{}</code>", esc(t))
}

/// A scalar as text: a string as it is, `—` for null, anything else as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        other => other.to_string(),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// An HTML table; the header and the cells are HTML already (escape what came from the
/// certificate).
fn table_html(header: &[impl AsRef<str>], rows: Vec<Vec<String>>) -> String {
    let mut s = String::from("<table>\n<tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", h.as_ref());
    }
    s += "</tr>\n";
    for r in rows {
        s += "<tr>";
        for c in r {
            let _ = write!(s, "<td>{c}</td>");
        }
        s += "</tr>\n";
    }
    s + "</table>\n"
}

/// An enclosure read back from `{"lo": "…", "hi": "…"}` (exact numbers or `inf`, `-inf`);
/// `None` when it is not one.
fn enclosure(v: &Value) -> Option<Enclosure> {
    let end = |key: &str| match v[key].as_str()? {
        "inf" => Some(Endpoint::PosInf),
        "-inf" => Some(Endpoint::NegInf),
        t => parse_rational(t).map(Endpoint::Finite),
    };
    let (lo, hi) = (end("lo")?, end("hi")?);
    (lo <= hi).then(|| Enclosure::new(lo, hi))
}

/// The ends of an enclosure as doubles (for pictures only).
fn ends(v: &Value) -> Option<(f64, f64)> {
    enclosure(v).map(|e| (e.lo().to_f64(), e.hi().to_f64()))
}

/// A number written in a report (`0.5`, `1/3`, `ln(1.5)`) as a double, for pictures only.
fn number(v: &Value) -> Option<f64> {
    let t = match v {
        Value::Number(n) => return n.as_f64(),
        Value::String(s) => s.trim(),
        _ => return None,
    };
    if let Some(inner) = t.strip_prefix("ln(").and_then(|r| r.strip_suffix(')')) {
        return parse_rational(inner).map(|q| q.to_f64().ln());
    }
    parse_rational(t).map(|q| q.to_f64())
}

/// The short decimal form of an enclosure: its endpoints rounded outward to at most ten
/// significant digits, shared leading digits printed once (a long exact point: `≈`).
fn short(e: &Enclosure) -> String {
    with_text_style(TextStyle::default(), || {
        if e.is_point() {
            let s = e.to_string();
            return match e.lo() {
                Endpoint::Finite(q) if s.len() > 24 => format!("≈ {:.9e}", q.to_f64()),
                _ => s,
            };
        }
        e.compact(SHORT_DIGITS)
    })
}

/// A table cell for a certified value: the short form, and the exact endpoints on demand.
/// Anything that is not an enclosure prints as text.
fn cell(v: &Value) -> String {
    let Some(e) = enclosure(v) else {
        return if v.is_object() || v.is_array() {
            code(&v.to_string())
        } else {
            code(&text(v))
        };
    };
    let (lo, hi) = (text(&v["lo"]), text(&v["hi"]));
    let exact = if e.is_point() {
        format!("= {}", esc(&lo))
    } else {
        format!("lo = {}<br>hi = {}", esc(&lo), esc(&hi))
    };
    format!(
        "<span class=\"num\">{}</span><details class=\"exact\"><summary>exact</summary><div class=\"num\">{exact}</div></details>",
        esc(&short(&e))
    )
}

/// A word for a shell command line: as it is when plain, otherwise single-quoted.
fn shell_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%^".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// `'sha256-…'` of a script or style, as a Content-Security-Policy source.
fn csp_hash(text: &str) -> String {
    format!("sha256-{}", base64(&Sha256::digest(text.as_bytes())))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_and_quoting() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(shell_word("binary-rr:eps0=1"), "binary-rr:eps0=1");
        assert_eq!(shell_word("a b'c"), r"'a b'\''c'");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fooba"), "Zm9vYmE=");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn numbers_and_enclosures_read_back() {
        assert_eq!(number(&json!("0.5")), Some(0.5));
        assert!((number(&json!("ln(1.5)")).unwrap() - 1.5f64.ln()).abs() < 1e-15);
        assert_eq!(number(&json!("<b>")), None);
        assert!(enclosure(&json!({"lo": "2", "hi": "1"})).is_none());
        assert!(enclosure(&json!({"lo": "0", "hi": "inf"})).is_some());
        let e = enclosure(&json!({"lo": "1/3", "hi": "1/3"})).unwrap();
        assert_eq!(short(&e), "1/3");
        let report = json!({"a": [{"lo": "0", "hi": "1"}], "b": {"c": {"lo": "1", "hi": "2"}}});
        let found = enclosures(&report);
        let places: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(places, ["a[0]", "b.c"]);
    }
}
