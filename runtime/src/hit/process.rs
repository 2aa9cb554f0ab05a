//! [`Process`]: a traced process as its host thread drives it. The host
//! reports calls, returns and exceptions; the core hits breakpoints, keeps
//! the trace frames ERTS keeps on the stack, and emits call, `return_from`,
//! `exception_from` and `return_to` messages.

use std::sync::Arc;

use matchspec::term::{Atom, Heap, Space, Term, TermRef, Word};
use matchspec::{Outcome, Run, Scratch};

use crate::core::pin::HitPin;
use crate::core::{HitGuard, TraceCore};
use crate::hit::accounting::{Here, ProcessCounters};
use crate::hit::bp_cache::BreakpointCache;
use crate::hit::host::ProcessHost;
use crate::model::breakpoint::{BpFlags, Breakpoint, FunctionEntry, MetaTracer, SessionBreakpoint};
use crate::model::flags::{TimestampKind, TraceFlags};
use crate::model::ids::{Mfa, Pid};
use crate::model::session::{SessionId, SessionRef};
use crate::model::trace_spec::TraceSpec;
use crate::model::tracee::{LinksCache, LinksOf, Tracee, TracerLink};
use crate::model::tracer::{Enabled, TraceCategory, TraceOpts, TraceTag, TraceeId, TracerRef};

mod watched;

pub use crate::hit::frames::CallStack;
use crate::hit::frames::{Callers, Frame, FrameTracer, ReturnTrace, active_functions};

pub use watched::{StackKeeper, Watch};

/// How a call reaches its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reach {
    /// `M:F(...)`, through the module's export: `global` call trace sees
    /// it (if `F` is exported), `local` call trace too.
    Remote,
    /// `F(...)` inside the module: only `local` call trace sees it.
    Local,
}

/// How a call is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallStyle {
    /// A body call: the caller goes on when the callee returns.
    Body,
    /// A tail call: the caller's frame is replaced by the callee's.
    Tail,
    /// A body call inside `try ... catch`: an exception unwinding out of
    /// the callee is caught in the caller.
    Try,
}

/// How an exception ended.
#[derive(Clone, Debug)]
pub enum Raised {
    /// A `try` in this function caught it; the function goes on.
    Caught(Mfa),
    /// Nothing caught it: the process exited with this reason.
    Exited(Term),
}

/// The host did something its stack does not allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum StackError {
    /// A return, raise or tail call with no active function.
    #[error("the process has no active function")]
    NoActiveFunction,
    /// An event for a process that has exited.
    #[error("the process has exited")]
    Exited,
    /// A call, return or raise reported the core's way
    /// ([`Process::call`]) for a process whose host keeps its stack.
    #[error("the host keeps this process's stack: report traced calls and watched frames only")]
    HostKeepsStack,
    /// A traced call or watched frame reported for a process whose stack
    /// the core keeps.
    #[error("the core keeps this process's stack: report every call, return and raise")]
    CoreKeepsStack,
    /// A watched return, tail call or unwinding with fewer watched frames
    /// than it names.
    #[error("the process has no such watched frame")]
    NoWatchedFrame,
}

/// What a call's trace asked for (ERTS's `MATCH_SET_*` return flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ReturnFlags {
    return_trace: bool,
    exception_trace: bool,
    return_to: bool,
}

/// What a match spec decided about a call.
enum Decision<'a> {
    /// Trace the call (no spec, or `true`).
    Trace,
    /// Do not send the call message.
    Skip,
    /// Trace it with this extra term (read where the run left it: the
    /// tracer copies what it keeps).
    Message(TermRef<'a>),
}

