//! The CPU reference of `vif` (libvmaf integer_vif.c, its plain C path):
//! fixed-point VIF over four scales. Every value is an integer of the width
//! libvmaf gives it (u32 sums that wrap as C's do, u64 where it widens),
//! rounded by the same shifts, so the sums are libvmaf's to the bit; the
//! few double operations of the statistic (the gain `g`) are the same IEEE
//! operations in the same order.
//!
//! Where libvmaf computes more than it uses, this port does not: the
//! subsampling filter is evaluated only at the even rows and columns that
//! the decimation keeps (`decimate_and_pad` discards the rest).

use super::tables::{INT_FILTERS, SIGMA_NSQ, log2_32, log2_64};
use crate::fixture::PlaneRef;

/// The four sums of one scale (integer_vif.h `VifResiduals`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ScaleSums {
    pub num_log: i64,
    pub den_log: i64,
    pub num_non_log: i64,
    pub den_non_log: i64,
}

impl ScaleSums {
    pub fn add(&mut self, other: &ScaleSums) {
        self.num_log += other.num_log;
        self.den_log += other.den_log;
        self.num_non_log += other.num_non_log;
        self.den_non_log += other.den_non_log;
    }

    /// The scale's (num, den) as `vif_statistic_8`/`_16` store them: double
    /// arithmetic rounded to f32.
    pub fn num_den(&self) -> (f32, f32) {
        let num =
            self.num_log as f64 / 2048.0 + (self.den_non_log as f64 - (self.num_non_log as f64 / 16384.0) / 65025.0);
        let den = self.den_log as f64 / 2048.0 + self.den_non_log as f64;
        (num as f32, den as f32)
    }
}

/// The per-pixel core of `vif_statistic_8`/`_16` (integer_vif.c), after the
/// horizontal pass: `mu1`, `mu2` are the filtered means (u32 sums) and
/// `xx`, `yy`, `xy` the filtered second moments already shifted to u32
/// (`xx_filt_val` ...). Adds the pixel's share to `sums`.
#[inline]
pub fn accumulate(mu: [u32; 2], moments: [u32; 3], table: &[u16], gain_limit: f64, sums: &mut ScaleSums) {
    let [mu1, mu2] = mu.map(u64::from);
    let [xx, yy, xy] = moments;
    let round32 = |p: u64| ((p + 2_147_483_648) >> 32) as u32;
    let sigma1_sq = xx.wrapping_sub(round32(mu1 * mu1)) as i32;
    let sigma2_sq = (yy.wrapping_sub(round32(mu2 * mu2)) as i32).max(0);
    let sigma12 = xy.wrapping_sub(round32(mu1 * mu2)) as i32;
    if sigma1_sq >= SIGMA_NSQ {
        sums.den_log += i64::from(log2_32(table, SIGMA_NSQ.wrapping_add(sigma1_sq) as u32) - 2048 * 17);
        if sigma12 > 0 && sigma2_sq > 0 {
            const EPS: f64 = 65536.0 * 1.0e-10;
            let g = f64::from(sigma12) / (f64::from(sigma1_sq) + EPS);
            // C converts to int32 by truncation; a negative value becomes 0
            // right after, so saturation at i32::MIN changes nothing.
            let sv_sq = ((f64::from(sigma2_sq) - g * f64::from(sigma12)) as i32).max(0) as u32;
            let g = if g < gain_limit { g } else { gain_limit };
            let numer1 = sv_sq.wrapping_add(SIGMA_NSQ as u32);
            let numer1_tmp = (g * g * f64::from(sigma1_sq)) as i64 + i64::from(numer1);
            sums.num_log += i64::from(log2_64(table, numer1_tmp as u64) - log2_64(table, u64::from(numer1)));
        }
    } else {
        sums.num_non_log += i64::from(sigma2_sq);
        sums.den_non_log += 1;
    }
}

/// A plane's samples as the filters read them.
pub trait Sample: Copy + Send + Sync + 'static {
    fn get(self) -> u32;
}

impl Sample for u8 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
}

impl Sample for u16 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
}

