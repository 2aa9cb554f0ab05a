//! Atom translation in both directions, cached per scheduler thread.
//!
//! A BEAM atom term is a constant of the VM (atoms are never freed), and an
//! msc [`Atom`] is a constant of the process, so each pair is looked up by
//! name once per thread and then by word.

use std::cell::RefCell;
use std::collections::HashMap;

use msc::matchspec::term::Atom;
use rustler::sys::ErlNifTerm as ERL_NIF_TERM;
use rustler::{Env, Term};

/// The atoms this thread has translated.
#[derive(Default)]
struct Cache {
    to_msc: HashMap<ERL_NIF_TERM, Atom>,
    to_beam: HashMap<Atom, ERL_NIF_TERM>,
}

/// Entries kept per direction before the cache starts over: a bound on the
/// memory a stream of fresh atoms can take here.
const MAX_CACHED: usize = 1 << 16;

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// The msc atom of the BEAM atom `term`, if its name is ASCII (other names
/// cross as ETF, which says how they are encoded); `Err` if msc's atom table
/// is full.
pub(super) fn to_msc(term: Term<'_>) -> Result<Option<Atom>, ()> {
    let raw = term.as_c_arg();
    if let Some(atom) = CACHE.with_borrow(|c| c.to_msc.get(&raw).copied()) {
        return Ok(Some(atom));
    }
    let Ok(name) = term.atom_to_string() else { return Ok(None) };
    if !name.is_ascii() {
        return Ok(None);
    }
    let atom = Atom::try_new(&name).map_err(|_| ())?;
    CACHE.with_borrow_mut(|c| {
        if c.to_msc.len() >= MAX_CACHED {
            c.to_msc.clear();
        }
        c.to_msc.insert(raw, atom);
    });
    Ok(Some(atom))
}

/// The BEAM atom of `atom`, if its name is ASCII.
pub(super) fn to_beam<'a>(env: Env<'a>, atom: Atom) -> Option<Term<'a>> {
    if let Some(raw) = CACHE.with_borrow(|c| c.to_beam.get(&atom).copied()) {
        // SAFETY: an atom term is valid in every environment for the life
        // of the VM; `raw` was made by `enif_make_atom_len` below.
        return Some(unsafe { Term::new(env, raw) });
    }
    let name = atom.name();
    if !name.is_ascii() {
        return None;
    }
    let term = rustler::Atom::from_bytes(env, name.as_bytes()).ok()?.to_term(env);
    CACHE.with_borrow_mut(|c| {
        if c.to_beam.len() >= MAX_CACHED {
            c.to_beam.clear();
        }
        c.to_beam.insert(atom, term.as_c_arg());
    });
    Some(term)
}
