//! The core's boundary with tracers it did not write: a tracer that panics
//! is caught there and removed as a dead one is.
//!
//! Every tracer the host hands the core (a session's, `{tracer, T}`,
//! `{meta, T}`, the system sequential tracer, a registered one) is wrapped
//! in [`Contained`]. A panic in any of its calls unwinds no further than
//! the wrapper: the tracer counts as dead from then on (`remove` to
//! `trace_status`, so every tracee drops it at its next event), the
//! core's panic counter goes up, and the traced thread carries on. The
//! panic never crosses a lock the core holds, so nothing is poisoned.
//!
//! Inside a breakpoint hit, messages to a tracer that may block
//! ([`Tracer::never_blocks`] is `false`) are not delivered at once but
//! kept, in order, until the hit ends ([`Deferral`]): a hit pins its
//! breakpoint generation, and a commit waits for the pins of the generation
//! it retires, so a tracer that sleeps inside `trace` would otherwise hold
//! up every pattern change. Asking a tracer (`enabled`) is still immediate.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use matchspec::term::{Atom, Heap, Term, TermRef, Word};

use crate::model::flags::TimestampKind;

use super::{Enabled, TraceCategory, TraceOpts, TraceTag, TraceeId, Tracer, TracerRef};

/// A tracer behind the core's panic boundary.
pub(crate) struct Contained {
    inner: TracerRef,
    failed: AtomicBool,
    /// The core's count of tracer panics.
    panics: Arc<AtomicU64>,
    /// Itself, for the messages it defers.
    this: Weak<Contained>,
    /// Does the tracer say it never blocks (so nothing is deferred)?
    never_blocks: bool,
}

impl fmt::Debug for Contained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contained")
            .field("inner", &self.inner)
            .field("failed", &self.failed.load(Ordering::Relaxed))
            .finish()
    }
}

impl Contained {
    /// `tracer` behind the boundary, counting panics in `panics` (a tracer
    /// already behind it is returned as it is).
    pub(crate) fn wrap(tracer: TracerRef, panics: &Arc<AtomicU64>) -> TracerRef {
        if tracer.is_contained() {
            return tracer;
        }
        let never_blocks = tracer.never_blocks();
        Arc::new_cyclic(|this| Contained {
            never_blocks,
            inner: tracer,
            failed: AtomicBool::new(false),
            panics: panics.clone(),
            this: this.clone(),
        })
    }

    /// Runs `call` on the tracer unless it failed before; a panic marks it
    /// failed and gives `None`.
    fn guard<T>(&self, call: impl FnOnce(&dyn Tracer) -> T) -> Option<T> {
        if self.failed.load(Ordering::Acquire) {
            return None;
        }
        match catch_unwind(AssertUnwindSafe(|| call(&*self.inner))) {
            Ok(value) => Some(value),
            Err(_) => {
                if !self.failed.swap(true, Ordering::AcqRel) {
                    self.panics.fetch_add(1, Ordering::Relaxed);
                }
                None
            }
        }
    }

    /// What a failed tracer answers: `remove` to the status check, as a dead
    /// tracer process does, `discard` to anything else.
    fn dead(tag: TraceTag) -> Enabled {
        if tag == TraceTag::TraceStatus { Enabled::Remove } else { Enabled::Discard }
    }
}

impl Tracer for Contained {
    fn is_process(&self) -> bool {
        self.guard(|t| t.is_process()).unwrap_or(false)
    }

    fn monitor(&self, message: TermRef<'_>) {
        // Monitor messages come from host events, never from inside a
        // breakpoint hit: nothing to defer.
        self.guard(|t| t.monitor(message));
    }

    fn enabled(&self, tag: TraceTag, tracee: TraceeId) -> Enabled {
        self.guard(|t| t.enabled(tag, tracee)).unwrap_or_else(|| Contained::dead(tag))
    }

    fn enabled_kind(&self, category: TraceCategory, tag: TraceTag, tracee: TraceeId) -> Enabled {
        self.guard(|t| t.enabled_kind(category, tag, tracee))
            .unwrap_or_else(|| Contained::dead(tag))
    }

