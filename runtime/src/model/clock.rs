//! Where timestamps come from: an injectable [`Clock`], so that tests and
//! scenarios get exact, repeatable messages.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use matchspec::term::{Heap, Word};

use crate::model::flags::TimestampKind;

/// The time sources of ERTS's trace timestamps.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Erlang monotonic time in nanoseconds (`erlang:monotonic_time(nanosecond)`).
    fn monotonic_ns(&self) -> i64;

    /// `erlang:now/0` in microseconds since the epoch: strictly increasing
    /// from one call to the next, as ERTS guarantees.
    fn now_us(&self) -> u64;

    /// A strictly increasing integer (`erlang:unique_integer([monotonic])`).
    fn unique_integer(&self) -> i64;

    /// Builds the timestamp term of `kind` in `heap`.
    fn timestamp(&self, kind: TimestampKind, heap: &mut Heap) -> Word {
        match kind {
            TimestampKind::Now => {
                let us = self.now_us();
                let parts = [us / 1_000_000_000_000, us / 1_000_000 % 1_000_000, us % 1_000_000];
                let words = parts.map(|p| heap.int(p as i64));
                heap.tuple(&words)
            }
            TimestampKind::Monotonic => heap.int(self.monotonic_ns()),
            TimestampKind::StrictMonotonic => {
                let mono = heap.int(self.monotonic_ns());
                let unique = heap.int(self.unique_integer());
                heap.tuple(&[mono, unique])
            }
        }
    }
}

/// Strictly increasing microseconds: `max(previous + 1, wanted)`.
fn strictly_after(last: &AtomicU64, wanted: u64) -> u64 {
    let mut previous = last.load(Ordering::Relaxed);
    loop {
        let next = wanted.max(previous + 1);
        match last.compare_exchange_weak(previous, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => previous = seen,
        }
    }
}

/// The machine's clocks.
#[derive(Debug)]
pub struct SystemClock {
    start: Instant,
    last_now: AtomicU64,
    unique: AtomicI64,
}

impl SystemClock {
    /// A clock whose monotonic time starts near zero now.
    pub fn new() -> SystemClock {
        SystemClock {
            start: Instant::now(),
            last_now: AtomicU64::new(0),
            unique: AtomicI64::new(0),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn monotonic_ns(&self) -> i64 {
        i64::try_from(self.start.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    fn now_us(&self) -> u64 {
        let wanted = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros());
        strictly_after(&self.last_now, u64::try_from(wanted).unwrap_or(u64::MAX))
    }

    fn unique_integer(&self) -> i64 {
        self.unique.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// A clock that only moves when told to ([`ManualClock::advance`]): exact
/// timestamps for tests and scenarios.
///
/// Monotonic time starts at 0 and `now` at 1,700,000,000 s after the epoch;
/// `now` still advances one microsecond per reading, as `erlang:now/0` must.
#[derive(Debug)]
pub struct ManualClock {
    ns: AtomicI64,
    last_now: AtomicU64,
    unique: AtomicI64,
}

/// Where [`ManualClock`]'s wall clock starts, in microseconds.
const MANUAL_EPOCH_US: u64 = 1_700_000_000_000_000;

impl ManualClock {
    /// A clock at monotonic time 0.
    pub fn new() -> ManualClock {
        ManualClock {
            ns: AtomicI64::new(0),
            last_now: AtomicU64::new(0),
            unique: AtomicI64::new(0),
        }
    }

    /// Moves time on by `ns` nanoseconds.
    pub fn advance(&self, ns: i64) {
        self.ns.fetch_add(ns, Ordering::Relaxed);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn monotonic_ns(&self) -> i64 {
        self.ns.load(Ordering::Relaxed)
    }

    fn now_us(&self) -> u64 {
        let wanted = MANUAL_EPOCH_US + (self.ns.load(Ordering::Relaxed).max(0) as u64) / 1000;
        strictly_after(&self.last_now, wanted)
    }

    fn unique_integer(&self) -> i64 {
        self.unique.fetch_add(1, Ordering::Relaxed) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_time_is_exact_and_now_never_repeats() {
        let clock = ManualClock::new();
        let mut heap = Heap::new();
        let a = clock.timestamp(TimestampKind::Now, &mut heap);
        let b = clock.timestamp(TimestampKind::Now, &mut heap);
        assert_eq!(heap.view(a).to_string(), "{1700,0,0}");
        assert_eq!(heap.view(b).to_string(), "{1700,0,1}");
        clock.advance(5_000_000_000);
        let c = clock.timestamp(TimestampKind::Now, &mut heap);
        assert_eq!(heap.view(c).to_string(), "{1700,5,0}");
        let m = clock.timestamp(TimestampKind::StrictMonotonic, &mut heap);
        assert_eq!(heap.view(m).to_string(), "{5000000000,1}");
    }
}
