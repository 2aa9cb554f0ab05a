//! `call_time` and `call_memory`: per function and process, how many calls
//! and how much time they ran or how many heap words they allocated
//! (ERTS's `erts_trace_call_acc`, `erts_call_trace_return` and
//! `erts_schedule_time_break` in `beam_bp.c`).
//!
//! This is the process's half: [`ProcessCounters`], per process and
//! session, which function is accumulating and where its interval started
//! (ERTS's `process_breakpoint_trace_t`), owned by the process's thread.
//! The totals themselves are the breakpoint's [`CallStats`].
//!
//! # The accounting rule
//!
//! A process accumulates into one function at a time per session: the
//! innermost active function that is `call_time` (or `call_memory`)
//! traced. At every *accounting point* what passed since the last one
//! (nanoseconds of the core's [`Clock`], or words the host
//! reported with [`Process::allocated`](crate::Process::allocated)) is
//! added to that function, with count 0:
//!
//! * a call of a traced function: the previous function gets the interval,
//!   the called one gets count 1 and becomes the accumulating one; unless
//!   a trace frame is already on top of the stack (a tail call, or another
//!   session's or kind's frame), the call pushes a frame that remembers the
//!   previous function;
//! * the return through that frame: the function being left gets the
//!   interval and the remembered one accumulates again (none, if the
//!   caller was not traced: accumulation stops);
//! * scheduling out (time only): the accumulating function gets the
//!   interval; scheduling in starts a new one.
//!
//! As in ERTS, an exception unwinds these frames without accounting (the
//! function that raised goes on accumulating until the next accounting
//! point), a process that exits accounts nothing more, paused counters
//! still take the intervals of calls made before the pause (only new calls
//! stop counting), and an interval goes to whatever the function's
//! breakpoint holds at the accounting point (nothing, if it was cleared).

use std::sync::Arc;

use crate::core::TraceCore;
use crate::model::breakpoint::{BpFlags, FunctionEntry, SessionBreakpoint};
use crate::model::clock::Clock;
use crate::model::counters::CallStats;
use crate::model::ids::{Mfa, Pid};
use crate::model::session::SessionId;

/// Which of the two accumulating counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Time,
    Memory,
}

impl Kind {
    /// The flag that says the breakpoint has this counter.
    fn set(self) -> BpFlags {
        match self {
            Kind::Time => BpFlags::TIME,
            Kind::Memory => BpFlags::MEMORY,
        }
    }

    fn stats(self, sbp: &SessionBreakpoint) -> Option<&Arc<CallStats>> {
        match self {
            Kind::Time => sbp.time.as_ref(),
            Kind::Memory => sbp.memory.as_ref(),
        }
    }
}

/// What an accounting point knows of the process and the moment.
pub(crate) struct Here<'a> {
    /// Where time comes from.
    pub(crate) clock: &'a dyn Clock,
    /// The process.
    pub(crate) pid: Pid,
    /// The scheduler running it.
    pub(crate) scheduler: u32,
    /// The breakpoint generation to read.
    pub(crate) generation: usize,
}

