//! [`Encoded`]: which registers hold *encoded* terms when a table program
//! runs on the external-term-format bytes of its input instead of a
//! decoded term.
//!
//! On bytes, a term is a position in them. The input is one (register
//! `r0`), and so is every part a head takes out of an encoded term (an
//! element, a list cell's head or tail, a map's value) and every copy of
//! one. Everything else (constants, what guard functions give, what
//! bodies build) is a word, as on any engine. Which registers hold which
//! is a property of the program, found here once: a byte engine runs each
//! op on bytes where its operands are encoded and decodes an operand only
//! where an op needs its value as a word (the `encoded` module, a layer
//! above, says what each op does on bytes).
//!
//! What a register holds depends on where the program is: a temporary
//! holds a part of the input in one clause's head and a guard function's
//! value in its guard. So it is followed forward through the program: a
//! register holds a position after an op that puts a part, or a copy of a
//! position, in it, and a word after any other write. Where jumps join
//! (a clause's start, the end of an `andalso`), a register written before
//! may hold either, and an engine tells them apart as it runs. Head tests
//! and reads ([`Op::input_part`]) must find their term encoded: the
//! compiler's programs always do (a head has no joins), and
//! [`Encoded::of`] refuses a program that does not (the verifier checks it
//! for every table program). The walk is linear in the program's length,
//! whatever its number of registers.
//!
//! ```
//! use matchspec::ir::{Encoded, Reg};
//! use matchspec::{CompiledSpec, Config, spec::Kind};
//!
//! let spec = "[{{'$1', '$2'}, [{'>', {byte_size, '$2'}, 3}], [{{'$1'}}]}]";
//! let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
//! let encoded = Encoded::of(compiled.program()).unwrap();
//! // The input, '$1' and '$2' (r2, r3) are positions in the bytes; the
//! // constants are words.
//! assert!(encoded.holds(Reg::INPUT) && encoded.holds(Reg(2)) && encoded.holds(Reg(3)));
//! assert!(!encoded.holds(Reg(compiled.program().first_constant() as u32)));
//! ```

use super::{Op, Program, Reg};
use crate::spec::Kind;

/// Which registers of a table program hold encoded terms when it runs on
/// bytes: the input, every part a head takes out of an encoded term and
/// every copy of one; all else holds words ([`Encoded::of`] says how).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    held: Box<[bool]>,
    /// By op: a tuple a byte engine may keep as parts ([`Encoded::keeps_parts`]).
    kept: Box<[bool]>,
}

/// Why a program cannot run on bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotEncoded {
    /// Only table programs take one term as their input.
    #[error("only table programs run on encoded terms")]
    TraceKind,
    /// A head op reads a register that does not always hold a part of the
    /// input.
    #[error("op {pc} takes apart a term that is not always a part of the input")]
    HeadReadsWord {
        /// The op.
        pc: usize,
    },
}

/// What a register holds at one point of a run on bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    /// A word: a constant, or nothing written yet, or any value but a part.
    Word,
    /// A position: a part of the input.
    Position,
    /// A word on one path here and a position on another, as far as the
    /// walk knows.
    Either,
}

impl Encoded {
    /// Which registers of `program` hold encoded terms, and where.
    pub fn of(program: &Program) -> Result<Encoded, NotEncoded> {
        if program.kind() != Kind::Table {
            return Err(NotEncoded::TraceKind);
        }
        let registers = program.registers();
        let code = program.code();
        let mut joins = vec![false; code.len()];
        for op in code {
            for label in op.labels() {
                if let Some(join) = joins.get_mut(label.index()) {
                    *join = true;
                }
            }
        }
        // What each register was last written with, and in which stretch
        // between joins: a write before the last join may not be what
        // every path to here wrote.
        let mut last: Vec<Option<(u32, Held)>> = vec![None; registers];
        let mut stretch = 0u32;
        let mut ever = vec![false; registers].into_boxed_slice();
        for (pc, op) in code.iter().enumerate() {
            stretch += u32::from(joins[pc]);
            let held = |reg: Reg| match last.get(reg.index()).copied().flatten() {
                Some((written, held)) if written == stretch => held,
                Some(_) => Held::Either,
                None if reg == Reg::INPUT => Held::Position,
                None => Held::Word,
            };
            if let Some(src) = op.input_part()
                && held(src) != Held::Position
            {
                return Err(NotEncoded::HeadReadsWord { pc });
            }
            if let Some(dst) = op.writes() {
                let now = match (*op, op.part()) {
                    (_, Some(_)) => Held::Position,
                    (Op::Move { src, .. }, None) => held(src),
                    _ => Held::Word,
                };
                if let Some(slot) = last.get_mut(dst.index()) {
                    *slot = Some((stretch, now));
                    ever[dst.index()] |= now != Held::Word;
                }
            }
        }
        if let Some(input) = ever.get_mut(Reg::INPUT.index()) {
            *input = true;
        }
        Ok(Encoded { held: ever, kept: kept_tuples(program, &joins) })
    }

    /// Does the op at `pc` build a tuple whose value is only ever an
    /// element of tuples kept the same way, or the clause's result? A byte
    /// engine may then keep it as its elements, parts of the input left in
    /// the bytes, and a caller write the result from them (a projection
    /// copied, not decoded and encoded again). Any other reader of such a
    /// tuple needs it as a word.
    #[inline]
    pub fn keeps_parts(&self, pc: usize) -> bool {
        self.kept.get(pc).copied().unwrap_or(false)
    }

