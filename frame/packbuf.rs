//! Packing buffers: page-aligned blocks from a pool (`frame/pool.rs`), so a program that
//! repeats its calls allocates nothing after the first.
//!
//! Blocks are zero-filled when first allocated; afterwards they hold whatever the last user
//! packed, which is fine because every `Element` is valid for any bit pattern and packing
//! writes every element before the kernel reads it.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::error::{Error, ErrorKind, Result};
use crate::pool::{Pool, Poolable, Pooled};
use crate::types::Element;

/// Alignment of every block: a page, so packed panels never straddle one needlessly and
/// any vector load is aligned.
const ALIGN: usize = 4096;

pub(crate) struct Block {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a Block owns its allocation exclusively; moving that ownership between threads is
// fine.
unsafe impl Send for Block {}

impl Poolable for Block {
    fn capacity(&self) -> usize {
        self.bytes
    }
}

impl Block {
    fn allocate(bytes: usize) -> Result<Block> {
        let rounded = bytes
            .max(1)
            .checked_next_multiple_of(ALIGN)
            .ok_or_else(|| oom(bytes))?;
        let layout = Layout::from_size_align(rounded, ALIGN).map_err(|_| oom(bytes))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| oom(bytes))?;
        Ok(Block {
            ptr,
            bytes: rounded,
        })
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

static BLOCKS: Pool<Block> = Pool::new();

/// A block checked out of the pool; returns itself on drop.
pub(crate) struct PackBuf {
    block: Pooled<Block>,
}

impl PackBuf {
    /// A block of at least `bytes` bytes.
    pub(crate) fn checkout(bytes: usize) -> Result<PackBuf> {
        Ok(PackBuf {
            block: BLOCKS.checkout(bytes, Block::allocate)?,
        })
    }

    /// Room for `len` elements of `T`, as a raw pointer for threads to share (each writes
    /// its own part; see `frame/l3/gemm.rs`).
    /// Panics (a bug, caught at the API boundary) if the block is smaller.
    pub(crate) fn as_mut_ptr<T: Element>(&mut self, len: usize) -> *mut T {
        assert!(
            len * size_of::<T>() <= self.block.bytes,
            "pack buffer too small"
        );
        self.block.ptr.as_ptr().cast()
    }

    /// The block as `len` elements of `T`.
    /// Panics (a bug, caught at the API boundary) if the block is smaller.
    pub(crate) fn as_mut_slice<T: Element>(&mut self, len: usize) -> &mut [T] {
        let ptr = self.as_mut_ptr::<T>(len);
        // SAFETY: the block is ALIGN-aligned (≥ align_of::<T>()), at least len·size_of::<T>()
        // bytes (checked), initialized (zero-filled at allocation, then only ever written
        // with `Element` values), every bit pattern is a valid `Element`, and `&mut self`
        // makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_big_enough() {
        for bytes in [4, 4096, 10_000] {
            let mut buf = PackBuf::checkout(bytes).unwrap();
            let p = buf.as_mut_ptr::<f32>(bytes / 4);
            assert_eq!(p as usize % ALIGN, 0);
            // SAFETY: the block holds at least bytes / 4 f32s.
            unsafe { p.add(bytes / 4 - 1).write(1.0) };
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
