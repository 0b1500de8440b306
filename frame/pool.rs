//! The packing-buffer pool (BLIS's memory broker, much simplified): page-aligned blocks that
//! are checked out for one call and returned when the guard drops, so a program that makes
//! the same calls over and over allocates nothing after the first.
//!
//! The lock is taken twice per buffer per call (check out, give back), never per tile.
//! Blocks are zero-filled when first allocated; afterwards they hold whatever the last user
//! packed, which is fine because every `Element` is valid for any bit pattern and packing
//! writes every element before the kernel reads it.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use parking_lot::Mutex;

use crate::error::{Error, ErrorKind, Result};
use crate::types::Element;

/// Alignment of every block: a page, so packed panels never straddle one needlessly and
/// any vector load is aligned.
const ALIGN: usize = 4096;
/// Blocks kept for reuse at most; a block returned to a full pool is freed.
const MAX_POOLED: usize = 32;

struct Block {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a Block owns its allocation exclusively; moving that ownership between threads is
// fine.
unsafe impl Send for Block {}

impl Block {
    fn allocate(bytes: usize) -> Result<Block> {
        let rounded = bytes
            .max(1)
            .checked_next_multiple_of(ALIGN)
            .ok_or_else(|| oom(bytes))?;
        let layout = Layout::from_size_align(rounded, ALIGN).map_err(|_| oom(bytes))?;
        let bytes = rounded;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| oom(bytes))?;
        Ok(Block { ptr, bytes })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.bytes, ALIGN).expect("checked at allocation");
        // SAFETY: allocated in `allocate` with exactly this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

fn oom(bytes: usize) -> Error {
    Error::new(
        ErrorKind::OutOfMemory,
        format!("could not allocate a packing buffer of {bytes} bytes"),
    )
}

static FREE: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// A block checked out of the pool; returns itself on drop.
pub(crate) struct PackBuf {
    block: Option<Block>,
}

impl PackBuf {
    /// A block of at least `bytes` bytes: a pooled one if any is big enough, else a new one.
    pub(crate) fn checkout(bytes: usize) -> Result<PackBuf> {
        let reused = {
            let mut free = FREE.lock();
            // Best fit: keep the big blocks for the big requests.
            (0..free.len())
                .filter(|&i| free[i].bytes >= bytes)
                .min_by_key(|&i| free[i].bytes)
                .map(|i| free.swap_remove(i))
        };
        let block = match reused {
            Some(block) => block,
            None => Block::allocate(bytes)?,
        };
        Ok(PackBuf { block: Some(block) })
    }

    /// The block as `len` elements of `T`.
    /// Panics (a bug, caught at the API boundary) if the block is smaller.
    pub(crate) fn as_mut_slice<T: Element>(&mut self, len: usize) -> &mut [T] {
        let block = self.block.as_ref().expect("present until drop");
        assert!(len * size_of::<T>() <= block.bytes, "pack buffer too small");
        // SAFETY: the block is ALIGN-aligned (≥ align_of::<T>()), at least len·size_of::<T>()
        // bytes, initialized (zero-filled at allocation, then only ever written with
        // `Element` values), every bit pattern is a valid `Element`, and `&mut self` makes
        // the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(block.ptr.as_ptr().cast::<T>(), len) }
    }
}

impl Drop for PackBuf {
    fn drop(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        let mut free = FREE.lock();
        if free.len() < MAX_POOLED {
            if free.capacity() == 0 {
                // Reserve once so steady-state returns never allocate.
                free.reserve_exact(MAX_POOLED);
            }
            free.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_big_enough() {
        for bytes in [4, 4096, 10_000] {
            let mut buf = PackBuf::checkout(bytes).unwrap();
            let s = buf.as_mut_slice::<f32>(bytes / 4);
            assert_eq!(s.as_ptr() as usize % ALIGN, 0);
            s[bytes / 4 - 1] = 1.0;
        }
        // Reuse (no allocation in steady state) is shown by tests/no_alloc.rs.
    }

    #[test]
    fn a_too_large_request_is_an_error_not_an_abort() {
        for bytes in [usize::MAX, usize::MAX - ALIGN, isize::MAX as usize] {
            let e = PackBuf::checkout(bytes).err().unwrap();
            assert_eq!(e.kind(), ErrorKind::OutOfMemory);
        }
    }
}
