//! The trace-cost workloads that `msc bench --trace` and the criterion
//! benchmarks time: what one call costs the host when the function is
//! untraced, traced with a spec that rejects the call, and traced with a
//! message emitted; with the process's stack kept by the core (the host
//! reports every call and return) or by the host (a [`HostStack`]: the
//! core hears of traced calls only).

use std::sync::Arc;

use crossbeam_channel::Receiver;
use matchspec::term::{Atom, Term};
use msc::Engine;

use matchspec_runtime::breakpoint::{BpFlags, FunctionEntry};
use matchspec_runtime::commands::{FlagChange, ProcessSpec};
use matchspec_runtime::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
use matchspec_runtime::tracer::{Delivered, ProcessTracer};
use matchspec_runtime::{
    CallStyle, CoreConfig, Function, HostStack, ManualClock, Mfa, Pid, Process, Reach, StackKeeper,
    TraceCore, TraceFlags,
};

/// Which cost a [`TraceWorkload`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceCase {
    /// A call of a function without a breakpoint.
    Untraced,
    /// A traced call whose match spec rejects it.
    Rejected,
    /// A traced call that emits a call message to a tracer process.
    Emitted,
}

impl TraceCase {
    /// Every case.
    pub const ALL: [TraceCase; 3] = [TraceCase::Untraced, TraceCase::Rejected, TraceCase::Emitted];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            TraceCase::Untraced => "untraced",
            TraceCase::Rejected => "traced_rejected",
            TraceCase::Emitted => "traced_emitted",
        }
    }
}

/// A process calling one function over and over, set up for one case.
#[derive(Debug)]
pub struct TraceWorkload {
    process: Process,
    /// The process's stack, if the host keeps it.
    host_stack: Option<HostStack>,
    function: Arc<FunctionEntry>,
    args: Term,
    result: Term,
    inbox: Receiver<Delivered>,
}

/// The spec of the traced cases: trace calls whose first argument is an
/// integer above 100, with the second argument as extra term.
const SPEC: &str = "[{['$1', '$2'], [{is_integer, '$1'}, {'>', '$1', 100}], [{message, '$2'}]}]";

impl TraceWorkload {
    /// Sets up `case` with match specs on `engine`, the stack kept by the
    /// core.
    pub fn new(case: TraceCase, engine: Engine) -> TraceWorkload {
        TraceWorkload::with_stack(case, engine, StackKeeper::Core)
    }

    /// Sets up `case` with match specs on `engine`, the stack kept by
    /// `keeper`.
    pub fn with_stack(case: TraceCase, engine: Engine, keeper: StackKeeper) -> TraceWorkload {
        let clock = Arc::new(ManualClock::new());
        let core =
            TraceCore::new(CoreConfig { engine, clock: clock.clone(), ..CoreConfig::default() });
        let (mailbox, inbox) = crossbeam_channel::unbounded();
        let tracer = Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock));
        let session = core.session_create(Atom::new("bench"), Some(tracer));
        let function = core
            .declare_module(Atom::new("shop"), &[Function::exported("checkout", 2)])
            .expect("a fresh core accepts a module")
            .remove(0);
        let initial = Mfa::new("shop", "loop", 0);
        let mut process = core.spawn(Pid::new(80, 0), Some(initial));
        let host_stack = match keeper {
            StackKeeper::Core => None,
            StackKeeper::Host => {
                Some(HostStack::new(&mut process, Some(initial)).expect("a fresh process"))
            }
        };
        core.trace_processes(
            &session,
            ProcessSpec::Pid(process.pid()),
            FlagChange::on(TraceFlags::CALL),
        )
        .expect("the process exists");
        if case != TraceCase::Untraced {
            let spec = Term::parse(SPEC).expect("the spec parses");
            let action = parse_pattern_action(&core, spec.as_ref()).expect("the spec compiles");
            let pattern =
                MfaPattern::from_term(Term::parse("{shop,checkout,2}").expect("mfa").as_ref())
                    .expect("an exact MFA");
            let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
            core.set_pattern(&session, pattern, &action, &local).expect("the pattern applies");
        }
        let first = if case == TraceCase::Emitted { "250" } else { "7" };
        let args = Term::parse(&format!("[{first}, {{cart, 3}}]")).expect("args parse");
        TraceWorkload { process, host_stack, function, args, result: Term::atom(Atom::OK), inbox }
    }

    /// Makes `calls` calls (each with its return); returns how many trace
    /// messages they delivered.
    pub fn run(&mut self, calls: u64) -> u64 {
        // The tracer's mailbox is drained every 1,024 calls.
        let mut delivered = 0;
        let mut left = calls;
        while left > 0 {
            let batch = left.min(1024);
            self.run_batch(batch);
            delivered += self.inbox.try_iter().count() as u64;
            left -= batch;
        }
        delivered
    }

    /// `calls` calls and returns, nothing else.
    fn run_batch(&mut self, calls: u64) {
        let (args, result) = (self.args.as_ref(), self.result.as_ref());
        let (process, function) = (&mut self.process, &self.function);
        match &mut self.host_stack {
            None => {
                for _ in 0..calls {
                    process.call(function, args, Reach::Remote, CallStyle::Body).expect("alive");
                    process.return_value(result).expect("a function is active");
                }
            }
            Some(stack) => {
                for _ in 0..calls {
                    stack
                        .call(process, function, &args, Reach::Remote, CallStyle::Body)
                        .expect("alive");
                    stack.return_value(process, &result).expect("a function is active");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_trace_what_they_say() {
        for engine in [Engine::Interp, Engine::Jit] {
            for keeper in [StackKeeper::Core, StackKeeper::Host] {
                let run = |case| TraceWorkload::with_stack(case, engine, keeper).run(10);
                assert_eq!(run(TraceCase::Untraced), 0);
                assert_eq!(run(TraceCase::Rejected), 0);
                assert_eq!(run(TraceCase::Emitted), 10);
            }
        }
    }
}
