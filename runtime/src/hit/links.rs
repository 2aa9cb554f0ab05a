//! Process events (`procs`) besides spawn and exit: links, unlinks and
//! registered names, and the `set_on_link` / `set_on_first_link`
//! inheritance that rides on a link.
//!
//! A link is a signal: the linker reports `link` at once, and the linked
//! process reports `getting_linked` when it handles the signal, as ERTS
//! does. [`Process::link`] answers the [`LinkSignal`] the host delivers to
//! the other process's [`Process::linked_by`].

use matchspec::term::{Atom, Heap, Term, TermRef};

use crate::hit::process::Process;
use crate::hit::procs::trace_procs;
use crate::model::flags::TraceFlags;
use crate::model::ids::{Pid, PortId, RemotePid};
use crate::model::session::SessionRef;
use crate::model::tracee::TracerLink;
use crate::model::tracer::{TraceTag, TraceeId, TracerRef};

/// A link signal on its way to the linked process.
#[derive(Debug)]
#[must_use = "the linked process must handle the signal (Process::linked_by)"]
pub struct LinkSignal {
    from: Pid,
    /// Per session of the linker with `set_on_link` or
    /// `set_on_first_link`: the flags to set and clear, and the tracer.
    inherit: Vec<Inherited>,
}

#[derive(Debug)]
struct Inherited {
    session: SessionRef,
    on: TraceFlags,
    off: TraceFlags,
    tracer: TracerRef,
}

impl LinkSignal {
    /// The linking process.
    pub fn from(&self) -> Pid {
        self.from
    }
}

/// The other end of a link event: a local process or port, or a process
/// of another node.
enum Other {
    Local(TraceeId),
    Remote(RemotePid),
}

impl From<TraceeId> for Other {
    fn from(id: TraceeId) -> Other {
        Other::Local(id)
    }
}

/// The order in which a process takes over the sessions a link passes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handover {
    OldestFirst,
    NewestFirst,
}

const ON_LINK: TraceFlags = TraceFlags::SET_ON_LINK.union(TraceFlags::SET_ON_FIRST_LINK);

impl Process {
    /// The process links to `other`: `{trace, Pid, link, Other}`. With
    /// `set_on_link` in a session, `other` will get the process's flags
    /// and tracer there; with `set_on_first_link` the same but without the
    /// two inheritance flags, which the process loses.
    pub fn link(&mut self, other: Pid) -> LinkSignal {
        let mut inherit = Vec::new();
        if self.tracee().is_traced() {
            for link in self.tracee().links().iter() {
                if !link.session.is_alive() || !link.flags.intersects(ON_LINK) {
                    continue;
                }
                let first = link.flags.contains(TraceFlags::SET_ON_FIRST_LINK);
                inherit.push(Inherited {
                    session: link.session.clone(),
                    on: link.flags,
                    off: if first { ON_LINK } else { TraceFlags::empty() },
                    tracer: link.tracer.clone(),
                });
                if first {
                    self.tracee().inherit(&link.session, |l| {
                        if let Some(l) = l {
                            l.flags -= ON_LINK;
                        }
                    });
                }
            }
            self.procs_event(TraceTag::Link, TraceeId::Process(other));
        }
        LinkSignal { from: self.pid(), inherit }
    }

    /// The process handles a link signal: it takes the flags the linker
    /// passes on, then reports `{trace, Pid, getting_linked, Linker}`.
    pub fn linked_by(&mut self, signal: LinkSignal) {
        let from = self.inherit_from_link(signal);
        self.getting_linked(from);
    }

    /// Takes the flags and tracers a link passes on (`set_on_link`,
    /// `set_on_first_link`), added to those it has; the linking process.
    ///
    /// The sessions it gets keep the linker's order: ERTS hands them over
    /// oldest first, each new one in front (a session it was traced in
    /// already keeps its place).
    pub(crate) fn inherit_from_link(&mut self, signal: LinkSignal) -> Pid {
        self.take_inheritance(signal, Handover::OldestFirst, |had, passed| had | passed)
    }

    /// The same for a child made by `spawn_link`, whose flags in each such
    /// session are the passed ones (its new-process settings go). ERTS
    /// makes these as it makes the child, walking the parent's sessions
    /// newest first: the child gets them in reverse, as from a spawn.
    pub(crate) fn inherit_from_spawn_link(&mut self, signal: LinkSignal) -> Pid {
        self.take_inheritance(signal, Handover::NewestFirst, |_, passed| passed)
    }

