//! The emission primitives every lowering uses: registers as SSA
//! variables (stored to the register file only when a helper needs them),
//! bounds-checked reads of the input, tag tests, branches, helper calls.

use super::*;

impl Translator<'_, '_, '_> {
    // ---- Building blocks ----------------------------------------------------------

    /// Register `r`'s value: its constant, or its variable.
    pub(super) fn load(&mut self, r: Reg) -> Value {
        match self.constants[r.index()] {
            Some(word) => self.b.ins().iconst(I64, word.to_bits() as i64),
            None => self.b.use_var(self.vars[r.index()]),
        }
    }

    /// Writes register `r` (its variable: see [`spill`](Self::spill)).
    pub(super) fn store(&mut self, r: Reg, v: Value) {
        self.b.def_var(self.vars[r.index()], v);
        self.known[r.index()] = Known::default();
        if !self.on_main {
            self.written_off_main.push(r);
        }
    }

    /// Writes the registers `regs` to the register file, for a helper that
    /// reads them there (constants are always there).
    pub(super) fn spill(&mut self, regs: &[Reg]) {
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
    pub(super) fn registers(&mut self) -> Value {
        self.b.ins().load(I64, mem(), self.ctx, abi::CTX_REGISTERS)
    }

    /// Reads register `r` back from the register file, after a helper
    /// wrote it there.
    pub(super) fn reload(&mut self, r: Reg) {
        let file = self.registers();
        let v = self.b.ins().load(I64, mem(), file, (r.index() * 8) as i32);
        self.store(r, v);
    }

    /// Forgets everything known about registers' cells (at jump targets,
    /// and after helpers that may write registers).
    pub(super) fn forget_all(&mut self) {
        self.known.iter_mut().for_each(|k| *k = Known::default());
        self.arg_cells.clear();
        self.heap = None;
    }

    /// Goes on in `block`, whose only predecessor is the current block:
    /// still the op's main path if the current block was.
    pub(super) fn continue_in(&mut self, block: Block) {
        self.enter(block);
    }

    /// Emits into `block` from now on. Code only jumps forward, and every
    /// jump to a block is emitted before the block itself, so the block is
    /// sealed at once (its predecessors are all known): reading a register
    /// there finds its value without placeholder parameters.
    pub(super) fn enter(&mut self, block: Block) {
        self.b.switch_to_block(block);
        self.b.seal_block(block);
    }

    /// The input heap's address.
    pub(super) fn input_heap(&mut self) -> Value {
        self.looping.get(&mut self.b, Loop::Heap)
    }

    /// The address of word `offset` of the input heap.
    pub(super) fn input_address(&mut self, offset: Value) -> Value {
        let byte_offset = self.b.ins().ishl_imm_s(offset, 3);
        let heap = self.input_heap();
        self.b.ins().iadd(heap, byte_offset)
    }

    /// The input heap's length, in words.
    pub(super) fn input_len(&mut self) -> Value {
        self.looping.get(&mut self.b, Loop::HeapLen)
    }

    /// Switches to a block off the op's main path.
    pub(super) fn switch_off(&mut self, block: Block) {
        self.on_main = false;
        self.enter(block);
    }

    /// The address of the cells `w` points at in the input, after checking
    /// that the cell and the `more` after it are inside the input (leaving
    /// for [`abi::EXIT_BAD_INPUT`] if not).
    pub(super) fn input_cells(&mut self, w: Value, more: u32) -> Value {
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
    pub(super) fn cell(&mut self, r: Reg, k: u32) -> Value {
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
    pub(super) fn input_cell(&mut self, w: Value, k: i64) -> Value {
        let base = self.input_cells(w, k as u32);
        self.b.ins().load(I64, mem(), base, (k * 8) as i32)
    }

    /// Does `w` have tag `tag`? As `(w - tag) & mask == 0`, which x86
    /// makes a `lea` and a `test` (masking first takes a copy, an `and`
    /// and a `cmp`).
    pub(super) fn has_tag(&mut self, w: Value, tag: u64) -> Value {
        let w = if tag == 0 { w } else { self.b.ins().iadd_imm_s(w, -(tag as i64)) };
        let t = self.b.ins().band_imm_s(w, layout::TAG_MASK as i64);
        self.b.ins().icmp_imm_s(IntCC::Equal, t, 0)
    }

    pub(super) fn is_word(&mut self, w: Value, word: Word) -> Value {
        self.b.ins().icmp_imm_s(IntCC::Equal, w, word.to_bits() as i64)
    }

    /// Are both immediates (small integers, atoms, `[]`: bit 1 of the tag
    /// clear; lists and boxed terms have it set)?
    pub(super) fn both_immediate(&mut self, x: Value, y: Value) -> Value {
        let either = self.either(x, y, |c| Word::from_bits(c).is_immediate());
        let bit = self.b.ins().band_imm_s(either, 0b10);
        self.b.ins().icmp_imm_s(IntCC::Equal, bit, 0)
    }

    /// Are both small integers (tag 0)?
    pub(super) fn both_small(&mut self, x: Value, y: Value) -> Value {
        let either = self.either(x, y, |c| Word::from_bits(c).is_small());
        self.has_tag(either, layout::TAG_SMALL)
    }

    /// The bits of `x` or `y` for a tag test both must pass: a constant
    /// that passes it (`passes`) need not be tested.
    pub(super) fn either(&mut self, x: Value, y: Value, passes: impl Fn(u64) -> bool) -> Value {
        match (self.constant(x).filter(|&c| passes(c)), self.constant(y).filter(|&c| passes(c))) {
            (Some(_), _) => y,
            (_, Some(_)) => x,
            _ => self.b.ins().bor(x, y),
        }
    }

    /// The value of `v`, if it is a constant.
    pub(super) fn constant(&self, v: Value) -> Option<u64> {
        let inst = self.b.func.dfg.value_def(v).inst()?;
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits() as u64),
            _ => None,
        }
    }

    /// The block of `label`, as the current op jumps there: past the
    /// beginning the next clause shares with this one (see `prefix.rs`).
    pub(super) fn label(&self, label: Label) -> Block {
        match self.redirects[self.pc] {
            Some((from, to)) if from == label => self.blocks[to],
            _ => self.blocks[label.index()],
        }
    }

    pub(super) fn jump_to(&mut self, pc: usize) {
        self.jump(self.blocks[pc]);
    }

    pub(super) fn jump(&mut self, block: Block) {
        self.b.ins().jump(block, &[]);
    }

    pub(super) fn brif(&mut self, cond: Value, then: Block, other: Block) {
        self.b.ins().brif(cond, then, &[], other, &[]);
    }

    /// [`brif`](Self::brif) where `then` is the likely way: Cranelift lays
    /// a branch's second target out right after it, so a comparison is
    /// turned round to make `then` second, the one the code falls
    /// through to (a taken branch costs more than one not taken).
    pub(super) fn brif_likely(&mut self, cond: Value, then: Block, other: Block) {
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

    pub(super) fn next(&mut self, pc: usize) {
        self.jump_to(pc + 1);
    }

    /// Goes on at op `then` if `cond`, else at `fail`.
    pub(super) fn branch(&mut self, cond: Value, then: usize, fail: Label) {
        self.brif(cond, self.blocks[then], self.label(fail));
    }

    /// Calls a helper with `ctx` and `args`; its result.
    pub(super) fn call_helper(&mut self, id: HelperId, args: &[Value]) -> Value {
        debug_assert_eq!(args.len(), id.helper().params, "{id:?}'s arguments");
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
    pub(super) fn branch_on_answer(&mut self, answer: Value, then: usize, other: usize) {
        self.brif(answer, self.blocks[then], self.blocks[other]);
    }

    /// After a helper that makes a term: a failure does what `fail` says,
    /// a term goes to `dst` and the run goes on.
    pub(super) fn word_result(&mut self, pc: usize, value: Value, dst: Reg, fail: Fail) {
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
    pub(super) fn fail(&mut self, pc: usize, dst: Reg, fail: Fail) {
        match fail {
            Fail::Jump(label) => self.jump(self.label(label)),
            Fail::Exit => {
                let exit = self.b.ins().iconst(I64, EXIT.to_bits() as i64);
                self.store(dst, exit);
                self.next(pc);
            }
        }
    }

    /// Runs op `pc` with the interpreter's code, then goes where it says:
    /// on, or to one of `labels` (the op's own jump targets).
    pub(super) fn call_step(&mut self, pc: usize, labels: &[Label]) {
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
