//! The packed layouts a brgemm works on, in one place: how many elements a batch element's
//! packed A and B take, the padded depth the kernel is called with, and the packing itself
//! (through `frame/packm.rs`, so the layouts are exactly the loop nest's).
//!
//! ```text
//!   packed A_i: ⌈M/MR⌉ panels of MR × Kp     packed B_i: ⌈N/NR⌉ panels of Kp × NR
//!   (Kp = K rounded up to the kernel's k group; the padding is zeros)
//! ```
//!
//! This is the only file that asks a kernel how it groups k, so that splitting the k group
//! into separate A and B groups (AMX kernels) touches [`a_k_group`], [`b_k_group`] and
//! [`padded_k`] only.

use crate::cntx::GemmKernel;
use crate::packm::{pack_a_for, pack_b_for};
use crate::types::Element;
use crate::view::MatRef;

/// How many consecutive k values the kernel's packed A panels interleave (AMX: 32 bf16 or
/// 64 bytes, a tile row).
pub(crate) fn a_k_group<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> usize {
    kernel.k_groups().0
}

/// How many consecutive k values the kernel's packed B panels interleave: > 1 is the VNNI
/// layout (pairs for bf16, quads for bytes) that makes [`super::pack_type`] answer `Pack32`.
pub(crate) fn b_k_group<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> usize {
    kernel.k_groups().1
}

/// The depth of the packed panels and of every kernel call: K padded with zeros to the
/// kernel's k granularity (the larger group), exactly as `frame/packm.rs` pads.
pub(crate) fn padded_k<A: Element, B: Element>(kernel: &GemmKernel<A, B>, k: usize) -> usize {
    kernel.padded_k(k)
}

/// Sizes, in elements, of one batch element's packed operands for an M×N×K brgemm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packed {
    /// The kernel's tile.
    pub mr: usize,
    /// The kernel's tile.
    pub nr: usize,
    /// The padded depth.
    pub kp: usize,
    /// Elements of one A panel (MR·Kp).
    pub a_panel: usize,
    /// Elements of one packed A_i (⌈M/MR⌉ panels).
    pub a_block: usize,
    /// Elements of one B panel (Kp·NR).
    pub b_panel: usize,
    /// Elements of one packed B_i (⌈N/NR⌉ panels): also a [`super::Transform`]'s output.
    pub b_block: usize,
}

impl Packed {
    /// The sizes for `kernel`, or `None` if they overflow.
    pub(crate) fn new<A: Element, B: Element>(
        kernel: &GemmKernel<A, B>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Option<Packed> {
        let bs = kernel.blocksizes();
        let (mr, nr) = (bs.mr, bs.nr);
        let kp = padded_k(kernel, k);
        let a_panel = mr.checked_mul(kp)?;
        let b_panel = nr.checked_mul(kp)?;
        Some(Packed {
            mr,
            nr,
            kp,
            a_panel,
            a_block: m.div_ceil(mr).checked_mul(a_panel)?,
            b_panel,
            b_block: n.div_ceil(nr).checked_mul(b_panel)?,
        })
    }
}

/// Packs the M×K view `a` into `dst` (`Packed::a_block` elements) as the kernel's A.
///
/// A brgemm's A is row-major, so for a k-grouped kernel each group of a row is `g`
/// contiguous elements: [`pack_rows_k_grouped`] copies them as such. (The general packer
/// goes element by element; A is packed on every execute, and on 512³ i8 blocked with
/// 128×96 blocks that made the whole gemm 2× slower.)
pub(crate) fn pack_a<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    a: &MatRef<A>,
    dst: &mut [A],
) {
    let mr = kernel.blocksizes().mr;
    let g = a_k_group(kernel);
    let kp = padded_k(kernel, a.ncols());
    let rows_contiguous = a.col_stride() == 1 && !a.is_conj();
    match g {
        2 if rows_contiguous => pack_rows_k_grouped::<A, 2>(a, mr, kp, dst),
        4 if rows_contiguous => pack_rows_k_grouped::<A, 4>(a, mr, kp, dst),
        32 if rows_contiguous => pack_rows_k_grouped::<A, 32>(a, mr, kp, dst),
        64 if rows_contiguous => pack_rows_k_grouped::<A, 64>(a, mr, kp, dst),
        _ => pack_a_for(kernel, a, 0..a.nrows().div_ceil(mr), dst),
    }
}

