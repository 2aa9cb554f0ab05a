//! [`Frame`]: one run of a program, and the meaning of every op.
//!
//! A frame holds what a run reads and writes: the registers, the trace
//! event's arguments, the scratch heap, the three heap spaces terms live
//! in, the host and the trace flags. [`Frame::step`] executes one op; it is
//! the single definition of what each op does. The interpreter runs a
//! program by calling it in a loop (inlined); the JIT runs the hot ops as
//! machine code and calls `step` for the others, so both engines share
//! every rule that is not a handful of machine instructions.

use crate::bif::{self, Bif, Env, Value};
use crate::host::Host;
use crate::ir::{ChangeTrace, Fail, Label, LogicOp, Op, Program, Reg, TraceFlag};
use crate::outcome::{EvalError, Flags, Matched, Outcome};
use crate::term::word::layout;
use crate::term::{Atom, Heap, HeapSet, Kind, Space, TermRef, Word};

use super::{Scratch, fast};

const TRUE: Word = Word::atom(Atom::TRUE);
const FALSE: Word = Word::atom(Atom::FALSE);
const EXIT: Word = Word::atom(Atom::EXIT);

/// What to do after an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Go on with the next op.
    Next,
    /// Go on at this label.
    Jump(Label),
    /// The clause matched; the result is in this register.
    Succeed(Reg),
    /// No clause matched.
    NoMatch,
}

/// One run of a program on one input.
///
/// Made by [`Frame::new`] from a program, an input, a scratch and a host;
/// driven by calling [`Frame::step`] with the index of each op to run
/// (starting at 0 and following the [`Step`]s); ended by
/// [`Frame::finish`]. An engine may also read and write the registers
/// itself between steps, through [`Frame::registers`], as the JIT does.
pub struct Frame<'a, 'h> {
    program: &'a Program,
    regs: &'a mut [Word],
    args: &'a mut Vec<Word>,
    heap: &'a mut Heap,
    input_words: &'a [Word],
    literals: &'a [Word],
    host: &'h mut dyn Host,
    flags: Flags,
}

impl std::fmt::Debug for Frame<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("registers", &self.regs.len()).finish_non_exhaustive()
    }
}

impl<'a, 'h> Frame<'a, 'h> {
    /// Starts a run of `program` on `input`: loads the constants into the
    /// scratch's registers (only when the program changed), the input into
    /// register 0 and, for trace programs, the arguments.
    ///
    /// Fails for a trace program whose input is not a list.
    #[inline(always)]
    pub fn new(
        program: &'a Program,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &'h mut dyn Host,
    ) -> Result<Frame<'a, 'h>, EvalError> {
        let Scratch { loaded, registers, args, heap, input_copy } = scratch;
        // The program reads the input in place; only an input that itself
        // spans several heaps (a result of another run) is copied first.
        let (input_words, input_word): (&'a [Word], Word) = if input.heaps().is_single() {
            (input.heaps().space(Space::Heap), input.word())
        } else {
            input_copy.clear();
            let word = input.to_owned().copy_to(input_copy);
            (input_copy.words(), word)
        };
        let mut frame = Frame::assemble(program, input_words, loaded, registers, args, heap, host);
        frame.reset(input_word)?;
        Ok(frame)
    }

    /// Prepares runs of `program` on inputs that are terms of `heap`, one
    /// after another: give each input to [`reset`](Self::reset), then run.
    /// `None` if `heap` is not in the caller's space ([`Space::Heap`],
    /// where heaps are made by default).
    #[inline(always)]
    pub fn for_heap(
        program: &'a Program,
        heap: &'a Heap,
        scratch: &'a mut Scratch,
        host: &'h mut dyn Host,
    ) -> Option<Frame<'a, 'h>> {
        if heap.space() != Space::Heap {
            return None;
        }
        let Scratch { loaded, registers, args, heap: scratch_heap, .. } = scratch;
        Some(Frame::assemble(program, heap.words(), loaded, registers, args, scratch_heap, host))
    }

