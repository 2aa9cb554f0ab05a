//! A process's or port's links as ERTS keeps them, so that exit signals go
//! out in ERTS's order.
//!
//! ERTS keeps each process's (and port's) links in a red-black tree keyed by
//! the other end's identifier word (`erl_monitor_link.c`, `ml_cmp_keys`:
//! every local pid before every port, each kind by its word, which grows
//! with the number), and an exiting process walks that tree in post order,
//! destroying it as it goes (`erl_rbtree.h`, `foreach_destroy`). The order
//! of the exit signals is therefore the post order of the tree's current
//! shape, which depends on the order of every insertion and deletion
//! before. [`LinkTree`] is the same tree with the same algorithms
//! (insertion and deletion fix-ups of CLRS, the successor replacing a
//! deleted node with two children), so its post order is ERTS's.
//!
//! A link being taken away (`unlink/1` before the other end answered) stays
//! in the tree, shaping it, until the answer comes: [`LinkTree::set_unlinking`]
//! marks it, and the exit walk skips it, as ERTS skips an `unlinking` link.

use std::cmp::Ordering;

use matchspec_runtime::Origin;
use matchspec_runtime::ids::{Pid, PortId, RemotePid};

/// The other end of a link, in ERTS's key order: processes, then ports
/// (immediate words), then processes of other nodes (boxed terms, in term
/// order: by node name, then number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum LinkKey {
    /// A local process.
    Process(Pid),
    /// A local port.
    Port(PortId),
    /// A process of another node.
    Remote(RemotePid),
}

impl LinkKey {
    /// The process, if the other end is a local one.
    pub(super) fn process(self) -> Option<Pid> {
        match self {
            LinkKey::Process(pid) => Some(pid),
            LinkKey::Port(_) | LinkKey::Remote(_) => None,
        }
    }

    /// Who a signal from the other end comes from.
    pub(super) fn origin(self) -> Origin {
        match self {
            LinkKey::Process(pid) => Origin::Process(pid),
            LinkKey::Port(port) => Origin::Port(port),
            LinkKey::Remote(pid) => Origin::Remote(pid),
        }
    }

    /// The key's place: kind, node name, number, serial.
    fn rank(&self) -> (u8, &'static str, u64, u32) {
        match *self {
            LinkKey::Process(pid) => (0, "", pid.id.into(), pid.serial),
            LinkKey::Port(port) => (1, "", port.0, 0),
            LinkKey::Remote(pid) => (2, pid.node.name(), pid.id.into(), pid.serial),
        }
    }
}

impl Ord for LinkKey {
    fn cmp(&self, other: &LinkKey) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for LinkKey {
    fn partial_cmp(&self, other: &LinkKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A process's links as the actions of one step would leave them, so that a
/// step is refused before any of it runs: a link that is there already is
/// `already_linked`, an unlink of one that is not is `not_linked`.
#[derive(Debug, Default)]
pub(super) struct PlannedLinks(Vec<LinkKey>);

impl PlannedLinks {
    /// The links of `tree` (those being taken away left out).
    pub(super) fn of(tree: Option<&LinkTree>) -> PlannedLinks {
        PlannedLinks(tree.map(LinkTree::linked).unwrap_or_default())
    }

    /// A link to `key` is made.
    pub(super) fn link(&mut self, key: LinkKey) -> Result<(), &'static str> {
        if self.0.contains(&key) {
            return Err("already_linked");
        }
        self.0.push(key);
        Ok(())
    }

    /// The link to `key` is taken away.
    pub(super) fn unlink(&mut self, key: LinkKey) -> Result<(), &'static str> {
        if !self.0.contains(&key) {
            return Err("not_linked");
        }
        self.forget(key);
        Ok(())
    }

    /// The link to `key` goes, if there is one (its other end closes).
    pub(super) fn forget(&mut self, key: LinkKey) {
        self.0.retain(|k| *k != key);
    }
}

/// A child's side: `children[LEFT]` holds the smaller keys. The fix-ups
/// are written once for a side and its mirror, `1 - side`.
const LEFT: usize = 0;
const RIGHT: usize = 1;

#[derive(Debug, Clone)]
struct Node {
    key: LinkKey,
    parent: Option<usize>,
    children: [Option<usize>; 2],
    red: bool,
    unlinking: bool,
}

/// A red-black tree of links (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct LinkTree {
    nodes: Vec<Node>,
    free: Vec<usize>,
    root: Option<usize>,
}

