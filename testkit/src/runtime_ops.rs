//! The `runtime_ops` target's generator and oracle: random sequences of
//! trace-core commands and host events, checked against invariants.
//!
//! `fuzz/fuzz_targets/runtime_ops.rs` and `tests/regression/runtime.rs`
//! both call [`runtime_ops`], so the target and the regression tests check
//! exactly the same thing.
//!
//! # The world
//!
//! A core with a [`ManualClock`], the modules `m` (`f/1`, `g/2`, local
//! `h/1`) and `n` (`k/1`, `j/0`), six process pids (`<0.80.0>`..`<0.82.0>`
//! and the three tracer pids `<0.90.0>`..`<0.92.0>`, which are processes
//! too and can be traced; all but `<0.82.0>` and `<0.92.0>` start alive),
//! three port numbers (`#Port<0.1>`..`#Port<0.3>`, none open at first:
//! processes open them, and things happen to open ports: tasks, links,
//! names, messages in and out, closing), the legacy session and three
//! more session slots (`s1` with tracer `<0.90.0>` and `s2` without a
//! tracer to start with). Every operation
//! names processes, sessions, tracers and functions by small indices taken
//! modulo the pool size, so random sequences interact; a process index
//! without its high bit names the first live process from it on.
//!
//! Every tracer is a [`ProcessTracer`] with its own channel. Each session
//! gets its own instance per tracer pid (its session tracer, the tracers
//! its `trace:process` and `{meta, Pid}` name), so every message on such a
//! channel belongs to that session. The tracers the registry hands to
//! match specs (`{trace, [], [{tracer, Pid}]}`) and the system sequential
//! tracer are separate, shared instances. A tracer pid's instances die
//! when its process dies (or is killed) and come back fresh when the pid
//! is spawned again.
//!
//! # Invariants
//!
//! After every operation, every channel is drained and checked:
//!
//! * nothing panics; commands with arguments known to be bad (a dead
//!   session, a pid that is not alive, turning flags on without a tracer,
//!   a malformed `{M, F, A}`, an unknown info key, destroying the legacy
//!   session) answer an error;
//! * a destroyed session's tracers receive nothing from the operation that
//!   destroyed it on; a dead tracer receives nothing;
//! * a tracer never receives a `trace`/`trace_ts` message whose tracee is
//!   its own pid (except `return_from`, `exception_from` and `return_to`,
//!   which, as in ERTS, go without asking to the tracer the process has
//!   when it returns: one that may since have become the process itself);
//! * every message is a well-formed `{trace, Pid, Tag, ...}`,
//!   `{trace_ts, ..., Timestamp}` or `{seq_trace, Label, Info[, Ts]}`
//!   tuple, the tracee is a pid of the world that was alive before or
//!   after the operation (or a port of the world open before or after,
//!   with an event of the port kinds), `seq_trace` messages only reach
//!   tracers that were made the system sequential tracer, and the
//!   timestamps one channel receives never go back;
//! * a session's process or port event (`call`, `return_from`,
//!   `exception_from`, `return_to`, `send`, `'receive'`, `procs`, `ports`,
//!   `running_ports`; meta trace aside) is only delivered if the process
//!   or port had the event's flag in the session before or after the
//!   operation, as `trace_ts` exactly when it had a timestamp
//!   flag, and a call with the arity exactly when it had `arity`
//!   (flags a spec changes during the operation may go either way);
//! * call counters (`trace:info(S, MFA, call_count)`) never go backwards
//!   and count exactly: between commands that touch them, a counter
//!   grows by one for every call of its function while it is active, and
//!   not at all while paused; a command (or redeclaring the module) may
//!   only change it as `trace:function/4` documents (new counters start at
//!   0, `restart` and turning `call_count` on again reset to 0, `pause`
//!   keeps the value, `false` removes it); between such commands,
//!   `call_time` and `call_memory` neither appear nor vanish, their call
//!   counts grow by at most the calls made, and their time and words never
//!   go back.
//!
//! With [`Case::jit`], the sequence's first [`JIT_OPS`] operations also
//! run on the JIT, which must answer and deliver exactly what the
//! interpreter did.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock};

use arbitrary::{Arbitrary, Unstructured};
use crossbeam_channel::Receiver;
use matchspec::term::{Atom, Heap, Kind, Term, TermRef, Word};
use matchspec_runtime::breakpoint::BpFlags;
use matchspec_runtime::commands::{FlagChange, MessageEvent, PortSpec, ProcessSpec};
use matchspec_runtime::info;
use matchspec_runtime::on_load::on_load_info;
use matchspec_runtime::pattern::{
    MfaPattern, PatternAction, PatternFlags, parse_pattern_action, parse_pattern_flags,
};
use matchspec_runtime::query::FunctionTracing;
use matchspec_runtime::tracer::{Delivered, TracerRef};
use matchspec_runtime::{
    AnyPid, CallStyle, CoreConfig, Function, FunctionEntry, GcEvent, GcInfo, HostStack, LinkSignal,
    ManualClock, MessageToken, Mfa, Origin, Pid, Port, PortId, Process, ProcessTracer, Raised,
    Reach, RemotePid, SessionRef, StackError, TraceCore, TraceError, TraceFlags,
};
use msc::Engine;

/// Largest input the target reads; longer ones are rejected.
pub const MAX_INPUT: usize = 4096;

/// Most operations one case runs.
pub const MAX_OPS: usize = 128;

/// Most operations a case runs on the JIT.
pub const JIT_OPS: usize = 32;

/// One fuzz case: a sequence of operations, and whether to run it on the
/// JIT too.
#[derive(Clone, Debug)]
pub struct Case {
    /// Also run on the JIT and compare with the interpreter.
    pub jit: bool,
    /// The operations, in order.
    pub ops: Vec<Op>,
}

impl Case {
    /// Reads a case: one byte for [`Case::jit`] (one input in sixteen runs
    /// on the JIT too, whose compile times dominate), then operations
    /// until the data runs out (at most [`MAX_OPS`]).
    pub fn from_bytes(data: &[u8]) -> Case {
        let mut u = Unstructured::new(data);
        let jit = u.arbitrary::<u8>().is_ok_and(|b| b % 16 == 15);
        let mut ops = Vec::new();
        while !u.is_empty() && ops.len() < MAX_OPS {
            match Op::arbitrary(&mut u) {
                Ok(op) => ops.push(op),
                Err(_) => break,
            }
        }
        Case { jit, ops }
    }
}

/// A process target of `trace:process/4`.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Target {
    /// One process of the pool.
    Pid(u8),
    /// `all`.
    All,
    /// `existing`.
    Existing,
    /// `new`.
    New,
}

/// A port target of `trace:port/4`.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum PortTarget {
    /// One port of the pool (open or not).
    Port(u8),
    /// `all`.
    All,
    /// `existing`.
    Existing,
    /// `new`.
    New,
}

/// Where a message goes.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Dest {
    /// A process of the pool, by pid.
    Pid(u8),
    /// A registered name (registered or not).
    Name(u8),
    /// The pid of a process that never existed.
    Dead,
    /// A process of another node, by pid.
    Remote(u8),
    /// `{Name, 'there@host'}`: a name on another node.
    RemoteName(u8),
}

/// One trace command or host event. Indices are taken modulo the size of
/// the pool they index.
#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    /// `trace:session_create(Name, Tracer, [])` into a session slot (an
    /// occupied slot's session lives on, unnamed by later operations).
    SessionCreate {
        /// The slot (1 to 3).
        slot: u8,
        /// The name.
        name: u8,
        /// The tracer pid; `None` is the `undefined` tracer.
        tracer: Option<u8>,
    },
    /// `trace:session_destroy/1` (slot 0 is the legacy session).
    SessionDestroy {
        /// The slot.
        slot: u8,
    },
    /// `trace:process(S, Target, How, Flags)`.
    Process {
        /// The session slot.
        session: u8,
        /// Which processes.
        target: Target,
        /// `true` or `false`.
        on: bool,
        /// A subset of `FLAG_POOL`.
        flags: u32,
        /// `{tracer, Pid}`.
        tracer: Option<u8>,
    },
    /// `trace:port(S, Target, How, Flags)`.
    Ports {
        /// The session slot.
        session: u8,
        /// Which ports.
        target: PortTarget,
        /// `true` or `false`.
        on: bool,
        /// A subset of `FLAG_POOL`.
        flags: u32,
        /// `{tracer, Pid}`.
        tracer: Option<u8>,
    },
    /// `trace:function(S, MFA, Action, Flags)`.
    Function {
        /// The session slot.
        session: u8,
        /// One of [`MFA_PATTERNS`].
        mfa: u8,
        /// `false`, `true`, `restart`, `pause`, `[]` or a spec of [`CALL_SPECS`].
        action: u8,
        /// A subset of the flags (see [`kinds_term`]).
        kinds: u8,
        /// The tracer of `{meta, Pid}` (and of plain `meta` in sessions
        /// without a tracer).
        meta: Option<u8>,
    },
    /// `trace:function(S, on_load, Action, Flags)`.
    OnLoad {
        /// The session slot.
        session: u8,
        /// As for [`Op::Function`].
        action: u8,
        /// As for [`Op::Function`].
        kinds: u8,
    },
    /// `trace:send/3` or `trace:recv/3`.
    MessagePattern {
        /// The session slot.
        session: u8,
        /// `trace:recv/3` rather than `trace:send/3`.
        receive: bool,
        /// One of [`MESSAGE_PATTERNS`].
        pattern: u8,
    },
    /// Declares a module again (reloading it).
    Declare {
        /// `m` or `n`.
        module: u8,
    },
    /// A process is spawned (by a parent, if it is alive).
    Spawn {
        /// The parent.
        parent: Option<u8>,
        /// The child (skipped if alive).
        child: u8,
        /// Whether the child starts in a function.
        bottom: bool,
    },
    /// A process calls a function.
    Call {
        /// The process.
        process: u8,
        /// One of [`CALLS`].
        function: u8,
        /// The first of [`VALUES`] to pass.
        args: u8,
        /// Body, tail or try.
        style: u8,
        /// `M:F(...)` rather than `F(...)`.
        remote: bool,
    },
    /// The innermost function returns (the last one only if `value`'s high
    /// bit is set).
    Return {
        /// The process.
        process: u8,
        /// One of [`VALUES`].
        value: u8,
    },
    /// The innermost function raises (in the last function only if
    /// `reason`'s high bit is set).
    Raise {
        /// The process.
        process: u8,
        /// `error`, `exit`, `throw` or an unknown class.
        class: u8,
        /// One of [`VALUES`].
        reason: u8,
    },
    /// A process sends a message.
    Send {
        /// The sender.
        from: u8,
        /// The destination.
        to: Dest,
        /// One of [`VALUES`].
        message: u8,
    },
    /// The oldest message on its way to a process arrives in its queue.
    Arrive {
        /// The receiver.
        process: u8,
    },
    /// A `receive ... after` timeout message arrives.
    Timeout {
        /// The receiver.
        process: u8,
    },
    /// A process takes the oldest message of its queue.
    Consume {
        /// The receiver.
        process: u8,
    },
    /// A process links to another.
    Link {
        /// The linker.
        process: u8,
        /// The other process.
        other: u8,
        /// The other process handles the signal at once (else at its
        /// next [`Op::Signals`]).
        now: bool,
    },
    /// A process unlinks from another.
    Unlink {
        /// The unlinker.
        process: u8,
        /// The other process.
        other: u8,
        /// As for [`Op::Link`].
        now: bool,
    },
    /// A process handles the link and unlink signals sent to it.
    Signals {
        /// The process.
        process: u8,
    },
    /// A process registers a name.
    Register {
        /// The process.
        process: u8,
        /// One of [`NAMES`].
        name: u8,
    },
    /// A process's name is removed.
    Unregister {
        /// The process.
        process: u8,
        /// One of [`NAMES`].
        name: u8,
    },
    /// A process exits with a reason.
    ExitWith {
        /// The process.
        process: u8,
        /// One of [`VALUES`].
        reason: u8,
    },
    /// `seq_trace:print/1,2` in a process.
    SeqPrint {
        /// The process.
        process: u8,
        /// The label of `print/2` (one of [`VALUES`]).
        label: Option<u8>,
        /// One of [`VALUES`].
        message: u8,
    },
    /// `seq_trace:set_system_tracer/1`.
    SystemSeqTracer {
        /// The tracer pid; `None` is `false`.
        tracer: Option<u8>,
    },
    /// `seq_trace:reset_trace/0`.
    ResetSeqTrace,
    /// The clock moves on.
    AdvanceClock {
        /// By this many nanoseconds (times 1000).
        ns: u16,
    },
    /// A tracer process is killed.
    KillTracer {
        /// The tracer pid.
        tracer: u8,
    },
    /// The node gets one of [`NODE_NAMES`] (distribution starts or stops).
    NodeName {
        /// The name.
        name: u8,
    },
    /// A process links to (0), unlinks from (1), gets linked by (2) or gets
    /// unlinked by (3) a process of another node.
    RemoteLink {
        /// The process.
        process: u8,
        /// The other node's process.
        remote: u8,
        /// Which of the four.
        kind: u8,
    },
    /// A message from a process of another node arrives in a queue.
    RemoteMessage {
        /// The receiver.
        process: u8,
        /// The other node's process.
        remote: u8,
        /// One of [`VALUES`].
        message: u8,
    },
    /// A process moves to another scheduler.
    Scheduler {
        /// The process.
        process: u8,
        /// The scheduler.
        id: u8,
    },
    /// A process is scheduled out.
    ScheduleOut {
        /// The process.
        process: u8,
    },
    /// A process is scheduled in.
    ScheduleIn {
        /// The process.
        process: u8,
    },
    /// A process allocates heap words.
    Allocate {
        /// The process.
        process: u8,
        /// How many words.
        words: u16,
    },
    /// Scheduling trace: `in`, `out`, `in_exiting`, `out_exiting` or
    /// (for any process, exited or not) `out_exited`.
    TraceSchedule {
        /// The process.
        process: u8,
        /// Which event.
        event: u8,
    },
    /// A garbage collection event.
    Gc {
        /// The process.
        process: u8,
        /// Which event.
        event: u8,
        /// The words it is about.
        words: u16,
    },
    /// A process sends an exit signal (through a link), which a trapping
    /// receiver gets as a message.
    ExitSignal {
        /// The sender.
        process: u8,
        /// The receiver.
        to: u8,
        /// One of [`VALUES`].
        reason: u8,
    },
    /// A process opens a port (skipped if the port is open).
    OpenPort {
        /// The owner.
        owner: u8,
        /// The port.
        port: u8,
    },
    /// Something happens to an open port: a task is scheduled in or out, a
    /// process links or unlinks, it is named, it receives or sends a
    /// message, or it closes.
    PortEvent {
        /// The port.
        port: u8,
        /// Which event.
        event: u8,
        /// The process, name, value or destination it is about.
        other: u8,
    },
    /// `trace:info/3` and `trace:session_info/1` queries.
    Info {
        /// The session slot.
        session: u8,
        /// The process asked about.
        process: u8,
        /// One of [`CALLS`] (the function asked about).
        function: u8,
        /// The item (some are bad).
        key: u8,
    },
}

