//! The parser's builder: grammar actions push finished terms here.
//!
//! The grammar reduces children before parents, left to right, so every
//! action finds its children on top of the builder's value stack. A tuple
//! action pops its `n` elements and pushes the tuple, and so on. Terms go
//! straight into the target [`Heap`]; no syntax tree is built, so nesting
//! depth costs nothing but heap and stack-vector space.

use num_bigint::BigInt;

use super::error::{ParseErrorKind, Span};
use super::source_map::SourceMap;
use super::token::{IdentLit, IntLit};
use crate::term::{Heap, Word};

/// An error raised by the lexer or a grammar action, with its span.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SyntaxError {
    pub(crate) kind: ParseErrorKind,
    pub(crate) span: Span,
}

impl SyntaxError {
    pub(crate) fn new(kind: ParseErrorKind, start: usize, end: usize) -> SyntaxError {
        SyntaxError { kind, span: Span::new(start, end) }
    }
}

pub(crate) struct Builder<'h> {
    heap: &'h mut Heap,
    stack: Vec<(Word, Span)>,
    spans: Option<SourceMap>,
}

impl<'h> Builder<'h> {
    pub(crate) fn new(heap: &'h mut Heap, track_spans: bool) -> Builder<'h> {
        Builder { heap, stack: Vec::new(), spans: track_spans.then(SourceMap::default) }
    }

    /// The finished term, its span, and the source map if it was kept.
    pub(crate) fn finish(mut self) -> Option<(Word, Span, Option<SourceMap>)> {
        let (word, span) = self.stack.pop()?;
        let mut spans = self.spans.take();
        if let Some(map) = spans.as_mut() {
            map.set_root(span);
        }
        Some((word, span, spans))
    }

    fn record(&mut self, slot: usize, span: Span) {
        if let Some(map) = self.spans.as_mut() {
            map.set_slot(slot, span);
        }
    }

    fn pop_n(&mut self, n: usize) -> Vec<(Word, Span)> {
        let at = self.stack.len().saturating_sub(n);
        self.stack.split_off(at)
    }

    pub(crate) fn push(&mut self, word: Word, l: usize, r: usize) {
        self.stack.push((word, Span::new(l, r)));
    }

    pub(crate) fn push_int(&mut self, value: IntLit, negate: bool, l: usize, r: usize) {
        let word = match value {
            IntLit::Small(v) if !negate => self.heap.int(v),
            IntLit::Small(v) => match v.checked_neg() {
                Some(v) => self.heap.int(v),
                None => self.heap.bigint(&-BigInt::from(v)),
            },
            IntLit::Big(v) => self.heap.bigint(&if negate { -v } else { v }),
        };
        self.push(word, l, r);
    }

    pub(crate) fn push_float(&mut self, value: f64, l: usize, r: usize) {
        // The lexer only produces finite floats and negation keeps them finite.
        let word = self.heap.try_float(value).unwrap_or(Word::NIL);
        self.push(word, l, r);
    }

    pub(crate) fn push_string(&mut self, chars: &[u32], l: usize, r: usize) {
        let span = Span::new(l, r);
        let elements: Vec<Word> =
            chars.iter().map(|&c| Word::small_unchecked(i64::from(c))).collect();
        let word = self.heap.list(&elements);
        if self.spans.is_some() && word.is_cons() {
            let (_, start) = word.target();
            for slot in start..start + 2 * elements.len() {
                self.record(slot, span);
            }
        }
        self.stack.push((word, span));
    }

    pub(crate) fn tuple(&mut self, n: usize, l: usize, r: usize) {
        let elements = self.pop_n(n);
        let words: Vec<Word> = elements.iter().map(|e| e.0).collect();
        let word = self.heap.tuple(&words);
        if self.spans.is_some() {
            let (_, at) = word.target();
            for (i, (_, span)) in elements.iter().enumerate() {
                self.record(at + 1 + i, *span);
            }
        }
        self.push(word, l, r);
    }

    /// A list of the `n` values below the top, ending in the top value if
    /// `has_tail`, else in `[]`.
    pub(crate) fn list(&mut self, n: usize, has_tail: bool, l: usize, r: usize) {
        let (tail, tail_span) = if has_tail {
            self.stack.pop().unwrap_or((Word::NIL, Span::default()))
        } else {
            (Word::NIL, Span::new(r, r))
        };
        let elements = self.pop_n(n);
        let words: Vec<Word> = elements.iter().map(|e| e.0).collect();
        let word = self.heap.list_with_tail(&words, tail);
        if self.spans.is_some() && word.is_cons() {
            let (_, at) = word.target();
            for (i, (_, span)) in elements.iter().enumerate() {
                self.record(at + 2 * i, *span);
                let tail_span = elements.get(i + 1).map_or(tail_span, |e| e.1);
                self.record(at + 2 * i + 1, tail_span);
            }
        }
        self.push(word, l, r);
    }

    /// A map of the `n` key/value pairs below the top.
    pub(crate) fn map(&mut self, n: usize, l: usize, r: usize) {
        let flat = self.pop_n(2 * n);
        let pairs: Vec<(Word, Word)> = flat.chunks(2).map(|kv| (kv[0].0, kv[1].0)).collect();
        let word = self.heap.map_in_order(&pairs);
        if self.spans.is_some() {
            // Keys were sorted (and duplicates dropped); find each stored key's pair.
            let stored: Vec<(Word, Word)> = {
                let m = self.heap.view(word).as_map();
                m.map(|m| {
                    m.key_words().iter().copied().zip(m.value_words().iter().copied()).collect()
                })
                .unwrap_or_default()
            };
            let (_, at) = word.target();
            for (i, (k, v)) in stored.iter().enumerate() {
                if let Some(kv) = flat.chunks(2).rev().find(|kv| kv[0].0 == *k && kv[1].0 == *v) {
                    self.record(at + 1 + i, kv[0].1);
                    self.record(at + 1 + stored.len() + i, kv[1].1);
                }
            }
        }
        self.push(word, l, r);
    }

    pub(crate) fn identifier(&mut self, ident: IdentLit, l: usize, r: usize) {
        let word = match ident {
            IdentLit::Pid { node, creation, id, serial } => {
                self.heap.pid(node, id, serial, creation)
            }
            IdentLit::Port { node, creation, id } => self.heap.port(node, id, creation),
            IdentLit::Ref { node, creation, ids } => self.heap.reference(node, creation, &ids),
        };
        self.push(word, l, r);
    }

    pub(crate) fn export_fun(
        &mut self,
        module: crate::term::Atom,
        function: crate::term::Atom,
        arity: IntLit,
        l: usize,
        r: usize,
    ) -> Result<(), SyntaxError> {
        let arity = match arity {
            IntLit::Small(a) => u8::try_from(a).ok(),
            IntLit::Big(_) => None,
        };
        let Some(arity) = arity else {
            return Err(SyntaxError::new(
                ParseErrorKind::BadIdentifier("fun arity must be 0..255".to_owned()),
                l,
                r,
            ));
        };
        let word = self.heap.export_fun(module, function, arity);
        self.push(word, l, r);
        Ok(())
    }

    pub(crate) fn bits(&mut self, bits: &super::bits::BitWriter, l: usize, r: usize) {
        let word = self.heap.bitstring(bits.bytes(), bits.bit_len());
        self.push(word, l, r);
    }
}
