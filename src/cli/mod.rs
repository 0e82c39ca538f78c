//! The command-line interface: a thin shell over the library.  `run` turns parsed arguments
//! into one output string (stdout); errors come back as [`Error`] (one line on stderr).

pub mod args;
mod output;
mod progress;
mod validate;

use crate::error::{Error, Result};
use crate::profile;
use crate::query::{DeltaJob, DivergenceJob, EpsilonJob, answer};
use args::{Cli, Command};

/// Runs one command and returns what goes to stdout.
pub fn run(cli: &Cli) -> Result<String> {
    match &cli.command {
        Command::Delta(a) => {
            let query = validate::pair_query(&a.pair)?;
            let thresholds = validate::thresholds(a.eps.as_deref(), a.exp_eps.as_deref())?;
            let computed = answer(&query, &DeltaJob { thresholds })?;
            Ok(render(
                a.pair.common.json,
                || output::delta_json(&query, &computed),
                || output::delta_text(&query, &computed),
            ))
        }
        Command::Epsilon(a) => {
            let delta = validate::rational("--delta", &a.delta)?;
            crate::exact::curve::check_target(&delta)?;
            let query = validate::pair_query(&a.pair)?;
            let computed = answer(
                &query,
                &EpsilonJob {
                    delta: delta.clone(),
                },
            )?;
            Ok(render(
                a.pair.common.json,
                || output::epsilon_json(&query, &delta, &computed),
                || output::epsilon_text(&query, &delta, &computed),
            ))
        }
        Command::Divergences(a) => {
            let renyi_orders = validate::rational_list("--renyi-order", &a.renyi_order)?;
            let query = validate::pair_query(&a.pair)?;
            let computed = answer(&query, &DivergenceJob { renyi_orders })?;
            Ok(render(
                a.pair.common.json,
                || output::divergences_json(&query, &computed),
                || output::divergences_text(&query, &computed),
            ))
        }
        Command::Profile(a) => {
            let (query, threads) = validate::profile_query(a)?;
            let total = match query.k_range {
                Some((lo, hi)) => hi.saturating_sub(lo) + 1,
                None => query.n,
            };
            let bar = progress::ProgressReport::new(total, a.quiet);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads.unwrap_or(0))
                .build()
                .map_err(|e| Error::argument("--threads", e.to_string()))?;
            let result = pool.install(|| profile::profile(&query, &|count| bar.advance(count)));
            bar.finish();
            let result = result?;
            Ok(render(
                a.common.json,
                || output::profile_json(&query, &result),
                || output::profile_text(&query, &result),
            ))
        }
    }
}

fn render(
    json: bool,
    as_json: impl FnOnce() -> serde_json::Value,
    as_text: impl FnOnce() -> String,
) -> String {
    if json {
        serde_json::to_string_pretty(&as_json()).expect("JSON values serialise") + "\n"
    } else {
        as_text()
    }
}
