//! `trace:info/3` and `trace:session_info/1`, term in, term out: the
//! answers as the `trace` module gives them, built in the caller's heap.

use std::sync::Arc;

use matchspec::Change;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};

use crate::control::commands::{MessageEvent, PortSpec, ProcessSpec};
use crate::control::query::{CallScope, FunctionTracing, TraceSettings};
use crate::core::TraceCore;
use crate::model::breakpoint::BpFlags;
use crate::model::counters::Tally;
use crate::model::error::TraceError;
use crate::model::ids::{Mfa, Pid, PortId};
use crate::model::session::{EventPattern, SessionRef};
use crate::model::tracee::{Tracee, TracerLink};

/// `trace:info(Session, Pid | new, flags | tracer)`: `{Key, Value}`, or
/// `undefined` for a process that does not exist (asked with a key it
/// knows: ERTS checks the key first).
pub fn process_info(
    core: &TraceCore,
    session: &SessionRef,
    spec: ProcessSpec,
    key: Atom,
    heap: &mut Heap,
) -> Result<Word, TraceError> {
    let key = ProcessKey::of(key).ok_or(TraceError::BadOpt)?;
    match core.process_settings(session, spec) {
        Some(settings) => Ok(info_pair(key, settings, heap)),
        None => Ok(Word::atom(Atom::UNDEFINED)),
    }
}

/// What `trace:info/3` asks about a process or a port.
#[derive(Clone, Copy, Debug)]
enum ProcessKey {
    Flags,
    Tracer,
}

impl ProcessKey {
    fn of(key: Atom) -> Option<ProcessKey> {
        match key.name() {
            "flags" => Some(ProcessKey::Flags),
            "tracer" => Some(ProcessKey::Tracer),
            _ => None,
        }
    }
}

/// `{flags, Flags}` or `{tracer, Tracer}` (`[]` without one).
fn info_pair(key: ProcessKey, settings: TraceSettings, heap: &mut Heap) -> Word {
    let (name, value) = match key {
        ProcessKey::Flags => ("flags", settings.flags.to_list(heap)),
        ProcessKey::Tracer => ("tracer", settings.tracer.map_or(Word::NIL, |t| t.to_term(heap))),
    };
    heap.tuple(&[Word::atom(Atom::new(name)), value])
}

