// ssim_exact_walk: step 3 of libvmaf's sequential sum made in parallel
// for the metrics ssim_total could not decide (contract: SSIM_EXACT_WALK
// in src/features/ssim/exact.rs; `model` there is ssim_exact_segments
// and this kernel in Rust). WGSL for its 64-bit integers.
//
// Work group e, for a flagged entry: invocation 0 walks the segments with
// the exact running sum from 0, each at once where the sum is in its
// estimated binade and its prefixes keep m inside (exact.rs
// Summary::apply), else term by term with the double addition, the
// workgroup staging the segment's terms; records are staged 256 at a time.
// The sum goes to results[5 e + 3].

@group(0) @binding(0) var<storage, read> terms: array<u32>;
@group(0) @binding(1) var<storage, read> entries: array<u32>;
@group(0) @binding(2) var<storage, read_write> results: array<u32>;
@group(0) @binding(3) var<storage, read> records: array<u32>;

struct Params {
    count: u32,
}
var<immediate> pc: Params;

#include "ssim_exact.wgsl"

var<workgroup> sums: array<Summary, 256>;
var<workgroup> binades: array<i32, 256>;
var<workgroup> chunk: array<f64, 1024>;
var<workgroup> slow_at: u32;
var<workgroup> flag: u32;

fn record64(at: u32) -> i64 {
    return bitcast<i64>((u64(records[at + 1u]) << 32u) | u64(records[at]));
}

// Terms loaded at a time from workgroup memory, before their additions.
const BATCH: u32 = 8u;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let e = group.x;
    let lid = local.x;
    if e >= pc.count {
        return;
    }
    if lid == 0u {
        flag = select(0u, 1u, flagged(e));
    }
    if workgroupUniformLoad(&flag) == 0u {
        return;
    }
    let terms_at = entries[ENTRY * e];
    let n = entries[ENTRY * e + 2u] * entries[ENTRY * e + 3u];
    let first = entries[ENTRY * e + 5u];
    let segs = (n + SEGMENT - 1u) / SEGMENT;
    var s = 0.0lf; // invocation 0's exact running sum
    for (var base = 0u; base < segs; base += WG) {
        let batch = min(segs - base, WG);
        if lid < batch {
            let w = RECORD * (first + base + lid);
            binades[lid] = bitcast<i32>(records[w + 2u]);
            sums[lid] = Summary(
                records[w + 3u],
                record64(w + 4u),
                record64(w + 6u),
                record64(w + 8u),
                record64(w + 10u),
                record64(w + 12u),
                record64(w + 14u),
            );
        }
        workgroupBarrier();
        var j = 0u; // invocation 0's
        loop {
            if lid == 0u {
                loop {
                    if j >= batch {
                        break;
                    }
                    let d = decompose(s);
                    let r = sums[j];
                    if d.e == NO_BINADE || d.e != binades[j] || r.bad != 0u {
                        break;
                    }
                    let odd = (d.m & 1li) == 1li;
                    let lo = d.m + select(r.lo0, r.lo1, odd);
                    let hi = d.m + select(r.hi0, r.hi1, odd);
                    if !(lo > LOW && hi < HIGH) {
                        break;
                    }
                    s = compose(d.e, d.m + select(r.d0, r.d1, odd));
                    j++;
                }
                slow_at = j;
            }
            let js = workgroupUniformLoad(&slow_at);
            if js >= batch {
                break;
            }
            // A slow segment: libvmaf's additions, one after the other.
            let b = (base + js) * SEGMENT;
            let count = min(n - b, SEGMENT);
            for (var i = lid; i < count; i += WG) {
                chunk[i] = term_at(terms_at + b + i);
            }
            workgroupBarrier();
            if lid == 0u {
                var i = 0u;
                var t: array<f64, BATCH>;
                for (; i + BATCH <= count; i += BATCH) {
                    for (var k = 0u; k < BATCH; k++) {
                        t[k] = chunk[i + k];
                    }
                    for (var k = 0u; k < BATCH; k++) {
                        s = s + t[k];
                    }
                }
                for (; i < count; i++) {
                    s = s + chunk[i];
                }
                j = js + 1u;
            }
            workgroupBarrier(); // chunk and slow_at are written again
        }
        workgroupBarrier(); // the batch's records are staged again
    }
    if lid == 0u {
        let bits = bitcast<u64>(s);
        results[10u * e + 6u] = u32(bits & 0xFFFFFFFFlu);
        results[10u * e + 7u] = u32(bits >> 32u);
    }
}
