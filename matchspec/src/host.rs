//! [`Host`]: what a running spec asks of the world around it.
//!
//! Table specs only ever need `{self}`. Trace specs read and change the
//! traced process: its sequential trace token, its trace flags, its stack.
//! Engines call the host at the point of the call, so a body that sets the
//! token and then reads it sees its own change, exactly as in ERTS. The
//! trace core implements this trait for real processes; [`TestHost`]
//! models the process that calls `erlang:match_spec_test/3`.

use crate::ir::ChangeTrace;
use crate::term::{Atom, Heap, Kind, TermRef, Word};

/// The world as a running spec sees it.
///
/// Methods that build a term get the run's scratch heap; methods that look
/// at terms get them read-only. None may panic on any input: bad arguments
/// are reported as `None`/`false`, which the engine turns into `'EXIT'`.
pub trait Host {
    /// The local node's name (`node/0`).
    fn node(&self) -> Atom {
        Atom::NONODE
    }

    /// The pid of the process the event is about (`{self}`).
    fn self_pid(&mut self, heap: &mut Heap) -> Word;

    /// The trace control word (`get_tcw/0`).
    fn trace_control_word(&self) -> u32;

    /// Replaces the trace control word (`set_tcw/1`).
    fn set_trace_control_word(&mut self, value: u32);

    /// Does the process have a sequential trace token (`{is_seq_trace}`)?
    fn is_seq_trace(&mut self) -> bool;

    /// The process's sequential trace token, or `[]` (`{get_seq_token}`).
    fn seq_token(&mut self, heap: &mut Heap) -> Word;

    /// `seq_trace:set_token(Key, Value)` on the process; `false` if the key
    /// or value is invalid.
    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool;

    /// What `seq_trace:get_token(Key)` returns for the process (`{Key,
    /// Value}`, or `[]` for `label` and `serial` without a token), or
    /// `None` if `key` is not a valid component (`key` is `None` when it is
    /// not even an atom). The fake `set_seq_token` of `match_spec_test`
    /// returns this whole result: ERTS means to take its second element but
    /// tests the tuple's header against the number 2, which never holds.
    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word>;

    /// A binary describing the process (`{process_dump}`).
    fn process_dump(&mut self, heap: &mut Heap) -> Word;

    /// Shows a term (`{display, X}`; ERTS prints it on the node's stdout).
    fn display(&mut self, term: TermRef<'_>);

    /// `{enable_trace, ...}`, `{disable_trace, ...}` or `{trace, ...}`
    /// (which form is `how`) on `target` (`None`: the current process);
    /// `a` is the flag (or the flags to disable) and `b` the flags to
    /// enable. `Some(answer)` is the value of the call, `None` makes it
    /// `'EXIT'`.
    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool>;

    /// `{M, F, A}` of the caller, or `undefined` (`{caller}`).
    fn caller(&mut self, heap: &mut Heap) -> Word;

    /// `{M, F, A, {File, Line}}` of the caller, or `undefined` (`{caller_line}`).
    fn caller_line(&mut self, heap: &mut Heap) -> Word;

    /// The current stack trace, at most `depth` frames (`{current_stacktrace}`).
    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word;

    /// Turns silent mode on or off (`{silent, Bool}`).
    fn set_silent(&mut self, on: bool);
}

/// The bits of the process trace flags that match specs can name, in the
/// order ERTS's `erts_trace_flag2bit` knows them.
pub mod trace_flag {
    /// `send`
    pub const SEND: u32 = 1 << 0;
    /// `'receive'`
    pub const RECEIVE: u32 = 1 << 1;
    /// `set_on_spawn`
    pub const SET_ON_SPAWN: u32 = 1 << 2;
    /// `procs`
    pub const PROCS: u32 = 1 << 3;
    /// `set_on_first_spawn`
    pub const SET_ON_FIRST_SPAWN: u32 = 1 << 4;
    /// `set_on_link`
    pub const SET_ON_LINK: u32 = 1 << 5;
    /// `set_on_first_link`
    pub const SET_ON_FIRST_LINK: u32 = 1 << 6;
    /// `running`
    pub const RUNNING: u32 = 1 << 7;
    /// `exiting`
    pub const EXITING: u32 = 1 << 8;
    /// `garbage_collection`
    pub const GARBAGE_COLLECTION: u32 = 1 << 9;
    /// `call`
    pub const CALL: u32 = 1 << 10;
    /// `arity`
    pub const ARITY: u32 = 1 << 11;
    /// `return_to`
    pub const RETURN_TO: u32 = 1 << 12;
    /// `silent`
    pub const SILENT: u32 = 1 << 13;
    /// `scheduler_id`
    pub const SCHEDULER_ID: u32 = 1 << 14;
    /// `running_ports`
    pub const RUNNING_PORTS: u32 = 1 << 15;
    /// `running_procs`
    pub const RUNNING_PROCS: u32 = 1 << 16;
    /// `ports`
    pub const PORTS: u32 = 1 << 17;
    /// `timestamp`
    pub const TIMESTAMP: u32 = 1 << 18;
    /// `monotonic_timestamp`
    pub const MONOTONIC_TIMESTAMP: u32 = 1 << 19;
    /// `strict_monotonic_timestamp`
    pub const STRICT_MONOTONIC_TIMESTAMP: u32 = 1 << 20;
    /// What `all` means: every tracee flag (not the timestamp kinds).
    pub const ALL: u32 = (1 << 18) - 1;

