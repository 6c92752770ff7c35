//! An external command as a backend: a real `vmaf` binary (CPU or GPU
//! build), or anything else that writes libvmaf's JSON. The gate declares
//! the argv template and the device identity; the command's per-frame
//! scores go through the same diff, tolerance and report as any side.

pub mod process;
pub mod template;

use super::{Backend, DeviceInfo, DeviceKind, SideOutput, SideRequest};
use crate::config::gate::{BackendKind, DeclaredDevice, DeclaredKind, ExternalCommand};
use crate::config::{ResolvedBackend, ResolvedFeature, ResolvedFixture};
use crate::fixture::{FrameSource, PairSource};
use crate::scores::{RecordedScores, parse_libvmaf_json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Lines and characters of a failing command's stderr kept in the note.
const TAIL_LINES: usize = 12;
const TAIL_CHARS: usize = 1500;

pub struct ExternalBackend {
    command: ExternalCommand,
    device: DeviceInfo,
}

impl ExternalBackend {
    pub fn new(decl: &ResolvedBackend) -> Result<Self, String> {
        let command = decl.command.clone().ok_or("an external backend needs a `command`")?;
        for t in &command.argv {
            template::check(t).map_err(|e| e.message)?;
        }
        let declared = &command.device;
        let device = DeviceInfo {
            backend: decl.name.clone(),
            kind: match declared.kind {
                DeclaredKind::Gpu => DeviceKind::Gpu,
                DeclaredKind::Cpu => DeviceKind::External,
            },
            arch_id: declared.arch_id.clone(),
            name: declared.name.clone(),
            driver: Some(format!("external command `{}` (identity declared in the gate)", program(&command.argv))),
            driver_version: declared.driver_version.clone(),
            api_version: None,
            device_type: Some(match declared.kind {
                DeclaredKind::Gpu => "gpu".into(),
                DeclaredKind::Cpu => "cpu".into(),
            }),
            pci_bus_id: None,
        };
        Ok(ExternalBackend { command, device })
    }

    /// The argv for one side, every placeholder filled.
    fn argv(&self, feature: &str, inputs: &Inputs, output: &Path, threads: usize) -> Result<Vec<String>, String> {
        let g = inputs.geometry;
        let feature_arg = self.command.feature_args.get(feature).cloned().unwrap_or_else(|| feature.to_string());
        let value = |name: &str| -> String {
            match name {
                "reference" => inputs.reference.display().to_string(),
                "distorted" => inputs.distorted.display().to_string(),
                "width" => g.width.to_string(),
                "height" => g.height.to_string(),
                "bit_depth" => g.bit_depth.to_string(),
                "chroma" => g.chroma.as_str().to_string(),
                "pixel_format" => g.pixel_format(),
                "feature" => feature_arg.clone(),
                "output" => output.display().to_string(),
                "threads" => threads.to_string(),
                other => unreachable!("template::check admits no placeholder `{other}`"),
            }
        };
        self.command.argv.iter().map(|t| template::expand(t, &value).map_err(|e| e.message)).collect()
    }

    /// Runs the command once for `feature` on two files and reads the
    /// libvmaf JSON it writes; `threads` fills `{threads}`. Every failure
    /// is a one-line reason (exit status and the tail of its stderr,
    /// timeout, output that is not libvmaf JSON).
    pub fn score_files(&self, feature: &str, inputs: &Inputs, threads: usize) -> Result<RecordedScores, String> {
        let dir = tempfile::Builder::new()
            .prefix("ulpgate-external-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        let output = dir.path().join("output.json");
        let argv = self.argv(feature, inputs, &output, threads)?;
        let name = program(&argv);
        let timeout = Duration::from_secs(self.command.timeout_s);
        let finished = process::run(&argv, timeout).map_err(|e| match e {
            process::RunError::Spawn(e) => format!("cannot run `{}`: {e}", argv[0]),
            process::RunError::Wait(e) => format!("lost `{name}` while waiting for it: {e}"),
            process::RunError::Timeout { stderr } => {
                format!(
                    "`{name}` timed out after {} s and was killed{}",
                    self.command.timeout_s,
                    tail_note(&stderr, "")
                )
            }
        })?;
        if !finished.status.success() {
            return Err(format!(
                "`{name}` {}{}",
                process::describe_status(&finished.status),
                tail_note(&finished.stderr, &finished.stdout)
            ));
        }
        let text = std::fs::read_to_string(&output).map_err(|e| {
            let why =
                if e.kind() == std::io::ErrorKind::NotFound { "wrote nothing".to_string() } else { e.to_string() };
            format!("`{name}` succeeded but {why} at {{output}}{}", tail_note(&finished.stderr, &finished.stdout))
        })?;
        serde_json::from_str(&text)
            .map_err(anyhow::Error::from)
            .and_then(|doc| parse_libvmaf_json(&doc))
            .map_err(|e| format!("`{name}` wrote output that is not libvmaf JSON: {e:#}"))
    }

    /// The name notes call the command by: its program's file name.
    pub fn program_name(&self) -> String {
        program(&self.command.argv)
    }
}

/// libvmaf's `vmaf` tool as an external backend named `name`: the
/// arguments the README's example gives it, with `--threads {threads}`,
/// and its device declared from `program --version` (a CPU build).
pub fn libvmaf_backend(name: &str, program: &Path) -> Result<ResolvedBackend, String> {
    let shown = program.display();
    let argv0 = if program.components().count() > 1 {
        std::path::absolute(program).map_err(|e| format!("{shown}: {e}"))?.display().to_string()
    } else {
        program.display().to_string()
    };
    let version = process::run(&[argv0.clone(), "--version".into()], Duration::from_secs(30))
        .map_err(|e| match e {
            process::RunError::Spawn(e) => format!("cannot run `{shown} --version`: {e}"),
            process::RunError::Wait(e) => format!("lost `{shown} --version`: {e}"),
            process::RunError::Timeout { .. } => format!("`{shown} --version` did not finish in 30 s"),
        })
        .and_then(|f| {
            // libvmaf's tool prints it on stderr.
            let text = if f.stdout.trim().is_empty() { f.stderr.trim() } else { f.stdout.trim() }.to_string();
            if f.status.success() && !text.is_empty() {
                Ok(text)
            } else {
                Err(format!(
                    "`{shown} --version` {}{}",
                    process::describe_status(&f.status),
                    tail_note(&f.stderr, &f.stdout)
                ))
            }
        })?;
    let version = version.lines().last().unwrap_or_default().trim().to_string();
    let mut argv = vec![argv0];
    argv.extend(
        [
            "-r",
            "{reference}",
            "-d",
            "{distorted}",
            "-w",
            "{width}",
            "-h",
            "{height}",
            "-p",
            "{chroma}",
            "-b",
            "{bit_depth}",
            "--feature",
            "{feature}",
            "--no_prediction",
            "--threads",
            "{threads}",
            "--quiet",
            "--json",
            "-o",
            "{output}",
        ]
        .map(String::from),
    );
    Ok(ResolvedBackend {
        name: name.to_string(),
        kind: BackendKind::External,
        required: true,
        device: None,
        command: Some(ExternalCommand {
            argv,
            feature_args: Default::default(),
            timeout_s: 600,
            device: DeclaredDevice {
                name: format!("libvmaf {version} ({shown})"),
                arch_id: format!("cpu:{}", std::env::consts::ARCH),
                kind: DeclaredKind::Cpu,
                driver_version: Some(version),
            },
        }),
    })
}

/// The name a note calls the command by: its program's file name.
fn program(argv: &[String]) -> String {
    let first = argv.first().map(String::as_str).unwrap_or("");
    Path::new(first).file_name().map_or_else(|| first.to_string(), |n| n.to_string_lossy().into_owned())
}

/// What the command reads: two files and their geometry.
pub struct Inputs {
    pub reference: PathBuf,
    pub distorted: PathBuf,
    pub geometry: crate::fixture::Geometry,
}

/// Files the command can read: raw and Y4M fixtures as they are (absolute
/// paths; a Y4M header carries its own geometry, which the placeholders
/// repeat), synthetic fixtures written out as raw YUV (16-bit little-endian
/// samples above 8 bits, libvmaf's raw format).
fn inputs(fixture: &ResolvedFixture, loaded: &dyn PairSource, dir: &Path) -> Result<Inputs, String> {
    let file = |source: &FrameSource, distorted: bool, name: &str| -> Result<PathBuf, String> {
        match source {
            FrameSource::Raw { path, .. } | FrameSource::Y4m { path } => {
                std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
            }
            FrameSource::Synthetic { .. } => write_raw(&dir.join(name), loaded, distorted),
        }
    };
    Ok(Inputs {
        reference: file(&fixture.reference, false, "reference.yuv")?,
        distorted: file(&fixture.distorted, true, "distorted.yuv")?,
        geometry: loaded.geometry(),
    })
}

fn write_raw(path: &Path, frames: &dyn PairSource, distorted: bool) -> Result<PathBuf, String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot write the synthetic fixture to {}: {e}", path.display());
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| failed(&e))?);
    for i in 0..frames.frames() {
        let frame = frames.frame(i, distorted).map_err(|e| failed(&e))?;
        out.write_all(frame.samples.as_bytes()).map_err(|e| failed(&e))?;
    }
    out.flush().map_err(|e| failed(&e))?;
    Ok(path.to_path_buf())
}

