//! [`Outcome`]: what running a spec on one input gives, whatever the engine.

use crate::term::TermRef;

/// The result of running a compiled spec on one input. Every engine returns
/// this same type, so their answers compare with `==`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome<'a> {
    /// No clause matched (ETS skips the object; a trace event is not traced).
    NoMatch,
    /// A clause matched.
    Match(Matched<'a>),
}

/// What a matching clause produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matched<'a> {
    /// Table specs: the value of the last body expression. Trace specs:
    /// `true` (trace the event), `false` (do not), or the term of the last
    /// `{message, X}` (trace it with `X` as extra information).
    pub result: TermRef<'a>,
    /// The trace flags the body set.
    pub flags: Flags,
}

/// Flags a trace body sets on its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// `{return_trace}` ran: trace the return from the call.
    pub return_trace: bool,
    /// `{exception_trace}` ran: trace the return or exception.
    pub exception_trace: bool,
}

impl<'a> Outcome<'a> {
    /// The matching clause's result, if one matched.
    pub fn result(&self) -> Option<TermRef<'a>> {
        match self {
            Outcome::NoMatch => None,
            Outcome::Match(m) => Some(m.result),
        }
    }

    /// The flags (all off when nothing matched).
    pub fn flags(&self) -> Flags {
        match self {
            Outcome::NoMatch => Flags::default(),
            Outcome::Match(m) => m.flags,
        }
    }
}

/// Why an engine could not run a program on an input. These are not
/// outcomes of the spec (a guard that raises is a [`Outcome::NoMatch`]); they
/// mean the run itself was impossible.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A trace spec was given an input that is not an argument list.
    #[error("a {kind} spec runs on an argument list, not on {input}")]
    NotAnArgumentList {
        /// The spec's kind.
        kind: crate::spec::Kind,
        /// The input, shortened.
        input: String,
    },
}