/// A process as the thread running it sees it.
///
/// Not shared: one host thread drives a process at a time (`&mut self`).
/// Its trace settings ([`Tracee`]) are shared with the rest of the core.
#[derive(Debug)]
pub struct Process {
    core: Arc<TraceCore>,
    pid: Pid,
    tracee: Arc<Tracee>,
    /// The tracee's links, as this process saw them last.
    links: LinksCache,
    stack: Vec<Frame>,
    scratch: Scratch,
    /// Where trace messages are built, reused from call to call (in the
    /// scratch space, so that they can point at the host's arguments).
    message: Heap,
    /// What hits pin generations with (`None` until the first hit).
    pin: Option<Arc<HitPin>>,
    /// The breakpoints of the functions it hit lately.
    breakpoints: BreakpointCache,
    scheduler_id: u32,
    counters: ProcessCounters,
    /// The host keeps the stack ([`Process::keep_own_stack`]): `stack`
    /// holds only the watched frames and the trace frames under them.
    host_keeps_stack: bool,
    /// The length of its message queue, as the host reported it last.
    pub(crate) queue_len: u64,
}

impl Process {
    pub(crate) fn new(
        core: Arc<TraceCore>,
        pid: Pid,
        tracee: Arc<Tracee>,
        initial: Option<Mfa>,
    ) -> Process {
        let stack =
            initial.map(|mfa| Frame::Function { mfa, catches: false }).into_iter().collect();
        let counters = ProcessCounters::new(initial);
        Process {
            core,
            pid,
            links: LinksCache::new(LinksOf(tracee.clone())),
            tracee,
            stack,
            scratch: Scratch::new(),
            message: Heap::in_space(Space::Scratch),
            pin: None,
            breakpoints: BreakpointCache::default(),
            scheduler_id: 1,
            counters,
            host_keeps_stack: false,
            queue_len: 0,
        }
    }

    /// The process's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Its shared trace settings.
    pub fn tracee(&self) -> &Arc<Tracee> {
        &self.tracee
    }

    /// Which scheduler runs it (what `scheduler_id` reports).
    pub fn set_scheduler_id(&mut self, id: u32) {
        self.scheduler_id = id;
    }

    pub(crate) fn scheduler_id(&self) -> u32 {
        self.scheduler_id
    }

    pub(crate) fn core(&self) -> &Arc<TraceCore> {
        &self.core
    }

    /// The parts a match-spec host borrows, apart.
    pub(crate) fn parts(&mut self) -> (&TraceCore, &Arc<Tracee>, &[Frame], &mut Scratch) {
        (&self.core, &self.tracee, &self.stack, &mut self.scratch)
    }