/// The fuzz target: runs `data` as a [`Case`] (rejecting inputs that are
/// too long or do not make one).
pub fn runtime_ops(data: &[u8]) -> bool {
    if data.len() > MAX_INPUT {
        return false;
    }
    check(&Case::from_bytes(data));
    true
}

/// Runs `case` on the interpreter (and the JIT, if it asks) and panics,
/// printing the case and what happened, if an invariant does not hold.
pub fn check(case: &Case) {
    let interp = run(case, Engine::Interp);
    if case.jit {
        // Compiling dominates: the JIT runs the first operations only.
        let prefix = Case { jit: true, ops: case.ops[..case.ops.len().min(JIT_OPS)].to_vec() };
        let jit = run(&prefix, Engine::Jit);
        if let Some(i) = (0..jit.len()).find(|&i| interp.get(i) != jit.get(i)) {
            panic!(
                "runtime_ops: the interpreter and the JIT differ at line {i}:\n  interp: {}\n  jit:    {}\n{}",
                interp.get(i).map_or("(nothing)", String::as_str),
                jit[i],
                describe(case, &interp),
            );
        }
    }
}

fn describe(case: &Case, log: &[String]) -> String {
    let mut text = String::from("ops:\n");
    for (i, op) in case.ops.iter().enumerate() {
        let _ = writeln!(text, "  {i}: {op:?}");
    }
    text.push_str("log:\n");
    for line in log {
        let _ = writeln!(text, "  {line}");
    }
    text
}

// ---- Pools ------------------------------------------------------------------------

/// The process pids; the last three are the tracer pids.
const PIDS: [u32; 6] = [80, 81, 82, 90, 91, 92];
/// The port numbers (`#Port<0.N>`).
const PORTS: [u64; 3] = [1, 2, 3];
/// Processes and ports: what a trace message can be about.
const ENTITIES: usize = PIDS.len() + PORTS.len();
/// How many tracer pids (the last of [`PIDS`]).
const TRACERS: usize = 3;
/// Where the tracer pids start in [`PIDS`].
const FIRST_TRACER: usize = PIDS.len() - TRACERS;
/// Session slots; slot 0 is the legacy session.
const SLOTS: usize = 4;
/// Session names.
const SESSION_NAMES: [&str; 2] = ["s1", "s2"];
/// Registered names.
const NAMES: [&str; 2] = ["alpha", "beta"];
/// Names the node may have.
const NODE_NAMES: [&str; 3] = ["nonode@nohost", "here@host", "there@host"];
/// The other node's processes.
const REMOTES: [u32; 2] = [90, 91];

/// Process `n` of the other node, `there@host`.
fn remote_of(n: u8) -> RemotePid {
    RemotePid {
        node: Atom::new("there@host"),
        creation: 3,
        id: REMOTES[index(REMOTES.len(), n)],
        serial: 0,
    }
}

/// A module's functions: `(name, arity, exported)`.
type Functions = &'static [(&'static str, u8, bool)];

/// The modules and their functions.
const MODULES: [(&str, Functions); 2] = [
    ("m", &[("f", 1, true), ("g", 2, true), ("h", 1, false)]),
    ("n", &[("k", 1, true), ("j", 0, true)]),
];

/// A function of [`MODULES`] (name, arity, exported) as the core takes it.
fn declared((name, arity, exported): (&str, u8, bool)) -> Function {
    Function { name: Atom::new(name), arity, exported, bif: false }
}

/// The functions processes call (the last is not declared).
const CALLS: [(&str, &str, u8); 7] = [
    ("m", "f", 1),
    ("m", "g", 2),
    ("m", "h", 1),
    ("n", "k", 1),
    ("n", "j", 0),
    ("m", "module_info", 0),
    ("nomod", "x", 1),
];

/// Every declared function, whose call counters are checked.
const COUNTED: [(&str, &str, u8); 9] = [
    ("m", "f", 1),
    ("m", "g", 2),
    ("m", "h", 1),
    ("m", "module_info", 0),
    ("m", "module_info", 1),
    ("n", "k", 1),
    ("n", "j", 0),
    ("n", "module_info", 0),
    ("n", "module_info", 1),
];

/// `trace:process/4` flags a subset is drawn from.
const FLAG_POOL: [TraceFlags; 20] = [
    TraceFlags::CALL,
    TraceFlags::SEND,
    TraceFlags::RECEIVE,
    TraceFlags::PROCS,
    TraceFlags::SET_ON_SPAWN,
    TraceFlags::SET_ON_FIRST_SPAWN,
    TraceFlags::SET_ON_LINK,
    TraceFlags::SET_ON_FIRST_LINK,
    TraceFlags::RETURN_TO,
    TraceFlags::SILENT,
    TraceFlags::TIMESTAMP,
    TraceFlags::MONOTONIC_TIMESTAMP,
    TraceFlags::STRICT_MONOTONIC_TIMESTAMP,
    TraceFlags::ARITY,
    TraceFlags::SCHEDULER_ID,
    TraceFlags::RUNNING,
    TraceFlags::RUNNING_PROCS,
    TraceFlags::EXITING,
    TraceFlags::GARBAGE_COLLECTION,
    TraceFlags::PORTS.union(TraceFlags::RUNNING_PORTS),
];

/// `{M, F, A}` patterns; from [`FIRST_BAD_MFA`] on, malformed ones.
const MFA_PATTERNS: [&str; 13] = [
    "{m,f,1}",
    "{m,g,'_'}",
    "{m,'_','_'}",
    "{'_','_','_'}",
    "{m,h,1}",
    "{n,k,1}",
    "{n,'_','_'}",
    "{nomod,x,1}",
    "{'_',f,'_'}",
    "{m,'_',1}",
    "{m,f,300}",
    "{m,f,-1}",
    "foo",
];
const FIRST_BAD_MFA: usize = 8;

/// Call trace match specs (the last does not compile).
const CALL_SPECS: [&str; 23] = [
    "[{'_', [], [true]}]",
    "[{'_', [], [{return_trace}]}]",
    "[{'_', [], [{exception_trace}]}]",
    "[{['$1'], [{is_integer, '$1'}, {'>', '$1', 10}], [{message, '$1'}]}]",
    "[{'_', [], [{message, {caller}}, {return_trace}]}]",
    "[{'_', [], [{enable_trace, send}, {enable_trace, procs}]}]",
    "[{'_', [], [{disable_trace, call}]}]",
    "[{'_', [], [{enable_trace, <0.81.0>, call}, {enable_trace, <0.90.0>, 'receive'}]}]",
    "[{'_', [], [{trace, [call], [send, procs, set_on_spawn]}]}]",
    "[{'_', [], [{trace, [], [{{tracer, <0.91.0>}}, call, return_to]}]}]",
    "[{'_', [], [{set_seq_token, label, 7}, {set_seq_token, send, true}, \
      {set_seq_token, 'receive', true}, {set_seq_token, print, true}]}]",
    "[{'_', [], [{set_seq_token, timestamp, true}, {set_seq_token, serial, {{3, 5}}}, \
      {message, {get_seq_token}}]}]",
    "[{'_', [], [{set_seq_token, sequential_trace_token, []}]}]",
    "[{'_', [], [{silent, true}]}]",
    "[{'_', [], [{silent, false}, {message, false}]}]",
    "[{'_', [], [{message, {process_dump}}, {exception_trace}]}]",
    "[{'_', [{is_seq_trace}], [{message, {get_tcw}}]}, {'_', [], [{set_tcw, 3}, {return_trace}]}]",
    "[{['$1', '$2'], [], [{message, {'+', '$1', '$2'}}]}]",
    "[{'_', [], [{enable_trace, set_on_first_spawn}, {enable_trace, set_on_link}, \
      {enable_trace, timestamp}]}]",
    "[{'_', [], [{message, {current_stacktrace}}, {return_trace}, {exception_trace}]}]",
    "[{'_', [], [{disable_trace, <0.80.0>, procs}, {trace, <0.82.0>, [], [call, 'receive']}]}]",
    "[{'_', [], [{enable_trace, return_to}, {enable_trace, arity}, {enable_trace, silent}]}]",
    "[{foo}]",
];

