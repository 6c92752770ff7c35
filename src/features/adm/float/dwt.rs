//! The db2 wavelet of adm_tools.c (`adm_dwt2_s`, `adm_dwt2_lo_s`): for
//! each output row, a vertical pass over its four mirrored input rows into
//! `tmplo`/`tmphi`, then a horizontal pass over the mirrored columns. Each
//! sum starts at 0 and adds its four products in order, in f32, as the C
//! does (no fused multiply-add: x86-64's baseline has none).

use super::super::geometry::dwt_mirror;

/// `dwt2_db2_coeffs_lo_s` and `_hi_s`: db2, rounded to f32.
pub const LO: [f32; 4] = [0.482962913144690, 0.836516303737469, 0.224143868041857, -0.129409522550921];
pub const HI: [f32; 4] = [-0.129409522550921, -0.224143868041857, 0.836516303737469, -0.482962913144690];

/// The four bands of one image at one scale, row-major.
#[derive(Debug, Clone, Default)]
pub struct Bands {
    pub a: Vec<f32>,
    pub h: Vec<f32>,
    pub v: Vec<f32>,
    pub d: Vec<f32>,
}

impl Bands {
    pub fn resize(&mut self, n: usize) {
        for b in [&mut self.a, &mut self.h, &mut self.v, &mut self.d] {
            b.clear();
            b.resize(n, 0.0);
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

/// The horizontal pass of one row into `out` (`bw` outputs).
#[inline(always)]
fn horizontal(t: &[f32], f: &[f32; 4], out: &mut [f32]) {
    let w = t.len();
    let bw = out.len();
    // Interior outputs read 2j - 1 ..= 2j + 2 < w without mirroring.
    let end = if w >= 3 { ((w - 3) / 2 + 1).min(bw) } else { 1 };
    for (j, o) in out.iter_mut().enumerate() {
        if j == 0 || j >= end {
            let c = taps(j, w);
            *o = filter(f, [t[c[0]], t[c[1]], t[c[2]], t[c[3]]]);
        }
    }
    for j in 1..end {
        let s = &t[2 * j - 1..2 * j + 3];
        out[j] = filter(f, [s[0], s[1], s[2], s[3]]);
    }
}

#[derive(Debug, Default)]
pub struct Scratch {
    lo: Vec<f32>,
    hi: Vec<f32>,
}

/// `adm_dwt2_s` (or `adm_dwt2_lo_s` with `lo_only`) of the `w` x `h` plane
/// `src` into `dst`.
pub fn dwt(src: &[f32], w: usize, h: usize, lo_only: bool, dst: &mut Bands, scratch: &mut Scratch) {
    let (bw, bh) = (w.div_ceil(2), h.div_ceil(2));
    dst.resize(bw * bh);
    scratch.lo.resize(w, 0.0);
    scratch.hi.resize(w, 0.0);
    for i in 0..bh {
        let r = taps(i, h);
        let rows = r.map(|y| &src[y * w..(y + 1) * w]);
        for j in 0..w {
            let s = [rows[0][j], rows[1][j], rows[2][j], rows[3][j]];
            scratch.lo[j] = filter(&LO, s);
            if !lo_only {
                scratch.hi[j] = filter(&HI, s);
            }
        }
        let row = i * bw..(i + 1) * bw;
        horizontal(&scratch.lo, &LO, &mut dst.a[row.clone()]);
        if !lo_only {
            horizontal(&scratch.lo, &HI, &mut dst.v[row.clone()]);
            horizontal(&scratch.hi, &LO, &mut dst.h[row.clone()]);
            horizontal(&scratch.hi, &HI, &mut dst.d[row]);
        }
    }
}
