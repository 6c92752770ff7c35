//! cambi.c `cambi_preprocessing`: the luma checked against its bit depth,
//! resampled to the size cambi scores at and brought to 10 bits
//! (`decimate_generic_*_and_convert_to_10b`), then, for encodes below 10
//! bits, `anti_dithering_filter`.

use super::params::ImagePlan;
use crate::fixture::PlaneRef;
use anyhow::{Result, bail};

/// cambi.c `validate_image`: a sample above the bit depth's maximum is an
/// error (8- and 16-bit input is not checked: every value fits).
pub fn validate(plane: PlaneRef<'_>, bit_depth: u8) -> Result<()> {
    if let PlaneRef::U16 { data, .. } = plane
        && bit_depth < 16
    {
        let max = (1u16 << bit_depth) - 1;
        if data.iter().any(|&v| v > max) {
            bail!(
                "Invalid input. The input contains values greater than {max}, which exceeds the maximum value for a \
                 {bit_depth}-bit depth format (libvmaf's cambi refuses the frame)"
            );
        }
    }
    Ok(())
}

/// A sample brought to 10 bits: `v << (10 - bpc)` below 10 bits,
/// `(v + round) >> (bpc - 10)` above.
#[inline(always)]
pub fn to_10_bit(v: u16, bit_depth: u8) -> u16 {
    if bit_depth <= 10 {
        v << (10 - bit_depth)
    } else {
        let shift = bit_depth - 10;
        ((u32::from(v) + (1 << (shift - 1))) >> shift) as u16
    }
}

/// The 10-bit picture cambi scores, `plan.width` x `plan.height`, into
/// `out`; `scratch` is kept from frame to frame.
pub fn preprocess(
    plane: PlaneRef<'_>,
    bit_depth: u8,
    plan: &ImagePlan,
    enc_bitdepth: u32,
    out: &mut Vec<u16>,
    scratch: &mut Vec<u16>,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { preprocess_avx2(plane, bit_depth, plan, enc_bitdepth, out, scratch) };
        return;
    }
    preprocess_impl(plane, bit_depth, plan, enc_bitdepth, out, scratch);
}

/// [`preprocess_impl`] compiled for AVX2: the same integer operations.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn preprocess_avx2(
    plane: PlaneRef<'_>,
    bit_depth: u8,
    plan: &ImagePlan,
    enc_bitdepth: u32,
    out: &mut Vec<u16>,
    scratch: &mut Vec<u16>,
) {
    preprocess_impl(plane, bit_depth, plan, enc_bitdepth, out, scratch);
}

#[inline(always)]
fn preprocess_impl(
    plane: PlaneRef<'_>,
    bit_depth: u8,
    plan: &ImagePlan,
    enc_bitdepth: u32,
    out: &mut Vec<u16>,
    scratch: &mut Vec<u16>,
) {
    let (w, h) = (plan.width, plan.height);
    let dithered = enc_bitdepth < 10;
    let target = if dithered { &mut *scratch } else { &mut *out };
    target.clear();
    let in_w = plan.in_width;
    // One conversion per bit depth, so each loop is a plain vector shift.
    match plane {
        PlaneRef::U8 { data, .. } => resample(data, in_w, plan, |v| u16::from(v) << 2, target),
        PlaneRef::U16 { data, .. } if bit_depth <= 10 => {
            let shift = 10 - bit_depth;
            resample(data, in_w, plan, |v| v << shift, target)
        }
        PlaneRef::U16 { data, .. } => {
            let shift = u32::from(bit_depth - 10);
            let round = 1u32 << (shift - 1);
            resample(data, in_w, plan, |v| ((u32::from(v) + round) >> shift) as u16, target)
        }
    }
    if dithered {
        out.resize(w * h, 0);
        anti_dither(scratch, out, w, h);
    }
}

#[inline(always)]
fn resample<T: Copy>(data: &[T], in_w: usize, plan: &ImagePlan, convert: impl Fn(T) -> u16, out: &mut Vec<u16>) {
    if plan.x_src.is_empty() && plan.y_src.is_empty() {
        out.extend(data.iter().map(|&v| convert(v)));
        return;
    }
    for i in 0..plan.height {
        let y = if plan.y_src.is_empty() { i } else { plan.y_src[i] as usize };
        let row = &data[y * in_w..(y + 1) * in_w];
        if plan.x_src.is_empty() {
            out.extend(row.iter().map(|&v| convert(v)));
        } else {
            out.extend(plan.x_src.iter().map(|&x| convert(row[x as usize])));
        }
    }
}

