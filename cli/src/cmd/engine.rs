//! `--engine`: which engine runs the specs.

use matchspec::CompiledSpec;
use msc::{Engine, Spec};

/// The engines `--engine` can name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EngineArg {
    /// The interpreter (the reference engine).
    #[default]
    Interp,
    /// The Cranelift JIT (specs it cannot compile are interpreted).
    Jit,
    /// Interpret first, compile to native code once a spec is hot.
    Auto,
}

impl EngineArg {
    /// The engine.
    pub(crate) fn engine(self) -> Engine {
        match self {
            EngineArg::Interp => Engine::Interp,
            EngineArg::Jit => Engine::Jit,
            EngineArg::Auto => Engine::Auto,
        }
    }

    /// The engine's name, as benchmarks report it.
    pub(crate) fn name(self) -> &'static str {
        self.engine().name()
    }

    /// `spec` on this engine.
    pub(crate) fn spec(self, spec: CompiledSpec) -> Spec {
        Spec::new(spec, self.engine())
    }
}
