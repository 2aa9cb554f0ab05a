//! [`translate`]: a [`Program`] to a Cranelift function.
//!
//! Every op gets a block of its own, so a label is simply the block of the
//! op it names and falling through is a jump to the next op's block
//! (Cranelift merges the trivial ones). Registers are SSA variables: a read
//! is the value last written on the way there, and a write costs nothing
//! until a helper needs the register in the run's register file (the
//! interpreter's code called through `step`, helpers taking operand lists,
//! the end of a clause), when it is stored just before the call; a helper
//! that writes a register is followed by a load of it. Registers holding
//! constants are never written: their reads are the constants themselves.
//!
//! Ops are either lowered inline (type tags, head reads, immediates,
//! small-integer arithmetic and comparisons, jumps) or handed to the
//! interpreter's definition through [`abi::step`](crate::abi::step); the
//! inline forms also fall back to `step` for anything off their fast path.
//! Every op is named in one exhaustive `match`.

use cranelift_codegen::ir::condcodes::{CondCode, FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, Function, InstBuilder, InstructionData, MemFlagsData,
    Opcode, Signature, Value, types,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use matchspec::bif::Bif;
use matchspec::ir::{Cmp, Fail, Label, LogicOp, Op, Operands, Program, Reg};
use matchspec::term::word::layout;
use matchspec::term::{Space, Word};

use crate::abi::{self, HelperId};
use crate::divide::Magic;
use crate::effects::{Effects, effects};
use crate::fuse::{self, Fused};
use crate::looping::{Loop, Looping};
use crate::prefix;

const I64: types::Type = types::I64;
const TRUE: Word = Word::atom(matchspec::term::Atom::TRUE);
const FALSE: Word = Word::atom(matchspec::term::Atom::FALSE);
const EXIT: Word = Word::atom(matchspec::term::Atom::EXIT);

/// The signature of the entry function (see [`abi`](crate::abi)).
pub(crate) fn entry_signature(sig: &mut Signature) {
    sig.params.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
}

/// The signature of a helper with `params` parameters after `ctx`.
pub(crate) fn helper_signature(sig: &mut Signature, params: usize) {
    sig.params.extend(std::iter::repeat_n(AbiParam::new(I64), 1 + params));
    sig.returns.push(AbiParam::new(I64));
}

/// Fills `func` (whose signature is [`entry_signature`]) with the code of
/// `program`; `declare` imports a helper into the function. The program
/// must have passed [`crate::program::validate`].
pub(crate) fn translate(
    program: &Program,
    func: &mut Function,
    fbc: &mut FunctionBuilderContext,
    target: TargetFrontendConfig,
    mut declare: impl FnMut(&mut Function, HelperId) -> FuncRef,
) -> Translated {
    let mut b = FunctionBuilder::new(func, fbc);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let blocks: Vec<Block> = program.code().iter().map(|_| b.create_block()).collect();
    // Never reached by a well-formed input: laid out at the end.
    let bad_input = b.create_block();
    b.set_cold_block(bad_input);
    let loop_head = b.create_block();
    let load_input = b.create_block();
    let next_input = b.create_block();
    let push = b.create_block();

    // The loop over the inputs: `index` counts them, from `Ctx::next`.
    // Each trip ends with the test for the next (one branch back).
    let index = b.declare_var(I64);
    let first = b.ins().load(I64, mem(), params[0], abi::CTX_NEXT);
    b.def_var(index, first);
    let looping = Looping::new(&mut b, params[0], program.code().len());
    b.ins().jump(loop_head, &[]);
    // Laid out right after the last test, which falls through to it.
    let done = b.create_block();
    for block in [loop_head, next_input] {
        b.switch_to_block(block);
        let mut i = b.use_var(index);
        if block == next_input {
            i = b.ins().iadd_imm_s(i, 1);
            b.def_var(index, i);
        }
        let count = looping.get(&mut b, Loop::Count);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, i, count);
        b.ins().brif(more, load_input, &[], done, &[]);
    }
    b.switch_to_block(done);
    // `count` (or, after a panic, the input after the one that panicked).
    let i = b.use_var(index);
    b.ins().store(mem(), i, params[0], abi::CTX_INDEX);
    let code = b.ins().iconst(I64, abi::EXIT_DONE as i64);
    b.ins().return_(&[code]);

    let (slots, region) = heap_slots(program);
    let effects = effects(program, &slots);
    let regions = regions(region);
    // The word `push` buffers.
    let pushed = b.declare_var(I64);
    let vars = (0..program.registers()).map(|_| b.declare_var(I64)).collect();
    let constants = constant_registers(program);
    let redirects = prefix::redirects(program, &constants);
    let mut targets = jump_targets(program);
    for &(_, to) in redirects.iter().flatten() {
        targets[to] = true;
    }
    let fused = fuse::fusions(program, &targets, &slots);
    let mut t = Translator {
        program,
        slots,
        heap: None,
        b,
        blocks,
        helpers: [None; HelperId::ALL.len()],
        declare: &mut declare,
        ctx: params[0],
        bad_input,
        index,
        looping,
        next_input,
        push,
        pushed,
        region,
        regions,
        effects,
        targets,
        redirects,
        fused,
        pc: 0,
        vars,
        constants,
        computed: arithmetic_results(program),
        needs_args: needs_args(program),
        arg_cells: Vec::new(),
        known: vec![Known::default(); program.registers()],
        written_off_main: Vec::new(),
        on_main: true,
    };
    // Load the input into register 0, then run the clauses. Trace programs
    // that read the arguments in Rust (see `needs_args`) let Rust load
    // them (a single run's are loaded before the call); the others read
    // the input list themselves, and Rust only makes the error for an
    // input that is not a list.
    t.b.switch_to_block(load_input);
    let i = t.b.use_var(index);
    let offset = t.b.ins().ishl_imm_s(i, 3);
    let inputs = t.looping.get(&mut t.b, Loop::Inputs);
    let address = t.b.ins().iadd(inputs, offset);
    let input = t.b.ins().load(I64, mem(), address, 0);
    t.store(Reg::INPUT, input);
    let is_trace = program.kind().is_trace();
    if is_trace {
        let loaded = if t.needs_args {
            t.b.ins().load(I64, mem(), t.ctx, abi::CTX_SINGLE)
        } else {
            let cons = t.has_tag(input, layout::TAG_CONS);
            let nil = t.is_word(input, Word::NIL);
            t.b.ins().bor(cons, nil)
        };
        let reset = t.b.create_block();
        t.brif(loaded, t.blocks[0], reset);
        t.switch_off(reset);
        let code = t.call_helper(HelperId::Reset, &[input]);
        // Rust hands over the error (or finds the panic).
        let skip = t.b.create_block();
        t.brif(code, skip, t.blocks[0]);
        t.switch_off(skip);
        t.exit(abi::EXIT_SKIPPED);
    } else {
        t.jump(t.blocks[0]);
    }
    for pc in 0..program.code().len() {
        t.enter(t.blocks[pc]);
        let after_end = pc > 0
            && matches!(program.code()[pc - 1], Op::Jump { .. } | Op::Succeed { .. } | Op::NoMatch);
        if t.targets[pc] || after_end {
            t.forget_all();
        }
        t.on_main = true;
        t.pc = pc;
        t.op(pc);
        for r in std::mem::take(&mut t.written_off_main) {
            t.known[r.index()] = Known::default();
        }
    }
    if t.effects != Effects::Host {
        t.push_block();
    }
    t.b.switch_to_block(bad_input);
    let code = t.b.ins().iconst(I64, abi::EXIT_BAD_INPUT as i64);
    t.b.ins().return_(&[code]);
    t.b.seal_all_blocks();
    t.b.finalize(target);
    Translated { region, regions: regions as usize, effects }
}

/// What the machine code needs of Rust besides its entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Translated {
    /// How many words at the start of the run's heap one input's code
    /// builds terms in (see
    /// [`Frame::reserve_scratch`](matchspec::interp::Frame::reserve_scratch)).
    pub(crate) region: usize,
    /// How many such regions it uses, one per result it may buffer.
    pub(crate) regions: usize,
    /// What its helpers may do.
    pub(crate) effects: Effects,
}

/// How many regions of `region` heap words the code builds in, one per
/// result it may buffer: as many as results, within a bound on the words
/// set aside (so they stay in the cache).
fn regions(region: usize) -> u64 {
    /// The most heap words set aside for regions together (16 KiB).
    const REGION_WORDS: usize = 2048;
    match region {
        0 => abi::RESULTS as u64,
        _ => (REGION_WORDS / region).clamp(1, abi::RESULTS) as u64,
    }
}

