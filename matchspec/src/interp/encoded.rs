//! The interpreter's byte engine: a table program run on the bytes of a
//! plain term (see [`encoded`](crate::encoded)), the registers that
//! [`Encoded`](crate::ir::Encoded) finds holding parts of the input holding
//! positions as it runs.
//!
//! Each op whose operands are encoded runs on the bytes, by the readings
//! of `encoded::read` and `encoded::order`. Where those do not settle it
//! (and for every op that needs its operands as words: bodies that build,
//! guard functions without a reading), the encoded operands are decoded,
//! each part once per run, and [`Frame::execute`] runs the op as on any
//! decoded term. Head ops always run on the bytes: their terms are parts
//! of the input, which has no heap here.

use crate::bif::Bif;
use crate::encoded::built::Piece;
use crate::encoded::{Position, order, read};
use crate::host::Host;
use crate::ir::{Cmp, Encoded, Fail, Op, Program, Reg};
use crate::scratch::{EncodedRegisters, Held};
use crate::term::{Atom, TermRef, Word};

use super::{Frame, Scratch, Step};

/// How a run on bytes ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// No clause matched.
    NoMatch,
    /// A clause matched with this result, a word of the scratch's heap or
    /// the program's literals (or an immediate).
    Built(Word),
    /// A clause matched, and its result is the part of the input whose tag
    /// is at this byte (not decoded yet).
    Part(u32),
    /// A clause matched with this result left in the bytes (with
    /// [`Results::InBytes`]): its tuples' pieces are the scratch's.
    Pieces(Piece),
}

/// What a run on bytes makes of a result built of parts of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Results {
    /// A word, its parts decoded: for a caller that wants terms.
    Words,
    /// Pieces, its parts left in the bytes, where the program keeps them
    /// ([`Encoded::keeps_parts`]): for a caller that writes them out.
    InBytes,
}

/// What a run on bytes runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OnBytes<'p> {
    pub(crate) program: &'p Program,
    pub(crate) encoded: &'p Encoded,
    pub(crate) results: Results,
}

/// Runs a table program on the plain term `bytes` (version byte first),
/// whose top-level elements, if it is a tuple that was indexed, start at
/// `elements` (else empty). `None`: the bytes held a surprise no plain
/// term has, and the caller decodes them and runs the program on the term.
pub(crate) fn run(
    run: OnBytes<'_>,
    bytes: &[u8],
    elements: &[u32],
    scratch: &mut Scratch,
    host: &mut dyn Host,
) -> Option<Ended> {
    let program = run.program;
    let (mut frame, registers) = Frame::for_bytes(program, scratch, host);
    frame.reset(Word::NIL).ok()?;
    let n = program.registers();
    if registers.positions.len() < n {
        registers.positions.resize(n, Position::INPUT);
    }
    registers.held.clear();
    registers.held.resize(n, Held::Word);
    registers.positions[Reg::INPUT.index()] = Position::INPUT;
    registers.held[Reg::INPUT.index()] = Held::Position;
    registers.pieces.clear();
    let kept = match run.results {
        Results::Words => None,
        Results::InBytes => Some(run.encoded),
    };
    let mut engine = Engine { bytes, elements, registers, frame, kept };
    let code = program.code();
    let mut pc = 0;
    loop {
        let op = code.get(pc)?;
        match engine.execute(op, pc)? {
            Step::Next => pc += 1,
            Step::Jump(label) => pc = label.index(),
            Step::Succeed(result) => return engine.finish(result),
            Step::NoMatch => return Some(Ended::NoMatch),
        }
    }
}

/// One run on bytes.
struct Engine<'e, 'a, 'h> {
    bytes: &'e [u8],
    elements: &'e [u32],
    registers: &'e mut EncodedRegisters,
    frame: Frame<'a, 'h>,
    /// Where tuples are kept as pieces: with [`Results::InBytes`].
    kept: Option<&'e Encoded>,
}

const TRUE: Word = Word::atom(Atom::TRUE);
const FALSE: Word = Word::atom(Atom::FALSE);
const EXIT: Word = Word::atom(Atom::EXIT);

