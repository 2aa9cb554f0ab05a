//! Process and port trace flags: the bits one session sets on one tracee.

use matchspec::host::trace_flag as bit;
use matchspec::term::{Atom, Heap, Word};

bitflags::bitflags! {
    /// The trace flags of a tracee in one session (`trace:process/4`).
    ///
    /// The bits are [`matchspec::host::trace_flag`]'s, so a match spec's
    /// `{enable_trace, Flag}` and a scenario's flag list name the same bits.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct TraceFlags: u32 {
        /// `send`
        const SEND = bit::SEND;
        /// `'receive'`
        const RECEIVE = bit::RECEIVE;
        /// `set_on_spawn`
        const SET_ON_SPAWN = bit::SET_ON_SPAWN;
        /// `procs`
        const PROCS = bit::PROCS;
        /// `set_on_first_spawn`
        const SET_ON_FIRST_SPAWN = bit::SET_ON_FIRST_SPAWN;
        /// `set_on_link`
        const SET_ON_LINK = bit::SET_ON_LINK;
        /// `set_on_first_link`
        const SET_ON_FIRST_LINK = bit::SET_ON_FIRST_LINK;
        /// `running`
        const RUNNING = bit::RUNNING;
        /// `exiting`
        const EXITING = bit::EXITING;
        /// `garbage_collection`
        const GARBAGE_COLLECTION = bit::GARBAGE_COLLECTION;
        /// `call`
        const CALL = bit::CALL;
        /// `arity`
        const ARITY = bit::ARITY;
        /// `return_to`
        const RETURN_TO = bit::RETURN_TO;
        /// `silent`
        const SILENT = bit::SILENT;
        /// `scheduler_id`
        const SCHEDULER_ID = bit::SCHEDULER_ID;
        /// `running_ports`
        const RUNNING_PORTS = bit::RUNNING_PORTS;
        /// `running_procs`
        const RUNNING_PROCS = bit::RUNNING_PROCS;
        /// `ports`
        const PORTS = bit::PORTS;
        /// `timestamp`
        const TIMESTAMP = bit::TIMESTAMP;
        /// `monotonic_timestamp`
        const MONOTONIC_TIMESTAMP = bit::MONOTONIC_TIMESTAMP;
        /// `strict_monotonic_timestamp`
        const STRICT_MONOTONIC_TIMESTAMP = bit::STRICT_MONOTONIC_TIMESTAMP;
    }
}

/// The order ERTS's `build_trace_flags_term` conses flag names in; the list
/// it answers is this order reversed.
const INFO_ORDER: [(TraceFlags, &str); 21] = [
    (TraceFlags::TIMESTAMP, "timestamp"),
    (TraceFlags::STRICT_MONOTONIC_TIMESTAMP, "strict_monotonic_timestamp"),
    (TraceFlags::MONOTONIC_TIMESTAMP, "monotonic_timestamp"),
    (TraceFlags::SEND, "send"),
    (TraceFlags::RECEIVE, "receive"),
    (TraceFlags::SET_ON_SPAWN, "set_on_spawn"),
    (TraceFlags::CALL, "call"),
    (TraceFlags::PROCS, "procs"),
    (TraceFlags::SET_ON_FIRST_SPAWN, "set_on_first_spawn"),
    (TraceFlags::SET_ON_LINK, "set_on_link"),
    (TraceFlags::SET_ON_FIRST_LINK, "set_on_first_link"),
    (TraceFlags::RUNNING, "running"),
    (TraceFlags::EXITING, "exiting"),
    (TraceFlags::GARBAGE_COLLECTION, "garbage_collection"),
    (TraceFlags::ARITY, "arity"),
    (TraceFlags::RETURN_TO, "return_to"),
    (TraceFlags::SILENT, "silent"),
    (TraceFlags::SCHEDULER_ID, "scheduler_id"),
    (TraceFlags::PORTS, "ports"),
    (TraceFlags::RUNNING_PORTS, "running_ports"),
    (TraceFlags::RUNNING_PROCS, "running_procs"),
];

