//! [`Host`]: what a running spec asks of the world around it.
//!
//! Table specs only ever need `{self}`. Trace specs read and change the
//! traced process: its sequential trace token, its trace flags, its stack.
//! Engines call the host at the point of the call, so a body that sets the
//! token and then reads it sees its own change, exactly as in ERTS. The
//! trace core implements this trait for real processes; [`TestHost`]
//! models the process that calls `erlang:match_spec_test/3`, and
//! [`Recording`] wraps any host to hand back the effects a run asked for.

mod flags;
mod recording;
mod test_host;

pub use flags::{FlagList, parse_flag_list, trace_flag};
pub use recording::{Effect, Recording};
pub use test_host::TestHost;

/// What `seq_trace:get_token(Key)` answers for a process without a
/// sequential trace token: `{Flag, false}` for the flags, `[]` for `label`
/// and `serial` (as `erl_bif_trace.c` answers), `None` for anything else.
/// Hosts whose process has no token
/// answer [`Host::seq_trace_info`] with this.
pub fn seq_trace_info_without_token(key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
    let key = key?;
    match key.name() {
        "send"
        | "spawn"
        | "receive"
        | "print"
        | "timestamp"
        | "monotonic_timestamp"
        | "strict_monotonic_timestamp" => {
            Some(heap.tuple(&[Word::atom(key), Word::atom(Atom::FALSE)]))
        }
        "label" | "serial" => Some(Word::NIL),
        _ => None,
    }
}

use crate::ir::ChangeTrace;
use crate::term::{Atom, Heap, TermRef, Word};

/// The world as a running spec sees it.
///
/// Methods that build a term get the run's scratch heap; methods that look
/// at terms get them read-only. None may panic on any input: bad arguments
/// are reported as `None`/`false`, which the engine turns into `'EXIT'`.
pub trait Host {
    /// The local node's name (`node/0`).
    fn node(&self) -> Atom {
        Atom::NONODE
    }

    /// The pid of the process the event is about (`{self}`).
    fn self_pid(&mut self, heap: &mut Heap) -> Word;

    /// The trace control word (`get_tcw/0`).
    fn trace_control_word(&self) -> u32;

    /// Replaces the trace control word (`set_tcw/1`).
    fn set_trace_control_word(&mut self, value: u32);

    /// Does the process have a sequential trace token (`{is_seq_trace}`)?
    fn is_seq_trace(&mut self) -> bool;

    /// The process's sequential trace token, or `[]` (`{get_seq_token}`).
    fn seq_token(&mut self, heap: &mut Heap) -> Word;

    /// `seq_trace:set_token(Key, Value)` on the process; `false` if the key
    /// or value is invalid.
    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool;

    /// What `seq_trace:get_token(Key)` returns for the process (`{Key,
    /// Value}`, or `[]` for `label` and `serial` without a token), or
    /// `None` if `key` is not a valid component (`key` is `None` when it is
    /// not even an atom). The fake `set_seq_token` of `match_spec_test`
    /// returns this whole result: ERTS means to take its second element but
    /// tests the tuple's header against the number 2, which never holds.
    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word>;

    /// A binary describing the process (`{process_dump}`).
    fn process_dump(&mut self, heap: &mut Heap) -> Word;

    /// Shows a term (`{display, X}`; ERTS prints it on the node's stdout).
    fn display(&mut self, term: TermRef<'_>);

    /// `{enable_trace, ...}`, `{disable_trace, ...}` or `{trace, ...}`
    /// (which form is `how`) on `target` (`None`: the current process);
    /// `a` is the flag (or the flags to disable) and `b` the flags to
    /// enable. `Some(answer)` is the value of the call, `None` makes it
    /// `'EXIT'`.
    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool>;

    /// `{M, F, A}` of the caller, or `undefined` (`{caller}`).
    fn caller(&mut self, heap: &mut Heap) -> Word;

    /// `{M, F, A, {File, Line}}` of the caller, or `undefined` (`{caller_line}`).
    fn caller_line(&mut self, heap: &mut Heap) -> Word;

    /// The current stack trace, at most `depth` frames (`{current_stacktrace}`).
    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word;

    /// Turns silent mode on or off (`{silent, Bool}`).
    fn set_silent(&mut self, on: bool);
}
