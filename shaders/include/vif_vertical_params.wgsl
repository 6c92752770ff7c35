// The scalars and input bindings of integer VIF's vertical kernels
// (vif_vertical, vif_vertical_strip and its variants, vif_vertical_quads:
// VIF_VERTICAL's contract in src/features/vif/gpu_integer.rs). Each kernel
// declares its outputs, vsum (3) and vsub (4), in its own element type.
struct Params {
    w: u32,
    h: u32,
    format: u32,
    tap0: u32,
    width: u32,
    mode: u32,
    mu_add: u32,
    mu_shift: u32,
    sq_add: u32,
    sq_shift: u32,
    sub_tap0: u32,
    sub_width: u32,
    sub_add: u32,
    sub_shift: u32,
}

var<immediate> pc: Params;

@group(0) @binding(0) var<storage, read> ref_plane: array<u32>;
@group(0) @binding(1) var<storage, read> dis_plane: array<u32>;
@group(0) @binding(2) var<storage, read> taps: array<u32>;
