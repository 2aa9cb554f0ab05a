//! Guard and body values: calls of guard functions, comparisons, type
//! tests, `andalso`/`orelse` steps and `and`/`or`.

use super::number::int_cc;
use super::*;

impl Translator<'_, '_, '_> {
    /// `move`.
    pub(super) fn copy(&mut self, pc: usize, src: Reg, dst: Reg) {
        let v = self.load(src);
        self.store(dst, v);
        self.next(pc);
    }

    /// `call`, unless a comparison computes it (see `fuse.rs`).
    pub(super) fn call(&mut self, pc: usize, bif: Bif, args: [Reg; 3], dst: Reg, fail: Fail) {
        match self.fused[pc] {
            // Computed by the comparison it feeds.
            Fused::Deferred(_) => self.next(pc),
            Fused::No | Fused::Computes(_) => self.call_bif(pc, bif, args, dst, fail),
        }
    }

    /// `compare`, computing the arithmetic it was fused with, if any.
    pub(super) fn compare(&mut self, pc: usize, op: Cmp, a: Reg, b: Reg, fail: Label) {
        match self.fused[pc] {
            Fused::Computes(arith) => self.fused_compare(pc, arith, op, a, b, fail),
            Fused::No | Fused::Deferred(_) => self.compare_regs(pc, op, a, b, fail),
        }
    }

    /// `bool_branch`: two comparisons with the booleans.
    pub(super) fn bool_branch(
        &mut self,
        pc: usize,
        src: Reg,
        when: bool,
        target: Label,
        other: Label,
    ) {
        let (stop, go_on) = if when { (TRUE, FALSE) } else { (FALSE, TRUE) };
        let w = self.load(src);
        let stops = self.is_word(w, stop);
        let not_stop = self.b.create_block();
        self.brif(stops, self.label(target), not_stop);
        self.continue_in(not_stop);
        let goes_on = self.is_word(w, go_on);
        self.brif(goes_on, self.blocks[pc + 1], self.label(other));
    }

    /// `Call`: arithmetic on small integers inline; `+ - * /` on other
    /// numbers through `msc_num_arith`, which computes floats and bignums
    /// of up to 128 bits itself, building the result in the op's heap
    /// slot, and calls `msc_call` for the rest; `map_get` and
    /// `is_map_key` through `msc_map_get` (likewise); every other function
    /// through `msc_call`.
    pub(super) fn call_bif(&mut self, pc: usize, bif: Bif, args: [Reg; 3], dst: Reg, fail: Fail) {
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

    /// `Logic`: `and`/`or` of registers that must all be booleans.
    pub(super) fn logic(&mut self, pc: usize, op: LogicOp, args: Operands, dst: Reg, fail: Fail) {
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
    pub(super) fn compare_regs(&mut self, pc: usize, op: Cmp, a: Reg, b: Reg, fail: Label) {
        let inline_numbers = self.computed[a.index()] || self.computed[b.index()];
        self.compare_with(pc, op, a, b, fail, inline_numbers);
    }

    /// [`compare`](Self::compare), deciding a small integer against a
    /// bignum or a float inline if `inline_numbers`.
    pub(super) fn compare_with(
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

    /// `TypeTest`: the tests a word's tag decides, inline; boxed terms go
    /// through `step`.
    pub(super) fn type_test(&mut self, pc: usize, test: Bif, src: Reg, expect: bool, fail: Label) {
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
