//! `call_time` and `call_memory` totals: per function and process, how
//! many calls and how much time they ran or how many heap words they
//! allocated (ERTS's `BpDataCallTrace` in `beam_bp.c`).
//!
//! [`CallStats`] holds the totals of one session's breakpoint on one
//! function, shared by both generations of the breakpoint (like the call
//! counter) and updated by every thread whose process runs the function:
//! processes are spread over shards, each behind a short lock, so
//! concurrent hits of different processes rarely meet and no lock is
//! global. What is added when is the hit path's (`hit/accounting.rs`).

use std::collections::hash_map::Entry as MapEntry;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use crate::model::ids::Pid;

/// How many shards a [`CallStats`] spreads its processes over.
const SHARDS: usize = 16;

/// One process's totals for one function, as `trace:info/3` reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    /// Calls counted.
    pub count: u64,
    /// Nanoseconds (`call_time`) or heap words (`call_memory`).
    pub total: i64,
}

/// Where a process's totals are kept: ERTS keeps one table per scheduler
/// and merges them when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    scheduler: u32,
    pid: Pid,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    tally: Tally,
    /// When the process first appeared in the table (its place in ERTS's
    /// open-addressing table depends on it).
    first: u64,
}

/// The `call_time` or `call_memory` totals of one session's breakpoint on
/// one function, per process (ERTS's `BpDataCallTrace`).
#[derive(Debug, Default)]
pub struct CallStats {
    shards: [Mutex<FxHashMap<Key, Slot>>; SHARDS],
    arrivals: AtomicU64,
}

impl CallStats {
    /// Empty totals.
    pub fn new() -> CallStats {
        CallStats::default()
    }

    /// Adds `count` calls and `amount` to `pid`'s totals, kept for
    /// `scheduler`.
    pub(crate) fn add(&self, scheduler: u32, pid: Pid, count: u64, amount: i64) {
        let shard = &self.shards[pid.id as usize % SHARDS];
        match shard.lock().entry(Key { scheduler, pid }) {
            MapEntry::Occupied(mut slot) => {
                let tally = &mut slot.get_mut().tally;
                tally.count = tally.count.saturating_add(count);
                tally.total = tally.total.saturating_add(amount);
            }
            MapEntry::Vacant(slot) => {
                let first = self.arrivals.fetch_add(1, Ordering::Relaxed);
                slot.insert(Slot { tally: Tally { count, total: amount }, first });
            }
        }
    }

    /// Forgets every process (`restart`, or `true` again).
    pub(crate) fn reset(&self) {
        for shard in &self.shards {
            shard.lock().clear();
        }
    }

    /// The totals of every process, in the order `trace:info/3` lists
    /// them.
    ///
    /// ERTS merges its per-scheduler tables (open addressing keyed by the
    /// pid term, see `erts_pid_key`) into one table and conses the
    /// entries in slot order, so the list comes out in reverse slot order.
    /// This reproduces that layout from the order in which processes first
    /// arrived in each scheduler's table: the order matches OTP 27's (with
    /// its default process table of 2^20 slots) for the same pids and the
    /// same arrivals.
    pub fn per_process(&self) -> Vec<(Pid, Tally)> {
        let mut entries: Vec<(Key, Slot)> = Vec::new();
        for shard in &self.shards {
            entries.extend(shard.lock().iter().map(|(k, s)| (*k, *s)));
        }
        entries.sort_by_key(|(key, slot)| (key.scheduler, slot.first));
        let mut merged = ErtsTable::new(64);
        for group in entries.chunk_by(|a, b| a.0.scheduler == b.0.scheduler) {
            let mut table = ErtsTable::new(32);
            for (key, slot) in group {
                table.put(key.pid, slot.tally);
            }
            for (pid, tally) in table.entries() {
                merged.accumulate(pid, tally);
            }
        }
        let mut list = merged.entries();
        list.reverse();
        list
    }

    /// Is no process counted?
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.lock().is_empty())
    }
}

/// The key ERTS hashes a pid term by (`pid >> 4`, the tag bits shifted
/// out): the pid's data as the process table lays it out. The table
/// spreads consecutive process numbers over cache lines (8 slots of 8
/// bytes per 64-byte line), so of a number's 20 table bits the low 17 come
/// first, shifted up by 3, and the high 3 last. Bits above the table's
/// (and the serial) only matter for tables of more than 2^20 entries.
fn erts_pid_key(pid: Pid) -> u64 {
    let number = u64::from(pid.id);
    let table_bits = ((number & 0x1_FFFF) << 3) | ((number >> 17) & 7);
    (u64::from(pid.serial) << 28) | (number & !0xF_FFFF) | table_bits
}

