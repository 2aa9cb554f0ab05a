//! Overload policies: what a tracer keeps when it cannot keep everything.
//! None of them ever makes the traced process wait.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The limits a tracer was started with (all off by default).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Keep one message in this many (1: all).
    pub sample: u64,
    /// Stop after keeping this many messages.
    pub max_messages: Option<u64>,
    /// Stop this long after starting.
    pub max_time: Option<Duration>,
    /// Keep at most this many messages a second; drop the rest.
    pub rate: Option<u64>,
    /// Messages the sink may hold undelivered; drop the rest.
    pub max_queue: Option<usize>,
}

/// A tracer's counters and stop flag.
#[derive(Debug)]
pub struct Meter {
    pub(super) limits: Limits,
    started: Instant,
    /// Trace events the tracer was handed.
    pub(super) seen: AtomicU64,
    /// Events skipped by sampling.
    pub(super) sampled_out: AtomicU64,
    /// Messages the filter spec did not keep.
    pub(super) filtered: AtomicU64,
    /// Messages delivered to the sink.
    pub(super) kept: AtomicU64,
    /// Messages dropped under overload, in all.
    pub(super) dropped: AtomicU64,
    /// Dropped messages not yet reported with a `{drop, N}` entry.
    pub(super) unreported: AtomicU64,
    /// Stopped: by a limit, by `stop/1`, or because the sink is gone.
    pub(super) stopped: AtomicBool,
    /// The current second of the rate limit and what it has kept.
    window: Mutex<(Instant, u64)>,
}

/// What the policy says about one message.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver it.
    Keep,
    /// Sampled out: not a drop.
    Skip,
    /// Over the rate: dropped and counted.
    Drop,
}

impl Meter {
    pub fn new(limits: Limits) -> Meter {
        let now = Instant::now();
        Meter {
            limits,
            started: now,
            seen: AtomicU64::new(0),
            sampled_out: AtomicU64::new(0),
            filtered: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            unreported: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            window: Mutex::new((now, 0)),
        }
    }

    /// Has the tracer stopped (checking the time limit now)?
    pub fn is_stopped(&self) -> bool {
        if self.stopped.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(limit) = self.limits.max_time
            && self.started.elapsed() >= limit
        {
            self.stop();
            return true;
        }
        false
    }

    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Sampling, then the rate: decided before the message is built.
    pub fn admit(&self) -> Verdict {
        let n = self.seen.fetch_add(1, Ordering::Relaxed);
        if self.limits.sample > 1 && !n.is_multiple_of(self.limits.sample) {
            self.sampled_out.fetch_add(1, Ordering::Relaxed);
            return Verdict::Skip;
        }
        if let Some(rate) = self.limits.rate {
            let mut window = self.window.lock();
            let now = Instant::now();
            if now.duration_since(window.0) >= Duration::from_secs(1) {
                *window = (now, 0);
            }
            if window.1 >= rate {
                drop(window);
                self.count_drop();
                return Verdict::Drop;
            }
            window.1 += 1;
        }
        Verdict::Keep
    }

    pub fn count_drop(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        self.unreported.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a delivered message; stops the tracer at `max_messages`.
    pub fn count_kept(&self) {
        let kept = self.kept.fetch_add(1, Ordering::Relaxed) + 1;
        if self.limits.max_messages.is_some_and(|max| kept >= max) {
            self.stop();
        }
    }

    /// Is another message allowed under `max_messages`?
    pub fn room_for_one(&self) -> bool {
        self.limits.max_messages.is_none_or(|max| self.kept.load(Ordering::Relaxed) < max)
    }
}