    /// A frame over the scratch's parts, with the program's constants
    /// loaded (only when the registers hold another program's).
    #[inline(always)]
    fn assemble(
        program: &'a Program,
        input_words: &'a [Word],
        loaded: &mut u64,
        registers: &'a mut Vec<Word>,
        args: &'a mut Vec<Word>,
        heap: &'a mut Heap,
        host: &'h mut dyn Host,
    ) -> Frame<'a, 'h> {
        // Registers are always written before they are read; only the
        // constants need loading, and only when the program changes.
        if *loaded != program.id || registers.len() < program.registers() {
            registers.clear();
            registers.resize(program.registers(), Word::NIL);
            let first = program.first_constant();
            registers[first..first + program.constants.len()].copy_from_slice(&program.constants);
            *loaded = program.id;
        }
        Frame {
            program,
            regs: registers.as_mut_slice(),
            args,
            heap,
            input_words,
            literals: program.literals.words(),
            host,
            flags: Flags::default(),
        }
    }

    /// Starts the run on `input` (a word of the frame's input heap),
    /// forgetting the previous run's terms and flags.
    ///
    /// Fails for a trace program whose input is not a list.
    #[inline(always)]
    pub fn reset(&mut self, input: Word) -> Result<(), EvalError> {
        self.heap.clear();
        self.flags = Flags::default();
        self.regs[Reg::INPUT.index()] = input;
        if self.program.kind.is_trace() {
            let term = HeapSet::new(self.input_words, self.literals, &[]).term(input);
            load_args(term, self.program, self.args)?;
        }
        Ok(())
    }

    /// The register file. Engines that keep registers in machine code read
    /// and write them here between steps.
    #[inline]
    pub fn registers(&mut self) -> &mut [Word] {
        self.regs
    }

