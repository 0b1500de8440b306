//! Splitting a loop's range among the threads that share it.
//!
//! [`partition`]`(len, parts, part, align)` gives part `part` of `parts` a contiguous range
//! of `0..len` whose boundaries are multiples of `align` (the last range ends at `len`). The
//! range is cut into ⌈len/align⌉ units, dealt as evenly as possible, the first parts taking
//! one extra unit each when they do not divide. Worked example, `len` = 22, `align` = 4 (six
//! units, the last one 2 long), `parts` = 4:
//!
//! ```text
//! part   units   range
//!   0    0..2    0..8
//!   1    2..4    8..16
//!   2    4..5    16..20
//!   3    5..6    20..22
//! ```
//!
//! With more parts than units the extra parts get empty ranges at the end. Consecutive parts
//! get consecutive, non-overlapping ranges that together cover `0..len` exactly: that is what
//! makes the tiles of C that different threads write disjoint. Aligning to MR or NR makes
//! every part's tiles the same tiles a single thread would use, so results do not depend on
//! the split.

use std::ops::Range;

/// Part `part` of `0..len` split into `parts` ranges aligned to `align` (see module docs).
pub(crate) fn partition(len: usize, parts: usize, part: usize, align: usize) -> Range<usize> {
    debug_assert!(parts >= 1 && part < parts && align >= 1);
    let units = len.div_ceil(align);
    let (base, extra) = (units / parts, units % parts);
    let first_unit = part * base + part.min(extra);
    let unit_count = base + usize::from(part < extra);
    let start = (first_unit * align).min(len);
    let end = ((first_unit + unit_count) * align).min(len);
    start..end
}

/// The length of the longest range `partition(len, parts, _, align)` hands out.
pub(crate) fn largest_part(len: usize, parts: usize, align: usize) -> usize {
    let r = partition(len, parts, 0, align);
    r.end - r.start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_example() {
        let parts: Vec<_> = (0..4).map(|p| partition(22, 4, p, 4)).collect();
        assert_eq!(parts, [0..8, 8..16, 16..20, 20..22]);
        assert_eq!(largest_part(22, 4, 4), 8);
    }

    #[test]
    fn parts_tile_the_range_exactly() {
        for len in 0..40 {
            for parts in 1..9 {
                for align in 1..6 {
                    let mut next = 0;
                    for part in 0..parts {
                        let r = partition(len, parts, part, align);
                        assert_eq!(r.start, next, "len {len} parts {parts} align {align}");
                        assert!(r.start.is_multiple_of(align) || r.start == len);
                        assert!(r.end - r.start <= largest_part(len, parts, align));
                        next = r.end;
                    }
                    assert_eq!(next, len);
                }
            }
        }
    }
}
