//! CPU feature detection by CPUID and XGETBV, never by model name.
//!
//! A feature counts only when the CPU has it **and** the OS saves its register state
//! (XCR0): AVX/AVX2/FMA need the YMM state (bits 1, 2), AVX-512 the opmask and ZMM states
//! (bits 5, 6, 7), AMX the tile config and tile data states (bits 17, 18). AMX additionally
//! needs a per-process permission from Linux; that request belongs to the AMX configuration,
//! not to detection.

use std::fmt;

/// A set of CPU features.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Features(u32);

impl Features {
    /// The empty set.
    pub const NONE: Features = Features(0);
    /// SSE2 (the x86-64 baseline).
    pub const SSE2: Features = Features(1 << 0);
    /// AVX (with OS YMM support).
    pub const AVX: Features = Features(1 << 1);
    /// AVX2.
    pub const AVX2: Features = Features(1 << 2);
    /// FMA3.
    pub const FMA: Features = Features(1 << 3);
    /// AVX-512 Foundation (with OS ZMM/opmask support).
    pub const AVX512F: Features = Features(1 << 4);
    /// AVX-512 doubleword/quadword.
    pub const AVX512DQ: Features = Features(1 << 5);
    /// AVX-512 conflict detection.
    pub const AVX512CD: Features = Features(1 << 6);
    /// AVX-512 byte/word.
    pub const AVX512BW: Features = Features(1 << 7);
    /// AVX-512 vector length extensions.
    pub const AVX512VL: Features = Features(1 << 8);
    /// AVX-512 VNNI (`vpdpbusd`).
    pub const AVX512_VNNI: Features = Features(1 << 9);
    /// AVX-512 BF16 (`vdpbf16ps`).
    pub const AVX512_BF16: Features = Features(1 << 10);
    /// AMX tile architecture (with OS tile state support).
    pub const AMX_TILE: Features = Features(1 << 11);
    /// AMX bf16 dot products.
    pub const AMX_BF16: Features = Features(1 << 12);
    /// AMX int8 dot products.
    pub const AMX_INT8: Features = Features(1 << 13);

