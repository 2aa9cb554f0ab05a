//! The interpreter's loop.

use crate::bif::{self, Bif, Env, Value};
use crate::host::Host;
use crate::ir::{ChangeTrace, Cmp, Fail, LogicOp, Op, Program, Reg, TraceFlag};
use crate::outcome::{EvalError, Flags, Matched, Outcome};
use crate::term::word::layout;
use crate::term::{Atom, Heap, HeapSet, Kind, Space, TermRef, Word, compare_int_float_i64};

use super::Scratch;

const TRUE: Word = Word::atom(Atom::TRUE);
const FALSE: Word = Word::atom(Atom::FALSE);
const EXIT: Word = Word::atom(Atom::EXIT);

/// Runs `program` on `input`.
pub(crate) fn run<'a>(
    program: &'a Program,
    input: TermRef<'a>,
    scratch: &'a mut Scratch,
    host: &mut dyn Host,
) -> Result<Outcome<'a>, EvalError> {
    let Scratch { loaded, registers: regs, args, heap, input_copy } = scratch;
    heap.clear();

    // The program reads the input in place; only an input that itself
    // spans several heaps (a result of another run) is copied first.
    let (input_words, input_word): (&'a [Word], Word) = if input.heaps().is_single() {
        (input.heaps().space(Space::Heap), input.word())
    } else {
        input_copy.clear();
        let word = input.to_owned().copy_to(input_copy);
        (input_copy.words(), word)
    };
    let literals = program.literals.words();

    // Registers are always written before they are read; only the
    // constants need loading, and only when the program changes.
    if *loaded != program.id || regs.len() < program.registers() {
        regs.clear();
        regs.resize(program.registers(), Word::NIL);
        let first = program.first_constant();
        regs[first..first + program.constants.len()].copy_from_slice(&program.constants);
        *loaded = program.id;
    }
    regs[Reg::INPUT.index()] = input_word;

    if program.kind.is_trace() {
        load_args(HeapSet::new(input_words, literals, &[]).term(input_word), program, args)?;
    }

    macro_rules! heaps {
        () => {
            HeapSet::new(input_words, literals, heap.words())
        };
    }
    // A cell of a part of the input: head ops read nothing else (see
    // `ir::op`, "Head ops read only the input").
    macro_rules! input_cell {
        ($w:expr, $k:expr) => {{
            let bits = $w.to_bits();
            debug_assert_eq!((bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK, 0);
            input_words[(bits >> layout::OFFSET_SHIFT) as usize + $k]
        }};
    }
    let mut flags = Flags::default();
    let code = program.code();
    let mut pc = 0;
    loop {
        // Matching on the place reads just the fields an op needs.
        let op = &code[pc];
        pc += 1;
        match *op {
            Op::IsArity { arity, fail } => {
                if args.len() != arity as usize {
                    pc = fail.index();
                }
            }
            Op::GetArg { index, dst } => regs[dst.index()] = args[index as usize],
            Op::GetArgList { dst } => regs[dst.index()] = heap.list_from_iter(args.iter().copied()),
            Op::IsTuple { src, arity, fail } => {
                let w = regs[src.index()];
                if !(w.is_boxed()
                    && input_cell!(w, 0).to_bits() == layout::tuple_header(arity.into()))
                {
                    pc = fail.index();
                }
            }
            Op::GetElement { src, index, dst } => {
                regs[dst.index()] = input_cell!(regs[src.index()], 1 + index as usize);
            }
            Op::IsElement { src, index, word, fail } => {
                if input_cell!(regs[src.index()], 1 + index as usize) != word {
                    pc = fail.index();
                }
            }
            Op::IsCons { src, fail } => {
                if !regs[src.index()].is_cons() {
                    pc = fail.index();
                }
            }
            Op::GetHead { src, dst } => regs[dst.index()] = input_cell!(regs[src.index()], 0),
            Op::GetTail { src, dst } => regs[dst.index()] = input_cell!(regs[src.index()], 1),
            Op::IsMap { src, size, fail } => {
                let w = regs[src.index()];
                let ok = w.is_boxed() && {
                    let header = input_cell!(w, 0).to_bits();
                    header & layout::HEADER_KIND_MASK == layout::HEADER_MAP
                        && (header >> layout::HEADER_KIND_BITS) & !layout::MAP_IN_ORDER
                            >= u64::from(size)
                };
                if !ok {
                    pc = fail.index();
                }
            }
            Op::GetMapValue { src, key, dst, fail } => {
                let (m, k) = (regs[src.index()], regs[key.index()]);
                let n = ((input_cell!(m, 0).to_bits() >> layout::HEADER_KIND_BITS)
                    & !layout::MAP_IN_ORDER) as usize;
                let value = if k.is_immediate() && n <= 8 {
                    // Small maps with an immediate key: compare words.
                    (0..n).find(|&i| input_cell!(m, 1 + i) == k).map(|i| input_cell!(m, 1 + n + i))
                } else {
                    let h = heaps!();
                    h.term(m).as_map().and_then(|map| map.get(h.term(k))).map(|v| v.word())
                };
                match value {
                    Some(v) => regs[dst.index()] = v,
                    None => pc = fail.index(),
                }
            }
            Op::IsWord { src, word, fail } => {
                if regs[src.index()] != word {
                    pc = fail.index();
                }
            }
            Op::IsExactEq { a, b, fail } => {
                let h = heaps!();
                if !h.term(regs[a.index()]).eq_exact(&h.term(regs[b.index()])) {
                    pc = fail.index();
                }
            }
            Op::Move { src, dst } => regs[dst.index()] = regs[src.index()],
            Op::Call { bif, args: call_args, dst, fail } => {
                // Arithmetic on small integers and floats needs no terms.
                if bif::has_fast_path(bif)
                    && let [a, b, _] = call_args
                    && let Some(w) = fast_arith(bif, regs[a.index()], regs[b.index()], |w| {
                        float_of(w, input_words, literals, heap.words())
                    })
                {
                    regs[dst.index()] = match w {
                        FastValue::Word(w) => w,
                        FastValue::Float(f) => heap.float(f),
                    };
                    continue;
                }
                // Only a few functions look at the world; ask the host only for them.
                let env = match bif {
                    Bif::Node0 | Bif::GetTcw | Bif::SetTcw | Bif::SetTcwFake => {
                        Env { node: host.node(), tcw: host.trace_control_word() }
                    }
                    _ => Env::default(),
                };
                let result = {
                    let h = heaps!();
                    let n = bif.arity();
                    let terms: [TermRef<'_>; 3] = std::array::from_fn(|i| {
                        h.term(if i < n { regs[call_args[i].index()] } else { Word::NIL })
                    });
                    bif::call(bif, &terms[..n], &env)
                };
                match result {
                    Ok(value) => {
                        if bif == Bif::SetTcw
                            && let Some(new) = regs[call_args[0].index()].as_small()
                        {
                            // `call` checked it is a 32-bit unsigned value.
                            host.set_trace_control_word(new as u32);
                        }
                        regs[dst.index()] = build(value, heap);
                    }
                    Err(_) => match fail {
                        Fail::Jump(label) => pc = label.index(),
                        Fail::Exit => regs[dst.index()] = EXIT,
                    },
                }
            }
            Op::Compare { op, a, b, fail } => {
                let (x, y) = (regs[a.index()], regs[b.index()]);
                // Small integers compare without reading any heap.
                let holds = match (x.as_small(), y.as_small()) {
                    (Some(p), Some(q)) => op.of_ordering(p.cmp(&q)),
                    _ => match numeric_order(op, x, y, |w| {
                        number_of(w, input_words, literals, heap.words())
                    }) {
                        Some(order) => op.of_ordering(order),
                        None => {
                            let h = heaps!();
                            op.holds(h.term(x), h.term(y))
                        }
                    },
                };
                if !holds {
                    pc = fail.index();
                }
            }
            Op::TypeTest { test, src, expect, fail } => {
                let w = regs[src.index()];
                let answer = match w.satisfies_quickly(test) {
                    Some(answer) => answer,
                    None => heaps!().term(w).satisfies(test),
                };
                if answer != expect {
                    pc = fail.index();
                }
            }
            Op::BoolBranch { src, when, target, other } => {
                let w = regs[src.index()];
                let (stop, go_on) = if when { (TRUE, FALSE) } else { (FALSE, TRUE) };
                if w == stop {
                    pc = target.index();
                } else if w != go_on {
                    pc = other.index();
                }
            }
            Op::Logic { op, args: operands, dst, fail } => {
                let mut all_booleans = true;
                let mut any_true = false;
                let mut all_true = true;
                for r in program.operand_regs(operands) {
                    match regs[r.index()] {
                        w if w == TRUE => any_true = true,
                        w if w == FALSE => all_true = false,
                        _ => all_booleans = false,
                    }
                }
                if all_booleans {
                    let value = match op {
                        LogicOp::And => all_true,
                        LogicOp::Or => any_true,
                    };
                    regs[dst.index()] = if value { TRUE } else { FALSE };
                } else {
                    match fail {
                        Fail::Jump(label) => pc = label.index(),
                        Fail::Exit => regs[dst.index()] = EXIT,
                    }
                }
            }
            Op::Jump { target } => pc = target.index(),
            Op::MakeTuple { elements, dst } => {
                let words = program.operand_regs(elements).iter().map(|r| regs[r.index()]);
                regs[dst.index()] = heap.tuple_from_iter(words);
            }
            Op::MakeCons { head, tail, dst } => {
                regs[dst.index()] = heap.cons(regs[head.index()], regs[tail.index()]);
            }
            Op::MakeList { elements, dst } => {
                let words = program.operand_regs(elements).iter().map(|r| regs[r.index()]);
                regs[dst.index()] = heap.list_from_iter(words);
            }
            Op::MakeMap { keys, values, dst } => {
                let keys = program.operand_regs(keys).iter().map(|r| regs[r.index()]);
                let values = program.operand_regs(values).iter().map(|r| regs[r.index()]);
                let pairs = sorted_pairs(heaps!(), keys.zip(values).collect());
                regs[dst.index()] =
                    heap.map_from_sorted(pairs.iter().map(|p| p.0), pairs.iter().map(|p| p.1));
            }
            Op::SelfPid { dst } => regs[dst.index()] = host.self_pid(heap),
            Op::SetFlag { flag } => match flag {
                TraceFlag::ReturnTrace => flags.return_trace = true,
                TraceFlag::ExceptionTrace => flags.exception_trace = true,
            },
            Op::Display { src } => host.display(heaps!().term(regs[src.index()])),
            Op::IsSeqTrace { dst } => {
                regs[dst.index()] = if host.is_seq_trace() { TRUE } else { FALSE }
            }
            Op::SetSeqToken { key, value, fake, dst } => {
                let result = if fake {
                    host.seq_trace_info(regs[key.index()].as_atom(), heap)
                } else {
                    let h = heaps!();
                    host.set_seq_token(h.term(regs[key.index()]), h.term(regs[value.index()]))
                        .then_some(TRUE)
                };
                regs[dst.index()] = result.unwrap_or(EXIT);
            }
            Op::GetSeqToken { dst } => regs[dst.index()] = host.seq_token(heap),
            Op::ProcessDump { dst } => regs[dst.index()] = host.process_dump(heap),
            Op::ChangeTrace { how, target, a, b, dst } => {
                let answer = {
                    let h = heaps!();
                    let term = |r: Reg| (r != Reg::NONE).then(|| h.term(regs[r.index()]));
                    let a = h.term(regs[a.index()]);
                    host.change_trace(how, term(target), a, term(b))
                };
                regs[dst.index()] = match answer {
                    Some(true) => TRUE,
                    Some(false) => FALSE,
                    None => EXIT,
                };
                let _: ChangeTrace = how;
            }
            Op::Caller { dst } => regs[dst.index()] = host.caller(heap),
            Op::CallerLine { dst } => regs[dst.index()] = host.caller_line(heap),
            Op::CurrentStacktrace { depth, dst } => {
                regs[dst.index()] = host.current_stacktrace(depth, heap)
            }
            Op::Silent { src } => match regs[src.index()] {
                w if w == TRUE => host.set_silent(true),
                w if w == FALSE => host.set_silent(false),
                _ => {}
            },
            Op::Succeed { result } => {
                let word = regs[result.index()];
                let heap: &'a Heap = heap;
                let result = HeapSet::new(input_words, literals, heap.words()).term(word);
                return Ok(Outcome::Match(Matched { result, flags }));
            }
            Op::NoMatch => return Ok(Outcome::NoMatch),
        }
    }
}

