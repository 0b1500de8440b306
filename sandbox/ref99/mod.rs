//! `ref99`: the Goto algorithm as plainly as it can be written: five loops on one thread,
//! the framework's packing (`frame/packm.rs`), the configuration's packed microkernel, and
//! edge tiles through a scratch tile. No sup path, no gemv path, no threads, no tricks: a
//! baseline to compare the native implementation and other sandboxes against, and a first
//! read for someone learning the algorithm.
//!
//! ```text
//! for jc in 0..n step NC:                   B columns
//!   for pc in 0..k step KC:                 depth
//!     pack B[pc.., jc..] into NR-wide panels
//!     for ic in 0..m step MC:               A rows
//!       pack A[ic.., pc..] into MR-tall panels
//!       for jr in 0..NC step NR: for ir in 0..MC step MR:
//!         microkernel: C tile := alpha·Ap·Bp + beta'·C tile   (beta' = beta for pc = 0, else 1)
//! ```
//!
//! Declined (left to the native implementation): alpha = 0 or k = 0, where BLAS only scales
//! C and never reads A or B.

use crate::cntx::{Blocksizes, Cntx};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::packbuf::PackBuf;
use crate::packm::{pack_a_for, pack_b_for};
use crate::rntm::Rntm;
use crate::sandbox::Sandboxed;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The sandbox's entry point. See the module docs.
pub(crate) fn gemm<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    _rntm: &Rntm,
) -> Sandboxed {
    let alpha = a.scale() * b.scale();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    if m == 0 || n == 0 {
        return Sandboxed::Done(Ok(()));
    }
    if alpha.is_zero() || k == 0 {
        return Sandboxed::Declined;
    }
    Sandboxed::Done(goto(cntx, alpha, a, b, c))
}

fn goto<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
) -> crate::Result<()> {
    let kernel = A::kernel(cntx);
    let Blocksizes { mr, nr, kc, mc, nc } = kernel.blocksizes();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let beta = c.beta();
    let mut a_buf = PackBuf::checkout(mc * kc * size_of::<A>())?;
    let mut b_buf = PackBuf::checkout(kc * nc * size_of::<B>())?;
    // The kernel's per-thread hardware state (AMX tiles), if it has any.
    let _hw = kernel.enter_hw_context();

    for jc in (0..n).step_by(nc) {
        let nc_cur = nc.min(n - jc);
        for pc in (0..k).step_by(kc) {
            let kc_cur = kc.min(k - pc);
            // The packed depth: kc_cur padded to the kernel's k group (1 for most kernels).
            let kp = kernel.padded_k(kc_cur);
            // The first slice of k applies beta; the others add to what it left.
            let beta_here = if pc == 0 {
                beta
            } else {
                <A::Acc as Scalar>::one()
            };
            let b_panels = nc_cur.div_ceil(nr);
            let bp = b_buf.as_mut_slice::<B>(b_panels * kp * nr);
            pack_b_for(
                kernel,
                &b.submatrix(pc, jc, kc_cur, nc_cur),
                0..b_panels,
                bp,
            );
            for ic in (0..m).step_by(mc) {
                let mc_cur = mc.min(m - ic);
                let a_panels = mc_cur.div_ceil(mr);
                let ap = a_buf.as_mut_slice::<A>(a_panels * mr * kp);
                pack_a_for(
                    kernel,
                    &a.submatrix(ic, pc, mc_cur, kc_cur),
                    0..a_panels,
                    ap,
                );
                for jr in (0..nc_cur).step_by(nr) {
                    for ir in (0..mc_cur).step_by(mr) {
                        let tile = Tile {
                            rows: mr.min(mc_cur - ir),
                            cols: nr.min(nc_cur - jr),
                            i: ic + ir,
                            j: jc + jr,
                        };
                        let a_panel = &ap[ir * kp..][..mr * kp];
                        let b_panel = &bp[jr * kp..][..kp * nr];
                        compute_tile::<A, B>(cntx, alpha, a_panel, b_panel, kp, beta_here, c, tile);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Where a tile of C sits, and how much of it is real (edges are smaller than MR×NR).
#[derive(Clone, Copy)]
struct Tile {
    rows: usize,
    cols: usize,
    i: usize,
    j: usize,
}

/// One microkernel call: straight into C for a full tile; for an edge tile, into a scratch
/// MR×NR tile with beta = 0, then merged into C's real part.
#[allow(clippy::too_many_arguments)]
fn compute_tile<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    alpha: A::Acc,
    a_panel: &[A],
    b_panel: &[B],
    k: usize,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    tile: Tile,
) {
    let kernel = A::kernel(cntx);
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();
    let full = tile.rows == mr && tile.cols == nr;
    let mut scratch = [<A::Acc as Element>::zero(); MAX_TILE_ELEMS];
    let (c_ptr, rs_c, cs_c, kernel_beta) = if full {
        (
            c.ptr_at(tile.i, tile.j),
            c.row_stride(),
            c.col_stride(),
            beta,
        )
    } else {
        (
            scratch.as_mut_ptr(),
            1,
            mr as isize,
            <A::Acc as Element>::zero(),
        )
    };
    let args = GemmUkrArgs {
        k,
        alpha,
        a: a_panel.as_ptr(),
        b: b_panel.as_ptr(),
        beta: kernel_beta,
        c: c_ptr,
        rs_c,
        cs_c,
        a_next: a_panel.as_ptr(),
        b_next: b_panel.as_ptr(),
    };
    // SAFETY: the panels hold MR·k and k·NR packed elements (sliced to that above); the
    // tile is either a full MR×NR tile inside the exclusively borrowed C, or the scratch
    // tile (MR·NR ≤ MAX_TILE_ELEMS, validated with the context); the context's kernel runs
    // on this CPU.
    unsafe { (kernel.ukr())(&args) };
    if !full {
        for j in 0..tile.cols {
            for i in 0..tile.rows {
                let p = c.ptr_at(tile.i + i, tile.j + j);
                let ab = scratch[j * mr + i];
                // SAFETY: (tile.i + i, tile.j + j) is inside C; beta = 0 does not read it.
                unsafe { *p = if beta.is_zero() { ab } else { ab + beta * *p } };
            }
        }
    }
}
