//! ADM's geometry: the four wavelet scales and the border regions libvmaf
//! computes over (integer_adm.c and adm_tools.c use the same rules).

/// One wavelet scale: the input plane it transforms (`w` x `h`: the luma
/// at scale 0, the previous scale's approximation band after) and its
/// output bands, `(w + 1) / 2` x `(h + 1) / 2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub w: usize,
    pub h: usize,
}

impl Scale {
    /// Band width and height.
    pub fn band(&self) -> (usize, usize) {
        (self.w.div_ceil(2), self.h.div_ceil(2))
    }

    /// The rectangle whose scores count ([`cm_region`] of the bands).
    pub fn cm(&self) -> Region {
        let (bw, bh) = self.band();
        cm_region(bw, bh)
    }

    /// The rectangle decoupling and the CSF fill ([`decouple_region`]).
    pub fn decouple(&self) -> Region {
        let (bw, bh) = self.band();
        decouple_region(bw, bh)
    }
}

/// The four scales of a `width` x `height` luma.
pub fn scales(width: usize, height: usize) -> [Scale; 4] {
    let mut out = [Scale { w: width, h: height }; 4];
    for s in 1..4 {
        let (w, h) = out[s - 1].band();
        out[s] = Scale { w, h };
    }
    out
}

/// A half-open rectangle of band coordinates: rows `top..bottom`, columns
/// `left..right`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub top: usize,
    pub bottom: usize,
    pub left: usize,
    pub right: usize,
}

impl Region {
    pub fn rows(&self) -> usize {
        self.bottom - self.top
    }

    pub fn cols(&self) -> usize {
        self.right - self.left
    }
}

/// `ADM_BORDER_FACTOR`: a tenth of each side is left out of the scores.
const BORDER: f64 = 0.1;

/// C's `int left = w * ADM_BORDER_FACTOR - 0.5` (conversion truncates
/// toward zero), as every summing function of both extractors computes its
/// rectangle.
pub fn cm_region(w: usize, h: usize) -> Region {
    let left = (w as f64 * BORDER - 0.5) as i64;
    let top = (h as f64 * BORDER - 0.5) as i64;
    Region {
        top: top as usize,
        bottom: (h as i64 - top) as usize,
        left: left as usize,
        right: (w as i64 - left) as usize,
    }
}

/// The rectangle `adm_decouple` and `adm_csf` fill: the score rectangle
/// grown by one on the top and left and two on the bottom and right ("for
/// the filter taps"), clamped to the band. It holds every neighbour the
/// masking threshold of a scored pixel reads.
pub fn decouple_region(w: usize, h: usize) -> Region {
    let left = (w as f64 * BORDER - 0.5 - 1.0) as i64;
    let top = (h as f64 * BORDER - 0.5 - 1.0) as i64;
    let right = w as i64 - left + 2;
    let bottom = h as i64 - top + 2;
    Region {
        top: top.max(0) as usize,
        bottom: bottom.min(h as i64) as usize,
        left: left.max(0) as usize,
        right: right.min(w as i64) as usize,
    }
}

/// The wavelet's sample index `x` of a plane of `n`, mirrored at both
/// ends (dwt2_src_indices_filt): -1 reads 1, n reads n - 1, n + 1 reads
/// n - 2. Valid for `-1 <= x <= n + 1` with `n >= 2`.
#[inline(always)]
pub fn dwt_mirror(x: isize, n: usize) -> usize {
    let n = n as isize;
    (if x < 0 {
        -x
    } else if x >= n {
        2 * n - x - 1
    } else {
        x
    }) as usize
}

/// The neighbour of band index `x` the masking threshold reads
/// (`ADM_CM_THRESH_S_*`): one before the first is the second (`1, 0, 1`),
/// one past the last is the last again (`n - 2, n - 1, n - 1`).
#[inline(always)]
pub fn cm_neighbour(x: isize, n: usize) -> usize {
    if x < 0 {
        1
    } else if x as usize >= n {
        n - 1
    } else {
        x as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_halve_rounding_up() {
        let s = scales(1920, 1080);
        assert_eq!(s.map(|s| s.band()), [(960, 540), (480, 270), (240, 135), (120, 68)]);
        assert_eq!(scales(33, 33)[3].band(), (3, 3));
    }

    #[test]
    fn regions_are_libvmafs() {
        // w = 960: left = int(95.5) = 95; decouple: int(94.5) = 94, right 960 - 94 + 2.
        assert_eq!(cm_region(960, 540), Region { top: 53, bottom: 487, left: 95, right: 865 });
        assert_eq!(decouple_region(960, 540), Region { top: 52, bottom: 490, left: 94, right: 868 });
        // Small bands: nothing left out; negative borders truncate to 0.
        assert_eq!(cm_region(3, 2), Region { top: 0, bottom: 2, left: 0, right: 3 });
        assert_eq!(decouple_region(17, 3), Region { top: 0, bottom: 3, left: 0, right: 17 });
    }

    #[test]
    fn mirrors() {
        assert_eq!([-1, 0, 5, 6].map(|x| dwt_mirror(x, 6)), [1, 0, 5, 5]);
        assert_eq!(dwt_mirror(7, 6), 4);
        assert_eq!([-1, 0, 6].map(|x| cm_neighbour(x, 6)), [1, 0, 5]);
    }
}
