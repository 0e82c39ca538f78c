//! The command-line interface: a thin shell over the library.  `run` turns parsed arguments
//! into one output string (stdout); errors come back as [`Error`] (one line on stderr).

pub mod args;
mod certify;
mod golden;
mod output;
mod plot;
mod progress;
mod validate;

use crate::enclosure::with_exact_endpoints;
use crate::error::{Error, Result};
use crate::limits::experiment;
use crate::limits::tv::tv_ball;
use crate::profile;
use crate::query::{DeltaJob, DivergenceJob, EpsilonJob, answer};
use args::{Cli, Command};
use validate::Source;

/// A usage error as one line (clap's message with its listed arguments and tips joined, and
/// where help is): the README promises one clear line on stderr and exit code 2.
pub fn usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let message: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    format!(
        "shufflecert: error: {message} (see shufflecert --help, or shufflecert <command> --help)"
    )
}

/// What a command produced: stdout, and a failure to report after it (a `--fail-on` gate).
pub struct Outcome {
    pub stdout: String,
    pub failure: Option<String>,
}

impl From<String> for Outcome {
    fn from(stdout: String) -> Self {
        Outcome {
            stdout,
            failure: None,
        }
    }
}

/// The failure line of an audit with unsound claims.
fn unsound_failure(verdicts: &[crate::audit::verdict::Verdict]) -> Option<String> {
    let unsound = verdicts
        .iter()
        .filter(|v| **v == crate::audit::verdict::Verdict::Unsound)
        .count();
    (unsound > 0).then(|| {
        format!(
            "audit: {unsound} of {} unsound",
            crate::enclosure::count_of(verdicts.len(), "claim is", "claims are")
        )
    })
}

/// Runs one command, its text reports in the style `--wide` and `--digits` ask for.
pub fn run(cli: &Cli) -> Result<Outcome> {
    let digits = match &cli.digits {
        None => None,
        Some(text) => match validate::whole("--digits", text)? {
            d @ 2..=120 => Some(d as u32),
            d => {
                return Err(Error::argument(
                    "--digits",
                    format!("must be between 2 and 120 significant digits, got {d}"),
                ));
            }
        },
    };
    let style = crate::enclosure::TextStyle {
        wide: cli.wide,
        digits,
    };
    let _listening = match cli.progress {
        _ if cli.quiet => None,
        args::ProgressArg::None => None,
        args::ProgressArg::Auto => Some(crate::progress::listen(std::sync::Arc::new(
            progress::TerminalBar::new(),
        ))),
        args::ProgressArg::Json => Some(crate::progress::listen(std::sync::Arc::new(
            progress::JsonLines::new(),
        ))),
    };
    crate::enclosure::with_text_style(style, || run_command(cli))
}

/// Writes a pair command's certificate when one is asked for.
fn certify_pair<Src: certify::CertifiedPair, R>(
    path: Option<&str>,
    command: &'static str,
    source: &Src,
    computed: &crate::query::Computed<R>,
    notes: &[&'static str],
    report: impl Fn() -> serde_json::Value,
) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let report = with_exact_endpoints(report);
    certify::write(
        path,
        certify::pair_parts(command, source, computed, report, notes),
    )
}

