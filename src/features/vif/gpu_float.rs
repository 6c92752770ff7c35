//! WIP
use super::FloatParams;
use crate::backend::gpu::{Gpu, KernelSpec};
use crate::features::Extractor;
use crate::fixture::Geometry;
use anyhow::{Result, bail};
use std::sync::Arc;
pub static KERNELS: &[&KernelSpec] = &[];
pub fn extractor(_gpu: Arc<dyn Gpu>, _g: &Geometry, _p: FloatParams) -> Result<Box<dyn Extractor>> {
    bail!("wip")
}
