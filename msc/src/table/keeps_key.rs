//! Whether a spec keeps each object's key, as `ets:select_replace/2`
//! requires: checked on the spec's text before it runs, as ERTS does
//! (`db_match_keeps_key`), clause by clause.

use matchspec::term::{Atom, Kind as TermKind, TermRef};

/// Does every clause of `spec` (a table spec term) return either `'$_'`
/// or a tuple built with the head's key at `keypos`? A spec that is not a
/// list of 3-tuples keeps nothing.
///
/// ```
/// use msc::Term;
/// use msc::table::keeps_key;
///
/// let bump = Term::parse("[{{'$1', '$2'}, [], [{{'$1', {'+', '$2', 1}}}]}]")?;
/// assert!(keeps_key(bump.as_ref(), 1));
/// let swap = Term::parse("[{{'$1', '$2'}, [], [{{'$2', '$1'}}]}]")?;
/// assert!(!keeps_key(swap.as_ref(), 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn keeps_key(spec: TermRef<'_>, keypos: usize) -> bool {
    let Some(clauses) = spec.proper_list() else { return false };
    clauses.into_iter().all(|clause| {
        let Some(parts) = clause.as_tuple().filter(|t| t.len() == 3) else { return false };
        let (Some(head), Some(body)) = (parts.get(0), parts.get(2)) else { return false };
        clause_keeps_key(head, body, keypos)
    })
}

fn clause_keeps_key(head: TermRef<'_>, body: TermRef<'_>, keypos: usize) -> bool {
    // One body expression, the last and only.
    let Some(cell) = body.as_cons() else { return false };
    if !cell.tail().is_nil() {
        return false;
    }
    let result = cell.head();
    if result.as_atom() == Some(Atom::new("$_")) {
        return true;
    }
    let Some(built) = result.as_tuple() else { return false };
    let Some(head_key) = element(head, keypos) else { return false };
    // `{const, Object}` or `{{E1, ..., En}}`.
    let (object, constant) = match (built.len(), built.get(0)) {
        (2, Some(tag)) if tag.as_atom() == Some(Atom::new("const")) => (built.get(1), true),
        (1, Some(inner)) => (Some(inner), false),
        _ => return false,
    };
    let Some(body_key) = object.and_then(|o| element(o, keypos)) else { return false };
    if same_key(head_key, body_key, constant) {
        return true;
    }
    // `{element, KeyPos, '$_'}`.
    !constant
        && body_key.as_tuple().is_some_and(|t| {
            t.len() == 3
                && t.get(0).and_then(|e| e.as_atom()) == Some(Atom::new("element"))
                && t.get(1).and_then(|e| e.as_i64()) == Some(keypos as i64)
                && t.get(2).and_then(|e| e.as_atom()) == Some(Atom::new("$_"))
        })
}

/// Element `keypos` (from 1) of `t`, if it is a tuple that long.
fn element(t: TermRef<'_>, keypos: usize) -> Option<TermRef<'_>> {
    t.as_tuple().and_then(|tuple| tuple.get(keypos - 1))
}

/// Is the body's key expression `b` sure to give the head's key `a`? In
/// body syntax a tuple is `{{...}}` or `{const, T}` (which switches to
/// comparing terms as they are); a variable may stand for itself, but not
/// inside `{const, _}`; a map may hold more than the pattern, so never.
fn same_key(a: TermRef<'_>, b: TermRef<'_>, constant: bool) -> bool {
    let mut stack = vec![(a, b, constant)];
    while let Some((a, b, constant)) = stack.pop() {
        match b.kind() {
            TermKind::Cons(bc) => {
                let Some(ac) = a.as_cons() else { return false };
                stack.push((ac.tail(), bc.tail(), constant));
                stack.push((ac.head(), bc.head(), constant));
            }
            TermKind::Tuple(bt) => {
                let bt = if constant {
                    bt
                } else {
                    match (bt.len(), bt.get(0)) {
                        (1, Some(inner)) => match inner.as_tuple() {
                            Some(t) => t,
                            None => return false,
                        },
                        (2, Some(tag)) if tag.as_atom() == Some(Atom::new("const")) => {
                            stack.push((a, bt.get(1).expect("a 2-tuple"), true));
                            continue;
                        }
                        _ => return false,
                    }
                };
                let Some(at) = a.as_tuple() else { return false };
                if at.len() != bt.len() {
                    return false;
                }
                for (x, y) in at.iter().zip(bt.iter()) {
                    stack.push((x, y, constant));
                }
            }
            TermKind::Map(_) => return false,
            TermKind::Small(_) | TermKind::Atom(_) | TermKind::Nil => {
                if !a.eq_exact(&b) {
                    return false;
                }
                if let Some(atom) = a.as_atom() {
                    let name = atom.name();
                    let variable = name
                        .strip_prefix('$')
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
                    if name == "_" || name == "$$" || name == "$_" || (constant && variable) {
                        return false;
                    }
                }
            }
            _ => {
                if !a.eq_exact(&b) {
                    return false;
                }
            }
        }
    }
    true
}
