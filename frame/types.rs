//! Datatypes: what a matrix may hold ([`Element`]), what gemm computes in ([`Scalar`]),
//! and which A×B combinations have kernels ([`GemmPair`]).
//!
//! The layer is built for mixed input/accumulator types. Every element type names its
//! accumulator (`Element::Acc`): f32, f64, `c32` and `c64` accumulate in themselves; [`bf16`]
//! accumulates in f32, and i8 in [`I32Acc`], a wrapping 32-bit integer (issue #8; u8 × i8 is
//! not there yet). A new type is an `Element`
//! impl and a `GemmPair` impl with a kernel slot in the context ([`crate::cntx::Cntx`]); the
//! loop nest is generic over the pair `(A, B)` and writes C in `A::Acc`.

use std::fmt::Debug;
use std::ops::{Add, Mul, Neg, Sub};

use crate::cntx::{Cntx, GemmKernel};
use crate::error::Result;
use crate::view::{MatMut, MatRef};

/// Single-precision complex number (BLAS `c`).
#[allow(non_camel_case_types)]
pub type c32 = num_complex::Complex<f32>;
/// Double-precision complex number (BLAS `z`).
#[allow(non_camel_case_types)]
pub type c64 = num_complex::Complex<f64>;

/// bfloat16 (the `half` crate's): f32's exponent with an 8-bit significand. Products of
/// two bf16 values are exact in f32, so bf16 gemm accumulates in f32.
pub use half::bf16;

/// The accumulator and C type of int8 gemm: a 32-bit integer whose arithmetic wraps modulo
/// 2^32 (two's complement) on overflow, in every build, as the hardware's `vpdpbusd` does.
/// Products of two i8 values need 15 bits, so a sum of k of them cannot overflow for k ≤ 2^17;
/// beyond that, and with large alpha or beta, results wrap instead of panicking.
pub type I32Acc = std::num::Wrapping<i32>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
    impl Sealed for super::I32Acc {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for super::c32 {}
    impl Sealed for super::c64 {}
}

/// A type that can be stored in a matrix operand.
///
/// Sealed: the packing buffers are reused across types, so every implementor must be plain
/// old data for which every bit pattern is a valid value (true of IEEE floats, their complex
/// pairs, bf16 and the integer types).
pub trait Element: Copy + Send + Sync + Debug + PartialEq + 'static + sealed::Sealed {
    /// The type products of this element are accumulated in, and the type of the scalar a
    /// view of this element carries (alpha's factor).
    type Acc: Scalar;
    /// Type letter: BLAS's `s`, `d`, `c`, `z`, and `b` for bf16.
    const LETTER: char;
    /// The additive identity.
    fn zero() -> Self;
    /// Complex conjugate; the identity for real types.
    fn conj(self) -> Self;
    /// The value in the accumulator type (exact: every element converts without rounding).
    fn to_acc(self) -> Self::Acc;
    /// The nearest value of this type to `re + im·i` (`im` ignored for real types): how
    /// tests and scalars build values generically.
    fn from_parts(re: f64, im: f64) -> Self;
}

/// A type gemm computes in: the type of C, of alpha and beta, and of the accumulator.
pub trait Scalar:
    Element<Acc = Self>
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
{
    /// Whether the type has an imaginary part.
    const IS_COMPLEX: bool;
    /// Unit roundoff of the underlying real type (half the machine epsilon), used by
    /// residual checks.
    const UNIT_ROUNDOFF: f64;
    /// The multiplicative identity.
    fn one() -> Self;
    /// `|re| + |im|` as f64: the magnitude used by error bounds.
    fn abs1(self) -> f64;
    /// Whether any part is NaN.
    fn has_nan(self) -> bool;
    /// `self == 0`, exactly.
    fn is_zero(self) -> bool {
        self == Self::zero()
    }
    /// `self == 1`, exactly.
    fn is_one(self) -> bool {
        self == Self::one()
    }
}

