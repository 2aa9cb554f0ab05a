//! Tracers: where trace events go, as the `erl_tracer` behaviour defines it.
//!
//! ERTS never builds a trace message itself: it asks the tracer module
//! whether it wants an event (`enabled/3` and its per-kind variants) and
//! then hands it the pieces (`trace/5`: tag, tracee, message, options map).
//! [`Tracer`] is that behaviour; [`ProcessTracer`] is `erl_tracer`, the
//! default that builds the familiar `{trace, Pid, Tag, Msg...}` tuples and
//! delivers them to a process (here: a channel). [`TestTracerModule`] is
//! the tracer module `tracer_test` of OTP's `tracer_SUITE`, which forwards
//! the callbacks' arguments to a collector process. [`TracerModules`] and
//! [`ModuleTracer`] let tracer modules be deleted and loaded again.

mod code;
mod contained;
mod module;
mod options;
mod process;
mod tag;

pub use code::{CodeError, ModuleCode, ModuleTracer, TracerModules};
pub(crate) use contained::{Contained, Deferral};
pub use module::TestTracerModule;
pub use options::TraceOpts;
pub use process::{Delivered, Overload, ProcessTracer};
pub use tag::{TraceCategory, TraceTag};

use std::fmt;
use std::sync::Arc;

use matchspec::term::{Heap, TermRef, Word};

use crate::model::ids::{Pid, PortId};

/// What is traced: a process or a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceeId {
    /// A process.
    Process(Pid),
    /// A port.
    Port(PortId),
    /// No tracee: what `trace_status` is asked about for the system
    /// sequential tracer (`undefined`).
    Undefined,
}

impl TraceeId {
    /// Builds the pid or port term.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        match self {
            TraceeId::Process(pid) => pid.to_word(heap),
            TraceeId::Port(port) => port.to_word(heap),
            TraceeId::Undefined => Word::atom(matchspec::term::Atom::UNDEFINED),
        }
    }
}

impl fmt::Display for TraceeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceeId::Process(pid) => pid.fmt(f),
            TraceeId::Port(port) => port.fmt(f),
            TraceeId::Undefined => f.write_str("undefined"),
        }
    }
}

/// A tracer's answer to `enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Enabled {
    /// Trace the event.
    Trace,
    /// Do not trace this event.
    Discard,
    /// Do not trace it, and remove the tracer from the tracee (honoured for
    /// the `trace_status` check).
    Remove,
}

/// A shared tracer.
pub type TracerRef = Arc<dyn Tracer>;

/// The `erl_tracer` behaviour.
///
/// Every per-kind callback falls back to the generic one, exactly as ERTS
/// falls back to `enabled/3` and `trace/5` when a module does not export
/// `enabled_call/3`, `trace_call/5` and friends. Callbacks run in the
/// traced entity's thread and must not block.
pub trait Tracer: Send + Sync + fmt::Debug {
    /// `enabled(Tag, State, Tracee)`.
    fn enabled(&self, tag: TraceTag, tracee: TraceeId) -> Enabled;

    /// `enabled_<kind>(Tag, State, Tracee)`, for the event kind `category`.
    fn enabled_kind(&self, category: TraceCategory, tag: TraceTag, tracee: TraceeId) -> Enabled {
        let _ = category;
        self.enabled(tag, tracee)
    }

    /// ERTS's check before an event: `enabled(trace_status)`, then, unless
    /// that said `remove`, `enabled_<kind>` (see `status_then`). A
    /// tracer that can give both answers at once overrides it, which saves
    /// a call on every traced event.
    fn status_then_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
    ) -> Enabled {
        match self.enabled(TraceTag::TraceStatus, tracee) {
            Enabled::Trace | Enabled::Discard => {}
            Enabled::Remove => return Enabled::Remove,
        }
        self.enabled_kind(category, tag, tracee)
    }

    /// `trace(Tag, State, Tracee, Message, Opts)`.
    fn trace(&self, tag: TraceTag, tracee: TraceeId, message: TermRef<'_>, opts: &TraceOpts<'_>);

    /// `trace_<kind>(Tag, State, Tracee, Message, Opts)`.
    fn trace_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
        message: TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) {
        let _ = category;
        self.trace(tag, tracee, message, opts);
    }

    /// `trace(seq_trace, State, Label, Info, Opts)`: a sequential trace
    /// event for the system sequential tracer; `info` is `{Kind, {LastCnt,
    /// Serial}, From, To, Msg}`.
    fn trace_seq(&self, label: TermRef<'_>, info: TermRef<'_>, opts: &TraceOpts<'_>);

    /// What `trace:info/3` shows as the tracer: a pid or port for
    /// `erl_tracer`, `{Module, State}` for others.
    fn to_term(&self, heap: &mut Heap) -> Word;

    /// Is this tracer a local process? Only a process takes system
    /// monitor messages ([`Tracer::monitor`]), so `trace:system/3` refuses
    /// a session whose tracer is not one.
    fn is_process(&self) -> bool {
        false
    }

    /// A system monitor message, `{monitor, Pid, Event, Info}`, sent as a
    /// plain message (not a trace event: no `enabled` check, no options).
    /// Only a process takes it; the default drops it.
    fn monitor(&self, message: TermRef<'_>) {
        let _ = message;
    }

    /// Does `trace` always return at once (it never waits for a lock, a
    /// full queue, I/O)? Inside a breakpoint hit the core delivers to a
    /// tracer that says so at once; to any other, it keeps the messages
    /// (copied) until the hit is over, so that however long `trace` takes,
    /// no pattern change waits for it. The default, `false`, is always
    /// safe; a fast tracer saves a copy per message by saying `true`.
    fn never_blocks(&self) -> bool {
        false
    }

    /// Is this the core's wrapper that contains a tracer's panics? Only
    /// the core's own wrapper says yes; a tracer never needs to.
    #[doc(hidden)]
    fn is_contained(&self) -> bool {
        false
    }

    /// Is this the same tracer as `other` (same module and state, so the
    /// same [`Tracer::to_term`])?
    fn same_as(&self, other: &dyn Tracer) -> bool {
        let mut a = Heap::new();
        let mut b = Heap::new();
        let (x, y) = (self.to_term(&mut a), other.to_term(&mut b));
        a.view(x).eq_exact(&b.view(y))
    }
}

/// Is `tracer` enabled for `tag` on `tracee`, checking `trace_status`
/// first as ERTS does before every call trace?
///
/// `Remove` from either check is `Remove`: ERTS's `is_tracer_ref_enabled`
/// takes any answer to an event other than `trace` and `discard` as
/// `remove`. Only the caller knows whether the tracer really goes (ERTS
/// removes it only from the process that is running, e.g. at a call, not
/// at process events).
#[inline]
pub(crate) fn status_then(
    tracer: &dyn Tracer,
    category: TraceCategory,
    tag: TraceTag,
    tracee: TraceeId,
) -> Enabled {
    tracer.status_then_kind(category, tag, tracee)
}
