//! The CPU reference of `adm`: integer_compute_adm's scale loop over the
//! luma of both pictures, every buffer kept from frame to frame.

use super::cm::{self, Inputs};
use super::decouple::{self, Decoupled, Masking};
use super::dwt::{self, Bands};
use super::{Config, RowSums, ScaleParams, check_geometry, finish};
use crate::features::{Extractor, Options};
use crate::fixture::{Frame, Geometry, PlaneRef};
use crate::scores::Scores;
use anyhow::Result;

pub fn cpu_extractor(geometry: &Geometry, options: &Options) -> Result<Box<dyn Extractor>> {
    let config = Config::new(options)?;
    check_geometry(geometry)?;
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
    rows: [Vec<RowSums>; 4],
    dwt: dwt::Scratch,
    cm: cm::Scratch,
}

impl Extractor for AdmCpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        let s = &mut self.state;
        let skip0 = self.config.skip_scale0;
        for (k, frame) in [reference, distorted].into_iter().enumerate() {
            let bands = if k == 0 { &mut s.ref0 } else { &mut s.dis0 };
            let (w, h) = (frame.geometry.width as usize, frame.geometry.height as usize);
            match frame.plane(0) {
                PlaneRef::U8 { data, .. } => dwt::scale0(data, w, h, 8, skip0, bands, &mut s.dwt),
                PlaneRef::U16 { data, .. } => dwt::scale0(data, w, h, self.bit_depth, skip0, bands, &mut s.dwt),
            }
            // i16_to_i32: scale 1 reads the approximation as int32.
            s.prev[k].clear();
            s.prev[k].extend(bands.a.iter().map(|&v| i32::from(v)));
        }
        for p in &self.params {
            let (bw, bh) = p.geometry.band();
            let rows = &mut s.rows[p.scale];
            if p.scale == 0 {
                if skip0 {
                    rows.clear();
                    continue;
                }
                let decouple = p.geometry.decouple();
                s.dec0.resize(bw * bh);
                s.mask_a.resize(bw * bh);
                s.mask_r.resize(bw * bh);
                decouple::decouple0(&s.ref0, &s.dis0, bw, decouple, self.config.enhn_gain_limit, &mut s.dec0);
                decouple::masking0(&s.dec0.a, p, bw, decouple, &mut s.mask_a);
                decouple::masking0(&s.dec0.r, p, bw, decouple, &mut s.mask_r);
                let input = Inputs { reference: &s.ref0, decoupled: &s.dec0, mask_a: &s.mask_a, mask_r: &s.mask_r };
                cm::rows0(&input, p, rows, &mut s.cm);
            } else {
                let (w, h) = (p.geometry.w, p.geometry.h);
                dwt::scale123(&s.prev[0], w, h, p.scale, &mut s.ref123, &mut s.dwt);
                dwt::scale123(&s.prev[1], w, h, p.scale, &mut s.dis123, &mut s.dwt);
                let decouple = p.geometry.decouple();
                s.dec123.resize(bw * bh);
                s.mask_a.resize(bw * bh);
                s.mask_r.resize(bw * bh);
                decouple::decouple123(&s.ref123, &s.dis123, bw, decouple, self.config.enhn_gain_limit, &mut s.dec123);
                decouple::masking123(&s.dec123.a, p, bw, decouple, &mut s.mask_a);
                decouple::masking123(&s.dec123.r, p, bw, decouple, &mut s.mask_r);
                let input = Inputs { reference: &s.ref123, decoupled: &s.dec123, mask_a: &s.mask_a, mask_r: &s.mask_r };
                cm::rows123(&input, p, rows, &mut s.cm);
                s.prev[0].clone_from(&s.ref123.a);
                s.prev[1].clone_from(&s.dis123.a);
            }
        }
        let g = reference.geometry;
        let rows = [&s.rows[0][..], &s.rows[1][..], &s.rows[2][..], &s.rows[3][..]];
        let o = finish(&self.config, &self.params, rows, g.width as usize, g.height as usize);
        self.config.record(index, &o, out);
        Ok(())
    }
}
