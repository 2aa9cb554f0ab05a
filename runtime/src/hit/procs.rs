//! The process events (`procs`) every session tracing a process with
//! `procs` gets.

use matchspec::term::TermRef;

use crate::model::flags::TraceFlags;
use crate::model::tracee::Tracee;
use crate::model::tracer::{Enabled, TraceCategory, TraceOpts, TraceTag, status_then};

/// A process event (`procs`) to every session that traces `tracee` with
/// `procs`.
pub(crate) fn trace_procs(
    tracee: &Tracee,
    tag: TraceTag,
    message: TermRef<'_>,
    extra: Option<TermRef<'_>>,
) {
    let id = tracee.id();
    for link in tracee.links().iter() {
        if !link.session.is_alive() || !link.flags.contains(TraceFlags::PROCS) {
            continue;
        }
        if status_then(&*link.tracer, TraceCategory::Procs, tag, id) != Enabled::Trace {
            continue;
        }
        // The core does not know schedulers outside a running process.
        let opts = TraceOpts { extra, ..TraceOpts::for_flags(link.flags, 1) };
        link.tracer.trace_kind(TraceCategory::Procs, tag, id, message, &opts);
    }
}
