//! `erl_tracer`: the default tracer, which builds ERTS's trace tuples and
//! delivers them to a tracer process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use crossbeam_channel::Sender;
use matchspec::term::{Atom, Heap, Term, TermRef, Word};

use super::{Enabled, TraceCategory, TraceOpts, TraceTag, TraceeId, Tracer};
use crate::model::clock::Clock;
use crate::model::ids::Pid;

/// A trace message delivered to a tracer process.
#[derive(Debug)]
pub struct Delivered {
    /// The tracer process it was delivered to.
    pub tracer: Pid,
    /// The message, as the tracer process would receive it.
    pub message: Term,
}

/// A tracer process: the default tracer (`erl_tracer` with a pid).
///
/// Messages go to a channel, standing for the tracer's mailbox. The tracer
/// is *dead* once [`ProcessTracer::kill`] was called or the receiving end
/// of the channel is gone; a dead tracer answers `remove` to
/// `trace_status`, so the core removes it from its tracees, as ERTS does.
#[derive(Debug)]
pub struct ProcessTracer {
    pid: Pid,
    mailbox: Sender<Delivered>,
    clock: Arc<dyn Clock>,
    alive: AtomicBool,
}

impl ProcessTracer {
    /// A tracer process `pid` delivering to `mailbox`, taking timestamps
    /// from `clock`.
    pub fn new(pid: Pid, mailbox: Sender<Delivered>, clock: Arc<dyn Clock>) -> ProcessTracer {
        ProcessTracer { pid, mailbox, clock, alive: AtomicBool::new(true) }
    }

    /// The tracer's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The tracer process exits.
    pub fn kill(&self) {
        self.alive.store(false, Ordering::Release);
    }

    /// Is the tracer process alive (not killed, its mailbox still read)?
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Builds the message `erl_tracer:trace/5` would send.
    fn message(
        &self,
        tag: TraceTag,
        tracee: TraceeId,
        msg: TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) -> Term {
        let mut heap = Heap::with_capacity(64);
        // At most eight elements: no allocation besides the heap.
        let mut elements = [Word::NIL; 8];
        let mut len = 0;
        let mut push = |word: Word| {
            elements[len] = word;
            len += 1;
        };
        push(Word::atom(Atom::TRACE));
        push(tracee.to_word(&mut heap));
        push(Word::atom(tag.atom()));
        push(msg.copy_to(&mut heap));
        if let Some(extra) = opts.extra {
            push(extra.copy_to(&mut heap));
        }
        if let Some(result) = opts.match_spec_result {
            push(result.copy_to(&mut heap));
        }
        if let Some(id) = opts.scheduler_id {
            push(heap.int(i64::from(id)));
        }
        if let Some(kind) = opts.timestamp {
            push(self.clock.timestamp(kind, &mut heap));
            static TRACE_TS: LazyLock<Atom> = LazyLock::new(|| Atom::new("trace_ts"));
            elements[0] = Word::atom(*TRACE_TS);
        }
        let root = heap.tuple(&elements[..len]);
        Term::from_parts(heap, root)
    }
}

impl Tracer for ProcessTracer {
    fn enabled(&self, tag: TraceTag, tracee: TraceeId) -> Enabled {
        if !self.is_alive() {
            return if tag == TraceTag::TraceStatus { Enabled::Remove } else { Enabled::Discard };
        }
        if tracee == TraceeId::Process(self.pid) {
            // A tracer never traces itself.
            return Enabled::Discard;
        }
        Enabled::Trace
    }

    fn status_then_kind(
        &self,
        _category: TraceCategory,
        _tag: TraceTag,
        tracee: TraceeId,
    ) -> Enabled {
        // `enabled` twice, answered once: dead is `remove` (the status
        // check), itself is `discard` (both checks).
        if !self.is_alive() {
            return Enabled::Remove;
        }
        if tracee == TraceeId::Process(self.pid) { Enabled::Discard } else { Enabled::Trace }
    }

    fn trace(&self, tag: TraceTag, tracee: TraceeId, message: TermRef<'_>, opts: &TraceOpts<'_>) {
        if !self.is_alive() {
            return;
        }
        let message = self.message(tag, tracee, message, opts);
        if self.mailbox.send(Delivered { tracer: self.pid, message }).is_err() {
            // Nobody reads the mailbox any more: the tracer is gone.
            self.kill();
        }
    }

