//! How long commands show their progress (`--progress`): a bar on stderr when it is a terminal
//! (`auto`, shown once a run has lasted two seconds), one JSON object per line on stderr
//! (`json`, for scripts and notebooks), or nothing (`none`, or `--quiet`).  Notes such as a
//! profile's up-front estimate are printed in `auto` mode whether or not stderr is a terminal.

use crate::progress::{Event, EventKind, Listener};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The bar appears only after this long.
const DELAY: Duration = Duration::from_secs(2);

/// JSON lines: at most one `advance` line per stage this often (start and finish always).
const JSON_INTERVAL: Duration = Duration::from_millis(100);

/// A stage as the listeners track it.
#[derive(Clone)]
struct Open {
    name: String,
    unit: String,
    done: u64,
    total: u64,
}

/// The open stages, innermost last.
#[derive(Default)]
struct Stack(Vec<Open>);

impl Stack {
    /// Applies an event; returns the stage's path (outermost first).
    fn apply(&mut self, e: &Event) -> Vec<String> {
        match e.kind {
            EventKind::Start => self.0.push(Open {
                name: e.name.into(),
                unit: e.unit.into(),
                done: 0,
                total: e.total,
            }),
            EventKind::Advance | EventKind::Finish => {
                if let Some(open) = self.0.iter_mut().rev().find(|o| o.name == e.name) {
                    open.done = e.done;
                }
            }
        }
        let path = self.0.iter().map(|o| o.name.clone()).collect();
        if e.kind == EventKind::Finish {
            if let Some(i) = self.0.iter().rposition(|o| o.name == e.name) {
                self.0.remove(i);
            }
        }
        path
    }
}

/// The bar on a terminal.
pub struct TerminalBar {
    bar: ProgressBar,
    start: Instant,
    stack: Mutex<Stack>,
}

impl TerminalBar {
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix}: {pos}/{len} {msg} {wide_bar} {elapsed} (eta {eta})",
            )
            .expect("valid template"),
        );
        TerminalBar {
            bar,
            start: Instant::now(),
            stack: Mutex::new(Stack::default()),
        }
    }

    /// Shows the innermost open stage (or hides the bar when none is open).
    fn show(&self, stack: &Stack) {
        match stack.0.last() {
            Some(top) => {
                let path: Vec<&str> = stack.0.iter().map(|o| o.name.as_str()).collect();
                self.bar.set_prefix(path.join(" › "));
                self.bar.set_message(top.unit.clone());
                self.bar.set_length(top.total);
                self.bar.set_position(top.done);
                if self.start.elapsed() >= DELAY && self.bar.is_hidden() {
                    // stderr() draws nothing unless stderr is a terminal.
                    self.bar.set_draw_target(ProgressDrawTarget::stderr());
                    self.bar.enable_steady_tick(Duration::from_millis(250));
                }
            }
            None => self.bar.finish_and_clear(),
        }
    }
}

impl Listener for TerminalBar {
    fn event(&self, e: &Event) {
        let mut stack = self.stack.lock().expect("progress stack");
        stack.apply(e);
        self.show(&stack);
    }

    fn note(&self, text: &str) {
        self.bar.suspend(|| eprintln!("{text}"));
    }
}

impl Drop for TerminalBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// One JSON object per line on stderr.
pub struct JsonLines {
    start: Instant,
    state: Mutex<(Stack, Option<Instant>)>,
}

impl JsonLines {
    pub fn new() -> Self {
        JsonLines {
            start: Instant::now(),
            state: Mutex::new((Stack::default(), None)),
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
        let mut stack = Stack::default();
        assert_eq!(stack.apply(&event(EventKind::Start, "audit", 0)), ["audit"]);
        assert_eq!(
            stack.apply(&event(EventKind::Start, "profile scan", 0)),
            ["audit", "profile scan"]
        );
        stack.apply(&event(EventKind::Advance, "profile scan", 3));
        assert_eq!(stack.0.last().unwrap().done, 3);
        assert_eq!(
            stack.apply(&event(EventKind::Finish, "profile scan", 4)),
            ["audit", "profile scan"]
        );
        assert_eq!(
            stack.apply(&event(EventKind::Advance, "audit", 1)),
            ["audit"]
        );
        stack.apply(&event(EventKind::Finish, "audit", 4));
        assert!(stack.0.is_empty());
    }
}
