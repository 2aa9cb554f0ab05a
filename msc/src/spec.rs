//! [`Spec`]: a compiled spec on the engine of your choice, and its
//! [`Builder`].

use matchspec::run::Batch;
use matchspec::spec::Kind;
use matchspec::term::{Term, TermRef};
use matchspec::{CompileError, CompiledSpec, Config, EvalError, Host, Outcome, Run, Scratch};
#[cfg(feature = "jit")]
use matchspec_jit::{JitError, JitProgram};
#[cfg(feature = "jit")]
use std::sync::OnceLock;
#[cfg(feature = "jit")]
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(feature = "jit")]
use crate::engine::AUTO_THRESHOLD;
use crate::engine::Engine;

/// A match spec compiled for one event kind, on one [`Engine`]; [`Run`]
/// runs it.
///
/// `Send + Sync`: share one between threads, each with its own
/// [`Scratch`]. With [`Engine::Auto`] the first thread to cross the
/// threshold compiles; the others keep interpreting until the code is
/// ready, then all use it.
///
/// ```
/// use msc::{Engine, Kind, Run, Scratch, Spec, Term, TestHost};
///
/// let spec = Spec::builder().engine(Engine::Jit).build("[{{'$1', ok}, [], ['$1']}]", Kind::Table)?;
/// let input = Term::parse("{7, ok}")?;
/// let mut scratch = Scratch::new();
/// let outcome = spec.run(input.as_ref(), &mut scratch, &mut TestHost::default())?;
/// assert_eq!(outcome.result().unwrap().to_string(), "7");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Spec {
    spec: CompiledSpec,
    engine: Engine,
    /// Runs so far, counted only with [`Engine::Auto`] before compiling.
    #[cfg(feature = "jit")]
    runs: AtomicU64,
    /// The machine code, once compiled (or why it could not be).
    #[cfg(feature = "jit")]
    jit: OnceLock<Result<JitProgram, JitError>>,
}

/// What runs a spec now.
enum Code<'s> {
    Interp(&'s CompiledSpec),
    #[cfg(feature = "jit")]
    Jit(&'s JitProgram),
}

/// Builds a [`Spec`]: the engine and the compile configuration.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    engine: Engine,
    config: Config,
}

impl Builder {
    /// The engine (by default [`Engine::Auto`]).
    pub fn engine(mut self, engine: Engine) -> Builder {
        self.engine = engine;
        self
    }

    /// The compile configuration (by default ERTS's).
    pub fn config(mut self, config: Config) -> Builder {
        self.config = config;
        self
    }

    /// Parses, checks and compiles `text` for events of `kind`.
    pub fn build(&self, text: &str, kind: Kind) -> Result<Spec, CompileError> {
        let spec = CompiledSpec::compile(text, kind, &self.config)?;
        Ok(Spec::new(spec, self.engine))
    }

    /// Translates a fun as `ets:fun2ms/1` (table) or `dbg:fun2ms/1` (trace
    /// kinds) would, with `bindings` for the variables its head does not
    /// bind, then checks and compiles the spec for events of `kind`.
    pub fn build_fun(
        &self,
        text: &str,
        kind: Kind,
        bindings: &[(&str, Term)],
    ) -> Result<Spec, CompileError> {
        let spec = CompiledSpec::from_fun(text, kind, bindings, &self.config)?;
        Ok(Spec::new(spec, self.engine))
    }

    /// Checks and compiles the spec term `term` for events of `kind`.
    pub fn build_from_term(&self, term: TermRef<'_>, kind: Kind) -> Result<Spec, CompileError> {
        let spec = CompiledSpec::from_term(term, kind, &self.config)?;
        Ok(Spec::new(spec, self.engine))
    }
}

impl Spec {
    /// A builder with the defaults: [`Engine::Auto`], ERTS's configuration.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Parses, checks and compiles `text` for events of `kind`, with the
    /// [`builder`](Spec::builder)'s defaults.
    pub fn compile(text: &str, kind: Kind) -> Result<Spec, CompileError> {
        Spec::builder().build(text, kind)
    }

