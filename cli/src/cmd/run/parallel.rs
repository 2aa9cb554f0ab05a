//! `msc run --jobs N`: an encoded input split at entry boundaries into
//! runs of whole entries, each decided on one of N threads, the results
//! written in input order (as ripgrep keeps a file's matches in order).
//!
//! One thread reads: it finds where entries end (cheap for framed input,
//! a walk of their structure for concatenated terms, which the workers
//! check as they read them) and copies runs of about [`BATCH`]
//! bytes, as many entries at a time as its reader has buffered. Workers
//! filter a run each with a reader of their own over it and print into a
//! buffer; the calling thread writes the buffers in order. Channels are
//! bounded, so at most a few runs per worker are in memory whatever the
//! input's size.

use std::collections::BTreeMap;
use std::io::BufRead;

use crossbeam_channel::{bounded, unbounded};
use msc::Spec;
use msc::stream::{EtfReader, Filter, Framing, SliceReader, StreamError, Summary};

use super::output::{Note, Printer};
use crate::CliError;

/// About how many bytes of entries one run holds.
const BATCH: usize = 1 << 20;

/// A run of whole entries, framed as the input.
struct Batch {
    /// Its place in the input, from 0.
    index: u64,
    /// The number of its first entry in the input (from 1), and the
    /// input's byte offset of its first byte.
    first_entry: u64,
    offset: u64,
    bytes: Vec<u8>,
}

/// What a worker made of a run, or how reading ended.
enum Done {
    /// `end` is the input's offset after the run.
    /// `notes` are its messages for standard error, numbered in the whole input.
    Run { index: u64, end: u64, output: Vec<u8>, summary: Summary, notes: Vec<Note> },
    /// The reader's error (after the runs numbered below `index`).
    Stopped { index: u64, error: StreamError, skipped: u64 },
    /// The end of the input, after `index` runs.
    End { index: u64, skipped: u64 },
    /// A worker could not print.
    Failed(CliError),
}

/// Runs `spec` over `input` on `jobs` threads, printing as `printer` does
/// (its writer is where the ordered results go).
pub(crate) fn run(
    spec: &Spec,
    input: Box<dyn BufRead + Send>,
    framing: Framing,
    jobs: usize,
    skip_bad: bool,
    printer: &mut Printer<'_>,
) -> Result<Summary, CliError> {
    let (batches_in, batches_out) = bounded::<Batch>(jobs * 2);
    let (done_in, done_out) = unbounded::<Done>();
    // Buffers go back to be filled again: freeing a megabyte in another
    // thread than the one that took it makes the allocator hand memory
    // back to the system and fault it in again, a third of the time.
    let (spent_in, spent_out) = unbounded::<Vec<u8>>();
    let (written_in, written_out) = unbounded::<Vec<u8>>();
    std::thread::scope(|scope| {
        let reader_done = done_in.clone();
        let spent = spent_out.clone();
        let path = printer.path.clone();
        scope.spawn(move || {
            read_batches(input, &path, framing, skip_bad, &batches_in, &reader_done, &spent)
        });
        for _ in 0..jobs {
            let (batches, done) = (batches_out.clone(), done_in.clone());
            let (spent, written) = (spent_in.clone(), written_out.clone());
            let template = printer.detached();
            scope.spawn(move || {
                for batch in batches {
                    let mut output = written.try_recv().unwrap_or_default();
                    let mut printer = template.onto(&mut output);
                    printer.deferred = Some(Vec::new());
                    let mut reader = SliceReader::new(&batch.bytes).framing(framing);
                    let result = Filter::new(spec)
                        .skip_bad(skip_bad)
                        .starting_at(batch.first_entry, batch.offset)
                        .run(&mut reader, &mut printer);
                    let failed = printer.failed.take();
                    let notes = printer.deferred.take().unwrap_or_default();
                    drop(printer);
                    let end = batch.offset + batch.bytes.len() as u64;
                    let mut bytes = batch.bytes;
                    bytes.clear();
                    let _ = spent.send(bytes);
                    let message = match (failed, result) {
                        (Some(err), _) => Done::Failed(err),
                        (None, Err(err)) => Done::Failed(CliError::stdout(err)),
                        (None, Ok(summary)) => {
                            Done::Run { index: batch.index, end, output, summary, notes }
                        }
                    };
                    if done.send(message).is_err() {
                        return;
                    }
                }
            });
        }
        drop((batches_out, done_in, spent_in, spent_out, written_out));
        write_in_order(&done_out, printer, &written_in)
    })
}

