//! `Rntm`, the per-call runtime object (BLIS's `rntm_t`): how many threads a call may use,
//! either as a total or as ways of parallelism per loop (jc, pc, ic, jr, ir).
//!
//! `Rntm::default()` means "use the global defaults" (`frame/thread/defaults.rs`). How a
//! total is factorized and how concurrent and nested calls are handled: `frame/thread/plan.rs`
//! and `docs/Multithreading.md`.

use crate::error::{Error, ErrorKind, Result};

/// The most threads one call may ask for; more is surely a mistake.
pub const MAX_THREADS: usize = 1024;

/// Ways of parallelism for each loop of the gemm nest (each at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ways {
    /// Loop 5: NC-wide column blocks.
    pub jc: usize,
    /// Loop 4: KC-deep slices of k (needs a reduction).
    pub pc: usize,
    /// Loop 3: MC-tall row blocks.
    pub ic: usize,
    /// Loop 2: NR-wide micropanels.
    pub jr: usize,
    /// Loop 1: MR-tall micropanels.
    pub ir: usize,
}

impl Ways {
    /// Total threads: the product of the ways.
    pub fn total(&self) -> usize {
        self.jc * self.pc * self.ic * self.jr * self.ir
    }
}

/// What a call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Threading {
    /// Use the global defaults.
    #[default]
    Default,
    /// This many threads, factorized over the loops automatically.
    Total(usize),
    /// Exactly these ways.
    Ways(Ways),
}

/// The per-call runtime object. `Rntm::default()` means "global defaults".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rntm {
    threading: Threading,
    pin: bool,
}

impl Rntm {
    /// Global defaults.
    pub fn new() -> Rntm {
        Rntm::default()
    }

    /// Ask for `n` threads in total.
    pub fn with_num_threads(self, n: usize) -> Result<Rntm> {
        check_count("number of threads", n)?;
        Ok(Rntm {
            threading: Threading::Total(n),
            ..self
        })
    }

    /// Ask for exactly these ways of parallelism.
    pub fn with_ways(self, ways: Ways) -> Result<Rntm> {
        let named = [
            ("jc", ways.jc),
            ("pc", ways.pc),
            ("ic", ways.ic),
            ("jr", ways.jr),
            ("ir", ways.ir),
        ];
        for (name, w) in named {
            if w == 0 {
                return Err(Error::new(
                    ErrorKind::InvalidRntm,
                    format!("Rntm: {name} ways must be at least 1"),
                ));
            }
        }
        let total = named
            .iter()
            .try_fold(1usize, |acc, (_, w)| acc.checked_mul(*w))
            .unwrap_or(usize::MAX);
        check_count("product of the ways", total)?;
        Ok(Rntm {
            threading: Threading::Ways(ways),
            ..self
        })
    }

    /// Pin this call's helper threads one per core (cores in order; the calling thread is
    /// not pinned). Pinned helpers come from a separate set of workers that stay pinned, so
    /// unpinned calls are never affected.
    pub fn with_pinning(self, pin: bool) -> Rntm {
        Rntm { pin, ..self }
    }

    /// What this object asks for.
    pub fn threading(&self) -> Threading {
        self.threading
    }

    /// Whether helper threads are pinned to cores.
    pub fn pinning(&self) -> bool {
        self.pin
    }
}

fn check_count(what: &str, n: usize) -> Result<()> {
    if n == 0 || n > MAX_THREADS {
        return Err(Error::new(
            ErrorKind::InvalidRntm,
            format!("Rntm: {what} is {n}; it must be between 1 and {MAX_THREADS}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_problem() {
        assert!(Rntm::new().with_num_threads(4).is_ok());
        let e = Rntm::new().with_num_threads(0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRntm);
        let ways = Ways {
            jc: 2,
            pc: 1,
            ic: 0,
            jr: 1,
            ir: 1,
        };
        assert!(
            Rntm::new()
                .with_ways(ways)
                .unwrap_err()
                .message()
                .contains("ic ways")
        );
        let huge = Ways {
            jc: usize::MAX,
            pc: 2,
            ic: 1,
            jr: 1,
            ir: 1,
        };
        assert!(
            Rntm::new()
                .with_ways(huge)
                .unwrap_err()
                .message()
                .contains("product")
        );
        let fine = Ways {
            jc: 2,
            pc: 1,
            ic: 2,
            jr: 1,
            ir: 1,
        };
        assert_eq!(
            Rntm::new().with_ways(fine).unwrap().threading(),
            Threading::Ways(fine)
        );
    }
}
