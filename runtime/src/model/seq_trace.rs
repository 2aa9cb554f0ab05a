//! Sequential tracing (`seq_trace`): a token that travels with messages,
//! and the system sequential tracer that gets one event per traced send,
//! receive and print.
//!
//! A process's token is `{Flags, Label, Serial, From, LastCnt}`; next to it
//! the process keeps two counters, its *clock* and its *last count*
//! (ERTS's `seq_trace_clock` and `seq_trace_lastcnt`). The serial algorithm
//! (`seq_trace_update_serial`):
//!
//! * on a send or a print, `Serial := ++clock`, `LastCnt := lastcnt` and
//!   `From := self`, then the event is output and the message carries a
//!   copy of the token;
//! * on consuming a message (not on its arrival), the process takes the
//!   message's token (or loses its own if the message has none), `lastcnt
//!   := Serial` and `clock := max(clock, Serial)`, then the event is
//!   output.
//!
//! Events go to the system tracer only if the token's flags ask for their
//! kind, as `{seq_trace, Label, {Kind, {LastCnt, Serial}, From, To, Msg}}`
//! (with a timestamp last if the token's flags ask for one).

use std::sync::Arc;

use matchspec::term::{Atom, Heap, Kind, Term, TermRef, Word};

use crate::model::flags::TimestampKind;
use crate::model::ids::AnyPid;
use crate::model::tracer::TraceOpts;

/// `seq_trace` flag bits, as ERTS keeps them in a token.
pub mod seq_flag {
    /// `send`: trace sends.
    pub const SEND: u32 = 1;
    /// `'receive'`: trace receives.
    pub const RECEIVE: u32 = 2;
    /// `print`: trace `seq_trace:print/1,2`.
    pub const PRINT: u32 = 4;
    /// `timestamp`: events carry an `erlang:now/0` timestamp.
    pub const TIMESTAMP: u32 = 8;
    /// `strict_monotonic_timestamp`.
    pub const STRICT_MONOTONIC: u32 = 16;
    /// `monotonic_timestamp`.
    pub const MONOTONIC: u32 = 32;
    /// Every flag.
    pub const ALL: u32 = 63;

    /// The bit of a flag's name, or 0.
    pub fn of(name: &str) -> u32 {
        match name {
            "send" => SEND,
            "receive" => RECEIVE,
            "print" => PRINT,
            "timestamp" => TIMESTAMP,
            "strict_monotonic_timestamp" => STRICT_MONOTONIC,
            "monotonic_timestamp" => MONOTONIC,
            _ => 0,
        }
    }
}

/// What a sequential trace event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeqEvent {
    /// A message was sent.
    Send,
    /// A message was consumed.
    Receive,
    /// `seq_trace:print/1,2`.
    Print,
}

impl SeqEvent {
    fn bit(self) -> u32 {
        match self {
            SeqEvent::Send => seq_flag::SEND,
            SeqEvent::Receive => seq_flag::RECEIVE,
            SeqEvent::Print => seq_flag::PRINT,
        }
    }

    fn atom(self) -> Atom {
        Atom::new(match self {
            SeqEvent::Send => "send",
            SeqEvent::Receive => "receive",
            SeqEvent::Print => "print",
        })
    }
}

/// A sequential trace token `{Flags, Label, Serial, From, LastCnt}`.
#[derive(Clone, Debug)]
pub struct SeqToken {
    /// The [`seq_flag`] bits.
    pub flags: u32,
    /// The label: any term.
    pub label: Term,
    /// The serial of the last event.
    pub serial: i64,
    /// The process that made the last event (of another node when the
    /// token came over distribution).
    pub from: AnyPid,
    /// The serial its maker had last received.
    pub last_cnt: i64,
}

impl SeqToken {
    /// Builds `{Flags, Label, Serial, From, LastCnt}` in `heap`.
    pub fn to_word(&self, heap: &mut Heap) -> Word {
        let label = self.label.as_ref().copy_to(heap);
        let flags = heap.int(i64::from(self.flags));
        let serial = heap.int(self.serial);
        let from = self.from.to_word(heap);
        let last_cnt = heap.int(self.last_cnt);
        heap.tuple(&[flags, label, serial, from, last_cnt])
    }

