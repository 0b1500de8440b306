//! The skx kernel set: AVX-512 microkernels (Skylake-X and later Xeons, Ice Lake, Sapphire
//! Rapids without AMX, Zen 4). Registered by `config/skx.rs`. Each real dtype has a packed
//! kernel (`gemm_*`) and a sup kernel (`sup_*`) that reads A and B in place for small
//! problems, a tall-A kernel (`tall_*`) for C with few columns and a large A, a dots kernel
//! (`dots_*`) for short, wide C with B's columns contiguous, and a short-k kernel (`short_k_*`)
//! for products of k ≤ 16; the complex dtypes have
//! packed kernels (`gemm_c32_16x6`, `gemm_c64_8x6`) and sup kernels of the same tiles
//! (`sup_c32_16x6`, `sup_c64_8x6`); bf16 → f32
//! has a packed kernel (`gemm_b16_32x12`, or `gemm_b16dp_32x12` where the CPU has AVX512_BF16),
//! and i8 × i8 / u8 × i8 → i32 VNNI ones (`gemm_i8_32x12`, `gemm_u8i8_32x12`, used when the
//! CPU has AVX-512 VNNI).

mod dots_f32;
mod dots_f64;
mod gemm_b16_32x12;
mod gemm_b16dp_32x12;
mod gemm_c32_16x6;
mod gemm_c64_8x6;
mod gemm_f32_32x12;
mod gemm_f64_16x12;
mod gemm_i8_32x12;
mod gemv_c32;
mod gemv_c64;
mod gemv_f32;
mod gemv_f64;
mod short_k_f32;
mod short_k_f64;
mod sup_c32_16x6;
mod sup_c64_8x6;
mod sup_f32_32x12;
mod sup_f64_16x12;
mod tall_f32_16x24;
mod tall_f64_8x24;

pub use dots_f32::dots_f32;
pub use dots_f64::dots_f64;
pub use gemm_b16_32x12::gemm_b16_32x12;
pub use gemm_b16dp_32x12::gemm_b16dp_32x12;
pub use gemm_c32_16x6::gemm_c32_16x6;
pub use gemm_c64_8x6::gemm_c64_8x6;
pub use gemm_f32_32x12::gemm_f32_32x12;
pub use gemm_f64_16x12::gemm_f64_16x12;
pub use gemm_i8_32x12::{gemm_i8_32x12, gemm_u8i8_32x12};
pub use gemv_c32::gemv_c32;
pub use gemv_c64::gemv_c64;
pub use gemv_f32::{gemv_columns_f32, gemv_f32};
pub use gemv_f64::{gemv_columns_f64, gemv_f64};
pub use short_k_f32::short_k_f32;
pub use short_k_f64::short_k_f64;
pub use sup_c32_16x6::sup_c32_16x6;
pub use sup_c64_8x6::sup_c64_8x6;
pub use sup_f32_32x12::sup_f32_32x12;
pub use sup_f64_16x12::sup_f64_16x12;
pub use tall_f32_16x24::tall_f32_16x24;
pub use tall_f64_8x24::tall_f64_8x24;
