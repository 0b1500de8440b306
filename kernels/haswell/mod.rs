//! The haswell kernel set: AVX2 + FMA microkernels (Haswell and later, Zen 1–3). Registered
//! by `config/haswell.rs`. Each real dtype has a packed kernel (`gemm_*`) and a sup kernel
//! (`sup_*`) that reads A and B in place for small problems, and a dots kernel (`dots_*`) for
//! short, wide C with B's columns contiguous, and a tall-A kernel (`tall_*`) for C with few
//! columns and a large A; the complex dtypes have packed and sup kernels
//! (`gemm_c32_8x3`, `gemm_c64_4x3`, and sup kernels of the same tiles). `transpose_8x8`
//! holds the packing kernels (AVX), which the skx configuration uses too.

mod dots_f32;
mod dots_f64;
mod gemm_c32_8x3;
mod gemm_c64_4x3;
mod gemm_f32_16x6;
mod gemm_f64_8x6;
mod gemv_c32;
mod gemv_c64;
mod gemv_f32;
mod gemv_f64;
mod sup_c32_8x3;
mod sup_c64_4x3;
mod sup_f32_16x6;
mod sup_f64_8x6;
mod tall_f32_8x12;
mod tall_f64_4x12;
mod transpose_8x8;

pub use dots_f32::dots_f32;
pub use dots_f64::dots_f64;
pub use gemm_c32_8x3::gemm_c32_8x3;
pub use gemm_c64_4x3::gemm_c64_4x3;
pub use gemm_f32_16x6::gemm_f32_16x6;
pub use gemm_f64_8x6::gemm_f64_8x6;
pub use gemv_c32::gemv_c32;
pub use gemv_c64::gemv_c64;
pub use gemv_f32::{gemv_columns_f32, gemv_f32};
pub use gemv_f64::{gemv_columns_f64, gemv_f64};
pub use sup_c32_8x3::sup_c32_8x3;
pub use sup_c64_4x3::sup_c64_4x3;
pub use sup_f32_16x6::sup_f32_16x6;
pub use sup_f64_8x6::sup_f64_8x6;
pub use tall_f32_8x12::tall_f32_8x12;
pub use tall_f64_4x12::tall_f64_4x12;
pub use transpose_8x8::{transpose_c32_8x8, transpose_f32_8x8, transpose_f64_8x8};
