//! The profile's progress bar: on stderr, only when stderr is a terminal, only once a run has
//! lasted a couple of seconds, and never with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Shows the bar only after this long.
const DELAY: Duration = Duration::from_secs(2);

pub struct ProgressReport {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
    quiet: bool,
}

impl ProgressReport {
    /// A hidden bar over `total` values of k.
    pub fn new(total: u64, quiet: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "profile: {pos}/{len} compositions resolved {wide_bar} {elapsed} (eta {eta})",
            )
            .expect("valid template"),
        );
        ProgressReport {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
            quiet,
        }
    }

    /// `count` more values of k are resolved (evaluated or pruned).
    pub fn advance(&self, count: u64) {
        self.bar.inc(count);
        if !self.quiet && self.start.elapsed() >= DELAY && !self.shown.swap(true, Ordering::Relaxed)
        {
            // stderr() draws nothing unless stderr is a terminal.
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(250));
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
