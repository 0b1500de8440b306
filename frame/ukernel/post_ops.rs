//! Post-ops: what a brgemm does to each element of C after the batch-reduce, in this order,
//! in the accumulator type:
//!
//! ```text
//!     x = Σ_i A_i·B_i  (+ C's old value with add-C)
//!     x = x · scale              if scale is set
//!     x = x + bias[j]            if bias is set (one value per column j of C, length ≥ N)
//!     x = max(x, 0)              if relu
//!     C(r, j) = x
//! ```
//!
//! For integer C ([`crate::I32Acc`]) the scale and the bias wrap modulo 2^32, like the sum.
//! To split K over several executes, give the post-ops to the last one only.

use crate::error::{Error, ErrorKind, Result};
use crate::types::Scalar;

/// The post-ops of one execute (see the module docs for the order). `PostOps::default()` is
/// none. Given per call, so one brgemm serves every column block of a larger C with that
/// block's slice of the bias.
#[derive(Clone, Copy, Debug)]
pub struct PostOps<'a, T> {
    /// Multiply by this.
    pub scale: Option<T>,
    /// Add `bias[j]` to column j (the slice needs at least N elements).
    pub bias: Option<&'a [T]>,
    /// Clamp negatives to zero.
    pub relu: bool,
}

impl<T> Default for PostOps<'_, T> {
    fn default() -> Self {
        PostOps {
            scale: None,
            bias: None,
            relu: false,
        }
    }
}

impl<T: Scalar + PartialOrd> PostOps<'_, T> {
    /// Whether there is anything to do.
    pub(crate) fn is_identity(&self) -> bool {
        self.scale.is_none() && self.bias.is_none() && !self.relu
    }

    /// Checks that the bias covers `n` columns.
    pub(crate) fn check(&self, n: usize) -> Result<()> {
        match self.bias {
            Some(bias) if bias.len() < n => Err(Error::new(
                ErrorKind::ShapeMismatch,
                format!(
                    "brgemm post-ops: bias has {} elements, C has N = {n} columns",
                    bias.len()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The post-ops applied to `x` in column `j` (< the N checked by [`Self::check`]).
    #[inline]
    pub(crate) fn apply(&self, x: T, j: usize) -> T {
        let mut x = x;
        if let Some(s) = self.scale {
            x = x * s;
        }
        if let Some(bias) = self.bias {
            x = x + bias[j];
        }
        if self.relu && x < T::zero() {
            x = T::zero();
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::Wrapping;

    #[test]
    fn order_is_scale_bias_relu() {
        let bias = [1.0f32, -10.0];
        let post = PostOps {
            scale: Some(2.0f32),
            bias: Some(&bias[..]),
            relu: true,
        };
        assert_eq!(post.apply(3.0, 0), 7.0);
        assert_eq!(post.apply(3.0, 1), 0.0);
        assert!(post.check(2).is_ok() && post.check(3).is_err());
    }

    #[test]
    fn integers_wrap() {
        let post = PostOps {
            scale: Some(Wrapping(2)),
            bias: None,
            relu: false,
        };
        assert_eq!(post.apply(Wrapping(i32::MAX), 0), Wrapping(-2));
    }
}
