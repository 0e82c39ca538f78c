//! Progress of long computations, reported to whoever listens: the command line's bar or its
//! JSON lines.
//!
//! A computation opens a [`Stage`] with the number of units it will resolve and advances it as
//! it goes; stages nest (an audit's claims, inside them a profile's values of k).  Nothing
//! listens by default, and then a stage costs one atomic add per step.  Progress never changes
//! a result: it is reported, not consulted.
//!
//! A caller embedding the library (the Python package) may also [`request_cancel`]: every
//! computation in the process then stops at its next progress step by unwinding with a
//! [`Cancelled`] payload, which that caller catches; no result is produced.  The command line
//! never requests it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// What happened to a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Start,
    Advance,
    Finish,
}

impl EventKind {
    pub fn key(&self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Advance => "advance",
            EventKind::Finish => "finish",
        }
    }
}

/// One report: stage `name` has resolved `done` of its `total` units.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    pub kind: EventKind,
    /// What the stage does, e.g. `profile scan`.
    pub name: &'a str,
    /// What it counts, e.g. `values of k`.
    pub unit: &'a str,
    pub done: u64,
    pub total: u64,
}

/// Receives the events of every stage, and notes (such as an up-front estimate).
pub trait Listener: Send + Sync {
    fn event(&self, event: &Event);
    fn note(&self, text: &str);
}

static LISTENER: RwLock<Option<Arc<dyn Listener>>> = RwLock::new(None);

/// Installs `listener` until the returned guard is dropped.
pub fn listen(listener: Arc<dyn Listener>) -> Listening {
    *LISTENER.write().expect("progress listener") = Some(listener);
    Listening(())
}

/// Keeps a listener installed; dropping it removes the listener.
pub struct Listening(());

impl Drop for Listening {
    fn drop(&mut self) {
        if let Ok(mut l) = LISTENER.write() {
            *l = None;
        }
    }
}

fn emit(f: impl FnOnce(&dyn Listener)) {
    if let Some(l) = LISTENER.read().expect("progress listener").as_ref() {
        f(l.as_ref());
    }
}

thread_local! {
    /// How many [`without_notes`] calls are running on this thread (its notes are muted while
    /// any is).
    static NOTES_MUTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Passes a note, such as an up-front estimate, to the listener (unless this thread is inside
/// [`without_notes`]). Notes are made on the thread that asked the question, before its work
/// fans out.
pub fn note(text: &str) {
    if NOTES_MUTED.with(|m| m.get()) == 0 {
        emit(|l| l.note(text));
    }
}

/// Runs `f` with this thread's notes muted and stages still reported: for a command that runs
/// others (`golden`), whose own estimates would only repeat. Other threads' questions (two
/// Python calls at once, say) keep their notes.
pub fn without_notes<T>(f: impl FnOnce() -> T) -> T {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            NOTES_MUTED.with(|m| m.set(m.get() - 1));
        }
    }
    NOTES_MUTED.with(|m| m.set(m.get() + 1));
    let _restore = Restore;
    f()
}

/// Whether this thread's notes are muted (to carry into a thread pool with [`mute_notes_if`]).
pub fn notes_muted() -> bool {
    NOTES_MUTED.with(|m| m.get()) > 0
}

/// Runs `f` muted when `muted` (a [`notes_muted`] read on the thread that handed `f` over).
pub fn mute_notes_if<T>(muted: bool, f: impl FnOnce() -> T) -> T {
    if muted { without_notes(f) } else { f() }
}

static CANCEL: AtomicBool = AtomicBool::new(false);

/// The payload a computation unwinds with once cancellation is requested
/// (`std::panic::catch_unwind` and `payload.is::<Cancelled>()` tell it from a bug).
#[derive(Debug)]
pub struct Cancelled;

/// Asks every computation in progress to stop at its next progress step.
pub fn request_cancel() {
    CANCEL.store(true, Ordering::SeqCst);
}

/// Lets computations run again (after the cancelled ones have unwound).
pub fn clear_cancel() {
    CANCEL.store(false, Ordering::SeqCst);
}