    /// The active functions, innermost first, as the core's copy of the
    /// stack has them (only the watched ones when the host keeps the
    /// stack).
    pub fn functions(&self) -> impl Iterator<Item = Mfa> + '_ {
        active_functions(&self.stack)
    }

    /// How many frames the core keeps, trace frames included.
    pub fn stack_depth(&self) -> usize {
        self.stack.len()
    }

    /// The process calls `entry` with `args` (a list), remotely (`M:F(...)`)
    /// or locally, as `reach` says.
    #[inline]
    pub fn call(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        style: CallStyle,
    ) -> Result<(), StackError> {
        self.core_keeps_stack()?;
        match style {
            CallStyle::Body => {}
            CallStyle::Tail => match self.stack.last() {
                Some(Frame::Function { .. }) => {
                    self.stack.pop();
                }
                _ => return Err(StackError::NoActiveFunction),
            },
            CallStyle::Try => match self.stack.last_mut() {
                Some(Frame::Function { catches, .. }) => *catches = true,
                _ => return Err(StackError::NoActiveFunction),
            },
        }
        if entry.is_traced() {
            self.hit(entry, args, reach, None);
        }
        self.stack.push(Frame::Function { mfa: entry.mfa(), catches: false });
        Ok(())
    }

    /// Fails unless the process is alive and the core keeps its stack.
    #[inline]
    fn core_keeps_stack(&self) -> Result<(), StackError> {
        if !self.tracee.is_alive() {
            return Err(StackError::Exited);
        }
        if self.host_keeps_stack {
            return Err(StackError::HostKeepsStack);
        }
        Ok(())
    }

    /// The innermost function returns `value`.
    #[inline]
    pub fn return_value(&mut self, value: TermRef<'_>) -> Result<(), StackError> {
        self.core_keeps_stack()?;
        match self.stack.last() {
            Some(Frame::Function { .. }) => {
                // A function frame owns nothing: forgetting it skips the
                // drop glue on the hottest path of every host.
                std::mem::forget(self.stack.pop());
            }
            _ => return Err(StackError::NoActiveFunction),
        }
        // Trace frames between it and the function returned to.
        while let Some(frame) = self.pop_trace_frame() {
            self.on_return_frame(frame, value, None);
        }
        if let Some(Frame::Function { catches, .. }) = self.stack.last_mut() {
            // A `try` around the call is over.
            *catches = false;
        }
        if self.stack.is_empty() {
            let normal = Term::atom(Atom::new("normal"));
            self.emit_exit(normal.as_ref());
            self.exit();
        }
        Ok(())
    }

    /// The trace frame on top of the stack, popped; `None` if a function
    /// frame is on top, or nothing.
    fn pop_trace_frame(&mut self) -> Option<Frame> {
        match self.stack.last()? {
            Frame::Function { .. } => None,
            Frame::ReturnTrace(_) | Frame::ReturnTo { .. } | Frame::CallAcc { .. } => {
                self.stack.pop()
            }
        }
    }

    /// The innermost function raises `reason` of `class` (`error`, `exit`
    /// or `throw`): frames unwind to the nearest `try`.
    pub fn raise(&mut self, class: Atom, reason: TermRef<'_>) -> Result<Raised, StackError> {
        self.core_keeps_stack()?;
        match self.stack.last() {
            Some(Frame::Function { .. }) => {
                self.stack.pop();
            }
            _ => return Err(StackError::NoActiveFunction),
        }
        let caught = self.stack.iter().any(|f| matches!(f, Frame::Function { catches: true, .. }));
        let mut unwinding = Unwinding::new(class, reason, caught);
        loop {
            match self.stack.pop() {
                None => return Ok(unwinding.end(self, None)),
                Some(Frame::Function { mfa, catches: true }) => {
                    // The catching function stays, its `try` over.
                    self.stack.push(Frame::Function { mfa, catches: false });
                    return Ok(unwinding.end(self, Some(mfa)));
                }
                Some(Frame::Function { catches: false, .. }) => {}
                Some(frame) => unwinding.trace_frame(self, frame),
            }
        }
    }

    /// The process is scheduled out: its `call_time` functions get the
    /// time they ran so far, and time stops counting for it until
    /// [`Process::schedule_in`] (ERTS's `erts_schedule_time_break`). A
    /// process starts scheduled in; scheduling out twice is scheduling out
    /// once.
    pub fn schedule_out(&mut self) {
        if !self.tracee.is_alive() {
            return;
        }
        let generation = self.core.active();
        let here = Here::of(&self.core, self.pid, self.scheduler_id, generation.index);
        self.counters.schedule_out(&here);
    }

    /// The process is scheduled in: `call_time` counts again from now.
    /// (A host that reports calls of a process it has not scheduled in
    /// gets them counted as if it had.)
    pub fn schedule_in(&mut self) {
        self.counters.schedule_in(self.core.clock().as_ref());
    }

    /// The process allocated `words` heap words (what `call_memory`
    /// accounts: the function accumulating at the next accounting point
    /// gets them). As in ERTS, the first memory-traced call of the
    /// function the process started in (`initial` at spawn) also gets the
    /// words allocated before it.
    pub fn allocated(&mut self, words: u64) -> Result<(), StackError> {
        if !self.tracee.is_alive() {
            return Err(StackError::Exited);
        }
        self.counters.allocate(words);
        Ok(())
    }

    /// The process exits: it is traced no more.
    pub fn exit(&mut self) {
        self.stack.clear();
        self.forget_queue();
        self.core.forget_process(self.pid());
    }

    // ---- Breakpoint hits ----------------------------------------------------------

    /// A call of a function with an installed breakpoint.
    #[inline(never)]
    fn hit(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        host: Option<&dyn CallStack>,
    ) {
        // Dropped last, after the pin is released: messages kept during the
        // hit go out then, so a tracer that takes its time holds up no commit.
        let _in_hit = HitGuard::enter();
        let pin = self.pin.take().unwrap_or_else(|| self.core.pins.register());
        let pinned = self.core.pins.pin(pin);
        let breakpoint = self.breakpoints.take(entry, pinned.number());
        if let Some(breakpoint) = &breakpoint {
            self.hit_sessions(entry, breakpoint, args, reach, pinned.index(), host);
        }
        self.breakpoints.put_back(entry, pinned.number(), breakpoint);
        self.pin = Some(pinned.unpin());
    }

    /// The sessions of `entry`'s `breakpoint`, read in generation slot
    /// `generation`.
    fn hit_sessions(
        &mut self,
        entry: &FunctionEntry,
        breakpoint: &Breakpoint,
        args: TermRef<'_>,
        reach: Reach,
        generation: usize,
        host: Option<&dyn CallStack>,
    ) {
        // ERTS runs the export entry's breakpoints (global) before the
        // code's, each list newest first (the order `sessions` keeps).
        if let [sbp] = breakpoint.sessions.as_slice() {
            // One session, the usual case: no order to work out.
            return self.hit_session(entry, sbp, args, reach, generation, host);
        }
        let global = |s: &&SessionBreakpoint| s.flags.contains(BpFlags::GLOBAL);
        let sessions = breakpoint.sessions.iter();
        for sbp in sessions.clone().filter(global).chain(sessions.filter(|s| !global(s))) {
            self.hit_session(entry, sbp, args, reach, generation, host);
        }
    }

    /// One session's breakpoint `sbp` on `entry`.
    #[inline]
    fn hit_session(
        &mut self,
        entry: &FunctionEntry,
        sbp: &SessionBreakpoint,
        args: TermRef<'_>,
        reach: Reach,
        generation: usize,
        host: Option<&dyn CallStack>,
    ) {
        if !sbp.session.is_alive() {
            return;
        }
        let mfa = entry.mfa();
        let mut flags = sbp.flags;
        if reach == Reach::Local {
            // Global trace sits on the export entry: remote calls only.
            flags -= BpFlags::GLOBAL;
        }
        // Call trace needs the process's `call` flag in the session
        // (`trace_call` checks it); call time and memory do too.
        let accounting = BpFlags::TIME_ACTIVE | BpFlags::MEMORY_ACTIVE;
        if flags.intersects(accounting) && !self.traced_with(&sbp.session, TraceFlags::CALL) {
            flags -= accounting;
        }
        if flags.intersects(BpFlags::CALL_TRACE) {
            let local = flags.contains(BpFlags::LOCAL);
            let spec = sbp.match_spec.as_deref();
            let asked = self.trace_call(mfa, args, spec, local, &sbp.session, host);
            self.push_trace_frames(mfa, asked, &sbp.session, FrameTracer::Process);
        }
        if flags.contains(BpFlags::META)
            && let Some(meta) = &sbp.meta_tracer
            && let Some((asked, tracer)) =
                self.meta_trace_call(mfa, args, sbp.meta_spec.as_deref(), meta, &sbp.session, host)
        {
            self.push_trace_frames(mfa, asked, &sbp.session, FrameTracer::Meta(tracer));
        }
        if flags.contains(BpFlags::COUNT_ACTIVE)
            && let Some(count) = &sbp.count
        {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if flags.intersects(accounting) {
            self.account_call(entry, sbp, flags & accounting, generation);
        }
    }

    /// Does `session` trace the process with all of `flags`?
    fn traced_with(&mut self, session: &SessionRef, flags: TraceFlags) -> bool {
        let links = self.links.load();
        links
            .iter()
            .find(|l| Arc::ptr_eq(&l.session, session))
            .is_some_and(|l| l.flags.contains(flags))
    }

    /// `call_time` / `call_memory` at a call (ERTS's `erts_trace_call_acc`
    /// and the `call_trace_return` frame it pushes unless a trace frame
    /// is on top already, as after a tail call).
    fn account_call(
        &mut self,
        entry: &FunctionEntry,
        sbp: &SessionBreakpoint,
        flags: BpFlags,
        generation: usize,
    ) {
        let Some(entry) = entry.shared() else { return };
        let here = Here::of(&self.core, self.pid, self.scheduler_id, generation);
        let previous = self.counters.enter(&here, &entry, sbp, flags);
        let on_trace_frame = matches!(
            self.stack.last(),
            Some(Frame::ReturnTrace(_) | Frame::ReturnTo { .. } | Frame::CallAcc { .. })
        );
        if !on_trace_frame {
            self.stack.push(Frame::CallAcc { previous, session: sbp.session.id(), flags });
        }
    }

    /// `call_time` / `call_memory` at the return through a
    /// `call_trace_return` frame (ERTS's `erts_call_trace_return`): nothing
    /// if the process is no longer traced in the session.
    fn account_return(
        &mut self,
        session: SessionId,
        flags: BpFlags,
        previous: Option<Arc<FunctionEntry>>,
    ) {
        if !self.links.load().iter().any(|l| l.session.id() == session) {
            return;
        }
        let generation = self.core.active();
        let here = Here::of(&self.core, self.pid, self.scheduler_id, generation.index);
        self.counters.leave(&here, session, flags, previous);
    }

    /// Process call trace in `session` (ERTS's `erts_call_trace` with a
    /// tracer ref).
    fn trace_call(
        &mut self,
        mfa: Mfa,
        args: TermRef<'_>,
        spec: Option<&TraceSpec>,
        local: bool,
        session: &SessionRef,
        host: Option<&dyn CallStack>,
    ) -> ReturnFlags {
        let Process { core, tracee, links, stack, scratch, message, scheduler_id, .. } = self;
        let id = tracee.id();
        // No reference counts change on this path.
        let links = links.load();
        let Some(link) = links.iter().find(|l| Arc::ptr_eq(&l.session, session)) else {
            return ReturnFlags::default();
        };
        if !link.flags.contains(TraceFlags::CALL) {
            return ReturnFlags::default();
        }
        if !tracee.tracer_enabled(link, TraceCategory::Call, TraceTag::Call) {
            return ReturnFlags::default();
        }
        let callers = host.map_or(Callers::Core(stack), Callers::Host);
        let (decision, mut asked) =
            run_spec(core, tracee, callers, scratch, mfa, args, spec, session);
        // A spec may have changed the flags (or removed the tracer).
        let flags = if spec.is_some_and(|s| s.has_side_effects) {
            tracee.flags(session)
        } else {
            link.flags
        };
        if flags.contains(TraceFlags::SILENT) {
            return ReturnFlags::default();
        }
        let extra = match decision {
            Decision::Skip => return asked,
            Decision::Trace => None,
            Decision::Message(term) => Some(term),
        };
        if local && flags.contains(TraceFlags::RETURN_TO) {
            asked.return_to = true;
        }
        let call = call_message(message, mfa, args, flags.contains(TraceFlags::ARITY));
        let opts =
            TraceOpts { match_spec_result: extra, ..TraceOpts::for_flags(flags, *scheduler_id) };
        link.tracer.trace_kind(TraceCategory::Call, TraceTag::Call, id, call, &opts);
        asked
    }

    /// Meta trace (ERTS's `erts_call_trace` without a tracer ref): always
    /// `trace_ts` with a `timestamp`, whatever the process's flags.
    fn meta_trace_call(
        &mut self,
        mfa: Mfa,
        args: TermRef<'_>,
        spec: Option<&TraceSpec>,
        meta: &MetaTracer,
        session: &SessionRef,
        host: Option<&dyn CallStack>,
    ) -> Option<(ReturnFlags, TracerRef)> {
        let tracer = meta.get()?;
        let tracee = TraceeId::Process(self.pid());
        match tracer.enabled(TraceTag::TraceStatus, tracee) {
            Enabled::Trace => {}
            Enabled::Discard => return None,
            Enabled::Remove => {
                meta.remove();
                return None;
            }
        }
        if tracer.enabled_kind(TraceCategory::Call, TraceTag::Call, tracee) != Enabled::Trace {
            return None;
        }
        let Process { core, tracee: process, stack, scratch, message, .. } = self;
        let callers = host.map_or(Callers::Core(stack), Callers::Host);
        let (decision, asked) = run_spec(core, process, callers, scratch, mfa, args, spec, session);
        let extra = match decision {
            Decision::Skip => return Some((asked, tracer)),
            Decision::Trace => None,
            Decision::Message(term) => Some(term),
        };
        let call = call_message(message, mfa, args, false);
        let opts = TraceOpts {
            extra: None,
            match_spec_result: extra,
            scheduler_id: None,
            timestamp: Some(TimestampKind::Now),
        };
        tracer.trace_kind(TraceCategory::Call, TraceTag::Call, tracee, call, &opts);
        Some((asked, tracer))
    }

    /// Pushes the return frames a call trace asked for.
    #[inline]
    fn push_trace_frames(
        &mut self,
        mfa: Mfa,
        asked: ReturnFlags,
        session: &SessionRef,
        tracer: FrameTracer,
    ) {
        if asked == ReturnFlags::default() {
            // Most calls ask for none: no call for them.
            return;
        }
        self.push_asked_frames(mfa, asked, session, tracer);
    }

    fn push_asked_frames(
        &mut self,
        mfa: Mfa,
        asked: ReturnFlags,
        session: &SessionRef,
        tracer: FrameTracer,
    ) {
        if asked.return_to && !self.return_to_on_top(session) {
            self.stack.push(Frame::ReturnTo { session: session.clone() });
        }
        if asked.return_trace || asked.exception_trace {
            self.stack.push(Frame::ReturnTrace(Box::new(ReturnTrace {
                mfa,
                session: session.clone(),
                tracer,
                exception: asked.exception_trace,
            })));
        }
    }

    /// Is a `return_to` frame of `session` among the trace frames on top
    /// of the stack? (After a tail call it is, and one is enough.)
    fn return_to_on_top(&self, session: &SessionRef) -> bool {
        for frame in self.stack.iter().rev() {
            match frame {
                Frame::Function { .. } => return false,
                Frame::ReturnTo { session: s } if Arc::ptr_eq(s, session) => return true,
                Frame::ReturnTo { .. } | Frame::ReturnTrace(_) | Frame::CallAcc { .. } => {}
            }
        }
        false
    }

    // ---- Return messages ----------------------------------------------------------

    /// Pops the trace frame `frame` at a return with `value`; `host` is
    /// the host's stack (the function returned to on top) if it keeps it.
    fn on_return_frame(&mut self, frame: Frame, value: TermRef<'_>, host: Option<&dyn CallStack>) {
        match frame {
            Frame::ReturnTrace(frame) => {
                let ReturnTrace { mfa, session, tracer, .. } = *frame;
                self.emit_return(&session, &tracer, mfa, TraceTag::ReturnFrom, value);
            }
            Frame::ReturnTo { session } => {
                let into = match host {
                    Some(stack) => stack.function(0),
                    None => self.functions().next(),
                };
                self.emit_return_to(&session, into);
            }
            Frame::CallAcc { previous, session, flags } => {
                self.account_return(session, flags, previous);
            }
            Frame::Function { .. } => unreachable!("only trace frames are handed here"),
        }
    }

    /// `return_from` or `exception_from` of `mfa`, with `extra` (the value,
    /// or `{Class, Reason}`).
    fn emit_return(
        &mut self,
        session: &SessionRef,
        tracer: &FrameTracer,
        mfa: Mfa,
        tag: TraceTag,
        extra: TermRef<'_>,
    ) {
        let Process { tracee, links, message, scheduler_id, .. } = self;
        let id = tracee.id();
        // A process frame reports through the process's link in the
        // session, as it is now (a destroyed session has none, and without
        // `call` there is no report); a meta frame to the tracer it
        // captured, session or not (`erts_trace_return` with a tracer).
        let (tracer, flags) = match tracer {
            FrameTracer::Process => match live_link(links, session) {
                Some(link) if link.flags.contains(TraceFlags::CALL) => (&link.tracer, link.flags),
                _ => return,
            },
            FrameTracer::Meta(tracer) => (tracer, TraceFlags::CALL | TraceFlags::TIMESTAMP),
        };
        // ERTS asks the tracer nothing here (`erts_trace_return`,
        // `erts_trace_exception`): the call it allowed decides.
        message.clear();
        let root = mfa.to_word(message);
        let opts = TraceOpts { extra: Some(extra), ..TraceOpts::for_flags(flags, *scheduler_id) };
        tracer.trace_kind(TraceCategory::Call, tag, id, message.view(root), &opts);
    }

    /// `{trace, Pid, exit, Reason}` to every session tracing `procs`.
    fn emit_exit(&mut self, reason: TermRef<'_>) {
        crate::hit::procs::trace_procs(&self.tracee, TraceTag::Exit, reason, None);
    }

    /// `return_to` into `into` (`undefined` when it is not a function).
    fn emit_return_to(&mut self, session: &SessionRef, into: Option<Mfa>) {
        let Process { tracee, links, message, scheduler_id, .. } = self;
        let id = tracee.id();
        // Only the `return_to` flag counts now (`i_return_to_trace`):
        // `call` and `silent` were decided when the frame was pushed.
        let Some(link) = live_link(links, session) else { return };
        if !link.flags.contains(TraceFlags::RETURN_TO) {
            return;
        }
        // No enabled check either (`erts_trace_return_to`).
        message.clear();
        let root = match into {
            Some(mfa) => mfa.to_word(message),
            None => Word::atom(Atom::UNDEFINED),
        };
        let opts = TraceOpts::for_flags(link.flags, *scheduler_id);
        link.tracer.trace_kind(
            TraceCategory::Call,
            TraceTag::ReturnTo,
            id,
            message.view(root),
            &opts,
        );
    }
}

