//! The scenario world's ports: each runs `cat` (or another program named
//! by the scenario), echoing what it is sent back to its owner, and each
//! action on one makes the events OTP 27 makes for it, in OTP's order (see
//! docs/scenarios.md: measured with `testdata/trace/otp/run-scenario.escript`).

use matchspec::term::{Atom, Heap, Term, Word};

use super::link_tree::{LinkKey, LinkTree, PlannedLinks};
use super::world::{Signal, atom, world};
use super::{Failure, Runner};
use matchspec_runtime::Origin;
use matchspec_runtime::Port;
use matchspec_runtime::ids::{Mfa, Pid, PortId};
use matchspec_runtime::seq_trace::MessageToken;

/// An open port of the world.
#[derive(Debug)]
pub(super) struct WorldPort {
    port: Port,
    /// The connected process: it gets what the port sends.
    owner: Pid,
    /// The processes linked to the port, in ERTS's tree.
    linked: LinkTree,
    /// The port's registered name.
    name: Option<Atom>,
}

/// A `do` action on a port.
#[derive(Debug)]
pub(super) enum PortAction {
    /// `{open_port, Port, Program}`: `open_port({spawn, Program}, [binary])`.
    Open(PortId, Atom),
    /// `{port_command, Port, Data}`: a process sends binary `Data`; the
    /// owner gets the echo (and waits for it if it sent the data).
    Command(PortId, Term),
    /// `{port_close, Port}`: a process closes the port.
    Close(PortId),
    /// `{port_control, Port, Op, Data}`: `port_control/3`, which a
    /// `cat` port does not take (`badarg`, caught).
    Control(PortId, i64, Term),
    /// `{port_call, Port, Op, Term}`: `erlang:port_call/3`, which a
    /// `cat` port does not take either (the port shows neither).
    Call(PortId),
    /// `{link, Port}`.
    Link(PortId),
    /// `{unlink, Port}`.
    Unlink(PortId),
    /// `{register, Name, Port}`.
    Register(Atom, PortId),
}

/// Where `erlang:open_port/2` waits for the port's reply.
fn open_port_mfa() -> Mfa {
    Mfa::new("erlang", "open_port", 2)
}

/// Where a port BIF waits while its caller handles its signals (the exit
/// signal of the port `port_close/1` closed, what it sent itself).
pub(super) fn handle_signals_mfa() -> Mfa {
    Mfa::new("erlang", "bif_handle_signals_return", 2)
}

/// Where a step waits inside an action (for a port's echo, a timeout).
pub(super) fn act_mfa() -> Mfa {
    Mfa::new("scenario_act", "act", 1)
}

impl Runner {
    /// The name of port `id`, for `unregister`.
    pub(super) fn port_named(&self, name: Atom) -> Option<PortId> {
        self.world.ports.iter().find(|(_, p)| p.name == Some(name)).map(|(id, _)| *id)
    }

    /// Is `name` taken by a process or a port?
    pub(super) fn name_taken(&self, name: Atom) -> bool {
        self.world.names.contains_key(&name) || self.port_named(name).is_some()
    }

    /// Refuses a port action that does not fit the world; `linked` and
    /// `opened` follow the actions checked before it.
    pub(super) fn check_port_action(
        &self,
        action: &PortAction,
        links: &mut PlannedLinks,
        opened: &mut Vec<PortId>,
    ) -> Result<(), Failure> {
        let open = |id: &PortId| self.world.ports.contains_key(id) || opened.contains(id);
        match action {
            PortAction::Open(id, _) => {
                if self.world.ports_ever.contains(id) || opened.contains(id) {
                    return Err(world("already_exists"));
                }
                opened.push(*id);
                links.link(LinkKey::Port(*id)).map_err(world)?;
            }
            PortAction::Command(id, _)
            | PortAction::Close(id)
            | PortAction::Control(id, ..)
            | PortAction::Call(id) => {
                if !open(id) {
                    return Err(world("noport"));
                }
                if matches!(action, PortAction::Close(_)) {
                    opened.retain(|p| p != id);
                    links.forget(LinkKey::Port(*id));
                }
            }
            PortAction::Link(id) => {
                if !open(id) {
                    return Err(world("noport"));
                }
                links.link(LinkKey::Port(*id)).map_err(world)?;
            }
            PortAction::Unlink(id) => links.unlink(LinkKey::Port(*id)).map_err(world)?,
            PortAction::Register(name, id) => {
                if !open(id) {
                    return Err(world("noport"));
                }
                let named = self.world.ports.get(id).is_some_and(|p| p.name.is_some());
                if self.name_taken(*name) || named {
                    return Err(world("already_registered"));
                }
            }
        }
        Ok(())
    }