    /// The timestamp the token's flags ask for: the lowest set bit wins
    /// (`timestamp`, then `strict_monotonic`, then `monotonic`).
    pub fn timestamp(&self) -> Option<TimestampKind> {
        if self.flags & seq_flag::TIMESTAMP != 0 {
            Some(TimestampKind::Now)
        } else if self.flags & seq_flag::STRICT_MONOTONIC != 0 {
            Some(TimestampKind::StrictMonotonic)
        } else if self.flags & seq_flag::MONOTONIC != 0 {
            Some(TimestampKind::Monotonic)
        } else {
            None
        }
    }
}

/// The token a message carries.
#[derive(Clone, Debug, Default)]
pub struct MessageToken {
    token: Option<Arc<SeqToken>>,
    epoch: u64,
}

impl MessageToken {
    /// A message without a token (consuming it clears the receiver's).
    pub const NONE: MessageToken = MessageToken { token: None, epoch: 0 };

    pub(crate) fn new(token: Option<Arc<SeqToken>>, epoch: u64) -> MessageToken {
        MessageToken { token, epoch }
    }

    /// The token, unless `seq_trace:reset_trace/0` cleared it since the
    /// message was sent (`epoch` is the core's current reset count).
    pub(crate) fn get(&self, epoch: u64) -> Option<&Arc<SeqToken>> {
        self.token.as_ref().filter(|_| self.epoch == epoch)
    }

    /// Does the message carry a token?
    pub fn is_some(&self) -> bool {
        self.token.is_some()
    }
}

/// A process's sequential trace state: its token and its two counters.
#[derive(Clone, Debug, Default)]
pub struct SeqState {
    token: Option<Arc<SeqToken>>,
    clock: i64,
    last_cnt: i64,
}

impl SeqState {
    /// The token, if the process has one.
    pub fn token(&self) -> Option<&SeqToken> {
        self.token.as_deref()
    }

    pub(crate) fn token_arc(&self) -> Option<&Arc<SeqToken>> {
        self.token.as_ref()
    }

    /// The token as `get_token/0` answers: the 5-tuple or `[]`.
    pub fn token_word(&self, heap: &mut Heap) -> Word {
        match &self.token {
            Some(token) => token.to_word(heap),
            None => Word::NIL,
        }
    }

    /// The token, made first if the process has none (ERTS's
    /// `new_seq_trace_token`).
    fn ensure(&mut self, me: AnyPid) -> &mut SeqToken {
        let last_cnt = self.last_cnt;
        let token = self.token.get_or_insert_with(|| {
            Arc::new(SeqToken {
                flags: 0,
                label: Term::from_parts(Heap::new(), Word::small(0).expect("0 is small")),
                serial: 0,
                from: me,
                last_cnt,
            })
        });
        Arc::make_mut(token)
    }

    /// `seq_trace:set_token(Key, Value)` (`erlang:seq_trace/2`): the old
    /// value in `heap`, or `None` for a bad key or value (`badarg`).
    pub fn set(
        &mut self,
        me: impl Into<AnyPid>,
        key: TermRef<'_>,
        value: TermRef<'_>,
        heap: &mut Heap,
    ) -> Option<Word> {
        let key = key.as_atom()?;
        let flag = seq_flag::of(key.name());
        if flag != 0 {
            let on = match value.as_atom() {
                Some(Atom::TRUE) => true,
                Some(Atom::FALSE) => false,
                _ => return None,
            };
            let token = self.ensure(me.into());
            let old = token.flags & flag != 0;
            if on {
                token.flags |= flag;
            } else {
                token.flags &= !flag;
            }
            return Some(Word::atom(if old { Atom::TRUE } else { Atom::FALSE }));
        }
        match key.name() {
            "label" => {
                let token = self.ensure(me.into());
                let old = std::mem::replace(&mut token.label, value.to_owned());
                Some(old.as_ref().copy_to(heap))
            }
            "serial" => {
                let pair = value.as_tuple().filter(|t| t.len() == 2)?;
                let (prev, curr) = (small(pair.get(0)?)?, small(pair.get(1)?)?);
                let token = self.ensure(me.into());
                let old = [token.last_cnt, token.serial].map(|n| heap.int(n));
                token.last_cnt = prev;
                token.serial = curr;
                self.clock = curr;
                self.last_cnt = prev;
                Some(heap.tuple(&old))
            }
            "sequential_trace_token" if value.is_nil() => {
                let old = self.token_word(heap);
                self.token = None;
                Some(old)
            }
            _ => None,
        }
    }

