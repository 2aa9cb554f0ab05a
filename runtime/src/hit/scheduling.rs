//! Scheduling (`running`, `running_procs`, `exiting`) and garbage
//! collection (`garbage_collection`) events of a process.
//!
//! The host says when it schedules a process in and out and when it
//! collects its heap; the core reports, per session:
//!
//! * `{trace, Pid, in | out, {M, F, A} | 0}` with `running` or
//!   `running_procs` (the current function; `0` when it has none);
//! * `in_exiting`, `out_exiting` (instead of `in`/`out` while the process
//!   is exiting) and `out_exited` (its last schedule out) with `exiting`,
//!   always with `0`;
//! * `{trace, Pid, gc_minor_start | gc_minor_end | gc_major_start |
//!   gc_major_end | gc_max_heap_size, Info}` with `garbage_collection`,
//!   `Info` being `[{wordsize, N} | heap figures]` in ERTS's order.

use matchspec::term::{Atom, Heap, TermRef, Word};

use crate::hit::process::{CallStack, Process};
use crate::model::flags::TraceFlags;
use crate::model::ids::Mfa;
use crate::model::tracer::{TraceCategory, TraceOpts, TraceTag, TraceeId};

/// A garbage collection event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GcEvent {
    /// A minor (young generation) collection starts.
    MinorStart,
    /// A minor collection ended.
    MinorEnd,
    /// A major (fullsweep) collection starts.
    MajorStart,
    /// A major collection ended.
    MajorEnd,
    /// The heap grew past `max_heap_size`.
    MaxHeapSize,
}

impl GcEvent {
    fn tag(self) -> TraceTag {
        match self {
            GcEvent::MinorStart => TraceTag::GcMinorStart,
            GcEvent::MinorEnd => TraceTag::GcMinorEnd,
            GcEvent::MajorStart => TraceTag::GcMajorStart,
            GcEvent::MajorEnd => TraceTag::GcMajorEnd,
            GcEvent::MaxHeapSize => TraceTag::GcMaxHeapSize,
        }
    }
}

/// The heap figures of a garbage collection event, in words (ERTS's
/// `erts_process_gc_info`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GcInfo {
    /// `wordsize`: at a start, the words needed; at an end, the words
    /// reclaimed.
    pub wordsize: u64,
    /// `old_heap_block_size`
    pub old_heap_block_size: u64,
    /// `heap_block_size`
    pub heap_block_size: u64,
    /// `mbuf_size`
    pub mbuf_size: u64,
    /// `recent_size`
    pub recent_size: u64,
    /// `stack_size`
    pub stack_size: u64,
    /// `old_heap_size`
    pub old_heap_size: u64,
    /// `heap_size`
    pub heap_size: u64,
    /// `bin_vheap_size`
    pub bin_vheap_size: u64,
    /// `bin_vheap_block_size`
    pub bin_vheap_block_size: u64,
    /// `bin_old_vheap_size`
    pub bin_old_vheap_size: u64,
    /// `bin_old_vheap_block_size`
    pub bin_old_vheap_block_size: u64,
}

impl GcInfo {
    /// `[{wordsize, N}, {old_heap_block_size, N}, ...]` in ERTS's order.
    pub fn to_word(&self, heap: &mut Heap) -> Word {
        figures_word(self.figures().iter(), heap)
    }

    /// The heap's figures as a system monitor's `large_heap` message gives
    /// them: the heap's blocks and sizes, without `wordsize`,
    /// `recent_size` and the binary heaps, in the same order.
    pub(crate) fn heap_word(&self, heap: &mut Heap) -> Word {
        const HEAP: [&str; 6] = [
            "old_heap_block_size",
            "heap_block_size",
            "mbuf_size",
            "stack_size",
            "old_heap_size",
            "heap_size",
        ];
        figures_word(self.figures().iter().filter(|(key, _)| HEAP.contains(key)), heap)
    }

