//! The gate engine: plan cells, compute sides, diff, decide.

pub mod diff;
pub mod execute;
pub mod plan;
pub mod shard;

pub use execute::{Computed, Outcome, RunOptions, compute, execute};
pub use plan::{CellPlan, Filters, Plan, plan};
pub use shard::ShardSpec;
