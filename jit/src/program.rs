//! [`JitProgram`]: a compiled spec's program as machine code, owning it.

use std::ffi::c_void;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::resume_unwind;
use std::sync::OnceLock;
use std::time::Duration;

use cranelift_codegen::ir::{ExtFuncData, ExternalName, UserExternalName};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Linkage, Module};
use matchspec::engine_internals::Frame;
use matchspec::ir::{Program, Reg};
use matchspec::run::{Batch, Report};
use matchspec::term::{Space, TermRef, Word};
use matchspec::wire::WireProgram;
use matchspec::{CompiledSpec, EvalError, Flags, Host, Matched, Outcome, Run, Scratch};

use crate::JitError;
use crate::abi::{self, Ctx, Entry, Words};
use crate::effects::Effects;
use crate::effects::needs_args;
use crate::helpers::HelperId;
use crate::module::{self, codegen};
use crate::translate::{Translated, entry_signature, helper_signature, translate};
use crate::wire::WireCode;

/// The most ops a program may have to be compiled. Cranelift's time and
/// memory grow with the function (measured: 30,000 ops, a spec of 5,000
/// clauses, take about 0.4 s and 180 MiB); beyond this the interpreter
/// runs the spec, with no compile time at all.
pub const MAX_OPS: usize = 32_768;

/// A spec's program compiled to machine code.
///
/// The code belongs to this value and is freed when it is dropped. It is
/// `Send + Sync`: any number of threads may run it at once, each with its
/// own [`Scratch`]. [`Run`] runs it, with the answers the interpreter
/// gives.
///
/// ```
/// use matchspec::{CompiledSpec, Config, Run, Scratch, TestHost, spec::Kind, term::Term};
/// use matchspec_jit::JitProgram;
///
/// let spec = CompiledSpec::compile("[{{'$1', '$2'}, [{'>', '$2', 10}], ['$1']}]", Kind::Table, &Config::default()).unwrap();
/// let jit = JitProgram::compile(&spec).unwrap();
/// let input = Term::parse("{apple, 42}").unwrap();
/// let mut scratch = Scratch::new();
/// let outcome = jit.run(input.as_ref(), &mut scratch, &mut TestHost::default()).unwrap();
/// assert_eq!(outcome.result().unwrap().to_string(), "apple");
/// ```
pub struct JitProgram {
    /// The spec compiled: its program is what the code runs, and the
    /// interpreter runs it where the code does not.
    spec: CompiledSpec,
    /// The code, valid while `module` lives.
    entry: Entry,
    /// Where the code builds terms, and what its helpers may do (how
    /// outcomes reach Rust).
    translated: Translated,
    /// Is this a trace program whose code reads the arguments from the
    /// input list itself (so Rust need not load them)?
    own_args: bool,
    /// Owns the code memory; freed in `drop`.
    module: Option<JITModule>,
    /// How long compiling took.
    compile_time: Duration,
    /// The spec's wire program with its runs as machine code, made when
    /// first asked for (only stream filters use it).
    wire: OnceLock<Option<WireProgram>>,
}

// SAFETY: after `compile` the module is never touched again until `drop`,
// which has exclusive access; the code it owns is immutable (mapped
// read+execute) and reentrant (its only state is its arguments), so sharing
// and sending the value between threads is sound.
unsafe impl Send for JitProgram {}
// SAFETY: as for `Send`: `&JitProgram` only allows calling the immutable code.
unsafe impl Sync for JitProgram {}

impl std::fmt::Debug for JitProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitProgram")
            .field("program", &self.spec.program().id())
            .field("compile_time", &self.compile_time)
            .finish_non_exhaustive()
    }
}

impl Drop for JitProgram {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: `entry` points into this module's memory and is
            // private to this value, which is being dropped, so no code of
            // the module can run or be called again.
            unsafe { module.free_memory() };
        }
    }
}

impl JitProgram {
    /// Compiles `spec`'s program to machine code.
    ///
    /// Fails (and the spec should run in the interpreter) if the program is
    /// larger than [`MAX_OPS`], if Cranelift cannot compile it, or if this
    /// machine is not one Cranelift supports.
    pub fn compile(spec: &CompiledSpec) -> Result<JitProgram, JitError> {
        let start = std::time::Instant::now();
        let program = spec.program();
        validate(program)?;
        let mut module = new_module()?;
        let result = Self::define(&mut module, program);
        let (entry, translated) = match result {
            Ok(defined) => defined,
            Err(err) => {
                // SAFETY: nothing of this module was handed out.
                unsafe { module.free_memory() };
                return Err(err);
            }
        };
        Ok(JitProgram {
            spec: spec.clone(),
            entry,
            translated,
            own_args: program.kind().is_trace() && !needs_args(program),
            module: Some(module),
            compile_time: start.elapsed(),
            wire: OnceLock::new(),
        })
    }