/// The order [`LinkTree::walk`] visits nodes in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// Key order.
    In,
    /// Children before their parent: the order of an exit.
    Post,
}

impl LinkTree {
    /// Is there a link to `key` that is not being taken away?
    pub(super) fn is_linked(&self, key: LinkKey) -> bool {
        self.find(key).is_some_and(|n| !self.nodes[n].unlinking)
    }

    /// Is there a link to `key`, live or being taken away?
    pub(super) fn contains(&self, key: LinkKey) -> bool {
        self.find(key).is_some()
    }

    /// The live links, in key order.
    pub(super) fn linked(&self) -> Vec<LinkKey> {
        self.live(Order::In)
    }

    /// The live links in the order an exit walks them: the tree's post
    /// order, links being taken away left out.
    pub(super) fn exit_order(&self) -> Vec<LinkKey> {
        self.live(Order::Post)
    }

    /// Links to `key`; a link being taken away is live again.
    pub(super) fn insert(&mut self, key: LinkKey) {
        if let Some(n) = self.find(key) {
            self.nodes[n].unlinking = false;
            return;
        }
        let n = self.alloc(key);
        let Some(mut x) = self.root else {
            self.nodes[n].red = false;
            self.root = Some(n);
            return;
        };
        loop {
            let side = if key < self.nodes[x].key { LEFT } else { RIGHT };
            match self.nodes[x].children[side] {
                Some(c) => x = c,
                None => {
                    self.nodes[n].parent = Some(x);
                    self.nodes[x].children[side] = Some(n);
                    break;
                }
            }
        }
        if self.nodes[x].red {
            self.insert_fixup(n);
        }
    }

    /// Marks the link to `key` as being taken away.
    pub(super) fn set_unlinking(&mut self, key: LinkKey) {
        if let Some(n) = self.find(key) {
            self.nodes[n].unlinking = true;
        }
    }

    /// Removes the link to `key`, if there is one.
    pub(super) fn remove(&mut self, key: LinkKey) {
        if let Some(z) = self.find(key) {
            self.delete(z);
            self.release(z);
        }
    }

    fn find(&self, key: LinkKey) -> Option<usize> {
        let mut x = self.root;
        while let Some(n) = x {
            let k = self.nodes[n].key;
            if key == k {
                return Some(n);
            }
            x = self.nodes[n].children[if key < k { LEFT } else { RIGHT }];
        }
        None
    }

    fn alloc(&mut self, key: LinkKey) -> usize {
        let node = Node { key, parent: None, children: [None, None], red: true, unlinking: false };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i] = node;
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    fn release(&mut self, n: usize) {
        self.free.push(n);
    }

    /// The keys of the live links, in `order`.
    fn live(&self, order: Order) -> Vec<LinkKey> {
        let mut nodes = Vec::new();
        self.walk(self.root, order, &mut nodes);
        nodes.into_iter().filter(|&n| !self.nodes[n].unlinking).map(|n| self.nodes[n].key).collect()
    }

    fn walk(&self, n: Option<usize>, order: Order, out: &mut Vec<usize>) {
        let Some(n) = n else { return };
        let [left, right] = self.nodes[n].children;
        self.walk(left, order, out);
        if order == Order::In {
            out.push(n);
        }
        self.walk(right, order, out);
        if order == Order::Post {
            out.push(n);
        }
    }

    fn child(&self, n: usize, side: usize) -> Option<usize> {
        self.nodes[n].children[side]
    }

    /// The side of its parent `p` that `n` hangs on.
    fn side_of(&self, n: usize, p: usize) -> usize {
        if self.child(p, LEFT) == Some(n) { LEFT } else { RIGHT }
    }

    fn is_red(&self, n: Option<usize>) -> bool {
        n.is_some_and(|n| self.nodes[n].red)
    }

    fn set_child(&mut self, parent: Option<usize>, old: usize, new: Option<usize>) {
        match parent {
            None => self.root = new,
            Some(p) => {
                let side = self.side_of(old, p);
                self.nodes[p].children[side] = new;
            }
        }
    }

