//! The stable text form of a [`Program`] (what `msc dump` prints).

use std::fmt;

use super::{ChangeTrace, Fail, LogicOp, Op, Operands, Program, Reg, TraceFlag};
use crate::term::{HeapSet, Word};

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clauses = self.clause_starts.len();
        writeln!(
            f,
            "{} program: {} clause{}, {} registers",
            self.kind,
            clauses,
            if clauses == 1 { "" } else { "s" },
            self.registers
        )?;
        let mut names = vec!["r0 = input".to_owned()];
        names.extend(self.variables.iter().map(|(n, r)| format!("r{} = '${n}'", r.0)));
        let literals = HeapSet::single(&self.literals);
        for (i, w) in self.constants.iter().enumerate() {
            names.push(format!("r{} = {}", self.first_constant as usize + i, literals.term(*w)));
        }
        writeln!(f, "  {}", names.join(", "))?;
        let width = self.code.len().saturating_sub(1).to_string().len();
        for (pc, op) in self.code.iter().enumerate() {
            if let Some(c) = self.clause_starts.iter().position(|l| l.index() == pc) {
                writeln!(f, "clause {}:", c + 1)?;
            }
            if matches!(op, Op::NoMatch) {
                writeln!(f, "no match:")?;
            }
            write!(f, "  {pc:>width$}: ")?;
            self.write_op(f, op)?;
            writeln!(f)?;
        }
        Ok(())
    }
}

struct R(Reg);

impl fmt::Display for R {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == Reg::NONE { f.write_str("-") } else { write!(f, "r{}", self.0.0) }
    }
}

impl Program {
    fn regs(&self, operands: Operands) -> String {
        let regs: Vec<String> =
            self.operand_regs(operands).iter().map(|&r| R(r).to_string()).collect();
        regs.join(", ")
    }

