//! Trace sessions: independent sets of trace settings, each with its own
//! tracer (OTP 27's `trace:session_create/3`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use arc_swap::ArcSwap;
use matchspec::term::{Atom, Heap, Word};
use parking_lot::Mutex;

use crate::model::trace_spec::TraceSpec;

use crate::model::flags::TraceFlags;
use crate::model::system_monitor::SystemState;
use crate::model::tracer::{Enabled, TraceTag, TraceeId, TracerRef};

/// A session's number, unique for the core's lifetime (ERTS's weak id).
/// The legacy session is number 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u32);

/// One trace session.
///
/// Everything a session sets (process flags, function patterns) lives with
/// the things it is set on and names the session; destroying a session
/// marks it dead at once (every trace point checks that before acting) and
/// then removes its settings everywhere.
#[derive(Debug)]
pub struct Session {
    id: SessionId,
    name: Atom,
    tracer: Option<TracerRef>,
    alive: AtomicBool,
    trace_control_word: AtomicU32,
    pub(crate) new_processes: Mutex<NewTracing>,
    pub(crate) new_ports: Mutex<NewTracing>,
    pub(crate) send_pattern: ArcSwap<EventPattern>,
    pub(crate) receive_pattern: ArcSwap<EventPattern>,
    pub(crate) system: Mutex<SystemState>,
}

/// A session's send or receive trace pattern (`trace:send/3`,
/// `trace:recv/3`). Sessions start with both on, without a match spec.
#[derive(Clone, Debug)]
pub enum EventPattern {
    /// `false`: events of this kind are not traced.
    Off,
    /// `true`: every event is traced.
    On,
    /// Events the match spec selects are traced.
    Spec(Arc<TraceSpec>),
}

/// The flags and tracer new processes (or ports) get from a session.
#[derive(Debug, Default, Clone)]
pub(crate) struct NewTracing {
    pub(crate) flags: TraceFlags,
    pub(crate) tracer: Option<TracerRef>,
}

impl NewTracing {
    /// Sets `flags` with `tracer` (`on`), or turns tracing of new
    /// processes off altogether: ERTS's `erts_change_new_p_tracing` sets
    /// the command's tracer either way, and a command turning flags off
    /// has none, which takes every flag with it. Without flags left,
    /// nothing is traced and the tracer is dropped (so the tracer is set
    /// exactly when some flag is).
    pub(crate) fn change(&mut self, on: bool, flags: TraceFlags, tracer: Option<TracerRef>) {
        if on {
            self.flags |= flags;
            self.tracer = tracer;
        } else {
            self.tracer = None;
        }
        if self.flags.is_empty() || self.tracer.is_none() {
            *self = NewTracing::default();
        }
    }
}

/// `tracer`, unless it answers `remove` to `trace_status`.
fn live_tracer(tracer: Option<TracerRef>) -> Option<TracerRef> {
    tracer.filter(|t| t.enabled(TraceTag::TraceStatus, TraceeId::Undefined) != Enabled::Remove)
}

/// What new processes or ports get now. ERTS asks the tracer's
/// `trace_status` (about tracee `undefined`) whenever it reads these
/// settings, at a spawn, an open or `trace:info`, and a tracer that answers
/// `remove` (a tracer process that died) takes them away: nothing new is
/// traced by it. The tracer is asked outside the lock; the settings go only
/// if nobody changed them meanwhile.
fn current_new_tracing(slot: &Mutex<NewTracing>) -> NewTracing {
    let now = slot.lock().clone();
    let Some(tracer) = &now.tracer else { return now };
    if tracer.enabled(TraceTag::TraceStatus, TraceeId::Undefined) != Enabled::Remove {
        return now;
    }
    let mut slot = slot.lock();
    if slot.tracer.as_ref().is_some_and(|t| Arc::ptr_eq(t, tracer)) {
        *slot = NewTracing::default();
    }
    slot.clone()
}

/// A shared session.
pub type SessionRef = Arc<Session>;

