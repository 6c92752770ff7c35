//! YUV to linear RGB: ssimulacra2.c `picture_to_linear_rgb` (with its
//! `read_plane` chroma mapping) and ssimulacra2_math.h `vmaf_ss2_srgb_eotf`.

use crate::fixture::{Frame, PlaneRef};
use anyhow::{Result, bail};
use std::sync::OnceLock;

/// Entries of the fork's sRGB EOTF table (`SS2_EOTF_LUT_SIZE`).
pub const EOTF_LUT_SIZE: usize = 1024;

/// The fork's EOTF table: entry `i` is the sRGB EOTF of `i / 1023`
/// (`v / 12.92` up to 0.04045, else `((v + 0.055) / 1.055)^2.4`) evaluated
/// in f64 and rounded to f32, which is what ssimulacra2_eotf_lut.h holds
/// (all 1024 entries compared bit for bit; the unit test pins a checksum).
pub fn eotf_lut() -> &'static [f32; EOTF_LUT_SIZE] {
    static LUT: OnceLock<[f32; EOTF_LUT_SIZE]> = OnceLock::new();
    LUT.get_or_init(|| {
        std::array::from_fn(|i| {
            let v = i as f64 / (EOTF_LUT_SIZE - 1) as f64;
            let linear = if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) };
            linear as f32
        })
    })
}

/// `vmaf_ss2_srgb_eotf`: 0 at or below 0, 1 at or above 1, else the table
/// interpolated linearly in f32 (`a + (b - a) * frac`).
#[inline(always)]
pub fn srgb_eotf(x: f32, lut: &[f32; EOTF_LUT_SIZE]) -> f32 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let idx = x * (EOTF_LUT_SIZE - 1) as f32;
    // (int)idx: idx lies in (0, 1023), so i + 1 <= 1023.
    let i = idx as usize;
    let frac = idx - i as f32;
    let (a, b) = (lut[i], lut[i + 1]);
    a + (b - a) * frac
}

/// The `yuv_matrix` option (ssimulacra2.c `enum yuv_matrix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YuvMatrix {
    Bt709Limited = 0,
    Bt601Limited = 1,
    Bt709Full = 2,
    Bt601Full = 3,
}

impl YuvMatrix {
    pub fn from_option(value: i64) -> Result<Self> {
        Ok(match value {
            0 => YuvMatrix::Bt709Limited,
            1 => YuvMatrix::Bt601Limited,
            2 => YuvMatrix::Bt709Full,
            3 => YuvMatrix::Bt601Full,
            _ => bail!("yuv_matrix must be 0 (bt709 limited), 1 (bt601 limited), 2 (bt709 full) or 3 (bt601 full)"),
        })
    }
}

/// The f32 constants of `picture_to_linear_rgb`, computed as the C does
/// (every operation in f32), shared by the CPU reference and the kernels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YuvToRgb {
    /// `1.0f / (2^bpc - 1)`.
    pub inv_peak: f32,
    pub y_off: f32,
    pub y_scale: f32,
    pub c_scale: f32,
    pub cr_r: f32,
    pub cb_g: f32,
    pub cr_g: f32,
    pub cb_b: f32,
}

/// The chroma offset (`c_off`).
pub const C_OFF: f32 = 0.5;

impl YuvToRgb {
    pub fn new(matrix: YuvMatrix, bit_depth: u8) -> Self {
        let peak = ((1u32 << bit_depth) - 1) as f32;
        let limited = matches!(matrix, YuvMatrix::Bt709Limited | YuvMatrix::Bt601Limited);
        let (kr, kg, kb): (f32, f32, f32) = match matrix {
            YuvMatrix::Bt709Limited | YuvMatrix::Bt709Full => (0.2126, 0.7152, 0.0722),
            YuvMatrix::Bt601Limited | YuvMatrix::Bt601Full => (0.299, 0.587, 0.114),
        };
        YuvToRgb {
            inv_peak: 1.0 / peak,
            y_off: if limited { 16.0 / 255.0 } else { 0.0 },
            y_scale: if limited { 255.0 / 219.0 } else { 1.0 },
            c_scale: if limited { 255.0 / 224.0 } else { 1.0 },
            cr_r: 2.0 * (1.0 - kr),
            cb_g: -(2.0 * kb * (1.0 - kb)) / kg,
            cr_g: -(2.0 * kr * (1.0 - kr)) / kg,
            cb_b: 2.0 * (1.0 - kb),
        }
    }

