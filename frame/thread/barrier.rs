//! Barriers for the threads of one gemm call: a set of them, checked out of a pool per call
//! (so steady-state calls allocate nothing), one per team of the thread-control tree.
//!
//! A waiter spins briefly (the others are usually microseconds away; `spin.rs`), then parks
//! on a condition variable, so idle threads do not burn a core. The std (futex) primitives are
//! used because they park without allocating (parking_lot allocates a record the first time
//! a thread parks, which the no-allocation test caught). If any thread of the call panics,
//! the set is poisoned: every waiter, now and later, returns `Err(Poisoned)` and its thread
//! unwinds out of the loop nest instead of waiting forever for a thread that will not come.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use std::sync::{Condvar, Mutex, PoisonError};

use crate::error::Result;
use crate::pool::{Pool, Poolable, Pooled};
use crate::thread::spin::SpinWait;

/// A thread of the call panicked; stop.
#[derive(Debug)]
pub(crate) struct Poisoned;

/// One barrier; cache-line aligned so neighbours' counters do not share a line.
#[repr(align(64))]
struct Barrier {
    size: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

/// The barriers of one call, with a shared parking place.
pub(crate) struct BarrierSet {
    barriers: Vec<Barrier>,
    poisoned: AtomicBool,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Poolable for BarrierSet {
    fn capacity(&self) -> usize {
        self.barriers.len()
    }
}

static SETS: Pool<BarrierSet> = Pool::new();

impl BarrierSet {
    /// A fresh set: for each `(count, size)` of `groups`, `count` barriers for teams of
    /// `size` threads, in order.
    pub(crate) fn checkout(groups: &[(usize, usize)]) -> Result<Pooled<Self>> {
        let total = groups.iter().map(|&(count, _)| count).sum();
        let mut set = SETS.checkout(total, |n| {
            Ok(BarrierSet {
                barriers: (0..n)
                    .map(|_| Barrier {
                        size: 1,
                        arrived: AtomicUsize::new(0),
                        generation: AtomicUsize::new(0),
                    })
                    .collect(),
                poisoned: AtomicBool::new(false),
                lock: Mutex::new(()),
                wake: Condvar::new(),
            })
        })?;
        let sizes = groups
            .iter()
            .flat_map(|&(count, size)| std::iter::repeat_n(size, count));
        for (barrier, size) in set.barriers.iter_mut().zip(sizes) {
            barrier.size = size;
            *barrier.arrived.get_mut() = 0;
        }
        *set.poisoned.get_mut() = false;
        Ok(set)
    }

    /// Waits until `size` threads (this one included) have called `wait(index)`.
    pub(crate) fn wait(&self, index: usize) -> Result<(), Poisoned> {
        let b = &self.barriers[index];
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Poisoned);
        }
        if b.size == 1 {
            return Ok(());
        }
        let generation = b.generation.load(Ordering::Acquire);
        if b.arrived.fetch_add(1, Ordering::AcqRel) + 1 == b.size {
            // Last to arrive: reset for the next round, then release the others. The reset is
            // ordered before the release, so no one can arrive at the next round early.
            b.arrived.store(0, Ordering::Relaxed);
            {
                let _parked = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
                b.generation
                    .store(generation.wrapping_add(1), Ordering::Release);
            }
            self.wake.notify_all();
            return Ok(());
        }
        let released = || b.generation.load(Ordering::Acquire) != generation;
        let mut spin = SpinWait::new();
        loop {
            if released() {
                return Ok(());
            }
            if self.poisoned.load(Ordering::Acquire) {
                return Err(Poisoned);
            }
            if !spin.keep_spinning() {
                break;
            }
        }
        let mut parked = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            // Checked under the lock the releaser takes, so its wake-up cannot be missed.
            if released() {
                return Ok(());
            }
            if self.poisoned.load(Ordering::Acquire) {
                return Err(Poisoned);
            }
            parked = self
                .wake
                .wait(parked)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Releases every waiter with `Err(Poisoned)`, now and at every later wait.
    pub(crate) fn poison(&self) {
        self.poisoned.store(true, Ordering::Release);
        drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_meet_round_after_round() {
        let set = BarrierSet::checkout(&[(1, 3), (1, 1)]).unwrap();
        let counter = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..200 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        set.wait(0).unwrap();
                        // Everyone has incremented for this round before anyone goes on.
                        assert!(counter.load(Ordering::SeqCst) >= 3 * (round + 1));
                        set.wait(0).unwrap();
                    }
                });
            }
        });
        assert_eq!(counter.into_inner(), 600);
        set.wait(1).unwrap();
    }

    #[test]
    fn poison_releases_waiters() {
        let set = BarrierSet::checkout(&[(1, 2)]).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| set.wait(0));
            std::thread::sleep(std::time::Duration::from_millis(20));
            set.poison();
            assert!(waiter.join().unwrap().is_err());
        });
        assert!(set.wait(0).is_err());
    }
}
