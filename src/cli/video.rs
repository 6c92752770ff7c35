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
    /// Raw YUV: 8 (the default), or 10, 12, 16 (16-bit little-endian
    /// samples).
    #[arg(long)]
    bit_depth: Option<u8>,
    /// Raw YUV: 420 (the default), 422, 444 or 400.
    #[arg(long)]
    chroma: Option<String>,
}

impl GeometryArgs {
    /// The geometry given, `None` when neither width nor height is.
    pub fn geometry(&self) -> Result<Option<Geometry>> {
        let name = self.chroma.as_deref().unwrap_or("420");
        let chroma: Chroma = serde_json::from_value(serde_json::Value::String(name.to_string()))
            .map_err(|_| anyhow!("--chroma {name}: expected 420, 422, 444 or 400"))?;
        match (self.width, self.height) {
            (Some(width), Some(height)) => {
                let g = Geometry { width, height, bit_depth: self.bit_depth.unwrap_or(8), chroma };
                g.validate().map_err(|e| anyhow!(e))?;
                Ok(Some(g))
            }
            (None, None) => Ok(None),
            _ => bail!("give both --width and --height"),
        }
    }

    /// Whether any of the flags was given.
    pub fn given(&self) -> bool {
        self.width.is_some() || self.height.is_some() || self.bit_depth.is_some() || self.chroma.is_some()
    }

    /// Refuses flags that contradict a Y4M file's header (each carries its
    /// geometry, so they are not needed there; agreeing ones are taken, as
    /// a command template passes `--width {width}` for every file).
    pub fn check_used(&self, paths: &[&Path]) -> Result<()> {
        for path in paths.iter().filter(|p| is_y4m(p)) {
            // A header that cannot be read is reported when the file is opened.
            let Some(header) = FrameSource::Y4m { path: path.to_path_buf() }.geometry() else { continue };
            let given = [
                ("--width", self.width.map(|w| w.to_string()), header.width.to_string()),
                ("--height", self.height.map(|h| h.to_string()), header.height.to_string()),
                ("--bit-depth", self.bit_depth.map(|b| b.to_string()), header.bit_depth.to_string()),
                ("--chroma", self.chroma.clone(), header.chroma.as_str().to_string()),
            ];
            for (flag, value, own) in given {
                if let Some(value) = value
                    && value != own
                {
                    bail!("{}: its Y4M header says {header}, {flag} says {value}", path.display());
                }
            }
        }
        Ok(())
    }

    /// `path` as a frame source: Y4M by extension, else raw YUV with the
    /// geometry given.
    pub fn source(&self, path: &Path) -> Result<FrameSource> {
        if is_y4m(path) {
            return Ok(FrameSource::Y4m { path: path.to_path_buf() });
        }
        let geometry =
            self.geometry()?.ok_or_else(|| anyhow!("{}: raw YUV needs --width and --height", path.display()))?;
        Ok(FrameSource::Raw { path: path.to_path_buf(), geometry })
    }
}

fn is_y4m(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("y4m"))
}
