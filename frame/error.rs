//! The one error type of the library. Errors are values: every public entry point returns
//! `Result<_, Error>`, and a call that returns `Err` has written nothing.

use std::fmt;

/// What went wrong, for matching; the message says it for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A view constructor was given dimensions, strides or a leading dimension that do not
    /// fit its buffer, or whose index arithmetic would overflow.
    InvalidView,
    /// The operands' shapes do not compose: op(A) is m×k, op(B) must be k×n, C must be m×n.
    ShapeMismatch,
    /// C's strides make two of its elements share memory.
    SelfOverlap,
    /// C shares memory with A or B.
    Alias,
    /// A runtime object (`Rntm`) asked for something impossible.
    InvalidRntm,
    /// Configuration selection failed: unknown or unsupported `BLIS_ARCH_TYPE`, a CPU that
    /// lacks the features the binary was built for, or an invalid context.
    Config,
    /// Memory for packing buffers could not be allocated.
    OutOfMemory,
    /// A bug in oxblis: a panic inside the library, caught at the API boundary.
    Internal,
}

/// An error with its kind and a message naming the offending argument.
///
/// Boxed, so that a `Result<(), Error>` is one pointer wide and comes back in a register:
/// every layer of a call returns one, and with the error inline (32 bytes) each layer
/// returned it through memory, copying it on the way out.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInner>);

#[derive(Clone, PartialEq, Eq)]
struct ErrorInner {
    kind: ErrorKind,
    message: String,
}

impl Error {
    #[cold]
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(ErrorInner {
            kind,
            message: message.into(),
        }))
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The human-readable explanation (also what `Display` prints).
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("message", &self.0.message)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error for a panic caught inside the library (a bug): its message, and a warning that
/// C may have been partly written.
pub(crate) fn internal_from_panic(payload: &(dyn std::any::Any + Send)) -> Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    Error::new(
        ErrorKind::Internal,
        format!("gemm: internal error (a bug in oxblis; C may be partly written): {what}"),
    )
}
