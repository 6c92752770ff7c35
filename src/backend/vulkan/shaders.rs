//! The SPIR-V of every kernel, compiled from `shaders/<name>.comp` by
//! build.rs (naga) and embedded in the binary.

/// One compiled kernel: its entry point is `name`.
pub struct Shader {
    pub name: &'static str,
    /// Little-endian SPIR-V words.
    pub spirv: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

pub fn find(name: &str) -> Option<&'static Shader> {
    SHADERS.iter().find(|s| s.name == name)
}

impl Shader {
    /// The module as 32-bit words (the embedded bytes need not be aligned).
    pub fn words(&self) -> Vec<u32> {
        self.spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
}

/// Each instruction of a SPIR-V module as (opcode, operands).
pub fn instructions(words: &[u32]) -> impl Iterator<Item = (u32, &[u32])> {
    let mut at = if words.first() == Some(&0x0723_0203) { 5 } else { words.len() };
    std::iter::from_fn(move || {
        let count = (*words.get(at)? >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return None;
        }
        let op = (words[at] & 0xffff, &words[at + 1..at + count]);
        at += count;
        Some(op)
    })
}

/// The (first) compute entry point's name and work-group size
/// (OpEntryPoint, OpExecutionMode LocalSize).
pub fn entry_point(words: &[u32]) -> Option<(String, [u32; 3])> {
    const OP_ENTRY_POINT: u32 = 15;
    const OP_EXECUTION_MODE: u32 = 16;
    const GL_COMPUTE: u32 = 5;
    const LOCAL_SIZE: u32 = 17;
    let (id, name) = instructions(words).find_map(|(op, args)| {
        (op == OP_ENTRY_POINT && args.len() >= 3 && args[0] == GL_COMPUTE).then(|| {
            let bytes: Vec<u8> = args[2..].iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
            (args[1], String::from_utf8_lossy(&bytes).into_owned())
        })
    })?;
    let size = instructions(words).find_map(|(op, args)| {
        (op == OP_EXECUTION_MODE && args.len() == 5 && args[0] == id && args[1] == LOCAL_SIZE)
            .then(|| [args[2], args[3], args[4]])
    })?;
    Some((name, size))
}

/// The bindings (set 0) a module declares as uniform buffers; every other
/// binding is a storage buffer.
pub fn uniform_bindings(words: &[u32]) -> Vec<u32> {
    const OP_VARIABLE: u32 = 59;
    const OP_DECORATE: u32 = 71;
    const UNIFORM: u32 = 2;
    const BINDING: u32 = 33;
    let uniform: Vec<u32> = instructions(words)
        .filter(|(op, args)| *op == OP_VARIABLE && args.len() >= 3 && args[2] == UNIFORM)
        .map(|(_, args)| args[1])
        .collect();
    let mut out: Vec<u32> = instructions(words)
        .filter(|(op, args)| *op == OP_DECORATE && args.len() == 3 && args[1] == BINDING && uniform.contains(&args[0]))
        .map(|(_, args)| args[2])
        .collect();
    out.sort();
    out
}

/// The SPIR-V capabilities a module declares (OpCapability operands).
pub fn capabilities(words: &[u32]) -> Vec<u32> {
    const OP_CAPABILITY: u32 = 17;
    instructions(words).filter(|(op, args)| *op == OP_CAPABILITY && !args.is_empty()).map(|(_, args)| args[0]).collect()
}

/// SPIR-V `Float64`.
pub const CAPABILITY_FLOAT64: u32 = 10;
/// SPIR-V `Int64`.
pub const CAPABILITY_INT64: u32 = 11;