    fn write_op(&self, f: &mut fmt::Formatter<'_>, op: &Op) -> fmt::Result {
        let fail = |fail: &Fail| match fail {
            Fail::Jump(l) => format!(" else @{}", l.0),
            Fail::Exit => " else 'EXIT'".to_owned(),
        };
        let word = |w: &Word| HeapSet::single(&self.literals).term(*w).to_string();
        match op {
            Op::IsArity { arity, fail } => write!(f, "is_arity {arity} else @{}", fail.0),
            Op::IsArityAtLeast { arity, fail } => {
                write!(f, "is_arity_at_least {arity} else @{}", fail.0)
            }
            Op::GetArg { index, dst } => write!(f, "get_arg {} = arg[{index}]", R(*dst)),
            Op::GetArgList { dst } => write!(f, "get_arg_list {}", R(*dst)),
            Op::IsTuple { src, arity, fail } => {
                write!(f, "is_tuple {}, {arity} else @{}", R(*src), fail.0)
            }
            Op::GetElement { src, index, dst } => {
                write!(f, "get_element {} = {}[{index}]", R(*dst), R(*src))
            }
            Op::IsElement { src, index, word: w, fail } => {
                write!(f, "is_element {}[{index}], {} else @{}", R(*src), word(w), fail.0)
            }
            Op::IsCons { src, fail } => write!(f, "is_cons {} else @{}", R(*src), fail.0),
            Op::GetHead { src, dst } => write!(f, "get_head {} = hd {}", R(*dst), R(*src)),
            Op::GetTail { src, dst } => write!(f, "get_tail {} = tl {}", R(*dst), R(*src)),
            Op::IsMap { src, size, fail } => {
                write!(f, "is_map {}, {size} else @{}", R(*src), fail.0)
            }
            Op::GetMapValue { src, key, dst, fail } => {
                write!(f, "get_map_value {} = {}[{}] else @{}", R(*dst), R(*src), R(*key), fail.0)
            }
            Op::IsWord { src, word: w, fail } => {
                write!(f, "is_word {}, {} else @{}", R(*src), word(w), fail.0)
            }
            Op::IsExactEq { a, b, fail } => {
                write!(f, "is_exact_eq {}, {} else @{}", R(*a), R(*b), fail.0)
            }
            Op::Move { src, dst } => write!(f, "move {} = {}", R(*dst), R(*src)),
            Op::Call { bif, args, dst, fail: x } => {
                let args: Vec<String> =
                    args[..bif.arity()].iter().map(|&r| R(r).to_string()).collect();
                write!(
                    f,
                    "call {} = {}/{}({}){}",
                    R(*dst),
                    bif.name(),
                    bif.arity(),
                    args.join(", "),
                    fail(x)
                )
            }
            Op::Compare { op, a, b, fail } => {
                write!(f, "compare {} {} {} else @{}", R(*a), op.name(), R(*b), fail.0)
            }
            Op::TypeTest { test, src, expect, fail } => {
                let not = if *expect { "" } else { "not " };
                write!(f, "type_test {not}{}({}) else @{}", test.name(), R(*src), fail.0)
            }
            Op::BoolBranch { src, when, target, other } => {
                write!(
                    f,
                    "bool_branch {}: {when} -> @{}, non-boolean -> @{}",
                    R(*src),
                    target.0,
                    other.0
                )
            }
            Op::Logic { op, args, dst, fail: x } => {
                let name = match op {
                    LogicOp::And => "and",
                    LogicOp::Or => "or",
                };
                write!(f, "logic {} = {name}({}){}", R(*dst), self.regs(*args), fail(x))
            }
            Op::Jump { target } => write!(f, "jump @{}", target.0),
            Op::MakeTuple { elements, dst } => {
                write!(f, "make_tuple {} = {{{}}}", R(*dst), self.regs(*elements))
            }
            Op::MakeCons { head, tail, dst } => {
                write!(f, "make_cons {} = [{} | {}]", R(*dst), R(*head), R(*tail))
            }
            Op::MakeList { elements, dst } => {
                write!(f, "make_list {} = [{}]", R(*dst), self.regs(*elements))
            }
            Op::MakeMap { keys, values, dst } => {
                let pairs: Vec<String> = self
                    .operand_regs(*keys)
                    .iter()
                    .zip(self.operand_regs(*values))
                    .map(|(k, v)| format!("{} => {}", R(*k), R(*v)))
                    .collect();
                write!(f, "make_map {} = #{{{}}}", R(*dst), pairs.join(", "))
            }
            Op::SelfPid { dst } => write!(f, "self {}", R(*dst)),
            Op::SetFlag { flag } => match flag {
                TraceFlag::ReturnTrace => f.write_str("set_flag return_trace"),
                TraceFlag::ExceptionTrace => f.write_str("set_flag exception_trace"),
            },
            Op::Display { src } => write!(f, "display {}", R(*src)),
            Op::IsSeqTrace { dst } => write!(f, "is_seq_trace {}", R(*dst)),
            Op::SetSeqToken { key, value, fake, dst } => {
                let name = if *fake { "set_seq_token_fake" } else { "set_seq_token" };
                write!(f, "{name} {} = {}, {}", R(*dst), R(*key), R(*value))
            }
            Op::GetSeqToken { dst } => write!(f, "get_seq_token {}", R(*dst)),
            Op::ProcessDump { dst } => write!(f, "process_dump {}", R(*dst)),
            Op::ChangeTrace { how, target, a, b, dst } => {
                let name = match how {
                    ChangeTrace::Enable => "enable_trace",
                    ChangeTrace::Disable => "disable_trace",
                    ChangeTrace::Trace => "trace",
                };
                write!(f, "{name} {} = {}, {}, {}", R(*dst), R(*target), R(*a), R(*b))
            }
            Op::Caller { dst } => write!(f, "caller {}", R(*dst)),
            Op::CallerLine { dst } => write!(f, "caller_line {}", R(*dst)),
            Op::CurrentStacktrace { depth, dst } => {
                write!(f, "current_stacktrace {} = depth {depth}", R(*dst))
            }
            Op::Silent { src } => write!(f, "silent {}", R(*src)),
            Op::Succeed { result } => write!(f, "succeed {}", R(*result)),
            Op::NoMatch => f.write_str("no_match"),
        }
    }
}
