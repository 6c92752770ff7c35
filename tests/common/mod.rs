//! Helpers shared by the integration tests.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The ulpgate binary, run from the repository root.
pub fn ulpgate() -> Command {
    let mut cmd = Command::cargo_bin("ulpgate").expect("binary builds");
    cmd.current_dir(root()).env_remove("GITHUB_ACTIONS");
    cmd
}

/// Writes `yaml` to `dir/name` with `@ROOT@` replaced by the repository root.
pub fn write(dir: &Path, name: &str, yaml: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, yaml.replace("@ROOT@", &root().display().to_string())).expect("temp file");
    path
}

/// A gate header using the repository's registry.
pub const HEADER: &str = "schema_version: 1\nname: t\nregistry: @ROOT@/gates/features.yaml\n";

/// The 8-bit 4:2:0 reference fixture pair (12 frames).
pub const FX_8BIT: &str = "  - name: fx\n    reference: @ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/ref.yuv\n    distorted: @ROOT@/fixtures/reference/testsrc2_200x184_8bit_420/dist_x264.yuv\n    geometry: {width: 200, height: 184, bit_depth: 8, chroma: \"420\"}\n    golden: @ROOT@/fixtures/reference/scores/testsrc2_200x184_8bit_420/dist_x264\n";

/// The report JSON without its timing block (the part that may vary).
pub fn without_timing(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("report is JSON");
    v.as_object_mut().expect("object").remove("timing");
    v
}