/// The process's link in `session`, if the session is alive and traces it
/// (ERTS finds the tracer ref from the frame's session id; a destroyed
/// session's refs are gone).
fn live_link<'a>(links: &'a mut LinksCache, session: &SessionRef) -> Option<&'a TracerLink> {
    if !session.is_alive() {
        return None;
    }
    links.load().iter().find(|l| Arc::ptr_eq(&l.session, session))
}

/// An exception on its way down the stack.
struct Unwinding<'a> {
    class: Atom,
    /// The reason as raised.
    raised: TermRef<'a>,
    /// The reason an uncaught throw became.
    nocatch: Option<Term>,
    /// The sessions of the `return_to` frames unwound so far, which get
    /// a `return_to` into the function that catches.
    marked: Vec<SessionRef>,
}

impl<'a> Unwinding<'a> {
    /// An exception of `class` with `reason`, `caught` somewhere or not.
    /// A throw that nothing will catch is an error from the start, as in
    /// the BEAM: `{nocatch, Reason}`.
    fn new(class: Atom, raised: TermRef<'a>, caught: bool) -> Unwinding<'a> {
        if class.name() == "throw" && !caught {
            let mut heap = Heap::new();
            let value = raised.copy_to(&mut heap);
            let nocatch = heap.tuple(&[Word::atom(Atom::new("nocatch")), value]);
            let nocatch = Some(Term::from_parts(heap, nocatch));
            return Unwinding { class: Atom::ERROR, raised, nocatch, marked: Vec::new() };
        }
        Unwinding { class, raised, nocatch: None, marked: Vec::new() }
    }

    fn reason(&self) -> TermRef<'_> {
        self.nocatch.as_ref().map_or(self.raised, Term::as_ref)
    }

