// The arithmetic of the ssim_exact kernels (src/features/ssim/exact.rs,
// whose Increment, Summary, decompose and compose these mirror): a
// segment's moves of the running sum's integer significand m within one
// binade. Reads the kernels' `terms` (f64 as u32 pairs) and `results`
// (ssim_total's f64s as u32 pairs).

const SEGMENT: u32 = 1024u;
const WG: u32 = 256u;
const PER_ITEM: u32 = 4u; // SEGMENT / WG
const RECORD: u32 = 16u;
const ENTRY: u32 = 6u;
const NO_BINADE: i32 = -100000;
const LOW: i64 = 0x10000000000000li; // 2^52
const HIGH: i64 = 0x20000000000000li; // 2^53
const LIMIT: u64 = 0x10000000000lu; // 2^40
const FRACTION: u64 = 0xFFFFFFFFFFFFFlu;

// Δ, lowest and highest prefix from an even (…0) and an odd (…1) m.
struct Summary {
    bad: u32,
    d0: i64,
    d1: i64,
    lo0: i64,
    lo1: i64,
    hi0: i64,
    hi1: i64,
}

fn empty(bad: bool) -> Summary {
    return Summary(select(0u, 1u, bad), 0li, 0li, HIGH, HIGH, -HIGH, -HIGH);
}

// a, then b: from parity p, b starts from the parity of p + Δ(p).
fn then(a: Summary, b: Summary) -> Summary {
    let b0 = (a.d0 & 1li) == 1li; // b's start parity after a from even
    let b1 = ((1li + a.d1) & 1li) == 1li; // … from odd
    let bd0 = select(b.d0, b.d1, b0);
    let blo0 = select(b.lo0, b.lo1, b0);
    let bhi0 = select(b.hi0, b.hi1, b0);
    let bd1 = select(b.d0, b.d1, b1);
    let blo1 = select(b.lo0, b.lo1, b1);
    let bhi1 = select(b.hi0, b.hi1, b1);
    return Summary(
        a.bad | b.bad,
        a.d0 + bd0,
        a.d1 + bd1,
        min(a.lo0, a.d0 + blo0),
        min(a.lo1, a.d1 + blo1),
        max(a.hi0, a.d0 + bhi0),
        max(a.hi1, a.d1 + bhi1),
    );
}

// Term t's summary in binade e (exact.rs increment, then Summary::of).
fn term(t: f64, e: i32) -> Summary {
    let bits = bitcast<u64>(t);
    let biased = i32((bits >> 52u) & 0x7FFlu);
    if biased == 0x7FF {
        return empty(true);
    }
    let fraction = bits & FRACTION;
    let man = select(fraction | (1lu << 52u), fraction, biased == 0);
    let q = select(biased - 1075, -1074, biased == 0);
    if man == 0lu {
        return Summary(0u, 0li, 0li, 0li, 0li, 0li, 0li);
    }
    let d = q - e + 52;
    var a = 0lu;
    var half = -1; // the fraction against one half: -1, 0 (a tie), 1
    if d >= 0 {
        if d > 10 {
            return empty(true);
        }
        a = man << u32(d);
    } else if -d <= 53 {
        let sh = u32(-d);
        let rem = man & ((1lu << sh) - 1lu);
        let mid = 1lu << (sh - 1u);
        a = man >> sh;
        half = select(select(1, 0, rem == mid), -1, rem < mid);
    }
    if a >= LIMIT {
        return empty(true);
    }
    let ai = i64(a);
    var base = select(ai, ai + 1li, half > 0);
    if (bits >> 63u) != 0lu {
        base = select(-ai - 1li, -ai, half < 0);
    }
    // A tie: the even one of m + base and m + base + 1.
    var s0 = base;
    var s1 = base;
    if half == 0 {
        s0 = base + (base & 1li);
        s1 = base + ((1li + base) & 1li);
    }
    return Summary(0u, s0, s1, s0, s1, s0, s1);
}

// The binade of a positive, finite, normal sum (else NO_BINADE) and its
// significand m, 2^52 <= m < 2^53.
struct Decomposed {
    e: i32,
    m: i64,
}

fn decompose(s: f64) -> Decomposed {
    let bits = bitcast<u64>(s);
    let biased = i32((bits >> 52u) & 0x7FFlu);
    if !(s > 0.0lf) || biased == 0 || biased == 0x7FF {
        return Decomposed(NO_BINADE, 0li);
    }
    return Decomposed(biased - 1023, i64((bits & FRACTION) | (1lu << 52u)));
}

// m * 2^(e - 52).
fn compose(e: i32, m: i64) -> f64 {
    return bitcast<f64>((u64(e + 1023) << 52u) | (u64(m) & FRACTION));
}

// Term `at` of the terms buffer.
fn term_at(at: u32) -> f64 {
    return bitcast<f64>((u64(terms[2u * at + 1u]) << 32u) | u64(terms[2u * at]));
}

// Entry e's flag (results[5 e + 4], a double): 1.0 where ssim_total could
// not decide the mean.
fn flagged(e: u32) -> bool {
    return results[10u * e + 9u] != 0u || results[10u * e + 8u] != 0u;
}