/// The patterns of `trace:send/3` and `trace:recv/3`.
const MESSAGE_PATTERNS: [&str; 11] = [
    "true",
    "false",
    "restart",
    "[]",
    "[{['$1', '_'], [{is_pid, '$1'}], [{message, '$1'}]}]",
    "[{'_', [], [{enable_trace, call}]}]",
    "[{['_', '_'], [], [{set_seq_token, label, 1}]}]",
    "[{['_', '$1', '_'], [{'=/=', '$1', undefined}], [{message, {self}}]}]",
    "[{'_', [], [{silent, true}]}]",
    "[{'_', [], [false]}]",
    "[{[a], [], []}]",
];

/// Arguments, return values, reasons, messages and labels.
const VALUES: [&str; 9] =
    ["1", "42", "a", "{x, y}", "[1, 2]", "<<\"b\">>", "-5", "3.5", "<0.81.0>"];

/// `trace:info/3` items (the last is unknown).
const FUNCTION_KEYS: [&str; 9] = [
    "traced",
    "match_spec",
    "meta",
    "meta_match_spec",
    "call_count",
    "call_time",
    "call_memory",
    "all",
    "bogus",
];

/// The constant terms of the pools, parsed once.
struct Consts {
    mfa_patterns: Vec<Term>,
    call_specs: Vec<Term>,
    message_patterns: Vec<Term>,
    values: Vec<Term>,
    start: Term,
    calls: Vec<Mfa>,
    counted: Vec<Mfa>,
    call_count: Atom,
    call_time: Atom,
    call_memory: Atom,
}

static CONSTS: LazyLock<Consts> = LazyLock::new(|| {
    let parse = |text: &&str| Term::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    Consts {
        mfa_patterns: MFA_PATTERNS.iter().map(parse).collect(),
        call_specs: CALL_SPECS.iter().map(parse).collect(),
        message_patterns: MESSAGE_PATTERNS.iter().map(parse).collect(),
        values: VALUES.iter().map(parse).collect(),
        start: parse(&"{m, f, [1]}"),
        calls: CALLS.iter().map(mfa).collect(),
        counted: COUNTED.iter().map(mfa).collect(),
        call_count: Atom::new("call_count"),
        call_time: Atom::new("call_time"),
        call_memory: Atom::new("call_memory"),
    }
});

/// The flags of [`FLAG_POOL`] whose bits `bits` has.
fn pool_flags(bits: u32) -> TraceFlags {
    let mut flags = TraceFlags::empty();
    for (bit, flag) in FLAG_POOL.iter().enumerate() {
        if bits & (1 << bit) != 0 {
            flags |= *flag;
        }
    }
    flags
}

fn pick<T>(pool: &[T], i: u8) -> &T {
    &pool[usize::from(i) % pool.len()]
}

fn index(pool: usize, i: u8) -> usize {
    usize::from(i) % pool
}

fn pid_of(process: usize) -> Pid {
    Pid::new(PIDS[process], 0)
}

fn tracer_pid(k: usize) -> Pid {
    pid_of(FIRST_TRACER + k)
}

fn mfa(&(m, f, a): &(&str, &str, u8)) -> Mfa {
    Mfa::new(m, f, a)
}

fn value(i: u8) -> &'static Term {
    pick(&CONSTS.values, i)
}

/// The flag list of [`Op::Function`]: bit 0 `local`, 1 `meta`, 2
/// `call_count`, 3 `call_time`, 4 `call_memory`, 5 `global`, 6 `{meta,
/// Pid}`, 7 an unknown flag.
fn kinds_term(kinds: u8, meta: Pid) -> Term {
    let mut items = Vec::new();
    for (bit, name) in [
        (0, "local"),
        (1, "meta"),
        (2, "call_count"),
        (3, "call_time"),
        (4, "call_memory"),
        (5, "global"),
        (7, "bogus"),
    ] {
        if kinds & (1 << bit) != 0 {
            items.push(Term::atom(Atom::new(name)));
        }
        if bit == 5 && kinds & (1 << 6) != 0 {
            let mut heap = Heap::new();
            let pid = meta.to_word(&mut heap);
            let root = heap.tuple(&[Word::atom(Atom::new("meta")), pid]);
            items.push(Term::from_parts(heap, root));
        }
    }
    Term::list(items)
}

// ---- The world --------------------------------------------------------------------

/// One [`ProcessTracer`] and its channel.
struct Instance {
    pid: Pid,
    tracer: Arc<ProcessTracer>,
    inbox: Receiver<Delivered>,
    /// The session (uid) it belongs to; `None` for the registered ones.
    owner: Option<usize>,
    /// From this operation on, it is dead.
    dead_from: Option<usize>,
    /// Was it ever the system sequential tracer?
    system_seq: bool,
    /// Was it ever given as a meta tracer?
    meta: bool,
    /// The last monotonic time, `now` and unique integer it received.
    last_mono: i64,
    last_now: (i64, i64, i64),
    last_unique: i64,
}

/// A session the world made (uid = its index).
struct SessionState {
    session: SessionRef,
    destroyed_at: Option<usize>,
    /// The session's own instance per tracer pid.
    private: [Option<usize>; TRACERS],
}

/// A process and the messages on their way to it and in its queue.
struct Proc {
    process: Process,
    /// Its stack, if the host keeps it (processes of odd index).
    host_stack: Option<HostStack>,
    in_flight: VecDeque<(Origin, Term, MessageToken)>,
    queue: VecDeque<(Term, MessageToken)>,
    signals: VecDeque<Signal>,
}

impl Proc {
    /// Handles the pending signals: how many.
    fn handle_signals(&mut self) -> usize {
        let n = self.signals.len();
        for signal in self.signals.drain(..) {
            match signal {
                Signal::Link(signal) => self.process.linked_by(signal),
                Signal::Unlink(from) => self.process.unlinked_by(from),
            }
        }
        n
    }

    /// `process`, its stack kept by the host if `host_keeps_stack`.
    fn new(mut process: Process, host_keeps_stack: bool) -> Proc {
        let host_stack = host_keeps_stack.then(|| {
            let initial = process.functions().next();
            HostStack::new(&mut process, initial).expect("a fresh process has no trace frames")
        });
        Proc {
            process,
            host_stack,
            in_flight: VecDeque::new(),
            queue: VecDeque::new(),
            signals: VecDeque::new(),
        }
    }
}

impl Proc {
    /// Does it have more than `n` active functions?
    fn has_more_functions_than(&self, n: usize) -> bool {
        match &self.host_stack {
            Some(stack) => stack.depth() > n,
            None => self.process.functions().nth(n).is_some(),
        }
    }

    /// A host that keeps the stack runs live processes only: it does the
    /// check the core does for the others.
    fn host_live(&self) -> Result<(), StackError> {
        if self.process.tracee().is_alive() { Ok(()) } else { Err(StackError::Exited) }
    }

    fn call(
        &mut self,
        entry: &FunctionEntry,
        args: TermRef<'_>,
        reach: Reach,
        style: CallStyle,
    ) -> Result<(), StackError> {
        if self.host_stack.is_some() {
            self.host_live()?;
        }
        match &mut self.host_stack {
            Some(stack) => stack.call(&mut self.process, entry, &args, reach, style),
            None => self.process.call(entry, args, reach, style),
        }
    }

    fn return_value(&mut self, value: TermRef<'_>) -> Result<(), StackError> {
        if self.host_stack.is_some() {
            self.host_live()?;
        }
        match &mut self.host_stack {
            Some(stack) => stack.return_value(&mut self.process, &value),
            None => self.process.return_value(value),
        }
    }

    fn raise(&mut self, class: Atom, reason: TermRef<'_>) -> Result<Raised, StackError> {
        if self.host_stack.is_some() {
            self.host_live()?;
        }
        match &mut self.host_stack {
            Some(stack) => stack.raise(&mut self.process, class, reason),
            None => self.process.raise(class, reason),
        }
    }

    /// `in` or `out` (`scheduled_in`), exiting or not.
    fn trace_schedule(&mut self, scheduled_in: bool, exiting: bool) {
        match (&self.host_stack, scheduled_in) {
            (Some(stack), true) => self.process.trace_schedule_in_at(exiting, stack),
            (Some(stack), false) => self.process.trace_schedule_out_at(exiting, stack),
            (None, true) => self.process.trace_schedule_in(exiting),
            (None, false) => self.process.trace_schedule_out(exiting),
        }
    }
}

/// A link or unlink signal on its way.
enum Signal {
    Link(LinkSignal),
    Unlink(Pid),
}

/// A call counter as the model knows it.
#[derive(Clone, Copy, Debug, Default)]
struct Count {
    last: Option<u64>,
    paused: bool,
    /// The `call_time` totals: calls and nanoseconds over all processes.
    time: Option<(u64, u128)>,
    /// The `call_memory` totals: calls and words.
    memory: Option<(u64, u128)>,
}

/// What a command may do to one counter.
struct Expect {
    allowed: Vec<Option<u64>>,
    paused: Option<bool>,
}

struct World<'c> {
    case: &'c Case,
    core: Arc<TraceCore>,
    clock: Arc<ManualClock>,
    sessions: Vec<SessionState>,
    slots: [Option<usize>; SLOTS],
    instances: Vec<Instance>,
    registered: [usize; TRACERS],
    procs: Vec<Option<Proc>>,
    /// The open ports, with their registered names.
    ports: Vec<Option<(Port, Option<Atom>)>>,
    names: [Option<usize>; NAMES.len()],
    counts: Vec<Vec<Count>>,
    /// What the current operation may do to counters, by (uid, function).
    expect: Vec<((usize, usize), Expect)>,
    /// The function the current operation called, if a call succeeded.
    called: Option<Mfa>,
    /// Each process's flags in each session before the operation.
    before: Vec<(usize, usize, TraceFlags)>,
    /// Which processes were alive before the operation.
    alive_before: Vec<bool>,
    log: Vec<String>,
    op: usize,
}

/// Runs `case` on `engine` (checking the invariants): the transcript of
/// replies and messages.
pub fn run(case: &Case, engine: Engine) -> Vec<String> {
    let mut world = World::new(case, engine);
    for (i, op) in case.ops.iter().enumerate() {
        world.op = i;
        world.before = world.flag_snapshot();
        world.alive_before = (0..ENTITIES).map(|e| world.entity_alive(e)).collect();
        world.expect.clear();
        world.called = None;
        let reply = world.apply(op);
        world.log.push(format!("{i}: {op:?} -> {reply}"));
        world.end_of_op();
    }
    world.log
}