/// `trace:info(Session, {M, F, A}, Item)` (ERTS's `trace_info_func`).
///
/// `Item` must be one of `traced`, `match_spec`, `meta`,
/// `meta_match_spec`, `call_count`, `call_time`, `call_memory` and `all`
/// (anything else is `badarg`). When ERTS checks it depends on the release
/// ([`Change::TraceInfoItemBadarg`]): OTP 29 checks it first; OTP 27 only
/// once it has found a breakpoint, so there a function the session does
/// not trace answers `{Item, false}` and one that does not exist
/// `{Item, undefined}`, whatever `Item` is (any term).
pub fn function_info(
    core: &TraceCore,
    session: &SessionRef,
    mfa: Mfa,
    item: TermRef<'_>,
    heap: &mut Heap,
) -> Result<Word, TraceError> {
    let release = core.release();
    let key = item.as_atom().and_then(FunctionItem::of);
    if key.is_none() && release.has(Change::TraceInfoItemBadarg) {
        return Err(TraceError::BadOpt);
    }
    let settings = match core.function_tracing(session, mfa) {
        FunctionTracing::Undeclared => return Ok(info_answer(item, Atom::UNDEFINED, heap)),
        FunctionTracing::Untraced => return Ok(info_answer(item, Atom::FALSE, heap)),
        FunctionTracing::Traced(settings) => settings,
    };
    let key = key.ok_or(TraceError::BadOpt)?;
    let false_ = Word::atom(Atom::FALSE);
    let spec_or_nil = |heap: &mut Heap, spec: &Option<Term>| {
        spec.as_ref().map_or(Word::NIL, |s| s.as_ref().copy_to(heap))
    };
    let traced = match settings.call.as_ref().map(|c| c.scope) {
        Some(CallScope::Global) => Word::atom(Atom::new("global")),
        Some(CallScope::Local) => Word::atom(Atom::new("local")),
        None => false_,
    };
    let match_spec = settings.call.as_ref().map_or(false_, |c| spec_or_nil(heap, &c.match_spec));
    // A meta tracer that asked to be removed is gone: `false` in `all`
    // (`erts_tracer_to_term` of nil), `[]` for the `meta` item alone.
    let meta_tracer = settings.meta.as_ref().and_then(|m| m.tracer.as_ref());
    let meta = meta_tracer.map_or(false_, |tracer| tracer.to_term(heap));
    let meta_match_spec =
        settings.meta.as_ref().map_or(false_, |m| spec_or_nil(heap, &m.match_spec));
    let call_count = settings.call_count.map_or(false_, |n| heap.int(n as i64));
    let call_time = match &settings.call_time {
        Some(totals) => call_stats_list(totals, heap, |heap, pid, tally| {
            // ERTS converts the native total to microseconds, then splits.
            let us = tally.total / 1000;
            let (sec, us) = (us / 1_000_000, us % 1_000_000);
            let count = heap.int(i64::try_from(tally.count).unwrap_or(i64::MAX));
            let (sec, us) = (heap.int(sec), heap.int(us));
            heap.tuple(&[pid, count, sec, us])
        }),
        None => false_,
    };
    let call_memory = match &settings.call_memory {
        Some(totals) => call_stats_list(totals, heap, |heap, pid, tally| {
            let count = heap.int(i64::try_from(tally.count).unwrap_or(i64::MAX));
            let words = heap.int(tally.total);
            heap.tuple(&[pid, count, words])
        }),
        None => false_,
    };
    let value = match key {
        FunctionItem::Traced => traced,
        FunctionItem::MatchSpec => match_spec,
        // No meta trace at all: `false` since OTP 29, `[]` before
        // ([`Change::TraceInfoMetaFalse`]).
        FunctionItem::Meta if settings.meta.is_none() => {
            if release.has(Change::TraceInfoMetaFalse) { false_ } else { Word::NIL }
        }
        FunctionItem::Meta if meta_tracer.is_none() => Word::NIL,
        FunctionItem::Meta => meta,
        FunctionItem::MetaMatchSpec => meta_match_spec,
        FunctionItem::CallCount => call_count,
        FunctionItem::CallTime => call_time,
        FunctionItem::CallMemory => call_memory,
        FunctionItem::All => {
            let items = [
                ("traced", traced),
                ("match_spec", match_spec),
                ("meta", meta),
                ("meta_match_spec", meta_match_spec),
                ("call_memory", call_memory),
                ("call_time", call_time),
                ("call_count", call_count),
            ];
            let pairs: Vec<Word> =
                items.iter().map(|&(k, v)| heap.tuple(&[Word::atom(Atom::new(k)), v])).collect();
            heap.list(&pairs)
        }
    };
    Ok(heap.tuple(&[Word::atom(key.name()), value]))
}

/// What `trace:info/3` asks about a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FunctionItem {
    Traced,
    MatchSpec,
    Meta,
    MetaMatchSpec,
    CallCount,
    CallTime,
    CallMemory,
    All,
}

impl FunctionItem {
    const ALL: [FunctionItem; 8] = [
        FunctionItem::Traced,
        FunctionItem::MatchSpec,
        FunctionItem::Meta,
        FunctionItem::MetaMatchSpec,
        FunctionItem::CallCount,
        FunctionItem::CallTime,
        FunctionItem::CallMemory,
        FunctionItem::All,
    ];

    fn of(key: Atom) -> Option<FunctionItem> {
        FunctionItem::ALL.into_iter().find(|item| item.name() == key)
    }

    fn name(self) -> Atom {
        Atom::new(match self {
            FunctionItem::Traced => "traced",
            FunctionItem::MatchSpec => "match_spec",
            FunctionItem::Meta => "meta",
            FunctionItem::MetaMatchSpec => "meta_match_spec",
            FunctionItem::CallCount => "call_count",
            FunctionItem::CallTime => "call_time",
            FunctionItem::CallMemory => "call_memory",
            FunctionItem::All => "all",
        })
    }
}

/// `{Item, Value}`, `Item` copied as it is.
pub(crate) fn info_answer(item: TermRef<'_>, value: Atom, heap: &mut Heap) -> Word {
    let item = item.copy_to(heap);
    heap.tuple(&[item, Word::atom(value)])
}

