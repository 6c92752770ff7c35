//! Helpers: gates written into temporary folders, the binary, reports.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub const BIN: &str = env!("CARGO_BIN_EXE_ulpgate");

/// The binary, outside GitHub Actions whatever the environment says.
pub fn ulpgate() -> Command {
    let mut c = Command::new(BIN);
    c.env_remove("GITHUB_ACTIONS");
    c
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the ulpgate binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes a gate whose registry is the repository's, with `body` after the
/// common header.
pub fn gate(dir: &Path, file: &str, name: &str, body: &str) -> PathBuf {
    let registry = repo().join("gates/features.yaml");
    let text = format!("schema_version: 1\nname: {name}\nregistry: {}\n{body}", registry.display());
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// A committed reference clip as a fixture entry (8-bit 4:2:0, 12 frames).
pub fn reference_fixture(name: &str, distortion: &str) -> String {
    let base = repo().join("fixtures/reference");
    format!(
        "  - name: {name}\n    reference: {r}\n    distorted: {d}\n    geometry: {{width: 200, height: 184, bit_depth: 8, chroma: \"420\"}}\n    golden: {g}\n",
        r = base.join("testsrc2_200x184_8bit_420/ref.yuv").display(),
        d = base.join(format!("testsrc2_200x184_8bit_420/{distortion}.yuv")).display(),
        g = base.join(format!("scores/testsrc2_200x184_8bit_420/{distortion}")).display(),
    )
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn cells(report: &Value) -> &Vec<Value> {
    report["cells"].as_array().unwrap()
}

pub fn cell<'a>(report: &'a Value, id_part: &str) -> &'a Value {
    let found: Vec<&Value> = cells(report).iter().filter(|c| c["id"].as_str().unwrap().contains(id_part)).collect();
    assert_eq!(found.len(), 1, "exactly one cell matching {id_part} in {:#?}", cells(report));
    found[0]
}

/// Files in `dir` other than those in `keep`.
pub fn extra_files(dir: &Path, keep: &[&Path]) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| !keep.iter().any(|k| k == p)).collect()
}

/// The 1-based number of the first line of a file containing `needle`.
pub fn line_of(path: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` in {text}")) + 1
}
