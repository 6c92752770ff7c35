// integer_vif.h's log2 lookups, shared by vif_horizontal and
// vif_horizontal_strip. The including kernel declares the table as
// `table: array<u32>` (binding 3 in both).
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
    return i32(table[v >> u32(k)]) + 2048 * k;
}

fn log2_64(v: u64) -> i32 {
    let k = 48 - i32(clz64(v));
    return i32(table[u32(v >> u32(k))]) + 2048 * k;
}
