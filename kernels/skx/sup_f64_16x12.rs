//! dgemm sup microkernel for AVX-512 (skx): one m×n tile (m ≤ 16, n ≤ 12) of
//! C := alpha·A·B + beta·C with A and B read in place (no packing), for small problems.
//!
//! * dtype: f64; MR×NR = 16×12; edges handled by the body (masked rows, one instance per
//!   column count and shape of row vectors; last rows that fit in 4 lanes go in a ymm).
//! * CPU features: AVX-512 F and VL.
//! * A: unit row stride, column stride cs_a. B: any strides (elements are broadcast). C:
//!   prefers columns (unit row stride: masked vector loads/stores), any strides work.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/sup_real.rs`.

use crate::kernels::SupUkrArgs;
use crate::kernels::x86::simd::{Vl, Ymm64, Zmm64};
use crate::kernels::x86::sup_real::{full_tile_in_one_pass, sup_real, sup_real_full};

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract for tiles up to 16×12, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
pub unsafe fn sup_f64_16x12(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features;
    // `full` gets exactly the tiles of full rows and column-stored C.
    unsafe {
        if args.m == 16 && args.rs_c == 1 {
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
/// The [`crate::kernels::SupUkr`] contract for tiles up to 16×12, on a CPU with AVX-512 F
/// and VL.
#[target_feature(enable = "avx512f,avx512vl")]
#[inline(never)]
unsafe fn edge(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real::<Zmm64, Vl<Ymm64>, 12, 1>(args) }
}

/// A tile of 16 rows (any columns up to 12) with column-stored C, in its own function
/// (why: `sup_real_full`).
///
/// # Safety
/// The [`crate::kernels::SupUkr`] contract with `args.m == 16` and `args.rs_c == 1`, on a
/// CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn full(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in functions compiled with the body's target features.
    unsafe {
        if full_tile_in_one_pass(args) {
            full_in_one_pass(args)
        } else {
            // Halves of 6 columns; up to 8 in one pass at any k (measured: `sup_real_full`).
            sup_real_full::<Zmm64, 12, 6, 8, 0>(args)
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
unsafe fn full_in_one_pass(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real_full::<Zmm64, 12, 6, 12, 0>(args) }
}
