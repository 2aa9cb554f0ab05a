//! What `msc run` writes for each input: [`Printer`], as text or encoded.

use std::io::Write;

use matchspec::encoded::built::Built;
use matchspec::spec::Kind;
use matchspec::{EvalError, Outcome};
use msc::matchspec::term::Atom;
use msc::stream::{Entry, Sink, StreamError};
use msc::{Term, TermRef, etf};

use crate::CliError;

/// How results are written (`--output`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputArg {
    /// `Result.` a line, as Erlang reads it back with `file:consult/1`.
    #[default]
    Text,
    /// External term format terms back to back (`term_to_binary/1`).
    Etf,
    /// The input's own framing: encoded as the input's entries were
    /// (text for text input).
    Input,
}

/// How one result is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Text,
    /// Encoded, after a big-endian length of this many bytes (0: none).
    Etf {
        prefix: usize,
    },
    /// Entries of a dbg trace file: a 0 byte, a 4-byte length, the term.
    DbgTrace,
}

/// Writes each input's result (a match's, and with `all` a no-match's as
/// `nomatch`), reports inputs that cannot run on standard error, and moves
/// the progress bar.
pub(crate) struct Printer<'o> {
    pub(crate) out: &'o mut dyn Write,
    pub(crate) encoding: Encoding,
    pub(crate) kind: Kind,
    pub(crate) all: bool,
    pub(crate) progress: Option<indicatif::ProgressBar>,
    /// What `msc run` names the input in messages.
    pub(crate) path: String,
    /// A failure to write, kept for the caller (a sink's error is an
    /// `io::Error`, which would lose that it was standard output's).
    pub(crate) failed: Option<CliError>,
    /// The text of the result being written.
    pub(crate) line: String,
    /// The encoding of a result written from the input's bytes.
    pub(crate) encoded: Vec<u8>,
    /// Messages kept for the caller to report in input order instead of
    /// reported at once: for a thread that decides a part of the input
    /// while others decide the parts before it.
    pub(crate) deferred: Option<Vec<Note>>,
}

/// A message for standard error about one input, kept for later.
#[derive(Clone, Debug)]
pub(crate) struct Note {
    /// The input's number, within the part that was decided.
    pub(crate) number: u64,
    pub(crate) what: NoteKind,
}

/// What a [`Note`] says.
#[derive(Clone, Debug)]
pub(crate) enum NoteKind {
    /// The spec cannot run on the input.
    NotRunnable(String),
    /// A text term that does not parse was skipped.
    SkippedTerm(String),
    /// An encoded entry was skipped (its message names it already).
    SkippedEntry(String),
}

impl Note {
    /// The message, for a part whose inputs come after `base` others.
    pub(crate) fn render(&self, base: u64) -> String {
        let number = base + self.number;
        match &self.what {
            NoteKind::NotRunnable(error) => format!("input {number}: {error}"),
            NoteKind::SkippedTerm(error) => format!("skipped term {number}:\n{error}"),
            NoteKind::SkippedEntry(message) => message.clone(),
        }
    }
}

/// What a [`Printer`] prints with, without its writer: for threads that
/// each print a part of the input into a buffer of their own.
#[derive(Clone, Debug)]
pub(crate) struct Detached {
    encoding: Encoding,
    kind: Kind,
    all: bool,
    path: String,
}

impl Detached {
    /// A printer writing to `out`.
    pub(crate) fn onto<'o>(&self, out: &'o mut dyn Write) -> Printer<'o> {
        Printer {
            out,
            encoding: self.encoding,
            kind: self.kind,
            all: self.all,
            progress: None,
            path: self.path.clone(),
            failed: None,
            line: String::new(),
            encoded: Vec::new(),
            deferred: None,
        }
    }
}