struct Translator<'p, 'f, 'd> {
    program: &'p Program,
    /// For each op that builds a term in the code: the heap offset it
    /// builds at.
    slots: Vec<Option<u32>>,
    /// The region the code builds in, if found on this stretch of code
    /// since the last helper call.
    heap: Option<Region>,
    b: FunctionBuilder<'f>,
    /// The block of each op.
    blocks: Vec<Block>,
    /// The helpers imported so far, in [`HelperId::ALL`] order (only those
    /// the code calls are: each costs compile time).
    helpers: [Option<FuncRef>; HelperId::ALL.len()],
    /// Imports a helper.
    declare: &'d mut dyn FnMut(&mut Function, HelperId) -> FuncRef,
    ctx: Value,
    /// Returns [`abi::EXIT_BAD_INPUT`].
    bad_input: Block,
    /// The index of the current input.
    index: Variable,
    /// The loop's other values.
    looping: Looping,
    /// Goes on with the next input.
    next_input: Block,
    /// Buffers the result in `pushed` and goes on with the next input (see
    /// [`push_block`](Self::push_block)).
    push: Block,
    pushed: Variable,
    /// The heap words one region holds (the most one clause builds in).
    region: usize,
    /// How many results the code buffers (and regions it builds in).
    regions: u64,
    /// What the program's helpers may do.
    effects: Effects,
    /// Ops that some op jumps to (or that start a clause): what is known
    /// about registers is forgotten there.
    targets: Vec<bool>,
    /// For each op, if its jumps to the next clause go elsewhere: that
    /// clause's start and the op they go to (see `prefix.rs`).
    redirects: Vec<Option<(Label, usize)>>,
    /// For each op, its part in a fusion of arithmetic into a comparison
    /// (see `fuse.rs`).
    fused: Vec<Fused>,
    /// The op being translated.
    pc: usize,
    /// The SSA variable of each register.
    vars: Vec<Variable>,
    /// The constant each register holds for the whole run, if any.
    constants: Vec<Option<Word>>,
    /// Which registers hold the results of `+ - * /` (bignums and floats
    /// are likelier there).
    computed: Vec<bool>,
    /// Does the program read a trace event's arguments in Rust (see
    /// [`needs_args`])?
    needs_args: bool,
    /// The addresses of the input list's cells, known on this stretch of
    /// code (from an `is_arity`).
    arg_cells: Vec<Value>,
    /// What the code knows about the registers here (see [`Known`]).
    known: Vec<Known>,
    /// Registers the current op writes off its main path: what is known of
    /// them is forgotten before the next op.
    written_off_main: Vec<Reg>,
    /// Is the code being emitted on the current op's main path: the blocks
    /// from the op's start that every later op's code is dominated by?
    /// Values made there may be reused by the ops after it.
    on_main: bool,
}

/// Where the code builds terms for this input: the heap words from
/// `Ctx::build` on.
#[derive(Clone, Copy)]
struct Region {
    /// Their address.
    address: Value,
    /// `Ctx::build`, their offset in the run's heap.
    build: Value,
}

/// What the code has learned about a register, valid as long as the
/// register is not written, no helper that may write registers is called,
/// and no jump target is crossed.
#[derive(Clone, Copy, Default)]
struct Known {
    /// The address of the cells the register points at in the input, with
    /// how many cells after the first are known to be inside the input
    /// (a tuple's arity, a list cell's 1).
    cells: Option<(Value, u32)>,
    /// The address of the map the register points at in the input (its
    /// header), and its number of keys (an `is_map` passed).
    map: Option<(Value, Value)>,
}

/// Where a number lies (see [`Translator::number_cells`]).
struct NumberCells {
    /// The address of its header.
    cells: Value,
    /// The header's offset in its space.
    at: Value,
    /// The space's length, in words.
    len: Value,
}

