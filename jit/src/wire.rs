//! [`WireCode`]: runs of entries that a wire program decides, as machine
//! code ([`ScanCode`]).
//!
//! One function per width of a length, with and without a lead byte,
//! loops over the entries at hand (the lead's value is an argument). For
//! each it reads the lead and the length, then scans the term, a small
//! tuple, one block per element: where its need reads (the element's first 8 bytes, or its
//! integer) and how long it is (the plain scan's scalars: the tags whose
//! size is fixed, and atoms of at most 8 ASCII bytes by one masked word).
//! The tests' constants are in the instructions, and their answers are
//! computed without branches: whether an entry matches is data, which no
//! branch predictor learns. A rejected entry is passed; a match is written
//! down and passed.
//!
//! Anything else ends the run where it is, for the usual path to read: an
//! element of another kind, a test the code leaves undecided, a term that
//! does not end where its entry does. So the code decides only terms made
//! of scalars, and reads them without a check per read: it scans an entry
//! only if the bytes at hand reach [`unchecked_reach`] past its term's
//! start, which no scan of scalars goes beyond, and checks only where the
//! scan ended.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, MemFlagsData, Signature, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};
use matchspec::engine_internals::scan::{self, tag};
use matchspec::etf::VERSION;
use matchspec::ir::Cmp;
use matchspec::wire::{
    AtomWord, Layout, NeedResult, NeedTest, RunMatch, RunPassed, SMALL_ARITY, ScanCode, WireProgram,
};

use crate::JitError;
use crate::module::{self, codegen};
use crate::translate::int_cc;

/// A run, made for one width of a length, with or without a lead: the bytes
/// and their length, the lead byte, the most bytes an entry may take, the most
/// entries to pass, where to write matches and room for how many, and where
/// to write how many entries and matches it passed; returns how many bytes
/// it passed.
type RunFn =
    unsafe extern "C" fn(*const u8, u64, u64, u64, u64, *mut RunMatch, u64, *mut [u64; 2]) -> u64;

/// The layouts a run is made for, in the order of [`WireCode`]'s runs:
/// each width of a length ([`Layout::length_bytes`]), without a lead and
/// with one.
const SHAPES: [(u8, bool); 8] =
    [(0, false), (0, true), (1, false), (1, true), (2, false), (2, true), (4, false), (4, true)];

/// How far past a term's start the scan of a small tuple of `arity`
/// elements may read: the version byte, tag and arity, then at most a
/// scan's window an element (the longest element the code measures: any
/// other ends the run first), each read within a window of the element's
/// start; with room to spare.
fn unchecked_reach(arity: usize) -> i64 {
    16 + (scan::WINDOW * arity) as i64
}

/// A wire program's runs as machine code, owning it. Each layout's run is
/// compiled the first time a run of that layout is asked for: a stream
/// reads one layout, and a compiled run takes some milliseconds.
pub struct WireCode {
    /// What the runs decide with: the needs' tests by element, and their
    /// result.
    tests: Box<[Option<NeedTest>]>,
    result: Option<NeedResult>,
    /// Each layout's run, in the order of [`SHAPES`], once compiled
    /// (`None`: it did not compile, and that layout's runs pass nothing).
    runs: [OnceLock<Option<RunFn>>; 8],
    /// Owns the code memory, freed in `drop`: runs are defined in it one
    /// at a time, under the lock.
    module: Mutex<Option<JITModule>>,
}

// SAFETY: the module is only touched under its lock (or in `drop`, with
// exclusive access); the runs' code is immutable once finalized and
// reentrant (its only state is its arguments).
unsafe impl Send for WireCode {}
// SAFETY: as for `Send`: through `&WireCode` the module is used under its
// lock, and the finished code is only called.
unsafe impl Sync for WireCode {}

impl std::fmt::Debug for WireCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireCode").finish_non_exhaustive()
    }
}

impl Drop for WireCode {
    fn drop(&mut self) {
        let module = self.module.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(module) = module.take() {
            // SAFETY: `runs` point into this module's memory and are
            // private to this value, which is being dropped.
            unsafe { module.free_memory() };
        }
    }
}

