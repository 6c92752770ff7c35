//! libvmaf's `picture_copy` (picture_copy.c): integer samples to the float
//! planes its floating-point extractors work on, scaled to the 8-bit range.

use crate::fixture::{Frame, PlaneRef};

/// libvmaf's divisor for each bit depth (10-bit → 4, 12 → 16, 16 → 256).
pub fn scaler(bit_depth: u8) -> f32 {
    match bit_depth {
        10 => 4.0,
        12 => 16.0,
        16 => 256.0,
        _ => 1.0,
    }
}

/// Plane `p` as floats: `sample / scaler + offset`, in f32 exactly as
/// picture_copy.c computes it (8-bit samples are not divided).
pub fn float_plane(frame: &Frame, p: usize, offset: i32) -> Vec<f32> {
    let mut out = Vec::new();
    float_plane_into(frame, p, offset, &mut out);
    out
}

/// [`float_plane`] into a buffer the caller keeps from frame to frame (no
/// allocation, and no page faults, per frame).
pub fn float_plane_into(frame: &Frame, p: usize, offset: i32, out: &mut Vec<f32>) {
    let offset = offset as f32;
    out.clear();
    match frame.plane(p) {
        PlaneRef::U8 { data, .. } => out.extend(data.iter().map(|&v| f32::from(v) + offset)),
        PlaneRef::U16 { data, .. } => {
            let s = scaler(frame.geometry.bit_depth);
            out.extend(data.iter().map(|&v| f32::from(v) / s + offset));
        }
    }
}

/// (peak, psnr_max) of libvmaf's float PSNR-style extractors per bit depth
/// (float_psnr.c, float_ansnr.c `init`).
pub fn float_peak(bit_depth: u8) -> (f64, f64) {
    match bit_depth {
        10 => (255.75, 72.0),
        12 => (255.9375, 84.0),
        16 => (255.99609375, 108.0),
        _ => (255.0, 60.0),
    }
}
