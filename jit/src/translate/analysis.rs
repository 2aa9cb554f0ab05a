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