/// ERTS's `bp_trace_hash_t`: open addressing, linear probing, doubling
/// when more than 70% full at an insertion.
struct ErtsTable {
    slots: Vec<Option<(Pid, Tally)>>,
    used: usize,
}

impl ErtsTable {
    fn new(size: usize) -> ErtsTable {
        ErtsTable { slots: vec![None; size], used: 0 }
    }

    fn home(&self, pid: Pid) -> usize {
        (erts_pid_key(pid) % self.slots.len() as u64) as usize
    }

    fn find(&self, pid: Pid) -> Option<usize> {
        let mut at = self.home(pid);
        loop {
            match self.slots[at] {
                None => return None,
                Some((p, _)) if p == pid => return Some(at),
                Some(_) => at = (at + 1) % self.slots.len(),
            }
        }
    }

    fn put(&mut self, pid: Pid, tally: Tally) {
        // `bp_hash_put` compares the load as a float.
        if self.used as f32 / self.slots.len() as f32 > 0.7 {
            let size = self.slots.len() * 2;
            let old = std::mem::replace(&mut self.slots, vec![None; size]);
            for (p, t) in old.into_iter().flatten() {
                self.place(p, t);
            }
        }
        self.place(pid, tally);
        self.used += 1;
    }

    fn place(&mut self, pid: Pid, tally: Tally) {
        let mut at = self.home(pid);
        while self.slots[at].is_some() {
            at = (at + 1) % self.slots.len();
        }
        self.slots[at] = Some((pid, tally));
    }

    fn accumulate(&mut self, pid: Pid, tally: Tally) {
        match self.find(pid) {
            Some(at) => {
                if let Some((_, t)) = &mut self.slots[at] {
                    t.count = t.count.saturating_add(tally.count);
                    t.total = t.total.saturating_add(tally.total);
                }
            }
            None => self.put(pid, tally),
        }
    }

    /// The entries in slot order.
    fn entries(&self) -> Vec<(Pid, Tally)> {
        self.slots.iter().flatten().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pids(numbers: &[u32]) -> Vec<Pid> {
        numbers.iter().map(|&n| Pid::new(n, 0)).collect()
    }

    /// The order of `trace:info/3` after processes arrive in `arrivals`
    /// (one scheduler), as pid numbers.
    fn order(arrivals: &[u32]) -> Vec<u32> {
        let stats = CallStats::new();
        for pid in pids(arrivals) {
            stats.add(1, pid, 1, 0);
        }
        stats.per_process().iter().map(|(p, _)| p.id).collect()
    }

    #[test]
    fn the_order_is_otp_27s_for_the_same_pids() {
        // Both lists are what OTP 27.3 (one scheduler) answered for
        // trace_info({M, F, A}, call_time) after processes with these pid
        // numbers called F in this order.
        let arrivals: Vec<u32> = (84..164).collect();
        let otp = [
            159, 143, 127, 111, 95, 158, 142, 126, 110, 94, 157, 141, 125, 109, 93, 156, 140, 124,
            108, 92, 155, 139, 123, 107, 91, 154, 138, 122, 106, 90, 153, 137, 121, 105, 89, 152,
            136, 120, 104, 88, 151, 135, 119, 103, 87, 150, 134, 118, 102, 86, 149, 133, 117, 101,
            85, 148, 132, 116, 100, 84, 163, 147, 131, 115, 99, 162, 146, 130, 114, 98, 161, 145,
            129, 113, 97, 160, 144, 128, 112, 96,
        ];
        assert_eq!(order(&arrivals), otp);
        let arrivals = [
            123, 86, 100, 108, 92, 84, 116, 85, 93, 101, 109, 117, 94, 102, 88, 89, 90, 91, 122,
            121, 120, 95, 96, 97,
        ];
        let otp = [
            95, 102, 94, 86, 117, 109, 101, 93, 85, 116, 84, 92, 108, 100, 91, 123, 122, 90, 97,
            121, 89, 96, 120, 88,
        ];
        assert_eq!(order(&arrivals), otp);
    }

    #[test]
    fn schedulers_tables_are_merged() {
        let stats = CallStats::new();
        let (a, b) = (Pid::new(80, 0), Pid::new(81, 0));
        stats.add(1, a, 1, 10);
        stats.add(2, a, 2, 5);
        stats.add(2, b, 1, 1);
        stats.add(1, a, 0, 7);
        assert_eq!(
            stats.per_process(),
            [(b, Tally { count: 1, total: 1 }), (a, Tally { count: 3, total: 22 })]
        );
        stats.reset();
        assert!(stats.is_empty());
        assert_eq!(stats.per_process(), []);
    }
}
