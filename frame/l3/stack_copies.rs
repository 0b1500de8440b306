//! Small copies of A and B on the stack, in the form the sup kernel reads (A with unit row
//! stride and no pending conjugation, B with no pending conjugation), for the one-tile
//! shortcut (`one_tile.rs`) and the sup path (`sup.rs`, which copies larger operands into
//! pooled buffers). For copies this small a plain loop beat both the pooled buffer and the
//! packing code's transposes (docs/Performance.md, session 22).

use std::mem::MaybeUninit;

use crate::types::Element;
use crate::view::MatRef;

/// The most bytes copied onto the stack, A's copy and B's together: enough for a 16×16 A of
/// f64, small enough to stay within one page of stack.
const COPY_BYTES: usize = 3072;

/// A 64-byte aligned stack buffer for the copies.
#[repr(C, align(64))]
struct CopyBuffer([MaybeUninit<u8>; COPY_BYTES]);

/// Calls `f` with A and B as the sup kernel reads them: A copied unless it has unit row stride
/// and no pending conjugation, B copied if conjugated, both column-major with their
/// conjugation applied, on the stack. Gives `f` back, uncalled, when the copies do not fit
/// in [`COPY_BYTES`] together. Call it from a function of its own (`#[inline(never)]`), so
/// that the buffer does not weigh on the frames of calls that copy nothing.
#[inline(always)]
pub(crate) fn with_stack_copies<A: Element, B: Element, R, F>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    f: F,
) -> Result<R, F>
where
    F: FnOnce(&MatRef<A>, &MatRef<B>) -> R,
{
    let copy_a = a.row_stride() != 1 || a.is_conj();
    let copy_b = b.is_conj();
    let bytes = |x_rows: usize, x_cols: usize, size: usize| {
        x_rows.saturating_mul(x_cols).saturating_mul(size)
    };
    let a_bytes = if copy_a {
        bytes(a.nrows(), a.ncols(), size_of::<A>())
    } else {
        0
    };
    let b_bytes = if copy_b {
        bytes(b.nrows(), b.ncols(), size_of::<B>())
    } else {
        0
    };
    if a_bytes > COPY_BYTES || b_bytes > COPY_BYTES {
        return Err(f);
    }
    // B's part starts on a 64-byte boundary, aligned for any element.
    let a_room = a_bytes.next_multiple_of(64);
    if a_room + b_bytes > COPY_BYTES {
        return Err(f);
    }
    let mut buffer = CopyBuffer([MaybeUninit::uninit(); COPY_BYTES]);
    let base = buffer.0.as_mut_ptr();
    let a_copy;
    let a = if copy_a {
        // SAFETY: the buffer is 64-byte aligned (at least A's alignment) and holds
        // `a_room` ≥ m·k elements of A from its start.
        a_copy = unsafe { copy_onto_stack(a, base.cast::<A>()) };
        &a_copy
    } else {
        a
    };
    let b_copy;
    let b = if copy_b {
        // SAFETY: `a_room` is a multiple of 64, so B's part is aligned for B too, and it
        // holds k·n elements of B before the buffer's end (checked above).
        b_copy = unsafe { copy_onto_stack(b, base.add(a_room).cast::<B>()) };
        &b_copy
    } else {
        b
    };
    // The copies live in `buffer` until the end of this function.
    Ok(f(a, b))
}

/// Writes op(X), its pending conjugation applied, column by column (leading dimension: its
/// rows) to `dst`, and returns a view of the copy (scale 1: gemm has folded X's scalar into
/// alpha).
///
/// # Safety
/// `dst` is aligned for T and valid for writes of rows·cols elements, which nothing else
/// reads or writes for the lifetime of the returned view.
unsafe fn copy_onto_stack<'a, T: Element>(x: &MatRef<T>, dst: *mut T) -> MatRef<'a, T> {
    let (rows, cols) = (x.nrows(), x.ncols());
    let conj = x.is_conj();
    for j in 0..cols {
        for i in 0..rows {
            // SAFETY: (i, j) is in X's range; the destination is within rows·cols elements
            // (the caller's promise).
            unsafe {
                let v = x.read_stored(i, j);
                dst.add(j * rows + i).write(if conj { v.conj() } else { v });
            }
        }
    }
    // SAFETY: all rows·cols elements were just written, and the caller keeps them to the
    // view alone; a copy of at most COPY_BYTES has strides (1, rows) that cannot overflow.
    unsafe { MatRef::from_raw_parts(dst, rows, cols, 1, rows.max(1) as isize) }
        .expect("a copy of at most COPY_BYTES has valid strides")
}