impl<'c> World<'c> {
    fn new(case: &'c Case, engine: Engine) -> World<'c> {
        let clock = Arc::new(ManualClock::new());
        let core =
            TraceCore::new(CoreConfig { engine, clock: clock.clone(), ..CoreConfig::default() });
        for (module, functions) in MODULES {
            let functions: Vec<Function> = functions.iter().map(|&f| declared(f)).collect();
            core.declare_module(Atom::new(module), &functions).expect("declare a module");
        }
        let legacy = SessionState {
            session: core.legacy().clone(),
            destroyed_at: None,
            private: [None; TRACERS],
        };
        let mut world = World {
            case,
            core,
            clock,
            sessions: vec![legacy],
            slots: [Some(0), None, None, None],
            instances: Vec::new(),
            registered: [0; TRACERS],
            procs: (0..PIDS.len()).map(|_| None).collect(),
            ports: (0..PORTS.len()).map(|_| None).collect(),
            names: [None; NAMES.len()],
            counts: vec![vec![Count::default(); COUNTED.len()]],
            expect: Vec::new(),
            called: None,
            before: Vec::new(),
            alive_before: Vec::new(),
            log: Vec::new(),
            op: 0,
        };
        // The last tracer pid's process does not exist at first: its
        // tracer is dead until it is spawned.
        for k in 0..TRACERS {
            let dead = k == TRACERS - 1;
            world.registered[k] = world.new_instance(tracer_pid(k), None, dead);
            world.core.register_tracer(
                tracer_pid(k),
                world.instances[world.registered[k]].tracer.clone(),
            );
        }
        for p in [0, 1, FIRST_TRACER, FIRST_TRACER + 1] {
            let process = world.core.spawn(pid_of(p), Some(Mfa::new("world", "idle", 0)));
            world.procs[p] = Some(Proc::new(process, p % 2 == 1));
        }
        // Two sessions to start with: one with a tracer, one without.
        world.create_session(1, SESSION_NAMES[0], Some(0));
        world.create_session(2, SESSION_NAMES[1], None);
        world
    }

    /// Panics with the case and the log so far.
    fn violation(&self, what: String) -> ! {
        panic!(
            "runtime_ops: {what}\n(in op {}: {:?})\n{}",
            self.op,
            self.case.ops.get(self.op),
            describe(self.case, &self.log)
        );
    }

    fn new_instance(&mut self, pid: Pid, owner: Option<usize>, dead: bool) -> usize {
        let (mailbox, inbox) = crossbeam_channel::unbounded();
        let tracer = Arc::new(ProcessTracer::new(pid, mailbox, self.clock.clone()));
        if dead {
            tracer.kill();
        }
        self.instances.push(Instance {
            pid,
            tracer,
            inbox,
            owner,
            dead_from: dead.then_some(self.op),
            system_seq: false,
            meta: false,
            last_mono: i64::MIN,
            last_now: (i64::MIN, 0, 0),
            last_unique: i64::MIN,
        });
        self.instances.len() - 1
    }

    fn tracer_alive(&self, k: usize) -> bool {
        self.instances[self.registered[k]].dead_from.is_none()
    }

    /// Session `uid`'s own tracer for tracer pid `k`.
    fn private(&mut self, uid: usize, k: usize) -> usize {
        if let Some(i) = self.sessions[uid].private[k] {
            return i;
        }
        let dead = !self.tracer_alive(k);
        let i = self.new_instance(tracer_pid(k), Some(uid), dead);
        self.sessions[uid].private[k] = Some(i);
        i
    }

    fn tracer_ref(&self, instance: usize) -> TracerRef {
        self.instances[instance].tracer.clone()
    }

    fn session_in(&self, slot: u8) -> Option<usize> {
        self.slots[index(SLOTS, slot)]
    }

    fn alive(&self, p: usize) -> bool {
        self.procs[p].as_ref().is_some_and(|p| p.process.tracee().is_alive())
    }

    /// The process index `p` names: with its high bit set, exactly `p`
    /// (alive or not); else the first live process from `p` on, so that
    /// most events happen to live processes.
    fn proc_index(&self, p: u8) -> usize {
        let start = usize::from(p & 0x7f) % PIDS.len();
        if p & 0x80 != 0 {
            return start;
        }
        (0..PIDS.len()).map(|i| (start + i) % PIDS.len()).find(|&i| self.alive(i)).unwrap_or(start)
    }

    /// The live process [`World::proc_index`] names.
    fn live_proc(&mut self, p: u8) -> Option<&mut Proc> {
        let p = self.proc_index(p);
        self.live_at(p)
    }

    fn live_at(&mut self, p: usize) -> Option<&mut Proc> {
        if !self.alive(p) {
            return None;
        }
        self.procs[p].as_mut()
    }

    /// Is entity `e` alive: a process (below `PIDS.len()`) or an open
    /// port (from there on)?
    fn entity_alive(&self, e: usize) -> bool {
        match e.checked_sub(PIDS.len()) {
            None => self.alive(e),
            Some(q) => self.ports[q].is_some(),
        }
    }

    /// Every entity's flags in every live session (processes, then ports
    /// from `PIDS.len()` on).
    fn flag_snapshot(&self) -> Vec<(usize, usize, TraceFlags)> {
        let mut flags = Vec::new();
        let procs = self.procs.iter().map(|p| p.as_ref().map(|p| p.process.tracee()));
        let ports = self.ports.iter().map(|q| q.as_ref().map(|(q, _)| q.tracee()));
        for (e, tracee) in procs.chain(ports).enumerate() {
            let Some(tracee) = tracee else { continue };
            for (uid, s) in self.sessions.iter().enumerate() {
                if s.destroyed_at.is_none() {
                    flags.push((e, uid, tracee.flags(&s.session)));
                }
            }
        }
        flags
    }

    // ---- Operations ---------------------------------------------------------------

    fn apply(&mut self, op: &Op) -> String {
        match *op {
            Op::SessionCreate { slot, name, tracer } => {
                let slot = 1 + index(SLOTS - 1, slot);
                let uid = self.create_session(slot, pick::<&str>(&SESSION_NAMES, name), tracer);
                format!("session {uid} in slot {slot}")
            }
            Op::SessionDestroy { slot } => {
                let Some(uid) = self.session_in(slot) else { return "no session".into() };
                let session = self.sessions[uid].session.clone();
                let result = self.core.session_destroy(&session);
                match (&result, uid, self.sessions[uid].destroyed_at) {
                    (Err(TraceError::Session), 0, _) | (Ok(false), _, Some(_)) => {}
                    (Ok(true), 1.., None) => self.sessions[uid].destroyed_at = Some(self.op),
                    _ => self.violation(format!("session_destroy of session {uid}: {result:?}")),
                }
                format!("{result:?}")
            }
            Op::Process { session, target, on, flags, tracer } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                self.trace_process(uid, target, on, flags, tracer)
            }
            Op::Ports { session, target, on, flags, tracer } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                let s = self.sessions[uid].session.clone();
                let tracer = tracer.map(|k| {
                    let i = self.private(uid, index(TRACERS, k));
                    self.tracer_ref(i)
                });
                let no_tracer = on && tracer.is_none() && s.tracer().is_none();
                let (spec, closed) = match target {
                    PortTarget::Port(q) => {
                        let q = index(PORTS.len(), q);
                        (PortSpec::Port(PortId(PORTS[q])), self.ports[q].is_none())
                    }
                    PortTarget::All => (PortSpec::All, false),
                    PortTarget::Existing => (PortSpec::Existing, false),
                    PortTarget::New => (PortSpec::New, false),
                };
                let flags = pool_flags(flags);
                let change =
                    if on { FlagChange::On { flags, tracer } } else { FlagChange::off(flags) };
                let result = self.core.trace_ports(&s, spec, change);
                let expected = if self.sessions[uid].destroyed_at.is_some() {
                    Some(TraceError::Session)
                } else if no_tracer {
                    Some(TraceError::BadOpt)
                } else if closed {
                    Some(TraceError::BadTarget)
                } else {
                    None
                };
                if let Some(error) = expected
                    && result.as_ref().err() != Some(&error)
                {
                    self.violation(format!("trace:port should fail with {error:?}: {result:?}"));
                }
                short(&result)
            }
            Op::Function { session, mfa, action, kinds, meta } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                self.trace_function(uid, Some(mfa), action, kinds, meta)
            }
            Op::OnLoad { session, action, kinds } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                self.trace_function(uid, None, action, kinds, None)
            }
            Op::MessagePattern { session, receive, pattern } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                let s = self.sessions[uid].session.clone();
                let event = if receive { MessageEvent::Receive } else { MessageEvent::Send };
                let pattern = pick(&CONSTS.message_patterns, pattern).as_ref();
                let result = self.core.set_message_pattern(&s, event, pattern);
                if self.sessions[uid].destroyed_at.is_some() && result != Err(TraceError::Session) {
                    self.violation(format!("a message pattern in a destroyed session: {result:?}"));
                }
                short(&result)
            }
            Op::Declare { module } => {
                let (name, functions) = *pick(&MODULES, module);
                let functions: Vec<Function> = functions.iter().map(|&f| declared(f)).collect();
                let result = self.core.declare_module(Atom::new(name), &functions);
                if result.is_ok() {
                    for uid in 0..self.sessions.len() {
                        for (f, counted) in COUNTED.iter().enumerate() {
                            if counted.0 == name {
                                self.expect_count(uid, f, vec![None, Some(0)], Some(false));
                            }
                        }
                    }
                }
                format!("{:?}", result.map(|e| e.len()))
            }
            Op::Spawn { parent, child, bottom } => self.spawn(parent, child, bottom),
            Op::OpenPort { owner, port } => self.open_port(owner, port),
            Op::PortEvent { port, event, other } => self.port_event(port, event, other),
            Op::Call { process, function, args, style, remote } => {
                self.call(process, function, args, style, remote)
            }
            Op::Return { process, value: v } => {
                let p = self.proc_index(process);
                let Some(proc) = self.procs[p].as_mut() else { return "no process".into() };
                let alive = proc.process.tracee().is_alive();
                if alive && v & 0x80 == 0 && !proc.has_more_functions_than(1) {
                    // Only a value with its high bit set ends a process.
                    return "kept".into();
                }
                let result = proc.return_value(value(v).as_ref());
                if !alive && result != Err(StackError::Exited) {
                    self.violation(format!("a return in an exited process: {result:?}"));
                }
                format!("{result:?}")
            }
            Op::Raise { process, class, reason } => {
                let p = self.proc_index(process);
                let Some(proc) = self.procs[p].as_mut() else { return "no process".into() };
                let alive = proc.process.tracee().is_alive();
                if alive && reason & 0x80 == 0 && !proc.has_more_functions_than(1) {
                    // Only a reason with its high bit set may end a process.
                    return "kept".into();
                }
                let class = Atom::new(pick::<&str>(&["error", "exit", "throw", "bogus"], class));
                let result = proc.raise(class, value(reason).as_ref());
                if !alive && !matches!(result, Err(StackError::Exited)) {
                    self.violation(format!("a raise in an exited process: {result:?}"));
                }
                match result {
                    Ok(raised) => format!("{raised:?}"),
                    Err(e) => format!("{e:?}"),
                }
            }
            Op::Send { from, to, message } => self.send(from, to, message),
            Op::Arrive { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let Some((origin, message, token)) = proc.in_flight.pop_front() else {
                    return "nothing on its way".into();
                };
                proc.process.message_arrived(origin, message.as_ref());
                proc.queue.push_back((message, token));
                "arrived".into()
            }
            Op::Timeout { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let message = Term::atom(Atom::new("timeout"));
                proc.process
                    .message_arrived(Origin::Other(Atom::new("clock_service")), message.as_ref());
                proc.queue.push_back((message, MessageToken::NONE));
                "arrived".into()
            }
            Op::Consume { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let Some((message, token)) = proc.queue.pop_front() else { return "empty".into() };
                proc.process.consume(message.as_ref(), &token);
                "consumed".into()
            }
            Op::Link { process, other, now } => {
                let other = self.proc_index(other);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let signal = proc.process.link(pid_of(other));
                let from = signal.from();
                if let Some(o) = self.live_at(other) {
                    o.signals.push_back(Signal::Link(signal));
                    if now {
                        o.handle_signals();
                    }
                }
                format!("linked from {from}")
            }
            Op::Unlink { process, other, now } => {
                let other = self.proc_index(other);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.unlink(pid_of(other));
                let me = proc.process.pid();
                if let Some(o) = self.live_at(other) {
                    o.signals.push_back(Signal::Unlink(me));
                    if now {
                        o.handle_signals();
                    }
                }
                "unlinked".into()
            }
            Op::Signals { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                format!("{} handled", proc.handle_signals())
            }
            Op::Register { process, name } => {
                let n = index(NAMES.len(), name);
                let p = self.proc_index(process);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.register(Atom::new(NAMES[n]));
                self.names[n] = Some(p);
                "registered".into()
            }
            Op::Unregister { process, name } => {
                let n = index(NAMES.len(), name);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.unregister(Atom::new(NAMES[n]));
                self.names[n] = None;
                "unregistered".into()
            }
            Op::ExitWith { process, reason } => {
                let p = self.proc_index(process);
                let Some(proc) = self.procs[p].as_mut() else { return "no process".into() };
                proc.process.exit_with(value(reason).as_ref());
                "exited".into()
            }
            Op::SeqPrint { process, label, message } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let label = label.map(|l| value(l).as_ref());
                format!("{}", proc.process.seq_print(label, value(message).as_ref()))
            }
            Op::SystemSeqTracer { tracer } => {
                let Some(k) = tracer.map(|k| index(TRACERS, k)) else {
                    let result = self.core.set_system_seq_tracer(None);
                    return format!("{:?}", result.map(|t| t.is_some()));
                };
                let i = self.registered[k];
                let result = self.core.set_system_seq_tracer(Some(self.tracer_ref(i)));
                let dead = self.instances[i].dead_from.is_some();
                if dead != result.is_err() {
                    self.violation(format!(
                        "set_system_seq_tracer of a tracer (dead: {dead}): {result:?}"
                    ));
                }
                if result.is_ok() {
                    self.instances[i].system_seq = true;
                }
                format!("{:?}", result.map(|t| t.is_some()))
            }
            Op::ResetSeqTrace => {
                self.core.reset_seq_trace();
                "reset".into()
            }
            Op::AdvanceClock { ns } => {
                self.clock.advance(i64::from(ns) * 1000);
                "advanced".into()
            }
            Op::NodeName { name } => {
                let name = NODE_NAMES[index(NODE_NAMES.len(), name)];
                self.core.set_node_name(Atom::new(name));
                format!("node {name}")
            }
            Op::RemoteLink { process, remote, kind } => {
                let remote = remote_of(remote);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                match kind % 4 {
                    0 => proc.process.link_remote(remote),
                    1 => proc.process.unlink_remote(remote),
                    2 => proc.process.linked_by_remote(remote),
                    _ => proc.process.unlinked_by_remote(remote),
                }
                "remote link signal".into()
            }
            Op::RemoteMessage { process, remote, message } => {
                // The high bit: the sender had a sequential trace token
                // (labelled and traced by the message's value).
                let token = match remote & 0x80 {
                    0 => MessageToken::NONE,
                    _ => {
                        let mut heap = Heap::new();
                        let from = remote_of(remote).to_word(&mut heap);
                        let label = value(message).as_ref().copy_to(&mut heap);
                        let flags = Word::small(i64::from(message & 0x3f)).expect("small");
                        let serial = Word::small(i64::from(message)).expect("small");
                        let zero = Word::small(0).expect("small");
                        let root = heap.tuple(&[flags, label, serial, from, zero]);
                        match self.core.message_token(heap.view(root)) {
                            Some(token) => token,
                            None => self.violation("a well-formed remote token refused".into()),
                        }
                    }
                };
                let remote = remote_of(remote);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let message = value(message);
                proc.process.message_arrived(Origin::Remote(remote), message.as_ref());
                proc.queue.push_back((message.clone(), token));
                "arrived from afar".into()
            }
            Op::KillTracer { tracer } => {
                let k = index(TRACERS, tracer);
                self.kill_tracer(k, self.op);
                if let Some(proc) = self.procs[FIRST_TRACER + k].as_mut() {
                    proc.process.exit_with(Term::atom(Atom::new("killed")).as_ref());
                }
                "killed".into()
            }
            Op::Scheduler { process, id } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.set_scheduler_id(u32::from(id));
                "moved".into()
            }
            Op::ScheduleOut { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.schedule_out();
                "out".into()
            }
            Op::ScheduleIn { process } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                proc.process.schedule_in();
                "in".into()
            }
            Op::Allocate { process, words } => {
                let p = self.proc_index(process);
                let Some(proc) = self.procs[p].as_mut() else { return "no process".into() };
                let alive = proc.process.tracee().is_alive();
                let result = proc.process.allocated(u64::from(words));
                if alive != result.is_ok() {
                    self.violation(format!("allocated (alive: {alive}): {result:?}"));
                }
                format!("{result:?}")
            }
            Op::TraceSchedule { process, event } => {
                let event = usize::from(event) % 5;
                let proc = if event == 4 {
                    let p = self.proc_index(process | 0x80);
                    self.procs[p].as_mut()
                } else {
                    self.live_proc(process)
                };
                let Some(proc) = proc else { return "no process".into() };
                match event {
                    0 => proc.trace_schedule(true, false),
                    1 => proc.trace_schedule(false, false),
                    2 => proc.trace_schedule(true, true),
                    3 => proc.trace_schedule(false, true),
                    _ => proc.process.trace_schedule_out_exited(),
                }
                format!("scheduling event {event}")
            }
            Op::Gc { process, event, words } => {
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let event = *pick(
                    &[
                        GcEvent::MinorStart,
                        GcEvent::MinorEnd,
                        GcEvent::MajorStart,
                        GcEvent::MajorEnd,
                        GcEvent::MaxHeapSize,
                    ],
                    event,
                );
                let words = u64::from(words);
                let info = GcInfo {
                    wordsize: words,
                    heap_size: 2 * words,
                    heap_block_size: 4 * words + 233,
                    stack_size: 12,
                    ..GcInfo::default()
                };
                proc.process.trace_gc(event, &info);
                format!("{event:?}")
            }
            Op::ExitSignal { process, to, reason } => {
                let to = self.proc_index(to);
                let Some(proc) = self.live_proc(process) else { return "no process".into() };
                let me = proc.process.pid();
                let reason = value(reason);
                let token = proc.process.exit_signal(pid_of(to), reason.as_ref());
                let carries = token.is_some();
                let mut heap = Heap::new();
                let from = me.to_word(&mut heap);
                let reason = reason.as_ref().copy_to(&mut heap);
                let root = heap.tuple(&[Word::atom(Atom::new("EXIT")), from, reason]);
                if let Some(receiver) = self.live_at(to) {
                    let message = Term::from_parts(heap, root);
                    receiver.in_flight.push_back((Origin::Process(me), message, token));
                }
                format!("exit signal (token: {carries})")
            }
            Op::Info { session, process, function, key } => {
                let Some(uid) = self.session_in(session) else { return "no session".into() };
                self.info(uid, process, function, key)
            }
        }
    }

    /// A new session in `slot`, with tracer pid `tracer` (an index, taken
    /// modulo the pool) or the `undefined` tracer.
    fn create_session(&mut self, slot: usize, name: &str, tracer: Option<u8>) -> usize {
        let uid = self.sessions.len();
        self.sessions.push(SessionState {
            session: self.core.legacy().clone(),
            destroyed_at: None,
            private: [None; TRACERS],
        });
        let tracer = tracer.map(|k| {
            let i = self.private(uid, index(TRACERS, k));
            self.tracer_ref(i)
        });
        self.sessions[uid].session = self.core.session_create(Atom::new(name), tracer);
        self.slots[slot] = Some(uid);
        self.counts.push(vec![Count::default(); COUNTED.len()]);
        uid
    }

    fn trace_process(
        &mut self,
        uid: usize,
        target: Target,
        on: bool,
        flags: u32,
        tracer: Option<u8>,
    ) -> String {
        let session = self.sessions[uid].session.clone();
        let set = pool_flags(flags);
        let spec = match target {
            Target::Pid(p) => ProcessSpec::Pid(pid_of(self.proc_index(p))),
            Target::All => ProcessSpec::All,
            Target::Existing => ProcessSpec::Existing,
            Target::New => ProcessSpec::New,
        };
        let tracer = tracer.map(|k| {
            let i = self.private(uid, index(TRACERS, k));
            self.tracer_ref(i)
        });
        let no_tracer = on && tracer.is_none() && session.tracer().is_none();
        let change = if on { FlagChange::On { flags: set, tracer } } else { FlagChange::off(set) };
        let result = self.core.trace_processes(&session, spec, change);
        let expected = if self.sessions[uid].destroyed_at.is_some() {
            Some(TraceError::Session)
        } else if no_tracer {
            Some(TraceError::BadOpt)
        } else {
            match target {
                Target::Pid(p) if !self.alive(self.proc_index(p)) => Some(TraceError::BadTarget),
                _ => None,
            }
        };
        if let Some(error) = expected
            && result.as_ref().err() != Some(&error)
        {
            self.violation(format!("trace:process should fail with {error:?}: {result:?}"));
        }
        short(&result)
    }

    /// `trace:function/4` on `mfa` (an index of [`MFA_PATTERNS`]), or on
    /// `on_load` when `None`.
    fn trace_function(
        &mut self,
        uid: usize,
        mfa: Option<u8>,
        action: u8,
        kinds: u8,
        meta: Option<u8>,
    ) -> String {
        let session = self.sessions[uid].session.clone();
        let dead_session = self.sessions[uid].destroyed_at.is_some();
        let meta_k = index(TRACERS, meta.unwrap_or(0));
        let meta_instance = self.private(uid, meta_k);
        let meta_tracer = self.tracer_ref(meta_instance);
        let default_meta = session.tracer().cloned().or_else(|| Some(meta_tracer.clone()));
        let flags_term = kinds_term(kinds, tracer_pid(meta_k));
        let mut resolve = |t: TermRef<'_>| {
            let pid = Pid::from_term(t.as_tuple()?.get(1)?)?;
            (pid == tracer_pid(meta_k)).then(|| meta_tracer.clone())
        };
        let flags =
            match parse_pattern_flags(&session, flags_term.as_ref(), &mut resolve, default_meta) {
                Ok(flags) => flags,
                Err(e) => {
                    if kinds & 0x80 != 0 && e != TraceError::BadOpt {
                        self.violation(format!("an unknown function flag: {e:?}"));
                    }
                    return format!("flags {e:?}");
                }
            };
        if kinds & 0x80 != 0 {
            self.violation("an unknown function flag was accepted".into());
        }
        if flags.kinds.contains(BpFlags::META) {
            if let Some(own) = session.tracer() {
                // Plain `meta` in a session with a tracer names it.
                for instance in &mut self.instances {
                    if Arc::ptr_eq(&(instance.tracer.clone() as TracerRef), own) {
                        instance.meta = true;
                    }
                }
            }
            self.instances[meta_instance].meta = true;
        }
        let action_index = usize::from(action) % (5 + CALL_SPECS.len());
        let action = match action_index {
            0 => Ok(PatternAction::Off),
            1 => Ok(PatternAction::On),
            2 => Ok(PatternAction::Restart),
            3 => Ok(PatternAction::Pause),
            4 => parse_pattern_action(&self.core, Term::list([]).as_ref()),
            i => parse_pattern_action(&self.core, CONSTS.call_specs[i - 5].as_ref()),
        };
        let action = match action {
            Ok(action) => action,
            Err(e) => {
                if action_index != 5 + CALL_SPECS.len() - 1 {
                    self.violation(format!(
                        "{} does not compile: {e}",
                        CALL_SPECS[action_index - 5]
                    ));
                }
                return format!("action {e:?}");
            }
        };
        let Some(mfa) = mfa else {
            let result = self.core.set_on_load(&session, action, flags);
            if dead_session && result != Err(TraceError::Session) {
                self.violation(format!("on_load in a destroyed session: {result:?}"));
            }
            return short(&result);
        };
        let mfa_index = index(MFA_PATTERNS.len(), mfa);
        let pattern = match MfaPattern::from_term(CONSTS.mfa_patterns[mfa_index].as_ref()) {
            Ok(pattern) => pattern,
            Err(e) => {
                if mfa_index < FIRST_BAD_MFA {
                    self.violation(format!("a good MFA pattern refused: {e:?}"));
                }
                return format!("mfa {e:?}");
            }
        };
        if mfa_index >= FIRST_BAD_MFA {
            self.violation("a malformed MFA pattern was accepted".into());
        }
        let result = self.core.set_pattern(&session, pattern, &action, &flags);
        if dead_session && result != Err(TraceError::Session) {
            self.violation(format!("trace:function in a destroyed session: {result:?}"));
        }
        if result.is_ok() {
            self.expect_pattern(uid, pattern, &action, &flags);
        }
        short(&result)
    }

    /// What a `trace:function/4` that succeeded may do to the counters of
    /// session `uid`.
    fn expect_pattern(
        &mut self,
        uid: usize,
        pattern: MfaPattern,
        action: &PatternAction,
        flags: &PatternFlags,
    ) {
        for (f, &function) in CONSTS.counted.iter().enumerate() {
            let Some(entry) = self.core.function(function) else { continue };
            if !pattern.matches(&entry) {
                continue;
            }
            let old = self.counts[uid][f].last;
            let counting = flags.kinds.contains(BpFlags::COUNT);
            let (allowed, paused) = match action {
                _ if flags.is_breakpoint() && counting => match (action, old) {
                    (PatternAction::Off, _) => (vec![None], Some(false)),
                    (PatternAction::Pause, Some(m)) => (vec![Some(m)], Some(true)),
                    // A new counter counts, even when made by `pause`.
                    (_, None) => (vec![None, Some(0)], Some(false)),
                    (_, Some(_)) => (vec![Some(0)], Some(false)),
                },
                _ if flags.is_breakpoint() => (vec![old], None),
                PatternAction::Off => (vec![old], None),
                // Global trace replaces the local kinds (a function that is
                // not exported may keep them, as in ERTS, or lose them).
                _ if entry.is_exported() => (vec![None], Some(false)),
                _ => (vec![None, old], None),
            };
            self.expect_count(uid, f, allowed, paused);
        }
    }

    fn expect_count(
        &mut self,
        uid: usize,
        f: usize,
        allowed: Vec<Option<u64>>,
        paused: Option<bool>,
    ) {
        self.expect.retain(|(key, _)| *key != (uid, f));
        self.expect.push(((uid, f), Expect { allowed, paused }));
    }

    fn spawn(&mut self, parent: Option<u8>, child: u8, bottom: bool) -> String {
        let c = index(PIDS.len(), child);
        if self.alive(c) {
            return "alive".into();
        }
        let initial = bottom.then(|| Mfa::new("world", "idle", 0));
        let parent = parent.map(|p| self.proc_index(p)).filter(|&p| self.alive(p));
        if c >= FIRST_TRACER {
            // The tracer process lives again: fresh tracers for its pid.
            let k = c - FIRST_TRACER;
            let i = self.new_instance(tracer_pid(k), None, false);
            self.registered[k] = i;
            self.core.register_tracer(tracer_pid(k), self.tracer_ref(i));
            for s in &mut self.sessions {
                s.private[k] = None;
            }
        }
        let process = match parent {
            Some(p) => {
                let tracee = self.procs[p].as_ref().expect("alive").process.tracee().clone();
                self.core.spawn_from(&tracee, pid_of(c), initial, CONSTS.start.as_ref())
            }
            None => self.core.spawn(pid_of(c), initial),
        };
        self.procs[c] = Some(Proc::new(process, c % 2 == 1));
        format!("spawned by {parent:?}")
    }

    fn call(&mut self, process: u8, function: u8, args: u8, style: u8, remote: bool) -> String {
        let callee = *pick(&CONSTS.calls, function);
        let Some(entry) = self.core.function(callee) else { return "undef".into() };
        let p = self.proc_index(process);
        let Some(proc) = self.procs[p].as_mut() else { return "no process".into() };
        let alive = proc.process.tracee().is_alive();
        let has_function = proc.has_more_functions_than(0);
        let style = *pick(&[CallStyle::Body, CallStyle::Tail, CallStyle::Try], style);
        let arguments: Vec<Term> =
            (0..callee.arity).map(|i| value(args.wrapping_add(i)).clone()).collect();
        let arguments = Term::list(arguments);
        let reach = if remote { Reach::Remote } else { Reach::Local };
        let result = proc.call(&entry, arguments.as_ref(), reach, style);
        let expected = if !alive {
            Err(StackError::Exited)
        } else if style != CallStyle::Body && !has_function {
            Err(StackError::NoActiveFunction)
        } else {
            Ok(())
        };
        if result != expected {
            self.violation(format!("call: {result:?}, expected {expected:?}"));
        }
        if result.is_ok() {
            self.called = Some(callee);
        }
        format!("{result:?}")
    }

    fn send(&mut self, from: u8, to: Dest, message: u8) -> String {
        let (to_term, receiver) = match to {
            Dest::Pid(p) => {
                let p = self.proc_index(p);
                let mut heap = Heap::new();
                let word = pid_of(p).to_word(&mut heap);
                (Term::from_parts(heap, word), self.alive(p).then_some(p))
            }
            Dest::Name(n) => {
                let n = index(NAMES.len(), n);
                let receiver = self.names[n].filter(|&p| self.alive(p));
                (Term::atom(Atom::new(NAMES[n])), receiver)
            }
            Dest::Dead => {
                let mut heap = Heap::new();
                let word = Pid::new(99, 0).to_word(&mut heap);
                (Term::from_parts(heap, word), None)
            }
            Dest::Remote(r) => {
                let mut heap = Heap::new();
                let word = remote_of(r).to_word(&mut heap);
                (Term::from_parts(heap, word), None)
            }
            Dest::RemoteName(n) => {
                let mut heap = Heap::new();
                let name = Word::atom(Atom::new(NAMES[index(NAMES.len(), n)]));
                let word = heap.tuple(&[name, Word::atom(Atom::new("there@host"))]);
                (Term::from_parts(heap, word), None)
            }
        };
        let Some(proc) = self.live_proc(from) else { return "no process".into() };
        let me = proc.process.pid();
        let message = value(message);
        let token = proc.process.send(to_term.as_ref(), receiver.map(pid_of), message.as_ref());
        let carries = token.is_some();
        if let Some(r) = receiver
            && let Some(proc) = self.procs[r].as_mut()
        {
            proc.in_flight.push_back((Origin::Process(me), message.clone(), token));
        }
        format!("sent (token: {carries})")
    }

    fn kill_tracer(&mut self, k: usize, from: usize) {
        for instance in &mut self.instances {
            if instance.pid == tracer_pid(k) && instance.dead_from.is_none() {
                instance.tracer.kill();
                instance.dead_from = Some(from);
            }
        }
    }

    fn info(&mut self, uid: usize, process: u8, function: u8, key: u8) -> String {
        let session = self.sessions[uid].session.clone();
        let mut heap = Heap::new();
        let mut out = String::new();
        let pid = pid_of(self.proc_index(process));
        for key in ["flags", "tracer", "bogus"] {
            let result = info::process_info(
                &self.core,
                &session,
                ProcessSpec::Pid(pid),
                Atom::new(key),
                &mut heap,
            );
            let new = info::process_info(
                &self.core,
                &session,
                ProcessSpec::New,
                Atom::new(key),
                &mut heap,
            );
            if key == "bogus"
                && (result.is_ok() && self.alive(self.proc_index(process)) || new.is_ok())
            {
                self.violation(format!("process_info with an unknown key: {result:?} {new:?}"));
            }
            let _ = write!(out, "{} {} ", text(&heap, result), text(&heap, new));
        }
        let f = *pick(&CONSTS.calls, function);
        let key_name = *pick(&FUNCTION_KEYS, key);
        let key = Term::atom(Atom::new(key_name));
        let result = info::function_info(&self.core, &session, f, key.as_ref(), &mut heap);
        // An unknown key is badarg once the function is traced; before,
        // OTP 27 answers any key `{Key, false}` (`undefined` if
        // undeclared), where OTP 29 checks the key first.
        let untraced = matches!(
            self.core.function_tracing(&session, f),
            FunctionTracing::Untraced | FunctionTracing::Undeclared
        );
        let checked_first = self.core.release().has(matchspec::Change::TraceInfoItemBadarg);
        if key_name == "bogus" && result.is_ok() != (untraced && !checked_first) {
            self.violation(format!("function_info with an unknown key: {result:?}"));
        }
        let _ = write!(out, "{} ", text(&heap, result));
        let w = info::session_info_function(&self.core, f, &mut heap);
        let _ = write!(out, "{} ", heap.view(w).without_strings());
        let w = info::session_info_process(&self.core, pid, &mut heap);
        let _ = write!(out, "{} ", heap.view(w).without_strings());
        for what in ["all", "on_load", "new", "send", "receive", "bogus"] {
            let sessions = info::sessions_tracing(&self.core, Atom::new(what));
            if (what == "bogus") == sessions.is_some() {
                self.violation(format!("sessions_tracing({what})"));
            }
            let _ = write!(out, "{} ", sessions.map_or(0, |s| s.len()));
        }
        for event in [MessageEvent::Send, MessageEvent::Receive] {
            let result =
                info::message_pattern_info(&session, event, Atom::new("match_spec"), &mut heap);
            let _ = write!(out, "{} ", text(&heap, result));
        }
        for key in ["flags", "tracer", "bogus"] {
            let item = Term::atom(Atom::new(key));
            let result =
                info::port_info(&self.core, &session, PortSpec::New, item.as_ref(), &mut heap);
            if (key == "bogus") == result.is_ok() {
                self.violation(format!("new_ports_info({key}): {result:?}"));
            }
            let _ = write!(out, "{} ", text(&heap, result));
        }
        let w = on_load_info(&self.core, &session, key.as_ref(), &mut heap);
        let _ =
            write!(out, "{}", w.map_or("-".into(), |w| heap.view(w).without_strings().to_string()));
        out
    }

    // ---- Ports ---------------------------------------------------------------------

    fn open_port(&mut self, owner: u8, port: u8) -> String {
        let q = index(PORTS.len(), port);
        if self.ports[q].is_some() {
            return "open".into();
        }
        let owner = self.proc_index(owner);
        let Some(proc) = self.live_at(owner) else { return "no owner".into() };
        let id = PortId(PORTS[q]);
        proc.process.link_port(id);
        let port = self.core.open_port(id, pid_of(owner), Atom::new("cat"));
        port.linked_by(pid_of(owner));
        self.ports[q] = Some((port, None));
        format!("opened {id}")
    }

    fn port_event(&mut self, port: u8, event: u8, other: u8) -> String {
        let q = index(PORTS.len(), port);
        if self.ports[q].is_none() {
            return "not open".into();
        }
        let id = PortId(PORTS[q]);
        let p = self.proc_index(other);
        let pid = pid_of(p);
        let value = pick(&CONSTS.values, other).clone();
        let task = [None, Some(Atom::new("command")), Some(Atom::new("close"))];
        let task = *pick(&task, other);
        match event % 9 {
            0 => self.ports[q].as_ref().expect("open").0.trace_schedule_in(task),
            1 => self.ports[q].as_ref().expect("open").0.trace_schedule_out(task),
            2 | 3 => {
                let link = event % 9 == 2;
                if let Some(proc) = self.live_at(p) {
                    if link { proc.process.link_port(id) } else { proc.process.unlink_port(id) }
                }
                let port = &self.ports[q].as_ref().expect("open").0;
                if link { port.linked_by(pid) } else { port.unlinked_by(pid) }
            }
            4 | 5 => {
                let name = Atom::new(pick::<&str>(&NAMES, other));
                let (port, named) = self.ports[q].as_mut().expect("open");
                if event % 9 == 4 {
                    if named.is_some() {
                        return "named".into();
                    }
                    port.register(name);
                    *named = Some(name);
                } else {
                    let Some(name) = named.take() else { return "not named".into() };
                    port.unregister(name);
                }
            }
            6 => self.ports[q].as_ref().expect("open").0.received(pid, value.as_ref()),
            7 => {
                let mut heap = Heap::new();
                let to = pid.to_word(&mut heap);
                let exists = self.alive(p);
                let port = &self.ports[q].as_ref().expect("open").0;
                port.sent(heap.view(to), value.as_ref(), exists);
            }
            _ => {
                let (port, name) = self.ports[q].take().expect("open");
                port.close(value.as_ref(), name);
            }
        }
        format!("{id} event {}", event % 9)
    }

    // ---- After each operation: the invariants ---------------------------------------

    fn end_of_op(&mut self) {
        // A tracer whose process is gone is dead from the next operation.
        for k in 0..TRACERS {
            if !self.alive(FIRST_TRACER + k) {
                self.kill_tracer(k, self.op + 1);
            }
        }
        // Names of dead processes are free.
        for n in 0..NAMES.len() {
            if self.names[n].is_some_and(|p| !self.alive(p)) {
                self.names[n] = None;
            }
        }
        let after = self.flag_snapshot();
        for i in 0..self.instances.len() {
            let delivered: Vec<Delivered> = self.instances[i].inbox.try_iter().collect();
            for d in delivered {
                self.log.push(format!(
                    "  {} <- {}",
                    d.tracer,
                    d.message.as_ref().without_strings()
                ));
                self.check_message(i, &d, &after);
            }
        }
        self.check_counts();
    }

    fn check_message(&mut self, i: usize, d: &Delivered, after: &[(usize, usize, TraceFlags)]) {
        let instance = &self.instances[i];
        let message = d.message.as_ref();
        let shown = message.without_strings().to_string();
        if d.tracer != instance.pid {
            self.violation(format!(
                "{shown} delivered as from {} by tracer {}",
                d.tracer, instance.pid
            ));
        }
        if instance.dead_from.is_some_and(|op| op <= self.op) {
            self.violation(format!("dead tracer {} received {shown}", instance.pid));
        }
        if let Some(uid) = instance.owner
            && self.sessions[uid].destroyed_at.is_some_and(|op| op <= self.op)
        {
            self.violation(format!(
                "destroyed session {uid}'s tracer {} received {shown}",
                instance.pid
            ));
        }
        let Some(tuple) = message.as_tuple() else {
            self.violation(format!("not a tuple: {shown}"))
        };
        let elements: Vec<TermRef<'_>> = tuple.iter().collect();
        let tag = elements.first().and_then(|t| t.as_atom()).map(Atom::name);
        match tag {
            Some("seq_trace") => {
                if !instance.system_seq {
                    self.violation(format!(
                        "{shown} to a tracer never made the system sequential tracer"
                    ));
                }
                if !(3..=4).contains(&elements.len()) || !seq_info_ok(elements[2]) {
                    self.violation(format!("malformed: {shown}"));
                }
                if elements.len() == 4 {
                    self.check_timestamp(i, elements[3], &shown);
                }
            }
            Some(tag @ ("trace" | "trace_ts")) => {
                let timestamped = tag == "trace_ts";
                let tracee_term = elements.get(1).copied();
                if let Some(port) = tracee_term.and_then(PortId::from_term) {
                    return self.check_port_message(i, port, &elements, timestamped, after, &shown);
                }
                let Some(tracee) = tracee_term.and_then(Pid::from_term) else {
                    self.violation(format!("no tracee pid: {shown}"));
                };
                // Return events ask the tracer nothing (ERTS's
                // `erts_trace_return`, `erts_trace_exception` and
                // `erts_trace_return_to`): they go to the process's tracer
                // at the time of the return, which may since have become
                // the process itself. Every other event is `enabled` first,
                // which `erl_tracer` answers `discard` for its own pid.
                let tag = elements.get(2).and_then(|t| t.as_atom()).map(Atom::name);
                let asked = !matches!(tag, Some("return_from" | "exception_from" | "return_to"));
                if tracee == instance.pid && asked {
                    self.violation(format!(
                        "tracer {} received an event about itself: {shown}",
                        instance.pid
                    ));
                }
                let Some(p) = PIDS.iter().position(|&id| Pid::new(id, 0) == tracee) else {
                    self.violation(format!("a tracee that is not in the world: {shown}"));
                };
                let rest = self.without_timestamp(i, &elements[2..], timestamped, &shown);
                let Some(need) = event_ok(rest) else {
                    self.violation(format!("malformed: {shown}"))
                };
                // Only `out_exited` is about a process that has exited.
                let exited = rest[0].as_atom().map(Atom::name) == Some("out_exited");
                if !self.alive_before[p] && !self.alive(p) && !exited {
                    self.violation(format!("{shown} about a process that was not alive"));
                }
                let instance = &self.instances[i];
                // Meta trace has flags of its own; registered tracers are
                // not any one session's.
                let Some(uid) = instance.owner.filter(|_| !instance.meta) else { return };
                let flags_in = |flags: &[(usize, usize, TraceFlags)]| {
                    flags
                        .iter()
                        .find(|&&(q, u, _)| q == p && u == uid)
                        .map_or(TraceFlags::empty(), |&(_, _, f)| f)
                };
                let (before, after) = (flags_in(&self.before), flags_in(after));
                let (any, all) = (before | after, before & after);
                let had = match need {
                    Need::All(flags) => any.contains(flags),
                    Need::Any(flags) => any.intersects(flags),
                };
                if !had {
                    self.violation(format!(
                        "{shown} from session {uid}, where {tracee} had no {need:?} before or after"
                    ));
                }
                // `trace_ts` exactly when the process has a timestamp flag.
                let stamped = if any.intersects(TraceFlags::TIMESTAMPS) {
                    all.intersects(TraceFlags::TIMESTAMPS) && !timestamped
                } else {
                    timestamped
                };
                // A call's arguments are the arity exactly with `arity`.
                let arity = rest.get(1).and_then(|m| m.as_tuple()).and_then(|m| m.get(2));
                let arity_wrong = match (rest[0].as_atom().map(Atom::name), arity) {
                    (Some("call"), Some(a)) if any.contains(TraceFlags::ARITY) => {
                        all.contains(TraceFlags::ARITY) && a.as_i64().is_none()
                    }
                    (Some("call"), Some(a)) => a.as_i64().is_some(),
                    _ => false,
                };
                if stamped || arity_wrong {
                    self.violation(format!(
                        "{shown} from session {uid}, where {tracee} had flags {before:?} before \
                         and {after:?} after"
                    ));
                }
            }
            _ => self.violation(format!("not a trace message: {shown}")),
        }
    }

    /// A message about a port: a port of the world that was open before or
    /// after the operation, an event of the port kinds, and the flag for it
    /// (and a timestamp exactly with a timestamp flag) in the session.
    fn check_port_message(
        &mut self,
        i: usize,
        port: PortId,
        elements: &[TermRef<'_>],
        timestamped: bool,
        after: &[(usize, usize, TraceFlags)],
        shown: &str,
    ) {
        let Some(q) = PORTS.iter().position(|&n| PortId(n) == port) else {
            self.violation(format!("a port that is not in the world: {shown}"));
        };
        let e = PIDS.len() + q;
        let rest = self.without_timestamp(i, &elements[2..], timestamped, shown);
        let Some(need) = port_event_ok(rest) else {
            self.violation(format!("malformed port event: {shown}"))
        };
        if !self.alive_before[e] && !self.entity_alive(e) {
            self.violation(format!("{shown} about a port that was not open"));
        }
        let instance = &self.instances[i];
        let Some(uid) = instance.owner.filter(|_| !instance.meta) else { return };
        let flags_in = |flags: &[(usize, usize, TraceFlags)]| {
            flags.iter().find(|&&(x, u, _)| x == e && u == uid).map_or(TraceFlags::empty(), |t| t.2)
        };
        let (before, after) = (flags_in(&self.before), flags_in(after));
        let (any, all) = (before | after, before & after);
        if !any.contains(need) {
            self.violation(format!("{shown} from session {uid}, where {port} had no {need:?}"));
        }
        let stamped = if any.intersects(TraceFlags::TIMESTAMPS) {
            all.intersects(TraceFlags::TIMESTAMPS) && !timestamped
        } else {
            timestamped
        };
        if stamped {
            self.violation(format!("{shown} from session {uid}: {port} had {before:?}/{after:?}"));
        }
    }

    /// A trace message's elements after the tracee, without its timestamp
    /// (checked) if it has one.
    fn without_timestamp<'t>(
        &mut self,
        i: usize,
        rest: &'t [TermRef<'t>],
        timestamped: bool,
        shown: &str,
    ) -> &'t [TermRef<'t>] {
        if !timestamped {
            return rest;
        }
        let Some((ts, head)) = rest.split_last() else {
            self.violation(format!("malformed: {shown}"))
        };
        self.check_timestamp(i, *ts, shown);
        head
    }

    /// Timestamps on one channel never go back (the clock only advances).
    fn check_timestamp(&mut self, i: usize, ts: TermRef<'_>, shown: &str) {
        let instance = &mut self.instances[i];
        let ok = match ts.kind() {
            Kind::Small(mono) => {
                let ok = mono >= instance.last_mono;
                instance.last_mono = mono;
                ok
            }
            Kind::Tuple(t) if t.len() == 2 => {
                match (t.get(0).and_then(|x| x.as_i64()), t.get(1).and_then(|x| x.as_i64())) {
                    (Some(mono), Some(unique)) => {
                        let ok = mono >= instance.last_mono && unique > instance.last_unique;
                        instance.last_mono = mono;
                        instance.last_unique = unique;
                        ok
                    }
                    _ => false,
                }
            }
            Kind::Tuple(t) if t.len() == 3 => {
                let parts: Vec<Option<i64>> = t.iter().map(|x| x.as_i64()).collect();
                match parts[..] {
                    [Some(mega), Some(secs), Some(micros)]
                        if (0..1_000_000).contains(&micros) && (0..1_000_000).contains(&secs) =>
                    {
                        let now = (mega, secs, micros);
                        let ok = now > instance.last_now;
                        instance.last_now = now;
                        ok
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        if !ok {
            self.violation(format!("a timestamp out of shape or order: {shown}"));
        }
    }

    /// `call_time` or `call_memory` (`key`) of counted function `f` in
    /// session `uid`: the totals, which, unless a command touched them,
    /// neither appear nor vanish, count at most the calls made, and never
    /// go back.
    fn check_stats(
        &self,
        session: &SessionRef,
        uid: usize,
        f: usize,
        key: Atom,
        touched: bool,
    ) -> Option<(u64, u128)> {
        let function = CONSTS.counted[f];
        let mut heap = Heap::new();
        let item = Term::atom(key);
        let answer =
            match info::function_info(&self.core, session, function, item.as_ref(), &mut heap) {
                Ok(w) => heap.view(w),
                Err(e) => self.violation(format!("{key} of {function}: {e:?}")),
            };
        let value = answer.as_tuple().filter(|t| t.len() == 2).and_then(|t| t.get(1));
        let now = value.and_then(|v| stats_of(v, key == CONSTS.call_time));
        let Some(now) = now else {
            self.violation(format!(
                "{key} of {function} in session {uid}: {}",
                answer.without_strings()
            ))
        };
        let count = &self.counts[uid][f];
        let old = if key == CONSTS.call_time { count.time } else { count.memory };
        let calls = u64::from(self.called == Some(function));
        let ok = touched
            || match (old, now) {
                (None, None) => true,
                (Some((c0, t0)), Some((c1, t1))) => c0 <= c1 && c1 <= c0 + calls && t0 <= t1,
                _ => false,
            };
        if !ok {
            self.violation(format!(
                "{key} of {function} in session {uid} went from {old:?} to {now:?} \
                 (calls now: {calls}; counts and totals)"
            ));
        }
        now
    }

    fn check_counts(&mut self) {
        let mut heap = Heap::new();
        let key = CONSTS.call_count;
        for uid in 0..self.sessions.len() {
            if self.sessions[uid].destroyed_at.is_some() {
                continue;
            }
            let session = self.sessions[uid].session.clone();
            for (f, &function) in CONSTS.counted.iter().enumerate() {
                let item = Term::atom(key);
                let answer = match info::function_info(
                    &self.core,
                    &session,
                    function,
                    item.as_ref(),
                    &mut heap,
                ) {
                    Ok(w) => heap.view(w),
                    Err(e) => self.violation(format!("call_count of {function}: {e:?}")),
                };
                let value = answer.as_tuple().filter(|t| t.len() == 2).and_then(|t| t.get(1));
                let now = match value.map(|v| v.kind()) {
                    Some(Kind::Atom(Atom::FALSE)) => None,
                    Some(Kind::Small(n)) if n >= 0 => Some(n as u64),
                    _ => self.violation(format!(
                        "call_count of {function} in session {uid}: {}",
                        answer.without_strings()
                    )),
                };
                let model = self.counts[uid][f];
                let expect = self.expect.iter().find(|(k, _)| *k == (uid, f)).map(|(_, e)| e);
                let ok = match expect {
                    Some(e) => e.allowed.contains(&now),
                    None => {
                        let calls = u64::from(self.called == Some(function));
                        let grown = model.last.map(|m| if model.paused { m } else { m + calls });
                        now == grown
                    }
                };
                if !ok {
                    self.violation(format!(
                        "call_count of {function} in session {uid} is {now:?}; it was {:?} \
                         (paused: {}), called now: {}, allowed: {:?}",
                        model.last,
                        model.paused,
                        self.called == Some(function),
                        expect.map(|e| &e.allowed)
                    ));
                }
                let touched = expect.is_some();
                let time = self.check_stats(&session, uid, f, CONSTS.call_time, touched);
                let memory = self.check_stats(&session, uid, f, CONSTS.call_memory, touched);
                let count = &mut self.counts[uid][f];
                count.time = time;
                count.memory = memory;
                count.last = now;
                if let Some(paused) = expect.and_then(|e| e.paused) {
                    count.paused = paused;
                }
                if now.is_none() {
                    count.paused = false;
                }
            }
        }
    }
}

/// The totals of a `call_time` (`[{Pid, Count, S, Us}]`) or `call_memory`
/// (`[{Pid, Count, Words}]`) answer: `Some(None)` for `false`, `None` if
/// malformed.
fn stats_of(value: TermRef<'_>, time: bool) -> Option<Option<(u64, u128)>> {
    if value.as_atom() == Some(Atom::FALSE) {
        return Some(None);
    }
    let (mut calls, mut total) = (0u64, 0u128);
    for item in value.proper_list()? {
        let t = item.as_tuple().filter(|t| t.len() == if time { 4 } else { 3 })?;
        Pid::from_term(t.get(0)?)?;
        let n = |i: usize| t.get(i).and_then(|x| x.as_i64()).and_then(|x| u64::try_from(x).ok());
        calls += n(1)?;
        total += u128::from(if time {
            let micros = n(3).filter(|&us| us < 1_000_000)?;
            n(2)? * 1_000_000 + micros
        } else {
            n(2)?
        });
    }
    Some(Some((calls, total)))
}

/// Is `info` a `seq_trace` info tuple `{Kind, {LastCnt, Serial}, From,
/// To, Msg}`?
fn seq_info_ok(info: TermRef<'_>) -> bool {
    let Some(t) = info.as_tuple().filter(|t| t.len() == 5) else { return false };
    let kind = t.get(0).and_then(|k| k.as_atom()).map(Atom::name);
    let counts = t.get(1).and_then(|c| c.as_tuple()).filter(|c| c.len() == 2);
    let counts_ok = counts.is_some_and(|c| c.iter().all(|n| n.as_i64().is_some()));
    // A token that came from another node names its remote sender; a
    // send to another node names the destination as the sender wrote it.
    let from_ok = t.get(2).and_then(AnyPid::from_term).is_some();
    let to = t.get(3).expect("five elements");
    let name_at_node = to
        .as_tuple()
        .filter(|t| t.len() == 2)
        .is_some_and(|t| t.iter().all(|e| e.as_atom().is_some()));
    let to_ok = to.is_nil() || AnyPid::from_term(to).is_some() || name_at_node;
    matches!(kind, Some("send" | "receive" | "print")) && counts_ok && from_ok && to_ok
}

fn is_mfa(t: TermRef<'_>, args: bool) -> bool {
    let Some(t) = t.as_tuple().filter(|t| t.len() == 3) else { return false };
    let third = t.get(2).expect("three elements");
    t.get(0).and_then(|m| m.as_atom()).is_some()
        && t.get(1).and_then(|f| f.as_atom()).is_some()
        && (third.as_i64().is_some() || args && third.proper_list().is_some())
}

/// The flags an event needs in its session: all of them, or any one.
#[derive(Clone, Copy, Debug)]
enum Need {
    All(TraceFlags),
    Any(TraceFlags),
}

/// Checks a trace event after `{trace, Pid` (and before a timestamp):
/// `[Tag, Msg, Extra..., [MatchSpecResult], [SchedulerId]]`. Answers the
/// process flags the event needs in its session, or `None` if the event is
/// malformed.
/// Is `rest` (after `trace, Port`, without a timestamp) a port event: the
/// flag it needs.
fn port_event_ok(rest: &[TermRef<'_>]) -> Option<TraceFlags> {
    let tag = rest.first()?.as_atom()?;
    let msg = *rest.get(1)?;
    let is_pid = Pid::from_term(msg).is_some();
    let (need, len) = match tag.name() {
        "open" => (TraceFlags::PORTS, 3).then_if(is_pid)?,
        "closed" => (TraceFlags::PORTS, 2),
        "link" | "unlink" | "getting_linked" | "getting_unlinked" => {
            (TraceFlags::PORTS, 2).then_if(is_pid)?
        }
        "register" | "unregister" => (TraceFlags::PORTS, 2).then_if(msg.as_atom().is_some())?,
        "in" | "out" => (TraceFlags::RUNNING_PORTS, 2),
        "receive" => (TraceFlags::RECEIVE, 2),
        "send" | "send_to_non_existing_process" => (TraceFlags::SEND, 3),
        _ => return None,
    };
    // A scheduler id may follow.
    match rest.len().checked_sub(len)? {
        0 => Some(need),
        1 => rest[len].as_i64().is_some().then_some(need),
        _ => None,
    }
}

fn event_ok(rest: &[TermRef<'_>]) -> Option<Need> {
    let tag = rest.first()?.as_atom()?;
    let msg = *rest.get(1)?;
    let is_pid = |t: TermRef<'_>| Pid::from_term(t).is_some();
    let zero = msg.as_i64() == Some(0);
    let call = Need::All(TraceFlags::CALL);
    let procs = Need::All(TraceFlags::PROCS);
    // (needs, mandatory elements after Msg, may carry a match spec result)
    let (need, extras, pam) = match tag.name() {
        "call" => (call, 0, true).then_if(is_mfa(msg, true))?,
        "return_from" => (call, 1, false).then_if(is_mfa(msg, false))?,
        "exception_from" => {
            let class_reason = rest.get(2).and_then(|e| e.as_tuple()).is_some_and(|t| t.len() == 2);
            (call, 1, false).then_if(is_mfa(msg, false) && class_reason)?
        }
        "return_to" => {
            let ok = msg.as_atom() == Some(Atom::UNDEFINED) || is_mfa(msg, false);
            (Need::All(TraceFlags::CALL | TraceFlags::RETURN_TO), 0, false).then_if(ok)?
        }
        "send" => (Need::All(TraceFlags::SEND), 1, true),
        // Only a pid of this node can be known not to exist.
        "send_to_non_existing_process" => {
            let to_local_pid = rest.get(2).is_some_and(|to| is_pid(*to));
            (Need::All(TraceFlags::SEND), 1, true).then_if(to_local_pid)?
        }
        "receive" => (Need::All(TraceFlags::RECEIVE), 0, true),
        "spawn" | "spawned" => {
            let start = rest.get(2).is_some_and(|s| is_mfa(*s, true));
            (procs, 1, false).then_if(is_pid(msg) && start)?
        }
        "exit" => (procs, 0, false),
        "link" | "unlink" | "getting_linked" | "getting_unlinked" => {
            let other = is_pid(msg)
                || PortId::from_term(msg).is_some()
                || RemotePid::from_term(msg).is_some();
            (procs, 0, false).then_if(other)?
        }
        "register" | "unregister" => (procs, 0, false).then_if(msg.as_atom().is_some())?,
        "in" | "out" => {
            let running = TraceFlags::RUNNING | TraceFlags::RUNNING_PROCS;
            (Need::Any(running), 0, false).then_if(zero || is_mfa(msg, false))?
        }
        "in_exiting" | "out_exiting" | "out_exited" => {
            (Need::All(TraceFlags::EXITING), 0, false).then_if(zero)?
        }
        "gc_minor_start" | "gc_minor_end" | "gc_major_start" | "gc_major_end"
        | "gc_max_heap_size" => {
            let figures = msg.proper_list().is_some_and(|items| {
                !items.is_empty()
                    && items.iter().all(|i| {
                        i.as_tuple().is_some_and(|t| {
                            t.len() == 2
                                && t.get(0).and_then(|k| k.as_atom()).is_some()
                                && t.get(1).and_then(|v| v.as_i64()).is_some_and(|v| v >= 0)
                        })
                    })
            });
            (Need::All(TraceFlags::GARBAGE_COLLECTION), 0, false).then_if(figures)?
        }
        _ => return None,
    };
    if rest.len() < 2 + extras {
        return None;
    }
    // At most a match spec result (where allowed), then at most a
    // scheduler id (an integer).
    let ok = match &rest[2 + extras..] {
        [] => true,
        [one] => pam || one.as_i64().is_some(),
        [_, sched] => pam && sched.as_i64().is_some(),
        _ => false,
    };
    ok.then_some(need)
}

trait ThenIf: Sized {
    fn then_if(self, ok: bool) -> Option<Self> {
        ok.then_some(self)
    }
}

impl<T> ThenIf for T {}

fn short<T: std::fmt::Debug>(result: &Result<T, TraceError>) -> String {
    match result {
        Ok(v) => format!("Ok({v:?})"),
        Err(TraceError::MatchSpec(_)) => "Err(MatchSpec)".into(),
        Err(e) => format!("Err({e:?})"),
    }
}

fn text(heap: &Heap, result: Result<Word, TraceError>) -> String {
    match result {
        Ok(w) => heap.view(w).without_strings().to_string(),
        Err(e) => format!("{e:?}"),
    }
}
