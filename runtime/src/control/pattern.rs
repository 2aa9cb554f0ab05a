//! `trace:function/4`: which functions a session traces, and how.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use matchspec::Change;
use matchspec::CompiledSpec;
use matchspec::ir::Op;
use matchspec::spec::{Kind as SpecKind, SpecErrorKind};
use matchspec::term::{Atom, Kind, TermRef};
use msc::Spec;

use crate::core::{Stage, TraceCore};
use crate::model::breakpoint::{BpFlags, FunctionEntry, MetaTracer, SessionBreakpoint};
use crate::model::counters::CallStats;
use crate::model::error::TraceError;
use crate::model::session::SessionRef;
use crate::model::trace_spec::TraceSpec;
use crate::model::tracer::TracerRef;

pub use crate::model::pattern::{MfaPattern, PatternAction, PatternFlags};

/// Reads the flag list of `trace:function/4` (`local`, `global`, `meta`,
/// `{meta, Tracer}`, `call_count`, `call_time`, `call_memory`).
/// `meta_tracer` resolves a `{meta, ...}` tuple; `default_meta` is the
/// tracer plain `meta` uses (the session's, or the caller).
pub fn parse_pattern_flags(
    session: &SessionRef,
    list: TermRef<'_>,
    meta_tracer: &mut dyn FnMut(TermRef<'_>) -> Option<TracerRef>,
    default_meta: Option<TracerRef>,
) -> Result<PatternFlags, TraceError> {
    let mut flags = PatternFlags::default();
    let mut global = false;
    let mut items = list.list_items();
    for item in items.by_ref() {
        let kind = match item.kind() {
            Kind::Atom(a) => match a.name() {
                "global" => {
                    if flags.is_breakpoint() {
                        return Err(TraceError::BadOpt);
                    }
                    global = true;
                    continue;
                }
                "local" => BpFlags::LOCAL,
                "meta" => {
                    if flags.meta_tracer.is_none() {
                        flags.meta_tracer = default_meta.clone();
                    }
                    BpFlags::META
                }
                "call_count" => BpFlags::COUNT,
                "call_time" => BpFlags::TIME,
                "call_memory" => BpFlags::MEMORY,
                _ => return Err(TraceError::BadOpt),
            },
            Kind::Tuple(t) if t.get(0).and_then(|e| e.as_atom()) == Some(Atom::new("meta")) => {
                // Only sessions without a tracer take a meta tracer here.
                if session.tracer().is_some() {
                    return Err(TraceError::BadOpt);
                }
                flags.meta_tracer = Some(meta_tracer(item).ok_or(TraceError::BadOpt)?);
                BpFlags::META
            }
            _ => return Err(TraceError::BadOpt),
        };
        if global {
            return Err(TraceError::BadOpt);
        }
        flags.kinds |= kind;
    }
    if !items.tail().is_nil() {
        return Err(TraceError::BadOpt);
    }
    if flags.kinds.contains(BpFlags::META) && flags.meta_tracer.is_none() {
        return Err(TraceError::BadOpt);
    }
    Ok(flags)
}

/// Reads the second argument of `trace:function/4`.
pub fn parse_pattern_action(
    core: &TraceCore,
    term: TermRef<'_>,
) -> Result<PatternAction, TraceError> {
    match term.as_atom().map(Atom::name) {
        Some("false") => return Ok(PatternAction::Off),
        Some("true") => return Ok(PatternAction::On),
        Some("restart") => return Ok(PatternAction::Restart),
        Some("pause") => return Ok(PatternAction::Pause),
        _ if term.is_nil() => return Ok(PatternAction::On),
        _ => {}
    }
    Ok(PatternAction::Spec(compile_trace_spec(core, term, SpecKind::Call)?))
}

/// Compiles a trace spec for the core's engine.
pub(crate) fn compile_trace_spec(
    core: &TraceCore,
    term: TermRef<'_>,
    kind: SpecKind,
) -> Result<Arc<TraceSpec>, TraceError> {
    let compiled = CompiledSpec::from_term(term, kind, &core.config.spec).map_err(|errors| {
        if errors.errors().iter().any(|e| *e.kind() == SpecErrorKind::ExcessiveNesting) {
            TraceError::SystemLimit
        } else {
            TraceError::MatchSpec(Box::new(errors))
        }
    })?;
    let has_side_effects = compiled.program().code().iter().any(Op::changes_trace_flags);
    let spec = Spec::new(compiled, core.engine());
    Ok(Arc::new(TraceSpec { source: term.to_owned(), spec, has_side_effects }))
}

impl TraceCore {
    /// `trace:function(Session, Pattern, Action, Flags)`: the number of
    /// functions it matched.
    pub fn set_pattern(
        &self,
        session: &SessionRef,
        pattern: MfaPattern,
        action: &PatternAction,
        flags: &PatternFlags,
    ) -> Result<usize, TraceError> {
        let contained;
        let flags = match &flags.meta_tracer {
            Some(t) if !t.is_contained() => {
                contained =
                    PatternFlags { meta_tracer: Some(self.contain(t.clone())), ..flags.clone() };
                &contained
            }
            _ => flags,
        };
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        if matches!(action, PatternAction::Spec(_))
            && flags.is_breakpoint()
            && !flags.kinds.intersects(BpFlags::LOCAL | BpFlags::META)
        {
            return Err(TraceError::CallCount);
        }
        let functions: Vec<Arc<FunctionEntry>> = match pattern.module {
            Some(m) => self.module_functions(m),
            None => self.all_functions(),
        };
        let matching: Vec<Arc<FunctionEntry>> =
            functions.into_iter().filter(|f| pattern.matches(f)).collect();
        let matched = self.stage(|stage| apply(stage, session, &matching, action, flags))?;
        if !self.release().has(Change::BifTracePerSession) {
            let on = !matches!(action, PatternAction::Off);
            matching.iter().filter(|f| f.is_bif()).for_each(|f| f.arm(on));
        }
        Ok(matched)
    }
}

/// Stages `action` with `flags` on `functions` (ERTS's
/// `erts_set_trace_pattern`); the number of functions matched.
pub(crate) fn apply(
    stage: &mut Stage<'_>,
    session: &SessionRef,
    functions: &[Arc<FunctionEntry>],
    action: &PatternAction,
    flags: &PatternFlags,
) -> usize {
    let on = !matches!(action, PatternAction::Off);
    let breakpoint = flags.is_breakpoint();
    // `restart` and `pause` are `true` for the kinds of trace (ERTS reads
    // any action but `false` as on), but set up no counter where the
    // function has no breakpoint: they create one only for trace.
    let counting = matches!(action, PatternAction::Restart | PatternAction::Pause);
    let creates =
        on && (!counting || !breakpoint || flags.kinds.intersects(BpFlags::LOCAL | BpFlags::META));
    let spec = match action {
        PatternAction::Spec(spec) => Some(spec.clone()),
        PatternAction::Off | PatternAction::On | PatternAction::Restart | PatternAction::Pause => {
            None
        }
    };
    let mut exported = 0;
    for entry in functions {
        if entry.is_exported() {
            exported += 1;
        }
        stage.edit(entry, |bp| {
            let at = match bp.sessions.iter().position(|s| Arc::ptr_eq(&s.session, session)) {
                Some(at) => at,
                None => {
                    if !creates {
                        return;
                    }
                    // The newest breakpoint comes first, as ERTS links a new
                    // session's `GenericBp` at the head of the function's list.
                    bp.sessions.insert(0, SessionBreakpoint::new(session.clone()));
                    0
                }
            };
            let before = bp.sessions[at].flags;
            change_session(&mut bp.sessions[at], entry, action, spec.clone(), flags, on);
            // A breakpoint that moves between the export entry (global) and
            // the code (local kinds) is the newest of its new list.
            let after = bp.sessions[at].flags;
            let moved = if after.contains(BpFlags::GLOBAL) {
                !before.contains(BpFlags::GLOBAL)
            } else {
                after.intersects(BpFlags::LOCAL_KINDS) && !before.intersects(BpFlags::LOCAL_KINDS)
            };
            if moved {
                bp.sessions[..=at].rotate_right(1);
            }
        });
    }
    if breakpoint { functions.len() } else { exported }
}

/// Applies `action` with `flags` to one session's breakpoint on `entry`.
fn change_session(
    sbp: &mut SessionBreakpoint,
    entry: &FunctionEntry,
    action: &PatternAction,
    spec: Option<Arc<TraceSpec>>,
    flags: &PatternFlags,
    on: bool,
) {
    if !flags.is_breakpoint() {
        // Global on replaces every local kind; global off (and local-kind
        // on) clears global.
        if on && entry.is_exported() {
            sbp.flags = BpFlags::GLOBAL;
            sbp.match_spec = spec;
            sbp.meta_spec = None;
            sbp.meta_tracer = None;
            sbp.count = None;
            sbp.time = None;
            sbp.memory = None;
        } else if on {
            sbp.flags -= BpFlags::LOCAL_KINDS;
        } else {
            sbp.flags -= BpFlags::GLOBAL;
        }
        return;
    }
    if on {
        sbp.flags -= BpFlags::GLOBAL;
        set_kinds(sbp, action, spec, flags);
    } else {
        clear_kinds(sbp, flags.kinds);
    }
}

/// Turns on the kinds of `flags` (ERTS's `set_function_break`).
fn set_kinds(
    sbp: &mut SessionBreakpoint,
    action: &PatternAction,
    spec: Option<Arc<TraceSpec>>,
    flags: &PatternFlags,
) {
    let counting = matches!(action, PatternAction::Restart | PatternAction::Pause);
    if flags.kinds.contains(BpFlags::LOCAL) {
        sbp.flags |= BpFlags::LOCAL;
        sbp.match_spec = spec.clone();
    }
    if flags.kinds.contains(BpFlags::META) {
        sbp.flags |= BpFlags::META;
        sbp.meta_spec = spec;
        sbp.meta_tracer = flags.meta_tracer.clone().map(|t| Arc::new(MetaTracer::new(t)));
    }
    // The code's breakpoint, if the function has one now (a global trace
    // sits on the export entry, not on the code).
    let code_breakpoint = sbp.flags.intersects(BpFlags::LOCAL_KINDS);
    for (kind, active) in [
        (BpFlags::COUNT, BpFlags::COUNT_ACTIVE),
        (BpFlags::TIME, BpFlags::TIME_ACTIVE),
        (BpFlags::MEMORY, BpFlags::MEMORY_ACTIVE),
    ] {
        if !flags.kinds.contains(kind) {
            continue;
        }
        if sbp.flags.contains(kind) {
            if matches!(action, PatternAction::Pause) {
                sbp.flags -= active;
            } else {
                // On or restart: counting again, from zero. The counters
                // are shared with the active generation: like ERTS, this
                // takes effect at once.
                sbp.flags |= active;
                if let Some(count) = sbp.count.as_ref().filter(|_| kind == BpFlags::COUNT) {
                    count.store(0, Ordering::Relaxed);
                }
                let stats = match kind {
                    BpFlags::TIME => sbp.time.as_ref(),
                    BpFlags::MEMORY => sbp.memory.as_ref(),
                    _ => None,
                };
                if let Some(stats) = stats {
                    stats.reset();
                }
            }
        } else if !counting || code_breakpoint {
            // Even `restart` and `pause` set a counter up (and running)
            // where the code has the session's breakpoint, as ERTS does.
            sbp.flags |= kind | active;
            match kind {
                BpFlags::COUNT => sbp.count = Some(Arc::new(AtomicU64::new(0))),
                BpFlags::TIME => sbp.time = Some(Arc::new(CallStats::new())),
                _ => sbp.memory = Some(Arc::new(CallStats::new())),
            }
        }
    }
}

/// Turns off the kinds in `kinds` (ERTS's `clear_function_break`).
fn clear_kinds(sbp: &mut SessionBreakpoint, kinds: BpFlags) {
    // The match spec is local trace's only while local trace is on; a
    // global trace's (which excludes local) is not touched.
    if kinds.contains(BpFlags::LOCAL) && sbp.flags.contains(BpFlags::LOCAL) {
        sbp.flags -= BpFlags::LOCAL;
        sbp.match_spec = None;
    }
    if kinds.contains(BpFlags::META) {
        sbp.flags -= BpFlags::META;
        sbp.meta_spec = None;
        sbp.meta_tracer = None;
    }
    if kinds.contains(BpFlags::COUNT) {
        sbp.flags -= BpFlags::COUNT | BpFlags::COUNT_ACTIVE;
        sbp.count = None;
    }
    if kinds.contains(BpFlags::TIME) {
        sbp.flags -= BpFlags::TIME | BpFlags::TIME_ACTIVE;
        sbp.time = None;
    }
    if kinds.contains(BpFlags::MEMORY) {
        sbp.flags -= BpFlags::MEMORY | BpFlags::MEMORY_ACTIVE;
        sbp.memory = None;
    }
}
