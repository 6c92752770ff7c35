//! The db2 wavelet of adm_tools.c (`adm_dwt2_s`, `adm_dwt2_lo_s`): for
//! each output row, a vertical pass over its four mirrored input rows into
//! `tmplo`/`tmphi`, then a horizontal pass over the mirrored columns. Each
//! sum starts at 0 and adds its four products in order, in f32, as the C
//! does (no fused multiply-add: x86-64's baseline has none). The loops run
//! along rows with each pixel's own operations in order, so they vectorise
//! and give the same bits; the vertical results are split into even and odd
//! columns so that output j's taps are odd[j - 1], even[j], odd[j],
//! even[j + 1].

use super::super::geometry::dwt_mirror;

/// `dwt2_db2_coeffs_lo_s` and `_hi_s`: db2, rounded to f32. (libvmaf's
/// literals, kept as written.)
#[allow(clippy::excessive_precision)]
pub const LO: [f32; 4] = [0.482962913144690, 0.836516303737469, 0.224143868041857, -0.129409522550921];
#[allow(clippy::excessive_precision)]
pub const HI: [f32; 4] = [-0.129409522550921, -0.224143868041857, 0.836516303737469, -0.482962913144690];

/// The four bands of one image at one scale, row-major.
#[derive(Debug, Clone, Default)]
pub struct Bands {
    pub a: Vec<f32>,
    pub h: Vec<f32>,
    pub v: Vec<f32>,
    pub d: Vec<f32>,
}

/// Makes `v` at least `n` long (buffers grow once and are reused).
pub fn size(v: &mut Vec<f32>, n: usize) {
    if v.len() < n {
        v.resize(n, 0.0);
    }
}

impl Bands {
    pub fn resize(&mut self, n: usize) {
        for b in [&mut self.a, &mut self.h, &mut self.v, &mut self.d] {
            size(b, n);
        }
    }
}

/// `accum = 0; accum += f[0] * s[0]; ...` in f32.
#[inline(always)]
pub fn filter(f: &[f32; 4], s: [f32; 4]) -> f32 {
    let mut acc = 0.0f32;
    acc += f[0] * s[0];
    acc += f[1] * s[1];
    acc += f[2] * s[2];
    acc += f[3] * s[3];
    acc
}

/// The mirrored taps of output `i` over `n` inputs: `2i - 1 .. 2i + 2`.
#[inline(always)]
fn taps(i: usize, n: usize) -> [usize; 4] {
    let b = 2 * i as isize - 1;
    [dwt_mirror(b, n), dwt_mirror(b + 1, n), dwt_mirror(b + 2, n), dwt_mirror(b + 3, n)]
}

/// The horizontal pass of one row into `out` (`bw` outputs), from the row
/// `t` and its even and odd columns.
#[inline(always)]
fn horizontal(t: &[f32], even: &[f32], odd: &[f32], f: &[f32; 4], out: &mut [f32]) {
    let (w, bw) = (t.len(), out.len());
    let edge = |j: usize| {
        let c = taps(j, w);
        filter(f, [t[c[0]], t[c[1]], t[c[2]], t[c[3]]])
    };
    // Interior outputs read 2j - 1 ..= 2j + 2 < w without mirroring.
    let end = if w >= 3 { ((w - 3) / 2 + 1).min(bw) } else { 1 };
    out[0] = edge(0);
    let n = end.saturating_sub(1);
    let (o0, e1, o1, e2) = (&odd[..n], &even[1..n + 1], &odd[1..n + 1], &even[2..n + 2]);
    for (((dst, &a), (&b, &c)), &d) in out[1..1 + n].iter_mut().zip(o0).zip(e1.iter().zip(o1)).zip(e2) {
        *dst = filter(f, [a, b, c, d]);
    }
    for (j, dst) in out.iter_mut().enumerate().take(bw).skip(end.max(1)) {
        *dst = edge(j);
    }
}

/// Splits `t` into its even and odd elements.
#[inline(always)]
fn deinterleave(t: &[f32], even: &mut [f32], odd: &mut [f32]) {
    for (pair, (e, o)) in t.chunks_exact(2).zip(even.iter_mut().zip(odd.iter_mut())) {
        *e = pair[0];
        *o = pair[1];
    }
    if t.len() % 2 == 1 {
        even[t.len() / 2] = t[t.len() - 1];
    }
}

#[derive(Debug, Default)]
pub struct Scratch {
    lo: Vec<f32>,
    hi: Vec<f32>,
    even: [Vec<f32>; 2],
    odd: [Vec<f32>; 2],
}

/// `adm_dwt2_s` (or `adm_dwt2_lo_s` with `lo_only`) of the `w` x `h` plane
/// `src`, output rows `rows` into `dst` (sized for the whole scale).
#[inline(always)]
pub fn dwt(
    src: &[f32],
    w: usize,
    h: usize,
    lo_only: bool,
    rows: std::ops::Range<usize>,
    dst: &mut Bands,
    s: &mut Scratch,
) {
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    size(&mut s.lo, w);
    size(&mut s.hi, w);
    for v in s.even.iter_mut().chain(s.odd.iter_mut()) {
        size(v, bw + 1);
    }
    for i in rows {
        let r = taps(i, h);
        let (r0, r1, r2, r3) =
            (&src[r[0] * w..][..w], &src[r[1] * w..][..w], &src[r[2] * w..][..w], &src[r[3] * w..][..w]);
        for (((lo, hi), (&a, &b)), (&c, &d)) in
            s.lo.iter_mut().zip(s.hi.iter_mut()).zip(r0.iter().zip(r1)).zip(r2.iter().zip(r3))
        {
            *lo = filter(&LO, [a, b, c, d]);
            *hi = filter(&HI, [a, b, c, d]);
        }
        let row = i * bw..(i + 1) * bw;
        let (lo, hi) = (&s.lo[..w], &s.hi[..w]);
        let [e_lo, e_hi] = &mut s.even;
        let [o_lo, o_hi] = &mut s.odd;
        deinterleave(lo, e_lo, o_lo);
        horizontal(lo, e_lo, o_lo, &LO, &mut dst.a[row.clone()]);
        if !lo_only {
            horizontal(lo, e_lo, o_lo, &HI, &mut dst.v[row.clone()]);
            deinterleave(hi, e_hi, o_hi);
            horizontal(hi, e_hi, o_hi, &LO, &mut dst.h[row.clone()]);
            horizontal(hi, e_hi, o_hi, &HI, &mut dst.d[row]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_rows_give_the_direct_loops_bits() {
        for (w, h) in [(37, 9), (36, 10), (3, 3), (2, 2), (9, 6)] {
            let src: Vec<f32> = (0..w * h).map(|k| ((k * 7919 % 1021) as f32) / 4.0 - 128.0).collect();
            let mut bands = Bands::default();
            dwt(&src, w, h, false, 0..h.div_ceil(2), &mut bands, &mut Scratch::default());
            let bw = w.div_ceil(2);
            for i in 0..h.div_ceil(2) {
                let r = taps(i, h);
                let vert = |f: &[f32; 4], x: usize| filter(f, r.map(|y| src[y * w + x]));
                for j in 0..bw {
                    let c = taps(j, w);
                    for (band, fv, fh) in
                        [(&bands.a, &LO, &LO), (&bands.v, &LO, &HI), (&bands.h, &HI, &LO), (&bands.d, &HI, &HI)]
                    {
                        let want = filter(fh, c.map(|x| vert(fv, x)));
                        assert_eq!(band[i * bw + j].to_bits(), want.to_bits(), "{w}x{h} ({i}, {j})");
                    }
                }
            }
        }
    }
}