/// Fills `args` with the elements of a trace event's argument list. As in
/// `erlang:match_spec_test/3`, an improper list counts up to its last cell.
fn load_args(input: TermRef<'_>, program: &Program, args: &mut Vec<Word>) -> Result<(), EvalError> {
    args.clear();
    if !matches!(input.kind(), Kind::Nil | Kind::Cons(_)) {
        let mut text = input.to_string();
        if text.len() > 60 {
            text.truncate(text.floor_char_boundary(57));
            text.push_str("...");
        }
        return Err(EvalError::NotAnArgumentList { kind: program.kind, input: text });
    }
    args.extend(input.list_items().map(|t| t.word()));
    Ok(())
}

/// A result of [`fast_arith`].
enum FastValue {
    Word(Word),
    Float(f64),
}

/// The fast paths of `bif` on two words (see `bif::fast`): small integers,
/// or floats mixed with small integers. `None`: take the full path.
#[inline(always)]
fn fast_arith(
    bif: Bif,
    x: Word,
    y: Word,
    float_of: impl Fn(Word) -> Option<f64>,
) -> Option<FastValue> {
    match (x.as_small(), y.as_small()) {
        (Some(p), Some(q)) if bif != Bif::FloatDiv => {
            bif::small_arith(bif, p, q).and_then(Word::small).map(FastValue::Word)
        }
        (Some(p), Some(q)) => bif::float_arith(bif, p as f64, q as f64).map(FastValue::Float),
        (Some(p), None) => bif::float_arith(bif, p as f64, float_of(y)?).map(FastValue::Float),
        (None, Some(q)) => bif::float_arith(bif, float_of(x)?, q as f64).map(FastValue::Float),
        (None, None) => bif::float_arith(bif, float_of(x)?, float_of(y)?).map(FastValue::Float),
    }
}

