//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod recordings;

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

/// `ulpgate score` of `feature` on `backend` over the committed 200x184
/// reference clip and its x264 distortion (raw 8-bit 4:2:0, 12 frames).
#[allow(dead_code)] // not every test binary that includes this module scores
pub fn score_reference_clip(backend: &str, feature: &str) -> Command {
    let mut cmd = ulpgate();
    cmd.args(["score", "--backend", backend, "--feature", feature, "--width", "200", "--height", "184"])
        .args(["--reference", "fixtures/reference/testsrc2_200x184_8bit_420/ref.yuv"])
        .args(["--distorted", "fixtures/reference/testsrc2_200x184_8bit_420/dist_x264.yuv"]);
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

/// `ulpgate run GATE ARGS --json-out <dir>/r.json`, which must exit 0 (the
/// message is its standard error), and the report it wrote.
pub fn run_report(dir: &Path, gate: &Path, args: &[&str]) -> serde_json::Value {
    let json = dir.join("r.json");
    let out = ulpgate().arg("run").arg(gate).args(args).arg("--json-out").arg(&json).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(&json).expect("report written")).expect("report is JSON")
}

/// The report JSON without its timing block (the part that may vary).
pub fn without_timing(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("report is JSON");
    v.as_object_mut().expect("object").remove("timing");
    v
}

/// The feature names a gate file selects (`features:` as a list of names
/// or `{name: ...}` entries; `all` is every registered feature), so tests
/// count cells from the gate instead of hard-coding its size.
pub fn gate_features(gate: &str) -> Vec<String> {
    let read = |p: &str| -> serde_yaml::Value {
        serde_yaml::from_str(&std::fs::read_to_string(root().join(p)).expect("gate file")).expect("YAML")
    };
    let doc = read(gate);
    match &doc["features"] {
        serde_yaml::Value::String(s) if s == "all" => {
            let reg = read("gates/features.yaml");
            reg["features"].as_mapping().expect("features").keys().map(|k| k.as_str().unwrap().to_string()).collect()
        }
        serde_yaml::Value::Sequence(list) => {
            list.iter().map(|f| f.as_str().or_else(|| f["name"].as_str()).expect("feature name").to_string()).collect()
        }
        other => panic!("{gate}: unexpected features: {other:?}"),
    }
}

/// The recorded scores a gate holds its CPU reference to: one per feature
/// of the gate and fixture with a `golden:` folder that holds the feature's
/// recording (`<golden_file or name>.json`), which is one `golden`-kind vs
/// cpu cell. The count adapts to the gate and to the recordings there are
/// (the fork's features have none on the 320x240 clips).
pub fn recorded_cells(gate: &str) -> usize {
    let read = |p: &std::path::Path| -> serde_yaml::Value {
        serde_yaml::from_str(&std::fs::read_to_string(p).expect("YAML file")).expect("YAML")
    };
    let gate_path = root().join(gate);
    let dir = gate_path.parent().expect("a gate's folder").to_path_buf();
    let doc = read(&gate_path);
    let registry = read(&root().join("gates/features.yaml"));
    let folders: Vec<PathBuf> = doc["fixtures"]
        .as_sequence()
        .expect("fixtures")
        .iter()
        .filter_map(|f| f["golden"].as_str())
        .map(|g| dir.join(g))
        .collect();
    gate_features(gate)
        .iter()
        .map(|f| {
            let stem = registry["features"][f.as_str()]["golden_file"].as_str().unwrap_or(f).to_string();
            folders.iter().filter(|d| d.join(format!("{stem}.json")).exists()).count()
        })
        .sum()
}

