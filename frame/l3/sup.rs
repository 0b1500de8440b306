//! The small/skinny path (BLIS's "sup"): for problems too small to repay packing, the sup
//! kernel reads A and B where they are, tile by tile, on the calling thread.
//!
//! ```text
//! pc: for each k block (all of k unless A is large: `SupLimits::k_block_bytes`)
//!   jr: for each NR-wide column panel of C and B
//!     ir: for each MR-tall row panel of C and A
//!           sup kernel: C[ir.., jr..] := alpha·A[ir.., pc..]·B[pc.., jr..] + beta'·C[ir.., jr..]
//!           (beta' = beta in the first k block, 1 after it)
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
use crate::types::{Element, GemmPair, Scalar};
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
    let kc = k_block(m, k, size_of::<A>(), sup.limits().k_block_bytes);
    for pc in (0..k.max(1)).step_by(kc) {
        let kb = kc.min(k - pc);
        let beta = if pc == 0 { beta } else { A::Acc::one() };
        for jr in (0..n).step_by(nr) {
            for ir in (0..m).step_by(mr) {
                let args = SupUkrArgs {
                    m: mr.min(m - ir),
                    n: nr.min(n - jr),
                    k: kb,
                    alpha,
                    a: a_ptr.wrapping_add(ir).wrapping_offset(pc as isize * cs_a),
                    cs_a,
                    b: b.as_ptr().wrapping_offset(
                        jr as isize * b.col_stride() + pc as isize * b.row_stride(),
                    ),
                    rs_b: b.row_stride(),
                    cs_b: b.col_stride(),
                    beta,
                    c: c.ptr_at(ir, jr),
                    rs_c: c.row_stride(),
                    cs_c: c.col_stride(),
                };
                // SAFETY: the tile's rows ir.. (< m) and columns jr.. (< n) and the k block
                // pc..pc + kb (<= k) of A (unit row stride, column stride cs_a: either the
                // checked view or the copy), B (the checked view) and C (exclusively
                // borrowed) are in range, with m, n within the kernel's tile; the context's
                // kernel runs on this CPU.
                unsafe { ukr(&args) };
            }
        }
    }
    Ok(())
}

/// The k block of the sup path for an m×k A of `size`-byte elements: all of k unless A is
/// more than twice `block_bytes`, else k split evenly into blocks whose slice of A is at
/// most about `block_bytes` (at least one column).
fn k_block(m: usize, k: usize, size: usize, block_bytes: usize) -> usize {
    let column = m.max(1).saturating_mul(size);
    if block_bytes == 0 || column.saturating_mul(k) <= block_bytes.saturating_mul(2) {
        return k.max(1);
    }
    let blocks = k.div_ceil((block_bytes / column).max(1));
    k.div_ceil(blocks)
}

#[cfg(test)]
mod tests {
    use super::k_block;

    #[test]
    fn k_blocks_split_only_large_a_and_evenly() {
        // 64×4096 f64 (2 MiB) against 256 KiB blocks: 512 columns each.
        assert_eq!(k_block(64, 4096, 8, 256 << 10), 512);
        // Uneven: 64×4000 in blocks of at most 512 → 8 blocks of 500.
        assert_eq!(k_block(64, 4000, 8, 256 << 10), 500);
        // 16×4096 f64 is 512 KiB, not more than twice 256 KiB: whole.
        assert_eq!(k_block(16, 4096, 8, 256 << 10), 4096);
        // Off, k = 0, and a column bigger than the block.
        assert_eq!(k_block(64, 4096, 8, 0), 4096);
        assert_eq!(k_block(64, 0, 8, 256 << 10), 1);
        assert_eq!(k_block(1 << 20, 7, 8, 1024), 1);
    }
}
