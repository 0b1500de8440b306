//! Sub-configurations: one small file per target naming the CPU features it needs and the
//! context (kernels and blocksizes) it registers, plus the registry that orders them and CPU
//! feature detection. How to add one: `docs/ConfigurationHowTo.md`.

use crate::cntx::Cntx;

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub(crate) mod amx_permission;
pub mod cpu_features;
pub mod generic;
#[cfg(target_arch = "x86_64")]
pub mod haswell;
pub mod registry;
#[cfg(target_arch = "x86_64")]
pub mod sapphirerapids;
#[cfg(target_arch = "x86_64")]
pub mod skx;

pub use cpu_features::Features;

/// A sub-configuration: a named target, what it needs from the CPU, and how to build its
/// context.
#[derive(Clone, Copy, Debug)]
pub struct SubConfig {
    /// The name `BLIS_ARCH_TYPE` selects it by (lower case).
    pub name: &'static str,
    /// The CPU features its kernels use; it is only chosen (or allowed to be forced) on CPUs
    /// that have all of them.
    pub requires: Features,
    /// Builds its context. Called at most once per process.
    pub context: fn() -> Cntx,
    /// What only the running OS can answer beyond CPU features (AMX: Linux's permission for
    /// tile data), asked once per process after the features check passed. `Err(reason)`
    /// makes the configuration unusable here; the reason goes into the runtime report and
    /// into the error of a `BLIS_ARCH_TYPE` that names it. `None`: nothing to ask.
    pub os_check: Option<fn() -> Result<(), String>>,
}
