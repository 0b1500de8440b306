//! Level-3 operations. Today: gemm (`gemm.rs` holds the loop nest, `macrokernel.rs` the two
//! innermost loops around the microkernel).

pub(crate) mod gemm;
mod macrokernel;
pub(crate) mod raw;