/// integer_vif.c's border rule (`pad_top_and_bottom`, `PADDING_SQ_DATA`):
/// index -i reads i and n - 1 + i reads n - 1 - i. Needs n > the filter's
/// half width, which [`super::min_dimension`] guarantees.
#[inline(always)]
pub fn mirror(i: isize, n: usize) -> usize {
    let n = n as isize;
    (if i < 0 {
        -i
    } else if i >= n {
        2 * (n - 1) - i
    } else {
        i
    }) as usize
}

/// How the vertical pass of a statistic rounds (integer_vif.c: `_8` keeps
/// raw u32 sums; `_16` sums in u64 and shifts, by the bit depth at scale 0).
#[derive(Debug, Clone, Copy)]
enum Vertical {
    /// vif_statistic_8: 8-bit samples at scale 0.
    Eight,
    /// vif_statistic_16: `(sum + add) >> shift` for the means and the moments.
    Sixteen { mu: (u32, u32), sq: (u64, u32) },
}

impl Vertical {
    fn for_scale(scale: usize, bpc: u8) -> Self {
        match (scale, bpc) {
            (0, 8) => Vertical::Eight,
            (0, b) => {
                let sq_shift = (u32::from(b) - 8) * 2;
                Vertical::Sixteen { mu: (1 << (b - 1), u32::from(b)), sq: (1 << (sq_shift - 1), sq_shift) }
            }
            _ => Vertical::Sixteen { mu: (32768, 16), sq: (32768, 16) },
        }
    }
}

/// Scratch rows of one horizontal pass, with `r` columns of mirror padding
/// on each side (integer_vif.h `VifBuffer.tmp`), and the filtered values.
#[derive(Default)]
struct Rows {
    /// mu1, mu2, ref², dis², ref·dis after the vertical pass.
    tmp: [Vec<u32>; 5],
    /// mu1, mu2 (u32 sums) and the three moments (shifted to u32) after
    /// the horizontal pass.
    out: [Vec<u32>; 5],
}

impl Rows {
    fn prepare(&mut self, w: usize, r: usize) {
        for v in self.tmp.iter_mut() {
            v.clear();
            v.resize(w + 2 * r, 0);
        }
        for v in self.out.iter_mut() {
            v.clear();
            v.resize(w, 0);
        }
    }

    /// PADDING_SQ_DATA: mirror the `r` columns beyond each edge.
    fn pad(&mut self, w: usize, r: usize) {
        for v in self.tmp.iter_mut() {
            for f in 1..=r {
                v[r - f] = v[r + f];
                v[r + w - 1 + f] = v[r + w - 1 - f];
            }
        }
    }
}

/// vif_statistic_8 / vif_statistic_16's vertical pass of output row `i`
/// into `rows.tmp` (interior at offset `r`).
#[inline(always)]
fn vertical<T: Sample, const F: usize>(
    taps: &[u16; F],
    rows_ref: [&[T]; F],
    rows_dis: [&[T]; F],
    mode: Vertical,
    r: usize,
    tmp: &mut [Vec<u32>; 5],
) {
    let w = rows_ref[0].len();
    let [t_mu1, t_mu2, t_xx, t_yy, t_xy] = tmp;
    let (t_mu1, t_mu2) = (&mut t_mu1[r..r + w], &mut t_mu2[r..r + w]);
    let (t_xx, t_yy, t_xy) = (&mut t_xx[r..r + w], &mut t_yy[r..r + w], &mut t_xy[r..r + w]);
    match mode {
        Vertical::Eight => {
            for j in 0..w {
                let (mut mu1, mut mu2, mut xx, mut yy, mut xy) = (0u32, 0u32, 0u32, 0u32, 0u32);
                for fi in 0..F {
                    let c = u32::from(taps[fi]);
                    let (a, b) = (rows_ref[fi][j].get(), rows_dis[fi][j].get());
                    let (ca, cb) = (c * a, c * b);
                    mu1 = mu1.wrapping_add(ca);
                    mu2 = mu2.wrapping_add(cb);
                    xx = xx.wrapping_add(ca.wrapping_mul(a));
                    yy = yy.wrapping_add(cb.wrapping_mul(b));
                    xy = xy.wrapping_add(ca.wrapping_mul(b));
                }
                t_mu1[j] = mu1.wrapping_add(128) >> 8;
                t_mu2[j] = mu2.wrapping_add(128) >> 8;
                t_xx[j] = xx;
                t_yy[j] = yy;
                t_xy[j] = xy;
            }
        }
        Vertical::Sixteen { mu: (mu_add, mu_shift), sq: (sq_add, sq_shift) } => {
            for j in 0..w {
                let (mut mu1, mut mu2, mut xx, mut yy, mut xy) = (0u32, 0u32, 0u64, 0u64, 0u64);
                for fi in 0..F {
                    let c = u32::from(taps[fi]);
                    let (a, b) = (rows_ref[fi][j].get(), rows_dis[fi][j].get());
                    let (ca, cb) = (c.wrapping_mul(a), c.wrapping_mul(b));
                    mu1 = mu1.wrapping_add(ca);
                    mu2 = mu2.wrapping_add(cb);
                    xx = xx.wrapping_add(u64::from(ca) * u64::from(a));
                    yy = yy.wrapping_add(u64::from(cb) * u64::from(b));
                    xy = xy.wrapping_add(u64::from(ca) * u64::from(b));
                }
                t_mu1[j] = u32::from((mu1.wrapping_add(mu_add) >> mu_shift) as u16);
                t_mu2[j] = u32::from((mu2.wrapping_add(mu_add) >> mu_shift) as u16);
                t_xx[j] = (xx.wrapping_add(sq_add) >> sq_shift) as u32;
                t_yy[j] = (yy.wrapping_add(sq_add) >> sq_shift) as u32;
                t_xy[j] = (xy.wrapping_add(sq_add) >> sq_shift) as u32;
            }
        }
    }
}

