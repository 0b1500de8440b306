//! zgemm sup microkernel for AVX2 + FMA (haswell): one m×n tile (m ≤ 4, n ≤ 3) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: `Complex<f64>`; MR×NR = 4×3 (the packed kernel's tile, so it also serves the packed
//!   path's edge tiles; three columns for the reason `gemm_c32_8x3.rs` gives); edges handled
//!   by the body (masked rows, one instance per column count and number of row vectors).
//! * CPU features: AVX2, FMA.
//! * A: unit row stride, column stride cs_a, not conjugated. B: any strides (real and
//!   imaginary parts broadcast), not conjugated. C: prefers columns (unit row stride: masked
//!   vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/sup_complex.rs`.

use num_complex::Complex;

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::Ymm64;
use crate::kernels::x86::sup_complex::{sup_complex, sup_complex_full};

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 4×3, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn sup_c64_4x3(args: &SupUkrArgs<Complex<f64>, Complex<f64>>) {
    // SAFETY: the same contract, in a function compiled with the body's target features;
    // `full` gets exactly the full tiles.
    unsafe {
        if args.m == 4 && args.n == 3 {
            full(args)
        } else {
            sup_complex::<Ymm64, Ymm64, 3>(args)
        }
    }
}

/// A full 4×3 tile, in its own function (why: `sup_real_full` in `sup_real.rs`).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with `args.m == 4`, `args.n == 3`, on a CPU with
/// AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
unsafe fn full(args: &SupUkrArgs<Complex<f64>, Complex<f64>>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_complex_full::<Ymm64, 3>(args) }
}
