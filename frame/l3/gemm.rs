//! The gemm loop nest, read top to bottom (Goto's algorithm, BLIS's five loops):
//!
//! ```text
//! jc: for each NC-wide column block of C and B            (loop 5)
//!   pc: for each KC-deep slice of k                        (loop 4)
//!         pack B[pc.., jc..] → Bp  (KC×NC, NR-wide panels)
//!     ic: for each MC-tall row block of C and A            (loop 3)
//!           pack A[ic.., pc..] → Ap  (MC×KC, MR-tall panels)
//!           macrokernel: jr (NR) → ir (MR) → microkernel   (loops 2, 1)
//! ```
//!
//! Called by the API (`frame/api.rs`) after the arguments were checked. [`gemm_front`]
//! settles the cases that need no loop nest and orients the problem to the kernel's
//! preferred C storage; [`gemm_nest`] runs the loops. Threads (issue #3) will split jc, pc,
//! ic, jr and ir; today every loop runs on the calling thread. Docs: `docs/KernelsHowTo.md`.

use crate::cntx::{Blocksizes, Cntx, GemmKernel};
use crate::error::Result;
use crate::l3::macrokernel::macrokernel;
use crate::packm::{pack_a_block, pack_b_block};
use crate::pool::PackBuf;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// C := alpha·op(A)·op(B) + beta·C for checked operands, where alpha is the product of the
/// scalars A and B carry and beta is C's.
pub(crate) fn gemm_front<T: GemmPair<T>>(
    cntx: &Cntx,
    a: MatRef<T>,
    b: MatRef<T>,
    mut c: MatMut<T::Acc>,
) -> Result<()> {
    let alpha = a.scale() * b.scale();
    let beta = c.beta();
    if c.nrows() == 0 || c.ncols() == 0 {
        return Ok(());
    }
    // BLAS: with alpha = 0 or k = 0 the product is absent, and A and B are never read.
    if alpha.is_zero() || a.ncols() == 0 {
        scale_c(beta, &mut c);
        return Ok(());
    }
    let kernel = T::kernel(cntx);
    // Cᵀ = op(B)ᵀ·op(A)ᵀ: when C's storage is the opposite of what the kernel writes
    // fastest, solve the transposed problem instead, so the kernel sees its favourite layout.
    let c_is_row_stored = c.col_stride().unsigned_abs() < c.row_stride().unsigned_abs();
    let c_is_col_stored = c.row_stride().unsigned_abs() < c.col_stride().unsigned_abs();
    let transpose = if kernel.prefers_rows() {
        c_is_col_stored
    } else {
        c_is_row_stored
    };
    if transpose {
        gemm_nest(kernel, alpha, &b.t(), &a.t(), beta, &mut c.t())
    } else {
        gemm_nest(kernel, alpha, &a, &b, beta, &mut c)
    }
}

/// C := beta·C, without reading C when beta = 0 (NaN in C becomes 0).
fn scale_c<T: Scalar>(beta: T, c: &mut MatMut<T>) {
    if beta.is_one() {
        return;
    }
    // Walk the smaller stride innermost.
    let c = if c.row_stride().unsigned_abs() <= c.col_stride().unsigned_abs() {
        c.rb()
    } else {
        c.rb().t()
    };
    for j in 0..c.ncols() {
        for i in 0..c.nrows() {
            let p = c.ptr_at(i, j);
            // SAFETY: (i, j) is in range of a checked, exclusively borrowed view.
            unsafe { *p = if beta.is_zero() { T::zero() } else { beta * *p } };
        }
    }
}

