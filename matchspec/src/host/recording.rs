//! [`Recording`]: a host wrapper that hands back what a run asked to change.

use super::Host;
use crate::ir::ChangeTrace;
use crate::term::{Atom, Heap, Term, TermRef, Word};

/// A side effect a trace body asked for, in the order the body asked.
///
/// Engines call the host as they go (a body that sets the sequential trace
/// token and then reads it must see its own change), so effects are also
/// applied to the wrapped host; the record is for an embedder that wants
/// to see, log or replay them. Each effect owns its terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// `{enable_trace, [Target,] Flag}`; `answer` is the call's value
    /// (`None`: it gave `'EXIT'`).
    EnableTrace {
        /// The process named (`None`: the traced process itself).
        target: Option<Term>,
        /// The flag.
        flag: Term,
        /// What the host answered.
        answer: Option<bool>,
    },
    /// `{disable_trace, [Target,] Flag}`.
    DisableTrace {
        /// The process named (`None`: the traced process itself).
        target: Option<Term>,
        /// The flag.
        flag: Term,
        /// What the host answered.
        answer: Option<bool>,
    },
    /// `{trace, [Target,] Disable, Enable}`.
    Trace {
        /// The process named (`None`: the traced process itself).
        target: Option<Term>,
        /// The flags to turn off.
        disable: Term,
        /// The flags to turn on.
        enable: Term,
        /// What the host answered.
        answer: Option<bool>,
    },
    /// `{set_seq_token, Key, Value}`; `accepted` is what the host answered.
    SetSeqToken {
        /// The token component.
        key: Term,
        /// Its new value.
        value: Term,
        /// Did the host accept it?
        accepted: bool,
    },
    /// `set_tcw/1`: the new trace control word.
    SetTraceControlWord(u32),
    /// `{silent, Bool}`.
    Silent(bool),
    /// `{display, X}`.
    Display(Term),
}

/// Wraps a host and records every [`Effect`] a run asks of it.
///
/// ```
/// use matchspec::host::{Effect, Recording};
/// use matchspec::term::{Atom, Term};
/// use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, spec::Kind};
///
/// let spec = CompiledSpec::compile(
///     "[{['$1'], [], [{enable_trace, '$1', send}, {silent, true}]}]",
///     Kind::Call,
///     &Config::default(),
/// ).unwrap();
/// let args = Term::parse("[<0.80.0>]").unwrap();
/// let mut host = Recording::new(TestHost::default());
/// spec.run(args.as_ref(), &mut Scratch::new(), &mut host).unwrap();
/// assert_eq!(host.take_effects(), [
///     Effect::EnableTrace {
///         target: Some(Term::parse("<0.80.0>").unwrap()),
///         flag: Term::atom(Atom::new("send")),
///         answer: Some(true),
///     },
///     Effect::Silent(true),
/// ]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Recording<H> {
    inner: H,
    effects: Vec<Effect>,
}

impl<H: Host> Recording<H> {
    /// Wraps `inner`.
    pub fn new(inner: H) -> Recording<H> {
        Recording { inner, effects: Vec::new() }
    }

    /// The effects recorded so far.
    pub fn effects(&self) -> &[Effect] {
        &self.effects
    }

    /// Takes the effects recorded so far, leaving none.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    /// The wrapped host.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// The wrapped host, mutably.
    pub fn inner_mut(&mut self) -> &mut H {
        &mut self.inner
    }

    /// Unwraps the host.
    pub fn into_inner(self) -> H {
        self.inner
    }
}

impl<H: Host> Host for Recording<H> {
    fn node(&self) -> Atom {
        self.inner.node()
    }

    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.inner.self_pid(heap)
    }

    fn trace_control_word(&self) -> u32 {
        self.inner.trace_control_word()
    }

    fn set_trace_control_word(&mut self, value: u32) {
        self.effects.push(Effect::SetTraceControlWord(value));
        self.inner.set_trace_control_word(value);
    }

    fn is_seq_trace(&mut self) -> bool {
        self.inner.is_seq_trace()
    }

    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.inner.seq_token(heap)
    }

    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool {
        let accepted = self.inner.set_seq_token(key, value);
        self.effects.push(Effect::SetSeqToken {
            key: key.to_owned(),
            value: value.to_owned(),
            accepted,
        });
        accepted
    }

    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        self.inner.seq_trace_info(key, heap)
    }

    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        self.inner.process_dump(heap)
    }

    fn display(&mut self, term: TermRef<'_>) {
        self.effects.push(Effect::Display(term.to_owned()));
        self.inner.display(term);
    }

    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        let answer = self.inner.change_trace(how, target, a, b);
        let target = target.map(|t| t.to_owned());
        self.effects.push(match how {
            ChangeTrace::Enable => Effect::EnableTrace { target, flag: a.to_owned(), answer },
            ChangeTrace::Disable => Effect::DisableTrace { target, flag: a.to_owned(), answer },
            ChangeTrace::Trace => Effect::Trace {
                target,
                disable: a.to_owned(),
                // Engines always pass both lists for `trace`.
                enable: b.map_or_else(Term::nil, |b| b.to_owned()),
                answer,
            },
        });
        answer
    }

    fn caller(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller(heap)
    }

    fn caller_line(&mut self, heap: &mut Heap) -> Word {
        self.inner.caller_line(heap)
    }

    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word {
        self.inner.current_stacktrace(depth, heap)
    }

    fn set_silent(&mut self, on: bool) {
        self.effects.push(Effect::Silent(on));
        self.inner.set_silent(on);
    }
}