    fn take_inheritance(
        &mut self,
        mut signal: LinkSignal,
        handover: Handover,
        merge: impl Fn(TraceFlags, TraceFlags) -> TraceFlags,
    ) -> Pid {
        // `inherit` is in the linker's order, newest session first.
        if handover == Handover::OldestFirst {
            signal.inherit.reverse();
        }
        for Inherited { session, on, off, tracer } in signal.inherit {
            self.tracee().inherit(&session.clone(), |link| match link {
                Some(l) => {
                    l.flags = merge(l.flags, on) - off;
                    l.tracer = tracer;
                }
                None => *link = Some(TracerLink { session, tracer, flags: on - off }),
            });
        }
        signal.from
    }

    /// `{trace, Pid, getting_linked, From}`.
    pub(crate) fn getting_linked(&mut self, from: Pid) {
        self.procs_event(TraceTag::GettingLinked, TraceeId::Process(from));
    }

    /// The process unlinks from `other`: `{trace, Pid, unlink, Other}`.
    pub fn unlink(&mut self, other: Pid) {
        self.procs_event(TraceTag::Unlink, TraceeId::Process(other));
    }

    /// The process handles an unlink signal from `from`: `{trace, Pid,
    /// getting_unlinked, From}`.
    pub fn unlinked_by(&mut self, from: Pid) {
        self.procs_event(TraceTag::GettingUnlinked, TraceeId::Process(from));
    }

    /// The process links to port `port` (opening it links too): `{trace,
    /// Pid, link, Port}`. The port reports `getting_linked` when it
    /// handles the link ([`Port::linked_by`](crate::Port::linked_by)); no
    /// trace flags pass to ports through links.
    pub fn link_port(&mut self, port: PortId) {
        self.procs_event(TraceTag::Link, TraceeId::Port(port));
    }

    /// The process unlinks from port `port`: `{trace, Pid, unlink, Port}`.
    pub fn unlink_port(&mut self, port: PortId) {
        self.procs_event(TraceTag::Unlink, TraceeId::Port(port));
    }

    /// The link to port `port` is gone from the port's side (it closed):
    /// `{trace, Pid, getting_unlinked, Port}`.
    pub fn unlinked_by_port(&mut self, port: PortId) {
        self.procs_event(TraceTag::GettingUnlinked, TraceeId::Port(port));
    }

    /// The process links to `other`, a process of another node: `{trace,
    /// Pid, link, Other}`. Nothing is inherited over distribution.
    pub fn link_remote(&mut self, other: RemotePid) {
        self.procs_event(TraceTag::Link, Other::Remote(other));
    }

    /// The process unlinks from `other` of another node: `{trace, Pid,
    /// unlink, Other}`.
    pub fn unlink_remote(&mut self, other: RemotePid) {
        self.procs_event(TraceTag::Unlink, Other::Remote(other));
    }

    /// The process handles a link from `from` of another node: `{trace,
    /// Pid, getting_linked, From}`.
    pub fn linked_by_remote(&mut self, from: RemotePid) {
        self.procs_event(TraceTag::GettingLinked, Other::Remote(from));
    }

    /// The link to `from` of another node is gone from that side (an
    /// unlink, or an exit signal the process traps or that is `normal`):
    /// `{trace, Pid, getting_unlinked, From}`.
    pub fn unlinked_by_remote(&mut self, from: RemotePid) {
        self.procs_event(TraceTag::GettingUnlinked, Other::Remote(from));
    }

    /// The process registers `name`: `{trace, Pid, register, Name}`.
    pub fn register(&mut self, name: Atom) {
        self.procs_name_event(TraceTag::Register, name);
    }

    /// The process's name `name` is removed: `{trace, Pid, unregister,
    /// Name}`.
    pub fn unregister(&mut self, name: Atom) {
        self.procs_name_event(TraceTag::Unregister, name);
    }

    /// The process exits with `reason` (an exit signal it does not trap,
    /// `exit/1`): `{trace, Pid, exit, Reason}`, and it is traced no more.
    pub fn exit_with(&mut self, reason: TermRef<'_>) {
        if self.tracee().is_alive() {
            trace_procs(self.tracee(), TraceTag::Exit, reason, None);
        }
        self.exit();
    }