    /// The bit of a flag name, as `erts_trace_flag2bit`; 0 for anything else
    /// (including `cpu_timestamp`, which match specs may not set).
    pub fn of(name: &str) -> u32 {
        match name {
            "timestamp" => TIMESTAMP,
            "strict_monotonic_timestamp" => STRICT_MONOTONIC_TIMESTAMP,
            "monotonic_timestamp" => MONOTONIC_TIMESTAMP,
            "all" => ALL,
            "send" => SEND,
            "receive" => RECEIVE,
            "set_on_spawn" => SET_ON_SPAWN,
            "procs" => PROCS,
            "set_on_first_spawn" => SET_ON_FIRST_SPAWN,
            "set_on_link" => SET_ON_LINK,
            "set_on_first_link" => SET_ON_FIRST_LINK,
            "running" => RUNNING,
            "exiting" => EXITING,
            "garbage_collection" => GARBAGE_COLLECTION,
            "call" => CALL,
            "arity" => ARITY,
            "return_to" => RETURN_TO,
            "silent" => SILENT,
            "scheduler_id" => SCHEDULER_ID,
            "running_ports" => RUNNING_PORTS,
            "running_procs" => RUNNING_PROCS,
            "ports" => PORTS,
            _ => 0,
        }
    }
}

/// A flag list as `erts_trace_flags` reads it: the bits named, and the
/// tracer if the list names one (`{tracer, Pid}` and friends).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlagList<'a> {
    /// The union of the named flags.
    pub mask: u32,
    /// The last tracer tuple in the list.
    pub tracer: Option<TermRef<'a>>,
    /// Did the list contain `cpu_timestamp` (which match specs may not use)?
    pub cpu_timestamp: bool,
}

