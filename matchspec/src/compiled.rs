//! [`CompiledSpec`]: the front door. Text or term in, a runnable spec out.

use std::fmt;
use std::sync::Arc;

use crate::config::Config;
use crate::fun2ms::{Dialect, Fun2msError, fun2ms_with_syntax};
use crate::host::Host;
use crate::ir::Program;
use crate::outcome::{EvalError, Outcome};
use crate::run::{Batch, Run};
use crate::scratch::Scratch;
use crate::spec::{Kind, SpecErrors};
use crate::syntax::ParseError;
use crate::term::{Term, TermRef};
use crate::wire::WireProgram;

/// A match spec compiled for one event kind: cheap to clone, `Send + Sync`,
/// runnable by any engine; [`Run`] runs it with the interpreter.
///
/// ```
/// use matchspec::{CompiledSpec, Config, Outcome, Run, Scratch, TestHost, spec::Kind, term::Term};
///
/// let spec = CompiledSpec::compile(
///     "[{{'$1', '$2', ok}, [{'>', '$2', 100}], [{{'$1', '$2'}}]}]",
///     Kind::Table,
///     &Config::default(),
/// ).unwrap();
/// let (mut scratch, mut host) = (Scratch::new(), TestHost::default());
///
/// let hit = Term::parse("{user_7, 150, ok}").unwrap();
/// let outcome = spec.run(hit.as_ref(), &mut scratch, &mut host).unwrap();
/// assert_eq!(outcome.result().unwrap().to_string(), "{user_7,150}");
///
/// let miss = Term::parse("{user_8, 50, ok}").unwrap();
/// assert_eq!(spec.run(miss.as_ref(), &mut scratch, &mut host).unwrap(), Outcome::NoMatch);
/// ```
#[derive(Clone, Debug)]
pub struct CompiledSpec {
    program: Arc<Program>,
    /// Its head tests on encoded terms (table specs).
    wire: Option<Arc<WireProgram>>,
}

/// Why a spec did not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// The text is not a term.
    Parse(ParseError),
    /// The term is not a valid spec for the kind (ERTS's messages).
    Spec(SpecErrors),
    /// The fun did not translate into a spec (see [`crate::fun2ms`]).
    Fun(Fun2msError),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Parse(e) => e.fmt(f),
            CompileError::Spec(e) => e.fmt(f),
            CompileError::Fun(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CompileError {}

impl From<ParseError> for CompileError {
    fn from(e: ParseError) -> CompileError {
        CompileError::Parse(e)
    }
}

impl From<SpecErrors> for CompileError {
    fn from(e: SpecErrors) -> CompileError {
        CompileError::Spec(e)
    }
}

impl CompiledSpec {
    /// Parses, checks and compiles a spec written as Erlang term text. Spec
    /// errors point at their place in `text`.
    pub fn compile(text: &str, kind: Kind, config: &Config) -> Result<CompiledSpec, CompileError> {
        let (term, map) = config.syntax().parse_term_with_spans(text)?;
        CompiledSpec::from_term(term.as_ref(), kind, config).map_err(|mut errors| {
            errors.locate(text, &map, term.as_ref());
            CompileError::Spec(errors)
        })
    }

    /// Translates a fun as `ets:fun2ms/1` (table) or `dbg:fun2ms/1` (trace
    /// kinds) would, with `bindings` for the variables its head does not
    /// bind, then checks and compiles the spec. Errors point into the fun's
    /// text, ERTS's included.
    ///
    /// ```
    /// use matchspec::{CompiledSpec, Config, spec::Kind};
    /// let spec = CompiledSpec::from_fun("fun({K, V}) when V > 1 -> K end", Kind::Table, &[], &Config::default());
    /// assert!(spec.is_ok());
    /// let err = CompiledSpec::from_fun("fun([A]) -> return_trace() end", Kind::Table, &[], &Config::default());
    /// assert!(err.is_err());
    /// ```
    pub fn from_fun(
        text: &str,
        kind: Kind,
        bindings: &[(&str, Term)],
        config: &Config,
    ) -> Result<CompiledSpec, CompileError> {
        let dialect = if kind == Kind::Table { Dialect::Table } else { Dialect::Trace };
        let (spec, map) = fun2ms_with_syntax(text, dialect, bindings, config.syntax())
            .map_err(CompileError::Fun)?;
        CompiledSpec::from_term(spec.as_ref(), kind, config).map_err(|mut errors| {
            errors.locate(text, &map, spec.as_ref());
            CompileError::Spec(errors)
        })
    }

    /// Checks and compiles a spec term.
    pub fn from_term(
        spec: TermRef<'_>,
        kind: Kind,
        config: &Config,
    ) -> Result<CompiledSpec, SpecErrors> {
        let checked = crate::spec::check(spec, kind, config)?;
        let program = crate::ir::compile(&checked);
        let program = Arc::new(program);
        let wire = WireProgram::lower(&program).map(Arc::new);
        Ok(CompiledSpec { program, wire })
    }

    /// The wire program: the spec's head tests on encoded terms (table
    /// specs only; see [`wire`](crate::wire)).
    pub fn wire(&self) -> Option<&WireProgram> {
        self.wire.as_deref()
    }

    /// The compiled program (the IR every engine runs).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The program, shared.
    pub fn shared_program(&self) -> Arc<Program> {
        Arc::clone(&self.program)
    }

    /// The event kind.
    pub fn kind(&self) -> Kind {
        self.program.kind()
    }
}

/// The interpreter.
impl Run for CompiledSpec {
    #[inline]
    fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        crate::interp::run(&self.program, input, scratch, host)
    }

    #[inline]
    fn run_batch<F>(&self, batch: Batch<'_>, scratch: &mut Scratch, host: &mut dyn Host, each: F)
    where
        F: FnMut(usize, Result<&Outcome<'_>, &EvalError>),
    {
        let every = batch.report == crate::run::Report::Every;
        crate::interp::run_batch(
            &self.program,
            (batch.heap, batch.inputs),
            every,
            scratch,
            host,
            each,
        );
    }

    fn wire_program(&self) -> Option<&WireProgram> {
        self.wire()
    }
}
