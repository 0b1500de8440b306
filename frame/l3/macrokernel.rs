//! The macrokernel: loops 2 (jr, NR-wide panels of packed B) and 1 (ir, MR-tall panels of
//! packed A) around the microkernel, over one thread's tiles of one packed MC×KC block of A
//! and KC×NC block of B.
//!
//! Full tiles go straight to C. Edge tiles (fewer than MR rows or NR columns left) go to the
//! configuration's sup kernel when it has one (it reads the packed panels as strided A and
//! B and computes only the tile's real rows and columns); otherwise they are computed into a
//! scratch tile with beta = 0 and merged into C's valid part. Either way the packed kernels
//! never handle edges and nothing touches memory outside C.

use std::mem::MaybeUninit;

use crate::cntx::{Blocksizes, GemmKernel};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS, SupUkrArgs};
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
            } else if let Some(sup) = kernel
                .sup()
                // The sup kernel reads plain panels only (not the k-grouped VNNI layout).
                .filter(|s| s.tile().0 >= mr && s.tile().1 >= nr && kernel.k_group() == 1)
            {
                // A packed A micropanel is A with unit row stride and column stride MR, a
                // packed B micropanel is B with row stride NR and column stride 1: exactly
                // what a sup kernel reads, and it computes just the tile's real rows and
                // columns, straight into C.
                let sup_args = SupUkrArgs {
                    m: mr_cur,
                    n: nr_cur,
                    k,
                    alpha,
                    a: args.a,
                    cs_a: mr as isize,
                    b: args.b,
                    rs_b: nr as isize,
                    cs_b: 1,
                    beta,
                    c: args.c,
                    rs_c: c.rs,
                    cs_c: c.cs,
                };
                // SAFETY: rows below mr_cur of the packed A panel and columns below nr_cur of
                // the packed B panel are in the panels (asserted above), the mr_cur×nr_cur
                // tile is inside C's block and this thread's alone, and the tile is within
                // the sup kernel's MR×NR.
                unsafe { (sup.ukr())(&sup_args) };
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
