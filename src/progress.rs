//! Progress of long computations, reported to whoever listens: the command line's bar or its
//! JSON lines.
//!
//! A computation opens a [`Stage`] with the number of units it will resolve and advances it as
//! it goes; stages nest (an audit's claims, inside them a profile's values of k).  Nothing
//! listens by default, and then a stage costs one atomic add per step.  Progress never changes
//! a result: it is reported, not consulted.

use std::sync::atomic::{AtomicU64, Ordering};
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

/// Passes a note, such as an up-front estimate, to the listener.
pub fn note(text: &str) {
    emit(|l| l.note(text));
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
