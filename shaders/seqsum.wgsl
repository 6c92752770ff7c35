// seqsum: the per-sequence steps of the exact sequential sum (contract:
// SEQSUM in src/features/seqsum.rs, whose module doc explains why it is
// exact; `model` there is this kernel and seqsum_segments in Rust, step for
// step). WGSL for its 64-bit integers (shaders/README.md).
//
// One workgroup per sequence of f32 terms (workgroup g: sequence g), over
// its segments' records (written by seqsum_segments) in batches of WG
// copied into workgroup memory by all invocations. Phase 0, step 2:
// invocation 0 turns the running total into each segment's estimated
// binade at its start (written back to the records). Phase 1, step 4:
// invocation 0 walks the segments with the exact running sum: a segment at
// once where exact, else term by term with the accumulator's own addition
// (a float, precision 24: psnr_hvs.c's `ret`; or a double, 53: ciede.c's
// `de00_sum`; the running sum is kept as a double either way); the sum
// goes to `out`.

@group(0) @binding(0) var<storage, read> terms: array<f32>;
// Per sequence: first term, term count.
@group(0) @binding(1) var<storage, read> sums: array<u32>;
// Per segment: seqsum_segments' records (RECORD words).
@group(0) @binding(2) var<storage, read_write> segs: array<u32>;
// Per sequence: the sum's double bits (lo, hi).
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

struct Params {
    segment: u32,
    significand_bits: u32,
    phase: u32,
    sequences: u32,
}
var<immediate> pc: Params;

const WG: u32 = 256u;
const RECORD: u32 = 8u;
const NO_BINADE: i32 = -100000;

var<workgroup> totals: array<f64, 256>;
var<workgroup> binades: array<i32, 256>;
var<workgroup> d0s: array<u64, 256>;
var<workgroup> d1s: array<u64, 256>;

// The binade exponent of a positive finite double.
fn exponent(v: f64) -> i32 {
    return i32((bitcast<u64>(v) >> 52u) & 0x7FFlu) - 1023;
}

fn word64(at: u32) -> u64 {
    return (u64(segs[at + 1u]) << 32u) | u64(segs[at]);
}

// Terms loaded at a time, before their additions, by add_terms.
const BATCH: u32 = 32u;

// s + terms[b] + ... + terms[en - 1], one after another with the
// accumulator's own addition (a float's when f32_acc, else a double's).
// BATCH loads at a time before their additions, in order: one invocation
// alone walks these terms, and on a GPU its loads' latency, not the
// additions, would set the pace (an H100's Vulkan driver spent most of
// psnr_hvs's and ciede's time here with 8 at a time).
fn add_terms(b: u32, en: u32, s0: f64, f32_acc: bool) -> f64 {
    var i = b;
    var t: array<f32, BATCH>;
    if f32_acc {
        var sf = f32(s0);
        for (; i + BATCH <= en; i += BATCH) {
            for (var k = 0u; k < BATCH; k++) {
                t[k] = terms[i + k];
            }
            for (var k = 0u; k < BATCH; k++) {
                sf = sf + t[k];
            }
        }
        for (; i < en; i++) {
            sf = sf + terms[i];
        }
        return f64(sf);
    }
    var s = s0;
    for (; i + BATCH <= en; i += BATCH) {
        for (var k = 0u; k < BATCH; k++) {
            t[k] = terms[i + k];
        }
        for (var k = 0u; k < BATCH; k++) {
            s = s + f64(t[k]);
        }
    }
    for (; i < en; i++) {
        s = s + f64(terms[i]);
    }
    return s;
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let g = group.x;
    let lid = local.x;
    let first = sums[2u * g];
    let count = sums[2u * g + 1u];
    let segment = pc.segment;
    let nseg = (count + segment - 1u) / segment;
    // The first record of sequence g: after the segments of those before.
    var first_record = 0u;
    for (var h = 0u; h < g; h++) {
        first_record += (sums[2u * h + 1u] + segment - 1u) / segment;
    }
    let p = i32(pc.significand_bits);
    let f32_acc = pc.significand_bits == 24u;
    let min_exponent = select(-1022, -126, f32_acc);
    var estimate = 0.0lf; // invocation 0's
    var s = 0.0lf; // invocation 0's: the exact running sum

    for (var base = 0u; base < nseg; base += WG) {
        let k = base + lid;
        let batch = min(nseg - base, WG);
        let rec = RECORD * (first_record + k);
        if pc.phase == 0u {
            if k < nseg {
                totals[lid] = bitcast<f64>(word64(rec));
            }
            workgroupBarrier();
            // 2. Each segment's estimated binade at its start.
            if lid == 0u {
                for (var j = 0u; j < batch; j++) {
                    binades[j] = select(NO_BINADE, exponent(estimate), estimate > 0.0lf);
                    estimate += totals[j];
                }
            }
            workgroupBarrier();
            if k < nseg {
                segs[rec + 2u] = bitcast<u32>(binades[lid]);
            }
        } else {
            if k < nseg {
                binades[lid] = bitcast<i32>(segs[rec + 2u]);
                d0s[lid] = word64(rec + 4u);
                d1s[lid] = word64(rec + 6u);
            }
            workgroupBarrier();
            // 4. The walk.
            if lid == 0u {
                for (var j = 0u; j < batch; j++) {
                    let kj = base + j;
                    var fast = false;
                    if s > 0.0lf && s <= 1.7976931348623157e308lf {
                        let e = exponent(s);
                        if e >= min_exponent && e == binades[j] {
                            let one = 1lu << u32(p - 1);
                            let m = ((bitcast<u64>(s) & 0xFFFFFFFFFFFFFlu) >> u32(53 - p)) | one;
                            let m2 = m + select(d1s[j], d0s[j], (m & 1lu) == 0lu);
                            if m2 < (one << 1u) {
                                s = bitcast<f64>((u64(e + 1023) << 52u) | ((m2 - one) << u32(53 - p)));
                                fast = true;
                            }
                        }
                    }
                    if !fast {
                        let b = first + kj * segment;
                        let en = select(b + segment, first + count, kj + 1u == nseg);
                        s = add_terms(b, en, s, f32_acc);
                    }
                }
            }
        }
        workgroupBarrier(); // the batch's workgroup arrays may be refilled
    }
    if pc.phase == 1u && lid == 0u {
        let bits = bitcast<u64>(s);
        out[2u * g] = u32(bits & 0xFFFFFFFFlu);
        out[2u * g + 1u] = u32(bits >> 32u);
    }
}
