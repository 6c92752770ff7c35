// float_adm_cm_rows' entry point and walk, shared by its two kernels
// (shaders/float_adm_cm_rows.wgsl: p = 3, float_adm_cm_rows_powf.wgsl: any
// p through powf; contract: FLOAT_ADM_CM_ROWS in src/features/adm/gpu.rs).
// One walk a kernel, not both behind a branch on p: lavapipe runs both
// sides of every branch, and builds every kernel's NIR again each run
// (the powf walk beside the cube walk cost 30 ms a run there). Each
// kernel's file defines `power(x)`, x^p as the sums take it (a product of
// three; powf.wgsl's port, which it includes: includes do not nest), and
// includes adm_cm_neighbour.wgsl for `nb`.
struct Params {
    bw: u32,
    bh: u32,
    base: u32,
    top: u32,
    left: u32,
    right: u32,
    rf0: f32,
    rf1: f32,
    rf2: f32,
    bypass_cm: u32,
    cubes: u32, // the host's p = 3 flag: each entry point fixes its power
    p: f32,
    rows_base: u32,
    rows: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> bands: array<f32>;
@group(0) @binding(1) var<storage, read> work: array<f32>;
@group(0) @binding(2) var<storage, read_write> rows: array<f32>;


// One band's 3x3 window of flt = 1/30 (a double) * |csf| (adm_csf_s's
// second output, recomputed from the CSF plane with the same operations,
// so the same bits as float_adm_decouple's flt planes): columns j - 1, j,
// j + 1 (mirrored), each the rows above, own and below; `centre` is the
// CSF itself at (own row, j), `next` at (own row, j + 1).
struct Win {
    l: vec3<f32>,
    c: vec3<f32>,
    r: vec3<f32>,
    centre: f32,
    next: f32,
}

fn flt(x: f32) -> f32 {
    return f32(0.0333333351lf * f64(abs(x)));
}

fn column(plane: u32, rws: vec3<u32>, col: u32) -> vec3<f32> {
    return vec3<f32>(work[plane + rws.x + col], work[plane + rws.y + col], work[plane + rws.z + col]);
}

fn window(plane: u32, rws: vec3<u32>, l: u32, c: u32, r: u32) -> Win {
    let cl = column(plane, rws, l);
    let cc = column(plane, rws, c);
    let cr = column(plane, rws, r);
    return Win(vec3<f32>(flt(cl.x), flt(cl.y), flt(cl.z)), vec3<f32>(flt(cc.x), flt(cc.y), flt(cc.z)), vec3<f32>(flt(cr.x), flt(cr.y), flt(cr.z)), cc.y, cr.y);
}

// The window one column to the right: `col` is the new right column.
fn slide(w: Win, plane: u32, rws: vec3<u32>, col: u32) -> Win {
    let cr = column(plane, rws, col);
    return Win(w.c, w.r, vec3<f32>(flt(cr.x), flt(cr.y), flt(cr.z)), w.next, cr.y);
}

// ADM_CM_THRESH_S_* of one band: the nine neighbours in libvmaf's order,
// the centre replaced by 1/15 (a double) * |csf| added in double.
fn band_sum(w: Win) -> f32 {
    var sum = 0.0f;
    sum = sum + w.l.x;
    sum = sum + w.c.x;
    sum = sum + w.r.x;
    sum = sum + w.l.y;
    sum = f32(f64(sum) + 0.0666666701lf * f64(abs(w.centre)));
    sum = sum + w.r.y;
    sum = sum + w.l.z;
    sum = sum + w.c.z;
    sum = sum + w.r.z;
    return sum;
}


// Work item g takes row top + g (launch [ceil(rows / 8), 1, 1]).
@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= pc.rows) {
        return;
    }
    walk(g);
}

// Row top + g's nine sums.
fn walk(g: u32) {
    let i = i32(pc.top + g);
    let w = i32(pc.bw);
    let plane = pc.bw * pc.bh;
    let rws = vec3<u32>(u32(nb(i - 1, i32(pc.bh)) * w), u32(i * w), u32(nb(i + 1, i32(pc.bh)) * w));
    let rf = vec3<f32>(pc.rf0, pc.rf1, pc.rf2);
    let cm = pc.bypass_cm == 0u;
    // The CSF planes: 6 + b of a, 12 + b of r.
    let j0 = i32(pc.left);
    let l0 = u32(nb(j0 - 1, w));
    let r0 = u32(nb(j0 + 1, w));
    var wa0 = window(6u * plane, rws, l0, u32(j0), r0);
    var wa1 = window(7u * plane, rws, l0, u32(j0), r0);
    var wa2 = window(8u * plane, rws, l0, u32(j0), r0);
    var wr0 = window(12u * plane, rws, l0, u32(j0), r0);
    var wr1 = window(13u * plane, rws, l0, u32(j0), r0);
    var wr2 = window(14u * plane, rws, l0, u32(j0), r0);
    var num = vec3<f32>(0.0f);
    var aim = vec3<f32>(0.0f);
    var den = vec3<f32>(0.0f);
    for (var j = pc.left; j < pc.right; j++) {
        if (j > pc.left) {
            let col = u32(nb(i32(j) + 1, w));
            wa0 = slide(wa0, 6u * plane, rws, col);
            wa1 = slide(wa1, 7u * plane, rws, col);
            wa2 = slide(wa2, 8u * plane, rws, col);
            wr0 = slide(wr0, 12u * plane, rws, col);
            wr1 = slide(wr1, 13u * plane, rws, col);
            wr2 = slide(wr2, 14u * plane, rws, col);
        }
        let at = rws.y + j;
        var thr_a = 0.0f;
        var thr_r = 0.0f;
        if (cm) {
            thr_a = 0.0f + band_sum(wa0);
            thr_a = thr_a + band_sum(wa1);
            thr_a = thr_a + band_sum(wa2);
            thr_r = 0.0f + band_sum(wr0);
            thr_r = thr_r + band_sum(wr1);
            thr_r = thr_r + band_sum(wr2);
        }
        // |r * rf| and |a * rf| are the CSF planes' own values (a
        // product's two orders round alike): the windows' centres.
        let xr = abs(vec3<f32>(wr0.centre, wr1.centre, wr2.centre)) - vec3<f32>(thr_a);
        let xa = abs(vec3<f32>(wa0.centre, wa1.centre, wa2.centre)) - vec3<f32>(thr_r);
        let o = vec3<f32>(bands[pc.base + plane + at], bands[pc.base + 2u * plane + at], bands[pc.base + 3u * plane + at]);
        let mr = max(xr, vec3<f32>(0.0f));
        let ma = max(xa, vec3<f32>(0.0f));
        let d = abs(rf * o);
        num = num + vec3<f32>(power(mr.x), power(mr.y), power(mr.z));
        aim = aim + vec3<f32>(power(ma.x), power(ma.y), power(ma.z));
        den = den + vec3<f32>(power(d.x), power(d.y), power(d.z));
    }
    let out = 9u * (pc.rows_base + g);
    rows[out] = num.x;
    rows[out + 1u] = num.y;
    rows[out + 2u] = num.z;
    rows[out + 3u] = aim.x;
    rows[out + 4u] = aim.y;
    rows[out + 5u] = aim.z;
    rows[out + 6u] = den.x;
    rows[out + 7u] = den.y;
    rows[out + 8u] = den.z;
}
