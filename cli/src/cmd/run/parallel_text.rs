//! `msc run --jobs N` on text: runs of whole lines, each parsed and
//! decided on one of N threads as if a term started it, checked in order.
//!
//! A run is cut after a newline, which is where the next term starts in
//! any file of one term a line or more. Whether it really is can only be
//! known once the run before is parsed: if that run ends between terms
//! (nothing but white space and comments after its last `.`), the guess
//! was right and the run's results stand; otherwise (a term, a string or a
//! quoted atom goes on across the cut) the rest of the run before and this
//! run are parsed again, in order, on the writing thread. The results are
//! those of reading the text in one piece, always.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};

use crossbeam_channel::{bounded, unbounded};
use matchspec::syntax::{NextTerm, ParseError, TermCursor, TermScratch};
use matchspec::term::Heap;
use matchspec::{Run, Scratch, TestHost};
use msc::Spec;
use msc::stream::Summary;

use super::output::{Detached, Note, NoteKind, Printer};
use crate::CliError;

/// About how many bytes of text one run holds.
const BATCH: usize = 1 << 20;

/// A run of whole lines.
struct Chunk {
    index: u64,
    text: String,
    /// Its length, once its text has moved on.
    text_len: u64,
    /// Lines before it in the input, and its first byte's offset.
    lines_before: u32,
    offset: u64,
}

/// What parsing a text from some byte on gave.
struct Parsed {
    output: Vec<u8>,
    summary: Summary,
    /// Messages for standard error, numbered within the text: inputs that
    /// cannot run, terms skipped.
    messages: Vec<Note>,
    /// The first term that does not parse, when not skipping: its number
    /// within the text, and the error (located in the whole input).
    stopped: Option<(u64, ParseError)>,
    /// Where the text not yet parsed starts (a term cut short by the end
    /// of the text, or white space and comments).
    rest: usize,
}

/// How reading ended.
enum Done {
    Chunk { chunk: Chunk, parsed: Parsed },
    End { chunks: u64, error: Option<CliError> },
    Failed(CliError),
}

/// Runs `spec` over the text `input` on `jobs` threads, printing as
/// `printer` does.
pub(crate) fn run(
    spec: &Spec,
    input: Box<dyn BufRead + Send>,
    jobs: usize,
    skip_bad: bool,
    printer: &mut Printer<'_>,
) -> Result<Summary, CliError> {
    let (chunks_in, chunks_out) = bounded::<Chunk>(jobs * 2);
    let (done_in, done_out) = unbounded::<Done>();
    let template = printer.detached();
    std::thread::scope(|scope| {
        let reader_done = done_in.clone();
        let path = printer.path.clone();
        scope.spawn(move || read_chunks(input, &path, &chunks_in, &reader_done));
        for _ in 0..jobs {
            let (chunks, done) = (chunks_out.clone(), done_in.clone());
            let template = template.clone();
            scope.spawn(move || {
                for chunk in chunks {
                    let message = match parse(
                        spec,
                        &template,
                        &chunk.text,
                        0,
                        false,
                        chunk.lines_before,
                        skip_bad,
                    ) {
                        Ok(parsed) => Done::Chunk { chunk, parsed },
                        Err(err) => Done::Failed(err),
                    };
                    if done.send(message).is_err() {
                        return;
                    }
                }
            });
        }
        drop((chunks_out, done_in));
        write_in_order(spec, &template, &done_out, printer, skip_bad)
    })
}

/// Parses and decides the terms of `text` from byte `from` (`complete`:
/// the text is the rest of the input), printing into a buffer.
fn parse(
    spec: &Spec,
    template: &Detached,
    text: &str,
    mut from: usize,
    complete: bool,
    lines_before: u32,
    skip_bad: bool,
) -> Result<Parsed, CliError> {
    let mut output = Vec::with_capacity(text.len() / 2);
    let mut printer = template.onto(&mut output);
    printer.deferred = Some(Vec::new());
    let (mut heap, mut scratch, mut host, mut terms) =
        (Heap::new(), Scratch::new(), TestHost::default(), TermScratch::default());
    let mut summary = Summary::default();
    let mut messages = Vec::new();
    let mut stopped = None;
    let mut cursor = TermCursor::new(crate::input::syntax());
    loop {
        heap.clear();
        let number = summary.entries + summary.skipped + 1;
        match cursor.next(text, from, complete, &mut heap, &mut terms) {
            NextTerm::Term { root, end } => {
                from = end;
                let outcome = spec.run(heap.view(root), &mut scratch, &mut host);
                summary.count(outcome.as_ref());
                printer.print(number, outcome.as_ref())?;
            }
            NextTerm::Error { error, end } => {
                let error = error.with_line_offset(lines_before);
                if skip_bad {
                    from = end;
                    summary.skipped += 1;
                    messages.push(Note { number, what: NoteKind::SkippedTerm(error.to_string()) });
                } else {
                    stopped = Some((number, error));
                    break;
                }
            }
            NextTerm::More | NextTerm::Done => break,
        }
    }
    messages.extend(printer.deferred.take().unwrap_or_default());
    drop(printer);
    messages.sort_by_key(|note| note.number);
    Ok(Parsed { output, summary, messages, stopped, rest: from })
}