    /// The Cranelift IR `spec` translates to, and the machine code
    /// Cranelift makes of it (as Cranelift prints it), without keeping the
    /// code: what `msc dump --clif` and `--asm` show.
    pub fn listing(spec: &CompiledSpec) -> Result<Listing, JitError> {
        let program = spec.program();
        validate(program)?;
        let mut module = new_module()?;
        let result = translate_and_define(&mut module, program, true);
        // SAFETY: the code is never called; nothing of it was handed out.
        unsafe { module.free_memory() };
        result.map(|(_, listing, _)| listing)
    }

    /// Translates and finalizes the entry function in `module`; also
    /// returns how many heap words it builds in itself.
    fn define(module: &mut JITModule, program: &Program) -> Result<(Entry, Translated), JitError> {
        let (id, _, translated) = translate_and_define(module, program, false)?;
        module.finalize_definitions().map_err(codegen)?;
        let code = module.get_finalized_function(id);
        // SAFETY: `code` is the finalized function just defined with
        // `entry_signature`, which is `Entry`'s signature in the platform's
        // default calling convention (Cranelift's for this ISA).
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code) };
        Ok((entry, translated))
    }

    /// How long [`compile`](Self::compile) took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// The spec compiled.
    pub fn spec(&self) -> &CompiledSpec {
        &self.spec
    }

    /// A batch run, the code looping over the inputs itself and returning
    /// for Rust to hand over its buffered outcomes, and those it must see
    /// at once, then to clean up (see `abi`).
    #[inline(always)]
    fn run_code_batch<F>(
        &self,
        Batch { heap, inputs, report }: Batch<'_>,
        scratch: &mut Scratch,
        host: &mut dyn Host,
        mut each: F,
    ) where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        let every = report == Report::Every;
        let Some(mut frame) = Frame::for_heap(self.spec.program(), heap, scratch, host) else {
            return;
        };
        frame.clean();
        // Rust and the helpers reach the frame through this one pointer
        // (never while the code runs).
        let machine: *mut Frame<'_, '_> = &mut frame;
        // Only a program whose helpers may touch the host reports its
        // no-matches at once; for the others Rust hands over the inputs
        // between two outcomes as no-matches.
        let dirty =
            if every && self.translated.effects == Effects::Host { abi::DIRTY_EVERY } else { 0 };
        let mut ctx = self.ctx(machine, inputs, dirty);
        // The first input whose outcome has not been handed over.
        let mut delivered = 0;
        // Hands over the inputs from `delivered` to `upto` as no-matches,
        // if the caller wants them.
        let no_matches = |delivered: &mut usize, upto: usize, each: &mut F| {
            if every {
                for i in *delivered..upto {
                    each(i, Ok(&Outcome::NoMatch));
                }
            }
            *delivered = upto;
        };
        loop {
            let exit = self.enter(&mut ctx);
            // SAFETY: `machine` points to `frame`, alive and not otherwise
            // used; the code has returned.
            let frame = unsafe { &mut *machine };
            // The buffered outcomes first: they came before the one that
            // returned, and before a panic. Nothing set flags for them.
            let pending = std::mem::take(&mut ctx.pending) as usize;
            let kept = if ctx.panic.is_some() { ctx.keep as usize } else { pending };
            ctx.build = 0;
            // One outcome for them all, lent to `each`: only its word
            // changes from one to the next.
            let result = frame.term(Word::NIL);
            let mut outcome = Outcome::Match(Matched { result, flags: Flags::default() });
            // SAFETY: the code wrote the `pending` results it buffered, and
            // `kept` is at most that.
            let (indexes, words) = unsafe { ctx.results(kept) };
            for (&index, &word) in indexes.iter().zip(words) {
                let index = index as usize;
                no_matches(&mut delivered, index, &mut each);
                if let Outcome::Match(matched) = &mut outcome {
                    matched.result.set_word(Word::from_bits(word));
                }
                each(index, Ok(&outcome));
                delivered = index + 1;
            }
            let code = exit & u64::from(u32::MAX);
            let index = ctx.index as usize;
            if let Some(payload) = ctx.panic.take() {
                // At the end, the code had gone on to the next input.
                let panicked = if code == abi::EXIT_DONE { index - 1 } else { index };
                no_matches(&mut delivered, panicked, &mut each);
                resume_unwind(payload);
            }
            match code {
                abi::EXIT_DONE => return no_matches(&mut delivered, index, &mut each),
                abi::EXIT_FULL => {}
                abi::EXIT_MATCHED => {
                    no_matches(&mut delivered, index, &mut each);
                    each(index, Ok(&frame.outcome(Reg((exit >> 32) as u32))));
                    delivered = index + 1;
                }
                abi::EXIT_NO_MATCH => no_matches(&mut delivered, index + 1, &mut each),
                abi::EXIT_SKIPPED => {
                    no_matches(&mut delivered, index, &mut each);
                    if let Some(err) = ctx.error.take() {
                        each(index, Err(&err));
                        delivered = index + 1;
                    }
                }
                abi::EXIT_BAD_INPUT => panic!("the input is not a well-formed term"),
                _ => {}
            }
            if ctx.dirty & abi::DIRTY_BUILT != 0 {
                frame.clean();
                let (at, len) = (frame.scratch_address().cast(), frame.scratch_len() as u64);
                ctx.spaces[abi::SCRATCH] = Words { at, len };
            }
            ctx.dirty = dirty;
            ctx.next = ctx.index + 1;
        }
    }

    /// The `Ctx` for running the code on `inputs` with `frame` (just
    /// reset or cleaned), setting aside the heap words the code builds in.
    #[inline(always)]
    fn ctx<'f, 'a: 'f, 'h: 'f>(
        &self,
        frame: *mut Frame<'a, 'h>,
        inputs: &[Word],
        dirty: u64,
    ) -> Ctx<'f> {
        // SAFETY: `frame` points to a live frame that nothing else uses
        // while this function runs.
        let f = unsafe { &mut *frame };
        // A region per result the code may buffer: no more than inputs.
        let Translated { region, regions, .. } = self.translated;
        let heap = f.reserve_scratch(region * regions.min(inputs.len()));
        let input_words = f.input_words();
        // The code and the helpers only read the input's words.
        let mut spaces = [Words::NONE; 4];
        spaces[abi::INPUT] = Words {
            at: input_words.as_ptr().cast::<u64>().cast_mut(),
            len: input_words.len() as u64,
        };
        spaces[abi::SCRATCH] = Words { at: heap.cast(), len: f.scratch_len() as u64 };
        Ctx {
            spaces,
            dirty,
            single: 0,
            registers: f.registers().as_mut_ptr().cast::<u64>(),
            inputs: inputs.as_ptr().cast::<u64>(),
            count: inputs.len() as u64,
            next: 0,
            index: 0,
            pending: 0,
            keep: 0,
            build: 0,
            frame,
            error: None,
            panic: None,
            result_inputs: [MaybeUninit::uninit(); abi::RESULTS],
            result_words: [MaybeUninit::uninit(); abi::RESULTS],
        }
    }

    /// Runs the machine code from input `ctx.next` on until it returns.
    #[inline(always)]
    fn enter(&self, ctx: &mut Ctx<'_>) -> u64 {
        // SAFETY: the frame is of the program the code was compiled from
        // (`self.spec`'s), so every register the code names is below
        // `program.registers()`, the length `Frame` gave the register file,
        // every label is an op of the program, and the terms the code
        // builds itself lie in the heap words `ctx` set aside, a region
        // for each result the code may buffer (at most one per input, and
        // `regions`, between two returns, when Rust sets `ctx.build` back
        // to 0), written through the run's heap's address in
        // `ctx.spaces`, which every helper that may build refreshes. The
        // registers, the input heap and the inputs stay where they are for
        // the whole call (the register file is not resized; the rest is
        // borrowed); the code reads input heap words only below the
        // length in `ctx.spaces` and inputs only below `ctx.count`, writes
        // results only below `abi::RESULTS`. `ctx` outlives the call and
        // only the code and the helpers use it meanwhile, never the same
        // field at once.
        unsafe { (self.entry)((ctx as *mut Ctx<'_>).cast::<c_void>()) }
    }
}

/// The machine code; the interpreter for batches of inputs outside an
/// ordinary heap.
impl Run for JitProgram {
    #[inline]
    fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        let program = self.spec.program();
        let mut frame = if self.own_args {
            Frame::new_without_args(program, input, scratch, host)?
        } else {
            Frame::new(program, input, scratch, host)?
        };
        // `Frame::new` loaded the input (copying it if it spans heaps).
        let input = frame.registers()[Reg::INPUT.index()];
        let machine: *mut Frame<'_, '_> = &mut frame;
        let inputs = [input];
        // Only `panic` and `error` of a context need dropping, and both
        // are taken below: without its drop glue, a run saves a call.
        let mut ctx = ManuallyDrop::new(self.ctx(machine, &inputs, 0));
        ctx.single = 1;
        let exit = self.enter(&mut ctx);
        if let Some(payload) = ctx.panic.take() {
            resume_unwind(payload);
        }
        // (Only resets of batches set an error.)
        drop(ctx.error.take());
        // A batch of one: a match is buffered, or returned at once.
        let result = match exit & u64::from(u32::MAX) {
            abi::EXIT_MATCHED => Reg((exit >> 32) as u32),
            _ if ctx.pending == 1 => {
                // The run is over: register 0 may hold the result.
                // SAFETY: the code wrote the one result it buffered.
                let word = unsafe { ctx.results(1) }.1[0];
                frame.registers()[Reg::INPUT.index()] = Word::from_bits(word);
                Reg::INPUT
            }
            _ => return Ok(Outcome::NoMatch),
        };
        Ok(frame.finish(result))
    }

    #[inline]
    fn run_batch<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        if batch.heap.space() != Space::Heap {
            return self.spec.run_batch(batch, scratch, host, each);
        }
        self.run_code_batch(batch, scratch, host, each);
    }

    /// The spec's wire program, its runs as machine code ([`WireCode`]).
    fn wire_program(&self) -> Option<&WireProgram> {
        self.wire.get_or_init(|| self.spec.wire().map(WireCode::attach)).as_ref()
    }
}

