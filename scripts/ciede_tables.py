#!/usr/bin/env python3
"""Generates the constants and tables of ciede's own math functions
(src/features/ciede/math.rs and its kernel twins), to far more than double
precision, with nothing but the standard library (decimal, fractions).

Writes src/features/ciede/tables.rs, and the constant blocks between the
`BEGIN GENERATED` and `END GENERATED` markers of kernels/ciede.cl and
shaders/include/ciede_terms.wgsl, so that all three dialects use the very same
bits. `cargo test features::ciede::tables_check` checks that the kernel
blocks still match tables.rs.

Usage: scripts/ciede_tables.py   (from the repository root)
"""

import math
import struct
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

getcontext().prec = 80
ROOT = Path(__file__).resolve().parent.parent


def pi():
    """pi by Machin's formula, to the context's precision."""
    def arctan_inv(x):
        x = Decimal(x)
        total, term, n, sign = Decimal(0), 1 / x, 1, 1
        x2 = x * x
        while term != 0:
            total += sign * term / n
            term /= x2
            n += 2
            sign = -sign
        return total
    return 4 * (4 * arctan_inv(5) - arctan_inv(239))


PI = pi()


def atan(x):
    """atan(x) for |x| <= 1 by the series of atan(y) with y = x / (1 + sqrt(1 + x^2)) (halved angle)."""
    x = Decimal(x)
    y = x / (1 + (1 + x * x).sqrt())
    total, term, n, sign = Decimal(0), y, 1, 1
    y2 = y * y
    while abs(term) > Decimal(10) ** -75:
        total += sign * term / n
        term *= y2
        n += 2
        sign = -sign
    return 2 * total


def exact(v):
    """A Decimal or Fraction as an exact Fraction."""
    return Fraction(v) if not isinstance(v, Fraction) else v


def to_double(v):
    """Round to the nearest double (ties to even)."""
    f = exact(v)
    d = float(f)  # Fraction -> float is correctly rounded
    return d


def round_bits(v, bits):
    """Round v to `bits` significant bits (a double, exactly representable)."""
    f = exact(v)
    if f == 0:
        return 0.0
    e = math.floor(math.log2(abs(float(f))))
    # make sure 2^e <= |f| < 2^(e+1)
    while abs(f) >= Fraction(2) ** (e + 1):
        e += 1
    while abs(f) < Fraction(2) ** e:
        e -= 1
    scale = Fraction(2) ** (bits - 1 - e)
    n = round(f * scale)
    return float(Fraction(n) / scale)


def dd(v):
    """v as a double-double (hi, lo)."""
    hi = to_double(v)
    lo = to_double(exact(v) - Fraction(hi))
    return hi, lo


def bits(d):
    return struct.unpack("<Q", struct.pack("<d", d))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


# ---------------------------------------------------------------- tables

LOG_BITS = 7
LOG_N = 1 << LOG_BITS
LOG_OFF = 0x3FE6955500000000  # z in [0.7041, 1.4082): k * ln2 + log(z)
INVC_BITS = 21  # 1/c to 21 bits: z * invc splits into exact products


def log_table():
    rows = []
    for i in range(LOG_N):
        lo = from_bits(LOG_OFF + (i << (52 - LOG_BITS)))
        hi = from_bits(LOG_OFF + ((i + 1) << (52 - LOG_BITS)))
        c = (Fraction(lo) + Fraction(hi)) / 2
        invc = round_bits(1 / c, INVC_BITS)
        nlog_hi, nlog_lo = dd(-Decimal(invc).ln())
        rows.append((invc, nlog_hi, nlog_lo))
    return rows


EXP_BITS = 7
EXP_N = 1 << EXP_BITS


def exp2_table():
    return [dd((Decimal(2) ** (Decimal(j) / EXP_N))) for j in range(EXP_N)]


ATAN_N = 16


def atan_table():
    return [dd(atan(Fraction(j, ATAN_N) if j else 0) if j else 0) for j in range(ATAN_N + 1)]


def atan_dec(j):
    return atan(Decimal(j) / ATAN_N)


# ------------------------------------------------------------- constants

LN2 = Decimal(2).ln()
LN2_HI = round_bits(LN2, 42)
LN2_LO = to_double(exact(LN2) - Fraction(LN2_HI))
L2N = LN2 / EXP_N
L2N_HI = round_bits(L2N, 36)
L2N_LO = to_double(exact(L2N) - Fraction(L2N_HI))
INV_L2N = to_double(EXP_N / LN2)

