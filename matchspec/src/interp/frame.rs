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
use crate::ir::{ChangeTrace, Cmp, Fail, Label, LogicOp, Op, Operands, Program, Reg, TraceFlag};
use crate::outcome::{EvalError, Flags, Matched, Outcome};
use crate::term::word::layout;
use crate::term::{Atom, Heap, HeapSet, Space, TermRef, Word};

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
    /// Heap words set aside by [`Frame::reserve_scratch`].
    reserved: usize,
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
        let (mut frame, input_word) = Frame::over_input(program, input, scratch, host);
        frame.reset(input_word)?;
        Ok(frame)
    }

    /// [`new`](Self::new) for an engine that reads a trace event's
    /// arguments from the input list itself: a trace program's input is
    /// only checked to be a list, its arguments are not loaded (ops that
    /// read them, run by [`step`](Self::step), find none).
    ///
    /// Fails for a trace program whose input is not a list.
    #[inline(always)]
    pub fn new_without_args(
        program: &'a Program,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &'h mut dyn Host,
    ) -> Result<Frame<'a, 'h>, EvalError> {
        let (mut frame, input_word) = Frame::over_input(program, input, scratch, host);
        if input_word.is_cons() || input_word.is_nil() {
            frame.clean();
            frame.regs[Reg::INPUT.index()] = input_word;
            frame.args.clear();
        } else {
            frame.reset(input_word)?;
        }
        Ok(frame)
    }

    /// A frame over `input` (not reset to it yet), and the input's word.
    #[inline(always)]
    fn over_input(
        program: &'a Program,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &'h mut dyn Host,
    ) -> (Frame<'a, 'h>, Word) {
        let Scratch { loaded, registers, args, heap, input_copy, .. } = scratch;
        // The program reads the input in place; only an input that itself
        // spans several heaps (a result of another run) is copied first.
        let (input_words, input_word): (&'a [Word], Word) = if input.heaps().is_single() {
            (input.heaps().space(Space::Heap), input.word())
        } else {
            input_copy.clear();
            let word = input.to_owned().copy_to(input_copy);
            (input_copy.words(), word)
        };
        let frame = Frame::assemble(program, input_words, loaded, registers, args, heap, host);
        (frame, input_word)
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

    /// A frame for runs of a table `program` on encoded terms: no input
    /// heap (the byte engine holds the input as a position, and decodes
    /// into the run's heap what it needs as words), and the scratch's
    /// registers of positions.
    #[inline(always)]
    pub(crate) fn for_bytes(
        program: &'a Program,
        scratch: &'a mut Scratch,
        host: &'h mut dyn Host,
    ) -> (Frame<'a, 'h>, &'a mut crate::scratch::EncodedRegisters) {
        let Scratch { loaded, registers, args, heap, encoded, .. } = scratch;
        let frame = Frame::assemble(program, &[], loaded, registers, args, heap, host);
        (frame, encoded)
    }

    /// The program it runs.
    #[inline(always)]
    pub(crate) fn program(&self) -> &'a Program {
        self.program
    }

    /// Decodes the part of `bytes` at `at` into the run's heap.
    #[inline]
    pub(crate) fn decode_part(&mut self, bytes: &[u8], at: u32) -> Option<Word> {
        crate::etf::decode_subterm(bytes, at as usize, self.heap).ok()
    }

    /// Sets register `r`: for an engine that computes an op's value itself.
    #[inline(always)]
    pub(crate) fn set_register(&mut self, r: Reg, w: Word) {
        self.regs[r.index()] = w;
    }

    /// Register `r`.
    #[inline(always)]
    pub(crate) fn register(&self, r: Reg) -> Word {
        self.regs[r.index()]
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
            reserved: 0,
        }
    }

    /// Starts the run on `input` (a word of the frame's input heap),
    /// forgetting the previous run's terms and flags (but keeping the heap
    /// words set aside by [`reserve_scratch`](Self::reserve_scratch)).
    ///
    /// Fails for a trace program whose input is not a list.
    #[inline(always)]
    pub fn reset(&mut self, input: Word) -> Result<(), EvalError> {
        self.clean();
        self.regs[Reg::INPUT.index()] = input;
        if self.program.kind.is_trace() {
            load_args(input, [self.input_words, self.literals], self.program, self.args)?;
        }
        Ok(())
    }

    /// Where the run starts: at op 0, or past a trace program's argument
    /// prologue, having done what its `is_arity` and `get_arg`s do (or
    /// at the label `is_arity` jumps to).
    #[inline(always)]
    pub(crate) fn enter(&mut self) -> Label {
        let program = self.program;
        let Some(prologue) = &program.prologue else { return Label(0) };
        if self.args.len() != prologue.arity as usize {
            return prologue.fail;
        }
        for &(index, dst) in &prologue.gets {
            self.set(dst, self.args[index as usize]);
        }
        prologue.next
    }

    /// Forgets the run's terms (but the words set aside by
    /// [`reserve_scratch`](Self::reserve_scratch)) and flags: what a reset
    /// does besides taking the next input. An engine that loads inputs
    /// itself calls this between runs.
    #[inline(always)]
    pub fn clean(&mut self) {
        self.heap.keep_first(self.reserved);
        self.flags = Flags::default();
    }

    /// The register file. Engines that keep registers in machine code read
    /// and write them here between steps.
    #[inline]
    pub fn registers(&mut self) -> &mut [Word] {
        self.regs
    }

    /// Sets aside the first `n` words of the run's heap for an engine that
    /// builds terms there itself, as the JIT's machine code does at fixed
    /// offsets, and returns their address. Call it right after a reset,
    /// before running (anything built since is dropped). The words stay
    /// set aside through later resets, holding whatever was last written
    /// there (at first the small integer 0), so setting them aside again
    /// for the next input costs nothing.
    #[inline]
    pub fn reserve_scratch(&mut self, n: usize) -> *mut Word {
        self.reserved = n;
        self.heap.keep_first(n);
        self.heap.address()
    }

    /// The address of the run's heap words. It moves when the heap grows,
    /// so an engine that writes there must ask again after anything that
    /// may build a term.
    #[inline]
    pub fn scratch_address(&mut self) -> *mut Word {
        self.heap.address()
    }

    /// How many words the run's heap holds (see
    /// [`scratch_address`](Self::scratch_address)).
    #[inline]
    pub fn scratch_len(&self) -> usize {
        self.heap.words().len()
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
        self.execute(&program.code[pc])
    }

    /// Executes `op`, an op of the program: what [`step`](Self::step)
    /// does, for a loop that walks the code itself.
    ///
    /// # Panics
    ///
    /// As [`step`](Self::step), if a register or input cell `op` names
    /// does not exist.
    #[inline(always)]
    pub(crate) fn execute(&mut self, op: &Op) -> Step {
        // Matching on the place reads just the fields an op needs.
        match *op {
            Op::IsArity { arity, fail } => {
                if self.args.len() != arity as usize {
                    return Step::Jump(fail);
                }
            }
            Op::IsArityAtLeast { arity, fail } => {
                if self.args.len() < arity as usize {
                    return Step::Jump(fail);
                }
            }
            Op::GetArg { index, dst } => self.set(dst, self.args[index as usize]),
            Op::GetArgList { dst } => {
                let list = self.heap.list_from_iter(self.args.iter().copied());
                self.set(dst, list);
            }
            Op::IsTuple { src, arity, fail } => {
                let w = self.get(src);
                if !(w.is_boxed()
                    && self.input_cell(w, 0).to_bits() == layout::tuple_header(arity.into()))
                {
                    return Step::Jump(fail);
                }
            }
            Op::GetElement { src, index, dst } => {
                self.set(dst, self.input_cell(self.get(src), 1 + index as usize));
            }
            Op::IsElement { src, index, word, fail } => {
                if self.input_cell(self.get(src), 1 + index as usize) != word {
                    return Step::Jump(fail);
                }
            }
            Op::IsCons { src, fail } => {
                if !self.get(src).is_cons() {
                    return Step::Jump(fail);
                }
            }
            Op::GetHead { src, dst } => self.set(dst, self.input_cell(self.get(src), 0)),
            Op::GetTail { src, dst } => self.set(dst, self.input_cell(self.get(src), 1)),
            Op::IsMap { src, size, fail } => {
                let w = self.get(src);
                let ok = w.is_boxed() && {
                    let header = self.input_cell(w, 0).to_bits();
                    header & layout::HEADER_KIND_MASK == layout::HEADER_MAP
                        && (header >> layout::HEADER_KIND_BITS) & !layout::MAP_IN_ORDER
                            >= u64::from(size)
                };
                if !ok {
                    return Step::Jump(fail);
                }
            }
            Op::GetMapValue { src, key, dst, fail } => {
                match self.map_value(self.get(src), self.get(key)) {
                    Some(v) => self.set(dst, v),
                    None => return Step::Jump(fail),
                }
            }
            Op::IsWord { src, word, fail } => {
                if self.get(src) != word {
                    return Step::Jump(fail);
                }
            }
            Op::IsExactEq { a, b, fail } => {
                if !self.exact_eq(self.get(a), self.get(b)) {
                    return Step::Jump(fail);
                }
            }
            Op::Move { src, dst } => self.set(dst, self.get(src)),
            Op::Call { bif, args, dst, fail } => {
                let words = args.map(|r| if r == Reg::NONE { Word::NIL } else { self.get(r) });
                match self.call(bif, words) {
                    Some(value) => self.set(dst, value),
                    None => match fail {
                        Fail::Jump(label) => return Step::Jump(label),
                        Fail::Exit => self.set(dst, EXIT),
                    },
                }
            }
            Op::Compare { op, a, b, fail } => {
                if !self.compare(op, self.get(a), self.get(b)) {
                    return Step::Jump(fail);
                }
            }
            Op::TypeTest { test, src, expect, fail } => {
                if self.type_test(test, self.get(src)) != expect {
                    return Step::Jump(fail);
                }
            }
            Op::BoolBranch { src, when, target, other } => {
                let w = self.get(src);
                let (stop, go_on) = if when { (TRUE, FALSE) } else { (FALSE, TRUE) };
                if w == stop {
                    return Step::Jump(target);
                } else if w != go_on {
                    return Step::Jump(other);
                }
            }
            Op::Logic { op, args, dst, fail } => match self.logic(op, args) {
                Some(value) => self.set(dst, value),
                None => match fail {
                    Fail::Jump(label) => return Step::Jump(label),
                    Fail::Exit => self.set(dst, EXIT),
                },
            },
            Op::Jump { target } => return Step::Jump(target),
            Op::MakeTuple { elements, dst } => {
                let tuple = self.make_tuple(elements);
                self.set(dst, tuple);
            }
            Op::MakeCons { head, tail, dst } => {
                let cons = self.heap.cons(self.get(head), self.get(tail));
                self.set(dst, cons);
            }
            Op::MakeList { elements, dst } => {
                let list = self.make_list(elements);
                self.set(dst, list);
            }
            Op::MakeMap { keys, values, dst } => {
                let map = self.make_map(keys, values);
                self.set(dst, map);
            }
            Op::SelfPid { dst } => {
                let pid = self.host.self_pid(self.heap);
                self.set(dst, pid);
            }
            Op::SetFlag { flag } => match flag {
                TraceFlag::ReturnTrace => self.flags.return_trace = true,
                TraceFlag::ExceptionTrace => self.flags.exception_trace = true,
            },
            Op::Display { src } => {
                let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
                self.host.display(h.term(self.regs[src.index()]));
            }
            Op::IsSeqTrace { dst } => {
                let answer = if self.host.is_seq_trace() { TRUE } else { FALSE };
                self.set(dst, answer);
            }
            Op::SetSeqToken { key, value, fake, dst } => {
                let result = if fake {
                    self.host.seq_trace_info(self.get(key).as_atom(), self.heap)
                } else {
                    let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
                    let (key, value) =
                        (h.term(self.regs[key.index()]), h.term(self.regs[value.index()]));
                    self.host.set_seq_token(key, value).then_some(TRUE)
                };
                self.set(dst, result.unwrap_or(EXIT));
            }
            Op::GetSeqToken { dst } => {
                let token = self.host.seq_token(self.heap);
                self.set(dst, token);
            }
            Op::ProcessDump { dst } => {
                let dump = self.host.process_dump(self.heap);
                self.set(dst, dump);
            }
            Op::ChangeTrace { how, target, a, b, dst } => {
                let answer = {
                    let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
                    let regs = &*self.regs;
                    let term = |r: Reg| (r != Reg::NONE).then(|| h.term(regs[r.index()]));
                    let a = h.term(regs[a.index()]);
                    self.host.change_trace(how, term(target), a, term(b))
                };
                let value = match answer {
                    Some(true) => TRUE,
                    Some(false) => FALSE,
                    None => EXIT,
                };
                self.set(dst, value);
                let _: ChangeTrace = how;
            }
            Op::Caller { dst } => {
                let caller = self.host.caller(self.heap);
                self.set(dst, caller);
            }
            Op::CallerLine { dst } => {
                let caller = self.host.caller_line(self.heap);
                self.set(dst, caller);
            }
            Op::CurrentStacktrace { depth, dst } => {
                let stack = self.host.current_stacktrace(depth, self.heap);
                self.set(dst, stack);
            }
            Op::Silent { src } => match self.get(src) {
                w if w == TRUE => self.host.set_silent(true),
                w if w == FALSE => self.host.set_silent(false),
                _ => {}
            },
            Op::Succeed { result } => return Step::Succeed(result),
            Op::NoMatch => return Step::NoMatch,
        }
        Step::Next
    }

    // ---- What ops compute: one definition for every engine ----------------------------

    /// Register `r`.
    #[inline(always)]
    fn get(&self, r: Reg) -> Word {
        self.regs[r.index()]
    }

    /// Sets register `r`.
    #[inline(always)]
    fn set(&mut self, r: Reg, w: Word) {
        self.regs[r.index()] = w;
    }

    /// Word `k` of the cells `w` points at, for a `w` that is a part of the
    /// input: head ops read nothing else (see `ir::op`, "Head ops read only
    /// the input").
    #[inline(always)]
    fn input_cell(&self, w: Word, k: usize) -> Word {
        let bits = w.to_bits();
        debug_assert_eq!((bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK, 0);
        self.input_words[(bits >> layout::OFFSET_SHIFT) as usize + k]
    }

    /// `w` as a term, wherever it points.
    #[inline(always)]
    pub fn term(&self, w: Word) -> TermRef<'_> {
        HeapSet::new(self.input_words, self.literals, self.heap.words()).term(w)
    }

    /// What guard function `bif` gives on `args` (only the first
    /// `bif.arity()` are read), or `None` if it fails (`get_tcw`/`set_tcw`
    /// read and change the host's trace control word).
    #[inline(always)]
    pub fn call(&mut self, bif: Bif, args: [Word; 3]) -> Option<Word> {
        // Arithmetic on small integers and floats needs no terms.
        if bif::has_fast_path(bif)
            && let Some(value) = fast::arith(
                bif,
                args[0],
                args[1],
                [self.input_words, self.literals, self.heap.words()],
            )
        {
            return Some(value.build(self.heap));
        }
        self.call_slow(bif, args)
    }

    /// [`call`](Self::call) off its fast path.
    #[inline(never)]
    fn call_slow(&mut self, bif: Bif, args: [Word; 3]) -> Option<Word> {
        // Only a few functions look at the world; ask the host only for them.
        let env = if bif.asks_host() {
            Env {
                node: self.host.node(),
                tcw: self.host.trace_control_word(),
                release: self.program.release(),
            }
        } else {
            Env { release: self.program.release(), ..Env::default() }
        };
        let result = {
            let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
            let terms = args.map(|w| h.term(w));
            bif::call(bif, &terms[..bif.arity().min(3)], &env)
        };
        let value = result.ok()?;
        if bif == Bif::SetTcw
            && let Some(new) = args[0].as_small()
        {
            // `call` checked it is a 32-bit unsigned value.
            self.host.set_trace_control_word(new as u32);
        }
        Some(build(value, self.heap))
    }

    /// Does `x op y` hold?
    #[inline(always)]
    pub fn compare(&self, op: Cmp, x: Word, y: Word) -> bool {
        // Small integers compare without reading any heap.
        match (x.as_small(), y.as_small()) {
            (Some(p), Some(q)) => op.of_ordering(p.cmp(&q)),
            _ => {
                match fast::order(op, x, y, [self.input_words, self.literals, self.heap.words()]) {
                    Some(order) => op.of_ordering(order),
                    None => op.holds(self.term(x), self.term(y)),
                }
            }
        }
    }

    /// Does type test `test` hold for `w`?
    #[inline(always)]
    pub fn type_test(&self, test: Bif, w: Word) -> bool {
        match w.satisfies_quickly(test) {
            Some(answer) => answer,
            None => self.term(w).satisfies(test),
        }
    }

    /// Is `a =:= b`?
    #[inline(always)]
    pub fn exact_eq(&self, a: Word, b: Word) -> bool {
        a == b || self.term(a).eq_exact(&self.term(b))
    }

    /// The value of `key` (exactly) in `map`, a map that is part of the
    /// input (as in a head), or `None`.
    #[inline(always)]
    pub fn map_value(&self, map: Word, key: Word) -> Option<Word> {
        let n = ((self.input_cell(map, 0).to_bits() >> layout::HEADER_KIND_BITS)
            & !layout::MAP_IN_ORDER) as usize;
        if key.is_immediate() && n <= 8 {
            // Small maps with an immediate key: compare words.
            (0..n)
                .find(|&i| self.input_cell(map, 1 + i) == key)
                .map(|i| self.input_cell(map, 1 + n + i))
        } else {
            let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
            h.term(map).as_map().and_then(|m| m.get(h.term(key))).map(|v| v.word())
        }
    }

    /// `and`/`or` of the registers `args`, or `None` if one is not a
    /// boolean.
    #[inline(always)]
    pub fn logic(&self, op: LogicOp, args: Operands) -> Option<Word> {
        let mut any_true = false;
        let mut all_true = true;
        for r in self.program.operand_regs(args) {
            match self.regs[r.index()] {
                w if w == TRUE => any_true = true,
                w if w == FALSE => all_true = false,
                _ => return None,
            }
        }
        let value = match op {
            LogicOp::And => all_true,
            LogicOp::Or => any_true,
        };
        Some(if value { TRUE } else { FALSE })
    }

    /// A new tuple of the registers `elements`.
    #[inline(always)]
    pub fn make_tuple(&mut self, elements: Operands) -> Word {
        let regs = &*self.regs;
        let words = self.program.operand_regs(elements).iter().map(|r| regs[r.index()]);
        self.heap.tuple_from_iter(words)
    }

    /// A new tuple of `words`: for an engine that computes the elements
    /// itself.
    #[inline]
    pub(crate) fn make_tuple_of(&mut self, words: &[Word]) -> Word {
        self.heap.tuple(words)
    }

    /// A new list of the registers `elements`.
    #[inline(always)]
    pub fn make_list(&mut self, elements: Operands) -> Word {
        let regs = &*self.regs;
        let words = self.program.operand_regs(elements).iter().map(|r| regs[r.index()]);
        self.heap.list_from_iter(words)
    }

    /// A new list cell.
    #[inline(always)]
    pub fn make_cons(&mut self, head: Word, tail: Word) -> Word {
        self.heap.cons(head, tail)
    }

    /// A new map of the registers `keys` and `values`; of equal keys the
    /// later wins.
    pub fn make_map(&mut self, keys: Operands, values: Operands) -> Word {
        let regs = &*self.regs;
        let keys = self.program.operand_regs(keys).iter().map(|r| regs[r.index()]);
        let values = self.program.operand_regs(values).iter().map(|r| regs[r.index()]);
        let h = HeapSet::new(self.input_words, self.literals, self.heap.words());
        let pairs = sorted_pairs(h, keys.zip(values).collect());
        self.heap.map_from_sorted(pairs.iter().map(|p| p.0), pairs.iter().map(|p| p.1))
    }
}