    /// Does `reg` hold an encoded term (a position in the input's bytes)
    /// at some point of the program? Every other register always holds a
    /// word.
    #[inline]
    pub fn holds(&self, reg: Reg) -> bool {
        self.held.get(reg.index()).copied().unwrap_or(false)
    }
}

/// [`Encoded::keeps_parts`] for every op of `program`, whose jump targets
/// are `joins`: a tuple is kept if, on the straight line after it, its
/// register is read only by kept tuples and the clause's `Succeed` before
/// it is written again. Found from the end, so an enclosing tuple is
/// known first; a branch or a join on the way keeps nothing (another path
/// could read it there).
fn kept_tuples(program: &Program, joins: &[bool]) -> Box<[bool]> {
    let code = program.code();
    let mut kept = vec![false; code.len()];
    for pc in (0..code.len()).rev() {
        let Op::MakeTuple { dst, .. } = code[pc] else { continue };
        kept[pc] = only_kept_after(program, joins, &kept, pc, dst);
    }
    kept.into()
}

/// Is the value the op at `pc` writes to `dst` read only as a kept tuple's
/// element or as the result, on the straight line after it?
fn only_kept_after(program: &Program, joins: &[bool], kept: &[bool], pc: usize, dst: Reg) -> bool {
    for (at, op) in program.code().iter().enumerate().skip(pc + 1) {
        if joins[at] {
            return false;
        }
        if op.reads(program.operands()).any(|reg| reg == dst) {
            match op {
                Op::MakeTuple { .. } if kept[at] => {}
                Op::Succeed { .. } => return true,
                _ => return false,
            }
        }
        if matches!(op, Op::Succeed { .. } | Op::NoMatch) || op.writes() == Some(dst) {
            return true;
        }
        if op.labels().into_iter().next().is_some() {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CompiledSpec, Config};

    fn encoded(spec: &str, kind: Kind) -> Result<Encoded, NotEncoded> {
        Encoded::of(CompiledSpec::compile(spec, kind, &Config::default()).unwrap().program())
    }

    #[test]
    fn parts_of_the_input_are_encoded_and_the_rest_are_words() {
        let spec = "[{{'$1', ['$2' | '$3'], #{k => '$4'}}, [{'>', {element, 1, '$1'}, 2}], [{{'$2', '$4'}}]}]";
        let encoded = encoded(spec, Kind::Table).unwrap();
        for n in 1..=4 {
            assert!(encoded.holds(Reg(1 + n)), "'${n}'");
        }
        let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
        let program = compiled.program();
        for op in program.code() {
            if let Op::MakeTuple { dst, .. } = *op {
                // (A temporary: it held the map first.)
                assert!(encoded.holds(dst), "{op:?}");
            }
        }
    }

    /// The tuple ops of `spec`'s program, and whether each is kept.
    fn kept(spec: &str) -> Vec<bool> {
        let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
        let encoded = Encoded::of(compiled.program()).unwrap();
        let code = compiled.program().code();
        (0..code.len())
            .filter(|&pc| matches!(code[pc], Op::MakeTuple { .. }))
            .map(|pc| encoded.keeps_parts(pc))
            .collect()
    }

    #[test]
    fn tuples_that_are_only_results_are_kept_as_parts() {
        // A projection, nested: both tuples.
        assert_eq!(kept("[{{'$1', '$2'}, [], [{{'$1', {{'$2', 1}}}}]}]"), [true, true]);
        // A guard compares the tuple: it is needed as a word.
        assert_eq!(kept("[{{'$1'}, [{'==', {{'$1'}}, {{a}}}], [ok]}]"), [false]);
        // In a list, or a guard function's argument: a word.
        assert_eq!(kept("[{{'$1'}, [], [[{{'$1'}}]]}]"), [false]);
        assert_eq!(kept("[{{'$1'}, [], [{tuple_size, {{'$1'}}}]}]"), [false]);
        // After a guard function in the body (no branch).
        assert_eq!(kept("[{{'$1'}, [], [{{'$1', {byte_size, '$1'}}}]}]"), [true]);
    }

    #[test]
    fn trace_programs_do_not_run_on_bytes() {
        assert_eq!(encoded("[{['$1'], [], [true]}]", Kind::Call), Err(NotEncoded::TraceKind));
    }

    #[test]
    fn a_head_op_on_a_word_is_refused() {
        let compiled =
            CompiledSpec::compile("[{{'$1'}, [], ['$1']}]", Kind::Table, &Config::default())
                .unwrap();
        let mut program = compiled.program().clone();
        // '$1' (r2) is now written by a call, after its head: a word,
        // which a tuple test cannot take apart.
        let constant = Reg(program.first_constant() as u32);
        let last = program.code.len() - 1;
        program.code.insert(
            last - 1,
            Op::Call {
                bif: crate::bif::Bif::Hd,
                args: [constant; 3],
                dst: Reg(2),
                fail: super::super::Fail::Exit,
            },
        );
        let no_match = super::super::Label(program.code.len() as u32);
        program.code.insert(last, Op::IsTuple { src: Reg(2), arity: 1, fail: no_match });
        let pc = last;
        assert_eq!(Encoded::of(&program), Err(NotEncoded::HeadReadsWord { pc }));
    }
}