impl WireCode {
    /// `wire` passing its runs with machine code, if its needs are by
    /// element ([`Needs::by_element`]) and a JIT module can be made; else
    /// `wire` as it is.
    pub fn attach(wire: &WireProgram) -> WireProgram {
        match WireCode::compile(wire) {
            Ok(Some(code)) => wire.with_scan_code(Arc::new(code)),
            _ => wire.clone(),
        }
    }

    /// The code for `wire`'s runs, each compiled when first run, or `None`
    /// if its needs are not by element of a tuple of 1 to [`SMALL_ARITY`]
    /// elements (or this machine is big-endian: the code reads words as
    /// little-endian ones).
    pub fn compile(wire: &WireProgram) -> Result<Option<WireCode>, JitError> {
        if cfg!(target_endian = "big") {
            return Ok(None);
        }
        let needs = wire.needs();
        let Some(tests) = needs.by_element().filter(|t| (1..=SMALL_ARITY).contains(&t.len()))
        else {
            return Ok(None);
        };
        Ok(Some(WireCode {
            tests: tests.into(),
            result: needs.result(),
            runs: Default::default(),
            module: Mutex::new(Some(module::bare()?)),
        }))
    }

    /// The run of the layout `shape` (an index of [`SHAPES`]), compiled
    /// now if it was not yet; `None` if it does not compile. As for
    /// programs, compiling never fails the spec: even a panic in Cranelift
    /// leaves the entries to the usual path.
    fn run(&self, shape: usize) -> Option<RunFn> {
        *self.runs[shape].get_or_init(|| {
            let mut module = self.module.lock().unwrap_or_else(PoisonError::into_inner);
            let module = module.as_mut()?;
            let (width, lead) = SHAPES[shape];
            let plan = Plan { tests: &self.tests, result: self.result };
            let define = AssertUnwindSafe(|| -> Result<RunFn, JitError> {
                let id = define_run(module, plan, width, lead)?;
                module.finalize_definitions().map_err(codegen)?;
                let code = module.get_finalized_function(id);
                // SAFETY: `code` was just defined and finalized with
                // `run_signature`: pointers and 64-bit integers in, one
                // 64-bit integer out, in the platform's default calling
                // convention, which is `RunFn`'s.
                Ok(unsafe { std::mem::transmute::<*const u8, RunFn>(code) })
            });
            std::panic::catch_unwind(define).ok()?.ok()
        })
    }
}

impl ScanCode for WireCode {
    #[inline]
    fn pass(
        &self,
        bytes: &[u8],
        layout: Layout,
        max_entry: usize,
        most: u64,
        matches: &mut [RunMatch],
    ) -> RunPassed {
        let shape = (layout.length_bytes, layout.lead.is_some());
        let Some(run) = SHAPES.iter().position(|&s| s == shape).and_then(|i| self.run(i)) else {
            return RunPassed::default();
        };
        let lead = layout.lead.map_or(0, u64::from);
        let mut counts = [0; 2];
        // SAFETY: the code reads only `bytes`: an entry's lead and length
        // after checking that they are at hand, and a term's bytes after
        // checking that `unchecked_reach` of them are; it writes only
        // `counts` and the first `matches.len()` of `matches`.
        let passed = unsafe {
            run(
                bytes.as_ptr(),
                bytes.len() as u64,
                lead,
                max_entry as u64,
                most,
                matches.as_mut_ptr(),
                matches.len() as u64,
                &mut counts,
            )
        };
        RunPassed { bytes: passed as usize, entries: counts[0], matches: counts[1] as usize }
    }
}

/// What a run decides with: the need of each element of the input, and
/// the needs' result.
#[derive(Clone, Copy)]
struct Plan<'n> {
    tests: &'n [Option<NeedTest>],
    result: Option<NeedResult>,
}

/// Defines the run of `plan` over entries whose terms' lengths take
/// `width` bytes, after a lead byte if `lead`.
fn define_run(
    module: &mut JITModule,
    plan: Plan<'_>,
    width: u8,
    lead: bool,
) -> Result<FuncId, JitError> {
    let mut ctx = module.make_context();
    ctx.func.signature = run_signature(module);
    let mut fbc = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
    build_run(&mut b, plan, width, lead);
    b.seal_all_blocks();
    b.finalize(module.target_config());
    let id = module.declare_anonymous_function(&ctx.func.signature).map_err(codegen)?;
    module.define_function(id, &mut ctx).map_err(codegen)?;
    Ok(id)
}