    /// One pixel's non-linear R, G, B in [0, 1] from its raw samples.
    #[inline(always)]
    pub fn nonlinear(&self, y: f32, u: f32, v: f32) -> [f32; 3] {
        let yn = (y * self.inv_peak - self.y_off) * self.y_scale;
        let un = (u * self.inv_peak - C_OFF) * self.c_scale;
        let vn = (v * self.inv_peak - C_OFF) * self.c_scale;
        let r = yn + self.cr_r * vn;
        let g = yn + self.cb_g * un + self.cr_g * vn;
        let b = yn + self.cb_b * un;
        [clamp01(r), clamp01(g), clamp01(b)]
    }
}

/// `clampf(v, 0.0f, 1.0f)` (the same for every non-NaN input).
#[inline(always)]
fn clamp01(v: f32) -> f32 {
    v.clamp(0.0, 1.0)
}

/// `read_plane`'s coordinate in a plane of `plane` samples for luma
/// coordinate `i` of `luma`: the same, halved, or `i * plane / luma`,
/// clamped into the plane.
pub fn chroma_index(i: usize, plane: usize, luma: usize) -> usize {
    let s = if plane == luma {
        i
    } else if plane * 2 == luma {
        i >> 1
    } else {
        ((i as u64 * plane as u64) / luma as u64) as usize
    };
    s.min(plane.saturating_sub(1))
}

/// `picture_to_linear_rgb`: the frame as linear R, G and B planes (each
/// width x height, one after the other) in `out`. `columns` is the chroma
/// column of every luma column ([`chroma_index`]), kept by the caller.
pub fn linear_rgb(frame: &Frame, conv: &YuvToRgb, columns: &[usize], out: &mut [f32]) {
    match (frame.plane(0), frame.plane(1), frame.plane(2)) {
        (PlaneRef::U8 { data: y, .. }, PlaneRef::U8 { data: u, .. }, PlaneRef::U8 { data: v, .. }) => {
            convert(frame, [y, u, v], conv, columns, out)
        }
        (PlaneRef::U16 { data: y, .. }, PlaneRef::U16 { data: u, .. }, PlaneRef::U16 { data: v, .. }) => {
            convert(frame, [y, u, v], conv, columns, out)
        }
        _ => unreachable!("a frame's planes share one sample type"),
    }
}

fn convert<T: Copy + Into<f32>>(frame: &Frame, planes: [&[T]; 3], conv: &YuvToRgb, columns: &[usize], out: &mut [f32]) {
    let (w, h) = frame.geometry.plane_dims(0);
    let (cw, ch) = frame.geometry.plane_dims(1);
    let (r_plane, rest) = out[..3 * w * h].split_at_mut(w * h);
    let (g_plane, b_plane) = rest.split_at_mut(w * h);
    // A row's samples as f32, each chroma sample under its luma column.
    let mut samples = vec![0.0f32; 3 * w];
    for y in 0..h {
        let luma = &planes[0][y * w..(y + 1) * w];
        let sy = chroma_index(y, ch, h);
        let (u, v) = (&planes[1][sy * cw..(sy + 1) * cw], &planes[2][sy * cw..(sy + 1) * cw]);
        let (ys, rest) = samples.split_at_mut(w);
        let (us, vs) = rest.split_at_mut(w);
        for x in 0..w {
            let sx = columns[x];
            (ys[x], us[x], vs[x]) = (luma[x].into(), u[sx].into(), v[sx].into());
        }
        let rows = y * w..(y + 1) * w;
        let (r, g, b) = (&mut r_plane[rows.clone()], &mut g_plane[rows.clone()], &mut b_plane[rows]);
        rgb_row(conv, [ys, us, vs], [r, g, b]);
    }
}

