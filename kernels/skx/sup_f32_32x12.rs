//! sgemm sup microkernel for AVX-512 (skx): one m×n tile (m ≤ 32, n ≤ 12) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f32; MR×NR = 32×12; edges handled by the body (masked rows, one instance per
//!   column count and shape of row vectors; last rows that fit in 8 lanes go in a ymm).
//! * CPU features: AVX-512 F and VL.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast). C:
//!   prefers columns (unit row stride: masked vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/sup_real.rs`.

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::{Vl, Ymm32, Zmm32};
use crate::kernels::x86::sup_real::{full_tile_in_one_pass, sup_real, sup_real_full};

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 32×12, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
pub unsafe fn sup_f32_32x12(args: &SupUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features;
    // `full` gets exactly the tiles of full rows and column-stored C.
    unsafe {
        if args.m == 32 && args.rs_c == 1 {
            full(args)
        } else {
            edge(args)
        }
    }
}

/// Every other tile: partial rows, or C not column-stored. In its own function so that the
/// dispatch above stays a bare test and jump: inlined, the body's prologue (six registers
/// saved, a 3 KiB frame) ran before every call of `full` too (session 36).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 32×12, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
#[inline(never)]
unsafe fn edge(args: &SupUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real::<Zmm32, Vl<Ymm32>, 12, 1>(args) }
}

/// A tile of 32 rows (any columns up to 12) with column-stored C, in its own function
/// (why: `sup_real_full`).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with `args.m == 32` and `args.rs_c == 1`, on a
/// CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn full(args: &SupUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in functions compiled with the body's target features.
    unsafe {
        if full_tile_in_one_pass(args) {
            full_in_one_pass(args)
        } else {
            // Halves of 6 columns; up to 8 in one pass from k = 128 (measured: `sup_real_full`).
            sup_real_full::<Zmm32, 12, 6, 8, 128>(args)
        }
    }
}

/// A full tile of up to 12 columns in one pass over k, where B's columns spread over the L1
/// (measured: `full_tile_in_one_pass`). In its own function, for its own register
/// allocation (why: `sup_real_full`).
///
/// # Safety
/// As [`full`].
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn full_in_one_pass(args: &SupUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real_full::<Zmm32, 12, 6, 12, 0>(args) }
}
