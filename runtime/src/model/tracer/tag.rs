//! Trace event tags and the kinds the per-kind callbacks are named after.

use std::sync::LazyLock;

use matchspec::term::Atom;

/// The tag of a trace event (the third element of a default trace tuple).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceTag {
    /// A traced function was called.
    Call,
    /// A function with a return trace frame returned.
    ReturnFrom,
    /// A function with an exception trace frame raised.
    ExceptionFrom,
    /// Execution returned into a function (`return_to`).
    ReturnTo,
    /// A message was sent.
    Send,
    /// A message was sent to a process that does not exist.
    SendToNonExistingProcess,
    /// A message arrived.
    Receive,
    /// The tracee spawned a process.
    Spawn,
    /// The tracee was spawned.
    Spawned,
    /// The tracee exited.
    Exit,
    /// The tracee linked to another.
    Link,
    /// The tracee unlinked from another.
    Unlink,
    /// Another process linked to the tracee.
    GettingLinked,
    /// Another process unlinked from the tracee.
    GettingUnlinked,
    /// The tracee registered a name.
    Register,
    /// The tracee's name was unregistered.
    Unregister,
    /// Scheduled in.
    In,
    /// Scheduled out.
    Out,
    /// Scheduled in while exiting.
    InExiting,
    /// Scheduled out while exiting.
    OutExiting,
    /// Scheduled out for the last time.
    OutExited,
    /// A minor garbage collection starts.
    GcMinorStart,
    /// A minor garbage collection ended.
    GcMinorEnd,
    /// A major garbage collection starts.
    GcMajorStart,
    /// A major garbage collection ended.
    GcMajorEnd,
    /// The heap grew past `max_heap_size`.
    GcMaxHeapSize,
    /// A port was opened.
    Open,
    /// A port was closed.
    Closed,
    /// A sequential trace event.
    SeqTrace,
    /// Not an event: "is this tracer still there?" (only `enabled` sees it).
    TraceStatus,
}

/// The event kinds ERTS has separate `enabled_*`/`trace_*` callbacks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceCategory {
    /// `call`, `return_from`, `exception_from`, `return_to`.
    Call,
    /// `send`, `send_to_non_existing_process`.
    Send,
    /// `'receive'`.
    Receive,
    /// Process events (`spawn`, `exit`, `link`, ...).
    Procs,
    /// Port events.
    Ports,
    /// Process scheduling.
    RunningProcs,
    /// Port scheduling.
    RunningPorts,
    /// Garbage collection.
    GarbageCollection,
    /// Sequential trace and `trace_status`: only the generic callbacks.
    Generic,
}

impl TraceTag {
    /// Every tag, in declaration order (`tag as usize` indexes it).
    pub const EVERY: [TraceTag; 30] = [
        TraceTag::Call,
        TraceTag::ReturnFrom,
        TraceTag::ExceptionFrom,
        TraceTag::ReturnTo,
        TraceTag::Send,
        TraceTag::SendToNonExistingProcess,
        TraceTag::Receive,
        TraceTag::Spawn,
        TraceTag::Spawned,
        TraceTag::Exit,
        TraceTag::Link,
        TraceTag::Unlink,
        TraceTag::GettingLinked,
        TraceTag::GettingUnlinked,
        TraceTag::Register,
        TraceTag::Unregister,
        TraceTag::In,
        TraceTag::Out,
        TraceTag::InExiting,
        TraceTag::OutExiting,
        TraceTag::OutExited,
        TraceTag::GcMinorStart,
        TraceTag::GcMinorEnd,
        TraceTag::GcMajorStart,
        TraceTag::GcMajorEnd,
        TraceTag::GcMaxHeapSize,
        TraceTag::Open,
        TraceTag::Closed,
        TraceTag::SeqTrace,
        TraceTag::TraceStatus,
    ];

    /// The tag's atom (interned once).
    pub fn atom(self) -> Atom {
        static ATOMS: LazyLock<Vec<Atom>> =
            LazyLock::new(|| TraceTag::EVERY.iter().map(|t| Atom::new(t.name())).collect());
        ATOMS[self as usize]
    }

    /// The tag's name.
    pub fn name(self) -> &'static str {
        match self {
            TraceTag::Call => "call",
            TraceTag::ReturnFrom => "return_from",
            TraceTag::ExceptionFrom => "exception_from",
            TraceTag::ReturnTo => "return_to",
            TraceTag::Send => "send",
            TraceTag::SendToNonExistingProcess => "send_to_non_existing_process",
            TraceTag::Receive => "receive",
            TraceTag::Spawn => "spawn",
            TraceTag::Spawned => "spawned",
            TraceTag::Exit => "exit",
            TraceTag::Link => "link",
            TraceTag::Unlink => "unlink",
            TraceTag::GettingLinked => "getting_linked",
            TraceTag::GettingUnlinked => "getting_unlinked",
            TraceTag::Register => "register",
            TraceTag::Unregister => "unregister",
            TraceTag::In => "in",
            TraceTag::Out => "out",
            TraceTag::InExiting => "in_exiting",
            TraceTag::OutExiting => "out_exiting",
            TraceTag::OutExited => "out_exited",
            TraceTag::GcMinorStart => "gc_minor_start",
            TraceTag::GcMinorEnd => "gc_minor_end",
            TraceTag::GcMajorStart => "gc_major_start",
            TraceTag::GcMajorEnd => "gc_major_end",
            TraceTag::GcMaxHeapSize => "gc_max_heap_size",
            TraceTag::Open => "open",
            TraceTag::Closed => "closed",
            TraceTag::SeqTrace => "seq_trace",
            TraceTag::TraceStatus => "trace_status",
        }
    }

    /// The per-kind callbacks this tag goes to for a process (a port's
    /// events go to [`TraceCategory::Ports`], its scheduling to
    /// [`TraceCategory::RunningPorts`], its messages as a process's).
    pub fn category(self) -> TraceCategory {
        match self {
            TraceTag::Call
            | TraceTag::ReturnFrom
            | TraceTag::ExceptionFrom
            | TraceTag::ReturnTo => TraceCategory::Call,
            TraceTag::Send | TraceTag::SendToNonExistingProcess => TraceCategory::Send,
            TraceTag::Receive => TraceCategory::Receive,
            TraceTag::Spawn
            | TraceTag::Spawned
            | TraceTag::Exit
            | TraceTag::Link
            | TraceTag::Unlink
            | TraceTag::GettingLinked
            | TraceTag::GettingUnlinked
            | TraceTag::Register
            | TraceTag::Unregister => TraceCategory::Procs,
            TraceTag::In
            | TraceTag::Out
            | TraceTag::InExiting
            | TraceTag::OutExiting
            | TraceTag::OutExited => TraceCategory::RunningProcs,
            TraceTag::GcMinorStart
            | TraceTag::GcMinorEnd
            | TraceTag::GcMajorStart
            | TraceTag::GcMajorEnd
            | TraceTag::GcMaxHeapSize => TraceCategory::GarbageCollection,
            TraceTag::Open | TraceTag::Closed => TraceCategory::Ports,
            TraceTag::SeqTrace | TraceTag::TraceStatus => TraceCategory::Generic,
        }
    }
}
