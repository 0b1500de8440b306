//! The small/skinny path (BLIS's "sup"): for problems too small to repay packing, the sup
//! kernel reads A and B where they are, tile by tile, on the calling thread.
//!
//! ```text
//! jr: for each NR-wide column panel of C and B
//!   ir: for each MR-tall row panel of C and A
//!         sup kernel: C[ir.., jr..] := alpha·A[ir.., :]·B[:, jr..] + beta·C[ir.., jr..]
//! ```
//!
//! The kernel loads each column of A as a vector, so A needs unit row stride and no pending
//! conjugation; otherwise it is first copied, once, into a column-major buffer (m·k elements,
//! small by construction). B is read in place with any strides: its elements are broadcast.
//! Edges are the kernel's (masked loads and stores). Chosen by `gemm_front` when m·n·k is at
//! most the kernel's `max_work` and the plan gives one thread.

use crate::cntx::SupKernel;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{SupUkrArgs, TransposeUkr};
use crate::packbuf::PackBuf;
use crate::packm::pack_a_panels;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// C := alpha·A·B + beta·C through `sup` (A m×k, B k×n, C m×n, all checked; B not
/// conjugated: `gemm_front` sends conjugated B down the packed path). `transpose_a` is the
/// configuration's packing kernel for A, used if A must be copied.
pub(crate) fn gemm_sup<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transpose_a: Option<TransposeUkr<A>>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    debug_assert!(!b.is_conj());
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let (mr, nr) = sup.tile();
    let needs_copy = a.row_stride() != 1 || a.is_conj();
    let mut copy = if needs_copy {
        // Checked: A may be a zero-stride view of a larger shape than any memory holds.
        let bytes = m.checked_mul(k).and_then(|e| e.checked_mul(size_of::<A>()));
        let bytes = bytes.ok_or_else(|| {
            let what = format!("gemm: a copy of the {m}×{k} A does not fit in memory");
            Error::new(ErrorKind::OutOfMemory, what)
        })?;
        Some(PackBuf::checkout(bytes)?)
    } else {
        None
    };
    let (a_ptr, cs_a) = match &mut copy {
        None => (a.as_ptr(), a.col_stride()),
        Some(buf) => {
            // One panel of m rows is exactly A in column-major order with ld = m; packing
            // does it with its fast paths (8×8 transposes for row-stored A) and applies op().
            let dst = buf.as_mut_slice::<A>(m * k);
            pack_a_panels(a, m, 0..1, dst, transpose_a);
            (dst.as_ptr(), m as isize)
        }
    };
    let ukr = sup.ukr();
    for jr in (0..n).step_by(nr) {
        for ir in (0..m).step_by(mr) {
            let args = SupUkrArgs {
                m: mr.min(m - ir),
                n: nr.min(n - jr),
                k,
                alpha,
                a: a_ptr.wrapping_add(ir),
                cs_a,
                b: b.as_ptr().wrapping_offset(jr as isize * b.col_stride()),
                rs_b: b.row_stride(),
                cs_b: b.col_stride(),
                beta,
                c: c.ptr_at(ir, jr),
                rs_c: c.row_stride(),
                cs_c: c.col_stride(),
            };
            // SAFETY: the tile's rows ir.. (< m) and columns jr.. (< n) of A (unit row stride,
            // column stride cs_a: either the checked view or the copy), B (the checked view)
            // and C (exclusively borrowed) are in range, with m, n within the kernel's tile;
            // the context's kernel runs on this CPU.
            unsafe { ukr(&args) };
        }
    }
    Ok(())
}
