//! How many threads a call gets, and on which loops: from its `Rntm`, the global defaults,
//! the problem's shape and the configuration's thread preferences.
//!
//! * Explicit ways (per call or global) are used exactly.
//! * A total is an upper bound, factorized by [`auto_ways`]: fewer threads when the problem is
//!   too small to repay waking them, or has fewer units of work (MR rows, NR columns, KC
//!   slices) than threads; each prime factor goes to the dimension with the most units per
//!   way: m (ic), n (jr, or jc when n spans several NC blocks), or k (pc) when k is the
//!   longest of the three. Measured on the development machine (64×64×100 000 dgemm, 2
//!   threads, reference kernels): k split 28.1 GFLOPS, m split 25.9, one thread 14.2.
//! * Calls that use the global defaults share one budget of helper threads (the default total
//!   minus one): when many application threads call at once, say from a rayon pool, they do
//!   not multiply the machine's threads. Calls with their own `Rntm` get what they ask for.
//! * A call from inside one of oxblis's own workers runs single-threaded.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cntx::{Blocksizes, ThreadPrefs};
use crate::rntm::{Rntm, Threading, Ways};
use crate::thread::defaults::thread_defaults;
use crate::thread::pool::in_worker;

/// One thread on every loop.
pub(crate) const SINGLE: Ways = Ways {
    jc: 1,
    pc: 1,
    ic: 1,
    jr: 1,
    ir: 1,
};

/// Helper threads currently used by calls running on the global defaults.
static DEFAULT_HELPERS_IN_USE: AtomicUsize = AtomicUsize::new(0);

/// A call's threads; holds its share of the default budget until dropped.
pub(crate) struct Plan {
    pub(crate) ways: Ways,
    pub(crate) pin: bool,
    budget_held: usize,
}

impl Drop for Plan {
    fn drop(&mut self) {
        if self.budget_held > 0 {
            DEFAULT_HELPERS_IN_USE.fetch_sub(self.budget_held, Ordering::AcqRel);
        }
    }
}

/// The plan for an m×n×k product with kernel blocksizes `bs`.
///
/// Inlined for its first tests: one thread asked for, or a total (the call's or the global
/// default's) with too little work for a second thread, needs no planning, no thread-local
/// lookup and no budget: worth about 10 ns of a small call (measured on 2×2×2 … 8×8×8).
#[inline(always)]
pub(crate) fn plan(
    rntm: &Rntm,
    shape: (usize, usize, usize),
    bs: Blocksizes,
    prefs: ThreadPrefs,
) -> Plan {
    match rntm.threading() {
        Threading::Total(1) => single(rntm),
        Threading::Ways(ways) if ways.total() == 1 => single(rntm),
        Threading::Total(_) if too_little_for_two(shape, prefs) => single(rntm),
        Threading::Default
            if too_little_for_two(shape, prefs)
                && matches!(thread_defaults(), Threading::Total(_)) =>
        {
            single(rntm)
        }
        _ => plan_threads(rntm, shape, bs, prefs),
    }
}

/// Whether an m×n×k product has less work than two threads' minimum each, so that any total
/// factorizes to one thread ([`auto_ways`]'s first answer; multiplications only, no division).
#[inline]
fn too_little_for_two((m, n, k): (usize, usize, usize), prefs: ThreadPrefs) -> bool {
    let min_work = prefs.min_work_per_thread.max(1);
    m.checked_mul(n)
        .and_then(|mn| mn.checked_mul(k))
        .is_some_and(|work| work < min_work.saturating_mul(2))
}

/// One thread.
#[inline]
fn single(rntm: &Rntm) -> Plan {
    Plan {
        ways: SINGLE,
        pin: rntm.pinning(),
        budget_held: 0,
    }
}

