//! The macrokernel: loops 2 (jr, NR-wide panels of packed B) and 1 (ir, MR-tall panels of
//! packed A) around the microkernel, over one thread's tiles of one packed MC×KC block of A
//! and KC×NC block of B.
//!
//! Full tiles go straight to C. Edge tiles (fewer than MR rows or NR columns left) are
//! computed into a scratch tile with beta = 0 and then merged into C's valid part, so
//! kernels never handle edges and never touch memory outside C.

use std::mem::MaybeUninit;

use crate::cntx::{Blocksizes, GemmKernel};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::l3::gemm::Tiles;
use crate::l3::raw::RawMat;
use crate::types::{Element, GemmPair, Scalar};

/// For the tiles `tiles` of `c` (≤ MC×NC): c := alpha·Ap·Bp + beta·c, with `a_packed` holding
/// ⌈m/MR⌉ panels of MR×`k` and `b_packed` ⌈n/NR⌉ panels of `k`×NR, as `frame/packm.rs` lays
/// them out. The caller guarantees no other thread writes these tiles of `c` meanwhile.
#[allow(clippy::too_many_arguments)]
pub(super) fn macrokernel<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a_packed: &[A],
    b_packed: &[B],
    k: usize,
    beta: A::Acc,
    c: RawMat<A::Acc>,
    tiles: Tiles,
) {
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();
    let ukr = kernel.ukr();
    let (m, n) = (c.m, c.n);
    // The whole packed blocks must be there: this is what makes the kernel's reads in bounds.
    assert!(a_packed.len() >= m.div_ceil(mr) * mr * k && b_packed.len() >= n.div_ceil(nr) * k * nr);
    assert!(tiles.ir.end <= m.div_ceil(mr) && tiles.jr.end <= n.div_ceil(nr));
    let a_panel = |i: usize| a_packed[i * mr * k..].as_ptr();
    let b_panel = |j: usize| b_packed[j * k * nr..].as_ptr();

    for jp in tiles.jr.clone() {
        let (jr, nr_cur) = (jp * nr, nr.min(n - jp * nr));
        for ip in tiles.ir.clone() {
            let (ir, mr_cur) = (ip * mr, mr.min(m - ip * mr));
            // The panels this thread's next call will read, for the kernel's prefetching.
            let (a_next, b_next) = if ip + 1 < tiles.ir.end {
                (a_panel(ip + 1), b_panel(jp))
            } else if jp + 1 < tiles.jr.end {
                (a_panel(tiles.ir.start), b_panel(jp + 1))
            } else {
                (a_panel(tiles.ir.start), b_panel(tiles.jr.start))
            };
            let mut args = GemmUkrArgs {
                k,
                alpha,
                a: a_panel(ip),
                b: b_panel(jp),
                beta,
                c: c.ptr_at(ir, jr),
                rs_c: c.rs,
                cs_c: c.cs,
                a_next,
                b_next,
            };
            if mr_cur == mr && nr_cur == nr {
                // SAFETY: the panels hold MR×k and k×NR packed elements (asserted above), the
                // MR×NR tile at (ir, jr) lies inside C's block and is this thread's alone, and
                // the context's kernel runs on this CPU (its configuration was checked).
                unsafe { ukr(&args) };
            } else {
                edge_tile(kernel, &mut args, mr_cur, nr_cur);
            }
        }
    }
}

/// Runs the kernel on a scratch tile, then merges its `rows`×`cols` valid part into C
/// (C is read only when beta != 0).
fn edge_tile<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    args: &mut GemmUkrArgs<A, B>,
    rows: usize,
    cols: usize,
) {
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();
    let mut scratch = [const { MaybeUninit::<A::Acc>::uninit() }; MAX_TILE_ELEMS];
    // Lay the scratch tile out the way the kernel likes C.
    let (rs_t, cs_t) = if kernel.prefers_rows() {
        (nr as isize, 1)
    } else {
        (1, mr as isize)
    };
    let (c, rs_c, cs_c, beta) = (args.c, args.rs_c, args.cs_c, args.beta);
    args.c = scratch.as_mut_ptr().cast();
    args.rs_c = rs_t;
    args.cs_c = cs_t;
    args.beta = A::Acc::zero();
    // SAFETY: the scratch tile has MR·NR ≤ MAX_TILE_ELEMS (checked by `Cntx::validate`)
    // writable elements at these strides, beta = 0 so it is never read, and the packed
    // panels are as in `macrokernel`.
    unsafe { (kernel.ukr())(args) };
    for j in 0..cols {
        for i in 0..rows {
            // SAFETY: the kernel wrote every element of the MR×NR scratch tile.
            let t = unsafe { scratch[i * rs_t as usize + j * cs_t as usize].assume_init() };
            // SAFETY: i < rows ≤ the rows of C left at this tile, j likewise: (i, j) is
            // inside C's block, in this thread's tile.
            unsafe {
                let p = c.offset(i as isize * rs_c + j as isize * cs_c);
                *p = if beta.is_zero() { t } else { t + beta * *p };
            }
        }
    }
}