/// Reads runs of whole lines and hands them out, then says how reading
/// ended.
fn read_chunks(
    mut input: Box<dyn BufRead + Send>,
    path: &str,
    chunks: &crossbeam_channel::Sender<Chunk>,
    done: &crossbeam_channel::Sender<Done>,
) {
    let (mut index, mut lines_before, mut offset) = (0, 0u32, 0u64);
    let mut carried: Vec<u8> = Vec::new();
    loop {
        let mut bytes = std::mem::take(&mut carried);
        let want = BATCH.saturating_sub(bytes.len()).max(1);
        let read = (&mut input).take(want as u64).read_to_end(&mut bytes);
        let at_end = match read {
            Ok(0) => true,
            Ok(_) => false,
            Err(source) => {
                let _ = done.send(Done::End {
                    chunks: index,
                    error: Some(CliError::Io { path: path.to_owned(), source }),
                });
                return;
            }
        };
        // Cut after the last newline; the rest starts the next run.
        if !at_end {
            match bytes.iter().rposition(|&b| b == b'\n') {
                Some(newline) => carried = bytes.split_off(newline + 1),
                None => {
                    carried = bytes;
                    continue;
                }
            }
        }
        if bytes.is_empty() {
            let _ = done.send(Done::End { chunks: index, error: None });
            return;
        }
        let len = bytes.len() as u64;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                let at = offset + err.utf8_error().valid_up_to() as u64;
                let source = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("not UTF-8 text from byte {at}"),
                );
                let _ = done.send(Done::End {
                    chunks: index,
                    error: Some(CliError::Io { path: path.to_owned(), source }),
                });
                return;
            }
        };
        let newlines = text.bytes().filter(|&b| b == b'\n').count() as u32;
        let chunk = Chunk { index, text, text_len: len, lines_before, offset };
        if chunks.send(chunk).is_err() {
            return;
        }
        (index, lines_before, offset) =
            (index + 1, lines_before.saturating_add(newlines), offset + len);
        if at_end {
            let _ = done.send(Done::End { chunks: index, error: None });
            return;
        }
    }
}

/// Writes the runs' results in order, parsing again where a run's guess
/// of where its first term starts was wrong.
fn write_in_order(
    spec: &Spec,
    template: &Detached,
    done: &crossbeam_channel::Receiver<Done>,
    printer: &mut Printer<'_>,
    skip_bad: bool,
) -> Result<Summary, CliError> {
    let mut total = Summary::default();
    let mut waiting: BTreeMap<u64, (Chunk, Parsed)> = BTreeMap::new();
    let mut next = 0;
    let mut end: Option<(u64, Option<CliError>)> = None;
    // The text after the last run's last term, from the start of its line,
    // where that line starts in the input, and where its unparsed part
    // starts in it.
    let (mut carry, mut carry_lines, mut carry_from) = (String::new(), 0u32, 0usize);
    loop {
        while let Some((chunk, parsed)) = waiting.remove(&next) {
            let (text, lines, parsed) = if is_blank(&carry, carry_from) {
                (chunk.text, chunk.lines_before, parsed)
            } else {
                // The run began inside a term: parse on from the carry.
                let mut text = std::mem::take(&mut carry);
                text.push_str(&chunk.text);
                let parsed =
                    parse(spec, template, &text, carry_from, false, carry_lines, skip_bad)?;
                (text, carry_lines, parsed)
            };
            if let Some(error) = emit(&parsed, &mut total, printer)? {
                return Err(error);
            }
            if let Some(bar) = &printer.progress {
                super::show_progress(bar, chunk.offset + chunk.text_len, total.entries);
            }
            let line_start = text[..parsed.rest].rfind('\n').map_or(0, |i| i + 1);
            carry_lines = lines
                .saturating_add(text[..line_start].bytes().filter(|&b| b == b'\n').count() as u32);
            carry_from = parsed.rest - line_start;
            carry = text[line_start..].to_owned();
            next += 1;
        }
        if let Some((chunks, _)) = &end
            && next >= *chunks
        {
            let (_, error) = end.take().expect("set");
            if let Some(error) = error {
                return Err(error);
            }
            // The last term may end the input without a newline after it.
            if !is_blank(&carry, carry_from) {
                let parsed =
                    parse(spec, template, &carry, carry_from, true, carry_lines, skip_bad)?;
                if let Some(error) = emit(&parsed, &mut total, printer)? {
                    return Err(error);
                }
            }
            return Ok(total);
        }
        match done.recv() {
            Ok(Done::Chunk { chunk, parsed }) => {
                waiting.insert(chunk.index, (chunk, parsed));
            }
            Ok(Done::End { chunks, error }) => end = Some((chunks, error)),
            Ok(Done::Failed(err)) => return Err(err),
            Err(_) => return Ok(total),
        }
    }
}

/// Writes what a run gave and reports its messages, numbered in the whole
/// input; the error to stop with, if a term did not parse.
fn emit(
    parsed: &Parsed,
    total: &mut Summary,
    printer: &mut Printer<'_>,
) -> Result<Option<CliError>, CliError> {
    let base = total.entries + total.skipped;
    printer.out.write_all(&parsed.output).map_err(CliError::stdout)?;
    if !parsed.messages.is_empty() {
        printer.out.flush().map_err(CliError::stdout)?;
        for note in &parsed.messages {
            report!("msc: {}: {}", printer.path, note.render(base));
        }
    }
    total.add(Summary { stopped: None, ..parsed.summary });
    Ok(parsed
        .stopped
        .as_ref()
        .map(|(_, error)| CliError::Parse { path: printer.path.clone(), source: error.clone() }))
}

/// Is `text` from `from` on only white space and comments?
fn is_blank(text: &str, from: usize) -> bool {
    let (mut heap, mut scratch) = (Heap::new(), TermScratch::default());
    let syntax = crate::input::syntax();
    matches!(syntax.next_term_into(text, from, true, &mut heap, &mut scratch), NextTerm::Done)
}