    fn figures(&self) -> [(&'static str, u64); 12] {
        [
            ("wordsize", self.wordsize),
            ("old_heap_block_size", self.old_heap_block_size),
            ("heap_block_size", self.heap_block_size),
            ("mbuf_size", self.mbuf_size),
            ("recent_size", self.recent_size),
            ("stack_size", self.stack_size),
            ("old_heap_size", self.old_heap_size),
            ("heap_size", self.heap_size),
            ("bin_vheap_size", self.bin_vheap_size),
            ("bin_vheap_block_size", self.bin_vheap_block_size),
            ("bin_old_vheap_size", self.bin_old_vheap_size),
            ("bin_old_vheap_block_size", self.bin_old_vheap_block_size),
        ]
    }
}

/// `[{Key, N}...]`.
fn figures_word<'a>(
    figures: impl Iterator<Item = &'a (&'static str, u64)>,
    heap: &mut Heap,
) -> Word {
    let items: Vec<Word> = figures
        .map(|(key, value)| {
            let value = heap.int(i64::try_from(*value).unwrap_or(i64::MAX));
            heap.tuple(&[Word::atom(Atom::new(key)), value])
        })
        .collect();
    heap.list(&items)
}

/// Which scheduling event, and the flags that ask for it.
#[derive(Clone, Copy)]
enum Sched {
    In,
    Out,
    InExiting,
    OutExiting,
    OutExited,
}

impl Sched {
    fn tag(self) -> TraceTag {
        match self {
            Sched::In => TraceTag::In,
            Sched::Out => TraceTag::Out,
            Sched::InExiting => TraceTag::InExiting,
            Sched::OutExiting => TraceTag::OutExiting,
            Sched::OutExited => TraceTag::OutExited,
        }
    }

    /// The flags that ask for it (any one of them).
    fn flags(self) -> TraceFlags {
        match self {
            Sched::In | Sched::Out => TraceFlags::RUNNING | TraceFlags::RUNNING_PROCS,
            Sched::InExiting | Sched::OutExiting | Sched::OutExited => TraceFlags::EXITING,
        }
    }
}

impl Process {
    /// Scheduling trace when the process is scheduled in: `in` (or
    /// `in_exiting` while it exits). The host calls this where it calls
    /// [`Process::schedule_in`]. First, as ERTS's `trace_schedule_in`, each
    /// tracer of the process is asked `trace_status`, and one that answers
    /// `remove` (a dead tracer process, a tracer module no longer loaded)
    /// goes. (A host that keeps the process's stack calls
    /// [`Process::trace_schedule_in_at`] instead.)
    pub fn trace_schedule_in(&mut self, exiting: bool) {
        let current = self.core_current_function();
        self.check_tracers();
        self.trace_sched(if exiting { Sched::InExiting } else { Sched::In }, current);
    }

    /// [`Process::trace_schedule_in`] for a process whose host keeps its
    /// stack ([`Process::keep_own_stack`]): the current function is the
    /// top of `stack`.
    pub fn trace_schedule_in_at(&mut self, exiting: bool, stack: &dyn CallStack) {
        self.check_tracers();
        self.trace_sched(if exiting { Sched::InExiting } else { Sched::In }, stack.function(0));
    }

    /// Removes the tracers of the process that answer `remove` to
    /// `trace_status` (what a traced process does whenever it is scheduled
    /// in, also to handle a signal, such as the code check of
    /// `code:purge/1`).
    pub fn check_tracers(&mut self) {
        self.tracee().drop_removed_tracers();
    }

    /// Scheduling trace when the process is scheduled out: `out` (or
    /// `out_exiting` while it exits). (A host that keeps the process's
    /// stack calls [`Process::trace_schedule_out_at`] instead.)
    pub fn trace_schedule_out(&mut self, exiting: bool) {
        let current = self.core_current_function();
        self.trace_sched(if exiting { Sched::OutExiting } else { Sched::Out }, current);
    }

    /// [`Process::trace_schedule_out`] for a process whose host keeps its
    /// stack: the current function is the top of `stack`.
    pub fn trace_schedule_out_at(&mut self, exiting: bool, stack: &dyn CallStack) {
        self.trace_sched(if exiting { Sched::OutExiting } else { Sched::Out }, stack.function(0));
    }

    /// The function the process runs, as the core's copy of its stack has
    /// it (none when the host keeps the stack: the core's copy holds only
    /// the watched frames then).
    fn core_current_function(&self) -> Option<Mfa> {
        if self.host_keeps_stack() {
            return None;
        }
        self.functions().next()
    }

    /// Scheduling trace when the process is scheduled in or out (`out`:
    /// `!scheduled_in`) inside `current`, a function the host runs without
    /// telling the core (such as the Erlang code of a BIF that waits for a
    /// reply, `erlang:open_port/2`): `{trace, Pid, in | out, Current}`.
    pub fn trace_schedule_within(&mut self, scheduled_in: bool, current: Mfa) {
        let what = if scheduled_in { Sched::In } else { Sched::Out };
        if !self.tracee().traces_any(what.flags()) {
            return;
        }
        let mut heap = Heap::new();
        let current = current.to_word(&mut heap);
        self.emit(what.flags(), TraceCategory::RunningProcs, what.tag(), heap.view(current));
    }

