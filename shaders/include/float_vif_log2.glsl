// vif_tools.c log2f_approx (VIF_OPT_FAST_LOG2), shared by
// float_vif_horizontal and float_vif_horizontal_strip: the exponent plus
// log2_poly_s's degree-8 polynomial of the mantissa, Horner's rule in f32.
// The coefficients are float.rs LOG2_POLY's f32 bits, in order (a unit
// test in gpu_float.rs holds them to it), written as constants: loaded
// from the taps buffer (the C dialect's taps[256..265]) they were 18
// storage loads a pixel, and lavapipe loads a storage buffer lane by lane
// (float_vif_horizontal_strip took half the time without them).
float log2_approx(float x) {
    if (x == 0.0) {
        return uintBitsToFloat(0xff800000u);
    }
    if (x < 0.0) {
        return uintBitsToFloat(0x7fc00000u);
    }
    uint bits = floatBitsToUint(x);
    float remain = uintBitsToFloat((bits & 0x007FFFFFu) | 0x3F800000u);
    float log_base = float(int((bits & 0x7F800000u) >> 23u) - 127);
    float t = remain - 1.0;
    float v = 0.0;
    v = v * t + uintBitsToFloat(0xbc4f9cb1u);
    v = v * t + uintBitsToFloat(0x3d84cb74u);
    v = v * t + uintBitsToFloat(0xbe20d169u);
    v = v * t + uintBitsToFloat(0x3e83ab7du);
    v = v * t + uintBitsToFloat(0xbeb52559u);
    v = v * t + uintBitsToFloat(0x3ef5d3c9u);
    v = v * t + uintBitsToFloat(0xbf38a80eu);
    v = v * t + uintBitsToFloat(0x3fb8aa39u);
    v = v * t + uintBitsToFloat(0x00000000u);
    return log_base + v;
}
