//! [`Engine`]: which engine runs a spec.

use std::fmt;
use std::str::FromStr;

/// Which engine runs a spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The interpreter: the reference engine, no compile time.
    Interp,
    /// Machine code from the start, compiled when the spec is made (the
    /// interpreter if the JIT cannot compile it, or without the `jit`
    /// feature).
    Jit,
    /// Interpret first; compile to machine code once the spec has run
    /// [`AUTO_THRESHOLD`] times, when the compile time has paid for
    /// itself.
    #[default]
    Auto,
}

/// How many runs [`Engine::Auto`] interprets before compiling.
///
/// Measured on the six benchmark workloads (`benches/README.md`): compiling
/// takes 86-604 µs (warm) and the machine code saves 6-46 ns per run, so
/// compiling pays for itself after 5,600 to 19,700 runs (break-even =
/// compile time / saving per run; median about 15,000). A spec that runs
/// twice the threshold has paid back its compile time in every workload
/// measured, and a spec that runs only a few thousand times never pays
/// for a compile. (The threshold was chosen when compiling took 48-271 µs,
/// as the worst break-even then, rounded down.)
pub const AUTO_THRESHOLD: u64 = 20_000;

impl Engine {
    /// Every engine, in declaration order.
    pub const ALL: [Engine; 3] = [Engine::Interp, Engine::Jit, Engine::Auto];

    /// The engine's name (`interp`, `jit`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Jit => "jit",
            Engine::Auto => "auto",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name [`Engine::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEngine(pub String);

impl fmt::Display for UnknownEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown engine `{}` (expected interp, jit or auto)", self.0)
    }
}

impl std::error::Error for UnknownEngine {}

impl FromStr for Engine {
    type Err = UnknownEngine;

    fn from_str(name: &str) -> Result<Engine, UnknownEngine> {
        Engine::ALL.into_iter().find(|e| e.name() == name).ok_or_else(|| UnknownEngine(name.into()))
    }
}
