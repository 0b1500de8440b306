//! Global thread defaults: what a call that does not say otherwise uses.
//!
//! Read once, at first use, from the environment, in BLIS's order:
//!
//! 1. `BLIS_JC_NT`, `BLIS_PC_NT`, `BLIS_IC_NT`, `BLIS_JR_NT`, `BLIS_IR_NT`: if any is set, they
//!    give explicit ways (the unset ones are 1);
//! 2. else the first of `BLIS_NUM_THREADS`, `BLIS_NT`, `OMP_NUM_THREADS` that is set gives a
//!    total (for `OMP_NUM_THREADS`, the first entry of a nesting list such as `4,2`);
//! 3. else the number of CPUs this process may run on.
//!
//! A malformed value (not a whole number from 1 to `MAX_THREADS`) is never guessed at: it is
//! ignored, as if unset, and reported once on stderr and in the runtime report.
//!
//! The setters replace the defaults for every later call; a call reads them once, when it
//! starts. They live in one atomic word (a total, or five ways of at most `MAX_THREADS` each),
//! so that read is a plain load: with a lock, reading them was about 10 ns of a 2×2×2 call
//! (measured, `RwLock`), a fifth of it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;
use crate::rntm::{MAX_THREADS, Rntm, Threading, Ways};

struct Defaults {
    /// The current [`Threading`], packed by [`pack`].
    threading: AtomicU64,
    /// Problems found in the environment, for the runtime report.
    warnings: Vec<String>,
}

static DEFAULTS: OnceLock<Defaults> = OnceLock::new();

fn defaults() -> &'static Defaults {
    DEFAULTS.get_or_init(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (threading, warnings) = from_env(|name| std::env::var(name).ok(), cpus);
        for w in &warnings {
            eprintln!("oxblis: {w}");
        }
        Defaults {
            threading: AtomicU64::new(pack(threading)),
            warnings,
        }
    })
}

/// Bits per way in a packed [`Ways`]: each way is at most `MAX_THREADS`.
const WAY_BITS: u32 = 11;
const WAY_MASK: u64 = (1 << WAY_BITS) - 1;
/// Set in a packed word holding `Threading::Ways`; clear for `Threading::Total`.
const WAYS_TAG: u64 = 1 << 63;
const _: () = assert!(MAX_THREADS as u64 <= WAY_MASK && 5 * WAY_BITS < 63);

/// A concrete (validated) [`Threading`] as one word: a total as itself, ways as five
/// `WAY_BITS` fields (jc lowest) under `WAYS_TAG`.
fn pack(threading: Threading) -> u64 {
    match threading {
        Threading::Ways(Ways { jc, pc, ic, jr, ir }) => {
            [jc, pc, ic, jr, ir]
                .iter()
                .rev()
                .fold(0, |word, &w| (word << WAY_BITS) | w as u64)
                | WAYS_TAG
        }
        Threading::Total(n) => n as u64,
        Threading::Default => unreachable!("the global defaults are concrete"),
    }
}

/// The inverse of [`pack`].
fn unpack(word: u64) -> Threading {
    if word & WAYS_TAG == 0 {
        return Threading::Total(word as usize);
    }
    let way = |i: u32| ((word >> (i * WAY_BITS)) & WAY_MASK) as usize;
    Threading::Ways(Ways {
        jc: way(0),
        pc: way(1),
        ic: way(2),
        jr: way(3),
        ir: way(4),
    })
}

/// Parses the thread variables through `var` (the environment, or a test's map).
pub(crate) fn from_env(
    var: impl Fn(&str) -> Option<String>,
    cpus: usize,
) -> (Threading, Vec<String>) {
    let mut warnings = Vec::new();
    let mut read = |name: &str| -> Option<usize> {
        let raw = var(name)?;
        let text = raw.trim();
        if text.is_empty() {
            return None;
        }
        // OMP_NUM_THREADS may list one count per nesting level; the first is ours.
        let first = if name == "OMP_NUM_THREADS" {
            text.split(',').next().unwrap_or("")
        } else {
            text
        };
        match first.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Some(n),
            _ => {
                warnings.push(format!(
                    "ignoring {name}={raw:?}: expected a whole number from 1 to {MAX_THREADS}"
                ));
                None
            }
        }
    };
    let loops = [
        "BLIS_JC_NT",
        "BLIS_PC_NT",
        "BLIS_IC_NT",
        "BLIS_JR_NT",
        "BLIS_IR_NT",
    ]
    .map(&mut read);
    let totals = ["BLIS_NUM_THREADS", "BLIS_NT", "OMP_NUM_THREADS"].map(&mut read);
    let threading = if loops.iter().any(Option::is_some) {
        let [jc, pc, ic, jr, ir] = loops.map(|w| w.unwrap_or(1));
        let ways = Ways { jc, pc, ic, jr, ir };
        match Rntm::new().with_ways(ways) {
            Ok(_) => Threading::Ways(ways),
            Err(e) => {
                warnings.push(format!("ignoring BLIS_*_NT: {e}"));
                Threading::Total(cpus.clamp(1, MAX_THREADS))
            }
        }
    } else {
        Threading::Total(
            totals
                .into_iter()
                .flatten()
                .next()
                .unwrap_or(cpus)
                .clamp(1, MAX_THREADS),
        )
    };
    (threading, warnings)
}

