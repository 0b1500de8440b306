//! A team whose threads each compute their own block of C, with nothing else shared: no
//! shared packed buffer, no barrier. The sup path, the tall path and outer products use it on
//! several threads (`sup.rs`, `tall.rs`, `gemv.rs`); the loop nest (`gemm.rs`) has its own
//! thread-control tree.

use std::ops::Range;

use crate::error::Result;
use crate::l3::raw::RawBuf;
use crate::thread::partition::partition;
use crate::thread::pool::run_team;
use crate::types::{Element, Scalar};
use crate::view::MatMut;

/// Runs `block(rows, cols, C[rows, cols])` on a team of `row_ways × col_ways` threads, each
/// with its own block: a share of C's rows aligned to `row_align` by a share of its columns
/// aligned to `col_align` (`partition`; a thread whose share is empty does nothing).
pub(crate) fn run_on_blocks_of_c<T: Scalar, F>(
    c: &mut MatMut<T>,
    ways: (usize, usize),
    align: (usize, usize),
    pin: bool,
    block: F,
) -> Result<()>
where
    F: Fn(Range<usize>, Range<usize>, &mut MatMut<T>) + Sync,
{
    run_team_on_blocks(c, ways, align, pin, |_, rows, cols, c_block| {
        block(rows, cols, c_block)
    })
}

/// [`run_on_blocks_of_c`] over C's rows alone (`threads × 1`, shares aligned to
/// `row_align`), where each thread also has a scratch of its own: thread t the t-th
/// `per_thread` elements of `scratch` (packed blocks of A, running sums). The caller checks
/// the whole scratch out before the team starts, so running out of memory happens before
/// any of C is written, and handing it out allocates nothing (`tests/no_alloc.rs`).
/// Panics (a bug, caught by the team) if `scratch` holds fewer than `threads × per_thread`.
pub(crate) fn run_on_row_blocks_with_scratch<T: Scalar, S: Element, F>(
    c: &mut MatMut<T>,
    threads: usize,
    row_align: usize,
    pin: bool,
    (scratch, per_thread): (&mut [S], usize),
    block: F,
) -> Result<()>
where
    F: Fn(Range<usize>, &mut MatMut<T>, &mut [S]) + Sync,
{
    let scratch = RawBuf::new(scratch.as_mut_ptr(), scratch.len());
    run_team_on_blocks(
        c,
        (threads, 1),
        (row_align, 1),
        pin,
        |tid, rows, _, c_block| {
            // SAFETY: `run_team` gives every thread a different `tid`, so the threads' slices
            // are disjoint; `scratch` is exclusively borrowed for the whole call. `slice_mut`
            // panics if the scratch is short.
            let mine = unsafe { scratch.slice_mut(tid * per_thread..(tid + 1) * per_thread) };
            block(rows, c_block, mine);
        },
    )
}

/// The team both of the above run: `block(tid, rows, cols, C[rows, cols])` for thread `tid`
/// of `row_ways × col_ways`, skipping threads whose share is empty.
fn run_team_on_blocks<T: Scalar, F>(
    c: &mut MatMut<T>,
    (row_ways, col_ways): (usize, usize),
    (row_align, col_align): (usize, usize),
    pin: bool,
    block: F,
) -> Result<()>
where
    F: Fn(usize, Range<usize>, Range<usize>, &mut MatMut<T>) + Sync,
{
    let (m, n) = (c.nrows(), c.ncols());
    let c_all = c.raw();
    let job = |tid: usize| {
        let rows = partition(m, row_ways, tid / col_ways, row_align);
        let cols = partition(n, col_ways, tid % col_ways, col_align);
        if rows.is_empty() || cols.is_empty() {
            return;
        }
        let raw = c_all.block(rows.start, cols.start, rows.len(), cols.len());
        // SAFETY: the threads' blocks of C are disjoint (`partition` hands out disjoint
        // ranges), and C is exclusively borrowed for the whole call.
        let mut c_block = unsafe { MatMut::from_raw(raw) };
        block(tid, rows, cols, &mut c_block);
    };
    run_team(row_ways * col_ways, pin, &job, &|| ())
}
