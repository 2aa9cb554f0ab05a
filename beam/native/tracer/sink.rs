//! Where a tracer's messages go: a process, a file in dbg's trace format,
//! or an in-memory ring of the latest messages.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError, bounded};
use parking_lot::{Mutex, RwLock};
use rustler::LocalPid;

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

/// A file written by its own thread from a bounded queue.
pub struct FileSink {
    sender: RwLock<Option<Sender<Vec<u8>>>>,
    writer: Mutex<Option<JoinHandle<std::io::Result<u64>>>>,
    /// Bytes written so far.
    pub written: std::sync::Arc<AtomicU64>,
}

impl FileSink {
    /// Creates `path` and starts its writer, with room for `queue` entries.
    pub fn create(path: &str, queue: usize) -> std::io::Result<FileSink> {
        let file = File::create(path)?;
        let (sender, receiver) = bounded(queue.max(1));
        let written = std::sync::Arc::new(AtomicU64::new(0));
        let counter = written.clone();
        let writer = std::thread::Builder::new()
            .name("msc_tracer file".into())
            .spawn(move || write_entries(file, receiver, &counter))?;
        Ok(FileSink {
            sender: RwLock::new(Some(sender)),
            writer: Mutex::new(Some(writer)),
            written,
        })
    }

    /// Queues one entry; `false` if the queue is full or the file closed.
    pub fn offer(&self, entry: Vec<u8>) -> bool {
        match self.sender.read().as_ref() {
            Some(sender) => match sender.try_send(entry) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            },
            None => false,
        }
    }

    /// Closes the queue and waits for the writer to write what it holds.
    pub fn close(&self) -> std::io::Result<()> {
        self.sender.write().take();
        match self.writer.lock().take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("writer panicked")))
                .map(|_| ()),
            None => Ok(()),
        }
    }
}

/// The writer thread: entries in order, flushed whenever the queue runs dry.
fn write_entries(
    file: File,
    entries: Receiver<Vec<u8>>,
    written: &AtomicU64,
) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 18, file);
    loop {
        match entries.recv_timeout(Duration::from_millis(100)) {
            Ok(entry) => {
                out.write_all(&entry)?;
                written.fetch_add(entry.len() as u64, Ordering::Relaxed);
            }
            Err(RecvTimeoutError::Timeout) => out.flush()?,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    out.flush()?;
    Ok(written.load(Ordering::Relaxed))
}

/// A trace file entry: 0, the length (4 bytes, big-endian), the message.
pub fn message_entry(etf: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(etf.len() + 5);
    entry.push(0);
    entry.extend((etf.len() as u32).to_be_bytes());
    entry.extend_from_slice(etf);
    entry
}

/// A trace file drop entry: 1, then how many were lost (4 bytes).
pub fn drop_entry(count: u64) -> Vec<u8> {
    let mut entry = vec![1];
    entry.extend((count.min(u64::from(u32::MAX)) as u32).to_be_bytes());
    entry
}

/// The latest `capacity` messages, as ETF.
#[derive(Debug)]
pub struct Ring {
    pub capacity: usize,
    pub messages: VecDeque<Vec<u8>>,
    /// Messages pushed out by newer ones.
    pub overwritten: u64,
}

impl Ring {
    pub fn new(capacity: usize) -> Ring {
        Ring { capacity: capacity.max(1), messages: VecDeque::new(), overwritten: 0 }
    }

    pub fn push(&mut self, etf: Vec<u8>) {
        if self.messages.len() == self.capacity {
            self.messages.pop_front();
            self.overwritten += 1;
        }
        self.messages.push_back(etf);
    }
}
