//! The CPU reference: ssimulacra2.c `extract` for one frame pair, with the
//! fork's operations in its order (every f32 and f64 operation of a pixel,
//! and the map sums over each plane in raster order), so its doubles are
//! the fork's. Buffers are sized once per geometry and kept.

use super::blur::{ColumnIir, RecursiveGaussian, RowLanes, blur_rows};
use super::color::{YuvToRgb, chroma_index, linear_rgb};
use super::maps::{ChannelSums, MapRow, RowTerms, add_row, add_row_to_columns, sum_columns};
use super::pyramid::downsample_2x2;
use super::xyb::linear_rgb_to_xyb;
use super::{Params, scales, score};
use crate::features::Extractor;
use crate::fixture::Frame;
use crate::scores::Scores;
use anyhow::{Result, ensure};

pub(super) fn extractor(params: Params) -> Result<Box<dyn Extractor>> {
    Ok(Box::new(Ssimulacra2Cpu::new(params, SumOrder::Raster)))
}

/// The order in which each plane's map values are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumOrder {
    /// Raster order, as the fork's loops: the CPU reference.
    Raster,
    /// Down each column, then the columns in order: the GPU pipeline's.
    /// Not the reference; it lets the tests hold the GPU to the CPU's
    /// per-pixel arithmetic bit for bit.
    Columns,
}

/// The five blurred statistics of a channel, in the order the blur buffers
/// hold them: mu1, mu2, sigma1_sq, sigma2_sq, sigma12 (blurs of ref, dist,
/// ref * ref, dist * dist, ref * dist).
const STATS: usize = 5;

pub struct Ssimulacra2Cpu {
    params: Params,
    order: SumOrder,
    /// Per-column sums ([`SumOrder::Columns`] only).
    column_sums: Vec<ChannelSums>,
    conv: YuvToRgb,
    rg: RecursiveGaussian,
    /// The chroma column of every luma column (`read_plane`).
    columns: Vec<usize>,
    scales: Vec<(usize, usize)>,
    /// Linear RGB of the reference and the distorted at every scale.
    pyramid: [Vec<Vec<f32>>; 2],
    /// XYB of both at the current scale.
    xyb: [Vec<f32>; 2],
    /// The row-blurred statistics of one channel (the C's `scratch`, one
    /// plane per statistic).
    rows: [Vec<f32>; STATS],
    columns_iir: [ColumnIir; STATS],
    /// One output row of each statistic's column pass.
    blurred: [Vec<f32>; STATS],
    zero_row: Vec<f32>,
    lanes: RowLanes,
    terms: RowTerms,
}

impl Ssimulacra2Cpu {
    pub fn new(params: Params, order: SumOrder) -> Self {
        let (w, h) = params.geometry.plane_dims(0);
        let cw = params.geometry.plane_dims(1).0;
        let scales = scales(w, h);
        let pyramid = || scales.iter().map(|&(sw, sh)| vec![0.0; 3 * sw * sh]).collect::<Vec<_>>();
        Ssimulacra2Cpu {
            conv: YuvToRgb::new(params.matrix, params.geometry.bit_depth),
            rg: RecursiveGaussian::ssimulacra2(),
            columns: (0..w).map(|x| chroma_index(x, cw, w)).collect(),
            pyramid: [pyramid(), pyramid()],
            xyb: std::array::from_fn(|_| vec![0.0; 3 * w * h]),
            rows: std::array::from_fn(|_| vec![0.0; w * h]),
            columns_iir: std::array::from_fn(|_| ColumnIir::new(w)),
            blurred: std::array::from_fn(|_| vec![0.0; w]),
            zero_row: vec![0.0; w],
            lanes: RowLanes::default(),
            terms: RowTerms::default(),
            column_sums: Vec::new(),
            scales,
            params,
            order,
        }
    }

