//! Faults in tracers: one that panics, one that sleeps inside `trace`, one
//! that dies mid-stream. The core contains each: the traced thread goes
//! on, other sessions keep working, commands from other threads complete,
//! and what was delivered stays delivered.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use crossbeam_channel::Receiver;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};
use matchspec_runtime::breakpoint::BpFlags;
use matchspec_runtime::commands::{FlagChange, ProcessSpec};
use matchspec_runtime::pattern::{MfaPattern, PatternAction, PatternFlags};
use matchspec_runtime::{
    CallStyle, CoreConfig, Delivered, Enabled, Function, FunctionEntry, ManualClock, Mfa, Pid,
    Process, ProcessTracer, Reach, SessionRef, TraceCore, TraceFlags, TraceOpts, TraceTag,
    TraceeId, Tracer,
};

/// A tracer whose `trace` runs `on_trace` (which may panic or block).
struct Hostile<F: Fn(u64) + Send + Sync> {
    calls: AtomicU64,
    on_trace: F,
}

impl<F: Fn(u64) + Send + Sync> std::fmt::Debug for Hostile<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hostile")
    }
}

impl<F: Fn(u64) + Send + Sync> Tracer for Hostile<F> {
    fn enabled(&self, _tag: TraceTag, _tracee: TraceeId) -> Enabled {
        Enabled::Trace
    }
    fn trace(
        &self,
        _tag: TraceTag,
        _tracee: TraceeId,
        _message: TermRef<'_>,
        _opts: &TraceOpts<'_>,
    ) {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        (self.on_trace)(n);
    }
    fn trace_seq(&self, _label: TermRef<'_>, _info: TermRef<'_>, _opts: &TraceOpts<'_>) {}
    fn to_term(&self, heap: &mut Heap) -> Word {
        let _ = heap;
        Word::atom(Atom::new("hostile"))
    }
}

struct World {
    core: Arc<TraceCore>,
    f: Arc<FunctionEntry>,
}

fn world() -> World {
    let clock = Arc::new(ManualClock::new());
    let core = TraceCore::new(CoreConfig { clock, ..CoreConfig::default() });
    let f =
        core.declare_module(Atom::new("m"), &[Function::exported("f", 1)]).expect("m").remove(0);
    World { core, f }
}

impl World {
    /// A session with `tracer` tracing calls of `m:f/1` by process `pid`.
    fn session(&self, name: &str, tracer: Arc<dyn Tracer>, pid: Pid) -> SessionRef {
        let session = self.core.session_create(Atom::new(name), Some(tracer));
        self.core
            .trace_processes(&session, ProcessSpec::Pid(pid), FlagChange::on(TraceFlags::CALL))
            .expect("flags");
        self.pattern(&session, PatternAction::On);
        session
    }

    fn pattern(&self, session: &SessionRef, action: PatternAction) {
        let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
        let mfa =
            MfaPattern::from_term(Term::parse("{m,f,1}").expect("mfa").as_ref()).expect("mfa");
        self.core.set_pattern(session, mfa, &action, &local).expect("pattern");
    }

    fn call(&self, p: &mut Process, n: i64) {
        let args = Term::list([Term::from(n)]);
        p.call(&self.f, args.as_ref(), Reach::Remote, CallStyle::Body).expect("the call goes on");
        p.return_value(Term::atom(Atom::OK).as_ref()).expect("return");
    }
}

fn process_tracer(pid: u32) -> (Arc<ProcessTracer>, Receiver<Delivered>) {
    let (tx, rx) = crossbeam_channel::unbounded();
    (Arc::new(ProcessTracer::new(Pid::new(pid, 0), tx, Arc::new(ManualClock::new()))), rx)
}

#[test]
fn a_tracer_that_panics_is_removed_and_nothing_else_notices() {
    let w = world();
    let mut p = w.core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
    let hostile = Arc::new(Hostile {
        calls: AtomicU64::new(0),
        on_trace: |n| {
            if n == 1 {
                panic!("tracer bug");
            }
        },
    });
    w.session("bad", hostile.clone(), p.pid());
    let (good, inbox) = process_tracer(90);
    w.session("good", good, p.pid());
    for n in 0..5 {
        w.call(&mut p, n);
    }
    // The hostile tracer saw two calls (the second panicked), then nothing.
    assert_eq!(hostile.calls.load(Ordering::SeqCst), 2);
    assert_eq!(w.core.tracer_panics(), 1);
    // The other session saw every call, and still works after.
    assert_eq!(inbox.try_iter().count(), 5);
    let other = w.core.session_create(Atom::new("later"), None);
    w.pattern(&other, PatternAction::On);
    w.call(&mut p, 5);
    assert_eq!(inbox.try_iter().count(), 1);
}

#[test]
fn a_tracer_that_sleeps_in_trace_blocks_no_command() {
    let w = Arc::new(world());
    let inside = Arc::new(Barrier::new(2));
    let (release, released) = crossbeam_channel::bounded::<()>(0);
    let hostile = {
        let inside = inside.clone();
        Arc::new(Hostile {
            calls: AtomicU64::new(0),
            on_trace: move |_| {
                inside.wait();
                let _ = released.recv();
            },
        })
    };
    let mut p = w.core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
    let session = w.session("slow", hostile, p.pid());
    let traced = {
        let w = w.clone();
        std::thread::spawn(move || w.call(&mut p, 1))
    };
    inside.wait();
    // The traced thread is inside `trace`. Commands from here complete.
    let (done, finished) = crossbeam_channel::bounded(1);
    let commands = {
        let (w, session) = (w.clone(), session.clone());
        std::thread::spawn(move || {
            w.pattern(&session, PatternAction::Off);
            w.pattern(&session, PatternAction::On);
            let (tracer, _inbox) = process_tracer(91);
            let other = w.core.session_create(Atom::new("other"), Some(tracer));
            let q = w.core.spawn(Pid::new(81, 0), Some(Mfa::new("shell", "loop", 0)));
            w.core
                .trace_processes(
                    &other,
                    ProcessSpec::Pid(q.pid()),
                    FlagChange::on(TraceFlags::CALL),
                )
                .expect("flags");
            w.core.session_destroy(&other).expect("destroy");
            done.send(()).expect("report");
        })
    };
    let completed = finished.recv_timeout(Duration::from_secs(30)).is_ok();
    release.send(()).expect("release the tracer");
    traced.join().expect("the traced call finishes");
    commands.join().expect("commands");
    assert!(completed, "a command waited for a tracer sleeping in trace()");
}

#[test]
fn what_a_dying_tracer_got_stays_delivered() {
    let w = world();
    let mut p = w.core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
    let (tracer, inbox) = process_tracer(90);
    w.session("s", tracer.clone(), p.pid());
    (0..3).for_each(|n| w.call(&mut p, n));
    tracer.kill();
    (3..6).for_each(|n| w.call(&mut p, n));
    let got: Vec<String> = inbox.try_iter().map(|d| d.message.to_string()).collect();
    assert_eq!(
        got,
        [
            "{trace,<0.80.0>,call,{m,f,[0]}}",
            "{trace,<0.80.0>,call,{m,f,[1]}}",
            "{trace,<0.80.0>,call,{m,f,[2]}}"
        ]
    );
}
