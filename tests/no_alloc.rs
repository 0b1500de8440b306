//! Nothing is allocated per call in steady state: after a warm-up call, repeating the same
//! calls (every dtype, sizes that cross the blocksizes, edge tiles, transposes) allocates
//! nothing, so memory stays flat however many calls a program makes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use oxblis::{MatMut, MatRef, Scalar, c32, c64, gemm_ex};

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
    calls(&a, &b, &mut c, m, n, k); // warm-up: global structures, pool blocks
    let before = ALLOCATIONS.get();
    for _ in 0..50 {
        calls(&a, &b, &mut c, m, n, k);
    }
    ALLOCATIONS.get() - before
}

#[test]
fn repeated_calls_allocate_nothing() {
    assert_eq!(steady_state::<f32>(), 0, "sgemm allocated in steady state");
    assert_eq!(steady_state::<f64>(), 0, "dgemm allocated in steady state");
    assert_eq!(steady_state::<c32>(), 0, "cgemm allocated in steady state");
    assert_eq!(steady_state::<c64>(), 0, "zgemm allocated in steady state");
}