    /// The last schedule out of a process that has exited: `out_exited`.
    pub fn trace_schedule_out_exited(&mut self) {
        self.trace_sched(Sched::OutExited, None);
    }

    /// A garbage collection event with `info`.
    pub fn trace_gc(&mut self, event: GcEvent, info: &GcInfo) {
        if !self.tracee().traces_any(TraceFlags::GARBAGE_COLLECTION) {
            return;
        }
        let mut heap = Heap::new();
        let message = info.to_word(&mut heap);
        let category = TraceCategory::GarbageCollection;
        self.emit(TraceFlags::GARBAGE_COLLECTION, category, event.tag(), heap.view(message));
    }

    fn trace_sched(&mut self, what: Sched, current: Option<Mfa>) {
        if !self.tracee().traces_any(what.flags()) {
            return;
        }
        let exiting = matches!(what, Sched::InExiting | Sched::OutExiting | Sched::OutExited);
        let mut heap = Heap::new();
        let current = match current {
            Some(mfa) if !exiting => mfa.to_word(&mut heap),
            _ => Word::small(0).expect("0 is small"),
        };
        self.emit(what.flags(), TraceCategory::RunningProcs, what.tag(), heap.view(current));
    }

    /// `message` as event `tag` to every session tracing the process with
    /// one of `flags` whose tracer wants it.
    fn emit(
        &self,
        flags: TraceFlags,
        category: TraceCategory,
        tag: TraceTag,
        message: TermRef<'_>,
    ) {
        let id = TraceeId::Process(self.pid());
        for link in self.tracee().links().iter() {
            if !link.session.is_alive()
                || !link.flags.intersects(flags)
                || !self.tracee().tracer_enabled(link, category, tag)
            {
                continue;
            }
            let opts = TraceOpts::for_flags(link.flags, self.scheduler_id());
            link.tracer.trace_kind(category, tag, id, message, &opts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(
        flags: TraceFlags,
    ) -> (Process, crossbeam_channel::Receiver<crate::model::tracer::Delivered>) {
        let traced = crate::test_support::traced(flags);
        (traced.process, traced.rx)
    }

    fn messages(rx: &crossbeam_channel::Receiver<crate::model::tracer::Delivered>) -> Vec<String> {
        rx.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect()
    }

    #[test]
    fn running_reports_the_current_function_and_exiting_reports_zero() {
        let (mut p, rx) = setup(TraceFlags::RUNNING | TraceFlags::EXITING);
        p.trace_schedule_in(false);
        p.trace_schedule_out(false);
        p.trace_schedule_in(true);
        p.trace_schedule_out(true);
        p.trace_schedule_out_exited();
        assert_eq!(
            messages(&rx),
            [
                "{trace,<0.80.0>,in,{m,loop,0}}",
                "{trace,<0.80.0>,out,{m,loop,0}}",
                "{trace,<0.80.0>,in_exiting,0}",
                "{trace,<0.80.0>,out_exiting,0}",
                "{trace,<0.80.0>,out_exited,0}",
            ]
        );
        // Without `exiting`, the exiting events are not reported.
        let (mut p, rx) = setup(TraceFlags::RUNNING);
        p.trace_schedule_in(true);
        p.trace_schedule_out_exited();
        assert!(messages(&rx).is_empty());
    }

    #[test]
    fn gc_events_carry_the_heap_figures_in_erts_order() {
        let (mut p, rx) = setup(TraceFlags::GARBAGE_COLLECTION);
        let info = GcInfo { wordsize: 10, heap_size: 233, stack_size: 4, ..GcInfo::default() };
        p.trace_gc(GcEvent::MajorStart, &info);
        assert_eq!(
            messages(&rx),
            ["{trace,<0.80.0>,gc_major_start,[{wordsize,10},{old_heap_block_size,0},\
              {heap_block_size,0},{mbuf_size,0},{recent_size,0},{stack_size,4},\
              {old_heap_size,0},{heap_size,233},{bin_vheap_size,0},\
              {bin_vheap_block_size,0},{bin_old_vheap_size,0},\
              {bin_old_vheap_block_size,0}]}"]
        );
    }
}
