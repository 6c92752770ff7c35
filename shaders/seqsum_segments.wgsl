// seqsum_segments: the per-segment steps of the exact sequential sum
// (contract: SEQSUM_SEGMENTS in src/features/seqsum.rs, whose module doc
// explains why it is exact; `model` there is this kernel in Rust). WGSL for
// its 64-bit integers (shaders/README.md).
//
// One workgroup per segment of every sequence (workgroup k: record k of
// `segs`). Phase 0, step 1: the segment's total in double (the
// invocations' strided partial sums, then a tree: any order would do, it is
// only an estimate). Phase 1, step 3: the segment's increments in its
// record's estimated binade from an even and from an odd m: each
// invocation takes a contiguous chunk for both parities at its start, then
// a tree composes the chunks in order (exact: saturating sums of
// non-negative increments and parities compose associatively;
// `seqsum::summary_tree` is this in Rust).

@group(0) @binding(0) var<storage, read> terms: array<f32>;
// Per sequence: first term, term count.
@group(0) @binding(1) var<storage, read> sums: array<u32>;
// Per segment of every sequence, RECORD words: its total's double bits
// (lo, hi), its estimated binade, a spare word, Δ0 and Δ1 (lo, hi each).
@group(0) @binding(2) var<storage, read_write> segs: array<u32>;

struct Params {
    segment: u32,
    significand_bits: u32,
    phase: u32,
    sequences: u32,
}
var<immediate> pc: Params;

const WG: u32 = 256u;
const RECORD: u32 = 8u;
const SATURATED: u64 = 0x4000000000000000lu;

var<workgroup> totals: array<f64, 256>;
// Per chunk, for an m even (index i) and odd (WG + i) at its start: the
// increments (d) and the parity after it (q).
var<workgroup> d: array<u64, 512>;
var<workgroup> q: array<u32, 512>;

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

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let k = group.x;
    let lid = local.x;
    let segment = pc.segment;
    // The sequence and segment of record k.
    var rest = k;
    var g = 0u;
    var nseg = 0u;
    for (; g < pc.sequences; g++) {
        nseg = (sums[2u * g + 1u] + segment - 1u) / segment;
        if rest < nseg {
            break;
        }
        rest -= nseg;
    }
    let begin = sums[2u * g] + rest * segment;
    let end = select(begin + segment, sums[2u * g] + sums[2u * g + 1u], rest + 1u == nseg);
    let rec = RECORD * k;
    if pc.phase == 0u {
        var total = 0.0lf;
        for (var i = begin + lid; i < end; i += WG) {
            total += f64(terms[i]);
        }
        totals[lid] = total;
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s >>= 1u) {
            if lid < s {
                totals[lid] = totals[lid] + totals[lid + s];
            }
            workgroupBarrier();
        }
        if lid == 0u {
            let bits = bitcast<u64>(totals[0]);
            segs[rec] = u32(bits & 0xFFFFFFFFlu);
            segs[rec + 1u] = u32(bits >> 32u);
        }
        return;
    }
    let e = bitcast<i32>(segs[rec + 2u]);
    let p = i32(pc.significand_bits);
    let chunk = (end - begin + WG - 1u) / WG;
    let cb = min(begin + lid * chunk, end);
    let ce = min(cb + chunk, end);
    var d0 = 0lu;
    var d1 = 0lu;
    var par0 = 0lu;
    var par1 = 1lu;
    for (var i = cb; i < ce; i++) {
        let inc = increment(bitcast<u32>(terms[i]), e, p);
        let inc0 = step(inc, par0);
        let inc1 = step(inc, par1);
        d0 = sat_add(d0, inc0);
        d1 = sat_add(d1, inc1);
        par0 = (par0 + inc0) & 1lu;
        par1 = (par1 + inc1) & 1lu;
    }
    d[lid] = d0;
    d[WG + lid] = d1;
    q[lid] = u32(par0);
    q[WG + lid] = u32(par1);
    workgroupBarrier();
    for (var s = 1u; s < WG; s <<= 1u) {
        // Chunks A = lid then B = lid + s, for an m of parity p at A's
        // start: Δ = sat(ΔA(p) + ΔB(qA(p))), parity after: qB(qA(p)).
        if (lid & (2u * s - 1u)) == 0u {
            let a = lid;
            let b = lid + s;
            let qa0 = q[a];
            let qa1 = q[WG + a];
            let n0 = sat_add(d[a], d[qa0 * WG + b]);
            let n1 = sat_add(d[WG + a], d[qa1 * WG + b]);
            let r0 = q[qa0 * WG + b];
            let r1 = q[qa1 * WG + b];
            d[a] = n0;
            d[WG + a] = n1;
            q[a] = r0;
            q[WG + a] = r1;
        }
        workgroupBarrier();
    }
    if lid == 0u {
        segs[rec + 4u] = u32(d[0] & 0xFFFFFFFFlu);
        segs[rec + 5u] = u32(d[0] >> 32u);
        segs[rec + 6u] = u32(d[WG] & 0xFFFFFFFFlu);
        segs[rec + 7u] = u32(d[WG] >> 32u);
    }
}
