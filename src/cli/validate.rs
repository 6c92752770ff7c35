use super::Outcome;
use crate::cli::stdout::outln;
use crate::config::gate::GateFile;
use crate::config::load::load_yaml;
use crate::config::resolve::{load_calibration, load_registry};
use crate::config::{Diagnostic, Diagnostics, load_gate};
use crate::fixture::FrameSource;
use crate::report::plural;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Files or folders to check (default: gates/ and calibration/).
    #[arg(value_name = "PATHS")]
    paths: Vec<PathBuf>,
}

/// What a YAML file is, from its top-level keys.
enum Kind {
    Gate,
    Registry,
    Calibration,
}

fn kind_of(path: &Path) -> Result<Kind, Box<Diagnostic>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Box::new(Diagnostic::file(path, format!("cannot read: {e}"))))?;
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or(serde_yaml::Value::Null);
    let has = |k: &str| doc.get(k).is_some();
    Ok(if has("rows") {
        Kind::Calibration
    } else if has("pairs") || has("fixtures") || has("backends") {
        Kind::Gate
    } else if has("features") && doc.get("features").is_some_and(|f| f.is_mapping()) {
        Kind::Registry
    } else {
        Kind::Gate
    })
}

fn yaml_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect();
            entries.sort();
            out.extend(entries);
        } else {
            out.push(p.clone());
        }
    }
    out
}

pub fn run(args: Args) -> Outcome {
    let paths =
        if args.paths.is_empty() { vec![PathBuf::from("gates"), PathBuf::from("calibration")] } else { args.paths };
    let mut diags = Diagnostics::default();
    let files: Vec<(PathBuf, Result<Kind, Box<Diagnostic>>)> = yaml_files(&paths)
        .into_iter()
        .map(|p| {
            let kind = kind_of(&p);
            (p, kind)
        })
        .collect();
    // A calibration table names features: check them against a registry
    // validated in the same run, else the repository's (a table alone
    // would otherwise take any name, where a gate's run refuses it).
    let registry = files
        .iter()
        .find(|(_, kind)| matches!(kind, Ok(Kind::Registry)))
        .map(|(p, _)| p.clone())
        .or_else(|| Some(PathBuf::from("gates/features.yaml")).filter(|p| p.is_file()))
        .and_then(|p| load_registry(&p).ok().map(|r| (p, r.value)));
    for (path, kind) in files {
        let kind = match kind {
            Ok(k) => k,
            Err(d) => {
                diags.push(*d);
                continue;
            }
        };
        match kind {
            Kind::Registry => match load_registry(&path) {
                Ok(r) => {
                    outln!("ok: {} (feature registry: {})", path.display(), plural(r.value.features.len(), "feature"))
                }
                Err(d) => diags.extend(d),
            },
            Kind::Calibration => match load_calibration(&path, registry.as_ref().map(|(_, r)| r)) {
                Ok(t) => outln!(
                    "ok: {} (calibration table: {}; {})",
                    path.display(),
                    plural(t.value.rows.len(), "row"),
                    registry
                        .as_ref()
                        .map_or("features not checked: no feature registry found".to_string(), |(p, _)| {
                            format!("features checked against {}", p.display())
                        })
                ),
                Err(d) => diags.extend(d),
            },
            Kind::Gate => match load_gate(&path) {
                Ok(g) => {
                    let cells: usize = g.pairs.iter().map(|p| p.features.len() * p.fixtures.len()).sum();
                    outln!(
                        "ok: {} (gate `{}`: {}, {}, {}, {})",
                        path.display(),
                        g.name,
                        plural(g.features.len(), "feature"),
                        plural(g.pairs.len(), "pair"),
                        plural(g.fixtures.len(), "fixture"),
                        plural(cells, "cell")
                    );
                    // Files are data, not configuration: a fixture whose
                    // files are not there (yet) is a warning, at its line.
                    let spans = load_yaml::<GateFile>(&path).ok().map(|l| l.spans);
                    for (i, f) in g.fixtures.iter().enumerate() {
                        let files = [("reference", &f.reference), ("distorted", &f.distorted)].into_iter().filter_map(
                            |(key, src)| match src {
                                FrameSource::Raw { path: p, .. } | FrameSource::Y4m { path: p } => {
                                    Some((key, p, false))
                                }
                                FrameSource::Synthetic { .. } => None,
                            },
                        );
                        for (key, p, folder) in files.chain(f.golden.as_ref().map(|p| ("golden", p, true))) {
                            let problem = match std::fs::metadata(p) {
                                Err(_) => "does not exist",
                                Ok(m) if m.is_dir() && !folder => "is a folder, not a file",
                                Ok(m) if !m.is_dir() && folder => "is not a folder",
                                Ok(_) => continue,
                            };
                            let at = spans
                                .as_ref()
                                .and_then(|s| s.find(&format!("/fixtures/{i}/{key}")))
                                .map_or(String::new(), |pos| format!(":{}:{}", pos.line, pos.column));
                            eprintln!(
                                "warning: {}{at}: fixture `{}`: {} {problem}",
                                path.display(),
                                f.name,
                                p.display()
                            );
                        }
                    }
                }
                Err(d) => {
                    // Check the gate's own schema first so its errors come first.
                    if let Err(own) = load_yaml::<GateFile>(&path) {
                        diags.extend(own);
                    } else {
                        diags.extend(d);
                    }
                }
            },
        }
    }
    // A file shared by several gates (the registry, say) reports once.
    let mut unique = Diagnostics::default();
    for d in diags.0 {
        if !unique.0.contains(&d) {
            unique.push(d);
        }
    }
    let diags = unique;
    if diags.is_empty() { Ok(0) } else { Err(diags.into()) }
}