/// Registers and the input are plain aligned memory that never traps (the
/// translator checks register numbers; input reads are bounds-checked).
fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl Translator<'_, '_, '_> {
    /// Emits op `pc` into the current block.
    fn op(&mut self, pc: usize) {
        match self.program.code()[pc] {
            // ---- Heads -------------------------------------------------------------
            Op::IsTuple { src, arity, fail } => {
                let w = self.load(src);
                let boxed = self.has_tag(w, layout::TAG_BOXED);
                let header = self.b.create_block();
                self.brif_likely(boxed, header, self.label(fail));
                self.continue_in(header);
                // One bounds check covers the header and every element. A
                // smaller tuple may end the input's heap before `arity`
                // elements would: off the hot path, such a term fails the
                // test if its header says so, and only a tuple of the
                // right arity sticking out of the heap is a malformed input.
                let header = layout::tuple_header(arity.into()) as i64;
                let offset = self.b.ins().ushr_imm_s(w, i64::from(layout::OFFSET_SHIFT));
                let last = self.b.ins().iadd_imm_s(offset, i64::from(arity));
                let len = self.input_len();
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, last, len);
                let read = self.b.create_block();
                // Off the hot path: laid out at the end. (Turning the test
                // round instead changes the order Cranelift visits blocks
                // in, which made register allocation of large specs twice
                // as slow.)
                let short = self.b.create_block();
                self.b.set_cold_block(short);
                self.brif(inside, read, short);
                self.continue_in(read);
                let base = self.input_address(offset);
                let h = self.b.ins().load(I64, mem(), base, 0);
                let ok = self.b.ins().icmp_imm_s(IntCC::Equal, h, header);
                self.known[src.index()].cells = Some((base, arity));
                self.branch(ok, pc + 1, fail);
                self.switch_off(short);
                // The header alone, from the offset already made (so the
                // word itself is not needed past the check).
                let len = self.input_len();
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, offset, len);
                let read = self.b.create_block();
                self.b.set_cold_block(read);
                self.brif(inside, read, self.bad_input);
                self.continue_in(read);
                let base = self.input_address(offset);
                let h = self.b.ins().load(I64, mem(), base, 0);
                let malformed = self.b.ins().icmp_imm_s(IntCC::Equal, h, header);
                self.brif(malformed, self.bad_input, self.label(fail));
            }
            Op::GetElement { src, index, dst } => {
                let v = self.cell(src, 1 + index);
                self.store(dst, v);
                self.next(pc);
            }
            Op::IsElement { src, index, word, fail } => {
                let v = self.cell(src, 1 + index);
                let ok = self.is_word(v, word);
                self.branch(ok, pc + 1, fail);
            }
            Op::IsCons { src, fail } => {
                let w = self.load(src);
                let ok = self.has_tag(w, layout::TAG_CONS);
                let cell = self.b.create_block();
                self.brif(ok, cell, self.label(fail));
                self.continue_in(cell);
                let base = self.input_cells(w, 1);
                self.known[src.index()].cells = Some((base, 1));
                self.next(pc);
            }
            Op::GetHead { src, dst } => {
                let v = self.cell(src, 0);
                self.store(dst, v);
                self.next(pc);
            }
            Op::GetTail { src, dst } => {
                let v = self.cell(src, 1);
                self.store(dst, v);
                self.next(pc);
            }
            Op::IsMap { src, size, fail } => {
                let w = self.load(src);
                let boxed = self.has_tag(w, layout::TAG_BOXED);
                let header = self.b.create_block();
                self.brif_likely(boxed, header, self.label(fail));
                self.continue_in(header);
                let h = self.input_cell(w, 0);
                let kind = self.b.ins().band_imm_s(h, layout::HEADER_KIND_MASK as i64);
                let is_map = self.b.ins().icmp_imm_s(IntCC::Equal, kind, layout::HEADER_MAP as i64);
                let keys = self.b.create_block();
                self.brif(is_map, keys, self.label(fail));
                self.continue_in(keys);
                let n = self.b.ins().ushr_imm_s(h, i64::from(layout::HEADER_KIND_BITS));
                let n = self.b.ins().band_imm_s(n, !layout::MAP_IN_ORDER as i64);
                let ok =
                    self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, i64::from(size));
                if self.on_main {
                    let offset = self.b.ins().ushr_imm_s(w, i64::from(layout::OFFSET_SHIFT));
                    let base = self.input_address(offset);
                    self.known[src.index()].map = Some((base, n));
                }
                self.branch(ok, pc + 1, fail);
            }
            Op::IsWord { src, word, fail } => {
                let w = self.load(src);
                let ok = self.is_word(w, word);
                self.branch(ok, pc + 1, fail);
            }
            Op::IsExactEq { a, b, fail } => {
                // The same word is the same term; two different immediates
                // differ; anything else is decided by the full comparison.
                let (x, y) = (self.load(a), self.load(b));
                let same = self.b.ins().icmp(IntCC::Equal, x, y);
                let differ = self.b.create_block();
                self.brif(same, self.blocks[pc + 1], differ);
                self.switch_off(differ);
                let immediates = self.both_immediate(x, y);
                let slow = self.b.create_block();
                self.brif(immediates, self.label(fail), slow);
                self.switch_off(slow);
                let answer = self.call_helper(HelperId::ExactEq, &[x, y]);
                self.branch_on_answer(answer, pc + 1, fail.index());
            }
            Op::IsArity { arity, fail } if arity <= MAX_INLINE_ARGS => {
                // Exactly `arity` list cells (an improper list counts up to
                // its last cell), remembering where they are.
                let mut w = self.load(Reg::INPUT);
                let mut cells = Vec::with_capacity(arity as usize);
                for _ in 0..arity {
                    let is_cons = self.has_tag(w, layout::TAG_CONS);
                    let next = self.b.create_block();
                    self.brif(is_cons, next, self.label(fail));
                    self.continue_in(next);
                    let base = self.input_cells(w, 1);
                    cells.push(base);
                    w = self.b.ins().load(I64, mem(), base, 8);
                }
                let more = self.has_tag(w, layout::TAG_CONS);
                self.brif(more, self.label(fail), self.blocks[pc + 1]);
                if self.on_main {
                    self.arg_cells = cells;
                }
            }
            Op::IsArity { fail, .. } => self.call_step(pc, &[fail]),
            Op::GetMapValue { src, key, dst, fail } => {
                let map = self.known[src.index()].map;
                match (self.constants[key.index()], map) {
                    (Some(k), Some((base, n))) if k.is_immediate() => {
                        self.small_map_value(pc, src, key, (base, n), dst, fail);
                    }
                    _ => {
                        let (m, k) = (self.load(src), self.load(key));
                        let value = self.call_helper(HelperId::MapValue, &[m, k]);
                        self.word_result(pc, value, dst, Fail::Jump(fail));
                    }
                }
            }
            Op::GetArg { index, dst } if index < MAX_INLINE_ARGS => {
                // The head of list cell `index`: known from `is_arity`, or
                // found again. A shorter list (which `is_arity` rules out)
                // is the interpreter's to decide, if it loaded the
                // arguments, else a malformed input.
                let base = match self.arg_cells.get(index as usize) {
                    Some(&base) => base,
                    None => {
                        let outside = self.b.create_block();
                        let mut w = self.load(Reg::INPUT);
                        let mut base = None;
                        for k in 0..=index {
                            let is_cons = self.has_tag(w, layout::TAG_CONS);
                            let next = self.b.create_block();
                            self.brif(is_cons, next, outside);
                            self.continue_in(next);
                            let cell = self.input_cells(w, 1);
                            if k < index {
                                w = self.b.ins().load(I64, mem(), cell, 8);
                            }
                            base = Some(cell);
                        }
                        let on = self.b.create_block();
                        self.jump(on);
                        let on_main = self.on_main;
                        self.switch_off(outside);
                        if self.needs_args {
                            self.call_step(pc, &[]);
                        } else {
                            // Rust loaded no arguments to ask about (and
                            // `is_arity` walked the list before: this is
                            // never reached).
                            self.jump(self.bad_input);
                        }
                        self.enter(on);
                        self.on_main = on_main;
                        base.expect("the loop runs at least once")
                    }
                };
                let v = self.b.ins().load(I64, mem(), base, 0);
                self.store(dst, v);
                self.next(pc);
            }
            Op::GetArg { .. } => self.call_step(pc, &[]),
            Op::GetArgList { .. } => self.call_step(pc, &[]),

            // ---- Guard and body values -----------------------------------------------
            Op::Move { src, dst } => {
                let v = self.load(src);
                self.store(dst, v);
                self.next(pc);
            }
            Op::Call { bif, args, dst, fail } => match self.fused[pc] {
                // Computed by the comparison it feeds.
                Fused::Deferred(_) => self.next(pc),
                Fused::No | Fused::Computes(_) => self.call(pc, bif, args, dst, fail),
            },
            Op::Compare { op, a, b, fail } => match self.fused[pc] {
                Fused::Computes(arith) => self.fused_compare(pc, arith, op, a, b, fail),
                Fused::No | Fused::Deferred(_) => self.compare(pc, op, a, b, fail),
            },
            Op::TypeTest { test, src, expect, fail } => self.type_test(pc, test, src, expect, fail),
            Op::BoolBranch { src, when, target, other } => {
                let (stop, go_on) = if when { (TRUE, FALSE) } else { (FALSE, TRUE) };
                let w = self.load(src);
                let stops = self.is_word(w, stop);
                let not_stop = self.b.create_block();
                self.brif(stops, self.label(target), not_stop);
                self.continue_in(not_stop);
                let goes_on = self.is_word(w, go_on);
                self.brif(goes_on, self.blocks[pc + 1], self.label(other));
            }
            Op::Logic { op, args, dst, fail } => self.logic(pc, op, args, dst, fail),
            Op::Jump { target } => {
                self.jump(self.label(target));
            }

            // ---- Building ---------------------------------------------------------------
            Op::MakeTuple { elements, dst } => match self.slots[pc] {
                Some(at) => {
                    let regs = self.program.operand_regs(elements).to_vec();
                    let heap = self.heap_address();
                    let header =
                        self.b.ins().iconst(I64, layout::tuple_header(regs.len() as u64) as i64);
                    self.b.ins().store(mem(), header, heap, (at * 8) as i32);
                    for (i, r) in regs.into_iter().enumerate() {
                        let v = self.load(r);
                        self.b.ins().store(mem(), v, heap, ((at + 1 + i as u32) * 8) as i32);
                    }
                    let tuple = self.scratch_word(layout::TAG_BOXED, at);
                    self.store(dst, tuple);
                    self.next(pc);
                }
                None => {
                    self.spill(self.program.operand_regs(elements));
                    let (start, len) = self.operands(elements);
                    let tuple = self.call_helper(HelperId::MakeTuple, &[start, len]);
                    self.word_result(pc, tuple, dst, Fail::Exit);
                }
            },
            Op::MakeList { elements, dst } => match self.slots[pc] {
                Some(at) => {
                    let regs = self.program.operand_regs(elements).to_vec();
                    let n = regs.len() as u32;
                    let heap = self.heap_address();
                    for (i, r) in regs.into_iter().enumerate() {
                        let cell = at + 2 * i as u32;
                        let v = self.load(r);
                        self.b.ins().store(mem(), v, heap, (cell * 8) as i32);
                        let tail = if cell + 2 < at + 2 * n {
                            self.scratch_word(layout::TAG_CONS, cell + 2)
                        } else {
                            self.b.ins().iconst(I64, Word::NIL.to_bits() as i64)
                        };
                        self.b.ins().store(mem(), tail, heap, ((cell + 1) * 8) as i32);
                    }
                    let list = if n == 0 {
                        self.b.ins().iconst(I64, Word::NIL.to_bits() as i64)
                    } else {
                        self.scratch_word(layout::TAG_CONS, at)
                    };
                    self.store(dst, list);
                    self.next(pc);
                }
                None => {
                    self.spill(self.program.operand_regs(elements));
                    let (start, len) = self.operands(elements);
                    let list = self.call_helper(HelperId::MakeList, &[start, len]);
                    self.word_result(pc, list, dst, Fail::Exit);
                }
            },
            Op::MakeCons { head, tail, dst } => match self.slots[pc] {
                Some(at) => {
                    let (h, t) = (self.load(head), self.load(tail));
                    let heap = self.heap_address();
                    self.b.ins().store(mem(), h, heap, (at * 8) as i32);
                    self.b.ins().store(mem(), t, heap, ((at + 1) * 8) as i32);
                    let cons = self.scratch_word(layout::TAG_CONS, at);
                    self.store(dst, cons);
                    self.next(pc);
                }
                None => {
                    let (h, t) = (self.load(head), self.load(tail));
                    let cons = self.call_helper(HelperId::MakeCons, &[h, t]);
                    self.word_result(pc, cons, dst, Fail::Exit);
                }
            },

            // ---- Maps and trace actions: the interpreter's code --------------------
            Op::MakeMap { .. }
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
            | Op::Silent { .. } => self.call_step(pc, &[]),

            // ---- Ending ---------------------------------------------------------------
            Op::Succeed { result } => {
                // Buffered, unless Rust must see it now (then Rust reads
                // the result in the register file).
                let w = self.load(result);
                self.b.def_var(self.pushed, w);
                match self.effects {
                    Effects::None => return self.jump(self.push),
                    Effects::Heap => {
                        let dirty = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_DIRTY);
                        let ret = self.b.create_block();
                        self.brif(dirty, ret, self.push);
                        self.switch_off(ret);
                    }
                    Effects::Host => {}
                }
                self.spill(&[result]);
                self.exit((u64::from(result.0) << 32) | abi::EXIT_MATCHED);
            }
            Op::NoMatch => {
                // Rust hears of a no-match only to clean up, or when it
                // asked to (see `Effects`).
                match self.effects {
                    Effects::None => self.jump(self.next_input),
                    Effects::Heap | Effects::Host => {
                        let dirty = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_DIRTY);
                        let ret = self.b.create_block();
                        self.brif(dirty, ret, self.next_input);
                        self.switch_off(ret);
                        self.exit(abi::EXIT_NO_MATCH);
                    }
                }
            }
        }
    }

    /// Returns `code` to Rust, leaving the input's index in the `Ctx`.
    fn exit(&mut self, code: u64) {
        let i = self.b.use_var(self.index);
        self.b.ins().store(mem(), i, self.ctx, abi::CTX_INDEX);
        let code = self.b.ins().iconst(I64, code as i64);
        self.b.ins().return_(&[code]);
    }

    /// The block every buffered outcome goes through: the input's index
    /// and `pushed` into the next slot of `Ctx::results`, the next region
    /// to build in, and on with the next input, or back to Rust when the
    /// buffer is full.
    fn push_block(&mut self) {
        self.b.switch_to_block(self.push);
        let n = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_PENDING);
        let offset = self.b.ins().ishl_imm_s(n, 3);
        let slot = self.b.ins().iadd(self.ctx, offset);
        let i = self.b.use_var(self.index);
        let w = self.b.use_var(self.pushed);
        self.b.ins().store(mem(), i, slot, abi::CTX_RESULT_INPUTS);
        self.b.ins().store(mem(), w, slot, abi::CTX_RESULT_WORDS);
        let n = self.b.ins().iadd_imm_s(n, 1);
        self.b.ins().store(mem(), n, self.ctx, abi::CTX_PENDING);
        if self.region > 0 {
            let build = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_BUILD);
            let build = self.b.ins().iadd_imm_s(build, self.region as i64);
            self.b.ins().store(mem(), build, self.ctx, abi::CTX_BUILD);
        }
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, n, self.regions as i64);
        let exit = self.b.create_block();
        self.brif(full, exit, self.next_input);
        self.switch_off(exit);
        self.exit(abi::EXIT_FULL);
    }

    /// `Call`: arithmetic on small integers inline; `+ - * /` on other
    /// numbers through `msc_num_arith`, which computes floats and bignums
    /// of up to 128 bits itself, building the result in the op's heap
    /// slot, and calls `msc_call` for the rest; `map_get` and
    /// `is_map_key` through `msc_map_get` (likewise); every other function
    /// through `msc_call`.
    fn call(&mut self, pc: usize, bif: Bif, args: [Reg; 3], dst: Reg, fail: Fail) {
        let arity = bif.arity().min(3);
        let words: Vec<Value> = args[..arity].iter().map(|&r| self.load(r)).collect();
        if matches!(bif, Bif::MapGet | Bif::IsMapKey) {
            // Small maps and immediate keys in `msc_map_get`, the rest
            // through `msc_call`.
            let bif_index = self.b.ins().iconst(I64, bif as u8 as i64);
            let value = self.call_helper(HelperId::MapGet, &[bif_index, words[0], words[1]]);
            return self.word_result(pc, value, dst, fail);
        }
        let slow = self.b.create_block();
        let slot = match bif {
            Bif::Add | Bif::Sub | Bif::Mul | Bif::FloatDiv => self.slots[pc],
            _ => None,
        };
        let numbers = match slot {
            Some(_) => self.b.create_block(),
            None => slow,
        };
        if matches!(
            bif,
            Bif::Add
                | Bif::Sub
                | Bif::Mul
                | Bif::IntDiv
                | Bif::Rem
                | Bif::Band
                | Bif::Bor
                | Bif::Bxor
        ) {
            let (x, y) = (words[0], words[1]);
            let fast = self.b.create_block();
            let smalls = self.both_small(x, y);
            self.brif_likely(smalls, fast, numbers);
            self.switch_off(fast);
            let overflow = if slot.is_some() { numbers } else { slow };
            let result = self.small_arith(bif, x, y, overflow);
            self.store(dst, result);
            self.next(pc);
        } else {
            self.jump(numbers);
        }
        if let Some(at) = slot {
            self.switch_off(numbers);
            let helper = match bif {
                Bif::Add => HelperId::NumAdd,
                Bif::Sub => HelperId::NumSub,
                Bif::Mul => HelperId::NumMul,
                _ => HelperId::NumDiv,
            };
            let at = self.slot_offset(at);
            let (x, y) = self.helper_operands(bif, [args[0], args[1]]);
            let value = self.call_helper(helper, &[x, y, at]);
            // Nothing else goes to `slow`: `arith::num_arith` calls `msc_call`.
            return self.word_result(pc, value, dst, fail);
        }
        self.switch_off(slow);
        let mut params = vec![self.b.ins().iconst(I64, bif as u8 as i64)];
        params.extend(args[..arity].iter().map(|&r| self.load(r)));
        while params.len() < 4 {
            params.push(self.b.ins().iconst(I64, Word::NIL.to_bits() as i64));
        }
        let value = self.call_helper(HelperId::Call, &params);
        self.word_result(pc, value, dst, fail);
    }

    /// The heap offset of slot `at` of the region the code builds in.
    fn slot_offset(&mut self, at: u32) -> Value {
        let build = match self.heap {
            Some(region) => region.build,
            None => self.b.ins().load(I64, mem(), self.ctx, abi::CTX_BUILD),
        };
        match at {
            0 => build,
            _ => self.b.ins().iadd_imm_s(build, i64::from(at)),
        }
    }

    /// The operands of `+ - * /` as its lean helper takes them: a small
    /// integer constant second, where the helper looks for a small integer
    /// first (`+` and `*` commute). Constants are made again here, so the
    /// fast path's stay immediates.
    fn helper_operands(&mut self, bif: Bif, args: [Reg; 2]) -> (Value, Value) {
        let small = |r: Reg| self.constants[r.index()].is_some_and(Word::is_small);
        let (a, b) = match bif {
            Bif::Add | Bif::Mul if small(args[0]) && !small(args[1]) => (args[1], args[0]),
            _ => (args[0], args[1]),
        };
        (self.load(a), self.load(b))
    }

    /// `Compare` at `pc` of the result of `arith`, which it computes
    /// itself (see `fuse.rs`): small integers inline, then compared as
    /// ever; anything else by `msc_num_*_compare`, which compares floats
    /// and bignums without building them, and answers 0 when `arith`
    /// fails (both fail to `fail`).
    fn fused_compare(
        &mut self,
        pc: usize,
        arith: fuse::Arith,
        op: Cmp,
        a: Reg,
        b: Reg,
        fail: Label,
    ) {
        let numbers = self.b.create_block();
        if arith.bif == Bif::FloatDiv {
            self.jump(numbers);
        } else {
            let (x, y) = (self.load(arith.args[0]), self.load(arith.args[1]));
            let fast = self.b.create_block();
            let smalls = self.both_small(x, y);
            self.brif_likely(smalls, fast, numbers);
            self.switch_off(fast);
            let result = self.small_arith(arith.bif, x, y, numbers);
            self.store(arith.result, result);
            // A small result: a bignum or float on the other side goes to
            // `msc_num_compare` (deciding it inline too would cost every
            // compile more than it saves).
            self.compare_with(pc, op, a, b, fail, false);
        }
        self.switch_off(numbers);
        // `other op result` is `result op' other`.
        let (other, op) = if a == arith.result { (b, op) } else { (a, op.swapped()) };
        let helper = self.b.create_block();
        if matches!(op, Cmp::ExactEq | Cmp::ExactNe) {
            self.jump(helper);
        } else {
            let (x, y) = self.helper_operands(arith.bif, arith.args);
            let t = self.load(other);
            self.fused_number_order(pc, arith.bif, op, [x, y, t], fail, helper);
        }
        self.switch_off(helper);
        let at = self.slot_offset(arith.slot);
        let (x, y) = self.helper_operands(arith.bif, arith.args);
        let other = self.load(other);
        let op_index = self.b.ins().iconst(I64, abi::cmp_index(op) as i64);
        let helper = match arith.bif {
            Bif::Add => HelperId::NumAddCompare,
            Bif::Sub => HelperId::NumSubCompare,
            Bif::Mul => HelperId::NumMulCompare,
            _ => HelperId::NumDivCompare,
        };
        let answer = self.call_helper(helper, &[op_index, x, y, at, other]);
        self.branch_on_answer(answer, pc + 1, fail.index());
    }

    /// The usual case of a fused comparison off the small-integer path,
    /// inline: `x bif y` for a float or bignum `x` (in the input or the
    /// run's heap) and a small integer `y`, compared by `op` with the
    /// small integer `t`, as `msc_num_*_compare` decides it without
    /// building the result (`arith::small_order`):
    ///
    /// * a float result, if finite, against `t` converted, if exactly
    ///   (within ±2^53);
    /// * a bignum of one or two words plus or minus `y`, if it stays a
    ///   bignum of the same sign (two words, or one of at least 2^61), or
    ///   times `y` (not 0), which only multiplies its magnitude: the sign
    ///   decides, as a bignum lies beyond every small integer.
    ///
    /// Anything else goes on to `helper`.
    fn fused_number_order(
        &mut self,
        pc: usize,
        bif: Bif,
        op: Cmp,
        [x, y, t]: [Value; 3],
        fail: Label,
        helper: Block,
    ) {
        let (boxed, float, finite, bignum, signed) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let smalls = self.both_small(y, t);
        self.brif(smalls, boxed, helper);
        self.enter(boxed);
        // For a bignum, which may have two words, the word after the
        // header's is checked below.
        let NumberCells { cells, at, len } = self.number_cells(x, helper);
        let h = self.b.ins().load(I64, mem(), cells, 0);
        let lo = self.b.ins().load(I64, mem(), cells, 8);
        let is_float = self.b.ins().icmp_imm_s(IntCC::Equal, h, layout::FLOAT_HEADER as i64);
        self.brif(is_float, float, bignum);
        // A float: the result, if finite (its magnitude's bits below
        // infinity's), against `t` converted, if exactly.
        self.enter(float);
        let f = self.b.ins().bitcast(types::F64, MemFlagsData::new(), lo);
        let s = self.b.ins().sshr_imm_s(y, i64::from(layout::TAG_BITS));
        let s = self.b.ins().fcvt_from_sint(types::F64, s);
        let r = match bif {
            Bif::Add => self.b.ins().fadd(f, s),
            Bif::Sub => self.b.ins().fsub(f, s),
            Bif::Mul => self.b.ins().fmul(f, s),
            _ => self.b.ins().fdiv(f, s),
        };
        let bits = self.b.ins().bitcast(I64, MemFlagsData::new(), r);
        let magnitude = self.b.ins().band_imm_s(bits, i64::MAX);
        let is_finite = self.b.ins().icmp_imm_s(
            IntCC::SignedLessThan,
            magnitude,
            f64::INFINITY.to_bits() as i64,
        );
        self.brif(is_finite, finite, helper);
        self.enter(finite);
        let q = self.exact_float(t, helper);
        let holds = self.b.ins().fcmp(float_cc(op), r, q);
        self.branch(holds, pc + 1, fail);
        // A bignum of one or two words (`k`: 0, 1, `ONE` or `ONE + 1`).
        self.enter(bignum);
        const ONE: i64 = 1 << layout::HEADER_KIND_BITS;
        let k = self.b.ins().iadd_imm_s(h, -(ONE | layout::HEADER_POS_BIG as i64));
        let odd = self.b.ins().band_imm_s(k, !(ONE | 1));
        let one_or_two = self.b.ins().icmp_imm_s(IntCC::Equal, odd, 0);
        let negative = self.b.ins().band_imm_s(k, 1);
        let (keeps, negative) = match bif {
            Bif::Add | Bif::Sub => {
                // `y` is below 2^60 in magnitude: two words, or one of at
                // least 2^61, stay beyond the small integers.
                let two = self.b.ins().band_imm_s(k, ONE);
                let large = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, lo, 1 << 61);
                let large = self.b.ins().uextend(I64, large);
                let stays = self.b.ins().bor(two, large);
                let stays = self.b.ins().icmp_imm_s(IntCC::NotEqual, stays, 0);
                (stays, negative)
            }
            Bif::Mul => {
                // A negative factor turns the sign round.
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                let below = self.b.ins().ushr_imm_s(y, 63);
                (nonzero, self.b.ins().bxor(negative, below))
            }
            _ => (self.b.ins().iconst(types::I8, 0), negative),
        };
        let decided = self.b.ins().band(one_or_two, keeps);
        // Two words after the header must be inside for a bignum of two.
        let last = self.b.ins().iadd_imm_s(at, 2);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, last, len);
        let decided = self.b.ins().band(decided, inside);
        self.brif(decided, signed, helper);
        // Its sign decides: -1 if negative, else 1, against 0.
        self.enter(signed);
        let twice = self.b.ins().ishl_imm_s(negative, 1);
        let one = self.b.ins().iconst(I64, 1);
        let order = self.b.ins().isub(one, twice);
        let holds = self.b.ins().icmp_imm_s(int_cc(op), order, 0);
        self.branch(holds, pc + 1, fail);
    }

    /// `bif` on two small-integer words, leaving for `slow` when the result
    /// is not a small integer (or the divisor is zero). A small word is its
    /// value shifted left by the tag width (tag 0): sums, differences and
    /// bitwise operations of words are the words of the results, and i64
    /// overflow of a sum or product of words is exactly leaving the small
    /// range.
    fn small_arith(&mut self, bif: Bif, x: Value, y: Value, slow: Block) -> Value {
        let tag_bits = i64::from(layout::TAG_BITS);
        let (result, overflow) = match bif {
            Bif::Band => return self.b.ins().band(x, y),
            Bif::Bor => return self.b.ins().bor(x, y),
            Bif::Bxor => return self.b.ins().bxor(x, y),
            Bif::Add | Bif::Sub if let Some((w, c)) = self.plus_constant(bif, x, y) => {
                // `w + c` for a constant `c`: it overflows exactly when `w`
                // lies beyond the limit less `c`, one comparison (x86
                // makes the flag of an add a `seto` and a `test`).
                let sum = self.b.ins().iadd_imm_s(w, c);
                let overflow = match c.signum() {
                    1 => self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, w, i64::MAX - c),
                    -1 => self.b.ins().icmp_imm_s(IntCC::SignedLessThan, w, i64::MIN - c),
                    _ => return sum,
                };
                (sum, overflow)
            }
            Bif::Add => self.b.ins().sadd_overflow(x, y),
            Bif::Sub => self.b.ins().ssub_overflow(x, y),
            Bif::Mul => {
                let value = self.b.ins().sshr_imm_s(x, tag_bits);
                self.b.ins().smul_overflow(value, y)
            }
            _ if let Some((d, magic)) = self.constant(y).and_then(|c| {
                let d = Word::from_bits(c).as_small()?;
                Some((d, Magic::of(d)?))
            }) =>
            {
                // By a constant of magnitude 2 or more: a multiplication
                // (see `divide.rs`), whose quotient and remainder are
                // smaller than the dividend.
                let p = self.b.ins().sshr_imm_s(x, tag_bits);
                let m = self.b.ins().iconst(I64, magic.multiplier);
                let mut q = self.b.ins().smulhi(p, m);
                if d > 0 && magic.multiplier < 0 {
                    q = self.b.ins().iadd(q, p);
                } else if d < 0 && magic.multiplier > 0 {
                    q = self.b.ins().isub(q, p);
                }
                let q = self.b.ins().sshr_imm_s(q, i64::from(magic.shift));
                let negative = self.b.ins().ushr_imm_s(q, 63);
                let q = self.b.ins().iadd(q, negative);
                let value = if bif == Bif::IntDiv {
                    q
                } else {
                    let product = self.b.ins().imul_imm_s(q, d);
                    self.b.ins().isub(p, product)
                };
                return self.b.ins().ishl_imm_s(value, tag_bits);
            }
            _ => {
                // `div`, `rem`: truncating, a zero divisor fails. Values are
                // 61-bit, so the division itself cannot overflow; only
                // `MIN div -1` leaves the small range.
                let (p, q) =
                    (self.b.ins().sshr_imm_s(x, tag_bits), self.b.ins().sshr_imm_s(y, tag_bits));
                let divides = self.b.create_block();
                self.brif(q, divides, slow);
                self.continue_in(divides);
                let value = if bif == Bif::IntDiv {
                    self.b.ins().sdiv(p, q)
                } else {
                    self.b.ins().srem(p, q)
                };
                let word = self.b.ins().ishl_imm_s(value, tag_bits);
                let back = self.b.ins().sshr_imm_s(word, tag_bits);
                let lost = self.b.ins().icmp(IntCC::NotEqual, back, value);
                (word, lost)
            }
        };
        let done = self.b.create_block();
        self.brif(overflow, slow, done);
        self.continue_in(done);
        result
    }

    /// `GetMapValue` of the constant immediate in `key` in the map of the
    /// input in `src` (at `base`, with `n` keys), a map of up to 8 keys:
    /// a loop comparing keys as words (as `Frame::map_value` does for
    /// them); larger maps through `msc_map_value`.
    fn small_map_value(
        &mut self,
        pc: usize,
        src: Reg,
        key: Reg,
        (base, n): (Value, Value),
        dst: Reg,
        fail: Label,
    ) {
        let k = self.load(key);
        let (check, scan, next, found, slow) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let small = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n, 8);
        self.brif(small, check, slow);
        // The keys and values inside the input.
        self.switch_off(check);
        let m = self.load(src);
        let offset = self.b.ins().ushr_imm_s(m, i64::from(layout::OFFSET_SHIFT));
        let twice = self.b.ins().ishl_imm_s(n, 1);
        let last = self.b.ins().iadd(offset, twice);
        let len = self.input_len();
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, last, len);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().brif(inside, scan, &[BlockArg::Value(zero)], slow, &[]);
        // Key `i`, until `n`; sealed once its loop edge is there.
        let i = self.b.append_block_param(scan, I64);
        self.b.switch_to_block(scan);
        let end = self.b.ins().icmp(IntCC::Equal, i, n);
        let label = self.label(fail);
        self.brif(end, label, next);
        self.enter(next);
        let at = self.b.ins().ishl_imm_s(i, 3);
        let at = self.b.ins().iadd(base, at);
        let candidate = self.b.ins().load(I64, mem(), at, 8);
        let hit = self.b.ins().icmp(IntCC::Equal, candidate, k);
        let on = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().brif(hit, found, &[], scan, &[BlockArg::Value(on)]);
        self.b.seal_block(scan);
        // Its value, `n` words on.
        self.enter(found);
        let values = self.b.ins().ishl_imm_s(n, 3);
        let at = self.b.ins().iadd(at, values);
        let value = self.b.ins().load(I64, mem(), at, 8);
        self.store(dst, value);
        self.next(pc);
        self.switch_off(slow);
        let (m, k) = (self.load(src), self.load(key));
        let value = self.call_helper(HelperId::MapValue, &[m, k]);
        self.word_result(pc, value, dst, Fail::Jump(fail));
    }

    /// `x + y` or `x - y` (`bif`) as a word plus a constant, if one is a
    /// constant small integer (but for `c - y`, which negates `y`).
    fn plus_constant(&self, bif: Bif, x: Value, y: Value) -> Option<(Value, i64)> {
        let small = |v: Value| {
            self.constant(v).filter(|&c| Word::from_bits(c).is_small()).map(|c| c as i64)
        };
        match (bif, small(x), small(y)) {
            (Bif::Add, _, Some(c)) => Some((x, c)),
            // The smallest small integer's word is `i64::MIN`: no negation.
            (Bif::Sub, _, Some(c)) => Some((x, c.checked_neg()?)),
            (Bif::Add, Some(c), None) => Some((y, c)),
            _ => None,
        }
    }

    /// `Logic`: `and`/`or` of registers that must all be booleans.
    fn logic(&mut self, pc: usize, op: LogicOp, args: Operands, dst: Reg, fail: Fail) {
        let regs: Vec<Reg> = self.program.operand_regs(args).to_vec();
        let not_boolean = self.b.create_block();
        // `and`: all true; `or`: any true; both only once every operand is
        // known to be a boolean.
        let mut result = self.b.ins().iconst(I64, i64::from(op == LogicOp::And));
        // Every operand is loaded before the first test: in a body a
        // non-boolean goes on to the next op as `'EXIT'`, and the loads the
        // next op reuses must be on every path to it.
        let words: Vec<Value> = regs.iter().map(|&r| self.load(r)).collect();
        for w in words {
            let is_true = self.is_word(w, TRUE);
            let is_false = self.is_word(w, FALSE);
            let is_boolean = self.b.ins().bor(is_true, is_false);
            let next = self.b.create_block();
            self.brif(is_boolean, next, not_boolean);
            self.continue_in(next);
            let t = self.b.ins().uextend(I64, is_true);
            result = match op {
                LogicOp::And => self.b.ins().band(result, t),
                LogicOp::Or => self.b.ins().bor(result, t),
            };
        }
        let (true_word, false_word) = (
            self.b.ins().iconst(I64, TRUE.to_bits() as i64),
            self.b.ins().iconst(I64, FALSE.to_bits() as i64),
        );
        let value = self.b.ins().select(result, true_word, false_word);
        self.store(dst, value);
        self.next(pc);
        self.switch_off(not_boolean);
        self.fail(pc, dst, fail);
    }

    /// `Compare`: two small integers compare as words, and so do two
    /// immediates for the equalities (floats are never immediate, so `1`
    /// and `1.0` do not get here); anything else through `msc_num_compare`
    /// (which decides numbers itself and calls `msc_compare` for the rest),
    /// or for `=:=` and `=/=` `msc_compare`.
    fn compare(&mut self, pc: usize, op: Cmp, a: Reg, b: Reg, fail: Label) {
        let inline_numbers = self.computed[a.index()] || self.computed[b.index()];
        self.compare_with(pc, op, a, b, fail, inline_numbers);
    }

    /// [`compare`](Self::compare), deciding a small integer against a
    /// bignum or a float inline if `inline_numbers`.
    fn compare_with(
        &mut self,
        pc: usize,
        op: Cmp,
        a: Reg,
        b: Reg,
        fail: Label,
        inline_numbers: bool,
    ) {
        let (x, y) = (self.load(a), self.load(b));
        let slow = self.b.create_block();
        let fast = self.b.create_block();
        let equality = matches!(op, Cmp::Eq | Cmp::Ne | Cmp::ExactEq | Cmp::ExactNe);
        let exact = matches!(op, Cmp::ExactEq | Cmp::ExactNe);
        let decided = if equality { self.both_immediate(x, y) } else { self.both_small(x, y) };
        let mut numbers = if exact { slow } else { self.b.create_block() };
        self.brif_likely(decided, fast, numbers);
        self.switch_off(fast);
        let holds = self.b.ins().icmp(int_cc(op), x, y);
        self.branch(holds, pc + 1, fail);
        if !exact {
            if !equality && inline_numbers {
                // A small integer against a bignum or a float, inline where
                // they are likely: for the results of arithmetic.
                self.switch_off(numbers);
                let helper = self.b.create_block();
                self.number_order(pc, op, x, y, fail, helper);
                numbers = helper;
            }
            // `msc_num_compare` decides numbers itself, the rest through
            // `msc_compare`.
            self.switch_off(numbers);
            // Constants made again here, so the fast path's stay
            // immediates.
            let (x, y) = (self.load(a), self.load(b));
            let op_index = self.b.ins().iconst(I64, abi::cmp_index(op) as i64);
            let answer = self.call_helper(HelperId::NumCompare, &[op_index, x, y]);
            return self.branch_on_answer(answer, pc + 1, fail.index());
        }
        self.switch_off(slow);
        let (x, y) = (self.load(a), self.load(b));
        let op_index = self.b.ins().iconst(I64, abi::cmp_index(op) as i64);
        let answer = self.call_helper(HelperId::Compare, &[op_index, x, y]);
        self.branch_on_answer(answer, pc + 1, fail.index());
    }

    /// Comparison `op` (not `=:=` or `=/=`) of `x` and `y` when one is a small integer and the
    /// other a bignum (whose sign decides) or a float (compared as one,
    /// if the integer converts exactly: within ±2^53), as
    /// `msc_num_compare` decides it, in the input or the run's heap; else
    /// on to `helper`.
    fn number_order(&mut self, pc: usize, op: Cmp, x: Value, y: Value, fail: Label, helper: Block) {
        let (check, bignum, float, result) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        // `s` the small one (if either is), `o` the other.
        let x_small = self.has_tag(x, layout::TAG_SMALL);
        let s = self.b.ins().select(x_small, x, y);
        let o = self.b.ins().select(x_small, y, x);
        let s_small = self.has_tag(s, layout::TAG_SMALL);
        self.brif(s_small, check, helper);
        self.enter(check);
        let NumberCells { cells, .. } = self.number_cells(o, helper);
        let h = self.b.ins().load(I64, mem(), cells, 0);
        let is_float = self.b.ins().icmp_imm_s(IntCC::Equal, h, layout::FLOAT_HEADER as i64);
        self.brif(is_float, float, bignum);
        // A bignum lies beyond every small integer: its sign decides (the
        // order of `s` against it: -1 below a positive one, 1 above a
        // negative one).
        self.enter(bignum);
        let kind = self.b.ins().band_imm_s(h, layout::HEADER_KIND_MASK as i64);
        let k = self.b.ins().iadd_imm_s(kind, -(layout::HEADER_POS_BIG as i64));
        let either = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, k, 1);
        let twice = self.b.ins().ishl_imm_s(k, 1);
        let order = self.b.ins().iadd_imm_s(twice, -1);
        self.b.ins().brif(either, result, &[BlockArg::Value(order)], helper, &[]);
        // A float: the integer converted, if exactly; compared as `x`
        // against `y` both ways round, one of which is the answer.
        self.enter(float);
        let p = self.exact_float(s, helper);
        let bits = self.b.ins().load(I64, mem(), cells, 8);
        let q = self.b.ins().bitcast(types::F64, MemFlagsData::new(), bits);
        let fcc = float_cc(op);
        let small_first = self.b.ins().fcmp(fcc, p, q);
        let small_second = self.b.ins().fcmp(fcc, q, p);
        let holds = self.b.ins().select(x_small, small_first, small_second);
        self.branch(holds, pc + 1, fail);
        // `s` against `o`, turned back to `x` against `y`.
        let order = self.b.append_block_param(result, I64);
        self.enter(result);
        let reversed = self.b.ins().ineg(order);
        let order = self.b.ins().select(x_small, order, reversed);
        let holds = self.b.ins().icmp_imm_s(int_cc(op), order, 0);
        self.branch(holds, pc + 1, fail);
        // `helper` is the caller's to fill.
    }

    /// The small integer word `w` as a float, if a float holds it exactly
    /// (within ±2^53, as `msc_num_compare` converts); else on to
    /// `otherwise`. Goes on in a block of its own.
    fn exact_float(&mut self, w: Value, otherwise: Block) -> Value {
        let exact = self.b.create_block();
        let v = self.b.ins().sshr_imm_s(w, i64::from(layout::TAG_BITS));
        let shifted = self.b.ins().iadd_imm_s(v, 1 << 53);
        let fits = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, shifted, 1 << 54);
        self.brif(fits, exact, otherwise);
        self.enter(exact);
        self.b.ins().fcvt_from_sint(types::F64, v)
    }

    /// The cells of the boxed term `w` points at, if it lies in the input
    /// or the run's heap (`Ctx::spaces`; literals have no words there) with
    /// the header and the word after it inside; else on to `otherwise`.
    /// Goes on in a block of its own.
    fn number_cells(&mut self, w: Value, otherwise: Block) -> NumberCells {
        let (decode, header) = (self.b.create_block(), self.b.create_block());
        let is_boxed = self.has_tag(w, layout::TAG_BOXED);
        self.brif(is_boxed, decode, otherwise);
        self.enter(decode);
        let space = self.b.ins().ushr_imm_s(w, i64::from(layout::SPACE_SHIFT));
        let space = self.b.ins().band_imm_s(space, layout::SPACE_MASK as i64);
        let entry = self.b.ins().ishl_imm_s(space, 4);
        let entry = self.b.ins().iadd(self.ctx, entry);
        let base = self.b.ins().load(I64, mem(), entry, abi::CTX_SPACES);
        let len = self.b.ins().load(I64, mem(), entry, abi::CTX_SPACES + 8);
        let at = self.b.ins().ushr_imm_s(w, i64::from(layout::OFFSET_SHIFT));
        let last = self.b.ins().iadd_imm_s(at, 1);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, last, len);
        self.brif(inside, header, otherwise);
        self.enter(header);
        let byte_offset = self.b.ins().ishl_imm_s(at, 3);
        let cells = self.b.ins().iadd(base, byte_offset);
        NumberCells { cells, at, len }
    }

    /// `TypeTest`: the tests a word's tag decides, inline; boxed terms go
    /// through `step`.
    fn type_test(&mut self, pc: usize, test: Bif, src: Reg, expect: bool, fail: Label) {
        let w = self.load(src);
        // Whether the test holds, for tests the tag alone decides.
        let holds = match test {
            Bif::IsAtom => Some(self.has_tag(w, layout::TAG_ATOM)),
            Bif::IsList => {
                let cons = self.has_tag(w, layout::TAG_CONS);
                let nil = self.is_word(w, Word::NIL);
                Some(self.b.ins().bor(cons, nil))
            }
            Bif::IsBoolean => {
                let t = self.is_word(w, TRUE);
                let f = self.is_word(w, FALSE);
                Some(self.b.ins().bor(t, f))
            }
            _ => None,
        };
        if let Some(holds) = holds {
            let (then, other) =
                if expect { (pc + 1, fail.index()) } else { (fail.index(), pc + 1) };
            self.brif(holds, self.blocks[then], self.blocks[other]);
            return;
        }
        // Otherwise: a small integer is an integer and a number; any other
        // immediate is none of the remaining types; boxed terms need `step`.
        let small_block = self.b.create_block();
        let not_small = self.b.create_block();
        let small = self.has_tag(w, layout::TAG_SMALL);
        self.brif(small, small_block, not_small);
        self.switch_off(small_block);
        let small_holds = matches!(test, Bif::IsInteger | Bif::IsNumber);
        self.jump_to(if small_holds == expect { pc + 1 } else { fail.index() });
        self.switch_off(not_small);
        let boxed = self.has_tag(w, layout::TAG_BOXED);
        let slow = self.b.create_block();
        let (immediate_then, _) =
            if expect { (fail.index(), pc + 1) } else { (pc + 1, fail.index()) };
        let (then, other) = if expect { (pc + 1, fail.index()) } else { (fail.index(), pc + 1) };
        if let Some(kinds) = header_kinds(test) {
            // A boxed term of the input: its header says.
            let in_input = self.b.create_block();
            self.brif(boxed, in_input, self.blocks[immediate_then]);
            self.switch_off(in_input);
            let space = self.b.ins().ushr_imm_s(w, i64::from(layout::SPACE_SHIFT));
            let space = self.b.ins().band_imm_s(space, layout::SPACE_MASK as i64);
            let header_block = self.b.create_block();
            self.brif(space, slow, header_block);
            self.switch_off(header_block);
            let base = self.input_cells(w, 0);
            let header = self.b.ins().load(I64, mem(), base, 0);
            let kind = self.b.ins().band_imm_s(header, layout::HEADER_KIND_MASK as i64);
            let mut holds = self.b.ins().iconst(types::I8, 0);
            for &k in kinds {
                let is = self.b.ins().icmp_imm_s(IntCC::Equal, kind, k as i64);
                holds = self.b.ins().bor(holds, is);
            }
            if test == Bif::IsBinary {
                // A bitstring whose bit length (the header's size) is whole bytes.
                let bits = self.b.ins().ushr_imm_s(header, i64::from(layout::HEADER_KIND_BITS));
                let partial = self.b.ins().band_imm_s(bits, 7);
                let whole = self.b.ins().icmp_imm_s(IntCC::Equal, partial, 0);
                holds = self.b.ins().band(holds, whole);
            }
            self.brif(holds, self.blocks[then], self.blocks[other]);
        } else {
            self.brif(boxed, slow, self.blocks[immediate_then]);
        }
        self.switch_off(slow);
        let test_index = self.b.ins().iconst(I64, test as u8 as i64);
        let answer = self.call_helper(HelperId::TypeTest, &[test_index, w]);
        self.branch_on_answer(answer, then, other);
    }

    // ---- Building blocks ----------------------------------------------------------

    /// Register `r`'s value: its constant, or its variable.
    fn load(&mut self, r: Reg) -> Value {
        match self.constants[r.index()] {
            Some(word) => self.b.ins().iconst(I64, word.to_bits() as i64),
            None => self.b.use_var(self.vars[r.index()]),
        }
    }

    /// Writes register `r` (its variable: see [`spill`](Self::spill)).
    fn store(&mut self, r: Reg, v: Value) {
        self.b.def_var(self.vars[r.index()], v);
        self.known[r.index()] = Known::default();
        if !self.on_main {
            self.written_off_main.push(r);
        }
    }

    /// Writes the registers `regs` to the register file, for a helper that
    /// reads them there (constants are always there).
    fn spill(&mut self, regs: &[Reg]) {
        let mut file = None;
        for &r in regs {
            if self.constants[r.index()].is_none() {
                let v = self.b.use_var(self.vars[r.index()]);
                let file = *file.get_or_insert_with(|| self.registers());
                self.b.ins().store(mem(), v, file, (r.index() * 8) as i32);
            }
        }
    }

    /// The address of the register file.
    fn registers(&mut self) -> Value {
        self.b.ins().load(I64, mem(), self.ctx, abi::CTX_REGISTERS)
    }

    /// Reads register `r` back from the register file, after a helper
    /// wrote it there.
    fn reload(&mut self, r: Reg) {
        let file = self.registers();
        let v = self.b.ins().load(I64, mem(), file, (r.index() * 8) as i32);
        self.store(r, v);
    }

    /// Forgets everything known about registers' cells (at jump targets,
    /// and after helpers that may write registers).
    fn forget_all(&mut self) {
        self.known.iter_mut().for_each(|k| *k = Known::default());
        self.arg_cells.clear();
        self.heap = None;
    }

    /// Goes on in `block`, whose only predecessor is the current block:
    /// still the op's main path if the current block was.
    fn continue_in(&mut self, block: Block) {
        self.enter(block);
    }

    /// Emits into `block` from now on. Code only jumps forward, and every
    /// jump to a block is emitted before the block itself, so the block is
    /// sealed at once (its predecessors are all known): reading a register
    /// there finds its value without placeholder parameters.
    fn enter(&mut self, block: Block) {
        self.b.switch_to_block(block);
        self.b.seal_block(block);
    }

    /// The input heap's address.
    fn input_heap(&mut self) -> Value {
        self.looping.get(&mut self.b, Loop::Heap)
    }

    /// The address of word `offset` of the input heap.
    fn input_address(&mut self, offset: Value) -> Value {
        let byte_offset = self.b.ins().ishl_imm_s(offset, 3);
        let heap = self.input_heap();
        self.b.ins().iadd(heap, byte_offset)
    }

    /// The input heap's length, in words.
    fn input_len(&mut self) -> Value {
        self.looping.get(&mut self.b, Loop::HeapLen)
    }

    /// Switches to a block off the op's main path.
    fn switch_off(&mut self, block: Block) {
        self.on_main = false;
        self.enter(block);
    }

    /// The address of the cells `w` points at in the input, after checking
    /// that the cell and the `more` after it are inside the input (leaving
    /// for [`abi::EXIT_BAD_INPUT`] if not).
    fn input_cells(&mut self, w: Value, more: u32) -> Value {
        let offset = self.b.ins().ushr_imm_s(w, i64::from(layout::OFFSET_SHIFT));
        let last = self.b.ins().iadd_imm_s(offset, i64::from(more));
        let len = self.input_len();
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, last, len);
        let read = self.b.create_block();
        self.brif_likely(inside, read, self.bad_input);
        self.continue_in(read);
        self.input_address(offset)
    }

    /// Cell `k` of the input term in register `r`: without a check if an
    /// earlier test checked it, else with one.
    fn cell(&mut self, r: Reg, k: u32) -> Value {
        let base = match self.known[r.index()].cells {
            Some((base, more)) if k <= more => base,
            _ => {
                let w = self.load(r);
                self.input_cells(w, k)
            }
        };
        self.b.ins().load(I64, mem(), base, (k * 8) as i32)
    }

    /// Word `k` of the cells `w` points at, in the input's heap; leaves the
    /// current block for [`abi::EXIT_BAD_INPUT`] if that is out of bounds.
    fn input_cell(&mut self, w: Value, k: i64) -> Value {
        let base = self.input_cells(w, k as u32);
        self.b.ins().load(I64, mem(), base, (k * 8) as i32)
    }

    /// Does `w` have tag `tag`? As `(w - tag) & mask == 0`, which x86
    /// makes a `lea` and a `test` (masking first takes a copy, an `and`
    /// and a `cmp`).
    fn has_tag(&mut self, w: Value, tag: u64) -> Value {
        let w = if tag == 0 { w } else { self.b.ins().iadd_imm_s(w, -(tag as i64)) };
        let t = self.b.ins().band_imm_s(w, layout::TAG_MASK as i64);
        self.b.ins().icmp_imm_s(IntCC::Equal, t, 0)
    }

    fn is_word(&mut self, w: Value, word: Word) -> Value {
        self.b.ins().icmp_imm_s(IntCC::Equal, w, word.to_bits() as i64)
    }

    /// Are both immediates (small integers, atoms, `[]`: bit 1 of the tag
    /// clear; lists and boxed terms have it set)?
    fn both_immediate(&mut self, x: Value, y: Value) -> Value {
        let either = self.either(x, y, |c| Word::from_bits(c).is_immediate());
        let bit = self.b.ins().band_imm_s(either, 0b10);
        self.b.ins().icmp_imm_s(IntCC::Equal, bit, 0)
    }

    /// Are both small integers (tag 0)?
    fn both_small(&mut self, x: Value, y: Value) -> Value {
        let either = self.either(x, y, |c| Word::from_bits(c).is_small());
        self.has_tag(either, layout::TAG_SMALL)
    }

    /// The bits of `x` or `y` for a tag test both must pass: a constant
    /// that passes it (`passes`) need not be tested.
    fn either(&mut self, x: Value, y: Value, passes: impl Fn(u64) -> bool) -> Value {
        match (self.constant(x).filter(|&c| passes(c)), self.constant(y).filter(|&c| passes(c))) {
            (Some(_), _) => y,
            (_, Some(_)) => x,
            _ => self.b.ins().bor(x, y),
        }
    }

    /// The value of `v`, if it is a constant.
    fn constant(&self, v: Value) -> Option<u64> {
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits() as u64),
            _ => None,
        }
    }

    /// The block of `label`, as the current op jumps there: past the
    /// beginning the next clause shares with this one (see `prefix.rs`).
    fn label(&self, label: Label) -> Block {
        match self.redirects[self.pc] {
            Some((from, to)) if from == label => self.blocks[to],
            _ => self.blocks[label.index()],
        }
    }

    fn jump_to(&mut self, pc: usize) {
        self.jump(self.blocks[pc]);
    }

    fn jump(&mut self, block: Block) {
        self.b.ins().jump(block, &[]);
    }

    fn brif(&mut self, cond: Value, then: Block, other: Block) {
        self.b.ins().brif(cond, then, &[], other, &[]);
    }

    /// [`brif`](Self::brif) where `then` is the likely way: Cranelift lays
    /// a branch's second target out right after it, so a comparison is
    /// turned round to make `then` second, the one the code falls
    /// through to (a taken branch costs more than one not taken).
    fn brif_likely(&mut self, cond: Value, then: Block, other: Block) {
        let compare = self.b.func.dfg.value_def(cond).inst().and_then(|inst| {
            match self.b.func.dfg.insts[inst] {
                InstructionData::IntCompare { opcode: Opcode::Icmp, cond, args } => {
                    Some((cond, args))
                }
                _ => None,
            }
        });
        match compare {
            Some((cc, [a, b])) => {
                let unlikely = self.b.ins().icmp(cc.complement(), a, b);
                self.brif(unlikely, other, then);
            }
            None => self.brif(cond, then, other),
        }
    }

    fn next(&mut self, pc: usize) {
        self.jump_to(pc + 1);
    }

    /// Goes on at op `then` if `cond`, else at `fail`.
    fn branch(&mut self, cond: Value, then: usize, fail: Label) {
        self.brif(cond, self.blocks[then], self.label(fail));
    }

    /// Calls a helper with `ctx` and `args`; its result.
    fn call_helper(&mut self, id: HelperId, args: &[Value]) -> Value {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(self.ctx);
        all.extend_from_slice(args);
        let helper = match self.helpers[id as usize] {
            Some(helper) => helper,
            None => *self.helpers[id as usize].insert((self.declare)(self.b.func, id)),
        };
        let call = self.b.ins().call(helper, &all);
        // A helper may have grown, and so moved, the heap.
        if id.may_build() {
            self.heap = None;
        }
        self.looping.reload(&mut self.b);
        self.b.inst_results(call)[0]
    }

    /// After a boolean helper: 1 goes to op `then`, 0 to op `other`.
    fn branch_on_answer(&mut self, answer: Value, then: usize, other: usize) {
        self.brif(answer, self.blocks[then], self.blocks[other]);
    }

    /// After a helper that makes a term: a failure does what `fail` says,
    /// a term goes to `dst` and the run goes on.
    fn word_result(&mut self, pc: usize, value: Value, dst: Reg, fail: Fail) {
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, value, abi::FAILED as i64);
        let ok = self.b.create_block();
        let failing = self.b.create_block();
        self.brif(failed, failing, ok);
        self.continue_in(ok);
        self.store(dst, value);
        self.next(pc);
        self.switch_off(failing);
        self.fail(pc, dst, fail);
    }

    /// A failing function: jump to the label (guards), or make `dst`
    /// `'EXIT'` and go on (bodies).
    fn fail(&mut self, pc: usize, dst: Reg, fail: Fail) {
        match fail {
            Fail::Jump(label) => self.jump(self.label(label)),
            Fail::Exit => {
                let exit = self.b.ins().iconst(I64, EXIT.to_bits() as i64);
                self.store(dst, exit);
                self.next(pc);
            }
        }
    }

    /// The region of the run's heap the code builds in (see
    /// [`abi::Ctx`]).
    fn region(&mut self) -> Region {
        if let Some(region) = self.heap {
            return region;
        }
        let heap = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_HEAP);
        let build = self.b.ins().load(I64, mem(), self.ctx, abi::CTX_BUILD);
        let offset = self.b.ins().ishl_imm_s(build, 3);
        let address = self.b.ins().iadd(heap, offset);
        let region = Region { address, build };
        if self.on_main {
            self.heap = Some(region);
        }
        region
    }

    /// The address of the region's words.
    fn heap_address(&mut self) -> Value {
        self.region().address
    }

    /// The word pointing at offset `at` of the region, in the run's heap.
    fn scratch_word(&mut self, tag: u64, at: u32) -> Value {
        let word = (u64::from(at) << layout::OFFSET_SHIFT)
            | ((Space::Scratch as u64) << layout::SPACE_SHIFT)
            | tag;
        let build = self.region().build;
        let offset = self.b.ins().ishl_imm_s(build, i64::from(layout::OFFSET_SHIFT));
        self.b.ins().iadd_imm_s(offset, word as i64)
    }

    /// The start and length of an operand list, as values.
    fn operands(&mut self, operands: Operands) -> (Value, Value) {
        let start = self.b.ins().iconst(I64, i64::from(operands.start));
        let len = self.b.ins().iconst(I64, i64::from(operands.len));
        (start, len)
    }

    /// Runs op `pc` with the interpreter's code, then goes where it says:
    /// on, or to one of `labels` (the op's own jump targets).
    fn call_step(&mut self, pc: usize, labels: &[Label]) {
        let op = &self.program.code()[pc];
        let reads: Vec<Reg> = op.reads(self.program.operands()).collect();
        let write = op.writes();
        self.spill(&reads);
        let pc_value = self.b.ins().iconst(I64, pc as i64);
        let code = self.call_helper(HelperId::Step, &[pc_value]);
        self.forget_all();
        if let Some(dst) = write {
            self.reload(dst);
        }
        let Some((&last, others)) = labels.split_last() else {
            return self.next(pc);
        };
        let on = self.b.ins().icmp_imm_s(IntCC::Equal, code, abi::STEP_NEXT as i64);
        let mut other = self.b.create_block();
        self.brif(on, self.blocks[pc + 1], other);
        for &label in others {
            self.switch_off(other);
            let here = self.b.ins().icmp_imm_s(IntCC::Equal, code, label.index() as i64);
            other = self.b.create_block();
            self.brif(here, self.label(label), other);
        }
        // Whatever else it says, it is the last label.
        self.switch_off(other);
        self.jump(self.label(last));
    }
}