/// A number as far as comparing it needs: bignums only by their sign
/// (every bignum lies beyond every small integer).
#[derive(Clone, Copy)]
enum Number {
    Small(i64),
    Float(f64),
    PositiveBig,
    NegativeBig,
}

/// What a word is as a number, read from whichever space it is in; `None`
/// for anything else.
#[inline(always)]
fn number_of(w: Word, input: &[Word], literals: &[Word], scratch: &[Word]) -> Option<Number> {
    if let Some(i) = w.as_small() {
        return Some(Number::Small(i));
    }
    if !w.is_boxed() {
        return None;
    }
    let bits = w.to_bits();
    let cells = match (bits >> layout::SPACE_SHIFT) & layout::SPACE_MASK {
        0 => input,
        1 => literals,
        _ => scratch,
    };
    let at = (bits >> layout::OFFSET_SHIFT) as usize;
    let header = cells.get(at)?.to_bits();
    if header == layout::FLOAT_HEADER {
        return cells.get(at + 1).map(|w| Number::Float(f64::from_bits(w.to_bits())));
    }
    match header & layout::HEADER_KIND_MASK {
        layout::HEADER_POS_BIG => Some(Number::PositiveBig),
        layout::HEADER_NEG_BIG => Some(Number::NegativeBig),
        _ => None,
    }
}