/// Runs one command.
fn run_command(cli: &Cli) -> Result<Outcome> {
    let plain = |s: String| Ok(Outcome::from(s));
    match &cli.command {
        Command::Delta(a) => {
            validate::plot_path(a.plot.as_ref(), a.pair.common.certificate.as_ref())?;
            // `--plot` alone draws the curves over ε from 0 to where δ is negligible.
            let thresholds = if a.eps.is_none() && a.exp_eps.is_none() && a.plot.is_some() {
                Vec::new()
            } else {
                validate::thresholds(a.eps.as_deref(), a.exp_eps.as_deref())?
            };
            let source = validate::pair_source(&a.pair, "delta")?;
            if !matches!(source, Source::Mechanism(_)) {
                for (given, flag) in [
                    (a.tv_ball.is_some(), "--tv-ball"),
                    (a.plot.is_some(), "--plot"),
                ] {
                    if given {
                        return Err(Error::argument(
                            flag,
                            "applies to a binary-input mechanism's pair (--n, --k), not to --background or --experiment",
                        ));
                    }
                }
            }
            let json = a.pair.common.json;
            let certificate = a.pair.common.certificate.as_deref();
            let job = DeltaJob { thresholds };
            let query = match source {
                Source::Mechanism(q) => q,
                Source::Background(b) => {
                    let computed = answer(&b, &job)?;
                    certify_pair(certificate, "delta", &b, &computed, &[], || {
                        output::delta_json(&b, &computed)
                    })?;
                    return plain(render(
                        json,
                        || output::delta_json(&b, &computed),
                        || output::delta_text(&b, &computed),
                    ));
                }
                Source::Experiment(e) => {
                    let computed = experiment::answer(&e, &job)?;
                    certify_pair(certificate, "delta", &e, &computed, &[], || {
                        output::delta_json(&e, &computed)
                    })?;
                    return plain(render(
                        json,
                        || output::delta_json(&e, &computed),
                        || output::delta_text(&e, &computed),
                    ));
                }
            };
            let DeltaJob { thresholds } = job;
            if a.tv_ball.is_some() && query.mechanism.messages.is_some() {
                return Err(Error::argument(
                    "--tv-ball",
                    "bounds mechanisms near a single-message one; with --messages each user's \
                     messages would all move, which this ball does not cover",
                ));
            }
            let eta = a.tv_ball.as_deref().map(validate::tv_radius).transpose()?;
            let asked = thresholds.clone();
            let computed = answer(&query, &DeltaJob { thresholds })?;
            let ball = eta
                .as_ref()
                .map(|eta| (eta, tv_ball(query.n, query.k, eta, &computed.result)));
            if let Some(path) = &a.pair.common.certificate {
                let report = with_exact_endpoints(|| {
                    let mut v = output::delta_json(&query, &computed);
                    if let Some((eta, rows)) = &ball {
                        v["tv_ball"] =
                            output::tv_ball_json(query.n, query.k, eta, &computed.result, rows);
                    }
                    v
                });
                let mut parts = certify::pair_parts("delta", &query, &computed, report, &[]);
                if ball.is_some() {
                    // A version-1 verifier would pass the ball unchecked.
                    parts.schema = crate::certificate::Schema::V2;
                    parts.proofs_notes.push("tv-and-le-cam.md");
                }
                certify::write(path, parts)?;
            }
            // The picture is computed on its own, so that its samples never change how the
            // reported answers were computed; it is drawn before the report, which says where
            // it went (or, after the report, why it could not be drawn).
            let drawn = a.plot.as_ref().map(|path| {
                let picture_query = crate::query::PairQuery {
                    escalate_above: None,
                    ..query.clone()
                };
                let negligible = answer(
                    &picture_query,
                    &EpsilonJob {
                        delta: crate::enclosure::parse_rational(plot::NEGLIGIBLE_DELTA)
                            .expect("an exact number"),
                    },
                )
                .ok()
                .map(|e| e.result.two_sided.hi().to_f64());
                let grid = plot::grid(&asked, negligible);
                let top = grid.last().map_or(0.0, crate::query::Threshold::eps_f64);
                answer(&picture_query, &DeltaJob { thresholds: grid })
                    .and_then(|rows| {
                        plot::delta_plot(path, &query, &rows.result, &plot::marks(&computed.result))
                    })
                    .map(|()| (path.clone(), top))
                    .map_err(|e| format!("error: {e}"))
            });
            let written = drawn.as_ref().and_then(|d| d.as_ref().ok());
            let stdout = render(
                a.pair.common.json,
                || {
                    let mut v = output::delta_json(&query, &computed);
                    if let Some((eta, rows)) = &ball {
                        v["tv_ball"] =
                            output::tv_ball_json(query.n, query.k, eta, &computed.result, rows);
                    }
                    if let Some((path, _)) = written {
                        v["plot"] = path.clone().into();
                    }
                    v
                },
                || {
                    let mut s = output::delta_text(&query, &computed);
                    if let Some((eta, rows)) = &ball {
                        s += &output::tv_ball_text(query.n, query.k, eta, &computed.result, rows);
                    }
                    if let Some((path, top)) = written {
                        s += &format!(
                            "\nplot: both certified curves for ε in [0, {top:.4}] written to {path} (SVG)\n"
                        );
                    }
                    s
                },
            );
            let failure = drawn.and_then(|d| d.err());
            Ok(Outcome { stdout, failure })
        }
        Command::Epsilon(a) => {
            let delta = validate::rational("--delta", &a.delta)?;
            crate::exact::curve::check_target(&delta)?;
            let job = EpsilonJob {
                delta: delta.clone(),
            };
            let certificate = a.pair.common.certificate.as_deref();
            let notes = ["epsilon-for-delta.md", "ordered-curves.md"];
            let query = match validate::pair_source(&a.pair, "epsilon")? {
                Source::Mechanism(q) => q,
                Source::Background(b) => {
                    let computed = answer(&b, &job)?;
                    certify_pair(certificate, "epsilon", &b, &computed, &notes, || {
                        output::epsilon_json(&b, &delta, &computed)
                    })?;
                    return plain(render(
                        a.pair.common.json,
                        || output::epsilon_json(&b, &delta, &computed),
                        || output::epsilon_text(&b, &delta, &computed),
                    ));
                }
                Source::Experiment(e) => {
                    let computed = experiment::answer(&e, &job)?;
                    certify_pair(certificate, "epsilon", &e, &computed, &notes, || {
                        output::epsilon_json(&e, &delta, &computed)
                    })?;
                    return plain(render(
                        a.pair.common.json,
                        || output::epsilon_json(&e, &delta, &computed),
                        || output::epsilon_text(&e, &delta, &computed),
                    ));
                }
            };
            let computed = answer(&query, &job)?;
            certify_pair(certificate, "epsilon", &query, &computed, &notes, || {
                output::epsilon_json(&query, &delta, &computed)
            })?;
            plain(render(
                a.pair.common.json,
                || output::epsilon_json(&query, &delta, &computed),
                || output::epsilon_text(&query, &delta, &computed),
            ))
        }
        Command::Divergences(a) => {
            let renyi_orders = validate::rational_list("--renyi-order", &a.renyi_order)?;
            let job = DivergenceJob { renyi_orders };
            let certificate = a.pair.common.certificate.as_deref();
            let notes = ["divergences.md"];
            let query = match validate::pair_source(&a.pair, "divergences")? {
                Source::Mechanism(q) => q,
                Source::Background(b) => {
                    let computed = answer(&b, &job)?;
                    certify_pair(certificate, "divergences", &b, &computed, &notes, || {
                        output::divergences_json(&b, &computed)
                    })?;
                    return plain(render(
                        a.pair.common.json,
                        || output::divergences_json(&b, &computed),
                        || output::divergences_text(&b, &computed),
                    ));
                }
                Source::Experiment(e) => {
                    let computed = experiment::answer(&e, &job)?;
                    certify_pair(certificate, "divergences", &e, &computed, &notes, || {
                        output::divergences_json(&e, &computed)
                    })?;
                    return plain(render(
                        a.pair.common.json,
                        || output::divergences_json(&e, &computed),
                        || output::divergences_text(&e, &computed),
                    ));
                }
            };
            let computed = answer(&query, &job)?;
            certify_pair(
                certificate,
                "divergences",
                &query,
                &computed,
                &notes,
                || output::divergences_json(&query, &computed),
            )?;
            plain(render(
                a.pair.common.json,
                || output::divergences_json(&query, &computed),
                || output::divergences_text(&query, &computed),
            ))
        }
        Command::Bounds(a) => {
            let query = validate::bounds_query(a)?;
            let ceiling_seconds = a
                .ceiling_seconds
                .as_deref()
                .map(|text| validate::ceiling_seconds(text, query.options.time_limit_seconds))
                .transpose()?;
            crate::bounds::range::check_time(&query)?;
            let index = crate::bounds::index::shuffle_index_for(&query.randomizer, query.backend)?;
            let (mut rows, proof) = crate::bounds::range::bounds_with_proof(&query)?;
            let search = match &a.search {
                Some(budget) => {
                    let budget = validate::search_budget(budget)?;
                    let (found, stats) = crate::bounds::search::raise_lower(&query, &rows, budget)?;
                    for (i, (row, found)) in rows.iter_mut().zip(found).enumerate() {
                        if let Some(f) = found {
                            row.lower = crate::bounds::range::Attained {
                                value: f.values[i].clone(),
                                pair: f.pair,
                                background: None,
                                others: Some(f.others),
                            };
                        }
                    }
                    Some(stats)
                }
                None => None,
            };
            let ceiling = ceiling_seconds
                .map(|seconds| crate::bounds::ceiling::ceiling(&query, &rows, seconds))
                .transpose()?;
            let profile = if query.randomizer.input_count() == 2 {
                let quantities = query.target.quantities();
                let profile_query = profile::ProfileQuery {
                    mechanism: query.randomizer.pair(0, 1)?,
                    n: query.n,
                    k_range: None,
                    quantities,
                    options: query.options.clone(),
                    backend: query.backend,
                    exact_ctx: Default::default(),
                    prune: true,
                    with_ends: false,
                    escalate_above: query.escalate_above,
                };
                let p = profile::profile(&profile_query)?;
                Some((profile_query, p))
            } else {
                None
            };
            let report = output::BoundsReport {
                query: &query,
                rows: &rows,
                index: &index,
                profile: profile.as_ref().map(|(_, p)| p),
                search: search.as_ref(),
                ceiling: ceiling.as_ref().and_then(|c| c.as_ref().ok()),
                ceiling_missed: ceiling.as_ref().and_then(|c| c.as_ref().err()),
            };
            if let Some(path) = &a.common.certificate {
                let parts = certify::bounds_parts(&query, &report, &proof, profile.as_ref());
                certify::write(path, parts)?;
            }
            plain(render(
                a.common.json,
                || output::bounds_json(&report),
                || output::bounds_text(&report),
            ))
        }
        Command::Limit(a) => {
            let (sequence, text) = crate::limits::sequence::load_sequence_with_text(&a.family)?;
            let rule = crate::limits::sequence::KRule::parse(&a.k_rule)?;
            let ns = validate::increasing_sizes(&a.n)?;
            let thresholds = validate::thresholds(a.eps.as_deref(), a.exp_eps.as_deref())?;
            let study = crate::limits::study::study(sequence, rule, &ns, thresholds)?;
            if let Some(path) = &a.certificate {
                let report = with_exact_endpoints(|| output::limit_json(&study));
                certify::write(
                    path,
                    certify::limit_parts(&a.family, text.as_deref(), &study, report),
                )?;
            }
            plain(render(
                a.json,
                || output::limit_json(&study),
                || output::limit_text(&study),
            ))
        }
        Command::BerryEsseen(a) => {
            let (lambdas, scale, pi, backend) = validate::berry_esseen_query(a)?;
            let escalate = matches!(backend, crate::query::Backend::Interval).then_some(1e-9);
            let rows = crate::limits::berry_esseen::berry_esseen(
                &lambdas,
                &scale,
                pi.as_ref(),
                backend,
                escalate,
            )?;
            if let Some(path) = &a.certificate {
                let report =
                    with_exact_endpoints(|| output::berry_esseen_json(&rows, &scale, pi.as_ref()));
                certify::write(
                    path,
                    certify::berry_esseen_parts(backend, escalate, &rows, report),
                )?;
            }
            plain(render(
                a.json,
                || output::berry_esseen_json(&rows, &scale, pi.as_ref()),
                || output::berry_esseen_text(&rows, pi.as_ref()),
            ))
        }
        Command::Profile(a) => {
            if let Some(query) = validate::inputs_profile_query(a)? {
                return profile_inputs(a, &query);
            }
            validate::plot_path(a.plot.as_ref(), a.common.certificate.as_ref())?;
            let (mut query, threads) = validate::profile_query(a)?;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads.unwrap_or(0))
                .build()
                .map_err(|e| Error::argument("--threads", e.to_string()))?;
            // `--plot` alone: the report is δ_M on the picture's grid.
            let alone = query.quantities.is_empty() && a.plot.is_some();
            // Notes muted on this thread (`golden`) stay muted on the pool's.
            let muted = crate::progress::notes_muted();
            let (result, drawn) = pool.install(|| {
                crate::progress::mute_notes_if(muted, || -> Result<_> {
                    if alone {
                        query.quantities = plot::profile_grid(&query, None)?
                            .into_iter()
                            .map(profile::Quantity::Delta)
                            .collect();
                    }
                    let result = profile::profile(&query)?;
                    // The picture is computed on its own (unless it is the report), so that its
                    // samples never change how the reported answers were computed.
                    let drawn = a.plot.as_ref().map(|path| {
                        plot::profile_plot(path, &query, &result, alone)
                            .map(|top| (path.clone(), top))
                            .map_err(|e| format!("error: {e}"))
                    });
                    Ok((result, drawn))
                })
            })?;
            if let Some(path) = &a.common.certificate {
                certify::write(
                    path,
                    crate::certificate::Parts {
                        schema: crate::certificate::Schema::for_mechanism(&query.mechanism),
                        command: "profile",
                        mechanism: (&query.mechanism).into(),
                        settings: certify::settings(
                            query.backend,
                            query.exact_ctx,
                            &query.options,
                            query.escalate_above,
                        ),
                        claims: None,
                        report: with_exact_endpoints(|| output::profile_json(&query, &result)),
                        method: certify::profile_method(&query, &result),
                        proofs_notes: certify::profile_notes(&query, &result),
                    },
                )?;
            }
            let written = drawn.as_ref().and_then(|d| d.as_ref().ok());
            let stdout = render(
                a.common.json,
                || {
                    let mut v = output::profile_json(&query, &result);
                    if let Some((path, _)) = written {
                        v["plot"] = path.clone().into();
                    }
                    v
                },
                || {
                    let mut s = if alone {
                        output::profile_grid_text(&query, &result)
                    } else {
                        output::profile_text(&query, &result)
                    };
                    if let Some((path, top)) = written {
                        s += &format!(
                            "\nplot: δ_M(ε) for ε in [0, {top:.4}] and the pairs attaining it\n  written to {path} (SVG)\n"
                        );
                    }
                    s
                },
            );
            let failure = drawn.and_then(|d| d.err());
            Ok(Outcome { stdout, failure })
        }
        Command::Constants(a) => {
            let mechanism = validate::binary_mechanism(
                &a.mechanism,
                "constants",
                validate::instead::CONSTANTS,
            )?;
            let mechanism = match validate::messages(&a.messages)? {
                Some(m) => crate::multimessage::with_messages(&mechanism, m)?,
                None => mechanism,
            };
            let (pi, n) = match (&a.pi, &a.n, &a.k) {
                (Some(p), _, _) => (Some(validate::composition("--pi", p)?), None),
                (None, Some(n), Some(k)) => {
                    let (n, k) = (validate::whole("--n", n)?, validate::whole("--k", k)?);
                    crate::exact::pair::check_composition(n, k)?;
                    (Some(rug::Rational::from((k, n))), Some(n))
                }
                _ => (None, None),
            };
            let range = match &a.pi_range {
                Some(r) => {
                    let (lo, hi) = validate::rational_range("--pi-range", r)?;
                    if lo < 0 || hi > 1 {
                        return Err(Error::argument("--pi-range", "must lie within [0, 1]"));
                    }
                    let grid = validate::whole("--grid", &a.grid)?;
                    if !(2..=100_000).contains(&grid) {
                        return Err(Error::argument("--grid", "must be between 2 and 100000"));
                    }
                    Some(constants_range(&mechanism, &lo, &hi, grid)?)
                }
                None => None,
            };
            let at = match &pi {
                Some(p) => Some(crate::asymptotic::constants(&mechanism, p)?),
                None => None,
            };
            plain(render(
                a.json,
                || output::constants_json(&mechanism, at.as_ref(), n, range.as_ref()),
                || output::constants_text(&mechanism, at.as_ref(), n, range.as_ref()),
            ))
        }
        Command::Audit(a) => {
            let (query, claims_text) = match validate::audit_query(a)? {
                validate::Audited::Profile(query, text) => (query, text),
                validate::Audited::Range(query, claims_text) => {
                    let audit = crate::audit::range::audit_range(&query)?;
                    let reports = &audit.reports;
                    if let Some(path) = &a.common.certificate {
                        let report =
                            with_exact_endpoints(|| output::range_audit_json(&query, reports));
                        certify::write(
                            path,
                            certify::range_audit_parts(&query, &claims_text, &audit, report),
                        )?;
                    }
                    let stdout = render(
                        a.common.json,
                        || output::range_audit_json(&query, reports),
                        || output::range_audit_text(&query, reports),
                    );
                    return Ok(Outcome {
                        stdout,
                        failure: unsound_failure(
                            reports
                                .iter()
                                .map(|r| r.verdict)
                                .collect::<Vec<_>>()
                                .as_slice(),
                        ),
                    });
                }
            };
            let audit = crate::audit::audit(&query)?;
            if let Some(path) = &a.common.certificate {
                let report = with_exact_endpoints(|| output::audit_json(&query, &a.claims, &audit));
                certify::write(
                    path,
                    certify::audit_parts(&query, &a.claims, &claims_text, &audit, report),
                )?;
            }
            let stdout = render(
                a.common.json,
                || output::audit_json(&query, &a.claims, &audit),
                || output::audit_text(&query, &a.claims, &audit),
            );
            let verdicts: Vec<_> = audit.reports.iter().map(|r| r.verdict).collect();
            Ok(Outcome {
                stdout,
                failure: unsound_failure(&verdicts),
            })
        }
        Command::CompareMessages(a) => {
            let query = validate::compare_messages_query(a)?;
            let (answers, dominance) = crate::multimessage::compare::compare_messages(&query)?;
            if let Some(path) = &a.common.certificate {
                let report = with_exact_endpoints(|| {
                    output::compare_messages_json(&query, &answers, &dominance)
                });
                certify::write(
                    path,
                    certify::compare_messages_parts(&query, &answers, report),
                )?;
            }
            plain(render(
                a.common.json,
                || output::compare_messages_json(&query, &answers, &dominance),
                || output::compare_messages_text(&query, &answers, &dominance),
            ))
        }
        Command::Compare(a) => {
            let query = validate::compare_query(a)?;
            let (local, rows) = crate::audit::compare::compare(&query)?;
            if let Some(path) = &a.common.certificate {
                let report = with_exact_endpoints(|| output::compare_json(&query, &local, &rows));
                certify::write(path, certify::compare_parts(&query, &rows, report))?;
            }
            plain(render(
                a.common.json,
                || output::compare_json(&query, &local, &rows),
                || output::compare_text(&query, &local, &rows),
            ))
        }
        Command::Merge(a) => {
            let files = a
                .shards
                .iter()
                .map(|path| {
                    std::fs::read_to_string(path)
                        .map(|text| (path.clone(), text))
                        .map_err(|e| Error::Io {
                            path: path.clone(),
                            message: format!("cannot read the certificate: {e}"),
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            let inputs_kind =
                |text: &str| crate::certificate::merge_inputs::is_inputs_profile(text);
            if let Some((first, first_text)) = files.first() {
                let kind = inputs_kind(first_text);
                if let Some((other, _)) = files.iter().find(|(_, t)| inputs_kind(t) != kind) {
                    let (slices, shards) = if kind { (first, other) } else { (other, first) };
                    return Err(Error::argument(
                        other.clone(),
                        format!(
                            "{slices} is a profile over every dataset (a randomizer on more \
                             inputs, sliced with --slice) but {shards} is not; merge \
                             certificates of one kind at a time"
                        ),
                    ));
                }
                if kind {
                    return merge_inputs(a, &files);
                }
            }
            let merged = crate::certificate::merge::merge(&files)?;
            let (query, result) = (&merged.query, &merged.profile);
            if let Some(path) = &a.certificate {
                let mut method = certify::profile_method(query, result);
                method["shards"] = merged
                    .shards
                    .iter()
                    .map(|(file, range, digest)| serde_json::json!({ "file": file, "k_range": [range.0, range.1], "digest": digest }))
                    .collect();
                certify::write(
                    path,
                    crate::certificate::Parts {
                        schema: crate::certificate::Schema::for_mechanism(&query.mechanism),
                        command: "profile",
                        mechanism: (&query.mechanism).into(),
                        settings: merged.settings.clone(),
                        claims: None,
                        report: with_exact_endpoints(|| output::profile_json(query, result)),
                        method,
                        proofs_notes: certify::profile_notes(query, result),
                    },
                )?;
            }
            plain(render(
                a.json,
                || output::profile_json(query, result),
                || output::profile_text(query, result),
            ))
        }
        Command::Golden(a) => {
            let written = golden::write(a)?;
            plain(render(
                a.json,
                || output::golden_json(&a.out, &written.manifest, &written.manifest_sha256),
                || output::golden_text(&a.out, &written.manifest, &written.manifest_sha256),
            ))
        }
        Command::Verify(a) => {
            validate::html_path(a.html.as_ref())?;
            let resources = crate::certificate::verify::Resources {
                memory_limit: validate::memory_limit(&a.max_memory_gib)?,
            };
            let text = std::fs::read_to_string(&a.certificate).map_err(|e| Error::Io {
                path: a.certificate.clone(),
                message: format!("cannot read the certificate: {e}"),
            })?;
            let v = crate::certificate::verify::verify(&text, &resources).map_err(|e| match e {
                Error::TooLarge(why) => Error::argument(
                    a.certificate.clone(),
                    format!(
                        "cannot be verified within this machine's limits (--max-memory-gib): {why}"
                    ),
                ),
                e => Error::argument(a.certificate.clone(), format!("malformed certificate: {e}")),
            })?;
            let stdout = render(
                a.json,
                || output::verify_json(&a.certificate, &v),
                || output::verify_text(&a.certificate, &v),
            );
            let invalid = (!v.valid()).then(|| {
                format!(
                    "verify: {} is INVALID ({})",
                    a.certificate,
                    crate::enclosure::count_of(v.problems.len(), "problem", "problems")
                )
            });
            // The page, once verification is done: it changes neither stdout nor the verdict,
            // and a page that cannot be written fails like a plot that cannot be drawn.
            let unwritten = a.html.as_ref().and_then(|path| {
                let written = serde_json::from_str(&text)
                    .map_err(|e| e.to_string())
                    .map(|cert| crate::certificate::page::page(&cert, &v, &a.certificate))
                    .and_then(|page| std::fs::write(path, page).map_err(|e| e.to_string()));
                written
                    .err()
                    .map(|e| format!("error: {path}: cannot write the page: {e}"))
            });
            let failure = match (invalid, unwritten) {
                (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                (a, b) => a.or(b),
            };
            Ok(Outcome { stdout, failure })
        }
        Command::Check(a) => {
            validate::plot_path(a.plot.as_ref(), a.pair.common.certificate.as_ref())?;
            let query = match validate::check_source(a)? {
                validate::Checked::Pair(query) => query,
                validate::Checked::Index { query, eps } => {
                    let index =
                        crate::bounds::index::shuffle_index_for(&query.randomizer, query.backend)?;
                    let report = crate::bounds::predict::index_check(&query, &eps, &index)?;
                    if let Some(path) = &a.pair.common.certificate {
                        let exact = with_exact_endpoints(|| {
                            output::index_check_json(&query, &index, &report)
                        });
                        certify::write(
                            path,
                            certify::index_check_parts(&query, &eps, &report, exact),
                        )?;
                    }
                    let stdout = render(
                        a.pair.common.json,
                        || output::index_check_json(&query, &index, &report),
                        || output::index_check_text(&query, &index, &report),
                    );
                    let optimistic = report
                        .comparisons
                        .iter()
                        .filter(|c| c.verdict == crate::check::Verdict::Optimistic)
                        .count();
                    let failure = (a.fail_on.is_some() && optimistic > 0).then(|| {
                        format!("check failed: {} optimistic at n = {} (under-report the certified value)", crate::enclosure::count_of(optimistic, "prediction is", "predictions are"), query.n)
                    });
                    return Ok(Outcome { stdout, failure });
                }
            };
            let report = crate::check::check(&query)?;
            if let Some(path) = &a.pair.common.certificate {
                let exact =
                    crate::enclosure::with_exact_endpoints(|| output::check_json(&query, &report));
                certify::write(path, certify::check_parts(&query, &report, exact))?;
            }
            let plot_result = match (&a.plot, &report.base.samples) {
                (Some(path), Some(samples)) => Some(
                    plot::check_plot(path, &query, &report.base, samples)
                        .map(|()| path.clone())
                        .map_err(|e| format!("error: {e}")),
                ),
                _ => None,
            };
            let written = plot_result.as_ref().and_then(|r| r.as_ref().ok());
            let stdout = render(
                a.pair.common.json,
                || {
                    let mut v = output::check_json(&query, &report);
                    if let Some(path) = written {
                        v["plot"] = path.clone().into();
                    }
                    v
                },
                || {
                    let mut s = output::check_text(&query, &report);
                    if let Some(path) = written {
                        s += &format!(
                            "\nplot: certified bands and predictions written to {path} (SVG)\n"
                        );
                    }
                    s
                },
            );
            let plot_failure = plot_result.and_then(|r| r.err());
            let optimistic = report.optimistic().count();
            let gate = (a.fail_on.is_some() && optimistic > 0).then(|| {
                format!(
                    "check failed: {} optimistic at n = {} (under-report the certified value)",
                    crate::enclosure::count_of(optimistic, "prediction is", "predictions are"),
                    query.pair.n
                )
            });
            Ok(Outcome {
                stdout,
                failure: plot_failure.or(gate),
            })
        }
    }
}

/// The range of I_π and of the mixture underestimate `1 − I^mix/I_π` over a grid of π.
fn constants_range(
    mechanism: &crate::mechanism::Mechanism,
    lo: &rug::Rational,
    hi: &rug::Rational,
    grid: u64,
) -> Result<output::ConstantsRange> {
    let mut points = Vec::new();
    for i in 0..grid {
        let pi = lo + rug::Rational::from(hi - lo) * rug::Rational::from((i, grid - 1));
        let c = crate::asymptotic::constants(mechanism, &pi)?;
        let e = &c.enclosed;
        let under = crate::arith::Scalar::sub(
            &crate::arith::Scalar::one(&crate::asymptotic::predictions::PREDICTION_CTX),
            &crate::arith::Scalar::div(&e.i_mix, &e.i_pi),
        );
        points.push((
            pi,
            crate::arith::Scalar::enclosure(&e.i_pi),
            crate::arith::Scalar::enclosure(&under),
        ));
    }
    Ok(output::ConstantsRange {
        lo: lo.clone(),
        hi: hi.clone(),
        points,
    })
}

/// The report on stdout: JSON (with the tool, its version and the report schema's id), or text
/// folded to [`TEXT_WIDTH`] columns.
fn render(
    json: bool,
    as_json: impl FnOnce() -> serde_json::Value,
    as_text: impl FnOnce() -> String,
) -> String {
    if json {
        let mut v = as_json();
        if let Some(map) = v.as_object_mut() {
            map.insert("tool".into(), "shufflecert".into());
            map.insert("version".into(), env!("CARGO_PKG_VERSION").into());
            map.insert("schema".into(), REPORT_SCHEMA_ID.into());
        }
        serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n"
    } else {
        fold(&as_text(), TEXT_WIDTH)
    }
}

/// The id of `schema/report-v1.schema.json`, which every JSON report names.
pub const REPORT_SCHEMA_ID: &str = "shufflecert/report/v1";

/// Text reports fit this many columns.
/// `profile` for a randomizer on more than two inputs: the worst case over every dataset.
fn profile_inputs(
    a: &args::ProfileArgs,
    query: &crate::profile_inputs::InputsProfileQuery,
) -> Result<Outcome> {
    let threads = validate::profile_threads(a)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| Error::argument("--threads", e.to_string()))?;
    let muted = crate::progress::notes_muted();
    let result = pool
        .install(|| {
            crate::progress::mute_notes_if(muted, || crate::profile_inputs::inputs_profile(query))
        })
        .map_err(|e| match e {
            Error::Argument { field, message } if field == "--max-seconds" => Error::argument(
                field,
                format!("{message}; `bounds` gives a certified range of the same worst case"),
            ),
            Error::TooLarge(message) => Error::TooLarge(format!(
                "{message}; `bounds` gives a certified range of the same worst case"
            )),
            e => e,
        })?;
    if let Some(path) = &a.common.certificate {
        certify::write(path, certify::inputs_profile_parts(query, &result))?;
    }
    Ok(Outcome::from(render(
        a.common.json,
        || output::inputs_profile_json(query, &result),
        || output::inputs_profile_text(query, &result),
    )))
}

/// `merge` of the slices of a profile over every dataset.
fn merge_inputs(a: &args::MergeArgs, files: &[(String, String)]) -> Result<Outcome> {
    let merged = crate::certificate::merge_inputs::merge_inputs(files)?;
    let (query, result) = (&merged.query, &merged.profile);
    if let Some(path) = &a.certificate {
        let mut parts = certify::inputs_profile_parts(query, result);
        parts.settings = merged.settings.clone();
        parts.method["shards"] = merged
            .shards
            .iter()
            .map(|(file, slice, digest)| {
                serde_json::json!({ "file": file, "slice": slice, "digest": digest })
            })
            .collect();
        certify::write(path, parts)?;
    }
    Ok(Outcome::from(render(
        a.json,
        || output::inputs_profile_json(query, result),
        || output::inputs_profile_text(query, result),
    )))
}

pub const TEXT_WIDTH: usize = 100;

/// Every line longer than `width` columns broken at spaces, continued with its own indent plus
/// two spaces (a word longer than a line stays whole).
fn fold(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out += line;
            continue;
        }
        let indent: String = body.chars().take_while(|c| *c == ' ').collect();
        let continuation = format!("{indent}  ");
        let mut current = String::new();
        for word in body.trim_start().split(' ') {
            let prefix = if current.is_empty() { &indent } else { "" };
            let candidate_len = current.chars().count() + word.chars().count() + 1;
            if !current.is_empty() && candidate_len > width {
                out += current.trim_end();
                out += "\n";
                current = continuation.clone();
            } else if !current.is_empty() {
                current.push(' ');
            }
            current += prefix;
            current += word;
        }
        out += current.trim_end();
        out += newline;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_lines_fold_at_spaces() {
        let text = format!("{}\nshort\n  {}\n", "word ".repeat(30), "x".repeat(120));
        let folded = super::fold(&text, 100);
        assert!(
            folded
                .lines()
                .all(|l| l.chars().count() <= 100 || !l.trim().contains(' '))
        );
        assert!(folded.contains("\nshort\n"));
        assert!(folded.lines().nth(1).unwrap().starts_with("  word"));
        assert_eq!(
            folded.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
    }
}