/// Fills `args` with the elements of a trace event's argument list, `list`
/// (a word of the input heap or the literals, `spaces`). As in
/// `erlang:match_spec_test/3`, an improper list counts up to its last cell.
#[inline]
fn load_args(
    list: Word,
    spaces: [&[Word]; 2],
    program: &Program,
    args: &mut Vec<Word>,
) -> Result<(), EvalError> {
    args.clear();
    // The word's tag tells a list (`kind` would decode the term), and its
    // cells are read straight from their space's words: this runs on
    // every traced call.
    if !(list.is_cons() || list.is_nil()) {
        let term = HeapSet::new(spaces[0], spaces[1], &[]).term(list);
        return Err(not_an_argument_list(term, program));
    }
    let mut rest = list;
    while let Some([head, tail]) = list_cell(rest, spaces) {
        args.push(head);
        rest = tail;
    }
    Ok(())
}

/// The head and tail of `list` if it is a list cell of the input heap or
/// the literals (`spaces`), read straight from their words.
#[inline(always)]
fn list_cell(list: Word, spaces: [&[Word]; 2]) -> Option<[Word; 2]> {
    if !list.is_cons() {
        return None;
    }
    let (space, at) = list.target();
    let words = match space {
        Space::Heap => spaces[0],
        Space::Literal => spaces[1],
        Space::Scratch => &[],
    };
    let &[head, tail] = words.get(at..at + 2)? else { return None };
    Some([head, tail])
}

/// The error of a trace run on something other than a list.
#[cold]
fn not_an_argument_list(input: TermRef<'_>, program: &Program) -> EvalError {
    let mut text = input.to_string();
    if text.len() > 60 {
        text.truncate(text.floor_char_boundary(57));
        text.push_str("...");
    }
    EvalError::NotAnArgumentList { kind: program.kind, input: text }
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