    pub(super) fn perform_port_action(&mut self, pid: Pid, action: &PortAction) {
        match action {
            PortAction::Open(id, program) => self.open_port(pid, *id, *program),
            PortAction::Command(id, data) => self.port_command(pid, *id, data),
            PortAction::Control(id, op, data) => {
                let Some(wp) = self.world.ports.get(id) else { return };
                let mut heap = Heap::new();
                let words = [Word::small(*op).expect("a u32"), data.as_ref().copy_to(&mut heap)];
                let request = heap.tuple(&words);
                let control = heap.tuple(&[atom("control"), request]);
                port_task(&wp.port, Some("control"), |port| port.received(pid, heap.view(control)));
                self.bif_handles_signals(pid);
            }
            // The port takes the call in a task and shows nothing else.
            PortAction::Call(id) => {
                let Some(wp) = self.world.ports.get(id) else { return };
                port_task(&wp.port, Some("call"), |_| {});
                self.bif_handles_signals(pid);
            }
            PortAction::Close(id) => self.port_close(pid, *id),
            PortAction::Link(id) => {
                if !self.world.ports.contains_key(id) {
                    return;
                }
                self.link_side(pid, LinkKey::Port(*id));
                let Some(wp) = self.world.ports.get_mut(id) else { return };
                if let Some(p) = self.processes.get_mut(&pid) {
                    p.link_port(*id);
                }
                wp.linked.insert(LinkKey::Process(pid));
                port_task(&wp.port, Some("link"), |port| port.linked_by(pid));
            }
            PortAction::Unlink(id) => {
                // The port answers at once (its task runs within the step).
                self.unlink_side(pid, LinkKey::Port(*id));
                let Some(wp) = self.world.ports.get_mut(id) else { return };
                if let Some(p) = self.processes.get_mut(&pid) {
                    p.unlink_port(*id);
                }
                wp.linked.remove(LinkKey::Process(pid));
                port_task(&wp.port, Some("unlink"), |port| port.unlinked_by(pid));
            }
            PortAction::Register(name, id) => {
                let Some(wp) = self.world.ports.get_mut(id) else { return };
                wp.port.register(*name);
                wp.name = Some(*name);
            }
        }
    }

    /// `unregister(Name)` of a port's name.
    pub(super) fn unregister_port(&mut self, name: Atom) {
        if let Some(wp) = self.world.ports.values_mut().find(|p| p.name == Some(name)) {
            wp.port.unregister(name);
            wp.name = None;
        }
    }

    /// `open_port/2`: the port opens (`open`, its `open` task), links to the
    /// opener, and answers `{Ref, Port}` from a task of its own while the
    /// opener waits in `erlang:open_port/2`. The reference is the atom
    /// `'$ref'` (golden files mask OTP's).
    fn open_port(&mut self, pid: Pid, id: PortId, program: Atom) {
        let port = self.core.open_port(id, pid, program);
        port_task(&port, Some("open"), |_| {});
        port.linked_by(pid);
        self.world.ports_ever.insert(id);
        let mut linked = LinkTree::default();
        linked.insert(LinkKey::Process(pid));
        self.world.ports.insert(id, WorldPort { port, owner: pid, linked, name: None });
        self.link_side(pid, LinkKey::Port(id));
        let Some(p) = self.processes.get_mut(&pid) else { return };
        p.link_port(id);
        // Its receive of the answer takes what it sent itself first.
        self.take_own_messages(pid);
        let mut heap = Heap::new();
        let port_word = id.to_word(&mut heap);
        let root = heap.tuple(&[atom("$ref"), port_word]);
        let reply = Term::from_parts(heap, root);
        self.wait_for_port(pid, id, open_port_mfa(), |_| {});
        self.take_from_port(pid, id, &reply);
    }

