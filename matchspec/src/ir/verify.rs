//! [`Program::verify`]: the invariants every engine relies on, checked in
//! one place. The compiler makes programs that hold them; engines that do
//! not check at run time what these promise (the JIT's machine code) call
//! the verifier first, and the tests call it on every program they make.

use super::{Label, Op, Program, Reg};

/// An invariant a program breaks: which, and at which op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A program has no code (even one that never matches ends in
    /// `no_match`).
    #[error("the program has no code")]
    Empty,
    /// An op names a register outside the register file (or
    /// [`Reg::NONE`] where it needs one).
    #[error("op {pc} names a register outside the file")]
    Register {
        /// The op.
        pc: usize,
    },
    /// An operand list lies outside [`Program::operands`], or names a
    /// register outside the file.
    #[error("op {pc} has an operand list outside the program's")]
    Operands {
        /// The op.
        pc: usize,
    },
    /// A label is not an op of the program.
    #[error("op {pc} jumps outside the program")]
    Label {
        /// The op.
        pc: usize,
    },
    /// A label is not after its op: jumps go forward only, so a run needs
    /// no recursion and always ends.
    #[error("op {pc} jumps backward or to itself")]
    Backward {
        /// The op.
        pc: usize,
    },
    /// The last op lets control run off the end.
    #[error("the last op falls through")]
    FallsOff,
    /// A clause start is not an op.
    #[error("clause {clause} starts outside the program")]
    ClauseStart {
        /// The clause, from 0.
        clause: usize,
    },
    /// The constants do not fit the register file from their first
    /// register, or a variable's register is outside it.
    #[error("the constants or variables do not fit the register file")]
    Layout,
    /// A table program's head op takes apart a term that is not always a
    /// part of the input, so the program cannot run on encoded terms (see
    /// [`Encoded`](super::Encoded)).
    #[error("op {pc} takes apart a term that is not always a part of the input")]
    HeadReadsWord {
        /// The op.
        pc: usize,
    },
}

impl Program {
    /// Checks the invariants engines rely on:
    ///
    /// * every register an op reads or writes is in the file (an absent
    ///   operand, [`Reg::NONE`], is read by no op), and so is every register
    ///   of every operand list, which lies inside [`Program::operands`];
    /// * every label is an op after the one that names it (jumps go
    ///   forward only), and so is every clause start;
    /// * the last op ends the run or jumps ([`Op::is_terminator`]);
    /// * the constants and the match variables' registers fit the file;
    /// * a table program's head ops take apart only parts of the input, so
    ///   it runs on encoded terms too ([`Encoded`](super::Encoded)).
    ///
    /// ```
    /// use matchspec::{CompiledSpec, Config, spec::Kind};
    ///
    /// let spec = CompiledSpec::compile("[{'$1', [], ['$1']}]", Kind::Table, &Config::default())?;
    /// assert_eq!(spec.program().verify(), Ok(()));
    /// # Ok::<(), matchspec::CompileError>(())
    /// ```
    pub fn verify(&self) -> Result<(), VerifyError> {
        let registers = self.registers();
        let in_file = |r: Reg| r.index() < registers;
        let code = self.code();
        if code.is_empty() {
            return Err(VerifyError::Empty);
        }
        let constants_end = self.first_constant().checked_add(self.constants().len());
        if constants_end.is_none_or(|end| end > registers)
            || !self.variables.iter().all(|&(_, r)| in_file(r))
        {
            return Err(VerifyError::Layout);
        }
        for (clause, start) in self.clause_starts().iter().enumerate() {
            if start.index() >= code.len() {
                return Err(VerifyError::ClauseStart { clause });
            }
        }
        for (pc, op) in code.iter().enumerate() {
            if !operand_lists_fit(self, op) {
                return Err(VerifyError::Operands { pc });
            }
            if !op.reads(self.operands()).all(in_file) || !op.writes().is_none_or(in_file) {
                return Err(VerifyError::Register { pc });
            }
            for label in op.labels() {
                if label.index() >= code.len() {
                    return Err(VerifyError::Label { pc });
                }
                if label <= Label(pc as u32) {
                    return Err(VerifyError::Backward { pc });
                }
            }
        }
        if !code.last().is_some_and(Op::is_terminator) {
            return Err(VerifyError::FallsOff);
        }
        match super::Encoded::of(self) {
            Err(super::NotEncoded::HeadReadsWord { pc }) => Err(VerifyError::HeadReadsWord { pc }),
            Ok(_) | Err(super::NotEncoded::TraceKind) => Ok(()),
        }
    }
}

