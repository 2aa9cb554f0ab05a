//! [`CompiledSpec`]: the front door. Text or term in, a runnable spec out.

use std::fmt;
use std::sync::Arc;

use crate::config::Config;
use crate::host::{Host, TestHost};
use crate::interp::Scratch;
use crate::ir::Program;
use crate::outcome::{EvalError, Outcome};
use crate::spec::{Kind, SpecErrors};
use crate::syntax::{ParseError, parse_term_with_spans};
use crate::term::{Heap, TermRef, Word};

/// A match spec compiled for one event kind: cheap to clone, `Send + Sync`,
/// runnable by any engine.
///
/// ```
/// use matchspec::{CompiledSpec, Config, Outcome, Scratch, spec::Kind, term::Term};
///
/// let spec = CompiledSpec::compile(
///     "[{{'$1', '$2', ok}, [{'>', '$2', 100}], [{{'$1', '$2'}}]}]",
///     Kind::Table,
///     &Config::default(),
/// ).unwrap();
/// let mut scratch = Scratch::new();
///
/// let hit = Term::parse("{user_7, 150, ok}").unwrap();
/// let outcome = spec.run(hit.as_ref(), &mut scratch).unwrap();
/// assert_eq!(outcome.result().unwrap().to_string(), "{user_7,150}");
///
/// let miss = Term::parse("{user_8, 50, ok}").unwrap();
/// assert_eq!(spec.run(miss.as_ref(), &mut scratch).unwrap(), Outcome::NoMatch);
/// ```
#[derive(Clone, Debug)]
pub struct CompiledSpec {
    program: Arc<Program>,
}

/// Why a spec did not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// The text is not a term.
    Parse(ParseError),
    /// The term is not a valid spec for the kind (ERTS's messages).
    Spec(SpecErrors),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Parse(e) => e.fmt(f),
            CompileError::Spec(e) => e.fmt(f),
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
        let (term, map) = parse_term_with_spans(text)?;
        CompiledSpec::from_term(term.as_ref(), kind, config).map_err(|mut errors| {
            errors.locate(text, &map, term.as_ref());
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
        Ok(CompiledSpec { program: Arc::new(crate::ir::compile(&checked)) })
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

    /// Runs the spec on `input` with the interpreter, as the process that
    /// calls `erlang:match_spec_test/3` would see it (see [`TestHost`]).
    /// For trace kinds the input is the argument list.
    pub fn run<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
    ) -> Result<Outcome<'a>, EvalError> {
        self.run_with_host(input, scratch, &mut TestHost::default())
    }

    /// Runs the spec on each of `inputs`, terms of `heap`, with the
    /// interpreter, and hands each outcome to `each` (with the input's
    /// index) before the next run: what a filter does, without the cost of
    /// starting a run per input. Trace actions go to `host`. The outcome is
    /// lent for the call (copy it to keep it): an engine that hands over
    /// many results of one run then writes only what changes between them.
    ///
    /// ```
    /// use matchspec::{CompiledSpec, Config, TestHost, Scratch, spec::Kind, syntax::parse_terms_into, term::Heap};
    ///
    /// let spec = CompiledSpec::compile("[{{'$1', ok}, [], ['$1']}]", Kind::Table, &Config::default()).unwrap();
    /// let mut heap = Heap::new();
    /// let rows = parse_terms_into("{a, ok}. {b, error}. {c, ok}.", &mut heap).unwrap();
    /// let mut kept = Vec::new();
    /// spec.run_each(&heap, &rows, &mut Scratch::new(), &mut TestHost::default(), |_, outcome| {
    ///     if let Ok(outcome) = outcome && let Some(result) = outcome.result() {
    ///         kept.push(result.to_string());
    ///     }
    /// });
    /// assert_eq!(kept, ["a", "c"]);
    /// ```
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
        crate::interp::run_each(&self.program, heap, inputs, scratch, host, true, each);
    }

    /// [`run_each`](Self::run_each), handing over only the inputs that
    /// match a clause (and those that cannot run at all): what a filter
    /// wants, as `ets:select/2` returns only the matches.
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
        crate::interp::run_each(&self.program, heap, inputs, scratch, host, false, each);
    }

    /// Runs the spec on `input` with the interpreter; trace actions go to `host`.
    pub fn run_with_host<'a>(
        &'a self,
        input: TermRef<'a>,
        scratch: &'a mut Scratch,
        host: &mut dyn Host,
    ) -> Result<Outcome<'a>, EvalError> {
        crate::interp::run(&self.program, input, scratch, host)
    }
}
