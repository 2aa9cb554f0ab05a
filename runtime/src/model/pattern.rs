//! What a trace pattern says: which functions (`{M, F, A}` with
//! wildcards), what `trace:function/4` does to them, with which flags, and
//! a session's `on_load` pattern. Setting patterns is control's
//! (`control/pattern.rs`).

use std::sync::Arc;

use matchspec::term::{Atom, TermRef};

use crate::model::breakpoint::{BpFlags, FunctionEntry};
use crate::model::error::TraceError;
use crate::model::session::SessionRef;
use crate::model::trace_spec::TraceSpec;
use crate::model::tracer::TracerRef;

/// Which functions a pattern names: `{M, F, A}` where a `'_'` may replace
/// the arity, the arity and name, or all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MfaPattern {
    /// The module, unless `'_'`.
    pub module: Option<Atom>,
    /// The function, unless `'_'`.
    pub function: Option<Atom>,
    /// The arity, unless `'_'`.
    pub arity: Option<u8>,
}

impl MfaPattern {
    /// Reads `{M, F, A}`; wildcards must be a suffix (`{M, '_', 1}` is
    /// refused, as in ERTS).
    pub fn from_term(term: TermRef<'_>) -> Result<MfaPattern, TraceError> {
        let tuple = term.as_tuple().filter(|t| t.len() == 3).ok_or(TraceError::BadTarget)?;
        let [m, f, a] = [0, 1, 2].map(|i| tuple.get(i).expect("three elements"));
        let wild = |t: TermRef<'_>| t.as_atom() == Some(Atom::UNDERSCORE);
        let module = if wild(m) { None } else { Some(m.as_atom().ok_or(TraceError::BadTarget)?) };
        let function = if wild(f) { None } else { Some(f.as_atom().ok_or(TraceError::BadTarget)?) };
        let arity = if wild(a) {
            None
        } else {
            let n = a.as_i64().ok_or(TraceError::BadTarget)?;
            Some(u8::try_from(n).map_err(|_| TraceError::BadTarget)?)
        };
        // Only a suffix may be wild.
        let ok = match (module, function, arity) {
            (Some(_), Some(_), _) | (Some(_), None, None) | (None, None, None) => true,
            (Some(_), None, Some(_)) | (None, _, _) => false,
        };
        if !ok {
            return Err(TraceError::BadTarget);
        }
        Ok(MfaPattern { module, function, arity })
    }

    /// Does it name `entry`?
    pub fn matches(&self, entry: &FunctionEntry) -> bool {
        let mfa = entry.mfa();
        self.module.is_none_or(|m| m == mfa.module)
            && self.function.is_none_or(|f| f == mfa.function)
            && self.arity.is_none_or(|a| a == mfa.arity)
    }
}

/// What `trace:function/4` does to the functions it names (its second
/// argument).
#[derive(Clone, Debug)]
pub enum PatternAction {
    /// `false`: turn the named kinds of tracing off.
    Off,
    /// `true` or `[]`: on, without a match spec.
    On,
    /// A match spec: on, tracing what it selects.
    Spec(Arc<TraceSpec>),
    /// `restart`: counters and timers start again from zero.
    Restart,
    /// `pause`: counters and timers stop.
    Pause,
}

/// The flags of `trace:function/4` (its fourth argument).
#[derive(Clone, Debug, Default)]
pub struct PatternFlags {
    /// Local-kind breakpoints asked for; empty means `global`.
    pub kinds: BpFlags,
    /// The meta tracer given by `{meta, Tracer}` or implied by `meta`.
    pub meta_tracer: Option<TracerRef>,
}

impl PatternFlags {
    /// Is this a breakpoint (local-kind) request rather than `global`?
    pub fn is_breakpoint(&self) -> bool {
        !self.kinds.is_empty()
    }
}

/// A session's `on_load` pattern.
#[derive(Clone, Debug)]
pub(crate) struct OnLoad {
    pub(crate) session: SessionRef,
    pub(crate) action: PatternAction,
    pub(crate) flags: PatternFlags,
}