    /// `port_command/2`: the port takes the data in a `command` task, and
    /// sends `{Port, {data, Data}}` to its owner from an I/O task: at once,
    /// while the owner waits in the step that sent it; after the step when
    /// another process sent it.
    fn port_command(&mut self, pid: Pid, id: PortId, data: &Term) {
        let Some(wp) = self.world.ports.get(&id) else { return };
        let owner = wp.owner;
        let mut heap = Heap::new();
        let data_word = data.copy_to(&mut heap);
        let command = heap.tuple(&[atom("command"), data_word]);
        port_task(&wp.port, Some("command"), |port| port.received(pid, heap.view(command)));
        let port_word = id.to_word(&mut heap);
        let echo_data = heap.tuple(&[atom("data"), data_word]);
        let echo = heap.tuple(&[port_word, echo_data]);
        let echo = Term::from_parts(heap, echo);
        if owner != pid {
            self.world.port_output.push_back((id, owner, echo));
            return self.bif_handles_signals(pid);
        }
        self.bif_handles_signals(pid);
        // Its `receive {P, {data, _}}` takes an echo already queued (of
        // data another process sent) without waiting; its own echo then
        // comes after the step, as another sender's does.
        if self.take_queued_data(pid, id) {
            self.world.port_output.push_back((id, owner, echo));
            return;
        }
        let mut to = Heap::new();
        let to_word = pid.to_word(&mut to);
        self.wait_for_port(pid, id, act_mfa(), |port| {
            port.sent(to.view(to_word), echo.as_ref(), true);
        });
        self.take_from_port(pid, id, &echo);
    }

    /// `port_close/1` by `pid` (any process): the port takes `{Pid, close}`
    /// in a `close` task and closes with reason `normal` (no `out`: it is
    /// gone), and every process linked to it gets its exit signal, in the
    /// order the port's link tree sends them. A closer linked to the port
    /// waits in the BIF until it has handled its own (ERTS's
    /// `bif_handle_signals_return`): the others handle theirs first.
    fn port_close(&mut self, pid: Pid, id: PortId) {
        let Some(wp) = self.world.ports.remove(&id) else { return };
        wp.port.trace_schedule_in(Some(Atom::new("close")));
        wp.port.received(pid, Term::atom(Atom::new("close")).as_ref());
        wp.port.close(Term::atom(Atom::new("normal")).as_ref(), wp.name);
        let linked = linked_processes(&wp.linked);
        for &other in linked.iter().filter(|&&p| p != pid) {
            let reason = Term::atom(Atom::new("normal"));
            let signal = Signal::port_exit(id, reason);
            self.world.pending.push_back((other, signal));
        }
        if !linked.contains(&pid) {
            return self.bif_handles_signals(pid);
        }
        self.wait_within(pid, handle_signals_mfa(), |_| {});
        self.take_own_messages(pid);
        let reason = Term::atom(Atom::new("normal"));
        self.handle(pid, Signal::port_exit(id, reason));
    }

    /// Process `pid` waits in `current` while port `id` runs an I/O task
    /// (`in 0` ... `out 0`) doing `task`.
    fn wait_for_port(&mut self, pid: Pid, id: PortId, current: Mfa, task: impl FnOnce(&Port)) {
        self.wait_within(pid, current, |runner| {
            if let Some(wp) = runner.world.ports.get(&id) {
                port_task(&wp.port, None, task);
            }
        });
    }

    /// What ports send after the step, each from an I/O task, joins the
    /// receivers' signals.
    pub(super) fn run_port_output(&mut self) {
        for (id, to, message) in std::mem::take(&mut self.world.port_output) {
            let Some(wp) = self.world.ports.get(&id) else { continue };
            let exists = self.processes.contains_key(&to);
            let mut heap = Heap::new();
            let to_word = to.to_word(&mut heap);
            port_task(&wp.port, None, |port| {
                port.sent(heap.view(to_word), message.as_ref(), exists)
            });
            if exists {
                let from = Origin::Port(id);
                let signal = Signal::Message { from, message, token: MessageToken::NONE };
                self.world.pending.push_back((to, signal));
            }
        }
    }

