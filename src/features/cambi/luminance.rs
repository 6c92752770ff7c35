//! libvmaf luminance_tools.c as cambi uses it: 10-bit limited-range luma to
//! luminance through the BT.1886 or PQ EOTF, and cambi.c's thresholds built
//! on it (`get_tvi_for_diff`, `get_vlt_luma`). Only init uses these: they
//! decide integer thresholds, in double precision as libvmaf does.

use anyhow::{Result, bail};

/// The EOTF cambi's visibility thresholds use (`eotf`/`cambi_eotf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eotf {
    Bt1886,
    Pq,
}

impl Eotf {
    /// luminance_tools.c `vmaf_luminance_init_eotf`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "bt1886" => Ok(Eotf::Bt1886),
            "pq" => Ok(Eotf::Pq),
            other => bail!("unknown EOTF `{other}`: libvmaf takes `bt1886` or `pq`"),
        }
    }

    /// `vmaf_luminance_bt1886_eotf` / `vmaf_luminance_pq_eotf`: a normalized
    /// luma value in [0, 1] to cd/m².
    pub fn luminance_of(self, v: f64) -> f64 {
        match self {
            Eotf::Bt1886 => {
                const GAMMA: f64 = 2.4;
                const LW: f64 = 300.0;
                const LB: f64 = 0.01;
                let a = (LW.powf(1.0 / GAMMA) - LB.powf(1.0 / GAMMA)).powf(GAMMA);
                let b = LB.powf(1.0 / GAMMA) / (LW.powf(1.0 / GAMMA) - LB.powf(1.0 / GAMMA));
                let base = v + b;
                a * (if base > 0.0 { base } else { 0.0 }).powf(GAMMA)
            }
            Eotf::Pq => {
                const M1: f64 = 0.1593017578125;
                const M2: f64 = 78.84375;
                const C1: f64 = 0.8359375;
                const C2: f64 = 18.8515625;
                const C3: f64 = 18.6875;
                let num = v.powf(1.0 / M2) - C1;
                let num_clipped = if num > 0.0 { num } else { 0.0 };
                let den = C2 - C3 * v.powf(1.0 / M2);
                10000.0 * (num_clipped / den).powf(1.0 / M1)
            }
        }
    }
}

/// cambi works on 10-bit limited-range luma: [64, 940]
/// (`vmaf_luminance_init_luma_range(&r, 10, VMAF_PIXEL_RANGE_LIMITED)`).
pub const FOOT: i32 = 64;
pub const HEAD: i32 = 940;

/// `vmaf_luminance_get_luminance`: the sample clipped to the range,
/// normalized to [0, 1], through the EOTF.
pub fn luminance(sample: i32, eotf: Eotf) -> f64 {
    let clipped = sample.clamp(FOOT, HEAD);
    eotf.luminance_of(f64::from(clipped - FOOT) / f64::from(HEAD - FOOT))
}

/// cambi.c `tvi_condition`: is a step of `diff` levels above `sample`
/// visible (ΔL > tvi_threshold · L)?
fn visible(sample: i32, diff: i32, tvi_threshold: f64, eotf: Eotf) -> bool {
    let mean = luminance(sample, eotf);
    let stepped = luminance(sample + diff, eotf);
    stepped - mean > tvi_threshold * mean
}

#[derive(PartialEq)]
enum Bisect {
    TooSmall,
    Correct,
    TooBig,
}

/// cambi.c `tvi_hard_threshold_condition`.
fn bisect_flag(sample: i32, diff: i32, tvi_threshold: f64, eotf: Eotf) -> Bisect {
    if !visible(sample, diff, tvi_threshold, eotf) {
        Bisect::TooBig
    } else if visible(sample + 1, diff, tvi_threshold, eotf) {
        Bisect::TooSmall
    } else {
        Bisect::Correct
    }
}

