//! The final score: ssimulacra2.c `pool_score` (libjxl tools/ssimulacra2.cc
//! `Msssim::Score`): 108 weighted absolute norms, a cubic and a power.

use super::NUM_SCALES;
use super::maps::{ChannelSums, averages};

/// libjxl's 108 pooling weights, in the order `pool_score` uses them: per
/// channel (X, Y, B), per scale, per norm (L1, L4), the SSIM, artifact and
/// detail-lost terms.
#[rustfmt::skip]
pub const WEIGHTS: [f64; 108] = [
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0,
    0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
    0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
    0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
    0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,
    0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0,
    0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408,
    0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0,
    0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
    95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379,
    0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,];

/// The score from each scored scale's (width, height) and the six sums of
/// each of its three channels (`maps::add_row`); scales beyond the list
/// count as zero, as `pool_score` does with `num_scales`.
pub fn score(scales: &[(usize, usize)], sums: &[[ChannelSums; 3]]) -> f64 {
    let mut ssim_avg = [[[0.0f64; 2]; 3]; NUM_SCALES];
    let mut edge_avg = [[[0.0f64; 4]; 3]; NUM_SCALES];
    for (s, (&(w, h), channels)) in scales.iter().zip(sums).enumerate() {
        for (c, channel) in channels.iter().enumerate() {
            (ssim_avg[s][c], edge_avg[s][c]) = averages(channel, w * h);
        }
    }
    let mut ssim = 0.0f64;
    let mut weights = WEIGHTS.iter();
    let mut add = |term: f64| ssim += weights.next().copied().unwrap_or_default() * term.abs();
    for c in 0..3 {
        for s in 0..NUM_SCALES {
            for n in 0..2 {
                add(ssim_avg[s][c][n]);
                add(edge_avg[s][c][n]);
                add(edge_avg[s][c][n + 2]);
            }
        }
    }
    polynomial(ssim)
}

/// The last steps of `pool_score`: the scale, the cubic, and `100 - 10 *
/// ssim^0.6276...` (100 when the error is not positive).
pub fn polynomial(ssim: f64) -> f64 {
    let ssim = ssim * 0.956_238_261_683_484_4;
    let ssim = 2.326_765_642_916_932 * ssim - 0.020_884_521_182_843_837 * ssim * ssim
        + 6.248_496_625_763_138e-5 * ssim * ssim * ssim;
    if ssim > 0.0 { 100.0 - 10.0 * ssim.powf(0.627_633_646_783_138_7) } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_error_is_a_hundred() {
        assert_eq!(score(&[], &[]), 100.0);
        assert_eq!(score(&[(8, 8)], &[[[0.0; 6]; 3]]), 100.0);
        assert_eq!(polynomial(-1.0), 100.0);
    }

    #[test]
    fn the_polynomial_and_power_as_libjxl_writes_them() {
        let x: f64 = 3.0 * 0.956_238_261_683_484_4;
        let cubic =
            2.326_765_642_916_932 * x - 0.020_884_521_182_843_837 * x * x + 6.248_496_625_763_138e-5 * x * x * x;
        assert_eq!(polynomial(3.0), 100.0 - 10.0 * cubic.powf(0.627_633_646_783_138_7));
        assert!((polynomial(3.0) - 67.61).abs() < 0.01, "{}", polynomial(3.0));
    }

    #[test]
    fn each_weight_meets_its_term() {
        // One scale of 1 pixel, only the Y channel's SSIM L4 sum set (16,
        // so its fourth root is 2): the weighted sum is WEIGHTS[39]
        // (channel 1, scale 0, norm L4, SSIM) times 2.
        let mut sums = [[0.0; 6]; 3];
        sums[1][1] = 16.0;
        assert_eq!(score(&[(1, 1)], &[sums]), polynomial(WEIGHTS[39] * 2.0));
        // The B channel's L4 artifact term at scale 4: 72 + 4 * 6 + 3 + 1.
        let mut five = [[[0.0; 6]; 3]; 5];
        five[4][2][3] = 16.0;
        assert_eq!(score(&[(1, 1); 5], &five), polynomial(WEIGHTS[100] * 2.0));
        const { assert!(WEIGHTS[39] > 7.0 && WEIGHTS[100] > 171.0) };
        assert_eq!(WEIGHTS.len(), 108);
        assert!(WEIGHTS.iter().all(|w| *w >= 0.0));
    }
}
