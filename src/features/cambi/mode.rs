//! cambi.c's per-scale image operations: `decimate` (every other sample of
//! every other row) and `filter_mode` (a 3x3 separable mode filter).

/// cambi.c `mode3`: the value two of the three share, else the smallest.
#[inline(always)]
pub fn mode3(a: u16, b: u16, c: u16) -> u16 {
    let min = a.min(b).min(c);
    if a == b || a == c {
        a
    } else if b == c {
        b
    } else {
        min
    }
}

/// cambi.c `decimate` into a new buffer: `out[i][j] = in[2i][2j]` for the
/// halved (rounded up) size. libvmaf does it in place; every sample it reads
/// lies at or after the one it writes in raster order, so it reads input.
pub fn decimate<T: Copy>(input: &[T], w: usize, h: usize, out: &mut Vec<T>) -> (usize, usize) {
    let (ow, oh) = ((w + 1) >> 1, (h + 1) >> 1);
    out.clear();
    for i in 0..oh {
        out.extend(input[2 * i * w..(2 * i + 1) * w].iter().step_by(2).copied());
    }
    (ow, oh)
}

/// cambi.c `filter_mode`, in place. Rows 0 and h - 1 keep their samples;
/// every other row becomes, per column, the mode of the horizontal modes of
/// the rows above, itself and below, where a row's horizontal mode keeps its
/// first and last samples. libvmaf writes row i - 1 once the horizontal modes
/// of rows i - 2..i are in its 3-row buffer, each taken from a row before it
/// is overwritten: the result is this function of the input.
pub fn filter_mode(data: &mut [u16], w: usize, h: usize, rows: &mut Vec<u16>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { filter_mode_avx2(data, w, h, rows) };
        return;
    }
    filter_mode_impl(data, w, h, rows);
}

/// [`filter_mode_impl`] compiled for AVX2: 16 lanes of the same selects.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn filter_mode_avx2(data: &mut [u16], w: usize, h: usize, rows: &mut Vec<u16>) {
    filter_mode_impl(data, w, h, rows);
}

/// A row's horizontal modes into `dst` (first and last samples kept).
#[inline(always)]
fn horizontal(src: &[u16], dst: &mut [u16]) {
    let w = src.len();
    dst[0] = src[0];
    dst[w - 1] = src[w - 1];
    if w > 2 {
        for (((d, &a), &b), &c) in dst[1..w - 1].iter_mut().zip(src).zip(&src[1..]).zip(&src[2..]) {
            *d = mode3(a, b, c);
        }
    }
}

#[inline(always)]
fn filter_mode_impl(data: &mut [u16], w: usize, h: usize, rows: &mut Vec<u16>) {
    if h < 3 {
        return;
    }
    rows.resize(3 * w, 0);
    let (r0, rest) = rows.split_at_mut(w);
    let (r1, r2) = rest.split_at_mut(w);
    // The horizontal modes of the rows above, at and below the output row.
    let (mut above, mut here, mut below) = (r0, r1, r2);
    horizontal(&data[0..w], above);
    horizontal(&data[w..2 * w], here);
    for i in 1..h - 1 {
        horizontal(&data[(i + 1) * w..(i + 2) * w], below);
        for (((o, &a), &b), &c) in
            data[i * w..(i + 1) * w].iter_mut().zip(above.iter()).zip(here.iter()).zip(below.iter())
        {
            *o = mode3(a, b, c);
        }
        // Rotate: the next row's "above" is this row's horizontal mode.
        std::mem::swap(&mut above, &mut here);
        std::mem::swap(&mut here, &mut below);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode3_prefers_a_pair_then_the_minimum() {
        assert_eq!(mode3(5, 5, 1), 5);
        assert_eq!(mode3(5, 1, 5), 5);
        assert_eq!(mode3(1, 5, 5), 5);
        assert_eq!(mode3(3, 1, 2), 1);
        assert_eq!(mode3(7, 7, 7), 7);
    }

    /// libvmaf's filter_mode, literally, with its cyclic 3-row buffer.
    fn filter_mode_libvmaf(data: &mut [u16], w: usize, h: usize) {
        let mut buffer = vec![0u16; 3 * w];
        let mut curr = 0;
        for i in 0..h {
            buffer[curr * w] = data[i * w];
            for j in 1..w.saturating_sub(1) {
                buffer[curr * w + j] = mode3(data[i * w + j - 1], data[i * w + j], data[i * w + j + 1]);
            }
            buffer[curr * w + w - 1] = data[i * w + w - 1];
            if i > 1 {
                for j in 0..w {
                    data[(i - 1) * w + j] = mode3(buffer[j], buffer[w + j], buffer[2 * w + j]);
                }
            }
            curr = if curr + 1 == 3 { 0 } else { curr + 1 };
        }
    }

    #[test]
    fn filter_mode_equals_libvmafs_in_place_loop() {
        for (w, h) in [(17, 11), (1, 5), (2, 4), (3, 3), (6, 2), (4, 1)] {
            let input: Vec<u16> = (0..w * h).map(|k| ((k * 7919 + k / 3) % 5) as u16).collect();
            let mut ours = input.clone();
            filter_mode(&mut ours, w, h, &mut Vec::new());
            let mut theirs = input.clone();
            filter_mode_libvmaf(&mut theirs, w, h);
            assert_eq!(ours, theirs, "{w}x{h}");
        }
    }

    #[test]
    fn decimation_keeps_even_samples_and_rounds_up() {
        let input: Vec<u16> = (0..15).collect(); // 5x3
        let mut out = Vec::new();
        assert_eq!(decimate(&input, 5, 3, &mut out), (3, 2));
        assert_eq!(out, vec![0, 2, 4, 10, 12, 14]);
    }
}