impl<'a> Engine<'_, 'a, '_> {
    /// Executes `op`, at `pc`: `None` on a surprise in the bytes.
    #[inline(always)]
    fn execute(&mut self, op: &Op, pc: usize) -> Option<Step> {
        let bytes = self.bytes;
        Some(match *op {
            // ---- Head ops: always on the bytes ----------------------------------------
            Op::IsTuple { src, arity, fail } => match read::tuple(bytes, self.position(src))? {
                Some((n, _)) if n == arity => Step::Next,
                _ => Step::Jump(fail),
            },
            Op::GetElement { src, index, dst } => {
                let at = self.element(src, index)?;
                self.put(dst, Position::Term(at))?;
                Step::Next
            }
            Op::IsElement { src, index, word, fail } => {
                let at = self.element(src, index)?;
                let same = match order::eq_exact(bytes, Position::Term(at), self.frame.term(word)) {
                    Some(same) => same,
                    None => {
                        let part = self.decode(Position::Term(at))?;
                        self.frame.exact_eq(part, word)
                    }
                };
                if same { Step::Next } else { Step::Jump(fail) }
            }
            Op::IsCons { src, fail } => match read::list_cell(bytes, self.position(src))? {
                Some(_) => Step::Next,
                None => Step::Jump(fail),
            },
            Op::GetHead { src, dst } => {
                let (head, _) = read::list_cell(bytes, self.position(src))??;
                self.put(dst, head)?;
                Step::Next
            }
            Op::GetTail { src, dst } => {
                let (_, tail) = read::list_cell(bytes, self.position(src))??;
                self.put(dst, tail)?;
                Step::Next
            }
            Op::IsMap { src, size, fail } => match read::map(bytes, self.position(src))? {
                Some((n, _)) if n >= size => Step::Next,
                _ => Step::Jump(fail),
            },
            Op::GetMapValue { src, key, dst, fail } => {
                let (size, first) = read::map(bytes, self.position(src))??;
                match self.map_value(size, first, key)? {
                    Some(at) => {
                        self.put(dst, Position::Term(at))?;
                        Step::Next
                    }
                    None => Step::Jump(fail),
                }
            }

            // ---- Tests and values: on the bytes where they settle it ---------------------
            Op::IsWord { src, word, fail } if self.holds(src) => {
                let same = match order::eq_exact(bytes, self.position(src), self.frame.term(word)) {
                    Some(same) => same,
                    None => self.word(src)? == word,
                };
                if same { Step::Next } else { Step::Jump(fail) }
            }
            Op::IsExactEq { a, b, fail } if self.holds(a) || self.holds(b) => {
                if self.exact_eq(a, b)? { Step::Next } else { Step::Jump(fail) }
            }
            Op::Move { src, dst } if self.holds(src) => {
                let held = self.held(src);
                *self.registers.positions.get_mut(dst.index())? = self.position(src);
                self.registers.held[dst.index()] = held;
                if held == Held::Decoded {
                    let word = self.frame.register(src);
                    self.frame.set_register(dst, word);
                }
                Step::Next
            }
            Op::Compare { op, a, b, fail } if self.holds(a) || self.holds(b) => {
                let holds = match op {
                    Cmp::ExactEq => self.exact_eq(a, b)?,
                    Cmp::ExactNe => !self.exact_eq(a, b)?,
                    Cmp::Lt | Cmp::Le | Cmp::Gt | Cmp::Ge | Cmp::Eq | Cmp::Ne => {
                        match self.order(a, b) {
                            Some(order) => op.of_ordering(order),
                            None => {
                                let (x, y) = (self.word(a)?, self.word(b)?);
                                self.frame.compare(op, x, y)
                            }
                        }
                    }
                };
                if holds { Step::Next } else { Step::Jump(fail) }
            }
            Op::TypeTest { test, src, expect, fail } if self.holds(src) => {
                let answer = match read::type_test(bytes, self.position(src), test) {
                    Some(answer) => answer,
                    None => {
                        let word = self.word(src)?;
                        self.frame.type_test(test, word)
                    }
                };
                if answer == expect { Step::Next } else { Step::Jump(fail) }
            }
            Op::Call { bif, args, dst, fail } if self.holds(args[0]) || self.holds(args[1]) => {
                match self.call(bif, args)? {
                    Some(Ok(word)) => {
                        self.set_word(dst, word)?;
                        Step::Next
                    }
                    Some(Err(())) => match fail {
                        Fail::Jump(label) => Step::Jump(label),
                        Fail::Exit => {
                            self.set_word(dst, EXIT)?;
                            Step::Next
                        }
                    },
                    None => self.on_words(op)?,
                }
            }
            Op::MakeTuple { elements, dst } if self.keeps_parts(pc, elements) => {
                self.keep_tuple(elements, dst)?;
                Step::Next
            }
            Op::Succeed { result } => Step::Succeed(result),
            Op::NoMatch => Step::NoMatch,

            // ---- Everything else: on words -----------------------------------------------
            Op::IsWord { .. }
            | Op::IsExactEq { .. }
            | Op::Move { .. }
            | Op::Compare { .. }
            | Op::TypeTest { .. }
            | Op::Call { .. }
            | Op::IsArity { .. }
            | Op::IsArityAtLeast { .. }
            | Op::GetArg { .. }
            | Op::GetArgList { .. }
            | Op::BoolBranch { .. }
            | Op::Logic { .. }
            | Op::Jump { .. }
            | Op::MakeTuple { .. }
            | Op::MakeCons { .. }
            | Op::MakeList { .. }
            | Op::MakeMap { .. }
            | Op::SelfPid { .. }
            | Op::SetFlag { .. }
            | Op::Display { .. }
            | Op::IsSeqTrace { .. }
            | Op::SetSeqToken { .. }
            | Op::GetSeqToken { .. }
            | Op::ProcessDump { .. }
            | Op::ChangeTrace { .. }
            | Op::Caller { .. }
            | Op::CallerLine { .. }
            | Op::CurrentStacktrace { .. }
            | Op::Silent { .. } => self.on_words(op)?,
        })
    }

