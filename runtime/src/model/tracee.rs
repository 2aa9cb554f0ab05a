//! What the core knows of a traced process: per session, its tracer and
//! flags (ERTS's `ErtsTracerRef` list), readable by any thread without a
//! lock.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use arc_swap::{ArcSwap, Cache};
use parking_lot::Mutex;

use crate::model::flags::TraceFlags;
use crate::model::seq_trace::SeqState;
use crate::model::session::SessionRef;
use crate::model::tracer::{Enabled, TraceCategory, TraceTag, TraceeId, TracerRef, status_then};

/// One session's tracing of one tracee.
#[derive(Clone, Debug)]
pub struct TracerLink {
    /// The session.
    pub session: SessionRef,
    /// Where the tracee's events go in this session.
    pub tracer: TracerRef,
    /// The tracee's flags in this session.
    pub flags: TraceFlags,
}

/// The shared state of a process or port: its trace settings in every
/// session.
///
/// Readers (trace points, on any thread) load a snapshot of the links;
/// writers (trace commands, match-spec `enable_trace`) copy, change and
/// publish a new snapshot under a small lock.
#[derive(Debug)]
pub struct Tracee {
    id: TraceeId,
    links: ArcSwap<Vec<TracerLink>>,
    any_flags: AtomicU32,
    alive: AtomicBool,
    write: Mutex<()>,
    /// The sequential trace token and counters. Its thread uses it on
    /// sends and receives; `reset_trace` and token queries reach it from
    /// others, hence the (uncontended) lock.
    pub(crate) seq: Mutex<SeqState>,
}

impl Tracee {
    pub(crate) fn new(id: TraceeId, links: Vec<TracerLink>) -> Tracee {
        let tracee = Tracee {
            id,
            links: ArcSwap::from_pointee(Vec::new()),
            any_flags: AtomicU32::new(0),
            alive: AtomicBool::new(true),
            write: Mutex::new(()),
            seq: Mutex::new(SeqState::default()),
        };
        tracee.publish(links);
        tracee
    }

    /// The process or port.
    pub fn id(&self) -> TraceeId {
        self.id
    }

    /// Is the process (port) alive?
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    pub(crate) fn exit(&self) {
        self.alive.store(false, Ordering::Release);
    }

    /// Is the process traced at all, in any session? (The fast pre-check
    /// every trace point makes.)
    #[inline]
    pub fn is_traced(&self) -> bool {
        self.any_flags.load(Ordering::Relaxed) != 0
    }

    /// Does any session trace the process with one of `flags`? (The
    /// pre-check of each kind of event, before anything is built.)
    #[inline]
    pub fn traces_any(&self, flags: TraceFlags) -> bool {
        self.any_flags.load(Ordering::Relaxed) & flags.bits() != 0
    }

    /// Asks every tracer of the process for its `trace_status` and drops
    /// the links of those that answer `remove` (a dead tracer process, a
    /// tracer module no longer loaded), as ERTS does when the process
    /// checks its tracers itself.
    pub(crate) fn drop_removed_tracers(&self) {
        if !self.is_traced() {
            return;
        }
        for link in self.links().iter() {
            if link.session.is_alive()
                && link.tracer.enabled(TraceTag::TraceStatus, self.id) == Enabled::Remove
            {
                self.update(&link.session, |l| *l = None);
            }
        }
    }

    /// ERTS's `is_tracer_ref_enabled`: does `link`'s tracer want event
    /// `tag` of the process? It is asked `trace_status` first; a tracer that
    /// answers `remove` is removed from the process in that session.
    #[inline]
    pub(crate) fn tracer_enabled(
        &self,
        link: &TracerLink,
        category: TraceCategory,
        tag: TraceTag,
    ) -> bool {
        match status_then(&*link.tracer, category, tag, self.id) {
            Enabled::Trace => true,
            Enabled::Discard => false,
            Enabled::Remove => {
                self.update(&link.session, |l| *l = None);
                false
            }
        }
    }

    /// The links of every session.
    pub fn links(&self) -> Arc<Vec<TracerLink>> {
        self.links.load_full()
    }

