//! The gemv body for real dtypes, written once over [`Simd`] and instantiated by the kernel
//! files (`kernels/skx/gemv_f32.rs`, …) inside their `#[target_feature]` shells. The contract
//! is `GemvUkr` in `kernels/mod.rs`.
//!
//! Memory-bound, so the point is reading A once, in the order its memory runs:
//!
//! * A's columns contiguous (unit row stride), y contiguous: axpy form. y := beta·y, then for
//!   each block of 4 columns, y += A(:, p..p+4)·(alpha·x(p..p+4)), walking down the rows
//!   one vector at a time: 4 A loads, 1 y load and store, 4 FMAs per vector; y stays in L1
//!   for the m this path gets (it is a column, m·size bytes).
//! * A's rows contiguous (unit column stride), x contiguous: dot form. y(i) = alpha·(A(i, :)·x)
//!   + beta·y(i), four vector accumulators per row, summed at the end.
//! * Anything else: the reference kernel. When both forms apply, the dot form is used for
//!   fewer rows than a vector holds (a single row is a dot product).
//!
//! Row tails are masked loads/stores. beta == 0: y is not read.

use crate::kernels::GemvUkrArgs;
use crate::kernels::reference::gemv_ukr;
use crate::kernels::x86::simd::Simd;
use crate::types::{Element, Scalar};

/// The body. See the module docs.
///
/// # Safety
/// The `GemvUkr` contract, called from a function compiled with `V`'s target features on a
/// CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemv_real<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    // SAFETY: passed on; each form touches only A(i, p), x(p), y(i) with i < m, p < k.
    unsafe {
        match form(args, V::LANES, true) {
            Form::Dot => dot_form::<V>(args),
            Form::Axpy => axpy_form::<V>(args),
            Form::Reference => gemv_ukr(args),
        }
    }
}

/// How a gemv walks A.
pub(crate) enum Form {
    /// Row by row, each row a dot product with x (A's rows and x contiguous).
    Dot,
    /// Column block by column block, y updated in place (A's columns and y contiguous).
    Axpy,
    /// Neither layout: the reference kernel.
    Reference,
}

/// The form for `args`, given how many rows one register holds and whether the axpy form
/// can serve this call (the complex body cannot conjugate A there). When both apply, fewer
/// rows than a register holds is a dot product (a single row is one).
pub(crate) fn form<A: Element, B: Element>(
    args: &GemvUkrArgs<A, B>,
    rows_per_vector: usize,
    axpy_allowed: bool,
) -> Form {
    let dot_ok = args.cs_a == 1 && args.inc_x == 1;
    let axpy_ok = axpy_allowed && args.rs_a == 1 && args.inc_y == 1;
    if dot_ok && (!axpy_ok || args.m < rows_per_vector) {
        Form::Dot
    } else if axpy_ok {
        Form::Axpy
    } else {
        Form::Reference
    }
}

/// y := beta·y + A·(alpha·x) by blocks of four columns (A column-stored, y contiguous).
#[inline(always)]
unsafe fn axpy_form<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    let (m, k) = (args.m, args.k);
    let lanes = V::LANES;
    // SAFETY: rows below m (masked at the tail), columns below k, as the contract allows.
    unsafe {
        let beta = V::splat(args.beta);
        for i in (0..m).step_by(lanes) {
            let mask = V::mask(m - i);
            let y = args.y.add(i);
            let v = if args.beta.is_zero() {
                V::zero()
            } else {
                V::mul(beta, V::load_masked(y, mask))
            };
            V::store_masked(y, mask, v);
        }
        let col = |p: usize| args.a.offset(p as isize * args.cs_a);
        let scaled_x = |p: usize| args.alpha * *args.x.offset(p as isize * args.inc_x);
        let mut p = 0;
        while p + 4 <= k {
            let (a0, a1, a2, a3) = (col(p), col(p + 1), col(p + 2), col(p + 3));
            let s = [
                V::splat(scaled_x(p)),
                V::splat(scaled_x(p + 1)),
                V::splat(scaled_x(p + 2)),
                V::splat(scaled_x(p + 3)),
            ];
            for i in (0..m).step_by(lanes) {
                let mask = V::mask(m - i);
                let y = args.y.add(i);
                let mut v = V::load_masked(y, mask);
                v = V::fma(V::load_masked(a0.add(i), mask), s[0], v);
                v = V::fma(V::load_masked(a1.add(i), mask), s[1], v);
                v = V::fma(V::load_masked(a2.add(i), mask), s[2], v);
                v = V::fma(V::load_masked(a3.add(i), mask), s[3], v);
                V::store_masked(y, mask, v);
            }
            p += 4;
        }
        while p < k {
            let (a0, s0) = (col(p), V::splat(scaled_x(p)));
            for i in (0..m).step_by(lanes) {
                let mask = V::mask(m - i);
                let y = args.y.add(i);
                let v = V::fma(V::load_masked(a0.add(i), mask), s0, V::load_masked(y, mask));
                V::store_masked(y, mask, v);
            }
            p += 1;
        }
    }
}

/// y(i) := alpha·(A(i, :)·x) + beta·y(i), row by row (A row-stored, x contiguous).
#[inline(always)]
unsafe fn dot_form<V: Simd>(args: &GemvUkrArgs<V::Elem, V::Elem>)
where
    V::Elem: Scalar,
{
    let (m, k) = (args.m, args.k);
    let lanes = V::LANES;
    // SAFETY: columns below k (masked at the tail), rows below m, as the contract allows.
    unsafe {
        for i in 0..m {
            let row = args.a.offset(i as isize * args.rs_a);
            let mut acc = [V::zero(); 4];
            let mut p = 0;
            while p + 4 * lanes <= k {
                for (j, acc_j) in acc.iter_mut().enumerate() {
                    let q = p + j * lanes;
                    *acc_j = V::fma(V::load(row.add(q)), V::load(args.x.add(q)), *acc_j);
                }
                p += 4 * lanes;
            }
            while p < k {
                let mask = V::mask(k - p);
                acc[0] = V::fma(
                    V::load_masked(row.add(p), mask),
                    V::load_masked(args.x.add(p), mask),
                    acc[0],
                );
                p += lanes;
            }
            let total = V::add(V::add(acc[0], acc[1]), V::add(acc[2], acc[3]));
            let mut parts = [V::Elem::zero(); 16];
            V::store(parts.as_mut_ptr(), total);
            let sum = parts[..lanes].iter().fold(V::Elem::zero(), |s, &x| s + x);
            let y = args.y.offset(i as isize * args.inc_y);
            let old = if args.beta.is_zero() {
                V::Elem::zero()
            } else {
                args.beta * *y
            };
            *y = args.alpha * sum + old;
        }
    }
}