/// Which timestamp a message carries, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimestampKind {
    /// `timestamp`: `{MegaSecs, Secs, MicroSecs}` as `erlang:now/0`.
    Now,
    /// `strict_monotonic_timestamp`: `{MonotonicNs, UniqueInteger}`.
    StrictMonotonic,
    /// `monotonic_timestamp`: monotonic time in nanoseconds.
    Monotonic,
}

impl TimestampKind {
    /// The atom the erl_tracer options map names it by.
    pub fn atom(self) -> Atom {
        Atom::new(match self {
            TimestampKind::Now => "timestamp",
            TimestampKind::StrictMonotonic => "strict_monotonic",
            TimestampKind::Monotonic => "monotonic",
        })
    }
}

impl TraceFlags {
    /// The three timestamp flags.
    pub const TIMESTAMPS: TraceFlags = TraceFlags::TIMESTAMP
        .union(TraceFlags::MONOTONIC_TIMESTAMP)
        .union(TraceFlags::STRICT_MONOTONIC_TIMESTAMP);

    /// The flags a port can have (`all` on a port).
    pub const PORT_TRACEE: TraceFlags =
        TraceFlags::MODIFIERS.union(TraceFlags::PORTS).union(TraceFlags::RUNNING_PORTS);

    /// The flags only ports have (a process ignores them).
    pub const PORT_ONLY: TraceFlags = TraceFlags::PORTS.union(TraceFlags::RUNNING_PORTS);

    /// The flags that only modify how other events are reported; setting
    /// them with `all`/`existing` visits both processes and ports.
    pub const MODIFIERS: TraceFlags = TraceFlags::SILENT
        .union(TraceFlags::TIMESTAMP)
        .union(TraceFlags::MONOTONIC_TIMESTAMP)
        .union(TraceFlags::STRICT_MONOTONIC_TIMESTAMP)
        .union(TraceFlags::SCHEDULER_ID)
        .union(TraceFlags::RECEIVE)
        .union(TraceFlags::SEND);

    /// The timestamp messages carry: the least significant of the three
    /// timestamp flags wins, as in ERTS (`timestamp` >
    /// `strict_monotonic_timestamp` > `monotonic_timestamp`).
    pub fn timestamp(self) -> Option<TimestampKind> {
        if self.contains(TraceFlags::TIMESTAMP) {
            Some(TimestampKind::Now)
        } else if self.contains(TraceFlags::STRICT_MONOTONIC_TIMESTAMP) {
            Some(TimestampKind::StrictMonotonic)
        } else if self.contains(TraceFlags::MONOTONIC_TIMESTAMP) {
            Some(TimestampKind::Monotonic)
        } else {
            None
        }
    }

    /// The flag list `trace:info(S, Pid, flags)` answers, in ERTS's order.
    pub fn to_list(self, heap: &mut Heap) -> Word {
        let mut list = Word::NIL;
        for (flag, name) in INFO_ORDER {
            if self.contains(flag) {
                let atom = Word::atom(Atom::new(name));
                list = heap.cons(atom, list);
            }
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lists_flags_in_the_order_erts_conses_them() {
        let mut heap = Heap::new();
        let flags = TraceFlags::CALL | TraceFlags::ARITY | TraceFlags::TIMESTAMP;
        let list = flags.to_list(&mut heap);
        assert_eq!(heap.view(list).to_string(), "[arity,call,timestamp]");
    }

    #[test]
    fn the_least_significant_timestamp_flag_wins() {
        let all = TraceFlags::MONOTONIC_TIMESTAMP | TraceFlags::STRICT_MONOTONIC_TIMESTAMP;
        assert_eq!(all.timestamp(), Some(TimestampKind::StrictMonotonic));
        assert_eq!((all | TraceFlags::TIMESTAMP).timestamp(), Some(TimestampKind::Now));
        assert_eq!(TraceFlags::CALL.timestamp(), None);
    }
}