    /// One frame pair's score.
    pub fn score(&mut self, reference: &Frame, distorted: &Frame) -> f64 {
        if self.scales.is_empty() {
            // No scale of 8x8: every term is 0 and pool_score gives 100.
            return score::score(&[], &[]);
        }
        for (frame, pyramid) in [reference, distorted].into_iter().zip(&mut self.pyramid) {
            linear_rgb(frame, &self.conv, &self.columns, &mut pyramid[0]);
            for s in 1..self.scales.len() {
                let (done, next) = pyramid.split_at_mut(s);
                let (w, h) = self.scales[s - 1];
                downsample_2x2(&done[s - 1], w, h, &mut next[0]);
            }
        }
        let mut sums = Vec::with_capacity(self.scales.len());
        for s in 0..self.scales.len() {
            sums.push(self.scale_sums(s));
        }
        score::score(&self.scales, &sums)
    }

    /// The six sums of each channel at scale `s`.
    fn scale_sums(&mut self, s: usize) -> [ChannelSums; 3] {
        let (w, h) = self.scales[s];
        let n = w * h;
        for k in 0..2 {
            linear_rgb_to_xyb(&self.pyramid[k][s], &mut self.xyb[k], n);
        }
        let mut out = [[0.0; 6]; 3];
        for (c, sums) in out.iter_mut().enumerate() {
            let a = &self.xyb[0][c * n..(c + 1) * n];
            let b = &self.xyb[1][c * n..(c + 1) * n];
            let inputs = [(a, None), (b, None), (a, Some(a)), (b, Some(b)), (a, Some(b))];
            for ((x, y), rows) in inputs.into_iter().zip(&mut self.rows) {
                blur_rows(&self.rg, x, y, w, h, &mut rows[..n], &mut self.lanes);
            }
            let (rows, zero, rg) = (&self.rows, &self.zero_row, &self.rg);
            let (iirs, blurred) = (&mut self.columns_iir, &mut self.blurred);
            let column_sums = &mut self.column_sums;
            column_sums.clear();
            column_sums.resize(w, [0.0; 6]);
            for iir in iirs.iter_mut() {
                iir.reset(w);
            }
            // blur_plane's vertical pass for the five statistics together,
            // a row at a time; each finished row goes straight into the maps,
            // in the order the C's loops visit the plane.
            let big_n = rg.radius as isize;
            let row = |k: usize, r: isize| -> &[f32] {
                if (0..h as isize).contains(&r) { &rows[k][r as usize * w..][..w] } else { &zero[..w] }
            };
            for i in -big_n + 1..h as isize {
                let (left, right) = (i - big_n - 1, i + big_n - 1);
                for (k, (iir, out)) in iirs.iter_mut().zip(blurred.iter_mut()).enumerate() {
                    iir.step(rg, row(k, left), row(k, right), out);
                }
                if i >= 0 {
                    let y = i as usize;
                    let [mu1, mu2, s11, s22, s12] = &*blurred;
                    let row = MapRow {
                        img1: &a[y * w..][..w],
                        img2: &b[y * w..][..w],
                        mu1: &mu1[..w],
                        mu2: &mu2[..w],
                        s11: &s11[..w],
                        s22: &s22[..w],
                        s12: &s12[..w],
                    };
                    match self.order {
                        SumOrder::Raster => add_row(&row, &mut self.terms, sums),
                        SumOrder::Columns => add_row_to_columns(&row, column_sums),
                    }
                }
            }
            if self.order == SumOrder::Columns {
                *sums = sum_columns(column_sums);
            }
        }
        out
    }
}

impl Extractor for Ssimulacra2Cpu {
    fn extract(&mut self, index: usize, reference: &Frame, distorted: &Frame, out: &mut Scores) -> Result<()> {
        ensure!(
            reference.geometry == self.params.geometry && distorted.geometry == self.params.geometry,
            "ssimulacra2 was set up for {}, got {} and {}",
            self.params.geometry,
            reference.geometry,
            distorted.geometry
        );
        let score = self.score(reference, distorted);
        out.record("ssimulacra2", index, score);
        Ok(())
    }
}
