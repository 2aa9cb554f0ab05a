//! Names of the things the core traces: processes, ports and functions.

use std::fmt;

use matchspec::term::{Atom, Heap, Kind, TermRef, Word};

/// A local process identifier, `<0.Id.Serial>`.
///
/// The core only traces processes of its own node, so a pid is its number
/// and serial; it becomes a pid term of `nonode@nohost` in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid {
    /// The process number (the middle field).
    pub id: u32,
    /// The serial (the last field).
    pub serial: u32,
}

impl Pid {
    /// `<0.id.serial>`.
    pub const fn new(id: u32, serial: u32) -> Pid {
        Pid { id, serial }
    }

    /// The pid term of `term`, if it is a local pid.
    pub fn from_term(term: TermRef<'_>) -> Option<Pid> {
        match term.kind() {
            Kind::Pid(p) if p.node == Atom::NONODE => Some(Pid::new(p.id, p.serial)),
            _ => None,
        }
    }

    /// Builds the pid term in `heap`.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        heap.pid(Atom::NONODE, self.id, self.serial, 0)
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<0.{}.{}>", self.id, self.serial)
    }
}

/// A process of another node: what a local process links to, unlinks
/// from, or gets messages and exit signals from over distribution.
///
/// The core traces only its own node's processes; events about remote
/// ones (`{trace, Pid, link, Remote}`, a receive pattern's `[Node, Remote,
/// Msg]`) carry their pid as ERTS's external pid term.
///
/// ```
/// use matchspec::term::{Atom, Heap};
/// use matchspec_runtime::RemotePid;
///
/// let other = RemotePid { node: Atom::new("b@host"), creation: 3, id: 89, serial: 0 };
/// let mut heap = Heap::new();
/// let pid = other.to_word(&mut heap);
/// assert_eq!(RemotePid::from_term(heap.view(pid)), Some(other));
/// // A process of this node is not one.
/// let local = matchspec_runtime::Pid::new(80, 0).to_word(&mut heap);
/// assert_eq!(RemotePid::from_term(heap.view(local)), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RemotePid {
    /// The node's name.
    pub node: Atom,
    /// The node's creation.
    pub creation: u32,
    /// The process number.
    pub id: u32,
    /// The serial.
    pub serial: u32,
}

impl RemotePid {
    /// The pid of `term`, if it is a pid of another node.
    pub fn from_term(term: TermRef<'_>) -> Option<RemotePid> {
        match term.kind() {
            Kind::Pid(p) if p.node != Atom::NONODE => {
                Some(RemotePid { node: p.node, creation: p.creation, id: p.id, serial: p.serial })
            }
            _ => None,
        }
    }

    /// Builds the pid term in `heap`.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        heap.pid(self.node, self.id, self.serial, self.creation)
    }
}

/// A process of this node or of another: who last touched a sequential
/// trace token (its `From`), which may have come over distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyPid {
    /// A process of this node.
    Local(Pid),
    /// A process of another node.
    Remote(RemotePid),
}

impl AnyPid {
    /// The pid of `term`, of this node or another.
    pub fn from_term(term: TermRef<'_>) -> Option<AnyPid> {
        Pid::from_term(term)
            .map(AnyPid::Local)
            .or_else(|| RemotePid::from_term(term).map(AnyPid::Remote))
    }

    /// Builds the pid term in `heap`.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        match self {
            AnyPid::Local(pid) => pid.to_word(heap),
            AnyPid::Remote(pid) => pid.to_word(heap),
        }
    }
}

impl From<Pid> for AnyPid {
    fn from(pid: Pid) -> AnyPid {
        AnyPid::Local(pid)
    }
}

impl From<RemotePid> for AnyPid {
    fn from(pid: RemotePid) -> AnyPid {
        AnyPid::Remote(pid)
    }
}

/// A local port identifier, `#Port<0.Id>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId(pub u64);

impl PortId {
    /// The port term of `term`, if it is a local port.
    pub fn from_term(term: TermRef<'_>) -> Option<PortId> {
        match term.kind() {
            Kind::Port(p) if p.node == Atom::NONODE => Some(PortId(p.id)),
            _ => None,
        }
    }

    /// Builds the port term in `heap`.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        heap.port(Atom::NONODE, self.0, 0)
    }
}

impl fmt::Display for PortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#Port<0.{}>", self.0)
    }
}

/// A function: module, name and arity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mfa {
    /// The module.
    pub module: Atom,
    /// The function name.
    pub function: Atom,
    /// The arity (at most 255, as in the BEAM).
    pub arity: u8,
}

impl Mfa {
    /// `{module, function, arity}`.
    pub fn new(module: &str, function: &str, arity: u8) -> Mfa {
        Mfa { module: Atom::new(module), function: Atom::new(function), arity }
    }

    /// Builds `{M, F, Arity}` in `heap`.
    pub fn to_word(self, heap: &mut Heap) -> Word {
        heap.tuple(&[
            Word::atom(self.module),
            Word::atom(self.function),
            Word::small(i64::from(self.arity)).expect("an arity is a small integer"),
        ])
    }
}

impl fmt::Display for Mfa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.module, self.function, self.arity)
    }
}