    fn trace_seq(&self, label: TermRef<'_>, info: TermRef<'_>, opts: &TraceOpts<'_>) {
        if !self.is_alive() {
            return;
        }
        static SEQ_TRACE: LazyLock<Atom> = LazyLock::new(|| Atom::new("seq_trace"));
        let mut heap = Heap::with_capacity(32);
        let (label, info) = (label.copy_to(&mut heap), info.copy_to(&mut heap));
        let mut elements = [Word::atom(*SEQ_TRACE), label, info, Word::NIL];
        let len = match opts.timestamp {
            Some(kind) => {
                elements[3] = self.clock.timestamp(kind, &mut heap);
                4
            }
            None => 3,
        };
        let root = heap.tuple(&elements[..len]);
        let message = Term::from_parts(heap, root);
        if self.mailbox.send(Delivered { tracer: self.pid, message }).is_err() {
            self.kill();
        }
    }

    fn to_term(&self, heap: &mut Heap) -> Word {
        self.pid.to_word(heap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::clock::ManualClock;
    use crate::model::flags::TimestampKind;

    fn tracer() -> (ProcessTracer, crossbeam_channel::Receiver<Delivered>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        (ProcessTracer::new(Pid::new(90, 0), tx, Arc::new(ManualClock::new())), rx)
    }

    fn deliver(
        tracer: &ProcessTracer,
        rx: &crossbeam_channel::Receiver<Delivered>,
        opts: &TraceOpts<'_>,
    ) -> String {
        let msg = Term::parse("{m,f,[1]}").expect("term");
        tracer.trace(TraceTag::Call, TraceeId::Process(Pid::new(80, 0)), msg.as_ref(), opts);
        rx.try_recv().expect("a message").message.as_ref().without_strings().to_string()
    }

    #[test]
    fn elements_follow_erl_tracer_order() {
        let (t, rx) = tracer();
        assert_eq!(deliver(&t, &rx, &TraceOpts::default()), "{trace,<0.80.0>,call,{m,f,[1]}}");
        let pam = Term::parse("hello").expect("term");
        let opts = TraceOpts {
            extra: None,
            match_spec_result: Some(pam.as_ref()),
            scheduler_id: Some(3),
            timestamp: Some(TimestampKind::Monotonic),
        };
        // Result of the spec, then the scheduler, then the timestamp last.
        assert_eq!(deliver(&t, &rx, &opts), "{trace_ts,<0.80.0>,call,{m,f,[1]},hello,3,0}");
        let value = Term::parse("42").expect("term");
        let opts = TraceOpts { extra: Some(value.as_ref()), ..TraceOpts::default() };
        assert_eq!(deliver(&t, &rx, &opts), "{trace,<0.80.0>,call,{m,f,[1]},42}");
    }

    #[test]
    fn a_tracer_never_traces_itself_and_a_dead_one_asks_to_be_removed() {
        let (t, _rx) = tracer();
        let me = TraceeId::Process(Pid::new(90, 0));
        let other = TraceeId::Process(Pid::new(80, 0));
        assert_eq!(t.enabled(TraceTag::Call, me), Enabled::Discard);
        assert_eq!(t.enabled(TraceTag::Call, other), Enabled::Trace);
        t.kill();
        assert_eq!(t.enabled(TraceTag::TraceStatus, other), Enabled::Remove);
        assert_eq!(t.enabled(TraceTag::Call, other), Enabled::Discard);
    }

    #[test]
    fn the_combined_check_answers_what_the_two_checks_answer() {
        let (t, _rx) = tracer();
        let two_checks = |t: &ProcessTracer, tracee| match t.enabled(TraceTag::TraceStatus, tracee)
        {
            Enabled::Remove => Enabled::Remove,
            Enabled::Trace | Enabled::Discard => t.enabled(TraceTag::Call, tracee),
        };
        let tracees = [TraceeId::Process(Pid::new(90, 0)), TraceeId::Process(Pid::new(80, 0))];
        for alive in [true, false] {
            if !alive {
                t.kill();
            }
            for tracee in tracees {
                let combined = t.status_then_kind(TraceCategory::Call, TraceTag::Call, tracee);
                assert_eq!(combined, two_checks(&t, tracee), "alive {alive}, {tracee:?}");
            }
        }
    }

    #[test]
    fn options_become_the_map_trace_5_gets() {
        let mut heap = Heap::new();
        let empty = TraceOpts::default().to_map(&mut heap);
        assert_eq!(heap.view(empty).to_string(), "#{}");
        let value = Term::parse("{ok, 1}").expect("term");
        let opts = TraceOpts {
            extra: Some(value.as_ref()),
            match_spec_result: None,
            scheduler_id: Some(1),
            timestamp: Some(TimestampKind::Now),
        };
        let map = opts.to_map(&mut heap);
        assert_eq!(
            heap.view(map).to_string(),
            "#{extra => {ok,1},scheduler_id => 1,timestamp => timestamp}"
        );
    }
}
