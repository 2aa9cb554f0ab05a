//! Building tuples and lists in the run's heap, in the slots
//! [`heap_slots`] sets aside for each clause (or by helpers, past them).

use super::*;

impl Translator<'_, '_, '_> {
    /// `make_tuple`: in the op's heap slot, else by a helper.
    pub(super) fn make_tuple(&mut self, pc: usize, elements: Operands, dst: Reg) {
        match self.slots[pc] {
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
        }
    }

    /// `make_list`: in the op's heap slot, else by a helper.
    pub(super) fn make_list(&mut self, pc: usize, elements: Operands, dst: Reg) {
        match self.slots[pc] {
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
        }
    }

    /// `make_cons`: in the op's heap slot, else by a helper.
    pub(super) fn make_cons(&mut self, pc: usize, head: Reg, tail: Reg, dst: Reg) {
        match self.slots[pc] {
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
        }
    }

    /// The region of the run's heap the code builds in (see
    /// [`abi::Ctx`]).
    pub(super) fn region(&mut self) -> Region {
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
    pub(super) fn heap_address(&mut self) -> Value {
        self.region().address
    }

    /// The word pointing at offset `at` of the region, in the run's heap.
    pub(super) fn scratch_word(&mut self, tag: u64, at: u32) -> Value {
        let word = (u64::from(at) << layout::OFFSET_SHIFT)
            | ((Space::Scratch as u64) << layout::SPACE_SHIFT)
            | tag;
        let build = self.region().build;
        let offset = self.b.ins().ishl_imm_s(build, i64::from(layout::OFFSET_SHIFT));
        self.b.ins().iadd_imm_s(offset, word as i64)
    }

    /// The start and length of an operand list, as values.
    pub(super) fn operands(&mut self, operands: Operands) -> (Value, Value) {
        let start = self.b.ins().iconst(I64, i64::from(operands.start));
        let len = self.b.ins().iconst(I64, i64::from(operands.len));
        (start, len)
    }
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