/// The horizontal pass of a statistic over the padded `tmp` rows into
/// `out`: u32 sums for the means, u64 sums shifted by `(s + 32768) >> 16`
/// to u32 for the moments.
#[inline(always)]
fn horizontal<const F: usize>(taps: &[u16; F], tmp: &[Vec<u32>; 5], out: &mut [Vec<u32>; 5]) {
    let w = out[0].len();
    let [o_mu1, o_mu2, o_xx, o_yy, o_xy] = out;
    for j in 0..w {
        let (mut mu1, mut mu2, mut xx, mut yy, mut xy) = (0u32, 0u32, 0u64, 0u64, 0u64);
        for fj in 0..F {
            let c = u32::from(taps[fj]);
            mu1 = mu1.wrapping_add(c.wrapping_mul(tmp[0][j + fj]));
            mu2 = mu2.wrapping_add(c.wrapping_mul(tmp[1][j + fj]));
            xx += u64::from(c) * u64::from(tmp[2][j + fj]);
            yy += u64::from(c) * u64::from(tmp[3][j + fj]);
            xy += u64::from(c) * u64::from(tmp[4][j + fj]);
        }
        o_mu1[j] = mu1;
        o_mu2[j] = mu2;
        o_xx[j] = ((xx + 32768) >> 16) as u32;
        o_yy[j] = ((yy + 32768) >> 16) as u32;
        o_xy[j] = ((xy + 32768) >> 16) as u32;
    }
}

fn window<'a, T, const F: usize>(plane: &'a [T], w: usize, h: usize, i: usize) -> [&'a [T]; F] {
    std::array::from_fn(|fi| {
        let y = mirror(i as isize - (F / 2) as isize + fi as isize, h);
        &plane[y * w..(y + 1) * w]
    })
}

/// vif_statistic_8 / vif_statistic_16 at one scale over a `w` x `h` pair.
fn statistic<T: Sample, const F: usize>(
    taps: &[u16; F],
    (reference, distorted): (&[T], &[T]),
    (w, h): (usize, usize),
    mode: Vertical,
    table: &[u16],
    gain_limit: f64,
    rows: &mut Rows,
) -> ScaleSums {
    let r = F / 2;
    rows.prepare(w, r);
    let mut sums = ScaleSums::default();
    for i in 0..h {
        let (wr, wd) = (window::<T, F>(reference, w, h, i), window::<T, F>(distorted, w, h, i));
        vertical(taps, wr, wd, mode, r, &mut rows.tmp);
        rows.pad(w, r);
        horizontal(taps, &rows.tmp, &mut rows.out);
        let [mu1, mu2, xx, yy, xy] = &rows.out;
        for j in 0..w {
            accumulate([mu1[j], mu2[j]], [xx[j], yy[j], xy[j]], table, gain_limit, &mut sums);
        }
    }
    sums
}

