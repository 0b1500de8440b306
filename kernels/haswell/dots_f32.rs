//! sgemm dots kernel for AVX2 + FMA (haswell): C (m×n, m ≤ 8) := alpha·A·B + beta·C with A's
//! rows and B's columns contiguous along k, each element of C one dot product. For short,
//! wide C whose B has contiguous columns (`frame/l3/dots.rs`).
//!
//! * dtype: f32; CPU features: AVX2 and FMA.
//! * Vectors along k; R·G accumulators for R rows and G columns of B at a time. A's rows
//!   read in place where contiguous, gathered onto the stack first where not.
//! * beta == 0: C is written without being read.
//! * The body and its reasoning: `kernels/x86/dots_real.rs`.

use crate::kernels::DotsUkrArgs;
use crate::kernels::x86::dots_real::{dots_gathered, dots_in_place};
use crate::kernels::x86::simd::Ymm32;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::DotsUkr`] contract, on a CPU with AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dots_f32(args: &DotsUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features;
    // `gathered` gets the calls whose A has rows that are not contiguous.
    unsafe {
        if args.cs_a == 1 {
            dots_in_place::<Ymm32>(args)
        } else {
            gathered(args)
        }
    }
}

/// A call whose A's rows are not contiguous, in its own function (why: `dots_gathered`).
///
/// # Safety
/// The [`crate::kernels::DotsUkr`] contract, on a CPU with the features above.
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
unsafe fn gathered(args: &DotsUkrArgs<f32, f32>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { dots_gathered::<Ymm32>(args) }
}