/// [`RunFn`]'s signature: eight 64-bit parameters (pointers are 64 bits
/// wherever Cranelift runs us), one result.
fn run_signature(module: &JITModule) -> Signature {
    let mut sig = module.make_signature();
    sig.params.extend(std::iter::repeat_n(AbiParam::new(I64), 8));
    sig.returns.push(AbiParam::new(I64));
    sig
}

/// Reads of the bytes: checked before (so never trapping), unaligned.
fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// The run of `plan` over entries whose terms' lengths take `width` bytes,
/// after a lead byte if `has_lead` ([`RunFn`]).
fn build_run(b: &mut FunctionBuilder<'_>, plan: Plan<'_>, width: u8, has_lead: bool) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let &[bytes, len, lead, max_entry, most, matches, room, counts] = b.block_params(entry) else {
        unreachable!("`run_signature` has eight parameters")
    };
    let [head, more, scan, decided, next_entry, exit] = std::array::from_fn(|_| b.create_block());
    // Where the entry starts, and entries and matches passed.
    let [at, count, matched] = std::array::from_fn(|_| b.declare_var(I64));
    let zero = b.ins().iconst(I64, 0);
    for var in [at, count, matched] {
        b.def_var(var, zero);
    }
    // The bytes before a term.
    let lead_len = i64::from(has_lead);
    let prefix = lead_len + i64::from(width);
    b.ins().jump(head, &[]);

    b.switch_to_block(head);
    let start = b.use_var(at);
    let done = b.use_var(count);
    let enough = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, done, most);
    b.ins().brif(enough, exit, &[], more, &[]);
    b.switch_to_block(more);
    let rest = b.ins().isub(len, start);
    let address = b.ins().iadd(bytes, start);
    // The term's start and, if given, its length, big-endian after the
    // lead; or the end of the run, if they are not at hand or the lead is
    // another.
    let (term, framed_len) = if prefix == 0 {
        (address, None)
    } else {
        let [prefixed, after] = std::array::from_fn(|_| b.create_block());
        let short = b.ins().icmp_imm_s(IntCC::UnsignedLessThan, rest, prefix);
        b.ins().brif(short, exit, &[], prefixed, &[]);
        b.switch_to_block(prefixed);
        // Each a reason to end the run here.
        let mut outs = Vec::with_capacity(2);
        if has_lead {
            let first = b.ins().uload8(I64, mem(), address, 0);
            outs.push(b.ins().icmp(IntCC::NotEqual, first, lead));
        }
        let n = match width {
            0 => None,
            1 => Some(b.ins().uload8(I64, mem(), address, lead_len as i32)),
            2 => {
                let raw = b.ins().uload16(I32, mem(), address, lead_len as i32);
                let swapped = b.ins().bswap(raw);
                let shifted = b.ins().ushr_imm_s(swapped, 16);
                Some(b.ins().uextend(I64, shifted))
            }
            _ => {
                let raw = b.ins().load(I32, mem(), address, lead_len as i32);
                let swapped = b.ins().bswap(raw);
                Some(b.ins().uextend(I64, swapped))
            }
        };
        if let Some(n) = n {
            let entry_len = b.ins().iadd_imm_s(n, prefix);
            let past_rest = b.ins().icmp(IntCC::UnsignedGreaterThan, entry_len, rest);
            let past_limit = b.ins().icmp(IntCC::UnsignedGreaterThan, entry_len, max_entry);
            outs.push(b.ins().bor(past_rest, past_limit));
        }
        // A prefix is a lead, a length or both: there is a reason to test.
        let out = outs.into_iter().reduce(|one, other| b.ins().bor(one, other));
        let out = out.expect("a prefix has a lead or a length");
        b.ins().brif(out, exit, &[], after, &[]);
        b.switch_to_block(after);
        (b.ins().iadd_imm_s(address, prefix), n)
    };
    // The bytes at hand reach far enough past the term's start for its
    // reads to go unchecked.
    let term_rest = b.ins().iadd_imm_s(rest, -prefix);
    let reach = unchecked_reach(plan.tests.len());
    let reachable = b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, term_rest, reach);
    b.ins().brif(reachable, scan, &[], exit, &[]);

    b.switch_to_block(scan);
    let (pos, failed, undecided) = (b.declare_var(I64), b.declare_var(I64), b.declare_var(I64));
    let mut scanner = Scan { b, term, pos, failed, undecided, exit };
    let starts = scanner.term(plan.tests);
    let b = scanner.b;
    // It is the entry's term (framed), or one within the limit.
    let end = b.use_var(pos);
    let whole = match framed_len {
        Some(n) => b.ins().icmp(IntCC::Equal, end, n),
        None => b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, max_entry),
    };
    b.ins().brif(whole, decided, &[], exit, &[]);

    b.switch_to_block(decided);
    let no = b.use_var(failed);
    let open = b.use_var(undecided);
    let result = match plan.result {
        Some(NeedResult::Input) => Some(b.ins().iconst(I64, 1)),
        Some(NeedResult::Element(i)) => starts.get(i as usize).copied(),
        None => None,
    };
    match result {
        // Rejected, or not decided here.
        None => {
            b.ins().brif(no, next_entry, &[], exit, &[]);
        }
        Some(result) => {
            // Rejected, or matched: a match is written down. So as not to
            // branch on which, every entry is written to the next slot,
            // which only a match then takes.
            let [ours, record] = std::array::from_fn(|_| b.create_block());
            let is_match = b.ins().bxor_imm_s(no, 1);
            let unsure = b.ins().band(is_match, open);
            b.ins().brif(unsure, exit, &[], ours, &[]);
            b.switch_to_block(ours);
            let written = b.use_var(matched);
            let full = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, written, room);
            b.ins().brif(full, exit, &[], record, &[]);
            b.switch_to_block(record);
            let offset = b.ins().imul_imm_s(written, size_of::<RunMatch>() as i64);
            let slot = b.ins().iadd(matches, offset);
            let before = b.use_var(count);
            let entry_at = b.use_var(at);
            let term_at = b.ins().isub(term, bytes);
            // In `RunMatch`'s order.
            for (field, value) in [before, entry_at, term_at, end, result].into_iter().enumerate() {
                b.ins().store(mem(), value, slot, 8 * field as i32);
            }
            let written = b.ins().iadd(written, is_match);
            b.def_var(matched, written);
            b.ins().jump(next_entry, &[]);
        }
    }

    b.switch_to_block(next_entry);
    let start = b.use_var(at);
    // An entry's given length is its term's (the scan found the same
    // end): the next entry need not wait for this one's scan.
    let taken = b.ins().iadd_imm_s(framed_len.unwrap_or(end), prefix);
    let following = b.ins().iadd(start, taken);
    b.def_var(at, following);
    let done = b.use_var(count);
    let done = b.ins().iadd_imm_s(done, 1);
    b.def_var(count, done);
    b.ins().jump(head, &[]);

    b.switch_to_block(exit);
    let done = b.use_var(count);
    b.ins().store(mem(), done, counts, 0);
    let written = b.use_var(matched);
    b.ins().store(mem(), written, counts, 8);
    let start = b.use_var(at);
    b.ins().return_(&[start]);
}

