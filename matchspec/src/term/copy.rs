//! Deep copy of a term into another heap, without recursion.

use super::heap::{CLOSURE_FIXED, Heap, HeapSet};
use super::word::{Header, Word, layout::*};
use super::{Atom, Term, TermRef};

/// Copies `term` into `dst` and returns the new word.
///
/// Works with an explicit list of slots still to fix up, so terms of any
/// depth copy without growing the call stack. Shared subterms are copied
/// once per reference (as `term_to_binary` would write them).
pub(crate) fn copy_into(term: TermRef<'_>, dst: &mut Heap) -> Word {
    let mut word = term.word();
    if word.is_immediate() {
        return word;
    }
    let heaps = term.heaps();
    let mut pending = Pending::default();
    // The root first, then the slots it left pointing at the source, one
    // call site, so the copy of one object is inlined.
    let mut slot = None;
    let mut root = word;
    loop {
        let copied = copy_object(&heaps, word, dst, &mut pending);
        match slot {
            None => root = copied,
            Some(at) => dst.set(at, copied),
        }
        let Some(next) = pending.pop() else { return root };
        slot = Some(next);
        word = dst.words()[next];
    }
}

/// A copy of `term` with every atom `a` for which `rename(a)` is `Some(b)`
/// replaced by `b` (maps are re-sorted, since their keys may change),
/// except inside subterms for which `keep` holds, which are copied as they
/// are.
pub(crate) fn map_atoms(
    term: TermRef<'_>,
    rename: &dyn Fn(Atom) -> Option<Atom>,
    keep: &dyn Fn(TermRef<'_>) -> bool,
) -> Term {
    let mut heap = Heap::new();
    let root = copy_into(term, &mut heap);
    let renamed = |w: Word| w.as_atom().and_then(rename).map_or(w, Word::atom);
    let root = renamed(root);
    // Every word of the copy is in `heap`; walk its term slots.
    let mut maps = Vec::new();
    let mut stack = vec![root];
    while let Some(w) = stack.pop() {
        if w.is_immediate() || keep(HeapSet::single(&heap).term(w)) {
            continue;
        }
        let (_, at) = w.target();
        let slots: std::ops::Range<usize> = if w.is_cons() {
            at..at + 2
        } else {
            let header = Header::from_word(heap.words()[at]);
            let size = header.size() as usize;
            match header.kind() {
                HEADER_TUPLE => at + 1..at + 1 + size,
                HEADER_MAP => {
                    let n = (header.size() & !MAP_IN_ORDER) as usize;
                    maps.push((at, n, header.size() & MAP_IN_ORDER != 0));
                    at + 1..at + 1 + 2 * n
                }
                HEADER_CLOSURE => at + 1 + CLOSURE_FIXED..at + 1 + size,
                _ => at..at,
            }
        };
        for slot in slots {
            let word = heap.words()[slot];
            heap.set(slot, renamed(word));
            stack.push(word);
        }
    }
    // Inner maps were found after the maps holding them; sort them first.
    for (at, size, in_order) in maps.into_iter().rev() {
        let view = HeapSet::single(&heap);
        // Each pair keeps its old sorted position, to carry the map's own order over.
        let mut pairs: Vec<(usize, Word, Word)> = (0..size)
            .map(|i| (i, heap.words()[at + 1 + i], heap.words()[at + 1 + size + i]))
            .collect();
        pairs.sort_by(|a, b| view.term(a.1).cmp_exact(&view.term(b.1)));
        let mut new_position = vec![0; size];
        for (i, (old, k, v)) in pairs.into_iter().enumerate() {
            new_position[old] = i;
            heap.set(at + 1 + i, k);
            heap.set(at + 1 + size + i, v);
        }
        if in_order {
            for slot in at + 1 + 2 * size..at + 1 + 3 * size {
                let old = heap.words()[slot].to_bits() as usize;
                heap.set(
                    slot,
                    Word::from_bits(new_position.get(old).copied().unwrap_or(old) as u64),
                );
            }
        }
    }
    Term::from_parts(heap, root)
}

/// How many slots [`Pending`] keeps without allocating.
const INLINE_SLOTS: usize = 8;

/// The slots of a copy still to fix up, last in first out: the first few
/// inline, so copying a small term (a trace message, an argument list)
/// allocates nothing besides its destination.
struct Pending {
    inline: [usize; INLINE_SLOTS],
    len: usize,
    /// Pushed once `inline` is full; popped before it.
    spill: Vec<usize>,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending { inline: [0; INLINE_SLOTS], len: 0, spill: Vec::new() }
    }
}

impl Pending {
    #[inline]
    fn push(&mut self, slot: usize) {
        if self.len < INLINE_SLOTS {
            self.inline[self.len] = slot;
            self.len += 1;
        } else {
            self.spill.push(slot);
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<usize> {
        if let Some(slot) = self.spill.pop() {
            return Some(slot);
        }
        self.len = self.len.checked_sub(1)?;
        Some(self.inline[self.len])
    }
}

/// Copies the cell or object the pointer `word` points at (not its
/// children) into `dst`, and records the new slots that still hold words
/// of the source heaps.
#[inline(always)]
fn copy_object(heaps: &HeapSet<'_>, word: Word, dst: &mut Heap, pending: &mut Pending) -> Word {
    let cells = heaps.cells(word);
    if word.is_cons() {
        let cell = &cells[..2];
        let at = dst.append(cell);
        push_pointers(cell, at, pending);
        return dst.cons_at(at);
    }
    let header = Header::from_word(cells[0]);
    let size = header.size() as usize;
    let (payload_len, children) = match header.kind() {
        HEADER_TUPLE => (size, 0..size),
        HEADER_MAP => {
            let n = (header.size() & !MAP_IN_ORDER) as usize;
            let words = if header.size() & MAP_IN_ORDER != 0 { 3 * n } else { 2 * n };
            (words, 0..2 * n)
        }
        HEADER_POS_BIG | HEADER_NEG_BIG => (size, 0..0),
        HEADER_FLOAT => (1, 0..0),
        HEADER_BITS => (header.size().div_ceil(8).div_ceil(8) as usize, 0..0),
        HEADER_PID => (4, 0..0),
        HEADER_PORT => (3, 0..0),
        HEADER_REF => (2 + size, 0..0),
        HEADER_EXPORT => (3, 0..0),
        // The pid and the free variables are terms; the rest are raw numbers.
        // Handled below: the pid and the free variables are terms.
        HEADER_CLOSURE => (size, 0..0),
        _ => (0, 0..0),
    };
    let object = &cells[..=payload_len];
    let at = dst.append(object);
    if header.kind() == HEADER_CLOSURE {
        // Skip the free-variable count, which sits between the pid and the variables.
        let pid_slot = 1 + CLOSURE_FIXED - 2;
        push_pointers(&object[pid_slot..=pid_slot], at + pid_slot, pending);
        push_pointers(&object[1 + CLOSURE_FIXED..], at + 1 + CLOSURE_FIXED, pending);
    } else {
        let children = 1 + children.start..1 + children.end;
        push_pointers(&object[children.clone()], at + children.start, pending);
    }
    dst.boxed_at(at)
}

/// Records the slots from `first` on that got a pointer from `copied`.
#[inline]
fn push_pointers(copied: &[Word], first: usize, pending: &mut Pending) {
    for (i, word) in copied.iter().enumerate() {
        if !word.is_immediate() {
            pending.push(first + i);
        }
    }
}