/// subsample_rd_8 / subsample_rd_16 followed by `decimate_and_pad`: the
/// pair filtered with `taps` (the next scale's filter), each vertical sum
/// `(s + add) >> shift` then truncated to u16 as subsample_rd_16 does
/// (subsample_rd_8 keeps u32, but its sums never exceed 65280, so the
/// truncation is a no-op there), each horizontal sum `(s + 32768) >> 16`
/// to u16; then every other row and column, from the first.
#[allow(clippy::too_many_arguments)]
fn subsample<T: Sample, const F: usize>(
    taps: &[u16; F],
    (reference, distorted): (&[T], &[T]),
    (w, h): (usize, usize),
    (add, shift): (u32, u32),
    tmp: &mut [Vec<u32>; 2],
    out: (&mut Vec<u16>, &mut Vec<u16>),
) {
    let r = F / 2;
    let (wo, ho) = (w / 2, h / 2);
    for (plane, dst) in [(reference, out.0), (distorted, out.1)] {
        dst.clear();
        dst.resize(wo * ho, 0);
        let t = &mut tmp[0];
        t.clear();
        t.resize(w + 2 * r, 0);
        for i in 0..ho {
            let rows = window::<T, F>(plane, w, h, 2 * i);
            for j in 0..w {
                let mut s = 0u32;
                for fi in 0..F {
                    s = s.wrapping_add(u32::from(taps[fi]).wrapping_mul(rows[fi][j].get()));
                }
                t[r + j] = u32::from((s.wrapping_add(add) >> shift) as u16);
            }
            for f in 1..=r {
                t[r - f] = t[r + f];
                t[r + w - 1 + f] = t[r + w - 1 - f];
            }
            for (jo, d) in dst[i * wo..(i + 1) * wo].iter_mut().enumerate() {
                let mut s = 0u32;
                for fj in 0..F {
                    s = s.wrapping_add(u32::from(taps[fj]).wrapping_mul(t[2 * jo + fj]));
                }
                *d = (s.wrapping_add(32768) >> 16) as u16;
            }
        }
    }
}

/// Integer VIF of one frame pair, kept from frame to frame: the decimated
/// planes of scales 1 to 3 and the scratch rows (no allocation per frame).
pub struct IntegerVif {
    pub bpc: u8,
    pub skip_scale0: bool,
    pub gain_limit: f64,
    table: Vec<u16>,
    rows: Rows,
    sub_tmp: [Vec<u32>; 2],
    /// Reference and distorted planes of scales 1, 2 and 3.
    planes: [(Vec<u16>, Vec<u16>); 3],
}

macro_rules! with_taps {
    ($scale:expr, |$taps:ident| $body:expr) => {
        match $scale {
            0 => {
                let $taps: &[u16; 17] = INT_FILTERS[0].try_into().expect("17 taps");
                $body
            }
            1 => {
                let $taps: &[u16; 9] = INT_FILTERS[1].try_into().expect("9 taps");
                $body
            }
            2 => {
                let $taps: &[u16; 5] = INT_FILTERS[2].try_into().expect("5 taps");
                $body
            }
            _ => {
                let $taps: &[u16; 3] = INT_FILTERS[3].try_into().expect("3 taps");
                $body
            }
        }
    };
}

impl IntegerVif {
    pub fn new(bpc: u8, skip_scale0: bool, gain_limit: f64) -> Self {
        IntegerVif {
            bpc,
            skip_scale0,
            gain_limit,
            table: super::tables::log2_table(),
            rows: Rows::default(),
            sub_tmp: Default::default(),
            planes: Default::default(),
        }
    }

    /// The four scales' sums of one luma pair (integer_vif.c `extract`);
    /// scale 0 is all zeros under `vif_skip_scale0`.
    pub fn scales(&mut self, reference: PlaneRef<'_>, distorted: PlaneRef<'_>) -> [ScaleSums; 4] {
        match (reference, distorted) {
            (PlaneRef::U8 { width, height, data: r }, PlaneRef::U8 { data: d, .. }) => {
                self.run((r, d), (width, height))
            }
            (PlaneRef::U16 { width, height, data: r }, PlaneRef::U16 { data: d, .. }) => {
                self.run((r, d), (width, height))
            }
            _ => unreachable!("a fixture's reference and distorted share one geometry"),
        }
    }

