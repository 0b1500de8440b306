//! `gemmlike`: a complete, threaded gemm in two files, in the style of BLIS's gemmlike
//! sandbox: everything a reader needs to see how a fast gemm is put together is here, and
//! only the microkernel (the configuration's), the packing buffers' pool and the thread
//! pool come from the framework.
//!
//! ```text
//! split C among t threads: by columns (NR-aligned) when n has more tiles than m, else by
//!   rows (MR-aligned); each thread owns its block of C and needs no barrier
//! each thread, on its block:
//!   for jc step NC:  for pc step KC:  pack B → NR-wide panels            (pack.rs)
//!     for ic step MC:  pack A → MR-tall panels                           (pack.rs)
//!       for jr step NR:  for ir step MR:  microkernel, edges via a scratch tile
//! ```
//!
//! Threads: as many as the call's `Rntm` allows (a total, the product of explicit ways —
//! the split is this sandbox's own — or the global default), fewer when the problem is too
//! small to repay them (the configuration's `min_work_per_thread`) or has fewer tiles. The
//! price of splitting without barriers: each thread packs its own copy of the operand it
//! shares (all of A when splitting by columns), which costs O(t·m·k) copies, small next to
//! the O(m·n·k) product for large problems. Declined (left to the native implementation):
//! alpha = 0 or k = 0, where BLAS only scales C, and kernels that want k-grouped (VNNI)
//! panels, which this sandbox's packing does not produce.

mod pack;

use crate::cntx::{Blocksizes, Cntx, GemmKernel};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::l3::raw::{RawBuf, RawMat};
use crate::packbuf::PackBuf;
use crate::rntm::{Rntm, Threading};
use crate::sandbox::Sandboxed;
use crate::thread::defaults::thread_defaults;
use crate::thread::partition::partition;
use crate::thread::pool::run_team;
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The sandbox's entry point. See the module docs.
pub(crate) fn gemm<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    cntx: &Cntx,
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: &Rntm,
) -> Sandboxed {
    let alpha = a.scale() * b.scale();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    if m == 0 || n == 0 {
        return Sandboxed::Done(Ok(()));
    }
    if alpha.is_zero() || k == 0 {
        return Sandboxed::Declined;
    }
    let kernel = A::kernel(cntx);
    if kernel.k_group() != 1 || kernel.hw_context().is_some() {
        // gemmlike packs the plain layout only and keeps no per-thread kernel state: k-grouped
        // (VNNI) and AMX kernels go native.
        return Sandboxed::Declined;
    }
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();

    // How many threads, and which way C is split.
    let wanted = match rntm.threading() {
        Threading::Default => thread_defaults(),
        given => given,
    };
    let wanted = match wanted {
        Threading::Total(t) => t,
        Threading::Ways(w) => w.total(),
        Threading::Default => 1,
    };
    let by_columns = n.div_ceil(nr) >= m.div_ceil(mr);
    let tiles = if by_columns {
        n.div_ceil(nr)
    } else {
        m.div_ceil(mr)
    };
    let work = (m as u128 * n as u128 * k as u128)
        / cntx.thread_prefs().min_work_per_thread.max(1) as u128;
    let threads = wanted.min(tiles).min(work.max(1) as usize).max(1);

    // Every thread's packing buffers are taken before any thread starts, so running out of
    // memory is reported with C untouched.
    let Blocksizes { kc, mc, nc, .. } = kernel.blocksizes();
    let a_len = mc * kc;
    let b_len = kc * nc.min(n.next_multiple_of(nr));
    let (mut a_buf, mut b_buf) = match (
        PackBuf::checkout(threads * a_len * size_of::<A>()),
        PackBuf::checkout(threads * b_len * size_of::<B>()),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Sandboxed::Done(Err(e)),
    };
    let a_bufs = RawBuf::new(a_buf.as_mut_ptr::<A>(threads * a_len), threads * a_len);
    let b_bufs = RawBuf::new(b_buf.as_mut_ptr::<B>(threads * b_len), threads * b_len);

    let beta = c.beta();
    let c = c.raw();
    let job = |tid: usize| {
        // This thread's block of C, and the rows of A / columns of B it needs.
        let (rows, cols) = if by_columns {
            (0..m, partition(n, threads, tid, nr))
        } else {
            (partition(m, threads, tid, mr), 0..n)
        };
        if rows.is_empty() || cols.is_empty() {
            return;
        }
        let a_part = a.submatrix(rows.start, 0, rows.len(), k);
        let b_part = b.submatrix(0, cols.start, k, cols.len());
        let c_part = c.block(rows.start, cols.start, rows.len(), cols.len());
        // SAFETY: thread `tid` alone uses part `tid` of each buffer; the buffers outlive
        // `run_team`, which returns only when every thread is done.
        let (a_mine, b_mine) = unsafe {
            (
                a_bufs.part(tid * a_len, a_len).slice_mut(0..a_len),
                b_bufs.part(tid * b_len, b_len).slice_mut(0..b_len),
            )
        };
        one_thread(
            kernel, alpha, &a_part, &b_part, beta, c_part, a_mine, b_mine,
        );
    };
    Sandboxed::Done(run_team(threads, rntm.pinning(), &job, &|| {}))
}

