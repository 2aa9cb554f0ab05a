//! Distribution: the node's name, peer nodes and their processes.
//!
//! `{node, Name}` names the world's node, as `net_kernel:start/2` does, and
//! `{peer, Name}` starts a peer node. Processes on peer nodes (*remote*
//! processes, pid literals `#Pid<'peer@host'.Creation.Id.Serial>`) are
//! puppets the core does not trace: it traces only its own node. The world
//! keeps what shows on this node: which remote processes live, their links
//! to this node's processes (in a [`LinkTree`], for the order of their exit
//! signals) and whether they trap exits.
//!
//! Signals between nodes go over the connection, which takes longer than
//! anything on this node: the signals this node sends remote processes
//! (links, unlinks, exits) are handled once every local signal pending has
//! been, and what the remote processes answer (unlink answers, exit
//! signals as they die) joins the local signals then. A message from
//! another node carries only its node (ERTS keeps no sender for it), so a
//! receive pattern sees `[Node, undefined, Msg]`.

use std::collections::VecDeque;

use matchspec::term::{Atom, Heap, Term, TermRef};
use rustc_hash::{FxHashMap, FxHashSet};

use super::link_tree::{LinkKey, LinkTree, PlannedLinks};
use super::world::{Action, Signal, atom, world};
use super::{DRIVER, Failure, Reply, Runner};
use matchspec_runtime::Origin;
use matchspec_runtime::ids::{Mfa, Pid, RemotePid};
use matchspec_runtime::seq_trace::{MessageToken, SeqState};

/// The world's view of distribution.
#[derive(Debug, Default)]
pub(super) struct Nodes {
    /// Has `{node, Name}` started distribution?
    alive: bool,
    /// The peer nodes started, by name.
    peers: FxHashSet<Atom>,
    /// The live remote processes.
    remotes: FxHashMap<RemotePid, Remote>,
    /// Every remote process ever spawned (a pid is never reused).
    ever: FxHashSet<RemotePid>,
    /// Signals on their way to remote processes, in the order sent.
    outbound: VecDeque<(RemotePid, Outbound)>,
}

/// A live process of a peer node.
#[derive(Debug, Default)]
struct Remote {
    /// Its links to this node's processes.
    links: LinkTree,
    trapping: bool,
    /// Its sequential trace token, which its messages carry here.
    seq: SeqState,
}

/// A signal from a process of this node to a remote one.
#[derive(Debug)]
enum Outbound {
    Link(Pid),
    Unlink(Pid),
    /// The answer to the remote process's unlink.
    UnlinkAck(Pid),
    Exit {
        from: Pid,
        reason: Term,
        linked: bool,
    },
}

/// A link signal from a remote process to a process of this node.
#[derive(Debug, Clone, Copy)]
pub(super) enum RemoteSignal {
    Link,
    Unlink,
    /// The answer to this node's process's unlink.
    UnlinkAck,
}

/// What a process of this node does to a remote one in a `do` step.
#[derive(Debug)]
pub(super) enum RemoteAction {
    Link(RemotePid),
    Unlink(RemotePid),
    /// `exit(Remote, Reason)`.
    ExitSignal(RemotePid, Term),
    /// `spawn(Node, scenario, idle, [])` or `spawn_link/4`.
    Spawn {
        child: RemotePid,
        link: bool,
    },
}

impl RemoteAction {
    fn target(&self) -> RemotePid {
        match *self {
            RemoteAction::Link(pid)
            | RemoteAction::Unlink(pid)
            | RemoteAction::ExitSignal(pid, _)
            | RemoteAction::Spawn { child: pid, .. } => pid,
        }
    }
}

impl Nodes {
    /// The exit signal of `from` to remote process `to`: through their
    /// link as `from` ended (`linked`), or `exit/2`.
    pub(super) fn exit_to_remote(&mut self, from: Pid, to: RemotePid, reason: &Term, linked: bool) {
        self.outbound.push_back((to, Outbound::Exit { from, reason: reason.clone(), linked }));
    }
}