    /// Rotates `x` down to `side` (`LEFT`: ERTS's `left_rotate__`): its
    /// child on the other side takes its place.
    fn rotate(&mut self, x: usize, side: usize) {
        let y = self.child(x, 1 - side).expect("a child to rotate up");
        let inner = self.child(y, side);
        self.nodes[x].children[1 - side] = inner;
        if let Some(c) = inner {
            self.nodes[c].parent = Some(x);
        }
        let p = self.nodes[x].parent;
        self.nodes[y].parent = p;
        self.set_child(p, x, Some(y));
        self.nodes[y].children[side] = Some(x);
        self.nodes[x].parent = Some(y);
    }

    /// `insert_fixup__`: `n` and its parent are red.
    fn insert_fixup(&mut self, n: usize) {
        let mut x = n;
        loop {
            let p = self.nodes[x].parent.expect("a red node has a parent");
            let pp = self.nodes[p].parent.expect("a red parent is not the root");
            let side = self.side_of(p, pp);
            let uncle = self.child(pp, 1 - side);
            if self.is_red(uncle) {
                self.nodes[uncle.expect("red")].red = false;
                self.nodes[p].red = false;
                self.nodes[pp].red = true;
                x = pp;
            } else {
                let (mut p, mut pp) = (p, pp);
                if self.child(p, 1 - side) == Some(x) {
                    x = p;
                    self.rotate(x, side);
                    p = self.nodes[x].parent.expect("rotated under a parent");
                    pp = self.nodes[p].parent.expect("rotated under a grandparent");
                }
                self.nodes[p].red = false;
                self.nodes[pp].red = true;
                self.rotate(pp, 1 - side);
                break;
            }
            if Some(x) == self.root || !self.is_red(self.nodes[x].parent) {
                break;
            }
        }
        let root = self.root.expect("not empty");
        self.nodes[root].red = false;
    }

    /// `delete`: splices out `z`, or its successor when `z` has two
    /// children (which then takes `z`'s place and colour), and restores the
    /// colours. A black leaf spliced out leaves a temporary black node
    /// (ERTS's `null_x`) to start the fix-up from.
    fn delete(&mut self, z: usize) {
        let y = match self.nodes[z].children {
            [Some(_), Some(right)] => {
                let mut y = right;
                while let Some(l) = self.child(y, LEFT) {
                    y = l;
                }
                y
            }
            _ => z,
        };
        let mut x = self.child(y, LEFT).or(self.child(y, RIGHT));
        let spliced_is_black = !self.nodes[y].red;
        let p = self.nodes[y].parent;
        let mut null_x = None;
        match x {
            Some(x) => self.nodes[x].parent = p,
            None if spliced_is_black => {
                let n = self.alloc(self.nodes[y].key);
                self.nodes[n].red = false;
                self.nodes[n].parent = p;
                null_x = Some(n);
                x = Some(n);
            }
            None => {}
        }
        self.set_child(p, y, x);
        if y != z {
            self.replace(z, y);
        }
        if spliced_is_black {
            self.delete_fixup(x.expect("a node or null_x"));
            if let Some(n) = null_x {
                let parent = self.nodes[n].parent;
                self.set_child(parent, n, None);
                self.release(n);
            }
        }
    }

    /// `delete`'s fix-up: `x` carries an extra black, which moves up the
    /// tree until a red node or the root takes it, or rotations end it.
    fn delete_fixup(&mut self, mut x: usize) {
        let mut p = self.nodes[x].parent;
        while let Some(mut pn) = p.filter(|_| !self.nodes[x].red) {
            let side = self.side_of(x, pn);
            let mut y = self.child(pn, 1 - side).expect("a black node's sibling");
            if self.nodes[y].red {
                self.nodes[y].red = false;
                self.nodes[pn].red = true;
                self.rotate(pn, side);
                pn = self.nodes[x].parent.expect("still under a parent");
                y = self.child(pn, 1 - side).expect("a sibling");
            }
            let (near, far) = (self.child(y, side), self.child(y, 1 - side));
            if !self.is_red(near) && !self.is_red(far) {
                self.nodes[y].red = true;
                x = pn;
                p = self.nodes[x].parent;
                continue;
            }
            if !self.is_red(far) {
                self.nodes[near.expect("red")].red = false;
                self.nodes[y].red = true;
                self.rotate(y, 1 - side);
                pn = self.nodes[x].parent.expect("still under a parent");
                y = self.child(pn, 1 - side).expect("a sibling");
            }
            if self.nodes[pn].red {
                self.nodes[pn].red = false;
                self.nodes[y].red = true;
            }
            let far = self.child(y, 1 - side).expect("a red nephew");
            self.nodes[far].red = false;
            self.rotate(pn, side);
            x = self.root.expect("not empty");
            break;
        }
        self.nodes[x].red = false;
    }

