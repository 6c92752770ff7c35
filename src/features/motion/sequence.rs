//! libvmaf's `flush` for each motion extractor: the rules that need the
//! whole sequence (the next frame's score, the first frames' stamps), run
//! once over the per-frame values, in frame order, by the CPU reference
//! and every GPU backend alike (features/gpu.rs, "Temporal features").

use super::{Params, blend, min};

/// motion2 and motion3 of every frame.
pub struct Sequence {
    pub motion2: Vec<f64>,
    pub motion3: Vec<f64>,
}

/// integer_motion.c (3.2.0) `flush`: `sad` holds every frame's
/// VMAF_integer_feature_motion_sad_score (already weighted and clipped by
/// `extract`). With the five-frame window, scores start at frame 2 and
/// motion2 takes the smaller of the previous and the next frame's.
pub fn integer(sad: &[f64], p: &Params, five_frame_window: bool, moving_average: bool) -> Sequence {
    let n = sad.len();
    let (stride, min_idx) = if five_frame_window { (2, 2) } else { (1, 1) };
    let processed = |m: f64| min(blend(m, p.blend_factor, p.blend_offset), p.max_val);
    let stamp = if n > min_idx { processed(sad[min_idx]) } else { 0.0 };
    let mut out = Sequence { motion2: Vec::with_capacity(n), motion3: Vec::with_capacity(n) };
    let mut prev_processed = 0.0;
    for i in 0..n {
        let motion2 = if i < min_idx {
            0.0
        } else {
            let lo = i + 1 - stride;
            match sad.get(i + 1) {
                None => sad[i],
                Some(&hi) if lo >= min_idx => {
                    let lo = sad[lo];
                    if lo < hi { lo } else { hi }
                }
                Some(&hi) => hi,
            }
        };
        let motion3 = if i < min_idx {
            prev_processed = stamp;
            stamp
        } else {
            let processed = processed(motion2);
            let m = if moving_average { (processed + prev_processed) / 2.0 } else { processed };
            prev_processed = processed;
            m
        };
        out.motion2.push(motion2);
        out.motion3.push(motion3);
    }
    out
}

/// integer_motion_v2.c (the fork) `flush`: motion2 is the smaller of this
/// frame's and the next frame's score at every frame, frame 0 included.
pub fn integer_v2(sad: &[f64], p: &Params, moving_average: bool) -> Sequence {
    let n = sad.len();
    let processed = |m: f64| min(blend(m, p.blend_factor, p.blend_offset), p.max_val);
    let stamp = if n > 1 { processed(sad[1]) } else { 0.0 };
    let mut out = Sequence { motion2: Vec::with_capacity(n), motion3: Vec::with_capacity(n) };
    let mut prev_processed = 0.0;
    for i in 0..n {
        let cur = sad[i];
        let motion2 = match sad.get(i + 1) {
            Some(&next) => {
                if cur < next {
                    cur
                } else {
                    next
                }
            }
            None => cur,
        };
        let motion3 = if i < 1 {
            prev_processed = stamp;
            stamp
        } else {
            let processed = processed(motion2);
            let m = if moving_average { (processed + prev_processed) / 2.0 } else { processed };
            prev_processed = processed;
            m
        };
        out.motion2.push(motion2);
        out.motion3.push(motion3);
    }
    out
}

