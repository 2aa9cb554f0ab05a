//! Where a trace match spec's `{display, X}` goes. ERTS prints `X` on the
//! node's standard output; an embedded core prints nothing and hands the
//! term to its host, which decides.

use std::fmt;

use matchspec::term::TermRef;

use crate::model::tracer::TraceeId;

/// The host's side of `{display, X}` (the core's `CoreConfig::console`).
pub trait Console: Send + Sync + fmt::Debug {
    /// `process`'s trace spec showed `term`. Called at the breakpoint, on
    /// the thread that hit it: keep it short.
    fn display(&self, process: TraceeId, term: TermRef<'_>);
}

/// The default console: shows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoConsole;

impl Console for NoConsole {
    fn display(&self, _: TraceeId, _: TermRef<'_>) {}
}