/// Where a process waits for the answer to a spawn on another node.
fn spawn_opt_mfa() -> Mfa {
    Mfa::new("erlang", "spawn_opt", 5)
}

/// A node name: an atom with an `@`.
fn node_name(name: TermRef<'_>) -> Result<Atom, Failure> {
    name.as_atom().filter(|a| a.name().contains('@')).ok_or(world("bad_node_name"))
}

impl Runner {
    /// `{node, Name}`: distribution starts and the node is called `Name`.
    pub(super) fn start_node(&mut self, name: TermRef<'_>) -> Reply {
        let name = node_name(name)?;
        if self.world.nodes.alive {
            return Err(world("already_alive"));
        }
        self.world.nodes.alive = true;
        self.core.set_node_name(name);
        Ok(Term::atom(Atom::OK))
    }

    /// `{peer, Name}`: a peer node `Name` starts.
    pub(super) fn start_peer(&mut self, name: TermRef<'_>) -> Reply {
        let name = node_name(name)?;
        if !self.world.nodes.alive {
            return Err(world("not_alive"));
        }
        if name == self.core.node_name() || !self.world.nodes.peers.insert(name) {
            return Err(world("already_exists"));
        }
        Ok(Term::atom(Atom::OK))
    }

    /// Can `child` be spawned: on a peer node, never spawned before?
    fn check_remote_child(&self, child: RemotePid) -> Result<(), Failure> {
        if !self.world.nodes.peers.contains(&child.node) {
            return Err(world("noconnection"));
        }
        if self.world.nodes.ever.contains(&child) {
            return Err(world("already_exists"));
        }
        Ok(())
    }

    /// `{spawn, Parent, Child}` for a child on another node: the driver
    /// spawns it (a puppet uses the action `{spawn, Child}`, whose answer
    /// it waits for in a step).
    pub(super) fn spawn_remote_event(&mut self, parent: Pid, child: RemotePid) -> Reply {
        if parent != DRIVER {
            return Err(world("unsupported"));
        }
        self.check_remote_child(child)?;
        self.world.nodes.ever.insert(child);
        self.world.nodes.remotes.insert(child, Remote::default());
        Ok(Term::atom(Atom::OK))
    }

    /// Refuses a process's action on a remote process that does not fit
    /// the world. `links` follow the actions checked before it, `spawned`
    /// are the remote processes spawned in the step (OTP's side learns
    /// their pids only after the step).
    pub(super) fn check_remote_action(
        &self,
        action: &RemoteAction,
        links: &mut PlannedLinks,
        spawned: &mut Vec<RemotePid>,
    ) -> Result<(), Failure> {
        let target = action.target();
        let key = LinkKey::Remote(target);
        if let RemoteAction::Spawn { link, .. } = *action {
            if spawned.contains(&target) {
                return Err(world("already_exists"));
            }
            self.check_remote_child(target)?;
            spawned.push(target);
            if link {
                links.link(key).map_err(world)?;
            }
            return Ok(());
        }
        if spawned.contains(&target) {
            return Err(world("unsupported"));
        }
        let alive = self.world.nodes.remotes.contains_key(&target);
        match action {
            RemoteAction::Link(_) | RemoteAction::ExitSignal(..) if !alive => Err(world("noproc")),
            RemoteAction::Link(_) => links.link(key).map_err(world),
            RemoteAction::Unlink(_) => links.unlink(key).map_err(world),
            RemoteAction::ExitSignal(..) | RemoteAction::Spawn { .. } => Ok(()),
        }
    }

