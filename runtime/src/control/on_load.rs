//! `on_load` patterns: what each session traces in modules declared later.

use matchspec::term::{Atom, Heap, TermRef, Word};

use crate::control::info::info_answer;
use crate::core::TraceCore;
use crate::model::breakpoint::BpFlags;
use crate::model::error::TraceError;
use crate::model::pattern::{OnLoad, PatternAction, PatternFlags};
use crate::model::session::SessionRef;

impl TraceCore {
    /// `trace:function(S, on_load, Action, Flags)`: remembers the pattern for
    /// modules declared from now on. Matches no function now (answers 0).
    pub fn set_on_load(
        &self,
        session: &SessionRef,
        action: PatternAction,
        flags: PatternFlags,
    ) -> Result<usize, TraceError> {
        let mut flags = flags;
        flags.meta_tracer = flags.meta_tracer.map(|t| self.contain(t));
        if !session.is_alive() {
            return Err(TraceError::Session);
        }
        let mut staged = self.staged.lock();
        match action {
            PatternAction::Off => {
                let keep = match staged.on_load.get_mut(&session.id()) {
                    Some(on_load) if flags.is_breakpoint() => {
                        on_load.flags.kinds -= flags.kinds;
                        on_load.flags.is_breakpoint()
                    }
                    _ => false,
                };
                if !keep {
                    staged.on_load.remove(&session.id());
                }
            }
            PatternAction::On
            | PatternAction::Spec(_)
            | PatternAction::Restart
            | PatternAction::Pause => {
                staged
                    .on_load
                    .insert(session.id(), OnLoad { session: session.clone(), action, flags });
            }
        }
        Ok(0)
    }
}

/// Applies every session's `on_load` pattern to the functions of the newly
/// declared `module`.
pub(crate) fn apply(core: &TraceCore, module: Atom) -> Result<(), TraceError> {
    let functions = core.module_functions(module);
    core.stage(|stage| {
        let patterns: Vec<OnLoad> = stage.staged.on_load.values().cloned().collect();
        for on_load in patterns.iter().filter(|o| o.session.is_alive()) {
            crate::control::pattern::apply(
                stage,
                &on_load.session,
                &functions,
                &on_load.action,
                &on_load.flags,
            );
        }
    })
}

/// `trace:info(S, on_load, Item)`: `{Item, false}` for any item while
/// the session has no `on_load` pattern; `None` (badarg) for an item
/// `trace:info/3` does not know once it has one.
pub fn on_load_info(
    core: &TraceCore,
    session: &SessionRef,
    item: TermRef<'_>,
    heap: &mut Heap,
) -> Option<Word> {
    let staged = core.staged.lock();
    let on_load = staged.on_load.get(&session.id());
    if on_load.is_none() {
        return Some(info_answer(item, Atom::FALSE, heap));
    }
    let key = item.as_atom()?;
    let false_ = Word::atom(Atom::FALSE);
    let item = |name: &str, heap: &mut Heap| -> Option<Word> {
        let Some(o) = on_load else { return Some(false_) };
        let spec_word = |heap: &mut Heap| match &o.action {
            PatternAction::Spec(spec) => spec.source.copy_to(heap),
            PatternAction::On
            | PatternAction::Off
            | PatternAction::Restart
            | PatternAction::Pause => Word::NIL,
        };
        Some(match name {
            "traced" if !o.flags.is_breakpoint() => Word::atom(Atom::new("global")),
            "traced" if o.flags.kinds.contains(BpFlags::LOCAL) => Word::atom(Atom::new("local")),
            "traced" => false_,
            "match_spec" if !o.flags.is_breakpoint() || o.flags.kinds.contains(BpFlags::LOCAL) => {
                spec_word(heap)
            }
            "match_spec" => false_,
            "meta" => match &o.flags.meta_tracer {
                Some(t) if o.flags.kinds.contains(BpFlags::META) => t.to_term(heap),
                _ => false_,
            },
            "meta_match_spec" if o.flags.kinds.contains(BpFlags::META) => spec_word(heap),
            "meta_match_spec" => false_,
            // `all` leaves the last two out, as ERTS does.
            "call_count" | "call_time" | "call_memory" => {
                let kind = match name {
                    "call_count" => BpFlags::COUNT,
                    "call_time" => BpFlags::TIME,
                    _ => BpFlags::MEMORY,
                };
                Word::atom(if o.flags.kinds.contains(kind) { Atom::TRUE } else { Atom::FALSE })
            }
            _ => return None,
        })
    };
    let value = if key.name() == "all" {
        match on_load {
            None => false_,
            Some(_) => {
                let mut pairs = Vec::new();
                for name in ["traced", "match_spec", "meta", "meta_match_spec", "call_count"] {
                    let v = item(name, heap)?;
                    pairs.push(heap.tuple(&[Word::atom(Atom::new(name)), v]));
                }
                heap.list(&pairs)
            }
        }
    } else {
        item(key.name(), heap)?
    };
    Some(heap.tuple(&[Word::atom(key), value]))
}
