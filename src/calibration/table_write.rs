//! Writes measured tolerances back into the calibration table
//! (`calibrate fit --write-table`), as text: only the measured arch's row
//! changes, every other byte of the file (comments included) stays.
//!
//! Which row: the most specific existing row for the arch_id. An exact row
//! is rewritten in place. A glob (`vulkan:0x10005:*`) also covers other
//! devices, so it is left alone and a new exact-id row is inserted right
//! after it, which then wins the lookup for this arch only. No matching row:
//! a new row is appended.

use super::corpus::Corpus;
use crate::config::calibration::{CalibrationTable, match_rank};
use crate::config::features::{FP16_TOLERANCE, FeatureRegistry, Precision};
use crate::config::resolve::parse_calibration;
use crate::config::spans::SpanIndex;
use anyhow::{Result, anyhow, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Measured worst differences are multiplied by this.
pub const MARGIN: f64 = 4.0;

/// The rule, as the table's header comment and each row's provenance say it.
pub const RULE: &str = "per feature, the worst |gpu - cpu| measured on the arch (every metric, fixture and frame of \
the corpus, raw scores) times 4, rounded up to one significant digit, and never below the feature's default";

/// The smallest number with one significant digit that is >= `x` (> 0).
pub fn round_up_one_digit(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    // The shortest decimal text of x decides, so 3e-5 stays 3e-5.
    let text = format!("{x:e}");
    let (mantissa, exp) = text.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let lead = mantissa.as_bytes()[0] - b'0';
    let rest_nonzero = mantissa.bytes().skip(1).any(|b| b.is_ascii_digit() && b != b'0');
    let (digit, exp) = match (lead + u8::from(rest_nonzero), exp) {
        (10, e) => (1, e + 1),
        (d, e) => (d, e),
    };
    format!("{digit}e{exp}").parse().expect("a valid float")
}

/// A measured number, short: `0`, or its shortest digits in `{:e}` form.
pub fn short(x: f64) -> String {
    if x == 0.0 { "0".into() } else { format!("{x:e}") }
}

/// A one-significant-digit tolerance as YAML text: `2.0e-5`.
fn tolerance_text(x: f64) -> String {
    let text = format!("{x:e}");
    let (mantissa, exp) = text.split_once('e').expect("`{:e}` has an exponent");
    if mantissa.contains('.') { format!("{mantissa}e{exp}") } else { format!("{mantissa}.0e{exp}") }
}

/// One feature's derived tolerance on one arch.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub worst: f64,
    pub default: f64,
    pub tolerance: f64,
}

/// Per measured arch_id, per feature: [`RULE`] applied to the corpus.
pub fn derive(corpus: &Corpus, registry: &FeatureRegistry) -> Result<BTreeMap<String, BTreeMap<String, Derived>>> {
    let mut worst: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut non_finite: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for (row, &line) in corpus.rows.iter().zip(&corpus.lines) {
        let d = (row.gpu_score - row.cpu_score).abs();
        if !d.is_finite() {
            non_finite.entry((row.arch_id.clone(), row.feature.clone())).or_insert((line, 0)).1 += 1;
            continue;
        }
        let w = worst.entry(row.arch_id.clone()).or_default().entry(row.feature.clone()).or_insert(0.0);
        *w = w.max(d);
    }
    if !non_finite.is_empty() {
        let list: Vec<String> = non_finite
            .iter()
            .map(|((arch, feature), (line, n))| format!("{feature} on {arch}: {n} non-finite (first at line {line})"))
            .collect();
        bail!("cannot derive a tolerance from non-finite differences: {}", list.join("; "));
    }
    let mut out = BTreeMap::new();
    for (arch, features) in worst {
        let mut derived = BTreeMap::new();
        for (feature, w) in features {
            let spec = registry
                .features
                .get(&feature)
                .ok_or_else(|| anyhow!("feature `{feature}` of the corpus is not in the feature registry"))?;
            let default = if spec.precision == Precision::Fp16 { FP16_TOLERANCE } else { spec.tolerance };
            let tolerance = round_up_one_digit(w * MARGIN).max(default);
            derived.insert(feature, Derived { worst: w, default, tolerance });
        }
        out.insert(arch, derived);
    }
    Ok(out)
}

/// What a calibrated row records about where its numbers came from.
#[derive(Debug, Clone)]
pub struct ProvenanceInfo {
    pub date: String,
    pub corpus_manifest_sha256: String,
    pub tool: String,
}

