//! Threads for the gemm loop nest: how a call's threads are counted and arranged
//! (`defaults.rs`, `plan.rs`), how ranges are split among them (`partition.rs`), how they
//! wait for each other (`barrier.rs`, `spin.rs`), where they come from (`pool.rs`), and where
//! they run (`placement.rs`).
//!
//! The loop nest itself, with its thread-control tree (which threads share which packed
//! block, and the barriers between them), is `frame/l3/gemm.rs`. The user-facing story is
//! `docs/Multithreading.md`.

pub(crate) mod barrier;
pub(crate) mod defaults;
pub(crate) mod partition;
pub(crate) mod placement;
pub(crate) mod plan;
pub(crate) mod pool;
pub(crate) mod spin;
