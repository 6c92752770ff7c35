//! GPU pipeline (in progress).
use crate::backend::gpu::{Gpu, KernelSpec};
use crate::features::{Extractor, Options};
use crate::fixture::Geometry;
use anyhow::{Result, bail};
use std::sync::Arc;

pub static INTEGER_KERNELS: &[&KernelSpec] = &[];
pub static FLOAT_KERNELS: &[&KernelSpec] = &[];

pub fn integer_extractor(_: Arc<dyn Gpu>, _: &Geometry, _: &Options) -> Result<Box<dyn Extractor>> {
    bail!("todo")
}
pub fn float_extractor(_: Arc<dyn Gpu>, _: &Geometry, _: &Options) -> Result<Box<dyn Extractor>> {
    bail!("todo")
}