    /// Unwinds the trace frame `frame` of `process`.
    fn trace_frame(&mut self, process: &mut Process, frame: Frame) {
        match frame {
            Frame::ReturnTrace(frame) => {
                let ReturnTrace { mfa, session, tracer, exception } = *frame;
                if exception {
                    let mut heap = Heap::new();
                    let value = self.reason().copy_to(&mut heap);
                    let pair = heap.tuple(&[Word::atom(self.class), value]);
                    let info = Term::from_parts(heap, pair);
                    process.emit_return(
                        &session,
                        &tracer,
                        mfa,
                        TraceTag::ExceptionFrom,
                        info.as_ref(),
                    );
                }
            }
            Frame::ReturnTo { session } => {
                let traced = process.tracee.flags(&session).contains(TraceFlags::RETURN_TO);
                if traced && !self.marked.iter().any(|s| Arc::ptr_eq(s, &session)) {
                    self.marked.push(session);
                }
            }
            // Unwound without accounting, as ERTS's `next_catch` does: the
            // raising function goes on accumulating.
            Frame::CallAcc { .. } => {}
            Frame::Function { .. } => unreachable!("only trace frames are handed here"),
        }
    }

    /// The exception is caught in `catcher`, or (`None`) the process
    /// exits.
    fn end(self, process: &mut Process, catcher: Option<Mfa>) -> Raised {
        match catcher {
            Some(mfa) => {
                for session in self.marked {
                    process.emit_return_to(&session, Some(mfa));
                }
                Raised::Caught(mfa)
            }
            None => {
                let mut heap = Heap::new();
                let reason = exit_reason(self.class, self.reason(), &mut heap);
                process.emit_exit(heap.view(reason));
                process.exit();
                Raised::Exited(Term::from_parts(heap, reason))
            }
        }
    }
}

