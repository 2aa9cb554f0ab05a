//! The scenario world's message passing: steps from the driver, messages,
//! links, registered names, exit signals and sequential trace tokens.
//!
//! The world is OTP's with one scheduler. The driver tells a puppet what to
//! do by sending it a step message `{'$scenario_step', Step}`, which the
//! puppet takes at once (with `'receive'` tracing the step shows, and
//! taking a message without a token clears the puppet's sequential trace
//! token, exactly as in OTP). Signals a step sends (messages, links,
//! unlinks, exits) are handled after the step, each receiver in turn in
//! the order they were woken, as the one scheduler would run them; or
//! before, while the puppet waits in the middle of its step (for a
//! timeout, a port's answer, in a BIF that handles its signals). What a
//! puppet sends itself it takes at its next receive (see
//! docs/scenarios.md, "What runs when").

use std::collections::VecDeque;

use matchspec::term::{Atom, Heap, Kind, Term, TermRef, Word};

use super::link_tree::{LinkKey, LinkTree, PlannedLinks};
use super::nodes::{Nodes, RemoteAction, RemoteSignal, local_name};
use super::ports::{PortAction, WorldPort};
use super::{DRIVER, Failure, Reply, Runner};
use matchspec_runtime::LinkSignal;
use matchspec_runtime::Origin;
use matchspec_runtime::ids::{Mfa, Pid, PortId, RemotePid};
use matchspec_runtime::seq_trace::MessageToken;
use matchspec_runtime::{Process, Raised};

/// A signal on its way to a process.
#[derive(Debug)]
pub(super) enum Signal {
    Message {
        from: Origin,
        message: Term,
        token: MessageToken,
    },
    Link(LinkSignal),
    Unlink(Pid),
    /// The unlinked process's answer (from it): the unlinker's link goes.
    UnlinkAck(Pid),
    /// An exit signal: through a link as `from` ended (`linked`), or sent
    /// by `exit/2`.
    Exit {
        from: LinkKey,
        reason: Term,
        token: MessageToken,
        linked: bool,
    },
    /// A link signal from a process of another node.
    Remote(RemotePid, RemoteSignal),
    /// Not a signal: a new process's first run, in which it enters its
    /// idle loop's receive. It waits its turn as the processes woken by
    /// signals do (one scheduler runs them in the order they became
    /// runnable).
    Start,
}

impl Signal {
    /// The exit signal of port `port`, closed with `reason`, to a process
    /// linked to it.
    pub(super) fn port_exit(port: PortId, reason: Term) -> Signal {
        Signal::Exit { from: LinkKey::Port(port), reason, token: MessageToken::NONE, linked: true }
    }
}

/// What the world keeps besides the core's processes.
#[derive(Debug, Default)]
pub(super) struct World {
    /// Messages in each puppet's queue (steps are taken at once).
    pub(super) queues: rustc_hash::FxHashMap<Pid, VecDeque<(Term, MessageToken)>>,
    /// Each process's links, to processes and ports, in ERTS's tree.
    pub(super) links: rustc_hash::FxHashMap<Pid, LinkTree>,
    /// Registered names of processes.
    pub(super) names: rustc_hash::FxHashMap<Atom, Pid>,
    /// The open ports.
    pub(super) ports: rustc_hash::FxHashMap<PortId, WorldPort>,
    /// Every port ever opened (a port identifier is never reused).
    pub(super) ports_ever: rustc_hash::FxHashSet<PortId>,
    /// Every pid that has been a process of this node (never reused).
    pub(super) pids_ever: rustc_hash::FxHashSet<Pid>,
    /// Processes that trap exits.
    trapping: rustc_hash::FxHashSet<Pid>,
    /// Signals not yet handled, in the order sent.
    pub(super) pending: VecDeque<(Pid, Signal)>,
    /// What ports send from I/O tasks after the step (the echo of a
    /// command another process than the owner sent): port, receiver,
    /// message.
    pub(super) port_output: VecDeque<(PortId, Pid, Term)>,
    /// The puppet running the current step.
    active: Option<Pid>,
    /// What the puppet running the step sent itself, not taken yet: it
    /// takes its own messages when it next looks at its signals (a
    /// receive, the end of the step, an `exit/2` to itself, a port BIF
    /// that handles the caller's signals).
    own: VecDeque<(Term, MessageToken)>,
    /// The node's name, the peer nodes and their processes.
    pub(super) nodes: Nodes,
}

/// The group leader of every process: outside the world, it shows only in
/// spawn requests.
pub(super) const GROUP_LEADER: Pid = Pid::new(60, 0);

/// The words of a puppet's heap after a collection: OTP's side gives every
/// process a minimum heap of 100,000 words, which ERTS rounds up to the
/// next size of its heap size table, 121,536 (golden `system-large_heap`).
const PUPPET_HEAP_WORDS: u64 = 121_536;

pub(super) fn atom(name: &str) -> Word {
    Word::atom(Atom::new(name))
}

