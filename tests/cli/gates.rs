//! The gates the tests run, written into temporary folders.

use crate::common::{gate, reference_fixture};
use std::path::{Path, PathBuf};

/// 3 features x (golden-vs-cpu on 2 clips + cpu-vs-cpu2 and cpu-vs-cuda on
/// 5 fixtures) = 36 cells. cpu's sides are shared by three pairs, so cells
/// group by (feature, fixture). cuda is optional and absent here: SKIP.
pub fn sharded(dir: &Path) -> PathBuf {
    let body = format!(
        r#"features: [psnr, float_psnr, float_moment]
backends:
  golden: {{}}
  cpu: {{}}
  cpu2: {{kind: cpu}}
  cuda: {{required: false}}
pairs:
  - a: golden
    b: cpu
    fixtures: ["clip_*"]
    tolerance: {{abs: 1.0e-6, adr: printed precision}}
  - [cpu, cpu2]
  - [cpu, cuda]
fixtures:
{}{}  - name: small_420
    synthetic: {{width: 48, height: 32, frames: 6, bit_depth: 8, chroma: "420", seed: 1}}
  - name: small_444_10bit
    synthetic: {{width: 64, height: 48, frames: 4, bit_depth: 10, chroma: "444", seed: 2}}
  - name: tiny_422
    synthetic: {{width: 16, height: 16, frames: 2, bit_depth: 8, chroma: "422", seed: 3}}
"#,
        reference_fixture("clip_x264", "dist_x264"),
        reference_fixture("clip_blur", "dist_blur"),
    );
    gate(dir, "sharded.yaml", "sharded", &body)
}

/// One cell of each status: OK (cpu vs cpu2), FAIL (golden vs cpu at a
/// tolerance no printed score meets), ERROR (an external command that
/// fails), SKIP (optional cuda, absent here). The fixture's name holds
/// characters XML and Markdown must escape.
pub const ODD_NAME: &str = r#"clip <&"'> x264"#;

pub fn mixed(dir: &Path) -> PathBuf {
    let fixture = reference_fixture("PLACEHOLDER", "dist_x264").replace("PLACEHOLDER", r#""clip <&\"'> x264""#);
    let body = format!(
        r#"features: [psnr]
backends:
  golden: {{}}
  cpu: {{}}
  cpu2: {{kind: cpu}}
  cuda: {{required: false}}
  broken:
    kind: external
    command:
      argv: [sh, -c, "echo 'vmaf: cannot open /dev/dri/renderD128' >&2; exit 3", "{{output}}"]
      device: {{name: broken vmaf, arch_id: "cpu:test"}}
pairs:
  - [cpu, cpu2]
  - a: golden
    b: cpu
    tolerance: {{abs: 1.0e-300, adr: "test: no printed score is this close"}}
  - [cpu, broken]
  - [cpu, cuda]
fixtures:
{fixture}"#
    );
    gate(dir, "mixed.yaml", "mixed", &body)
}