    fn run<T: Sample>(&mut self, pair: (&[T], &[T]), (w, h): (usize, usize)) -> [ScaleSums; 4] {
        let mut out = [ScaleSums::default(); 4];
        let (table, gain) = (&self.table, self.gain_limit);
        if !self.skip_scale0 {
            let mode = Vertical::for_scale(0, self.bpc);
            out[0] = with_taps!(0, |taps| statistic(taps, pair, (w, h), mode, table, gain, &mut self.rows));
        }
        // Scale 1 from the frame: subsample_rd_8 (8-bit) or subsample_rd_16
        // with the bit depth's rounding.
        let first = if self.bpc == 8 { (128, 8) } else { (1 << (self.bpc - 1), u32::from(self.bpc)) };
        {
            let (r1, d1) = &mut self.planes[0];
            with_taps!(1, |taps| subsample(taps, pair, (w, h), first, &mut self.sub_tmp, (r1, d1)));
        }
        let (mut w, mut h) = (w / 2, h / 2);
        for scale in 1..4 {
            let mode = Vertical::for_scale(scale, self.bpc);
            let (before, after) = self.planes.split_at_mut(scale);
            let (r, d) = &before[scale - 1];
            let pair = (r.as_slice(), d.as_slice());
            out[scale] = with_taps!(scale, |taps| statistic(taps, pair, (w, h), mode, table, gain, &mut self.rows));
            if scale < 3 {
                let (rn, dn) = &mut after[0];
                with_taps!(scale + 1, |taps| subsample(taps, pair, (w, h), (32768, 16), &mut self.sub_tmp, (rn, dn)));
                (w, h) = (w / 2, h / 2);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_reflects_without_repeating_the_edge() {
        let m: Vec<usize> = (-3..8).map(|i| mirror(i, 5)).collect();
        assert_eq!(m, [3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1]);
    }

    #[test]
    fn flat_pictures_take_the_non_log_branch() {
        // Constant planes: every variance is 0 < sigma_nsq, so each pixel
        // adds 1 to den_non_log and sigma2_sq = 0 to num_non_log.
        let table = super::super::tables::log2_table();
        let mut sums = ScaleSums::default();
        let mu = 100u32 << 16; // a mean of 100 in 16.16
        let sq = ((u64::from(mu) * u64::from(mu) + (1 << 31)) >> 32) as u32;
        accumulate([mu, mu], [sq, sq, sq], &table, 100.0, &mut sums);
        assert_eq!(sums, ScaleSums { num_log: 0, den_log: 0, num_non_log: 0, den_non_log: 1 });
        assert_eq!(sums.num_den(), (1.0, 1.0));
    }

    #[test]
    fn a_textured_pixel_takes_the_log_branch() {
        // sigma1_sq = 2^20, sigma2_sq = 2^20, sigma12 = 2^19: g = 0.5,
        // sv_sq = 2^20 - 2^18; den_log = 2048 (log2(2^17 + 2^20) - 17).
        let table = super::super::tables::log2_table();
        let mut sums = ScaleSums::default();
        accumulate([0, 0], [1 << 20, 1 << 20, 1 << 19], &table, 100.0, &mut sums);
        let den = log2_32(&table, (1 << 17) + (1 << 20)) - 2048 * 17;
        assert_eq!(sums.den_log, i64::from(den));
        let g = f64::from(1 << 19) / (f64::from(1 << 20) + 65536.0 * 1e-10);
        let sv = (f64::from(1 << 20) - g * f64::from(1 << 19)) as u32;
        let numer1 = sv + (1 << 17);
        let tmp = (g * g * f64::from(1 << 20)) as u64 + u64::from(numer1);
        assert_eq!(sums.num_log, i64::from(log2_64(&table, tmp) - log2_64(&table, u64::from(numer1))));
        assert_eq!((sums.num_non_log, sums.den_non_log), (0, 0));
        // The gain limit caps g: with 1.0 nothing changes here (g < 1).
        let mut capped = ScaleSums::default();
        accumulate([0, 0], [1 << 20, 1 << 20, 1 << 19], &table, 1.0, &mut capped);
        assert_eq!(capped, sums);
    }
}
