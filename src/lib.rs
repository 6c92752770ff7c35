//! ulpgate: a declarative CI gate proving that GPU backends compute the same
//! per-frame VMAF feature scores as the CPU reference, within tolerances
//! that name the ADR justifying them. See DESIGN.md in the repository.

pub mod backend;
pub mod bench;
pub mod calibration;
pub mod cli;
pub mod config;
pub mod features;
pub mod fixture;
pub mod gate;
pub mod kernel_times;
pub mod report;
pub mod scores;
pub mod trace;
