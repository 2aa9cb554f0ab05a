//! `tracer_test`: the tracer module of OTP's `tracer_SUITE`, as a [`Tracer`].
//!
//! OTP tests the `erl_tracer` behaviour with a NIF module `tracer_test`
//! (`erts/emulator/test/tracer_SUITE_data/tracer_test.c`) whose state is
//! `{Decisions, Collector, Extra}`:
//!
//! * `enabled(Tag, State, Tracee)` answers `Decisions`'s value for the key
//!   `Tag`, whatever it is, and `discard` when the key is missing, when
//!   `Decisions` is not a map or when the state is not a tuple;
//! * `trace(Tag, State, Tracee, Msg, Opts)` sends its five arguments, as the
//!   tuple `{Tag, State, Tracee, Msg, Opts}`, to `Collector`. It does not
//!   look at `Decisions`.
//!
//! Scenarios name it as ERTS accepts tracer modules (`{tracer, tracer_test,
//! State}`, `{meta, tracer_test, State}`, a session tracer `{tracer_test,
//! State}`); `testdata/trace/otp/tracer_test.c` is the same module for the
//! OTP side of the golden files.

use crossbeam_channel::Sender;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};

use super::{Delivered, Enabled, TraceOpts, TraceTag, TraceeId, Tracer};
use crate::model::ids::Pid;

/// The `tracer_test` tracer module with one state.
///
/// Its answers to `enabled` are worked out once from the state, which never
/// changes: what ERTS makes of the NIF's answer (`trace_status`: `remove`
/// or else `trace`; other tags: `trace`, `discard`, and anything else, which
/// ERTS takes as `remove`). Messages go to the collector's mailbox as
/// [`Delivered`] to the collector's pid.
#[derive(Debug)]
pub struct TestTracerModule {
    state: Term,
    collector: Option<Pid>,
    answers: [Enabled; TraceTag::EVERY.len()],
    mailbox: Sender<Delivered>,
}

impl TestTracerModule {
    /// The module's name.
    pub const MODULE: &'static str = "tracer_test";

    /// `tracer_test` with `state`, delivering the collector's messages to
    /// `mailbox`.
    pub fn new(state: TermRef<'_>, mailbox: Sender<Delivered>) -> TestTracerModule {
        let tuple = state.as_tuple();
        let decisions = tuple.and_then(|t| t.get(0)).and_then(TermRef::as_map);
        let collector = tuple.and_then(|t| t.get(1)).and_then(Pid::from_term);
        let answers = TraceTag::EVERY.map(|tag| {
            let value = decisions.and_then(|map| {
                map.in_order().find(|(k, _)| k.as_atom() == Some(tag.atom())).map(|(_, v)| v)
            });
            let value = value.map(|v| v.as_atom().map(Atom::name));
            match (tag, value) {
                // ERTS reads any answer to trace_status but remove as trace.
                (TraceTag::TraceStatus, Some(Some("remove"))) => Enabled::Remove,
                (TraceTag::TraceStatus, _) => Enabled::Trace,
                // A missing key (or no map, or no tuple): the NIF says discard.
                (_, None) => Enabled::Discard,
                (_, Some(Some("trace"))) => Enabled::Trace,
                (_, Some(Some("discard"))) => Enabled::Discard,
                // remove, and what ERTS does not know, which it takes as remove.
                (_, Some(_)) => Enabled::Remove,
            }
        });
        TestTracerModule { state: state.to_owned(), collector, answers, mailbox }
    }

    /// The state the module was given.
    pub fn state(&self) -> TermRef<'_> {
        self.state.as_ref()
    }

    /// The collector: the second element of the state, if it is a pid.
    pub fn collector(&self) -> Option<Pid> {
        self.collector
    }
}

impl Tracer for TestTracerModule {
    fn enabled(&self, tag: TraceTag, _tracee: TraceeId) -> Enabled {
        self.answers[tag as usize]
    }

    fn trace(&self, tag: TraceTag, tracee: TraceeId, message: TermRef<'_>, opts: &TraceOpts<'_>) {
        let mut heap = Heap::with_capacity(64);
        let tracee = tracee.to_word(&mut heap);
        self.forward(tag, heap, tracee, message, opts);
    }

    fn trace_seq(&self, label: TermRef<'_>, info: TermRef<'_>, opts: &TraceOpts<'_>) {
        let mut heap = Heap::with_capacity(64);
        let label = label.copy_to(&mut heap);
        self.forward(TraceTag::SeqTrace, heap, label, info, opts);
    }

    fn to_term(&self, heap: &mut Heap) -> Word {
        let state = self.state.copy_to(heap);
        heap.tuple(&[Word::atom(Atom::new(Self::MODULE)), state])
    }