/// The per-process list of `call_time` or `call_memory` (ERTS's
/// `erts_is_call_break`), each process's entry built by `entry` from its
/// pid term and totals.
fn call_stats_list(
    totals: &[(Pid, Tally)],
    heap: &mut Heap,
    entry: impl Fn(&mut Heap, Word, Tally) -> Word,
) -> Word {
    let items: Vec<Word> = totals
        .iter()
        .map(|&(pid, tally)| {
            let pid = pid.to_word(heap);
            entry(heap, pid, tally)
        })
        .collect();
    heap.list(&items)
}

/// `trace:session_info(What)`: the sessions that trace `What`, as the list
/// of their weak references; `undefined` for a function that does not
/// exist.
pub fn session_info_function(core: &TraceCore, mfa: Mfa, heap: &mut Heap) -> Word {
    let Some(entry) = core.function(mfa) else { return Word::atom(Atom::UNDEFINED) };
    let generation = core.active();
    let slot = entry.slot(generation.index);
    let mut refs = Vec::new();
    if let Some(bp) = slot.as_ref() {
        // ERTS conses the export entry's sessions, then the code's, each
        // list newest first (the order `sessions` keeps): the code's
        // sessions come first, oldest first, then the export entry's.
        let live = bp.sessions.iter().rev().filter(|s| s.session.is_alive() && !s.flags.is_empty());
        let (global, local): (Vec<_>, Vec<_>) =
            live.partition(|s| s.flags.contains(BpFlags::GLOBAL));
        for sbp in local.into_iter().chain(global) {
            refs.push(sbp.session.weak_ref(heap));
        }
    }
    heap.list(&refs)
}

/// `trace:session_info(Pid)`: the process answers it itself, checking
/// its tracers first (a dead one is dropped).
pub fn session_info_process(core: &TraceCore, pid: Pid, heap: &mut Heap) -> Word {
    match core.tracee(pid) {
        Some(tracee) => {
            tracee.drop_removed_tracers();
            sessions_of(&tracee, heap)
        }
        None => Word::atom(Atom::UNDEFINED),
    }
}

/// `trace:session_info(Port)`.
pub fn session_info_port(core: &TraceCore, port: PortId, heap: &mut Heap) -> Word {
    match core.port_tracee(port) {
        Some(tracee) => sessions_of(&tracee, heap),
        None => Word::atom(Atom::UNDEFINED),
    }
}

/// The weak references of the live sessions tracing `tracee`, oldest link
/// first (ERTS conses the list walking the links newest first).
fn sessions_of(tracee: &Tracee, heap: &mut Heap) -> Word {
    let links: Arc<Vec<TracerLink>> = tracee.links();
    let live = links.iter().rev().filter(|l| l.session.is_alive());
    let refs: Vec<Word> = live.map(|l| l.session.weak_ref(heap)).collect();
    heap.list(&refs)
}

/// `trace:session_info(What)` for the atoms: `all` (every session, the
/// legacy one last), `on_load` (sessions with an `on_load` pattern),
/// `new`/`new_processes` (sessions that trace new processes). `None` for
/// anything else.
pub fn sessions_tracing(core: &TraceCore, what: Atom) -> Option<Vec<SessionRef>> {
    let mut sessions = core.sessions_legacy_last();
    match what.name() {
        "all" => {}
        "on_load" => {
            let staged = core.staged.lock();
            sessions.retain(|s| staged.on_load.contains_key(&s.id()));
        }
        "new" | "new_processes" => {
            sessions.retain(|s| s.has_new_settings(false));
        }
        "new_ports" => {
            sessions.retain(|s| s.has_new_settings(true));
        }
        "send" => sessions.retain(|s| !matches!(*s.send_pattern(), EventPattern::Off)),
        "receive" => sessions.retain(|s| !matches!(*s.receive_pattern(), EventPattern::Off)),
        _ => return None,
    }
    Some(sessions)
}

/// `trace:info(S, send | 'receive', match_spec)`: `true`, the spec, or
/// `false`.
pub fn message_pattern_info(
    session: &SessionRef,
    event: MessageEvent,
    key: Atom,
    heap: &mut Heap,
) -> Result<Word, TraceError> {
    if key.name() != "match_spec" {
        return Err(TraceError::BadOpt);
    }
    let pattern = match event {
        MessageEvent::Send => session.send_pattern(),
        MessageEvent::Receive => session.receive_pattern(),
    };
    let value = match pattern.as_ref() {
        EventPattern::Off => Word::atom(Atom::FALSE),
        EventPattern::On => Word::atom(Atom::TRUE),
        EventPattern::Spec(spec) => spec.source.copy_to(heap),
    };
    Ok(heap.tuple(&[Word::atom(key), value]))
}

