//! A team whose threads each compute their own block of C, with nothing else shared: no
//! packed buffer, no barrier. The sup path and outer products use it on several threads
//! (`sup.rs`, `gemv.rs`); the loop nest (`gemm.rs`) has its own thread-control tree.

use std::ops::Range;

use crate::error::Result;
use crate::thread::partition::partition;
use crate::thread::pool::run_team;
use crate::types::Scalar;
use crate::view::MatMut;

/// Runs `block(rows, cols, C[rows, cols])` on a team of `row_ways × col_ways` threads, each
/// with its own block: a share of C's rows aligned to `row_align` by a share of its columns
/// aligned to `col_align` (`partition`; a thread whose share is empty does nothing).
pub(crate) fn run_on_blocks_of_c<T: Scalar, F>(
    c: &mut MatMut<T>,
    (row_ways, col_ways): (usize, usize),
    (row_align, col_align): (usize, usize),
    pin: bool,
    block: F,
) -> Result<()>
where
    F: Fn(Range<usize>, Range<usize>, &mut MatMut<T>) + Sync,
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
        block(rows, cols, &mut c_block);
    };
    run_team(row_ways * col_ways, pin, &job, &|| ())
}
