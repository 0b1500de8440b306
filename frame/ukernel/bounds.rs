//! The safe tier's checks: every batch element's A_i and B_i, and C, must lie inside the
//! slices given, with checked arithmetic (an overflow is an error, not a wrap). Row-major
//! operands: the last element of a rows×cols block at `off` with leading dimension `ld` is
//! at `off + (rows-1)·ld + cols - 1`.

use crate::error::{Error, ErrorKind, Result};

/// Checks that the `rows`×`cols` row-major block at `off` with leading dimension `ld` lies in
/// a slice of `len` elements. `what` names it in the error ("A of batch element 3").
pub(crate) fn block(
    what: &dyn Fn() -> String,
    len: usize,
    off: usize,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<()> {
    let end = (rows - 1)
        .checked_mul(ld)
        .and_then(|x| x.checked_add(cols))
        .and_then(|x| x.checked_add(off));
    match end {
        Some(end) if end <= len => Ok(()),
        Some(end) => Err(Error::new(
            ErrorKind::InvalidView,
            format!(
                "brgemm: {} at offset {off} ({rows}×{cols}, leading dimension {ld}) needs \
                 {end} elements, the slice has {len}",
                what()
            ),
        )),
        None => Err(Error::new(
            ErrorKind::InvalidView,
            format!(
                "brgemm: {} at offset {off} ({rows}×{cols}, leading dimension {ld}) \
                 overflows usize",
                what()
            ),
        )),
    }
}

/// Checks that a packed B of `elems` elements at `off` lies in a slice of `len` elements.
pub(crate) fn packed(
    what: &dyn Fn() -> String,
    len: usize,
    off: usize,
    elems: usize,
) -> Result<()> {
    match off.checked_add(elems) {
        Some(end) if end <= len => Ok(()),
        _ => Err(Error::new(
            ErrorKind::InvalidView,
            format!(
                "brgemm: packed {} at offset {off} needs {elems} elements from there, the \
                 slice has {len}",
                what()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_fit_exactly_or_fail() {
        let what = || "A".to_string();
        // 3×4 at ld 5 ends at 2·5 + 4 = 14.
        assert!(block(&what, 14, 0, 3, 4, 5).is_ok());
        assert!(block(&what, 15, 1, 3, 4, 5).is_ok());
        assert!(block(&what, 14, 1, 3, 4, 5).is_err());
        assert!(block(&what, usize::MAX, 0, 3, 4, usize::MAX).is_err());
        assert!(packed(&what, 10, 2, 8).is_ok());
        assert!(packed(&what, 10, 3, 8).is_err());
        assert!(packed(&what, 10, usize::MAX, 8).is_err());
    }
}