    /// Process `pid` (of this node) acts on a remote process.
    pub(super) fn perform_remote_action(&mut self, pid: Pid, action: &RemoteAction) {
        match *action {
            RemoteAction::Link(remote) => {
                if let Some(p) = self.processes.get_mut(&pid) {
                    p.link_remote(remote);
                }
                self.link_side(pid, LinkKey::Remote(remote));
                self.world.nodes.outbound.push_back((remote, Outbound::Link(pid)));
            }
            RemoteAction::Unlink(remote) => {
                if let Some(p) = self.processes.get_mut(&pid) {
                    p.unlink_remote(remote);
                }
                // The link stays in the tree until the answer comes.
                if let Some(tree) = self.world.links.get_mut(&pid) {
                    tree.set_unlinking(LinkKey::Remote(remote));
                }
                self.world.nodes.outbound.push_back((remote, Outbound::Unlink(pid)));
            }
            RemoteAction::ExitSignal(remote, ref reason) => {
                self.world.nodes.exit_to_remote(pid, remote, reason, false);
            }
            RemoteAction::Spawn { child, link } => self.spawn_remote(pid, child, link),
        }
    }

    /// `pid` spawns `child` on another node (`spawn/4`, or `spawn_link/4`
    /// if `link`): it sends a spawn request and waits in
    /// `erlang:spawn_opt/5` for the reply, `{spawn_reply, Ref, ok, Child}`
    /// from the child's node, which it takes at once (a link comes with the
    /// reply, before it arrives).
    fn spawn_remote(&mut self, pid: Pid, child: RemotePid, link: bool) {
        self.wait_within(pid, spawn_opt_mfa(), |_| {});
        let mut remote = Remote::default();
        if link {
            remote.links.insert(LinkKey::Process(pid));
            self.link_side(pid, LinkKey::Remote(child));
        }
        self.world.nodes.ever.insert(child);
        self.world.nodes.remotes.insert(child, remote);
        let Some(p) = self.processes.get_mut(&pid) else { return };
        if link {
            p.link_remote(child);
        }
        let mut heap = Heap::new();
        let child_word = child.to_word(&mut heap);
        let root = heap.tuple(&[atom("spawn_reply"), atom("$ref"), atom("ok"), child_word]);
        let reply = Term::from_parts(heap, root);
        p.message_arrived(Origin::Remote(child), reply.as_ref());
        p.consume(reply.as_ref(), &MessageToken::NONE);
    }

    /// `{do, Remote, Actions}`: a remote process sends messages to, links
    /// to, unlinks from or sends exit signals to this node's processes,
    /// traps exits or exits. Nothing it does is traced (it is not on this
    /// node); its signals are handled after the step like any other.
    pub(super) fn do_remote(&mut self, remote: RemotePid, actions: TermRef<'_>) -> Reply {
        let actions = Action::parse_list(actions)?;
        let Some(state) = self.world.nodes.remotes.get(&remote) else {
            return Err(world("noproc"));
        };
        let mut links = PlannedLinks::of(Some(&state.links));
        // The token as each action finds it: the step's message, which has
        // none, takes the process's away first.
        let mut seq = state.seq.clone();
        seq.clear_token();
        for (i, action) in actions.iter().enumerate() {
            match action {
                Action::Send { to, .. } => {
                    self.remote_receiver(to.as_ref())?;
                }
                Action::SeqTrace(..) | Action::SeqToken(_) => {
                    set_remote_token(&mut seq, remote, action)
                }
                // What exit signals with a token do across nodes is not
                // measured against OTP.
                Action::ExitSignal(..) | Action::Exit(_) if seq.token().is_some() => {
                    return Err(world("unsupported"));
                }
                Action::Link(p) if !self.is_puppet(*p) => return Err(world("noproc")),
                Action::Link(p) => links.link(LinkKey::Process(*p)).map_err(world)?,
                Action::Unlink(p) => links.unlink(LinkKey::Process(*p)).map_err(world)?,
                Action::ExitSignal(p, _) if !self.is_puppet(*p) => return Err(world("noproc")),
                Action::Exit(_) if i + 1 != actions.len() => return Err(world("bad_action")),
                Action::TrapExit(_) | Action::ExitSignal(..) | Action::Exit(_) => {}
                _ => return Err(world("unsupported")),
            }
        }
        if let Some(state) = self.world.nodes.remotes.get_mut(&remote) {
            state.seq.clear_token();
        }
        for action in &actions {
            self.perform_as_remote(remote, action);
        }
        Ok(Term::atom(Atom::OK))
    }

