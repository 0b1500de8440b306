//! bf16 × bf16 → f32 microkernel for AVX-512 (skx): C := alpha·Ap·Bp + beta·C on a 32×12 f32
//! tile from packed bf16 panels.
//!
//! * dtypes: A and B bf16, C, alpha, beta f32; MR×NR = 32×12.
//! * CPU features: AVX-512 F (no BF16 extension needed: bf16 widens to f32 exactly by a
//!   16-bit shift).
//! * Packed layouts: the contract in `kernels/mod.rs`, in bf16 elements. C: prefers columns,
//!   any strides work.
//! * beta == 0: C is written without being read.
//! * Per k step: 2 loads of 16 bf16 widened to f32 (vpmovzxwd + vpslld each), 12 B elements
//!   converted and broadcast, 24 f32 FMAs: the sgemm kernel's work plus the widening. The
//!   body is `kernels/x86/gemm_real.rs` with `E = bf16` (`Packed` in `kernels/x86/simd.rs`).
//!   Not done: `vdpbf16ps` (AVX512_BF16, two k steps per instruction with pair-interleaved
//!   packing), which would double the arithmetic rate where the CPU has it.

use crate::kernels::GemmUkrArgs;
use crate::kernels::x86::gemm_real::gemm_real;
use crate::kernels::x86::simd::Zmm32;
use crate::types::bf16;

/// The kernel. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×12 tiles, on a CPU with AVX-512 F.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_b16_32x12(args: &GemmUkrArgs<bf16, bf16>) {
    // SAFETY: the same contract, in a function compiled with the body's target features.
    unsafe { gemm_real::<Zmm32, bf16, 2, 12, 1>(args) }
}
