//! Trace flag names and flag lists, as `erts_trace_flag2bit` and
//! `erts_trace_flags` read them.

use crate::term::{Kind, TermRef};

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