/// [`plan`] when more than one thread may be used.
#[inline(never)]
fn plan_threads(
    rntm: &Rntm,
    shape: (usize, usize, usize),
    bs: Blocksizes,
    prefs: ThreadPrefs,
) -> Plan {
    let plan = |ways, budget_held| Plan {
        ways,
        pin: rntm.pinning(),
        budget_held,
    };
    if in_worker() {
        return plan(SINGLE, 0);
    }
    let auto = |t| auto_ways(t, shape, bs, prefs);
    match rntm.threading() {
        Threading::Ways(ways) => plan(ways, 0),
        Threading::Total(t) => plan(auto(t), 0),
        Threading::Default => {
            let global = thread_defaults();
            // A problem too small for a second thread runs on the caller's without touching
            // the shared budget's atomics (the smallest ones never get here: `plan`).
            if matches!(global, Threading::Total(_)) && auto(2) == SINGLE {
                return plan(SINGLE, 0);
            }
            let wanted = match global {
                Threading::Ways(ways) => ways,
                Threading::Total(t) => auto(t),
                Threading::Default => unreachable!("the global defaults are concrete"),
            };
            let budget = match global {
                Threading::Ways(ways) => ways.total() - 1,
                Threading::Total(t) => t - 1,
                Threading::Default => 0,
            };
            let granted = reserve(&DEFAULT_HELPERS_IN_USE, wanted.total() - 1, budget);
            let ways = if granted + 1 == wanted.total() {
                wanted
            } else {
                auto(granted + 1)
            };
            // `auto` may use fewer threads than granted; give the surplus back at once.
            let used = ways.total() - 1;
            DEFAULT_HELPERS_IN_USE.fetch_sub(granted - used, Ordering::AcqRel);
            plan(ways, used)
        }
    }
}

/// Takes up to `want` helpers from a budget of `budget` of which `in_use_now` are taken;
/// returns how many.
fn reserve(in_use_now: &AtomicUsize, want: usize, budget: usize) -> usize {
    let mut in_use = in_use_now.load(Ordering::Acquire);
    loop {
        let granted = want.min(budget.saturating_sub(in_use));
        match in_use_now.compare_exchange_weak(
            in_use,
            in_use + granted,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return granted,
            Err(now) => in_use = now,
        }
    }
}

/// Factorizes up to `t` threads over the loops for an m×n×k product (see the module docs).
pub(crate) fn auto_ways(
    t: usize,
    (m, n, k): (usize, usize, usize),
    bs: Blocksizes,
    prefs: ThreadPrefs,
) -> Ways {
    if t <= 1 {
        return SINGLE;
    }
    if too_little_for_two((m, n, k), prefs) {
        return SINGLE;
    }
    // Enough work to repay each thread? (u64 arithmetic when m·n·k fits, which is always in
    // practice: the u128 division is a libcall.)
    let min_work = prefs.min_work_per_thread.max(1);
    let affordable = match m.checked_mul(n).and_then(|mn| mn.checked_mul(k)) {
        Some(work) => work / min_work,
        None => ((m as u128) * (n as u128) * (k as u128) / min_work as u128)
            .try_into()
            .unwrap_or(usize::MAX),
    };
    let t = t.min(affordable.max(1));
    if t == 1 {
        return SINGLE;
    }
    // Each dimension in the units a thread takes whole: MR rows, NR columns, KC-deep slices.
    let units = [m.div_ceil(bs.mr), n.div_ceil(bs.nr), k.div_ceil(bs.kc)];
    let mut ways = [1usize; 3];
    // Largest prime factors first, each to the dimension with the most units per way (k only
    // when it beats both m and n: its reduction costs a pass over C), and only where every
    // way still gets a whole unit; a factor nothing can take is left unused.
    for f in prime_factors_descending(t) {
        let per_way = |d: usize| units[d] / ways[d];
        let k_longest = per_way(2) > per_way(0).max(per_way(1));
        let candidates = if k_longest {
            [2, 0, 1]
        } else if per_way(0) >= per_way(1) {
            [0, 1, 2]
        } else {
            [1, 0, 2]
        };
        let Some(d) = candidates
            .into_iter()
            .find(|&d| per_way(d) >= f && (d != 2 || k_longest))
        else {
            continue;
        };
        ways[d] *= f;
    }
    let [ic, n_ways, pc] = ways;
    // n's ways go to jc when each group still gets a full NC block (separate B blocks, each in
    // its own share of the L3), else to jr (one shared B block, split by micropanels).
    let (jc, jr) = if n >= n_ways * bs.nc {
        (n_ways, 1)
    } else {
        (1, n_ways)
    };
    Ways {
        jc,
        pc,
        ic,
        jr,
        ir: 1,
    }
}

