//! Breakpoints under concurrent change: worker threads call traced and
//! untraced functions in a loop while another thread changes patterns,
//! process flags and sessions thousands of times.
//!
//! Checked: nothing crashes; every call message carries the tag of a
//! pattern that was committed, and each worker sees tags in commit order
//! (a change to many functions is seen all at once, never half); the
//! memory a round allocates is all freed once it ends.
//!
//! A test binary of its own: memory is counted per thread, and no other
//! test may run meanwhile.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use matchspec::term::{Atom, Heap, Kind, Term};
use matchspec_runtime::breakpoint::BpFlags;
use matchspec_runtime::commands::{FlagChange, ProcessSpec};
use matchspec_runtime::pattern::{MfaPattern, PatternAction, PatternFlags};
use matchspec_runtime::{
    CallStyle, CoreConfig, Enabled, Function, HostStack, ManualClock, Mfa, Pid, Reach, TraceCore,
    TraceFlags, TraceOpts, TraceTag, TraceeId, Tracer,
};
use msc::Engine;

/// Counts call messages and checks their tags.
#[derive(Debug, Default)]
struct Checker {
    /// Highest tag committed so far.
    committed: AtomicU64,
    /// The last tag each worker's calls carried.
    last: [AtomicU64; WORKERS],
    calls: AtomicU64,
    bad: AtomicU64,
}

impl Tracer for Checker {
    fn enabled(&self, _tag: TraceTag, _tracee: TraceeId) -> Enabled {
        Enabled::Trace
    }

    fn trace_seq(
        &self,
        _label: matchspec::term::TermRef<'_>,
        _info: matchspec::term::TermRef<'_>,
        _opts: &TraceOpts<'_>,
    ) {
        // The workers carry no sequential trace tokens.
        self.bad.fetch_add(1, Ordering::Relaxed);
    }

