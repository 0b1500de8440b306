//! dgemm microkernel for AVX2 + FMA (haswell): C := alpha·Ap·Bp + beta·C on an 8×6 tile.
//!
//! * dtype: f64; MR×NR = 8×6.
//! * CPU features: AVX2, FMA.
//! * Packed layouts: the contract in `kernels/mod.rs`. C: prefers columns (unit row
//!   stride), any strides work.
//! * beta == 0: C is written without being read.
//! * Register map: 12 accumulators (2 ymm × 6 columns), 2 A vectors, 1 broadcast register;
//!   per k step 2 loads, 6 broadcasts, 12 FMAs; k unrolled 4× (dgemm 512³–2048³ +4–19 % over
//!   one step per trip on a Zen 3: `docs/Performance.md`, "Four k steps per trip").
//! * The body, its prefetching and reasoning: `kernels/x86/gemm_real.rs`.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_real::gemm_real;
use crate::kernels::x86::simd::Ymm64;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 8×6 tiles, on a CPU with AVX2, FMA.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn gemm_f64_8x6(args: &GemmUkrArgs<f64, f64>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_real::<Ymm64, f64, 2, 6, 4>(args) }
}
