//! Per-frame scores and the libvmaf JSON shapes they are read from and
//! written to.

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Per-frame values of every metric a side produced, indexed by frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scores {
    metrics: BTreeMap<String, Vec<f64>>,
}

impl Scores {
    /// Records `value` for `metric` at `frame`. Frames never recorded read as
    /// NaN, which the diff treats as a mismatch: a gap is never silently OK.
    pub fn record(&mut self, metric: &str, frame: usize, value: f64) {
        let values = self.metrics.entry(metric.to_string()).or_default();
        if values.len() <= frame {
            values.resize(frame + 1, f64::NAN);
        }
        values[frame] = value;
    }

    pub fn get(&self, metric: &str) -> Option<&[f64]> {
        self.metrics.get(metric).map(Vec::as_slice)
    }

    pub fn metrics(&self) -> impl Iterator<Item = (&str, &[f64])> {
        self.metrics.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// The number of frames: the longest metric series.
    pub fn frames(&self) -> usize {
        self.metrics.values().map(Vec::len).max().unwrap_or(0)
    }

    /// Removes `metric` and returns its values (a temporal feature's
    /// per-frame intermediate, consumed by its sequence rules).
    pub fn take(&mut self, metric: &str) -> Option<Vec<f64>> {
        self.metrics.remove(metric)
    }

    /// Keeps only `names`, in no particular order.
    pub fn retain(&mut self, names: &[String]) {
        self.metrics.retain(|k, _| names.contains(k));
    }

    /// Adds `offset` to every value of `metric` (the calibration offset tier).
    pub fn offset(&mut self, metric: &str, offset: f64) {
        if let Some(values) = self.metrics.get_mut(metric) {
            values.iter_mut().for_each(|v| *v += offset);
        }
    }

    /// Pads every metric to `frames` values with NaN (never-recorded frames).
    pub fn pad_to(&mut self, frames: usize) {
        for values in self.metrics.values_mut() {
            if values.len() < frames {
                values.resize(frames, f64::NAN);
            }
        }
    }
}

/// libvmaf's pooled statistics of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pooled {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub harmonic_mean: f64,
}

/// Pools per-frame values the way libvmaf does; `harmonic_mean` is
/// `n / Σ 1/(x+1) − 1`.
pub fn pool(values: &[f64]) -> Option<Pooled> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / n;
    let harmonic_mean = n / values.iter().map(|x| 1.0 / (x + 1.0)).sum::<f64>() - 1.0;
    Some(Pooled { min, max, mean, harmonic_mean })
}

/// Scores read from a libvmaf-shaped JSON file, with the producing tool.
#[derive(Debug, Clone)]
pub struct RecordedScores {
    pub tool: String,
    pub scores: Scores,
    pub frames: usize,
}

/// Reads per-frame scores from either shape libvmaf scores come in:
/// the `vmaf --json` output (`frames[].metrics`) or the reference set's
/// `metrics: {name: [values]}`. A recorded `error` is returned as an error.
pub fn read_libvmaf_json(path: &Path) -> Result<RecordedScores> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let doc: Value = serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))?;
    parse_libvmaf_json(&doc).with_context(|| format!("{}", path.display()))
}

pub fn parse_libvmaf_json(doc: &Value) -> Result<RecordedScores> {
    let tool = doc
        .get("tool")
        .or_else(|| doc.get("version"))
        .and_then(Value::as_str)
        .map(|v| if doc.get("tool").is_some() { v.to_string() } else { format!("libvmaf {v}") })
        .unwrap_or_else(|| "unknown tool".to_string());
    if let Some(err) = doc.get("error") {
        let msg = err.get("message").and_then(Value::as_str).unwrap_or("no message");
        let cause = err.get("cause").and_then(Value::as_str).unwrap_or("");
        bail!("the recording holds no scores: {tool} failed: {msg} {cause}");
    }
    let mut scores = Scores::default();
    if let Some(metrics) = doc.get("metrics").and_then(Value::as_object) {
        let frames = doc.get("frames").and_then(Value::as_u64).map(|f| f as usize);
        for (name, values) in metrics {
            let values = values.as_array().with_context(|| format!("metrics.{name} is not a list"))?;
            for (i, v) in values.iter().enumerate() {
                scores.record(name, i, number(v).with_context(|| format!("metrics.{name}[{i}]"))?);
            }
        }
        let frames = frames.unwrap_or_else(|| scores.frames());
        return Ok(RecordedScores { tool, frames, scores });
    }
    let list = doc
        .get("frames")
        .and_then(Value::as_array)
        .context("neither `frames[].metrics` (vmaf --json) nor `metrics` (reference set) found")?;
    for (i, frame) in list.iter().enumerate() {
        let index = frame.get("frameNum").and_then(Value::as_u64).map_or(i, |n| n as usize);
        let metrics = frame
            .get("metrics")
            .and_then(Value::as_object)
            .with_context(|| format!("frames[{i}] has no metrics object"))?;
        for (name, v) in metrics {
            scores.record(name, index, number(v).with_context(|| format!("frames[{i}].metrics.{name}"))?);
        }
    }
    Ok(RecordedScores { tool, frames: list.len(), scores })
}

