//! Overload: a tracer process that never reads its mailbox, under each
//! bounded policy, for 10,000,000 traced calls. Resident memory (from
//! `/proc/self/statm`) must stay flat, and the traced process never blocks.
//!
//! A test binary of its own: resident memory is the process's, and no
//! other test may run meanwhile.

use std::sync::Arc;

use matchspec::term::{Atom, Term};
use matchspec_runtime::breakpoint::BpFlags;
use matchspec_runtime::commands::{FlagChange, ProcessSpec};
use matchspec_runtime::pattern::{MfaPattern, PatternAction, PatternFlags};
use matchspec_runtime::{
    CallStyle, CoreConfig, Function, ManualClock, Mfa, Overload, Pid, ProcessTracer, Reach,
    TraceCore, TraceFlags,
};

const EVENTS: u64 = 10_000_000;
/// The most a run may grow after its first tenth, well above noise and far
/// below what 10,000,000 queued messages take (gigabytes).
const MAX_GROWTH_BYTES: u64 = 32 << 20;

/// Resident memory, in bytes.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("rss");
    pages * 4096
}

/// Traces `EVENTS` calls of `m:f/1` to a tracer with `overload` that is
/// never read; returns the tracer and the growth of resident memory after
/// the first tenth of the calls.
fn flood(
    overload: Overload,
) -> (Arc<ProcessTracer>, u64, crossbeam_channel::Receiver<matchspec_runtime::Delivered>) {
    let clock = Arc::new(ManualClock::new());
    let core = TraceCore::new(CoreConfig { clock: clock.clone(), ..CoreConfig::default() });
    let (mailbox, inbox) = crossbeam_channel::unbounded();
    let tracer =
        Arc::new(ProcessTracer::new(Pid::new(90, 0), mailbox, clock).with_overload(overload));
    let session = core.session_create(Atom::new("s1"), Some(tracer.clone()));
    let f = core
        .declare_module(Atom::new("m"), &[Function::exported("f", 1)])
        .expect("module")
        .remove(0);
    let mut p = core.spawn(Pid::new(80, 0), Some(Mfa::new("shell", "loop", 0)));
    core.trace_processes(&session, ProcessSpec::Pid(p.pid()), FlagChange::on(TraceFlags::CALL))
        .expect("flags");
    let local = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
    let mfa = MfaPattern::from_term(Term::parse("{m,f,1}").expect("mfa").as_ref()).expect("mfa");
    core.set_pattern(&session, mfa, &PatternAction::On, &local).expect("pattern");
    let args = Term::parse("[42]").expect("args");
    let ok = Term::parse("ok").expect("ok");
    let mut base = 0;
    for i in 0..EVENTS {
        if i == EVENTS / 10 {
            base = resident();
        }
        p.call(&f, args.as_ref(), Reach::Remote, CallStyle::Body).expect("call");
        p.return_value(ok.as_ref()).expect("return");
    }
    let growth = resident().saturating_sub(base);
    (tracer, growth, inbox)
}

#[test]
fn a_tracer_that_never_reads_costs_bounded_memory() {
    // Drop: the mailbox holds its limit, the rest is counted.
    let (tracer, growth, inbox) = flood(Overload::Drop { limit: 10_000 });
    assert!(growth < MAX_GROWTH_BYTES, "Drop: resident memory grew {growth} bytes");
    assert!(inbox.len() <= 10_001, "Drop: {} messages wait", inbox.len());
    assert_eq!(tracer.dropped() + inbox.len() as u64, EVENTS);
    assert!(tracer.is_alive());
    drop(inbox);

    // Remove: past the limit the tracer is gone and the rest costs nothing.
    let (tracer, growth, inbox) = flood(Overload::Remove { limit: 10_000 });
    assert!(growth < MAX_GROWTH_BYTES, "Remove: resident memory grew {growth} bytes");
    assert_eq!(inbox.len(), 10_000);
    assert!(!tracer.is_alive());
}
