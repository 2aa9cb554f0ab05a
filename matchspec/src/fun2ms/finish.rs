//! The last two steps: `fixup_environment` fills in bound variables, then
//! `normalise` evaluates the translated spec into a term, noting in a
//! [`SourceMap`] which fun text each part of the term came from.

use num_bigint::BigInt;

use super::error::TransformErrorKind as K;
use super::form::{BinForm, Form, FormKind};
use super::head::Failure;
use crate::syntax::bits::{BitWriter, SegValue, Segment, write_segment};
use crate::syntax::token::IntLit;
use crate::syntax::{SourceMap, Span};
use crate::term::{Heap, HeapSet, Kind, Term, Word};

/// `fixup_environment`: every variable gets its value from `bindings` (the
/// first binding of its name); the first one in the spec without a value
/// is the error.
pub(super) fn fix_up(
    form: &mut Form,
    bindings: &[(&str, Term)],
    heap: &mut Heap,
) -> Result<(), Failure> {
    // An explicit stack, children pushed in reverse, visits in order.
    let mut stack = vec![form];
    while let Some(form) = stack.pop() {
        if let FormKind::Var { name, at } = &form.kind {
            let Some((_, value)) = bindings.iter().find(|(n, _)| *n == &**name) else {
                return Err((K::Unbound(name.to_string()), *at, form.span));
            };
            form.kind = FormKind::Frozen(value.copy_to(heap));
            continue;
        }
        stack.extend(form.children_mut().into_iter().rev());
    }
    Ok(())
}

/// Why `normalise` crashes: the Erlang exception and what it was evaluating.
#[derive(Debug)]
pub(super) struct Crash {
    pub(super) reason: &'static str,
    pub(super) what: String,
    pub(super) span: Span,
}

/// `normalise`: the term a translated spec stands for, with where each of
/// its parts came from.
pub(super) fn normalise(form: &Form, heap: &mut Heap, map: &mut SourceMap) -> Result<Word, Crash> {
    map.set_root(form.span);
    term_of(form, heap, map)
}

fn term_of(form: &Form, heap: &mut Heap, map: &mut SourceMap) -> Result<Word, Crash> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || term_of_inner(form, heap, map))
}

fn term_of_inner(form: &Form, heap: &mut Heap, map: &mut SourceMap) -> Result<Word, Crash> {
    let span = form.span;
    Ok(match &form.kind {
        FormKind::Atom(a) => Word::atom(*a),
        FormKind::Int(i) => heap.bigint(i),
        FormKind::Float(f) => heap.try_float(*f).unwrap_or(Word::NIL),
        FormKind::String(s) => {
            let words: Vec<Word> = s.iter().map(|&c| Word::small_unchecked(i64::from(c))).collect();
            let word = heap.list(&words);
            if word.is_cons() {
                let (_, at) = word.target();
                for slot in at..at + 2 * words.len() {
                    map.set_slot(slot, span);
                }
            }
            word
        }
        FormKind::Nil => Word::NIL,
        FormKind::Frozen(w) => *w,
        FormKind::Cons(..) => {
            // Lists are walked along their tails, so a long one costs no stack.
            let mut cells = Vec::new();
            let mut rest = form;
            while let FormKind::Cons(h, t) = &rest.kind {
                cells.push((term_of(h, heap, map)?, h.span, t.span));
                rest = t;
            }
            let tail = term_of(rest, heap, map)?;
            let heads: Vec<Word> = cells.iter().map(|c| c.0).collect();
            let word = heap.list_with_tail(&heads, tail);
            let (_, at) = word.target();
            for (i, &(_, head, tail)) in cells.iter().enumerate() {
                map.set_slot(at + 2 * i, head);
                map.set_slot(at + 2 * i + 1, tail);
            }
            word
        }
        FormKind::Tuple(items) => {
            let mut words = Vec::with_capacity(items.len());
            for item in items {
                words.push(term_of(item, heap, map)?);
            }
            let word = heap.tuple(&words);
            let (_, at) = word.target();
            for (i, item) in items.iter().enumerate() {
                map.set_slot(at + 1 + i, item.span);
            }
            word
        }
        FormKind::Map(pairs) => {
            let mut words = Vec::with_capacity(pairs.len());
            for (k, v) in pairs {
                let k = term_of(k, heap, map)?;
                words.push((k, term_of(v, heap, map)?));
            }
            let word = heap.map(&words);
            note_map(word, &words, pairs, heap, map);
            word
        }
        FormKind::Bin(segments) => binary(segments, heap, map)?,
        FormKind::Sign { negate, operand } => match &operand.kind {
            FormKind::Int(i) => heap.bigint(&if *negate { -i } else { i.clone() }),
            FormKind::Float(f) => {
                heap.try_float(if *negate { -f } else { *f }).unwrap_or(Word::NIL)
            }
            _ => {
                return Err(crash(
                    "function_clause",
                    "a sign is evaluated only on a number literal",
                    span,
                ));
            }
        },
        FormKind::Append(left, right) => {
            let left = term_of(left, heap, map)?;
            let right = term_of(right, heap, map)?;
            let view = heap.view(left);
            let mut items = Vec::new();
            let mut rest = view;
            while let Some(cell) = rest.as_cons() {
                items.push(cell.head().word());
                rest = cell.tail();
            }
            if !rest.is_nil() {
                return Err(crash("badarg", "`++` is evaluated only on a proper list", span));
            }
            heap.list_with_tail(&items, right)
        }
        FormKind::Var { .. } => return Err(crash("function_clause", "a variable", span)),
        FormKind::Stuck { what, .. } => {
            return Err(crash(
                "function_clause",
                &format!("{what} cannot be evaluated into a term"),
                span,
            ));
        }
    })
}

