//! The CPU reference of `adm`: integer_compute_adm's scale loop over the
//! luma of both pictures, every buffer kept from frame to frame.
//!
//! libvmaf runs each step over a whole scale before the next. Here the
//! steps stream down the band rows instead: row i's wavelet, then (inside
//! their rectangles) its decoupling and CSF, then the masking sums of row
//! i - 1, whose neighbourhood is then complete. Every value is the one
//! libvmaf computes (each row of each step depends only on rows already
//! done), but a row is used while it is still in cache.

use super::super::Outputs;
use super::super::geometry::Region;
use super::cm::{self, Inputs};
use super::decouple::{self, Decoupled, Masking};
use super::dwt::{self, Bands};
use super::{Config, RowSums, ScaleParams, finish};
use crate::features::{Extractor, Options};
use crate::fixture::{Frame, Geometry, PlaneRef};
use crate::scores::Scores;
use anyhow::Result;

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let config = Config::new(options)?;
    let params = ScaleParams::all(&config, geometry.width as usize, geometry.height as usize);
    Ok(Box::new(AdmCpu { config, params, bit_depth: u32::from(geometry.bit_depth), state: State::default() }))
}

struct AdmCpu {
    config: Config,
    params: [ScaleParams; 4],
    bit_depth: u32,
    state: State,
}

/// Every intermediate plane, allocated on the first frame.
#[derive(Default)]
struct State {
    ref0: Bands<i16>,
    dis0: Bands<i16>,
    ref123: Bands<i32>,
    dis123: Bands<i32>,
    /// The previous scale's approximation bands, the next scale's input.
    prev: [Vec<i32>; 2],
    dec0: Decoupled<i16>,
    dec123: Decoupled<i32>,
    mask_a: Masking,
    mask_r: Masking,
    angles: Vec<bool>,
    rows: [Vec<RowSums>; 4],
    dwt: dwt::Scratch,
    cm: cm::Scratch,
}

impl Extractor for AdmCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        let o = if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512 BW (checked just above).
            unsafe { self.compute_avx512(reference, distorted) }
        } else if std::arch::is_x86_feature_detected!("avx2") {
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

/// Row `i` of `r` as a one-row rectangle, if `r` has it.
fn row_of(r: Region, i: usize) -> Option<Region> {
    (r.top..r.bottom).contains(&i).then(|| Region { top: i, bottom: i + 1, ..r })
}

impl AdmCpu {
    /// [`AdmCpu::compute`] compiled for AVX2: the same integer operations,
    /// twice as many lanes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn compute_avx2(&mut self, reference: &Frame, distorted: &Frame) -> Outputs {
        self.compute(reference, distorted)
    }

    /// [`AdmCpu::compute`] compiled for AVX-512 (F and BW): the same
    /// integer operations in 512-bit vectors.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn compute_avx512(&mut self, reference: &Frame, distorted: &Frame) -> Outputs {
        self.compute(reference, distorted)
    }

    /// One frame: every scale, then the host's finish.
    #[inline(always)]
    fn compute(&mut self, reference: &Frame, distorted: &Frame) -> Outputs {
        let s = &mut self.state;
        let c = &self.config;
        let (w, h) = (reference.geometry.width as usize, reference.geometry.height as usize);
        for r in &mut s.rows {
            r.clear();
        }
        // Scale 0: 16-bit bands.
        let p = &self.params[0];
        let (bw, bh) = p.geometry.band();
        let (d, cmr) = (p.geometry.decouple(), p.geometry.cm());
        s.ref0.resize(bw * bh);
        s.dis0.resize(bw * bh);
        s.dec0.resize(bw * bh);
        s.mask_a.resize(bw * bh);
        s.mask_r.resize(bw * bh);
        for i in 0..=bh {
            if i < bh {
                for (frame, bands) in [(reference, &mut s.ref0), (distorted, &mut s.dis0)] {
                    match frame.plane(0) {
                        PlaneRef::U8 { data, .. } => {
                            dwt::scale0(data, w, h, 8, c.skip_scale0, i..i + 1, bands, &mut s.dwt)
                        }
                        PlaneRef::U16 { data, .. } => {
                            dwt::scale0(data, w, h, self.bit_depth, c.skip_scale0, i..i + 1, bands, &mut s.dwt)
                        }
                    }
                }
            }
            if c.skip_scale0 {
                continue;
            }
            if let Some(row) = row_of(d, i) {
                decouple::decouple0(&s.ref0, &s.dis0, bw, row, c.enhn_gain_limit, &mut s.dec0, &mut s.angles);
                decouple::masking0(&s.dec0.a, p, bw, row, &mut s.mask_a);
                decouple::masking0(&s.dec0.r, p, bw, row, &mut s.mask_r);
            }
            // Row i - 1's neighbourhood is complete (the last row's at the end).
            let done = if i == bh { bh - 1 } else { i.wrapping_sub(1) };
            if let Some(row) = row_of(cmr, done).filter(|_| i > 0) {
                let input = Inputs { reference: &s.ref0, decoupled: &s.dec0, mask_a: &s.mask_a, mask_r: &s.mask_r };
                cm::rows0(&input, p, row, &mut s.rows[0], &mut s.cm);
            }
        }
        // i16_to_i32: scale 1 reads the approximation bands as int32.
        for (prev, bands) in s.prev.iter_mut().zip([&s.ref0, &s.dis0]) {
            dwt::size(prev, bw * bh);
            for (p, &v) in prev.iter_mut().zip(&bands.a[..bw * bh]) {
                *p = i32::from(v);
            }
        }
        for p in &self.params[1..] {
            let (bw, bh) = p.geometry.band();
            let (d, cmr) = (p.geometry.decouple(), p.geometry.cm());
            s.ref123.resize(bw * bh);
            s.dis123.resize(bw * bh);
            s.dec123.resize(bw * bh);
            for i in 0..=bh {
                if i < bh {
                    let (pw, ph) = (p.geometry.w, p.geometry.h);
                    dwt::scale123(&s.prev[0], pw, ph, p.scale, i..i + 1, &mut s.ref123, &mut s.dwt);
                    dwt::scale123(&s.prev[1], pw, ph, p.scale, i..i + 1, &mut s.dis123, &mut s.dwt);
                }
                if let Some(row) = row_of(d, i) {
                    decouple::decouple123(&s.ref123, &s.dis123, bw, row, c.enhn_gain_limit, &mut s.dec123);
                    decouple::masking123(&s.dec123.a, p, bw, row, &mut s.mask_a);
                    decouple::masking123(&s.dec123.r, p, bw, row, &mut s.mask_r);
                }
                let done = if i == bh { bh - 1 } else { i.wrapping_sub(1) };
                if let Some(row) = row_of(cmr, done).filter(|_| i > 0) {
                    let input =
                        Inputs { reference: &s.ref123, decoupled: &s.dec123, mask_a: &s.mask_a, mask_r: &s.mask_r };
                    cm::rows123(&input, p, row, &mut s.rows[p.scale], &mut s.cm);
                }
            }
            std::mem::swap(&mut s.prev[0], &mut s.ref123.a);
            std::mem::swap(&mut s.prev[1], &mut s.dis123.a);
        }
        let rows = [&s.rows[0][..], &s.rows[1][..], &s.rows[2][..], &s.rows[3][..]];
        finish(c, &self.params, rows, w, h)
    }
}