PIO2 = PI / 2
PIO2_1 = round_bits(PIO2, 33)
PIO2_2 = round_bits(exact(PIO2) - Fraction(PIO2_1), 33)
PIO2_3 = to_double(exact(PIO2) - Fraction(PIO2_1) - Fraction(PIO2_2))
TWO_OVER_PI = to_double(2 / PI)
PI_HI, PI_LO = dd(PI)
PIO2_HI, PIO2_LO = dd(PIO2)


def inv(n):
    return to_double(Fraction(1, n))


CONSTANTS = [
    ("LN2_HI", LN2_HI, "ln 2 to 42 bits: k * LN2_HI is exact for |k| < 2^11"),
    ("LN2_LO", LN2_LO, "ln 2 - LN2_HI"),
    ("INV_L2N", INV_L2N, "128 / ln 2"),
    ("L2N_HI", L2N_HI, "ln 2 / 128 to 36 bits: k * L2N_HI is exact for |k| < 2^17"),
    ("L2N_LO", L2N_LO, "ln 2 / 128 - L2N_HI"),
    ("LOG1P_3", inv(3), "1/3"),
    ("LOG1P_4", -0.25, "-1/4"),
    ("LOG1P_5", inv(5), "1/5"),
    ("LOG1P_6", -inv(6), "-1/6"),
    ("LOG1P_7", inv(7), "1/7"),
    ("LOG1P_8", -0.125, "-1/8"),
    ("EXP_2", 0.5, "1/2!"),
    ("EXP_3", inv(6), "1/3!"),
    ("EXP_4", inv(24), "1/4!"),
    ("EXP_5", inv(120), "1/5!"),
    ("EXP_6", inv(720), "1/6!"),
    ("TWO_OVER_PI", TWO_OVER_PI, "2 / pi"),
    ("PIO2_1", PIO2_1, "pi/2 to 33 bits"),
    ("PIO2_2", PIO2_2, "the next 33 bits of pi/2"),
    ("PIO2_3", PIO2_3, "the rest of pi/2"),
    ("PIO2_HI", PIO2_HI, "pi/2, double-double high part"),
    ("PIO2_LO", PIO2_LO, "pi/2, low part"),
    ("PI_HI", PI_HI, "pi, double-double high part (C's M_PI)"),
    ("PI_LO", PI_LO, "pi, low part"),
]
for k in range(1, 10):
    n = 2 * k + 1
    CONSTANTS.append((f"SIN_{n}", (-1) ** k * inv(math.factorial(n)), f"(-1)^{k} / {n}!"))
for k in range(2, 10):
    n = 2 * k
    CONSTANTS.append((f"COS_{n}", (-1) ** k * inv(math.factorial(n)), f"(-1)^{k} / {n}!"))
for k in range(1, 7):
    n = 2 * k + 1
    CONSTANTS.append((f"ATAN_{n}", (-1) ** k * inv(n), f"(-1)^{k} / {n}"))