    /// The process of this node a remote process's message to `to` goes
    /// to: a pid of a live puppet, or `{Name, Node}` with this node's name
    /// (`None` if nobody has the name).
    fn remote_receiver(&self, to: TermRef<'_>) -> Result<Option<Pid>, Failure> {
        if let Some(pid) = Pid::from_term(to) {
            // A tracer or the driver: OTP's side could not show it.
            if self.processes.contains_key(&pid) && !self.is_puppet(pid) {
                return Err(world("unsupported"));
            }
            return Ok(Some(pid).filter(|p| self.is_puppet(*p)));
        }
        let name = local_name(to, self.core.node_name()).ok_or(world("unsupported"))?;
        Ok(self.world.names.get(&name).copied())
    }

    fn perform_as_remote(&mut self, remote: RemotePid, action: &Action) {
        let Some(state) = self.world.nodes.remotes.get_mut(&remote) else { return };
        match action {
            Action::Send { to, message } => {
                // Its node has no system tracer: the serial moves on.
                let token = self.core.remote_send_token(&mut state.seq, remote);
                if let Ok(Some(receiver)) = self.remote_receiver(to.as_ref()) {
                    let from = Origin::Remote(remote);
                    let signal = Signal::Message { from, message: message.clone(), token };
                    self.world.pending.push_back((receiver, signal));
                }
            }
            Action::SeqTrace(..) | Action::SeqToken(_) => {
                set_remote_token(&mut state.seq, remote, action);
            }
            Action::Link(p) => {
                state.links.insert(LinkKey::Process(*p));
                self.world.pending.push_back((*p, Signal::Remote(remote, RemoteSignal::Link)));
            }
            Action::Unlink(p) => {
                state.links.set_unlinking(LinkKey::Process(*p));
                self.world.pending.push_back((*p, Signal::Remote(remote, RemoteSignal::Unlink)));
            }
            Action::TrapExit(on) => state.trapping = *on,
            Action::ExitSignal(p, reason) => {
                let from = LinkKey::Remote(remote);
                let token = MessageToken::NONE;
                let signal = Signal::Exit { from, reason: reason.clone(), token, linked: false };
                self.world.pending.push_back((*p, signal));
            }
            Action::Exit(reason) => self.remote_ended(remote, reason.clone()),
            // Refused by `do_remote`.
            _ => {}
        }
    }

    /// Process `pid` handles a link signal from remote process `from`.
    pub(super) fn handle_remote(&mut self, pid: Pid, from: RemotePid, signal: RemoteSignal) {
        let Some(process) = self.processes.get_mut(&pid) else { return };
        let key = LinkKey::Remote(from);
        match signal {
            RemoteSignal::Link => {
                // Already linked (or unlinking): nothing happens.
                let tree = self.world.links.entry(pid).or_default();
                if !tree.contains(key) {
                    tree.insert(key);
                    process.linked_by_remote(from);
                }
            }
            RemoteSignal::Unlink => {
                process.unlinked_by_remote(from);
                self.unlink_side(pid, key);
                self.world.nodes.outbound.push_back((from, Outbound::UnlinkAck(pid)));
            }
            RemoteSignal::UnlinkAck => {
                // Unless it linked again meanwhile.
                if let Some(tree) = self.world.links.get_mut(&pid)
                    && !tree.is_linked(key)
                {
                    tree.remove(key);
                }
            }
        }
    }