    /// `seq_trace:set_token(Token)`: `[]` clears the token; a token tuple
    /// sets the label, the serial and each flag (as `seq_trace.erl` does,
    /// one component at a time; `From` is not set). `None` for a bad
    /// token.
    pub fn set_whole(&mut self, me: impl Into<AnyPid>, token: TermRef<'_>) -> Option<()> {
        if token.is_nil() {
            self.token = None;
            return Some(());
        }
        let t = token.as_tuple().filter(|t| t.len() == 5)?;
        let flags = small(t.get(0)?)?;
        let (serial, last_cnt) = (small(t.get(2)?)?, small(t.get(4)?)?);
        let label = t.get(1)?.to_owned();
        let token = self.ensure(me.into());
        token.label = label;
        token.last_cnt = last_cnt;
        token.serial = serial;
        token.flags = (flags as u32) & seq_flag::ALL;
        self.clock = serial;
        self.last_cnt = last_cnt;
        Some(())
    }

    /// `seq_trace:get_token(Key)`: `{Key, Value}` (`[]` for `label` and
    /// `serial` without a token), or `None` for an unknown key.
    pub fn info(&self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        let Some(token) = &self.token else {
            return matchspec::host::seq_trace_info_without_token(key, heap);
        };
        let key = key?;
        let flag = seq_flag::of(key.name());
        let value = if flag != 0 {
            Word::atom(if token.flags & flag != 0 { Atom::TRUE } else { Atom::FALSE })
        } else {
            match key.name() {
                "label" => token.label.as_ref().copy_to(heap),
                "serial" => {
                    let pair = [token.last_cnt, token.serial].map(|n| heap.int(n));
                    heap.tuple(&pair)
                }
                _ => return None,
            }
        };
        Some(heap.tuple(&[Word::atom(key), value]))
    }

    /// A send or print: `Serial := ++clock`, `LastCnt := lastcnt`, `From
    /// := me` (ERTS's `seq_trace_update_serial`, when the system tracer
    /// allows).
    pub(crate) fn update_serial(&mut self, me: impl Into<AnyPid>) {
        let (clock, last_cnt) = (self.clock.wrapping_add(1), self.last_cnt);
        if let Some(token) = &mut self.token {
            let token = Arc::make_mut(token);
            token.from = me.into();
            token.serial = clock;
            token.last_cnt = last_cnt;
            self.clock = clock;
        }
    }

    /// Drops the token, as taking a message without one does: for the
    /// state of a process the host keeps itself (one on another node).
    pub fn clear_token(&mut self) {
        self.adopt(None);
    }

    /// Consuming a message: take its token (or none).
    pub(crate) fn adopt(&mut self, token: Option<&Arc<SeqToken>>) {
        match token {
            None => self.token = None,
            Some(token) => {
                self.last_cnt = token.serial;
                self.clock = self.clock.max(token.serial);
                self.token = Some(token.clone());
            }
        }
    }

    /// The parent's counters after the reply of a spawn with a token. ERTS's
    /// synchronous spawn updates the parent "as if receive" but stores the
    /// reply serial's tagged word, `(serial << 4) | 15` (a small integer's
    /// immediate on 64 bits), as clock and last count (erl_process.c, OTP
    /// 27.3), so the parent's next serial jumps (after a reply serial of 2,
    /// its next send is `{47, 48}`). Reproduced: ERTS's answers are the
    /// reference.
    pub(crate) fn take_spawn_reply_serial(&mut self, serial: i64) {
        let tagged = serial.saturating_mul(16).saturating_add(15);
        self.clock = tagged;
        self.last_cnt = tagged;
    }

    /// `seq_trace:reset_trace/0`: no token, counters at zero.
    pub(crate) fn reset(&mut self) {
        *self = SeqState::default();
    }
}

