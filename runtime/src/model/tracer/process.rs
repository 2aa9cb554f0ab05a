//! `erl_tracer`: the default tracer, which builds ERTS's trace tuples and
//! delivers them to a tracer process.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// Counts the message as waiting for its tracer until it is dropped.
    #[expect(dead_code, reason = "held for its Drop, which counts the message read")]
    waiting: Option<Waiting>,
}

impl Delivered {
    /// A message for `tracer` (one no overload policy counts).
    pub fn new(tracer: Pid, message: Term) -> Delivered {
        Delivered { tracer, message, waiting: None }
    }
}

/// One message waiting for a tracer process: the count goes down when the
/// host drops the [`Delivered`] (it has read it), wherever the channel is
/// and whoever else shares it.
#[derive(Debug)]
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A tracer process: the default tracer (`erl_tracer` with a pid).
///
/// Messages go to a channel, standing for the tracer's mailbox. The tracer
/// is *dead* once [`ProcessTracer::kill`] was called or the receiving end
/// of the channel is gone; a dead tracer answers `remove` to
/// `trace_status`, so the core removes it from its tracees, as ERTS does.
///
/// Sending never blocks the traced thread. What happens when the tracer
/// does not keep up is its [`Overload`] policy.
#[derive(Debug)]
pub struct ProcessTracer {
    pid: Pid,
    mailbox: Sender<Delivered>,
    clock: Arc<dyn Clock>,
    alive: AtomicBool,
    overload: Overload,
    /// Messages dropped since the last `{drop, N}` went out.
    dropped: AtomicU64,
    /// Messages dropped in all.
    dropped_total: AtomicU64,
    /// Messages sent and not yet read (dropped by the host).
    waiting: Arc<AtomicUsize>,
}

/// What a tracer process does when messages arrive faster than it reads
/// them. The limit counts messages sent to it that the host has not yet
/// dropped (read), even where tracers share one channel. Threads that
/// send at the same moment may each pass the check, so a mailbox can hold
/// up to `limit` plus one message per sending thread (and one `{drop, N}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overload {
    /// Every message waits, however many: ERTS's behaviour (a tracer that
    /// stops reading grows its mailbox until memory runs out).
    #[default]
    Unbounded,
    /// Past `limit` waiting messages, new ones are dropped and counted;
    /// when there is room again, `{drop, N}` (N dropped since the last
    /// one) is delivered before the next message, as dbg's ip tracer does.
    Drop {
        /// The most messages that wait.
        limit: usize,
    },
    /// Past `limit` waiting messages the tracer is removed, as a dead one
    /// is: it gets nothing more, and every tracee drops it at its next event.
    Remove {
        /// The most messages that wait.
        limit: usize,
    },
}

impl ProcessTracer {
    /// A tracer process `pid` delivering to `mailbox`, taking timestamps
    /// from `clock`, with no limit on its mailbox ([`Overload::Unbounded`]).
    pub fn new(pid: Pid, mailbox: Sender<Delivered>, clock: Arc<dyn Clock>) -> ProcessTracer {
        ProcessTracer {
            pid,
            mailbox,
            clock,
            alive: AtomicBool::new(true),
            overload: Overload::Unbounded,
            dropped: AtomicU64::new(0),
            dropped_total: AtomicU64::new(0),
            waiting: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The same tracer with `overload` as its policy.
    pub fn with_overload(mut self, overload: Overload) -> ProcessTracer {
        self.overload = overload;
        self
    }

    /// Its overload policy.
    pub fn overload(&self) -> Overload {
        self.overload
    }

    /// How many messages [`Overload::Drop`] dropped in all.
    pub fn dropped(&self) -> u64 {
        self.dropped_total.load(Ordering::Relaxed)
    }

    /// Puts `message` in the mailbox as the policy says.
    fn deliver(&self, message: Term) {
        match self.overload {
            Overload::Unbounded => {}
            Overload::Drop { limit } => {
                if self.waiting.load(Ordering::Relaxed) >= limit {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    self.dropped_total.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                let n = self.dropped.swap(0, Ordering::Relaxed);
                if n > 0 {
                    self.send(drop_marker(n));
                }
            }
            Overload::Remove { limit } => {
                if self.waiting.load(Ordering::Relaxed) >= limit {
                    self.kill();
                    return;
                }
            }
        }
        self.send(message);
    }

    fn send(&self, message: Term) {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        let waiting = Some(Waiting(self.waiting.clone()));
        if self.mailbox.send(Delivered { tracer: self.pid, message, waiting }).is_err() {
            // Nobody reads the mailbox any more: the tracer is gone.
            self.kill();
        }
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
    fn is_process(&self) -> bool {
        true
    }

    fn monitor(&self, message: TermRef<'_>) {
        if self.is_alive() {
            self.deliver(message.to_owned());
        }
    }

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
        self.deliver(message);
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
        self.deliver(message);
    }

    fn to_term(&self, heap: &mut Heap) -> Word {
        self.pid.to_word(heap)
    }

    fn never_blocks(&self) -> bool {
        // A send on an unbounded channel.
        true
    }
}

/// `{drop, N}`.
fn drop_marker(n: u64) -> Term {
    let mut heap = Heap::with_capacity(4);
    let count = heap.int(i64::try_from(n).unwrap_or(i64::MAX));
    let root = heap.tuple(&[Word::atom(Atom::new("drop")), count]);
    Term::from_parts(heap, root)
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

    fn call(t: &ProcessTracer, n: i64) {
        let msg = Term::from(n);
        t.trace(
            TraceTag::Call,
            TraceeId::Process(Pid::new(80, 0)),
            msg.as_ref(),
            &TraceOpts::default(),
        );
    }

    fn drain(rx: &crossbeam_channel::Receiver<Delivered>) -> Vec<String> {
        rx.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect()
    }

    #[test]
    fn drop_keeps_the_mailbox_bounded_and_says_how_many_it_dropped() {
        let (t, rx) = tracer();
        let t = t.with_overload(Overload::Drop { limit: 3 });
        (0..10).for_each(|n| call(&t, n));
        let first = drain(&rx);
        assert_eq!(first.len(), 3, "{first:?}");
        assert_eq!(t.dropped(), 7);
        call(&t, 10);
        call(&t, 11);
        assert_eq!(
            drain(&rx),
            ["{drop,7}", "{trace,<0.80.0>,call,10}", "{trace,<0.80.0>,call,11}"]
        );
        assert!(t.is_alive());
    }

    #[test]
    fn remove_kills_the_tracer_past_its_limit() {
        let (t, rx) = tracer();
        let t = t.with_overload(Overload::Remove { limit: 2 });
        (0..2).for_each(|n| call(&t, n));
        assert!(t.is_alive());
        assert_eq!(t.enabled(TraceTag::TraceStatus, TraceeId::Undefined), Enabled::Trace);
        call(&t, 2);
        assert!(!t.is_alive());
        assert_eq!(t.enabled(TraceTag::TraceStatus, TraceeId::Undefined), Enabled::Remove);
        // What was delivered before is intact; nothing comes after.
        call(&t, 3);
        assert_eq!(drain(&rx), ["{trace,<0.80.0>,call,0}", "{trace,<0.80.0>,call,1}"]);
    }

    #[test]
    fn unbounded_keeps_everything() {
        let (t, rx) = tracer();
        (0..1000).for_each(|n| call(&t, n));
        assert_eq!(drain(&rx).len(), 1000);
    }
}