/// The scan of one term, being built: every read is within the reach the
/// run checked.
struct Scan<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    /// The address of the term's first byte.
    term: Value,
    /// Where the next element starts, from the term's start.
    pos: Variable,
    /// A test failed; a test was not decided (each 0 or 1).
    failed: Variable,
    undecided: Variable,
    /// Ends the run before this entry.
    exit: Block,
}

impl Scan<'_, '_> {
    /// Scans the term, a small tuple with an element for each of `tests`:
    /// on, with `pos` its end and the flags set, or to `exit`. Returns where
    /// its elements start.
    fn term(&mut self, tests: &[Option<NeedTest>]) -> Vec<Value> {
        // The version byte, the tag and the arity, in the low 3 bytes of
        // a 4-byte read.
        let first = self.b.ins().load(I32, mem(), self.term, 0);
        let first = self.b.ins().band_imm_s(first, 0xff_ffff);
        let expected = u32::from_le_bytes([VERSION, tag::SMALL_TUPLE_EXT, tests.len() as u8, 0]);
        let ours = self.b.ins().icmp_imm_s(IntCC::Equal, first, i64::from(expected));
        let body = self.b.create_block();
        self.b.ins().brif(ours, body, &[], self.exit, &[]);
        self.b.switch_to_block(body);
        let three = self.b.ins().iconst(I64, 3);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(self.pos, three);
        self.b.def_var(self.failed, zero);
        self.b.def_var(self.undecided, zero);
        let mut starts = Vec::with_capacity(tests.len());
        for (i, &test) in tests.iter().enumerate() {
            let at = self.b.use_var(self.pos);
            starts.push(at);
            match test {
                // The first element is mostly a record's tag, the same in
                // every term of a stream: when it is the atom, there is
                // nothing to test or measure.
                Some(NeedTest::Atom { word, .. }) if i == 0 && word.whole => {
                    self.leading_atom(at, word, test);
                }
                test => {
                    self.test(test, at);
                    self.element(at);
                }
            }
        }
        starts
    }