# libvmaf ciede.c's own constants, each evaluated as the C compiler folds
# it (Python floats are IEEE doubles, correctly rounded like C's constant
# folding); the kernels take them as exact hexadecimal literals rather
# than trusting each compiler's decimal parser and folding.
CIEDE_CONSTANTS = [
    ("RGB_THRESHOLD", 10.0 / 255.0, "10. / 255. (rgb_to_xyz_map)"),
    ("RGB_A", 0.055, "0.055"),
    ("RGB_D", 1.0 / 1.055, "1.0 / 1.055"),
    ("RGB_LINEAR", 1.0 / 12.92, "1.0 / 12.92"),
    ("GAMMA", 2.4, "2.4 (pow_2_4)"),
    ("ONE_THIRD", 1.0 / 3.0, "1.0 / 3.0 (cbrt_approx)"),
    ("KAPPA", 24389.0 / 27.0, "24389.0 / 27.0"),
    ("LAB_EPSILON", 216.0 / 24389.0, "216.0 / 24389.0"),
    ("INV_116", 1.0 / 116.0, "1.0 / 116.0"),
    ("INV_XN", 1.0 / 0.95047, "1.0 / 0.95047"),
    ("INV_ZN", 1.0 / 1.08883, "1.0 / 1.08883"),
    ("INV_219", 1.0 / 219.0, "1 / 219 (1. / (219. * scale) is this times 1 / scale, exactly)"),
    ("INV_224", 1.0 / 224.0, "1 / 224"),
    ("YUV_RV", 1.28033, "1.28033"),
    ("YUV_GU", 0.21482, "0.21482"),
    ("YUV_GV", 0.38059, "0.38059"),
    ("YUV_BU", 2.12798, "2.12798"),
    ("XYZ_XR", 0.4124564390896921, "0.4124564390896921"),
    ("XYZ_XG", 0.357576077643909, "0.357576077643909"),
    ("XYZ_XB", 0.18043748326639894, "0.18043748326639894"),
    ("XYZ_YR", 0.21267285140562248, "0.21267285140562248"),
    ("XYZ_YG", 0.715152155287818, "0.715152155287818"),
    ("XYZ_YB", 0.07217499330655958, "0.07217499330655958"),
    ("XYZ_ZR", 0.019333895582329317, "0.019333895582329317"),
    ("XYZ_ZG", 0.119192025881303, "0.119192025881303"),
    ("XYZ_ZB", 0.9503040785363677, "0.9503040785363677"),
    ("PI_D", math.pi, "M_PI (the double nearest pi)"),
    ("TWO_PI", 2.0 * math.pi, "2. * M_PI"),
    ("PI_6", math.pi / 6.0, "M_PI / 6.0"),
    ("PI_30", math.pi / 30.0, "M_PI / 30.0"),
    ("PI7_20", 7.0 * math.pi / 20.0, "7.0 * M_PI / 20.0"),
    ("RAD_TO_DEG", 180.0 / math.pi, "180.0 / M_PI"),
    ("DEG_TO_RAD", math.pi / 180.0, "M_PI / 180.0"),
    ("INV_25", 1.0 / 25.0, "1.0 / 25.0"),
    ("POW_25_7", 6103515625.0, "pow(25, 7)"),
    ("K_SL", 0.015, "0.015 (S_L)"),
    ("K_SC", 0.045, "0.045 (S_C)"),
    ("T_1", 0.17, "0.17"),
    ("T_2", 0.24, "0.24"),
    ("T_3", 0.32, "0.32"),
    ("T_4", 0.20, "0.20"),
]
# Float constants: C float values (a double literal rounded to float).
CIEDE_FLOATS = [
    ("POWF_25_7", 6103515625.0, "powf(25., 7), folded to float"),
    ("KSUB_L", 0.65, "KSubArgs .l = 0.65"),
]


def f32(d):
    return struct.unpack("<f", struct.pack("<f", d))[0]


def hexf(d):
    """A C99/WGSL hexadecimal float literal of the double d (exact)."""
    if d == 0:
        return "0x0p+0"
    h = float.hex(d)  # e.g. '0x1.5555555555555p-3'
    return h


def rust_f64(d):
    return f"f64::from_bits(0x{bits(d):016X})"


def write_rust(log, exp2, atan_t):
    out = []
    out.append("//! The constants and tables of ciede's math functions ([`super::math`]),")
    out.append("//! generated by `scripts/ciede_tables.py` to far beyond double precision")
    out.append("//! (Python's decimal): do not edit by hand. The kernels carry the same")
    out.append("//! constants as hexadecimal literals (their `BEGIN GENERATED` blocks; a")
    out.append("//! test holds them to these) and read the tables from a buffer")
    out.append("//! ([`table_words`]).")
    out.append("")
    out.append("#![allow(clippy::unreadable_literal)]")
    out.append("")
    out.append(f"/// `log`: the tables' index takes the top {LOG_BITS} bits of the reduced mantissa.")
    out.append(f"pub const LOG_BITS: u32 = {LOG_BITS};")
    out.append("/// `log` reduces x to 2^k z with z in [0.7041, 1.4082): `bits(x) - LOG_OFF`.")
    out.append(f"pub const LOG_OFF: u64 = 0x{LOG_OFF:016X};")
    out.append(f"/// `exp`: 2^(j / {EXP_N}) for j in 0..{EXP_N}.")
    out.append(f"pub const EXP_BITS: u32 = {EXP_BITS};")
    out.append(f"/// `atan`: atan(j / {ATAN_N}) for j in 0..={ATAN_N}.")
    out.append(f"pub const ATAN_N: u32 = {ATAN_N};")
    out.append("")
    for name, value, doc in CONSTANTS:
        out.append(f"/// {doc}")
        out.append(f"pub const {name}: f64 = {rust_f64(value)};")
    out.append("")
    out.append("// libvmaf ciede.c's constants (as its compiler folds them).")
    for name, value, doc in CIEDE_CONSTANTS:
        out.append(f"/// {doc}")
        out.append(f"pub const {name}: f64 = {rust_f64(value)};")
    for name, value, doc in CIEDE_FLOATS:
        out.append(f"/// {doc}")
        out.append(f"pub const {name}: f32 = f32::from_bits(0x{struct.unpack('<I', struct.pack('<f', value))[0]:08X});")
    out.append("")
    out.append(f"/// Per index i: 1/c (to {INVC_BITS} bits, c the middle of the index's z range),")
    out.append("/// and -log(1/c) as a double-double (high, low).")
    out.append(f"pub const LOG_TABLE: [[u64; 3]; {LOG_N}] = [")
    for invc, h, l in log:
        out.append(f"    [0x{bits(invc):016X}, 0x{bits(h):016X}, 0x{bits(l):016X}],")
    out.append("];")
    out.append("")
    out.append(f"/// 2^(j / {EXP_N}) as a double-double (high, low).")
    out.append(f"pub const EXP2_TABLE: [[u64; 2]; {EXP_N}] = [")
    for h, l in exp2:
        out.append(f"    [0x{bits(h):016X}, 0x{bits(l):016X}],")
    out.append("];")
    out.append("")
    out.append(f"/// atan(j / {ATAN_N}) as a double-double (high, low).")
    out.append(f"pub const ATAN_TABLE: [[u64; 2]; {ATAN_N + 1}] = [")
    for h, l in atan_t:
        out.append(f"    [0x{bits(h):016X}, 0x{bits(l):016X}],")
    out.append("];")
    (ROOT / "src/features/ciede/tables.rs").write_text("\n".join(out) + "\n" + TABLES_RS_TAIL)