    /// Process `pid` is scheduled out in `current`; the others handle what
    /// is pending for them (the one scheduler runs them while it waits),
    /// then `meanwhile` happens (a port's I/O task), and it is scheduled
    /// in again.
    pub(super) fn wait_within(
        &mut self,
        pid: Pid,
        current: Mfa,
        meanwhile: impl FnOnce(&mut Self),
    ) {
        if let Some(p) = self.processes.get_mut(&pid) {
            p.schedule_out();
            p.trace_schedule_within(false, current);
        }
        self.run_signals_but(Some(pid));
        meanwhile(self);
        if let Some(p) = self.processes.get_mut(&pid) {
            p.schedule_in();
            p.trace_schedule_within(true, current);
        }
    }

    /// Process `pid` takes `message` from port `id` at once.
    /// Takes the oldest `{Port, {data, _}}` of port `id` from `pid`'s
    /// queue, if there is one.
    fn take_queued_data(&mut self, pid: Pid, id: PortId) -> bool {
        let mut heap = Heap::new();
        let port_word = id.to_word(&mut heap);
        let is_data = |message: &Term| {
            let m = message.as_ref();
            m.as_tuple().is_some_and(|t| {
                t.len() == 2
                    && t.get(0) == Some(heap.view(port_word))
                    && t.get(1).and_then(|d| d.as_tuple()).is_some_and(|d| {
                        d.len() == 2
                            && d.get(0).and_then(|a| a.as_atom()) == Some(Atom::new("data"))
                    })
            })
        };
        let Some(queue) = self.world.queues.get_mut(&pid) else { return false };
        let Some(at) = queue.iter().position(|(message, _)| is_data(message)) else {
            return false;
        };
        let (message, token) = queue.remove(at).expect("found above");
        if let Some(p) = self.processes.get_mut(&pid) {
            p.consume(message.as_ref(), &token);
        }
        self.queue_changed(pid, 0);
        true
    }

    fn take_from_port(&mut self, pid: Pid, id: PortId, message: &Term) {
        if let Some(p) = self.processes.get_mut(&pid) {
            p.message_arrived(Origin::Port(id), message.as_ref());
        }
        self.queue_changed(pid, 1);
        if let Some(p) = self.processes.get_mut(&pid) {
            p.consume(message.as_ref(), &MessageToken::NONE);
        }
        self.queue_changed(pid, 0);
    }

    /// Process `pid` has exited with `reason`: the ports it was linked to
    /// (`ports`, in the order its exit walked its links) close with that
    /// reason (each processes the exit signal in a task of its own, named
    /// 0, taking it as `{Pid, close}`; one it does not close lives on), and
    /// their other linked processes get exit signals.
    pub(super) fn ports_after_exit(&mut self, pid: Pid, ports: &[PortId], reason: &Term) {
        for &id in ports {
            let Some(wp) = self.world.ports.get_mut(&id) else { continue };
            wp.linked.remove(LinkKey::Process(pid));
            // The exit signal reaches the port as `{Pid, close}`.
            let close = Term::atom(Atom::new("close"));
            let closes = wp.owner == pid || reason.as_ref().as_atom() != Some(Atom::new("normal"));
            if !closes {
                // It lives on.
                port_task(&wp.port, None, |port| port.received(pid, close.as_ref()));
                continue;
            }
            let wp = self.world.ports.remove(&id).expect("looked up above");
            wp.port.trace_schedule_in(None);
            wp.port.received(pid, close.as_ref());
            wp.port.close(reason.as_ref(), wp.name);
            for linked in linked_processes(&wp.linked) {
                let signal = Signal::port_exit(id, reason.clone());
                self.world.pending.push_back((linked, signal));
            }
        }
    }
}

/// The processes linked to a port, in the order its exit walks them.
fn linked_processes(tree: &LinkTree) -> Vec<Pid> {
    tree.exit_order().into_iter().filter_map(LinkKey::process).collect()
}

/// A port task named `what` (`0` for none, an I/O task): `in`, `body`,
/// `out`.
fn port_task(port: &Port, what: Option<&str>, body: impl FnOnce(&Port)) {
    let what = what.map(Atom::new);
    port.trace_schedule_in(what);
    body(port);
    port.trace_schedule_out(what);
}