impl<'a> Here<'a> {
    /// Process `pid` on `scheduler`, reading `generation`, with the
    /// core's clock.
    pub(crate) fn of(core: &'a TraceCore, pid: Pid, scheduler: u32, generation: usize) -> Here<'a> {
        Here { clock: core.clock().as_ref(), pid, scheduler, generation }
    }
}

/// Adds an interval (and `count` calls) to the totals that `entry`'s
/// breakpoint of `session` holds now for `kind`, if it still has them
/// (ERTS's `get_time_break` / `get_memory_break`).
fn add_to(
    entry: &FunctionEntry,
    session: SessionId,
    kind: Kind,
    here: &Here<'_>,
    count: u64,
    amount: i64,
) {
    let slot = entry.slot(here.generation);
    let Some(breakpoint) = slot.as_ref() else { return };
    let Some(sbp) = breakpoint.sessions.iter().find(|s| s.session.id() == session) else {
        return;
    };
    if sbp.flags.contains(kind.set())
        && let Some(stats) = kind.stats(sbp)
    {
        stats.add(here.scheduler, here.pid, count, amount);
    }
}

/// One session's accumulation in one process.
#[derive(Debug)]
struct Interval {
    session: SessionId,
    /// The function accumulating (none after returning to an untraced
    /// caller).
    current: Option<Arc<FunctionEntry>>,
    /// The clock (or the allocation counter) when the interval started.
    start: i64,
}

/// A process's side of `call_time` and `call_memory`.
#[derive(Debug)]
pub(crate) struct ProcessCounters {
    time: Vec<Interval>,
    memory: Vec<Interval>,
    /// Words the process allocated since it started.
    allocated: i64,
    /// The function the process started in: its first memory-traced call
    /// counts the words allocated since the start, as in ERTS.
    initial: Option<Mfa>,
    running: bool,
}

impl ProcessCounters {
    /// A process that starts in `initial`, running.
    pub(crate) fn new(initial: Option<Mfa>) -> ProcessCounters {
        ProcessCounters {
            time: Vec::new(),
            memory: Vec::new(),
            allocated: 0,
            initial,
            running: true,
        }
    }

    /// A call of `entry` hit `sbp`, whose active accounting flags are in
    /// `flags`. Returns the function accumulating before (what the call's
    /// frame must give back on return: with both kinds, the memory one,
    /// as in ERTS).
    pub(crate) fn enter(
        &mut self,
        here: &Here<'_>,
        entry: &Arc<FunctionEntry>,
        sbp: &SessionBreakpoint,
        flags: BpFlags,
    ) -> Option<Arc<FunctionEntry>> {
        let session = sbp.session.id();
        let mut previous = None;
        if flags.contains(BpFlags::TIME_ACTIVE) {
            let now = here.clock.monotonic_ns();
            previous = enter_one(&mut self.time, Kind::Time, here, entry, sbp, now);
        }
        if flags.contains(BpFlags::MEMORY_ACTIVE) {
            // "If this is initial call, ignore 'allocated'" (beam_bp.c).
            let first = !self.memory.iter().any(|i| i.session == session);
            let words = if first && self.initial == Some(entry.mfa()) { 0 } else { self.allocated };
            previous = enter_one(&mut self.memory, Kind::Memory, here, entry, sbp, words);
        }
        previous
    }

    /// A call's accounting frame of `session` is returned through
    /// (`flags`: the kinds it was pushed for): the function being left
    /// gets the interval, `previous` accumulates again.
    pub(crate) fn leave(
        &mut self,
        here: &Here<'_>,
        session: SessionId,
        flags: BpFlags,
        previous: Option<Arc<FunctionEntry>>,
    ) {
        if flags.contains(BpFlags::TIME_ACTIVE) {
            let now = here.clock.monotonic_ns();
            leave_one(&mut self.time, Kind::Time, here, session, now, previous.clone());
        }
        if flags.contains(BpFlags::MEMORY_ACTIVE) {
            leave_one(&mut self.memory, Kind::Memory, here, session, self.allocated, previous);
        }
    }

    /// The process is scheduled out: the accumulating functions get their
    /// time so far. Nothing if it was not running.
    pub(crate) fn schedule_out(&mut self, here: &Here<'_>) {
        if !std::mem::replace(&mut self.running, false) || self.time.is_empty() {
            return;
        }
        let now = here.clock.monotonic_ns();
        for interval in &mut self.time {
            if let Some(current) = &interval.current {
                add_to(current, interval.session, Kind::Time, here, 0, now - interval.start);
            }
            interval.start = now;
        }
    }

