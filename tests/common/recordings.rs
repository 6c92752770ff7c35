//! libvmaf recordings of option variants, `tests/data/<feature>/*.json`
//! (scripts/record_options.py writes them; tests/data/cambi's were written
//! by hand in the same shape): the exact `vmaf` command, the `--feature`
//! argument and its options as typed JSON, the input (`reference` and
//! `distorted` raw files relative to the repository root, or a recipe the
//! test file knows, with its `geometry`), and every metric libvmaf printed
//! per frame (`null` where it printed a non-finite value).

use super::root;
use std::path::{Path, PathBuf};
use ulpgate::features::Options;
use ulpgate::fixture::{FrameSource, Geometry, LoadedFixture};
use ulpgate::scores::{Scores, read_libvmaf_json};

/// One recording: its input, options and scores.
pub struct Recording {
    /// The file's stem (`csf_2` for `tests/data/adm/csf_2.json`).
    pub name: String,
    pub path: PathBuf,
    pub doc: serde_json::Value,
    /// The extractor (`adm` of `adm=adm_csf_mode=2`).
    pub feature: String,
    pub options: Options,
    pub recorded: Scores,
}

/// Every recording of `tests/data/<folder>/`, in file-name order.
pub fn recordings(folder: &str) -> Vec<Recording> {
    let dir = root().join("tests/data").join(folder);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.into_iter().map(|p| Recording::read(&p)).collect()
}

impl Recording {
    pub fn read(path: &Path) -> Recording {
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let options: Options = serde_json::from_value(doc["options"].clone()).unwrap();
        let argument = doc["feature"].as_str().unwrap_or_else(|| panic!("{}: no feature", path.display()));
        let feature = argument.split('=').next().unwrap().to_string();
        let recorded = read_libvmaf_json(path).unwrap().scores;
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        Recording { name, path: path.to_path_buf(), doc, feature, options, recorded }
    }

    /// `<folder>/<name>`, for messages.
    pub fn what(&self) -> String {
        let folder = self.path.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy();
        format!("{folder}/{}", self.name)
    }

    pub fn geometry(&self) -> Geometry {
        serde_json::from_value(self.doc["geometry"].clone()).expect("a geometry")
    }

    /// Frames libvmaf scored.
    pub fn frames(&self) -> usize {
        self.doc["frames"].as_u64().expect("frames") as usize
    }

    /// The raw pair libvmaf scored (`reference`, `distorted`): its first
    /// `frames` frames, or all.
    pub fn raw_fixture(&self, frames: Option<usize>) -> LoadedFixture {
        let geometry = self.geometry();
        let src = |key: &str| {
            let path = self.doc[key].as_str().unwrap_or_else(|| panic!("{}: no {key}", self.what()));
            FrameSource::Raw { path: root().join(path), geometry }
        };
        LoadedFixture::load(&src("reference"), &src("distorted"), frames).expect("the recorded pair")
    }

    /// The recorded metric names, sorted.
    pub fn metric_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.recorded.metrics().map(|(n, _)| n.to_string()).collect();
        names.sort();
        names
    }

    /// Asserts `ours` holds exactly the recorded metrics and, on the first
    /// `frames` frames of each, libvmaf's values: within `tolerance`
    /// (libvmaf prints 6 decimals, so 1e-6 is its precision), or, with
    /// `exact`, the same text at 6 decimals (for integer arithmetic, where
    /// our double is libvmaf's). A non-finite value (printed `null`) must
    /// be non-finite here too. Returns the values compared.
    pub fn assert_reproduced(&self, ours: &Scores, frames: usize, tolerance: f64, exact: bool) -> usize {
        let what = self.what();
        let mut produced: Vec<String> = ours.metrics().map(|(n, _)| n.to_string()).collect();
        produced.sort();
        assert_eq!(produced, self.metric_names(), "{what}: metric names (ours, libvmaf's)");
        let mut compared = 0;
        for (name, want) in self.recorded.metrics() {
            let got = ours.get(name).unwrap();
            let want = &want[..want.len().min(frames)];
            assert_eq!(got.len(), want.len(), "{what} {name}: frames");
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                let ok = if !w.is_finite() {
                    !g.is_finite()
                } else if exact {
                    format!("{w:.6}") == format!("{g:.6}")
                } else {
                    (w - g).abs() <= tolerance
                };
                assert!(ok, "{what} {name} frame {i}: libvmaf {w}, ours {g}, |Δ| {:e}", (w - g).abs());
                compared += 1;
            }
        }
        compared
    }
}
