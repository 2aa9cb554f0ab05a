//! Breakpoints: per function, one record with two generations of settings.
//!
//! This is ERTS's `GenericBp` design. Every function the host declares gets
//! a [`FunctionEntry`]. Its `installed` word is all an untraced call costs:
//! one atomic load and a branch ([`FunctionEntry::is_traced`]). A traced
//! function's settings live in two slots, one per generation: threads
//! hitting the breakpoint read the *active* generation's slot; changes are
//! written to the *staging* slot of every function they touch and become
//! visible together when the core switches generations (one atomic store).
//! See the `core` module for the staging protocol and how old generations are
//! reclaimed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use arc_swap::{ArcSwapOption, Guard};
use matchspec::term::Atom;

use crate::model::counters::CallStats;
use crate::model::ids::Mfa;
use crate::model::session::SessionRef;
use crate::model::trace_spec::TraceSpec;
use crate::model::tracer::TracerRef;

bitflags::bitflags! {
    /// What a session's breakpoint on a function does (ERTS's `ERTS_BPF_*`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct BpFlags: u16 {
        /// `local` call trace: every call, local or remote.
        const LOCAL = 1 << 0;
        /// Meta trace, to the breakpoint's own tracer.
        const META = 1 << 1;
        /// `call_count` is set.
        const COUNT = 1 << 2;
        /// `call_count` is counting (cleared by `pause`).
        const COUNT_ACTIVE = 1 << 3;
        /// `call_time` is set.
        const TIME = 1 << 4;
        /// `call_time` is accumulating.
        const TIME_ACTIVE = 1 << 5;
        /// `global` call trace: remote calls of an exported function.
        const GLOBAL = 1 << 6;
        /// `call_memory` is set.
        const MEMORY = 1 << 7;
        /// `call_memory` is accumulating.
        const MEMORY_ACTIVE = 1 << 8;
    }
}

impl BpFlags {
    /// Call trace of either kind.
    pub const CALL_TRACE: BpFlags = BpFlags::LOCAL.union(BpFlags::GLOBAL);
    /// Everything that is "local" in ERTS's sense: set on the code, not on
    /// the export entry, and exclusive with `global`.
    pub const LOCAL_KINDS: BpFlags = BpFlags::LOCAL
        .union(BpFlags::META)
        .union(BpFlags::COUNT)
        .union(BpFlags::COUNT_ACTIVE)
        .union(BpFlags::TIME)
        .union(BpFlags::TIME_ACTIVE)
        .union(BpFlags::MEMORY)
        .union(BpFlags::MEMORY_ACTIVE);
}

/// A meta tracer that a breakpoint can drop while threads are using it
/// (when the tracer answers `remove`, the breakpoint's meta trace ends).
#[derive(Debug, Default)]
pub struct MetaTracer {
    tracer: ArcSwapOption<TracerRef>,
}

impl MetaTracer {
    pub(crate) fn new(tracer: TracerRef) -> MetaTracer {
        MetaTracer { tracer: ArcSwapOption::from_pointee(tracer) }
    }

    /// The tracer, unless it was removed.
    pub fn get(&self) -> Option<TracerRef> {
        self.tracer.load().as_deref().cloned()
    }

    pub(crate) fn remove(&self) {
        self.tracer.store(None);
    }
}

/// One session's settings on one function, in one generation.
#[derive(Clone, Debug)]
pub struct SessionBreakpoint {
    /// The session.
    pub session: SessionRef,
    /// What the breakpoint does.
    pub flags: BpFlags,
    /// The match spec of `local` or `global` call trace (`None`: trace
    /// every call).
    pub match_spec: Option<Arc<TraceSpec>>,
    /// The match spec of meta trace.
    pub meta_spec: Option<Arc<TraceSpec>>,
    /// Where meta trace goes.
    pub meta_tracer: Option<Arc<MetaTracer>>,
    /// The call counter (shared by both generations, as in ERTS, so a
    /// change of other settings does not lose counts).
    pub count: Option<Arc<AtomicU64>>,
    /// The `call_time` totals (shared by both generations, like `count`).
    pub time: Option<Arc<CallStats>>,
    /// The `call_memory` totals (shared by both generations, like `count`).
    pub memory: Option<Arc<CallStats>>,
}

impl SessionBreakpoint {
    pub(crate) fn new(session: SessionRef) -> SessionBreakpoint {
        SessionBreakpoint {
            session,
            flags: BpFlags::empty(),
            match_spec: None,
            meta_spec: None,
            meta_tracer: None,
            count: None,
            time: None,
            memory: None,
        }
    }
}

