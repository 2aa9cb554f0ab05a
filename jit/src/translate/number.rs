//! The number paths guards share: small-integer arithmetic with
//! overflow checks, the order of floats and bignums against small
//! integers, and arithmetic fused into the comparison that reads it
//! (`fuse.rs` decides which).

use super::*;

impl Translator<'_, '_, '_> {
    /// The heap offset of slot `at` of the region the code builds in.
    pub(super) fn slot_offset(&mut self, at: u32) -> Value {
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
    pub(super) fn helper_operands(&mut self, bif: Bif, args: [Reg; 2]) -> (Value, Value) {
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
    pub(super) fn fused_compare(
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
    /// small integer `t`, with the answer `msc_num_*_compare` gives
    /// without building the result (`arith::small_order`):
    ///
    /// * a float result, if finite, against `t` converted, if exactly
    ///   (within ±2^53);
    /// * a bignum of one or two words plus or minus `y`, if it stays a
    ///   bignum of the same sign (two words, or one of at least 2^61), or
    ///   times `y` (not 0), which only multiplies its magnitude: the sign
    ///   decides, as a bignum lies beyond every small integer.
    ///
    /// Anything else goes on to `helper`.
    pub(super) fn fused_number_order(
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
    pub(super) fn small_arith(&mut self, bif: Bif, x: Value, y: Value, slow: Block) -> Value {
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

    /// `x + y` or `x - y` (`bif`) as a word plus a constant, if one is a
    /// constant small integer (but for `c - y`, which negates `y`).
    pub(super) fn plus_constant(&self, bif: Bif, x: Value, y: Value) -> Option<(Value, i64)> {
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

    /// Comparison `op` (not `=:=` or `=/=`) of `x` and `y` when one is a small integer and the
    /// other a bignum (whose sign decides) or a float (compared as one,
    /// if the integer converts exactly: within ±2^53), with the answer
    /// `msc_num_compare` gives, in the input or the run's heap; else on to
    /// `helper`.
    pub(super) fn number_order(
        &mut self,
        pc: usize,
        op: Cmp,
        x: Value,
        y: Value,
        fail: Label,
        helper: Block,
    ) {
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
    /// (within ±2^53, where comparing it as a float gives the answer
    /// `msc_num_compare` gives); else on to `otherwise`. Goes on in a
    /// block of its own.
    pub(super) fn exact_float(&mut self, w: Value, otherwise: Block) -> Value {
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
    pub(super) fn number_cells(&mut self, w: Value, otherwise: Block) -> NumberCells {
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
}

/// `op` on two small-integer words (or the order -1, 0, 1 against 0), as
/// a signed machine comparison; `=:=` and `=/=` as `==` and `/=`, which
/// they are for small integers.
pub(crate) fn int_cc(op: Cmp) -> IntCC {
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
pub(super) fn float_cc(op: Cmp) -> FloatCC {
    match op {
        Cmp::Lt => FloatCC::LessThan,
        Cmp::Le => FloatCC::LessThanOrEqual,
        Cmp::Gt => FloatCC::GreaterThan,
        Cmp::Ge => FloatCC::GreaterThanOrEqual,
        Cmp::Eq | Cmp::ExactEq => FloatCC::Equal,
        Cmp::Ne | Cmp::ExactNe => FloatCC::NotEqual,
    }
}
