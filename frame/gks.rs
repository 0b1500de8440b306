//! The global kernel structure (BLIS's "gks"): which configurations this CPU supports, their
//! contexts, and the one chosen. Built once, at first use, from CPUID, the registry and
//! `BLIS_ARCH_TYPE`; read-only afterwards, so concurrent calls share it without locks.
//!
//! Environment (read once, at first use):
//! * `BLIS_ARCH_TYPE=<name>` forces a configuration; unknown names and configurations this
//!   CPU cannot run make every call return a `Config` error saying so.
//! * `BLIS_ARCH_DEBUG=1` prints the runtime report to stderr when the choice is made.

use std::sync::OnceLock;

use crate::cntx::Cntx;
use crate::config::registry::{REGISTRY, select};
use crate::config::{Features, SubConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::report::RuntimeReport;

pub(crate) struct Gks {
    pub(crate) cpu: Features,
    pub(crate) baseline: Features,
    pub(crate) forced: Option<String>,
    pub(crate) registry: &'static [SubConfig],
    /// Parallel to `registry`; `None` where this CPU lacks the required features or the OS
    /// refused.
    contexts: Vec<Option<Cntx>>,
    /// Parallel to `registry`: why the OS refused an entry whose features this CPU has
    /// ([`SubConfig::os_check`]).
    pub(crate) refused: Vec<Option<String>>,
    /// Index into `registry`, or why nothing can run.
    chosen: Result<usize>,
}

static GKS: OnceLock<Gks> = OnceLock::new();

pub(crate) fn gks() -> &'static Gks {
    GKS.get_or_init(|| {
        let forced = std::env::var("BLIS_ARCH_TYPE")
            .ok()
            .filter(|name| !name.trim().is_empty());
        let gks = Gks::new(
            REGISTRY,
            Features::detect(),
            Features::compiled_baseline(),
            forced,
        );
        if std::env::var("BLIS_ARCH_DEBUG").is_ok_and(|v| v.trim() == "1") {
            eprintln!("{}", RuntimeReport::from_gks(&gks));
        }
        gks
    })
}

impl Gks {
    fn new(
        registry: &'static [SubConfig],
        cpu: Features,
        baseline: Features,
        forced: Option<String>,
    ) -> Gks {
        // The OS is asked only about configurations the CPU could run (for AMX, asking is
        // what grants the permission).
        let refused: Vec<Option<String>> = registry
            .iter()
            .map(|config| match config.os_check {
                Some(check) if cpu.contains(config.requires) => check().err(),
                _ => None,
            })
            .collect();
        let contexts: Vec<Option<Cntx>> = registry
            .iter()
            .zip(&refused)
            .map(|(config, refusal)| {
                (cpu.contains(config.requires) && refusal.is_none()).then(|| (config.context)())
            })
            .collect();
        let missing = baseline.without(cpu);
        let chosen = if !missing.is_empty() {
            Err(Error::new(
                ErrorKind::Config,
                format!(
                    "this oxblis was compiled to assume CPU features ({baseline}) but this CPU \
                     lacks {missing}; rebuild without them in -C target-cpu/target-feature"
                ),
            ))
        } else {
            select(registry, cpu, &refused, forced.as_deref()).and_then(|index| {
                let cntx = contexts[index]
                    .as_ref()
                    .expect("selected configurations are supported");
                cntx.validate().map(|()| index)
            })
        };
        Gks {
            cpu,
            baseline,
            forced,
            registry,
            contexts,
            refused,
            chosen,
        }
    }

    pub(crate) fn chosen(&self) -> Result<&Cntx> {
        match &self.chosen {
            Ok(index) => Ok(self.contexts[*index].as_ref().expect("chosen is supported")),
            Err(e) => Err(e.clone()),
        }
    }

    /// The contexts this CPU can run, in registry order (empty if the baseline check failed).
    fn supported(&self) -> impl Iterator<Item = &Cntx> {
        let usable = self.baseline.without(self.cpu).is_empty();
        self.contexts.iter().flatten().filter(move |_| usable)
    }
}

/// The context calls use by default: the best configuration this CPU supports, or the one
/// `BLIS_ARCH_TYPE` forced.
///
/// Inlined, and the choice kept in a static of its own: every `gemm_ex` call starts here, and
/// a call into the library for the lookup was about 2 ns of a 2×2×2 call.
#[inline]
pub fn context() -> Result<&'static Cntx> {
    static CHOSEN: OnceLock<Result<&'static Cntx>> = OnceLock::new();
    match CHOSEN.get_or_init(|| gks().chosen()) {
        Ok(cntx) => Ok(cntx),
        Err(e) => Err(e.clone()),
    }
}

