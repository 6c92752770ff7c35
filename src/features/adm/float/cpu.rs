//! The CPU reference of `float_adm`: compute_adm's scale loop.

use super::cm::{self, Inputs, Sums};
use super::decouple::{self, Csf, Decoupled};
use super::dwt::{self, Bands};
use super::{Config, RowSums, ScaleParams, finish};
use crate::features::picture::float_plane_into;
use crate::features::{Extractor, Options};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::{Result, bail};

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let config = Config::new(options)?;
    if let Some(why) = super::super::refuses_below(geometry, super::MIN_SIZE, "float_adm") {
        bail!("{why}");
    }
    let params = ScaleParams::all(&config, geometry.width as usize, geometry.height as usize);
    Ok(Box::new(FloatAdmCpu { config, params, state: State::default() }))
}

struct FloatAdmCpu {
    config: Config,
    params: [ScaleParams; 4],
    state: State,
}

#[derive(Default)]
struct State {
    /// The scale's inputs: the pictures as floats minus 128, then the
    /// approximation bands.
    input: [Vec<f32>; 2],
    bands: [Bands; 2],
    decoupled: Decoupled,
    csf_a: Csf,
    csf_r: Csf,
    rows: [Vec<RowSums>; 4],
    dwt: dwt::Scratch,
}

impl Extractor for FloatAdmCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let s = &mut self.state;
        let c = &self.config;
        // float_adm.c: picture_copy with offset -128.
        float_plane_into(reference, 0, -128, &mut s.input[0]);
        float_plane_into(distorted, 0, -128, &mut s.input[1]);
        let sums = Sums { rfactor: [0.0; 3], bypass_cm: c.bypass_cm, cubes: c.cubes(), p_norm: c.p_norm as f32 };
        for p in &self.params {
            let (w, h) = (p.geometry.w, p.geometry.h);
            let (bw, bh) = p.geometry.band();
            let lo_only = p.scale == 0 && c.skip_scale0;
            for k in 0..2 {
                dwt::dwt(&s.input[k], w, h, lo_only, &mut s.bands[k], &mut s.dwt);
            }
            s.rows[p.scale].clear();
            if !lo_only {
                let region = p.geometry.decouple();
                s.decoupled.resize(bw * bh);
                s.csf_a.resize(bw * bh);
                s.csf_r.resize(bw * bh);
                decouple::decouple(&s.bands[0], &s.bands[1], bw, region, c.enhn_gain_limit, &mut s.decoupled);
                decouple::csf(&s.decoupled.a, p.rfactor, bw, region, &mut s.csf_a);
                decouple::csf(&s.decoupled.r, p.rfactor, bw, region, &mut s.csf_r);
                let input =
                    Inputs { reference: &s.bands[0], decoupled: &s.decoupled, csf_a: &s.csf_a, csf_r: &s.csf_r };
                let sums = Sums { rfactor: p.rfactor, ..sums };
                cm::rows(&input, bw, bh, p.geometry.cm(), sums, &mut s.rows[p.scale]);
            }
            for k in 0..2 {
                std::mem::swap(&mut s.input[k], &mut s.bands[k].a);
            }
        }
        let g = reference.geometry;
        let rows = [&s.rows[0][..], &s.rows[1][..], &s.rows[2][..], &s.rows[3][..]];
        let o = finish(c, &self.params, rows, g.width as usize, g.height as usize);
        c.record(index, &o, out);
        Ok(())
    }
}