/// Notes the spans of a map's keys and values where the map stores them
/// (sorted, duplicates dropped: the last of equal keys won).
fn note_map(
    word: Word,
    words: &[(Word, Word)],
    pairs: &[(Form, Form)],
    heap: &Heap,
    map: &mut SourceMap,
) {
    let view = HeapSet::single(heap);
    let Some(stored) = heap.view(word).as_map() else { return };
    let (_, at) = word.target();
    let n = stored.len();
    for (i, key) in stored.keys().enumerate() {
        if let Some(j) = words.iter().rposition(|(k, _)| view.term(*k).eq_exact(&key)) {
            map.set_slot(at + 1 + i, pairs[j].0.span);
            map.set_slot(at + 1 + n + i, pairs[j].1.span);
        }
    }
}

fn crash(reason: &'static str, what: &str, span: Span) -> Crash {
    Crash { reason, what: what.to_owned(), span }
}

/// `eval_bits:expr_grp/3` with `normalise` evaluating each value and size.
fn binary(segments: &[BinForm], heap: &mut Heap, map: &mut SourceMap) -> Result<Word, Crash> {
    let mut bits = BitWriter::default();
    for segment in segments {
        let span = segment.value.span;
        let badarg = || {
            crash(
                "badarg",
                "this binary segment cannot be built (a value or size of the wrong type)",
                span,
            )
        };
        let value = match &segment.value.kind {
            FormKind::String(s) => SegValue::Str(s.clone()),
            _ => {
                let word = term_of(&segment.value, heap, map)?;
                seg_value(heap, word).ok_or_else(badarg)?
            }
        };
        let size = match &segment.size {
            None => None,
            Some(size) => {
                let word = term_of(size, heap, map)?;
                Some(match heap.view(word).as_bigint() {
                    Some(n) => match i64::try_from(&n) {
                        Ok(v) => IntLit::Small(v),
                        Err(_) => IntLit::Big(n),
                    },
                    None => return Err(badarg()),
                })
            }
        };
        let specs = segment.types.clone().unwrap_or_default();
        let seg = Segment { value, size, specs, span };
        write_segment(&mut bits, &seg).map_err(|_| badarg())?;
    }
    Ok(heap.bitstring(bits.bytes(), bits.bit_len()))
}

fn seg_value(heap: &Heap, word: Word) -> Option<SegValue> {
    let view = heap.view(word);
    match view.kind() {
        Kind::Small(v) => Some(SegValue::Int(BigInt::from(v))),
        Kind::Big(_) => view.as_bigint().map(SegValue::Int),
        Kind::Float(f) => Some(SegValue::Float(f)),
        Kind::Bits(b) => Some(SegValue::Bits(BitWriter::from_bits(b.bytes(), b.bit_len()))),
        _ => None,
    }
}
