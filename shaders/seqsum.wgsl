// seqsum: a sequential floating-point sum reproduced exactly (contract:
// SEQSUM in src/features/seqsum.rs, whose module doc explains why it is
// exact; `model` there is this kernel in Rust, step for step). WGSL for
// its 64-bit integers (shaders/README.md).
//
// One work group per sequence of f32 terms. The accumulator is a float
// (precision 24: psnr_hvs.c's `ret`) or a double (53: ciede.c's
// `de00_sum`); the running sum is kept as a double either way.

@group(0) @binding(0) var<storage, read> terms: array<f32>;
// Per sequence: first term, term count.
@group(0) @binding(1) var<storage, read> sums: array<u32>;
// Per sequence: the sum's double bits (lo, hi).
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

struct Params {
    segment: u32,
    significand_bits: u32,
}
var<immediate> pc: Params;

const WG: u32 = 256u;
const SATURATED: u64 = 0x4000000000000000lu;
const NO_BINADE: i32 = -100000;

var<workgroup> totals: array<f64, 256>;
var<workgroup> binades: array<i32, 256>;
var<workgroup> d0s: array<u64, 256>;
var<workgroup> d1s: array<u64, 256>;

// The binade exponent of a positive finite double.
fn exponent(v: f64) -> i32 {
    return i32((bitcast<u64>(v) >> 52u) & 0x7FFlu) - 1023;
}

// A term's increment of m in binade e (unit 2^(e - p + 1)): a, and half
// -1, 0 or 1 as the remainder is below, at or above half a unit.
// SATURATED for a negative or non-finite term (src: `increment`).
struct Increment {
    a: u64,
    half: i32,
}

fn increment(bits: u32, e: i32, p: i32) -> Increment {
    let biased = i32((bits >> 23u) & 0xFFu);
    if (bits >> 31u) != 0u || biased == 0xFF {
        return Increment(select(SATURATED, 0lu, bits == 0x80000000u), -1);
    }
    let man = select((bits & 0x7FFFFFu) | 0x800000u, bits & 0x7FFFFFu, biased == 0);
    let q = select(biased - 150, -149, biased == 0);
    let d = q - e + p - 1;
    if man == 0u {
        return Increment(0lu, -1);
    }
    if d >= 0 {
        if d > 38 {
            return Increment(SATURATED, -1);
        }
        let shifted = u64(man) << u32(d);
        return Increment(select(shifted, SATURATED, shifted > SATURATED), -1);
    }
    let sh = u32(-d);
    if sh > 25u {
        return Increment(0lu, -1);
    }
    // The remainder's bits moved to the top of the word, where half a unit
    // is 2^31 (1 <= sh <= 25). Not the C dialect's `man & ((1u << sh) - 1u)`
    // against `1u << (sh - 1u)`: with that, NVIDIA's Vulkan driver failed to
    // build the pipeline (shaders/README.md).
    let top = man << (32u - sh);
    var half = 1;
    if top < 0x80000000u {
        half = -1;
    } else if top == 0x80000000u {
        half = 0;
    }
    return Increment(u64(man >> sh), half);
}

fn sat_add(x: u64, y: u64) -> u64 {
    let t = x + y;
    return select(t, SATURATED, t > SATURATED);
}

// m + increment, the tie to even decided by the parity of m + a.
fn step(inc: Increment, parity: u64) -> u64 {
    if inc.half < 0 {
        return inc.a;
    }
    if inc.half > 0 {
        return inc.a + 1lu;
    }
    return inc.a + ((parity + inc.a) & 1lu);
}

// Group g sums sequence g, segment by segment, in batches of WG segments
// kept in workgroup memory: (1) each invocation totals one segment in
// double, (2) invocation 0 turns the running total into each segment's
// estimated binade, (3) each invocation computes its segment's increments
// in that binade from an even and from an odd m, (4) invocation 0 walks
// the batch with the exact running sum: a segment at once where exact,
// else term by term with the accumulator's own addition.
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let g = group.x;
    let lid = local.x;
    let first = sums[2u * g];
    let count = sums[2u * g + 1u];
    let segment = pc.segment;
    let nseg = (count + segment - 1u) / segment;
    let p = i32(pc.significand_bits);
    let f32_acc = pc.significand_bits == 24u;
    let min_exponent = select(-1022, -126, f32_acc);
    var estimate = 0.0lf; // invocation 0's
    var s = 0.0lf; // invocation 0's: the exact running sum

    for (var base = 0u; base < nseg; base += WG) {
        let k = base + lid;
        let begin = first + k * segment;
        let end = select(begin, select(begin + segment, first + count, k + 1u == nseg), k < nseg);
        // 1. The segment's total (an estimate: any order would do).
        if k < nseg {
            var total = 0.0lf;
            for (var i = begin; i < end; i++) {
                total += f64(terms[i]);
            }
            totals[lid] = total;
        }
        workgroupBarrier();
        // 2. Each segment's estimated binade at its start.
        let batch = min(nseg - base, WG);
        if lid == 0u {
            for (var j = 0u; j < batch; j++) {
                binades[j] = select(NO_BINADE, exponent(estimate), estimate > 0.0lf);
                estimate += totals[j];
            }
        }
        workgroupBarrier();
        // 3. Increments in that binade, from an even and from an odd m.
        if k < nseg {
            let e = binades[lid];
            var d0 = 0lu;
            var d1 = 0lu;
            var par0 = 0lu;
            var par1 = 1lu;
            for (var i = begin; i < end; i++) {
                let inc = increment(bitcast<u32>(terms[i]), e, p);
                let inc0 = step(inc, par0);
                let inc1 = step(inc, par1);
                d0 = sat_add(d0, inc0);
                d1 = sat_add(d1, inc1);
                par0 = (par0 + inc0) & 1lu;
                par1 = (par1 + inc1) & 1lu;
            }
            d0s[lid] = d0;
            d1s[lid] = d1;
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
                    if f32_acc {
                        var sf = f32(s);
                        for (var i = b; i < en; i++) {
                            sf = sf + terms[i];
                        }
                        s = f64(sf);
                    } else {
                        for (var i = b; i < en; i++) {
                            s = s + f64(terms[i]);
                        }
                    }
                }
            }
        }
        workgroupBarrier(); // the batch's workgroup arrays may be refilled
    }
    if lid == 0u {
        let bits = bitcast<u64>(s);
        out[2u * g] = u32(bits & 0xFFFFFFFFlu);
        out[2u * g + 1u] = u32(bits >> 32u);
    }
}
