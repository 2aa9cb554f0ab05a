//! [`fusions`]: arithmetic whose only use is a comparison, computed by the
//! comparison itself.
//!
//! A guard such as `{'<', {'*', '$1', 3}, {'+', '$2', 100}}` writes
//! `'$2' + 100` to a register that only the comparison reads. When the sum
//! is a float or a bignum, building it in the heap and decoding it again
//! for the comparison costs more than the sum: the translator computes it
//! at the comparison instead, inline for small integers as ever, and
//! otherwise by one helper (`msc_num_add_compare` and its kin, in
//! `arith.rs`) that compares it without building it unless the comparison
//! needs the term.
//!
//! Moving arithmetic op `i` to comparison `j` keeps the program's meaning
//! when:
//!
//! * op `i` is `+ - * /` whose failure jumps to a label `L`, and op `j` a
//!   comparison that fails to the same `L` and reads `i`'s result on one
//!   side only: a failing sum and a false comparison go to the same place;
//! * no op in `i + 1 ..= j` is a jump target (a clause start, a label, a
//!   redirect of `prefix.rs`): every run that reaches `j` came through `i`;
//! * each op in between is a pure function of registers and the input
//!   that goes on to the next op or fails to `L`, reads neither `i`'s
//!   result nor writes it or `i`'s operands: whichever of them and `i`
//!   would fail first, the run goes to `L`, with nothing done that `i`
//!   failing first would have left undone;
//! * `i`'s result is dead after `j`: every path from `j` writes the
//!   register before it reads it. This is looked for in at most
//!   [`LOOK_AHEAD`] ops, so the whole analysis is linear in the program.

use matchspec::bif::Bif;
use matchspec::ir::{Fail, Label, Op, Program, Reg};

use crate::prefix;

/// How many ops the search for a later read of a fused result looks at,
/// at most, before it gives up (and the ops stay apart).
const LOOK_AHEAD: usize = 64;

/// How many ops may lie between an arithmetic op and its comparison.
const MAX_GAP: usize = 16;

/// Which ops take part in a fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fused {
    /// Not part of one.
    No,
    /// An arithmetic op the comparison at this index computes.
    Deferred(usize),
    /// A comparison that computes this arithmetic op.
    Computes(Arith),
}

/// The arithmetic op a comparison computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arith {
    /// Its index.
    pub(crate) pc: usize,
    /// `+ - * /`.
    pub(crate) bif: Bif,
    /// Its operands.
    pub(crate) args: [Reg; 2],
    /// The register the comparison reads its result in.
    pub(crate) result: Reg,
    /// Its heap slot (see `translate::heap_slots`): where the comparison
    /// builds the result if it needs the term.
    pub(crate) slot: u32,
}

/// For each op of `program`, its part in a fusion; `targets` marks the ops
/// some jump (or redirect) reaches, `slots` the heap slots of the ops that
/// build (arithmetic without one is left alone).
pub(crate) fn fusions(program: &Program, targets: &[bool], slots: &[Option<u32>]) -> Vec<Fused> {
    let code = program.code();
    let mut fused = vec![Fused::No; code.len()];
    for (i, op) in code.iter().enumerate() {
        let Op::Call { bif, args, dst, fail: Fail::Jump(label) } = *op else {
            continue;
        };
        let Some(slot) = slots[i].filter(|_| is_arithmetic(bif)) else {
            continue;
        };
        let operands = &args[..2];
        for j in i + 1..code.len().min(i + 2 + MAX_GAP) {
            if targets[j] {
                break;
            }
            if let Op::Compare { a, b, fail, .. } = code[j]
                && (a == dst) != (b == dst)
                && fail == label
                // One fusion a comparison: the first of its operands.
                && fused[j] == Fused::No
            {
                if dead_after(code, program.operands(), j, dst) {
                    fused[i] = Fused::Deferred(j);
                    let args = [args[0], args[1]];
                    fused[j] = Fused::Computes(Arith { pc: i, bif, args, result: dst, slot });
                }
                break;
            }
            let between = &code[j];
            let untouched = !between.reads(program.operands()).any(|r| r == dst)
                && between.writes().is_none_or(|w| w != dst && !operands.contains(&w));
            if !untouched || !pure_or_fails_to(between, label) {
                break;
            }
        }
    }
    fused
}

/// `+ - * /`, the functions with lean helpers that build their result.
fn is_arithmetic(bif: Bif) -> bool {
    matches!(bif, Bif::Add | Bif::Sub | Bif::Mul | Bif::FloatDiv)
}

