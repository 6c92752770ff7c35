// selftest_int64: the 64-bit integer operations the integer kernels (VIF,
// ADM) are built from, in the WGSL dialect, so a test can hold each backend
// to Rust's u64/i64 arithmetic (contract: SELFTEST_INT64 in
// src/backend/selftest.rs). Work item i reads a[i] (u32) and b[i] (i32):
//   out[4i..4i+2] = a * a as u64 (lo, hi)
//   out[4i+2..4i+4] = (b * a as i64 + 2^(shift-1)) >> shift, arithmetic
//                     (lo, hi)
// and clz[i] = the leading zeros of a * a as a u64.
struct Params {
    n: u32,
    shift: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<storage, read_write> clz: array<u32>;

// Leading zeros of a u64. naga's SPIR-V writer has no 64-bit
// countLeadingZeros (it panics: gfx-rs/wgpu#5276), so it is taken from the
// two 32-bit halves; every 64-bit kernel spells it this way.
fn clz64(x: u64) -> u32 {
    let hi = u32(x >> 32u);
    if (hi != 0u) {
        return countLeadingZeros(hi);
    }
    return 32u + countLeadingZeros(u32(x & 0xfffffffflu));
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= pc.n) {
        return;
    }
    let x = u64(a[i]);
    let square = x * x;
    let product = i64(b[i]) * i64(x);
    let rounded = (product + (1li << (pc.shift - 1u))) >> pc.shift;
    out[4u * i] = u32(square & 0xfffffffflu);
    out[4u * i + 1u] = u32(square >> 32u);
    let bits = bitcast<u64>(rounded);
    out[4u * i + 2u] = u32(bits & 0xfffffffflu);
    out[4u * i + 3u] = u32(bits >> 32u);
    clz[i] = clz64(square);
}
