//! The fixed-point db2 wavelet of integer_adm.c: `adm_dwt2_8`/`adm_dwt2_16`
//! (scale 0: samples to 16-bit bands), their low-pass-only twins for
//! `adm_skip_scale0`, and `adm_dwt2_s123_combined` (scales 1-3: 32-bit
//! approximation band to 32-bit bands). A vertical pass over the four
//! mirrored input rows of each output row into 16- or 32-bit temporaries,
//! rounded and shifted, then a horizontal pass over the mirrored columns.

use super::super::geometry::dwt_mirror;

/// `dwt2_db2_coeffs_lo` and `_hi` (integer_adm.h): db2 in Q15.
pub const LO: [i32; 4] = [15826, 27411, 7345, -4240];
pub const HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// `dwt2_db2_coeffs_lo_sum`: scale 0 centres the samples by subtracting it
/// times half the range (the high-pass sum is 0).
const LO_SUM: i32 = 46342;

/// The four bands of one image at one scale, row-major, `w` wide.
#[derive(Debug, Clone, Default)]
pub struct Bands<T> {
    pub a: Vec<T>,
    pub h: Vec<T>,
    pub v: Vec<T>,
    pub d: Vec<T>,
}

impl<T: Copy + Default> Bands<T> {
    pub fn resize(&mut self, n: usize) {
        for b in [&mut self.a, &mut self.h, &mut self.v, &mut self.d] {
            b.clear();
            b.resize(n, T::default());
        }
    }
}

/// The four input rows (or columns) output index `i` of a wavelet over `n`
/// samples reads: `2i - 1 .. 2i + 2`, mirrored.
#[inline(always)]
pub fn taps(i: usize, n: usize) -> [usize; 4] {
    let b = 2 * i as isize - 1;
    [dwt_mirror(b, n), dwt_mirror(b + 1, n), dwt_mirror(b + 2, n), dwt_mirror(b + 3, n)]
}

/// The horizontal pass of one output row: `out[j] = (Σ f[k] * t[col_k(j)] +
/// round) >> shift` for `j < bw`. The interior reads columns `2j - 1 ..
/// 2j + 2` straight; the first and last outputs mirror.
#[inline(always)]
fn horizontal<T: Copy + Into<i64>>(t: &[T], f: &[i32; 4], round: i64, shift: u32, out: &mut [i64]) {
    let w = t.len();
    let bw = out.len();
    let tap = |j: usize| -> i64 {
        let c = taps(j, w);
        let mut acc = 0i64;
        for k in 0..4 {
            acc += i64::from(f[k]) * t[c[k]].into();
        }
        (acc + round) >> shift
    };
    // Interior: 2j + 2 <= w - 1.
    let end = if w >= 3 { ((w - 3) / 2 + 1).min(bw) } else { 1 };
    if bw > 0 {
        out[0] = tap(0);
    }
    for j in 1..end {
        let s = &t[2 * j - 1..2 * j + 3];
        let acc = i64::from(f[0]) * s[0].into()
            + i64::from(f[1]) * s[1].into()
            + i64::from(f[2]) * s[2].into()
            + i64::from(f[3]) * s[3].into();
        out[j] = (acc + round) >> shift;
    }
    for j in end.max(1)..bw {
        out[j] = tap(j);
    }
}

/// Scratch rows the wavelet keeps between calls (`buf->tmp_ref`).
#[derive(Debug, Default)]
pub struct Scratch {
    lo: Vec<i32>,
    hi: Vec<i32>,
    lo16: Vec<i16>,
    hi16: Vec<i16>,
    out: Vec<i64>,
}

/// `adm_dwt2_8` / `adm_dwt2_16` (scale 0): `src` is the `w` x `h` luma,
/// samples of `bpc` bits. With `lo_only` (`adm_dwt2_8_lo`/`_16_lo`, for
/// `adm_skip_scale0`) only the approximation band is written. The vertical
/// pass centres and rounds into int16 (`tmplo`/`tmphi`), the horizontal
/// rounds `>> 16` into the int16 bands; the conversions wrap as C's do.
pub fn scale0<S: Copy + Into<i32>>(
    src: &[S],
    w: usize,
    h: usize,
    bpc: u32,
    lo_only: bool,
    dst: &mut Bands<i16>,
    scratch: &mut Scratch,
) {
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    let shift_vp = bpc;
    let add_vp = 1i32 << (bpc - 1);
    let centre_lo = LO_SUM.wrapping_mul(add_vp);
    scratch.lo16.resize(w, 0);
    scratch.hi16.resize(w, 0);
    scratch.out.resize(bw, 0);
    for i in 0..bh {
        let r = taps(i, h);
        let rows = r.map(|y| &src[y * w..(y + 1) * w]);
        {
            let (lo, hi) = (&mut scratch.lo16[..w], &mut scratch.hi16[..w]);
            for j in 0..w {
                let s = [rows[0][j].into(), rows[1][j].into(), rows[2][j].into(), rows[3][j].into()];
                // int32 accumulation; 16-bit input can wrap mid-sum, and the
                // wrapped total is still right once centred.
                let mut acc = 0i32;
                for k in 0..4 {
                    acc = acc.wrapping_add(LO[k].wrapping_mul(s[k]));
                }
                acc = acc.wrapping_sub(centre_lo);
                lo[j] = (acc.wrapping_add(add_vp) >> shift_vp) as i16;
                if !lo_only {
                    let mut acc = 0i32;
                    for k in 0..4 {
                        acc = acc.wrapping_add(HI[k].wrapping_mul(s[k]));
                    }
                    hi[j] = (acc.wrapping_add(add_vp) >> shift_vp) as i16;
                }
            }
        }
        let row = i * bw..(i + 1) * bw;
        let out = &mut scratch.out[..bw];
        horizontal(&scratch.lo16[..w], &LO, 32768, 16, out);
        for (d, &v) in dst.a[row.clone()].iter_mut().zip(out.iter()) {
            *d = v as i32 as i16;
        }
        if lo_only {
            continue;
        }
        for (band, src_row, f) in
            [(&mut dst.v, &scratch.lo16, &HI), (&mut dst.h, &scratch.hi16, &LO), (&mut dst.d, &scratch.hi16, &HI)]
        {
            horizontal(&src_row[..w], f, 32768, 16, out);
            for (d, &v) in band[row.clone()].iter_mut().zip(out.iter()) {
                *d = v as i32 as i16;
            }
        }
    }
}