/// An A×B element combination gemm can multiply: it names the slot of the context
/// ([`Cntx`]) that holds its microkernel and blocksizes. C, alpha and beta are `Self::Acc`
/// (B's accumulator must be the same type; the entry points require `B: Element<Acc =
/// A::Acc>`).
pub trait GemmPair<B: Element>: Element {
    /// This pair's kernel entry in a context.
    fn kernel(cntx: &Cntx) -> &GemmKernel<Self, B>;
    /// Mutable access, used by [`Cntx::with_blocksizes`].
    fn kernel_mut(cntx: &mut Cntx) -> &mut GemmKernel<Self, B>;
    /// `(op(B)ᵀ, op(A)ᵀ)` as this pair's operands, when A and B are the same type: the
    /// operands of Cᵀ = op(B)ᵀ·op(A)ᵀ, which the front end solves instead when C's storage
    /// suits the kernel better transposed. `None` for mixed pairs (u8 × i8), which keep C's
    /// orientation (the kernel writes any strides).
    fn swapped<'a>(
        a: &MatRef<'a, Self>,
        b: &MatRef<'a, B>,
    ) -> Option<(MatRef<'a, Self>, MatRef<'a, B>)>;
    /// C := alpha·op(A)·op(B) + beta·C through the tall kernel of this pair's real parts, on
    /// a team of `threads` (`frame/l3/tall_complex.rs`): `Some` with the result where the
    /// pair is complex, the context has that kernel and the problem suits it; otherwise
    /// `None`, having touched nothing (every pair but cgemm's and zgemm's).
    #[allow(clippy::too_many_arguments)]
    fn gemm_tall_by_real_parts(
        _cntx: &Cntx,
        _alpha: Self::Acc,
        _a: &MatRef<Self>,
        _b: &MatRef<B>,
        _beta: Self::Acc,
        _c: &mut MatMut<Self::Acc>,
        _threads: usize,
        _pin: bool,
    ) -> Option<Result<()>> {
        None
    }
}

/// The body of [`GemmPair`] for a type multiplied by itself, in the context slot `$slot`.
macro_rules! same_type_pair {
    ($t:ty, $slot:ident) => {
        same_type_pair!($t, $slot, {});
    };
    ($t:ty, $slot:ident, { $($more:item)* }) => {
        impl GemmPair<$t> for $t {
            fn kernel(cntx: &Cntx) -> &GemmKernel<$t, $t> {
                &cntx.$slot
            }
            fn kernel_mut(cntx: &mut Cntx) -> &mut GemmKernel<$t, $t> {
                &mut cntx.$slot
            }
            fn swapped<'a>(
                a: &MatRef<'a, $t>,
                b: &MatRef<'a, $t>,
            ) -> Option<(MatRef<'a, $t>, MatRef<'a, $t>)> {
                Some((b.t(), a.t()))
            }
            $($more)*
        }
    };
}

/// [`GemmPair::gemm_tall_by_real_parts`] for a complex pair whose real parts' slot in the
/// context is `$real`.
macro_rules! tall_by_real_parts {
    ($t:ty, $real:ident) => {
        fn gemm_tall_by_real_parts(
            cntx: &Cntx,
            alpha: $t,
            a: &MatRef<$t>,
            b: &MatRef<$t>,
            beta: $t,
            c: &mut MatMut<$t>,
            threads: usize,
            pin: bool,
        ) -> Option<Result<()>> {
            let tall = cntx.$real.tall()?;
            crate::l3::tall_complex::gemm_tall_by_real_parts(
                tall, alpha, a, b, beta, c, threads, pin,
            )
        }
    };
}

macro_rules! real_scalar {
    ($t:ty, $letter:literal) => {
        impl Element for $t {
            type Acc = $t;
            const LETTER: char = $letter;
            fn zero() -> Self {
                0.0
            }
            fn conj(self) -> Self {
                self
            }
            fn to_acc(self) -> Self {
                self
            }
            fn from_parts(re: f64, _im: f64) -> Self {
                re as $t
            }
        }
        impl Scalar for $t {
            const IS_COMPLEX: bool = false;
            const UNIT_ROUNDOFF: f64 = <$t>::EPSILON as f64 / 2.0;
            fn one() -> Self {
                1.0
            }
            fn abs1(self) -> f64 {
                self.abs() as f64
            }
            fn has_nan(self) -> bool {
                self.is_nan()
            }
        }
    };
}

