//! The error maps of one scale and channel: ssimulacra2.c `ssim_map` (the
//! SSIM without the luminance gamma, `kC2 = 0.0009`) and `edge_diff_map`
//! (ringing and blurring), each pixel's value summed in f64 and as its
//! fourth power, over the plane in raster order.

/// `kC2`.
pub const C2: f32 = 0.0009;

/// `quartic`: `(x * x) * (x * x)`.
#[inline(always)]
pub fn quartic(x: f64) -> f64 {
    let x2 = x * x;
    x2 * x2
}

/// `ssim_map`'s per-pixel error `d` (f32 moments, then f64), at least 0.
#[inline(always)]
pub fn ssim_error(mu1: f32, mu2: f32, s11: f32, s22: f32, s12: f32) -> f64 {
    let mu11 = mu1 * mu1;
    let mu22 = mu2 * mu2;
    let mu12 = mu1 * mu2;
    let num_m = 1.0f32 - (mu1 - mu2) * (mu1 - mu2);
    let num_s = 2.0f32 * (s12 - mu12) + C2;
    let denom_s = (s11 - mu11) + (s22 - mu22) + C2;
    let d = 1.0 - f64::from(num_m) * f64::from(num_s) / f64::from(denom_s);
    if d < 0.0 { 0.0 } else { d }
}

/// `edge_diff_map`'s per-pixel `d1 = (1 + |img2 - mu2|) / (1 + |img1 -
/// mu1|) - 1` in f64: positive is an artifact (ringing), negative detail
/// lost (blurring).
#[inline(always)]
pub fn edge_change(img1: f32, mu1: f32, img2: f32, mu2: f32) -> f64 {
    let ed1 = (f64::from(img1) - f64::from(mu1)).abs();
    let ed2 = (f64::from(img2) - f64::from(mu2)).abs();
    (1.0 + ed2) / (1.0 + ed1) - 1.0
}

/// The six running sums of one channel at one scale, in the order the
/// kernels and the pooling use: SSIM `d` and `d^4`; artifact and its fourth
/// power; detail lost and its fourth power.
pub type ChannelSums = [f64; 6];

/// The rows of one scale's blurred statistics for one channel.
pub struct MapRow<'a> {
    pub img1: &'a [f32],
    pub img2: &'a [f32],
    pub mu1: &'a [f32],
    pub mu2: &'a [f32],
    pub s11: &'a [f32],
    pub s22: &'a [f32],
    pub s12: &'a [f32],
}

/// One row's per-pixel map values, kept by the caller from row to row: SSIM
/// d and d^4, artifact and ^4, detail lost and ^4, in the order of
/// [`ChannelSums`].
#[derive(Default)]
pub struct RowTerms([Vec<f64>; 6]);

/// Adds one row of both maps to `sums`, pixel after pixel, continuing the
/// plane's sums exactly as the C's loops over the whole plane do. The
/// per-pixel values are computed first, side by side (they depend on
/// nothing but their pixel), then added in pixel order: the same
/// operations on the same values as the C's single loop.
pub fn add_row(row: &MapRow<'_>, terms: &mut RowTerms, sums: &mut ChannelSums) {
    let w = row.img1.len();
    for t in &mut terms.0 {
        t.resize(w, 0.0);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { add_row_avx2(row, terms, sums) };
        return;
    }
    row_terms(row, terms);
    add_terms(terms, sums);
}

/// [`row_terms`] and [`add_terms`] compiled for AVX2: four pixels a
/// vector, the same IEEE operations (AVX2 brings no FMA).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_row_avx2(row: &MapRow<'_>, terms: &mut RowTerms, sums: &mut ChannelSums) {
    row_terms(row, terms);
    add_terms(terms, sums);
}

/// Every pixel's six values of a row.
#[inline(always)]
fn row_terms(row: &MapRow<'_>, terms: &mut RowTerms) {
    let w = row.img1.len();
    let (img1, img2, mu1, mu2) = (&row.img1[..w], &row.img2[..w], &row.mu1[..w], &row.mu2[..w]);
    let (s11, s22, s12) = (&row.s11[..w], &row.s22[..w], &row.s12[..w]);
    let [d, d4, a, a4, b, b4] = &mut terms.0;
    let (d, d4, a, a4, b, b4) = (&mut d[..w], &mut d4[..w], &mut a[..w], &mut a4[..w], &mut b[..w], &mut b4[..w]);
    for x in 0..w {
        let v = ssim_error(mu1[x], mu2[x], s11[x], s22[x], s12[x]);
        d[x] = v;
        d4[x] = quartic(v);
        let e = edge_change(img1[x], mu1[x], img2[x], mu2[x]);
        let art = if e > 0.0 { e } else { 0.0 };
        let det = if e < 0.0 { -e } else { 0.0 };
        a[x] = art;
        a4[x] = quartic(art);
        b[x] = det;
        b4[x] = quartic(det);
    }
}

/// The six running sums over a row's values, in pixel order.
#[inline(always)]
fn add_terms(terms: &RowTerms, sums: &mut ChannelSums) {
    let [d, d4, a, a4, b, b4] = &terms.0;
    let w = d.len();
    let (d4, a, a4, b, b4) = (&d4[..w], &a[..w], &a4[..w], &b[..w], &b4[..w]);
    let [mut l1, mut l4, mut a1, mut s4, mut b1, mut t4] = *sums;
    for x in 0..w {
        l1 += d[x];
        l4 += d4[x];
        a1 += a[x];
        s4 += a4[x];
        b1 += b[x];
        t4 += b4[x];
    }
    *sums = [l1, l4, a1, s4, b1, t4];
}

