// ssim_exact_totals: step 1 of libvmaf's sequential sum made in parallel
// for the metrics ssim_total could not decide (contract: SSIM_EXACT_TOTALS
// in src/features/ssim/exact.rs; `model` there is the three ssim_exact
// kernels in Rust). WGSL for its 64-bit integers (shaders/README.md).
//
// Work group g takes segments g, g + groups, ... of every flagged entry:
// their totals (strided partial sums, then a tree: only an estimate), into
// the records' words 0-1.

@group(0) @binding(0) var<storage, read> terms: array<u32>;
@group(0) @binding(1) var<storage, read> entries: array<u32>;
@group(0) @binding(2) var<storage, read> results: array<u32>;
@group(0) @binding(3) var<storage, read_write> records: array<u32>;

struct Params {
    count: u32,
    groups: u32,
}
var<immediate> pc: Params;

#include "ssim_exact.wgsl"

var<workgroup> red: array<f64, 256>;

fn word64(at: u32) -> u64 {
    return (u64(terms[at + 1u]) << 32u) | u64(terms[at]);
}

// Entry e's flag (results[5 e + 4], a double): 1.0 where ssim_total could
// not decide the mean.
fn flagged(e: u32) -> bool {
    return results[10u * e + 9u] != 0u || results[10u * e + 8u] != 0u;
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let lid = local.x;
    for (var e = 0u; e < pc.count; e++) {
        if !flagged(e) {
            continue;
        }
        let terms_at = entries[ENTRY * e];
        let n = entries[ENTRY * e + 2u] * entries[ENTRY * e + 3u];
        let first = entries[ENTRY * e + 5u];
        let segs = (n + SEGMENT - 1u) / SEGMENT;
        for (var j = group.x; j < segs; j += pc.groups) {
            let end = min(n, (j + 1u) * SEGMENT);
            var s = 0.0lf;
            for (var i = j * SEGMENT + lid; i < end; i += WG) {
                s = s + bitcast<f64>(word64(2u * (terms_at + i)));
            }
            red[lid] = s;
            workgroupBarrier();
            for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
                if lid < stride {
                    red[lid] = red[lid] + red[lid + stride];
                }
                workgroupBarrier();
            }
            if lid == 0u {
                let bits = bitcast<u64>(red[0]);
                records[RECORD * (first + j)] = u32(bits & 0xFFFFFFFFlu);
                records[RECORD * (first + j) + 1u] = u32(bits >> 32u);
            }
            workgroupBarrier();
        }
    }
}