    /// The words of the input's heap: what head ops read (see `ir::op`,
    /// "Head ops read only the input").
    #[inline]
    pub fn input_words(&self) -> &'a [Word] {
        self.input_words
    }

    /// The result of the matched clause whose result is in `result`, until
    /// the next [`reset`](Self::reset).
    #[inline]
    pub fn outcome(&self, result: Reg) -> Outcome<'_> {
        let word = self.regs[result.index()];
        let result = HeapSet::new(self.input_words, self.literals, self.heap.words()).term(word);
        Outcome::Match(Matched { result, flags: self.flags })
    }

    /// The result of a matched clause whose result is in `result`.
    #[inline]
    pub fn finish(self, result: Reg) -> Outcome<'a> {
        let word = self.regs[result.index()];
        let heap: &'a Heap = self.heap;
        let result = HeapSet::new(self.input_words, self.literals, heap.words()).term(word);
        Outcome::Match(Matched { result, flags: self.flags })
    }

    /// Executes op `pc` of the program.
    ///
    /// # Panics
    ///
    /// If `pc` is not an op of the program, or a register or input cell the
    /// op names does not exist: the compiler and the term model never make
    /// such programs or terms.
    #[inline(always)]
    pub fn step(&mut self, pc: usize) -> Step {
        let program = self.program;
        let regs = &mut *self.regs;
        let args: &[Word] = self.args;
        let heap = &mut *self.heap;
        let input_words = self.input_words;
        let literals = self.literals;
        let host = &mut *self.host;
        let flags = &mut self.flags;
        macro_rules! heaps {
            () => {
                HeapSet::new(input_words, literals, heap.words())
            };
        }
        // A cell of a part of the input: head ops read nothing else (see
        // `ir::op`, "Head ops read only the input").
        macro_rules! input_cell {
            ($w:expr, $k:expr) => {{
                let bits = $w.to_bits();
                debug_assert_eq!((bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK, 0);
                input_words[(bits >> layout::OFFSET_SHIFT) as usize + $k]
            }};
        }
        // Matching on the place reads just the fields an op needs.
        match program.code[pc] {
            Op::IsArity { arity, fail } => {
                if args.len() != arity as usize {
                    return Step::Jump(fail);
                }
            }
            Op::GetArg { index, dst } => regs[dst.index()] = args[index as usize],
            Op::GetArgList { dst } => regs[dst.index()] = heap.list_from_iter(args.iter().copied()),
            Op::IsTuple { src, arity, fail } => {
                let w = regs[src.index()];
                if !(w.is_boxed()
                    && input_cell!(w, 0).to_bits() == layout::tuple_header(arity.into()))
                {
                    return Step::Jump(fail);
                }
            }
            Op::GetElement { src, index, dst } => {
                regs[dst.index()] = input_cell!(regs[src.index()], 1 + index as usize);
            }
            Op::IsElement { src, index, word, fail } => {
                if input_cell!(regs[src.index()], 1 + index as usize) != word {
                    return Step::Jump(fail);
                }
            }
            Op::IsCons { src, fail } => {
                if !regs[src.index()].is_cons() {
                    return Step::Jump(fail);
                }
            }
            Op::GetHead { src, dst } => regs[dst.index()] = input_cell!(regs[src.index()], 0),
            Op::GetTail { src, dst } => regs[dst.index()] = input_cell!(regs[src.index()], 1),
            Op::IsMap { src, size, fail } => {
                let w = regs[src.index()];
                let ok = w.is_boxed() && {
                    let header = input_cell!(w, 0).to_bits();
                    header & layout::HEADER_KIND_MASK == layout::HEADER_MAP
                        && (header >> layout::HEADER_KIND_BITS) & !layout::MAP_IN_ORDER
                            >= u64::from(size)
                };
                if !ok {
                    return Step::Jump(fail);
                }
            }
            Op::GetMapValue { src, key, dst, fail } => {
                let (m, k) = (regs[src.index()], regs[key.index()]);
                let n = ((input_cell!(m, 0).to_bits() >> layout::HEADER_KIND_BITS)
                    & !layout::MAP_IN_ORDER) as usize;
                let value = if k.is_immediate() && n <= 8 {
                    // Small maps with an immediate key: compare words.
                    (0..n).find(|&i| input_cell!(m, 1 + i) == k).map(|i| input_cell!(m, 1 + n + i))
                } else {
                    let h = heaps!();
                    h.term(m).as_map().and_then(|map| map.get(h.term(k))).map(|v| v.word())
                };
                match value {
                    Some(v) => regs[dst.index()] = v,
                    None => return Step::Jump(fail),
                }
            }
            Op::IsWord { src, word, fail } => {
                if regs[src.index()] != word {
                    return Step::Jump(fail);
                }
            }
            Op::IsExactEq { a, b, fail } => {
                let h = heaps!();
                if !h.term(regs[a.index()]).eq_exact(&h.term(regs[b.index()])) {
                    return Step::Jump(fail);
                }
            }
            Op::Move { src, dst } => regs[dst.index()] = regs[src.index()],
            Op::Call { bif, args: call_args, dst, fail } => {
                // Arithmetic on small integers and floats needs no terms.
                if bif::has_fast_path(bif)
                    && let [a, b, _] = call_args
                    && let Some(value) = fast::arith(bif, regs[a.index()], regs[b.index()], |w| {
                        fast::number_of(w, [input_words, literals, heap.words()])
                    })
                {
                    regs[dst.index()] = value.build(heap);
                    return Step::Next;
                }
                // Only a few functions look at the world; ask the host only for them.
                let env = match bif {
                    Bif::Node0 | Bif::GetTcw | Bif::SetTcw | Bif::SetTcwFake => {
                        Env { node: host.node(), tcw: host.trace_control_word() }
                    }
                    _ => Env::default(),
                };
                let result = {
                    let h = heaps!();
                    let n = bif.arity();
                    let terms: [TermRef<'_>; 3] = std::array::from_fn(|i| {
                        h.term(if i < n { regs[call_args[i].index()] } else { Word::NIL })
                    });
                    bif::call(bif, &terms[..n], &env)
                };
                match result {
                    Ok(value) => {
                        if bif == Bif::SetTcw
                            && let Some(new) = regs[call_args[0].index()].as_small()
                        {
                            // `call` checked it is a 32-bit unsigned value.
                            host.set_trace_control_word(new as u32);
                        }
                        regs[dst.index()] = build(value, heap);
                    }
                    Err(_) => match fail {
                        Fail::Jump(label) => return Step::Jump(label),
                        Fail::Exit => regs[dst.index()] = EXIT,
                    },
                }
            }
            Op::Compare { op, a, b, fail } => {
                let (x, y) = (regs[a.index()], regs[b.index()]);
                // Small integers compare without reading any heap.
                let holds = match (x.as_small(), y.as_small()) {
                    (Some(p), Some(q)) => op.of_ordering(p.cmp(&q)),
                    _ => match fast::order(op, x, y, |w| {
                        fast::number_of(w, [input_words, literals, heap.words()])
                    }) {
                        Some(order) => op.of_ordering(order),
                        None => {
                            let h = heaps!();
                            op.holds(h.term(x), h.term(y))
                        }
                    },
                };
                if !holds {
                    return Step::Jump(fail);
                }
            }
            Op::TypeTest { test, src, expect, fail } => {
                let w = regs[src.index()];
                let answer = match w.satisfies_quickly(test) {
                    Some(answer) => answer,
                    None => heaps!().term(w).satisfies(test),
                };
                if answer != expect {
                    return Step::Jump(fail);
                }
            }
            Op::BoolBranch { src, when, target, other } => {
                let w = regs[src.index()];
                let (stop, go_on) = if when { (TRUE, FALSE) } else { (FALSE, TRUE) };
                if w == stop {
                    return Step::Jump(target);
                } else if w != go_on {
                    return Step::Jump(other);
                }
            }
            Op::Logic { op, args: operands, dst, fail } => {
                let mut all_booleans = true;
                let mut any_true = false;
                let mut all_true = true;
                for r in program.operand_regs(operands) {
                    match regs[r.index()] {
                        w if w == TRUE => any_true = true,
                        w if w == FALSE => all_true = false,
                        _ => all_booleans = false,
                    }
                }
                if all_booleans {
                    let value = match op {
                        LogicOp::And => all_true,
                        LogicOp::Or => any_true,
                    };
                    regs[dst.index()] = if value { TRUE } else { FALSE };
                } else {
                    match fail {
                        Fail::Jump(label) => return Step::Jump(label),
                        Fail::Exit => regs[dst.index()] = EXIT,
                    }
                }
            }
            Op::Jump { target } => return Step::Jump(target),
            Op::MakeTuple { elements, dst } => {
                let words = program.operand_regs(elements).iter().map(|r| regs[r.index()]);
                regs[dst.index()] = heap.tuple_from_iter(words);
            }
            Op::MakeCons { head, tail, dst } => {
                regs[dst.index()] = heap.cons(regs[head.index()], regs[tail.index()]);
            }
            Op::MakeList { elements, dst } => {
                let words = program.operand_regs(elements).iter().map(|r| regs[r.index()]);
                regs[dst.index()] = heap.list_from_iter(words);
            }
            Op::MakeMap { keys, values, dst } => {
                let keys = program.operand_regs(keys).iter().map(|r| regs[r.index()]);
                let values = program.operand_regs(values).iter().map(|r| regs[r.index()]);
                let pairs = sorted_pairs(heaps!(), keys.zip(values).collect());
                regs[dst.index()] =
                    heap.map_from_sorted(pairs.iter().map(|p| p.0), pairs.iter().map(|p| p.1));
            }
            Op::SelfPid { dst } => regs[dst.index()] = host.self_pid(heap),
            Op::SetFlag { flag } => match flag {
                TraceFlag::ReturnTrace => flags.return_trace = true,
                TraceFlag::ExceptionTrace => flags.exception_trace = true,
            },
            Op::Display { src } => host.display(heaps!().term(regs[src.index()])),
            Op::IsSeqTrace { dst } => {
                regs[dst.index()] = if host.is_seq_trace() { TRUE } else { FALSE }
            }
            Op::SetSeqToken { key, value, fake, dst } => {
                let result = if fake {
                    host.seq_trace_info(regs[key.index()].as_atom(), heap)
                } else {
                    let h = heaps!();
                    host.set_seq_token(h.term(regs[key.index()]), h.term(regs[value.index()]))
                        .then_some(TRUE)
                };
                regs[dst.index()] = result.unwrap_or(EXIT);
            }
            Op::GetSeqToken { dst } => regs[dst.index()] = host.seq_token(heap),
            Op::ProcessDump { dst } => regs[dst.index()] = host.process_dump(heap),
            Op::ChangeTrace { how, target, a, b, dst } => {
                let answer = {
                    let h = heaps!();
                    let term = |r: Reg| (r != Reg::NONE).then(|| h.term(regs[r.index()]));
                    let a = h.term(regs[a.index()]);
                    host.change_trace(how, term(target), a, term(b))
                };
                regs[dst.index()] = match answer {
                    Some(true) => TRUE,
                    Some(false) => FALSE,
                    None => EXIT,
                };
                let _: ChangeTrace = how;
            }
            Op::Caller { dst } => regs[dst.index()] = host.caller(heap),
            Op::CallerLine { dst } => regs[dst.index()] = host.caller_line(heap),
            Op::CurrentStacktrace { depth, dst } => {
                regs[dst.index()] = host.current_stacktrace(depth, heap)
            }
            Op::Silent { src } => match regs[src.index()] {
                w if w == TRUE => host.set_silent(true),
                w if w == FALSE => host.set_silent(false),
                _ => {}
            },
            Op::Succeed { result } => return Step::Succeed(result),
            Op::NoMatch => return Step::NoMatch,
        }
        Step::Next
    }
}