/// Do `op`'s operand lists lie inside the program's, naming registers of
/// the file?
fn operand_lists_fit(program: &Program, op: &Op) -> bool {
    let lists = match *op {
        Op::Logic { args, .. } => [Some(args), None],
        Op::MakeTuple { elements, .. } | Op::MakeList { elements, .. } => [Some(elements), None],
        Op::MakeMap { keys, values, .. } => [Some(keys), Some(values)],
        _ => return true,
    };
    lists.into_iter().flatten().all(|list| {
        program
            .operands()
            .get(list.range())
            .is_some_and(|regs| regs.iter().all(|r| r.index() < program.registers()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Cmp, Operands};
    use crate::spec::Kind;
    use crate::{CompiledSpec, Config};

    fn program(spec: &str, kind: Kind) -> Program {
        CompiledSpec::compile(spec, kind, &Config::default()).expect("compiles").program().clone()
    }

    #[test]
    fn compiled_programs_verify() {
        for (spec, kind) in [
            ("[{{'$1', '$2'}, [{'>', '$2', 100}], [{{'$1', #{a => '$2'}}}]}]", Kind::Table),
            (
                "[{[a, '$1'], [{is_integer, '$1'}], [{message, {caller}}, {return_trace}]}, {'_', [], []}]",
                Kind::Call,
            ),
            (
                "[{'$1', [{'orelse', {is_atom, '$1'}, {'andalso', true, {'>', '$1', 1}}}], ['$_']}]",
                Kind::Table,
            ),
        ] {
            assert_eq!(program(spec, kind).verify(), Ok(()), "{spec}");
        }
    }

    #[test]
    fn broken_programs_are_refused() {
        let good = program("[{{'$1', '$2'}, [{'>', '$2', 100}], ['$1']}]", Kind::Table);
        let broken = |change: &dyn Fn(&mut Program)| {
            let mut p = good.clone();
            change(&mut p);
            p.verify()
        };
        // A register outside the file.
        let registers = good.registers() as u32;
        assert_eq!(
            broken(&|p| p.code[1] = Op::Move { src: Reg(registers), dst: Reg(2) }),
            Err(VerifyError::Register { pc: 1 })
        );
        // A jump backward, and one outside the program.
        let compare = |fail| Op::Compare { op: Cmp::Gt, a: Reg(3), b: Reg(6), fail };
        assert_eq!(
            broken(&|p| p.code[3] = compare(Label(0))),
            Err(VerifyError::Backward { pc: 3 })
        );
        assert_eq!(broken(&|p| p.code[3] = compare(Label(99))), Err(VerifyError::Label { pc: 3 }));
        // The last op falls through.
        assert_eq!(
            broken(&|p| *p.code.last_mut().unwrap() = Op::Move { src: Reg(2), dst: Reg(3) }),
            Err(VerifyError::FallsOff)
        );
        // An operand list outside the program's.
        let tuple = Op::MakeTuple { elements: Operands { start: 0, len: 99 }, dst: Reg(2) };
        assert_eq!(broken(&|p| p.code[1] = tuple), Err(VerifyError::Operands { pc: 1 }));
        // Constants that do not fit.
        assert_eq!(broken(&|p| p.registers = 2), Err(VerifyError::Layout));
    }
}
