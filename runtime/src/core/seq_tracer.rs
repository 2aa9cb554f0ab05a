//! The system sequential tracer and the reset epoch, which the registry
//! keeps: who gets `seq_trace` events, and whether a message's token still
//! holds (`seq_trace:reset_trace/0` voids the tokens of messages sent
//! before it). The tokens themselves are the model's
//! ([`crate::model::seq_trace`]).

use std::sync::Arc;

use matchspec::term::{Heap, TermRef, Word};

use crate::core::TraceCore;
use crate::model::error::TraceError;
use crate::model::ids::{AnyPid, Pid, RemotePid};
use crate::model::seq_trace::{MessageToken, SeqEvent, SeqState, SeqToken, event, seq_flag, small};
use crate::model::tracer::{Enabled, TraceTag, TraceeId, TracerRef};

impl TraceCore {
    /// `seq_trace:set_system_tracer(Tracer)` (`None`: `false`, no tracer).
    /// Answers the old tracer; refuses a tracer whose `trace_status` is not
    /// `trace`.
    pub fn set_system_seq_tracer(
        &self,
        tracer: Option<TracerRef>,
    ) -> Result<Option<TracerRef>, TraceError> {
        let tracer = tracer.map(|t| self.contain(t));
        if let Some(t) = &tracer
            && t.enabled(TraceTag::TraceStatus, TraceeId::Undefined) != Enabled::Trace
        {
            return Err(TraceError::BadTarget);
        }
        Ok(std::mem::replace(&mut *self.seq_tracer.write(), tracer))
    }

    /// The system sequential tracer; one that answers `remove` to
    /// `trace_status` is dropped first (`erts_get_system_seq_tracer`).
    pub fn system_seq_tracer(&self) -> Option<TracerRef> {
        let tracer = self.seq_tracer.read().clone()?;
        if tracer.enabled(TraceTag::TraceStatus, TraceeId::Undefined) == Enabled::Remove {
            *self.seq_tracer.write() = None;
            return None;
        }
        Some(tracer)
    }

    /// `seq_trace:reset_trace/0`: every process loses its token and its
    /// counters, and so does every message on its way.
    pub fn reset_seq_trace(&self) {
        self.seq_epoch.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        for tracee in self.tracees() {
            tracee.seq.lock().reset();
        }
    }

    /// The token a message from another node carries, from the token term
    /// it came with: `{Flags, Label, Serial, From, LastCnt}` (`From` a pid
    /// of any node), or `[]` for none. `None` if the term is not a token.
    /// The receiver takes it when it consumes the message
    /// (`Process::consume`).
    ///
    /// ```
    /// use matchspec::term::Term;
    /// use matchspec_runtime::{CoreConfig, TraceCore};
    ///
    /// let core = TraceCore::new(CoreConfig::default());
    /// let token = Term::parse("{3, 7, 1, #Pid<'b@host'.3.89.0>, 0}")?;
    /// assert!(core.message_token(token.as_ref()).is_some_and(|t| t.is_some()));
    /// assert!(core.message_token(Term::nil().as_ref()).is_some_and(|t| !t.is_some()));
    /// assert!(core.message_token(Term::parse("{3, 7, 1, self, 0}")?.as_ref()).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn message_token(&self, token: TermRef<'_>) -> Option<MessageToken> {
        if token.is_nil() {
            return Some(MessageToken::NONE);
        }
        let t = token.as_tuple().filter(|t| t.len() == 5)?;
        let flags = u32::try_from(small(t.get(0)?)?).ok()? & seq_flag::ALL;
        let (serial, last_cnt) = (small(t.get(2)?)?, small(t.get(4)?)?);
        let from = AnyPid::from_term(t.get(3)?)?;
        let label = t.get(1)?.to_owned();
        let token = SeqToken { flags, label, serial, from, last_cnt };
        Some(MessageToken::new(Some(Arc::new(token)), self.seq_epoch()))
    }

    /// The token of a message that a process of another node sends to
    /// this node, whose sequential trace state `seq` the host keeps: the
    /// serial moves on as it does where no system tracer is set, and the
    /// message carries the token (none if the process has none).
    pub fn remote_send_token(&self, seq: &mut SeqState, sender: RemotePid) -> MessageToken {
        if seq.token().is_none() {
            return MessageToken::NONE;
        }
        seq.update_serial(sender);
        MessageToken::new(seq.token_arc().cloned(), self.seq_epoch())
    }

    pub(crate) fn seq_epoch(&self) -> u64 {
        self.seq_epoch.load(std::sync::atomic::Ordering::Acquire)
    }

    /// May `process` update its token's serial? Not when a system tracer
    /// is set that does not want `seq_trace` events from it.
    pub(crate) fn seq_serial_allowed(&self, process: Pid) -> bool {
        match self.system_seq_tracer() {
            None => true,
            Some(t) => t.enabled(TraceTag::SeqTrace, TraceeId::Process(process)) == Enabled::Trace,
        }
    }

    /// Hands one sequential trace event of `process` to the system tracer,
    /// if there is one that wants it and the token's flags ask for it.
    pub(crate) fn seq_output(
        &self,
        token: &SeqToken,
        kind: SeqEvent,
        to: Option<Pid>,
        message: TermRef<'_>,
        process: Pid,
    ) {
        let to = |heap: &mut Heap| to.map_or(Word::NIL, |pid| pid.to_word(heap));
        self.seq_output_with(token, kind, to, message, process);
    }

    /// [`seq_output`](Self::seq_output) of a send to a destination as the
    /// sender named it: a pid of another node, or `{Name, Node}`.
    pub(crate) fn seq_output_to(
        &self,
        token: &SeqToken,
        kind: SeqEvent,
        to: TermRef<'_>,
        message: TermRef<'_>,
        process: Pid,
    ) {
        self.seq_output_with(token, kind, |heap| to.copy_to(heap), message, process);
    }

    fn seq_output_with(
        &self,
        token: &SeqToken,
        kind: SeqEvent,
        to: impl FnOnce(&mut Heap) -> Word,
        message: TermRef<'_>,
        process: Pid,
    ) {
        let Some(tracer) = self.system_seq_tracer() else { return };
        if tracer.enabled(TraceTag::SeqTrace, TraceeId::Process(process)) != Enabled::Trace {
            return;
        }
        let mut heap = Heap::new();
        let to = to(&mut heap);
        if let Some((label, info, opts)) = event(token, kind, to, message, &mut heap) {
            tracer.trace_seq(heap.view(label), heap.view(info), &opts);
        }
    }
}
