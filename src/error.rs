//! Typed errors.  Each names the offending input (file and field, or option) so that it reaches
//! the user as one clear line.

/// Everything that can go wrong before a certified value is produced.  No variant is ever
/// turned into a number: an error means no result, never a wrong one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A mechanism file or family string is malformed or describes an invalid channel.
    #[error("{source_name}: {field}: {message}")]
    Mechanism {
        /// The file path or the family string.
        source_name: String,
        /// The field, e.g. `w0[2]` or `eps0`.
        field: String,
        message: String,
    },
    /// A parameter (n, k, ε, δ, …) is malformed or out of range.
    #[error("{field}: {message}")]
    Argument { field: String, message: String },
    /// The problem would not fit in the memory budget.
    #[error("problem too large: {0}")]
    TooLarge(String),
    /// The chosen backend cannot compute this quantity (e.g. irrational inputs in exact mode).
    #[error("{0}")]
    Unsupported(String),
    /// An internal consistency check failed: a bug, reported instead of any number.
    #[error("internal error: {0}")]
    Internal(String),
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

impl Error {
    pub fn argument(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Argument {
            field: field.into(),
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
