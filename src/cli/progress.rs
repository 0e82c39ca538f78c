//! How long commands show their progress (`--progress`): a bar on stderr when it is a terminal
//! (`auto`, shown once a run has lasted two seconds), one JSON object per line on stderr
//! (`json`, for scripts and notebooks), or nothing (`none`, or `--quiet`).  Notes such as a
//! profile's up-front estimate are printed in `auto` mode whether or not stderr is a terminal.

use crate::progress::{Event, EventKind, Listener, Stages};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The bar appears only after this long.
const DELAY: Duration = Duration::from_secs(2);

/// JSON lines: at most one `advance` line this often in a run (start, finish and the last
/// advance of a stage always).
const JSON_INTERVAL: Duration = Duration::from_millis(100);

/// The bar on a terminal: one indicatif bar per top-level stage, drawn only when stderr is a
/// terminal and only once the run has lasted [`DELAY`]; notes are printed in any case.
pub struct TerminalBar {
    terminal: bool,
    start: Instant,
    state: Mutex<(Stages, Option<ProgressBar>)>,
}

impl TerminalBar {
    pub fn new() -> Self {
        TerminalBar {
            terminal: std::io::stderr().is_terminal(),
            start: Instant::now(),
            state: Mutex::new((Stages::default(), None)),
        }
    }

    /// A bar for a new top-level stage, hidden until the delay has passed.
    fn bar() -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix}: {pos}/{len} {msg} {wide_bar} {elapsed} (eta {eta})",
            )
            .expect("valid template"),
        );
        bar
    }
}

impl Listener for TerminalBar {
    fn event(&self, e: &Event) {
        if !self.terminal {
            return;
        }
        let mut state = self.state.lock().expect("progress state");
        let (stack, bar) = &mut *state;
        stack.apply(e);
        let Some(top) = stack.open().last() else {
            // The run's top-level stage is over: the next one gets a bar of its own.
            if let Some(done) = bar.take() {
                done.finish_and_clear();
            }
            return;
        };
        let bar = bar.get_or_insert_with(Self::bar);
        let path: Vec<&str> = stack.open().iter().map(|o| o.name.as_str()).collect();
        bar.set_prefix(path.join(" › "));
        bar.set_message(top.unit.clone());
        bar.set_length(top.total);
        bar.set_position(top.done);
        if bar.is_hidden() && self.start.elapsed() >= DELAY {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(250));
        }
    }

    fn note(&self, text: &str) {
        // Folded at the report's width, as every line the tool prints.
        let text = super::fold(text, super::TEXT_WIDTH);
        match self.state.lock().expect("progress state").1.as_ref() {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl Drop for TerminalBar {
    fn drop(&mut self) {
        if let Ok(mut state) = self.state.lock() {
            if let Some(bar) = state.1.take() {
                bar.finish_and_clear();
            }
        }
    }
}

/// One JSON object per line on stderr.
pub struct JsonLines {
    start: Instant,
    state: Mutex<(Stages, Option<Instant>)>,
}

impl JsonLines {
    pub fn new() -> Self {
        JsonLines {
            start: Instant::now(),
            state: Mutex::new((Stages::default(), None)),
        }
    }

    fn write(&self, line: serde_json::Value) {
        let mut err = std::io::stderr().lock();
        // A closed stderr must not stop the computation.
        let _ = writeln!(err, "{line}");
    }

    fn elapsed(&self) -> f64 {
        (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
    }
}

impl Listener for JsonLines {
    fn event(&self, e: &Event) {
        let mut state = self.state.lock().expect("progress state");
        let (stack, last) = &mut *state;
        let path = stack.apply(e);
        if e.kind == EventKind::Advance && e.done < e.total {
            let now = Instant::now();
            if last.is_some_and(|t| now.duration_since(t) < JSON_INTERVAL) {
                return;
            }
            *last = Some(now);
        }
        self.write(serde_json::json!({
            "event": e.kind.key(),
            "stage": e.name,
            "path": path,
            "unit": e.unit,
            "done": e.done,
            "total": e.total,
            "elapsed_s": self.elapsed(),
        }));
    }

    fn note(&self, text: &str) {
        self.write(
            serde_json::json!({ "event": "note", "text": text, "elapsed_s": self.elapsed() }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, name: &'static str, done: u64) -> Event<'static> {
        Event {
            kind,
            name,
            unit: "units",
            done,
            total: 4,
        }
    }

    #[test]
    fn nested_stages_report_their_path_and_close_innermost_first() {
        let mut stack = Stages::default();
        assert_eq!(stack.apply(&event(EventKind::Start, "audit", 0)), ["audit"]);
        assert_eq!(
            stack.apply(&event(EventKind::Start, "profile scan", 0)),
            ["audit", "profile scan"]
        );
        stack.apply(&event(EventKind::Advance, "profile scan", 3));
        assert_eq!(stack.open().last().unwrap().done, 3);
        assert_eq!(
            stack.apply(&event(EventKind::Finish, "profile scan", 4)),
            ["audit", "profile scan"]
        );
        assert_eq!(
            stack.apply(&event(EventKind::Advance, "audit", 1)),
            ["audit"]
        );
        stack.apply(&event(EventKind::Finish, "audit", 4));
        assert!(stack.open().is_empty());
    }
}
