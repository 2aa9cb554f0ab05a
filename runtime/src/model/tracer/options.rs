//! The options map `trace/5` receives.

use matchspec::term::{Atom, Heap, TermRef, Word};

use crate::model::flags::{TimestampKind, TraceFlags};

/// What ERTS puts in the `Opts` map of `trace/5`; absent keys are `None`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceOpts<'a> {
    /// `extra`: the receiver of a send, the MFA of a spawn, the value of a
    /// return, `{Class, Value}` of an exception.
    pub extra: Option<TermRef<'a>>,
    /// `match_spec_result`: a `{message, X}` result other than `true`.
    pub match_spec_result: Option<TermRef<'a>>,
    /// `scheduler_id`, with the `scheduler_id` flag.
    pub scheduler_id: Option<u32>,
    /// `timestamp`: which timestamp the tracer should take.
    pub timestamp: Option<TimestampKind>,
}

impl TraceOpts<'_> {
    /// The options a tracee's `flags` ask for: `scheduler_id` (the tracee
    /// runs on `scheduler`) and the timestamp; no extra, no spec result.
    pub fn for_flags(flags: TraceFlags, scheduler: u32) -> TraceOpts<'static> {
        TraceOpts {
            extra: None,
            match_spec_result: None,
            scheduler_id: flags.contains(TraceFlags::SCHEDULER_ID).then_some(scheduler),
            timestamp: flags.timestamp(),
        }
    }

    /// The options as the map `trace/5` gets (`#{}` when empty). The terms
    /// are copied into `heap`.
    pub fn to_map(&self, heap: &mut Heap) -> Word {
        let mut pairs = Vec::new();
        if let Some(extra) = self.extra {
            pairs.push((Word::atom(Atom::new("extra")), extra.copy_to(heap)));
        }
        if let Some(result) = self.match_spec_result {
            let key = Word::atom(Atom::new("match_spec_result"));
            pairs.push((key, result.copy_to(heap)));
        }
        if let Some(id) = self.scheduler_id {
            pairs.push((Word::atom(Atom::new("scheduler_id")), heap.int(i64::from(id))));
        }
        if let Some(kind) = self.timestamp {
            pairs.push((Word::atom(Atom::new("timestamp")), Word::atom(kind.atom())));
        }
        heap.map(&pairs)
    }
}
