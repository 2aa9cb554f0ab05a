//! System monitoring of a session (`trace:system/3`, OTP 28): which system
//! events its tracer hears of, and which processes are in a long message
//! queue state for it.

use matchspec::term::{Atom, TermRef};

use crate::model::error::TraceError;
use crate::model::ids::Pid;

/// A kind of system event, the `Event` of `trace:system/3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SystemEvent {
    /// A garbage collection took at least so many milliseconds.
    LongGc,
    /// A process or port ran uninterrupted for at least so many
    /// milliseconds.
    LongSchedule,
    /// A heap is larger than so many words after a garbage collection.
    LargeHeap,
    /// A message queue reached a length (and later fell to another).
    LongMessageQueue,
    /// A process was suspended sending to a busy port.
    BusyPort,
    /// A process was suspended sending through a busy distribution port.
    BusyDistPort,
}

impl SystemEvent {
    /// The event named `name`.
    pub fn from_atom(name: Atom) -> Option<SystemEvent> {
        Some(match name.name() {
            "long_gc" => SystemEvent::LongGc,
            "long_schedule" => SystemEvent::LongSchedule,
            "large_heap" => SystemEvent::LargeHeap,
            "long_message_queue" => SystemEvent::LongMessageQueue,
            "busy_port" => SystemEvent::BusyPort,
            "busy_dist_port" => SystemEvent::BusyDistPort,
            _ => return None,
        })
    }

    /// The event's name in monitor messages.
    pub fn atom(self) -> Atom {
        Atom::new(match self {
            SystemEvent::LongGc => "long_gc",
            SystemEvent::LongSchedule => "long_schedule",
            SystemEvent::LargeHeap => "large_heap",
            SystemEvent::LongMessageQueue => "long_message_queue",
            SystemEvent::BusyPort => "busy_port",
            SystemEvent::BusyDistPort => "busy_dist_port",
        })
    }
}

/// The queue lengths of `long_message_queue`: a queue that reaches
/// `enable` messages is long until it falls to `disable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueLimits {
    /// The length at which a long queue stops being long.
    pub disable: u64,
    /// The length at which a queue becomes long (above `disable`).
    pub enable: u64,
}

/// What a session monitors; `None` and `false` are off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SystemMonitor {
    /// `long_gc`, in milliseconds.
    pub long_gc: Option<u64>,
    /// `long_schedule`, in milliseconds.
    pub long_schedule: Option<u64>,
    /// `large_heap`, in words: a heap larger than this is reported.
    pub large_heap: Option<u64>,
    /// `long_message_queue`.
    pub long_message_queue: Option<QueueLimits>,
    /// `busy_port`.
    pub busy_port: bool,
    /// `busy_dist_port`.
    pub busy_dist_port: bool,
}

impl SystemMonitor {
    /// Sets `event` to `value` as `trace:system/3` does: `false` turns it
    /// off; otherwise a limit (a non-negative integer below 2^64), `true`
    /// for the busy events, `{Disable, Enable}` with `0 =< Disable <
    /// Enable` for message queues. Anything else is `badarg`, and nothing
    /// changes.
    pub fn set(&mut self, event: SystemEvent, value: TermRef<'_>) -> Result<(), TraceError> {
        let off = value.as_atom() == Some(Atom::FALSE);
        let limit = || if off { Ok(None) } else { word_size(value).map(Some) };
        match event {
            SystemEvent::LongGc => self.long_gc = limit()?,
            SystemEvent::LongSchedule => self.long_schedule = limit()?,
            SystemEvent::LargeHeap => self.large_heap = limit()?,
            SystemEvent::LongMessageQueue => {
                self.long_message_queue = if off { None } else { Some(queue_limits(value)?) };
            }
            SystemEvent::BusyPort => self.busy_port = on_or_off(value)?,
            SystemEvent::BusyDistPort => self.busy_dist_port = on_or_off(value)?,
        }
        Ok(())
    }
}

fn word_size(value: TermRef<'_>) -> Result<u64, TraceError> {
    value.as_bigint().and_then(|n| u64::try_from(n).ok()).ok_or(TraceError::BadOpt)
}

fn on_or_off(value: TermRef<'_>) -> Result<bool, TraceError> {
    match value.as_atom() {
        Some(Atom::TRUE) => Ok(true),
        Some(Atom::FALSE) => Ok(false),
        _ => Err(TraceError::BadOpt),
    }
}

fn queue_limits(value: TermRef<'_>) -> Result<QueueLimits, TraceError> {
    let pair = value.as_tuple().filter(|t| t.len() == 2).ok_or(TraceError::BadOpt)?;
    let (disable, enable) = match (pair.get(0), pair.get(1)) {
        (Some(d), Some(e)) => (word_size(d)?, word_size(e)?),
        _ => return Err(TraceError::BadOpt),
    };
    if disable >= enable {
        return Err(TraceError::BadOpt);
    }
    Ok(QueueLimits { disable, enable })
}

/// A session's system monitoring: its settings, and the processes whose
/// queue is long for it.
#[derive(Debug, Default)]
pub struct SystemState {
    /// What the session monitors.
    pub settings: SystemMonitor,
    /// The processes in a long message queue state, oldest first.
    pub long_queues: Vec<Pid>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchspec::syntax::parse_term;

    fn set(event: &str, value: &str) -> Result<SystemMonitor, TraceError> {
        let mut monitor = SystemMonitor::default();
        let event = SystemEvent::from_atom(Atom::new(event)).expect("an event");
        monitor.set(event, parse_term(value).expect("a term").as_ref()).map(|()| monitor)
    }

    #[test]
    fn values_are_checked_as_otp_29_checks_them() {
        // What OTP 29.1.2 accepted and refused (testdata/trace/system-*).
        for (event, value) in [
            ("long_gc", "0"),
            ("long_gc", "false"),
            ("long_gc", "18446744073709551615"),
            ("large_heap", "1000"),
            ("long_schedule", "4294967296"),
            ("busy_port", "true"),
            ("busy_dist_port", "false"),
            ("long_message_queue", "{0, 1}"),
            ("long_message_queue", "{2, 4}"),
            ("long_message_queue", "{0, 18446744073709551615}"),
            ("long_message_queue", "false"),
        ] {
            assert!(set(event, value).is_ok(), "{event} {value}");
        }
        for (event, value) in [
            ("long_gc", "-1"),
            ("long_gc", "true"),
            ("large_heap", "18446744073709551616"),
            ("busy_port", "1"),
            ("long_message_queue", "{0, 0}"),
            ("long_message_queue", "{1, 1}"),
            ("long_message_queue", "{5, 4}"),
            ("long_message_queue", "{-1, 1}"),
            ("long_message_queue", "{1, 1.0}"),
            ("long_message_queue", "{1, 2, 3}"),
            ("long_message_queue", "5"),
            ("long_message_queue", "true"),
        ] {
            assert_eq!(set(event, value), Err(TraceError::BadOpt), "{event} {value}");
        }
        assert_eq!(SystemEvent::from_atom(Atom::new("foo")), None);
    }

    #[test]
    fn false_turns_an_event_off() {
        let mut monitor = set("long_message_queue", "{1, 3}").unwrap();
        let off = parse_term("false").unwrap();
        monitor.set(SystemEvent::LongMessageQueue, off.as_ref()).unwrap();
        assert_eq!(monitor, SystemMonitor::default());
    }
}
