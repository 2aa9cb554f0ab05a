//! Why a trace command was refused.

use matchspec::spec::SpecErrors;

/// Why a trace command failed. The BIFs raise `badarg` for all but
/// [`TraceError::SystemLimit`]; the variants say which argument was wrong,
/// as ERTS's extended error info does.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The session is not alive (or not a session).
    #[error("badarg: the session is not alive")]
    Session,
    /// A bad option or flag (ERTS's cause `badopt`).
    #[error("badarg: bad option or flag")]
    BadOpt,
    /// The match spec does not compile for call trace.
    #[error("badarg: invalid match spec: {0}")]
    MatchSpec(Box<SpecErrors>),
    /// The match spec is not text or a term of the right shape.
    #[error("badarg: the match spec is not a list of clauses")]
    MatchSpecShape,
    /// The match spec nests too deeply.
    #[error("system_limit: the match spec nests too deeply")]
    SystemLimit,
    /// A match spec given with only `call_count`/`call_time`/`call_memory`.
    #[error("badarg: a match spec needs local, global or meta tracing")]
    CallCount,
    /// Not a process, port or function the command accepts.
    #[error("badarg: not a valid target")]
    BadTarget,
    /// The process is traced by another tracer in this session.
    #[error("badarg: can only have one tracer per process")]
    AlreadyTraced,
    /// The function does not exist in the core's release (`undef`), as
    /// `trace:system/3` before OTP 28.
    #[error("undef: the function does not exist in this release")]
    Undefined,
    /// The session's tracer cannot take what was asked of it: system
    /// monitor messages go only to a tracer that is a local process.
    #[error("badarg: the session's tracer is not a local process")]
    NotAProcess,
    /// A tracer callback tried to change trace settings while its event
    /// was being traced (it would wait for itself).
    #[error("badarg: trace settings cannot change from inside a trace callback")]
    Reentrant,
}