/// One generation of a function's breakpoint: the settings of every
/// session that traces it.
#[derive(Clone, Debug, Default)]
pub struct Breakpoint {
    /// One entry per session with any flag set.
    pub sessions: Vec<SessionBreakpoint>,
}

impl Breakpoint {
    /// The settings of `session`, if it has any here.
    pub fn session(&self, session: &SessionRef) -> Option<&SessionBreakpoint> {
        self.sessions.iter().find(|s| Arc::ptr_eq(&s.session, session))
    }
}

/// A function of a module the host declares
/// (`TraceCore::declare_module`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Function {
    /// Its name.
    pub name: Atom,
    /// How many arguments it takes.
    pub arity: u8,
    /// Can other modules call it (`M:F(...)`), and trace it `global`ly?
    pub exported: bool,
    /// Is it a built-in function? BIFs trace as other functions, but
    /// before OTP 28.2 their call trace was not each session's own
    /// ([`Change::BifTracePerSession`](matchspec::Change::BifTracePerSession)).
    pub bif: bool,
}

impl Function {
    /// An exported function.
    pub fn exported(name: &str, arity: u8) -> Function {
        Function { name: Atom::new(name), arity, exported: true, bif: false }
    }

    /// A function only its module calls.
    pub fn local(name: &str, arity: u8) -> Function {
        Function { name: Atom::new(name), arity, exported: false, bif: false }
    }

    /// A built-in function (exported).
    pub fn bif(name: &str, arity: u8) -> Function {
        Function { name: Atom::new(name), arity, exported: true, bif: true }
    }
}

/// A function the host declared, and its breakpoint.
#[derive(Debug)]
pub struct FunctionEntry {
    mfa: Mfa,
    exported: bool,
    bif: bool,
    installed: AtomicBool,
    /// Does the breakpoint act when installed? Only a BIF's can stop
    /// acting (OTP 27, see [`FunctionEntry::arm`]).
    armed: AtomicBool,
    generations: [ArcSwapOption<Breakpoint>; 2],
    /// The entry itself: processes accumulating call time or memory hold
    /// the function they accumulate into.
    this: Weak<FunctionEntry>,
}

impl FunctionEntry {
    pub(crate) fn new(mfa: Mfa, exported: bool, bif: bool) -> Arc<FunctionEntry> {
        Arc::new_cyclic(|this| FunctionEntry {
            mfa,
            exported,
            bif,
            installed: AtomicBool::new(false),
            armed: AtomicBool::new(true),
            generations: [ArcSwapOption::empty(), ArcSwapOption::empty()],
            this: this.clone(),
        })
    }

    /// The shared entry (`None` only while it is being dropped).
    pub(crate) fn shared(&self) -> Option<Arc<FunctionEntry>> {
        self.this.upgrade()
    }

    /// The entry, weakly (names it without keeping it).
    pub(crate) fn weak(&self) -> Weak<FunctionEntry> {
        self.this.clone()
    }

    /// The function.
    pub fn mfa(&self) -> Mfa {
        self.mfa
    }

    /// Is it exported (can it be called remotely and traced `global`ly)?
    pub fn is_exported(&self) -> bool {
        self.exported
    }

    /// Is a breakpoint installed? This is the whole cost of calling an
    /// untraced function: the host checks it and calls
    /// `Process::call`'s slow path only when it holds. An
    /// installed breakpoint may still do nothing in the active generation.
    #[inline]
    pub fn is_traced(&self) -> bool {
        self.installed.load(Ordering::Acquire) && self.armed.load(Ordering::Acquire)
    }

    /// Is it a built-in function?
    pub fn is_bif(&self) -> bool {
        self.bif
    }

    /// OTP 27's BIF tracing: one switch per BIF, not per session. A
    /// command turning a pattern on the BIF off in any session disarms
    /// its breakpoint for all (their settings stay, and `trace:info/3`
    /// still shows them); one turning a pattern on arms it again.
    pub(crate) fn arm(&self, on: bool) {
        debug_assert!(self.bif);
        self.armed.store(on, Ordering::Release);
    }

    pub(crate) fn install(&self, on: bool) {
        self.installed.store(on, Ordering::Release);
    }

    /// The breakpoint in generation slot `index`.
    pub(crate) fn slot(&self, index: usize) -> Guard<Option<Arc<Breakpoint>>> {
        self.generations[index].load()
    }

    /// The breakpoint in slot `index`, as an owned reference.
    pub(crate) fn slot_full(&self, index: usize) -> Option<Arc<Breakpoint>> {
        self.generations[index].load_full()
    }

    pub(crate) fn set_slot(&self, index: usize, breakpoint: Option<Arc<Breakpoint>>) {
        self.generations[index].store(breakpoint);
    }
}
