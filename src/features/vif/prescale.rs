//! float_vif's `vif_prescale`: the float pictures resampled to
//! `(int)(size * prescale + 0.5)` before VIF (vif_tools.c
//! `vif_scale_frame_s`: nearest, bilinear, bicubic or lanczos4).
//!
//! Every weight and source index depends only on the output column (x) or
//! the output row (y), so they are computed once here, exactly as libvmaf
//! computes them per pixel (its float and double steps, glibc's `sin`), and
//! both the CPU reference and the GPU kernel combine them per pixel with
//! libvmaf's multiplies and adds in libvmaf's order.

use super::PrescaleMethod;
use crate::fixture::Geometry;

/// vif_tools.h `VIF_BILINEAR_MAX_WIDTH`: float_vif's init refuses bilinear
/// prescaling to a wider picture.
pub const BILINEAR_MAX_WIDTH: usize = 7680;

/// Source indices and weights of one axis: `taps` of each per output
/// position (nearest 1, bilinear 2, bicubic 4, lanczos4 9).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Axis {
    pub taps: usize,
    pub index: Vec<i32>,
    pub weight: Vec<f32>,
}

/// A resampling from the source size to the prescaled size.
#[derive(Debug, Clone, PartialEq)]
pub struct Resampler {
    pub method: PrescaleMethod,
    pub src: (usize, usize),
    pub dst: (usize, usize),
    pub cols: Axis,
    pub rows: Axis,
}

/// vif_tools.c `mirror` (floats): -i left of 0, 2 right - i right of right.
fn mirror(i: f32, right: f32) -> f32 {
    if i < 0.0 {
        -i
    } else if i > right {
        2.0 * right - i
    } else {
        i
    }
}

/// vif_tools.c `bicubic_kernel` (a = -0.75), in f32.
fn bicubic_kernel(t: f32) -> f32 {
    let a = -0.75f32;
    let t = t.abs();
    if t < 1.0 {
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0
    } else if t < 2.0 {
        (((t - 5.0) * t + 8.0) * t - 4.0) * a
    } else {
        0.0
    }
}

/// vif_tools.c `lanczos4_kernel`: double arithmetic with glibc's `sin`,
/// rounded to f32.
fn lanczos4_kernel(x: f32, a: f32) -> f32 {
    use std::f64::consts::PI;
    if x == 0.0 {
        return 1.0;
    }
    if x > -a && x < a {
        let (x, a) = (f64::from(x), f64::from(a));
        return (a * (PI * x).sin() * (PI * x / a).sin() / (PI * PI * x * x)) as f32;
    }
    0.0
}

impl Axis {
    /// The axis of `dst` output positions from `src` source positions.
    fn new(method: PrescaleMethod, src: usize, dst: usize) -> Axis {
        let ratio = src as f32 / dst as f32;
        let right = (src - 1) as f32;
        // (x + 0.5) * ratio - 0.5 in double, kept as a float.
        let center = |x: usize| ((x as f64 + 0.5) * f64::from(ratio) - 0.5) as f32;
        let mut axis = Axis::default();
        match method {
            PrescaleMethod::Nearest => {
                axis.taps = 1;
                for x in 0..dst {
                    axis.index.push((x as f32 * ratio) as i32);
                    axis.weight.push(1.0);
                }
            }
            PrescaleMethod::Bilinear => {
                axis.taps = 2;
                for x in 0..dst {
                    let xx = center(x);
                    let x1 = mirror(f64::from(xx).floor() as f32, right) as i32;
                    let x2 = mirror(f64::from(xx).ceil() as f32, right) as i32;
                    let d = xx - x1 as f32;
                    axis.index.extend([x1, x2]);
                    axis.weight.extend([1.0 - d, d]);
                }
            }
            PrescaleMethod::Bicubic | PrescaleMethod::Lanczos4 => {
                let a: i32 = if method == PrescaleMethod::Bicubic { 1 } else { 4 };
                let (lo, hi) = if method == PrescaleMethod::Bicubic { (-1, 2) } else { (-a, a) };
                axis.taps = (hi - lo + 1) as usize;
                for x in 0..dst {
                    let xx = center(x);
                    let x0 = f64::from(xx).floor() as i32;
                    let d = xx - x0 as f32;
                    for i in lo..=hi {
                        let t = i as f32 - d;
                        let w =
                            if method == PrescaleMethod::Bicubic { bicubic_kernel(t) } else { lanczos4_kernel(t, 4.0) };
                        axis.weight.push(w);
                        axis.index.push(mirror((x0 + i) as f32, right) as i32);
                    }
                }
            }
        }
        axis
    }
}

impl Resampler {
    pub fn new(method: PrescaleMethod, geometry: &Geometry, dst: (usize, usize)) -> Resampler {
        let src = (geometry.width as usize, geometry.height as usize);
        Resampler {
            method,
            src,
            dst,
            cols: Axis::new(method, src.0, dst.0.max(1)),
            rows: Axis::new(method, src.1, dst.1.max(1)),
        }
    }

    /// Whether the resampling changes anything: libvmaf copies the picture
    /// when the sizes are equal, whatever the method.
    pub fn is_identity(&self) -> bool {
        self.src == self.dst
    }

