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

use matchspec::ir::{Label, Op, Program, Reg};
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
    let mut relabeled = *op;
    let fail = match &mut relabeled {
        Op::IsArity { fail, .. }
        | Op::IsTuple { fail, .. }
        | Op::IsElement { fail, .. }
        | Op::IsCons { fail, .. }
        | Op::IsMap { fail, .. }
        | Op::GetMapValue { fail, .. }
        | Op::IsWord { fail, .. }
        | Op::IsExactEq { fail, .. }
        | Op::Compare { fail, .. }
        | Op::TypeTest { fail, .. } => Some(std::mem::replace(fail, Label(0))),
        Op::GetArg { .. }
        | Op::GetElement { .. }
        | Op::GetHead { .. }
        | Op::GetTail { .. }
        | Op::Move { .. } => None,
        // Building, calls (which may fail into the body or touch the
        // host), branches with two targets, trace actions, ends.
        Op::GetArgList { .. }
        | Op::Call { .. }
        | Op::BoolBranch { .. }
        | Op::Logic { .. }
        | Op::Jump { .. }
        | Op::MakeTuple { .. }
        | Op::MakeCons { .. }
        | Op::MakeList { .. }
        | Op::MakeMap { .. }
        | Op::SelfPid { .. }
        | Op::SetFlag { .. }
        | Op::Display { .. }
        | Op::IsSeqTrace { .. }
        | Op::SetSeqToken { .. }
        | Op::GetSeqToken { .. }
        | Op::ProcessDump { .. }
        | Op::ChangeTrace { .. }
        | Op::Caller { .. }
        | Op::CallerLine { .. }
        | Op::CurrentStacktrace { .. }
        | Op::Silent { .. }
        | Op::Succeed { .. }
        | Op::NoMatch => return None,
    };
    Some((relabeled, fail))
}
