//! The `runtime_ops` fuzz target's check, replayed: the inputs that once
//! made it fail, and a few hundred pseudo-random ones.
//!
//! Each `testdata/regression/fuzz/runtime_ops-<sha>.bin` is named after the
//! first hex digits of the crash artifact's name. The check is
//! `fuzz/src/runtime_ops.rs`, included here as a module, so a replay
//! checks exactly what the target checked (`matchspec` and the JIT replay
//! the other targets' files). Every file must have a row in [`CASES`]
//! naming the root cause.

#[allow(dead_code, reason = "the fuzz target uses some items the tests do not")]
#[path = "../../fuzz/src/runtime_ops.rs"]
mod runtime_ops;

#[path = "../../fuzz/src/replay.rs"]
mod replay;

/// Every saved input and the root cause of its failure.
const CASES: &[(&str, &str)] = &[];

#[test]
fn runtime_ops_fuzz_crashes_stay_fixed() {
    let inputs = replay::saved_inputs(env!("CARGO_MANIFEST_DIR"), &["runtime_ops"], CASES);
    replay::replay_all(&inputs, |_, data| runtime_ops::runtime_ops(data));
}

/// Pseudo-random inputs (a fixed xorshift sequence), so the check runs on
/// more than the saved inputs in every test run.
#[test]
fn runtime_ops_holds_on_random_sequences() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200 {
        let len = 64 + (next() % 448) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        runtime_ops::runtime_ops(&data);
    }
}

/// The check sees what a hand-written sequence makes: call and return
/// messages, a counter that counts, and a destroyed session that stays
/// quiet.
#[test]
fn runtime_ops_sees_messages_and_counters() {
    use runtime_ops::{Case, Op, Target};
    let ops = vec![
        // Session 1 (tracer <0.90.0>) traces calls of <0.80.0> ...
        Op::Process { session: 1, target: Target::Pid(0x80), on: true, flags: 1, tracer: None },
        // ... of m:f/1 with return_trace, and counts them.
        Op::Function { session: 1, mfa: 0, action: 6, kinds: 0b101, meta: None },
        Op::Call { process: 0x80, function: 0, args: 1, style: 0, remote: true },
        Op::Return { process: 0x80, value: 2 },
        Op::Call { process: 0x80, function: 0, args: 1, style: 0, remote: true },
        Op::SessionDestroy { slot: 1 },
        Op::Call { process: 0x80, function: 0, args: 1, style: 0, remote: true },
    ];
    let case = Case { jit: true, ops };
    runtime_ops::check(&case);
    let log = runtime_ops::run(&case, matchspec_jit::Engine::Interp).join("\n");
    for expected in [
        "<0.90.0> <- {trace,<0.80.0>,call,{m,f,[42]}}",
        "<0.90.0> <- {trace,<0.80.0>,return_from,{m,f,1},a}",
    ] {
        assert!(log.contains(expected), "{expected} is not in\n{log}");
    }
    assert_eq!(log.matches("call,{m,f,[42]}").count(), 2, "{log}");
}

/// A return event goes, without asking, to the tracer the process has when
/// it returns (ERTS's `erts_trace_return`), even when that is the process
/// itself: the check allows it, and only it.
#[test]
fn runtime_ops_allows_a_return_event_to_a_tracer_that_is_the_tracee() {
    use runtime_ops::{Case, Op, Target};
    let ops = vec![
        // <0.90.0> is traced by <0.91.0> in session s2 (no session tracer),
        Op::Process { session: 2, target: Target::Pid(0x83), on: true, flags: 1, tracer: Some(1) },
        // calls m:f/1 with return_trace,
        Op::Function { session: 2, mfa: 0, action: 6, kinds: 1, meta: None },
        Op::Call { process: 0x83, function: 0, args: 1, style: 0, remote: true },
        // becomes its own tracer,
        Op::Process {
            session: 2,
            target: Target::Pid(0x83),
            on: false,
            flags: 0xffff,
            tracer: None,
        },
        Op::Process { session: 2, target: Target::Pid(0x83), on: true, flags: 1, tracer: Some(0) },
        // and returns: its own tracer gets the return_from; the next call
        // is not traced (erl_tracer discards events about itself).
        Op::Return { process: 0x83, value: 2 },
        Op::Call { process: 0x83, function: 0, args: 1, style: 0, remote: true },
    ];
    let case = Case { jit: false, ops };
    runtime_ops::check(&case);
    let log = runtime_ops::run(&case, matchspec_jit::Engine::Interp).join("\n");
    assert!(log.contains("<0.90.0> <- {trace,<0.90.0>,return_from,{m,f,1},a}"), "{log}");
    assert_eq!(log.matches("call,{m,f,[42]}").count(), 1, "{log}");
}
