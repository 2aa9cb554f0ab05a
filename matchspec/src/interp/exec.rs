//! The interpreter's loop: [`Frame::execute`] from op 0 (or past the
//! argument prologue, [`Frame::enter`]) until a clause succeeds or none
//! matches.

use std::slice;

use crate::host::Host;
use crate::ir::{Label, Op, Program};
use crate::outcome::{EvalError, Outcome};
use crate::term::{Heap, Space, TermRef, Word};

use super::{Frame, Scratch, Step};

/// Runs `program` on each of `inputs`, terms of `heap`, handing the
/// outcomes to `each` before the next run (the no-matches only if
/// `every`).
pub(crate) fn run_batch<F>(
    program: &Program,
    (heap, inputs): (&Heap, &[Word]),
    every: bool,
    scratch: &mut Scratch,
    host: &mut dyn Host,
    mut each: F,
) where
    F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
{
    if heap.space() != Space::Heap {
        // A heap in another space: one run per input, copying each.
        for (i, &input) in inputs.iter().enumerate() {
            match run(program, heap.view(input), scratch, host) {
                Ok(Outcome::NoMatch) if !every => {}
                outcome => each(i, outcome.as_ref()),
            }
        }
        return;
    }
    let Some(mut frame) = Frame::for_heap(program, heap, scratch, host) else { return };
    for (i, &input) in inputs.iter().enumerate() {
        if let Err(err) = frame.reset(input) {
            each(i, Err(&err));
            continue;
        }
        let mut ops = from(program, frame.enter());
        let result = loop {
            let Some(op) = ops.next() else { break None };
            match frame.execute(op) {
                Step::Next => {}
                Step::Jump(label) => ops = from(program, label),
                Step::Succeed(result) => break Some(result),
                Step::NoMatch => break None,
            }
        };
        match result {
            Some(result) => each(i, Ok(&frame.outcome(result))),
            None if every => each(i, Ok(&Outcome::NoMatch)),
            None => {}
        }
    }
}

/// Runs `program` on `input`.
pub(crate) fn run<'a>(
    program: &'a Program,
    input: TermRef<'a>,
    scratch: &'a mut Scratch,
    host: &mut dyn Host,
) -> Result<Outcome<'a>, EvalError> {
    let mut frame = Frame::new(program, input, scratch, host)?;
    let mut ops = from(program, frame.enter());
    loop {
        let Some(op) = ops.next() else { return Ok(Outcome::NoMatch) };
        match frame.execute(op) {
            Step::Next => {}
            Step::Jump(label) => ops = from(program, label),
            Step::Succeed(result) => return Ok(frame.finish(result)),
            Step::NoMatch => return Ok(Outcome::NoMatch),
        }
    }
}

// The loop walks the code with an iterator: going on to the next op is a
// pointer increment, and only a jump is bounds-checked (once, on its
// label). Every path through a program ends in `succeed` or `no_match`
// (the compiler ends the code with `no_match`), so the code never runs
// out; if it did, nothing matched.

/// The ops from `label` on.
#[inline(always)]
fn from(program: &Program, label: Label) -> slice::Iter<'_, Op> {
    // Labels are forward jumps within the code (or to its end).
    match program.code().get(label.index()..) {
        Some(ops) => ops.iter(),
        None => [].iter(),
    }
}
