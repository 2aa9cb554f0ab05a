//! Match specs: the event kinds, the checker, and the checked tree.
//!
//! A match spec is a term, `[{Head, Guards, Body}, ...]`. [`check`] turns
//! it into a [`CheckedSpec`] for one event [`Kind`], or into the list of
//! errors ERTS would report for it, in ERTS's order and wording
//! ([`SpecErrors`]), each with the path to the offending part.
//!
//! ```
//! use matchspec::spec::{check, Kind};
//! use matchspec::{Config, term::Term};
//!
//! let spec = Term::parse("[{{'$1', '$2'}, [{'>', '$2', 10}], ['$1']}]").unwrap();
//! assert!(check(spec.as_ref(), Kind::Table, &Config::default()).is_ok());
//!
//! let bad = Term::parse("[{'_', [{foo, 1}], [{message, x}]}]").unwrap();
//! let errors = check(bad.as_ref(), Kind::Table, &Config::default()).unwrap_err();
//! let messages: Vec<String> = errors.errors().iter().map(|e| e.message()).collect();
//! assert_eq!(messages, [
//!     "Function foo/1 does_not_exist.",
//!     "Special form 'message' used in wrong dialect.",
//! ]);
//! ```

mod ast;
mod check;
mod error;

pub use ast::{CheckedSpec, Clause, Expr, ExprId, Head, Pat, PatId, VarId};
pub use error::{SourceInfo, SpecError, SpecErrorKind, SpecErrors};

use crate::config::Config;
use crate::term::TermRef;

/// The event a spec runs on, which decides the shape of its input and the
/// functions it may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// ETS and friends (`ets:select/2`, `ets:match_spec_run/2`): the input is
    /// one term, the body's last value is the result.
    Table,
    /// Call trace patterns (`erlang:trace_pattern/3` on functions, and
    /// `erlang:match_spec_test/3` with `trace`): the input is the argument
    /// list, the body decides the trace message.
    Call,
    /// Send trace patterns: the input is `[Receiver, Msg]`.
    Send,
    /// Receive trace patterns: the input is `[Node, Sender, Msg]`; the
    /// functions that act on the receiving process are not allowed.
    Receive,
}

impl Kind {
    /// The kind named `table`, `call` (or `trace`, as `match_spec_test`
    /// says), `send` or `receive`.
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "table" => Some(Kind::Table),
            "call" | "trace" => Some(Kind::Call),
            "send" => Some(Kind::Send),
            "receive" => Some(Kind::Receive),
            _ => None,
        }
    }

    /// The name (`trace` is spelled `call`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Table => "table",
            Kind::Call => "call",
            Kind::Send => "send",
            Kind::Receive => "receive",
        }
    }

    /// Is this a trace kind (input is an argument list)?
    pub fn is_trace(self) -> bool {
        self != Kind::Table
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Checks `spec` for `kind`: the spec, or ERTS's errors for it.
///
/// Never panics and never overflows the stack, whatever the spec: heads of
/// any depth are walked without recursion, guards and bodies recurse only
/// as deep as [`Config::max_nesting`] allows (deeper is ERTS's
/// `system_limit` error).
pub fn check(spec: TermRef<'_>, kind: Kind, config: &Config) -> Result<CheckedSpec, SpecErrors> {
    check::check(spec, kind, config)
}