/// A cancellation point for loops between progress steps (a law's per-user steps): unwinds
/// with [`Cancelled`] when cancellation is requested, never while already unwinding.  One
/// relaxed atomic load otherwise.
pub fn checkpoint() {
    if CANCEL.load(Ordering::Relaxed) && !std::thread::panicking() {
        std::panic::panic_any(Cancelled);
    }
}

/// A stage of a computation; finished when dropped.
pub struct Stage {
    name: &'static str,
    unit: &'static str,
    total: u64,
    done: AtomicU64,
}

impl Stage {
    /// Opens a stage that will resolve `total` units.
    pub fn start(name: &'static str, unit: &'static str, total: u64) -> Stage {
        checkpoint();
        let stage = Stage {
            name,
            unit,
            total,
            done: AtomicU64::new(0),
        };
        stage.emit(EventKind::Start, 0);
        stage
    }

    /// `count` more units are resolved.
    pub fn advance(&self, count: u64) {
        let done = self.done.fetch_add(count, Ordering::Relaxed) + count;
        self.emit(EventKind::Advance, done);
        checkpoint();
    }

    /// Advances by `count` when the returned guard is dropped: at the end of a step, however it
    /// ends.
    pub fn advance_on_drop(&self, count: u64) -> AdvanceOnDrop<'_> {
        AdvanceOnDrop(self, count)
    }

    /// Units resolved so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    fn emit(&self, kind: EventKind, done: u64) {
        emit(|l| {
            l.event(&Event {
                kind,
                name: self.name,
                unit: self.unit,
                done,
                total: self.total,
            })
        });
    }
}

/// Advances a stage when dropped ([`Stage::advance_on_drop`]).
pub struct AdvanceOnDrop<'a>(&'a Stage, u64);

impl Drop for AdvanceOnDrop<'_> {
    fn drop(&mut self) {
        self.0.advance(self.1);
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        self.emit(EventKind::Finish, self.done());
    }
}

/// A stage as listeners track it ([`Stages`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenStage {
    pub name: String,
    pub unit: String,
    pub done: u64,
    pub total: u64,
}

/// The open stages of a run, outermost first, as a listener rebuilds them from the events.
#[derive(Clone, Debug, Default)]
pub struct Stages(Vec<OpenStage>);

impl Stages {
    /// Applies an event; returns the stage's path (outermost first).
    pub fn apply(&mut self, e: &Event) -> Vec<String> {
        match e.kind {
            EventKind::Start => self.0.push(OpenStage {
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

    /// The open stages, outermost first.
    pub fn open(&self) -> &[OpenStage] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records this test's stages and notes (other tests running meanwhile may report too).
    struct Record(Mutex<Vec<String>>);

    const OURS: [&str; 3] = ["outer", "inner", "unheard"];

    impl Listener for Record {
        fn event(&self, e: &Event) {
            if OURS.contains(&e.name) {
                let line = format!("{} {} {}/{}", e.kind.key(), e.name, e.done, e.total);
                self.0.lock().unwrap().push(line);
            }
        }
        fn note(&self, text: &str) {
            if text == "about 1 s" {
                self.0.lock().unwrap().push(format!("note {text}"));
            }
        }
    }

    #[test]
    fn a_listener_hears_every_step_of_nested_stages_and_nothing_after_it_is_removed() {
        let record = Arc::new(Record(Mutex::new(Vec::new())));
        {
            let _listening = listen(record.clone());
            let outer = Stage::start("outer", "claims", 2);
            note("about 1 s");
            {
                let inner = Stage::start("inner", "values of k", 3);
                inner.advance(2);
                inner.advance(1);
            }
            outer.advance(2);
        }
        Stage::start("unheard", "units", 1).advance(1);
        assert_eq!(
            *record.0.lock().unwrap(),
            [
                "start outer 0/2",
                "note about 1 s",
                "start inner 0/3",
                "advance inner 2/3",
                "advance inner 3/3",
                "finish inner 3/3",
                "advance outer 2/2",
                "finish outer 2/2",
            ]
        );
    }
}
