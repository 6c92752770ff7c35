//! The per-frame calibration corpus (Research-0041): one row per (arch_id,
//! backend, feature, metric, fixture, frame) with the GPU score and the CPU
//! reference score, as CSV or JSON Lines. Scores are written as the
//! shortest decimal text that reads back as the same double (non-finite:
//! `NaN`, `inf`, `-inf`), so nothing is lost between collect and fit.
//!
//! Reading checks what a fit relies on and names the file and line of
//! every problem: every column present, numbers that parse, and no two
//! rows that claim the same measurement differently (see [`read`]).

use anyhow::{Result, bail};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The columns, in the order they are written.
pub const COLUMNS: [&str; 8] =
    ["arch_id", "backend", "feature", "metric", "fixture", "frame", "gpu_score", "cpu_score"];

/// Problems listed before a read gives up.
const MAX_ERRORS: usize = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The GPU device's arch_id (Research-0041).
    pub arch_id: String,
    /// The GPU backend's name in the gate.
    pub backend: String,
    pub feature: String,
    pub metric: String,
    pub fixture: String,
    /// 0-based frame index within the fixture.
    pub frame: usize,
    pub gpu_score: f64,
    pub cpu_score: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    /// JSON Lines: one object per line.
    Jsonl,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }

    /// The format `--format` gives, else the one `path`'s extension names
    /// (`.csv`; `.jsonl` or `.ndjson`).
    pub fn resolve(given: Option<Format>, path: &Path) -> Result<Format> {
        if let Some(f) = given {
            return Ok(f);
        }
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("csv") => Ok(Format::Csv),
            Some("jsonl" | "ndjson") => Ok(Format::Jsonl),
            _ => bail!(
                "{}: cannot tell the corpus format from the extension (.csv, .jsonl or .ndjson): give --format csv|jsonl",
                path.display()
            ),
        }
    }
}

/// A score as text: the shortest decimal that reads back as the same
/// double; `NaN`, `inf` or `-inf` when not finite.
pub fn score_text(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        // serde_json writes finite doubles with ryu: shortest round trip.
        serde_json::Number::from_f64(x).map_or_else(|| format!("{x}"), |n| n.to_string())
    }
}

/// Parses a score written by [`score_text`] (or any decimal Rust reads).
pub fn parse_score(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok()
}

/// The rows as a file of `format`.
pub fn write(rows: &[Row], format: Format) -> Result<Vec<u8>> {
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(COLUMNS)?;
            for r in rows {
                let frame = r.frame.to_string();
                let (g, c) = (score_text(r.gpu_score), score_text(r.cpu_score));
                w.write_record([&r.arch_id, &r.backend, &r.feature, &r.metric, &r.fixture, &frame, &g, &c])?;
            }
            Ok(w.into_inner().map_err(|e| anyhow::anyhow!("cannot write the corpus: {e}"))?)
        }
        Format::Jsonl => {
            let mut out = Vec::new();
            for r in rows {
                let score = |x: f64| match serde_json::Number::from_f64(x) {
                    Some(n) => serde_json::Value::Number(n),
                    None => serde_json::Value::String(score_text(x)),
                };
                let mut obj = serde_json::Map::new();
                obj.insert("arch_id".into(), r.arch_id.clone().into());
                obj.insert("backend".into(), r.backend.clone().into());
                obj.insert("feature".into(), r.feature.clone().into());
                obj.insert("metric".into(), r.metric.clone().into());
                obj.insert("fixture".into(), r.fixture.clone().into());
                obj.insert("frame".into(), r.frame.into());
                obj.insert("gpu_score".into(), score(r.gpu_score));
                obj.insert("cpu_score".into(), score(r.cpu_score));
                serde_json::to_writer(&mut out, &serde_json::Value::Object(obj))?;
                out.push(b'\n');
            }
            Ok(out)
        }
    }
}

