//! The tall path for cgemm and zgemm, through the real tall kernel: a complex C of few
//! columns whose column-stored A is large (4096×16×4096) is computed by the `f32` or `f64`
//! tall path ([`gemm_tall`]) on A's real parts, then combined.
//!
//! A column-stored complex A, m×k, is also a real 2m×k matrix (each complex row becomes a
//! real part and an imaginary part, adjacent; columns 2·lda reals apart). With B split into
//! its parts side by side, B′ = [re b₀, im b₀, re b₁, im b₁, …] (k×2n, real), one real
//! product D = A·B′ (2m×2n) holds every partial sum C needs:
//!
//! ```text
//! re c(i, j) = D(2i, 2j) − D(2i+1, 2j+1)      (re a·re b − im a·im b)
//! im c(i, j) = D(2i+1, 2j) + D(2i, 2j+1)      (im a·re b + re a·im b)
//! ```
//!
//! So A, the operand this shape streams from memory, is read once, in place, by the real
//! tall kernel (which reads it by narrow k blocks past the L2: `frame/l3/tall.rs`), where the
//! complex path packed it. B′ (k×2n) and D (twice C's size) are small beside A. conj(A) is
//! conj(A·conj(B)): B′'s imaginary parts negated and the sum conjugated.
//!
//! Taken where the real kernel's tall path suits the real shape (2m×2n×k: `TallKernel::
//! suits`) with the real C at most 4/3 of the kernel's NT wide
//! ([`MOST_SECOND_GROUP_FRACTION`]): n at most 12 in cache and 16 from memory on skx, 6 and
//! 8 on haswell.

use num_complex::Complex;