/// Reads a trace flag list: flag atoms, `cpu_timestamp`, tracer tuples
/// (`{tracer, Pid | Port}` or `{tracer, Module, State}`). `None` if the
/// list is improper or holds anything else.
pub fn parse_flag_list(list: TermRef<'_>) -> Option<FlagList<'_>> {
    let mut out = FlagList { mask: 0, tracer: None, cpu_timestamp: false };
    let mut items = list.list_items();
    for item in items.by_ref() {
        match item.kind() {
            Kind::Atom(a) if trace_flag::of(a.name()) != 0 => out.mask |= trace_flag::of(a.name()),
            Kind::Atom(a) if a.name() == "cpu_timestamp" => out.cpu_timestamp = true,
            Kind::Tuple(t) if is_tracer(t) => out.tracer = Some(item),
            _ => return None,
        }
    }
    items.tail().is_nil().then_some(out)
}

/// Is `t` a tracer specification ERTS accepts (`erts_term_to_tracer`)?
fn is_tracer(t: crate::term::Tuple<'_>) -> bool {
    let tag = t.get(0).and_then(|e| e.as_atom());
    match (t.len(), tag) {
        (2, Some(tag)) if tag.name() == "tracer" => {
            t.get(1).is_some_and(|p| matches!(p.kind(), Kind::Pid(_) | Kind::Port(_)))
        }
        (3, Some(tag)) if tag.name() == "tracer" => t.get(1).is_some_and(|m| m.as_atom().is_some()),
        _ => false,
    }
}

/// The process that calls `erlang:match_spec_test/3`, as far as a match
/// spec can see it: no sequential trace token, no tracer, no caller (the
/// call is a BIF), an empty stack, trace flags that trace actions change,
/// and a trace control word.
///
/// `display` collects what it is given, so a caller can show it.
#[derive(Clone, Debug)]
pub struct TestHost {
    /// The process's pid number (`<0.N.0>`).
    pub pid: u32,
    /// The trace control word.
    pub tcw: u32,
    /// The process's trace flags.
    pub flags: u32,
    /// Silent mode.
    pub silent: bool,
    /// What `{display, X}` showed, as text.
    pub displayed: Vec<String>,
}

impl Default for TestHost {
    fn default() -> TestHost {
        TestHost { pid: 80, tcw: 0, flags: 0, silent: false, displayed: Vec::new() }
    }
}

impl TestHost {
    fn is_self(&self, target: TermRef<'_>) -> bool {
        matches!(target.kind(), Kind::Pid(p) if p.node == Atom::NONODE && p.id == self.pid && p.serial == 0)
    }
}

impl Host for TestHost {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        heap.pid(Atom::NONODE, self.pid, 0, 0)
    }

    fn trace_control_word(&self) -> u32 {
        self.tcw
    }

    fn set_trace_control_word(&mut self, value: u32) {
        self.tcw = value;
    }

    fn is_seq_trace(&mut self) -> bool {
        false
    }

    fn seq_token(&mut self, _heap: &mut Heap) -> Word {
        Word::NIL
    }

    fn set_seq_token(&mut self, _key: TermRef<'_>, _value: TermRef<'_>) -> bool {
        // `match_spec_test` compiles `set_seq_token` as its fake; a real
        // token needs the trace core.
        false
    }

    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        // Without a token, `seq_trace_info/1` says `{Key, false}` for the
        // flags and `[]` for label and serial (erl_bif_trace.c).
        let key = key?;
        match key.name() {
            "send"
            | "spawn"
            | "receive"
            | "print"
            | "timestamp"
            | "monotonic_timestamp"
            | "strict_monotonic_timestamp" => {
                Some(heap.tuple(&[Word::atom(key), Word::atom(Atom::FALSE)]))
            }
            "label" | "serial" => Some(Word::NIL),
            _ => None,
        }
    }

    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        let text = format!("=proc:<0.{}.0>\nState: Running\n", self.pid);
        heap.binary(text.as_bytes())
    }

    fn display(&mut self, term: TermRef<'_>) {
        self.displayed.push(term.to_string());
    }

    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        // The only process there is: a pid or name of another one is "no
        // such process".
        if let Some(t) = target
            && !self.is_self(t)
        {
            return None;
        }
        match how {
            ChangeTrace::Enable | ChangeTrace::Disable => {
                let bit = a.as_atom().map_or(0, |f| trace_flag::of(f.name()));
                if bit == 0 {
                    return None;
                }
                // Without a tracer the flags do not stick, but the call succeeds.
                Some(true)
            }
            ChangeTrace::Trace => {
                let disable = parse_flag_list(a)?;
                let enable = parse_flag_list(b?)?;
                if disable.cpu_timestamp || enable.cpu_timestamp {
                    return None;
                }
                match enable.tracer.or(disable.tracer) {
                    // No tracer: ERTS clears the tracee flags and reports
                    // whether that changed anything.
                    None => {
                        let before = self.flags;
                        self.flags &= !trace_flag::ALL;
                        Some(before != self.flags)
                    }
                    // A tracer must be alive; the only live process is us.
                    Some(tracer) => {
                        let pid = tracer.as_tuple().and_then(|t| t.get(1));
                        if !pid.is_some_and(|p| self.is_self(p)) {
                            return None;
                        }
                        self.flags = (self.flags & !disable.mask) | enable.mask;
                        Some(true)
                    }
                }
            }
        }
    }

    fn caller(&mut self, _heap: &mut Heap) -> Word {
        Word::atom(Atom::UNDEFINED)
    }

    fn caller_line(&mut self, _heap: &mut Heap) -> Word {
        Word::atom(Atom::UNDEFINED)
    }

    fn current_stacktrace(&mut self, _depth: u32, _heap: &mut Heap) -> Word {
        Word::NIL
    }

    fn set_silent(&mut self, on: bool) {
        self.silent = on;
    }
}
