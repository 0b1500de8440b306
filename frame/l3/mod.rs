//! Level-3 operations. Today: gemm (`gemm.rs` holds the loop nest, `macrokernel.rs` the two
//! innermost loops around the microkernel, `sup.rs` the unpacked path for small problems, `dots.rs`
//! short, wide C as dot products, `one_tile.rs` its shortcut for a single tile, `short_k.rs`
//! products a few k steps deep, `narrow.rs` tall C of a few columns at short k, `stack_copies.rs`
//! the small copies both make, `tall.rs` the in-place path for a large A times few columns,
//! `tall_complex.rs` that path for complex through the real kernel, `raw.rs` the memory the nest's
//! threads share, `blocks.rs` teams whose threads each take their own block of C).

mod blocks;
pub(crate) mod dots;
pub(crate) mod gemm;
mod gemv;
mod macrokernel;
mod narrow;
pub(crate) mod one_tile;
pub(crate) mod raw;
mod short_k;
mod stack_copies;
pub(crate) mod sup;
mod tall;
pub(crate) mod tall_complex;