use crate::cntx::TallKernel;
use crate::error::{Error, ErrorKind, Result};
use crate::l3::tall::gemm_tall;
use crate::packbuf::PackBuf;
use crate::types::{GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The widest real C taken: NT and at most NT / 3 more (skx: 32 real columns, C of 16;
/// haswell: 16 and 8). From memory the real C may be two groups of NT columns, but where
/// the second is wider, the complex path's packing did better (skx, a Zen 4, one thread,
/// 21 samples alternated, against packing: zgemm and cgemm 4096×16×4096 1.10, 4096×20×4096
/// 0.95 and 0.91; haswell forced there: cgemm 4096×8×4096 1.11–1.17, 4096×12×4096 0.89).
const MOST_SECOND_GROUP_FRACTION: usize = 3;

/// C := alpha·op(A)·op(B) + beta·C through `tall`, the real parts' tall kernel, on a team of
/// `threads` (as [`gemm_tall`]). `None`, with nothing touched, where the problem does not
/// suit it (A not column-stored, or the real shape not one `tall` takes); the caller's path
/// then runs as before. `alpha` already holds the views' scalars (`gemm_front`). Scratch
/// that does not fit in memory is an `OutOfMemory` error, with C untouched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_tall_by_real_parts<T>(
    tall: &TallKernel<T, T>,
    alpha: Complex<T>,
    a: &MatRef<Complex<T>>,
    b: &MatRef<Complex<T>>,
    beta: Complex<T>,
    c: &mut MatMut<Complex<T>>,
    threads: usize,
    pin: bool,
) -> Option<Result<()>>
where
    T: GemmPair<T> + Scalar,
    Complex<T>: Scalar,
{
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let (rows, cols) = (m.checked_mul(2)?, n.checked_mul(2)?);
    let nt = tall.tile().1;
    if a.row_stride() != 1
        || cols > nt + nt / MOST_SECOND_GROUP_FRACTION
        || !tall.suits(rows, cols, k)
    {
        return None;
    }
    let cs = a.col_stride().checked_mul(2)?;
    // SAFETY: `Complex<T>` is `repr(C)`, its real part then its imaginary part, so real
    // element (2i + r, p) at `2i + r + p·cs` (cs = 2·cs_a) is part r of A's element (i, p),
    // which A's view promises readable for as long as `a` is borrowed; the real view lives
    // only in this call.
    let a_real = unsafe { MatRef::from_raw_parts(a.as_ptr().cast::<T>(), rows, k, 1, cs) }.ok()?;
    Some(by_real_parts(
        tall,
        alpha,
        &a_real,
        a.is_conj(),
        b,
        beta,
        c,
        threads,
        pin,
    ))
}

/// The body of [`gemm_tall_by_real_parts`], with A as its real 2m×k view `a_real`, and
/// `conj_a` whether op(A) conjugates it.
#[allow(clippy::too_many_arguments)]
fn by_real_parts<T>(
    tall: &TallKernel<T, T>,
    alpha: Complex<T>,
    a_real: &MatRef<T>,
    conj_a: bool,
    b: &MatRef<Complex<T>>,
    beta: Complex<T>,
    c: &mut MatMut<Complex<T>>,
    threads: usize,
    pin: bool,
) -> Result<()>
where
    T: GemmPair<T> + Scalar,
    Complex<T>: Scalar,
{
    let (m, n, k) = (c.nrows(), c.ncols(), a_real.ncols());
    let (rows, cols) = (2 * m, 2 * n);
    // Both scratches first: running out of memory leaves C untouched.
    let b_len = k.checked_mul(cols);
    let d_len = rows.checked_mul(cols);
    let (Some(b_bytes), Some(d_bytes)) = (
        b_len.and_then(|len| len.checked_mul(size_of::<T>())),
        d_len.and_then(|len| len.checked_mul(size_of::<T>())),
    ) else {
        let what = format!(
            "gemm: the complex tall path's scratch ({k}×{cols} and {rows}×{cols} reals) does not fit in memory"
        );
        return Err(Error::new(ErrorKind::OutOfMemory, what));
    };
    let mut b_buf = PackBuf::checkout(b_bytes)?;
    let mut d_buf = PackBuf::checkout(d_bytes)?;

    // B′ (k×2n, column-major): op(B)'s parts, conjugated with A (see the module docs); B's
    // own conjugation is its view's flag.
    let b_parts = b_buf.as_mut_slice::<T>(k * cols);
    let negate_im = b.is_conj() != conj_a;
    for j in 0..n {
        let (re_col, im_col) = b_parts[2 * j * k..][..2 * k].split_at_mut(k);
        for p in 0..k {
            // SAFETY: p < k and j < n, op(B)'s shape.
            let v = unsafe { b.read_stored(p, j) };
            re_col[p] = v.re;
            im_col[p] = if negate_im { -v.im } else { v.im };
        }
    }
    let b_real = MatRef::col_major(b_parts, k, cols, k)?;

    // D = A·B′, 2m×2n: written whole (beta = 0: the scratch's old contents are never read).
    let d_slice = d_buf.as_mut_slice::<T>(rows * cols);
    let mut d = MatMut::col_major(d_slice, rows, cols, rows)?;
    gemm_tall(
        tall,
        T::one(),
        a_real,
        &b_real,
        T::zero(),
        &mut d,
        threads,
        pin,
    )?;

    let d = &*d_slice;
    let beta_zero = beta.is_zero();
    for j in 0..n {
        let (by_re, by_im) = (&d[2 * j * rows..][..rows], &d[(2 * j + 1) * rows..][..rows]);
        for i in 0..m {
            let re = by_re[2 * i] - by_im[2 * i + 1];
            let im = by_re[2 * i + 1] + by_im[2 * i];
            let sum = Complex::new(re, if conj_a { -im } else { im });
            let at = c.ptr_at(i, j);
            // SAFETY: (i, j) is in C's view, which is exclusively borrowed; with beta = 0, C
            // is written without being read (BLAS: NaN in C does not propagate).
            unsafe {
                *at = if beta_zero {
                    alpha * sum
                } else {
                    alpha * sum + beta * *at
                };
            }
        }
    }
    Ok(())
}
