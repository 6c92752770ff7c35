// ssim_exact_segments: steps 1 and 2 of libvmaf's sequential sum made in
// parallel for the metrics ssim_total could not decide (contract:
// SSIM_EXACT_SEGMENTS in src/features/ssim/exact.rs; `model` there is
// this kernel's two phases and ssim_exact_walk in Rust). WGSL for its
// 64-bit integers (shaders/README.md).
//
// Work group g takes segments g, g + groups, ... of every flagged entry.
// Phase 0: the segment's total (strided partial sums, then a tree: only an
// estimate), into its record's words 0-1. Phase 1: the estimated binade at
// the segment's start (of the totals before it, in any order), then the
// segment's Summary in it: each invocation its 4 contiguous terms,
// composed by a tree (strides 1, 2, 4, ...; exact and associative), into
// words 2-15.

@group(0) @binding(0) var<storage, read> terms: array<u32>;
@group(0) @binding(1) var<storage, read> entries: array<u32>;
@group(0) @binding(2) var<storage, read> results: array<u32>;
@group(0) @binding(3) var<storage, read_write> records: array<u32>;

struct Params {
    count: u32,
    groups: u32,
    phase: u32,
}
var<immediate> pc: Params;

#include "ssim_exact.wgsl"

var<workgroup> red: array<f64, 256>;
var<workgroup> tree: array<Summary, 256>;
var<workgroup> binade: i32;

fn record64(at: u32) -> u64 {
    return (u64(records[at + 1u]) << 32u) | u64(records[at]);
}

fn put64(at: u32, v: u64) {
    records[at] = u32(v & 0xFFFFFFFFlu);
    records[at + 1u] = u32(v >> 32u);
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
            let w = RECORD * (first + j);
            // Phase 0: the segment's terms; phase 1: the totals before it.
            var s = 0.0lf;
            if pc.phase == 0u {
                let end = min(n, (j + 1u) * SEGMENT);
                for (var i = j * SEGMENT + lid; i < end; i += WG) {
                    s = s + term_at(terms_at + i);
                }
            } else {
                for (var i = lid; i < j; i += WG) {
                    s = s + bitcast<f64>(record64(RECORD * (first + i)));
                }
            }
            red[lid] = s;
            workgroupBarrier();
            for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
                if lid < stride {
                    red[lid] = red[lid] + red[lid + stride];
                }
                workgroupBarrier();
            }
            if pc.phase == 0u {
                if lid == 0u {
                    put64(w, bitcast<u64>(red[0]));
                }
                workgroupBarrier();
                continue;
            }
            if lid == 0u {
                binade = decompose(red[0]).e;
            }
            let be = workgroupUniformLoad(&binade);
            var acc = empty(be == NO_BINADE);
            let at = j * SEGMENT + PER_ITEM * lid;
            if be != NO_BINADE {
                for (var k = 0u; k < PER_ITEM; k++) {
                    if at + k < n {
                        acc = then(acc, term(term_at(terms_at + at + k), be));
                    }
                }
            }
            tree[lid] = acc;
            workgroupBarrier();
            for (var stride = 1u; stride < WG; stride <<= 1u) {
                if lid % (2u * stride) == 0u {
                    tree[lid] = then(tree[lid], tree[lid + stride]);
                }
                workgroupBarrier();
            }
            if lid == 0u {
                let r = tree[0];
                records[w + 2u] = bitcast<u32>(be);
                records[w + 3u] = r.bad;
                put64(w + 4u, bitcast<u64>(r.d0));
                put64(w + 6u, bitcast<u64>(r.d1));
                put64(w + 8u, bitcast<u64>(r.lo0));
                put64(w + 10u, bitcast<u64>(r.lo1));
                put64(w + 12u, bitcast<u64>(r.hi0));
                put64(w + 14u, bitcast<u64>(r.hi1));
            }
            workgroupBarrier();
        }
    }
}
