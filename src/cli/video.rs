//! The flags that describe a video on the command line (`score`, `bench
//! --clip`): raw YUV needs its geometry, Y4M carries its own.

use crate::fixture::{Chroma, FrameSource, Geometry};
use anyhow::{Result, anyhow, bail};
use std::path::Path;

/// Geometry of raw `.yuv` inputs.
#[derive(clap::Args, Debug, Clone)]
pub struct GeometryArgs {
    /// Raw YUV: luma width in pixels.
    #[arg(long)]
    width: Option<u32>,
    /// Raw YUV: luma height in pixels.
    #[arg(long)]
    height: Option<u32>,
    /// Raw YUV: 8, or 10, 12, 16 (16-bit little-endian samples).
    #[arg(long, default_value_t = 8)]
    bit_depth: u8,
    /// Raw YUV: 420, 422, 444 or 400.
    #[arg(long, default_value = "420")]
    chroma: String,
}

impl GeometryArgs {
    /// The geometry given, `None` when neither width nor height is.
    pub fn geometry(&self) -> Result<Option<Geometry>> {
        let chroma: Chroma = serde_json::from_value(serde_json::Value::String(self.chroma.clone()))
            .map_err(|_| anyhow!("--chroma {}: expected 420, 422, 444 or 400", self.chroma))?;
        match (self.width, self.height) {
            (Some(width), Some(height)) => {
                let g = Geometry { width, height, bit_depth: self.bit_depth, chroma };
                g.validate().map_err(|e| anyhow!(e))?;
                Ok(Some(g))
            }
            (None, None) => Ok(None),
            _ => bail!("give both --width and --height"),
        }
    }

    /// `path` as a frame source: Y4M by extension, else raw YUV with the
    /// geometry given.
    pub fn source(&self, path: &Path) -> Result<FrameSource> {
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("y4m")) {
            return Ok(FrameSource::Y4m { path: path.to_path_buf() });
        }
        let geometry =
            self.geometry()?.ok_or_else(|| anyhow!("{}: raw YUV needs --width and --height", path.display()))?;
        Ok(FrameSource::Raw { path: path.to_path_buf(), geometry })
    }
}
