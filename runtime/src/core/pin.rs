//! Pins: how a breakpoint hit tells a committer which generation it reads,
//! with one fenced store instead of an `arc_swap` load and release.
//!
//! Every `Process` owns a [`HitPin`], registered with the core's
//! [`Pins`]. A hit publishes the generation number it is about to read
//! (`number + 1`; 0 is "not in a hit") and then checks that the number is
//! still current; a committer advances the number and then waits until no
//! pin shows the old one. Each side's store is fenced before its load, so
//! one of the two sees the other: either the committer sees the pin and
//! waits, or the hit sees the new number and pins that instead (Dekker's
//! handshake). Where the system allows, the fence is asymmetric
//! ([`crate::core::fence`]): the committer fences every thread for the hits.
//! Other readers ([`crate::core::TraceCore`]'s `active`) still count as
//! before.
//!
//! Generation number `n` reads breakpoint slot `n % 2`.

use super::fence;
use super::sync::{Arc, AtomicU64, Mutex, Ordering, compiler_fence, fence, yield_now};

/// A process's pin: 0 outside hits, `n + 1` inside a hit of generation `n`.
/// On a cache line of its own: threads write their pins on every hit.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct HitPin(AtomicU64);

/// The current generation number and every registered pin.
#[derive(Debug)]
pub(crate) struct Pins {
    number: AtomicU64,
    pins: Mutex<Vec<Arc<HitPin>>>,
    /// Does the committer fence for the hits ([`fence::asymmetric`])?
    asymmetric: bool,
}

impl Default for Pins {
    fn default() -> Pins {
        Pins::new(fence::asymmetric())
    }
}

impl Pins {
    /// Pins whose hits fence themselves, or (only where
    /// [`fence::asymmetric`] holds) rely on the committer's fence.
    pub(crate) fn new(asymmetric: bool) -> Pins {
        Pins { number: AtomicU64::new(0), pins: Mutex::default(), asymmetric }
    }

    /// A new pin, which the committer will wait on.
    pub(crate) fn register(&self) -> Arc<HitPin> {
        let pin = Arc::new(HitPin::default());
        let mut pins = self.pins.lock();
        if pins.len() == pins.capacity() {
            // Forget the pins of processes that are gone before growing.
            pins.retain(|p| Arc::strong_count(p) > 1);
        }
        pins.push(pin.clone());
        pin
    }

    /// Pins the current generation with `pin` until the answer is dropped
    /// (or [`Pinned::unpin`] hands the pin back).
    #[inline]
    pub(crate) fn pin(&self, pin: Arc<HitPin>) -> Pinned {
        let mut number = self.number.load(Ordering::Relaxed);
        loop {
            let now = if self.asymmetric {
                pin.0.store(number + 1, Ordering::Relaxed);
                // Only the compiler must keep the order: a committer that
                // could miss the store fences this thread first.
                compiler_fence(Ordering::SeqCst);
                self.number.load(Ordering::Acquire)
            } else {
                pin.0.store(number + 1, Ordering::Relaxed);
                // The store before the load: Dekker's handshake with the
                // committer's fence in `advance` (a fence rather than
                // SeqCst accesses, so the loom model can check it).
                fence(Ordering::SeqCst);
                self.number.load(Ordering::Acquire)
            };
            if now == number {
                return Pinned { pin: Some(pin), number };
            }
            // A commit went by: pin the generation it made current.
            number = now;
        }
    }

    /// Makes the next generation current (the committer, after staging
    /// its slot); returns the number of the one it replaced.
    pub(crate) fn advance(&self) -> u64 {
        let old = self.number.fetch_add(1, Ordering::SeqCst);
        // Every hit's pin store is now visible, or its next load of the
        // number sees the new one.
        if self.asymmetric {
            fence::heavy();
        } else {
            fence(Ordering::SeqCst);
        }
        old
    }

    /// Waits until no hit reads generation `number` any more.
    pub(crate) fn wait_for_readers_of(&self, number: u64) {
        // A copy, so that hits may register pins (spawn processes) while
        // this waits for them; a pin registered after `advance` never
        // shows the old number.
        let pins = self.pins.lock().clone();
        for pin in &pins {
            while pin.0.load(Ordering::SeqCst) == number + 1 {
                yield_now();
            }
        }
    }
}

/// A hit's hold on a generation.
#[derive(Debug)]
pub(crate) struct Pinned {
    pin: Option<Arc<HitPin>>,
    number: u64,
}

impl Pinned {
    /// The generation's number.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The breakpoint slot the generation reads.
    pub(crate) fn index(&self) -> usize {
        (self.number % 2) as usize
    }

    /// Ends the hold and hands the pin back for the next hit.
    pub(crate) fn unpin(mut self) -> Arc<HitPin> {
        let pin = self.pin.take().expect("a held pin");
        pin.0.store(0, Ordering::Release);
        pin
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Only if the hit unwound: the committer must not wait for it.
        if let Some(pin) = &self.pin {
            pin.0.store(0, Ordering::Release);
        }
    }
}

// Not in the loom model, which has tests of its own.
#[cfg(all(test, not(msc_loom)))]
mod tests {
    use super::*;

    /// Both kinds of fences the system allows.
    fn both() -> Vec<Pins> {
        let mut kinds = vec![Pins::new(false)];
        if fence::asymmetric() {
            kinds.push(Pins::new(true));
        }
        kinds
    }

    #[test]
    fn a_committer_waits_for_the_hits_of_the_old_generation_only() {
        for pins in both() {
            waits_for_the_old_generation(Arc::new(pins));
        }
    }

    fn waits_for_the_old_generation(pins: Arc<Pins>) {
        let pin = pins.register();
        let pinned = pins.pin(pin);
        assert_eq!((pinned.number(), pinned.index()), (0, 0));
        let old = pins.advance();
        let waiter = {
            let pins = pins.clone();
            std::thread::spawn(move || pins.wait_for_readers_of(old))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "the hit still reads generation 0");
        let pin = pinned.unpin();
        waiter.join().expect("the waiter ends");
        let pinned = pins.pin(pin);
        assert_eq!((pinned.number(), pinned.index()), (1, 1));
        // A hit of the new generation does not hold up the next commit's
        // wait for the one before.
        pins.wait_for_readers_of(0);
        drop(pinned);
        pins.wait_for_readers_of(1);
    }

    /// A hit racing commits never reads a generation the committer has
    /// stopped waiting for: while pinned, the number it holds is current
    /// or the one just before (whose readers the committer waits for).
    #[test]
    fn hits_and_commits_race_safely() {
        for pins in both() {
            let pins = Arc::new(pins);
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let committer = {
                let (pins, done) = (pins.clone(), done.clone());
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        let old = pins.advance();
                        pins.wait_for_readers_of(old);
                    }
                    done.store(true, Ordering::SeqCst);
                })
            };
            let mut pin = pins.register();
            while !done.load(Ordering::SeqCst) {
                let pinned = pins.pin(pin);
                // The committer is at most one commit past the number,
                // and waits for it before the next.
                let now = pins.number.load(Ordering::SeqCst);
                assert!(now == pinned.number() || now == pinned.number() + 1);
                pin = pinned.unpin();
            }
            committer.join().expect("the committer ends");
        }
    }

    #[test]
    fn pins_of_dropped_processes_are_forgotten() {
        let pins = Pins::default();
        let kept = pins.register();
        for _ in 0..100 {
            drop(pins.register());
        }
        assert!(pins.pins.lock().len() < 100);
        assert!(pins.pins.lock().iter().any(|p| Arc::ptr_eq(p, &kept)));
    }
}
