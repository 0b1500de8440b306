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

/// How many consecutive k values the kernel's packed A panels interleave.
pub(crate) fn a_k_group<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> usize {
    kernel.k_group()
}

/// How many consecutive k values the kernel's packed B panels interleave: > 1 is the VNNI
/// layout that makes [`super::pack_type`] answer `Pack32`.
pub(crate) fn b_k_group<A: Element, B: Element>(kernel: &GemmKernel<A, B>) -> usize {
    kernel.k_group()
}

/// The depth of the packed panels and of every kernel call: K padded with zeros to a
/// multiple of both k groups.
pub(crate) fn padded_k<A: Element, B: Element>(kernel: &GemmKernel<A, B>, k: usize) -> usize {
    let g = lcm(a_k_group(kernel), b_k_group(kernel));
    k.next_multiple_of(g)
}

fn lcm(x: usize, y: usize) -> usize {
    let (mut a, mut b) = (x, y);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    x / a * y
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
pub(crate) fn pack_a<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    a: &MatRef<A>,
    dst: &mut [A],
) {
    let panels = a.nrows().div_ceil(kernel.blocksizes().mr);
    pack_a_for(kernel, a, 0..panels, dst);
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
    use super::lcm;

    #[test]
    fn lcm_of_k_groups() {
        assert_eq!(lcm(1, 1), 1);
        assert_eq!(lcm(4, 1), 4);
        assert_eq!(lcm(2, 4), 4);
        assert_eq!(lcm(4, 6), 12);
    }
}
