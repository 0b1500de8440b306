//! The scratch buffer a brgemm packs its operands into: owned, zero-initialised and aligned
//! to 64 bytes, so packed panels start on cache lines. The raw tier accepts any buffer with
//! the same properties instead (`Brgemm::execute_raw`).

/// One cache line: the unit the scratchpad is allocated in, which gives it its alignment.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// An owned, 64-byte aligned, zero-initialised byte buffer for [`super::Brgemm::execute`].
/// Allocate it once (outside the hot loop) with [`super::Brgemm::scratchpad_size`] bytes,
/// or more; one scratchpad serves any number of brgemms whose size it covers.
pub struct Scratchpad {
    lines: Vec<Line>,
}

impl std::fmt::Debug for Scratchpad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratchpad")
            .field("bytes", &self.len())
            .finish()
    }
}

impl Scratchpad {
    /// A scratchpad of at least `bytes` bytes (rounded up to 64).
    pub fn new(bytes: usize) -> Scratchpad {
        Scratchpad {
            lines: vec![Line([0; 64]); bytes.div_ceil(64)],
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.lines.len() * 64
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Grows it to at least `bytes` bytes (never shrinks).
    pub fn reserve(&mut self, bytes: usize) {
        let lines = bytes.div_ceil(64);
        if lines > self.lines.len() {
            self.lines.resize(lines, Line([0; 64]));
        }
    }

    /// Its first byte (64-byte aligned), for the raw tier.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.lines.as_mut_ptr().cast()
    }
}
