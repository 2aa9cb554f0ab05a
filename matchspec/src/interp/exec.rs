//! The interpreter's loop: [`Frame::step`] from op 0 until a clause
//! succeeds or none matches.

use crate::host::Host;
use crate::ir::Program;
use crate::outcome::{EvalError, Outcome};
use crate::term::TermRef;

use super::{Frame, Scratch, Step};

/// Runs `program` on `input`.
pub(crate) fn run<'a>(
    program: &'a Program,
    input: TermRef<'a>,
    scratch: &'a mut Scratch,
    host: &mut dyn Host,
) -> Result<Outcome<'a>, EvalError> {
    let mut frame = Frame::new(program, input, scratch, host)?;
    let mut pc = 0;
    loop {
        match frame.step(pc) {
            Step::Next => pc += 1,
            Step::Jump(label) => pc = label.index(),
            Step::Succeed(result) => return Ok(frame.finish(result)),
            Step::NoMatch => return Ok(Outcome::NoMatch),
        }
    }
}
