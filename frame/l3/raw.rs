//! The one place the loop nest shares mutable memory between threads: C (and the partial
//! products of the k groups) and the packed buffers, as raw pointers with their shapes.
//!
//! Sharing them is sound because of how `frame/l3/gemm.rs` uses them, not because of these
//! types: threads write disjoint tiles of C (the partition of each loop is disjoint) and
//! disjoint panels of a packed block, and a block is read only between the barrier after it
//! was packed and the barrier before it is packed again. Every `unsafe` use says which of
//! those rules it relies on.

use std::ops::Range;

use crate::types::Element;

/// A matrix (C or a partial product) that several threads write, each its own tiles.
#[derive(Debug)]
pub(crate) struct RawMat<T> {
    pub(crate) ptr: *mut T,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) rs: isize,
    pub(crate) cs: isize,
}

impl<T> Clone for RawMat<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawMat<T> {}

// SAFETY: see the module docs: threads write disjoint elements.
unsafe impl<T: Send> Send for RawMat<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for RawMat<T> {}

impl<T> RawMat<T> {
    /// Pointer to element (i, j) (not dereferenced here).
    pub(crate) fn ptr_at(&self, i: usize, j: usize) -> *mut T {
        self.ptr
            .wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }

    /// The `m`×`n` block at (i0, j0). Panics (a bug, caught at the API boundary) if it does
    /// not fit.
    pub(crate) fn block(&self, i0: usize, j0: usize, m: usize, n: usize) -> RawMat<T> {
        assert!(i0 + m <= self.m && j0 + n <= self.n, "block out of range");
        RawMat {
            ptr: self.ptr_at(i0, j0),
            m,
            n,
            ..*self
        }
    }
}

/// A buffer (packed blocks, partial products) that several threads fill, each its own part.
#[derive(Debug)]
pub(crate) struct RawBuf<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Clone for RawBuf<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawBuf<T> {}

// SAFETY: see the module docs: disjoint writes, reads only between barriers.
unsafe impl<T: Send> Send for RawBuf<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for RawBuf<T> {}

impl<T: Element> RawBuf<T> {
    /// `len` elements at `ptr`, which must stay valid while the buffer is used (the caller
    /// owns the memory; creating this reads nothing).
    pub(crate) fn new(ptr: *mut T, len: usize) -> RawBuf<T> {
        RawBuf { ptr, len }
    }

    /// Elements `start..start + len` as a buffer of their own.
    /// Panics (a bug, caught at the API boundary) if out of range.
    pub(crate) fn part(&self, start: usize, len: usize) -> RawBuf<T> {
        assert!(start + len <= self.len, "buffer part out of range");
        RawBuf {
            ptr: self.ptr.wrapping_add(start),
            len,
        }
    }

    /// The first element's address (not dereferenced here).
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Elements `r`, to write, for a lifetime the caller picks.
    ///
    /// # Safety
    /// The memory stays valid, and no other thread reads or writes any of the elements,
    /// while the slice lives.
    pub(crate) unsafe fn slice_mut<'a>(self, r: Range<usize>) -> &'a mut [T] {
        assert!(
            r.start <= r.end && r.end <= self.len,
            "buffer range out of range"
        );
        // SAFETY: in range of memory valid for `len` elements (`new`); exclusivity is the
        // caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.end - r.start) }
    }

    /// Elements `r`, to read, for a lifetime the caller picks.
    ///
    /// # Safety
    /// The memory stays valid, and no thread writes any of the elements, while the slice
    /// lives.
    pub(crate) unsafe fn slice<'a>(self, r: Range<usize>) -> &'a [T] {
        assert!(
            r.start <= r.end && r.end <= self.len,
            "buffer range out of range"
        );
        // SAFETY: as for `slice_mut`; no writer is the caller's promise.
        unsafe { std::slice::from_raw_parts(self.ptr.add(r.start), r.end - r.start) }
    }
}
