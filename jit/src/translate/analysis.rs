//! What the translator works out of a program before emitting it.

use super::*;

/// Which ops start a clause or are jumped to.
pub(crate) fn jump_targets(program: &Program) -> Vec<bool> {
    let code = program.code();
    let mut targets = vec![false; code.len()];
    let labels = program.clause_starts().iter().copied().chain(code.iter().flat_map(Op::labels));
    for label in labels {
        if let Some(t) = targets.get_mut(label.index()) {
            *t = true;
        }
    }
    targets
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
        Op::IsArity { arity, .. } => arity > MAX_INLINE_ARGS,
        Op::GetArg { index, .. } => index >= MAX_INLINE_ARGS,
        // Every other op reads registers only: these three are the ones
        // that walk the argument list.
        _ => false,
    })
}

/// Which registers some `+ - * /` writes.
pub(super) fn arithmetic_results(program: &Program) -> Vec<bool> {
    let mut computed = vec![false; program.registers()];
    for op in program.code() {
        if let Op::Call { bif: Bif::Add | Bif::Sub | Bif::Mul | Bif::FloatDiv, dst, .. } = *op {
            computed[dst.index()] = true;
        }
    }
    computed
}

/// The constant each register holds for the whole run: the program's
/// constants, unless an op writes their register.
pub(super) fn constant_registers(program: &Program) -> Vec<Option<Word>> {
    let mut constants = vec![None; program.registers()];
    let first = program.first_constant();
    for (i, &word) in program.constants().iter().enumerate() {
        if let Some(c) = constants.get_mut(first + i) {
            *c = Some(word);
        }
    }
    for op in program.code() {
        if let Some(dst) = op.writes() {
            constants[dst.index()] = None;
        }
    }
    constants
}
