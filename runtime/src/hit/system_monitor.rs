//! The system events a host reports of a process, for the sessions that
//! monitor them (`trace:system/3`): `{monitor, Pid, Event, Info}` to the
//! session's tracer.
//!
//! * `long_message_queue`: the host reports the length of the process's
//!   message queue whenever it changes ([`Process::queue_length`]). A queue
//!   that grows to a session's `Enable` is long for that session (`Info`
//!   `true`) until it shrinks to `Disable` (`false`).
//! * `large_heap`: the host reports each garbage collection's heap
//!   ([`Process::collected`]); a heap whose blocks (young, old and
//!   fragments) hold more words than the session's limit is reported with
//!   ERTS's figures.
//!
//! Until some session sets system monitoring, each report costs one atomic
//! load; then one lock of each session's settings.
//!
//! ERTS hands these messages to a system thread that sends them later, so
//! against the trace messages of the same tracer their order is a race;
//! here they go out at once.

use std::sync::atomic::Ordering;

use matchspec::term::{Atom, Heap, Word};

use crate::hit::process::Process;
use crate::hit::scheduling::GcInfo;
use crate::model::session::SessionRef;
use crate::model::system_monitor::SystemEvent;

impl Process {
    /// The process's message queue holds `len` messages now: the messages
    /// it may receive (ERTS's `mq_len`), a message it takes at once (a
    /// step) included while it is there. Report every change.
    pub fn queue_length(&mut self, len: u64) {
        let before = std::mem::replace(&mut self.queue_len, len);
        if len == before || !self.core().system_monitored.load(Ordering::Acquire) {
            return;
        }
        let pid = self.pid();
        for session in self.core().sessions() {
            let mut state = session.system.lock();
            let Some(limits) = state.settings.long_message_queue else { continue };
            let long = state.long_queues.iter().position(|p| *p == pid);
            let now_long = match long {
                None if len > before && len >= limits.enable => {
                    state.long_queues.push(pid);
                    true
                }
                Some(at) if len < before && len <= limits.disable => {
                    state.long_queues.remove(at);
                    false
                }
                _ => continue,
            };
            drop(state);
            let info = Word::atom(if now_long { Atom::TRUE } else { Atom::FALSE });
            self.send_monitor(&session, SystemEvent::LongMessageQueue, info, &mut Heap::new());
        }
    }

    /// A garbage collection of the process ended with the heap `info`
    /// describes.
    pub fn collected(&mut self, info: &GcInfo) {
        if !self.core().system_monitored.load(Ordering::Acquire) {
            return;
        }
        let blocks = info.old_heap_block_size + info.heap_block_size + info.mbuf_size;
        for session in self.core().sessions() {
            let limit = session.system.lock().settings.large_heap;
            if limit.is_some_and(|limit| blocks > limit) {
                let mut heap = Heap::new();
                let figures = info.heap_word(&mut heap);
                self.send_monitor(&session, SystemEvent::LargeHeap, figures, &mut heap);
            }
        }
    }

    /// The process is gone: no session holds its queue long any more.
    pub(crate) fn forget_queue(&mut self) {
        if !self.core().system_monitored.load(Ordering::Acquire) {
            return;
        }
        let pid = self.pid();
        for session in self.core().sessions() {
            session.system.lock().long_queues.retain(|p| *p != pid);
        }
    }

    fn send_monitor(&self, session: &SessionRef, event: SystemEvent, info: Word, heap: &mut Heap) {
        let Some(tracer) = session.tracer() else { return };
        let pid = self.pid().to_word(heap);
        let message =
            heap.tuple(&[Word::atom(Atom::new("monitor")), pid, Word::atom(event.atom()), info]);
        tracer.monitor(heap.view(message));
    }
}

#[cfg(test)]
mod tests {
    use matchspec::syntax::parse_term;
    use matchspec::{Config, Release};

    use super::*;
    use crate::model::error::TraceError;
    use crate::model::flags::TraceFlags;
    use crate::test_support::{Traced, traced};
    use crate::{CoreConfig, TraceCore};

    fn set(t: &Traced, event: &str, value: &str) -> Result<(), TraceError> {
        let event = parse_term(event).unwrap();
        let value = parse_term(value).unwrap();
        t.core.trace_system(&t.session, event.as_ref(), value.as_ref())
    }

    fn messages(t: &Traced) -> Vec<String> {
        t.rx.try_iter().map(|d| d.message.to_string()).collect()
    }

    #[test]
    fn a_queue_is_long_from_enable_until_it_falls_to_disable() {
        let mut t = traced(TraceFlags::empty());
        set(&t, "long_message_queue", "{1, 3}").unwrap();
        for len in [1, 2, 3, 4, 3, 2] {
            t.process.queue_length(len);
        }
        assert_eq!(messages(&t), ["{monitor,<0.80.0>,long_message_queue,true}"]);
        t.process.queue_length(1);
        t.process.queue_length(3);
        assert_eq!(
            messages(&t),
            [
                "{monitor,<0.80.0>,long_message_queue,false}",
                "{monitor,<0.80.0>,long_message_queue,true}"
            ]
        );
        // Setting the limits again forgets the long state; off sends nothing.
        set(&t, "long_message_queue", "{0, 5}").unwrap();
        t.process.queue_length(4);
        t.process.queue_length(5);
        set(&t, "long_message_queue", "false").unwrap();
        t.process.queue_length(0);
        assert_eq!(messages(&t), ["{monitor,<0.80.0>,long_message_queue,true}"]);
        assert!(!t.session.has_long_queues());
    }

    #[test]
    fn a_heap_larger_than_the_limit_is_reported_with_its_figures() {
        let mut t = traced(TraceFlags::empty());
        let info = GcInfo { heap_block_size: 100, old_heap_block_size: 20, ..GcInfo::default() };
        set(&t, "large_heap", "120").unwrap();
        t.process.collected(&info);
        assert_eq!(messages(&t), Vec::<String>::new());
        set(&t, "large_heap", "119").unwrap();
        t.process.collected(&info);
        assert_eq!(
            messages(&t),
            ["{monitor,<0.80.0>,large_heap,[{old_heap_block_size,20},{heap_block_size,100},\
              {mbuf_size,0},{stack_size,0},{old_heap_size,0},{heap_size,0}]}"]
        );
    }

    #[test]
    fn only_a_live_session_with_a_process_tracer_monitors_and_only_from_otp_28() {
        let t = traced(TraceFlags::empty());
        assert_eq!(set(&t, "long_heap", "1"), Err(TraceError::BadOpt));
        assert_eq!(set(&t, "\"long_gc\"", "1"), Err(TraceError::BadOpt));
        let untraced = t.core.session_create(Atom::new("s2"), None);
        let one = parse_term("1").unwrap();
        let gc = parse_term("long_gc").unwrap();
        assert_eq!(
            t.core.trace_system(&untraced, gc.as_ref(), one.as_ref()),
            Err(TraceError::NotAProcess)
        );
        t.core.session_destroy(&t.session).unwrap();
        assert_eq!(set(&t, "long_gc", "1"), Err(TraceError::Session));

        let otp27 =
            CoreConfig { spec: Config::default().release(Release::Otp27), ..CoreConfig::default() };
        let core = TraceCore::new(otp27);
        let session = core.session_create(Atom::new("s"), None);
        assert_eq!(
            core.trace_system(&session, gc.as_ref(), one.as_ref()),
            Err(TraceError::Undefined)
        );
    }
}