/// The value of a float word (see [`number_of`]).
#[inline(always)]
fn float_of(w: Word, input: &[Word], literals: &[Word], scratch: &[Word]) -> Option<f64> {
    match number_of(w, input, literals, scratch)? {
        Number::Float(f) => Some(f),
        Number::Small(_) | Number::PositiveBig | Number::NegativeBig => None,
    }
}

/// The order of two numbers for the arithmetic comparisons, when it is
/// cheap to know (no two bignums, not `=:=`/`=/=`, which tell `1` from
/// `1.0`); `None`: ask the full comparison.
#[inline(always)]
fn numeric_order(
    op: Cmp,
    x: Word,
    y: Word,
    number_of: impl Fn(Word) -> Option<Number>,
) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering::{Greater, Less};
    if matches!(op, Cmp::ExactEq | Cmp::ExactNe) {
        return None;
    }
    Some(match (number_of(x)?, number_of(y)?) {
        (Number::Small(p), Number::Small(q)) => p.cmp(&q),
        (Number::Small(i), Number::Float(f)) => compare_int_float_i64(i, f),
        (Number::Float(f), Number::Small(i)) => compare_int_float_i64(i, f).reverse(),
        // Floats are never NaN.
        (Number::Float(p), Number::Float(q)) => p.partial_cmp(&q)?,
        (Number::Small(_) | Number::NegativeBig, Number::PositiveBig)
        | (Number::NegativeBig, Number::Small(_)) => Less,
        (Number::PositiveBig, Number::Small(_) | Number::NegativeBig)
        | (Number::Small(_), Number::NegativeBig) => Greater,
        (Number::Float(_), _) | (_, Number::Float(_)) => return None,
        (Number::PositiveBig, Number::PositiveBig) | (Number::NegativeBig, Number::NegativeBig) => {
            return None;
        }
    })
}

