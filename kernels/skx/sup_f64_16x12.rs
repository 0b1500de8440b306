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
use crate::kernels::x86::sup_real::{sup_real, sup_real_full};

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
            sup_real::<Zmm64, Vl<Ymm64>, 12>(args)
        }
    }
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
        if args.k >= ONE_PASS_MIN_K && args.rs_b == 1 && b_columns_spread(args.cs_b) {
            full_in_one_pass(args)
        } else {
            // Halves of 6 columns; up to 8 in one pass at any k (measured: `sup_real_full`).
            sup_real_full::<Zmm64, 12, 6, 8, 0>(args)
        }
    }
}

/// The shortest k for which a full tile whose B columns spread over the L1's sets goes in one
/// pass of up to 12 columns ([`full_in_one_pass`]).
const ONE_PASS_MIN_K: usize = 384;

/// Whether 12 columns of a column-stored B, `cs_b` elements apart, fall into at least four
/// L1 sets (three lines a set at most): their stride, modulo 2 KiB, at least a line. Strides
/// of whole 2 KiB (dgemm 1536³, 2048³, 3072³: 12, 16 and 24 KiB) put them in one or two
/// sets; there the halves keep six columns' lines per set.
#[inline(always)]
fn b_columns_spread(cs_b: isize) -> bool {
    (cs_b.unsigned_abs() * size_of::<f64>()) % 2048 >= 64
}

/// A full tile of up to 12 columns in one pass over k: A's two vectors loaded once per k step
/// for all 12 columns, where the halves load them twice. Measured (session 32, one thread,
/// NN, the packed-A path, against the halves, three runs; `docs/Performance.md`): dgemm
/// 1000³ +0.4 / +1.6 / +3.5 %, 2000³ +1.8 / +4.4 %, 3000³ +2.7 / +2.2 / +4.1 %, 500³ +2.8 /
/// +0.5 / +3.1 %, TN 1000³ and 3000³ +1.5–1.9 %; with B's columns 12 or 16 KiB apart
/// (1536³, 2048³) one pass lost 12 %, hence [`b_columns_spread`]. In its own
/// function, for its own register allocation (why: `sup_real_full`).
///
/// # Safety
/// As [`full`].
#[target_feature(enable = "avx512f")]
#[inline(never)]
unsafe fn full_in_one_pass(args: &SupUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { sup_real_full::<Zmm64, 12, 6, 12, 0>(args) }
}