    fn trace(
        &self,
        tag: TraceTag,
        tracee: TraceeId,
        _message: matchspec::term::TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) {
        if tag != TraceTag::Call {
            return;
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        // Extra `{Tag}`: at most the newest committed tag.
        let tag = opts
            .match_spec_result
            .and_then(|r| r.as_tuple())
            .and_then(|t| t.get(0))
            .and_then(|t| t.as_i64());
        let TraceeId::Process(pid) = tracee else { unreachable!("workers are processes") };
        let last = &self.last[(pid.id - 100) as usize];
        match tag {
            // Committed, and not older than what this worker saw before.
            Some(t)
                if t as u64 <= self.committed.load(Ordering::Acquire)
                    && t as u64 >= last.load(Ordering::Relaxed) =>
            {
                last.store(t as u64, Ordering::Relaxed);
            }
            _ => {
                self.bad.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn to_term(&self, heap: &mut Heap) -> matchspec::term::Word {
        Pid::new(90, 0).to_word(heap)
    }

    fn same_as(&self, other: &dyn Tracer) -> bool {
        let mut heap = Heap::new();
        let w = other.to_term(&mut heap);
        matches!(heap.view(w).kind(), Kind::Pid(p) if p.id == 90)
    }
}

const FUNCTIONS: usize = 8;
const WORKERS: usize = 2;
const CHANGES: u64 = 2_000;

/// One round: returns the bytes it left allocated (summed over threads)
/// and the bytes it allocated in all.
fn round(engine: Engine) -> (i64, u64) {
    let net = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let total = Arc::new(AtomicU64::new(0));
    let account = |info: allocation_counter::AllocationInfo,
                   net: &std::sync::atomic::AtomicI64,
                   total: &AtomicU64| {
        net.fetch_add(info.bytes_current, Ordering::Relaxed);
        total.fetch_add(info.bytes_total, Ordering::Relaxed);
    };
    let info = allocation_counter::measure(|| {
        let core = TraceCore::new(CoreConfig {
            engine,
            clock: Arc::new(ManualClock::new()),
            ..CoreConfig::default()
        });
        let checker = Arc::new(Checker::default());
        let names: Vec<Function> =
            (0..FUNCTIONS).map(|i| Function::exported(&format!("f{i}"), 1)).collect();
        let functions = core.declare_module(Atom::new("m"), &names).expect("declare");
        let untraced = core
            .declare_module(Atom::new("plain"), &[Function::exported("g", 1)])
            .expect("declare");
        let stop = Arc::new(AtomicBool::new(false));
        let session = core.session_create(Atom::new("s"), None);
        let mut threads = Vec::new();
        for w in 0..WORKERS {
            let core = core.clone();
            let functions = functions.clone();
            let untraced = untraced.clone();
            let stop = stop.clone();
            let checker = checker.clone();
            let (net, total) = (net.clone(), total.clone());
            threads.push(std::thread::spawn(move || {
                let info = allocation_counter::measure(|| {
                    let mut p =
                        core.spawn(Pid::new(100 + w as u32, 0), Some(Mfa::new("w", "loop", 0)));
                    let session = core.session_named(Atom::new("s")).expect("session");
                    let change =
                        FlagChange::On { flags: TraceFlags::CALL, tracer: Some(checker.clone()) };
                    core.trace_processes(&session, ProcessSpec::Pid(p.pid()), change)
                        .expect("trace");
                    let arg = Term::parse("[7]").expect("args");
                    // Odd workers keep their own stacks.
                    let mut host_stack = (w % 2 == 1).then(|| {
                        HostStack::new(&mut p, Some(Mfa::new("w", "loop", 0))).expect("fresh")
                    });
                    let mut seen = 0u64;
                    while !stop.load(Ordering::Relaxed) || seen < 100 {
                        for f in functions.iter().chain(untraced.iter().take(1)) {
                            let arg = arg.as_ref();
                            match &mut host_stack {
                                None => {
                                    p.call(f, arg, Reach::Remote, CallStyle::Body).expect("call");
                                    p.return_value(arg).expect("return");
                                }
                                Some(stack) => {
                                    stack
                                        .call(&mut p, f, &arg, Reach::Remote, CallStyle::Body)
                                        .expect("call");
                                    stack.return_value(&mut p, &arg).expect("return");
                                }
                            }
                        }
                        seen += 1;
                    }
                    p.exit();
                });
                account(info, &net, &total);
            }));
        }
        // The mutator.
        let spec_for = |tag: u64| {
            let text = format!("[{{'_', [], [{{message, {{{{{tag}}}}}}}]}}]");
            let term = Term::parse(&text).expect("spec");
            matchspec_runtime::pattern::parse_pattern_action(&core, term.as_ref())
                .expect("compiles")
        };
        let all = MfaPattern { module: Some(Atom::new("m")), function: None, arity: None };
        let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
        for tag in 1..=CHANGES {
            let action = spec_for(tag);
            // The tag is committed before any thread can see it.
            checker.committed.store(tag, Ordering::Release);
            core.set_pattern(&session, all, &action, &local).expect("pattern");
            if tag % 50 == 0 {
                core.set_pattern(&session, all, &PatternAction::Off, &local).expect("off");
                let other = core.session_create(Atom::new("other"), None);
                core.set_pattern(&other, all, &PatternAction::On, &local).expect("on");
                assert!(core.session_destroy(&other).expect("destroy"));
            }
        }
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().expect("a worker panicked");
        }
        assert_eq!(checker.bad.load(Ordering::Relaxed), 0, "messages with uncommitted tags");
        assert!(checker.calls.load(Ordering::Relaxed) > 0, "nothing was traced");
        core.session_destroy(&session).expect("destroy");
    });
    account(info, &net, &total);
    (net.load(Ordering::Relaxed), total.load(Ordering::Relaxed))
}

#[test]
fn concurrent_changes_are_atomic_and_leave_no_memory_behind() {
    for engine in [Engine::Interp, Engine::Jit] {
        // The first round warms up per-thread structures that live on.
        let _ = round(engine);
        let (left, churned) = round(engine);
        assert!(churned > 1 << 20, "the round should churn memory ({churned} bytes)");
        assert!(
            left.abs() < 64 << 10,
            "{engine:?}: {left} bytes left behind of {churned} allocated"
        );
    }
}
