//! `--engine`: which engine runs the specs.

use matchspec::conformance::{Interpreter, Runner};

use crate::CliError;

/// The engines `--engine` can name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EngineArg {
    /// The interpreter (the reference engine).
    #[default]
    Interp,
    /// The Cranelift JIT.
    Jit,
    /// Interpret first, compile to native code once a spec is hot.
    Auto,
}

impl EngineArg {
    /// The engine's name, as benchmarks report it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            EngineArg::Interp => "interp",
            EngineArg::Jit => "jit",
            EngineArg::Auto => "auto",
        }
    }

    /// A runner for this engine.
    pub(crate) fn runner(self) -> Result<Box<dyn Runner>, CliError> {
        match self {
            EngineArg::Interp => Ok(Box::new(Interpreter)),
            EngineArg::Jit | EngineArg::Auto => {
                Err(CliError::EngineNotBuilt { engine: self.name() })
            }
        }
    }
}