/// How a team whose threads each take their own block of C splits it (the sup path and outer
/// products, `frame/l3/blocks.rs`): (row ways, column ways) over C's `align.0`-tall row panels
/// and `align.1`-wide column panels, `None` where such a team cannot follow the plan. Ways the
/// caller chose are kept as they are (rows: ic·ir, columns: jc·jr) unless they split k, which
/// these paths do not do. Otherwise the plan's thread count goes, each prime factor where
/// every way still gets a whole panel, first to the dimension `first` says.
pub(crate) fn block_ways(
    rntm: &Rntm,
    ways: Ways,
    (m, n): (usize, usize),
    (mr, nr): (usize, usize),
    first: SplitFirst,
) -> Option<(usize, usize)> {
    if let Threading::Ways(_) = rntm.threading() {
        return (ways.pc == 1).then_some((ways.ic * ways.ir, ways.jc * ways.jr));
    }
    let units = [m.div_ceil(mr.max(1)), n.div_ceil(nr.max(1))];
    let mut split = [1usize; 2];
    let order = match first {
        SplitFirst::LargerOperand if m > n => [0, 1],
        _ => [1, 0],
    };
    for f in prime_factors_descending(ways.total()) {
        if let Some(d) = order.into_iter().find(|&d| units[d] / split[d] >= f) {
            split[d] *= f;
        }
    }
    Some((split[0], split[1]))
}

/// Which dimension of C a team of [`block_ways`] splits first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitFirst {
    /// The columns: each thread then reads all of A and its share of B. For outer products,
    /// the gemv columns kernel and the dots kernels, as measured when they got teams.
    Columns,
    /// The dimension whose operand is the larger: the rows where m > n (A is m×k, B k×n),
    /// so that no thread reads all of the larger one; else the columns. For the sup path:
    /// with the columns first, sgemm 3000×16×50 on two threads split 16 columns into panels
    /// of 12 and 4, each thread reading all of A (202 → 216 GFLOPS, 600×32×600 184 → 199,
    /// dgemm 1000×16×300 86 → 92; docs/Performance.md). Outer products and the gemv columns
    /// kernel lost that way (sgemm 3000×200×1 70 → 39, 2048×8×100 161 → 109).
    LargerOperand,
}

