//! The kernels' `BEGIN GENERATED` blocks must hold tables.rs's constants,
//! bit for bit (scripts/ciede_tables.py writes all three; this test lives
//! apart so that the script, which rewrites tables.rs whole, keeps it): a
//! hand edit of any of them, or a run that wrote one file and not the
//! others, fails here.

use std::collections::BTreeMap;

const OPENCL: &str = include_str!("../../../kernels/ciede.cl");
const WGSL: &str = include_str!("../../../shaders/include/ciede_terms.wgsl");
const RUST: &str = include_str!("tables.rs");

/// A constant as its type and bits (an integer as itself).
type Value = (&'static str, u64);

/// `[-]0x<hex>[.<hex>]p<exp>` exactly, as an f64.
fn hex_float(text: &str) -> f64 {
    let (negative, text) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let digits = text.strip_prefix("0x").unwrap_or_else(|| panic!("not a hex float: {text}"));
    let (mantissa, exp) = digits.split_once('p').unwrap_or_else(|| panic!("no exponent: {text}"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let m = u64::from_str_radix(&format!("{int}{frac}"), 16).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert!(m < 1 << 53, "{text}: more digits than an f64 holds");
    let exp: i32 = exp.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    // m * 2^(exp - 4 * frac digits): both factors exact, and so is the product.
    let scale = exp - 4 * frac.len() as i32;
    assert!((-1022..=1023).contains(&scale), "{text}");
    let value = m as f64 * f64::from_bits(((scale + 1023) as u64) << 52);
    if negative { -value } else { value }
}

/// A literal of `ty` as (type, bits): floats by their bits, integers as
/// themselves.
fn literal(ty: &'static str, text: &str) -> Value {
    let bits = match ty {
        "f64" => hex_float(text).to_bits(),
        "f32" => {
            let wide = hex_float(text);
            assert_eq!(f64::from(wide as f32), wide, "{text} is not an f32");
            u64::from((wide as f32).to_bits())
        }
        _ => match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("{text}: {e}")),
            None => text.parse().unwrap_or_else(|e| panic!("{text}: {e}")),
        },
    };
    (ty, bits)
}

fn generated_block(source: &str) -> &str {
    let start = source.find("BEGIN GENERATED").expect("a BEGIN GENERATED marker");
    let end = source.find("END GENERATED").expect("an END GENERATED marker");
    &source[start..end]
}

/// The constants of `source`'s generated block, every line between the
/// markers `prefix` and a constant that `parse` reads.
fn block_constants(source: &str, prefix: &str, parse: fn(&str) -> (String, Value)) -> BTreeMap<String, Value> {
    let block = generated_block(source);
    let lines: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix(prefix)).collect();
    // The marker lines' own text is the block's first and last line.
    assert_eq!(lines.len(), block.lines().count() - 2, "only `{prefix}` lines between the markers");
    lines.into_iter().map(parse).collect()
}

/// The OpenCL block: `#define NAME LITERAL` (an `f` suffix an f32, `u`
/// or `UL` an integer, none an f64).
fn opencl_constants() -> BTreeMap<String, Value> {
    block_constants(OPENCL, "#define ", |d| {
        let (name, value) = d.split_once(' ').expect("#define NAME VALUE");
        let value = if let Some(v) = value.strip_suffix("UL") {
            literal("u64", v)
        } else if let Some(v) = value.strip_suffix('u') {
            literal("u32", v)
        } else if let Some(v) = value.strip_suffix('f') {
            literal("f32", v)
        } else {
            literal("f64", value)
        };
        (name.to_string(), value)
    })
}

/// The WGSL block: `const NAME: TYPE = LITERAL<suffix>;`.
fn wgsl_constants() -> BTreeMap<String, Value> {
    block_constants(WGSL, "const ", |c| {
        let (name, rest) = c.split_once(": ").expect("const NAME: TYPE");
        let (ty, value) = rest.strip_suffix(';').and_then(|r| r.split_once(" = ")).expect("TYPE = VALUE;");
        let (ty, suffix): (&'static str, &str) = match ty {
            "f64" => ("f64", "lf"),
            "f32" => ("f32", "f"),
            "u64" => ("u64", "lu"),
            "u32" => ("u32", "u"),
            other => panic!("{name}: type {other}"),
        };
        let value = value.strip_suffix(suffix).unwrap_or_else(|| panic!("{name}: {value} without {suffix}"));
        (name.to_string(), literal(ty, value))
    })
}

/// This file's scalar constants: `pub const NAME: TYPE = f64::from_bits(..)`,
/// or an integer literal; the table offsets, which are expressions, by
/// their values.
fn rust_constants() -> BTreeMap<String, Value> {
    let mut out: BTreeMap<String, Value> = RUST
        .lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|c| {
            let (name, rest) = c.split_once(": ")?;
            let (ty, value) = rest.strip_suffix(';')?.split_once(" = ")?;
            let ty: &'static str = ["f64", "f32", "u64", "u32"].into_iter().find(|t| *t == ty)?;
            let bits = value
                .strip_prefix("f64::from_bits(")
                .or_else(|| value.strip_prefix("f32::from_bits("))
                .and_then(|v| v.strip_suffix(')'))
                .unwrap_or(value);
            let (_, bits) = literal("u64", bits);
            Some((name.to_string(), (ty, bits)))
        })
        .collect();
    for (name, at) in
        [("LOG_AT", super::tables::LOG_AT), ("EXP2_AT", super::tables::EXP2_AT), ("ATAN_AT", super::tables::ATAN_AT)]
    {
        out.insert(name.into(), ("u32", at as u64));
    }
    out
}

#[test]
fn the_kernels_generated_constants_are_this_files() {
    let rust = rust_constants();
    // A parse that found nothing would pass below: these are read right.
    assert_eq!(rust["PI_HI"], ("f64", super::tables::PI_HI.to_bits()));
    assert_eq!(rust["POWF_25_7"], ("f32", u64::from(super::tables::POWF_25_7.to_bits())));
    assert_eq!(rust["LOG_OFF"], ("u64", super::tables::LOG_OFF));
    for (dialect, constants) in [("kernels/ciede.cl", opencl_constants()), ("ciede_terms.wgsl", wgsl_constants())] {
        assert!(constants.len() >= 90, "{dialect}: {} constants", constants.len());
        for (name, value) in &constants {
            let want = rust.get(name).unwrap_or_else(|| panic!("{dialect}: {name} is not in tables.rs"));
            // A literal's type as the kernel spells it (u32 offsets are
            // usize here).
            assert_eq!(value.1, want.1, "{dialect}: {name} {value:?}, tables.rs {want:?}");
            if value.0.starts_with('f') || want.0.starts_with('f') {
                assert_eq!(value.0, want.0, "{dialect}: {name}");
            }
        }
    }
    assert_eq!(hex_float("0x1.921fb54442d18p+1"), super::tables::PI_HI);
    assert_eq!(hex_float("-0x1.0000000000000p-2"), -0.25);
}