/// A corpus as read: its rows and the 1-based line each came from.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub rows: Vec<Row>,
    pub lines: Vec<usize>,
}

/// Collects located problems; a read fails with all of them (up to
/// [`MAX_ERRORS`]).
struct Problems<'a> {
    path: &'a Path,
    list: Vec<String>,
    more: usize,
}

impl Problems<'_> {
    fn push(&mut self, line: usize, msg: impl Into<String>) {
        if self.list.len() < MAX_ERRORS {
            self.list.push(format!("{}:{line}: {}", self.path.display(), msg.into()));
        } else {
            self.more += 1;
        }
    }

    fn finish(self) -> Result<()> {
        if self.list.is_empty() {
            return Ok(());
        }
        let mut text = self.list.join("\n");
        if self.more > 0 {
            text.push_str(&format!("\n... and {} more", self.more));
        }
        bail!("{text}")
    }
}

/// Reads and checks a corpus. Fails (naming file and line) on: a missing
/// column; an unparsable frame or score; and contradictions:
///
/// * two rows for the same (backend, feature, metric, fixture, frame):
///   one `collect` writes each measurement once, from the one device a
///   backend ran on, so a second row, with a different arch_id, different
///   scores or even the same ones, means corpora were mixed or a row was
///   repeated (it would count twice in a fit);
/// * two rows for the same (feature, metric, fixture, frame) whose CPU
///   scores differ: the rows do not share one CPU reference (fixtures
///   with one name and different content, or different builds).
///
/// To fit several devices of one backend, collect each into its own corpus,
/// or give the backends distinct names in the gate.
pub fn read(path: &Path, format: Format) -> Result<Corpus> {
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let corpus = match format {
        Format::Csv => read_csv(path, &bytes)?,
        Format::Jsonl => read_jsonl(path, &bytes)?,
    };
    if corpus.rows.is_empty() {
        bail!("{}: the corpus has no rows", path.display());
    }
    check_consistency(path, &corpus)?;
    Ok(corpus)
}

fn parse_row(fields: [&str; 8], line: usize, problems: &mut Problems<'_>) -> Option<Row> {
    let mut ok = true;
    for (name, value) in COLUMNS.iter().zip(fields).take(5) {
        if value.is_empty() {
            problems.push(line, format!("empty {name}"));
            ok = false;
        }
    }
    let frame = fields[5].trim().parse::<usize>().map_err(|_| {
        problems.push(line, format!("frame `{}` is not a frame index (a whole number >= 0)", fields[5]));
    });
    let mut score = |i: usize| {
        parse_score(fields[i]).ok_or_else(|| {
            problems.push(line, format!("{} `{}` is not a number", COLUMNS[i], fields[i]));
        })
    };
    let (gpu, cpu) = (score(6), score(7));
    let (Ok(frame), Ok(gpu_score), Ok(cpu_score), true) = (frame, gpu, cpu, ok) else {
        return None;
    };
    Some(Row {
        arch_id: fields[0].to_string(),
        backend: fields[1].to_string(),
        feature: fields[2].to_string(),
        metric: fields[3].to_string(),
        fixture: fields[4].to_string(),
        frame,
        gpu_score,
        cpu_score,
    })
}

