//! What a session traces, as values: the answers of `trace:info/3`,
//! typed. `info.rs` turns them into the terms the `trace` module gives.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use matchspec::term::Term;

use crate::control::commands::{PortSpec, ProcessSpec};
use crate::core::TraceCore;
use crate::model::breakpoint::{BpFlags, SessionBreakpoint};
use crate::model::counters::{CallStats, Tally};
use crate::model::flags::TraceFlags;
use crate::model::ids::{Mfa, Pid};
use crate::model::session::SessionRef;
use crate::model::trace_spec::TraceSpec;
use crate::model::tracee::{Tracee, TracerLink};
use crate::model::tracer::{Enabled, TraceTag, TracerRef};

/// The flags a tracee has in a session (or tracees to come get), and the
/// tracer they report to.
#[derive(Clone, Debug, Default)]
pub struct TraceSettings {
    /// The flags.
    pub flags: TraceFlags,
    /// The tracer (`None`: no tracer, and then no flags).
    pub tracer: Option<TracerRef>,
}

/// How a function is traced in a session.
#[derive(Clone, Debug)]
pub enum FunctionTracing {
    /// No such function is declared.
    Undeclared,
    /// Declared, and the session does not trace it.
    Untraced,
    /// Declared and traced.
    Traced(FunctionSettings),
}

/// What a session's breakpoint on a function does (`trace:info(S, MFA,
/// all)`, item by item).
#[derive(Clone, Debug, Default)]
pub struct FunctionSettings {
    /// Call trace: `global` or `local`, with its match spec.
    pub call: Option<CallTrace>,
    /// Meta trace.
    pub meta: Option<MetaTrace>,
    /// The call counter's value.
    pub call_count: Option<u64>,
    /// `call_time` totals per process (nanoseconds).
    pub call_time: Option<Vec<(Pid, Tally)>>,
    /// `call_memory` totals per process (words).
    pub call_memory: Option<Vec<(Pid, Tally)>>,
}

/// Where call trace sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallScope {
    /// On the export entry: remote calls only.
    Global,
    /// On the code: every call.
    Local,
}

/// Call trace of a function.
#[derive(Clone, Debug)]
pub struct CallTrace {
    /// `global` or `local`.
    pub scope: CallScope,
    /// The match spec as given (`None`: every call).
    pub match_spec: Option<Term>,
}

/// Meta trace of a function.
#[derive(Clone, Debug)]
pub struct MetaTrace {
    /// The meta tracer (`None`: it asked to be removed).
    pub tracer: Option<TracerRef>,
    /// The match spec as given (`None`: every call).
    pub match_spec: Option<Term>,
}

impl TraceCore {
    /// What `session` traces of the processes `spec` names: a process's
    /// settings (`None` if it does not exist), or those new processes get.
    pub fn process_settings(
        &self,
        session: &SessionRef,
        spec: ProcessSpec,
    ) -> Option<TraceSettings> {
        match spec {
            ProcessSpec::Pid(pid) => Some(settings_of(&*self.tracee(pid)?, session)),
            ProcessSpec::New | ProcessSpec::All | ProcessSpec::Existing => {
                let new = session.new_processes();
                Some(TraceSettings { flags: new.flags, tracer: new.tracer })
            }
        }
    }

    /// What `session` traces of the ports `spec` names, as
    /// [`TraceCore::process_settings`].
    pub fn port_settings(&self, session: &SessionRef, spec: PortSpec) -> Option<TraceSettings> {
        match spec {
            PortSpec::Port(id) => Some(settings_of(&*self.port_tracee(id)?, session)),
            PortSpec::New | PortSpec::All | PortSpec::Existing => {
                let new = session.new_ports();
                Some(TraceSettings { flags: new.flags, tracer: new.tracer })
            }
        }
    }

    /// How `session` traces `mfa` in the active generation (ERTS's
    /// `trace_info_func`).
    pub fn function_tracing(&self, session: &SessionRef, mfa: Mfa) -> FunctionTracing {
        let Some(entry) = self.function(mfa) else { return FunctionTracing::Undeclared };
        let generation = self.active();
        let slot = entry.slot(generation.index);
        match slot.as_ref().and_then(|bp| bp.session(session)).filter(|s| !s.flags.is_empty()) {
            Some(sbp) => FunctionTracing::Traced(settings_of_breakpoint(sbp)),
            None => FunctionTracing::Untraced,
        }
    }
}

