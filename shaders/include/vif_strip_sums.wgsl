// vif_vertical_strip's sums of four rows (vif_statistic_8's and
// vif_statistic_16's) and their stores, shared by the kernel and its
// variants; the kernel declares `pc` and `vsum`. Which of them a kernel
// runs, and how it reads a sample, is its mode include's
// (vif_strip_any.wgsl, vif_strip_bytes.wgsl, vif_strip_words.wgsl).

// One tap's share of four rows' vif_statistic_8 sums: u32, wrapping, as
// the per-pixel kernel's c·r·r is (ca · a mod 2^32 = c · (a · a) mod 2^32).
struct Sums8 {
    mu1: vec4<u32>,
    mu2: vec4<u32>,
    xx: vec4<u32>,
    yy: vec4<u32>,
    xy: vec4<u32>,
}

fn add8(s: Sums8, c: vec4<u32>, a: vec4<u32>, b: vec4<u32>) -> Sums8 {
    return Sums8(s.mu1 + c * a, s.mu2 + c * b, s.xx + c * (a * a), s.yy + c * (b * b), s.xy + c * (a * b));
}

// vif_statistic_16's u64 sums of c·r·r, c·d·d, c·r·d as two u32 sums each:
// c times the low and the high 16 bits of the product (below 2^32: samples
// have at most 16 bits), neither of which wraps (the taps add to 65536).
struct Sums16 {
    mu1: vec4<u32>,
    mu2: vec4<u32>,
    xl: vec4<u32>,
    xh: vec4<u32>,
    yl: vec4<u32>,
    yh: vec4<u32>,
    zl: vec4<u32>,
    zh: vec4<u32>,
}

fn add16(s: Sums16, c: vec4<u32>, a: vec4<u32>, b: vec4<u32>) -> Sums16 {
    let m = vec4<u32>(0xffffu);
    let sh = vec4<u32>(16u);
    let aa = a * a;
    let bb = b * b;
    let ab = a * b;
    return Sums16(
        s.mu1 + c * a,
        s.mu2 + c * b,
        s.xl + c * (aa & m),
        s.xh + c * (aa >> sh),
        s.yl + c * (bb & m),
        s.yh + c * (bb >> sh),
        s.zl + c * (ab & m),
        s.zh + c * (ab >> sh),
    );
}

// The u64 sum from its two halves, rounded as vif_statistic_16 writes it.
fn round16(lo: u32, hi: u32) -> u32 {
    return u32((u64(lo) + (u64(hi) << 16u) + u64(pc.sq_add)) >> pc.sq_shift);
}

fn store8(o: u32, plane: u32, s: Sums8, r: u32) {
    vsum[o] = (s.mu1[r] + 128u) >> 8u;
    vsum[plane + o] = (s.mu2[r] + 128u) >> 8u;
    vsum[2u * plane + o] = s.xx[r];
    vsum[3u * plane + o] = s.yy[r];
    vsum[4u * plane + o] = s.xy[r];
}

fn store16(o: u32, plane: u32, s: Sums16, r: u32) {
    vsum[o] = ((s.mu1[r] + pc.mu_add) >> pc.mu_shift) & 0xffffu;
    vsum[plane + o] = ((s.mu2[r] + pc.mu_add) >> pc.mu_shift) & 0xffffu;
    vsum[2u * plane + o] = round16(s.xl[r], s.xh[r]);
    vsum[3u * plane + o] = round16(s.yl[r], s.yh[r]);
    vsum[4u * plane + o] = round16(s.zl[r], s.zh[r]);
}
