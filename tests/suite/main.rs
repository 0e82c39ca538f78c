//! The integration tests, as one test binary (one link instead of one per file; the tests of
//! every module share one pool of threads).  Each module is one area of the contract; `common`
//! holds the shared helpers and the independent reference evaluator.
//!
//! Run one area with `cargo test --test suite MODULE::`, e.g. `cargo test --test suite cli::`.

mod common;

mod asymptotic;
mod audit;
mod background;
mod bounds;
mod certificates;
mod certified_answers;
mod cli;
mod experiments;
mod golden;
mod hardening;
mod identities;
mod inputs;
mod limits;
mod multimessage;
mod page;
mod profile;
mod profile_inputs;
mod published;
mod readme;
mod soundness;
mod window;
