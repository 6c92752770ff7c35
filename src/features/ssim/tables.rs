//! libvmaf's constant tables for SSIM and MS-SSIM, as its C declares them
//! (f32 literals, so the same nearest floats).

/// The Gaussian window's length (iqa/ssim_tools.h `GAUSSIAN_LEN`).
pub const WINDOW: usize = 11;

/// iqa/ssim_tools.h `g_gaussian_window_h` (and `_v`, the same values): the
/// 1-D taps of the 11x11 circular-symmetric Gaussian (sigma 1.5) that
/// `_iqa_convolve` applies along rows and then along columns.
pub const GAUSSIAN: [f32; WINDOW] =
    [0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012, 0.213006, 0.109361, 0.036001, 0.007599, 0.001028];

/// ms_ssim.c `LPF_LEN`: the down-sampling filter's size.
pub const LPF_LEN: usize = 9;

/// ms_ssim.c `g_lpf`: the 9x9 low-pass filter (9/7 biorthogonal wavelet)
/// that `_iqa_decimate` applies, as a 2-D kernel, before each halving.
pub const LPF: [[f32; LPF_LEN]; LPF_LEN] = [
    [0.000714, -0.000450, -0.002090, 0.007132, 0.016114, 0.007132, -0.002090, -0.000450, 0.000714],
    [-0.000450, 0.000283, 0.001316, -0.004490, -0.010146, -0.004490, 0.001316, 0.000283, -0.000450],
    [-0.002090, 0.001316, 0.006115, -0.020867, -0.047149, -0.020867, 0.006115, 0.001316, -0.002090],
    [0.007132, -0.004490, -0.020867, 0.071207, 0.160885, 0.071207, -0.020867, -0.004490, 0.007132],
    [0.016114, -0.010146, -0.047149, 0.160885, 0.363505, 0.160885, -0.047149, -0.010146, 0.016114],
    [0.007132, -0.004490, -0.020867, 0.071207, 0.160885, 0.071207, -0.020867, -0.004490, 0.007132],
    [-0.002090, 0.001316, 0.006115, -0.020867, -0.047149, -0.020867, 0.006115, 0.001316, -0.002090],
    [-0.000450, 0.000283, 0.001316, -0.004490, -0.010146, -0.004490, 0.001316, 0.000283, -0.000450],
    [0.000714, -0.000450, -0.002090, 0.007132, 0.016114, 0.007132, -0.002090, -0.000450, 0.000714],
];

/// ms_ssim.c `SCALES`: the pyramid's levels.
pub const SCALES: usize = 5;

/// ms_ssim.c `g_alphas`, `g_betas`, `g_gammas`: the exponents of each
/// scale's luminance, contrast and structure terms (Wang's MS-SSIM).
pub const ALPHAS: [f32; SCALES] = [0.0000, 0.0000, 0.0000, 0.0000, 0.1333];
pub const BETAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];
pub const GAMMAS: [f32; SCALES] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/// ssim_tools.c `_iqa_ssim`'s stabilising constants for the default
/// arguments (K1 = 0.01, K2 = 0.03, L = 255), in f32 as it computes them:
/// `C1 = (K1*L)*(K1*L)`, `C2 = (K2*L)*(K2*L)`, `C3 = C2 / 2`.
pub fn constants() -> (f32, f32, f32) {
    let (k1, k2, l) = (0.01f32, 0.03f32, 255.0f32);
    let c1 = (k1 * l) * (k1 * l);
    let c2 = (k2 * l) * (k2 * l);
    (c1, c2, c2 / 2.0)
}