/// ` — stderr: <tail>` (or stdout's tail when stderr is empty).
fn tail_note(stderr: &str, stdout: &str) -> String {
    let (name, text) = if stderr.trim().is_empty() { ("stdout", stdout) } else { ("stderr", stderr) };
    let tail = process::tail(text, TAIL_LINES, TAIL_CHARS);
    if tail.is_empty() { " (it printed nothing)".into() } else { format!("; {name}: {tail}") }
}

impl Backend for ExternalBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::External
    }

    fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// The command decides what it can compute; a feature it does not know
    /// fails at run time with its own message.
    fn supports(&self, _feature: &ResolvedFeature) -> Result<(), String> {
        Ok(())
    }

    /// `{threads}` is 1: each side is one job, and the runner runs sides
    /// side by side.
    fn compute(&self, request: &SideRequest<'_>) -> Result<SideOutput, String> {
        let loaded = (request.frames)().map_err(|e| e.to_string())?;
        let dir = tempfile::Builder::new()
            .prefix("ulpgate-external-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        let inputs = inputs(request.fixture, &*loaded, dir.path())?;
        let recorded = self.score_files(&request.feature.name, &inputs, 1)?;
        if recorded.frames != loaded.frames() {
            return Err(format!(
                "frame-count mismatch: `{}` reported {} frames of {} for fixture `{}`, which has {}",
                self.program_name(),
                recorded.frames,
                request.feature.name,
                request.fixture.name,
                loaded.frames()
            ));
        }
        for _ in 0..recorded.frames {
            (request.on_frame)();
        }
        Ok(SideOutput {
            scores: recorded.scores,
            frames: recorded.frames,
            device: self.device.clone(),
            dispatches: None,
        })
    }
}
