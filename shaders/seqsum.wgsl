// seqsum: the per-sequence steps of the exact sequential sum (contract:
// SEQSUM in src/features/seqsum.rs, whose module doc explains why it is
// exact; `model` there is this kernel and seqsum_segments in Rust, step for
// step but for the order in which step 2 adds the totals). WGSL for its
// 64-bit integers (shaders/README.md).
//
// One workgroup per sequence of f32 terms (workgroup g: sequence g), over
// its segments' records (written by seqsum_segments) in batches of WG
// copied into workgroup memory by all invocations. Phase 0, step 2: each
// segment's estimated binade at its start, from a scan of the segment
// totals (in tree order: it is only an estimate), written back to the
// records. Phase 1, step 4: invocation 0 walks the segments with the exact
// running sum: many segments at once where exact, else term by term with
// the accumulator's own addition (a float, precision 24: psnr_hvs.c's
// `ret`; or a double, 53: ciede.c's `de00_sum`; the running sum is kept as
// a double either way); the sum goes to `out`.
//
// Both phases used to be one invocation's loop over the ~2,000 segments of
// a 1080p frame, ~180 µs a dispatch on an H200 (64% of psnr_hvs's device
// time): phase 0 is now a parallel scan, and phase 1 jumps over a run of
// segments with one estimated binade at once, with their increments
// composed beforehand by a parallel scan (the module doc's `summary_tree`
// composition, over segments instead of chunks).

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

var<workgroup> binades: array<i32, 256>;
var<workgroup> d0s: array<u64, 256>;
var<workgroup> d1s: array<u64, 256>;
// Phase 0: the segment totals' scan (f64 bits in jump0). Phase 1: per
// segment j, the composed increments from an even (jump0) and an odd
// (jump1) m over segments j .. (its run's last) - 1, and in span the
// segments that covers counting the run's last (bits 0-15) and the parity
// after it from either start (bits 16, 17).
var<workgroup> jump0: array<u64, 256>;
var<workgroup> jump1: array<u64, 256>;
var<workgroup> span: array<u32, 256>;

// The binade exponent of a positive finite double.
fn exponent(v: f64) -> i32 {
    return i32((bitcast<u64>(v) >> 52u) & 0x7FFlu) - 1023;
}

fn word64(at: u32) -> u64 {
    return (u64(segs[at + 1u]) << 32u) | u64(segs[at]);
}

// Terms a segment holds at most (SEGMENT in src/features/seqsum.rs): the
// size of the staging of a slow segment in workgroup memory.
const SEGMENT: u32 = 1024u;

var<workgroup> chunk: array<f32, SEGMENT>;
var<workgroup> slow_at: u32;

// The walk's exact running sum where the fast path may take it: its binade
// e and integer significand m (2^(p-1) <= m < 2^p), with ok; not ok for
// zero, negative, non-finite and below the accumulator's normal range.
struct Decomposed {
    ok: bool,
    e: i32,
    m: u64,
}

fn decompose(s: f64, p: i32, min_exponent: i32) -> Decomposed {
    if !(s > 0.0lf) || !(s <= 1.7976931348623157e308lf) {
        return Decomposed(false, 0, 0lu);
    }
    let e = exponent(s);
    if e < min_exponent {
        return Decomposed(false, 0, 0lu);
    }
    let m = ((bitcast<u64>(s) & 0xFFFFFFFFFFFFFlu) >> u32(53 - p)) | (1lu << u32(p - 1));
    return Decomposed(true, e, m);
}

// m * 2^(e - p + 1), exactly (2^(p-1) <= m < 2^p).
fn compose(e: i32, m: u64, p: i32) -> f64 {
    return bitcast<f64>((u64(e + 1023) << 52u) | ((m - (1lu << u32(p - 1))) << u32(53 - p)));
}

// Terms loaded at a time from workgroup memory, before their additions.
const BATCH: u32 = 8u;