    /// `replace__`: `y` takes `x`'s place, children and colour.
    fn replace(&mut self, x: usize, y: usize) {
        let p = self.nodes[x].parent;
        self.set_child(p, x, Some(y));
        let children = self.nodes[x].children;
        for c in children.into_iter().flatten() {
            self.nodes[c].parent = Some(y);
        }
        self.nodes[y].red = self.nodes[x].red;
        self.nodes[y].parent = p;
        self.nodes[y].children = children;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(n: u32) -> LinkKey {
        LinkKey::Process(Pid::new(n, 0))
    }

    /// Checks the red-black properties and the parent links; answers the
    /// black height.
    fn check(tree: &LinkTree, n: Option<usize>, parent: Option<usize>) -> usize {
        let Some(i) = n else { return 1 };
        let node = &tree.nodes[i];
        assert_eq!(node.parent, parent, "parent link of {:?}", node.key);
        if node.red {
            assert!(!node.children.iter().any(|&c| tree.is_red(c)), "red-red");
        }
        let [left, right] = node.children;
        if let Some(l) = left {
            assert!(tree.nodes[l].key < node.key);
        }
        if let Some(r) = right {
            assert!(tree.nodes[r].key > node.key);
        }
        let hl = check(tree, left, Some(i));
        let hr = check(tree, right, Some(i));
        assert_eq!(hl, hr, "black height under {:?}", node.key);
        hl + usize::from(!node.red)
    }

    fn valid(tree: &LinkTree) {
        assert!(!tree.is_red(tree.root), "red root");
        check(tree, tree.root, None);
    }

    #[test]
    fn two_links_go_newest_first_whatever_their_order() {
        for (a, b) in [(1, 2), (2, 1)] {
            let mut t = LinkTree::default();
            t.insert(pid(a));
            t.insert(pid(b));
            assert_eq!(t.exit_order(), vec![pid(b), pid(a)]);
        }
    }

    #[test]
    fn three_ascending_links_rotate_to_the_middle() {
        // 1, 2, 3 rotate to 2 over 1 and 3: post order 1, 3, 2.
        let mut t = LinkTree::default();
        for n in [1, 2, 3] {
            t.insert(pid(n));
        }
        valid(&t);
        assert_eq!(t.exit_order(), vec![pid(1), pid(3), pid(2)]);
    }

    #[test]
    fn processes_come_before_ports() {
        let mut t = LinkTree::default();
        t.insert(LinkKey::Port(PortId(1)));
        t.insert(pid(9));
        assert_eq!(t.linked(), vec![pid(9), LinkKey::Port(PortId(1))]);
    }

    #[test]
    fn unlinking_links_shape_the_tree_but_are_not_walked() {
        let mut t = LinkTree::default();
        for n in [1, 2, 3] {
            t.insert(pid(n));
        }
        t.set_unlinking(pid(2));
        assert!(!t.is_linked(pid(2)));
        assert_eq!(t.exit_order(), vec![pid(1), pid(3)]);
        t.remove(pid(2));
        valid(&t);
        assert_eq!(t.linked(), vec![pid(1), pid(3)]);
    }

    #[test]
    fn random_inserts_and_removes_keep_a_red_black_tree() {
        // A fixed pseudo-random sequence (xorshift), checked after each
        // change against the properties and a sorted set.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut t = LinkTree::default();
        let mut set = std::collections::BTreeSet::new();
        for _ in 0..4000 {
            let key = pid((next() % 64) as u32);
            if next() % 3 == 0 {
                t.remove(key);
                set.remove(&key);
            } else {
                t.insert(key);
                set.insert(key);
            }
            valid(&t);
            assert_eq!(t.linked(), set.iter().copied().collect::<Vec<_>>());
            assert_eq!(t.exit_order().len(), set.len());
        }
    }
}