/// A row's extent in the file: 0-based lines `[start, end)`, the column of
/// its `-` and of its keys.
#[derive(Debug, Clone, Copy)]
struct RowSpan {
    start: usize,
    end: usize,
    dash: usize,
    key: usize,
}

fn is_comment_or_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Where each row of the table's `rows:` block sequence lies.
fn row_spans(path: &Path, lines: &[&str], table: &CalibrationTable) -> Result<Vec<RowSpan>> {
    let text: String = lines.concat();
    let spans = SpanIndex::build(&text);
    let not_block =
        || anyhow!("{}: `rows` is not a block sequence of `- ` items: cannot rewrite one row in place", path.display());
    let mut starts = Vec::new();
    for i in 0..table.rows.len() {
        let pos = spans.find(&format!("/rows/{i}/arch_id")).ok_or_else(not_block)?;
        let key_line = pos.line - 1;
        let key = spans.find(&format!("/rows/{i}")).map_or(pos.column - 1, |p| p.column - 1);
        let here = lines[key_line];
        let prefix = here.get(..key.min(here.len())).unwrap_or("");
        let (start, dash_line) = if prefix.trim_start().starts_with('-') {
            (key_line, here)
        } else if key_line > 0 && lines[key_line - 1].trim() == "-" {
            (key_line - 1, lines[key_line - 1])
        } else {
            return Err(not_block());
        };
        let dash = dash_line.find('-').ok_or_else(not_block)?;
        starts.push((start, dash, key));
    }
    // A row ends where the next begins, or at the next top-level key, or at
    // the end of the file; comments and blank lines before that belong to
    // what follows.
    let top_level: BTreeSet<usize> = (0..lines.len())
        .filter(|&l| {
            let line = lines[l];
            !line.starts_with([' ', '\t', '#', '-']) && !line.trim().is_empty()
        })
        .collect();
    let mut out = Vec::new();
    for (i, &(start, dash, key)) in starts.iter().enumerate() {
        let limit = match starts.get(i + 1) {
            Some(&(next, _, _)) => next,
            None => top_level.range(start + 1..).next().copied().unwrap_or(lines.len()),
        };
        let mut end = limit;
        while end > start + 1 && is_comment_or_blank(lines[end - 1]) {
            end -= 1;
        }
        out.push(RowSpan { start, end, dash, key });
    }
    Ok(out)
}

/// A YAML scalar: plain when it is a safe identifier-like word, else a
/// double-quoted (JSON) string.
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.starts_with(|c: char| c.is_ascii_alphabetic());
    if plain { s.to_string() } else { serde_json::to_string(s).expect("strings serialize") }
}

struct NewRow<'a> {
    arch_id: &'a str,
    label: &'a str,
    notes: Option<&'a str>,
    features: &'a BTreeMap<String, Derived>,
    frames: usize,
    provenance: &'a ProvenanceInfo,
}

fn render_row(row: &NewRow<'_>, dash: usize, key: usize, eol: &str) -> String {
    let d = " ".repeat(dash);
    let k = " ".repeat(key.max(dash + 2));
    let q = |s: &str| serde_json::to_string(s).expect("strings serialize");
    let mut out = format!("{d}-{}arch_id: {}{eol}", " ".repeat(key.max(dash + 2) - dash - 1), q(row.arch_id));
    out.push_str(&format!("{k}label: {}{eol}", q(row.label)));
    out.push_str(&format!("{k}status: calibrated{eol}"));
    out.push_str(&format!("{k}features:{eol}"));
    for (feature, derived) in row.features {
        out.push_str(&format!(
            "{k}  {}: {}  # measured worst |gpu - cpu| {}{eol}",
            scalar(feature),
            tolerance_text(derived.tolerance),
            short(derived.worst)
        ));
    }
    let p = row.provenance;
    out.push_str(&format!("{k}provenance:{eol}"));
    out.push_str(&format!("{k}  date: {}{eol}", q(&p.date)));
    out.push_str(&format!("{k}  corpus_manifest_sha256: {}{eol}", q(&p.corpus_manifest_sha256)));
    out.push_str(&format!("{k}  frames: {}{eol}", row.frames));
    out.push_str(&format!("{k}  tool: {}{eol}", q(&p.tool)));
    out.push_str(&format!("{k}  rule: {}{eol}", q(RULE)));
    if let Some(notes) = row.notes {
        out.push_str(&format!("{k}notes: {}{eol}", q(notes)));
    }
    out
}