/// Adds one row of both maps to per-column sums (`columns[x]`): the order
/// of the GPU pipeline, which sums down each column and then adds the
/// columns ([`sum_columns`]). Each pixel's values are [`add_row`]'s.
pub fn add_row_to_columns(row: &MapRow<'_>, columns: &mut [ChannelSums]) {
    for (x, sums) in columns.iter_mut().enumerate().take(row.img1.len()) {
        let d = ssim_error(row.mu1[x], row.mu2[x], row.s11[x], row.s22[x], row.s12[x]);
        let e = edge_change(row.img1[x], row.mu1[x], row.img2[x], row.mu2[x]);
        let art = if e > 0.0 { e } else { 0.0 };
        let det = if e < 0.0 { -e } else { 0.0 };
        for (acc, v) in sums.iter_mut().zip([d, quartic(d), art, quartic(art), det, quartic(det)]) {
            *acc += v;
        }
    }
}

/// The columns' sums added in column order (ssimulacra2_sum_columns).
pub fn sum_columns(columns: &[ChannelSums]) -> ChannelSums {
    let mut total = [0.0; 6];
    for column in columns {
        for (t, v) in total.iter_mut().zip(column) {
            *t += v;
        }
    }
    total
}

/// The per-plane averages of one channel's sums over `pixels` pixels, as
/// `ssim_map` and `edge_diff_map` write `plane_averages`: the means, and the
/// fourth roots of the means of the fourth powers. Returns (SSIM [L1, L4],
/// edge [art L1, art L4, det L1, det L4]).
pub fn averages(sums: &ChannelSums, pixels: usize) -> ([f64; 2], [f64; 4]) {
    let one_per_pixels = 1.0 / pixels as f64;
    let l4 = |s: f64| (one_per_pixels * s).sqrt().sqrt();
    (
        [one_per_pixels * sums[0], l4(sums[1])],
        [one_per_pixels * sums[2], l4(sums[3]), one_per_pixels * sums[4], l4(sums[5])],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_statistics_have_no_error() {
        // mu1 = mu2, sigma1 = sigma2 = sigma12: d = 1 - 1 * 1 = 0.
        let (mu, var) = (0.4f32, 0.01f32);
        let s = var + mu * mu;
        assert_eq!(ssim_error(mu, mu, s, s, s), 0.0);
        // Uncorrelated: num_s = C2, denom = 2 var + C2.
        let d = ssim_error(0.5, 0.5, 0.25 + 0.02, 0.25 + 0.02, 0.25);
        assert!((d - (1.0 - 0.0009 / 0.0409)).abs() < 1e-5, "{d}");
        // Negative errors clamp to 0.
        assert_eq!(ssim_error(0.5, 0.5, 0.25, 0.25, 0.26), 0.0);
    }

    #[test]
    fn edge_changes_are_ratios_of_local_contrast() {
        assert_eq!(edge_change(0.5, 0.5, 0.5, 0.5), 0.0);
        // The distorted has more local contrast: an artifact.
        assert!((edge_change(0.5, 0.5, 0.75, 0.5) - 0.25).abs() < 1e-12);
        // Less: detail lost, 1 / 1.5 - 1.
        assert!((edge_change(1.0, 0.5, 0.5, 0.5) - (1.0 / 1.5 - 1.0)).abs() < 1e-12);
        assert_eq!(quartic(2.0), 16.0);
    }

    #[test]
    fn rows_continue_the_plane_sums_and_average_as_the_c_does() {
        let row = |v: &'static [f32]| v;
        let r = MapRow {
            img1: row(&[0.5, 1.0]),
            img2: row(&[0.75, 0.5]),
            mu1: row(&[0.5, 0.5]),
            mu2: row(&[0.5, 0.5]),
            s11: row(&[0.27, 0.27]),
            s22: row(&[0.27, 0.27]),
            s12: row(&[0.25, 0.25]),
        };
        let (mut sums, mut terms) = ([0.0; 6], RowTerms::default());
        add_row(&r, &mut terms, &mut sums);
        add_row(&r, &mut terms, &mut sums);
        let d = ssim_error(0.5, 0.5, 0.27, 0.27, 0.25);
        let lost = 1.0 - 1.0 / 1.5;
        let want = [
            ((d + d) + d) + d,
            ((quartic(d) + quartic(d)) + quartic(d)) + quartic(d),
            0.25 + 0.25,
            quartic(0.25) + quartic(0.25),
            lost + lost,
            quartic(lost) + quartic(lost),
        ];
        for (g, w) in sums.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{sums:?} vs {want:?}");
        }
        let (ssim, edge) = averages(&sums, 4);
        assert_eq!(ssim[0], 0.25 * sums[0]);
        assert!((ssim[1] - d).abs() < 1e-12);
        assert!((edge[1] - (0.5 * quartic(0.25)).sqrt().sqrt()).abs() < 1e-12);
        assert!((edge[2] - 0.5 * lost).abs() < 1e-12);
    }
}
