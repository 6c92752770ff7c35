// float_adm_cm_rows_powf: float_adm_cm_rows for p other than 3, each
// power through the powf port (contract: FLOAT_ADM_CM_ROWS_POWF in
// src/features/adm/gpu.rs, C dialect in kernels/float_adm.cl). The walk is
// shaders/include/float_adm_cm_rows_walk.wgsl.
#include "powf.wgsl"
#include "float_adm_cm_rows_walk.wgsl"

// x^p through the powf port.
fn power(x: f32) -> f32 {
    return powf(x, pc.p);
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if (g >= pc.rows) {
        return;
    }
    walk(g);
}
