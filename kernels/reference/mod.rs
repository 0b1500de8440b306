//! The reference kernel set: portable Rust for every dtype, no CPU features required.
//! Used by the `generic` configuration and as the fallback every other configuration starts
//! from (a configuration overrides only the kernels it has).

mod gemm;
mod gemv;

pub use gemm::gemm_ukr;
pub use gemv::gemv_ukr;