    fn status_then_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
    ) -> Enabled {
        self.guard(|t| t.status_then_kind(category, tag, tracee)).unwrap_or(Enabled::Remove)
    }

    fn trace(&self, tag: TraceTag, tracee: TraceeId, message: TermRef<'_>, opts: &TraceOpts<'_>) {
        if !self.defer(
            || Kept::Trace { category: None, tag, tracee, message: message.to_owned() },
            opts,
        ) {
            self.guard(|t| t.trace(tag, tracee, message, opts));
        }
    }

    fn trace_kind(
        &self,
        category: TraceCategory,
        tag: TraceTag,
        tracee: TraceeId,
        message: TermRef<'_>,
        opts: &TraceOpts<'_>,
    ) {
        let kept =
            || Kept::Trace { category: Some(category), tag, tracee, message: message.to_owned() };
        if !self.defer(kept, opts) {
            self.guard(|t| t.trace_kind(category, tag, tracee, message, opts));
        }
    }

    fn trace_seq(&self, label: TermRef<'_>, info: TermRef<'_>, opts: &TraceOpts<'_>) {
        if !self.defer(|| Kept::Seq { label: label.to_owned(), info: info.to_owned() }, opts) {
            self.guard(|t| t.trace_seq(label, info, opts));
        }
    }

    fn to_term(&self, heap: &mut Heap) -> Word {
        // Naming a tracer must not panic either: a failed one is `undefined`.
        let mut scratch = Heap::new();
        match catch_unwind(AssertUnwindSafe(|| self.inner.to_term(&mut scratch))) {
            Ok(word) => scratch.view(word).copy_to(heap),
            Err(_) => Word::atom(Atom::UNDEFINED),
        }
    }

    fn is_contained(&self) -> bool {
        true
    }

    fn never_blocks(&self) -> bool {
        self.never_blocks
    }
}

impl Contained {
    /// Keeps a message for the end of the hit, if in one (`true`).
    fn defer(&self, kept: impl FnOnce() -> Kept, opts: &TraceOpts<'_>) -> bool {
        if self.never_blocks || DEPTH.with(Cell::get) == 0 || self.failed.load(Ordering::Acquire) {
            return false;
        }
        let Some(tracer) = self.this.upgrade() else { return false };
        let deferred = Deferred {
            tracer,
            kept: kept(),
            extra: opts.extra.map(|t| t.to_owned()),
            result: opts.match_spec_result.map(|t| t.to_owned()),
            scheduler_id: opts.scheduler_id,
            timestamp: opts.timestamp,
        };
        KEPT.with(|k| k.borrow_mut().push(deferred));
        true
    }
}

/// A message kept until the end of a hit, with owned copies of what it
/// borrowed.
struct Deferred {
    tracer: Arc<Contained>,
    kept: Kept,
    extra: Option<Term>,
    result: Option<Term>,
    scheduler_id: Option<u32>,
    timestamp: Option<TimestampKind>,
}

enum Kept {
    Trace { category: Option<TraceCategory>, tag: TraceTag, tracee: TraceeId, message: Term },
    Seq { label: Term, info: Term },
}

impl Deferred {
    fn deliver(self) {
        let opts = TraceOpts {
            extra: self.extra.as_ref().map(Term::as_ref),
            match_spec_result: self.result.as_ref().map(Term::as_ref),
            scheduler_id: self.scheduler_id,
            timestamp: self.timestamp,
        };
        let tracer = &self.tracer;
        match &self.kept {
            Kept::Trace { category: None, tag, tracee, message } => {
                tracer.guard(|t| t.trace(*tag, *tracee, message.as_ref(), &opts));
            }
            Kept::Trace { category: Some(category), tag, tracee, message } => {
                tracer.guard(|t| t.trace_kind(*category, *tag, *tracee, message.as_ref(), &opts));
            }
            Kept::Seq { label, info } => {
                tracer.guard(|t| t.trace_seq(label.as_ref(), info.as_ref(), &opts));
            }
        }
    }
}

thread_local! {
    /// How many deferring regions this thread is in.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The messages kept meanwhile, in order.
    static KEPT: RefCell<Vec<Deferred>> = const { RefCell::new(Vec::new()) };
}

/// While alive, messages to contained tracers on this thread are kept;
/// when the outermost one ends they are delivered, in order.
pub(crate) struct Deferral(());

impl Deferral {
    /// Starts deferring on this thread.
    pub(crate) fn begin() -> Deferral {
        DEPTH.with(|d| d.set(d.get() + 1));
        Deferral(())
    }

    /// Is this thread deferring (inside a hit)?
    pub(crate) fn active() -> bool {
        DEPTH.with(Cell::get) > 0
    }
}

impl Drop for Deferral {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            d.set(d.get() - 1);
            d.get()
        });
        if depth > 0 || KEPT.with(|k| k.borrow().is_empty()) {
            return;
        }
        // A tracer may trace again from inside `trace` (it cannot, but a
        // later message may be kept meanwhile): take the list each round.
        loop {
            let kept = KEPT.with(|k| std::mem::take(&mut *k.borrow_mut()));
            if kept.is_empty() {
                break;
            }
            kept.into_iter().for_each(Deferred::deliver);
        }
    }
}
