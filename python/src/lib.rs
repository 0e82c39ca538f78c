//! `shufflecert._core`: the command-line engine, in process, for the Python package.
//!
//! The package (`python/shufflecert/`) turns keyword arguments into the command line's options
//! and reads back its `--json` report, so Python and the CLI share one engine, one validation
//! and one set of messages.  This module runs a command off the interpreter's lock, on a worker
//! thread, while the calling thread waits for it: it forwards progress to a Python callable,
//! and on `KeyboardInterrupt` asks the computation to stop ([`progress::request_cancel`]) and
//! waits for it to unwind.

use clap::Parser;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyValueError};
use pyo3::prelude::*;
use shufflecert::cli::{self, args::Cli};
use shufflecert::error::Error;
use shufflecert::progress::{self, Cancelled, Event, Listener, Stages};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

create_exception!(
    _core,
    ShufflecertError,
    PyException,
    "An internal error of shufflecert (a bug: no result was produced)."
);

/// How often the waiting thread looks for signals and progress.
const POLL: Duration = Duration::from_millis(100);

/// Runs in progress, so that the last one to end lifts a cancellation.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// The latest progress of the running commands, read by the waiting thread.
#[derive(Default)]
struct Watch {
    state: Mutex<WatchState>,
}

#[derive(Default)]
struct WatchState {
    stages: Stages,
    changed: bool,
    notes: Vec<String>,
}

impl Listener for Watch {
    fn event(&self, event: &Event) {
        let mut state = self.state.lock().expect("progress state");
        state.stages.apply(event);
        state.changed = true;
    }

    fn note(&self, text: &str) {
        self.state
            .lock()
            .expect("progress state")
            .notes
            .push(text.to_string());
    }
}

impl Watch {
    /// Passes what changed since the last call to `callback(kind, payload)`: `("note", text)`
    /// per note, then `("stages", [(name, unit, done, total), …])`, outermost first.
    fn forward(&self, callback: &Bound<'_, PyAny>) -> PyResult<()> {
        let (notes, stages) = {
            let mut state = self.state.lock().expect("progress state");
            let notes = std::mem::take(&mut state.notes);
            let stages = std::mem::take(&mut state.changed).then(|| {
                state
                    .stages
                    .open()
                    .iter()
                    .map(|s| (s.name.clone(), s.unit.clone(), s.done, s.total))
                    .collect::<Vec<_>>()
            });
            (notes, stages)
        };
        for note in notes {
            callback.call1(("note", note))?;
        }
        if let Some(stages) = stages {
            callback.call1(("stages", stages))?;
        }
        Ok(())
    }
}

/// Ends a run: the last run to end lifts a cancellation.
struct RunGuard;

impl RunGuard {
    fn enter() -> RunGuard {
        RUNNING.fetch_add(1, Ordering::SeqCst);
        RunGuard
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if RUNNING.fetch_sub(1, Ordering::SeqCst) == 1 {
            progress::clear_cancel();
        }
    }
}

/// A cancelled computation unwinds quietly; any other panic is reported by the hook that was
/// there before (Rust's default: one message on stderr).
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Cancelled>() {
                previous(info);
            }
        }));
    });
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The exception for a command's error: bad input and refusals are `ValueError` (the CLI's
/// exit code 2), files that cannot be read or written `OSError`, bugs `ShufflecertError`.
fn to_py_err(e: Error) -> PyErr {
    match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        Error::Internal(_) => ShufflecertError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Runs `shufflecert ARGV…` and returns `(stdout, failure)`: what the command prints, and the
/// line it would print on stderr with exit code 1 (an audit with unsound claims, a `check`
/// gate), if any.  `progress`, when given, is called as `progress("note", text)` and
/// `progress("stages", [(name, unit, done, total), …])` from the calling thread.
#[pyfunction]
#[pyo3(signature = (argv, progress=None))]
fn run(
    py: Python<'_>,
    argv: Vec<String>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<(String, Option<String>)> {
    let cli = Cli::try_parse_from(std::iter::once("shufflecert".to_string()).chain(argv)).map_err(
        |e| {
            let text = cli::usage_error(&e);
            let first = text.lines().next().unwrap_or_default();
            PyValueError::new_err(
                first
                    .strip_prefix("shufflecert: error: ")
                    .unwrap_or(first)
                    .to_string(),
            )
        },
    )?;
    install_panic_hook();
    let watch = progress.as_ref().map(|_| Arc::new(Watch::default()));
    let listener = watch.clone();
    let (sender, mut receiver) = channel();
    let guard = RunGuard::enter();
    let worker = std::thread::Builder::new()
        .name("shufflecert".to_string())
        .spawn(move || {
            let _guard = guard;
            let _listening = listener.map(|w| progress::listen(w));
            let result = catch_unwind(AssertUnwindSafe(|| cli::run(&cli)));
            // The caller may have stopped waiting (a second interrupt).
            let _ = sender.send(result);
        })
        .map_err(|e| PyOSError::new_err(format!("cannot start a worker thread: {e}")))?;
    let mut interrupted: Option<PyErr> = None;
    let result = loop {
        // The receiver is not `Sync`: it moves into the detached closure and back.
        let (back, received) = py.detach(move || {
            let received = receiver.recv_timeout(POLL);
            (receiver, received)
        });
        receiver = back;
        match received {
            Ok(result) => break result,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(ShufflecertError::new_err(
                    "internal error: the worker thread ended without a result",
                ));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let (Some(watch), Some(callback)) = (&watch, &progress) {
            watch.forward(callback)?;
        }
        if let Err(e) = py.check_signals() {
            if interrupted.is_some() {
                // A second interrupt: stop waiting; the computation stops at its next step.
                return Err(e);
            }
            progress::request_cancel();
            interrupted = Some(e);
        }
    };
    let _ = worker.join();
    if let Some(e) = interrupted {
        return Err(e);
    }
    if let (Some(watch), Some(callback)) = (&watch, &progress) {
        watch.forward(callback)?;
    }
    match result {
        Ok(Ok(outcome)) => Ok((outcome.stdout, outcome.failure)),
        Ok(Err(e)) => Err(to_py_err(e)),
        Err(payload) if payload.is::<Cancelled>() => Err(ShufflecertError::new_err(
            "cancelled by another thread's interrupt: no result was produced",
        )),
        Err(payload) => Err(ShufflecertError::new_err(format!(
            "internal error (a bug, no result reported): {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// The randomizer `spec` names (a family string or a file), validated by the engine as `-m`
/// reads it, as JSON: `name`, `inputs`, `outputs`, `rows` (exact strings), and `eps0` for a
/// family given by ε0.  Raises the error `-m SPEC` would.
#[pyfunction]
fn describe(spec: &str) -> PyResult<String> {
    let randomizer =
        shufflecert::mechanism::randomizer::load_randomizer(spec).map_err(to_py_err)?;
    Ok(randomizer.to_json().to_string())
}

/// The standard mechanisms (`shufflecert golden`'s set), in order: `(name, spec, text, about)`,
/// `text` being the mechanism file's text for a mechanism given by a file (`spec` names the file
/// as the golden corpus stores it), `None` for a family string.
#[pyfunction]
fn standard_mechanisms() -> Vec<(
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
)> {
    shufflecert::mechanism::standard::STANDARD
        .iter()
        .map(|m| (m.name, m.spec, m.text, m.about))
        .collect()
}

/// The version of the engine (the shufflecert crate).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(standard_mechanisms, m)?)?;
    m.add("ShufflecertError", m.py().get_type::<ShufflecertError>())?;
    Ok(())
}