/// The five loops on one thread's block: C := alpha·A·B + beta·C, packing into `a_buf`
/// (MC·KC elements) and `b_buf` (KC·min(NC, n rounded up to NR)).
#[allow(clippy::too_many_arguments)]
fn one_thread<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: RawMat<A::Acc>,
    a_buf: &mut [A],
    b_buf: &mut [B],
) {
    let Blocksizes { mr, nr, kc, mc, nc } = kernel.blocksizes();
    let (m, n, k) = (c.m, c.n, a.ncols());
    for jc in (0..n).step_by(nc) {
        let nc_cur = nc.min(n - jc);
        for pc in (0..k).step_by(kc) {
            let kc_cur = kc.min(k - pc);
            let b_packed = &mut b_buf[..nc_cur.div_ceil(nr) * nr * kc_cur];
            pack::pack_b(&b.submatrix(pc, jc, kc_cur, nc_cur), nr, b_packed);
            // The first slice of k scales C by beta; the later ones accumulate.
            let beta_here = if pc == 0 {
                beta
            } else {
                <A::Acc as Scalar>::one()
            };
            for ic in (0..m).step_by(mc) {
                let mc_cur = mc.min(m - ic);
                let a_packed = &mut a_buf[..mc_cur.div_ceil(mr) * mr * kc_cur];
                pack::pack_a(&a.submatrix(ic, pc, mc_cur, kc_cur), mr, a_packed);
                let c_block = c.block(ic, jc, mc_cur, nc_cur);
                macrokernel(
                    kernel, alpha, a_packed, b_packed, kc_cur, beta_here, c_block,
                );
            }
        }
    }
}

/// Loops 2 and 1 over one packed A block and one packed B block.
fn macrokernel<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    kernel: &GemmKernel<A, B>,
    alpha: A::Acc,
    a_packed: &[A],
    b_packed: &[B],
    k: usize,
    beta: A::Acc,
    c: RawMat<A::Acc>,
) {
    let Blocksizes { mr, nr, .. } = kernel.blocksizes();
    let ukr = kernel.ukr();
    let zero = <A::Acc as Element>::zero();
    let mut scratch = [zero; MAX_TILE_ELEMS];
    for (jp, jr) in (0..c.n).step_by(nr).enumerate() {
        let b_panel = &b_packed[jp * k * nr..][..k * nr];
        for (ip, ir) in (0..c.m).step_by(mr).enumerate() {
            let a_panel = &a_packed[ip * mr * k..][..mr * k];
            let (rows, cols) = (mr.min(c.m - ir), nr.min(c.n - jr));
            let full = rows == mr && cols == nr;
            // Full tiles are written in place; edge tiles into the scratch tile, beta = 0.
            let (dst, rs, cs, kernel_beta) = if full {
                (c.ptr_at(ir, jr), c.rs, c.cs, beta)
            } else {
                (scratch.as_mut_ptr(), 1, mr as isize, zero)
            };
            let args = GemmUkrArgs {
                k,
                alpha,
                a: a_panel.as_ptr(),
                b: b_panel.as_ptr(),
                beta: kernel_beta,
                c: dst,
                rs_c: rs,
                cs_c: cs,
                a_next: a_panel.as_ptr(),
                b_next: b_panel.as_ptr(),
            };
            // SAFETY: the panels are MR·k and k·NR elements (sliced above); the tile is a full
            // MR×NR tile of this thread's own block of C, or the scratch tile (MR·NR ≤
            // MAX_TILE_ELEMS, validated with the context); the context's kernel runs here.
            unsafe { ukr(&args) };
            if !full {
                for j in 0..cols {
                    for i in 0..rows {
                        let p = c.ptr_at(ir + i, jr + j);
                        let ab = scratch[j * mr + i];
                        // SAFETY: inside this thread's block of C; beta = 0 never reads it.
                        unsafe { *p = if beta.is_zero() { ab } else { ab + beta * *p } };
                    }
                }
            }
        }
    }
}
