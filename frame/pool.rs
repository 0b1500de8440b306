//! A recycling pool: objects checked out for one call and returned when the guard drops, so
//! repeated calls allocate nothing in steady state. Used for packing buffers
//! (`frame/packbuf.rs`) and for the barriers of a thread team (`frame/thread/barrier.rs`).
//!
//! The lock is taken twice per object per call (check out, give back), never per tile.

use std::ops::{Deref, DerefMut};

use std::sync::{Mutex, PoisonError};

use crate::error::Result;

/// Objects kept for reuse at most, per pool; one returned to a full pool is dropped.
const MAX_POOLED: usize = 32;

/// Something a pool can hand out again: it has a size that a request must not exceed.
pub(crate) trait Poolable: Send + Sized + 'static {
    /// How big a request this object can serve.
    fn capacity(&self) -> usize;
}

/// A pool of reusable objects.
pub(crate) struct Pool<T> {
    free: Mutex<Vec<T>>,
}

impl<T: Poolable> Pool<T> {
    pub(crate) const fn new() -> Pool<T> {
        Pool {
            free: Mutex::new(Vec::new()),
        }
    }

    /// An object of capacity at least `need`: the smallest pooled one that fits (best fit
    /// keeps the big ones for the big requests), else a new one from `make(need)`.
    pub(crate) fn checkout(
        &'static self,
        need: usize,
        make: impl FnOnce(usize) -> Result<T>,
    ) -> Result<Pooled<T>> {
        let reused = {
            let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
            (0..free.len())
                .filter(|&i| free[i].capacity() >= need)
                .min_by_key(|&i| free[i].capacity())
                .map(|i| free.swap_remove(i))
        };
        let item = match reused {
            Some(item) => item,
            None => make(need)?,
        };
        Ok(Pooled {
            item: Some(item),
            pool: self,
        })
    }
}

/// An object checked out of a pool; goes back on drop.
pub(crate) struct Pooled<T: Poolable> {
    item: Option<T>,
    pool: &'static Pool<T>,
}

impl<T: Poolable> Deref for Pooled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.item.as_ref().expect("present until drop")
    }
}

impl<T: Poolable> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.item.as_mut().expect("present until drop")
    }
}

impl<T: Poolable> Drop for Pooled<T> {
    fn drop(&mut self) {
        let Some(item) = self.item.take() else { return };
        let mut free = self
            .pool
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if free.len() < MAX_POOLED {
            if free.capacity() == 0 {
                // Reserve once so steady-state returns never allocate.
                free.reserve_exact(MAX_POOLED);
            }
            free.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Sized(usize);
    impl Poolable for Sized {
        fn capacity(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn best_fit_and_return_on_drop() {
        static POOL: Pool<Sized> = Pool::new();
        let made = std::cell::Cell::new(0);
        let make = |n| {
            made.set(made.get() + 1);
            Ok(Sized(n))
        };
        drop((
            POOL.checkout(100, make).unwrap(),
            POOL.checkout(10, make).unwrap(),
        ));
        assert_eq!(made.get(), 2);
        let small = POOL.checkout(5, make).unwrap();
        assert_eq!(small.capacity(), 10, "best fit");
        let big = POOL.checkout(50, make).unwrap();
        assert_eq!(big.capacity(), 100);
        assert_eq!(made.get(), 2, "both reused");
    }
}
