//! The match-spec [`Host`] of a traced process: what a trace spec's
//! special forms read and change while a breakpoint is being hit.

use std::sync::Arc;

use matchspec::Host;
use matchspec::host::{parse_flag_list, trace_flag};
use matchspec::ir::ChangeTrace;
use matchspec::term::{Atom, Heap, TermRef, Word};

use crate::core::TraceCore;
use crate::hit::frames::Callers;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Mfa, Pid};
use crate::model::session::SessionRef;
use crate::model::tracee::{Tracee, TracerLink};
use crate::model::tracer::{TraceeId, TracerRef};

/// The process a trace spec runs for, at the entry of `callee`.
pub(crate) struct ProcessHost<'a> {
    core: &'a TraceCore,
    tracee: &'a Arc<Tracee>,
    callers: Callers<'a>,
    session: &'a SessionRef,
    /// The function being called (`None` for message events).
    callee: Option<Mfa>,
}

impl<'a> ProcessHost<'a> {
    pub(crate) fn new(
        core: &'a TraceCore,
        tracee: &'a Arc<Tracee>,
        callers: Callers<'a>,
        session: &'a SessionRef,
        callee: Option<Mfa>,
    ) -> ProcessHost<'a> {
        ProcessHost { core, tracee, callers, session, callee }
    }

    /// The active functions below the callee, innermost first.
    fn callers(&self) -> impl Iterator<Item = Mfa> + 'a {
        self.callers.functions()
    }

    /// The process a `{enable_trace, Target, ...}` names.
    fn target(&self, target: Option<TermRef<'_>>) -> Option<Arc<Tracee>> {
        match target {
            None => Some(self.tracee.clone()),
            Some(t) => self.core.tracee(Pid::from_term(t)?),
        }
    }

    /// The tracer flags enabled through a spec go to: the session's; in
    /// the legacy session, the current process's own tracer.
    fn default_tracer(&self) -> Option<TracerRef> {
        if let Some(tracer) = self.session.tracer() {
            return Some(tracer.clone());
        }
        self.tracee.link(self.session).map(|l| l.tracer)
    }

    /// Sets `enable` and clears `disable` on `target` in this session.
    fn change_flags(
        &self,
        target: &Tracee,
        disable: TraceFlags,
        enable: TraceFlags,
        tracer: Option<TracerRef>,
    ) -> Option<bool> {
        let session = self.session;
        let tracer = tracer.or_else(|| self.default_tracer());
        target.update(session, |link| {
            let before = link.as_ref().map_or(TraceFlags::empty(), |l| l.flags);
            let after = (before - disable) | enable;
            match link {
                Some(l) => l.flags = after,
                None if enable.is_empty() => {}
                None => {
                    let tracer = tracer?;
                    *link = Some(TracerLink { session: session.clone(), tracer, flags: after });
                }
            }
            Some(before != after)
        })
    }
}

/// A flag list's bits as [`TraceFlags`].
fn flags_of(mask: u32) -> TraceFlags {
    TraceFlags::from_bits_truncate(mask)
}

impl Host for ProcessHost<'_> {
    fn node(&self) -> Atom {
        self.core.node_name()
    }

    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.tracee.id().to_word(heap)
    }

    fn trace_control_word(&self) -> u32 {
        self.session.trace_control_word()
    }

    fn set_trace_control_word(&mut self, value: u32) {
        self.session.set_trace_control_word(value);
    }

    fn is_seq_trace(&mut self) -> bool {
        self.tracee.seq.lock().token().is_some()
    }

    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.tracee.seq.lock().token_word(heap)
    }

    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool {
        // Only processes run trace specs; the old value is not needed (the
        // spec's value is `true`).
        let TraceeId::Process(me) = self.tracee.id() else { return false };
        let mut scratch = Heap::new();
        self.tracee.seq.lock().set(me, key, value, &mut scratch).is_some()
    }

    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        self.tracee.seq.lock().info(key, heap)
    }

    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        let mut text = format!("=proc:{}\nState: Running\nStack:\n", self.tracee.id());
        for mfa in self.callee.into_iter().chain(self.callers()) {
            text.push_str(&format!("  {mfa}\n"));
        }
        heap.binary(text.as_bytes())
    }

    fn display(&mut self, term: TermRef<'_>) {
        self.core.console().display(self.tracee.id(), term);
    }

    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        let target = self.target(target)?;
        match how {
            ChangeTrace::Enable | ChangeTrace::Disable => {
                let bit = a.as_atom().map_or(0, |f| trace_flag::of(f.name()));
                if bit == 0 {
                    return None;
                }
                let (disable, enable) = if how == ChangeTrace::Enable {
                    (TraceFlags::empty(), flags_of(bit))
                } else {
                    (flags_of(bit), TraceFlags::empty())
                };
                self.change_flags(&target, disable, enable, None)?;
                Some(true)
            }
            ChangeTrace::Trace => {
                let disable = parse_flag_list(a)?;
                let enable = parse_flag_list(b?)?;
                if disable.cpu_timestamp || enable.cpu_timestamp {
                    return None;
                }
                // `{tracer, T}` only in sessions without their own tracer.
                let tracer = match enable.tracer.or(disable.tracer) {
                    Some(_) if self.session.tracer().is_some() => return None,
                    Some(spec) => Some(self.core.tracer_from_term(spec)?),
                    None => None,
                };
                self.change_flags(&target, flags_of(disable.mask), flags_of(enable.mask), tracer)
            }
        }
    }

    fn caller(&mut self, heap: &mut Heap) -> Word {
        match self.callers().next() {
            Some(mfa) => mfa.to_word(heap),
            None => Word::atom(Atom::UNDEFINED),
        }
    }

    fn caller_line(&mut self, heap: &mut Heap) -> Word {
        match self.callers().next() {
            Some(mfa) => {
                let [m, f] = [mfa.module, mfa.function].map(Word::atom);
                let a = Word::small(i64::from(mfa.arity)).expect("an arity is small");
                heap.tuple(&[m, f, a, Word::atom(Atom::UNDEFINED)])
            }
            None => Word::atom(Atom::UNDEFINED),
        }
    }

    fn current_stacktrace(&mut self, depth: u32, heap: &mut Heap) -> Word {
        let frames: Vec<Mfa> =
            self.callee.into_iter().chain(self.callers()).take(depth as usize).collect();
        let mut items = Vec::with_capacity(frames.len());
        for mfa in frames {
            let [m, f] = [mfa.module, mfa.function].map(Word::atom);
            let a = Word::small(i64::from(mfa.arity)).expect("an arity is small");
            items.push(heap.tuple(&[m, f, a, Word::NIL]));
        }
        heap.list(&items)
    }

    fn set_silent(&mut self, on: bool) {
        let (disable, enable) = if on {
            (TraceFlags::empty(), TraceFlags::SILENT)
        } else {
            (TraceFlags::SILENT, TraceFlags::empty())
        };
        // Silent mode only changes a process that is traced here.
        if self.tracee.link(self.session).is_some() {
            let _ = self.change_flags(self.tracee, disable, enable, None);
        }
    }
}