/// Is `op` a pure function of its registers and the input, going on to
/// the next op or failing to `label`? The ops a common beginning of
/// clauses may hold (`prefix.rs`), and calls of functions that do not ask
/// the host.
fn pure_or_fails_to(op: &Op, label: Label) -> bool {
    match *op {
        Op::Call { bif, fail, .. } => fail == Fail::Jump(label) && !bif.asks_host(),
        _ => prefix::pure(op).is_some_and(|(_, fail)| fail.is_none_or(|fail| fail == label)),
    }
}

/// Does every path from op `j` on write `r` before reading it, as found
/// within [`LOOK_AHEAD`] ops (`false` if not found so)?
fn dead_after(code: &[Op], operands: &[Reg], j: usize, r: Reg) -> bool {
    // At most `LOOK_AHEAD` ops are visited: a list, not a set the size of
    // the program, keeps the whole analysis linear.
    let mut seen: Vec<usize> = Vec::with_capacity(LOOK_AHEAD);
    let mut pending: Vec<usize> = successors(&code[j], j);
    while let Some(pc) = pending.pop() {
        let Some(op) = code.get(pc) else {
            // Past the end, which no well-formed program reaches.
            return false;
        };
        if seen.contains(&pc) {
            continue;
        }
        if seen.len() == LOOK_AHEAD {
            return false;
        }
        seen.push(pc);
        if op.reads(operands).any(|read| read == r) {
            return false;
        }
        if op.writes() != Some(r) {
            pending.extend(successors(op, pc));
        }
    }
    true
}

