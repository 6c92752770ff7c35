//! Per-metric comparison of two sides' per-frame values.

use crate::report::model::MetricDiff;

/// Compares `a` and `b` frame by frame against an absolute tolerance.
/// A non-finite value on either side is a mismatch, never OK.
pub fn diff_metric(a: &[f64], b: &[f64], tolerance: f64) -> MetricDiff {
    let mut d = MetricDiff::default();
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        if !x.is_finite() || !y.is_finite() {
            d.mismatches += 1;
            d.non_finite += 1;
            d.first_non_finite_frame.get_or_insert(i);
            continue;
        }
        let diff = (x - y).abs();
        if diff > tolerance {
            d.mismatches += 1;
        }
        if d.max_abs_diff.is_none_or(|m| diff > m) {
            d.max_abs_diff = Some(diff);
            d.worst_frame = Some(i);
            d.worst_a = Some(x);
            d.worst_b = Some(y);
        }
        let ulp = ulp_distance_f32(x, y);
        d.max_ulp_f32 = Some(d.max_ulp_f32.map_or(ulp, |m| m.max(ulp)));
    }
    d
}

/// Per-frame |a − b| (None where either side is non-finite), for charts.
pub fn abs_diff_series(a: &[f64], b: &[f64]) -> Vec<Option<f64>> {
    a.iter().zip(b).map(|(&x, &y)| (x.is_finite() && y.is_finite()).then(|| (x - y).abs())).collect()
}

/// How many f32 values lie between `a` and `b` once both are rounded to
/// f32: the unit GPU kernels compute in (ADR-0234 speaks of ULPs in fp32).
pub fn ulp_distance_f32(a: f64, b: f64) -> u64 {
    fn ordered(v: f32) -> i64 {
        let bits = v.to_bits() as i32;
        // Map sign-magnitude to a monotonic integer line (-0.0 == +0.0).
        i64::from(if bits < 0 { i32::MIN.wrapping_sub(bits) } else { bits })
    }
    ordered(a as f32).abs_diff(ordered(b as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_mismatches_and_finds_the_worst_frame() {
        let d = diff_metric(&[1.0, 2.0, 3.0], &[1.0, 2.1, 3.00001], 1e-3);
        assert_eq!(d.mismatches, 1);
        assert_eq!(d.worst_frame, Some(1));
        assert!((d.max_abs_diff.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!((d.worst_a, d.worst_b), (Some(2.0), Some(2.1)));
    }

    #[test]
    fn non_finite_is_a_mismatch_even_on_both_sides() {
        let d = diff_metric(&[f64::NAN, 1.0, f64::INFINITY], &[f64::NAN, 1.0, f64::INFINITY], 1.0);
        assert_eq!((d.mismatches, d.non_finite, d.first_non_finite_frame), (2, 2, Some(0)));
        assert_eq!(d.max_abs_diff, Some(0.0));
    }

    #[test]
    fn equal_within_tolerance_is_not_a_mismatch() {
        let d = diff_metric(&[1.0], &[1.0 + 5e-5], 5e-5 + 1e-12);
        assert_eq!(d.mismatches, 0);
    }

    #[test]
    fn ulps() {
        assert_eq!(ulp_distance_f32(1.0, 1.0), 0);
        assert_eq!(ulp_distance_f32(1.0, f64::from(f32::from_bits(1.0f32.to_bits() + 3))), 3);
        assert_eq!(ulp_distance_f32(0.0, -0.0), 0);
        assert_eq!(ulp_distance_f32(f64::from(f32::from_bits(1)), -f64::from(f32::from_bits(1))), 2);
    }
}
