//! A trace pattern's match spec, compiled, with the term it came from.

use matchspec::term::Term;
use msc::Spec;

/// A compiled trace match spec and the term it was compiled from
/// (`trace:info/3` answers the source).
#[derive(Debug)]
pub struct TraceSpec {
    /// The spec as given.
    pub source: Term,
    /// The compiled spec, run by the engine the core was configured with.
    pub spec: Spec,
    /// Can a run change the process's trace flags (`enable_trace`,
    /// `disable_trace`, `trace`, `silent`)? If not, the flags read before
    /// the run still hold after it.
    pub has_side_effects: bool,
}