/// A JSON number; libvmaf writes non-finite values as strings or null.
fn number(v: &Value) -> Result<f64> {
    match v {
        Value::Number(n) => n.as_f64().context("not a finite number"),
        Value::Null => Ok(f64::NAN),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "nan" | "-nan" => Ok(f64::NAN),
            "inf" | "+inf" | "infinity" => Ok(f64::INFINITY),
            "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
            _ => bail!("`{s}` is not a number"),
        },
        other => bail!("expected a number, found {other}"),
    }
}

/// Writes scores in `vmaf --json`'s shape, at full double precision (the
/// shortest text that reads back as the same double). Non-finite values,
/// which JSON cannot hold, are written as null.
pub fn to_libvmaf_json(scores: &Scores, frames: usize, extra: Map<String, Value>) -> Value {
    let finite = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    let frame_list: Vec<Value> = (0..frames)
        .map(|i| {
            let metrics: Map<String, Value> = scores
                .metrics()
                .map(|(name, values)| (name.to_string(), finite(values.get(i).copied().unwrap_or(f64::NAN))))
                .collect();
            json!({ "frameNum": i, "metrics": metrics })
        })
        .collect();
    let pooled: Map<String, Value> = scores
        .metrics()
        .filter_map(|(name, values)| {
            pool(values).map(|p| {
                let v = json!({
                    "min": finite(p.min), "max": finite(p.max),
                    "mean": finite(p.mean), "harmonic_mean": finite(p.harmonic_mean),
                });
                (name.to_string(), v)
            })
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("version".into(), json!(format!("ulpgate {}", env!("CARGO_PKG_VERSION"))));
    doc.extend(extra);
    doc.insert("frames".into(), Value::Array(frame_list));
    doc.insert("pooled_metrics".into(), Value::Object(pooled));
    doc.insert("aggregate_metrics".into(), json!({}));
    Value::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_read_as_nan() {
        let mut s = Scores::default();
        s.record("a", 2, 1.0);
        assert!(s.get("a").unwrap()[0].is_nan());
        assert_eq!(s.frames(), 3);
    }

    #[test]
    fn pooling_matches_libvmaf_definitions() {
        let p = pool(&[1.0, 3.0]).unwrap();
        assert_eq!((p.min, p.max, p.mean), (1.0, 3.0, 2.0));
        assert!((p.harmonic_mean - (2.0 / (0.5 + 0.25) - 1.0)).abs() < 1e-15);
    }

    #[test]
    fn reads_both_shapes() {
        let a = json!({"tool": "t", "frames": 2, "metrics": {"m": [1.5, 2.5]}});
        let b = json!({"version": "3.2.0", "frames": [
            {"frameNum": 0, "metrics": {"m": 1.5}}, {"frameNum": 1, "metrics": {"m": 2.5}}]});
        let (a, b) = (parse_libvmaf_json(&a).unwrap(), parse_libvmaf_json(&b).unwrap());
        assert_eq!(a.scores, b.scores);
        assert_eq!((a.frames, b.frames), (2, 2));
        assert_eq!(b.tool, "libvmaf 3.2.0");
    }

    #[test]
    fn recorded_errors_are_errors() {
        let doc = json!({"tool": "t", "error": {"message": "cambi refused", "cause": "too small"}});
        let err = parse_libvmaf_json(&doc).unwrap_err().to_string();
        assert!(err.contains("cambi refused"), "{err}");
    }

    #[test]
    fn round_trips_full_precision() {
        let mut s = Scores::default();
        s.record("m", 0, 0.1 + 0.2);
        let doc = to_libvmaf_json(&s, 1, Map::new());
        let back = parse_libvmaf_json(&doc).unwrap();
        assert_eq!(back.scores.get("m").unwrap()[0], 0.1 + 0.2);
    }
}