/// Reads runs of whole entries and hands them out, then says how reading
/// ended.
fn read_batches(
    input: Box<dyn BufRead + Send>,
    path: &str,
    framing: Framing,
    skip_bad: bool,
    batches: &crossbeam_channel::Sender<Batch>,
    done: &crossbeam_channel::Sender<Done>,
    spent: &crossbeam_channel::Receiver<Vec<u8>>,
) {
    let buffer = || spent.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH + BATCH / 4));
    // The workers check every term they read: here, finding where each
    // ends is enough.
    let mut reader = EtfReader::new(input).framing(framing).split_only();
    let (mut index, mut skipped) = (0, 0);
    let mut batch = Batch { index, first_entry: 1, offset: 0, bytes: buffer() };
    loop {
        let (offset, entry) = (reader.offset(), reader.entries() + 1);
        match reader.next_framed_run(BATCH.saturating_sub(batch.bytes.len())) {
            Some(Ok((bytes, _))) => {
                if batch.bytes.is_empty() {
                    (batch.first_entry, batch.offset) = (entry, offset);
                }
                batch.bytes.extend_from_slice(bytes);
                if batch.bytes.len() < BATCH {
                    continue;
                }
            }
            Some(Err(error)) => {
                if skip_bad && reader.resume() {
                    skipped += 1;
                    report!("msc: {path}: skipped {error}");
                    continue;
                }
                let runs = index + u64::from(!batch.bytes.is_empty());
                if !batch.bytes.is_empty() && batches.send(batch).is_err() {
                    return;
                }
                let _ = done.send(Done::Stopped { index: runs, error, skipped });
                return;
            }
            None => {
                let last = !batch.bytes.is_empty();
                if last && batches.send(batch).is_err() {
                    return;
                }
                let _ = done.send(Done::End { index: index + u64::from(last), skipped });
                return;
            }
        }
        index += 1;
        let next = Batch { index, first_entry: 0, offset: 0, bytes: buffer() };
        if batches.send(std::mem::replace(&mut batch, next)).is_err() {
            return;
        }
    }
}

/// Writes each run's output once every run before it is written; stops at
/// the first run that ends in a bad entry, or at the reader's end.
fn write_in_order(
    done: &crossbeam_channel::Receiver<Done>,
    printer: &mut Printer<'_>,
    written: &crossbeam_channel::Sender<Vec<u8>>,
) -> Result<Summary, CliError> {
    let mut total = Summary::default();
    let mut waiting: BTreeMap<u64, (u64, Vec<u8>, Summary, Vec<Note>)> = BTreeMap::new();
    let mut next = 0;
    // Set once reading has ended: how many runs there are, and why it ended.
    let mut end: Option<(u64, Option<StreamError>, u64)> = None;
    loop {
        while let Some((end, mut output, summary, notes)) = waiting.remove(&next) {
            printer.out.write_all(&output).map_err(CliError::stdout)?;
            if !notes.is_empty() {
                printer.out.flush().map_err(CliError::stdout)?;
                for note in &notes {
                    report!("msc: {}: {}", printer.path, note.render(0));
                }
            }
            output.clear();
            let _ = written.send(output);
            if let Some(bar) = &printer.progress {
                super::show_progress(bar, end, total.entries + summary.entries);
            }
            total.add(summary);
            if total.stopped.is_some() {
                return Ok(total);
            }
            next += 1;
        }
        if let Some((runs, _, _)) = &end
            && next >= *runs
        {
            let (_, stopped, skipped) = end.take().expect("set");
            total.stopped = stopped;
            total.skipped += skipped;
            return Ok(total);
        }
        match done.recv() {
            Ok(Done::Run { index, end, output, summary, notes }) => {
                waiting.insert(index, (end, output, summary, notes));
            }
            Ok(Done::Stopped { index, error, skipped }) => {
                end = Some((index, Some(error), skipped))
            }
            Ok(Done::End { index, skipped }) => end = Some((index, None, skipped)),
            Ok(Done::Failed(err)) => return Err(err),
            // Every sender is gone and reading did not say how it ended: a
            // thread panicked (scope re-raises it).
            Err(_) => return Ok(total),
        }
    }
}
