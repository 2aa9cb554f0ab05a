//! The host `msc:test/3` runs trace specs on: `erlang:match_spec_test/3`'s
//! world, seen from the calling process.

use msc::matchspec::ir::ChangeTrace;
use msc::matchspec::term::{Atom, Heap, TermRef, Word};
use msc::{Host, Term, TestHost};

/// [`TestHost`] whose process is the caller: `{self}` is the caller's pid,
/// as it is in `match_spec_test`, and that pid names the process.
#[derive(Debug)]
pub struct CallerHost {
    inner: TestHost,
    caller: Term,
}

impl CallerHost {
    /// The host for a call from the process `caller` (a pid term).
    pub fn new(caller: Term) -> CallerHost {
        CallerHost { inner: TestHost::default(), caller }
    }

    fn is_caller(&self, t: TermRef<'_>) -> bool {
        t.eq_exact(&self.caller.as_ref())
    }
}

impl Host for CallerHost {
    fn self_pid(&mut self, heap: &mut Heap) -> Word {
        self.caller.as_ref().copy_to(heap)
    }

    fn trace_control_word(&self) -> u32 {
        self.inner.trace_control_word()
    }

    fn set_trace_control_word(&mut self, value: u32) {
        self.inner.set_trace_control_word(value)
    }

    fn is_seq_trace(&mut self) -> bool {
        self.inner.is_seq_trace()
    }

    fn seq_token(&mut self, heap: &mut Heap) -> Word {
        self.inner.seq_token(heap)
    }

    fn set_seq_token(&mut self, key: TermRef<'_>, value: TermRef<'_>) -> bool {
        self.inner.set_seq_token(key, value)
    }

    fn seq_trace_info(&mut self, key: Option<Atom>, heap: &mut Heap) -> Option<Word> {
        self.inner.seq_trace_info(key, heap)
    }

    fn process_dump(&mut self, heap: &mut Heap) -> Word {
        self.inner.process_dump(heap)
    }

    fn display(&mut self, term: TermRef<'_>) {
        self.inner.display(term)
    }

    fn change_trace(
        &mut self,
        how: ChangeTrace,
        target: Option<TermRef<'_>>,
        a: TermRef<'_>,
        b: Option<TermRef<'_>>,
    ) -> Option<bool> {
        // The caller is the one process the test host knows.
        let target = target.filter(|t| !self.is_caller(*t));
        self.inner.change_trace(how, target, a, b)
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
        self.inner.set_silent(on)
    }
}