fn read_csv(path: &Path, bytes: &[u8]) -> Result<Corpus> {
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes);
    let headers = reader.headers().map_err(|e| anyhow::anyhow!("{}:1: cannot read the header: {e}", path.display()))?;
    // A spreadsheet's byte-order mark is not part of the first name.
    let index: HashMap<&str, usize> =
        headers.iter().enumerate().map(|(i, h)| (h.trim_start_matches('\u{feff}').trim(), i)).collect();
    let missing: Vec<&str> = COLUMNS.iter().copied().filter(|c| !index.contains_key(c)).collect();
    if !missing.is_empty() {
        bail!(
            "{}:1: the corpus has no column {} (a corpus has the columns {})",
            path.display(),
            missing.join(", "),
            COLUMNS.join(", ")
        );
    }
    let columns = COLUMNS.map(|c| index[c]);
    let width = headers.len();
    let mut problems = Problems { path, list: Vec::new(), more: 0 };
    let mut corpus = Corpus::default();
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                problems.push(line, format!("not CSV: {e}"));
                break;
            }
        };
        let line = record.position().map_or(0, |p| p.line() as usize);
        if record.len() != width {
            problems.push(line, format!("{} fields, the header has {width}", record.len()));
            continue;
        }
        let fields = columns.map(|i| record.get(i).unwrap_or_default());
        if let Some(row) = parse_row(fields, line, &mut problems) {
            corpus.rows.push(row);
            corpus.lines.push(line);
        }
    }
    problems.finish()?;
    Ok(corpus)
}

