//! [`Engine`]: choosing between the interpreter and the JIT, and
//! [`EngineSpec`], a spec that runs on the chosen engine.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use matchspec::conformance::Runner;
use matchspec::term::{Heap, TermRef, Word};
use matchspec::{CompiledSpec, EvalError, Host, Outcome, Scratch};

use crate::{JitError, JitProgram};

/// Which engine runs a spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The interpreter (the reference engine; no compile time).
    #[default]
    Interp,
    /// Machine code from the start (compiled when the spec is made).
    Jit,
    /// Interpret first; compile to machine code once the spec has run
    /// [`AUTO_THRESHOLD`] times, which is when the compile time has paid
    /// for itself.
    Auto,
}

impl Engine {
    /// The engine's name (`interp`, `jit`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::Auto => "auto",
        }
    }
}

/// How many runs [`Engine::Auto`] interprets before compiling.
///
/// Measured on the six benchmark workloads (`benches/README.md`): compiling
/// takes 86-604 µs (warm) and the machine code saves 6-46 ns per run, so
/// compiling pays for itself after 5,600 to 19,700 runs (break-even =
/// compile time / saving per run; median about 15,000). A spec that runs
/// twice the threshold has paid back its compile time in every workload
/// measured, and a spec that runs only a few thousand times never pays
/// for a compile. (The threshold was chosen
/// when compiling took 48-271 µs, as the worst break-even then, rounded
/// down.)
pub const AUTO_THRESHOLD: u64 = 20_000;

/// A compiled spec together with the engine that runs it.
///
/// `Send + Sync`: share one between threads, each with its own
/// [`Scratch`]. With [`Engine::Auto`] the first thread to cross the
/// threshold compiles; the others keep interpreting until the code is
/// ready, then all use it.
///
/// ```
/// use matchspec::{CompiledSpec, Config, Scratch, TestHost, spec::Kind, term::Term};
/// use matchspec_jit::{Engine, EngineSpec};
///
/// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default()).unwrap();
/// let spec = EngineSpec::new(spec, Engine::Jit);
/// assert!(spec.jit_error().is_none());
/// let input = Term::parse("{7, ok}").unwrap();
/// let mut scratch = Scratch::new();
/// let outcome = spec.run(input.as_ref(), &mut scratch, &mut TestHost::default()).unwrap();
/// assert_eq!(outcome.result().unwrap().to_string(), "7");
/// ```
#[derive(Debug)]
pub struct EngineSpec {
    spec: CompiledSpec,
    engine: Engine,
    runs: AtomicU64,
    jit: OnceLock<Result<JitProgram, JitError>>,
}

impl EngineSpec {
    /// Puts `spec` on `engine`. With [`Engine::Jit`] this compiles now; if
    /// compiling fails the spec runs in the interpreter and
    /// [`jit_error`](Self::jit_error) says why.
    pub fn new(spec: CompiledSpec, engine: Engine) -> EngineSpec {
        let this = EngineSpec { spec, engine, runs: AtomicU64::new(0), jit: OnceLock::new() };
        if engine == Engine::Jit {
            this.machine_code();
        }
        this
    }

    /// The spec.
    pub fn spec(&self) -> &CompiledSpec {
        &self.spec
    }

    /// The engine asked for.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Is the spec running as machine code now?
    pub fn is_compiled(&self) -> bool {
        matches!(self.jit.get(), Some(Ok(_)))
    }

    /// Why the JIT could not compile the spec, if it tried and failed.
    pub fn jit_error(&self) -> Option<&JitError> {
        self.jit.get().and_then(|r| r.as_ref().err())
    }

    /// The machine code, compiled on first use.
    fn machine_code(&self) -> Option<&JitProgram> {
        self.jit.get_or_init(|| JitProgram::compile(&self.spec)).as_ref().ok()
    }

    /// Runs the spec on `input` (for trace kinds, the argument list).
    #[inline]
    pub fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        let jit = match self.engine {
            Engine::Interp => None,
            Engine::Jit => self.jit.get().and_then(|r| r.as_ref().ok()),
            Engine::Auto => match self.jit.get() {
                Some(compiled) => compiled.as_ref().ok(),
                None if self.runs.fetch_add(1, Ordering::Relaxed) + 1 >= AUTO_THRESHOLD => {
                    self.machine_code()
                }
                None => None,
            },
        };
        match jit {
            Some(jit) => jit.run(&self.spec, input, scratch, host),
            None => self.spec.run_with_host(input, scratch, host),
        }
    }
}

