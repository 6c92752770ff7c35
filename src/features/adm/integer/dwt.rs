//! The fixed-point db2 wavelet of integer_adm.c: `adm_dwt2_8`/`adm_dwt2_16`
//! (scale 0: samples to 16-bit bands), their low-pass-only twins for
//! `adm_skip_scale0`, and `adm_dwt2_s123_combined` (scales 1-3: 32-bit
//! approximation band to 32-bit bands). For each output row a vertical
//! pass over its four mirrored input rows into rounded temporaries
//! (`tmplo`, `tmphi`), then a horizontal pass over the mirrored columns.
//!
//! Written for the vectoriser: the vertical pass runs along whole rows, and
//! its results are split into even and odd columns so that output j's four
//! taps (columns 2j - 1 .. 2j + 2) are odd[j - 1], even[j], odd[j],
//! even[j + 1]: four plain slices. Only the first and last outputs mirror.
//! Integer arithmetic, so the results are the C's whatever the order.

use super::super::geometry::dwt_mirror;

/// `dwt2_db2_coeffs_lo` and `_hi` (integer_adm.h): db2 in Q15.
pub const LO: [i32; 4] = [15826, 27411, 7345, -4240];
pub const HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// `dwt2_db2_coeffs_lo_sum`: scale 0 centres the samples by subtracting it
/// times half the range (the high-pass sum is 0).
const LO_SUM: i32 = 46342;

/// The four bands of one image at one scale, row-major.
#[derive(Debug, Clone, Default)]
pub struct Bands<T> {
    pub a: Vec<T>,
    pub h: Vec<T>,
    pub v: Vec<T>,
    pub d: Vec<T>,
}

/// Makes `v` at least `n` elements long, keeping what it holds: buffers
/// grow on the first frame and are reused after (every user writes what it
/// later reads, and slices what it uses).
pub fn size<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

