//! The reference kernel set: portable Rust for every dtype, no CPU features required.
//! Used by the `generic` configuration and as the fallback every other configuration starts
//! from (a configuration overrides only the kernels it has).

mod gemm;

pub use gemm::gemm_ukr;