    fn procs_event(&mut self, tag: TraceTag, other: impl Into<Other>) {
        if !self.tracee().traces_any(TraceFlags::PROCS) {
            return;
        }
        let mut heap = Heap::new();
        let word = match other.into() {
            Other::Local(id) => id.to_word(&mut heap),
            Other::Remote(pid) => pid.to_word(&mut heap),
        };
        trace_procs(self.tracee(), tag, heap.view(word), None);
    }

    fn procs_name_event(&mut self, tag: TraceTag, name: Atom) {
        if self.tracee().traces_any(TraceFlags::PROCS) {
            trace_procs(self.tracee(), tag, Term::atom(name).as_ref(), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use matchspec::term::{Atom, Term};

    use crate::control::commands::MessageEvent;
    use crate::hit::messages::Origin;
    use crate::model::flags::TraceFlags;
    use crate::model::ids::{Pid, RemotePid};
    use crate::test_support::{Traced, traced};

    /// Links, unlinks and messages with a process of another node show its
    /// external pid (printed in msc's extended form), and a receive pattern
    /// sees `[Node, undefined, Msg]`.
    #[test]
    fn events_about_a_remote_process_carry_its_pid() {
        let Traced { core, session, process: mut p, rx } =
            traced(TraceFlags::PROCS | TraceFlags::RECEIVE);
        let remote = RemotePid { node: Atom::new("other@host"), creation: 7, id: 89, serial: 0 };
        p.link_remote(remote);
        p.unlink_remote(remote);
        p.linked_by_remote(remote);
        p.unlinked_by_remote(remote);
        // Only messages from the remote process's node pass; ERTS does not
        // keep the sender of a message from another node.
        let pattern = Term::parse("[{['other@host', undefined, '_'], [], []}]").expect("a spec");
        core.set_message_pattern(&session, MessageEvent::Receive, pattern.as_ref())
            .expect("a receive pattern");
        let hello = Term::atom(Atom::new("hello"));
        p.message_arrived(Origin::Remote(remote), hello.as_ref());
        p.message_arrived(Origin::Process(Pid::new(81, 0)), hello.as_ref());
        let pid = "#Pid<other@host.7.89.0>";
        let got: Vec<String> =
            rx.try_iter().map(|d| d.message.as_ref().without_strings().to_string()).collect();
        assert_eq!(
            got,
            [
                format!("{{trace,<0.80.0>,link,{pid}}}"),
                format!("{{trace,<0.80.0>,unlink,{pid}}}"),
                format!("{{trace,<0.80.0>,getting_linked,{pid}}}"),
                format!("{{trace,<0.80.0>,getting_unlinked,{pid}}}"),
                "{trace,<0.80.0>,'receive',hello}".to_string(),
            ]
        );
        assert_eq!(RemotePid::from_term(Term::parse(pid).expect("a pid").as_ref()), Some(remote));
        assert_eq!(Pid::from_term(Term::parse(pid).expect("a pid").as_ref()), None);
    }

    /// Once the node has a name, a receive pattern sees it for this node's
    /// senders, and `{node}` and `node/1` of this node's pids give it.
    #[test]
    fn the_node_name_is_what_specs_see() {
        let Traced { core, session, process: mut p, rx } = traced(TraceFlags::RECEIVE);
        let pattern = Term::parse(
            "[{['$1', '$2', '_'], [{'=:=', '$1', {node}}], [{message, {{'$1', {node, '$2'}}}}]}]",
        )
        .expect("a spec");
        core.set_message_pattern(&session, MessageEvent::Receive, pattern.as_ref())
            .expect("a receive pattern");
        let hello = Term::atom(Atom::new("hello"));
        p.message_arrived(Origin::Process(Pid::new(81, 0)), hello.as_ref());
        core.set_node_name(Atom::new("a@host"));
        p.message_arrived(Origin::Process(Pid::new(81, 0)), hello.as_ref());
        let got: Vec<String> = rx.try_iter().map(|d| d.message.to_string()).collect();
        assert_eq!(
            got,
            [
                "{trace,<0.80.0>,'receive',hello,{nonode@nohost,nonode@nohost}}",
                "{trace,<0.80.0>,'receive',hello,{a@host,a@host}}",
            ]
        );
    }
}