impl Printer<'_> {
    /// What this printer prints with, without its writer.
    pub(crate) fn detached(&self) -> Detached {
        Detached {
            encoding: self.encoding,
            kind: self.kind,
            all: self.all,
            path: self.path.clone(),
        }
    }

    /// Writes what input `number` gave.
    pub(crate) fn print(
        &mut self,
        number: u64,
        outcome: Result<&Outcome<'_>, &EvalError>,
    ) -> Result<(), CliError> {
        match outcome {
            Ok(Outcome::Match(m)) => {
                let flags = m.flags;
                if !(self.kind.is_trace() && (flags.return_trace || flags.exception_trace)) {
                    return self.write(m.result);
                }
                let mut names = Vec::new();
                if self.kind.is_trace() && flags.return_trace {
                    names.push("return_trace");
                }
                if self.kind.is_trace() && flags.exception_trace {
                    names.push("exception_trace");
                }
                if names.is_empty() {
                    self.write(m.result)
                } else {
                    let flags = Term::list(names.iter().map(|n| Term::atom(Atom::new(n))));
                    let pair = Term::tuple([m.result.to_owned(), flags]);
                    self.write(pair.as_ref())
                }
            }
            Ok(Outcome::NoMatch) if self.all => {
                self.write(Term::atom(Atom::new("nomatch")).as_ref())
            }
            Ok(Outcome::NoMatch) => Ok(()),
            Err(err) => {
                if let Some(deferred) = &mut self.deferred {
                    deferred.push(Note { number, what: NoteKind::NotRunnable(err.to_string()) });
                    return Ok(());
                }
                self.out.flush().map_err(CliError::stdout)?;
                report!("msc: {}: input {number}: {err}", self.path);
                Ok(())
            }
        }
    }

    #[inline]
    fn write(&mut self, term: TermRef<'_>) -> Result<(), CliError> {
        match self.encoding {
            Encoding::Text => {
                // An integer, the usual result of a selective spec, in one
                // write of a few bytes.
                if let Some(n) = term.word().as_small() {
                    let mut digits = itoa::Buffer::new();
                    let digits = digits.format(n).as_bytes();
                    let mut line = [0; 24];
                    line[..digits.len()].copy_from_slice(digits);
                    line[digits.len()..digits.len() + 2].copy_from_slice(b".\n");
                    let line = &line[..digits.len() + 2];
                    return self.out.write_all(line).map_err(CliError::stdout);
                }
                // One write a result: formatting straight into the writer
                // would make one call per piece of the term.
                self.line.clear();
                term.write_text(&mut self.line).map_err(|_| not_written())?;
                self.write_line()
            }
            Encoding::DbgTrace | Encoding::Etf { .. } => self.encoded(term),
        }
    }

    /// Writes a result left in the input's bytes: its parts copied, or
    /// printed from the bytes.
    fn write_built(&mut self, built: &Built<'_>) -> Result<(), CliError> {
        match self.encoding {
            Encoding::Text => {
                self.line.clear();
                built.write_text(&mut self.line).map_err(|_| not_written())?;
                self.write_line()
            }
            Encoding::DbgTrace | Encoding::Etf { .. } => {
                let mut bytes = std::mem::take(&mut self.encoded);
                bytes.clear();
                let written = built.write_etf(&mut bytes).map_err(CliError::from);
                let written = written.and_then(|()| self.framed(&bytes));
                self.encoded = bytes;
                written
            }
        }
    }

    /// Writes the line in [`line`](Printer::line), ending it.
    fn write_line(&mut self) -> Result<(), CliError> {
        self.line.push_str(".\n");
        self.out.write_all(self.line.as_bytes()).map_err(CliError::stdout)
    }

    /// Writes `term` encoded, framed as the output's entries are.
    fn encoded(&mut self, term: TermRef<'_>) -> Result<(), CliError> {
        self.framed(&etf::encode(term)?)
    }

    /// Writes the encoded term `bytes` framed as the output's entries are.
    fn framed(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        let prefix = match self.encoding {
            Encoding::Text => 0,
            Encoding::Etf { prefix } => prefix,
            Encoding::DbgTrace => {
                self.out.write_all(&[0]).map_err(CliError::stdout)?;
                4
            }
        };
        let len = bytes.len() as u64;
        if prefix > 0 && len >> (8 * prefix) != 0 {
            return Err(CliError::OutputTooLong { len, prefix });
        }
        self.out.write_all(&len.to_be_bytes()[8 - prefix..]).map_err(CliError::stdout)?;
        self.out.write_all(bytes).map_err(CliError::stdout)
    }

    /// Moves the progress bar to byte `position` every 4096 inputs.
    pub(crate) fn progress(&self, number: u64, position: u64) {
        if number.is_multiple_of(4096)
            && let Some(bar) = &self.progress
        {
            super::show_progress(bar, position, number);
        }
    }
}

impl Sink for Printer<'_> {
    fn decided(
        &mut self,
        entry: Entry<'_>,
        outcome: Result<&Outcome<'_>, &EvalError>,
    ) -> std::io::Result<()> {
        self.print(entry.number, outcome).map_err(|err| {
            let io = std::io::Error::other(err.to_string());
            self.failed = Some(err);
            io
        })
    }

    fn wants_no_matches(&self) -> bool {
        self.all
    }

    fn takes_bytes(&self) -> bool {
        true
    }

    fn matched_bytes(&mut self, _: Entry<'_>, result: &Built<'_>) -> std::io::Result<()> {
        self.write_built(result).map_err(|err| {
            let io = std::io::Error::other(err.to_string());
            self.failed = Some(err);
            io
        })
    }

    fn progress(&mut self, entries: u64, offset: u64) {
        if let Some(bar) = &self.progress {
            super::show_progress(bar, offset, entries);
        }
    }

    fn skipped(&mut self, error: &StreamError) -> std::io::Result<()> {
        if let Some(deferred) = &mut self.deferred {
            let what = NoteKind::SkippedEntry(format!("skipped {error}"));
            deferred.push(Note { number: error.entry, what });
            return Ok(());
        }
        self.out.flush()?;
        report!("msc: {}: skipped {error}", self.path);
        Ok(())
    }
}

/// The error of a result the printer could not write.
fn not_written() -> CliError {
    CliError::stdout(std::io::Error::other("a term could not be written"))
}
