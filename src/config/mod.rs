//! Configuration: gate files, the feature registry and the calibration
//! table — typed, schema-validated, with located diagnostics.

pub mod calibration;
pub mod diag;
pub mod features;
pub mod gate;
pub mod load;
pub mod resolve;
pub mod spans;
pub mod suggest;

pub use diag::{Diagnostic, Diagnostics};
pub use resolve::{ResolvedBackend, ResolvedFeature, ResolvedFixture, ResolvedGate, ResolvedPair, load_gate};
