//! `trace:system/3` (OTP 28): what a session's system monitoring watches.
//! The events it reports come from the host (`hit/system_monitor.rs`).

use matchspec::Change;
use matchspec::term::TermRef;

use crate::core::TraceCore;
use crate::model::error::TraceError;
use crate::model::session::SessionRef;
use crate::model::system_monitor::SystemEvent;

impl TraceCore {
    /// `trace:system(Session, Event, Value)`: monitor `event` with the
    /// limit `value` (`false`: stop), reporting to the session's tracer,
    /// which must be a process ([`TraceError::NotAProcess`]).
    ///
    /// Setting `long_message_queue` forgets which processes were in a
    /// long queue state for the session: each is reported again when its
    /// queue next grows to the new limit. (ERTS 17.1 behaves otherwise for
    /// a process that was long when the limit is set again: it reports
    /// that process no more, in that session. See `docs/scenarios.md`.)
    pub fn trace_system(
        &self,
        session: &SessionRef,
        event: TermRef<'_>,
        value: TermRef<'_>,
    ) -> Result<(), TraceError> {
        if !self.release().has(Change::TraceSystem) {
            return Err(TraceError::Undefined);
        }
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        let event = event.as_atom().and_then(SystemEvent::from_atom).ok_or(TraceError::BadOpt)?;
        if !session.tracer().is_some_and(|t| t.is_process()) {
            return Err(TraceError::NotAProcess);
        }
        let mut state = session.system.lock();
        state.settings.set(event, value)?;
        self.system_monitored.store(true, std::sync::atomic::Ordering::Release);
        if event == SystemEvent::LongMessageQueue {
            state.long_queues.clear();
        }
        Ok(())
    }
}
