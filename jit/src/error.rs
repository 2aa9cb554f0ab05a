//! [`JitError`]: why a program was not compiled to machine code.

/// Why the JIT did not compile a program. None of these is a wrong answer:
/// the spec runs in the interpreter instead, and the `msc` facade's `Engine`
/// does that by itself.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JitError {
    /// The program has more ops than the JIT takes.
    #[error("the program has {ops} ops, more than the JIT's limit of {limit}")]
    TooLarge {
        /// The program's size.
        ops: usize,
        /// The JIT's limit, `MAX_OPS`.
        limit: usize,
    },
    /// The program breaks an invariant of the IR that the machine code
    /// relies on ([`Program::verify`](matchspec::ir::Program::verify); the
    /// compiler never makes such programs).
    #[error("the program is malformed: {0}")]
    Malformed(#[from] matchspec::ir::VerifyError),
    /// Cranelift does not support this machine.
    #[error("Cranelift does not support this machine: {reason}")]
    UnsupportedHost {
        /// Cranelift's reason.
        reason: &'static str,
    },
    /// A Cranelift setting was refused.
    #[error("Cranelift refused the setting {name}")]
    Setting {
        /// The setting.
        name: &'static str,
    },
    /// Cranelift failed to compile or link the code.
    #[error("Cranelift failed: {0}")]
    Codegen(#[source] std::sync::Arc<cranelift_module::ModuleError>),
}
