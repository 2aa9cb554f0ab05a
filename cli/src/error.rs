//! [`CliError`]: everything a command can report to the user.

use matchspec::etf::{DecodeError, EncodeError};
use matchspec::syntax::{Location, ParseError};
use matchspec::{CompileError, EvalError};

/// An error for the user: printed as it is, exit code 1. The exception is
/// [`CliError::BrokenPipe`], which `main` treats as a normal stop.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file could not be read.
    #[error("msc: {path}: {source}")]
    Io {
        /// The file (or `-` for standard input).
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// Standard output could not be written (for a reason other than the
    /// reader having gone away).
    #[error("msc: standard output: {0}")]
    Stdout(std::io::Error),
    /// The reader of standard output closed it (`msc parse big | head`).
    /// Not an error: the command stops and `msc` exits with status 0.
    #[error("msc: standard output closed")]
    BrokenPipe,
    /// `--spec -` and `--input -` both asked for standard input.
    #[error("msc: --spec and --input cannot both read standard input")]
    StdinTwice,
    /// An entry of an encoded input could not be read; every entry before
    /// it was decided and printed.
    #[error("msc: {path}: {source}")]
    Stream {
        /// The input.
        path: String,
        /// Which entry, where, and why.
        source: msc::stream::StreamError,
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
    /// A `{Kind, Spec}` term whose `Kind` is no event kind, e.g.
    /// `{tabel, [{'_', [], [true]}]}`.
    #[error(
        "msc: {path}: unknown kind `{name}` in {{Kind, Spec}}; \
         expected table, trace, call, send or receive"
    )]
    UnknownKind {
        /// Where the spec came from.
        path: String,
        /// The atom given as the kind.
        name: String,
    },
    /// The JIT could not compile a spec for `msc dump --clif/--asm`.
    #[error("msc: the JIT cannot compile this spec: {0}")]
    Jit(#[source] matchspec_jit::JitError),
    /// A term of a `--batch` file is not a `{Kind, Spec, Input}` or
    /// `{Kind, Spec, Input, Expected}` case.
    #[error("msc: {path}:{location}: not a {{Kind, Spec, Input}} case: {term}")]
    NotACase {
        /// The batch file.
        path: String,
        /// Where the term starts.
        location: Location,
        /// The term, as Erlang text.
        term: String,
    },
    /// `msc test --batch --check` found answers that differ from the
    /// cases' expected ones (each was reported).
    #[error(
        "msc: {failed} of {total} cases disagree with their expected answers \
         (answered as {release}; --otp names the release a corpus was made with)"
    )]
    Disagreements {
        /// How many cases disagreed.
        failed: usize,
        /// How many cases were run.
        total: usize,
        /// The release whose answers were given.
        release: matchspec::Release,
    },
    /// `msc trace --expect` found lines that differ from the golden file
    /// (each was reported).
    #[error("msc: {differences} line(s) differ from {golden}")]
    GoldenMismatch {
        /// The golden file.
        golden: String,
        /// How many lines differ.
        differences: usize,
    },
    /// A spec did not compile.
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// A fun did not translate into a match spec.
    #[error("{0}")]
    Fun2ms(matchspec::fun2ms::Fun2msError),
    /// A fun translated into a spec that ERTS rejects for the kind.
    #[error("msc: the fun translates to {spec}\nwhich is not a valid {kind} spec:\n{errors}")]
    Fun2msCheck {
        /// The translated spec.
        spec: String,
        /// The event kind.
        kind: &'static str,
        /// ERTS's errors.
        errors: matchspec::spec::SpecErrors,
    },
    /// `msc dump --fun`: the spec has no fun.
    #[error("msc: {0}")]
    NoFun(matchspec::fun2ms::NoFun),
    /// A command-line value is malformed (`--bind X`).
    #[error("msc: {0}")]
    Usage(String),
    /// A term of a `msc fun2ms --batch` file is not a fun case.
    #[error(
        "msc: {path}:{location}: not a {{Dialect, FunText}} or {{Dialect, FunText, Bindings}} \
         case (either with a trailing Expected): {term}"
    )]
    NotAFunCase {
        /// The batch file.
        path: String,
        /// Where the term starts.
        location: Location,
        /// The term, as Erlang text.
        term: String,
    },
    /// An engine could not run a spec on an input.
    #[error("msc: {0}")]
    Eval(#[from] EvalError),
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
    /// `--input` files of one dbg wrap set that dbg would not read as one.
    #[error("msc: {0}")]
    WrapSet(#[from] msc::stream::WrapSetError),
    /// An input could not be read as the format it was read as, and its
    /// first bytes look like another (or like none).
    #[error("{error}\nmsc: {path} looks like {looks}: {advice}")]
    Looks {
        /// The error reading it.
        error: Box<CliError>,
        /// The input.
        path: String,
        /// What its first bytes look like.
        looks: msc::stream::Looks,
        /// What to do about it.
        advice: String,
    },
    /// A result is too long for the output's length prefix.
    #[error("msc: a result of {len} bytes does not fit a {prefix}-byte length prefix")]
    OutputTooLong {
        /// The encoded result's length.
        len: u64,
        /// The prefix's size in bytes.
        prefix: usize,
    },
}

impl CliError {
    /// Wraps an error writing standard output: a closed pipe becomes
    /// [`CliError::BrokenPipe`].
    pub(crate) fn stdout(source: std::io::Error) -> CliError {
        if source.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Stdout(source)
        }
    }

    /// The process exit code.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::BrokenPipe => 0,
            _ => 1,
        }
    }
}
