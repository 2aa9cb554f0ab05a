//! A loom model of the trace core's generation switch.
//!
//! `runtime/src/core/pin.rs` is compiled here as it is, against loom's
//! atomics, mutex and threads instead of the standard ones (`sync` below
//! stands in for `runtime/src/core/sync.rs`), and the tests run a breakpoint
//! hit and a committer under every interleaving loom can make of them.
//!
//! The hit pins a generation, reads that generation's breakpoint slot and
//! unpins; the committer stages the other slot, advances the generation,
//! waits for the readers of the old one and then rewrites ("frees") its
//! slot for the next commit. The slots are loom `UnsafeCell`s: loom fails
//! the test if the rewrite can race the read, and the hit checks it reads
//! what its generation's slot held when the generation became current.
//!
//! The asymmetric fence (`membarrier`, `fence.rs`) cannot be modelled as
//! it is: the committer's heavy fence makes every running thread execute
//! a full fence. The model gives the hit the full fence that stands for
//! it, at its compiler fence, and the committer its own.

#![cfg_attr(not(test), allow(dead_code, reason = "only the tests use the model"))]

/// loom's versions of `runtime/src/core/sync.rs`.
mod sync {
    pub(crate) use loom::sync::Arc;
    pub(crate) use loom::sync::atomic::{AtomicU64, Ordering, fence};
    pub(crate) use loom::thread::yield_now;

    /// The hit's side of the asymmetric fence: the full fence the
    /// committer's `membarrier` makes it execute.
    pub(crate) fn compiler_fence(order: Ordering) {
        fence(order);
    }

    /// `parking_lot::Mutex`'s interface over loom's mutex.
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
    }
}

/// `runtime/src/core/fence.rs`: asymmetric fences are chosen per model.
mod fence {
    pub(crate) fn asymmetric() -> bool {
        false
    }

    /// The committer's heavy fence: a full fence of its own (the hit's
    /// side is in `sync::compiler_fence`).
    pub(crate) fn heavy() {
        loom::sync::atomic::fence(loom::sync::atomic::Ordering::SeqCst);
    }
}

#[path = "../../src/core/pin.rs"]
mod pin;

#[cfg(test)]
mod tests {
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    use crate::pin::Pins;

    /// What the committer writes into a retired slot: never read.
    const FREED: u64 = u64::MAX;

    /// Two breakpoint slots; slot `n % 2` holds generation `n`'s settings.
    struct Slots([UnsafeCell<u64>; 2]);

    // SAFETY: the model is what checks that the cells are shared safely;
    // loom reports any access that races.
    unsafe impl Sync for Slots {}

    /// A hit of one breakpoint racing `commits` commits: the hit reads the
    /// slot of the generation it pinned, which holds that generation's
    /// number, and no commit rewrites a slot while a hit reads it.
    fn hit_races_commits(asymmetric: bool, commits: u64) {
        loom::model(move || {
            let pins = Arc::new(Pins::new(asymmetric));
            let slots = Arc::new(Slots([UnsafeCell::new(0), UnsafeCell::new(FREED)]));
            let pin = pins.register();
            let hit = {
                let (pins, slots) = (pins.clone(), slots.clone());
                thread::spawn(move || {
                    let pinned = pins.pin(pin);
                    // SAFETY: loom checks this read against every write.
                    let seen = slots.0[pinned.index()].with(|p| unsafe { *p });
                    assert_eq!(seen, pinned.number(), "a hit read another generation's slot");
                    pinned.unpin();
                })
            };
            for n in 1..=commits {
                // Stage generation n in the slot nobody reads, make it current,
                // wait out the old generation's readers, retire its slot.
                // SAFETY: as above.
                slots.0[(n % 2) as usize].with_mut(|p| unsafe { *p = n });
                let old = pins.advance();
                assert_eq!(old, n - 1);
                pins.wait_for_readers_of(old);
                // SAFETY: as above.
                slots.0[(old % 2) as usize].with_mut(|p| unsafe { *p = FREED });
            }
            hit.join().expect("the hit ends");
        });
    }

    #[test]
    fn one_commit_with_symmetric_fences() {
        hit_races_commits(false, 1);
    }

    #[test]
    fn two_commits_with_symmetric_fences() {
        hit_races_commits(false, 2);
    }

    #[test]
    fn one_commit_with_asymmetric_fences() {
        hit_races_commits(true, 1);
    }

    #[test]
    fn two_commits_with_asymmetric_fences() {
        hit_races_commits(true, 2);
    }
}
