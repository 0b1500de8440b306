//! How a thread waits for a teammate before it blocks: [`SpinWait`], shared by the barriers,
//! the workers polling for their next task, and a caller waiting for its helpers.
//!
//! A waiter first spins on the CPU, since a teammate on another core is usually
//! microseconds away. After a few hundred checks it *yields* between checks instead. When
//! the teammate it waits for shares its CPU (the kernel's scheduler often wakes a worker on
//! its waker's CPU after an idle period, and an oversubscribed machine does the same), a
//! pure spin takes the CPU from that teammate for its whole time slice. On the development
//! VM that turned 2-thread sgemm 256³ calls from 0.18 into 1.1 ms, for ten and more calls in
//! a row after each pause (docs/Performance.md, "Two threads after a pause"). A yield with
//! nobody else to run returns at once. After its time ([`SPIN_TIME`], or a worker's longer
//! poll in `pool.rs`) the waiter blocks.

use std::hint::spin_loop;
use std::time::{Duration, Instant};

/// How long a waiter spins (and yields) before it blocks. Long enough to cover the usual
/// imbalance between teammates within a call (so a blocked thread's core is not halted and
/// re-woken, which on a virtual machine costs far more than the wait), short enough that idle
/// threads do not burn a core: measured on the 2-vCPU development VM, a 30 µs spin left
/// 2-thread dgemm 1024³ at one thread's speed after idle periods, 200 µs restored 2×
/// (docs/Performance.md).
pub(crate) const SPIN_TIME: Duration = Duration::from_micros(200);

/// Checks of the awaited condition with a bare CPU pause between them, before yielding.
const PAUSES_BEFORE_YIELDING: u32 = 256;

/// A waiter's progress through spinning, yielding and (its caller's business) blocking.
pub(crate) struct SpinWait {
    checks: u32,
    start: Option<Instant>,
    limit: Duration,
}

impl SpinWait {
    pub(crate) fn new() -> Self {
        Self::for_time(SPIN_TIME)
    }
    pub(crate) fn for_time(limit: Duration) -> Self {
        SpinWait {
            checks: 0,
            start: None,
            limit,
        }
    }

    /// Called after each failed check of the awaited condition: pauses or yields, and says
    /// whether to check again (`true`) or to block now (`false`, after `SPIN_TIME`).
    pub(crate) fn keep_spinning(&mut self) -> bool {
        self.checks = self.checks.saturating_add(1);
        if self.checks <= PAUSES_BEFORE_YIELDING {
            spin_loop();
            return true;
        }
        // The clock is read only from here on: a short wait costs no clock read at all.
        let start = *self.start.get_or_insert_with(Instant::now);
        if start.elapsed() > self.limit {
            return false;
        }
        std::thread::yield_now();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_without_the_clock_then_yields_until_the_limit() {
        let limit = Duration::from_millis(2);
        let mut spin = SpinWait::for_time(limit);
        for _ in 0..PAUSES_BEFORE_YIELDING {
            assert!(spin.keep_spinning());
        }
        assert!(spin.start.is_none(), "the clock was read during the pauses");
        let start = Instant::now();
        while spin.keep_spinning() {}
        assert!(start.elapsed() >= limit);
        // Once over, it stays over.
        assert!(!spin.keep_spinning());
    }
}
