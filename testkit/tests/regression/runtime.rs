//! The `runtime_ops` fuzz target's check, replayed: the inputs that once
//! made it fail, and a few hundred pseudo-random ones.
//!
//! Each `testdata/regression/fuzz/runtime_ops-<sha>.bin` is named after the
//! first hex digits of the crash artifact's name. The check is the
//! target's own, [`runtime_ops::runtime_ops`]. Every file must have a row
//! in [`CASES`] naming the root cause.

use msc_testkit::{replay, runtime_ops};

/// Every saved input and the root cause of its failure.
const CASES: &[(&str, &str)] = &[(
    "runtime_ops-fe8f7205.bin",
    "the checker took a seq_trace event whose From is a remote pid (a token that came from \
     another node, as OTP reports it) for a malformed message",
)];

#[test]
fn runtime_ops_fuzz_crashes_stay_fixed() {
    let inputs = replay::saved_inputs(&["runtime_ops"], CASES);
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
    let log = runtime_ops::run(&case, msc::Engine::Interp).join("\n");
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
    let log = runtime_ops::run(&case, msc::Engine::Interp).join("\n");
    assert!(log.contains("<0.90.0> <- {trace,<0.90.0>,return_from,{m,f,1},a}"), "{log}");
    assert_eq!(log.matches("call,{m,f,[42]}").count(), 1, "{log}");
}

/// Ports in the check: a port opened with `new` port flags in a session
/// reports its events to that session's tracer, nothing once closed, and
/// tracing a closed port is `badarg`.
#[test]
fn runtime_ops_sees_port_events() {
    use runtime_ops::{Case, Op, PortTarget};
    // FLAG_POOL: bit 1 send, bit 2 'receive', bit 19 ports and running_ports.
    let flags = (1 << 19) | (1 << 1) | (1 << 2);
    let ops = vec![
        Op::Ports { session: 1, target: PortTarget::New, on: true, flags, tracer: None },
        Op::OpenPort { owner: 0x80, port: 0 },
        // <0.81.0> sends it {x, y} (`received`), a command task runs, the
        // port sends [1, 2] to <0.82.0> (not alive), takes the name beta,
        // and closes with reason a.
        Op::PortEvent { port: 0, event: 6, other: 0x81 },
        Op::PortEvent { port: 0, event: 0, other: 1 },
        Op::PortEvent { port: 0, event: 7, other: 0x82 },
        Op::PortEvent { port: 0, event: 4, other: 1 },
        Op::PortEvent { port: 0, event: 8, other: 2 },
        Op::PortEvent { port: 0, event: 6, other: 0x81 },
        Op::Ports { session: 1, target: PortTarget::Port(0), on: true, flags, tracer: None },
    ];
    let case = Case { jit: false, ops };
    runtime_ops::check(&case);
    let log = runtime_ops::run(&case, msc::Engine::Interp).join("\n");
    for expected in [
        "<0.90.0> <- {trace,#Port<0.1>,open,<0.80.0>,cat}",
        "<0.90.0> <- {trace,#Port<0.1>,getting_linked,<0.80.0>}",
        "<0.90.0> <- {trace,#Port<0.1>,'receive',{<0.81.0>,{x,y}}}",
        "<0.90.0> <- {trace,#Port<0.1>,in,command}",
        "<0.90.0> <- {trace,#Port<0.1>,send_to_non_existing_process,[1,2],<0.82.0>}",
        "<0.90.0> <- {trace,#Port<0.1>,register,beta}",
        "<0.90.0> <- {trace,#Port<0.1>,closed,a}",
        "<0.90.0> <- {trace,#Port<0.1>,unregister,beta}",
        "-> not open",
        "-> Err(BadTarget)",
    ] {
        assert!(log.contains(expected), "{expected} is not in\n{log}");
    }
}

/// `runtime_ops` drives events about another node's processes: links both
/// ways name the remote pid, its messages arrive, and sends to it (by pid
/// or `{Name, Node}`) are `send` events, never
/// `send_to_non_existing_process` (its checker once took the remote pid of
/// a link event for malformed).
#[test]
fn runtime_ops_sees_remote_events() {
    use runtime_ops::{Case, Dest, Op, Target};
    // FLAG_POOL: bit 1 send, bit 2 'receive', bit 3 procs.
    let flags = (1 << 1) | (1 << 2) | (1 << 3);
    let mut ops =
        vec![Op::Process { session: 1, target: Target::Pid(0x80), on: true, flags, tracer: None }];
    ops.extend((0..4).map(|kind| Op::RemoteLink { process: 0x80, remote: 0, kind }));
    ops.extend([
        Op::RemoteMessage { process: 0x80, remote: 1, message: 0 },
        Op::Send { from: 0x80, to: Dest::Remote(0), message: 0 },
        Op::Send { from: 0x80, to: Dest::RemoteName(0), message: 0 },
        Op::NodeName { name: 1 },
    ]);
    let case = Case { jit: false, ops };
    runtime_ops::check(&case);
    let log = runtime_ops::run(&case, msc::Engine::Interp).join("\n");
    for expected in [
        "<0.90.0> <- {trace,<0.80.0>,link,#Pid<there@host.3.90.0>}",
        "<0.90.0> <- {trace,<0.80.0>,unlink,#Pid<there@host.3.90.0>}",
        "<0.90.0> <- {trace,<0.80.0>,getting_linked,#Pid<there@host.3.90.0>}",
        "<0.90.0> <- {trace,<0.80.0>,getting_unlinked,#Pid<there@host.3.90.0>}",
        ",#Pid<there@host.3.90.0>}",
        ",{alpha,there@host}}",
        "-> node here@host",
    ] {
        assert!(log.contains(expected), "{expected} is not in\n{log}");
    }
    assert!(!log.contains("send_to_non_existing_process"), "{log}");
}
