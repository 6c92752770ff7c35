// integer_vif.h's log2 lookups, shared by vif_horizontal and
// vif_horizontal_strip. The including kernel binds the packed table
// (tables.rs log2_table_packed: entry 32768 + j in the low or high 16 bits
// of word j / 2) at binding 3 and defines `table_word(w: u32) -> u32`:
// vif_horizontal from a storage buffer, vif_horizontal_strip from a
// uniform block (llvmpipe gathers a uniform block's values where it loads
// a storage buffer lane by lane).
fn log2_entry(i: u32) -> i32 {
    let j = i - 32768u;
    return i32((table_word(j >> 1u) >> ((j & 1u) * 16u)) & 0xffffu);
}

// Leading zeros of a u64 from its halves (naga has no 64-bit
// countLeadingZeros: shaders/README.md).
fn clz64(x: u64) -> u32 {
    let hi = u32(x >> 32u);
    if (hi != 0u) {
        return countLeadingZeros(hi);
    }
    return 32u + countLeadingZeros(u32(x & 0xfffffffflu));
}

// integer_vif.h log2_32 (v >= 2^16) and log2_64 (v >= 2^17).
fn log2_32(v: u32) -> i32 {
    let k = 16 - i32(countLeadingZeros(v));
    return log2_entry(v >> u32(k)) + 2048 * k;
}

fn log2_64(v: u64) -> i32 {
    let k = 48 - i32(clz64(v));
    return log2_entry(u32(v >> u32(k))) + 2048 * k;
}
