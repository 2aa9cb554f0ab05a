//! [`redirects`]: where a clause that fails may go on in the next clause
//! without repeating the tests the two clauses begin with.
//!
//! Clauses often begin alike (`{req, get, ...}`, `{req, put, ...}`): the
//! same head tests and reads, on the same registers. When a clause fails
//! after its first `p` ops, and the next clause begins with the same `p`
//! ops, those would pass again and write the same registers with the same
//! values; if nothing since overwrote those registers, the run may go on
//! at the next clause's op `p` with exactly the state it would have
//! reached. A clause that fails at its op `m` inside the common beginning
//! fails the next clause at its op `m` too, so it may go straight to where
//! that one goes.
//!
//! Only ops that are pure functions of the registers they read (and of the
//! input) take part, each reading only the input, constants and registers
//! written by the ops before it in the common beginning, and each going on
//! to the next op when it holds and to the next clause when it does not.

use matchspec::ir::{Effect, Label, Op, Program, Reg};
use matchspec::term::Word;

/// For each op, if its jumps to the start of the next clause may go
/// elsewhere: that start, and the op to go to instead.
pub(crate) fn redirects(
    program: &Program,
    constants: &[Option<Word>],
) -> Vec<Option<(Label, usize)>> {
    let code = program.code();
    let mut redirects = vec![None; code.len()];
    let starts: Vec<usize> = program.clause_starts().iter().map(|l| l.index()).collect();
    // Later pairs first: a failure inside a common beginning goes where
    // the next clause's op goes, which may itself go further.
    for k in (1..starts.len()).rev() {
        let (a, b) = (starts[k - 1], starts[k]);
        let c = starts.get(k + 1).copied().unwrap_or(code.len());
        let p = common_beginning(program, constants, a, b, c);
        if p == 0 {
            continue;
        }
        // Where op `b + m`, failing, goes.
        let target = |m: usize, redirects: &[Option<(Label, usize)>]| -> Option<usize> {
            let fail = fail_label(&code[b + m])?;
            Some(match redirects[b + m] {
                Some((from, to)) if from == fail => to,
                _ => fail.index(),
            })
        };
        let written: Vec<Option<Reg>> = code[b..b + p].iter().map(Op::writes).collect();
        for j in a..b {
            if !code[j].labels().contains(Label(b as u32)) {
                continue;
            }
            let to = if j < a + p {
                target(j - a, &redirects)
            } else {
                // The longest beginning none of whose registers the ops
                // since (up to `j` itself) wrote.
                (1..=p)
                    .rev()
                    .find(|&q| {
                        let kept = &written[..q];
                        code[a + q..=j]
                            .iter()
                            .all(|op| op.writes().is_none_or(|r| !kept.contains(&Some(r))))
                    })
                    .map(|q| b + q)
            };
            if let Some(to) = to {
                redirects[j] = Some((Label(b as u32), to));
            }
        }
    }
    redirects
}

/// How many ops the clauses starting at `a` and `b` (the next one, ending
/// at `c`) begin with alike.
fn common_beginning(
    program: &Program,
    constants: &[Option<Word>],
    a: usize,
    b: usize,
    c: usize,
) -> usize {
    let code = program.code();
    let mut written: Vec<Reg> = Vec::new();
    let mut p = 0;
    while a + p < b && b + p < c {
        let (x, y) = (&code[a + p], &code[b + p]);
        // Alike but for the fail label, which in the first clause must be
        // the second one's start.
        let same = match (pure(x), pure(y)) {
            (Some((x, fx)), Some((y, _))) => x == y && fx.is_none_or(|l| l.index() == b),
            _ => false,
        };
        let reads_known = x
            .reads(program.operands())
            .all(|r| r == Reg::INPUT || constants[r.index()].is_some() || written.contains(&r));
        if !same || !reads_known {
            break;
        }
        written.extend(x.writes());
        p += 1;
    }
    p
}

/// Where `op` goes when it fails, if it is an op of a common beginning.
fn fail_label(op: &Op) -> Option<Label> {
    pure(op).and_then(|(_, fail)| fail)
}

/// `op` with its fail label set to 0 for comparing, and that label, if it
/// may be part of a common beginning: a pure function of its registers
/// and the input that goes on to the next op when it holds.
pub(crate) fn pure(op: &Op) -> Option<(Op, Option<Label>)> {
    // Two-way branches and `and`/`or` (which may leave for the body) stay
    // out, as do ops that build, ask the host or end the run.
    let two_way = matches!(op, Op::BoolBranch { .. } | Op::Logic { .. });
    if op.effect() != Effect::Pure || op.is_terminator() || two_way {
        return None;
    }
    let mut relabeled = *op;
    let mut fail = None;
    relabeled.labels_mut(|label| fail = Some(std::mem::replace(label, Label(0))));
    Some((relabeled, fail))
}

#[cfg(test)]
mod tests {
    use matchspec::bif::Bif;
    use matchspec::ir::{Cmp, Fail, LogicOp, Operands};

    use super::*;

    #[test]
    fn only_steps_that_go_on_or_fail_are_pure() {
        let test = Op::Compare { op: Cmp::Lt, a: Reg(1), b: Reg(2), fail: Label(9) };
        let (relabeled, fail) = pure(&test).expect("a test is a pure step");
        assert_eq!(fail, Some(Label(9)));
        assert_eq!(relabeled.labels().into_iter().collect::<Vec<_>>(), [Label(0)]);
        let read = Op::GetHead { src: Reg(1), dst: Reg(2) };
        assert_eq!(pure(&read).map(|(_, fail)| fail), Some(None));

        let logic = Op::Logic {
            op: LogicOp::And,
            args: Operands { start: 0, len: 2 },
            dst: Reg(8),
            fail: Fail::Jump(Label(3)),
        };
        let call = Op::Call {
            bif: Bif::Hd,
            args: [Reg(5), Reg(0), Reg(0)],
            dst: Reg(6),
            fail: Fail::Jump(Label(4)),
        };
        let not_pure = [
            Op::BoolBranch { src: Reg(3), when: true, target: Label(4), other: Label(7) },
            logic,
            call,
            Op::Jump { target: Label(2) },
            Op::NoMatch,
            Op::MakeCons { head: Reg(1), tail: Reg(2), dst: Reg(3) },
        ];
        for op in not_pure {
            assert!(pure(&op).is_none(), "{op:?} is not a pure step");
        }
    }
}