/// What writing one arch's row did.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// The exact row `arch_id` pattern was rewritten (lines, 1-based).
    Replaced { row: String, lines: (usize, usize), dropped_features: Vec<String>, dropped_comments: usize },
    /// A new exact row was inserted after the glob that matched.
    InsertedAfter { glob: String, line: usize },
    /// No row matched: a new one was appended.
    Appended { line: usize },
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Replaced { row, lines, dropped_features, dropped_comments } => {
                write!(f, "rewrote row `{row}` (lines {}-{})", lines.0, lines.1)?;
                if !dropped_features.is_empty() {
                    write!(
                        f,
                        "; dropped {} (not in this corpus: they fall back to the default)",
                        dropped_features.join(", ")
                    )?;
                }
                if *dropped_comments > 0 {
                    write!(f, "; {dropped_comments} comment line(s) inside the old row were replaced with it")?;
                }
                Ok(())
            }
            Action::InsertedAfter { glob, line } => write!(
                f,
                "inserted an exact-id row at line {line}, after `{glob}`: that glob covers other devices too, so it \
                 stays as it was"
            ),
            Action::Appended { line } => write!(f, "no row matched: appended a new row at line {line}"),
        }
    }
}

/// Rewrites `text` (the table at `path`) with a calibrated row for each
/// arch of `derived`; returns the new text and what was done per arch.
/// The result is checked as `validate` would check it, and each arch must
/// then look up its new tolerances.
pub fn rewrite(
    path: &Path,
    text: &str,
    derived: &BTreeMap<String, BTreeMap<String, Derived>>,
    frames: &BTreeMap<String, usize>,
    labels: &BTreeMap<String, String>,
    provenance: &ProvenanceInfo,
    registry: &FeatureRegistry,
) -> Result<(String, Vec<(String, Action)>)> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut text = text.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(eol);
    }
    let mut actions = Vec::new();
    for (arch, features) in derived {
        let table = parse_calibration(path, &text, Some(registry)).map_err(anyhow::Error::new)?.value;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let spans = row_spans(path, &lines, &table)?;
        let best =
            table.rows.iter().enumerate().filter_map(|(i, r)| match_rank(&r.arch_id, arch).map(|rank| (rank, i))).fold(
                None,
                |best: Option<(usize, usize)>, (rank, i)| match best {
                    Some((b, _)) if b >= rank => best,
                    _ => Some((rank, i)),
                },
            );
        let frames = frames.get(arch).copied().unwrap_or(0);
        let default_label = labels.get(arch).cloned().unwrap_or_else(|| arch.clone());
        let (range, new_row, action) = match best {
            Some((usize::MAX, i)) => {
                let old = &table.rows[i];
                let span = spans[i];
                let dropped_features: Vec<String> =
                    old.features.keys().filter(|f| !features.contains_key(*f)).cloned().collect();
                let dropped_comments =
                    lines[span.start + 1..span.end].iter().filter(|l| l.trim().starts_with('#')).count();
                let row = NewRow {
                    arch_id: &old.arch_id,
                    label: &old.label,
                    notes: old.notes.as_deref(),
                    features,
                    frames,
                    provenance,
                };
                let action = Action::Replaced {
                    row: old.arch_id.clone(),
                    lines: (span.start + 1, span.end),
                    dropped_features,
                    dropped_comments,
                };
                (span.start..span.end, render_row(&row, span.dash, span.key, eol), action)
            }
            Some((_, i)) => {
                let span = spans[i];
                let notes = format!(
                    "Inserted by `ulpgate calibrate fit --write-table`: this device only; `{}` still covers the others.",
                    table.rows[i].arch_id
                );
                let row =
                    NewRow { arch_id: arch, label: &default_label, notes: Some(&notes), features, frames, provenance };
                let action = Action::InsertedAfter { glob: table.rows[i].arch_id.clone(), line: span.end + 1 };
                (span.end..span.end, render_row(&row, span.dash, span.key, eol), action)
            }
            None => {
                let Some(last) = spans.last() else {
                    bail!("{}: the table has no rows to place a new one after", path.display());
                };
                let notes = "Appended by `ulpgate calibrate fit --write-table`: no row matched this device.";
                let row =
                    NewRow { arch_id: arch, label: &default_label, notes: Some(notes), features, frames, provenance };
                (
                    last.end..last.end,
                    render_row(&row, last.dash, last.key, eol),
                    Action::Appended { line: last.end + 1 },
                )
            }
        };
        let mut out: String = lines[..range.start].concat();
        out.push_str(&new_row);
        out.push_str(&lines[range.end..].concat());
        text = out;
        actions.push((arch.clone(), action));
    }
    // The written table must load, and look up what was measured.
    let table = parse_calibration(path, &text, Some(registry)).map_err(anyhow::Error::new)?.value;
    for (arch, features) in derived {
        for (feature, d) in features {
            let t = table.lookup(arch, feature, d.default);
            if !t.source.starts_with("calibrated:") || t.abs != d.tolerance {
                bail!(
                    "internal error: after the rewrite {arch} looks up {feature} as {} from {}, not {} from a \
                     calibrated row",
                    t.abs,
                    t.source,
                    d.tolerance
                );
            }
        }
    }
    Ok((text, actions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::corpus::Row;

    #[test]
    fn rounding_up_to_one_significant_digit() {
        assert_eq!(round_up_one_digit(1.23e-5), 2e-5);
        assert_eq!(round_up_one_digit(3e-5), 3e-5);
        assert_eq!(round_up_one_digit(9.1e-7), 1e-6);
        assert_eq!(round_up_one_digit(4.0 * 2.5e-6), 1e-5);
        assert_eq!(round_up_one_digit(0.0), 0.0);
        assert_eq!(tolerance_text(2e-5), "2.0e-5");
        assert_eq!(tolerance_text(1e-6), "1.0e-6");
    }

    fn registry() -> FeatureRegistry {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("gates/features.yaml");
        crate::config::resolve::load_registry(&path).unwrap().value
    }

    fn corpus(arch: &str, feature: &str, diffs: &[f64]) -> Corpus {
        let rows: Vec<Row> = diffs
            .iter()
            .enumerate()
            .map(|(i, d)| Row {
                arch_id: arch.into(),
                backend: "b".into(),
                feature: feature.into(),
                metric: "m".into(),
                fixture: "x".into(),
                frame: i,
                gpu_score: 10.0 + d,
                cpu_score: 10.0,
            })
            .collect();
        let lines = (2..2 + rows.len()).collect();
        Corpus { rows, lines }
    }

    #[test]
    fn derived_tolerances_follow_the_rule() {
        let reg = registry();
        let d = derive(&corpus("a", "float_moment", &[1e-6, -3.1e-5, 2e-5]), &reg).unwrap();
        let fm = &d["a"]["float_moment"];
        assert!((fm.worst - 3.1e-5).abs() < 1e-12);
        assert_eq!(fm.tolerance, 2e-4, "3.1e-5 × 4 = 1.24e-4, rounded up: 2e-4");
        // Tiny differences never go below the default.
        let d = derive(&corpus("a", "psnr", &[1e-9]), &reg).unwrap();
        assert_eq!(d["a"]["psnr"].tolerance, 5e-5);
        let e = derive(&corpus("a", "psnr", &[f64::NAN]), &reg).unwrap_err().to_string();
        assert!(e.contains("psnr on a: 1 non-finite (first at line 2)"), "{e}");
        assert!(derive(&corpus("a", "nope", &[0.0]), &reg).is_err());
    }

    const TABLE: &str = "\
# header comment\r
schema_version: 1\r
rows:\r
  # lavapipe\r
  - arch_id: \"vulkan:0x10005:*\"\r
    label: lavapipe\r
    status: calibrated\r
    features: {psnr: 5.0e-5}\r
  # an exact row, with a comment after it\r
  - arch_id: \"cuda:9.0\"\r
    label: Hopper\r
    # inside\r
    status: placeholder\r
    features:\r
      psnr: 1.0e-4\r
      float_psnr: 1.0e-4\r
    notes: keep me\r
  # trailing comment\r
\r
# end of file\r
";

    fn info() -> ProvenanceInfo {
        ProvenanceInfo {
            date: "2026-05-03".into(),
            corpus_manifest_sha256: "ab".repeat(32),
            tool: "ulpgate 0.1.0".into(),
        }
    }

    fn one(arch: &str, feature: &str, worst: f64) -> BTreeMap<String, BTreeMap<String, Derived>> {
        let d = Derived { worst, default: 5e-5, tolerance: round_up_one_digit(worst * MARGIN).max(5e-5) };
        BTreeMap::from([(arch.to_string(), BTreeMap::from([(feature.to_string(), d)]))])
    }

    /// The lines of `after` outside `[from, from + added)` equal `before`'s
    /// outside `[from, from + removed)`, byte for byte.
    fn same_outside(before: &str, after: &str, from: usize, removed: usize, added: usize) {
        let b: Vec<&str> = before.split_inclusive('\n').collect();
        let a: Vec<&str> = after.split_inclusive('\n').collect();
        assert_eq!(a[..from], b[..from], "lines before the row");
        assert_eq!(a[from + added..], b[from + removed..], "lines after the row");
    }

    #[test]
    fn an_exact_row_is_rewritten_and_nothing_else_changes() {
        let reg = registry();
        let frames = BTreeMap::from([("cuda:9.0".to_string(), 42)]);
        let (out, actions) = rewrite(
            Path::new("t.yaml"),
            TABLE,
            &one("cuda:9.0", "psnr", 3e-5),
            &frames,
            &BTreeMap::new(),
            &info(),
            &reg,
        )
        .unwrap();
        let Action::Replaced { lines, dropped_features, dropped_comments, .. } = &actions[0].1 else {
            panic!("{actions:?}")
        };
        assert_eq!(*lines, (10, 17));
        assert_eq!(dropped_features, &vec!["float_psnr".to_string()]);
        assert_eq!(*dropped_comments, 1);
        let new_lines = out.split_inclusive('\n').count() - TABLE.split_inclusive('\n').count() + 8;
        same_outside(TABLE, &out, 9, 8, new_lines);
        assert!(
            out.contains("  - arch_id: \"cuda:9.0\"\r\n    label: \"Hopper\"\r\n    status: calibrated\r\n"),
            "{out}"
        );
        assert!(out.contains("      psnr: 2.0e-4  # measured worst |gpu - cpu| 3e-5\r\n"), "{out}");
        assert!(out.contains("      frames: 42\r\n"));
        assert!(out.contains("    notes: \"keep me\"\r\n"));
        let t = parse_calibration(Path::new("t.yaml"), &out, Some(&reg)).unwrap().value;
        assert_eq!(t.lookup("cuda:9.0", "psnr", 5e-5).source, "calibrated:cuda:9.0");
        assert_eq!(t.rows.len(), 2);
        let p = t.rows[1].provenance.as_ref().unwrap();
        assert_eq!((p.frames, p.rule.as_deref()), (Some(42), Some(RULE)));
    }

    #[test]
    fn a_glob_stays_and_an_exact_row_follows_it() {
        let reg = registry();
        let labels = BTreeMap::from([("vulkan:0x10005:0x0000".to_string(), "llvmpipe".to_string())]);
        let (out, actions) = rewrite(
            Path::new("t.yaml"),
            TABLE,
            &one("vulkan:0x10005:0x0000", "psnr", 1e-6),
            &BTreeMap::new(),
            &labels,
            &info(),
            &reg,
        )
        .unwrap();
        assert_eq!(
            actions[0].1,
            Action::InsertedAfter { glob: "vulkan:0x10005:*".into(), line: 9 },
            "after the glob's last line, before the comment that introduces the next row"
        );
        let added = out.split_inclusive('\n').count() - TABLE.split_inclusive('\n').count();
        same_outside(TABLE, &out, 8, 0, added);
        let t = parse_calibration(Path::new("t.yaml"), &out, Some(&reg)).unwrap().value;
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[1].arch_id, "vulkan:0x10005:0x0000");
        assert_eq!(t.lookup("vulkan:0x10005:0x0000", "psnr", 5e-5).source, "calibrated:vulkan:0x10005:0x0000");
        assert_eq!(t.lookup("vulkan:0x10005:0x0001", "psnr", 5e-5).source, "calibrated:vulkan:0x10005:*");
    }

    #[test]
    fn an_unknown_arch_is_appended_after_the_last_row() {
        let reg = registry();
        let (out, actions) = rewrite(
            Path::new("t.yaml"),
            TABLE,
            &one("cuda:12.0", "psnr", 1e-5),
            &BTreeMap::new(),
            &BTreeMap::new(),
            &info(),
            &reg,
        )
        .unwrap();
        assert_eq!(actions[0].1, Action::Appended { line: 18 });
        let added = out.split_inclusive('\n').count() - TABLE.split_inclusive('\n').count();
        same_outside(TABLE, &out, 17, 0, added);
        assert!(out.ends_with("  # trailing comment\r\n\r\n# end of file\r\n"));
    }

    #[test]
    fn the_checked_in_header_states_the_rule() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/gpu_ulp_calibration.yaml");
        let text = std::fs::read_to_string(path).unwrap();
        let header: String = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(header.contains(RULE), "the header comment must state the rule verbatim:\n{RULE}\n---\n{header}");
    }
}
