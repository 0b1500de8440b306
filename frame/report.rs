//! The runtime report, in the spirit of `numpy.show_runtime()`: the build baseline, the CPU's
//! features, each configuration and whether it can run here, the choice, and its kernels.
//! Printed by `BLIS_ARCH_DEBUG=1` and `testsuite --info`.

use std::fmt;

use crate::cntx::{Blocksizes, Cntx, GemmKernel, KernelVisitor};
use crate::config::Features;
use crate::error::Error;
use crate::gks::Gks;
use crate::rntm::Threading;
use crate::thread::defaults::{thread_defaults, thread_env_warnings};
use crate::thread::pool::workers_spawned;
use crate::types::Element;

/// A configuration compiled into this build, and whether this CPU can run it.
#[derive(Clone, Debug)]
pub struct ConfigStatus {
    /// Its name.
    pub name: &'static str,
    /// The features it requires.
    pub requires: Features,
    /// The required features this CPU lacks (empty: supported, unless refused).
    pub missing: Features,
    /// Why the OS would not let it run although the CPU could (AMX without Linux's
    /// permission), if it refused.
    pub refused: Option<String>,
}

/// One dtype's kernel in the chosen context.
#[derive(Clone, Debug)]
pub struct KernelStatus {
    /// BLAS letter of the dtype.
    pub dtype: char,
    /// Kernel name.
    pub name: &'static str,
    /// Its blocksizes.
    pub blocksizes: Blocksizes,
    /// Whether it prefers row-stored C.
    pub prefers_rows: bool,
    /// Its sup kernel for small problems, if any.
    pub sup: Option<&'static str>,
}

/// What oxblis was built with, what this CPU has, and what it chose.
#[derive(Clone, Debug)]
pub struct RuntimeReport {
    /// Crate version.
    pub version: &'static str,
    /// Features the compiler assumed everywhere.
    pub build_baseline: Features,
    /// Features found on this CPU (and enabled by the OS).
    pub cpu: Features,
    /// Every compiled-in configuration, best first.
    pub configurations: Vec<ConfigStatus>,
    /// `BLIS_ARCH_TYPE`, if set.
    pub forced: Option<String>,
    /// The chosen configuration's name, or why there is none.
    pub chosen: Result<&'static str, Error>,
    /// The chosen configuration's kernels (empty if none was chosen).
    pub kernels: Vec<KernelStatus>,
    /// The global thread defaults now.
    pub threads: Threading,
    /// Problems found in the thread environment variables.
    pub thread_env_warnings: Vec<String>,
    /// Worker threads the pool has created so far.
    pub pool_workers: usize,
    /// The sandbox this build routes gemm through (cargo feature `sandbox-<name>`), if any.
    pub sandbox: Option<&'static str>,
    /// Calls that sandbox has computed so far in this process.
    pub sandbox_calls: u64,
}

impl RuntimeReport {
    pub(crate) fn from_gks(gks: &Gks) -> RuntimeReport {
        let configurations = gks
            .registry
            .iter()
            .zip(&gks.refused)
            .map(|(c, refused)| ConfigStatus {
                name: c.name,
                requires: c.requires,
                missing: c.requires.without(gks.cpu),
                refused: refused.clone(),
            })
            .collect();
        let chosen_cntx = gks.chosen_index().ok().and_then(|i| gks.context_at(i));
        RuntimeReport {
            version: env!("CARGO_PKG_VERSION"),
            build_baseline: gks.baseline,
            cpu: gks.cpu,
            configurations,
            forced: gks.forced.clone(),
            chosen: gks.chosen().map(Cntx::name),
            kernels: chosen_cntx.map(kernel_table).unwrap_or_default(),
            threads: thread_defaults(),
            thread_env_warnings: thread_env_warnings().to_vec(),
            pool_workers: workers_spawned(),
            sandbox: crate::sandbox::ACTIVE,
            sandbox_calls: crate::sandbox::calls(),
        }
    }
}

fn kernel_table(cntx: &Cntx) -> Vec<KernelStatus> {
    struct Rows(Vec<KernelStatus>);
    impl KernelVisitor for Rows {
        fn visit<A: Element, B: Element>(&mut self, k: &mut GemmKernel<A, B>) {
            self.0.push(KernelStatus {
                dtype: A::LETTER,
                name: k.name(),
                blocksizes: k.blocksizes(),
                prefers_rows: k.prefers_rows(),
                sup: k.sup().map(|s| s.name()),
            });
        }
    }
    let mut rows = Rows(Vec::new());
    cntx.clone().visit_kernels(&mut rows);
    rows.0
}

/// The dtype letters of the kernel table, in order (for a test of the slot list).
#[cfg(test)]
pub(crate) fn kernel_table_for_test(cntx: &Cntx) -> String {
    kernel_table(cntx).iter().map(|k| k.dtype).collect()
}

impl fmt::Display for RuntimeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "oxblis {} runtime report", self.version)?;
        writeln!(f, "  build baseline : {}", self.build_baseline)?;
        writeln!(f, "  CPU features   : {}", self.cpu)?;
        writeln!(f, "  configurations :")?;
        for c in &self.configurations {
            let status = match &c.refused {
                _ if !c.missing.is_empty() => format!("unsupported, lacks {}", c.missing),
                Some(why) => format!("unsupported: {why}"),
                None => "supported".to_string(),
            };
            writeln!(
                f,
                "    {:<16} needs {:<64} {status}",
                c.name,
                c.requires.to_string()
            )?;
        }
        match &self.forced {
            Some(name) => writeln!(f, "  BLIS_ARCH_TYPE : {name}")?,
            None => writeln!(f, "  BLIS_ARCH_TYPE : (unset)")?,
        }
        match &self.chosen {
            Ok(name) => writeln!(f, "  chosen         : {name}")?,
            Err(e) => writeln!(f, "  chosen         : none: {e}")?,
        }
        match self.sandbox {
            Some(name) => writeln!(
                f,
                "  sandbox        : {name} (every gemm call is offered to it; {} computed so far)",
                self.sandbox_calls
            )?,
            None => writeln!(f, "  sandbox        : none (the native implementation)")?,
        }
        let threads = match self.threads {
            Threading::Total(n) => format!("{n} in total, factorized per call"),
            Threading::Ways(w) => format!(
                "ways jc {} pc {} ic {} jr {} ir {} ({} in total)",
                w.jc,
                w.pc,
                w.ic,
                w.jr,
                w.ir,
                w.total()
            ),
            Threading::Default => "(unset)".to_string(),
        };
        writeln!(
            f,
            "  threads        : {threads}; pool workers so far: {}",
            self.pool_workers
        )?;
        for w in &self.thread_env_warnings {
            writeln!(f, "  thread env     : {w}")?;
        }
        if !self.kernels.is_empty() {
            writeln!(
                f,
                "  kernels        : dt  {:<22} {:>3} {:>3} {:>5} {:>5} {:>6}  {:<9} sup kernel",
                "name", "MR", "NR", "KC", "MC", "NC", "C storage"
            )?;
            for k in &self.kernels {
                let b = k.blocksizes;
                writeln!(
                    f,
                    "                   {}   {:<22} {:>3} {:>3} {:>5} {:>5} {:>6}  {:<9} {}",
                    k.dtype,
                    k.name,
                    b.mr,
                    b.nr,
                    b.kc,
                    b.mc,
                    b.nc,
                    if k.prefers_rows { "rows" } else { "columns" },
                    k.sup.unwrap_or("-")
                )?;
            }
        }
        Ok(())
    }
}