    /// Every named feature, in report order.
    pub const ALL: [(Features, &'static str); 14] = [
        (Self::SSE2, "sse2"),
        (Self::AVX, "avx"),
        (Self::AVX2, "avx2"),
        (Self::FMA, "fma"),
        (Self::AVX512F, "avx512f"),
        (Self::AVX512DQ, "avx512dq"),
        (Self::AVX512CD, "avx512cd"),
        (Self::AVX512BW, "avx512bw"),
        (Self::AVX512VL, "avx512vl"),
        (Self::AVX512_VNNI, "avx512_vnni"),
        (Self::AVX512_BF16, "avx512_bf16"),
        (Self::AMX_TILE, "amx_tile"),
        (Self::AMX_BF16, "amx_bf16"),
        (Self::AMX_INT8, "amx_int8"),
    ];

    /// The union of two sets (usable in `const` items).
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// Whether every feature of `other` is in `self`.
    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of `self` that are not in `other`.
    pub const fn without(self, other: Features) -> Features {
        Features(self.0 & !other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// What this CPU has and its OS enables.
    pub fn detect() -> Features {
        detect_x86()
    }

    /// What the compiler was told it may assume (`-C target-cpu` / `target-feature`): the
    /// build's baseline. Code outside `#[target_feature]` functions may use these anywhere.
    pub fn compiled_baseline() -> Features {
        let mut f = Features::NONE;
        let table = [
            (cfg!(target_feature = "sse2"), Self::SSE2),
            (cfg!(target_feature = "avx"), Self::AVX),
            (cfg!(target_feature = "avx2"), Self::AVX2),
            (cfg!(target_feature = "fma"), Self::FMA),
            (cfg!(target_feature = "avx512f"), Self::AVX512F),
            (cfg!(target_feature = "avx512dq"), Self::AVX512DQ),
            (cfg!(target_feature = "avx512cd"), Self::AVX512CD),
            (cfg!(target_feature = "avx512bw"), Self::AVX512BW),
            (cfg!(target_feature = "avx512vl"), Self::AVX512VL),
            (cfg!(target_feature = "avx512vnni"), Self::AVX512_VNNI),
            (cfg!(target_feature = "avx512bf16"), Self::AVX512_BF16),
            (cfg!(target_feature = "amx-tile"), Self::AMX_TILE),
            (cfg!(target_feature = "amx-bf16"), Self::AMX_BF16),
            (cfg!(target_feature = "amx-int8"), Self::AMX_INT8),
        ];
        for (on, feature) in table {
            if on {
                f = f.union(feature);
            }
        }
        f
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Self::ALL
            .iter()
            .filter(|(feature, _)| self.contains(*feature))
            .map(|(_, name)| *name)
            .collect();
        if names.is_empty() {
            f.write_str("(none)")
        } else {
            f.write_str(&names.join(" "))
        }
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Features({self})")
    }
}

/// The raw CPUID words detection reads, so the decoding can be tested without the CPU.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CpuidWords {
    pub leaf1_ecx: u32,
    pub leaf1_edx: u32,
    pub leaf7_ebx: u32,
    pub leaf7_ecx: u32,
    pub leaf7_edx: u32,
    pub leaf7_1_eax: u32,
    /// XCR0, or 0 when the OS has not enabled XSAVE.
    pub xcr0: u64,
}

/// Decodes CPUID/XCR0 words into features (bit positions from the Intel SDM, vol. 2A, CPUID).
pub(crate) fn decode(w: CpuidWords) -> Features {
    let bit = |word: u32, n: u32| word >> n & 1 == 1;
    let ymm_state = w.xcr0 & 0b110 == 0b110; // SSE + AVX state
    let zmm_state = ymm_state && w.xcr0 & 0b1110_0000 == 0b1110_0000; // opmask, ZMM_Hi256, Hi16_ZMM
    let tile_state = w.xcr0 & (0b11 << 17) == 0b11 << 17; // XTILECFG, XTILEDATA
    let mut f = Features::NONE;
    let mut add = |on: bool, feature: Features| {
        if on {
            f = f.union(feature);
        }
    };
    add(bit(w.leaf1_edx, 26), Features::SSE2);
    add(ymm_state && bit(w.leaf1_ecx, 28), Features::AVX);
    add(ymm_state && bit(w.leaf1_ecx, 12), Features::FMA);
    add(ymm_state && bit(w.leaf7_ebx, 5), Features::AVX2);
    add(zmm_state && bit(w.leaf7_ebx, 16), Features::AVX512F);
    add(zmm_state && bit(w.leaf7_ebx, 17), Features::AVX512DQ);
    add(zmm_state && bit(w.leaf7_ebx, 28), Features::AVX512CD);
    add(zmm_state && bit(w.leaf7_ebx, 30), Features::AVX512BW);
    add(zmm_state && bit(w.leaf7_ebx, 31), Features::AVX512VL);
    add(zmm_state && bit(w.leaf7_ecx, 11), Features::AVX512_VNNI);
    add(zmm_state && bit(w.leaf7_1_eax, 5), Features::AVX512_BF16);
    add(tile_state && bit(w.leaf7_edx, 24), Features::AMX_TILE);
    add(tile_state && bit(w.leaf7_edx, 22), Features::AMX_BF16);
    add(tile_state && bit(w.leaf7_edx, 25), Features::AMX_INT8);
    f
}

#[cfg(target_arch = "x86_64")]
fn detect_x86() -> Features {
    use std::arch::x86_64::{__cpuid, __cpuid_count};

    #[target_feature(enable = "xsave")]
    fn read_xcr0() -> u64 {
        // SAFETY: only called when CPUID says OSXSAVE, so XGETBV is available and XCR0 (index
        // 0) always exists.
        unsafe { std::arch::x86_64::_xgetbv(0) }
    }

    let leaf0 = __cpuid(0);
    let leaf1 = __cpuid(1);
    let mut w = CpuidWords {
        leaf1_ecx: leaf1.ecx,
        leaf1_edx: leaf1.edx,
        ..CpuidWords::default()
    };
    if leaf0.eax >= 7 {
        let l7 = __cpuid_count(7, 0);
        w.leaf7_ebx = l7.ebx;
        w.leaf7_ecx = l7.ecx;
        w.leaf7_edx = l7.edx;
        if l7.eax >= 1 {
            w.leaf7_1_eax = __cpuid_count(7, 1).eax;
        }
    }
    let osxsave = leaf1.ecx >> 27 & 1 == 1;
    if osxsave {
        // SAFETY: OSXSAVE set means the OS enabled XSAVE, so the `xsave` feature (XGETBV) is
        // usable on this CPU.
        w.xcr0 = unsafe { read_xcr0() };
    }
    decode(w)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_x86() -> Features {
    Features::NONE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx512_needs_the_os_to_save_zmm_state() {
        let mut w = CpuidWords {
            leaf1_ecx: 1 << 28 | 1 << 12 | 1 << 27,
            leaf1_edx: 1 << 26,
            leaf7_ebx: 1 << 5 | 1 << 16 | 1 << 17 | 1 << 30 | 1 << 31,
            xcr0: 0b111,
            ..CpuidWords::default()
        };
        let f = decode(w);
        assert!(f.contains(Features::AVX2.union(Features::FMA)));
        assert!(!f.contains(Features::AVX512F), "ZMM state off: {f}");
        w.xcr0 = 0b1110_0111;
        assert!(decode(w).contains(Features::AVX512F.union(Features::AVX512VL)));
        w.xcr0 = 0;
        assert_eq!(decode(w), Features::SSE2);
    }

    #[test]
    fn amx_needs_tile_state() {
        let w = CpuidWords {
            leaf7_edx: 1 << 22 | 1 << 24 | 1 << 25,
            xcr0: 0b111,
            ..CpuidWords::default()
        };
        assert!(decode(w).is_empty());
        let w = CpuidWords {
            xcr0: 0b111 | 0b11 << 17,
            ..w
        };
        assert_eq!(
            decode(w),
            Features::AMX_TILE
                .union(Features::AMX_BF16)
                .union(Features::AMX_INT8)
        );
    }

    #[test]
    fn this_cpu_has_the_compiled_baseline() {
        // If this failed, the test binary itself could not be trusted to run.
        let cpu = Features::detect();
        assert!(cpu.contains(Features::compiled_baseline()), "cpu {cpu}");
        if cfg!(target_arch = "x86_64") {
            assert!(cpu.contains(Features::SSE2));
        }
    }

    #[test]
    fn display_lists_names() {
        assert_eq!(Features::AVX2.union(Features::FMA).to_string(), "avx2 fma");
        assert_eq!(Features::NONE.to_string(), "(none)");
    }
}