// s + chunk[0] + ... + chunk[n - 1], one after another with the
// accumulator's own addition (a float's when f32_acc, else a double's).
fn add_chunk(n: u32, s0: f64, f32_acc: bool) -> f64 {
    var i = 0u;
    var t: array<f32, BATCH>;
    if f32_acc {
        var sf = f32(s0);
        for (; i + BATCH <= n; i += BATCH) {
            for (var k = 0u; k < BATCH; k++) {
                t[k] = chunk[i + k];
            }
            for (var k = 0u; k < BATCH; k++) {
                sf = sf + t[k];
            }
        }
        for (; i < n; i++) {
            sf = sf + chunk[i];
        }
        return f64(sf);
    }
    var s = s0;
    for (; i + BATCH <= n; i += BATCH) {
        for (var k = 0u; k < BATCH; k++) {
            t[k] = chunk[i + k];
        }
        for (var k = 0u; k < BATCH; k++) {
            s = s + f64(t[k]);
        }
    }
    for (; i < n; i++) {
        s = s + f64(chunk[i]);
    }
    return s;
}

const SATURATED: u64 = 0x4000000000000000lu;

fn sat_add(x: u64, y: u64) -> u64 {
    return min(x + y, SATURATED);
}

// Phase 1's scan, before the walk: for every segment j of the batch, the
// increments of segments j .. r - 1 composed (r: the last segment of j's
// run, the segments around j with its estimated binade), into jump0/jump1
// and span (see there). Each invocation starts from its own segment (an
// identity where it is its run's last) and, at stride s = 1, 2, 4, ...,
// appends what invocation j + s holds when its own part reaches exactly to
// j + s and j + s is in the same run: a suffix scan that stops at run
// ends. Exact: saturating sums of non-negative increments and parities
// compose associatively (seqsum::summary_tree).
fn scan_runs(lid: u32, batch: u32) {
    var x0 = 0lu;
    var x1 = 0lu;
    var q0 = 0u;
    var q1 = 1u;
    var cover = 1u;
    let own = lid < batch && lid + 1u < batch && binades[lid + 1u] == binades[lid];
    if own {
        x0 = d0s[lid];
        x1 = d1s[lid];
        q0 = u32(x0 & 1lu);
        q1 = u32((1lu + x1) & 1lu);
    }
    jump0[lid] = x0;
    jump1[lid] = x1;
    span[lid] = cover | (q0 << 16u) | (q1 << 17u);
    workgroupBarrier();
    for (var st = 1u; st < WG; st <<= 1u) {
        let b = lid + st;
        var grow = false;
        var y0 = 0lu;
        var y1 = 0lu;
        var sb = 0u;
        if cover == st && b < batch && binades[b] == binades[lid] {
            grow = true;
            sb = span[b];
            // From parity p at j: first this part (x_p, q_p), then b's from q_p.
            let b0 = select(jump0[b], jump1[b], q0 == 1u);
            let b1 = select(jump0[b], jump1[b], q1 == 1u);
            y0 = b0;
            y1 = b1;
        }
        workgroupBarrier();
        if grow {
            let r0 = (sb >> (16u + q0)) & 1u;
            let r1 = (sb >> (16u + q1)) & 1u;
            x0 = sat_add(x0, y0);
            x1 = sat_add(x1, y1);
            q0 = r0;
            q1 = r1;
            cover += sb & 0xFFFFu;
            jump0[lid] = x0;
            jump1[lid] = x1;
            span[lid] = cover | (q0 << 16u) | (q1 << 17u);
        }
        workgroupBarrier();
    }
}

