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
    Exporter::new(env).export(term)
}

/// What [`Exporter::export_within`] made of a term.
pub enum Exported<'a> {
    /// The term, built.
    Built(Term<'a>),
    /// Building it would have taken more than the budget left.
    OverBudget,
}

/// Builds terms in one environment, keeping its work stacks from one term
/// to the next: a scan that answers many large terms allocates them once.
pub struct Exporter<'a> {
    env: Env<'a>,
    /// Terms built, not yet taken into their parent.
    built: Vec<Term<'a>>,
    /// The task stack's allocation between terms (empty: see `Exporter::tasks`).
    spare: Vec<Task<'static>>,
}

impl<'a> Exporter<'a> {
    /// An exporter into `env`.
    pub fn new(env: Env<'a>) -> Exporter<'a> {
        Exporter { env, built: Vec::new(), spare: Vec::new() }
    }

    /// Builds `term`.
    pub fn export(&mut self, term: TermRef<'_>) -> Result<Term<'a>, ExportError> {
        match self.export_within(term, &mut { usize::MAX })? {
            Exported::Built(built) => Ok(built),
            // Memory cannot hold usize::MAX terms.
            Exported::OverBudget => Err(ExportError("a term too large to build".into())),
        }
    }

    /// [`export`](Exporter::export) within a budget: each term built (an
    /// element, a cons cell and its head, a key or a value) costs one, and
    /// a binary one more per 64 bytes; the measure of work a NIF on a
    /// normal scheduler keeps short. Takes what it used from `left`, and
    /// gives up once that would go below zero.
    pub fn export_within(
        &mut self,
        term: TermRef<'_>,
        left: &mut usize,
    ) -> Result<Exported<'a>, ExportError> {
        let mut tasks = recycle(std::mem::take(&mut self.spare));
        tasks.push(Task::Visit(term));
        self.built.clear();
        let answer = self.run(&mut tasks, left);
        tasks.clear();
        self.spare = recycle(tasks);
        answer
    }

    fn run<'t>(
        &mut self,
        tasks: &mut Vec<Task<'t>>,
        left: &mut usize,
    ) -> Result<Exported<'a>, ExportError> {
        let env = self.env;
        let built = &mut self.built;
        let mut spend = |cost: usize| match left.checked_sub(cost) {
            Some(rest) => {
                *left = rest;
                true
            }
            None => false,
        };
        while let Some(task) = tasks.pop() {
            match task {
                Task::Visit(t) => {
                    let cost = match t.kind() {
                        Kind::Bits(bits) => 1 + bits.byte_len() / 64,
                        _ => 1,
                    };
                    if !spend(cost) {
                        return Ok(Exported::OverBudget);
                    }
                    match t.kind() {
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
                            // The heads go on the stack in order, then are
                            // turned around: the first is built first.
                            let list_task = tasks.len();
                            tasks.push(Task::List(0));
                            let heads_from = tasks.len();
                            let mut rest = t;
                            while let Some(cell) = rest.as_cons() {
                                if !spend(1) {
                                    return Ok(Exported::OverBudget);
                                }
                                tasks.push(Task::Visit(cell.head()));
                                rest = cell.tail();
                            }
                            let len = tasks.len() - heads_from;
                            tasks[list_task] = Task::List(len);
                            tasks.push(Task::Visit(rest));
                            tasks[heads_from..].reverse();
                        }
                        Kind::Map(map) => {
                            tasks.push(Task::Map(map.len()));
                            for (k, v) in map.in_order().collect::<Vec<_>>().into_iter().rev() {
                                tasks.push(Task::Visit(v));
                                tasks.push(Task::Visit(k));
                            }
                        }
                        _ => built.push(via_etf(env, t)?),
                    }
                }
                Task::Tuple(arity) => {
                    let at = built.len() - arity;
                    let tuple = make_tuple(env, &built[at..]);
                    built.truncate(at);
                    built.push(tuple);
                }
                Task::List(len) => {
                    // The tail was built last, after the heads.
                    let tail = built.pop().expect("a list's tail was pushed");
                    let at = built.len() - len;
                    let list = if tail.is_empty_list() {
                        // One allocation for the whole list.
                        built[at..].encode(env)
                    } else {
                        built[at..].iter().rev().fold(tail, |list, &head| list.list_prepend(head))
                    };
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
        Ok(Exported::Built(built.pop().expect("the root was pushed")))
    }
}

/// An empty task stack of any lifetime, in `tasks`'s allocation when the
/// standard library collects in place (it does for this shape), so that
/// one allocation serves terms borrowed for different lifetimes.
#[expect(clippy::unnecessary_filter_map, reason = "filter would keep the lifetime")]
fn recycle<'u>(tasks: Vec<Task<'_>>) -> Vec<Task<'u>> {
    tasks.into_iter().filter_map(|_| None).collect()
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