/// Where the run may go after op `pc`.
fn successors(op: &Op, pc: usize) -> Vec<usize> {
    let mut next: Vec<usize> = op.labels().into_iter().map(|l| l.index()).collect();
    if !op.is_terminator() {
        next.push(pc + 1);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchspec::ir::Cmp;
    use matchspec::spec::Kind;
    use matchspec::{CompiledSpec, Config};

    fn fusions_of(spec: &str) -> (Vec<Fused>, String) {
        let compiled = CompiledSpec::compile(spec, Kind::Table, &Config::default()).unwrap();
        let program = compiled.program();
        let targets = crate::translate::jump_targets(program);
        let (slots, _) = crate::translate::heap_slots(program);
        (fusions(program, &targets, &slots), program.to_string())
    }

    /// The arith workload's guard: `+` is computed by the `<` two ops on,
    /// past the `*` that fails to the same place.
    #[test]
    fn a_sum_compared_once_is_fused() {
        let (fused, dump) = fusions_of(
            "[{{'$1','$2'},[{'<',{'*','$1',3},{'+','$2',100}}],[{'-',{'*','$2',2},{'div','$1',7}}]}]",
        );
        let deferred: Vec<(usize, usize)> = fused
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match *f {
                Fused::Deferred(j) => Some((i, j)),
                _ => None,
            })
            .collect();
        // Both operands are arithmetic: the one nearer the comparison is
        // fused (the other is read by nothing but it too, but its path to
        // the comparison crosses the first).
        assert_eq!(deferred.len(), 1, "{dump}");
        let (i, j) = deferred[0];
        assert!(matches!(fused[j], Fused::Computes(Arith { pc, .. }) if pc == i), "{dump}");
    }

    /// `andalso` and separate comparisons compute each their own sum.
    #[test]
    fn each_comparison_computes_its_own_sum() {
        let (fused, dump) = fusions_of(
            "[{{'$1','$2'},[{'andalso',{'<',{'+','$2',1},'$1'},{'>',{'-','$2',1},0}}],['$2']}]",
        );
        let deferred = fused.iter().filter(|f| matches!(f, Fused::Deferred(_))).count();
        assert_eq!(deferred, 2, "{dump}");
    }

    /// `orelse`: the comparison fails to the next alternative, the sum to
    /// the next clause; moving the sum would change where a failing sum
    /// goes.
    #[test]
    fn different_fail_labels_are_not_fused() {
        let (fused, dump) = fusions_of(
            "[{{'$1','$2'},[{'orelse',{'<',{'+','$2',1},'$1'},{'>',{'*','$2',2},0}}],['$2']}]",
        );
        // Only the second alternative's product, whose comparison fails to
        // the next clause too.
        let deferred: Vec<usize> = fused
            .iter()
            .enumerate()
            .filter_map(|(i, f)| matches!(f, Fused::Deferred(_)).then_some(i))
            .collect();
        assert_eq!(deferred.len(), 1, "{dump}");
        let program = CompiledSpec::compile(
            "[{{'$1','$2'},[{'orelse',{'<',{'+','$2',1},'$1'},{'>',{'*','$2',2},0}}],['$2']}]",
            Kind::Table,
            &Config::default(),
        )
        .unwrap();
        assert!(
            matches!(program.program().code()[deferred[0]], Op::Call { bif: Bif::Mul, .. }),
            "{dump}"
        );
    }

    /// A comparison whose other operand is a function call between: the
    /// call is pure and fails to the same place, so the sum moves past it.
    #[test]
    fn a_pure_call_between_is_crossed() {
        let (fused, dump) =
            fusions_of("[{{'$1','$2'},[{'<',{'+','$2',1},{'element',1,'$1'}}],['$2']}]");
        assert!(fused.iter().any(|f| matches!(f, Fused::Computes(_))), "{dump}");
    }

    /// A result read after its comparison, on either way on, stays built;
    /// one written first is dead.
    #[test]
    fn liveness_follows_every_way_on() {
        let (r, other) = (Reg(8), Reg(2));
        let compare = Op::Compare { op: Cmp::Lt, a: r, b: other, fail: Label(3) };
        // The ops here have no operand lists.
        let reads: &[Reg] = &[];
        // Read on the way that holds.
        let code = [compare, Op::Succeed { result: r }, Op::NoMatch, Op::NoMatch];
        assert!(!dead_after(&code, reads, 0, r));
        // Read on the way that fails.
        let code = [compare, Op::NoMatch, Op::NoMatch, Op::Succeed { result: r }];
        assert!(!dead_after(&code, reads, 0, r));
        // Written before it is read, on both ways.
        let code = [
            compare,
            Op::Move { src: other, dst: r },
            Op::Succeed { result: r },
            Op::Move { src: other, dst: r },
            Op::Succeed { result: r },
        ];
        assert!(dead_after(&code, reads, 0, r));
        // Never read.
        let code = [compare, Op::Succeed { result: other }, Op::NoMatch, Op::NoMatch];
        assert!(dead_after(&code, reads, 0, r));
        // Beyond the look-ahead: taken as read.
        let mut code = vec![compare];
        code.extend(std::iter::repeat_n(Op::Move { src: other, dst: Reg(9) }, LOOK_AHEAD + 1));
        code.extend([Op::Succeed { result: other }, Op::NoMatch]);
        code[0] = Op::Compare { op: Cmp::Lt, a: r, b: other, fail: Label(code.len() as u32 - 1) };
        assert!(!dead_after(&code, reads, 0, r));
    }

    /// What a sum may move past: pure ops that go on or fail where it
    /// fails; not host calls, other labels or bodies' `'EXIT'`.
    #[test]
    fn only_pure_ops_failing_alike_are_crossed() {
        let (l, other) = (Label(9), Label(8));
        let args = [Reg(2), Reg(3), Reg::NONE];
        let call = |bif, fail| Op::Call { bif, args, dst: Reg(4), fail };
        assert!(pure_or_fails_to(&call(Bif::Mul, Fail::Jump(l)), l));
        assert!(pure_or_fails_to(&call(Bif::Element, Fail::Jump(l)), l));
        assert!(!pure_or_fails_to(&call(Bif::Mul, Fail::Jump(other)), l));
        assert!(!pure_or_fails_to(&call(Bif::Mul, Fail::Exit), l));
        assert!(!pure_or_fails_to(&call(Bif::Node0, Fail::Jump(l)), l));
        assert!(!pure_or_fails_to(&call(Bif::GetTcw, Fail::Jump(l)), l));
        let compare = |fail| Op::Compare { op: Cmp::Lt, a: Reg(2), b: Reg(3), fail };
        assert!(pure_or_fails_to(&compare(l), l));
        assert!(!pure_or_fails_to(&compare(other), l));
        assert!(pure_or_fails_to(&Op::Move { src: Reg(2), dst: Reg(5) }, l));
        assert!(!pure_or_fails_to(&Op::Jump { target: l }, l));
        assert!(!pure_or_fails_to(&Op::Display { src: Reg(2) }, l));
    }

    /// Arithmetic in a body (which makes `'EXIT'` rather than failing) is
    /// never fused.
    #[test]
    fn body_arithmetic_is_not_fused() {
        let (fused, dump) = fusions_of("[{{'$1','$2'},[],[{'+','$2',1}]}]");
        assert!(fused.iter().all(|&f| f == Fused::No), "{dump}");
    }
}
