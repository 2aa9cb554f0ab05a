//! Message passing as the core sees it: `send` and `'receive'` events with
//! the sessions' send and receive patterns, and the sequential trace token
//! that travels with messages.
//!
//! A message has three moments, and each has its own trace point:
//!
//! 1. [`Process::send`], in the sender: the `send` (or
//!    `send_to_non_existing_process`) event, and the token's send event;
//!    it answers the [`MessageToken`] the message carries.
//! 2. [`Process::message_arrived`], in the receiver when the message enters
//!    its queue: the `'receive'` event (ERTS traces arrival, not
//!    consumption).
//! 3. [`Process::consume`], in the receiver when a `receive` takes it: the
//!    receiver takes the message's token, and the token's receive event.

use std::sync::Arc;

use matchspec::term::{Atom, Heap, Kind, Term, TermRef, Word};
use matchspec::{Outcome, Run};

use crate::hit::frames::Callers;
use crate::hit::host::ProcessHost;
use crate::hit::process::Process;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Pid, PortId, RemotePid};
use crate::model::seq_trace::{MessageToken, SeqEvent, SeqToken};
use crate::model::session::{EventPattern, SessionRef};
use crate::model::tracer::{TraceCategory, TraceOpts, TraceTag, TraceeId};

/// Who a message came from, as a receive pattern sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A process of this node: the pattern sees `[Node, Pid, Msg]`.
    Process(Pid),
    /// A port of this node: `[Node, Port, Msg]`.
    Port(PortId),
    /// A process of another node: `[Node, undefined, Msg]`. A message that
    /// came over distribution carries only its node in ERTS (the sender's
    /// pid is not kept), so a pattern cannot tell which process sent it.
    Remote(RemotePid),
    /// Not a process (`clock_service` for a `receive ... after` timeout, a
    /// node name for a remote sender ERTS does not know):
    /// `[Atom, undefined, Msg]`.
    Other(Atom),
}

/// Is `to` on another node: a pid of another node, or `{Name, Node}` with
/// another node's name (`here` is this node's)?
fn is_remote(to: TermRef<'_>, here: Atom) -> bool {
    if RemotePid::from_term(to).is_some() {
        return true;
    }
    let node = to.as_tuple().filter(|t| t.len() == 2).and_then(|t| t.get(1));
    node.and_then(|n| n.as_atom()).is_some_and(|node| node != here)
}

/// What a send or receive pattern decided.
enum PatternDecision {
    Skip,
    Trace(Option<Term>),
}

impl Process {
    /// The process sends `message` to `to`, the destination as the sender
    /// named it (a pid, a registered name, `{Name, Node}`); `receiver` is
    /// the live process it reaches, if any. Answers the token the message
    /// carries.
    ///
    /// Every session tracing `send` on the process runs its send pattern
    /// on `[To, Msg]` and reports `{trace, Pid, send, Msg, To}`, or
    /// `send_to_non_existing_process` when `to` is a pid of this node with
    /// no live process.
    pub fn send(
        &mut self,
        to: TermRef<'_>,
        receiver: Option<Pid>,
        message: TermRef<'_>,
    ) -> MessageToken {
        if self.tracee().traces_any(TraceFlags::SEND) {
            // Only a pid of this node is known to be dead: a remote one may live.
            let dead_pid = receiver.is_none() && Pid::from_term(to).is_some();
            let tag = if dead_pid { TraceTag::SendToNonExistingProcess } else { TraceTag::Send };
            let mut heap = Heap::with_capacity(16);
            let to_word = to.copy_to(&mut heap);
            let message_word = message.copy_to(&mut heap);
            let args = heap.list(&[to_word, message_word]);
            let args = Term::from_parts(heap, args);
            self.trace_message_event(TraceTag::Send, tag, args.as_ref(), message, Some(to));
        }
        // A message to no live process of this node goes nowhere, but one to
        // another node carries the token there.
        if receiver.is_none() && !is_remote(to, self.core().node_name()) {
            return MessageToken::NONE;
        }
        let Some(token) = self.advance_token(|_| true) else { return MessageToken::NONE };
        let core = self.core().clone();
        match receiver {
            Some(receiver) => {
                core.seq_output(&token, SeqEvent::Send, Some(receiver), message, self.pid());
            }
            // The send event names the destination as the sender did.
            None => core.seq_output_to(&token, SeqEvent::Send, to, message, self.pid()),
        }
        MessageToken::new(Some(token), core.seq_epoch())
    }