// Phase 0 for a batch: an inclusive scan of the segment totals (`own`:
// this invocation's, 0 past the batch) in jump0 as f64 bits (Hillis-Steele:
// tree order, an estimate), then each segment's estimated binade from
// `carry` (the batches before) plus the segments before it. Returns the new
// carry (the same in every invocation).
fn scan_totals(lid: u32, own: f64, carry: f64) -> f64 {
    var v = own;
    jump0[lid] = bitcast<u64>(v);
    workgroupBarrier();
    for (var st = 1u; st < WG; st <<= 1u) {
        var left = 0.0lf;
        if lid >= st {
            left = bitcast<f64>(jump0[lid - st]);
        }
        workgroupBarrier();
        v = v + left;
        jump0[lid] = bitcast<u64>(v);
        workgroupBarrier();
    }
    var before = carry;
    if lid > 0u {
        before = carry + bitcast<f64>(jump0[lid - 1u]);
    }
    binades[lid] = select(NO_BINADE, exponent(before), before > 0.0lf);
    let total = carry + bitcast<f64>(jump0[WG - 1u]);
    workgroupBarrier();
    return total;
}

// The walk keeps the sum as (e, m) while segments are fast: a run of
// segments with the sum's binade is then one add (of its composed
// increments), the run's last segment another. At a slow segment the whole
// workgroup copies its terms into workgroup memory, one coalesced read, and
// invocation 0 adds them from there.
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
    let two_p = 1lu << u32(p);
    var carry = 0.0lf; // phase 0: the totals of the batches before
    // Invocation 0's: the exact running sum, as s or, where have_m, as
    // m * 2^(e - p + 1).
    var s = 0.0lf;
    var have_m = false;
    var e = 0;
    var m = 0lu;

    for (var base = 0u; base < nseg; base += WG) {
        let k = base + lid;
        let batch = min(nseg - base, WG);
        let rec = RECORD * (first_record + k);
        if pc.phase == 0u {
            // 2. Each segment's estimated binade at its start.
            var own = 0.0lf;
            if k < nseg {
                own = bitcast<f64>(word64(rec));
            }
            carry = scan_totals(lid, own, carry);
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
            scan_runs(lid, batch);
            // 4. The walk: fast runs and segments up to the next slow
            // segment, which the workgroup stages and invocation 0 adds;
            // until the batch ends.
            var j = 0u; // invocation 0's
            loop {
                if lid == 0u {
                    loop {
                        if j >= batch || !have_m || binades[j] != e {
                            break;
                        }
                        // The run from j, but for its last segment, at once.
                        let last = j + (span[j] & 0xFFFFu) - 1u;
                        if last > j {
                            let mj = m + select(jump1[j], jump0[j], (m & 1lu) == 0lu);
                            if mj < two_p {
                                m = mj;
                                j = last;
                            }
                        }
                        let m2 = m + select(d1s[j], d0s[j], (m & 1lu) == 0lu);
                        if m2 >= two_p {
                            break;
                        }
                        m = m2;
                        j++;
                    }
                    slow_at = j;
                }
                let js = workgroupUniformLoad(&slow_at);
                if js >= batch {
                    break;
                }
                let kj = base + js;
                let b = first + kj * segment;
                let n = select(b + segment, first + count, kj + 1u == nseg) - b;
                for (var i = lid; i < n; i += WG) {
                    chunk[i] = terms[b + i];
                }
                workgroupBarrier();
                if lid == 0u {
                    if have_m {
                        s = compose(e, m, p);
                    }
                    s = add_chunk(n, s, f32_acc);
                    let d = decompose(s, p, min_exponent);
                    have_m = d.ok;
                    e = d.e;
                    m = d.m;
                    j = js + 1u;
                }
                workgroupBarrier(); // chunk and slow_at are written again
            }
        }
        workgroupBarrier(); // the batch's workgroup arrays may be refilled
    }
    if pc.phase == 1u && lid == 0u {
        if have_m {
            s = compose(e, m, p);
        }
        let bits = bitcast<u64>(s);
        out[2u * g] = u32(bits & 0xFFFFFFFFlu);
        out[2u * g + 1u] = u32(bits >> 32u);
    }
}
