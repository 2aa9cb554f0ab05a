//! Where a tracer's messages go: a process, a file in dbg's trace format,
//! or an in-memory ring of the latest messages.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use rustler::{LocalPid, OwnedBinary};

/// Messages a file sink queues for its writer unless told otherwise.
pub const DEFAULT_FILE_QUEUE: usize = 65_536;

/// A sink.
pub enum Sink {
    /// Messages sent to a process; `congested` is set by the watchdog in
    /// `msc_tracer.erl` while the process's queue is over `max_queue`.
    Process { pid: LocalPid, congested: AtomicBool },
    /// Entries of `dbg:trace_port(file, _)`'s format, written by a thread.
    File(FileSink),
    /// The latest messages, encoded.
    Ring(Mutex<Ring>),
}

/// What the writer thread writes.
pub enum Entry {
    /// A message: the VM's `term_to_binary` of it, moved here uncopied.
    Message(OwnedBinary),
    /// A drop entry: this many messages were lost.
    Drop(u64),
}

/// A file written by its own thread from a bounded queue.
///
/// The queue is one vector behind a mutex: traced processes push, the
/// writer swaps the whole vector out at once. A push is a short lock on a
/// line the pushing core usually holds already; the writer takes the line
/// once a batch, not once a message (a channel per message cost more than
/// the write).
pub struct FileSink {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<std::io::Result<u64>>>>,
    /// Bytes written so far.
    pub written: Arc<AtomicU64>,
}

/// The queue between the traced processes and the writer.
struct Shared {
    queue: Mutex<Queue>,
    /// Rung when a batch is ready or the file closes.
    ready: Condvar,
    /// Entries the queue holds at most.
    limit: usize,
}

#[derive(Default)]
struct Queue {
    entries: Vec<Entry>,
    closed: bool,
}

/// Entries that make the writer start before its next tick.
const BATCH: usize = 1024;

/// How long the writer waits for a batch before writing what there is.
const TICK: Duration = Duration::from_millis(10);

impl FileSink {
    /// Creates `path` and starts its writer, with room for `queue` entries.
    pub fn create(path: &str, queue: usize) -> std::io::Result<FileSink> {
        let file = File::create(path)?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            limit: queue.max(1),
        });
        let written = Arc::new(AtomicU64::new(0));
        let (for_writer, counter) = (shared.clone(), written.clone());
        let writer = std::thread::Builder::new()
            .name("msc_tracer file".into())
            .spawn(move || write_entries(file, &for_writer, &counter))?;
        Ok(FileSink { shared, writer: Mutex::new(Some(writer)), written })
    }

    /// Queues one entry; `false` if the queue is full or the file closed.
    pub fn offer(&self, entry: Entry) -> bool {
        let mut queue = self.shared.queue.lock();
        if queue.closed || queue.entries.len() >= self.shared.limit {
            return false;
        }
        queue.entries.push(entry);
        if queue.entries.len() == BATCH {
            self.shared.ready.notify_one();
        }
        true
    }

    /// Closes the queue, after `last` (over the limit if need be: the final
    /// drop count), and waits for the writer to write what it holds.
    pub fn close(&self, last: Option<Entry>) -> std::io::Result<()> {
        {
            let mut queue = self.shared.queue.lock();
            if !queue.closed {
                queue.entries.extend(last);
            }
            queue.closed = true;
            self.shared.ready.notify_one();
        }
        match self.writer.lock().take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("writer panicked")))
                .map(|_| ()),
            None => Ok(()),
        }
    }
}

/// The writer thread: batches in order, flushed whenever the queue runs
/// dry. A message entry is 0, the length (4 bytes, big-endian), the
/// message; a drop entry is 1, then how many were lost (4 bytes): dbg's
/// format.
fn write_entries(file: File, shared: &Shared, written: &AtomicU64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 18, file);
    let mut batch = Vec::new();
    loop {
        let closed = {
            let mut queue = shared.queue.lock();
            if queue.entries.is_empty() && !queue.closed {
                shared.ready.wait_for(&mut queue, TICK);
            }
            std::mem::swap(&mut batch, &mut queue.entries);
            queue.closed
        };
        // A small batch means the queue ran dry: write it out now.
        let idle = batch.len() < BATCH;
        for entry in batch.drain(..) {
            match entry {
                Entry::Message(etf) => {
                    let bytes = etf.as_slice();
                    out.write_all(&[0])?;
                    out.write_all(&(bytes.len() as u32).to_be_bytes())?;
                    out.write_all(bytes)?;
                    written.fetch_add(5 + bytes.len() as u64, Ordering::Relaxed);
                }
                Entry::Drop(count) => {
                    out.write_all(&[1])?;
                    out.write_all(&(count.min(u64::from(u32::MAX)) as u32).to_be_bytes())?;
                    written.fetch_add(5, Ordering::Relaxed);
                }
            }
        }
        if idle {
            out.flush()?;
        }
        if closed && shared.queue.lock().entries.is_empty() {
            break;
        }
    }
    out.flush()?;
    Ok(written.load(Ordering::Relaxed))
}

/// The latest `capacity` messages, as the VM's `term_to_binary` of each.
pub struct Ring {
    pub capacity: usize,
    pub messages: VecDeque<OwnedBinary>,
    /// Messages pushed out by newer ones.
    pub overwritten: u64,
}

impl Ring {
    pub fn new(capacity: usize) -> Ring {
        Ring { capacity: capacity.max(1), messages: VecDeque::new(), overwritten: 0 }
    }

    pub fn push(&mut self, etf: OwnedBinary) {
        if self.messages.len() == self.capacity {
            self.messages.pop_front();
            self.overwritten += 1;
        }
        self.messages.push_back(etf);
    }
}