impl EngineSpec {
    /// Runs the spec on each of `inputs`, terms of `heap`, handing each
    /// outcome to `each` before the next run (see
    /// [`CompiledSpec::run_each`]). With [`Engine::Auto`] every input
    /// counts as a run.
    pub fn run_each<F>(
        &self,
        heap: &Heap,
        inputs: &[Word],
        scratch: &mut Scratch,
        host: &mut dyn Host,
        each: F,
    ) where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        match self.batch_code(inputs.len()) {
            Some(jit) => jit.run_each(&self.spec, heap, inputs, scratch, host, each),
            None => self.spec.run_each(heap, inputs, scratch, host, each),
        }
    }

    /// [`run_each`](Self::run_each), handing over only the inputs that
    /// match (and those that cannot run), as a filter wants (see
    /// [`CompiledSpec::run_matching`]).
    pub fn run_matching<F>(
        &self,
        heap: &Heap,
        inputs: &[Word],
        scratch: &mut Scratch,
        host: &mut dyn Host,
        each: F,
    ) where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        match self.batch_code(inputs.len()) {
            Some(jit) => jit.run_matching(&self.spec, heap, inputs, scratch, host, each),
            None => self.spec.run_matching(heap, inputs, scratch, host, each),
        }
    }

    /// The machine code to run a batch of `runs` inputs with, if any (with
    /// [`Engine::Auto`] every input counts as a run).
    fn batch_code(&self, runs: usize) -> Option<&JitProgram> {
        match self.engine {
            Engine::Interp => None,
            Engine::Jit => self.jit.get().and_then(|r| r.as_ref().ok()),
            Engine::Auto => match self.jit.get() {
                Some(compiled) => compiled.as_ref().ok(),
                None => {
                    let runs = runs as u64;
                    if self.runs.fetch_add(runs, Ordering::Relaxed) + runs >= AUTO_THRESHOLD {
                        self.machine_code()
                    } else {
                        None
                    }
                }
            },
        }
    }
}

/// An [`Engine`] as a conformance [`Runner`]: it compiles each new spec it
/// is given (keeping the last one) and runs it on that engine.
#[derive(Debug, Default)]
pub struct EngineRunner {
    engine: Engine,
    last: Option<(u64, EngineSpec)>,
}

impl EngineRunner {
    /// A runner for `engine`.
    pub fn new(engine: Engine) -> EngineRunner {
        EngineRunner { engine, last: None }
    }

    /// The last spec's JIT error, if compiling it failed.
    pub fn last_jit_error(&self) -> Option<&JitError> {
        self.last.as_ref().and_then(|(_, spec)| spec.jit_error())
    }
}

impl Runner for EngineRunner {
    fn run<'a>(
        &mut self,
        spec: &'a CompiledSpec,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        let id = spec.program().id();
        if self.last.as_ref().is_none_or(|(last, _)| *last != id) {
            self.last = Some((id, EngineSpec::new(spec.clone(), self.engine)));
        }
        let engine_spec = match &self.last {
            Some((_, engine_spec)) => engine_spec,
            None => return spec.run_with_host(input, scratch, host),
        };
        match engine_spec.jit.get().and_then(|r| r.as_ref().ok()) {
            // The engine spec holds a clone of `spec` (same program), so
            // the machine code runs with `spec` itself and the outcome
            // borrows only from it.
            Some(jit) if engine_spec.engine != Engine::Interp => {
                jit.run(spec, input, scratch, host)
            }
            _ => {
                if engine_spec.engine == Engine::Auto {
                    // Count the run and compile at the threshold.
                    let runs = engine_spec.runs.fetch_add(1, Ordering::Relaxed) + 1;
                    if runs >= AUTO_THRESHOLD
                        && let Some(jit) = engine_spec.machine_code()
                    {
                        return jit.run(spec, input, scratch, host);
                    }
                }
                spec.run_with_host(input, scratch, host)
            }
        }
    }
}
