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
// writes nothing else with csf_only). This kernel takes p = 3 (the
// default: a product of three); float_adm_cm_rows_powf any other p. The
// entry point and the walk are shaders/include/float_adm_cm_rows_walk.wgsl.
#include "adm_cm_neighbour.wgsl"
#include "float_adm_cm_rows_walk.wgsl"

// x^3 as the sums take it: (x * x) * x. No powf in this module: lavapipe
// builds a kernel's NIR every run, and a powf call that a constant would
// fold away is translated first all the same.
fn power(x: f32) -> f32 {
    return x * x * x;
}
