//! The FP32 arithmetic of `tdpbf16ps`, bit-exact: additions and fused multiply-adds rounded
//! once to nearest even, with denormal inputs read as zero (DAZ) and denormal results
//! flushed to zero (FTZ), whatever MXCSR says (the instruction ignores it).
//!
//! The SDM's words: "'Round to nearest even' rounding mode is used when doing each
//! accumulation of the FMA. Output denormals are always flushed to zero and input denormals
//! are always treated as zero." Rust's `f32::mul_add` and `+` round correctly but produce
//! denormals (gradual underflow), so they cannot be used as they are. Two details decide
//! the corner cases:
//!
//! * **Tininess after rounding.** x86 calls a result tiny when it is below 2^-126 *after*
//!   rounding to 24 bits with an unbounded exponent (SDM vol. 1, §11.5.2.5, "Numeric
//!   Underflow Exception": "the magnitude of the rounded result ..., with unbounded
//!   exponent, is less than the smallest possible normalized, finite value"). So an exact
//!   value just below 2^-126 that rounds up to 2^-126 survives, and one that rounds to
//!   2^-126 − 2^-150 is flushed, even though gradual underflow would have given 2^-126.
//! * **Flushed, exact or not.** "Output denormals are always flushed": a tiny result is
//!   replaced by zero with the sign of the true result even when it is exact.
//!
//! How it is computed: the operands are f32 values or products of two f32 values, all
//! exact in f64. Their sum is split exactly into `hi + lo` (Knuth's two-sum), folded into
//! one f64 rounded to odd (53 bits ≥ 24 + 2, which makes the later rounding correct:
//! Boldo and Melquiond, "When double rounding is odd"), then rounded to 24 bits, nearest
//! even, in f64's wide exponent range: that is the "rounded result with unbounded
//! exponent", which is then flushed if tiny, becomes ±∞ if at least 2^128, and otherwise
//! converts to f32 exactly.

/// The smallest normal f32, 2^-126, as f64.
const MIN_NORMAL: f64 = f32::MIN_POSITIVE as f64;
/// 2^128: the first magnitude that no longer fits in f32.
const OVERFLOW: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// A bf16 bit pattern as the f32 it denotes (the upper half of an f32), denormals read as
/// zero with their sign (DAZ).
pub(super) fn bf16_daz(bits: u16) -> f32 {
    f32_daz(f32::from_bits(u32::from(bits) << 16))
}