    /// Translates the fun `text` as `ets:fun2ms/1` (table) or
    /// `dbg:fun2ms/1` (trace kinds) would, with `bindings` for the variables
    /// its head does not bind, and compiles the spec for events of `kind`,
    /// with the [`builder`](Spec::builder)'s defaults. Errors, ms_transform's
    /// and ERTS's, point into the fun.
    ///
    /// ```
    /// use msc::{Kind, Run, Scratch, Spec, Term, TestHost};
    ///
    /// let limit = Term::from(100);
    /// let spec = Spec::from_fun("fun({K, V}) when V > Limit -> K end", Kind::Table, &[("Limit", limit)])?;
    /// let input = Term::parse("{ann, 150}")?;
    /// let mut scratch = Scratch::new();
    /// let outcome = spec.run(input.as_ref(), &mut scratch, &mut TestHost::default())?;
    /// assert_eq!(outcome.result().unwrap().to_string(), "ann");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_fun(
        text: &str,
        kind: Kind,
        bindings: &[(&str, Term)],
    ) -> Result<Spec, CompileError> {
        Spec::builder().build_fun(text, kind, bindings)
    }

    /// Puts a compiled spec on `engine`. With [`Engine::Jit`] this compiles
    /// now; if compiling fails the spec runs in the interpreter and
    /// [`jit_error`](Spec::jit_error) says why.
    pub fn new(spec: CompiledSpec, engine: Engine) -> Spec {
        let this = Spec {
            spec,
            engine,
            #[cfg(feature = "jit")]
            runs: AtomicU64::new(0),
            #[cfg(feature = "jit")]
            jit: OnceLock::new(),
        };
        if engine == Engine::Jit {
            this.compile_code();
        }
        this
    }

    /// The compiled spec (its program is the IR every engine runs).
    pub fn compiled(&self) -> &CompiledSpec {
        &self.spec
    }

    /// The event kind.
    pub fn kind(&self) -> Kind {
        self.spec.kind()
    }

    /// The engine asked for.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Is the spec running as machine code now?
    pub fn is_compiled(&self) -> bool {
        #[cfg(feature = "jit")]
        return matches!(self.jit.get(), Some(Ok(_)));
        #[cfg(not(feature = "jit"))]
        return false;
    }

    /// Why the JIT could not compile the spec, if it tried and failed.
    #[cfg(feature = "jit")]
    pub fn jit_error(&self) -> Option<&JitError> {
        self.jit.get().and_then(|r| r.as_ref().err())
    }

    /// The machine code, compiled now if it was not yet.
    #[cfg(feature = "jit")]
    fn compile_code(&self) -> Option<&JitProgram> {
        self.jit.get_or_init(|| JitProgram::compile(&self.spec)).as_ref().ok()
    }

    #[cfg(not(feature = "jit"))]
    fn compile_code(&self) {}

    /// What runs the next `runs` inputs: with [`Engine::Auto`] they count
    /// towards the threshold, and the run that crosses it compiles.
    #[inline]
    fn code(&self, runs: usize) -> Code<'_> {
        #[cfg(feature = "jit")]
        {
            let compiled = match self.engine {
                Engine::Interp => None,
                Engine::Jit => self.jit.get().and_then(|r| r.as_ref().ok()),
                Engine::Auto => match self.jit.get() {
                    Some(compiled) => compiled.as_ref().ok(),
                    None => {
                        let runs = runs as u64;
                        if self.runs.fetch_add(runs, Ordering::Relaxed) + runs >= AUTO_THRESHOLD {
                            self.compile_code()
                        } else {
                            None
                        }
                    }
                },
            };
            if let Some(jit) = compiled {
                return Code::Jit(jit);
            }
        }
        #[cfg(not(feature = "jit"))]
        let _ = runs;
        Code::Interp(&self.spec)
    }
}

impl Run for Spec {
    #[inline]
    fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        match self.code(1) {
            Code::Interp(spec) => spec.run(input, scratch, host),
            #[cfg(feature = "jit")]
            Code::Jit(jit) => jit.run(input, scratch, host),
        }
    }

    /// Every input of the batch counts as a run for [`Engine::Auto`].
    #[inline]
    fn run_batch<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        match self.code(batch.inputs.len()) {
            Code::Interp(spec) => spec.run_batch(batch, scratch, host, each),
            #[cfg(feature = "jit")]
            Code::Jit(jit) => jit.run_batch(batch, scratch, host, each),
        }
    }

    /// The wire program of the engine that runs the spec now: the JIT's
    /// scans with machine code.
    fn wire_program(&self) -> Option<&matchspec::wire::WireProgram> {
        match self.code(0) {
            Code::Interp(spec) => spec.wire(),
            #[cfg(feature = "jit")]
            Code::Jit(jit) => jit.wire_program(),
        }
    }
}
