//! msc term → BEAM term.

use msc::TermRef;
use msc::etf;
use msc::matchspec::term::Kind;
use rustler::types::tuple::make_tuple;
use rustler::{Encoder, Env, NewBinary, Term};

use super::atoms;

/// What is left to do, most recent last.
enum Task<'t> {
    /// Build this term and push it.
    Visit(TermRef<'t>),
    /// Pop `arity` terms and push the tuple of them.
    Tuple(usize),
    /// Pop a tail and `len` heads (pushed before it) and push the list.
    List(usize),
    /// Pop `len` key-value pairs and push the map.
    Map(usize),
}

/// The one way building can fail: a subterm ERTS itself could not hold (a
/// bignum past its size limit), so no BEAM term exists for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError(pub String);

/// Builds `term` in `env`.
pub fn export<'a>(env: Env<'a>, term: TermRef<'_>) -> Result<Term<'a>, ExportError> {
    let mut tasks = vec![Task::Visit(term)];
    let mut built: Vec<Term<'a>> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(t) => match t.kind() {
                Kind::Small(n) => built.push(n.encode(env)),
                Kind::Float(x) => built.push(x.encode(env)),
                Kind::Atom(a) => built.push(match atoms::to_beam(env, a) {
                    Some(atom) => atom,
                    None => via_etf(env, t)?,
                }),
                Kind::Nil => built.push(Term::list_new_empty(env)),
                Kind::Bits(bits) if bits.is_binary() => {
                    built.push(NewBinary::from_slice(env, bits.bytes()).into())
                }
                Kind::Tuple(tuple) => {
                    tasks.push(Task::Tuple(tuple.len()));
                    tasks.extend(tuple.iter().rev().map(Task::Visit));
                }
                Kind::Cons(_) => {
                    let mut heads = Vec::new();
                    let mut rest = t;
                    while let Some(cell) = rest.as_cons() {
                        heads.push(cell.head());
                        rest = cell.tail();
                    }
                    tasks.push(Task::List(heads.len()));
                    tasks.push(Task::Visit(rest));
                    tasks.extend(heads.into_iter().rev().map(Task::Visit));
                }
                Kind::Map(map) => {
                    tasks.push(Task::Map(map.len()));
                    for (k, v) in map.in_order().collect::<Vec<_>>().into_iter().rev() {
                        tasks.push(Task::Visit(v));
                        tasks.push(Task::Visit(k));
                    }
                }
                _ => built.push(via_etf(env, t)?),
            },
            Task::Tuple(arity) => {
                let at = built.len() - arity;
                let tuple = make_tuple(env, &built[at..]);
                built.truncate(at);
                built.push(tuple);
            }
            Task::List(len) => {
                let mut list = built.pop().expect("a list's tail was pushed");
                let at = built.len() - len;
                for &head in built[at..].iter().rev() {
                    list = list.list_prepend(head);
                }
                built.truncate(at);
                built.push(list);
            }
            Task::Map(len) => {
                let at = built.len() - 2 * len;
                let pairs = &built[at..];
                let keys: Vec<Term<'a>> = pairs.iter().step_by(2).copied().collect();
                let values: Vec<Term<'a>> = pairs.iter().skip(1).step_by(2).copied().collect();
                let map = Term::map_from_term_arrays(env, &keys, &values)
                    .map_err(|_| ExportError("map keys the VM finds equal".into()))?;
                built.truncate(at);
                built.push(map);
            }
        }
    }
    Ok(built.pop().expect("the root was pushed"))
}

/// Builds `t`, which the NIF API cannot build from parts, from its external
/// term format.
fn via_etf<'a>(env: Env<'a>, t: TermRef<'_>) -> Result<Term<'a>, ExportError> {
    let bytes = etf::encode(t).map_err(|e| ExportError(e.to_string()))?;
    // SAFETY: `bytes` is msc's own encoding of a term, well formed; trusted
    // decoding only skips the checks against atoms and funs a peer could
    // use to exhaust the atom table, and these came from this VM.
    match unsafe { env.binary_to_term_trusted(&bytes) } {
        Some((term, _)) => Ok(term),
        None => Err(ExportError(format!("the VM refused the encoding of {t}"))),
    }
}
