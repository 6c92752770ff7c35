//! End-to-end tests that drive the `ulpgate` binary: sharding and merging,
//! JUnit, annotations, Markdown charts and size, the terminal summary, the
//! external backend, and the GitHub workflows. One test binary, so the
//! suite links once.

mod annotations;
mod calibrate;
mod common;
mod external;
mod gates;
mod junit;
mod markdown;
mod merge;
mod shard;
mod workflows;
