//! The ordered list of sub-configurations and the rule that picks one.
//!
//! Order is preference: the first entry whose required features this CPU has is chosen,
//! unless `BLIS_ARCH_TYPE` names one. The choice depends on features only, never on model
//! names or brand strings.

use crate::config::{Features, SubConfig, generic};
#[cfg(target_arch = "x86_64")]
use crate::config::{haswell, sapphirerapids, skx};
use crate::error::{Error, ErrorKind, Result};

/// Every sub-configuration compiled in, best first. `generic` is last and needs nothing, so
/// every CPU has a choice.
#[cfg(target_arch = "x86_64")]
pub static REGISTRY: &[SubConfig] = &[
    sapphirerapids::SAPPHIRERAPIDS,
    skx::SKX,
    haswell::HASWELL,
    generic::GENERIC,
];
/// Every sub-configuration compiled in, best first.
#[cfg(not(target_arch = "x86_64"))]
pub static REGISTRY: &[SubConfig] = &[generic::GENERIC];

/// Picks an entry of `registry` for a CPU with `cpu` features: the one named by `forced`
/// (case-insensitive), or else the first one supported. `refused` (parallel to `registry`,
/// or empty) holds the reasons the OS gave against entries ([`SubConfig::os_check`]); those
/// are never picked. Returns its index.
pub fn select(
    registry: &[SubConfig],
    cpu: Features,
    refused: &[Option<String>],
    forced: Option<&str>,
) -> Result<usize> {
    let refusal = |index: usize| refused.get(index).and_then(Option::as_ref);
    let names = || {
        registry
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(wanted) = forced {
        let Some(index) = registry
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(wanted))
        else {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "BLIS_ARCH_TYPE={wanted}: no such configuration; this build has: {}",
                    names()
                ),
            ));
        };
        let missing = registry[index].requires.without(cpu);
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "BLIS_ARCH_TYPE={wanted}: configuration {} needs CPU features this CPU lacks: {missing}",
                    registry[index].name
                ),
            ));
        }
        if let Some(why) = refusal(index) {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "BLIS_ARCH_TYPE={wanted}: configuration {} cannot run here: {why}",
                    registry[index].name
                ),
            ));
        }
        return Ok(index);
    }
    (0..registry.len())
        .find(|&index| cpu.contains(registry[index].requires) && refusal(index).is_none())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "no configuration supports this CPU ({cpu}); this build has: {}",
                    names()
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cntx::Cntx;

    fn unused() -> Cntx {
        unreachable!("selection never builds contexts")
    }

    const WIDE: SubConfig = SubConfig {
        name: "wide",
        requires: Features::AVX512F.union(Features::AVX512BW),
        context: unused,
        os_check: None,
    };
    const NARROW: SubConfig = SubConfig {
        name: "narrow",
        requires: Features::AVX2.union(Features::FMA),
        context: unused,
        os_check: None,
    };
    const PLAIN: SubConfig = SubConfig {
        name: "plain",
        requires: Features::NONE,
        context: unused,
        os_check: None,
    };
    const ALL: &[SubConfig] = &[WIDE, NARROW, PLAIN];

    #[test]
    fn picks_the_first_supported_entry() {
        let avx2 = Features::AVX2.union(Features::FMA);
        assert_eq!(select(ALL, avx2, &[], None).unwrap(), 1);
        assert_eq!(select(ALL, Features::NONE, &[], None).unwrap(), 2);
        let avx512 = avx2.union(Features::AVX512F).union(Features::AVX512BW);
        assert_eq!(select(ALL, avx512, &[], None).unwrap(), 0);
    }

    #[test]
    fn forcing_an_unsupported_configuration_is_a_clear_error() {
        let e = select(ALL, Features::AVX2.union(Features::FMA), &[], Some("wide")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.message().contains("lacks: avx512f avx512bw"), "{e}");
    }

    #[test]
    fn forcing_an_unknown_name_lists_the_known_ones() {
        let e = select(ALL, Features::NONE, &[], Some("nonsense")).unwrap_err();
        assert!(e.message().contains("no such configuration"), "{e}");
        assert!(e.message().contains("wide, narrow, plain"), "{e}");
    }

    #[test]
    fn forcing_is_case_insensitive_and_may_pick_a_lesser_entry() {
        let avx512 = Features::AVX512F.union(Features::AVX512BW);
        assert_eq!(select(ALL, avx512, &[], Some("PLAIN")).unwrap(), 2);
    }

    #[test]
    fn an_entry_the_os_refused_is_skipped_and_cannot_be_forced() {
        let avx512 = Features::AVX512F
            .union(Features::AVX512BW)
            .union(Features::AVX2)
            .union(Features::FMA);
        let refused = [Some("no permission".to_string()), None, None];
        assert_eq!(select(ALL, avx512, &refused, None).unwrap(), 1);
        let e = select(ALL, avx512, &refused, Some("wide")).unwrap_err();
        assert!(
            e.message()
                .contains("configuration wide cannot run here: no permission"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_choice_is_an_error_not_a_panic() {
        assert!(select(&[WIDE], Features::NONE, &[], None).is_err());
    }

    #[test]
    fn every_registered_context_is_valid_and_named_after_its_entry() {
        for config in REGISTRY {
            let cntx = (config.context)();
            cntx.validate().unwrap();
            assert_eq!(cntx.name(), config.name);
        }
        assert!(
            REGISTRY.last().unwrap().requires.is_empty(),
            "generic must come last"
        );
    }
}