/// The prime factors of `x` (at most `MAX_THREADS` = 2^10, so at most 10 of them), largest
/// first, without allocating.
fn prime_factors_descending(mut x: usize) -> impl Iterator<Item = usize> {
    let mut factors = [0usize; usize::BITS as usize];
    let mut count = 0;
    let mut p = 2;
    while p * p <= x {
        while x.is_multiple_of(p) {
            factors[count] = p;
            count += 1;
            x /= p;
        }
        p += 1;
    }
    if x > 1 {
        factors[count] = x;
        count += 1;
    }
    factors.into_iter().take(count).rev()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: Blocksizes = Blocksizes {
        mr: 8,
        nr: 4,
        kc: 256,
        mc: 128,
        nc: 4096,
    };
    const PREFS: ThreadPrefs = ThreadPrefs {
        min_work_per_thread: 1 << 18,
    };
    const ANY_WORK: ThreadPrefs = ThreadPrefs {
        min_work_per_thread: 1,
    };

    #[test]
    fn small_problems_stay_single_threaded() {
        assert_eq!(auto_ways(8, (32, 32, 32), BS, PREFS), SINGLE);
        assert_eq!(auto_ways(8, (0, 100, 100), BS, PREFS), SINGLE);
        assert_eq!(auto_ways(1, (4000, 4000, 4000), BS, PREFS), SINGLE);
    }

    #[test]
    fn large_squares_split_m_and_n() {
        let w = auto_ways(2, (1000, 1000, 1000), BS, PREFS);
        assert_eq!(w.total(), 2);
        assert_eq!(w.pc, 1);
        let w = auto_ways(8, (2000, 2000, 2000), BS, PREFS);
        assert_eq!(
            (w.total(), w.pc, w.ic > 1, w.jr * w.jc > 1),
            (8, 1, true, true)
        );
        let w = auto_ways(6, (3000, 300, 500), BS, PREFS);
        assert_eq!(w.total(), 6);
        assert!(w.ic >= w.jr, "tall C splits rows first: {w:?}");
    }

    #[test]
    fn k_dominant_shapes_use_pc() {
        let w = auto_ways(8, (16, 16, 100_000), BS, PREFS);
        assert_eq!(w.total(), 8);
        assert!(w.pc >= 4, "{w:?}");
        let w = auto_ways(2, (64, 64, 100_000), BS, PREFS);
        assert_eq!(w.pc, 2, "{w:?}");
    }

    #[test]
    fn no_loop_gets_more_ways_than_units() {
        // One MR panel, one NR panel, three KC blocks: only k can be split, once.
        let w = auto_ways(8, (8, 4, 600), BS, ANY_WORK);
        assert_eq!(
            w,
            Ways {
                jc: 1,
                pc: 2,
                ic: 1,
                jr: 1,
                ir: 1
            }
        );
        let w = auto_ways(16, (100, 4, 256), BS, ANY_WORK);
        assert_eq!(
            (w.ic, w.pc, w.jr),
            (8, 1, 1),
            "13 MR panels take 8 ways at most: {w:?}"
        );
    }

    #[test]
    fn wide_c_uses_jc_when_each_group_gets_an_nc_block() {
        let w = auto_ways(2, (64, 20_000, 512), BS, PREFS);
        assert_eq!((w.jc, w.jr), (2, 1), "{w:?}");
    }

    #[test]
    fn block_teams_split_as_told_and_keep_chosen_ways() {
        let auto = Rntm::new().with_num_threads(4).unwrap();
        let ways = |jc, pc, ic, jr, ir| Ways { jc, pc, ic, jr, ir };
        const LARGER: SplitFirst = SplitFirst::LargerOperand;
        const COLUMNS: SplitFirst = SplitFirst::Columns;
        // Six 12-wide column panels, n > m: both factors of 4 go to the columns (6/2 = 3 ≥ 2).
        assert_eq!(
            block_ways(&auto, ways(1, 1, 2, 2, 1), (64, 72), (16, 12), LARGER),
            Some((1, 4))
        );
        // m > n: the rows first (12 row panels), though the two column panels could take one.
        assert_eq!(
            block_ways(&auto, ways(1, 1, 2, 2, 1), (192, 24), (16, 12), LARGER),
            Some((4, 1))
        );
        // Columns first: the two column panels take one factor, the rows the other.
        assert_eq!(
            block_ways(&auto, ways(1, 1, 2, 2, 1), (192, 24), (16, 12), COLUMNS),
            Some((2, 2))
        );
        // Three row panels take one factor of 2; the other goes to the columns.
        assert_eq!(
            block_ways(&auto, ways(1, 1, 2, 2, 1), (48, 24), (16, 12), LARGER),
            Some((2, 2))
        );
        // One column panel: the rows take them.
        assert_eq!(
            block_ways(&auto, ways(1, 1, 4, 1, 1), (64, 12), (16, 12), COLUMNS),
            Some((4, 1))
        );
        // Neither can take a factor of 3: it is left unused.
        let three = Rntm::new().with_num_threads(3).unwrap();
        assert_eq!(
            block_ways(&three, ways(1, 1, 3, 1, 1), (16, 24), (16, 12), COLUMNS),
            Some((1, 1))
        );
        // Chosen ways stay, unless they split k.
        let chosen = |w| Rntm::new().with_ways(w).unwrap();
        let w = ways(1, 1, 2, 3, 1);
        assert_eq!(
            block_ways(&chosen(w), w, (64, 72), (16, 12), LARGER),
            Some((2, 3))
        );
        let w = ways(1, 2, 1, 1, 1);
        assert_eq!(block_ways(&chosen(w), w, (64, 72), (16, 12), LARGER), None);
    }

    #[test]
    fn prime_factors() {
        let factors = |x| prime_factors_descending(x).collect::<Vec<_>>();
        assert_eq!(factors(12), [3, 2, 2]);
        assert_eq!(factors(7), [7]);
        assert_eq!(factors(1024), [2; 10]);
        assert!(factors(1).is_empty());
    }

    #[test]
    fn the_default_budget_is_shared() {
        let in_use = AtomicUsize::new(0);
        assert_eq!(reserve(&in_use, 2, 3), 2);
        assert_eq!(reserve(&in_use, 3, 3), 1);
        assert_eq!(reserve(&in_use, 3, 3), 0);
        assert_eq!(in_use.into_inner(), 3);
    }
}