    /// A send, exit signal or print with a sequential trace token (one
    /// `accept` takes): the serial moves on (unless a system tracer that
    /// does not want the process's events is set), and the token is
    /// answered.
    fn advance_token(&mut self, accept: impl FnOnce(&SeqToken) -> bool) -> Option<Arc<SeqToken>> {
        let me = self.pid();
        let mut seq = self.tracee().seq.lock();
        if !seq.token().is_some_and(accept) {
            return None;
        }
        if self.core().seq_serial_allowed(me) {
            seq.update_serial(me);
        }
        seq.token_arc().cloned()
    }

    /// The exit signal the process sends `to` as it exits with `reason`
    /// (through a link): with a token, the token moves on and the system
    /// tracer gets a send event of `{'EXIT', Pid, Reason}`; answers the
    /// token the signal carries (a trapping receiver takes it with the
    /// message).
    pub fn exit_signal(&mut self, to: Pid, reason: TermRef<'_>) -> MessageToken {
        let me = self.pid();
        let core = self.core().clone();
        let token = self.advance_token(|_| true);
        if let Some(token) = &token {
            let mut heap = Heap::with_capacity(16);
            let from = me.to_word(&mut heap);
            let reason = reason.copy_to(&mut heap);
            let exit = heap.tuple(&[Word::atom(Atom::new("EXIT")), from, reason]);
            // ERTS outputs it as the receiver (whose tracer it asks).
            core.seq_output(token, SeqEvent::Send, Some(to), heap.view(exit), to);
        }
        MessageToken::new(token, core.seq_epoch())
    }

    /// A signal to `to` that carries the process's sequential trace token
    /// but is not a message (ERTS's spawn request and spawn reply): no
    /// `send` trace, but with a token the token moves on and the system
    /// tracer gets a send event of `signal`. Answers the token the signal
    /// carries.
    pub fn seq_signal(&mut self, to: Pid, signal: TermRef<'_>) -> MessageToken {
        let me = self.pid();
        let core = self.core().clone();
        let token = self.advance_token(|_| true);
        if let Some(token) = &token {
            core.seq_output(token, SeqEvent::Send, Some(to), signal, me);
        }
        MessageToken::new(token, core.seq_epoch())
    }

    /// The parent handles the reply `signal` of a spawn (ERTS's synchronous
    /// spawn): with a token, the token's receive event; the parent keeps its
    /// own token, and its counters take ERTS's value (see
    /// [`SeqState::take_spawn_reply_serial`](crate::SeqState)).
    pub fn spawn_reply_handled(&mut self, signal: TermRef<'_>, token: &MessageToken) {
        let core = self.core().clone();
        let me = self.pid();
        if let Some(token) = token.get(core.seq_epoch()) {
            self.tracee().seq.lock().take_spawn_reply_serial(token.serial);
            core.seq_output(token, SeqEvent::Receive, Some(me), signal, me);
        }
    }

    /// `message` from `from` enters the process's queue: every session
    /// tracing `'receive'` on it runs its receive pattern on `[Node,
    /// Sender, Msg]` and reports `{trace, Pid, 'receive', Msg}`.
    pub fn message_arrived(&mut self, from: Origin, message: TermRef<'_>) {
        if !self.tracee().traces_any(TraceFlags::RECEIVE) {
            return;
        }
        let mut heap = Heap::with_capacity(16);
        let here = Word::atom(self.core().node_name());
        let (node, sender) = match from {
            Origin::Process(pid) => (here, pid.to_word(&mut heap)),
            Origin::Port(port) => (here, port.to_word(&mut heap)),
            Origin::Remote(pid) => (Word::atom(pid.node), Word::atom(Atom::UNDEFINED)),
            Origin::Other(atom) => (Word::atom(atom), Word::atom(Atom::UNDEFINED)),
        };
        let message_word = message.copy_to(&mut heap);
        let args = heap.list(&[node, sender, message_word]);
        let args = Term::from_parts(heap, args);
        self.trace_message_event(
            TraceTag::Receive,
            TraceTag::Receive,
            args.as_ref(),
            message,
            None,
        );
    }