/// cambi.c `get_tvi_for_diff` at 10 bits: the largest sample at which a
/// step of `diff` levels is still visible (0 if none, 1023 if all).
pub fn tvi_for_diff(diff: i32, tvi_threshold: f64, eotf: Eotf) -> Result<i32> {
    let max_val = (1 << 10) - 1;
    let mut foot = FOOT;
    let mut head = HEAD - diff - 1;
    match bisect_flag(foot, diff, tvi_threshold, eotf) {
        Bisect::TooBig => return Ok(0),
        Bisect::Correct => return Ok(foot),
        Bisect::TooSmall => {}
    }
    match bisect_flag(head, diff, tvi_threshold, eotf) {
        Bisect::TooSmall => return Ok(max_val),
        Bisect::Correct => return Ok(head),
        Bisect::TooBig => {}
    }
    // libvmaf loops until it finds the threshold; the interval halves each
    // time, so 16 rounds cover 10 bits with room to spare.
    for _ in 0..64 {
        let mid = foot + (head - foot) / 2;
        match bisect_flag(mid, diff, tvi_threshold, eotf) {
            Bisect::TooBig => head = mid,
            Bisect::TooSmall => foot = mid,
            Bisect::Correct => return Ok(mid),
        }
    }
    bail!("cambi: the visibility threshold for a step of {diff} does not converge (tvi_threshold {tvi_threshold})")
}

/// cambi.c `get_vlt_luma`: the smallest 10-bit luma whose luminance reaches
/// `threshold` (0 when the range's foot already does).
pub fn vlt_luma(threshold: f64, eotf: Eotf) -> Result<u16> {
    let mut sample = FOOT;
    while luminance(sample, eotf) < threshold {
        sample += 1;
        // Past the head the luminance no longer grows: libvmaf would loop
        // forever (its sample is a uint16_t that wraps around).
        if sample > HEAD {
            bail!(
                "cambi_vis_lum_threshold {threshold} is above the EOTF's peak {:.6} cd/m²: libvmaf's init never ends",
                luminance(HEAD, eotf)
            );
        }
    }
    Ok(if sample == FOOT { 0 } else { sample as u16 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eotfs_span_their_ranges() {
        assert!((luminance(FOOT, Eotf::Bt1886) - 0.01).abs() < 1e-12);
        assert!((luminance(HEAD, Eotf::Bt1886) - 300.0).abs() < 1e-9);
        assert_eq!(luminance(0, Eotf::Bt1886), luminance(FOOT, Eotf::Bt1886));
        assert_eq!(luminance(FOOT, Eotf::Pq), 0.0);
        assert!((luminance(HEAD, Eotf::Pq) - 10000.0).abs() < 1e-6);
        assert!(Eotf::parse("hlg").is_err());
    }

    #[test]
    fn thresholds_grow_with_the_step() {
        // BT.1886 at the default 0.019: a step of 1..4 levels shows up to
        // 178, 305, 432, 559 (libvmaf's default band is 0..=563).
        let bt: Vec<i32> = (1..=4).map(|d| tvi_for_diff(d, 0.019, Eotf::Bt1886).unwrap()).collect();
        assert_eq!(bt, [178, 305, 432, 559]);
        // A step is visible up to some level; larger steps up to higher ones.
        for eotf in [Eotf::Bt1886, Eotf::Pq] {
            let t: Vec<i32> = (1..=32).map(|d| tvi_for_diff(d, 0.019, eotf).unwrap()).collect();
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{eotf:?}: {t:?}");
            // Inside the range, the step is visible at the threshold and
            // not one level up; past it (1023) visible everywhere.
            for (d, &s) in (1..).zip(&t) {
                if s < 1023 {
                    assert!(visible(s, d, 0.019, eotf) && !visible(s + 1, d, 0.019, eotf), "{eotf:?} {d}");
                } else {
                    assert!(visible(HEAD - d - 1, d, 0.019, eotf));
                }
            }
        }
    }

    #[test]
    fn the_visibility_floor_is_found_or_refused() {
        assert_eq!(vlt_luma(0.0, Eotf::Bt1886).unwrap(), 0);
        let v = vlt_luma(1.0, Eotf::Bt1886).unwrap();
        assert!(luminance(i32::from(v), Eotf::Bt1886) >= 1.0 && luminance(i32::from(v) - 1, Eotf::Bt1886) < 1.0);
        assert!(vlt_luma(300.5, Eotf::Bt1886).is_err());
        assert!(vlt_luma(300.0, Eotf::Pq).is_ok());
    }
}