/// The context of a named configuration, ignoring `BLIS_ARCH_TYPE`; an error if there is no
/// such configuration or this CPU cannot run it.
pub fn context_named(name: &str) -> Result<&'static Cntx> {
    let gks = gks();
    let index = select(gks.registry, gks.cpu, &gks.refused, Some(name))?;
    gks.supported()
        .find(|cntx| cntx.name() == gks.registry[index].name)
        .ok_or_else(|| match gks.chosen() {
            Err(e) => e,
            Ok(_) => Error::new(
                ErrorKind::Config,
                format!("configuration {name} is unavailable"),
            ),
        })
}

/// Every context this CPU can run, best first: what tests iterate to exercise each
/// configuration, not only the chosen one.
pub fn supported_contexts() -> Vec<&'static Cntx> {
    gks().supported().collect()
}

/// The report of what was built, what the CPU has and what was chosen.
pub fn runtime_report() -> RuntimeReport {
    RuntimeReport::from_gks(gks())
}

impl Gks {
    pub(crate) fn context_at(&self, index: usize) -> Option<&Cntx> {
        self.contexts[index].as_ref()
    }
    pub(crate) fn chosen_index(&self) -> Result<usize> {
        self.chosen.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::generic::GENERIC;

    #[test]
    fn a_binary_built_for_more_than_the_cpu_has_refuses_clearly() {
        let gks = Gks::new(
            &[GENERIC],
            Features::SSE2,
            Features::SSE2.union(Features::AVX2),
            None,
        );
        let e = gks.chosen().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.message().contains("lacks avx2"), "{e}");
        assert_eq!(gks.supported().count(), 0);
    }

    #[test]
    fn a_configuration_the_os_refuses_falls_back_and_the_report_says_why() {
        const REFUSED: SubConfig = SubConfig {
            name: "tiles",
            requires: Features::NONE,
            context: || unreachable!("a refused configuration is never built"),
            os_check: Some(|| Err("Linux refused AMX tile data (test)".into())),
        };
        let gks = Gks::new(&[REFUSED, GENERIC], Features::NONE, Features::NONE, None);
        assert_eq!(gks.chosen().unwrap().name(), "generic");
        assert_eq!(gks.supported().count(), 1);
        let report = RuntimeReport::from_gks(&gks);
        assert_eq!(
            report.configurations[0].refused.as_deref(),
            Some("Linux refused AMX tile data (test)")
        );
        let text = report.to_string();
        assert!(
            text.contains("unsupported: Linux refused AMX tile data (test)"),
            "{text}"
        );
        let forced = Gks::new(
            &[REFUSED, GENERIC],
            Features::NONE,
            Features::NONE,
            Some("tiles".into()),
        );
        let e = forced.chosen().unwrap_err();
        assert!(
            e.message().contains("cannot run here: Linux refused"),
            "{e}"
        );
    }

    /// The real registry on this CPU as if it had AMX: the real permission request runs and
    /// Linux answers. Without AMX (the development machine) it refuses; the AVX-512
    /// configuration is chosen and the report carries Linux's answer.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn without_linux_tile_permission_sapphirerapids_falls_back_to_skx() {
        let cpu = Features::detect();
        if !cpu.contains(crate::config::skx::SKX.requires) {
            eprintln!("no AVX-512 here: skipped");
            return;
        }
        let amx = Features::AMX_TILE
            .union(Features::AMX_BF16)
            .union(Features::AMX_INT8);
        let gks = Gks::new(REGISTRY, cpu.union(amx), Features::NONE, None);
        let report = RuntimeReport::from_gks(&gks);
        let status = &report.configurations[0];
        assert_eq!(status.name, "sapphirerapids");
        match &status.refused {
            Some(why) => {
                assert!(why.starts_with("Linux"), "{why}");
                assert_eq!(gks.chosen().unwrap().name(), "skx");
                let text = report.to_string();
                assert!(text.contains(&format!("unsupported: {why}")), "{text}");
                eprintln!("refused as expected: {why}");
            }
            None => {
                assert!(cpu.contains(amx), "permission granted on a CPU without AMX");
                assert_eq!(gks.chosen().unwrap().name(), "sapphirerapids");
            }
        }
    }

    #[test]
    fn forced_names_are_honoured_or_refused() {
        let gks = Gks::new(
            &[GENERIC],
            Features::NONE,
            Features::NONE,
            Some("Generic".into()),
        );
        assert_eq!(gks.chosen().unwrap().name(), "generic");
        let gks = Gks::new(
            &[GENERIC],
            Features::NONE,
            Features::NONE,
            Some("zen9".into()),
        );
        assert!(
            gks.chosen()
                .unwrap_err()
                .message()
                .contains("BLIS_ARCH_TYPE=zen9")
        );
    }

    #[test]
    fn the_process_context_is_supported() {
        let chosen = context().unwrap();
        assert!(
            supported_contexts()
                .iter()
                .any(|c| c.name() == chosen.name())
        );
        assert_eq!(context_named("generic").unwrap().name(), "generic");
        assert!(context_named("nonsense").is_err());
    }
}