/// The message of a call, `{Module, Function, Args}` (or the arity), built
/// in `message` (a heap of the scratch space, cleared first) around the
/// arguments where they are: copied only if they use that space
/// themselves.
fn call_message<'m>(
    message: &'m mut Heap,
    mfa: Mfa,
    args: TermRef<'m>,
    arity: bool,
) -> TermRef<'m> {
    message.clear();
    let [module, function] = [mfa.module, mfa.function].map(Word::atom);
    if arity {
        let arity = Word::small(i64::from(mfa.arity)).expect("an arity is small");
        let root = message.tuple(&[module, function, arity]);
        return message.view(root);
    }
    if args.heaps().space(Space::Scratch).is_empty() {
        let root = message.tuple(&[module, function, args.word()]);
        return args.heaps().with(message).term(root);
    }
    let args = args.copy_to(message);
    let root = message.tuple(&[module, function, args]);
    message.view(root)
}

/// Runs a call's match spec, if it has one, for the process whose parts
/// are given (so that callers can hold borrows of the others).
#[allow(clippy::too_many_arguments, reason = "the parts of a Process, borrowed apart")]
#[inline]
fn run_spec<'a>(
    core: &TraceCore,
    tracee: &Arc<Tracee>,
    callers: Callers<'_>,
    scratch: &'a mut Scratch,
    mfa: Mfa,
    args: TermRef<'a>,
    spec: Option<&'a TraceSpec>,
    session: &SessionRef,
) -> (Decision<'a>, ReturnFlags) {
    let Some(spec) = spec else { return (Decision::Trace, ReturnFlags::default()) };
    let mut host = ProcessHost::new(core, tracee, callers, session, Some(mfa));
    match spec.spec.run(args, scratch, &mut host) {
        Ok(Outcome::Match(matched)) => {
            let asked = ReturnFlags {
                return_trace: matched.flags.return_trace,
                exception_trace: matched.flags.exception_trace,
                return_to: false,
            };
            // The word alone tells: `kind` would decode a boxed result.
            let decision = match matched.result.as_atom() {
                Some(Atom::TRUE) => Decision::Trace,
                Some(Atom::FALSE) => Decision::Skip,
                _ => Decision::Message(matched.result),
            };
            (decision, asked)
        }
        // An argument list always runs; a failed run traces nothing.
        Ok(Outcome::NoMatch) | Err(_) => (Decision::Skip, ReturnFlags::default()),
    }
}

/// The exit reason of an uncaught exception: `exit` exits with the reason
/// itself; an `error` carries a stack trace, which a host without one
/// reports as `[]` (`{Reason, []}`). (An uncaught throw is already an
/// error here.)
fn exit_reason(class: Atom, reason: TermRef<'_>, heap: &mut Heap) -> Word {
    let reason = reason.copy_to(heap);
    match class.name() {
        "exit" => reason,
        _ => heap.tuple(&[reason, Word::NIL]),
    }
}
