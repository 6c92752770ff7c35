//! iqa/ssim_tools.c `_iqa_ssim` with its default arguments (what both
//! float_ssim and float_ms_ssim call), CPU side: the Gaussian-filtered
//! means, variances and covariance of two pictures, each pixel's luminance,
//! contrast and structure terms, and their sums over the map.

use super::filter::{gaussian_column5_fast, gaussian_row5_fast, simd_available};
use super::tables::{GAUSSIAN, WINDOW, constants};

/// Which sums a caller needs: float_ssim the SSIM sum (and l, c, s with
/// `enable_lcs`), float_ms_ssim l, c and s only (it never reads the SSIM).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    pub ssim: bool,
    pub lcs: bool,
}

/// `_iqa_ssim`'s sums over the map, each added in f64 in raster order as
/// its loop adds them (`ssim_sum += l * c * s; l_sum += l; ...`), and the
/// map's pixel count as C computes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    pub ssim: f64,
    pub l: f64,
    pub c: f64,
    pub s: f64,
    /// `w * h` of the map (C `int`s `w - 10` and `h - 10`): negative or
    /// zero when the picture is narrower or lower than the window.
    pub pixels: i64,
}

/// The map's size for a `w x h` picture: `_iqa_convolve` keeps only the
/// positions where the 11 x 11 window fits, `w - 10` by `h - 10` (C ints:
/// below 11 they go to zero or negative, and the loops do nothing).
pub fn map_dims(w: usize, h: usize) -> (i64, i64) {
    (w as i64 - (WINDOW as i64 - 1), h as i64 - (WINDOW as i64 - 1))
}

/// `(float)(sum / (double)(w * h))`, how `_iqa_ssim` turns each sum into
/// its mean: an f32. With no map (a picture smaller than the window) the
/// sum is 0 and this is 0, -0 or NaN as C's division makes it.
pub fn mean(sum: f64, pixels: i64) -> f32 {
    (sum / pixels as f64) as f32
}

/// One pixel of `_iqa_ssim`'s default path from the five filtered values
/// (means `mu1`, `mu2`; filtered squares `xx`, `yy` and product `xy`),
/// operation for operation: the variances in f32 (`xx - mu1 * mu1`, then
/// `MAX(0.0, .)`), the covariance `xy - mu1 * mu2`, `sigma_ref_sigma_cmp =
/// sqrt(s11 * s22)` rounded to f32, then in f64
/// `l = (2.0 * mu1 * mu2 + C1) / (mu1*mu1 + mu2*mu2 + C1)` (denominator in
/// f32), `c = (2.0 * srsc + C2) / (s11 + s22 + C2)` (denominator in f32),
/// and in f32 `s = (clamped + C3) / (srsc + C3)`, where `clamped` is 0 when
/// the covariance is negative and `srsc <= 0` (zli-nflx's flat-region fix).
/// Returns `(l, c, s)`.
#[inline(always)]
pub fn pixel_terms(mu1: f32, mu2: f32, xx: f32, yy: f32, xy: f32, (c1, c2, c3): (f32, f32, f32)) -> (f64, f64, f64) {
    let s11 = xx - mu1 * mu1;
    let s22 = yy - mu2 * mu2;
    // MAX(0.0, v): C compares in double, `0.0 > v ? 0.0 : v` (NaN and -0
    // stay as they are).
    let s11 = if 0.0 > s11 { 0.0 } else { s11 };
    let s22 = if 0.0 > s22 { 0.0 } else { s22 };
    let s12 = xy - mu1 * mu2;
    // (float)sqrt((double)p) is the correctly rounded f32 square root.
    let srsc = (s11 * s22).sqrt();
    let l = (2.0 * f64::from(mu1) * f64::from(mu2) + f64::from(c1)) / f64::from(mu1 * mu1 + mu2 * mu2 + c1);
    let c = (2.0 * f64::from(srsc) + f64::from(c2)) / f64::from(s11 + s22 + c2);
    let clamped = if s12 < 0.0 && srsc <= 0.0 { 0.0 } else { s12 };
    let s = f64::from((clamped + c3) / (srsc + c3));
    (l, c, s)
}

/// The five pictures `_iqa_ssim` filters: reference, distorted, their
/// squares and their product (the last three in f32, as it stores them).
const PLANES: usize = 5;