/// `adm_dwt2_s123_combined` for one image (scales 1-3): `src` is the
/// previous scale's approximation band, `w` x `h`, as int32. The vertical
/// pass rounds int64 sums into int32, the horizontal pass likewise, each by
/// the scale's own shift.
pub fn scale123(src: &[i32], w: usize, h: usize, scale: usize, dst: &mut Bands<i32>, scratch: &mut Scratch) {
    const ADD_VP: [i64; 3] = [0, 32768, 32768];
    const ADD_HP: [i64; 3] = [16384, 32768, 16384];
    const SHIFT_VP: [u32; 3] = [0, 16, 16];
    const SHIFT_HP: [u32; 3] = [15, 16, 15];
    let (add_vp, shift_vp) = (ADD_VP[scale - 1], SHIFT_VP[scale - 1]);
    let (add_hp, shift_hp) = (ADD_HP[scale - 1], SHIFT_HP[scale - 1]);
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    scratch.lo.resize(w, 0);
    scratch.hi.resize(w, 0);
    scratch.out.resize(bw, 0);
    for i in 0..bh {
        let r = taps(i, h);
        let rows = r.map(|y| &src[y * w..(y + 1) * w]);
        for j in 0..w {
            let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]].map(i64::from);
            let (mut lo, mut hi) = (0i64, 0i64);
            for k in 0..4 {
                lo += i64::from(LO[k]) * s[k];
                hi += i64::from(HI[k]) * s[k];
            }
            scratch.lo[j] = ((lo + add_vp) >> shift_vp) as i32;
            scratch.hi[j] = ((hi + add_vp) >> shift_vp) as i32;
        }
        let row = i * bw..(i + 1) * bw;
        let out = &mut scratch.out[..bw];
        for (band, src_row, f) in [
            (&mut dst.a, &scratch.lo, &LO),
            (&mut dst.v, &scratch.lo, &HI),
            (&mut dst.h, &scratch.hi, &LO),
            (&mut dst.d, &scratch.hi, &HI),
        ] {
            horizontal(&src_row[..w], f, add_hp, shift_hp, out);
            for (d, &v) in band[row.clone()].iter_mut().zip(out.iter()) {
                *d = v as i32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_mirror_at_both_ends() {
        assert_eq!(taps(0, 9), [1, 0, 1, 2]);
        assert_eq!(taps(4, 9), [7, 8, 8, 7]);
        assert_eq!(taps(3, 8), [5, 6, 7, 7]);
    }

    #[test]
    fn a_flat_picture_has_only_an_approximation() {
        // 8-bit 128 everywhere: centred to 0, so every band is 0; 255 gives
        // a positive approximation and no detail.
        let mut scratch = Scratch::default();
        let mut bands = Bands::default();
        scale0(&[128u8; 40 * 36], 40, 36, 8, false, &mut bands, &mut scratch);
        assert!(bands.a.iter().chain(&bands.h).chain(&bands.v).chain(&bands.d).all(|&v| v == 0));
        scale0(&[255u8; 40 * 36], 40, 36, 8, false, &mut bands, &mut scratch);
        assert!(bands.a.iter().all(|&v| v == bands.a[0] && v > 0));
        assert!(bands.h.iter().chain(&bands.v).chain(&bands.d).all(|&v| v == 0));
    }

    #[test]
    fn the_horizontal_pass_matches_the_mirrored_formula() {
        let t: Vec<i32> = (0..11).map(|k| (k * 37 % 23) - 11).collect();
        let mut out = vec![0i64; 6];
        horizontal(&t, &HI, 16384, 15, &mut out);
        for (j, &o) in out.iter().enumerate() {
            let c = taps(j, 11);
            let acc: i64 = (0..4).map(|k| i64::from(HI[k]) * i64::from(t[c[k]])).sum();
            assert_eq!(o, (acc + 16384) >> 15, "{j}");
        }
    }
}
