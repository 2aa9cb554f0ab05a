//! [`Effects`]: what a program's helpers may leave behind for Rust, which
//! decides how its outcomes reach Rust (see `abi`).

use matchspec::ir::{Effect, Op, Program};

/// What running a program may do besides what its machine code does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Effects {
    /// Nothing: no helper it calls builds terms, sets flags or touches the
    /// host, so every outcome is buffered and no no-match is reported.
    None,
    /// Helpers may build terms or set flags, but never touch the host: an
    /// outcome after such a helper returns to Rust at once (to be handed
    /// over with its flags, and cleaned up); the others are buffered.
    Heap,
    /// Helpers may touch the host: every match returns to Rust at once,
    /// and so does every no-match the caller wants, so that each outcome
    /// is handed over before the next input's effects.
    Host,
}

/// The effects of `program`, whose building ops have heap slots where
/// `slots` says.
pub(crate) fn effects(program: &Program, slots: &[Option<u32>]) -> Effects {
    let args_in_rust = needs_args(program);
    program
        .code()
        .iter()
        .zip(slots)
        .map(|(op, slot)| match *op {
            // Inline up to a number of arguments, else the interpreter's
            // (which reads the arguments Rust loaded, if it did).
            Op::IsArity { arity, .. } | Op::IsArityAtLeast { arity, .. }
                if arity <= MAX_INLINE_ARGS =>
            {
                Effects::None
            }
            Op::GetArg { index, .. } if index < MAX_INLINE_ARGS && !args_in_rust => Effects::None,
            Op::IsArity { .. } | Op::IsArityAtLeast { .. } | Op::GetArg { .. } => Effects::Heap,
            // In a heap slot, else by a helper.
            Op::MakeTuple { .. } | Op::MakeList { .. } | Op::MakeCons { .. } if slot.is_some() => {
                Effects::None
            }
            // Otherwise what the op may do: pure ops are inline or lean
            // helpers (which fall back to frame helpers that do not build).
            _ => match op.effect() {
                Effect::Pure => Effects::None,
                Effect::Build | Effect::Flag => Effects::Heap,
                Effect::Host => Effects::Host,
            },
        })
        .max()
        .unwrap_or(Effects::None)
}

/// The most arguments `is_arity` and `get_arg` walk the input list for in
/// the machine code; beyond, they read the arguments Rust loads.
pub(crate) const MAX_INLINE_ARGS: u32 = 32;

/// Does the machine code of `program` need a trace event's arguments
/// loaded in Rust (ops that read them through `step`)? If not, the input
/// list is all it reads.
pub(crate) fn needs_args(program: &Program) -> bool {
    program.code().iter().any(|op| match *op {
        Op::GetArgList { .. } => true,
        Op::IsArity { arity, .. } | Op::IsArityAtLeast { arity, .. } => arity > MAX_INLINE_ARGS,
        Op::GetArg { index, .. } => index >= MAX_INLINE_ARGS,
        // Every other op reads registers only: these are the ones
        // that walk the argument list.
        _ => false,
    })
}
