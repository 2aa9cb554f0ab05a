//! [`CliError`]: everything a command can report to the user.

use matchspec::CompileError;
use matchspec::etf::{DecodeError, EncodeError};
use matchspec::syntax::ParseError;

/// An error for the user: printed as it is, exit code 1.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file could not be read or written.
    #[error("msc: {path}: {source}")]
    Io {
        /// The file (or `-` for standard input/output).
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// Term text did not parse.
    #[error("{path}:\n{source}")]
    Parse {
        /// Where the text came from.
        path: String,
        /// The error, with line, column and caret.
        source: ParseError,
    },
    /// Several terms in a stream did not parse (all were reported).
    #[error("msc: {count} term(s) in {path} did not parse")]
    ParseCount {
        /// Where the text came from.
        path: String,
        /// How many failed.
        count: usize,
    },
    /// A spec did not compile.
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// External term format bytes did not decode.
    #[error("msc: {path}: {source}")]
    Decode {
        /// Where the bytes came from.
        path: String,
        /// The error, with its byte offset.
        source: DecodeError,
    },
    /// A term cannot be encoded.
    #[error("msc: {0}")]
    Encode(#[from] EncodeError),
    /// Input that is well-formed but not what the command needs.
    #[error("msc: {0}")]
    Invalid(String),
}

impl CliError {
    /// The process exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        1
    }
}
