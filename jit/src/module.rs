//! The Cranelift target machine and JIT modules every piece of machine
//! code is made in.

use std::sync::LazyLock;

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;

use crate::JitError;

/// The target machine, set up once: probing the CPU is not cheap.
static ISA: LazyLock<Result<OwnedTargetIsa, JitError>> = LazyLock::new(|| {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, name: &'static str, value: &'static str| {
        flags.set(name, value).map_err(|_| JitError::Setting { name })
    };
    // Compile time matters as much as code speed: specs are compiled at
    // run time, often for a short life. The translator already reuses
    // loaded registers, so Cranelift's optimizer finds nothing left to do
    // (the same instructions per event on all six workloads) and skipping
    // it compiles 23-25% faster. The single-pass register allocator
    // compiles faster still but spills every value (twice the
    // instructions per event), so the backtracking one stays.
    set(&mut flags, "opt_level", "none")?;
    set(&mut flags, "regalloc_algorithm", "backtracking")?;
    // The verifier doubles compile time; the translator's output is
    // checked by it in debug builds (and so by every test run).
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    // Required by cranelift-jit (see `JITBuilder::with_flags`).
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    let isa = cranelift_native::builder().map_err(|reason| JitError::UnsupportedHost { reason })?;
    isa.finish(settings::Flags::new(flags)).map_err(|e| codegen(e.into()))
});

/// A builder of a module for this machine.
pub(crate) fn builder() -> Result<JITBuilder, JitError> {
    let isa = ISA.as_ref().map_err(Clone::clone)?.clone();
    Ok(JITBuilder::with_isa(isa, default_libcall_names()))
}

/// A module for code that calls nothing.
pub(crate) fn bare() -> Result<JITModule, JitError> {
    Ok(JITModule::new(builder()?))
}

/// A Cranelift error as a [`JitError`].
pub(crate) fn codegen(e: cranelift_module::ModuleError) -> JitError {
    JitError::Codegen(std::sync::Arc::new(e))
}
