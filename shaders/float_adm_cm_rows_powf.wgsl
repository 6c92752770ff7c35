// float_adm_cm_rows_powf: float_adm_cm_rows for p other than 3, each
// power through the powf port (contract: FLOAT_ADM_CM_ROWS_POWF in
// src/features/adm/gpu.rs, C dialect in kernels/float_adm.cl). The entry
// point and the walk are shaders/include/float_adm_cm_rows_walk.wgsl.
#include "powf.wgsl"
#include "adm_cm_neighbour.wgsl"
#include "float_adm_cm_rows_walk.wgsl"

// x^p through the powf port.
fn power(x: f32) -> f32 {
    return powf(x, pc.p);
}