/// A tracee's flags and tracer in `session`. ERTS asks in the tracee's
/// context (or the port's), which checks the tracer's `trace_status`
/// first: a tracer that answers `remove` (gone, or a module no longer
/// loaded) is removed, and the tracee shows none.
fn settings_of(tracee: &Tracee, session: &SessionRef) -> TraceSettings {
    let gone =
        |l: &TracerLink| l.tracer.enabled(TraceTag::TraceStatus, tracee.id()) == Enabled::Remove;
    match tracee.link(session) {
        Some(l) if gone(&l) => {
            tracee.update(session, |l| *l = None);
            TraceSettings::default()
        }
        Some(l) => TraceSettings { flags: l.flags, tracer: Some(l.tracer) },
        None => TraceSettings::default(),
    }
}

fn settings_of_breakpoint(sbp: &SessionBreakpoint) -> FunctionSettings {
    let has = |flag| sbp.flags.contains(flag);
    let scope = if has(BpFlags::GLOBAL) {
        Some(CallScope::Global)
    } else if has(BpFlags::LOCAL) {
        Some(CallScope::Local)
    } else {
        None
    };
    let source = |spec: &Option<Arc<TraceSpec>>| spec.as_ref().map(|s| s.source.clone());
    let totals = |stats: &Option<Arc<CallStats>>, flag| {
        stats.as_ref().filter(|_| has(flag)).map(|s| s.per_process())
    };
    FunctionSettings {
        call: scope.map(|scope| CallTrace { scope, match_spec: source(&sbp.match_spec) }),
        meta: has(BpFlags::META).then(|| MetaTrace {
            tracer: sbp.meta_tracer.as_ref().and_then(|slot| slot.get()),
            match_spec: source(&sbp.meta_spec),
        }),
        call_count: sbp
            .count
            .as_ref()
            .filter(|_| has(BpFlags::COUNT))
            .map(|count| count.load(Ordering::Relaxed)),
        call_time: totals(&sbp.time, BpFlags::TIME),
        call_memory: totals(&sbp.memory, BpFlags::MEMORY),
    }
}

#[cfg(test)]
mod tests {
    use matchspec::term::{Atom, Term};

    use super::*;
    use crate::control::pattern::{MfaPattern, PatternFlags, parse_pattern_action};
    use crate::model::breakpoint::Function;
    use crate::test_support::traced;

    #[test]
    fn questions_answer_with_values() {
        let t = traced(TraceFlags::CALL | TraceFlags::ARITY);
        let me = ProcessSpec::Pid(t.process.pid());
        let settings = t.core.process_settings(&t.session, me).expect("alive");
        assert_eq!(settings.flags, TraceFlags::CALL | TraceFlags::ARITY);
        assert!(settings.tracer.is_some());
        assert!(t.core.process_settings(&t.session, ProcessSpec::Pid(Pid::new(99, 0))).is_none());

        t.core.declare_module(Atom::new("m"), &[Function::exported("f", 1)]).expect("declared");
        let f = Mfa::new("m", "f", 1);
        assert!(matches!(t.core.function_tracing(&t.session, f), FunctionTracing::Untraced));
        let missing = Mfa::new("m", "nope", 0);
        assert!(matches!(
            t.core.function_tracing(&t.session, missing),
            FunctionTracing::Undeclared
        ));

        let spec = Term::parse("[{'_', [], [{return_trace}]}]").expect("spec");
        let action = parse_pattern_action(&t.core, spec.as_ref()).expect("action");
        let flags = PatternFlags { kinds: BpFlags::LOCAL | BpFlags::COUNT, meta_tracer: None };
        let pattern = MfaPattern::from_term(Term::parse("{m, f, 1}").expect("mfa").as_ref());
        t.core.set_pattern(&t.session, pattern.expect("pattern"), &action, &flags).expect("set");
        let FunctionTracing::Traced(settings) = t.core.function_tracing(&t.session, f) else {
            panic!("m:f/1 is traced");
        };
        let call = settings.call.expect("call trace");
        assert_eq!(call.scope, CallScope::Local);
        assert_eq!(call.match_spec.map(|s| s.to_string()), Some(spec.to_string()));
        assert_eq!(settings.call_count, Some(0));
        assert!(settings.meta.is_none() && settings.call_time.is_none());
    }
}
