//! The CPU reference of `float_adm`: compute_adm's scale loop. As the
//! integer one (see integer/cpu.rs), the steps stream down the band rows,
//! each row used while it is in cache; every value is libvmaf's.

use super::super::Outputs;
use super::super::geometry::Region;
use super::cm::{self, Inputs, Sums};
use super::decouple::{self, Csf, Decoupled};
use super::dwt::{self, Bands};
use super::{Config, RowSums, ScaleParams, finish};
use crate::features::picture::float_plane_into;
use crate::features::{Extractor, Options};
use crate::fixture::{Frame, Geometry};
use crate::scores::Scores;
use anyhow::Result;

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let config = Config::new(options)?;
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
    decouple: decouple::Scratch,
    cm: cm::Scratch,
}

/// Row `i` of `r` as a one-row rectangle, if `r` has it.
fn row_of(r: Region, i: usize) -> Option<Region> {
    (r.top..r.bottom).contains(&i).then(|| Region { top: i, bottom: i + 1, ..r })
}

impl Extractor for FloatAdmCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        let o = if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { self.compute_avx2(reference, distorted) }
        } else {
            self.compute(reference, distorted)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let o = self.compute(reference, distorted);
        self.config.record(index, &o, out);
        Ok(())
    }
}

impl FloatAdmCpu {
    /// [`FloatAdmCpu::compute`] compiled for AVX2: eight f32 lanes, the same
    /// IEEE operations (AVX2 brings no fused multiply-add).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn compute_avx2(&mut self, reference: &Frame, distorted: &Frame) -> Outputs {
        self.compute(reference, distorted)
    }

    #[inline(always)]
    fn compute(&mut self, reference: &Frame, distorted: &Frame) -> Outputs {
        let s = &mut self.state;
        let c = &self.config;
        // float_adm.c: picture_copy with offset -128.
        float_plane_into(reference, 0, -128, &mut s.input[0]);
        float_plane_into(distorted, 0, -128, &mut s.input[1]);
        for p in &self.params {
            let (w, h) = (p.geometry.w, p.geometry.h);
            let (bw, bh) = p.geometry.band();
            let lo_only = p.scale == 0 && c.skip_scale0;
            let (d, cmr) = (p.geometry.decouple(), p.geometry.cm());
            let sums = Sums { rfactor: p.rfactor, bypass_cm: c.bypass_cm, cubes: c.cubes(), p_norm: c.p_norm as f32 };
            s.rows[p.scale].clear();
            s.decoupled.resize(bw * bh);
            s.csf_a.resize(bw * bh);
            s.csf_r.resize(bw * bh);
            for i in 0..=bh {
                if i < bh {
                    for k in 0..2 {
                        dwt::dwt(&s.input[k], w, h, lo_only, i..i + 1, &mut s.bands[k], &mut s.dwt);
                    }
                }
                if lo_only {
                    continue;
                }
                if let Some(row) = row_of(d, i) {
                    let (reference, distorted) = (&s.bands[0], &s.bands[1]);
                    decouple::decouple(
                        reference,
                        distorted,
                        bw,
                        row,
                        c.enhn_gain_limit,
                        &mut s.decoupled,
                        &mut s.decouple,
                    );
                    decouple::csf(&s.decoupled.a, p.rfactor, bw, row, &mut s.csf_a);
                    decouple::csf(&s.decoupled.r, p.rfactor, bw, row, &mut s.csf_r);
                }
                // Row i - 1's neighbourhood is complete (the last row's at the end).
                let done = if i == bh { bh - 1 } else { i.wrapping_sub(1) };
                if let Some(row) = row_of(cmr, done).filter(|_| i > 0) {
                    let input =
                        Inputs { reference: &s.bands[0], decoupled: &s.decoupled, csf_a: &s.csf_a, csf_r: &s.csf_r };
                    cm::rows(&input, bw, bh, row, sums, &mut s.rows[p.scale], &mut s.cm);
                }
            }
            for k in 0..2 {
                std::mem::swap(&mut s.input[k], &mut s.bands[k].a);
            }
        }
        let g = reference.geometry;
        let rows = [&s.rows[0][..], &s.rows[1][..], &s.rows[2][..], &s.rows[3][..]];
        finish(c, &self.params, rows, g.width as usize, g.height as usize)
    }
}