/// `_iqa_ssim`'s working memory, kept from frame to frame.
#[derive(Default)]
pub struct SsimScratch {
    /// The horizontal pass of the last 11 rows of each of the 5 pictures.
    ring: Vec<f32>,
    /// One map row of each filtered picture.
    filtered: Vec<f32>,
    /// One map row of terms: l, c, s and l * c * s.
    terms: Vec<f64>,
}

/// `_iqa_ssim(ref, cmp, w, h, gaussian window, NULL, NULL, ...)`: the sums
/// `want` asks for over the `(w - 10) x (h - 10)` map.
///
/// libvmaf filters each of the five pictures whole, first along rows
/// (`_iqa_convolve`'s horizontal pass over every row), then along columns.
/// Here the horizontal pass runs one picture row at a time into a ring of
/// the last 11 rows, and each map row is filtered vertically, turned into
/// terms and added as soon as its 11 rows are there: every value is the
/// same operation on the same inputs, the map rows are added in raster
/// order as C adds them, and the working set stays in cache. On x86_64 with
/// AVX2 the filters and terms run 8 pixels at a time (`simd.rs`).
pub fn iqa_ssim(
    reference: &[f32],
    distorted: &[f32],
    w: usize,
    h: usize,
    want: Want,
    scratch: &mut SsimScratch,
) -> Sums {
    iqa_ssim_with(reference, distorted, w, h, want, scratch, simd_available())
}

fn iqa_ssim_with(
    reference: &[f32],
    distorted: &[f32],
    w: usize,
    h: usize,
    want: Want,
    scratch: &mut SsimScratch,
    simd: bool,
) -> Sums {
    let (mw, mh) = map_dims(w, h);
    let mut sums = Sums { pixels: mw * mh, ..Sums::default() };
    if mw <= 0 || mh <= 0 {
        return sums;
    }
    let dw = mw as usize;
    let consts = constants();
    let SsimScratch { ring, filtered, terms } = scratch;
    ring.resize(PLANES * WINDOW * dw, 0.0);
    filtered.resize(PLANES * dw, 0.0);
    terms.resize(4 * dw, 0.0);
    for y in 0..h {
        let (r, d) = (&reference[y * w..(y + 1) * w], &distorted[y * w..(y + 1) * w]);
        let slot = y % WINDOW;
        let mut planes = ring.chunks_exact_mut(WINDOW * dw).map(|p| &mut p[slot * dw..(slot + 1) * dw]);
        let out: [&mut [f32]; PLANES] = std::array::from_fn(|_| planes.next().expect("5 planes"));
        gaussian_row5_fast(r, d, &GAUSSIAN, out, simd);
        if y + 1 < WINDOW {
            continue;
        }
        // Map row y - 10 from horizontal rows y - 10 ..= y.
        let top = y + 1 - WINDOW;
        let rows: [[&[f32]; WINDOW]; PLANES] = std::array::from_fn(|p| {
            std::array::from_fn(|t| {
                let at = (p * WINDOW + (top + t) % WINDOW) * dw;
                &ring[at..at + dw]
            })
        });
        let mut outs = filtered.chunks_exact_mut(dw);
        let out: [&mut [f32]; PLANES] = std::array::from_fn(|_| outs.next().expect("5 planes"));
        gaussian_column5_fast(&rows, &GAUSSIAN, out, simd);
        let mut rows = filtered.chunks_exact(dw);
        let filtered: [&[f32]; PLANES] = std::array::from_fn(|_| rows.next().expect("5 planes"));
        let (l, rest) = terms.split_at_mut(dw);
        let (c, rest) = rest.split_at_mut(dw);
        let (s, lcs) = rest.split_at_mut(dw);
        terms_row(filtered, consts, l, c, s, lcs, simd);
        add_row(&mut sums, l, c, s, lcs, want);
    }
    sums
}

