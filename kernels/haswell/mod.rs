//! The haswell kernel set: AVX2 + FMA microkernels (Haswell and later, Zen 1–3). Registered
//! by `config/haswell.rs`. Complex dtypes still use the reference kernels.

mod gemm_f32_16x6;
mod gemm_f64_8x6;

pub use gemm_f32_16x6::gemm_f32_16x6;
pub use gemm_f64_8x6::gemm_f64_8x6;
