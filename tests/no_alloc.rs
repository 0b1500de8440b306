//! Nothing is allocated per call in steady state: after a warm-up call, repeating the same
//! calls (every dtype, sizes that cross the blocksizes, edge tiles, transposes) allocates
//! nothing, so memory stays flat however many calls a program makes.

mod harness;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;

use oxblis::{
    Cntx, MatMut, MatRef, PackAOnly, Rntm, Scalar, SupLimits, TallLimits, c32, c64, gemm_ex,
    gemm_with_cntx,
};

/// Counts allocations made by the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.set(ALLOCATIONS.get() + 1);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Held by each test: buffers come from one pool, which a test running beside another
/// would find in use, and rightly allocate.
static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

fn calls<T: Scalar + oxblis::GemmPair<T>>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    m: usize,
    n: usize,
    k: usize,
) {
    let av = MatRef::col_major(a, m, k, m).unwrap();
    let bv = MatRef::row_major(b, k, n, n).unwrap();
    gemm_ex(&av, &bv, &mut MatMut::col_major(c, m, n, m).unwrap(), None).unwrap();
    let at = MatRef::col_major(a, k, m, k).unwrap();
    gemm_ex(
        &at.h(),
        &bv,
        &mut MatMut::row_major(c, m, n, n).unwrap().with_beta(T::one()),
        None,
    )
    .unwrap();
}

fn steady_state<T: Scalar + oxblis::GemmPair<T>>() -> usize {
    let (m, n, k) = (301, 67, 300);
    let a = vec![T::one(); m * k];
    let b = vec![T::one(); k * n];
    let mut c = vec![T::zero(); m * n];
    allocations_after_warm_up(50, || calls(&a, &b, &mut c, m, n, k))
}

/// This thread's allocations in `repeats` runs of `call` after one run to warm up (global
/// structures, pool blocks).
fn allocations_after_warm_up(repeats: usize, mut call: impl FnMut()) -> usize {
    call();
    let before = ALLOCATIONS.get();
    for _ in 0..repeats {
        call();
    }
    ALLOCATIONS.get() - before
}

#[test]
fn repeated_calls_allocate_nothing() {
    let _alone = ONE_TEST_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(steady_state::<f32>(), 0, "sgemm allocated in steady state");
    assert_eq!(steady_state::<f64>(), 0, "dgemm allocated in steady state");
    assert_eq!(steady_state::<c32>(), 0, "cgemm allocated in steady state");
    assert_eq!(steady_state::<c64>(), 0, "zgemm allocated in steady state");
}

/// Each configuration made to pack only A for every problem (`frame/l3/sup.rs`) and to
/// read A from memory on the tall path for every tall one (`frame/l3/tall.rs`,
/// `frame/l3/tall_complex.rs`): the paths whose two-thread teams each get a scratch of their
/// own (packed A, running sums).
fn contexts_with_per_thread_scratch() -> Vec<Cntx> {
    let no_sup = harness::no_sup_limits();
    let pack_a_only = SupLimits {
        pack_a_only: PackAOnly::Always,
        ..no_sup
    };
    let from_memory = TallLimits {
        min_a_bytes: 0,
        max_a_bytes: 0,
        from_memory_kc: 3,
    };
    oxblis::supported_contexts()
        .into_iter()
        .flat_map(|cntx| {
            [
                cntx.clone().with_sup_limits(pack_a_only),
                cntx.clone()
                    .with_sup_limits(no_sup)
                    .with_tall_limits(from_memory),
            ]
        })
        .collect()
}

/// Two-thread calls of `m`×`n`×`k` (A column-stored, as the tall path wants) on `cntx`:
/// the allocations of this thread, which hands out the team's scratch.
fn two_thread_steady_state<T: Scalar + oxblis::GemmPair<T>>(
    cntx: &Cntx,
    (m, n, k): (usize, usize, usize),
) -> usize {
    let two = Rntm::new().with_num_threads(2).unwrap();
    let a = vec![T::one(); m * k];
    let b = vec![T::one(); k * n];
    let mut c = vec![T::zero(); m * n];
    allocations_after_warm_up(20, || {
        let av = MatRef::col_major(&a, m, k, m).unwrap();
        let bv = MatRef::col_major(&b, k, n, k).unwrap();
        let mut cv = MatMut::col_major(&mut c, m, n, m).unwrap();
        gemm_with_cntx(&av, &bv, &mut cv, cntx, Some(&two)).unwrap();
    })
}

#[test]
fn two_thread_teams_with_scratch_allocate_nothing() {
    let _alone = ONE_TEST_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for cntx in contexts_with_per_thread_scratch() {
        let name = cntx.name();
        // Sup (packing only A) for the square, the tall path for the narrow C's.
        for shape in [(300, 200, 100), (2000, 5, 64)] {
            let counts = [
                ('s', two_thread_steady_state::<f32>(&cntx, shape)),
                ('d', two_thread_steady_state::<f64>(&cntx, shape)),
                ('c', two_thread_steady_state::<c32>(&cntx, shape)),
                ('z', two_thread_steady_state::<c64>(&cntx, shape)),
            ];
            for (letter, count) in counts {
                assert_eq!(count, 0, "{name} {letter}gemm {shape:?} allocated");
            }
        }
    }
}
