//! Where each part of a parsed term came from in the source text.

use super::error::Span;
use crate::term::{Kind, TermRef};

/// The source spans of a parsed term and of every subterm.
///
/// Every subterm except the root sits in some slot of the heap: a tuple
/// element, a list head or tail, a map key or value. The source map keeps one
/// [`Span`] per slot, so the span of any subterm is found by walking a
/// [`Step`] path from the root. Later stages use this to point errors at the
/// exact text: a match-spec error names a path into the spec, and the
/// source map turns it into a line and column.
///
/// ```
/// use matchspec::syntax::{parse_term_with_spans, Step};
/// let text = "{a, [b, {c, d}]}";
/// let (term, map) = parse_term_with_spans(text).unwrap();
/// let span = map.span_of(term.as_ref(), &[Step::Element(1), Step::Element(1), Step::Element(0)]);
/// assert_eq!(&text[span.unwrap().range()], "c");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    slots: Vec<Span>,
    root: Span,
}

/// One step from a term to a subterm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Element `i` (0-based) of a tuple or of a list.
    Element(usize),
    /// What follows the first `i` elements of a list (`[]` or an improper tail).
    Tail(usize),
    /// Key number `i` of a map, in key order.
    Key(usize),
    /// The value of key number `i` of a map.
    Value(usize),
}

impl SourceMap {
    pub(crate) fn set_slot(&mut self, slot: usize, span: Span) {
        if self.slots.len() <= slot {
            self.slots.resize(slot + 1, Span::default());
        }
        self.slots[slot] = span;
    }

    pub(crate) fn set_root(&mut self, span: Span) {
        self.root = span;
    }

    /// The span of the whole term.
    pub fn root(&self) -> Span {
        self.root
    }

    /// The span of the subterm reached from `term` (the parsed term this map
    /// belongs to) along `path`; `None` if the path leads nowhere.
    pub fn span_of(&self, term: TermRef<'_>, path: &[Step]) -> Option<Span> {
        let mut span = self.root;
        let mut at = term;
        for step in path {
            let (slot, next) = match (*step, at.kind()) {
                (Step::Element(i), Kind::Tuple(t)) => {
                    let (_, offset) = at.word().target();
                    (offset + 1 + i, t.get(i)?)
                }
                (Step::Element(i), Kind::Cons(_)) => {
                    let cell = nth_cell(at, i)?;
                    let (_, offset) = cell.word().target();
                    (offset, cell.as_cons()?.head())
                }
                (Step::Tail(i), Kind::Cons(_)) => {
                    let cell = nth_cell(at, i.checked_sub(1)?)?;
                    let (_, offset) = cell.word().target();
                    (offset + 1, cell.as_cons()?.tail())
                }
                (Step::Key(i), Kind::Map(m)) => {
                    let (_, offset) = at.word().target();
                    (offset + 1 + i, m.keys().nth(i)?)
                }
                (Step::Value(i), Kind::Map(m)) => {
                    let (_, offset) = at.word().target();
                    (offset + 1 + m.len() + i, m.values().nth(i)?)
                }
                _ => return None,
            };
            span = *self.slots.get(slot)?;
            at = next;
        }
        Some(span)
    }
}

/// The `i`-th cons cell of a list (0 is the list itself).
fn nth_cell(list: TermRef<'_>, i: usize) -> Option<TermRef<'_>> {
    let mut cell = list;
    for _ in 0..i {
        cell = cell.as_cons()?.tail();
    }
    cell.as_cons().map(|_| cell)
}