    /// A `receive` takes `message` out of the queue: the process takes the
    /// token it carries (a message without one clears the process's), and
    /// the token's receive event goes to the system sequential tracer.
    pub fn consume(&mut self, message: TermRef<'_>, token: &MessageToken) {
        let core = self.core().clone();
        let me = self.pid();
        let token = token.get(core.seq_epoch()).cloned();
        let mut seq = self.tracee().seq.lock();
        if token.is_none() && seq.token().is_none() {
            return;
        }
        seq.adopt(token.as_ref());
        drop(seq);
        if let Some(token) = token {
            core.seq_output(&token, SeqEvent::Receive, Some(me), message, me);
        }
    }

    /// `seq_trace:set_token(Key, Value)` in the process: the old value in
    /// `heap`, or `None` for a bad key or value (`badarg`).
    pub fn seq_trace_set(
        &mut self,
        key: TermRef<'_>,
        value: TermRef<'_>,
        heap: &mut Heap,
    ) -> Option<Word> {
        let me = self.pid();
        self.tracee().seq.lock().set(me, key, value, heap)
    }

    /// `seq_trace:set_token(Token)` in the process (`[]` clears it); `None`
    /// for a bad token.
    pub fn seq_trace_set_token(&mut self, token: TermRef<'_>) -> Option<()> {
        let me = self.pid();
        self.tracee().seq.lock().set_whole(me, token)
    }

    /// `seq_trace:print(Message)` (`label: None`) or `seq_trace:print(Label,
    /// Message)`: with a token (whose label equals `label`), a print event;
    /// answers whether there was one to make.
    pub fn seq_print(&mut self, label: Option<TermRef<'_>>, message: TermRef<'_>) -> bool {
        let same_label = |t: &SeqToken| label.is_none_or(|l| l.eq_exact(&t.label.as_ref()));
        let Some(token) = self.advance_token(same_label) else { return false };
        let core = self.core().clone();
        core.seq_output(&token, SeqEvent::Print, None, message, self.pid());
        true
    }

    /// The send or receive event `tag` of every session tracing `kind`
    /// (`send` or `'receive'`) on the process, pattern `args`.
    fn trace_message_event(
        &mut self,
        kind: TraceTag,
        tag: TraceTag,
        args: TermRef<'_>,
        message: TermRef<'_>,
        to: Option<TermRef<'_>>,
    ) {
        let (flag, category) = match kind {
            TraceTag::Send => (TraceFlags::SEND, TraceCategory::Send),
            _ => (TraceFlags::RECEIVE, TraceCategory::Receive),
        };
        let id = TraceeId::Process(self.pid());
        let links = self.tracee().links();
        for link in links.iter() {
            if !link.session.is_alive() || !link.flags.contains(flag) {
                continue;
            }
            let pattern = match kind {
                TraceTag::Send => link.session.send_pattern(),
                _ => link.session.receive_pattern(),
            };
            let extra = match self.run_pattern(&pattern, args, &link.session) {
                PatternDecision::Skip => continue,
                PatternDecision::Trace(extra) => extra,
            };
            // The spec may have changed the flags; silent processes run
            // it but report nothing.
            let flags = self.tracee().flags(&link.session);
            if matches!(*pattern, EventPattern::Spec(_)) && flags.contains(TraceFlags::SILENT) {
                continue;
            }
            if !self.tracee().tracer_enabled(link, category, tag) {
                continue;
            }
            let opts = TraceOpts {
                extra: to,
                match_spec_result: extra.as_ref().map(Term::as_ref),
                ..TraceOpts::for_flags(flags, self.scheduler_id())
            };
            link.tracer.trace_kind(category, tag, id, message, &opts);
        }
    }

    /// Runs a send or receive pattern on `args`.
    fn run_pattern(
        &mut self,
        pattern: &EventPattern,
        args: TermRef<'_>,
        session: &SessionRef,
    ) -> PatternDecision {
        let spec = match pattern {
            EventPattern::Off => return PatternDecision::Skip,
            EventPattern::On => return PatternDecision::Trace(None),
            EventPattern::Spec(spec) => spec.clone(),
        };
        let (core, tracee, stack, scratch) = self.parts();
        let mut host = ProcessHost::new(core, tracee, Callers::Core(stack), session, None);
        match spec.spec.run(args, scratch, &mut host) {
            Ok(Outcome::Match(matched)) => match matched.result.kind() {
                Kind::Atom(Atom::FALSE) => PatternDecision::Skip,
                Kind::Atom(Atom::TRUE) => PatternDecision::Trace(None),
                _ => PatternDecision::Trace(Some(matched.result.to_owned())),
            },
            Ok(Outcome::NoMatch) | Err(_) => PatternDecision::Skip,
        }
    }
}