/// [`pixel_terms`] over one map row: `l`, `c`, `s` and `lcs = l * c * s`
/// (`_iqa_ssim`'s `l * c * s`, left to right) of every pixel.
fn terms_row(
    filtered: [&[f32]; PLANES],
    (c1, c2, c3): (f32, f32, f32),
    l: &mut [f64],
    c: &mut [f64],
    s: &mut [f64],
    lcs: &mut [f64],
    simd: bool,
) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: the caller checked simd_available().
        done = unsafe { super::simd::terms(filtered, (c1, c2, c3), l, c, s, Some(lcs)) };
    }
    let _ = simd;
    let [mu1, mu2, xx, yy, xy] = filtered;
    for x in done..l.len() {
        (l[x], c[x], s[x]) = pixel_terms(mu1[x], mu2[x], xx[x], yy[x], xy[x], (c1, c2, c3));
        lcs[x] = l[x] * c[x] * s[x];
    }
}

/// Adds one map row's terms to the sums, pixel after pixel (the sums are
/// sequential chains of f64 adds, as in C; only what `want` asks for).
#[inline(always)]
fn add_row(sums: &mut Sums, l: &[f64], c: &[f64], s: &[f64], lcs: &[f64], want: Want) {
    let n = l.len();
    let (c, s, lcs) = (&c[..n], &s[..n], &lcs[..n]);
    match (want.ssim, want.lcs) {
        (true, false) => {
            let mut acc = sums.ssim;
            for &v in lcs {
                acc += v;
            }
            sums.ssim = acc;
        }
        (true, true) => {
            let (mut a, mut bl, mut bc, mut bs) = (sums.ssim, sums.l, sums.c, sums.s);
            for x in 0..n {
                a += lcs[x];
                bl += l[x];
                bc += c[x];
                bs += s[x];
            }
            (sums.ssim, sums.l, sums.c, sums.s) = (a, bl, bc, bs);
        }
        (false, true) => {
            let (mut bl, mut bc, mut bs) = (sums.l, sums.c, sums.s);
            for x in 0..n {
                bl += l[x];
                bc += c[x];
                bs += s[x];
            }
            (sums.l, sums.c, sums.s) = (bl, bc, bs);
        }
        (false, false) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `_iqa_ssim` as written in C: whole-picture convolutions (horizontal
    /// pass into a cache, then vertical), then the map loop. The oracle for
    /// the row-streaming [`iqa_ssim`].
    fn iqa_ssim_whole(r: &[f32], d: &[f32], w: usize, h: usize) -> Sums {
        let (mw, mh) = map_dims(w, h);
        let mut sums = Sums { pixels: mw * mh, ..Sums::default() };
        if mw <= 0 || mh <= 0 {
            return sums;
        }
        let (dw, dh) = (mw as usize, mh as usize);
        let convolve = |img: &[f32]| -> Vec<f32> {
            let mut cache = vec![0f32; w * h];
            for y in 0..h {
                for x in 0..dw {
                    let mut sum = 0f64;
                    for t in 0..WINDOW {
                        sum += f64::from(img[y * w + x + t] * GAUSSIAN[t]);
                    }
                    cache[y * w + x + 5] = sum as f32;
                }
            }
            let mut dst = vec![0f32; dw * dh];
            for x in 0..dw {
                for y in 0..dh {
                    let mut sum = 0f64;
                    for t in 0..WINDOW {
                        sum += f64::from(cache[(y + t) * w + x + 5] * GAUSSIAN[t]);
                    }
                    dst[y * dw + x] = sum as f32;
                }
            }
            dst
        };
        let sq = |a: &[f32], b: &[f32]| -> Vec<f32> { a.iter().zip(b).map(|(x, y)| x * y).collect() };
        let (mu1, mu2) = (convolve(r), convolve(d));
        let (xx, yy, xy) = (convolve(&sq(r, r)), convolve(&sq(d, d)), convolve(&sq(r, d)));
        let consts = constants();
        for i in 0..dw * dh {
            let (l, c, s) = pixel_terms(mu1[i], mu2[i], xx[i], yy[i], xy[i], consts);
            sums.ssim += l * c * s;
            sums.l += l;
            sums.c += c;
            sums.s += s;
        }
        sums
    }

    fn picture(w: usize, h: usize, seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..w * h)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 256) as f32
            })
            .collect()
    }

    #[test]
    fn streaming_rows_equal_whole_picture_convolutions() {
        for (w, h) in [(11, 11), (12, 30), (37, 23), (64, 17)] {
            let r = picture(w, h, 1);
            let d: Vec<f32> = r.iter().zip(picture(w, h, 2)).map(|(a, b)| (a * 0.75 + b * 0.25).floor()).collect();
            let want = iqa_ssim_whole(&r, &d, w, h);
            let mut scratch = SsimScratch::default();
            for simd in [false, simd_available()] {
                let all = iqa_ssim_with(&r, &d, w, h, Want { ssim: true, lcs: true }, &mut scratch, simd);
                assert_eq!(all, want, "{w}x{h}, simd {simd}");
            }
            let ssim = iqa_ssim(&r, &d, w, h, Want { ssim: true, lcs: false }, &mut scratch);
            assert_eq!((ssim.ssim, ssim.l), (want.ssim, 0.0));
            let lcs = iqa_ssim(&r, &d, w, h, Want { ssim: false, lcs: true }, &mut scratch);
            assert_eq!((lcs.ssim, lcs.l, lcs.c, lcs.s), (0.0, want.l, want.c, want.s));
        }
    }

    #[test]
    fn avx2_terms_equal_the_portable_terms_on_awkward_values() {
        // Negative variances (clamped), negative covariances with and
        // without zero deviation, zeros, NaN, large and tiny values.
        let vals = [0.0f32, -0.0, 1.0, 255.0, 65025.0, -3.5, 1e-30, 7.25, f32::NAN, 128.5, 0.001, 16000.0];
        let n = 8 * 37;
        let pick =
            |seed: usize| -> Vec<f32> { (0..n).map(|i| vals[(i * 7 + seed * 5 + i / 13) % vals.len()]).collect() };
        let filtered: Vec<Vec<f32>> = (0..5).map(pick).collect();
        let rows: [&[f32]; PLANES] = std::array::from_fn(|p| &filtered[p][..]);
        let mut out = [vec![0f64; 4 * n], vec![0f64; 4 * n]];
        for (simd, o) in [false, simd_available()].into_iter().zip(out.iter_mut()) {
            let (l, rest) = o.split_at_mut(n);
            let (c, rest) = rest.split_at_mut(n);
            let (s, lcs) = rest.split_at_mut(n);
            terms_row(rows, constants(), l, c, s, lcs, simd);
        }
        for (i, (a, b)) in out[0].iter().zip(&out[1]).enumerate() {
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "term {i}: {a} vs {b}");
        }
    }

    #[test]
    fn identical_pictures_score_one() {
        let r = picture(40, 30, 7);
        let sums = iqa_ssim(&r, &r, 40, 30, Want { ssim: true, lcs: true }, &mut SsimScratch::default());
        assert_eq!(sums.pixels, 30 * 20);
        for v in [sums.ssim, sums.l, sums.c, sums.s] {
            assert_eq!(mean(v, sums.pixels), 1.0);
        }
    }

    #[test]
    fn flat_identical_regions_are_one_despite_negative_covariance() {
        // zli-nflx's fix: sigma_both < 0 with sigma_ref_sigma_cmp == 0 is 0.
        let (l, c, s) = pixel_terms(0.0, 0.0, 0.0, 0.0, -0.001, constants());
        assert_eq!((l, c, s), (1.0, 1.0, 1.0));
    }

    #[test]
    fn pictures_below_the_window_have_no_map() {
        // C: 0 / (w * h) with w, h = dims - 10: 0 for both negative, -0
        // for one negative, NaN for a zero.
        let r = picture(20, 20, 1);
        let sums = |w, h| {
            iqa_ssim(&r[..w * h], &r[..w * h], w, h, Want { ssim: true, lcs: true }, &mut SsimScratch::default())
        };
        let (a, b, c) = (sums(8, 8), sums(5, 20), sums(10, 20));
        assert_eq!(mean(a.ssim, a.pixels).to_bits(), 0.0f32.to_bits());
        assert_eq!(mean(b.ssim, b.pixels).to_bits(), (-0.0f32).to_bits());
        assert!(mean(c.ssim, c.pixels).is_nan());
    }

    #[test]
    fn constants_are_about_libvmafs() {
        // (0.01 * 255)^2, (0.03 * 255)^2 and half the latter, each step in f32.
        let (c1, c2, c3) = constants();
        assert!((f64::from(c1) - 6.5025).abs() < 1e-5 && (f64::from(c2) - 58.5225).abs() < 1e-4);
        assert_eq!(c3 * 2.0, c2);
    }
}