/// The header kinds of the boxed terms type test `test` holds for, if the
/// kind alone (with the bit length, for `is_binary`) decides it.
fn header_kinds(test: Bif) -> Option<&'static [u64]> {
    use layout::*;
    Some(match test {
        Bif::IsInteger => &[HEADER_POS_BIG, HEADER_NEG_BIG],
        Bif::IsFloat => &[HEADER_FLOAT],
        Bif::IsNumber => &[HEADER_POS_BIG, HEADER_NEG_BIG, HEADER_FLOAT],
        Bif::IsTuple => &[HEADER_TUPLE],
        Bif::IsMap => &[HEADER_MAP],
        Bif::IsPid => &[HEADER_PID],
        Bif::IsPort => &[HEADER_PORT],
        Bif::IsReference => &[HEADER_REF],
        Bif::IsFunction1 => &[HEADER_EXPORT, HEADER_CLOSURE],
        Bif::IsBinary | Bif::IsBitstring => &[HEADER_BITS],
        _ => return None,
    })
}

/// The most heap words one clause may build in the code itself; clauses
/// that build more call helpers.
const MAX_CLAUSE_WORDS: u32 = 256;

/// Where each building op of each clause builds in the run's heap, and how
/// many words that takes at most (clauses reuse the same words: one run
/// finishes at most one clause's body).
pub(crate) fn heap_slots(program: &Program) -> (Vec<Option<u32>>, usize) {
    let code = program.code();
    let mut slots = vec![None; code.len()];
    let starts: Vec<usize> = program.clause_starts().iter().map(|l| l.index()).collect();
    let mut reserve = 0;
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(code.len());
        let words = |op: &Op| -> u32 {
            match *op {
                Op::MakeTuple { elements, .. } => 1 + elements.len,
                Op::MakeList { elements, .. } => 2 * elements.len,
                Op::MakeCons { .. } => 2,
                // A float result, or a bignum of up to two words (see
                // `arith::num_arith`).
                Op::Call { bif: Bif::Add | Bif::Sub | Bif::Mul | Bif::FloatDiv, .. } => 3,
                _ => 0,
            }
        };
        let total: u32 = code[start..end].iter().map(words).sum();
        if total == 0 || total > MAX_CLAUSE_WORDS {
            continue;
        }
        let mut at = 0;
        for (pc, op) in code.iter().enumerate().take(end).skip(start) {
            let n = words(op);
            if n > 0 {
                slots[pc] = Some(at);
                at += n;
            }
        }
        reserve = reserve.max(total as usize);
    }
    (slots, reserve)
}

