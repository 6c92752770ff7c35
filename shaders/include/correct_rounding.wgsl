// Correctly rounded division and square root on any Vulkan device, for
// kernels whose C divides doubles and takes float roots: `div_rn(a, b)`
// (f64) and `sqrt_rn(x)` (f32). Include widen.wgsl before this file.
// ieee_rounding.wgsl has the same two functions for llvmpipe.
//
// Vulkan only promises 2.5 ULP for a float division and less for sqrt and
// double division, and GPUs use such fast sequences. So `div_rn` and
// `sqrt_rn` take the device's result and correct it to the correctly
// rounded one with exact arithmetic (products and differences that fit a
// double, which Vulkan rounds correctly): the same bits as C on any device.
// A float division is done as a correctly rounded double division then
// rounded to float, the same as a correctly rounded float division (a
// double has more than 2 * 24 + 2 bits).

// The next double above / below a finite x.
fn next_up(x: f64) -> f64 {
    if (x == 0.0lf) {
        return bitcast<f64>(1lu);
    }
    let b = bitcast<u64>(x);
    if (x > 0.0lf) {
        return bitcast<f64>(b + 1lu);
    }
    return bitcast<f64>(b - 1lu);
}

fn next_down(x: f64) -> f64 {
    return -next_up(-x);
}

fn odd(x: f64) -> bool {
    return (bitcast<u64>(x) & 1lu) == 1lu;
}

// a - q * b exactly, for b with at most 24 significant bits (a widened
// float) and q within a few units in the last place of a / b: q is split in
// halves of 26 and 27 bits (Veltkamp), whose products with b fit a double,
// and each difference is exact (Sterbenz; the result fits a double).
fn residual(a: f64, b: f64, q: f64) -> f64 {
    let c = q * 134217729.0lf;
    let qh = c - (c - q);
    let ql = q - qh;
    return (a - qh * b) - ql * b;
}

// Whether q is a / b correctly rounded (ties to even): the residual r (a /
// b = q + r / b) is below half the gap to each neighbour, times b (exact:
// a power of two times b). 1: step up, -1: step down, 0: q is right.
fn rn_step(a: f64, b: f64, q: f64) -> i32 {
    let r = residual(a, b, q);
    let half_up = (next_up(q) - q) * 0.5lf * b;
    let half_dn = (q - next_down(q)) * 0.5lf * b;
    if (r > half_up || (r == half_up && odd(q))) {
        return 1;
    }
    if (-r > half_dn || (-r == half_dn && odd(q))) {
        return -1;
    }
    return 0;
}

// a / b correctly rounded (ties to even), for b > 0 a widened float.
fn div_rn(a: f64, b: f64) -> f64 {
    var q = a / b;
    if (q == 0.0lf) {
        return q;
    }
    // A correctly rounded device stops here; the correctly rounded
    // quotient is unique, so the slower path below would return this same
    // q. (On llvmpipe, which runs every path for all lanes, the check and
    // the path still cost half of ssim_vertical_strips: ieee_rounding.wgsl.)
    if (rn_step(a, b, q) == 0) {
        return q;
    }
    // One Newton step brings a poor division within an ulp or two.
    q = q + residual(a, b, q) / b;
    for (var i = 0; i < 4; i++) {
        let step = rn_step(a, b, q);
        if (step == 0) {
            break;
        }
        q = select(next_down(q), next_up(q), step > 0);
    }
    return q;
}

// sqrt(x) correctly rounded to float, for x >= 0 (C: (float)sqrt(x)): the
// device's square root, stepped while x lies beyond the midpoint to a
// neighbour (midpoints have 25 bits: their squares are exact doubles, and
// never equal a float, so there are no ties).
fn sqrt_rn(x: f32) -> f32 {
    var r = f32(sqrt(widen(x)));
    if (!(x > 0.0)) {
        return r;
    }
    let xd = widen(x);
    for (var i = 0; i < 4; i++) {
        let up = bitcast<f32>(bitcast<u32>(r) + 1u);
        let mu = (widen(r) + widen(up)) * 0.5lf;
        if (xd > mu * mu) {
            r = up;
            continue;
        }
        let dn = bitcast<f32>(bitcast<u32>(r) - 1u);
        let md = (widen(r) + widen(dn)) * 0.5lf;
        if (xd < md * md) {
            r = dn;
            continue;
        }
        break;
    }
    return r;
}