    /// The address of byte `at` of the term.
    fn address(&mut self, at: Value) -> Value {
        self.b.ins().iadd(self.term, at)
    }

    /// Ors `flag` (an `I8` 0 or 1) into `var`.
    fn or_flag(&mut self, var: Variable, flag: Value) {
        let flag = self.b.ins().uextend(I64, flag);
        let old = self.b.use_var(var);
        let new = self.b.ins().bor(old, flag);
        self.b.def_var(var, new);
    }

    /// The need of the element at `at`: the interpreter's, as
    /// [`WireProgram::decide`] tests it on the element's first bytes (a
    /// test it leaves to a slower path leaves the entry undecided here).
    fn test(&mut self, test: Option<NeedTest>, at: Value) {
        match test {
            None => {}
            Some(NeedTest::Immediate { .. }) => {
                let one = self.b.ins().iconst(I64, 1);
                self.b.def_var(self.undecided, one);
            }
            Some(NeedTest::Atom { word, .. }) => self.atom(at, word),
            Some(NeedTest::Compare { op, value }) => self.compare(at, op, value),
        }
    }

    /// The test and the measure of the element at `at` whose test is
    /// `test`, the atom whose whole encoding is `atom`'s word: one compare
    /// when it is that atom.
    fn leading_atom(&mut self, at: Value, atom: AtomWord, test: Option<NeedTest>) {
        let [same, other, next] = std::array::from_fn(|_| self.b.create_block());
        let address = self.address(at);
        let word = self.b.ins().load(I64, mem(), address, 0);
        let diff = self.b.ins().bxor_imm_s(word, atom.head as i64);
        let diff = self.b.ins().band_imm_s(diff, atom.mask as i64);
        self.b.ins().brif(diff, other, &[], same, &[]);
        self.b.switch_to_block(same);
        let end = self.b.ins().iadd_imm_s(at, i64::from(atom.mask.count_ones() / 8));
        self.b.def_var(self.pos, end);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(other);
        self.test(test, at);
        self.element(at);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(next);
    }

    /// [`AtomWord::test`], without a branch.
    fn atom(&mut self, at: Value, atom: AtomWord) {
        let address = self.address(at);
        let word = self.b.ins().load(I64, mem(), address, 0);
        let diff = self.b.ins().bxor_imm_s(word, atom.head as i64);
        let diff = self.b.ins().band_imm_s(diff, atom.mask as i64);
        let differs = self.b.ins().icmp_imm_s(IntCC::NotEqual, diff, 0);
        let low = self.b.ins().band_imm_s(word, 0xff);
        let usual = self.b.ins().icmp_imm_s(IntCC::Equal, low, i64::from(tag::SMALL_ATOM_UTF8_EXT));
        // Differs in the usual encoding: another atom.
        let fails = self.b.ins().band(differs, usual);
        self.or_flag(self.failed, fails);
        // Differs in another encoding, or equal as far as the word goes.
        let open = if atom.whole {
            let other = self.b.ins().bxor_imm_s(usual, 1);
            self.b.ins().band(differs, other)
        } else {
            self.b.ins().bxor_imm_s(fails, 1)
        };
        self.or_flag(self.undecided, open);
    }