/// Linear R, G, B of one row from its samples (luma, and the chroma under
/// each pixel): eight at a time in AVX2 where the CPU has it (the same
/// bits), the rest one by one.
fn rgb_row(conv: &YuvToRgb, [y, u, v]: [&[f32]; 3], [r, g, b]: [&mut [f32]; 3]) {
    let lut = eotf_lut();
    #[cfg(target_arch = "x86_64")]
    let done = if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { super::rgb_avx2::rgb_row(conv, lut, [y, u, v], [&mut *r, &mut *g, &mut *b]) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for x in done..y.len() {
        let [nr, ng, nb] = conv.nonlinear(y[x], u[x], v[x]);
        r[x] = srgb_eotf(nr, lut);
        g[x] = srgb_eotf(ng, lut);
        b[x] = srgb_eotf(nb, lut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row loop (AVX2 where the CPU has it) against the scalar code,
    /// bit for bit: every 8-bit luma value against a grid of chroma, and
    /// 10-bit samples around the clamps' edges, for every matrix; rows of
    /// 8k + 3 pixels, so the scalar tail runs too.
    #[test]
    fn the_row_loop_matches_the_scalar_code_bit_for_bit() {
        let lut = eotf_lut();
        let matrices = [YuvMatrix::Bt709Limited, YuvMatrix::Bt601Limited, YuvMatrix::Bt709Full, YuvMatrix::Bt601Full];
        for (bit_depth, values) in [(8u8, (0..256).collect::<Vec<u32>>()), (10, (0..1024).step_by(3).collect())] {
            let chroma: Vec<u32> = values.iter().copied().step_by(values.len() / 17).collect();
            let mut triples = Vec::new();
            for &y in &values {
                for &u in &chroma {
                    for &v in &chroma {
                        triples.push([y as f32, u as f32, v as f32]);
                    }
                }
            }
            triples.truncate(triples.len() / 8 * 8 - 5);
            let [y, u, v] = [0, 1, 2].map(|c| triples.iter().map(|t| t[c]).collect::<Vec<f32>>());
            for matrix in matrices {
                let conv = YuvToRgb::new(matrix, bit_depth);
                let n = y.len();
                let (mut r, mut g, mut b) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                rgb_row(&conv, [&y, &u, &v], [&mut r, &mut g, &mut b]);
                for x in 0..n {
                    let want = conv.nonlinear(y[x], u[x], v[x]).map(|c| srgb_eotf(c, lut).to_bits());
                    let got = [r[x], g[x], b[x]].map(f32::to_bits);
                    assert_eq!(got, want, "{matrix:?} {bit_depth}-bit y {} u {} v {}", y[x], u[x], v[x]);
                }
            }
        }
    }

    #[test]
    fn the_eotf_table_is_the_forks() {
        // FNV-1a of the 1024 entries' little-endian bits as
        // ssimulacra2_eotf_lut.h spells them.
        let bytes: Vec<u8> = eotf_lut().iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
        assert_eq!(crate::backend::kernels::fnv1a(&[&bytes]), 0xed25_d26e_b751_1a29);
        let lut = eotf_lut();
        assert_eq!(lut[0], 0.0);
        assert_eq!(lut[1023], 1.0);
        assert_eq!(lut[1].to_bits(), 0x389e_ab3c); // 0x1.3d5678p-14
    }

    #[test]
    fn the_eotf_interpolates_and_clamps() {
        let lut = eotf_lut();
        assert_eq!(srgb_eotf(-0.1, lut), 0.0);
        assert_eq!(srgb_eotf(0.0, lut), 0.0);
        assert_eq!(srgb_eotf(1.0, lut), 1.0);
        // A table point: exactly the entry.
        assert_eq!(srgb_eotf(512.0 / 1023.0, lut), lut[512]);
        // Half way between two entries.
        let x = 100.5f32 / 1023.0;
        let idx = x * 1023.0;
        let want = lut[100] + (lut[101] - lut[100]) * (idx - 100.0);
        assert_eq!(srgb_eotf(x, lut), want);
        // Close to the exact curve (the fork's table accuracy).
        for k in 1..100 {
            let v = k as f32 / 100.0;
            let exact = if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) };
            assert!((srgb_eotf(v, lut) - exact).abs() < 2e-6, "{v}");
        }
    }

    #[test]
    fn limited_range_white_and_black_are_one_and_zero() {
        let c = YuvToRgb::new(YuvMatrix::Bt709Limited, 8);
        // Neutral chroma is 127.5 here (C_OFF = 0.5 of the 8-bit range), so
        // 128 leaves a trace of red and blue.
        let black = c.nonlinear(16.0, 128.0, 128.0);
        assert!(black[1] == 0.0 && black[0] < 0.004 && black[2] < 0.005, "{black:?}");
        let white = c.nonlinear(235.0, 127.5, 127.5);
        assert!(white.iter().all(|&v| (v - 1.0).abs() < 1e-6), "{white:?}");
        let black = c.nonlinear(16.0, 127.5, 127.5);
        assert!(black.iter().all(|&v| v.abs() < 1e-6), "{black:?}");
        // Full range: 0 and 255 with chroma at 128 (1/510 above neutral) are
        // black and white but for a trace of red and blue.
        let f = YuvToRgb::new(YuvMatrix::Bt601Full, 8);
        let black = f.nonlinear(0.0, 128.0, 128.0);
        assert!(black[1] == 0.0 && black[0] > 0.0 && black[0] < 0.003 && black[2] < 0.004, "{black:?}");
        assert_eq!(f.nonlinear(255.0, 128.0, 128.0)[0], 1.0);
        // Out of gamut clamps.
        assert_eq!(c.nonlinear(0.0, 0.0, 255.0)[1], 0.0);
        // The derived coefficients of the standard inverse (BT.709).
        assert!((c.cr_r - 1.5748).abs() < 1e-6 && (c.cb_b - 1.8556).abs() < 1e-6);
        assert!((c.cb_g + 0.187324).abs() < 1e-5 && (c.cr_g + 0.468124).abs() < 1e-5);
        assert_eq!(YuvToRgb::new(YuvMatrix::Bt709Limited, 10).inv_peak, 1.0 / 1023.0);
    }

    #[test]
    fn chroma_coordinates_follow_read_plane() {
        // Same size, half, and the general rule (odd luma sizes in 4:2:0).
        assert_eq!((0..4).map(|i| chroma_index(i, 4, 4)).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!((0..4).map(|i| chroma_index(i, 2, 4)).collect::<Vec<_>>(), [0, 0, 1, 1]);
        assert_eq!((0..5).map(|i| chroma_index(i, 3, 5)).collect::<Vec<_>>(), [0, 0, 1, 1, 2]);
        assert_eq!(chroma_index(0, 1, 1), 0);
        for w in 1usize..300 {
            let cw = w.div_ceil(2);
            assert!((0..w).all(|x| chroma_index(x, cw, w) == x >> 1), "{w}");
        }
    }

    #[test]
    fn bad_matrices_are_refused() {
        assert_eq!(YuvMatrix::from_option(2).unwrap(), YuvMatrix::Bt709Full);
        assert!(YuvMatrix::from_option(4).is_err());
        assert!(YuvMatrix::from_option(-1).is_err());
    }
}