/// Fills `args` with the elements of a trace event's argument list. As in
/// `erlang:match_spec_test/3`, an improper list counts up to its last cell.
fn load_args(input: TermRef<'_>, program: &Program, args: &mut Vec<Word>) -> Result<(), EvalError> {
    args.clear();
    if !matches!(input.kind(), Kind::Nil | Kind::Cons(_)) {
        let mut text = input.to_string();
        if text.len() > 60 {
            text.truncate(text.floor_char_boundary(57));
            text.push_str("...");
        }
        return Err(EvalError::NotAnArgumentList { kind: program.kind, input: text });
    }
    args.extend(input.list_items().map(|t| t.word()));
    Ok(())
}

/// Places a function's result in the heap.
fn build(value: Value, heap: &mut Heap) -> Word {
    match value {
        Value::Word(w) => w,
        Value::Int(i) => heap.bigint(&i),
        Value::Int128(i) => heap.int128(i),
        // Functions only return finite floats.
        Value::Float(f) => heap.try_float(f).unwrap_or(EXIT),
        Value::Binary(bytes) => heap.binary(&bytes),
    }
}

/// Key/value pairs sorted by key in exact order; of equal keys the later
/// wins (ERTS's `erts_usort_flatmap`).
pub(crate) fn sorted_pairs(heaps: HeapSet<'_>, mut pairs: Vec<(Word, Word)>) -> Vec<(Word, Word)> {
    // A stable sort keeps equal keys in source order.
    pairs.sort_by(|a, b| heaps.term(a.0).cmp_exact(&heaps.term(b.0)));
    let mut out: Vec<(Word, Word)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        match out.last_mut() {
            Some(last) if heaps.term(last.0).eq_exact(&heaps.term(k)) => *last = (k, v),
            _ => out.push((k, v)),
        }
    }
    out
}
