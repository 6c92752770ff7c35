// selftest_widen: widen() (shaders/include/widen.wgsl) and the product of
// two widened floats, the double arithmetic the ciede and SSIM kernels do
// on floats, so each device can be held to Rust's exact conversion and
// product (contract: SELFTEST_WIDEN in src/backend/selftest.rs;
// `ulpgate devices --check` runs it). Work item i reads a[i] and b[i] (f32
// bits) and writes
//   out[4i..4i+2]   = widen(a) (f64 bits, lo, hi)
//   out[4i+2..4i+4] = widen(a) * widen(b) (exact in double)
#include "selftest_pairs.wgsl"

#include "widen.wgsl"

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= pc.n {
        return;
    }
    let x = widen(bitcast<f32>(a[i]));
    let product = x * widen(bitcast<f32>(b[i]));
    let xb = bitcast<u64>(x);
    let pb = bitcast<u64>(product);
    out[4u * i] = u32(xb & 0xfffffffflu);
    out[4u * i + 1u] = u32(xb >> 32u);
    out[4u * i + 2u] = u32(pb & 0xfffffffflu);
    out[4u * i + 3u] = u32(pb >> 32u);
}
