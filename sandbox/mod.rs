//! Sandboxes: alternative gemm implementations, one folder each, compiled only with their
//! cargo feature `sandbox-<name>`.
//!
//! **Status:** none exists yet; issue #7 adds `sandbox-ref99` and `sandbox-gemmlike` and the
//! switch that routes every gemm call through the enabled one. Until then every call runs the
//! native implementation in `frame/l3/`.