/// float_motion.c's scores, which its `extract` writes one frame late and
/// its `flush` completes: `score[i]` is the SAD of the blurred frames
/// `i - 1` and `i` (`score[0]` unused). Returns (motion, motion2, motion3).
/// With `motion_force_zero` everything is 0 (extract writes zeros; no
/// flush).
pub fn float(score: &[f64], p: &Params) -> (Vec<f64>, Sequence) {
    let n = score.len();
    if p.force_zero {
        return (vec![0.0; n], Sequence { motion2: vec![0.0; n], motion3: vec![0.0; n] });
    }
    let weigh = |s: f64| s * p.fps_weight;
    let clip = |s: f64| min(s, p.max_val);
    let blended = |s: f64| min(blend(weigh(s), p.blend_factor, p.blend_offset), p.max_val);
    let motion = (0..n).map(|i| if i == 0 { 0.0 } else { clip(weigh(score[i])) }).collect();
    let mut out = Sequence { motion2: vec![0.0; n], motion3: vec![0.0; n] };
    if n == 1 {
        // flush at index 0.
        return (motion, out);
    }
    // extract at index 1 stamps frame 0's motion3 with frame 1's score.
    out.motion3[0] = blended(score[1]);
    // extract at index k >= 2 completes frame k - 1.
    for k in 2..n {
        let (score2, score) = (score[k - 1], score[k]);
        let m = if score2 < score { score2 } else { score };
        out.motion2[k - 1] = clip(weigh(m));
        out.motion3[k - 1] = blended(m);
    }
    // flush at the last index.
    out.motion2[n - 1] = clip(weigh(score[n - 1]));
    out.motion3[n - 1] = blended(score[n - 1]);
    (motion, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params { force_zero: false, blend_factor: 1.0, blend_offset: 40.0, fps_weight: 1.0, max_val: 10000.0 }
    }

    #[test]
    fn integer_motion2_takes_the_next_frame_and_motion3_stamps_frame_0() {
        let sad = [0.0, 6.0, 7.0, 5.0, 8.0];
        let s = integer(&sad, &params(), false, false);
        assert_eq!(s.motion2, [0.0, 6.0, 5.0, 5.0, 8.0]);
        assert_eq!(s.motion3, [6.0, 6.0, 5.0, 5.0, 8.0]);
        // The fork's rule gives the same here (frame 0: min(0, 6) = 0).
        let v2 = integer_v2(&sad, &params(), false);
        assert_eq!((v2.motion2, v2.motion3), (s.motion2, s.motion3));
    }

    #[test]
    fn five_frame_window_uses_the_neighbours_two_apart_rule() {
        // Checked against vmaf 3.2.0 on testsrc2_200x184 (motion_five_frame_window=true).
        let sad = [0.0, 0.0, 11.373891, 11.419233, 11.316547, 11.664925];
        let s = integer(&sad, &params(), true, false);
        assert_eq!(s.motion2, [0.0, 0.0, 11.419233, 11.316547, 11.419233, 11.664925]);
        assert_eq!(s.motion3[..3], [11.373891, 11.373891, 11.419233]);
    }

    #[test]
    fn moving_average_averages_with_the_previous_processed_value() {
        let p = Params { blend_factor: 0.5, blend_offset: 6.3, ..params() };
        let sad = [0.0, 6.182347, 6.509952, 6.272506, 6.357564, 6.66696];
        let s = integer(&sad, &p, false, true);
        // vmaf 3.2.0: integer_motion3_mbf_0.5_mbo_6.3_mma
        for (got, want) in s.motion3.iter().zip([6.182347, 6.182347, 6.227426, 6.272506, 6.300644]) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn short_sequences() {
        let s = integer(&[0.0], &params(), false, false);
        assert_eq!((s.motion2, s.motion3), (vec![0.0], vec![0.0]));
        let s = integer(&[0.0, 3.0], &params(), false, false);
        assert_eq!((s.motion2, s.motion3), (vec![0.0, 3.0], vec![3.0, 3.0]));
        let (m, s) = float(&[0.0], &params());
        assert_eq!((m, s.motion2, s.motion3), (vec![0.0], vec![0.0], vec![0.0]));
        let (m, s) = float(&[0.0, 2.0], &params());
        assert_eq!((m, s.motion2, s.motion3), (vec![0.0, 2.0], vec![0.0, 2.0], vec![2.0, 2.0]));
    }

    #[test]
    fn float_motion_completes_each_frame_with_the_next() {
        let p = Params { fps_weight: 2.0, max_val: 13.0, ..params() };
        let (m, s) = float(&[0.0, 3.0, 7.0, 5.0], &p);
        assert_eq!(m, [0.0, 6.0, 13.0, 10.0]);
        assert_eq!(s.motion2, [0.0, 6.0, 10.0, 10.0]);
        assert_eq!(s.motion3, [6.0, 6.0, 10.0, 10.0]);
        let (m, s) = float(&[0.0, 3.0, 7.0], &Params { force_zero: true, ..p });
        assert!(m.iter().chain(&s.motion2).chain(&s.motion3).all(|&v| v == 0.0));
    }
}
