//! BEAM term → msc heap.

use msc::etf;
use msc::matchspec::term::{Heap, Word};
use rustler::{Binary, Term, TermType};

use super::atoms;

/// Why a term could not be copied into msc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportError {
    /// msc's atom table is full.
    AtomTableFull,
    /// The VM gave a term msc's ETF decoder refused (a kind it does not
    /// model); the subterm's ETF tag.
    Unsupported(u8),
    /// The NIF API would not take apart a term it called a tuple or a map.
    Unreadable,
}

/// What is left to do, most recent last.
enum Task<'a> {
    /// Copy this term and push its word.
    Visit(Term<'a>),
    /// Pop `arity` words and push the tuple of them.
    Tuple(usize),
    /// Pop a tail and `len` heads (pushed before it) and push the list.
    List(usize),
    /// Pop `len` key-value pairs and push the map (in the VM's order).
    Map(usize),
}

/// Copies `term` into `heap` and returns its word there. On error the heap
/// may hold part of the term; the caller drops or clears it.
pub fn import(term: Term<'_>, heap: &mut Heap) -> Result<Word, ImportError> {
    let mut tasks = vec![Task::Visit(term)];
    let mut words: Vec<Word> = Vec::new();
    let mut children: Vec<Term<'_>> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(t) => {
                let kind = t.get_type();
                if let Some(word) = leaf(t, kind, heap)? {
                    words.push(word);
                    continue;
                }
                children.clear();
                match kind {
                    TermType::Tuple => {
                        let elements = rustler::types::tuple::get_tuple(t)
                            .map_err(|_| ImportError::Unreadable)?;
                        tasks.push(Task::Tuple(elements.len()));
                        tasks.extend(elements.into_iter().rev().map(Task::Visit));
                    }
                    TermType::List => {
                        let mut rest = t;
                        while let Ok((head, tail)) = rest.list_get_cell() {
                            children.push(head);
                            rest = tail;
                        }
                        tasks.push(Task::List(children.len()));
                        tasks.push(Task::Visit(rest));
                        tasks.extend(children.drain(..).rev().map(Task::Visit));
                    }
                    TermType::Map => {
                        let pairs = rustler::types::map::MapIterator::new(t)
                            .ok_or(ImportError::Unreadable)?;
                        for (k, v) in pairs {
                            children.push(k);
                            children.push(v);
                        }
                        // The NIF iterator walks a map in the order ERTS
                        // prints it in, which is the order an msc map
                        // remembers (as it does from text or ETF).
                        tasks.push(Task::Map(children.len() / 2));
                        tasks.extend(children.drain(..).rev().map(Task::Visit));
                    }
                    _ => words.push(via_etf(t, heap)?),
                }
            }
            Task::Tuple(arity) => {
                let at = words.len() - arity;
                let tuple = heap.tuple(&words[at..]);
                words.truncate(at);
                words.push(tuple);
            }
            Task::List(len) => {
                let tail = words.pop().expect("a list's tail was pushed");
                let at = words.len() - len;
                let list = heap.list_with_tail(&words[at..], tail);
                words.truncate(at);
                words.push(list);
            }
            Task::Map(len) => {
                let at = words.len() - 2 * len;
                let pairs: Vec<(Word, Word)> =
                    words[at..].chunks_exact(2).map(|p| (p[0], p[1])).collect();
                let map = heap.map_in_order(&pairs);
                words.truncate(at);
                words.push(map);
            }
        }
    }
    Ok(words.pop().expect("the root was pushed"))
}

/// The word of `t` (of type `kind`) if it has no subterms to visit (tuples, non-empty lists
/// and maps return `None`).
fn leaf(t: Term<'_>, kind: TermType, heap: &mut Heap) -> Result<Option<Word>, ImportError> {
    let word = match kind {
        TermType::Integer => match t.decode::<i64>() {
            Ok(n) => heap.int(n),
            Err(_) => via_etf(t, heap)?,
        },
        TermType::Float => match t.decode::<f64>() {
            Ok(x) => heap.float(x),
            Err(_) => via_etf(t, heap)?,
        },
        TermType::Atom => match atoms::to_msc(t).map_err(|()| ImportError::AtomTableFull)? {
            Some(atom) => Word::atom(atom),
            None => via_etf(t, heap)?,
        },
        TermType::Binary => match Binary::from_term(t) {
            Ok(bytes) => heap.binary(bytes.as_slice()),
            // A bitstring that is not a whole number of bytes.
            Err(_) => via_etf(t, heap)?,
        },
        TermType::List if t.is_empty_list() => Word::NIL,
        TermType::Tuple | TermType::List | TermType::Map => return Ok(None),
        _ => via_etf(t, heap)?,
    };
    Ok(Some(word))
}

/// Copies `t`, which has no subterms the NIF API could take apart, through
/// its external term format.
fn via_etf(t: Term<'_>, heap: &mut Heap) -> Result<Word, ImportError> {
    let bytes = t.to_binary();
    etf::decode_into(bytes.as_slice(), heap).map_err(|e| match e.kind() {
        etf::DecodeErrorKind::AtomTableFull => ImportError::AtomTableFull,
        _ => ImportError::Unsupported(bytes.as_slice().get(1).copied().unwrap_or(0)),
    })
}
