//! Software prefetch of a byte range, one hint per cache line it touches: for memory the
//! hardware prefetcher does not see coming (columns a page apart, the next tile of C).
//! Nothing on targets without a prefetch hint here.

/// Which cache a prefetch aims at.
#[derive(Clone, Copy)]
pub(crate) enum Level {
    /// The L1 data cache (`prefetcht0`): for what the next few hundred cycles read.
    L1,
    /// L2 (`prefetcht1`): for what is read further ahead.
    L2,
}

/// Asks for the `bytes` bytes from `start` in `level`, from the line holding the first byte
/// to the one holding the last, by address (nothing is read, nothing can fault). A plain
/// loop: an iterator chain here cost more than the prefetches themselves.
#[inline]
pub(crate) fn prefetch_bytes<T>(start: *const T, bytes: usize, level: Level) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
        const LINE: usize = 64;
        let Some(last_byte) = bytes.checked_sub(1) else {
            return;
        };
        let start = start.cast::<i8>();
        let skew = start as usize % LINE;
        let first_line = start.wrapping_sub(skew);
        let mut offset = 0;
        while offset <= last_byte + skew {
            let line = first_line.wrapping_add(offset);
            // SAFETY: a prefetch is only a hint: it cannot fault, whatever the address.
            unsafe {
                match level {
                    Level::L1 => _mm_prefetch::<_MM_HINT_T0>(line),
                    Level::L2 => _mm_prefetch::<_MM_HINT_T1>(line),
                }
            }
            offset += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes, level);
}