    /// The process is scheduled in: time counts again from `now`. Nothing
    /// if it was running.
    pub(crate) fn schedule_in(&mut self, clock: &dyn Clock) {
        if std::mem::replace(&mut self.running, true) || self.time.is_empty() {
            return;
        }
        let now = clock.monotonic_ns();
        for interval in &mut self.time {
            interval.start = now;
        }
    }

    /// The process allocated `words` heap words.
    pub(crate) fn allocate(&mut self, words: u64) {
        let words = i64::try_from(words).unwrap_or(i64::MAX);
        self.allocated = self.allocated.saturating_add(words);
    }
}

/// `erts_trace_call_acc` for one kind.
fn enter_one(
    intervals: &mut Vec<Interval>,
    kind: Kind,
    here: &Here<'_>,
    entry: &Arc<FunctionEntry>,
    sbp: &SessionBreakpoint,
    value: i64,
) -> Option<Arc<FunctionEntry>> {
    let session = sbp.session.id();
    let at = match intervals.iter().position(|i| i.session == session) {
        Some(at) => {
            let interval = &intervals[at];
            if let Some(current) = &interval.current {
                add_to(current, session, kind, here, 0, value - interval.start);
            }
            at
        }
        None => {
            intervals.push(Interval { session, current: None, start: value });
            intervals.len() - 1
        }
    };
    if let Some(stats) = kind.stats(sbp) {
        stats.add(here.scheduler, here.pid, 1, 0);
    }
    let interval = &mut intervals[at];
    interval.start = value;
    interval.current.replace(entry.clone())
}

/// `erts_call_trace_return` for one kind.
fn leave_one(
    intervals: &mut [Interval],
    kind: Kind,
    here: &Here<'_>,
    session: SessionId,
    value: i64,
    previous: Option<Arc<FunctionEntry>>,
) {
    let Some(interval) = intervals.iter_mut().find(|i| i.session == session) else { return };
    if let Some(current) = &interval.current {
        add_to(current, session, kind, here, 0, value - interval.start);
    }
    interval.current = previous;
    interval.start = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- Accounting, through the host's API ---------------------------------------

    use matchspec::term::{Atom, Heap, Term};

    use crate::control::commands::{FlagChange, ProcessSpec};
    use crate::control::info::function_info;
    use crate::control::pattern::{MfaPattern, PatternAction, PatternFlags};
    use crate::core::{CoreConfig, TraceCore};
    use crate::hit::process::{CallStyle, Process, Reach};
    use crate::model::breakpoint::Function;
    use crate::model::clock::ManualClock;
    use crate::model::flags::TraceFlags;
    use crate::model::session::SessionRef;
    use crate::model::tracer::ProcessTracer;

    const US: i64 = 1000;

    struct World {
        clock: Arc<ManualClock>,
        core: Arc<TraceCore>,
        sessions: Vec<SessionRef>,
        functions: Vec<Arc<FunctionEntry>>,
    }

    /// A core with module `m` (`f/0`, `g/0`, `h/0`, `init/0`) and
    /// sessions `s1` and `s2`.
    fn world() -> World {
        let clock = Arc::new(ManualClock::new());
        let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
        let (mailbox, _) = crossbeam_channel::unbounded();
        let mut sessions = Vec::new();
        for name in ["s1", "s2"] {
            let tracer =
                Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox.clone(), clock.clone()));
            sessions.push(core.session_create(Atom::new(name), Some(tracer)));
        }
        let functions = ["f", "g", "h", "init"].map(|f| Function::exported(f, 0));
        let functions = core.declare_module(Atom::new("m"), &functions).expect("declared");
        World { clock, core, sessions, functions }
    }

    impl World {
        /// Process `<0.N.0>`, started in `initial`, traced (`call`) in
        /// both sessions.
        fn process(&self, n: u32, initial: &str) -> Process {
            let p = self.core.spawn(Pid::new(n, 0), Some(Mfa::new("m", initial, 0)));
            for session in &self.sessions {
                let pid = ProcessSpec::Pid(p.pid());
                self.core
                    .trace_processes(session, pid, FlagChange::on(TraceFlags::CALL))
                    .expect("traced");
            }
            p
        }

        fn entry(&self, f: &str) -> &Arc<FunctionEntry> {
            self.functions.iter().find(|e| e.mfa().function.name() == f).expect("declared")
        }

        /// `trace:function(S, {m, F, 0}, Action, [Kind])`.
        fn set(&self, session: usize, f: &str, action: PatternAction, kinds: BpFlags) {
            let pattern = MfaPattern {
                module: Some(Atom::new("m")),
                function: Some(Atom::new(f)),
                arity: Some(0),
            };
            let flags = PatternFlags { kinds, meta_tracer: None };
            self.core.set_pattern(&self.sessions[session], pattern, &action, &flags).expect("set");
        }

        /// `trace:info(S, {m, F, 0}, Key)`, printed.
        fn info(&self, session: usize, f: &str, key: &str) -> String {
            let mut heap = Heap::new();
            let mfa = Mfa::new("m", f, 0);
            let key = Term::atom(Atom::new(key));
            let info =
                function_info(&self.core, &self.sessions[session], mfa, key.as_ref(), &mut heap)
                    .expect("info");
            heap.view(info).to_string()
        }

        fn call(&self, p: &mut Process, f: &str, style: CallStyle) {
            p.call(self.entry(f), Term::nil().as_ref(), Reach::Remote, style).expect("called");
        }

        fn advance_us(&self, us: i64) {
            self.clock.advance(us * US);
        }
    }

    fn ret(p: &mut Process) {
        p.return_value(Term::atom(Atom::OK).as_ref()).expect("returned");
    }

    #[test]
    fn nested_calls_account_to_the_innermost_traced_function() {
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.set(0, "g", PatternAction::On, BpFlags::TIME);
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(10);
        // An untraced function's time is its caller's.
        w.call(&mut p, "h", CallStyle::Body);
        w.advance_us(1);
        w.call(&mut p, "g", CallStyle::Body);
        w.advance_us(5);
        ret(&mut p);
        w.advance_us(3);
        ret(&mut p);
        w.advance_us(2);
        ret(&mut p);
        // Back in the untraced `init`: nothing accumulates any more.
        w.advance_us(100);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,16}]}");
        assert_eq!(w.info(0, "g", "call_time"), "{call_time,[{<0.80.0>,1,0,5}]}");
        // The next call starts afresh.
        w.call(&mut p, "g", CallStyle::Body);
        w.advance_us(7);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,16}]}");
        assert_eq!(w.info(0, "g", "call_time"), "{call_time,[{<0.80.0>,2,0,12}]}");
        // Seconds and microseconds, truncated from nanoseconds.
        w.call(&mut p, "g", CallStyle::Body);
        w.clock.advance(2_500_000_999);
        ret(&mut p);
        assert_eq!(w.info(0, "g", "call_time"), "{call_time,[{<0.80.0>,3,2,500012}]}");
    }

    #[test]
    fn a_tail_call_replaces_the_accumulating_function() {
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.set(0, "g", PatternAction::On, BpFlags::TIME);
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(4);
        w.call(&mut p, "g", CallStyle::Tail);
        w.advance_us(6);
        let depth = p.stack_depth();
        w.call(&mut p, "g", CallStyle::Tail);
        // A tail call finds the frame of the first call on top: no new one.
        assert_eq!(p.stack_depth(), depth);
        w.advance_us(1);
        ret(&mut p);
        w.advance_us(50);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,4}]}");
        assert_eq!(w.info(0, "g", "call_time"), "{call_time,[{<0.80.0>,2,0,7}]}");
    }

    #[test]
    fn an_exception_unwinds_without_accounting() {
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.set(0, "g", PatternAction::On, BpFlags::TIME);
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(1);
        w.call(&mut p, "h", CallStyle::Body);
        w.call(&mut p, "g", CallStyle::Try);
        w.advance_us(2);
        p.raise(Atom::new("throw"), Term::atom(Atom::OK).as_ref()).expect("raised");
        // Caught in h; g goes on accumulating until f returns.
        w.advance_us(3);
        ret(&mut p);
        w.advance_us(4);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,1}]}");
        assert_eq!(w.info(0, "g", "call_time"), "{call_time,[{<0.80.0>,1,0,9}]}");
    }

    #[test]
    fn pause_restart_false_and_true() {
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[]}");
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(5);
        // Paused inside: the call made before the pause still closes its
        // interval.
        w.set(0, "f", PatternAction::Pause, BpFlags::TIME);
        w.advance_us(1);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,6}]}");
        // Paused: new calls count nothing.
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(5);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,6}]}");
        // Restart: from zero, counting again.
        w.set(0, "f", PatternAction::Restart, BpFlags::TIME);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[]}");
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(2);
        // A change of another kind keeps the totals (both generations
        // share them).
        w.set(0, "f", PatternAction::On, BpFlags::COUNT);
        // Cleared and set again inside the call: the return's interval
        // goes to the new totals, with count 0 (as in ERTS).
        w.set(0, "f", PatternAction::Off, BpFlags::TIME);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,false}");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.advance_us(3);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,0,0,5}]}");
        assert_eq!(w.info(0, "f", "call_count"), "{call_count,0}");
    }

    #[test]
    fn scheduled_out_time_does_not_count() {
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(3);
        p.schedule_out();
        // Scheduling out accounts at once.
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,3}]}");
        w.advance_us(100);
        p.schedule_out();
        p.schedule_in();
        w.advance_us(4);
        p.schedule_in();
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,7}]}");
    }

    #[test]
    fn call_time_needs_the_call_flag() {
        let w = world();
        let mut p = w.core.spawn(Pid::new(81, 0), Some(Mfa::new("m", "init", 0)));
        w.set(0, "f", PatternAction::On, BpFlags::TIME | BpFlags::COUNT);
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(3);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[]}");
        assert_eq!(w.info(0, "f", "call_count"), "{call_count,1}");
    }

    #[test]
    fn memory_goes_to_the_innermost_traced_function() {
        // trace_call_memory_SUITE:skip: upper allocates 3, calls middle
        // (untraced, 3 more), which calls lower (16), then upper builds 6.
        let w = world();
        let mut p = w.process(80, "init");
        w.set(0, "f", PatternAction::On, BpFlags::MEMORY);
        w.set(0, "g", PatternAction::On, BpFlags::MEMORY);
        w.call(&mut p, "f", CallStyle::Body);
        p.allocated(3).expect("alive");
        w.call(&mut p, "h", CallStyle::Body);
        p.allocated(3).expect("alive");
        w.call(&mut p, "g", CallStyle::Body);
        p.allocated(16).expect("alive");
        ret(&mut p);
        ret(&mut p);
        p.allocated(6).expect("alive");
        ret(&mut p);
        p.allocated(100).expect("alive");
        assert_eq!(w.info(0, "f", "call_memory"), "{call_memory,[{<0.80.0>,1,12}]}");
        assert_eq!(w.info(0, "g", "call_memory"), "{call_memory,[{<0.80.0>,1,16}]}");
        // With call_time on the same function, both count (conflict_traces).
        w.set(0, "f", PatternAction::On, BpFlags::TIME);
        w.call(&mut p, "f", CallStyle::Body);
        p.allocated(3).expect("alive");
        w.advance_us(2);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_memory"), "{call_memory,[{<0.80.0>,2,15}]}");
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,2}]}");
        let all = "{all,[{traced,false},{match_spec,false},{meta,false},{meta_match_spec,false},\
                   {call_memory,[{<0.80.0>,2,15}]},{call_time,[{<0.80.0>,1,0,2}]},{call_count,false}]}";
        assert_eq!(w.info(0, "f", "all"), all.replace(' ', ""));
    }

    #[test]
    fn the_initial_functions_first_call_gets_the_words_before_it() {
        let w = world();
        w.set(0, "init", PatternAction::On, BpFlags::MEMORY);
        w.set(0, "f", PatternAction::On, BpFlags::MEMORY);
        let mut p = w.process(80, "init");
        p.allocated(34).expect("alive");
        w.call(&mut p, "init", CallStyle::Body);
        ret(&mut p);
        let mut q = w.process(81, "init");
        q.allocated(34).expect("alive");
        w.call(&mut q, "f", CallStyle::Body);
        ret(&mut q);
        assert_eq!(w.info(0, "init", "call_memory"), "{call_memory,[{<0.80.0>,1,34}]}");
        assert_eq!(w.info(0, "f", "call_memory"), "{call_memory,[{<0.81.0>,1,0}]}");
        // An exited process allocates nothing.
        ret(&mut q);
        assert!(q.allocated(1).is_err());
    }

    #[test]
    fn of_two_sessions_only_the_newest_closes_its_interval() {
        // Both sessions time f; the newest breakpoint runs first and pushes
        // the return frame, the other finds it on top and pushes none (as
        // ERTS does), so s1 keeps accumulating into f after the return.
        let w = world();
        let mut p = w.process(80, "init");
        for s in [0, 1] {
            w.set(s, "f", PatternAction::On, BpFlags::TIME);
            w.set(s, "g", PatternAction::On, BpFlags::TIME);
        }
        w.call(&mut p, "f", CallStyle::Body);
        w.advance_us(2);
        ret(&mut p);
        w.advance_us(5);
        w.call(&mut p, "g", CallStyle::Body);
        ret(&mut p);
        assert_eq!(w.info(0, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,7}]}");
        assert_eq!(w.info(1, "f", "call_time"), "{call_time,[{<0.80.0>,1,0,2}]}");
    }

    #[test]
    fn concurrent_hits_across_generation_switches() {
        let w = world();
        w.set(0, "f", PatternAction::On, BpFlags::TIME | BpFlags::MEMORY);
        const CALLS: u64 = 2000;
        std::thread::scope(|scope| {
            for n in 0..4 {
                let mut p = w.process(100 + n, "init");
                let entry = w.entry("f").clone();
                scope.spawn(move || {
                    for _ in 0..CALLS {
                        p.call(&entry, Term::nil().as_ref(), Reach::Remote, CallStyle::Body)
                            .expect("call");
                        p.allocated(2).expect("alive");
                        ret(&mut p);
                    }
                });
            }
            // Commands switch generations meanwhile; the totals are shared.
            for i in 0..50 {
                let action = if i % 2 == 0 { PatternAction::On } else { PatternAction::Off };
                w.set(0, "f", action, BpFlags::COUNT);
                w.set(1, "g", PatternAction::On, BpFlags::TIME);
            }
        });
        let expected: Vec<String> = [103, 102, 101, 100]
            .iter()
            .map(|n| format!("{{<0.{n}.0>,{CALLS},{}}}", 2 * CALLS))
            .collect();
        assert_eq!(
            w.info(0, "f", "call_memory"),
            format!("{{call_memory,[{}]}}", expected.join(","))
        );
    }

    #[test]
    fn processes_are_listed_in_erts_order() {
        let w = world();
        w.set(0, "f", PatternAction::On, BpFlags::MEMORY);
        for n in [87, 88, 80] {
            let mut p = w.process(n, "init");
            w.call(&mut p, "f", CallStyle::Body);
            p.allocated(u64::from(n)).expect("alive");
            ret(&mut p);
        }
        assert_eq!(
            w.info(0, "f", "call_memory"),
            "{call_memory,[{<0.87.0>,1,87},{<0.80.0>,1,80},{<0.88.0>,1,88}]}"
        );
    }
}
