//! The ends of a run: a match buffered or returned to Rust, a no-match,
//! and the buffer's block.

use super::*;

impl Translator<'_, '_, '_> {
    /// `succeed`: the result is buffered, unless Rust must see it now (then
    /// Rust reads it in the register file).
    pub(super) fn succeed(&mut self, result: Reg) {
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

    /// `no_match`: Rust hears of it only to clean up, or when it asked to
    /// (see `Effects`).
    pub(super) fn no_match(&mut self) {
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

    /// Returns `code` to Rust, leaving the input's index in the `Ctx`.
    pub(super) fn exit(&mut self, code: u64) {
        let i = self.b.use_var(self.index);
        self.b.ins().store(mem(), i, self.ctx, abi::CTX_INDEX);
        let code = self.b.ins().iconst(I64, code as i64);
        self.b.ins().return_(&[code]);
    }

    /// The block every buffered outcome goes through: the input's index
    /// and `pushed` into the next slot of `Ctx::results`, the next region
    /// to build in, and on with the next input, or back to Rust when the
    /// buffer is full.
    pub(super) fn push_block(&mut self) {
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
}