/// The software GPUs every kernel test runs on: Mesa lavapipe (Vulkan) and
/// PoCL (OpenCL). Both must be there: a GPU test that skips itself proves
/// nothing, so a missing driver fails with the package that provides it
/// (`scripts/test.sh` installs both). Opened once per test binary and
/// shared: PoCL's first device query is not safe to run from two threads at
/// once (tests running in parallel crashed in `clGetDeviceInfo`).
pub fn software_gpus() -> Vec<(&'static str, std::sync::Arc<dyn ulpgate::backend::gpu::Gpu>)> {
    type Gpus = Vec<(&'static str, std::sync::Arc<dyn ulpgate::backend::gpu::Gpu>)>;
    static GPUS: std::sync::OnceLock<Gpus> = std::sync::OnceLock::new();
    GPUS.get_or_init(|| {
        use ulpgate::backend::{opencl, vulkan};
        use ulpgate::config::gate::DeviceSelector;
        let lavapipe = vulkan::open(Some(&DeviceSelector::Name("llvmpipe".into())), vulkan::Options::default())
            .unwrap_or_else(|e| panic!("this test runs on Mesa lavapipe (apt-get install mesa-vulkan-drivers): {e}"));
        let pocl = opencl::open(None).unwrap_or_else(|e| {
            panic!("this test runs on PoCL (apt-get install pocl-opencl-icd ocl-icd-libopencl1): {e}")
        });
        assert_eq!(pocl.device().device_type.as_deref(), Some("cpu"), "expected PoCL's CPU device");
        vec![("vulkan", lavapipe), ("opencl", pocl)]
    })
    .clone()
}

/// Each fixture of a gate file with its geometry (a raw fixture's
/// `geometry:`, or the shape of a `synthetic:` spec), in file order.
pub fn gate_fixtures(gate: &str) -> Vec<(String, ulpgate::fixture::Geometry)> {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root().join(gate)).expect("gate file")).expect("YAML");
    let fixtures = doc["fixtures"].as_sequence().expect("fixtures");
    fixtures
        .iter()
        .map(|f| {
            let shape = if f["geometry"].is_mapping() { &f["geometry"] } else { &f["synthetic"] };
            let mut geometry = serde_yaml::Mapping::new();
            for key in ["width", "height", "bit_depth", "chroma"] {
                geometry.insert(key.into(), shape[key].clone());
            }
            let geometry = serde_yaml::from_value(serde_yaml::Value::Mapping(geometry)).expect("a geometry");
            (f["name"].as_str().expect("fixture name").to_string(), geometry)
        })
        .collect()
}

/// Why libvmaf's extractor for `feature` (default options) refuses input of
/// `fixture`'s geometry in `gate` (cambi below 216x216): such a cell is
/// SKIP with this reason in its note; `None` where the feature takes it.
pub fn refusal(gate: &str, feature: &str, fixture: &str) -> Option<String> {
    let (_, geometry) = gate_fixtures(gate).into_iter().find(|(name, _)| name == fixture)?;
    let imp = ulpgate::features::find(feature)?;
    (imp.refuses)(&geometry, &ulpgate::features::Options::new())
}

/// Checks a cell that libvmaf's extractor refuses: SKIP, the reason in the
/// note. Returns whether the cell is one (the caller checks the others).
pub fn skipped_as_refused(gate: &str, cell: &serde_json::Value) -> bool {
    let (feature, fixture) = (cell["feature"].as_str().unwrap(), cell["fixture"].as_str().unwrap());
    let Some(why) = refusal(gate, feature, fixture) else { return false };
    assert_eq!(cell["status"], "SKIP", "{cell}");
    assert!(cell["note"].as_str().unwrap().contains(&why), "{cell}");
    true
}

/// A synthetic pair (`SyntheticSpec`'s default content and distortion) of
/// `frames` frames, loaded as the gate loads fixtures.
pub fn synthetic(
    width: u32,
    height: u32,
    bit_depth: u8,
    chroma: ulpgate::fixture::Chroma,
    frames: u32,
    seed: u64,
) -> ulpgate::fixture::LoadedFixture {
    use ulpgate::fixture::{FrameSource, LoadedFixture, SyntheticSpec};
    let spec = SyntheticSpec {
        width,
        height,
        frames,
        bit_depth,
        chroma,
        seed,
        content: Default::default(),
        distortion: Default::default(),
    };
    let src = |distorted| FrameSource::Synthetic { spec: spec.clone(), distorted };
    LoadedFixture::load(&src(false), &src(true), None).expect("synthetic frames")
}

/// The committed reference pair `fixtures/reference/<folder>/{ref,<dist>}.yuv`
/// of `geometry`: its first `frames` frames, or all.
pub fn recorded(
    folder: &str,
    dist: &str,
    geometry: ulpgate::fixture::Geometry,
    frames: Option<usize>,
) -> ulpgate::fixture::LoadedFixture {
    use ulpgate::fixture::{FrameSource, LoadedFixture};
    let dir = root().join("fixtures/reference").join(folder);
    let src = |name: &str| FrameSource::Raw { path: dir.join(format!("{name}.yuv")), geometry };
    LoadedFixture::load(&src("ref"), &src(dist), frames).expect("a committed reference pair")
}

/// Runs `features` (YAML list) cpu vs lavapipe and cpu vs PoCL, both
/// required, on the recorded 8-bit clip and a 97x61 synthetic fixture of
/// `bit_depth` and `chroma`, through the binary with the environment
/// variable `var` set to `value` (a kernel-shape switch), and asserts every
/// cell OK on a GPU side with every metric bit for bit with the CPU. The
/// switch must have been taken (`ULPGATE_TRACE` names it) and each of
/// `kernels` built on both drivers: a switch nobody reads would pass the
/// rest with the default kernels.
pub fn assert_bit_exact_with_env(
    features: &str,
    bit_depth: u8,
    chroma: &str,
    var: &str,
    value: &str,
    kernels: &[&str],
) {
    assert_bit_exact_with_env_at(features, (97, 61), bit_depth, chroma, (var, value), kernels);
}