/// A module for one program, with the helpers it may call.
fn new_module() -> Result<JITModule, JitError> {
    let mut builder = module::builder()?;
    for id in HelperId::ALL {
        let helper = id.helper();
        builder.symbol(helper.name, helper.address);
    }
    Ok(JITModule::new(builder))
}

/// Translates `program` and defines it in `module`; with `listing`, also
/// returns its texts.
fn translate_and_define(
    module: &mut JITModule,
    program: &Program,
    listing: bool,
) -> Result<(FuncId, Listing, Translated), JitError> {
    let mut ctx = module.make_context();
    entry_signature(&mut ctx.func.signature);
    let mut fbc = FunctionBuilderContext::new();
    let target = module.target_config();
    // Helpers are declared as the code first calls them.
    let mut error = None;
    let translated = translate(program, &mut ctx.func, &mut fbc, target, |func, id| {
        let helper = id.helper();
        let mut sig = module.make_signature();
        helper_signature(&mut sig, helper.params);
        match module.declare_function(helper.name, Linkage::Import, &sig) {
            Ok(func_id) => module.declare_func_in_func(func_id, func),
            Err(err) => {
                // The translation goes on with a reference to nothing,
                // and the error is returned after it.
                error.get_or_insert(err);
                let signature = func.import_signature(sig);
                let name = func.declare_imported_user_function(UserExternalName::new(1, 0));
                func.import_function(ExtFuncData {
                    name: ExternalName::user(name),
                    signature,
                    colocated: false,
                    patchable: false,
                })
            }
        }
    });
    if let Some(err) = error {
        return Err(codegen(err));
    }
    let mut texts = Listing::default();
    if listing {
        texts.clif = ctx.func.display().to_string();
        ctx.set_disasm(true);
    }
    let id = module.declare_anonymous_function(&ctx.func.signature).map_err(codegen)?;
    module.define_function(id, &mut ctx).map_err(codegen)?;
    if listing {
        texts.asm = ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default();
    }
    module.clear_context(&mut ctx);
    Ok((id, texts, translated))
}

/// What a program compiles to, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// The Cranelift IR (CLIF) of the entry function.
    pub clif: String,
    /// The machine code, as Cranelift's disassembly of its final code.
    pub asm: String,
}

/// Checks what the machine code relies on and does not check at run time:
/// a size it takes, and the IR's invariants (registers in the file, labels
/// forward and inside the program, no falling off the end).
pub(crate) fn validate(program: &Program) -> Result<(), JitError> {
    let ops = program.code().len();
    if ops > MAX_OPS {
        return Err(JitError::TooLarge { ops, limit: MAX_OPS });
    }
    Ok(program.verify()?)
}
