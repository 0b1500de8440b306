//! The sapphirerapids kernel set: AMX tile microkernels (Sapphire Rapids and later Xeons),
//! registered by `config/sapphirerapids.rs`, and the software model they are tested on.
//!
//! * `tile.rs`: the interface: [`TileConfig`] (what `ldtilecfg` reads) and [`TileUnit`]
//!   (the tile instructions as functions).
//! * `amx.rs`: [`Amx`], the hardware `TileUnit` (`asm!`). Run on an AMX machine once
//!   (session 29, `docs/Performance.md`); CI has no AMX and runs the model.
//! * `model.rs` (+ `model_fp32.rs`): [`TileModel`], an exact software model of the tile
//!   registers and instructions after the Intel SDM, per thread, with the hardware's
//!   faults as panics.
//! * `tile_program.rs`: the 32×32 tile program, written once over `TileUnit`, its tile
//!   configuration and the per-thread contexts ([`AMX_HW_CONTEXT`], [`AMX_MODEL_CONTEXT`]).
//! * `gemm_b16_amx_32x32.rs`, `gemm_i8_amx_32x32.rs`: bf16 → f32 (`tdpbf16ps`), i8 × i8 →
//!   i32 (`tdpbssd`) and u8 × i8 → i32 (`tdpbusd`) kernels, each as a hardware and a model
//!   instantiation.
//!
//! The layouts, the tile plan and what the model checks are in `docs/KernelsHowTo.md`,
//! "AMX tile kernels".

mod amx;
mod gemm_b16_amx_32x32;
mod gemm_i8_amx_32x32;
mod model;
mod model_fp32;
mod tile;
mod tile_program;

pub use amx::Amx;
pub use gemm_b16_amx_32x32::{gemm_b16_amx_32x32, gemm_b16_amx_32x32_model};
pub use gemm_i8_amx_32x32::{
    gemm_i8_amx_32x32, gemm_i8_amx_32x32_model, gemm_u8i8_amx_32x32, gemm_u8i8_amx_32x32_model,
};
pub use model::{TileModel, TileRegister};
pub use tile::{BYTES_PER_ROW, MAX_ROWS, TILES, TileConfig, TileUnit};
pub use tile_program::{AMX_HW_CONTEXT, AMX_MODEL_CONTEXT, KERNEL_TILE_CONFIG, MR, NR};
