#version 450
// cambi_mode: cambi.c `decimate` then `filter_mode`, one scale (contract:
// CAMBI_MODE in src/features/cambi/gpu.rs). libvmaf decimates in place,
// every read at or after the write in raster order, and mode-filters in
// place through a 3-row buffer holding each row's horizontal modes taken
// before the row is overwritten: both are functions of the input. Rows 0
// and h - 1 keep their samples; the others take the mode of the horizontal
// modes above, at and below, a row's first and last samples being their
// own horizontal mode. The pixel counts (is written without the 0x10000
// flag) when the full-size mask is set at its position and its level is in
// libvmaf's band.
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) readonly buffer Mask { uint mask_in[]; };
layout(std430, set = 0, binding = 2) readonly buffer Tables { uint tables[]; };
layout(std430, set = 0, binding = 3) buffer Cells { uint cells[]; };

layout(push_constant) uniform Params {
    uint src_w;
    uint src_off;
    uint step;
    uint mask_w;
    uint mask_off;
    uint mask_shift;
    uint w;
    uint h;
    uint out_off;
} pc;

const uint BAND_BASE = 2u;
const uint BAND_SIZE = 3u;
const uint NOT_COUNTED = 65536u;

// cambi.c `mode3`: the value two of the three share, else the smallest.
uint mode3(uint a, uint b, uint c) {
    if (a == b || a == c) {
        return a;
    }
    if (b == c) {
        return b;
    }
    return min(min(a, b), c);
}

uint at(uint r, uint c) {
    return src[pc.src_off + r * pc.step * pc.src_w + c * pc.step] & 65535u;
}

uint horizontal(uint r, uint x) {
    if (x == 0u || x + 1u >= pc.w) {
        return at(r, x);
    }
    return mode3(at(r, x - 1u), at(r, x), at(r, x + 1u));
}

void main() {
    uint x = gl_GlobalInvocationID.x;
    uint y = gl_GlobalInvocationID.y;
    if (x >= pc.w || y >= pc.h) {
        return;
    }
    uint v;
    if (y == 0u || y + 1u >= pc.h) {
        v = at(y, x);
    } else {
        v = mode3(horizontal(y - 1u, x), horizontal(y, x), horizontal(y + 1u, x));
    }
    uint m = mask_in[pc.mask_off + (y << pc.mask_shift) * pc.mask_w + (x << pc.mask_shift)];
    uint level = (v - tables[BAND_BASE]) & 65535u;
    bool counted = m != 0u && level < tables[BAND_SIZE];
    cells[pc.out_off + y * pc.w + x] = counted ? v : (v | NOT_COUNTED);
}