/// The current global defaults: a total or explicit ways (never `Threading::Default`).
pub fn thread_defaults() -> Threading {
    unpack(defaults().threading.load(Ordering::Acquire))
}

/// Problems found in the thread environment variables at first use.
pub fn thread_env_warnings() -> &'static [String] {
    &defaults().warnings
}

/// Sets the global default to `n` threads in total, factorized per call.
pub fn set_num_threads(n: usize) -> Result<()> {
    let Threading::Total(n) = Rntm::new().with_num_threads(n)?.threading() else {
        unreachable!()
    };
    store(Threading::Total(n));
    Ok(())
}

/// Sets the global default to explicit ways for every loop.
pub fn set_ways(ways: Ways) -> Result<()> {
    Rntm::new().with_ways(ways)?;
    store(Threading::Ways(ways));
    Ok(())
}

/// Replaces the global defaults with validated `threading`.
fn store(threading: Threading) {
    defaults()
        .threading
        .store(pack(threading), Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> (Threading, Vec<String>) {
        let lookup = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        from_env(lookup, 6)
    }

    #[test]
    fn packing_keeps_every_way_and_total() {
        for n in [1, 2, 7, MAX_THREADS] {
            assert_eq!(unpack(pack(Threading::Total(n))), Threading::Total(n));
        }
        let extremes = [1, 2, 3, 5, 1023, MAX_THREADS];
        for (i, &w) in extremes.iter().enumerate() {
            // Each loop in turn gets the large way, the others small distinct ones.
            let mut v = [1, 2, 3, 1, 2];
            v[i % 5] = w;
            let ways = Ways {
                jc: v[0],
                pc: v[1],
                ic: v[2],
                jr: v[3],
                ir: v[4],
            };
            assert_eq!(unpack(pack(Threading::Ways(ways))), Threading::Ways(ways));
        }
    }

    #[test]
    fn precedence_follows_blis() {
        assert_eq!(parse(&[]).0, Threading::Total(6));
        assert_eq!(parse(&[("OMP_NUM_THREADS", "3")]).0, Threading::Total(3));
        assert_eq!(parse(&[("OMP_NUM_THREADS", "3,2")]).0, Threading::Total(3));
        assert_eq!(
            parse(&[("BLIS_NT", "5"), ("OMP_NUM_THREADS", "3")]).0,
            Threading::Total(5)
        );
        assert_eq!(
            parse(&[("BLIS_NUM_THREADS", "2"), ("BLIS_NT", "5")]).0,
            Threading::Total(2)
        );
        let ways = Ways {
            jc: 1,
            pc: 1,
            ic: 2,
            jr: 3,
            ir: 1,
        };
        let (t, w) = parse(&[
            ("BLIS_IC_NT", "2"),
            ("BLIS_JR_NT", "3"),
            ("BLIS_NUM_THREADS", "8"),
        ]);
        assert_eq!((t, w.len()), (Threading::Ways(ways), 0));
    }

    #[test]
    fn malformed_values_are_reported_and_ignored() {
        for bad in ["abc", "0", "-2", "2.5", "99999"] {
            let (t, w) = parse(&[("BLIS_NUM_THREADS", bad), ("OMP_NUM_THREADS", "4")]);
            assert_eq!(t, Threading::Total(4), "{bad}");
            assert_eq!(w.len(), 1);
            assert!(w[0].contains("BLIS_NUM_THREADS"), "{w:?}");
        }
        let (t, w) = parse(&[("BLIS_JC_NT", "x")]);
        assert_eq!(t, Threading::Total(6));
        assert!(w[0].contains("BLIS_JC_NT"));
        let (_, w) = parse(&[("BLIS_JC_NT", "1000"), ("BLIS_IC_NT", "1000")]);
        assert!(w[0].contains("product"), "{w:?}");
    }
}