    /// Runs `op` on words, decoding its encoded operands first.
    #[inline(never)]
    fn on_words(&mut self, op: &Op) -> Option<Step> {
        let program = self.frame.program();
        for reg in op.reads(program.operands()) {
            if self.holds(reg) {
                self.word(reg)?;
            }
        }
        let step = self.frame.execute(op);
        if let Some(dst) = op.writes() {
            *self.registers.held.get_mut(dst.index())? = Held::Word;
        }
        Some(step)
    }

    /// The term in `reg`, one that holds a word.
    #[inline(always)]
    fn term(&self, reg: Reg) -> TermRef<'_> {
        self.frame.term(self.frame.register(reg))
    }

    /// What `reg` holds.
    #[inline(always)]
    fn held(&self, reg: Reg) -> Held {
        self.registers.held.get(reg.index()).copied().unwrap_or(Held::Word)
    }

    /// Does `reg` hold a position?
    #[inline(always)]
    fn holds(&self, reg: Reg) -> bool {
        self.held(reg) != Held::Word
    }

    /// The position in `reg` (one that [`holds`](Self::holds) one).
    #[inline(always)]
    fn position(&self, reg: Reg) -> Position {
        self.registers.positions.get(reg.index()).copied().unwrap_or(Position::INPUT)
    }

    /// Puts `word` in `reg`: what it held before (a temporary may have
    /// held a part of the input) is gone.
    #[inline(always)]
    fn set_word(&mut self, reg: Reg, word: Word) -> Option<()> {
        *self.registers.held.get_mut(reg.index())? = Held::Word;
        self.frame.set_register(reg, word);
        Some(())
    }

    /// Puts `position` in `reg`.
    #[inline(always)]
    fn put(&mut self, reg: Reg, position: Position) -> Option<()> {
        *self.registers.positions.get_mut(reg.index())? = position;
        self.registers.held[reg.index()] = Held::Position;
        Some(())
    }

    /// The word in `reg`: for one that holds a position, its term decoded
    /// (once a run); for a kept tuple, the tuple.
    fn word(&mut self, reg: Reg) -> Option<Word> {
        let word = match self.held(reg) {
            Held::Word | Held::Decoded => return Some(self.frame.register(reg)),
            Held::Position => {
                let word = self.decode(self.position(reg))?;
                self.registers.held[reg.index()] = Held::Decoded;
                word
            }
            Held::Built { first, arity } => {
                let word = self.build(first, arity)?;
                self.registers.held[reg.index()] = Held::Word;
                word
            }
        };
        self.frame.set_register(reg, word);
        Some(word)
    }

    /// Does the tuple op at `pc`, of the registers `elements`, keep its
    /// parts in the bytes? Only in a run that keeps them, where the
    /// program allows, and if some element is a part.
    #[inline]
    fn keeps_parts(&self, pc: usize, elements: crate::ir::Operands) -> bool {
        self.kept.is_some_and(|encoded| encoded.keeps_parts(pc))
            && self.frame.program().operand_regs(elements).iter().any(|&reg| self.holds(reg))
    }

    /// Puts in `dst` the tuple of the registers `elements`, kept as pieces.
    fn keep_tuple(&mut self, elements: crate::ir::Operands, dst: Reg) -> Option<()> {
        let program = self.frame.program();
        let first = u32::try_from(self.registers.pieces.len()).ok()?;
        let regs = program.operand_regs(elements);
        for &reg in regs {
            let piece = match self.held(reg) {
                Held::Word => Piece::Word(self.frame.register(reg)),
                Held::Position | Held::Decoded => Piece::Part(self.position(reg)),
                Held::Built { first, arity } => Piece::Tuple { first, arity },
            };
            self.registers.pieces.push(piece);
        }
        let arity = u32::try_from(regs.len()).ok()?;
        *self.registers.held.get_mut(dst.index())? = Held::Built { first, arity };
        Some(())
    }

    /// The kept tuple of the pieces `first..first + arity`, as a word.
    fn build(&mut self, first: u32, arity: u32) -> Option<Word> {
        let mut words = Vec::with_capacity(arity as usize);
        for i in first..first.checked_add(arity)? {
            let piece = *self.registers.pieces.get(i as usize)?;
            words.push(match piece {
                Piece::Part(position) => self.decode(position)?,
                Piece::Word(word) => word,
                // (As deep as the program's body nests tuples.)
                Piece::Tuple { first, arity } => self.build(first, arity)?,
            });
        }
        Some(self.frame.make_tuple_of(&words))
    }

    /// Decodes the term at `position` into the run's heap.
    fn decode(&mut self, position: Position) -> Option<Word> {
        match position {
            Position::Term(at) => self.frame.decode_part(self.bytes, at),
            Position::Word(word) => Some(word),
            Position::ListRest { .. } | Position::StringRest { .. } => {
                let mut heads = Vec::new();
                let mut at = position;
                while let Some((head, tail)) = read::list_cell(self.bytes, at)? {
                    heads.push(self.decode(head)?);
                    at = tail;
                }
                let mut list = self.decode(at)?;
                for head in heads.into_iter().rev() {
                    list = self.frame.make_cons(head, list);
                }
                Some(list)
            }
        }
    }

    /// Where element `index` of the tuple in `src` starts.
    #[inline(always)]
    fn element(&self, src: Reg, index: u32) -> Option<u32> {
        let position = self.position(src);
        if position == Position::INPUT && !self.elements.is_empty() {
            return self.elements.get(index as usize).copied();
        }
        let (_, first) = read::tuple(self.bytes, position)??;
        read::element(self.bytes, first, index)
    }

    /// Where the value of the key in `key` starts in a map of `size` keys
    /// from `first`: `Some(None)` if it has no such key.
    fn map_value(&mut self, size: u32, first: u32, key: Reg) -> Option<Option<u32>> {
        let bytes = self.bytes;
        let wanted = if self.holds(key) { None } else { Some(self.frame.register(key)) };
        // The usual key, an ASCII atom, by its name read once: each key is
        // then a tag and a few bytes compared (in either encoding an ASCII
        // name has the same bytes).
        let atom = wanted.and_then(Word::as_atom).map(Atom::name);
        if let Some(name) = atom.filter(|name| name.is_ascii()).map(str::as_bytes) {
            return read::map_value(bytes, size, first, |at| match at {
                Position::Term(at) => {
                    Some(read::atom_text(bytes, at).is_some_and(|(text, _)| text == name))
                }
                Position::ListRest { .. } | Position::StringRest { .. } | Position::Word(_) => None,
            });
        }
        let key_position = self.position(key);
        let mut undecided = false;
        let found = read::map_value(bytes, size, first, |at| {
            let same = match wanted {
                Some(word) => order::eq_exact(bytes, at, self.frame.term(word)),
                None => order::eq_exact_encoded(bytes, at, key_position),
            };
            undecided |= same.is_none();
            Some(same.unwrap_or(false))
        })?;
        if found.is_some() || !undecided {
            return Some(found);
        }
        // Some key the bytes did not settle: compare the decoded keys.
        let wanted = self.word(key)?;
        let mut at = first;
        for _ in 0..size {
            let value = read::end(bytes, at)?;
            let candidate = self.decode(Position::Term(at))?;
            if self.frame.exact_eq(candidate, wanted) {
                return Some(Some(value));
            }
            at = read::end(bytes, value)?;
        }
        Some(None)
    }

    /// Is the term in `a` exactly the term in `b`?
    fn exact_eq(&mut self, a: Reg, b: Reg) -> Option<bool> {
        let settled = match (self.holds(a), self.holds(b)) {
            (true, true) => order::eq_exact_encoded(self.bytes, self.position(a), self.position(b)),
            (true, false) => order::eq_exact(self.bytes, self.position(a), self.term(b)),
            (false, true) => order::eq_exact(self.bytes, self.position(b), self.term(a)),
            (false, false) => None,
        };
        match settled {
            Some(same) => Some(same),
            None => {
                let (x, y) = (self.word(a)?, self.word(b)?);
                Some(self.frame.exact_eq(x, y))
            }
        }
    }

    /// How the term in `a` compares with the term in `b`, where the bytes
    /// settle it.
    fn order(&self, a: Reg, b: Reg) -> Option<std::cmp::Ordering> {
        match (self.holds(a), self.holds(b)) {
            (true, false) => order::compare(self.bytes, self.position(a), self.term(b)),
            (false, true) => order::compare(self.bytes, self.position(b), self.term(a))
                .map(std::cmp::Ordering::reverse),
            (true, true) | (false, false) => None,
        }
    }

    /// A guard function on encoded arguments that reads them only:
    /// `Some(Some(Ok(value)))`, `Some(Some(Err(())))` when it fails,
    /// `Some(None)` when the bytes do not settle it (run it on words).
    fn call(&mut self, bif: Bif, args: [Reg; 3]) -> Option<read::Reading> {
        let bytes = self.bytes;
        let first = self.position(args[0]);
        let small = |word: Word| word.as_small();
        Some(match bif {
            Bif::ByteSize | Bif::Size | Bif::TupleSize | Bif::MapSize | Bif::Length
                if self.holds(args[0]) =>
            {
                read::size(bytes, bif, first)
            }
            _ if bif.is_type_test() && self.holds(args[0]) => {
                read::type_test(bytes, first, bif).map(|yes| Ok(if yes { TRUE } else { FALSE }))
            }
            Bif::Hd | Bif::Tl if self.holds(args[0]) => match read::list_cell(bytes, first)? {
                Some((head, tail)) => {
                    Some(Ok(self.decode(if bif == Bif::Hd { head } else { tail })?))
                }
                None => Some(Err(())),
            },
            Bif::Element if self.holds(args[1]) => {
                let index = self.word(args[0])?;
                match read::tuple(bytes, self.position(args[1]))? {
                    Some((arity, first)) => match small(index) {
                        Some(n) if n >= 1 && n <= i64::from(arity) => {
                            let at = read::element(bytes, first, (n - 1) as u32)?;
                            Some(Ok(self.decode(Position::Term(at))?))
                        }
                        _ => Some(Err(())),
                    },
                    None => Some(Err(())),
                }
            }
            Bif::MapGet | Bif::IsMapKey if self.holds(args[1]) => {
                match read::map(bytes, self.position(args[1]))? {
                    Some((size, first)) => match (self.map_value(size, first, args[0])?, bif) {
                        (Some(at), Bif::MapGet) => Some(Ok(self.decode(Position::Term(at))?)),
                        (None, Bif::MapGet) => Some(Err(())),
                        (found, _) => Some(Ok(if found.is_some() { TRUE } else { FALSE })),
                    },
                    None => Some(Err(())),
                }
            }
            _ => None,
        })
    }

    /// The outcome of the clause that succeeded with the term in `result`.
    fn finish(mut self, result: Reg) -> Option<Ended> {
        match (self.held(result), self.position(result)) {
            (Held::Position, Position::Term(at)) => Some(Ended::Part(at)),
            (Held::Position | Held::Decoded, position) if self.kept.is_some() => {
                Some(Ended::Pieces(Piece::Part(position)))
            }
            (Held::Built { first, arity }, _) => Some(Ended::Pieces(Piece::Tuple { first, arity })),
            _ => Some(Ended::Built(self.word(result)?)),
        }
    }
}