    fn never_blocks(&self) -> bool {
        // A send to its collector's unbounded channel.
        true
    }
}

impl TestTracerModule {
    /// Sends `{Tag, State, Tracee, Msg, Opts}` to the collector (`tracee`
    /// is already in `heap`; for `seq_trace` it is the label).
    fn forward(
        &self,
        tag: TraceTag,
        mut heap: Heap,
        tracee: Word,
        message: TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) {
        let Some(collector) = self.collector else { return };
        let elements = [
            Word::atom(tag.atom()),
            self.state.copy_to(&mut heap),
            tracee,
            message.copy_to(&mut heap),
            opts.to_map(&mut heap),
        ];
        let root = heap.tuple(&elements);
        let message = Term::from_parts(heap, root);
        // A collector nobody reads any more: the message is lost, as a
        // message to a process that has exited is.
        let _ = self.mailbox.send(Delivered::new(collector, message));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tracer::TraceCategory;

    fn module(state: &str) -> (TestTracerModule, crossbeam_channel::Receiver<Delivered>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let state = Term::parse(state).expect("a state");
        (TestTracerModule::new(state.as_ref(), tx), rx)
    }

    const TRACEE: TraceeId = TraceeId::Process(Pid::new(80, 0));

    #[test]
    fn decisions_come_from_the_map_and_default_to_discard() {
        let (t, _) = module(
            "{#{call => trace, exit => discard, spawn => remove, link => yes}, <0.90.0>, x}",
        );
        assert_eq!(t.enabled(TraceTag::Call, TRACEE), Enabled::Trace);
        assert_eq!(t.enabled_kind(TraceCategory::Call, TraceTag::Call, TRACEE), Enabled::Trace);
        assert_eq!(t.enabled(TraceTag::Exit, TRACEE), Enabled::Discard);
        assert_eq!(t.enabled(TraceTag::Spawn, TRACEE), Enabled::Remove);
        assert_eq!(t.enabled(TraceTag::Link, TRACEE), Enabled::Remove);
        assert_eq!(t.enabled(TraceTag::ReturnFrom, TRACEE), Enabled::Discard);
        // No trace_status key: the NIF says discard, ERTS reads trace.
        assert_eq!(t.enabled(TraceTag::TraceStatus, TRACEE), Enabled::Trace);
        let (t, _) = module("{#{trace_status => remove}, <0.90.0>, x}");
        assert_eq!(t.enabled(TraceTag::TraceStatus, TRACEE), Enabled::Remove);
        for state in ["[]", "{[], <0.90.0>, x}", "{}"] {
            let (t, _) = module(state);
            assert_eq!(t.enabled(TraceTag::Call, TRACEE), Enabled::Discard, "{state}");
            assert_eq!(t.enabled(TraceTag::TraceStatus, TRACEE), Enabled::Trace, "{state}");
        }
    }

    #[test]
    fn trace_sends_its_arguments_to_the_collector() {
        let (t, rx) = module("{#{call => discard}, <0.90.0>, <<1,2>>}");
        let msg = Term::parse("{m,f,[1]}").expect("term");
        let value = Term::parse("ok").expect("term");
        let opts = TraceOpts {
            extra: Some(value.as_ref()),
            scheduler_id: Some(1),
            timestamp: Some(crate::model::flags::TimestampKind::Now),
            ..TraceOpts::default()
        };
        t.trace(TraceTag::ReturnFrom, TRACEE, msg.as_ref(), &opts);
        let d = rx.try_recv().expect("a message");
        assert_eq!(d.tracer, Pid::new(90, 0));
        assert_eq!(
            d.message.as_ref().without_strings().to_string(),
            "{return_from,{#{call => discard},<0.90.0>,<<1,2>>},<0.80.0>,{m,f,[1]},\
             #{extra => ok,scheduler_id => 1,timestamp => timestamp}}"
        );
        let mut heap = Heap::new();
        let term = t.to_term(&mut heap);
        assert_eq!(
            heap.view(term).to_string(),
            "{tracer_test,{#{call => discard},<0.90.0>,<<1,2>>}}"
        );
    }

    #[test]
    fn without_a_collector_nothing_is_sent() {
        let (t, rx) = module("{#{call => trace}, nobody, x}");
        let msg = Term::parse("{m,f,[]}").expect("term");
        t.trace(TraceTag::Call, TRACEE, msg.as_ref(), &TraceOpts::default());
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn the_same_state_is_the_same_tracer() {
        let (a, _) = module("{#{call => trace}, <0.90.0>, x}");
        let (b, _) = module("{#{call => trace}, <0.90.0>, x}");
        let (c, _) = module("{#{call => trace}, <0.90.0>, y}");
        assert!(a.same_as(&b));
        assert!(!a.same_as(&c));
    }
}