fn read_jsonl(path: &Path, bytes: &[u8]) -> Result<Corpus> {
    let text = std::str::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{}: not UTF-8 text: {e}", path.display()))?;
    let mut problems = Problems { path, list: Vec::new(), more: 0 };
    let mut corpus = Corpus::default();
    for (i, line_text) in text.lines().enumerate() {
        let line = i + 1;
        if line_text.trim().is_empty() {
            continue;
        }
        let obj = match serde_json::from_str::<serde_json::Value>(line_text) {
            Ok(serde_json::Value::Object(o)) => o,
            Ok(_) => {
                problems.push(line, "not a JSON object");
                continue;
            }
            Err(e) => {
                problems.push(line, format!("not JSON: {e}"));
                continue;
            }
        };
        let missing: Vec<&str> = COLUMNS.iter().copied().filter(|c| !obj.contains_key(*c)).collect();
        if !missing.is_empty() {
            problems.push(line, format!("no {} (a corpus row has {})", missing.join(", "), COLUMNS.join(", ")));
            continue;
        }
        // Strings stay as they are; numbers (and NaN/inf as strings) as text.
        let texts: Vec<String> = COLUMNS
            .iter()
            .map(|c| match &obj[*c] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let mut bad_type = false;
        for c in &COLUMNS[..5] {
            if !obj[*c].is_string() {
                problems.push(line, format!("{c} is {}, not a string", obj[*c]));
                bad_type = true;
            }
        }
        if bad_type {
            continue;
        }
        let fields: [&str; 8] = std::array::from_fn(|i| texts[i].as_str());
        if let Some(row) = parse_row(fields, line, &mut problems) {
            corpus.rows.push(row);
            corpus.lines.push(line);
        }
    }
    problems.finish()?;
    Ok(corpus)
}

fn check_consistency(path: &Path, corpus: &Corpus) -> Result<()> {
    let mut problems = Problems { path, list: Vec::new(), more: 0 };
    let mut measured: HashMap<(&str, &str, &str, &str, usize), usize> = HashMap::new();
    let mut reference: HashMap<(&str, &str, &str, usize), usize> = HashMap::new();
    for (i, (r, &line)) in corpus.rows.iter().zip(&corpus.lines).enumerate() {
        let what = || format!("{}/{}/{} on {} frame {}", r.backend, r.feature, r.metric, r.fixture, r.frame);
        let key = (r.backend.as_str(), r.feature.as_str(), r.metric.as_str(), r.fixture.as_str(), r.frame);
        if let Some(&j) = measured.get(&key) {
            let (first, first_line) = (&corpus.rows[j], corpus.lines[j]);
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
            let mut differences = Vec::new();
            if first.arch_id != r.arch_id {
                differences.push(format!("arch_id {} vs {}", first.arch_id, r.arch_id));
            }
            if !same(first.gpu_score, r.gpu_score) {
                differences.push(format!("gpu_score {} vs {}", score_text(first.gpu_score), score_text(r.gpu_score)));
            }
            if !same(first.cpu_score, r.cpu_score) {
                differences.push(format!("cpu_score {} vs {}", score_text(first.cpu_score), score_text(r.cpu_score)));
            }
            if differences.is_empty() {
                problems.push(line, format!("repeats line {first_line} ({}): a frame would count twice", what()));
            } else {
                problems.push(
                    line,
                    format!(
                        "line {first_line} already claims {} with a different {}: mixed corpora (one backend \
                         name, one device, one measurement per frame)",
                        what(),
                        differences.join(", ")
                    ),
                );
            }
            continue;
        }
        measured.insert(key, i);
        let rkey = (r.feature.as_str(), r.metric.as_str(), r.fixture.as_str(), r.frame);
        match reference.get(&rkey) {
            Some(&j) if corpus.rows[j].cpu_score.to_bits() != r.cpu_score.to_bits() => problems.push(
                line,
                format!(
                    "cpu_score {} of {}/{} on {} frame {} differs from line {}'s {}: the rows do not share one CPU \
                     reference (one fixture name for different content, or corpora of different builds)",
                    score_text(r.cpu_score),
                    r.feature,
                    r.metric,
                    r.fixture,
                    r.frame,
                    corpus.lines[j],
                    score_text(corpus.rows[j].cpu_score)
                ),
            ),
            Some(_) => {}
            None => {
                reference.insert(rkey, i);
            }
        }
    }
    problems.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(frame: usize, gpu: f64, cpu: f64) -> Row {
        Row {
            arch_id: "opencl:0x8086:3.1".into(),
            backend: "opencl".into(),
            feature: "psnr".into(),
            metric: "psnr_y".into(),
            fixture: "fx, \"quoted\"".into(),
            frame,
            gpu_score: gpu,
            cpu_score: cpu,
        }
    }

    fn roundtrip(format: Format, rows: &[Row]) -> Vec<Row> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("c.{}", format.as_str()));
        std::fs::write(&path, write(rows, format).unwrap()).unwrap();
        read(&path, format).unwrap().rows
    }

    #[test]
    fn scores_round_trip_exactly_in_both_formats() {
        let values = [0.1, 1.0 / 3.0, 1e-300, 123_456_789.123_456_79, -0.0, f64::MAX, 5e-324, 30.000000000000004];
        let rows: Vec<Row> = values.iter().enumerate().map(|(i, &v)| row(i, v, v * 1.0000001)).collect();
        for format in [Format::Csv, Format::Jsonl] {
            let back = roundtrip(format, &rows);
            assert_eq!(back.len(), rows.len());
            for (a, b) in rows.iter().zip(&back) {
                assert_eq!(a.gpu_score.to_bits(), b.gpu_score.to_bits(), "{format:?}");
                assert_eq!(a.cpu_score.to_bits(), b.cpu_score.to_bits(), "{format:?}");
                assert_eq!(a.fixture, b.fixture, "quoting survives");
            }
        }
    }

    #[test]
    fn non_finite_scores_are_kept_not_dropped() {
        let rows = vec![row(0, f64::NAN, 1.0), row(1, f64::INFINITY, 1.0), row(2, f64::NEG_INFINITY, 1.0)];
        for format in [Format::Csv, Format::Jsonl] {
            let back = roundtrip(format, &rows);
            assert!(back[0].gpu_score.is_nan());
            assert_eq!(back[1].gpu_score, f64::INFINITY);
            assert_eq!(back[2].gpu_score, f64::NEG_INFINITY);
        }
        assert_eq!(score_text(0.1), "0.1");
        assert_eq!(score_text(1e-300), "1e-300");
    }

    fn read_text(name: &str, text: &str) -> Result<Corpus> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let format = Format::resolve(None, &path)?;
        read(&path, format)
    }

    const HEADER: &str = "arch_id,backend,feature,metric,fixture,frame,gpu_score,cpu_score\n";

    #[test]
    fn missing_columns_are_named() {
        let e = read_text("c.csv", "arch_id,backend,feature,fixture,frame,gpu_score\na,b,c,d,0,1\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("c.csv:1: the corpus has no column metric, cpu_score"), "{msg}");
        let e = read_text("c.jsonl", "{\"arch_id\": \"a\", \"frame\": 0}\n").unwrap_err().to_string();
        assert!(e.contains("c.jsonl:1: no backend, feature, metric, fixture, gpu_score, cpu_score"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_and_extra_columns_are_fine() {
        let text = format!("\u{feff}note,{HEADER}hi,a,b,f,m,x,0,1.5,1.5\n");
        let c = read_text("c.csv", &text).unwrap();
        assert_eq!((c.rows[0].arch_id.as_str(), c.rows[0].gpu_score, c.lines[0]), ("a", 1.5, 2));
    }

    #[test]
    fn unparsable_numbers_name_file_and_line() {
        let text = format!("{HEADER}a,b,f,m,x,0,1.5,1.5\na,b,f,m,x,1,1.5e,1.5\na,b,f,m,x,-2,1,1\n");
        let msg = read_text("c.csv", &text).unwrap_err().to_string();
        assert!(msg.contains("c.csv:3: gpu_score `1.5e` is not a number"), "{msg}");
        assert!(msg.contains("c.csv:4: frame `-2` is not a frame index"), "{msg}");
        let msg = read_text("c.jsonl", "{\"arch_id\":\"a\",\"backend\":\"b\",\"feature\":\"f\",\"metric\":\"m\",\"fixture\":\"x\",\"frame\":0,\"gpu_score\":\"oops\",\"cpu_score\":1}\n")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("c.jsonl:1: gpu_score `oops` is not a number"), "{msg}");
    }

    #[test]
    fn short_records_and_empty_files_are_errors() {
        let msg = read_text("c.csv", &format!("{HEADER}a,b,f,m,x,0,1\n")).unwrap_err().to_string();
        assert!(msg.contains("c.csv:2: 7 fields, the header has 8"), "{msg}");
        let msg = read_text("c.csv", HEADER).unwrap_err().to_string();
        assert!(msg.contains("no rows"), "{msg}");
        assert!(read_text("c.txt", HEADER).unwrap_err().to_string().contains("--format"));
    }

    #[test]
    fn one_measurement_claimed_twice_is_an_error_naming_both_lines() {
        let text = format!("{HEADER}a1,vk,f,m,x,0,1,1\na2,vk,f,m,x,0,1,1\n");
        let msg = read_text("c.csv", &text).unwrap_err().to_string();
        assert!(
            msg.contains("c.csv:3: line 2 already claims vk/f/m on x frame 0 with a different arch_id a1 vs a2"),
            "{msg}"
        );
        let text = format!("{HEADER}a1,vk,f,m,x,0,1,1\na1,vk,f,m,x,0,1.5,1\n");
        assert!(read_text("c.csv", &text).unwrap_err().to_string().contains("gpu_score 1.0 vs 1.5"));
        let text = format!("{HEADER}a1,vk,f,m,x,0,1,1\na1,vk,f,m,x,0,1,1\n");
        assert!(read_text("c.csv", &text).unwrap_err().to_string().contains("c.csv:3: repeats line 2"));
    }

    #[test]
    fn rows_must_share_one_cpu_reference() {
        let text = format!("{HEADER}a1,vk,f,m,x,0,1,1\na2,cl,f,m,x,0,1,1.25\n");
        let msg = read_text("c.csv", &text).unwrap_err().to_string();
        assert!(msg.contains("c.csv:3: cpu_score 1.25 of f/m on x frame 0 differs from line 2's 1.0"), "{msg}");
        // Two devices of two backends on the same frames are fine.
        let text = format!("{HEADER}a1,vk,f,m,x,0,1,1\na2,cl,f,m,x,0,1.1,1\n");
        assert_eq!(read_text("c.csv", &text).unwrap().rows.len(), 2);
    }
}