/// A step `{Tag, Args...}`: the words `head` (immediates) then copies of
/// `args`.
pub(super) fn step(head: &[Word], args: &[TermRef<'_>]) -> Term {
    let mut heap = Heap::new();
    let mut all = head.to_vec();
    for a in args {
        all.push(a.copy_to(&mut heap));
    }
    let root = if all.len() == 1 { all[0] } else { heap.tuple(&all) };
    Term::from_parts(heap, root)
}

/// `{'EXIT', From, Reason}`: an exit signal as a trapping process gets it.
fn exit_message(from: Origin, reason: &Term) -> Term {
    let mut heap = Heap::new();
    let from = match from {
        Origin::Process(pid) => pid.to_word(&mut heap),
        Origin::Port(port) => port.to_word(&mut heap),
        Origin::Remote(pid) => pid.to_word(&mut heap),
        Origin::Other(_) => Word::atom(Atom::UNDEFINED),
    };
    let reason = reason.copy_to(&mut heap);
    let root = heap.tuple(&[atom("EXIT"), from, reason]);
    Term::from_parts(heap, root)
}

pub(super) fn world(why: &'static str) -> Failure {
    Failure::World(why)
}

impl Runner {
    /// Is `pid` a puppet: a spawned process, not the driver or a tracer?
    pub(super) fn is_puppet(&self, pid: Pid) -> bool {
        pid != DRIVER
            && self.processes.contains_key(&pid)
            && !self.tracers.iter().any(|(p, _)| *p == pid)
    }

    /// The driver sends puppet `pid` the step `step`, and the puppet takes
    /// it.
    pub(super) fn step_to(&mut self, pid: Pid, step: Term) {
        let mut heap = Heap::new();
        let inner = step.copy_to(&mut heap);
        let root = heap.tuple(&[atom("$scenario_step"), inner]);
        let message = Term::from_parts(heap, root);
        let mut to = Heap::new();
        let to_word = pid.to_word(&mut to);
        let driver = self.processes.get_mut(&DRIVER).expect("the driver lives");
        let token = driver.send(to.view(to_word), Some(pid), message.as_ref());
        self.world.active = Some(pid);
        if let Some(p) = self.processes.get_mut(&pid) {
            p.schedule_in();
            super::trace_schedule(p, self.host_stacks.get(&pid), true);
            p.message_arrived(Origin::Process(DRIVER), message.as_ref());
        }
        // The step sits in the queue until the puppet takes it, at once.
        self.queue_changed(pid, 1);
        if let Some(p) = self.processes.get_mut(&pid) {
            p.consume(message.as_ref(), &token);
        }
        self.queue_changed(pid, 0);
    }

    /// `message` enters puppet `pid`'s queue (its `'receive'` was traced
    /// already), which its process is told.
    fn enqueue(&mut self, pid: Pid, message: Term, token: MessageToken) {
        self.world.queues.entry(pid).or_default().push_back((message, token));
        self.queue_changed(pid, 0);
    }

    /// Tells puppet `pid`'s process how many messages its queue holds now,
    /// with `taking` more that it takes at once (a step): what system
    /// monitoring (`long_message_queue`) watches. The driver's and the
    /// tracers' own queues are the scenario's machinery, not watched.
    pub(super) fn queue_changed(&mut self, pid: Pid, taking: u64) {
        if !self.is_puppet(pid) {
            return;
        }
        let queued = self.world.queues.get(&pid).map_or(0, VecDeque::len) as u64;
        if let Some(p) = self.processes.get_mut(&pid) {
            p.queue_length(queued + taking);
        }
    }

    /// `{do, P, Actions}`.
    pub(super) fn do_actions(&mut self, p: TermRef<'_>, actions_term: TermRef<'_>) -> Reply {
        if let Some(remote) = RemotePid::from_term(p) {
            return self.do_remote(remote, actions_term);
        }
        let pid = Pid::from_term(p).ok_or(world("not_a_pid"))?;
        let actions = Action::parse_list(actions_term)?;
        // A child may be named by the actions after its spawn, but not die
        // in that step, nor may the step end the process (a linked child
        // would go with it): OTP's side learns the children it made only
        // after the step.
        let spawns = actions.iter().any(|a| matches!(a, Action::Spawn { .. }));
        let ends = actions.iter().any(|a| {
            matches!(
                a,
                Action::Exit(_)
                    | Action::ExitSignal(..)
                    | Action::Remote(RemoteAction::ExitSignal(..))
            )
        });
        if spawns && ends {
            return Err(world("unsupported"));
        }
        // A receive ... after takes the first message that comes while it
        // waits: a step that waits for a timeout does nothing that may
        // make one come.
        let waits = actions.iter().any(|a| matches!(a, Action::ReceiveTimeout));
        if waits && !actions.iter().all(Action::is_quiet) {
            return Err(world("unsupported"));
        }
        if pid == DRIVER {
            // The driver only sends messages and exit signals.
            let driver_may = |a: &Action| {
                matches!(
                    a,
                    Action::Send { .. }
                        | Action::ExitSignal(..)
                        | Action::Remote(RemoteAction::ExitSignal(..))
                )
            };
            if !actions.iter().all(driver_may) {
                return Err(world("unsupported"));
            }
        } else if !self.is_puppet(pid) {
            return Err(world(if self.processes.contains_key(&pid) {
                "unsupported"
            } else {
                "noproc"
            }));
        }
        self.check_actions(pid, &actions)?;
        if pid != DRIVER {
            self.step_to(pid, step(&[atom("do")], &[actions_term]));
        }
        for action in actions.iter() {
            self.perform(pid, action);
        }
        Ok(Term::atom(Atom::OK))
    }

    /// Refuses actions that do not fit the world before any is made.
    fn check_actions(&self, pid: Pid, actions: &[Action]) -> Result<(), Failure> {
        let mut queued = self.world.queues.get(&pid).map_or(0, VecDeque::len);
        let mut links = PlannedLinks::of(self.world.links.get(&pid));
        let mut opened = Vec::new();
        let mut spawned = Vec::new();
        let mut spawned_remotes = Vec::new();
        for action in actions {
            match action {
                Action::Remote(action) => {
                    self.check_remote_action(action, &mut links, &mut spawned_remotes)?;
                }
                Action::Send { to, .. }
                    if RemotePid::from_term(to.as_ref())
                        .is_some_and(|r| spawned_remotes.contains(&r)) =>
                {
                    return Err(world("unsupported"));
                }
                Action::Port(action) => {
                    if pid == DRIVER {
                        return Err(world("unsupported"));
                    }
                    self.check_port_action(action, &mut links, &mut opened)?;
                }
                Action::Receive => {
                    queued = queued.checked_sub(1).ok_or(world("empty_queue"))?;
                }
                Action::ReceiveTimeout => {
                    if queued > 0 {
                        return Err(world("not_empty"));
                    }
                }
                Action::Link(other) => {
                    if !(self.is_puppet(*other) || spawned.contains(other)) || *other == pid {
                        return Err(world("noproc"));
                    }
                    links.link(LinkKey::Process(*other)).map_err(world)?;
                }
                Action::Unlink(other) => links.unlink(LinkKey::Process(*other)).map_err(world)?,
                Action::Register(name) => {
                    if self.name_taken(*name) || self.world.names.values().any(|p| *p == pid) {
                        return Err(world("already_registered"));
                    }
                }
                Action::Unregister(name) => {
                    // A process unregisters its own name or a port's.
                    if self.world.names.get(name) != Some(&pid) && self.port_named(*name).is_none()
                    {
                        return Err(world("not_registered"));
                    }
                }
                Action::Send { to, .. } => {
                    // It takes what it sends itself at its next receive.
                    if Pid::from_term(to.as_ref()) == Some(pid) {
                        queued += 1;
                    }
                    // A pid that is not a puppet but exists (a tracer, the
                    // driver) would be a message OTP's side cannot show.
                    if let Some(to) = Pid::from_term(to.as_ref())
                        && self.processes.contains_key(&to)
                        && !self.is_puppet(to)
                        && !self.tracers.iter().any(|(p, _)| *p == to)
                    {
                        return Err(world("unsupported"));
                    }
                }
                Action::Spawn { child, link } => {
                    if self.processes.contains_key(child) || spawned.contains(child) {
                        return Err(world("already_exists"));
                    }
                    spawned.push(*child);
                    if *link {
                        links.link(LinkKey::Process(*child)).map_err(world)?;
                    }
                }
                Action::TrapExit(_) | Action::SeqTrace(..) | Action::SeqToken(_) => {}
                Action::SeqPrint(..) | Action::GarbageCollect => {}
                Action::Exit(_) => {
                    // The process is gone after it: nothing may follow.
                    if !std::ptr::eq(action, actions.last().expect("not empty")) {
                        return Err(world("bad_action"));
                    }
                }
                Action::ExitSignal(to, _) => {
                    // To itself, the signal may end the process at once:
                    // nothing may follow.
                    if *to == pid && !std::ptr::eq(action, actions.last().expect("not empty")) {
                        return Err(world("bad_action"));
                    }
                    let tracer = self.tracers.iter().any(|(p, t)| *p == *to && t.is_alive());
                    if *to == DRIVER || (!self.is_puppet(*to) && !tracer) {
                        return Err(world("noproc"));
                    }
                }
            }
        }
        Ok(())
    }

    /// `pid`'s own side of a link: it links to `other`.
    pub(super) fn link_side(&mut self, pid: Pid, other: LinkKey) {
        self.world.links.entry(pid).or_default().insert(other);
    }

    /// `pid` handles an exit signal through its link to `other`: answers
    /// whether the link was there (and not being taken away), and drops it.
    fn take_link(&mut self, pid: Pid, other: LinkKey) -> bool {
        let tree = self.world.links.entry(pid).or_default();
        let active = tree.is_linked(other);
        if active {
            tree.remove(other);
        }
        active
    }

    /// `pid`'s own side of a link goes.
    pub(super) fn unlink_side(&mut self, pid: Pid, other: LinkKey) {
        if let Some(tree) = self.world.links.get_mut(&pid) {
            tree.remove(other);
        }
    }

    fn perform(&mut self, pid: Pid, action: &Action) {
        let here = self.core.node_name();
        let receiver = match action {
            Action::Send { to, .. } => match to.as_ref().as_atom() {
                Some(name) => self.world.names.get(&name).copied(),
                None => match local_name(to.as_ref(), here) {
                    Some(name) => self.world.names.get(&name).copied(),
                    None => Pid::from_term(to.as_ref()).filter(|p| self.processes.contains_key(p)),
                },
            },
            _ => None,
        };
        if let Action::Port(action) = action {
            return self.perform_port_action(pid, action);
        }
        if let Action::Remote(action) = action {
            return self.perform_remote_action(pid, action);
        }
        if let Action::Spawn { child, link } = action {
            return if *link {
                self.spawn_link_in_step(pid, *child)
            } else {
                self.spawn_in_step(pid, *child)
            };
        }
        if let Action::ExitSignal(to, reason) = action {
            return self.send_exit_signal(pid, *to, reason);
        }
        if let Action::Exit(reason) = action {
            return self.exit_in_step(pid, reason.as_ref());
        }
        if let Action::ReceiveTimeout = action {
            return self.receive_timeout(pid);
        }
        if let Action::GarbageCollect = action {
            // `erlang:garbage_collect/0` fetches the process's signals
            // first. Unless it traces `'receive'`, what it sent itself
            // enters its queue then; a receive-traced process handles
            // (and traces) them at its next look (golden
            // `system-large_heap`).
            let receive_traced = self
                .processes
                .get(&pid)
                .is_some_and(|p| p.tracee().traces_any(matchspec_runtime::TraceFlags::RECEIVE));
            if !receive_traced {
                self.take_own_messages(pid);
            }
        }
        if let Action::Receive = action {
            // `receive M -> M end` takes the oldest message it has; only
            // with none does it fetch what it sent itself.
            if self.world.queues.get(&pid).is_none_or(VecDeque::is_empty) {
                self.take_own_messages(pid);
            }
            let queued = self.world.queues.get_mut(&pid).and_then(VecDeque::pop_front);
            if let (Some((message, token)), Some(process)) = (queued, self.processes.get_mut(&pid))
            {
                process.consume(message.as_ref(), &token);
            }
            self.queue_changed(pid, 0);
            return;
        }
        if let Action::Unregister(name) = action
            && self.port_named(*name).is_some()
        {
            return self.unregister_port(*name);
        }
        let Some(process) = self.processes.get_mut(&pid) else { return };
        match action {
            Action::Port(_)
            | Action::Remote(_)
            | Action::Spawn { .. }
            | Action::ExitSignal(..)
            | Action::Exit(_)
            | Action::Receive
            | Action::ReceiveTimeout => {
                unreachable!("handled above")
            }
            Action::Send { to, message } => {
                let token = process.send(to.as_ref(), receiver, message.as_ref());
                let Some(receiver) = receiver else { return };
                if self.tracers.iter().any(|(p, _)| *p == receiver) {
                    // A tracer process keeps what it gets, like a trace message.
                    let _ = self
                        .mailbox
                        .send(matchspec_runtime::tracer::Delivered::new(receiver, message.clone()));
                    return;
                }
                if receiver == pid {
                    self.world.own.push_back((message.clone(), token));
                    return;
                }
                let signal =
                    Signal::Message { from: Origin::Process(pid), message: message.clone(), token };
                self.world.pending.push_back((receiver, signal));
            }
            Action::Link(other) => {
                let signal = process.link(*other);
                self.link_side(pid, LinkKey::Process(*other));
                self.world.pending.push_back((*other, Signal::Link(signal)));
            }
            Action::Unlink(other) => {
                // The link stays in the tree until the answer comes.
                process.unlink(*other);
                if let Some(tree) = self.world.links.get_mut(&pid) {
                    tree.set_unlinking(LinkKey::Process(*other));
                }
                self.world.pending.push_back((*other, Signal::Unlink(pid)));
            }
            Action::Register(name) => {
                process.register(*name);
                self.world.names.insert(*name, pid);
            }
            Action::Unregister(name) => {
                process.unregister(*name);
                self.world.names.remove(name);
            }
            Action::TrapExit(on) => {
                if *on {
                    self.world.trapping.insert(pid);
                } else {
                    self.world.trapping.remove(&pid);
                }
            }
            // A bad key, value or token fails in the process (badarg),
            // which the step's `catch` would hide; nothing changes.
            Action::SeqTrace(key, value) => {
                let _ = process.seq_trace_set(key.as_ref(), value.as_ref(), &mut Heap::new());
            }
            Action::SeqToken(token) => {
                let _ = process.seq_trace_set_token(token.as_ref());
            }
            Action::GarbageCollect => {
                // The world has no heap: the figures are zeros (and masked
                // in golden files, where OTP's are real) but for the
                // heap's one block, which `large_heap` compares.
                let info = matchspec_runtime::GcInfo {
                    heap_block_size: PUPPET_HEAP_WORDS,
                    ..matchspec_runtime::GcInfo::default()
                };
                process.trace_gc(matchspec_runtime::GcEvent::MajorStart, &info);
                process.trace_gc(matchspec_runtime::GcEvent::MajorEnd, &info);
                process.collected(&info);
            }
            Action::SeqPrint(label, message) => {
                process.seq_print(label.as_ref().map(Term::as_ref), message.as_ref());
            }
        }
    }

    /// The step's puppet blocks in its next receive, taking what it sent
    /// itself first: it is scheduled out (unless it ended).
    pub(super) fn end_step(&mut self) {
        if let Some(pid) = self.world.active {
            self.take_own_messages(pid);
            self.world.active = None;
            self.schedule_out(pid);
        }
        self.world.own.clear();
    }

    /// Process `pid` looks at its signals: the messages it sent itself in
    /// this step enter its queue (`'receive'`), in the order sent.
    pub(super) fn take_own_messages(&mut self, pid: Pid) {
        if self.world.active != Some(pid) {
            return;
        }
        for (message, token) in std::mem::take(&mut self.world.own) {
            if let Some(process) = self.processes.get_mut(&pid) {
                process.message_arrived(Origin::Process(pid), message.as_ref());
                self.enqueue(pid, message, token);
            }
        }
    }

    /// Process `pid`, waiting in `current` in the middle of its step,
    /// handles the signals that came for it meanwhile: scheduled in and
    /// out for them.
    fn run_while_waiting(&mut self, pid: Pid, current: Mfa) {
        let (mine, rest): (VecDeque<_>, VecDeque<_>) =
            std::mem::take(&mut self.world.pending).into_iter().partition(|(to, _)| *to == pid);
        self.world.pending = rest;
        if mine.is_empty() {
            return;
        }
        if let Some(p) = self.processes.get_mut(&pid) {
            p.schedule_in();
            p.trace_schedule_within(true, current);
        }
        for (_, signal) in mine {
            self.handle(pid, signal);
        }
        if let Some(p) = self.processes.get_mut(&pid)
            && p.tracee().is_alive()
        {
            p.schedule_out();
            p.trace_schedule_within(false, current);
        }
    }

    /// A port BIF returns through `erlang:bif_handle_signals_return/2` when
    /// the caller has signals to handle (here: messages it sent itself):
    /// it is scheduled out, the others run, and back in it takes them.
    pub(super) fn bif_handles_signals(&mut self, pid: Pid) {
        if self.world.active == Some(pid) && !self.world.own.is_empty() {
            self.wait_within(pid, super::ports::handle_signals_mfa(), |_| {});
            self.take_own_messages(pid);
        }
    }

    fn schedule_out(&mut self, pid: Pid) {
        if let Some(p) = self.processes.get_mut(&pid)
            && p.tracee().is_alive()
        {
            p.schedule_out();
            super::trace_schedule(p, self.host_stacks.get(&pid), false);
        }
    }

    /// Process `pid` answers a question the driver asked about it (trace
    /// info, session info): in ERTS the process
    /// handles the request signal itself, so it is scheduled in and out.
    pub(super) fn asked(&mut self, pid: Pid) {
        if pid == DRIVER {
            return;
        }
        if let Some(p) = self.processes.get_mut(&pid)
            && p.tracee().is_alive()
        {
            p.schedule_in();
            super::trace_schedule(p, self.host_stacks.get(&pid), true);
            self.schedule_out(pid);
        }
    }

    /// Handles every pending signal, receiver by receiver in the order they
    /// were woken (each scheduled in, then out again unless it ended);
    /// signals sent while handling (exits, unlink answers) go on the end.
    /// Signals to other nodes arrive once none is left on this one (see
    /// `nodes`), and their answers are handled in turn.
    /// What ports echo to processes that did not wait for it comes from
    /// their I/O tasks first.
    pub(super) fn run_signals(&mut self) {
        self.run_port_output();
        self.run_signals_but(None);
    }

    /// [`Runner::run_signals`] while process `away` waits in the middle of
    /// its step: it runs after the others, so its signals stay pending
    /// (and the ports' I/O tasks come later).
    pub(super) fn run_signals_but(&mut self, away: Option<Pid>) {
        loop {
            while let Some((receiver, _)) =
                self.world.pending.iter().find(|(to, _)| Some(*to) != away)
            {
                let receiver = *receiver;
                // It handles the signals it has now, one at a time; those
                // after the one it is handling stay pending meanwhile (one
                // that ends it handles them as it exits), and what comes
                // later waits for another run.
                let mine = self.world.pending.iter().filter(|(to, _)| *to == receiver).count();
                let puppet = self.is_puppet(receiver);
                if puppet && let Some(p) = self.processes.get_mut(&receiver) {
                    p.schedule_in();
                    super::trace_schedule(p, self.host_stacks.get(&receiver), true);
                }
                for _ in 0..mine {
                    let Some(at) = self.world.pending.iter().position(|(to, _)| *to == receiver)
                    else {
                        break;
                    };
                    let (_, signal) = self.world.pending.remove(at).expect("found above");
                    self.handle(receiver, signal);
                }
                if puppet {
                    self.schedule_out(receiver);
                }
            }
            // Then what went to other nodes, whose answers come back.
            if !self.deliver_outbound() {
                break;
            }
        }
    }

    pub(super) fn handle(&mut self, pid: Pid, signal: Signal) {
        let Some(process) = self.processes.get_mut(&pid) else { return };
        match signal {
            Signal::Message { from, message, token } => {
                process.message_arrived(from, message.as_ref());
                self.enqueue(pid, message, token);
            }
            Signal::Link(signal) => {
                // Already linked (or unlinking): nothing happens.
                let key = LinkKey::Process(signal.from());
                let tree = self.world.links.entry(pid).or_default();
                if !tree.contains(key) {
                    tree.insert(key);
                    process.linked_by(signal);
                }
            }
            Signal::Unlink(from) => {
                process.unlinked_by(from);
                self.unlink_side(pid, LinkKey::Process(from));
                if self.processes.contains_key(&from) {
                    self.world.pending.push_back((from, Signal::UnlinkAck(pid)));
                }
            }
            Signal::UnlinkAck(from) => {
                // Unless it linked again meanwhile.
                let key = LinkKey::Process(from);
                if let Some(tree) = self.world.links.get_mut(&pid)
                    && !tree.is_linked(key)
                {
                    tree.remove(key);
                }
            }
            Signal::Exit { from, reason, token, linked } => {
                if !linked {
                    return self.handle_exit_signal(pid, from, reason, token);
                }
                // ERTS drops the signal of a link that is gone or going.
                if !self.take_link(pid, from) {
                    return;
                }
                let normal = reason.as_ref().as_atom() == Some(Atom::new("normal"));
                let trapping = self.world.trapping.contains(&pid);
                let Some(process) = self.processes.get_mut(&pid) else { return };
                if trapping || normal {
                    // The link is gone; a process that lives on says so.
                    match from {
                        LinkKey::Process(other) => process.unlinked_by(other),
                        LinkKey::Port(port) => process.unlinked_by_port(port),
                        LinkKey::Remote(other) => process.unlinked_by_remote(other),
                    }
                }
                if trapping {
                    let message = exit_message(from.origin(), &reason);
                    process.message_arrived(from.origin(), message.as_ref());
                    self.enqueue(pid, message, token);
                } else if !normal {
                    process.exit_with(reason.as_ref());
                    self.ended(pid, reason);
                }
            }
            Signal::Remote(from, signal) => self.handle_remote(pid, from, signal),
            Signal::Start => {}
        }
    }

    /// Process `pid` has ended with `reason`: it leaves the world, and the
    /// processes linked to it get exit signals.
    ///
    /// Its registered name goes (`unregister`, after `exit`). The exit
    /// signals go out in the post order of its link tree, as ERTS walks it
    /// (see `link_tree`): for up to two links, newest first. Each end
    /// drops its side of the link when it handles the signal.
    pub(super) fn ended(&mut self, pid: Pid, reason: Term) {
        let name = self.world.names.iter().find(|(_, p)| **p == pid).map(|(n, _)| *n);
        self.drop_ending_links(pid);
        let links = self.world.links.remove(&pid).map(|t| t.exit_order()).unwrap_or_default();
        let mut signals = Vec::with_capacity(links.len());
        let mut ports = Vec::new();
        let mut remotes = Vec::new();
        if let Some(process) = self.processes.get_mut(&pid) {
            if let Some(name) = name {
                process.unregister(name);
            }
            for other in links {
                match other {
                    LinkKey::Process(other) => {
                        let token = process.exit_signal(other, reason.as_ref());
                        signals.push((other, token));
                    }
                    LinkKey::Port(port) => ports.push(port),
                    LinkKey::Remote(other) => remotes.push(other),
                }
            }
            process.trace_schedule_out_exited();
        }
        self.processes.remove(&pid);
        self.host_stacks.remove(&pid);
        self.ports_after_exit(pid, &ports, &reason);
        self.world.queues.remove(&pid);
        self.world.trapping.remove(&pid);
        self.world.names.retain(|_, p| *p != pid);
        for (other, token) in signals {
            let from = LinkKey::Process(pid);
            let signal = Signal::Exit { from, reason: reason.clone(), token, linked: true };
            self.world.pending.push_back((other, signal));
        }
        for other in remotes {
            self.world.nodes.exit_to_remote(pid, other, &reason, true);
        }
    }

    /// A process that ends handles the signals still on their way to it
    /// first (ERTS does so as it exits): an exit signal through a link, or
    /// an unlink, takes that link away, so no exit signal goes back through
    /// it; the rest are dropped with the process.
    fn drop_ending_links(&mut self, pid: Pid) {
        let (mine, rest): (VecDeque<_>, VecDeque<_>) =
            std::mem::take(&mut self.world.pending).into_iter().partition(|(to, _)| *to == pid);
        self.world.pending = rest;
        for (_, signal) in mine {
            let gone = match signal {
                Signal::Exit { from, linked: true, .. } => from,
                Signal::Unlink(from) => LinkKey::Process(from),
                _ => continue,
            };
            self.unlink_side(pid, gone);
        }
    }

    /// `pid` waits in a `receive` with a timeout (in `scenario_act:act/1`)
    /// until the timer fires: it is scheduled out, the others handle what
    /// it sent them, and it in again, and the timeout arrives as the
    /// message `timeout` from `clock_service` (the receive pattern sees
    /// `[clock_service, undefined, timeout]`). (What it sent itself would
    /// be taken instead: `not_empty`.)
    fn receive_timeout(&mut self, pid: Pid) {
        let act = super::ports::act_mfa();
        // Woken by a signal the others' runs sent it (the answer to its
        // unlink), it handles it in a run of its own, and waits on.
        self.wait_within(pid, act, |runner| runner.run_while_waiting(pid, act));
        if let Some(process) = self.processes.get_mut(&pid) {
            let timeout = Term::atom(Atom::new("timeout"));
            process.message_arrived(Origin::Other(Atom::new("clock_service")), timeout.as_ref());
        }
    }

    /// `exit(To, Reason)` by `from`. Sent to itself it is handled at once (as
    /// ERTS handles a BIF's signals to the caller before it returns); a
    /// tracer process (which does not trap exits) dies unless `Reason` is
    /// `normal`, and its undelivered messages with it.
    fn send_exit_signal(&mut self, from: Pid, to: Pid, reason: &Term) {
        if let Some((_, tracer)) = self.tracers.iter().find(|(p, _)| *p == to) {
            if reason.as_ref().as_atom() != Some(Atom::new("normal")) {
                tracer.kill();
                if let Some(mut process) = self.processes.remove(&to) {
                    process.exit_with(reason.as_ref());
                }
                self.host_stacks.remove(&to);
            }
            return;
        }
        // ERTS's exit/2 sends no token (and makes no sequential trace
        // event), unlike the exit signals of links.
        let token = MessageToken::NONE;
        let signal = Signal::Exit {
            from: LinkKey::Process(from),
            reason: reason.clone(),
            token,
            linked: false,
        };
        if to == from {
            // It handles its signals in order: what it sent itself first.
            self.take_own_messages(to);
            self.handle(to, signal);
        } else {
            self.world.pending.push_back((to, signal));
        }
    }

    /// Process `pid` handles an exit signal `exit/2` sent it: `kill` kills
    /// it (`killed`), a trapping process gets `{'EXIT', From, Reason}`, and
    /// otherwise it ends with `reason`, unless that is `normal` from another
    /// process.
    fn handle_exit_signal(&mut self, pid: Pid, from: LinkKey, reason: Term, token: MessageToken) {
        let Some(process) = self.processes.get_mut(&pid) else { return };
        let kill = reason.as_ref().as_atom() == Some(Atom::new("kill"));
        let normal = reason.as_ref().as_atom() == Some(Atom::new("normal"));
        if kill {
            let killed = Term::atom(Atom::new("killed"));
            process.exit_with(killed.as_ref());
            return self.ended(pid, killed);
        }
        if self.world.trapping.contains(&pid) {
            let message = exit_message(from.origin(), &reason);
            process.message_arrived(from.origin(), message.as_ref());
            self.enqueue(pid, message, token);
        } else if !normal || from == LinkKey::Process(pid) {
            process.exit_with(reason.as_ref());
            self.ended(pid, reason);
        }
    }

    /// After a puppet's return or raise: if it ended, it leaves the world.
    pub(super) fn after_end(&mut self, pid: Pid, raised: Option<Raised>) {
        let alive = self.processes.get(&pid).is_some_and(|p| p.tracee().is_alive());
        if !alive {
            let reason = match raised {
                Some(Raised::Exited(reason)) => reason,
                _ => Term::atom(Atom::new("normal")),
            };
            self.ended(pid, reason);
        }
    }

    /// `exit(Reason)` in a step: an exception of class `exit` raised in the
    /// innermost function, as `{raise, P, exit, Reason}` is: a pending
    /// `try_call` catches it (the process goes on), else the process ends
    /// with `Reason`.
    fn exit_in_step(&mut self, pid: Pid, reason: TermRef<'_>) {
        if let Ok(raised) = self.raise(pid, Atom::new("exit"), reason) {
            self.after_end(pid, Some(raised));
        }
    }

    /// `parent`, running a step, spawns `child` (idle in `scenario:idle/0`).
    pub(super) fn spawn_in_step(&mut self, parent: Pid, child: Pid) {
        let Some(p) = self.processes.get(&parent) else { return };
        let tracee = p.tracee().clone();
        let start = Term::parse("{scenario, idle, []}").expect("a literal");
        let process = self.core.spawn_from(&tracee, child, Some(super::idle()), start.as_ref());
        self.born(parent, process, SpawnOpts::None);
    }

    /// `parent`, running a step, spawns and links `child` in one go
    /// (`spawn_link`): both ends are linked from the start, with no link
    /// signal.
    fn spawn_link_in_step(&mut self, parent: Pid, child: Pid) {
        let Some(p) = self.processes.get_mut(&parent) else { return };
        let start = Term::parse("{scenario, idle, []}").expect("a literal");
        let process = self.core.spawn_link_from(p, child, Some(super::idle()), start.as_ref());
        self.link_side(parent, LinkKey::Process(child));
        self.link_side(child, LinkKey::Process(parent));
        self.born(parent, process, SpawnOpts::Link);
    }

    /// A child `parent` spawned joins the world: it gets the parent's
    /// sequential trace token and runs once, in its turn.
    fn born(&mut self, parent: Pid, child: Process, opts: SpawnOpts) {
        let pid = child.pid();
        self.add_process(child);
        self.spawn_token(parent, pid, opts);
        self.world.pending.push_back((pid, Signal::Start));
    }

    /// A spawn passes the parent's sequential trace token to the child, as
    /// OTP 27's spawn request and reply do: the parent's token moves on with
    /// the request, which the child takes (token included), and the child's
    /// reply goes back with it, which the parent handles without taking the
    /// token (but see `Process::spawn_reply_handled` for its counters). The request is `{spawn_request, Ref, Parent, GroupLeader,
    /// {scenario, idle, 0}, Opts, spawn_reply, []}`, `Opts` being `[link]`
    /// for `spawn_link` and `[]` for `spawn`, and the reply
    /// `{spawn_reply, Ref, ok, Child}`; the reference is `'$ref'` and the
    /// group leader `<0.60.0>` (see docs/scenarios.md).
    pub(super) fn spawn_token(&mut self, parent: Pid, child: Pid, opts: SpawnOpts) {
        let Some(p) = self.processes.get_mut(&parent) else { return };
        if p.tracee().seq_state().token().is_none() {
            return;
        }
        let mut heap = Heap::new();
        let parent_word = parent.to_word(&mut heap);
        let leader = GROUP_LEADER.to_word(&mut heap);
        let idle = heap.tuple(&[atom("scenario"), atom("idle"), Word::small(0).expect("small")]);
        let opts = match opts {
            SpawnOpts::None => Word::NIL,
            SpawnOpts::Link => heap.list(&[atom("link")]),
        };
        let request = heap.tuple(&[
            atom("spawn_request"),
            atom("$ref"),
            parent_word,
            leader,
            idle,
            opts,
            atom("spawn_reply"),
            Word::NIL,
        ]);
        let child_word = child.to_word(&mut heap);
        let reply = heap.tuple(&[atom("spawn_reply"), atom("$ref"), atom("ok"), child_word]);
        let token = p.seq_signal(child, heap.view(request));
        let Some(c) = self.processes.get_mut(&child) else { return };
        c.consume(heap.view(request), &token);
        let token = c.seq_signal(parent, heap.view(reply));
        if let Some(p) = self.processes.get_mut(&parent) {
            p.spawn_reply_handled(heap.view(reply), &token);
        }
    }

    /// `{system_tracer, Tracer}`: `seq_trace:set_system_tracer/1`, answering
    /// the old tracer (`false` for none).
    pub(super) fn system_tracer(&mut self, spec: TermRef<'_>) -> Reply {
        let tracer = match spec.as_atom() {
            Some(Atom::FALSE) => None,
            _ => Some(
                self.session_tracer(spec).ok_or(matchspec_runtime::error::TraceError::BadOpt)?,
            ),
        };
        let old = self.core.set_system_seq_tracer(tracer)?;
        let mut heap = Heap::new();
        let word = match old {
            Some(t) => t.to_term(&mut heap),
            None => Word::atom(Atom::FALSE),
        };
        Ok(Term::from_parts(heap, word))
    }

    /// `{seq_token, P}`: `process_info(P, sequential_trace_token)`'s value.
    pub(super) fn seq_token(&mut self, p: TermRef<'_>) -> Reply {
        let pid = Pid::from_term(p).ok_or(world("not_a_pid"))?;
        let process = self.processes.get(&pid).ok_or(world("noproc"))?;
        let state = process.tracee().seq_state();
        let mut heap = Heap::new();
        let word = state.token_word(&mut heap);
        Ok(Term::from_parts(heap, word))
    }
}

/// The options of a spawn request, as a sequential trace shows them.
#[derive(Clone, Copy, Debug)]
pub(super) enum SpawnOpts {
    /// `spawn/3`: `[]`.
    None,
    /// `spawn_link/3`: `[link]`.
    Link,
}

/// One action of a `do` step.
#[derive(Debug)]
pub(super) enum Action {
    Send {
        to: Term,
        message: Term,
    },
    Receive,
    /// `receive ... after 1 -> timeout end` with nothing queued.
    ReceiveTimeout,
    Link(Pid),
    Unlink(Pid),
    Register(Atom),
    Unregister(Atom),
    TrapExit(bool),
    SeqTrace(Term, Term),
    SeqToken(Term),
    SeqPrint(Option<Term>, Term),
    GarbageCollect,
    Exit(Term),
    /// `exit(To, Reason)`.
    ExitSignal(Pid, Term),
    /// `spawn(scenario, idle, [])`, or `spawn_link` (`link`).
    Spawn {
        child: Pid,
        link: bool,
    },
    Port(PortAction),
    /// On a process of another node.
    Remote(RemoteAction),
}

impl Action {
    /// Does the action leave nothing to come back to the process later in
    /// its step? An exit signal may bring an `'EXIT'` back, a port or
    /// another node an answer.
    fn is_quiet(&self) -> bool {
        match self {
            Action::Send { to, .. } => {
                to.as_ref().as_atom().is_some() || Pid::from_term(to.as_ref()).is_some()
            }
            Action::ExitSignal(..) | Action::Port(_) | Action::Remote(_) => false,
            Action::Receive
            | Action::ReceiveTimeout
            | Action::Link(_)
            | Action::Unlink(_)
            | Action::Register(_)
            | Action::Unregister(_)
            | Action::TrapExit(_)
            | Action::SeqTrace(..)
            | Action::SeqToken(_)
            | Action::SeqPrint(..)
            | Action::GarbageCollect
            | Action::Exit(_)
            | Action::Spawn { .. } => true,
        }
    }

    /// The actions of a proper list (`bad_action` for anything else).
    pub(super) fn parse_list(list: TermRef<'_>) -> Result<Vec<Action>, Failure> {
        let items = list.proper_list().ok_or(world("bad_action"))?;
        items.iter().map(|a| Action::parse(*a)).collect::<Option<_>>().ok_or(world("bad_action"))
    }

    pub(super) fn parse(term: TermRef<'_>) -> Option<Action> {
        match term.as_atom().map(Atom::name) {
            Some("receive") => return Some(Action::Receive),
            Some("receive_timeout") => return Some(Action::ReceiveTimeout),
            Some("garbage_collect") => return Some(Action::GarbageCollect),
            _ => {}
        }
        let t = term.as_tuple()?;
        let tag = t.get(0)?.as_atom()?;
        let arg = |i: usize| t.get(i);
        Some(match (tag.name(), t.len()) {
            ("send", 3) => {
                // A name, a pid (of any node) or `{Name, Node}`.
                let to = arg(1)?;
                let named = to
                    .as_tuple()
                    .is_some_and(|t| t.len() == 2 && t.iter().all(|x| x.as_atom().is_some()));
                if to.as_atom().is_none()
                    && Pid::from_term(to).is_none()
                    && RemotePid::from_term(to).is_none()
                    && !named
                {
                    return None;
                }
                Action::Send { to: to.to_owned(), message: arg(2)?.to_owned() }
            }
            ("link", 2) => match (PortId::from_term(arg(1)?), RemotePid::from_term(arg(1)?)) {
                (Some(port), _) => Action::Port(PortAction::Link(port)),
                (_, Some(remote)) => Action::Remote(RemoteAction::Link(remote)),
                _ => Action::Link(Pid::from_term(arg(1)?)?),
            },
            ("unlink", 2) => match (PortId::from_term(arg(1)?), RemotePid::from_term(arg(1)?)) {
                (Some(port), _) => Action::Port(PortAction::Unlink(port)),
                (_, Some(remote)) => Action::Remote(RemoteAction::Unlink(remote)),
                _ => Action::Unlink(Pid::from_term(arg(1)?)?),
            },
            ("register", 2) => Action::Register(arg(1)?.as_atom()?),
            ("register", 3) => {
                Action::Port(PortAction::Register(arg(1)?.as_atom()?, PortId::from_term(arg(2)?)?))
            }
            ("open_port", 3) => {
                Action::Port(PortAction::Open(PortId::from_term(arg(1)?)?, arg(2)?.as_atom()?))
            }
            ("port_command", 3) if matches!(arg(2)?.kind(), Kind::Bits(b) if b.is_binary()) => {
                Action::Port(PortAction::Command(PortId::from_term(arg(1)?)?, arg(2)?.to_owned()))
            }
            ("port_close", 2) => Action::Port(PortAction::Close(PortId::from_term(arg(1)?)?)),
            ("port_control", 4) if matches!(arg(3)?.kind(), Kind::Bits(b) if b.is_binary()) => {
                let op = arg(2)?.as_i64().filter(|op| u32::try_from(*op).is_ok())?;
                Action::Port(PortAction::Control(
                    PortId::from_term(arg(1)?)?,
                    op,
                    arg(3)?.to_owned(),
                ))
            }
            ("port_call", 4) => {
                arg(2)?.as_i64().filter(|op| u32::try_from(*op).is_ok())?;
                Action::Port(PortAction::Call(PortId::from_term(arg(1)?)?))
            }
            ("unregister", 2) => Action::Unregister(arg(1)?.as_atom()?),
            ("trap_exit", 2) => Action::TrapExit(match arg(1)?.as_atom()? {
                Atom::TRUE => true,
                Atom::FALSE => false,
                _ => return None,
            }),
            ("seq_trace", 3) => Action::SeqTrace(arg(1)?.to_owned(), arg(2)?.to_owned()),
            ("exit", 2) => Action::Exit(arg(1)?.to_owned()),
            ("exit", 3) => match RemotePid::from_term(arg(1)?) {
                Some(remote) => {
                    Action::Remote(RemoteAction::ExitSignal(remote, arg(2)?.to_owned()))
                }
                None => Action::ExitSignal(Pid::from_term(arg(1)?)?, arg(2)?.to_owned()),
            },
            ("spawn", 2) => match RemotePid::from_term(arg(1)?) {
                Some(child) => Action::Remote(RemoteAction::Spawn { child, link: false }),
                None => Action::Spawn { child: Pid::from_term(arg(1)?)?, link: false },
            },
            ("spawn_link", 2) => match RemotePid::from_term(arg(1)?) {
                Some(child) => Action::Remote(RemoteAction::Spawn { child, link: true }),
                None => Action::Spawn { child: Pid::from_term(arg(1)?)?, link: true },
            },
            ("seq_trace_token", 2) => Action::SeqToken(arg(1)?.to_owned()),
            ("seq_trace_print", 2) => Action::SeqPrint(None, arg(1)?.to_owned()),
            ("seq_trace_print", 3) => {
                Action::SeqPrint(Some(arg(1)?.to_owned()), arg(2)?.to_owned())
            }
            _ => return None,
        })
    }
}
