//! Head tests and reads: the input taken apart inline (tuple and list
//! cells, map lookups of constant keys, a trace event's arguments).

use super::*;

impl Translator<'_, '_, '_> {
    /// `is_tuple`: a boxed word whose header, read once with a bounds check
    /// covering every element, is the tuple header of `arity`.
    pub(super) fn is_tuple(&mut self, pc: usize, src: Reg, arity: u32, fail: Label) {
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

    /// `get_element`: a cell of the tuple `is_tuple` found.
    pub(super) fn get_element(&mut self, pc: usize, src: Reg, index: u32, dst: Reg) {
        let v = self.cell(src, 1 + index);
        self.store(dst, v);
        self.next(pc);
    }

    /// `is_element`: a cell of the tuple compared with an immediate.
    pub(super) fn is_element(&mut self, pc: usize, src: Reg, index: u32, word: Word, fail: Label) {
        let v = self.cell(src, 1 + index);
        let ok = self.is_word(v, word);
        self.branch(ok, pc + 1, fail);
    }

    /// `is_cons`: the tag, and the cell's address for `get_head`/`get_tail`.
    pub(super) fn is_cons(&mut self, pc: usize, src: Reg, fail: Label) {
        let w = self.load(src);
        let ok = self.has_tag(w, layout::TAG_CONS);
        let cell = self.b.create_block();
        self.brif(ok, cell, self.label(fail));
        self.continue_in(cell);
        let base = self.input_cells(w, 1);
        self.known[src.index()].cells = Some((base, 1));
        self.next(pc);
    }

    /// `get_head`.
    pub(super) fn get_head(&mut self, pc: usize, src: Reg, dst: Reg) {
        let v = self.cell(src, 0);
        self.store(dst, v);
        self.next(pc);
    }

    /// `get_tail`.
    pub(super) fn get_tail(&mut self, pc: usize, src: Reg, dst: Reg) {
        let v = self.cell(src, 1);
        self.store(dst, v);
        self.next(pc);
    }

    /// `is_map`: a boxed word whose header is a map's of at least `size`
    /// keys, remembered for `get_map_value`.
    pub(super) fn is_map(&mut self, pc: usize, src: Reg, size: u32, fail: Label) {
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
        let ok = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, i64::from(size));
        if self.on_main {
            let offset = self.b.ins().ushr_imm_s(w, i64::from(layout::OFFSET_SHIFT));
            let base = self.input_address(offset);
            self.known[src.index()].map = Some((base, n));
        }
        self.branch(ok, pc + 1, fail);
    }

    /// `is_word`: one machine comparison.
    pub(super) fn test_word(&mut self, pc: usize, src: Reg, word: Word, fail: Label) {
        let w = self.load(src);
        let ok = self.is_word(w, word);
        self.branch(ok, pc + 1, fail);
    }

    /// `is_exact_eq`.
    pub(super) fn is_exact_eq(&mut self, pc: usize, a: Reg, b: Reg, fail: Label) {
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

    /// `is_arity`: walks the input list inline up to [`MAX_INLINE_ARGS`]
    /// arguments, else the interpreter's code.
    pub(super) fn is_arity(&mut self, pc: usize, arity: u32, test: Arity, fail: Label) {
        if arity > MAX_INLINE_ARGS {
            return self.call_step(pc, &[fail]);
        }
        // `arity` list cells (an improper list counts up to its last
        // cell), remembering where they are; then, for an exact test, no
        // more.
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
        match test {
            Arity::Exact => {
                let more = self.has_tag(w, layout::TAG_CONS);
                self.brif(more, self.label(fail), self.blocks[pc + 1]);
            }
            Arity::AtLeast => self.jump(self.blocks[pc + 1]),
        }
        if self.on_main {
            self.arg_cells = cells;
        }
    }

    /// `get_map_value`: a constant immediate key in a map `is_map` found is
    /// looked up inline; any other lookup calls a helper.
    pub(super) fn get_map_value(&mut self, pc: usize, src: Reg, key: Reg, dst: Reg, fail: Label) {
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

    /// `get_arg`: a cell `is_arity` found (or found again), up to
    /// [`MAX_INLINE_ARGS`]; beyond, the interpreter's code.
    pub(super) fn get_arg(&mut self, pc: usize, index: u32, dst: Reg) {
        if index >= MAX_INLINE_ARGS {
            return self.call_step(pc, &[]);
        }
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

    /// `GetMapValue` of the constant immediate in `key` in the map of the
    /// input in `src` (at `base`, with `n` keys), a map of up to 8 keys:
    /// a loop comparing keys as words (as `Frame::map_value` does for
    /// them); larger maps through `msc_map_value`.
    pub(super) fn small_map_value(
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
}