impl<T: Copy + Default> Bands<T> {
    pub fn resize(&mut self, n: usize) {
        for b in [&mut self.a, &mut self.h, &mut self.v, &mut self.d] {
            size(b, n);
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

/// Outputs `j` of a row of `w` inputs that read no mirrored column:
/// `1 ..= (w - 3) / 2`.
#[inline(always)]
fn interior(w: usize, bw: usize) -> std::ops::Range<usize> {
    1..if w >= 3 { ((w - 3) / 2 + 1).min(bw) } else { 1 }
}

/// Splits `t` into its even and odd elements.
#[inline(always)]
fn deinterleave<T: Copy>(t: &[T], even: &mut [T], odd: &mut [T]) {
    for (pair, (e, o)) in t.chunks_exact(2).zip(even.iter_mut().zip(odd.iter_mut())) {
        *e = pair[0];
        *o = pair[1];
    }
    if t.len() % 2 == 1 {
        even[t.len() / 2] = t[t.len() - 1];
    }
}

/// Scratch rows kept between calls (`buf->tmp_ref`).
#[derive(Debug, Default)]
pub struct Scratch {
    lo: Vec<i32>,
    hi: Vec<i32>,
    even: [Vec<i32>; 2],
    odd: [Vec<i32>; 2],
    lo64: Vec<i64>,
    hi64: Vec<i64>,
    even64: [Vec<i64>; 2],
    odd64: [Vec<i64>; 2],
}

/// One horizontal pass of scale 0 into an int16 band row: `(Σ f[k] *
/// t[col_k] + 32768) >> 16`, int32 sums (they cannot overflow: |Σ f| *
/// 2^15 < 2^31).
#[inline(always)]
fn horizontal0(t: &[i32], even: &[i32], odd: &[i32], f: &[i32; 4], out: &mut [i16]) {
    let (w, bw) = (t.len(), out.len());
    let edge = |j: usize| {
        let c = taps(j, w);
        let acc = f[0] * t[c[0]] + f[1] * t[c[1]] + f[2] * t[c[2]] + f[3] * t[c[3]];
        ((acc + 32768) >> 16) as i16
    };
    let inner = interior(w, bw);
    out[0] = edge(0);
    let n = inner.len();
    let (o0, e1, o1, e2) = (&odd[..n], &even[1..n + 1], &odd[1..n + 1], &even[2..n + 2]);
    for (((dst, &a), (&b, &c)), &d) in out[1..1 + n].iter_mut().zip(o0).zip(e1.iter().zip(o1)).zip(e2) {
        *dst = ((f[0] * a + f[1] * b + f[2] * c + f[3] * d + 32768) >> 16) as i16;
    }
    for (j, dst) in out.iter_mut().enumerate().take(bw).skip(inner.end.max(1)) {
        *dst = edge(j);
    }
}

/// `adm_dwt2_8` / `adm_dwt2_16` (scale 0): `src` is the `w` x `h` luma,
/// samples of `bpc` bits. With `lo_only` (`adm_dwt2_8_lo`/`_16_lo`, for
/// `adm_skip_scale0`) only the approximation band is written. The vertical
/// pass centres and rounds into int16 (`tmplo`/`tmphi`: the conversion
/// wraps as C's does), the horizontal rounds `>> 16` into the int16 bands.
/// Only output rows `rows` are computed (a caller streams them).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn scale0<S: Copy + Into<i32>>(
    src: &[S],
    w: usize,
    h: usize,
    bpc: u32,
    lo_only: bool,
    rows: std::ops::Range<usize>,
    dst: &mut Bands<i16>,
    s: &mut Scratch,
) {
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    let add = 1i32 << (bpc - 1);
    let centre = LO_SUM.wrapping_mul(add);
    for v in [&mut s.lo, &mut s.hi] {
        size(v, w);
    }
    for v in s.even.iter_mut().chain(s.odd.iter_mut()) {
        size(v, bw + 1);
    }
    for i in rows {
        let r = taps(i, h);
        let (r0, r1, r2, r3) =
            (&src[r[0] * w..][..w], &src[r[1] * w..][..w], &src[r[2] * w..][..w], &src[r[3] * w..][..w]);
        // int32 sums; 16-bit input can wrap mid-sum, and the wrapped total
        // is still right once centred.
        for (((lo, hi), (&a, &b)), (&c, &d)) in
            s.lo.iter_mut().zip(s.hi.iter_mut()).zip(r0.iter().zip(r1)).zip(r2.iter().zip(r3))
        {
            let (a, b, c, d): (i32, i32, i32, i32) = (a.into(), b.into(), c.into(), d.into());
            let l = LO[0].wrapping_mul(a).wrapping_add(LO[1].wrapping_mul(b)).wrapping_add(LO[2].wrapping_mul(c));
            let l = l.wrapping_add(LO[3].wrapping_mul(d)).wrapping_sub(centre);
            *lo = i32::from((l.wrapping_add(add) >> bpc) as i16);
            let hv = HI[0].wrapping_mul(a).wrapping_add(HI[1].wrapping_mul(b)).wrapping_add(HI[2].wrapping_mul(c));
            let hv = hv.wrapping_add(HI[3].wrapping_mul(d));
            *hi = i32::from((hv.wrapping_add(add) >> bpc) as i16);
        }
        let row = i * bw..(i + 1) * bw;
        let [e_lo, e_hi] = &mut s.even;
        let [o_lo, o_hi] = &mut s.odd;
        let (lo, hi) = (&s.lo[..w], &s.hi[..w]);
        deinterleave(lo, e_lo, o_lo);
        horizontal0(lo, e_lo, o_lo, &LO, &mut dst.a[row.clone()]);
        if lo_only {
            continue;
        }
        horizontal0(lo, e_lo, o_lo, &HI, &mut dst.v[row.clone()]);
        deinterleave(hi, e_hi, o_hi);
        horizontal0(hi, e_hi, o_hi, &LO, &mut dst.h[row.clone()]);
        horizontal0(hi, e_hi, o_hi, &HI, &mut dst.d[row]);
    }
}

/// One horizontal pass of scales 1-3: int64 sums rounded by `add` and
/// `shift`, converted to int32.
#[inline(always)]
fn horizontal123(t: &[i64], even: &[i64], odd: &[i64], f: &[i32; 4], add: i64, shift: u32, out: &mut [i32]) {
    let (w, bw) = (t.len(), out.len());
    let f = f.map(i64::from);
    let edge = |j: usize| {
        let c = taps(j, w);
        ((f[0] * t[c[0]] + f[1] * t[c[1]] + f[2] * t[c[2]] + f[3] * t[c[3]] + add) >> shift) as i32
    };
    let inner = interior(w, bw);
    out[0] = edge(0);
    let n = inner.len();
    let (o0, e1, o1, e2) = (&odd[..n], &even[1..n + 1], &odd[1..n + 1], &even[2..n + 2]);
    for (((dst, &a), (&b, &c)), &d) in out[1..1 + n].iter_mut().zip(o0).zip(e1.iter().zip(o1)).zip(e2) {
        *dst = ((f[0] * a + f[1] * b + f[2] * c + f[3] * d + add) >> shift) as i32;
    }
    for (j, dst) in out.iter_mut().enumerate().take(bw).skip(inner.end.max(1)) {
        *dst = edge(j);
    }
}

/// `adm_dwt2_s123_combined` for one image (scales 1-3): `src` is the
/// previous scale's approximation band, `w` x `h`, as int32. Both passes
/// sum in int64 and round by the scale's own shift into int32. Output rows
/// `rows` only.
#[inline(always)]
pub fn scale123(
    src: &[i32],
    w: usize,
    h: usize,
    scale: usize,
    rows: std::ops::Range<usize>,
    dst: &mut Bands<i32>,
    s: &mut Scratch,
) {
    const ADD_VP: [i64; 3] = [0, 32768, 32768];
    const ADD_HP: [i64; 3] = [16384, 32768, 16384];
    const SHIFT_VP: [u32; 3] = [0, 16, 16];
    const SHIFT_HP: [u32; 3] = [15, 16, 15];
    let (add_vp, shift_vp) = (ADD_VP[scale - 1], SHIFT_VP[scale - 1]);
    let (add_hp, shift_hp) = (ADD_HP[scale - 1], SHIFT_HP[scale - 1]);
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    for v in [&mut s.lo64, &mut s.hi64] {
        size(v, w);
    }
    for v in s.even64.iter_mut().chain(s.odd64.iter_mut()) {
        size(v, bw + 1);
    }
    let (lo_f, hi_f) = (LO.map(i64::from), HI.map(i64::from));
    for i in rows {
        let r = taps(i, h);
        let (r0, r1, r2, r3) =
            (&src[r[0] * w..][..w], &src[r[1] * w..][..w], &src[r[2] * w..][..w], &src[r[3] * w..][..w]);
        for (((lo, hi), (&a, &b)), (&c, &d)) in
            s.lo64.iter_mut().zip(s.hi64.iter_mut()).zip(r0.iter().zip(r1)).zip(r2.iter().zip(r3))
        {
            let (a, b, c, d) = (i64::from(a), i64::from(b), i64::from(c), i64::from(d));
            // (int32_t) of each rounded vertical sum.
            *lo = i64::from(((lo_f[0] * a + lo_f[1] * b + lo_f[2] * c + lo_f[3] * d + add_vp) >> shift_vp) as i32);
            *hi = i64::from(((hi_f[0] * a + hi_f[1] * b + hi_f[2] * c + hi_f[3] * d + add_vp) >> shift_vp) as i32);
        }
        let row = i * bw..(i + 1) * bw;
        let [e_lo, e_hi] = &mut s.even64;
        let [o_lo, o_hi] = &mut s.odd64;
        let (lo, hi) = (&s.lo64[..w], &s.hi64[..w]);
        deinterleave(lo, e_lo, o_lo);
        deinterleave(hi, e_hi, o_hi);
        horizontal123(lo, e_lo, o_lo, &LO, add_hp, shift_hp, &mut dst.a[row.clone()]);
        horizontal123(lo, e_lo, o_lo, &HI, add_hp, shift_hp, &mut dst.v[row.clone()]);
        horizontal123(hi, e_hi, o_hi, &LO, add_hp, shift_hp, &mut dst.h[row.clone()]);
        horizontal123(hi, e_hi, o_hi, &HI, add_hp, shift_hp, &mut dst.d[row]);
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
        scale0(&[128u8; 40 * 36], 40, 36, 8, false, 0..18, &mut bands, &mut scratch);
        assert!(bands.a.iter().chain(&bands.h).chain(&bands.v).chain(&bands.d).all(|&v| v == 0));
        scale0(&[255u8; 40 * 36], 40, 36, 8, false, 0..18, &mut bands, &mut scratch);
        assert!(bands.a.iter().all(|&v| v == bands.a[0] && v > 0));
        assert!(bands.h.iter().chain(&bands.v).chain(&bands.d).all(|&v| v == 0));
    }

    /// integer_adm.c's loops, one output at a time, for any width.
    fn scale0_direct(src: &[u16], w: usize, h: usize, bpc: u32) -> [Vec<i16>; 4] {
        let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
        let add = 1i32 << (bpc - 1);
        let mut out: [Vec<i16>; 4] = Default::default();
        for i in 0..bh {
            let r = taps(i, h);
            let v = |f: &[i32; 4], x: usize, centre: i32| -> i32 {
                let acc: i32 =
                    (0..4).fold(0i32, |acc, k| acc.wrapping_add(f[k].wrapping_mul(i32::from(src[r[k] * w + x]))));
                i32::from((acc.wrapping_sub(centre).wrapping_add(add) >> bpc) as i16)
            };
            for j in 0..bw {
                let c = taps(j, w);
                for (b, (fv, fh, centre)) in
                    [(&LO, &LO, LO_SUM * add), (&HI, &LO, 0), (&LO, &HI, LO_SUM * add), (&HI, &HI, 0)]
                        .iter()
                        .enumerate()
                {
                    let acc: i32 = (0..4).map(|k| fh[k] * v(fv, c[k], *centre)).sum();
                    out[b].push(((acc + 32768) >> 16) as i16);
                }
            }
        }
        out
    }

    #[test]
    fn the_split_rows_give_the_direct_loops_results() {
        // Odd and even widths down to the smallest band, 16-bit samples
        // that make the int32 sums wrap.
        for (w, h) in [(37, 9), (36, 10), (5, 5), (6, 7), (9, 6)] {
            let src: Vec<u16> = (0..w * h).map(|k| ((k * 40_503) % 65_536) as u16).collect();
            let mut bands = Bands::default();
            scale0(&src, w, h, 16, false, 0..h.div_ceil(2), &mut bands, &mut Scratch::default());
            let [a, hh, v, d] = scale0_direct(&src, w, h, 16);
            assert_eq!((bands.a, bands.v, bands.h, bands.d), (a, v, hh, d), "{w}x{h}");
        }
    }
}
