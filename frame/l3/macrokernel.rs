//! The macrokernel: loops 2 (jr, NR-wide panels of packed B) and 1 (ir, MR-tall panels of
//! packed A) around the microkernel, for one packed MC×KC block of A and KC×NC block of B.
//!
//! Full tiles go straight to C. Edge tiles (fewer than MR rows or NR columns left) are
//! computed into a scratch tile with beta = 0 and then merged into C's valid part, so
//! kernels never handle edges and never touch memory outside C.

use std::mem::MaybeUninit;

use crate::cntx::{Blocksizes, GemmKernel};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::types::{Element, GemmPair, Scalar};
use crate::view::MatMut;

/// `c` (≤ MC×NC) := alpha·Ap·Bp + beta·c, with `a_packed` holding ⌈m/MR⌉ panels of MR×`k`
/// and `b_packed` ⌈n/NR⌉ panels of `k`×NR, as `frame/packm.rs` lays them out.
pub(super) fn macrokernel<A: GemmPair<B>, B: Element>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a_packed: &[A],
    b_packed: &[B],
    k: usize,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) {
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();
    let ukr = kernel.ukr();
    let (m, n) = (c.nrows(), c.ncols());
    let (a_panels, b_panels) = (m.div_ceil(mr), n.div_ceil(nr));
    // The whole packed blocks must be there: this is what makes the kernel's reads in bounds.
    assert!(a_packed.len() >= a_panels * mr * k && b_packed.len() >= b_panels * k * nr);
    let a_panel = |i: usize| a_packed[i * mr * k..].as_ptr();
    let b_panel = |j: usize| b_packed[j * k * nr..].as_ptr();

    for jp in 0..b_panels {
        let (jr, nr_cur) = (jp * nr, nr.min(n - jp * nr));
        for ip in 0..a_panels {
            let (ir, mr_cur) = (ip * mr, mr.min(m - ip * mr));
            // The panels the next call will read, for the kernel's prefetching.
            let (a_next, b_next) = if ip + 1 < a_panels {
                (a_panel(ip + 1), b_panel(jp))
            } else {
                (a_panel(0), b_panel((jp + 1) % b_panels))
            };
            let mut args = GemmUkrArgs {
                k,
                alpha,
                a: a_panel(ip),
                b: b_panel(jp),
                beta,
                c: c.ptr_at(ir, jr),
                rs_c: c.row_stride(),
                cs_c: c.col_stride(),
                a_next,
                b_next,
            };
            if mr_cur == mr && nr_cur == nr {
                // SAFETY: the panels hold MR×k and k×NR packed elements (asserted above), the
                // MR×NR tile at (ir, jr) lies inside the exclusively borrowed C, and the
                // context's kernel runs on this CPU (its configuration was checked).
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
            // inside the exclusively borrowed C.
            unsafe {
                let p = c.offset(i as isize * rs_c + j as isize * cs_c);
                *p = if beta.is_zero() { t } else { t + beta * *p };
            }
        }
    }
}