/// An f32 with a denormal read as zero of the same sign (DAZ).
pub(super) fn f32_daz(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `acc + a·b` as one FP32 FMA with DAZ, FTZ and round to nearest even (the product is not
/// rounded on its own).
pub(super) fn fma_daz_ftz(acc: f32, a: f32, b: f32) -> f32 {
    let (acc, a, b) = (f32_daz(acc), f32_daz(a), f32_daz(b));
    // f32·f32 needs 48 significant bits and at most 2^±300 of range: exact in f64.
    round_ftz(f64::from(acc), f64::from(a) * f64::from(b))
}

/// `x + y` as one FP32 addition with DAZ, FTZ and round to nearest even.
pub(super) fn add_daz_ftz(x: f32, y: f32) -> f32 {
    round_ftz(f64::from(f32_daz(x)), f64::from(f32_daz(y)))
}

/// The exact sum `x + y` (both exact f64 values of at most 2^256 in magnitude) rounded to
/// f32, nearest even, with tininess after rounding and tiny results flushed to zero.
fn round_ftz(x: f64, y: f64) -> f32 {
    let hi = x + y;
    if !hi.is_finite() {
        // ±∞ in an operand, ∞ − ∞, or NaN: IEEE's answer (the model does not try to match
        // which NaN payload the hardware returns).
        return hi as f32;
    }
    // Two-sum: hi + lo == x + y exactly (no overflow: |x|, |y| ≤ 2^256).
    let y_part = hi - x;
    let x_part = hi - y_part;
    let lo = (x - x_part) + (y - y_part);
    let odd = round_to_odd(hi, lo);
    let r = round_to_24_bits(odd);
    if r.abs() < MIN_NORMAL {
        // Tiny (or an exact zero, whose sign IEEE addition already got right).
        0.0f32.copysign(r as f32)
    } else if r.abs() >= OVERFLOW {
        f32::INFINITY.copysign(r as f32)
    } else {
        // 24 significant bits within f32's normal range: exact.
        r as f32
    }
}

/// `hi + lo` (with `hi` the nearest f64 to the sum and `lo` the exact remainder) rounded
/// to 53 bits "to odd": if inexact, the neighbour of the sum's bracket whose last bit is 1.
fn round_to_odd(hi: f64, lo: f64) -> f64 {
    let bits = hi.to_bits();
    if lo == 0.0 || bits & 1 == 1 {
        return hi;
    }
    // hi is even and the sum lies strictly between hi and its neighbour towards lo: that
    // neighbour is odd. Adding 1 to the bits grows the magnitude, subtracting shrinks it.
    if (lo > 0.0) == (hi > 0.0) {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}

/// A normal f64 (or zero) rounded to 24 significant bits, nearest even, keeping f64's
/// exponent range (no underflow or overflow can happen at the magnitudes used here).
fn round_to_24_bits(v: f64) -> f64 {
    const DROPPED: u32 = 52 - 23;
    let bits = v.to_bits();
    let half = 1u64 << (DROPPED - 1);
    let last_kept = (bits >> DROPPED) & 1;
    // Adding just under half (or exactly half when the kept part is odd) carries into the
    // kept bits exactly when nearest-even rounds up; a carry into the exponent is right too.
    let rounded = (bits + half - 1 + last_kept) & !((1u64 << DROPPED) - 1);
    f64::from_bits(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pow2(e: i32) -> f32 {
        2f32.powi(e)
    }

    #[test]
    fn ties_round_to_even() {
        // 1 + 2^-24 is halfway between 1 and 1 + 2^-23: even is 1.
        assert_eq!(add_daz_ftz(1.0, pow2(-24)), 1.0);
        // (1 + 2^-23) + 2^-24 is halfway between it and 1 + 2^-22: even is 1 + 2^-22.
        assert_eq!(add_daz_ftz(1.0 + pow2(-23), pow2(-24)), 1.0 + pow2(-22));
        // Just above the tie rounds up.
        assert_eq!(fma_daz_ftz(1.0, pow2(-24) * 1.5, 1.0), 1.0 + pow2(-23));
    }

    #[test]
    fn the_fma_rounds_once() {
        // (1 + 2^-12)² = 1 + 2^-11 + 2^-24: the product alone would round (tie, to even) to
        // 1 + 2^-11; fused with −1 the 2^-24 survives.
        let x = 1.0 + pow2(-12);
        assert_eq!(fma_daz_ftz(-1.0, x, x), pow2(-11) + pow2(-24));
    }

    #[test]
    fn denormal_inputs_are_zero_and_denormal_results_flush() {
        let tiny = f32::from_bits(1); // 2^-149
        assert_eq!(add_daz_ftz(tiny, 0.0), 0.0);
        assert_eq!(fma_daz_ftz(0.0, tiny, 2f32.powi(100)), 0.0);
        // 2^-127 is exact but denormal: flushed, with the sign of the true result.
        let r = fma_daz_ftz(0.0, -pow2(-63), pow2(-64));
        assert_eq!(r.to_bits(), (-0.0f32).to_bits());
        // bf16 denormal (0x0001) reads as zero.
        assert_eq!(bf16_daz(0x0001), 0.0);
        assert_eq!(bf16_daz(0x8001).to_bits(), (-0.0f32).to_bits());
        assert_eq!(bf16_daz(0x3F80), 1.0);
    }

    #[test]
    fn tininess_is_detected_after_rounding() {
        // 2^-126 − 1.5·2^-151 rounds (24 bits, unbounded exponent) to 2^-126 − 2^-150: tiny,
        // flushed. Gradual underflow (Rust's mul_add) would have given 2^-126.
        let p = -1.5 * pow2(-75);
        let q = pow2(-76);
        assert_eq!(f32::mul_add(p, q, pow2(-126)), pow2(-126));
        assert_eq!(fma_daz_ftz(pow2(-126), p, q), 0.0);
        // 2^-126 − 0.5·2^-151 rounds up to 2^-126 itself: not tiny, kept.
        assert_eq!(fma_daz_ftz(pow2(-126), -pow2(-75), pow2(-77)), pow2(-126));
        // A product below 2^-126 is not flushed inside the FMA: 2^-125 + 2^-130 is exact.
        assert_eq!(
            fma_daz_ftz(pow2(-125), pow2(-65), pow2(-65)),
            pow2(-125) + pow2(-130)
        );
    }

    #[test]
    fn overflow_and_specials() {
        let big = pow2(127);
        assert_eq!(fma_daz_ftz(big, big, 2.0), f32::INFINITY);
        assert_eq!(fma_daz_ftz(-big, big, -2.0), f32::NEG_INFINITY);
        // Just below the overflow threshold (2^128 − 2^103) rounds down to f32::MAX.
        assert_eq!(add_daz_ftz(f32::MAX, pow2(102)), f32::MAX);
        assert_eq!(add_daz_ftz(f32::MAX, pow2(103)), f32::INFINITY);
        assert!(fma_daz_ftz(0.0, f32::INFINITY, 0.0).is_nan());
        assert!(add_daz_ftz(f32::INFINITY, f32::NEG_INFINITY).is_nan());
        assert!(add_daz_ftz(f32::NAN, 1.0).is_nan());
        // Exact zero sums: +0 unless both are −0.
        assert_eq!(add_daz_ftz(1.0, -1.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(add_daz_ftz(-0.0, -0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn agrees_with_ieee_where_nothing_is_tiny() {
        // Away from the denormal range the model must be plain IEEE fma / add.
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            f32::from_bits(((s as u32) & 0x807f_ffff) | ((100 + (s >> 40) as u32 % 56) << 23))
        };
        for _ in 0..100_000 {
            let (c, a, b) = (next(), next(), next());
            assert_eq!(
                fma_daz_ftz(c, a, b).to_bits(),
                a.mul_add(b, c).to_bits(),
                "{c} {a} {b}"
            );
            assert_eq!(add_daz_ftz(c, a).to_bits(), (c + a).to_bits(), "{c} {a}");
        }
    }
}
