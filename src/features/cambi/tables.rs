//! cambi.c's constant tables: the per-scale weights, the suprathreshold
//! contrast weights and the reciprocal table `c_value_pixel` multiplies by.

/// cambi.c `NUM_SCALES`.
pub const NUM_SCALES: usize = 5;

/// cambi.c `g_scale_weights`: scale 0 (full resolution) counts most.
pub const SCALE_WEIGHTS: [i32; NUM_SCALES] = [16, 8, 4, 2, 1];

/// cambi.c `g_contrast_weights`: the weight of a contrast step of `d + 1`
/// luma levels (10-bit), for `d` below `1 << max_log_contrast` (at most 32).
pub const CONTRAST_WEIGHTS: [i32; 32] =
    [1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];

/// cambi.h `CAMBI_RECIPROCAL_LUT_SIZE`: windows up to 65 x 65 pixels.
pub const RECIPROCAL_LUT_SIZE: usize = 4226;

/// cambi.h `reciprocal_lut`: entry `i` is `1 / i` printed to 9 significant
/// digits (`%.9g` of the double) and read back as a float, entry 0 is 0.
/// That is *not* always the float nearest `1 / i`: 42 entries differ from
/// `1.0f / i` in the last bit (82 is the first), so the table is rebuilt
/// the way libvmaf's was generated, never computed as a division.
pub fn reciprocal_lut() -> Vec<f32> {
    (0..RECIPROCAL_LUT_SIZE)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                // `{:.8e}` is 9 significant digits, correctly rounded, like %.9g.
                format!("{:.8e}", 1.0 / i as f64).parse::<f32>().expect("a formatted float parses")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocals_are_libvmafs_printed_values() {
        let lut = reciprocal_lut();
        assert_eq!(lut.len(), RECIPROCAL_LUT_SIZE);
        assert_eq!((lut[0], lut[1], lut[2], lut[4]), (0.0, 1.0, 0.5, 0.25));
        // cambi.h holds 0.012195122f for 1/82: one ulp above 1.0f / 82.0f.
        assert_eq!(lut[82], 0.012195122f32);
        assert_eq!(lut[82].to_bits(), (1.0f32 / 82.0).to_bits() + 1);
        // cambi.h's last entry is 0.000236686391f.
        assert_eq!(lut[4225], "0.000236686391".parse::<f32>().unwrap());
        let differ = (1..RECIPROCAL_LUT_SIZE).filter(|&i| lut[i] != 1.0 / i as f32).count();
        assert_eq!(differ, 42, "entries that are not the nearest float to 1/i");
        // The whole table, bit for bit as checked against cambi.h once.
        let bits: Vec<u8> = lut.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(crate::backend::kernels::fnv1a(&[&bits]), LUT_FNV);
    }

    /// FNV-1a of the table's little-endian bytes.
    const LUT_FNV: u64 = 3979397078459356169;
}