pub(crate) fn small(t: TermRef<'_>) -> Option<i64> {
    match t.kind() {
        Kind::Small(n) => Some(n),
        _ => None,
    }
}

/// The pieces of one event for the system tracer: the label and the info
/// tuple `{Kind, {LastCnt, Serial}, From, To, Msg}` in `heap`, and the
/// options (the token's timestamp).
pub(crate) fn event(
    token: &SeqToken,
    kind: SeqEvent,
    to: Word,
    message: TermRef<'_>,
    heap: &mut Heap,
) -> Option<(Word, Word, TraceOpts<'static>)> {
    if token.flags & kind.bit() == 0 {
        return None;
    }
    let label = token.label.as_ref().copy_to(heap);
    let counts = [token.last_cnt, token.serial].map(|n| heap.int(n));
    let counts = heap.tuple(&counts);
    let from = token.from.to_word(heap);
    let message = message.copy_to(heap);
    let info = heap.tuple(&[Word::atom(kind.atom()), counts, from, to, message]);
    let opts = TraceOpts { timestamp: token.timestamp(), ..TraceOpts::default() };
    Some((label, info, opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids::Pid;

    fn set(state: &mut SeqState, key: &str, value: &str) -> String {
        let (k, v) = (Term::parse(key).expect("key"), Term::parse(value).expect("value"));
        let mut heap = Heap::new();
        match state.set(Pid::new(80, 0), k.as_ref(), v.as_ref(), &mut heap) {
            Some(old) => heap.view(old).to_string(),
            None => "badarg".into(),
        }
    }

    fn token(state: &SeqState) -> String {
        let mut heap = Heap::new();
        let w = state.token_word(&mut heap);
        heap.view(w).to_string()
    }

    #[test]
    fn components_are_set_one_by_one_and_answer_their_old_values() {
        let mut s = SeqState::default();
        assert_eq!(token(&s), "[]");
        assert_eq!(set(&mut s, "send", "true"), "false");
        assert_eq!(set(&mut s, "'receive'", "true"), "false");
        assert_eq!(set(&mut s, "print", "true"), "false");
        assert_eq!(set(&mut s, "timestamp", "true"), "false");
        assert_eq!(token(&s), "{15,0,0,<0.80.0>,0}");
        assert_eq!(set(&mut s, "label", "{any, 7}"), "0");
        assert_eq!(set(&mut s, "serial", "{3, 5}"), "{0,0}");
        assert_eq!(token(&s), "{15,{any,7},5,<0.80.0>,3}");
        assert_eq!(set(&mut s, "serial", "{a, 5}"), "badarg");
        assert_eq!(set(&mut s, "send", "perhaps"), "badarg");
        assert_eq!(set(&mut s, "bogus", "true"), "badarg");
        let whole = token(&s);
        assert_eq!(set(&mut s, "sequential_trace_token", "[]"), whole);
        assert_eq!(token(&s), "[]");
    }

    #[test]
    fn serials_follow_the_send_and_receive_algorithm() {
        let (p, q) = (Pid::new(80, 0), Pid::new(81, 0));
        let mut a = SeqState::default();
        set(&mut a, "label", "42");
        a.update_serial(p);
        assert_eq!(token(&a), "{0,42,1,<0.80.0>,0}");
        let mut b = SeqState::default();
        b.adopt(a.token_arc());
        b.update_serial(q);
        assert_eq!(token(&b), "{0,42,2,<0.81.0>,1}");
        a.adopt(b.token_arc());
        a.update_serial(p);
        // The clock moved to the received serial; LastCnt is what came in.
        assert_eq!(token(&a), "{0,42,3,<0.80.0>,2}");
        a.adopt(None);
        assert_eq!(token(&a), "[]");
    }

    #[test]
    fn the_lowest_timestamp_flag_wins() {
        let mut s = SeqState::default();
        set(&mut s, "monotonic_timestamp", "true");
        set(&mut s, "strict_monotonic_timestamp", "true");
        assert_eq!(s.token().and_then(SeqToken::timestamp), Some(TimestampKind::StrictMonotonic));
        set(&mut s, "timestamp", "true");
        assert_eq!(s.token().and_then(SeqToken::timestamp), Some(TimestampKind::Now));
    }
}