/// Which ops start a clause or are jumped to.
pub(crate) fn jump_targets(program: &Program) -> Vec<bool> {
    let code = program.code();
    let mut targets = vec![false; code.len()];
    let labels = program.clause_starts().iter().copied().chain(code.iter().flat_map(Op::labels));
    for label in labels {
        if let Some(t) = targets.get_mut(label.index()) {
            *t = true;
        }
    }
    targets
}

/// The most arguments `is_arity` and `get_arg` walk the input list for in
/// the machine code; beyond, they read the arguments Rust loads.
pub(crate) const MAX_INLINE_ARGS: u32 = 32;

/// Does the machine code of `program` need a trace event's arguments
/// loaded in Rust (ops that read them through `step`)? If not, the input
/// list is all it reads.
pub(crate) fn needs_args(program: &Program) -> bool {
    program.code().iter().any(|op| match *op {
        Op::GetArgList { .. } => true,
        Op::IsArity { arity, .. } => arity > MAX_INLINE_ARGS,
        Op::GetArg { index, .. } => index >= MAX_INLINE_ARGS,
        Op::IsTuple { .. }
        | Op::GetElement { .. }
        | Op::IsElement { .. }
        | Op::IsCons { .. }
        | Op::GetHead { .. }
        | Op::GetTail { .. }
        | Op::IsMap { .. }
        | Op::GetMapValue { .. }
        | Op::IsWord { .. }
        | Op::IsExactEq { .. }
        | Op::Move { .. }
        | Op::Call { .. }
        | Op::Compare { .. }
        | Op::TypeTest { .. }
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
        | Op::Silent { .. }
        | Op::Succeed { .. }
        | Op::NoMatch => false,
    })
}

