//! `float_adm` (libvmaf float_adm.c, adm.c, adm_tools.c).
use crate::features::options::OptionDef;
use crate::features::{Extractor, Options};
use crate::fixture::Geometry;
use anyhow::{Result, bail};

pub static OPTIONS: &[OptionDef] = &[OptionDef::flag("debug", false)];
pub const MIN_SIZE: u32 = 17;

pub struct Config;
impl Config {
    pub fn new(_: &Options) -> Result<Self> {
        Ok(Config)
    }
    pub fn metric_names(&self) -> Vec<String> {
        vec![]
    }
}

pub fn cpu_extractor(_: &Geometry, _: &Options) -> Result<Box<dyn Extractor>> {
    bail!("todo")
}