/// The k-grouped (VNNI) layout of `frame/packm.rs` (`dst[panel·MR·Kp + (p/g)·MR·g + i·g +
/// p%g] = a[panel·MR + i, p]`, zero past M and K) for a view whose rows are contiguous
/// along k and not conjugated: whole groups go as `G`-element copies (G a constant, so each
/// is one load and store rather than a `memmove` call).
/// `kp` is the padded depth (a multiple of `G`, and of B's group if that is larger).
fn pack_rows_k_grouped<T: Element, const G: usize>(
    a: &MatRef<T>,
    mr: usize,
    kp: usize,
    dst: &mut [T],
) {
    let g = G;
    let (m, k) = (a.nrows(), a.ncols());
    let (full, rest) = (k / g, k % g);
    debug_assert!(a.col_stride() == 1 && dst.len() == m.div_ceil(mr) * mr * kp);
    for (panel, out) in dst.chunks_exact_mut(mr * kp).enumerate() {
        for i in 0..mr {
            let row = panel * mr + i;
            if row >= m {
                for q in 0..kp / g {
                    out[q * mr * g + i * g..][..g].fill(T::zero());
                }
                continue;
            }
            // SAFETY: row < m of the view, whose k elements are contiguous (unit column
            // stride) and readable for its lifetime.
            let src = unsafe {
                std::slice::from_raw_parts(a.as_ptr().offset(row as isize * a.row_stride()), k)
            };
            for (q, group) in src.chunks_exact(G).enumerate() {
                let group: &[T; G] = group.try_into().expect("chunks_exact gives G elements");
                let slot: &mut [T; G] = (&mut out[q * mr * G + i * G..][..G])
                    .try_into()
                    .expect("a G-element slice");
                *slot = *group;
            }
            if rest > 0 {
                let slot = &mut out[full * mr * g + i * g..][..g];
                slot[..rest].copy_from_slice(&src[full * g..]);
                slot[rest..].fill(T::zero());
            }
            // Whole groups of padding, where B's larger group sets the depth.
            for q in k.div_ceil(g)..kp / g {
                out[q * mr * g + i * g..][..g].fill(T::zero());
            }
        }
    }
}

/// Packs the K×N view `b` into `dst` (`Packed::b_block` elements) as the kernel's B.
pub(crate) fn pack_b<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    b: &MatRef<B>,
    dst: &mut [B],
) {
    let panels = b.ncols().div_ceil(kernel.blocksizes().nr);
    pack_b_for(kernel, b, 0..panels, dst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_copies_match_the_general_k_grouped_packer() {
        // 5×7 row-major with ld 9, MR 4, g 4: two panels, K padded to 8.
        let data: Vec<i8> = (0..45).map(|x| x as i8 - 20).collect();
        let a = MatRef::row_major(&data, 5, 7, 9).unwrap();
        let mut fast = vec![99i8; 2 * 4 * 8];
        pack_rows_k_grouped::<i8, 4>(&a, 4, 8, &mut fast);
        for panel in 0..2 {
            for p in 0..8 {
                for i in 0..4 {
                    let got = fast[panel * 32 + (p / 4) * 16 + i * 4 + p % 4];
                    let want = if p < 7 {
                        a.get(panel * 4 + i, p).unwrap_or(0)
                    } else {
                        0
                    };
                    assert_eq!(got, want, "panel {panel} p {p} i {i}");
                }
            }
        }
    }
}