/// `op` on two small-integer words (or the order -1, 0, 1 against 0), as
/// a signed machine comparison; `=:=` and `=/=` as `==` and `/=`, which
/// they are for small integers.
fn int_cc(op: Cmp) -> IntCC {
    match op {
        Cmp::Lt => IntCC::SignedLessThan,
        Cmp::Le => IntCC::SignedLessThanOrEqual,
        Cmp::Gt => IntCC::SignedGreaterThan,
        Cmp::Ge => IntCC::SignedGreaterThanOrEqual,
        Cmp::Eq | Cmp::ExactEq => IntCC::Equal,
        Cmp::Ne | Cmp::ExactNe => IntCC::NotEqual,
    }
}

/// `op` on two floats (neither is NaN: Erlang has none), as a machine
/// comparison.
fn float_cc(op: Cmp) -> FloatCC {
    match op {
        Cmp::Lt => FloatCC::LessThan,
        Cmp::Le => FloatCC::LessThanOrEqual,
        Cmp::Gt => FloatCC::GreaterThan,
        Cmp::Ge => FloatCC::GreaterThanOrEqual,
        Cmp::Eq | Cmp::ExactEq => FloatCC::Equal,
        Cmp::Ne | Cmp::ExactNe => FloatCC::NotEqual,
    }
}

/// Which registers some `+ - * /` writes.
fn arithmetic_results(program: &Program) -> Vec<bool> {
    let mut computed = vec![false; program.registers()];
    for op in program.code() {
        if let Op::Call { bif: Bif::Add | Bif::Sub | Bif::Mul | Bif::FloatDiv, dst, .. } = *op {
            computed[dst.index()] = true;
        }
    }
    computed
}

/// The constant each register holds for the whole run: the program's
/// constants, unless an op writes their register.
fn constant_registers(program: &Program) -> Vec<Option<Word>> {
    let mut constants = vec![None; program.registers()];
    let first = program.first_constant();
    for (i, &word) in program.constants().iter().enumerate() {
        if let Some(c) = constants.get_mut(first + i) {
            *c = Some(word);
        }
    }
    for op in program.code() {
        if let Some(dst) = op.writes() {
            constants[dst.index()] = None;
        }
    }
    constants
}
