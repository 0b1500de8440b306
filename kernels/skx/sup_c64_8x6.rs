//! zgemm sup microkernel for AVX-512 (skx): one m×n tile (m ≤ 8, n ≤ 6) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: `Complex<f64>`; MR×NR = 8×6 (the packed kernel's tile, so it also serves the packed
//!   path's edge tiles); edges handled by the body (masked rows, one instance per column
//!   count and shape of row vectors).
//! * CPU features: AVX-512 F and VL (last rows that fit go in a ymm).
//! * A: unit row stride, column stride cs_a, not conjugated. B: any strides (real and
//!   imaginary parts broadcast), not conjugated. C: prefers columns (unit row stride: masked
//!   vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/sup_complex.rs`.

use num_complex::Complex;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::{Vl, Ymm64, Zmm64};
use crate::kernels::x86::sup_complex::{sup_complex, sup_complex_full};

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 8×6, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
pub unsafe fn sup_c64_8x6(args: &SupUkrArgs<Complex<f64>, Complex<f64>>) {
    // SAFETY: the same contract, in a function compiled with the body's target features;
    // `full` gets exactly the full tiles.
    unsafe {
        if args.m == 8 && args.n == 6 {
            full(args)
        } else {
            edge(args)
        }
    }
}

/// Every other tile (partial rows or columns), in its own function so that the dispatch
/// above stays a bare test and jump (as in `sup_f64_16x12.rs`: inlined, the body's prologue
/// ran before every call of `full` too).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 8×6, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
#[inline(never)]
unsafe fn edge(args: &SupUkrArgs<Complex<f64>, Complex<f64>>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_complex::<Zmm64, Vl<Ymm64>, 6>(args) }
}

/// A full 8×6 tile, in its own function (why: `sup_real_full` in `sup_real.rs`).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with `args.m == 8`, `args.n == 6`, on a CPU
/// with AVX-512 F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn full(args: &SupUkrArgs<Complex<f64>, Complex<f64>>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_complex_full::<Zmm64, 6>(args) }
}
