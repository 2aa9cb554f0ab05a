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
//! interpreter's definition through [`abi::step`]; the
//! inline forms also fall back to `step` for anything off their fast path.
//! Every op is named in one exhaustive `match`.
//!
//! # Layout
//!
//! * this file: the entry ([`translate`]), the translator's state and its
//!   per-op dispatch, one line an op;
//! * `head.rs`: the head tests and reads, `guard.rs` guard and body values
//!   (calls, comparisons, type tests, `and`/`or`), `number.rs` the number
//!   paths they share (small-integer arithmetic, float and bignum orders,
//!   fused arithmetic), `build.rs` building tuples and lists in the run's
//!   heap, `end.rs` the ends of a run (`succeed`, `no_match`, the buffer);
//! * `emit.rs`: the emission primitives every lowering uses (registers as
//!   SSA variables, input reads, tags, branches, helper calls);
//! * `analysis.rs`: what the translator works out of the program first
//!   (jump targets, constant registers, arithmetic results, whether Rust
//!   loads a trace event's arguments).

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

use crate::abi;
use crate::divide::Magic;
use crate::effects::{Effects, effects};
use crate::fuse::{self, Fused};
use crate::helpers::HelperId;
use crate::looping::{Loop, Looping};
use crate::prefix;

const I64: types::Type = types::I64;
const TRUE: Word = Word::atom(matchspec::term::Atom::TRUE);
const FALSE: Word = Word::atom(matchspec::term::Atom::FALSE);
const EXIT: Word = Word::atom(matchspec::term::Atom::EXIT);

/// The signature of the entry function (see [`abi`]).
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
/// must have passed `program::validate` (the IR's `Program::verify` and
/// the JIT's size limit).
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
    /// [`Frame::reserve_scratch`](matchspec::engine_internals::Frame::reserve_scratch)).
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

/// What `is_arity` asks of the number of arguments.
#[derive(Clone, Copy, Debug)]
enum Arity {
    /// `is_arity`: exactly this many.
    Exact,
    /// `is_arity_at_least`: this many or more (a prefix head).
    AtLeast,
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

mod analysis;
mod build;
mod emit;
mod end;
mod guard;
mod head;
mod number;

pub(crate) use number::int_cc;

pub(crate) use crate::effects::{MAX_INLINE_ARGS, needs_args};
pub(crate) use analysis::jump_targets;
pub(crate) use build::heap_slots;

use analysis::{arithmetic_results, constant_registers};

impl Translator<'_, '_, '_> {
    /// Emits op `pc` into the current block: each op's lowering.
    fn op(&mut self, pc: usize) {
        match self.program.code()[pc] {
            Op::IsArity { arity, fail } => self.is_arity(pc, arity, Arity::Exact, fail),
            Op::IsArityAtLeast { arity, fail } => self.is_arity(pc, arity, Arity::AtLeast, fail),
            Op::GetArg { index, dst } => self.get_arg(pc, index, dst),
            Op::GetArgList { .. } => self.call_step(pc, &[]),
            Op::IsTuple { src, arity, fail } => self.is_tuple(pc, src, arity, fail),
            Op::GetElement { src, index, dst } => self.get_element(pc, src, index, dst),
            Op::IsElement { src, index, word, fail } => self.is_element(pc, src, index, word, fail),
            Op::IsCons { src, fail } => self.is_cons(pc, src, fail),
            Op::GetHead { src, dst } => self.get_head(pc, src, dst),
            Op::GetTail { src, dst } => self.get_tail(pc, src, dst),
            Op::IsMap { src, size, fail } => self.is_map(pc, src, size, fail),
            Op::GetMapValue { src, key, dst, fail } => self.get_map_value(pc, src, key, dst, fail),
            Op::IsWord { src, word, fail } => self.test_word(pc, src, word, fail),
            Op::IsExactEq { a, b, fail } => self.is_exact_eq(pc, a, b, fail),
            Op::Move { src, dst } => self.copy(pc, src, dst),
            Op::Call { bif, args, dst, fail } => self.call(pc, bif, args, dst, fail),
            Op::Compare { op, a, b, fail } => self.compare(pc, op, a, b, fail),
            Op::TypeTest { test, src, expect, fail } => self.type_test(pc, test, src, expect, fail),
            Op::BoolBranch { src, when, target, other } => {
                self.bool_branch(pc, src, when, target, other)
            }
            Op::Logic { op, args, dst, fail } => self.logic(pc, op, args, dst, fail),
            Op::Jump { target } => self.jump(self.label(target)),
            Op::MakeTuple { elements, dst } => self.make_tuple(pc, elements, dst),
            Op::MakeCons { head, tail, dst } => self.make_cons(pc, head, tail, dst),
            Op::MakeList { elements, dst } => self.make_list(pc, elements, dst),
            // Maps and trace actions: the interpreter's code.
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
            Op::Succeed { result } => self.succeed(result),
            Op::NoMatch => self.no_match(),
        }
    }
}