TABLES_RS_TAIL = '''
/// Where each table starts in [`table_words`] (in doubles).
pub const LOG_AT: usize = 0;
pub const EXP2_AT: usize = LOG_AT + 3 * LOG_TABLE.len();
pub const ATAN_AT: usize = EXP2_AT + 2 * EXP2_TABLE.len();
pub const TABLE_LEN: usize = ATAN_AT + 2 * ATAN_TABLE.len();

/// Every table as one array of doubles, as the kernels read them from
/// their `tables` buffer: the log rows (3 values each), the 2^(j/N) rows
/// (2 each), the atan rows (2 each).
pub fn table_words() -> Vec<f64> {
    let mut out = Vec::with_capacity(TABLE_LEN);
    out.extend(LOG_TABLE.iter().flatten().map(|&b| f64::from_bits(b)));
    out.extend(EXP2_TABLE.iter().flatten().map(|&b| f64::from_bits(b)));
    out.extend(ATAN_TABLE.iter().flatten().map(|&b| f64::from_bits(b)));
    out
}
'''


def block(comment, lines):
    return "\n".join([f"{comment} BEGIN GENERATED by scripts/ciede_tables.py: do not edit"] + lines
                     + [f"{comment} END GENERATED"])


def replace_block(path, comment, lines):
    text = path.read_text()
    begin = text.index(f"{comment} BEGIN GENERATED")
    end = text.index(f"{comment} END GENERATED") + len(f"{comment} END GENERATED")
    path.write_text(text[:begin] + block(comment, lines) + text[end:])


def write_kernels():
    log_at, exp2_at, atan_at = 0, 3 * LOG_N, 3 * LOG_N + 2 * EXP_N
    c_lines = [f"#define LOG_OFF 0x{LOG_OFF:016X}UL"]
    wgsl_lines = [f"const LOG_OFF: u64 = 0x{LOG_OFF:016X}lu;"]
    for name, value in [("LOG_AT", log_at), ("EXP2_AT", exp2_at), ("ATAN_AT", atan_at)]:
        c_lines.append(f"#define {name} {value}u")
        wgsl_lines.append(f"const {name}: u32 = {value}u;")
    for name, value, _ in CONSTANTS + CIEDE_CONSTANTS:
        c_lines.append(f"#define {name} {hexf(value)}")
        wgsl_lines.append(f"const {name}: f64 = {hexf(value)}lf;")
    for name, value, _ in CIEDE_FLOATS:
        c_lines.append(f"#define {name} {hexf(f32(value))}f")
        wgsl_lines.append(f"const {name}: f32 = {hexf(f32(value))}f;")
    for path, comment, lines in [
        (ROOT / "kernels/ciede.cl", "//", c_lines),
        (ROOT / "shaders/include/ciede_terms.wgsl", "//", wgsl_lines),
    ]:
        if path.exists():
            replace_block(path, comment, lines)


if __name__ == "__main__":
    log = log_table()
    exp2 = exp2_table()
    atan_t = [dd(atan_dec(j)) if j else (0.0, 0.0) for j in range(ATAN_N + 1)]
    write_rust(log, exp2, atan_t)
    write_kernels()
