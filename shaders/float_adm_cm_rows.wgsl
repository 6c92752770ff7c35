// float_adm_cm_rows: float_adm_cm's CPU-driver shape (contract:
// FLOAT_ADM_CM_ROWS in src/features/adm/gpu.rs, C dialect in
// kernels/float_adm.cl; the same sums, bit for bit, as float_adm_cm). Work
// item g takes row top + g of one scale's score rectangle and walks it left
// to right, adding each pixel's nine terms to its sums in pixel order
// (libvmaf's sequential f32 sums): no work-group memory, no barrier. The
// threshold windows (3x3 of flt, recomputed from each CSF plane: the
// centre's CSF is then in the window too) slide along the row in
// registers: each step loads one new column of three rows per plane. It
// reads the CSF planes and the reference's bands alone (the decouple
// writes nothing else with csf_only). This entry point takes p = 3 (the
// default: a product of three); float_adm_cm_rows_powf any other p. The
// walk is shaders/include/float_adm_cm_rows_walk.wgsl.
#include "float_adm_cm_rows_walk.wgsl"

// x^3 as the sums take it: (x * x) * x. No powf in this module: lavapipe
// translates every function a module holds, used or not.
fn power(x: f32) -> f32 {
    return x * x * x;
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= pc.rows) {
        return;
    }
    walk(g);
}