    /// The signals on their way to remote processes arrive, in the order
    /// sent; answers for this node's processes join the pending signals.
    /// Answers whether there were any.
    pub(super) fn deliver_outbound(&mut self) -> bool {
        let outbound = std::mem::take(&mut self.world.nodes.outbound);
        let any = !outbound.is_empty();
        for (to, signal) in outbound {
            self.remote_handles(to, signal);
        }
        any
    }

    /// Remote process `remote` handles `signal` from this node.
    fn remote_handles(&mut self, remote: RemotePid, signal: Outbound) {
        let Some(state) = self.world.nodes.remotes.get_mut(&remote) else {
            match signal {
                // Linking to a process that is gone makes a `noproc` exit
                // signal, and an unlink is still answered.
                Outbound::Link(pid) => {
                    let from = LinkKey::Remote(remote);
                    let reason = Term::atom(Atom::new("noproc"));
                    let token = MessageToken::NONE;
                    let signal = Signal::Exit { from, reason, token, linked: true };
                    self.world.pending.push_back((pid, signal));
                }
                Outbound::Unlink(pid) => {
                    let signal = Signal::Remote(remote, RemoteSignal::UnlinkAck);
                    self.world.pending.push_back((pid, signal));
                }
                Outbound::UnlinkAck(_) | Outbound::Exit { .. } => {}
            }
            return;
        };
        match signal {
            Outbound::Link(pid) => {
                if !state.links.contains(LinkKey::Process(pid)) {
                    state.links.insert(LinkKey::Process(pid));
                }
            }
            Outbound::Unlink(pid) => {
                state.links.remove(LinkKey::Process(pid));
                let signal = Signal::Remote(remote, RemoteSignal::UnlinkAck);
                self.world.pending.push_back((pid, signal));
            }
            Outbound::UnlinkAck(pid) => {
                if !state.links.is_linked(LinkKey::Process(pid)) {
                    state.links.remove(LinkKey::Process(pid));
                }
            }
            Outbound::Exit { from, reason, linked } => {
                let key = LinkKey::Process(from);
                if linked && !state.links.is_linked(key) {
                    return;
                }
                if linked {
                    state.links.remove(key);
                }
                let kill = !linked && reason.as_ref().as_atom() == Some(Atom::new("kill"));
                let normal = reason.as_ref().as_atom() == Some(Atom::new("normal"));
                let trapping = state.trapping;
                if kill {
                    self.remote_ended(remote, Term::atom(Atom::new("killed")));
                } else if !trapping && !normal {
                    self.remote_ended(remote, reason);
                }
            }
        }
    }

    /// Remote process `remote` has ended with `reason`: the processes of
    /// this node linked to it get its exit signals, in its link tree's
    /// post order.
    fn remote_ended(&mut self, remote: RemotePid, reason: Term) {
        let Some(state) = self.world.nodes.remotes.remove(&remote) else { return };
        for pid in state.links.exit_order().into_iter().filter_map(LinkKey::process) {
            let from = LinkKey::Remote(remote);
            let token = MessageToken::NONE;
            let signal = Signal::Exit { from, reason: reason.clone(), token, linked: true };
            self.world.pending.push_back((pid, signal));
        }
    }
}

/// A remote process's `seq_trace` action on its token `seq`. A bad key,
/// value or token fails in the process (badarg) and changes nothing, as
/// for this node's puppets.
fn set_remote_token(seq: &mut SeqState, remote: RemotePid, action: &Action) {
    match action {
        Action::SeqTrace(key, value) => {
            let _ = seq.set(remote, key.as_ref(), value.as_ref(), &mut Heap::new());
        }
        Action::SeqToken(token) => {
            let _ = seq.set_whole(remote, token.as_ref());
        }
        _ => {}
    }
}

/// `{Name, Node}`'s name when `Node` is this node.
pub(super) fn local_name(to: TermRef<'_>, here: Atom) -> Option<Atom> {
    let t = to.as_tuple().filter(|t| t.len() == 2)?;
    let node = t.get(1)?.as_atom()?;
    if node != here {
        return None;
    }
    t.get(0)?.as_atom()
}
