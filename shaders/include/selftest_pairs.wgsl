// The interface selftest_widen and selftest_float share (contracts:
// SELFTEST_WIDEN and SELFTEST_FLOAT in src/backend/selftest.rs): work item
// i < pc.n reads a[i] and b[i] (f32 bits) and writes its words of out.
struct Params {
    n: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