/// The five loops for `c` (m×n) += alpha·`a` (m×k)·`b` (k×n), beta on the first k slice.
fn gemm_nest<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let Blocksizes { mr, nr, kc, mc, nc } = kernel.blocksizes();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());

    // Packed blocks sized for this problem (a small call packs small blocks), taken from the
    // pool so repeated calls allocate nothing. Sizes cannot overflow: each factor is bounded
    // by a blocksize and `Cntx::validate` bounded their products.
    let a_len = mc.min(m.next_multiple_of(mr)) * kc.min(k);
    let b_len = kc.min(k) * nc.min(n.next_multiple_of(nr));
    let mut a_buf = PackBuf::checkout(a_len * size_of::<A>())?;
    let mut b_buf = PackBuf::checkout(b_len * size_of::<B>())?;
    let a_packed = a_buf.as_mut_slice::<A>(a_len);
    let b_packed = b_buf.as_mut_slice::<B>(b_len);

    // Loop 5 (jc): NC-wide column blocks. Independent blocks of C; threads may split here.
    for jc in (0..n).step_by(nc) {
        let nc_cur = nc.min(n - jc);

        // Loop 4 (pc): KC-deep slices of k. Each slice adds into the same C block, so beta
        // scales C only on the first slice; later slices accumulate with beta = 1.
        for pc in (0..k).step_by(kc) {
            let kc_cur = kc.min(k - pc);
            let beta_pc = if pc == 0 { beta } else { A::Acc::one() };
            pack_b_block(&b.submatrix(pc, jc, kc_cur, nc_cur), nr, b_packed);

            // Loop 3 (ic): MC-tall row blocks, each reusing the packed B block from L3 cache.
            for ic in (0..m).step_by(mc) {
                let mc_cur = mc.min(m - ic);
                pack_a_block(&a.submatrix(ic, pc, mc_cur, kc_cur), mr, a_packed);

                // Loops 2 (jr) and 1 (ir) around the microkernel.
                let mut c_block = c.submatrix(ic, jc, mc_cur, nc_cur);
                macrokernel(
                    kernel,
                    alpha,
                    a_packed,
                    b_packed,
                    kc_cur,
                    beta_pc,
                    &mut c_block,
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::cntx::Cntx;
    use crate::kernels::{GemmUkrArgs, reference};
    use crate::view::{MatMut, MatRef};

    thread_local! {
        /// (row stride, column stride) of C at the last kernel call on this thread.
        static LAST_C_STRIDES: Cell<(isize, isize)> = const { Cell::new((0, 0)) };
    }

    /// The reference 4×4 kernel, recording the C strides it was handed.
    unsafe fn recording_ukr(args: &GemmUkrArgs<f64, f64>) {
        LAST_C_STRIDES.set((args.rs_c, args.cs_c));
        // SAFETY: same contract, same MR×NR.
        unsafe { reference::gemm_ukr::<f64, 4, 4>(args) }
    }

    fn context_preferring(rows: bool) -> Cntx {
        // SAFETY: the recording kernel is the portable 4×4 reference kernel.
        unsafe { Cntx::generic_with_test_dgemm(recording_ukr, rows) }
    }

    /// Column-major 8×8 A, B and an 8×8 C with the given strides: C := A·B, then the strides
    /// the kernel saw and whether C is right.
    fn run(rows_preferred: bool, c_row_major: bool) -> ((isize, isize), bool) {
        let n = 8;
        let a: Vec<f64> = (0..n * n).map(|x| (x % 7) as f64 - 3.0).collect();
        let b: Vec<f64> = (0..n * n).map(|x| (x % 5) as f64 - 2.0).collect();
        let mut c = vec![0.0; n * n];
        let av = MatRef::col_major(&a, n, n, n).unwrap();
        let bv = MatRef::col_major(&b, n, n, n).unwrap();
        let cv = if c_row_major {
            MatMut::row_major(&mut c, n, n, n).unwrap()
        } else {
            MatMut::col_major(&mut c, n, n, n).unwrap()
        };
        super::gemm_front(&context_preferring(rows_preferred), av, bv, cv).unwrap();
        let at = |i: usize, j: usize| {
            if c_row_major {
                c[i * n + j]
            } else {
                c[i + j * n]
            }
        };
        let correct = (0..n).all(|i| {
            (0..n).all(|j| at(i, j) == (0..n).map(|p| a[i + p * n] * b[p + j * n]).sum::<f64>())
        });
        (LAST_C_STRIDES.get(), correct)
    }

    #[test]
    fn the_kernel_always_sees_its_preferred_c_storage() {
        for c_row_major in [false, true] {
            let ((rs, cs), correct) = run(true, c_row_major);
            assert!(correct);
            assert_eq!(
                (rs, cs),
                (8, 1),
                "row-preferring kernel, C row-major: {c_row_major}"
            );
            let ((rs, cs), correct) = run(false, c_row_major);
            assert!(correct);
            assert_eq!(
                (rs, cs),
                (1, 8),
                "column-preferring kernel, C row-major: {c_row_major}"
            );
        }
    }
}