    /// [`NeedTest::Compare`]: decided on the integers the plain scan
    /// measures by their tag.
    fn compare(&mut self, at: Value, op: Cmp, value: i64) {
        let value_var = self.b.declare_var(I64);
        let [small, not_small, large, compare, open, done] =
            std::array::from_fn(|_| self.b.create_block());
        let address = self.address(at);
        let tag_byte = self.b.ins().uload8(I64, mem(), address, 0);
        let is_small =
            self.b.ins().icmp_imm_s(IntCC::Equal, tag_byte, i64::from(tag::SMALL_INTEGER_EXT));
        self.b.ins().brif(is_small, small, &[], not_small, &[]);

        self.b.switch_to_block(small);
        let byte = self.b.ins().uload8(I64, mem(), address, 1);
        self.b.def_var(value_var, byte);
        self.b.ins().jump(compare, &[]);

        self.b.switch_to_block(not_small);
        let is_large = self.b.ins().icmp_imm_s(IntCC::Equal, tag_byte, i64::from(tag::INTEGER_EXT));
        self.b.ins().brif(is_large, large, &[], open, &[]);

        self.b.switch_to_block(large);
        let raw = self.b.ins().load(I32, mem(), address, 1);
        let big_endian = self.b.ins().bswap(raw);
        let integer = self.b.ins().sextend(I64, big_endian);
        self.b.def_var(value_var, integer);
        self.b.ins().jump(compare, &[]);

        self.b.switch_to_block(compare);
        let integer = self.b.use_var(value_var);
        let fails = self.b.ins().icmp_imm_s(int_cc(op).complement(), integer, value);
        self.or_flag(self.failed, fails);
        self.b.ins().jump(done, &[]);

        self.b.switch_to_block(open);
        let one = self.b.ins().iconst(I64, 1);
        self.b.def_var(self.undecided, one);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Measures the element at `at`: `pos` is where it ends. An element
    /// the code does not measure ends the run.
    fn element(&mut self, at: Value) {
        let [atom, text, fixed, next] = std::array::from_fn(|_| self.b.create_block());
        let address = self.address(at);
        let tag_byte = self.b.ins().uload8(I64, mem(), address, 0);
        let is_atom =
            self.b.ins().icmp_imm_s(IntCC::Equal, tag_byte, i64::from(tag::SMALL_ATOM_UTF8_EXT));
        self.b.ins().brif(is_atom, atom, &[], fixed, &[]);

        // An atom of at most 8 bytes, all ASCII: its tag, its length and
        // its name, checked in one word.
        self.b.switch_to_block(atom);
        let n = self.b.ins().uload8(I64, mem(), address, 1);
        let longest = (scan::WINDOW - 2) as i64;
        let short = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n, longest);
        self.b.ins().brif(short, text, &[], self.exit, &[]);
        self.b.switch_to_block(text);
        let name = self.b.ins().load(I64, mem(), address, 2);
        let table = self.b.ins().iconst(I64, HIGH_BITS.as_ptr() as i64);
        let offset = self.b.ins().ishl_imm_s(n, 3);
        let mask_at = self.b.ins().iadd(table, offset);
        let mask = self.b.ins().load(I64, MemFlagsData::trusted().with_readonly(), mask_at, 0);
        let high = self.b.ins().band(name, mask);
        let len = self.b.ins().iadd_imm_s(n, 2);
        let end = self.b.ins().iadd(at, len);
        self.b.def_var(self.pos, end);
        self.b.ins().brif(high, self.exit, &[], next, &[]);

        // An integer or `[]`: its tag says its size, and a branch on the
        // tag (which an element mostly keeps from term to term) says it
        // before the tag is read, so the next element's reads need not
        // wait for this one's.
        self.b.switch_to_block(fixed);
        // Largest first: integers (of both sizes) are the usual elements.
        let mut sized: Vec<(u8, i64)> = (0..=u8::MAX)
            .map(|t| (t, i64::from(scan::FIXED_SIZE[usize::from(t)])))
            .filter(|&(_, size)| size != 0)
            .collect();
        sized.sort_by_key(|&(_, size)| std::cmp::Reverse(size));
        for (t, size) in sized {
            let (sized, otherwise) = (self.b.create_block(), self.b.create_block());
            let is = self.b.ins().icmp_imm_s(IntCC::Equal, tag_byte, i64::from(t));
            self.b.ins().brif(is, sized, &[], otherwise, &[]);
            self.b.switch_to_block(sized);
            let end = self.b.ins().iadd_imm_s(at, size);
            self.b.def_var(self.pos, end);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(otherwise);
        }
        self.b.ins().jump(self.exit, &[]);

        self.b.switch_to_block(next);
    }
}

/// The scan's table of the high bits of each of a name's first `n` bytes
/// (little-endian), by `n`, where the code can read it.
static HIGH_BITS: [u64; 9] = scan::HIGH_BITS;