impl Session {
    pub(crate) fn new(id: SessionId, name: Atom, tracer: Option<TracerRef>) -> Session {
        Session {
            id,
            name,
            tracer,
            alive: AtomicBool::new(true),
            trace_control_word: AtomicU32::new(0),
            new_processes: Mutex::new(NewTracing::default()),
            new_ports: Mutex::new(NewTracing::default()),
            send_pattern: ArcSwap::from_pointee(EventPattern::On),
            receive_pattern: ArcSwap::from_pointee(EventPattern::On),
            system: Mutex::new(SystemState::default()),
        }
    }

    /// The flags and tracer a process spawned now gets from the session.
    pub(crate) fn new_processes(&self) -> NewTracing {
        current_new_tracing(&self.new_processes)
    }

    /// `trace:process/4` on `new` or `all`: see [`NewTracing::change`].
    /// ERTS then reads the settings back, which asks the tracer: one that
    /// answers `remove` (a dead one) takes them away at once. (Asked
    /// before the lock is taken, as every reader does.)
    pub(crate) fn change_new_processes(
        &self,
        on: bool,
        flags: TraceFlags,
        tracer: Option<TracerRef>,
    ) {
        self.new_processes.lock().change(on, flags, live_tracer(tracer));
    }

    /// `trace:port/4` on `new` or `all`, as [`Session::change_new_processes`].
    pub(crate) fn change_new_ports(&self, on: bool, flags: TraceFlags, tracer: Option<TracerRef>) {
        self.new_ports.lock().change(on, flags, live_tracer(tracer));
    }

    /// The flags and tracer a port opened now gets from the session.
    pub(crate) fn new_ports(&self) -> NewTracing {
        current_new_tracing(&self.new_ports)
    }

    /// Are flags for new processes (`ports`: new ports) set, as
    /// `trace:session_info/1` sees them: without asking the tracer, so a
    /// dead tracer's settings still count until something reads them.
    pub(crate) fn has_new_settings(&self, ports: bool) -> bool {
        let slot = if ports { &self.new_ports } else { &self.new_processes };
        !slot.lock().flags.is_empty()
    }

    /// The session's number.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The session's name.
    pub fn name(&self) -> Atom {
        self.name
    }

    /// The session's tracer; `None` for the legacy session and sessions
    /// created with tracer `undefined`, whose tracer is given per process.
    pub fn tracer(&self) -> Option<&TracerRef> {
        self.tracer.as_ref()
    }

    /// Is this the legacy session of `erlang:trace/3`?
    pub fn is_legacy(&self) -> bool {
        self.id == SessionId(0)
    }

    /// Has the session not been destroyed?
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    pub(crate) fn kill(&self) -> bool {
        self.alive.swap(false, Ordering::AcqRel)
    }

    /// The session's trace control word (`get_tcw`/`set_tcw` in specs).
    pub fn trace_control_word(&self) -> u32 {
        self.trace_control_word.load(Ordering::Relaxed)
    }

    /// Replaces the trace control word, returning the old one.
    pub fn set_trace_control_word(&self, value: u32) -> u32 {
        self.trace_control_word.swap(value, Ordering::Relaxed)
    }

    /// The send pattern.
    pub fn send_pattern(&self) -> Arc<EventPattern> {
        self.send_pattern.load_full()
    }

    /// The receive pattern.
    pub fn receive_pattern(&self) -> Arc<EventPattern> {
        self.receive_pattern.load_full()
    }

    /// What the session monitors (`trace:system/3`).
    pub fn system_monitor(&self) -> crate::model::system_monitor::SystemMonitor {
        self.system.lock().settings
    }

    /// Is some process in a long message queue state for the session?
    pub fn has_long_queues(&self) -> bool {
        !self.system.lock().long_queues.is_empty()
    }

    /// The weak reference `{Name, WeakId}` (`{legacy, default}` for the
    /// legacy session), as `trace:session_info/1` lists sessions.
    pub fn weak_ref(&self, heap: &mut Heap) -> Word {
        let id = if self.is_legacy() {
            Word::atom(Atom::new("default"))
        } else {
            heap.int(i64::from(self.id.0))
        };
        heap.tuple(&[Word::atom(self.name), id])
    }
}