    /// Why libvmaf's resampling has no defined result: a source index
    /// outside the picture (the mirror reaches past the far edge on tiny
    /// sources, a nearest index rounds up to the width).
    pub fn out_of_picture(&self) -> Option<String> {
        if self.is_identity() {
            return None;
        }
        if self.dst.0 == 0 || self.dst.1 == 0 {
            return Some(format!("float_vif's prescaled picture is {}x{}: nothing to score", self.dst.0, self.dst.1));
        }
        for (axis, n, what) in [(&self.cols, self.src.0, "column"), (&self.rows, self.src.1, "row")] {
            if let Some(i) = axis.index.iter().find(|&&i| i < 0 || i as usize >= n) {
                return Some(format!(
                    "libvmaf's {:?} prescaling of a {}x{} picture to {}x{} reads {what} {i}, outside the picture \
                     (no defined score)",
                    self.method, self.src.0, self.src.1, self.dst.0, self.dst.1
                ));
            }
        }
        None
    }

    /// vif_scale_frame_s: `src` (the source size, rows packed) into `dst`.
    pub fn apply(&self, src: &[f32], dst: &mut Vec<f32>) {
        let (sw, _) = self.src;
        let (dw, dh) = self.dst;
        dst.clear();
        if self.is_identity() {
            dst.extend_from_slice(src);
            return;
        }
        dst.reserve(dw * dh);
        let (ct, rt) = (self.cols.taps, self.rows.taps);
        for y in 0..dh {
            let (ry, wy) = (&self.rows.index[y * rt..(y + 1) * rt], &self.rows.weight[y * rt..(y + 1) * rt]);
            for x in 0..dw {
                let (rx, wx) = (&self.cols.index[x * ct..(x + 1) * ct], &self.cols.weight[x * ct..(x + 1) * ct]);
                let at = |j: usize, i: usize| src[ry[j] as usize * sw + rx[i] as usize];
                dst.push(match self.method {
                    PrescaleMethod::Nearest => at(0, 0),
                    // (1-dy)(1-dx) r1[x1] + (1-dy) dx r1[x2] + dy (1-dx) r2[x1] + dy dx r2[x2]
                    PrescaleMethod::Bilinear => {
                        wy[0] * wx[0] * at(0, 0)
                            + wy[0] * wx[1] * at(0, 1)
                            + wy[1] * wx[0] * at(1, 0)
                            + wy[1] * wx[1] * at(1, 1)
                    }
                    // interp_val += src * (weights_x[i] * weights_y[j]), rows outer.
                    PrescaleMethod::Bicubic => {
                        let mut v = 0.0f32;
                        #[allow(clippy::needless_range_loop)] // C's loops, indices and all
                        for j in 0..4 {
                            for i in 0..4 {
                                v += at(j, i) * (wx[i] * wy[j]);
                            }
                        }
                        v
                    }
                    // weight_sum += w; value += src * w; value / weight_sum.
                    PrescaleMethod::Lanczos4 => {
                        let (mut v, mut sum) = (0.0f32, 0.0f32);
                        #[allow(clippy::needless_range_loop)] // C's loops, indices and all
                        for j in 0..9 {
                            for i in 0..9 {
                                let w = wx[i] * wy[j];
                                sum += w;
                                v += at(j, i) * w;
                            }
                        }
                        v / sum
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Chroma;

    fn geo(w: u32, h: u32) -> Geometry {
        Geometry { width: w, height: h, bit_depth: 8, chroma: Chroma::Yuv444 }
    }

    #[test]
    fn nearest_picks_the_truncated_source_position() {
        let r = Resampler::new(PrescaleMethod::Nearest, &geo(4, 2), (8, 1));
        assert_eq!(r.cols.index, [0, 0, 1, 1, 2, 2, 3, 3]);
        let src: Vec<f32> = (0..8).map(|v| v as f32).collect();
        let mut out = Vec::new();
        r.apply(&src, &mut out);
        assert_eq!(out, [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
    }

    #[test]
    fn bilinear_interpolates_and_mirrors_the_first_column() {
        // 2x upscaling: x = 0 centres at -0.25: floor -1 mirrors to 1, and
        // libvmaf's dx = xx - x1 = -1.25 (its formula, kept).
        let r = Resampler::new(PrescaleMethod::Bilinear, &geo(4, 4), (8, 8));
        assert_eq!(&r.cols.index[..4], &[1, 0, 0, 1]);
        assert_eq!(&r.cols.weight[..2], &[2.25, -1.25]);
        assert_eq!(&r.cols.weight[2..4], &[0.75, 0.25]);
    }

    #[test]
    fn kernels_are_one_at_zero_and_vanish_outside() {
        assert_eq!(bicubic_kernel(0.0), 1.0);
        assert_eq!(bicubic_kernel(2.5), 0.0);
        assert_eq!(lanczos4_kernel(0.0, 4.0), 1.0);
        assert_eq!(lanczos4_kernel(4.0, 4.0), 0.0);
        assert!(lanczos4_kernel(1.0, 4.0).abs() < 1e-7);
    }

    #[test]
    fn identical_sizes_copy_and_tiny_sources_are_refused() {
        let r = Resampler::new(PrescaleMethod::Lanczos4, &geo(16, 16), (16, 16));
        assert!(r.is_identity() && r.out_of_picture().is_none());
        let r = Resampler::new(PrescaleMethod::Lanczos4, &geo(4, 4), (16, 16));
        assert!(r.out_of_picture().unwrap().contains("outside the picture"));
    }
}
