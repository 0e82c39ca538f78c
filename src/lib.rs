pub mod arith;
pub mod cli;
pub mod enclosure;
pub mod error;
pub mod exact;
pub mod mechanism;
pub mod query;