/// `trace:info(S, Port | new_ports, flags | tracer)`: `{Key, Value}`, or
/// `undefined` for a port that is not open, whatever `item` is (ERTS
/// looks for the port first).
pub fn port_info(
    core: &TraceCore,
    session: &SessionRef,
    spec: PortSpec,
    item: TermRef<'_>,
    heap: &mut Heap,
) -> Result<Word, TraceError> {
    match core.port_settings(session, spec) {
        Some(settings) => {
            let key = item.as_atom().and_then(ProcessKey::of).ok_or(TraceError::BadOpt)?;
            Ok(info_pair(key, settings, heap))
        }
        None => Ok(Word::atom(Atom::UNDEFINED)),
    }
}

#[cfg(test)]
mod tests {
    use matchspec::term::{Atom, Heap, Term};
    use matchspec::{Config, Release};

    use super::*;
    use crate::CoreConfig;
    use crate::control::pattern::{MfaPattern, parse_pattern_action};
    use crate::model::breakpoint::Function;
    use crate::model::pattern::PatternFlags;

    /// `trace:info(s1, {m, F, 0}, Item)` in a core giving `release`'s
    /// answers, where `m:traced/0` has a local breakpoint (no meta trace)
    /// and `m:untraced/0` none: the reply, or `badarg`.
    fn ask(release: Release, function: &str, item: &str) -> String {
        let spec = Config::default().release(release);
        let core = TraceCore::new(CoreConfig { spec, ..CoreConfig::default() });
        let functions = [Function::exported("traced", 0), Function::exported("untraced", 0)];
        core.declare_module(Atom::new("m"), &functions).expect("declared");
        let session = core.session_create(Atom::new("s1"), None);
        let on = parse_pattern_action(&core, Term::parse("true").expect("term").as_ref());
        let flags = PatternFlags { kinds: BpFlags::LOCAL, meta_tracer: None };
        let pattern = MfaPattern::from_term(Term::parse("{m, traced, 0}").expect("mfa").as_ref());
        core.set_pattern(&session, pattern.expect("pattern"), &on.expect("on"), &flags)
            .expect("set");
        let item = Term::parse(item).expect("item");
        let mut heap = Heap::new();
        let mfa = Mfa::new("m", function, 0);
        match function_info(&core, &session, mfa, item.as_ref(), &mut heap) {
            Ok(answer) => Term::from_parts(heap, answer).to_string(),
            Err(TraceError::BadOpt) => "badarg".to_owned(),
            Err(e) => panic!("{e:?}"),
        }
    }

    #[test]
    fn otp_29_checks_the_item_before_the_function() {
        for item in ["flags", "foo", "42", "{x}"] {
            for (function, otp27) in [("untraced", "false"), ("missing", "undefined")] {
                let expected = format!("{{{item},{otp27}}}");
                assert_eq!(ask(Release::Otp27, function, item), expected, "{function} {item}");
                assert_eq!(ask(Release::Otp29, function, item), "badarg", "{function} {item}");
            }
            for release in Release::ALL {
                assert_eq!(ask(release, "traced", item), "badarg", "{release} {item}");
            }
        }
        for release in Release::ALL {
            assert_eq!(ask(release, "untraced", "traced"), "{traced,false}", "{release}");
            assert_eq!(ask(release, "missing", "traced"), "{traced,undefined}", "{release}");
            assert_eq!(ask(release, "traced", "traced"), "{traced,local}", "{release}");
        }
    }

    #[test]
    fn otp_29_says_false_for_meta_without_meta_trace() {
        assert_eq!(ask(Release::Otp27, "traced", "meta"), "{meta,[]}");
        assert_eq!(ask(Release::Otp29, "traced", "meta"), "{meta,false}");
        for release in Release::ALL {
            assert_eq!(ask(release, "untraced", "meta"), "{meta,false}", "{release}");
            let all = ask(release, "traced", "all");
            assert!(all.contains("{meta,false}"), "{release}: {all}");
        }
    }
}
