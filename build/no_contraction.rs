//! Decorates every float multiply, add and subtract of a SPIR-V module
//! NoContraction, so that no driver fuses `a * b + c` into an FMA: the CPU
//! reference rounds the product and the sum separately (GLSL's `precise`,
//! which naga's GLSL front end does not read).

const OP_FADD: u32 = 129;
const OP_FSUB: u32 = 131;
const OP_FMUL: u32 = 133;
const OP_DECORATE: u32 = 71;
const NO_CONTRACTION: u32 = 42;

/// Instructions of the sections that precede the annotations' end:
/// capabilities, extensions, imports, memory model, entry points, execution
/// modes, debug information and the annotations themselves.
fn before_types(opcode: u32) -> bool {
    matches!(opcode, 2..=8 | 10 | 11 | 14..=17 | 71..=75 | 317 | 330..=332 | 5632 | 5633)
}

/// The module with a NoContraction decoration for every result of OpFAdd,
/// OpFSub and OpFMul, inserted at the end of the annotation section.
pub fn decorate(words: &[u32]) -> Result<Vec<u32>, String> {
    if words.len() < 5 || words[0] != 0x0723_0203 {
        return Err("not a SPIR-V module".into());
    }
    let mut insert_at = None;
    let mut targets = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 || at + count > words.len() {
            return Err(format!("malformed instruction at word {at}"));
        }
        if insert_at.is_none() && !before_types(opcode) {
            insert_at = Some(at);
        }
        if matches!(opcode, OP_FADD | OP_FSUB | OP_FMUL) && count >= 3 {
            targets.push(words[at + 2]);
        }
        at += count;
    }
    let insert_at = insert_at.ok_or("a module without types or functions")?;
    let mut out = Vec::with_capacity(words.len() + 3 * targets.len());
    out.extend_from_slice(&words[..insert_at]);
    for id in targets {
        out.extend_from_slice(&[(3 << 16) | OP_DECORATE, id, NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[insert_at..]);
    Ok(out)
}