/// Places a function's result in the heap.
fn build(value: Value, heap: &mut Heap) -> Word {
    match value {
        Value::Word(w) => w,
        Value::Int(i) => heap.bigint(&i),
        Value::Int128(i) => heap.int128(i),
        // Functions only return finite floats.
        Value::Float(f) => heap.try_float(f).unwrap_or(EXIT),
        Value::Binary(bytes) => heap.binary(&bytes),
    }
}

/// Key/value pairs sorted by key in exact order; of equal keys the later
/// wins (ERTS's `erts_usort_flatmap`).
pub(crate) fn sorted_pairs(heaps: HeapSet<'_>, mut pairs: Vec<(Word, Word)>) -> Vec<(Word, Word)> {
    // A stable sort keeps equal keys in source order.
    pairs.sort_by(|a, b| heaps.term(a.0).cmp_exact(&heaps.term(b.0)));
    let mut out: Vec<(Word, Word)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        match out.last_mut() {
            Some(last) if heaps.term(last.0).eq_exact(&heaps.term(k)) => *last = (k, v),
            _ => out.push((k, v)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_terms_into;

    /// The comparison fast path answers as the full term comparison does.
    #[test]
    fn numeric_order_agrees_with_the_term_order() {
        let mut heap = Heap::new();
        let text = "0. 1. -1. 7. 1152921504606846975. -1152921504606846976. \
                    1152921504606846976. -1152921504606846977. 36893488147419103232. \
                    -36893488147419103232. 0.0. -0.0. 1.0. -1.0. 7.5. 1.0e19. -1.0e19. \
                    1152921504606846976.0. 9007199254740993. 9007199254740992.0. a. {}.";
        let words = parse_terms_into(text, &mut heap).expect("parses");
        let ops =
            [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne, Cmp::ExactEq, Cmp::ExactNe];
        let cells = heap.words();
        let mut fast = 0;
        for &x in &words {
            for &y in &words {
                for op in ops {
                    let order = numeric_order(op, x, y, |w| number_of(w, cells, &[], &[]));
                    let full = op.holds(heap.view(x), heap.view(y));
                    if let Some(order) = order {
                        fast += 1;
                        assert_eq!(
                            op.of_ordering(order),
                            full,
                            "{} {op:?} {}",
                            heap.view(x),
                            heap.view(y)
                        );
                    }
                }
            }
        }
        assert!(fast > 1000, "{fast}");
    }
}
