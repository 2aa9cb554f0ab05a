//! A process's breakpoints of the functions it hit lately.
//!
//! A function's slot of generation `n` does not change while `n` is
//! current (commits write the other slot, and the one they retire only
//! after its readers are gone), so a breakpoint read once in generation `n`
//! stays right for every hit pinned to `n`. The cache keeps a few, so a
//! process that hits the same functions again reads no `arc_swap` slot:
//! a full slot load costs two atomic read-modify-writes.

use std::sync::{Arc, Weak};

use crate::model::breakpoint::{Breakpoint, FunctionEntry};

/// How many functions the cache holds (one per line, chosen by address).
const LINES: usize = 8;

/// No generation has this number.
const EMPTY: u64 = u64::MAX;

/// See the [module documentation](self).
#[derive(Debug, Default)]
pub(crate) struct BreakpointCache {
    lines: [Line; LINES],
}

#[derive(Debug)]
struct Line {
    /// Weak: the entry's memory cannot be reused for another while the
    /// line names it.
    function: Weak<FunctionEntry>,
    generation: u64,
    breakpoint: Option<Arc<Breakpoint>>,
}

impl Default for Line {
    fn default() -> Line {
        Line { function: Weak::new(), generation: EMPTY, breakpoint: None }
    }
}

impl BreakpointCache {
    /// The breakpoint of `entry` in generation `number` (the caller holds
    /// it pinned), taken out of the cache until [`BreakpointCache::put_back`]
    /// (so the hit can borrow the process mutably meanwhile).
    #[inline]
    pub(crate) fn take(&mut self, entry: &FunctionEntry, number: u64) -> Option<Arc<Breakpoint>> {
        let line = &mut self.lines[line_of(entry)];
        let hit = line.generation == number && std::ptr::eq(line.function.as_ptr(), entry);
        // Empty until put back: a hit that unwinds leaves no wrong line.
        line.generation = EMPTY;
        if hit {
            return line.breakpoint.take();
        }
        line.function = entry.weak();
        line.breakpoint = None;
        entry.slot_full((number % 2) as usize)
    }

    /// Returns what [`BreakpointCache::take`] gave for `entry` and `number`.
    #[inline]
    pub(crate) fn put_back(
        &mut self,
        entry: &FunctionEntry,
        number: u64,
        breakpoint: Option<Arc<Breakpoint>>,
    ) {
        let line = &mut self.lines[line_of(entry)];
        line.generation = number;
        line.breakpoint = breakpoint;
    }
}

/// The line of `entry`: the top bits of its address, mixed.
fn line_of(entry: &FunctionEntry) -> usize {
    let address = std::ptr::from_ref(entry) as usize as u64;
    (address.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - LINES.trailing_zeros())) as usize
}
