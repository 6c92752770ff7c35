// selftest_float: float products and sums, subnormal operands and results
// included, so each device can be held to Rust's f32 arithmetic (contract:
// SELFTEST_FLOAT in src/backend/selftest.rs; `ulpgate devices --check`
// runs it). A driver that flushes float subnormals to zero (NVIDIA's
// Vulkan driver does, and offers no shaderDenormPreserveFloat32) differs
// here. Work item i reads a[i] and b[i] (f32 bits) and writes
//   out[2i]     = a * b (f32 bits)
//   out[2i + 1] = a + b (f32 bits)
#include "selftest_pairs.wgsl"

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= pc.n {
        return;
    }
    let x = bitcast<f32>(a[i]);
    let y = bitcast<f32>(b[i]);
    out[2u * i] = bitcast<u32>(x * y);
    out[2u * i + 1u] = bitcast<u32>(x + y);
}
