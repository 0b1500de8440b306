//! Reference gemv kernel: y := alpha·op(A)·x + beta·y, for every [`Scalar`] dtype.
//!
//! * Portable Rust, no CPU features; any strides; conjugation by flag.
//! * A is walked in the order its memory runs: column by column (axpy form, y updated in
//!   place) when its rows are closer together, row by row (dot form) otherwise.
//! * beta == 0: y is written without being read.

use crate::kernels::GemvUkrArgs;
use crate::types::Scalar;

/// The reference gemv kernel.
///
/// # Safety
/// The [`crate::kernels::GemvUkr`] contract.
pub unsafe fn gemv_ukr<T: Scalar>(args: &GemvUkrArgs<T, T>) {
    let (m, k) = (args.m, args.k);
    let op = |v: T, conj: bool| if conj { v.conj() } else { v };
    // SAFETY: every access is A(i, p), x(p) or y(i) with i < m, p < k: valid by contract.
    unsafe {
        let a = |i: usize, p: usize| {
            op(
                *args
                    .a
                    .offset(i as isize * args.rs_a + p as isize * args.cs_a),
                args.conj_a,
            )
        };
        let x = |p: usize| op(*args.x.offset(p as isize * args.inc_x), args.conj_x);
        let y = |i: usize| args.y.offset(i as isize * args.inc_y);
        if args.rs_a.unsigned_abs() <= args.cs_a.unsigned_abs() {
            // Axpy form: y := beta·y, then y += (alpha·x(p))·A(:, p) column by column.
            for i in 0..m {
                *y(i) = if args.beta.is_zero() {
                    T::zero()
                } else {
                    args.beta * *y(i)
                };
            }
            for p in 0..k {
                let s = args.alpha * x(p);
                for i in 0..m {
                    *y(i) = *y(i) + s * a(i, p);
                }
            }
        } else {
            // Dot form: y(i) := alpha·(A(i, :)·x) + beta·y(i).
            for i in 0..m {
                let mut sum = T::zero();
                for p in 0..k {
                    sum = sum + a(i, p) * x(p);
                }
                let old = if args.beta.is_zero() {
                    T::zero()
                } else {
                    args.beta * *y(i)
                };
                *y(i) = args.alpha * sum + old;
            }
        }
    }
}
