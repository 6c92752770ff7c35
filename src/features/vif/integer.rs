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

#[cfg(target_arch = "x86_64")]
use super::integer_simd::{Lanes, avx2::V256, avx512::V512, statistic as simd_statistic};
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
    accumulate_sigmas(sigma1_sq, sigma2_sq, sigma12, table, gain_limit, sums);
}

/// [`accumulate`] from the pixel's sigma1_sq, sigma2_sq (already at least
/// 0) and sigma12.
#[inline(always)]
pub fn accumulate_sigmas(
    sigma1_sq: i32,
    sigma2_sq: i32,
    sigma12: i32,
    table: &[u16],
    gain_limit: f64,
    sums: &mut ScaleSums,
) {
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
    /// `W::L16` samples as 16-bit lanes (the vector builds only).
    ///
    /// # Safety
    /// As [`Lanes`]: only from functions compiled with `W`'s features.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load_w16<W: Lanes>(s: &[Self]) -> W;
}

impl Sample for u8 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load_w16<W: Lanes>(s: &[u8]) -> W {
        // SAFETY: the caller's build has W's features.
        unsafe { W::load_u8(s) }
    }
}

impl Sample for u16 {
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load_w16<W: Lanes>(s: &[u16]) -> W {
        // The lanes hold the u16 bits; the filters unpack them with zero.
        // SAFETY: the caller's build has W's features.
        unsafe { W::load16(bytemuck::cast_slice(s)) }
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
pub(super) enum Vertical {
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
/// on each side (integer_vif.h `VifBuffer.tmp`), and the filtered sums.
///
/// The three moments (ref², dis², ref·dis after the vertical pass: u32
/// values up to 2^32) are kept as 16-bit halves, `hi = v >> 16` and
/// `lo = v & 0xffff`, so the horizontal pass sums each half in u32 lanes
/// instead of libvmaf's u64: the taps sum to 65536, so each half's sum is
/// below 2^32, and libvmaf's `(Σ c·v + 32768) >> 16` is exactly
/// `Σ c·hi + ((Σ c·lo + 32768) >> 16)` (see [`join`]).
#[derive(Default)]
struct Rows {
    /// mu1, mu2, then the hi and lo halves of ref², dis², ref·dis.
    tmp: [Vec<u32>; 8],
    /// sigma1_sq, sigma2_sq (clamped at 0), sigma12 of each pixel.
    sigma: [Vec<i32>; 3],
    /// The vector builds' rows (integer_simd).
    #[cfg(target_arch = "x86_64")]
    simd: super::integer_simd::Rows16,
}

/// Which build of the statistic runs: the portable blocks, or integer_simd
/// in AVX2's or AVX-512's vectors.
const PORTABLE: u8 = 0;
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX2: u8 = 1;
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AVX512: u8 = 2;

impl Rows {
    fn prepare(&mut self, w: usize, r: usize) {
        for v in self.tmp.iter_mut() {
            v.clear();
            v.resize(w + 2 * r, 0);
        }
        for v in self.sigma.iter_mut() {
            v.clear();
            v.resize(w, 0);
        }
    }
}

/// PADDING_SQ_DATA: mirror the `r` columns beyond each edge of a padded row.
#[inline(always)]
pub(super) fn pad<V: Copy>(row: &mut [V], w: usize, r: usize) {
    for f in 1..=r {
        row[r - f] = row[r + f];
        row[r + w - 1 + f] = row[r + w - 1 - f];
    }
}

/// `(h · 65536 + l + add) >> shift` truncated to u32, for `shift` <= 16,
/// `add` < 2^shift and `l` < 2^32 - 2^16: the u64 rounding shift of
/// libvmaf on a sum held as two u32 halves (`h` the sum of the high 16-bit
/// halves, `l` of the low ones), with no u64 arithmetic.
#[inline(always)]
fn join(h: u32, l: u32, add: u32, shift: u32) -> u32 {
    (h << (16 - shift)).wrapping_add((l + add) >> shift)
}

/// Columns computed together in the portable build (x86-64 CPUs with AVX2
/// or AVX-512 run integer_simd instead): blocks of [`LANES`] columns are
/// fixed-size arrays the compiler keeps in vector registers, the taps going
/// by with every partial sum in a register. A row's last
/// `w % LANES` columns take the same code one column at a time.
const LANES: usize = 8;

/// vif_statistic_8 / vif_statistic_16's vertical pass of columns
/// `j .. j + N` of one output row (the `F` picture rows of its window) into
/// `tmp[..][r + j ..]`. C sums the products in u32 (`_8`: wrapping, as C's)
/// or u64 (`_16`); the u64 sums are kept here as two u32 halves ([`join`]),
/// the same integers.
#[inline(always)]
pub(super) fn vertical_block<T: Sample, const F: usize, const N: usize>(
    c: &[u32; F],
    (rows_ref, rows_dis): (&[&[T]; F], &[&[T]; F]),
    j: usize,
    mode: Vertical,
    out: &mut [&mut [u32]; 8],
) {
    match mode {
        Vertical::Eight => {
            let mut acc = [[0u32; N]; 5];
            for fi in 0..F {
                let (a, b) = (&rows_ref[fi][j..j + N], &rows_dis[fi][j..j + N]);
                for l in 0..N {
                    let (a, b) = (a[l].get(), b[l].get());
                    let (ca, cb) = (c[fi] * a, c[fi] * b);
                    acc[0][l] = acc[0][l].wrapping_add(ca);
                    acc[1][l] = acc[1][l].wrapping_add(cb);
                    acc[2][l] = acc[2][l].wrapping_add(ca.wrapping_mul(a));
                    acc[3][l] = acc[3][l].wrapping_add(cb.wrapping_mul(b));
                    acc[4][l] = acc[4][l].wrapping_add(ca.wrapping_mul(b));
                }
            }
            for l in 0..N {
                out[0][j + l] = acc[0][l].wrapping_add(128) >> 8;
                out[1][j + l] = acc[1][l].wrapping_add(128) >> 8;
                for q in 0..3 {
                    (out[2 + 2 * q][j + l], out[3 + 2 * q][j + l]) = (acc[2 + q][l] >> 16, acc[2 + q][l] & 0xffff);
                }
            }
        }
        Vertical::Sixteen { mu: (mu_add, mu_shift), sq: (sq_add, sq_shift) } => {
            // mu1, mu2, then the hi and lo halves' sums of r·r, d·d, r·d.
            let mut acc = [[0u32; N]; 8];
            for fi in 0..F {
                let (a, b) = (&rows_ref[fi][j..j + N], &rows_dis[fi][j..j + N]);
                for l in 0..N {
                    let (a, b) = (a[l].get(), b[l].get());
                    acc[0][l] = acc[0][l].wrapping_add(c[fi].wrapping_mul(a));
                    acc[1][l] = acc[1][l].wrapping_add(c[fi].wrapping_mul(b));
                    // Samples are at most 16 bits: their products fit u32.
                    for (q, p) in [a * a, b * b, a * b].into_iter().enumerate() {
                        acc[2 + 2 * q][l] = acc[2 + 2 * q][l].wrapping_add(c[fi] * (p >> 16));
                        acc[3 + 2 * q][l] = acc[3 + 2 * q][l].wrapping_add(c[fi] * (p & 0xffff));
                    }
                }
            }
            let sq_add = sq_add as u32;
            for l in 0..N {
                out[0][j + l] = u32::from((acc[0][l].wrapping_add(mu_add) >> mu_shift) as u16);
                out[1][j + l] = u32::from((acc[1][l].wrapping_add(mu_add) >> mu_shift) as u16);
                for q in 0..3 {
                    let v = join(acc[2 + 2 * q][l], acc[3 + 2 * q][l], sq_add, sq_shift);
                    (out[2 + 2 * q][j + l], out[3 + 2 * q][j + l]) = (v >> 16, v & 0xffff);
                }
            }
        }
    }
}

/// The vertical pass of one output row (`rows_*`: its window's picture
/// rows) into `tmp` (interior at offset `r`).
#[inline(always)]
fn vertical<T: Sample, const F: usize>(
    taps: &[u16; F],
    rows: (&[&[T]; F], &[&[T]; F]),
    mode: Vertical,
    r: usize,
    tmp: &mut [Vec<u32>; 8],
) {
    let w = rows.0[0].len();
    let c = taps.map(u32::from);
    let mut out = tmp.each_mut().map(|v| &mut v[r..r + w]);
    let full = w - w % LANES;
    for j in (0..full).step_by(LANES) {
        vertical_block::<T, F, LANES>(&c, rows, j, mode, &mut out);
    }
    for j in full..w {
        vertical_block::<T, F, 1>(&c, rows, j, mode, &mut out);
    }
}

/// Columns `j .. j + N` of a padded row through a symmetric filter, in u32
/// arithmetic that wraps as C's does: `Σ_k c_k · row[j + k]`, the taps
/// paired (`c_k (row[j + k] + row[j + F - 1 - k])`): the same sum modulo
/// 2^32.
#[inline(always)]
fn filter_block<const F: usize, const N: usize>(c: &[u32; F], row: &[u32], j: usize) -> [u32; N] {
    let r = F / 2;
    let mid = &row[j + r..j + r + N];
    let mut acc = [0u32; N];
    for l in 0..N {
        acc[l] = c[r].wrapping_mul(mid[l]);
    }
    for k in 0..r {
        let (a, b) = (&row[j + k..j + k + N], &row[j + F - 1 - k..j + F - 1 - k + N]);
        for l in 0..N {
            acc[l] = acc[l].wrapping_add(c[k].wrapping_mul(a[l].wrapping_add(b[l])));
        }
    }
    acc
}

/// The horizontal pass of columns `j .. j + N` and their sigmas: `mu1`,
/// `mu2` (u32 sums), `xx_filt_val`... (`(Σ + 32768) >> 16`, from the
/// halves' sums), then sigma1_sq, sigma2_sq (at least 0) and sigma12 as
/// vif_statistic_* forms them.
#[inline(always)]
fn horizontal_block<const F: usize, const N: usize>(
    c: &[u32; F],
    tmp: &[Vec<u32>; 8],
    j: usize,
    sigma: &mut [&mut [i32]; 3],
) {
    let mut f = [[0u32; N]; 8];
    for q in 0..8 {
        f[q] = filter_block::<F, N>(c, &tmp[q], j);
    }
    let round32 = |p: u64| ((p + 2_147_483_648) >> 32) as u32;
    for l in 0..N {
        let (m1, m2) = (u64::from(f[0][l]), u64::from(f[1][l]));
        sigma[0][j + l] = join(f[2][l], f[3][l], 32768, 16).wrapping_sub(round32(m1 * m1)) as i32;
        sigma[1][j + l] = (join(f[4][l], f[5][l], 32768, 16).wrapping_sub(round32(m2 * m2)) as i32).max(0);
        sigma[2][j + l] = join(f[6][l], f[7][l], 32768, 16).wrapping_sub(round32(m1 * m2)) as i32;
    }
}

/// The horizontal pass of a row over the padded `rows.tmp`, into
/// `rows.sigma`.
#[inline(always)]
fn horizontal<const F: usize>(taps: &[u16; F], rows: &mut Rows) {
    let w = rows.sigma[0].len();
    let c = taps.map(u32::from);
    let mut sigma = rows.sigma.each_mut().map(|v| &mut v[..w]);
    let full = w - w % LANES;
    for j in (0..full).step_by(LANES) {
        horizontal_block::<F, LANES>(&c, &rows.tmp, j, &mut sigma);
    }
    for j in full..w {
        horizontal_block::<F, 1>(&c, &rows.tmp, j, &mut sigma);
    }
}

pub(super) fn window<T, const F: usize>(plane: &[T], w: usize, h: usize, i: usize) -> [&[T]; F] {
    std::array::from_fn(|fi| {
        let y = mirror(i as isize - (F / 2) as isize + fi as isize, h);
        &plane[y * w..(y + 1) * w]
    })
}

/// vif_statistic_8 / vif_statistic_16 at one scale over a `w` x `h` pair.
#[inline(always)]
fn statistic<T: Sample, const F: usize, const LEVEL: u8>(
    taps: &[u16; F],
    (reference, distorted): (&[T], &[T]),
    (w, h): (usize, usize),
    mode: Vertical,
    table: &[u16],
    gain_limit: f64,
    rows: &mut Rows,
) -> ScaleSums {
    #[cfg(target_arch = "x86_64")]
    {
        let pair = (reference, distorted);
        let simd = &mut rows.simd;
        // SAFETY: LEVEL is AVX512 or AVX2 only in the build of `run` with
        // those features.
        match LEVEL {
            AVX512 => {
                return unsafe { simd_statistic::<T, F, V512>(taps, pair, (w, h), mode, table, gain_limit, simd) };
            }
            AVX2 => return unsafe { simd_statistic::<T, F, V256>(taps, pair, (w, h), mode, table, gain_limit, simd) },
            _ => {}
        }
    }
    let r = F / 2;
    rows.prepare(w, r);
    let mut sums = ScaleSums::default();
    for i in 0..h {
        let (wr, wd) = (window::<T, F>(reference, w, h, i), window::<T, F>(distorted, w, h, i));
        vertical::<T, F>(taps, (&wr, &wd), mode, r, &mut rows.tmp);
        for t in rows.tmp.iter_mut() {
            pad(t, w, r);
        }
        horizontal::<F>(taps, rows);
        let [s1, s2, s12] = &rows.sigma;
        for j in 0..w {
            accumulate_sigmas(s1[j], s2[j], s12[j], table, gain_limit, &mut sums);
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
#[inline(always)]
fn subsample<T: Sample, const F: usize>(
    taps: &[u16; F],
    (reference, distorted): (&[T], &[T]),
    (w, h): (usize, usize),
    (add, shift): (u32, u32),
    tmp: &mut Vec<u32>,
    out: (&mut Vec<u16>, &mut Vec<u16>),
) {
    let r = F / 2;
    let (wo, ho) = (w / 2, h / 2);
    let c: [u32; F] = taps.map(u32::from);
    for (plane, dst) in [(reference, out.0), (distorted, out.1)] {
        dst.clear();
        dst.resize(wo * ho, 0);
        tmp.clear();
        tmp.resize(w + 2 * r, 0);
        for i in 0..ho {
            let rows = window::<T, F>(plane, w, h, 2 * i).map(|row| &row[..w]);
            let t = &mut tmp[r..r + w];
            for j in 0..w {
                let mut s = 0u32;
                for fi in 0..F {
                    s = s.wrapping_add(c[fi].wrapping_mul(rows[fi][j].get()));
                }
                t[j] = u32::from((s.wrapping_add(add) >> shift) as u16);
            }
            pad(tmp, w, r);
            for (jo, d) in dst[i * wo..(i + 1) * wo].iter_mut().enumerate() {
                let t: &[u32; F] = tmp[2 * jo..2 * jo + F].try_into().expect("F taps");
                let mut s = 0u32;
                for fj in 0..F {
                    s = s.wrapping_add(c[fj].wrapping_mul(t[fj]));
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
    sub_tmp: Vec<u32>,
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

    fn run<T: Sample>(&mut self, pair: (&[T], &[T]), size: (usize, usize)) -> [ScaleSums; 4] {
        #[cfg(target_arch = "x86_64")]
        if super::integer_simd::avx512::detected() {
            // SAFETY: the CPU has AVX-512 F, BW, DQ and CD.
            return unsafe { self.run_avx512(pair, size) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.run_avx2(pair, size) };
        }
        self.run_portable(pair, size)
    }

    /// The scales with integer_simd in AVX-512 vectors: the same integers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512cd")]
    fn run_avx512<T: Sample>(&mut self, pair: (&[T], &[T]), size: (usize, usize)) -> [ScaleSums; 4] {
        self.run_blocks::<T, AVX512>(pair, size)
    }

    /// The scales with integer_simd in AVX2 vectors: the same integers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2<T: Sample>(&mut self, pair: (&[T], &[T]), size: (usize, usize)) -> [ScaleSums; 4] {
        self.run_blocks::<T, AVX2>(pair, size)
    }

    fn run_portable<T: Sample>(&mut self, pair: (&[T], &[T]), size: (usize, usize)) -> [ScaleSums; 4] {
        self.run_blocks::<T, PORTABLE>(pair, size)
    }

    /// The scales, with the `LEVEL` build of the filter passes.
    #[inline(always)]
    fn run_blocks<T: Sample, const LEVEL: u8>(&mut self, pair: (&[T], &[T]), (w, h): (usize, usize)) -> [ScaleSums; 4] {
        let mut out = [ScaleSums::default(); 4];
        let (table, gain) = (&self.table, self.gain_limit);
        if !self.skip_scale0 {
            let mode = Vertical::for_scale(0, self.bpc);
            out[0] =
                with_taps!(0, |taps| statistic::<T, _, LEVEL>(taps, pair, (w, h), mode, table, gain, &mut self.rows));
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
            out[scale] = with_taps!(scale, |taps| statistic::<u16, _, LEVEL>(
                taps,
                pair,
                (w, h),
                mode,
                table,
                gain,
                &mut self.rows
            ));
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

    /// A picture with flat, smooth and noisy parts (both branches of the
    /// statistic), from a fixed xorshift seed.
    fn picture(w: usize, h: usize, bpc: u8, seed: u64) -> Vec<u16> {
        let mut x = seed;
        let max = (1u32 << bpc) - 1;
        (0..w * h)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let (col, row) = (i % w, i / w);
                let smooth = ((col * 7 + row * 3) as u32 * max / (7 * w as u32 + 3 * h as u32)) & max;
                (match (col * 3 / w, row * 2 / h) {
                    (0, _) => max / 3,
                    (1, 0) => smooth,
                    _ => (smooth + (x as u32 % (max / 4 + 1))).min(max),
                }) as u16
            })
            .collect()
    }

    /// Every build of the filter passes this CPU has gives the portable
    /// build's sums, at 8, 10, 12 and 16 bits, on widths that leave every kind of
    /// partial block (the AVX-512 build works in blocks of 32, 16 and 8),
    /// with the gain limit capping g or not.
    #[test]
    fn every_simd_build_gives_the_portable_sums() {
        let sizes = [(37, 33), (64, 40), (131, 36), (96, 51), (200, 34)];
        // libvmaf's default gain limit, and its smallest (which caps g).
        for ((w, h), gain_limit) in sizes.into_iter().flat_map(|s| [(s, 100.0), (s, 1.0)]) {
            for bpc in [8u8, 10, 12, 16] {
                let (r, d) = (picture(w, h, bpc, 7), picture(w, h, bpc, 11));
                let mut vif = IntegerVif::new(bpc, false, gain_limit);
                let portable = if bpc == 8 {
                    let narrow = |p: &[u16]| p.iter().map(|&v| v as u8).collect::<Vec<u8>>();
                    every_build(&mut vif, (&narrow(&r), &narrow(&d)), (w, h))
                } else {
                    every_build(&mut vif, (&r, &d), (w, h))
                };
                // The pictures reach both branches at every scale.
                for s in portable {
                    assert!(s.den_log != 0 && s.den_non_log != 0, "{w}x{h} {bpc}-bit: {s:?}");
                }
            }
        }
    }

    /// The portable build's sums, after asserting that every vector build
    /// this CPU has gives the same.
    fn every_build<T: Sample>(vif: &mut IntegerVif, pair: (&[T], &[T]), size: (usize, usize)) -> [ScaleSums; 4] {
        let want = vif.run_portable(pair, size);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                assert_eq!(unsafe { vif.run_avx2(pair, size) }, want, "AVX2 at {size:?}");
            } else {
                eprintln!("no AVX2 on this CPU: its build is not checked here");
            }
            if super::super::integer_simd::avx512::detected() {
                // SAFETY: the CPU has AVX-512 F, BW, DQ and CD.
                assert_eq!(unsafe { vif.run_avx512(pair, size) }, want, "AVX-512 at {size:?}");
            } else {
                eprintln!("no AVX-512 on this CPU: its build is not checked here");
            }
        }
        want
    }

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
