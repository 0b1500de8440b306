//! The skx kernel set: AVX-512 microkernels (Skylake-X and later Xeons, Ice Lake, Sapphire
//! Rapids without AMX, Zen 4). Registered by `config/skx.rs`. Complex dtypes still use the
//! reference kernels.

mod gemm_f32_32x12;
mod gemm_f64_16x12;

pub use gemm_f32_32x12::gemm_f32_32x12;
pub use gemm_f64_16x12::gemm_f64_16x12;