/// [`assert_bit_exact_with_env`] with a synthetic fixture of `size`;
/// returns the run's standard error (its trace) for further checks.
pub fn assert_bit_exact_with_env_at(
    features: &str,
    (width, height): (u32, u32),
    bit_depth: u8,
    chroma: &str,
    (var, value): (&str, &str),
    kernels: &[&str],
) -> String {
    let dir = tempfile::tempdir().unwrap();
    let gate = format!(
        "{HEADER}features: {features}\nbackends:\n  cpu: {{}}\n  vulkan: {{required: true, device: llvmpipe}}\n  \
         opencl: {{required: true}}\npairs: [[cpu, vulkan], [cpu, opencl]]\nfixtures:\n{FX_8BIT}  - name: s\n    \
         synthetic: {{width: {width}, height: {height}, frames: 2, bit_depth: {bit_depth}, chroma: \"{chroma}\", seed: 9}}\n"
    );
    let path = write(dir.path(), "g.yaml", &gate);
    let json = dir.path().join("r.json");
    let out = ulpgate()
        .env(var, value)
        .env("ULPGATE_TRACE", "1")
        .arg("run")
        .arg(&path)
        .arg("--json-out")
        .arg(&json)
        .output()
        .unwrap();
    let what = format!("{features} with {var}={value}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
    assert_switch_took_effect(&stderr, var, value, kernels, &["opencl", "vulkan"]);
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cells = report["cells"].as_array().unwrap();
    let listed: serde_yaml::Value = serde_yaml::from_str(&format!("f: {features}")).expect("a YAML list");
    let count = listed["f"].as_sequence().expect("a YAML list").len();
    assert_eq!(cells.len(), count * 2 * 2, "{what}: features x 2 pairs x 2 fixtures");
    for c in cells {
        assert_eq!(c["status"], "OK", "{what}: {c}");
        assert_eq!(c["device_b"]["kind"], "gpu", "{what}: {c}");
        for (metric, diff) in c["per_metric_max_abs_diff"].as_object().unwrap() {
            assert_eq!(diff.as_f64(), Some(0.0), "{what}: {}: {metric} differs by {diff}", c["id"]);
        }
    }
    stderr
}

/// Runs `side` on `gpu` behind a kernel counter and panics unless at least
/// one kernel a frame completed: a GPU pipeline that fell back to the CPU
/// reference would match it by construction, so a twin test must see its
/// kernels run (the runner's own proof, `check_provenance`, is the same
/// count).
pub fn on_gpu<T>(
    gpu: &std::sync::Arc<dyn ulpgate::backend::gpu::Gpu>,
    frames: usize,
    what: &str,
    side: impl FnOnce(std::sync::Arc<dyn ulpgate::backend::gpu::Gpu>) -> T,
) -> T {
    let counter = ulpgate::backend::gpu::CountingGpu::new(gpu.clone());
    let out = side(counter.clone());
    let n = counter.dispatches();
    assert!(n as usize >= frames.max(1), "{what}: {n} kernels completed on the GPU for {frames} frames");
    out
}

/// The same values, as many, bit for bit: a bare `zip` would pass a GPU
/// side that lost frames, and a `max` of differences one that made NaNs.
pub fn assert_same_bits(cpu: &[f64], gpu: &[f64], what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: {} frames from the GPU, {} from the CPU", gpu.len(), cpu.len());
    let worst = cpu.iter().zip(gpu).map(|(x, y)| (x - y).abs()).fold(0.0f64, f64::max);
    assert!(
        cpu.iter().zip(gpu).all(|(x, y)| x.to_bits() == y.to_bits()),
        "{what}: max |Δ| {worst:e}\n cpu {cpu:?}\n gpu {gpu:?}"
    );
}

/// Asserts that a run's `ULPGATE_TRACE=1` standard error (`stderr`) took the
/// kernel switch `var=value` and built each of `kernels` on each of
/// `drivers` (`opencl`, `vulkan`): a switch nobody reads would leave a
/// bit-exactness test passing with the default kernels.
pub fn assert_switch_took_effect(stderr: &str, var: &str, value: &str, kernels: &[&str], drivers: &[&str]) {
    let traced: Vec<&str> = stderr.lines().filter_map(|l| l.strip_prefix("ulpgate trace: +")).collect();
    assert!(
        traced.iter().any(|l| l.contains(&format!(" ms: {var}={value}: "))),
        "{var}={value} was not taken: {stderr}"
    );
    for kernel in kernels {
        for driver in drivers {
            // OpenCL's line ends with the name, Vulkan's with the build time.
            let built = match *driver {
                "vulkan" => traced.iter().any(|l| l.contains(&format!(": vulkan: pipeline {kernel}: "))),
                _ => traced.iter().any(|l| l.ends_with(&format!(": {driver}: kernel {kernel}"))),
            };
            assert!(built, "{var}={value}: {kernel} was not built on {driver}: {stderr}");
        }
    }
}