macro_rules! complex_scalar {
    ($t:ty, $re:ty, $letter:literal) => {
        impl Element for $t {
            type Acc = $t;
            const LETTER: char = $letter;
            fn zero() -> Self {
                <$t>::new(0.0, 0.0)
            }
            fn conj(self) -> Self {
                <$t>::new(self.re, -self.im)
            }
            fn to_acc(self) -> Self {
                self
            }
            fn from_parts(re: f64, im: f64) -> Self {
                <$t>::new(re as $re, im as $re)
            }
        }
        impl Scalar for $t {
            const IS_COMPLEX: bool = true;
            const UNIT_ROUNDOFF: f64 = <$re>::EPSILON as f64 / 2.0;
            fn one() -> Self {
                <$t>::new(1.0, 0.0)
            }
            fn abs1(self) -> f64 {
                self.re.abs() as f64 + self.im.abs() as f64
            }
            fn has_nan(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
        }
    };
}

impl Element for I32Acc {
    type Acc = I32Acc;
    const LETTER: char = 'w';
    fn zero() -> Self {
        std::num::Wrapping(0)
    }
    fn conj(self) -> Self {
        self
    }
    fn to_acc(self) -> Self {
        self
    }
    fn from_parts(re: f64, _im: f64) -> Self {
        // Rounded to nearest; `as` saturates out-of-range values (and maps NaN to 0).
        std::num::Wrapping(re.round() as i32)
    }
}

impl Scalar for I32Acc {
    const IS_COMPLEX: bool = false;
    /// Integer arithmetic is exact (modulo 2^32): results are compared for equality.
    const UNIT_ROUNDOFF: f64 = 0.0;
    fn one() -> Self {
        std::num::Wrapping(1)
    }
    fn abs1(self) -> f64 {
        f64::from(self.0).abs()
    }
    fn has_nan(self) -> bool {
        false
    }
}

impl Element for i8 {
    type Acc = I32Acc;
    const LETTER: char = 'i';
    fn zero() -> Self {
        0
    }
    fn conj(self) -> Self {
        self
    }
    fn to_acc(self) -> I32Acc {
        std::num::Wrapping(i32::from(self))
    }
    fn from_parts(re: f64, _im: f64) -> Self {
        // Rounded to nearest, saturating at -128 and 127.
        re.round() as i8
    }
}

same_type_pair!(i8, igemm);

/// Unsigned bytes: the A operand of u8 × i8 gemm (activations after ReLU, quantized with a
/// zero point), accumulated like i8 in wrapping i32.
impl Element for u8 {
    type Acc = I32Acc;
    const LETTER: char = 'u';
    fn zero() -> Self {
        0
    }
    fn conj(self) -> Self {
        self
    }
    fn to_acc(self) -> I32Acc {
        std::num::Wrapping(i32::from(self))
    }
    fn from_parts(re: f64, _im: f64) -> Self {
        // Rounded to nearest, saturating at 0 and 255.
        re.round() as u8
    }
}

/// u8 × i8 → i32: the operand order VNNI's `vpdpbusd` and AMX's `tdpbusd` take natively.
impl GemmPair<i8> for u8 {
    fn kernel(cntx: &Cntx) -> &GemmKernel<u8, i8> {
        &cntx.ugemm
    }
    fn kernel_mut(cntx: &mut Cntx) -> &mut GemmKernel<u8, i8> {
        &mut cntx.ugemm
    }
    fn swapped<'a>(
        _: &MatRef<'a, u8>,
        _: &MatRef<'a, i8>,
    ) -> Option<(MatRef<'a, u8>, MatRef<'a, i8>)> {
        None
    }
}

real_scalar!(f32, 's');
real_scalar!(f64, 'd');
complex_scalar!(c32, f32, 'c');
complex_scalar!(c64, f64, 'z');

same_type_pair!(f32, sgemm);
impl Element for bf16 {
    type Acc = f32;
    const LETTER: char = 'b';
    fn zero() -> Self {
        bf16::ZERO
    }
    fn conj(self) -> Self {
        self
    }
    fn to_acc(self) -> f32 {
        // Exact widening (bf16 is the upper half of an f32), as the kernels do it.
        f32::from_bits(u32::from(self.to_bits()) << 16)
    }
    fn from_parts(re: f64, _im: f64) -> Self {
        bf16::from_f64(re)
    }
}

same_type_pair!(bf16, bgemm);

same_type_pair!(f64, dgemm);
same_type_pair!(c32, cgemm, {
    tall_by_real_parts!(c32, sgemm);
});
same_type_pair!(c64, zgemm, {
    tall_by_real_parts!(c64, dgemm);
});