    /// The links of every session, borrowed (cheaper than [`Tracee::links`]
    /// for a short look).
    pub fn links_snapshot(&self) -> arc_swap::Guard<Arc<Vec<TracerLink>>> {
        self.links.load()
    }

    /// The link of `session`, if the process is traced there.
    pub fn link(&self, session: &SessionRef) -> Option<TracerLink> {
        self.links.load().iter().find(|l| Arc::ptr_eq(&l.session, session)).cloned()
    }

    /// The flags of `session` (empty if not traced there).
    pub fn flags(&self, session: &SessionRef) -> TraceFlags {
        self.links
            .load()
            .iter()
            .find(|l| Arc::ptr_eq(&l.session, session))
            .map_or(TraceFlags::empty(), |l| l.flags)
    }

    /// The process's sequential trace state (a copy).
    pub fn seq_state(&self) -> SeqState {
        self.seq.lock().clone()
    }

    /// Changes the link of `session` as a command does: `change` sees it
    /// (or `None`) and leaves it as it should be; a link left without flags
    /// is removed (ERTS's `start_trace`; a timestamp flag alone keeps it,
    /// and its tracer, as ERTS's `TRACEE_FLAGS` include the timestamp
    /// kinds).
    pub(crate) fn update<R>(
        &self,
        session: &SessionRef,
        change: impl FnOnce(&mut Option<TracerLink>) -> R,
    ) -> R {
        self.change_link(session, Empty::Drop, change)
    }

    /// Changes the link of `session` as inheritance does (a process passing
    /// on its `set_on_first_*` flags, a child or linked process taking
    /// what is passed on): a link left without flags stays, with its
    /// tracer, as ERTS's tracer ref does until a command changes it.
    pub(crate) fn inherit<R>(
        &self,
        session: &SessionRef,
        change: impl FnOnce(&mut Option<TracerLink>) -> R,
    ) -> R {
        self.change_link(session, Empty::Keep, change)
    }

    fn change_link<R>(
        &self,
        session: &SessionRef,
        empty: Empty,
        change: impl FnOnce(&mut Option<TracerLink>) -> R,
    ) -> R {
        let _writer = self.write.lock();
        let mut links: Vec<TracerLink> = self.links.load().as_ref().clone();
        let at = links.iter().position(|l| Arc::ptr_eq(&l.session, session));
        let mut link = at.map(|i| links.remove(i));
        let answer = change(&mut link);
        if let Some(link) = link.filter(|l| empty == Empty::Keep || !l.flags.is_empty()) {
            // A new link goes in front, as ERTS's `new_tracer_ref` puts a
            // new tracer ref first in the tracee's list.
            links.insert(at.unwrap_or(0).min(links.len()), link);
        }
        self.publish(links);
        answer
    }

    /// Removes every link of sessions that are no longer alive.
    pub(crate) fn forget_dead_sessions(&self) {
        let _writer = self.write.lock();
        let mut links: Vec<TracerLink> = self.links.load().as_ref().clone();
        links.retain(|l| l.session.is_alive());
        self.publish(links);
    }

    fn publish(&self, links: Vec<TracerLink>) {
        let any = links.iter().fold(TraceFlags::empty(), |acc, l| acc | l.flags);
        self.any_flags.store(any.bits(), Ordering::Relaxed);
        self.links.store(Arc::new(links));
    }
}

/// A process's own view of its links: the snapshot it saw last, checked
/// against the current one with a plain load. A full load costs two
/// atomic read-modify-writes, more than the rest of a rejected call.
/// (The process keeps the last snapshot, and the tracers in it, alive
/// until it looks again or goes away.)
pub(crate) type LinksCache = Cache<LinksOf, Arc<Vec<TracerLink>>>;

/// The links of a tracee, as [`LinksCache`] reads them.
#[derive(Clone, Debug)]
pub(crate) struct LinksOf(pub(crate) Arc<Tracee>);

impl Deref for LinksOf {
    type Target = ArcSwap<Vec<TracerLink>>;

    fn deref(&self) -> &ArcSwap<Vec<TracerLink>> {
        &self.0.links
    }
}

/// What becomes of a link left without flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Empty {
    /// It goes.
    Drop,
    /// It stays.
    Keep,
}