/// cambi.c `anti_dithering_filter` from `src` into `dst`: each sample
/// becomes the mean (shifted down) of its 2x2 block to the right and below;
/// the last column averages vertically, the last row horizontally, the
/// corner stays. libvmaf updates in place in raster order, but every sample
/// it reads is still unwritten (right of or below the one written), so this
/// is a function of the input.
#[inline(always)]
pub fn anti_dither(src: &[u16], dst: &mut [u16], w: usize, h: usize) {
    for i in 0..h.saturating_sub(1) {
        let (top, bottom) = (&src[i * w..(i + 1) * w], &src[(i + 1) * w..(i + 2) * w]);
        let out = &mut dst[i * w..(i + 1) * w];
        for (j, o) in out[..w - 1].iter_mut().enumerate() {
            let sum = u32::from(top[j]) + u32::from(top[j + 1]) + u32::from(bottom[j]) + u32::from(bottom[j + 1]);
            *o = (sum >> 2) as u16;
        }
        out[w - 1] = ((u32::from(top[w - 1]) + u32::from(bottom[w - 1])) >> 1) as u16;
    }
    let (last, out) = (&src[(h - 1) * w..h * w], &mut dst[(h - 1) * w..h * w]);
    for (j, o) in out[..w - 1].iter_mut().enumerate() {
        *o = ((u32::from(last[j]) + u32::from(last[j + 1])) >> 1) as u16;
    }
    out[w - 1] = last[w - 1];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_come_to_ten_bits_with_rounding() {
        assert_eq!(to_10_bit(255, 8), 1020);
        assert_eq!(to_10_bit(1023, 10), 1023);
        // 12-bit: (v + 2) >> 2; 16-bit: (v + 32) >> 6.
        assert_eq!((to_10_bit(4093, 12), to_10_bit(4094, 12)), (1023, 1024));
        assert_eq!(to_10_bit(65535, 16), 1024);
        assert_eq!(to_10_bit(31, 16), 0);
        assert_eq!(to_10_bit(32, 16), 1);
    }

    #[test]
    fn anti_dithering_is_the_in_place_loop() {
        let (w, h) = (5, 4);
        let input: Vec<u16> = (0..w * h).map(|k| ((k * 37) % 101) as u16 * 8).collect();
        let mut ours = vec![0; w * h];
        anti_dither(&input, &mut ours, w, h);
        // libvmaf's loop, literally in place.
        let mut d = input.clone();
        for i in 0..h - 1 {
            for j in 0..w - 1 {
                d[i * w + j] = ((d[i * w + j] as u32
                    + d[i * w + j + 1] as u32
                    + d[(i + 1) * w + j] as u32
                    + d[(i + 1) * w + j + 1] as u32)
                    >> 2) as u16;
            }
            d[i * w + w - 1] = ((d[i * w + w - 1] as u32 + d[(i + 1) * w + w - 1] as u32) >> 1) as u16;
        }
        for j in 0..w - 1 {
            d[(h - 1) * w + j] = ((d[(h - 1) * w + j] as u32 + d[(h - 1) * w + j + 1] as u32) >> 1) as u16;
        }
        assert_eq!(ours, d);
        assert_eq!(ours[w * h - 1], input[w * h - 1]);
    }

    #[test]
    fn out_of_range_samples_are_refused() {
        let ok = [0u16, 1023];
        let bad = [0u16, 1024];
        assert!(validate(PlaneRef::U16 { width: 2, height: 1, data: &ok }, 10).is_ok());
        let e = validate(PlaneRef::U16 { width: 2, height: 1, data: &bad }, 10).unwrap_err().to_string();
        assert!(e.contains("greater than 1023"), "{e}");
        assert!(validate(PlaneRef::U16 { width: 2, height: 1, data: &[65535, 0] }, 16).is_ok());
    }
}
