//! [`TestHost`]: the process that calls `erlang:match_spec_test/3`.

use super::{Host, parse_flag_list, trace_flag};
use crate::ir::ChangeTrace;
use crate::term::{Atom, Heap, Kind, Pid, TermRef, Word};

/// The process that calls `erlang:match_spec_test/3`, as far as a match
/// spec can see it: no sequential trace token, no tracer, no caller (the
/// call is a BIF), an empty stack, trace flags that trace actions change,
/// and a trace control word.
///
/// `display` collects what it is given, so a caller can show it.
#[derive(Clone, Debug)]
pub struct TestHost {
    /// The process's pid: `<0.80.0>` by default; a host running specs
    /// for a real process (a NIF's caller) sets that process's.
    pub pid: Pid,
    /// The trace control word.
    pub tcw: u32,
    /// The process's trace flags.
    pub flags: u32,
    /// Silent mode.
    pub silent: bool,
    /// What `{display, X}` showed, as text.
    pub displayed: Vec<String>,
}

impl Default for TestHost {
    fn default() -> TestHost {
        let pid = Pid { node: Atom::NONODE, id: 80, serial: 0, creation: 0 };
        TestHost { pid, tcw: 0, flags: 0, silent: false, displayed: Vec::new() }
    }
}

impl TestHost {
    fn is_self(&self, target: TermRef<'_>) -> bool {
        let me = self.pid;
        matches!(target.kind(), Kind::Pid(p) if p.node == me.node && p.id == me.id && p.serial == me.serial)
    }
}

impl Host for TestHost {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        let me = self.pid;
        heap.pid(me.node, me.id, me.serial, me.creation)
    }

    fn trace_control_word(&self) -> u32 {
        self.tcw
    }

    fn set_trace_control_word(&mut self, value: u32) {
        self.tcw = value;
    }

    fn is_seq_trace(&mut self) -> bool {
        false
    }

    fn seq_token(&mut self, _heap: &mut Heap) -> Word {
        Word::NIL
    }

    fn set_seq_token(&mut self, _key: TermRef<'_>, _value: TermRef<'_>) -> bool {
        // `match_spec_test` compiles `set_seq_token` as its fake; a real
        // token needs the trace core.
        false
    }

    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        super::seq_trace_info_without_token(key, heap)
    }

    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        let text = format!("=proc:<0.{}.{}>\nState: Running\n", self.pid.id, self.pid.serial);
        heap.binary(text.as_bytes())
    }

    fn display(&mut self, term: TermRef<'_>) {
        self.displayed.push(term.to_string());
    }

    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        // The only process there is: a pid or name of another one is "no
        // such process".
        if let Some(t) = target
            && !self.is_self(t)
        {
            return None;
        }
        match how {
            ChangeTrace::Enable | ChangeTrace::Disable => {
                let bit = a.as_atom().map_or(0, |f| trace_flag::of(f.name()));
                if bit == 0 {
                    return None;
                }
                // Without a tracer the flags do not stick, but the call succeeds.
                Some(true)
            }
            ChangeTrace::Trace => {
                let disable = parse_flag_list(a)?;
                let enable = parse_flag_list(b?)?;
                if disable.cpu_timestamp || enable.cpu_timestamp {
                    return None;
                }
                match enable.tracer.or(disable.tracer) {
                    // No tracer: ERTS clears the tracee flags and reports
                    // whether that changed anything.
                    None => {
                        let before = self.flags;
                        self.flags &= !trace_flag::ALL;
                        Some(before != self.flags)
                    }
                    // A tracer must be alive; the only live process is us.
                    Some(tracer) => {
                        let pid = tracer.as_tuple().and_then(|t| t.get(1));
                        if !pid.is_some_and(|p| self.is_self(p)) {
                            return None;
                        }
                        self.flags = (self.flags & !disable.mask) | enable.mask;
                        Some(true)
                    }
                }
            }
        }
    }

    fn caller(&mut self, _heap: &mut Heap) -> Word {
        Word::atom(Atom::UNDEFINED)
    }

    fn caller_line(&mut self, _heap: &mut Heap) -> Word {
        Word::atom(Atom::UNDEFINED)
    }

    fn current_stacktrace(&mut self, _depth: u32, _heap: &mut Heap) -> Word {
        Word::NIL
    }

    fn set_silent(&mut self, on: bool) {
        self.silent = on;
    }
}
