//! Per-cell fits of cpu_score ~ gpu_score and ADR-0234's decision between a
//! scalar offset (alternative (d)) and a model, with its bars for a
//! calibrated path checked on held-out frames. The rule is [`RULE`] and
//! [`BARS`]; every threshold is a constant here.
//!
//! Numerics: GPU and CPU scores agree to ~1e-5 on values up to ~1e2 (PSNR)
//! or far larger (moments), so the naive Σx², Σxy formulas cancel
//! catastrophically. Everything is computed from d = cpu − gpu (exact when
//! the two are within a factor of 2, Sterbenz) and from data centred on a
//! twice-corrected mean, with compensated (Neumaier) sums; the slope is
//! reported as 1 + β with β the slope of d on gpu, so its deviation from 1
//! keeps all its digits.

use super::corpus::{Corpus, Row};
use crate::report::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A slope within 1 ± this is 1 (Research-0041).
pub const SLOPE_TOLERANCE: f64 = 1e-6;
/// Offsets fitted on the two halves of the score range within this of
/// each other are one constant (ADR-0234's residual bar).
pub const INTERCEPT_TOLERANCE: f64 = 1e-6;
/// A deviation counts only beyond this many standard errors: noise alone
/// never justifies a model.
pub const SIGMAS: f64 = 3.0;
/// ADR-0234's bars for a calibrated path.
pub const PLCC_BAR: f64 = 0.9999;
pub const RESIDUAL_BAR: f64 = 1e-6;
/// Each of the K held-out folds needs this many frames, so a cell needs
/// 3·K frames.
pub const MIN_HELD_OUT: usize = 3;
pub const DEFAULT_HOLDOUT_EVERY: usize = 5;

/// The decision rule, as the fit's outputs and the README state it.
pub const RULE: &str = "Per (arch_id, backend, feature, metric) cell, with d = cpu - gpu per frame: the OLS slope b of \
cpu on gpu (computed as 1 + the slope of d on gpu) differs from 1 when |b - 1| > 1e-6 and |b - 1| > 3 standard errors; \
the intercept varies when the mean d of the frames above the median gpu score and of those below it (tied scores kept \
together) differ by more than 1e-6 and by more than 3 standard errors. Neither: `offset`, a scalar offset is enough \
(ADR-0234 alternative (d)). Either: `model`, the residual depends on the score. Every frame equal: `bit-exact` (offset \
0). One gpu score for every frame: `undetermined` (no range to test). Non-finite scores, or fewer than 3*K frames (K = \
--holdout-every): `unfit`, nothing fitted.";

/// The bars, as the outputs state them.
pub const BARS: &str = "ADR-0234's bars for a calibrated path, on held-out frames: each cell's frames, ordered by \
(fixture, frame), are split into K folds (K = --holdout-every), fold j holding out every K-th frame starting at the \
j-th; each fold's offset (mean d) is fitted on the other folds and added to its held-out gpu scores, so every frame is \
predicted once by an offset that never saw it. Pass: PLCC of those predictions with cpu >= 0.9999 and worst held-out \
|cpu - (gpu + offset)| <= 1e-6.";

pub const KIND: &str = "ulpgate-calibration-fit";
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// GPU and CPU agree exactly on every frame: offset 0.
    BitExact,
    /// A scalar offset is enough (ADR-0234 alternative (d)).
    Offset,
    /// The residual depends on the score: a model is justified.
    Model,
    /// The data cannot tell (one gpu score for every frame).
    Undetermined,
    /// Nothing was fitted (see the reason).
    Unfit,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::BitExact => "bit-exact",
            Decision::Offset => "offset",
            Decision::Model => "model",
            Decision::Undetermined => "undetermined",
            Decision::Unfit => "unfit",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bar {
    Pass,
    Fail,
    /// The number is undefined (a PLCC of constant scores).
    Undefined,
}

/// `calibrate fit --json-out`: also the input of `run --gpu-calibrated`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FitReport {
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// Always `ulpgate-calibration-fit`.
    #[schemars(extend("const" = "ulpgate-calibration-fit"))]
    pub kind: String,
    pub tool: Tool,
    pub corpus: CorpusRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<FileRef>,
    pub rule: Rule,
    pub summary: FitSummary,
    pub cells: Vec<CellFit>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorpusRef {
    pub path: String,
    pub format: super::corpus::Format,
    pub sha256: String,
    pub rows: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    pub path: String,
    pub sha256: String,
}

/// The thresholds a fit used, and the rule in words.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub decision: String,
    pub bars: String,
    pub slope_tolerance: f64,
    pub intercept_tolerance: f64,
    pub sigmas: f64,
    pub holdout_every: usize,
    pub min_frames: usize,
    pub plcc_bar: f64,
    pub residual_bar: f64,
}

impl Rule {
    pub fn new(holdout_every: usize) -> Self {
        Rule {
            decision: RULE.into(),
            bars: BARS.into(),
            slope_tolerance: SLOPE_TOLERANCE,
            intercept_tolerance: INTERCEPT_TOLERANCE,
            sigmas: SIGMAS,
            holdout_every,
            min_frames: min_frames(holdout_every),
            plcc_bar: PLCC_BAR,
            residual_bar: RESIDUAL_BAR,
        }
    }
}

/// Frames a cell needs: enough for [`MIN_HELD_OUT`] held-out frames.
pub fn min_frames(holdout_every: usize) -> usize {
    MIN_HELD_OUT * holdout_every
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FitSummary {
    pub cells: usize,
    /// Decision → cells.
    pub decisions: BTreeMap<String, usize>,
    /// Cells whose held-out bars both pass / fail / could not be decided.
    pub bars_pass: usize,
    pub bars_fail: usize,
    pub bars_undefined: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CellFit {
    pub arch_id: String,
    pub backend: String,
    pub feature: String,
    pub metric: String,
    /// Frames (rows) in the cell.
    pub n: usize,
    /// Distinct fixtures they come from.
    pub fixtures: usize,
    pub decision: Decision,
    /// Why, with the numbers.
    pub reason: String,
    /// The scalar offset to add to gpu scores (mean cpu − gpu over every
    /// frame); absent when unfit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<f64>,
    /// [min, max] gpu score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_range: Option<[f64; 2]>,
    /// Worst |cpu − gpu| before any offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_abs_diff: Option<f64>,
    /// Worst |cpu − (gpu + offset)|.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_abs_residual: Option<f64>,
    /// Standard deviation of cpu − (gpu + offset): the spread an offset
    /// cannot remove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residual_std: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear: Option<LinearFit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halves: Option<Halves>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<Holdout>,
}

/// Ordinary least squares cpu = intercept + slope · gpu over every frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinearFit {
    pub slope: f64,
    /// slope − 1, computed directly (its digits survive).
    pub slope_minus_one: f64,
    /// Standard error of the slope (absent with fewer than 3 frames).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_se: Option<f64>,
    pub intercept: f64,
    /// Pearson correlation of gpu and cpu; absent when either is constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plcc: Option<f64>,
}

/// Offsets fitted on the lower and upper halves of the gpu-score range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Halves {
    /// Between the largest lower and the smallest upper gpu score.
    pub split_at: f64,
    pub n_lower: usize,
    pub n_upper: usize,
    pub offset_lower: f64,
    pub offset_upper: f64,
    /// offset_upper − offset_lower.
    pub shift: f64,
    pub shift_se: f64,
}

/// The bars on held-out frames (K-fold: fold j holds out the frames at
/// positions i ≡ j mod K; its offset is fitted on the other folds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Holdout {
    /// K: every K-th frame is held out, in K folds, so each frame is
    /// predicted once by an offset fitted without it.
    pub every: usize,
    /// Frames held out per fold (smallest, largest).
    pub fold_sizes: [usize; 2],
    /// The offset each fold's training frames gave.
    pub fold_offsets: Vec<f64>,
    /// PLCC of the held-out predictions (gpu + fold offset) with cpu;
    /// absent when either is constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plcc: Option<f64>,
    /// Worst |cpu − (gpu + fold offset)| over every held-out frame.
    pub worst_abs_residual: f64,
    /// Where that worst residual is.
    pub worst_fixture: String,
    pub worst_frame: usize,
    pub plcc_bar: Bar,
    pub residual_bar: Bar,
    /// Both bars pass; absent when a bar is undefined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<bool>,
}

/// Neumaier-compensated sum.
fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = s + v;
        c += if s.abs() >= v.abs() { (s - t) + v } else { (v - t) + s };
        s = t;
    }
    s + c
}

/// The mean, corrected by a second pass (exact to rounding for near-equal
/// large values).
fn mean(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let m = sum(v.iter().copied()) / n;
    m + sum(v.iter().map(|x| x - m)) / n
}

/// Sample variance (n − 1), two-pass.
fn variance(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    sum(v.iter().map(|x| (x - m) * (x - m))) / (v.len() - 1) as f64
}

/// Pearson correlation of x and y = x + d, from centred sums; `None` when
/// x or y is constant.
fn plcc(x: &[f64], d: &[f64]) -> Option<f64> {
    let y: Vec<f64> = x.iter().zip(d).map(|(a, b)| a + b).collect();
    if x.iter().all(|v| *v == x[0]) || y.iter().all(|v| *v == y[0]) {
        return None;
    }
    let (mx, md) = (mean(x), mean(d));
    let dx: Vec<f64> = x.iter().map(|v| v - mx).collect();
    let dd: Vec<f64> = d.iter().map(|v| v - md).collect();
    let sxx = sum(dx.iter().map(|v| v * v));
    let sxd = sum(dx.iter().zip(&dd).map(|(a, b)| a * b));
    let sdd = sum(dd.iter().map(|v| v * v));
    // y − ȳ = (x − x̄) + (d − d̄): Sxy = Sxx + Sxd, Syy = Sxx + 2Sxd + Sdd.
    let sxy = sxx + sxd;
    let syy = sum([sxx, 2.0 * sxd, sdd]);
    if syy <= 0.0 {
        return None;
    }
    // √(Sxx·Syy) in one root: √(fl(s²)) is exactly s, so identical data
    // give exactly 1 (two roots could give 1 − 2⁻⁵²).
    let product = sxx * syy;
    let r = if product.is_finite() && product > 0.0 { sxy / product.sqrt() } else { sxy / (sxx.sqrt() * syy.sqrt()) };
    r.is_finite().then_some(r.clamp(-1.0, 1.0))
}

/// OLS of y = x + d on x, as slope 1 + β; needs a non-constant x.
pub fn linear_fit(x: &[f64], d: &[f64]) -> LinearFit {
    let n = x.len();
    let (mx, md) = (mean(x), mean(d));
    let dx: Vec<f64> = x.iter().map(|v| v - mx).collect();
    let dd: Vec<f64> = d.iter().map(|v| v - md).collect();
    let sxx = sum(dx.iter().map(|v| v * v));
    let sxd = sum(dx.iter().zip(&dd).map(|(a, b)| a * b));
    let beta = sxd / sxx;
    let slope_se = (n > 2).then(|| {
        let ss = sum(dx.iter().zip(&dd).map(|(a, b)| {
            let r = b - beta * a;
            r * r
        }));
        (ss / (n - 2) as f64 / sxx).sqrt()
    });
    LinearFit { slope: 1.0 + beta, slope_minus_one: beta, slope_se, intercept: md - beta * mx, plcc: plcc(x, d) }
}

/// Offsets of the lower and upper halves of the x range; `Err` when ties
/// leave a half with fewer than 2 frames.
pub fn halves(x: &[f64], d: &[f64]) -> Result<Halves, String> {
    let n = x.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let tied = |k: usize| x[order[k - 1]] == x[order[k]];
    let mut k = n / 2;
    while k < n && k > 0 && tied(k) {
        k += 1;
    }
    if k >= n {
        k = n / 2;
        while k > 0 && tied(k) {
            k -= 1;
        }
    }
    if k < 2 || n - k < 2 {
        return Err(format!(
            "the gpu scores take too few distinct values to split the range into halves of 2 or more frames \
             ({k} and {})",
            n - k
        ));
    }
    let lower: Vec<f64> = order[..k].iter().map(|&i| d[i]).collect();
    let upper: Vec<f64> = order[k..].iter().map(|&i| d[i]).collect();
    let (lo, hi) = (mean(&lower), mean(&upper));
    let se = (variance(&lower) / lower.len() as f64 + variance(&upper) / upper.len() as f64).sqrt();
    Ok(Halves {
        split_at: x[order[k - 1]] / 2.0 + x[order[k]] / 2.0,
        n_lower: lower.len(),
        n_upper: upper.len(),
        offset_lower: lo,
        offset_upper: hi,
        shift: hi - lo,
        shift_se: se,
    })
}

/// Does `deviation` (with standard error `se`) exceed both the tolerance
/// and [`SIGMAS`] standard errors?
fn significant(deviation: f64, tolerance: f64, se: Option<f64>) -> bool {
    deviation.abs() > tolerance && se.is_none_or(|se| deviation.abs() > SIGMAS * se)
}

/// The held-out check, K-fold (K = `every`): fold j holds out positions
/// i ≡ j (mod K). Returns it and the position of the worst residual.
pub fn holdout(x: &[f64], d: &[f64], every: usize) -> (Holdout, usize) {
    let n = x.len();
    let mut predictions = vec![0.0; n];
    let mut fold_offsets = Vec::with_capacity(every);
    let mut fold_sizes = [usize::MAX, 0];
    for fold in 0..every {
        let train: Vec<f64> = (0..n).filter(|i| i % every != fold).map(|i| d[i]).collect();
        let offset = mean(&train);
        fold_offsets.push(offset);
        let held: Vec<usize> = (fold..n).step_by(every).collect();
        fold_sizes = [fold_sizes[0].min(held.len()), fold_sizes[1].max(held.len())];
        for i in held {
            predictions[i] = x[i] + offset;
        }
    }
    // y − prediction = d − offset, computed from d so no digit is lost.
    let residual = |i: usize| d[i] - (predictions[i] - x[i]);
    let worst_at = (0..n).max_by(|&a, &b| residual(a).abs().total_cmp(&residual(b).abs())).unwrap_or(0);
    let worst = residual(worst_at).abs();
    let rest: Vec<f64> = (0..n).map(residual).collect();
    let r = plcc(&predictions, &rest);
    let plcc_bar = match r {
        Some(r) if r >= PLCC_BAR => Bar::Pass,
        Some(_) => Bar::Fail,
        None => Bar::Undefined,
    };
    let residual_bar = if worst <= RESIDUAL_BAR { Bar::Pass } else { Bar::Fail };
    let pass = match (plcc_bar, residual_bar) {
        (Bar::Fail, _) | (_, Bar::Fail) => Some(false),
        (Bar::Pass, Bar::Pass) => Some(true),
        _ => None,
    };
    let h = Holdout {
        every,
        fold_sizes,
        fold_offsets,
        plcc: r,
        worst_abs_residual: worst,
        worst_fixture: String::new(),
        worst_frame: 0,
        plcc_bar,
        residual_bar,
        pass,
    };
    (h, worst_at)
}

/// One cell's frames, ordered by (fixture, frame).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellKey {
    pub arch_id: String,
    pub backend: String,
    pub feature: String,
    pub metric: String,
}

/// Fits one cell: `rows` in (fixture, frame) order, with their lines.
pub fn fit_cell(key: &CellKey, rows: &[(&Row, usize)], holdout_every: usize) -> CellFit {
    let mut fixtures: Vec<&str> = rows.iter().map(|(r, _)| r.fixture.as_str()).collect();
    fixtures.dedup();
    let mut out = CellFit {
        arch_id: key.arch_id.clone(),
        backend: key.backend.clone(),
        feature: key.feature.clone(),
        metric: key.metric.clone(),
        n: rows.len(),
        fixtures: fixtures.len(),
        decision: Decision::Unfit,
        reason: String::new(),
        offset: None,
        gpu_range: None,
        worst_abs_diff: None,
        worst_abs_residual: None,
        residual_std: None,
        linear: None,
        halves: None,
        holdout: None,
    };
    let non_finite: Vec<&(&Row, usize)> =
        rows.iter().filter(|(r, _)| !r.gpu_score.is_finite() || !r.cpu_score.is_finite()).collect();
    if let Some((first, line)) = non_finite.first() {
        out.reason = format!(
            "{} of {} frames have a non-finite score (first: {} frame {}, line {line}: gpu {}, cpu {}); nothing is \
             fitted to them",
            non_finite.len(),
            rows.len(),
            first.fixture,
            first.frame,
            super::corpus::score_text(first.gpu_score),
            super::corpus::score_text(first.cpu_score)
        );
        return out;
    }
    let needed = min_frames(holdout_every);
    if rows.len() < needed {
        out.reason = format!(
            "{} frames; a fit needs at least {needed} (each of the {holdout_every} held-out folds needs {} frames)",
            rows.len(),
            MIN_HELD_OUT
        );
        return out;
    }
    let x: Vec<f64> = rows.iter().map(|(r, _)| r.gpu_score).collect();
    let d: Vec<f64> = rows.iter().map(|(r, _)| r.cpu_score - r.gpu_score).collect();
    let offset = mean(&d);
    let residuals: Vec<f64> = d.iter().map(|v| v - offset).collect();
    out.offset = Some(offset);
    out.gpu_range =
        Some([x.iter().copied().fold(f64::INFINITY, f64::min), x.iter().copied().fold(f64::NEG_INFINITY, f64::max)]);
    out.worst_abs_diff = Some(d.iter().map(|v| v.abs()).fold(0.0, f64::max));
    out.worst_abs_residual = Some(residuals.iter().map(|v| v.abs()).fold(0.0, f64::max));
    out.residual_std = Some(variance(&residuals).sqrt());
    let (mut h, worst_at) = holdout(&x, &d, holdout_every);
    (h.worst_fixture, h.worst_frame) = (rows[worst_at].0.fixture.clone(), rows[worst_at].0.frame);
    out.holdout = Some(h);

    let constant_x = x.iter().all(|v| *v == x[0]);
    if rows.iter().all(|(r, _)| r.gpu_score == r.cpu_score) {
        out.decision = Decision::BitExact;
        out.offset = Some(0.0);
        out.reason = "bit-exact: gpu equals cpu on every frame; offset 0".into();
        if !constant_x {
            out.linear = Some(linear_fit(&x, &d));
        }
        return out;
    }
    if constant_x {
        out.decision = Decision::Undetermined;
        out.reason = format!(
            "every gpu score is {}: no score range to test a slope or an intercept against, and PLCC is undefined; \
             the offset is still the mean difference",
            super::corpus::score_text(x[0])
        );
        return out;
    }
    let linear = linear_fit(&x, &d);
    let slope_off = significant(linear.slope_minus_one, SLOPE_TOLERANCE, linear.slope_se);
    let mut findings = vec![format!(
        "slope - 1 = {:.3e} (se {}){}",
        linear.slope_minus_one,
        linear.slope_se.map_or("—".into(), |s| format!("{s:.1e}")),
        if slope_off { ": differs from 1" } else { ": 1 within 1e-6 or within 3 se" }
    )];
    let varies = match halves(&x, &d) {
        Ok(h) => {
            let varies = significant(h.shift, INTERCEPT_TOLERANCE, Some(h.shift_se));
            findings.push(format!(
                "offsets below/above gpu {:.6} differ by {:.3e} (se {:.1e}){}",
                h.split_at,
                h.shift,
                h.shift_se,
                if varies { ": the intercept varies" } else { ": constant" }
            ));
            out.halves = Some(h);
            varies
        }
        Err(why) => {
            out.decision = Decision::Undetermined;
            out.reason = format!("{}; the intercept cannot be tested: {why}", findings.join("; "));
            out.linear = Some(linear);
            return out;
        }
    };
    out.linear = Some(linear);
    out.decision = if slope_off || varies { Decision::Model } else { Decision::Offset };
    out.reason = findings.join("; ");
    out
}

/// Fits every cell of a corpus.
pub fn fit(corpus: &Corpus, holdout_every: usize) -> (Vec<CellFit>, FitSummary) {
    let mut cells: BTreeMap<CellKey, Vec<(&Row, usize)>> = BTreeMap::new();
    for (row, &line) in corpus.rows.iter().zip(&corpus.lines) {
        let key = CellKey {
            arch_id: row.arch_id.clone(),
            backend: row.backend.clone(),
            feature: row.feature.clone(),
            metric: row.metric.clone(),
        };
        cells.entry(key).or_default().push((row, line));
    }
    let mut fits = Vec::new();
    let mut summary = FitSummary::default();
    for (key, mut rows) in cells {
        rows.sort_by(|(a, _), (b, _)| (&a.fixture, a.frame).cmp(&(&b.fixture, b.frame)));
        let f = fit_cell(&key, &rows, holdout_every);
        *summary.decisions.entry(f.decision.as_str().to_string()).or_default() += 1;
        match f.holdout.as_ref().map(|h| h.pass) {
            Some(Some(true)) => summary.bars_pass += 1,
            Some(Some(false)) => summary.bars_fail += 1,
            _ => summary.bars_undefined += 1,
        }
        fits.push(f);
    }
    summary.cells = fits.len();
    (fits, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fixture: &str, frame: usize, gpu: f64, cpu: f64) -> Row {
        Row {
            arch_id: "a".into(),
            backend: "b".into(),
            feature: "f".into(),
            metric: "m".into(),
            fixture: fixture.into(),
            frame,
            gpu_score: gpu,
            cpu_score: cpu,
        }
    }

    fn key() -> CellKey {
        CellKey { arch_id: "a".into(), backend: "b".into(), feature: "f".into(), metric: "m".into() }
    }

    fn fit_of(pairs: &[(f64, f64)], every: usize) -> CellFit {
        let rows: Vec<Row> = pairs.iter().enumerate().map(|(i, &(g, c))| row("x", i, g, c)).collect();
        let refs: Vec<(&Row, usize)> = rows.iter().zip(2..).collect();
        fit_cell(&key(), &refs, every)
    }

    /// A deterministic pseudo-random unit in [-0.5, 0.5).
    fn jitter(i: usize) -> f64 {
        let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
        h as f64 / (1u64 << 53) as f64 - 0.5
    }

    #[test]
    fn ols_on_known_data() {
        // cpu = 0.5 + 2 gpu exactly.
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        let d: Vec<f64> = x.iter().map(|v| 0.5 + 2.0 * v - v).collect();
        let f = linear_fit(&x, &d);
        assert_eq!(f.slope, 2.0);
        assert_eq!(f.slope_minus_one, 1.0);
        assert!((f.intercept - 0.5).abs() < 1e-15, "{}", f.intercept);
        assert_eq!(f.plcc, Some(1.0));
        assert_eq!(f.slope_se, Some(0.0));
    }

    #[test]
    fn a_perfect_offset_is_an_offset_and_meets_the_bars() {
        // PSNR-like scores, cpu = gpu + 3e-7 on every frame.
        let pairs: Vec<(f64, f64)> = (0..40).map(|i| 30.0 + 0.37 * i as f64).map(|g| (g, g + 3e-7)).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Offset, "{}", f.reason);
        assert!((f.offset.unwrap() - 3e-7).abs() < 1e-12);
        assert!(f.linear.as_ref().unwrap().slope_minus_one.abs() < 1e-12);
        assert!(f.worst_abs_residual.unwrap() < 1e-12);
        assert!((f.worst_abs_diff.unwrap() - 3e-7).abs() < 1e-12);
        let h = f.holdout.unwrap();
        assert_eq!(h.fold_sizes, [8, 8]);
        assert_eq!(h.pass, Some(true));
    }

    #[test]
    fn a_slope_off_one_is_a_model() {
        // cpu = gpu · (1 + 1e-5): slope 1.00001, far beyond 1e-6, exact data.
        let pairs: Vec<(f64, f64)> = (0..40).map(|i| 20.0 + i as f64).map(|g| (g, g * (1.0 + 1e-5))).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Model, "{}", f.reason);
        let l = f.linear.unwrap();
        assert!((l.slope_minus_one - 1e-5).abs() < 1e-12, "{}", l.slope_minus_one);
        assert!(f.reason.contains("differs from 1"), "{}", f.reason);
        // An offset cannot absorb a slope: the residual bar fails.
        assert_eq!(f.holdout.unwrap().residual_bar, Bar::Fail);
    }

    #[test]
    fn an_intercept_that_steps_is_a_model_even_with_slope_one() {
        // Below 50 the offset is 0, above it 1e-5: a slope fit over the whole
        // range sees mostly a step, the halves see it plainly.
        let pairs: Vec<(f64, f64)> =
            (0..40).map(|i| 30.0 + i as f64).map(|g| (g, if g < 50.0 { g } else { g + 1e-5 })).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Model, "{}", f.reason);
        let h = f.halves.unwrap();
        assert!((h.shift - 1e-5).abs() < 1e-12);
        assert_eq!((h.n_lower, h.n_upper), (20, 20));
    }

    #[test]
    fn noise_alone_does_not_justify_a_model() {
        // Small-range metric (SSIM-like), residual noise 1e-5 with no trend:
        // |slope − 1| is far above 1e-6 by chance, but not above 3 se.
        let pairs: Vec<(f64, f64)> =
            (0..200).map(|i| (0.95 + 0.0002 * i as f64, 2e-5 * jitter(i))).map(|(g, e)| (g, g + 1e-6 + e)).collect();
        let f = fit_of(&pairs, 5);
        let l = f.linear.clone().unwrap();
        assert!(l.slope_minus_one.abs() > SLOPE_TOLERANCE, "the literal 1 ± 1e-6 test would say model");
        assert_eq!(f.decision, Decision::Offset, "{}", f.reason);
        // ... and the offset does not meet the 1e-6 bar: the noise stays.
        assert_eq!(f.holdout.unwrap().residual_bar, Bar::Fail);
    }

    #[test]
    fn near_equal_large_values_keep_their_digits() {
        // Scores near 1e9 (second moments of 16-bit video), cpu = gpu + 0.25
        // exactly, slope exactly 1. Naive Σx² − (Σx)²/n loses everything here.
        let pairs: Vec<(f64, f64)> =
            (0..50).map(|i| 1.0e9 + 1024.0 * i as f64 + 0.125 * (i % 3) as f64).map(|g| (g, g + 0.25)).collect();
        let f = fit_of(&pairs, 5);
        let l = f.linear.clone().unwrap();
        assert_eq!(l.slope_minus_one, 0.0, "slope exactly 1");
        assert_eq!(f.offset, Some(0.25));
        assert_eq!(f.worst_abs_residual, Some(0.0));
        assert_eq!(f.halves.as_ref().map(|h| h.shift), Some(0.0));
        assert_eq!(f.decision, Decision::Offset, "{}", f.reason);
        assert_eq!(f.holdout.unwrap().pass, Some(true));
    }

    #[test]
    fn naive_formulas_would_fail_where_these_hold() {
        let x: Vec<f64> = (0..50).map(|i| 1.0e9 + i as f64).collect();
        let n = x.len() as f64;
        let naive_sxx = x.iter().map(|v| v * v).sum::<f64>() - x.iter().sum::<f64>().powi(2) / n;
        let exact_sxx = 10412.5; // Σ(i − 24.5)² for i in 0..50
        assert!((naive_sxx - exact_sxx).abs() > 100.0, "the naive sum is badly off: {naive_sxx}");
        let d: Vec<f64> = x.iter().map(|v| 1e-3 + 2e-9 * (v - 1.0e9)).collect();
        let f = linear_fit(&x, &d);
        assert!((f.slope_minus_one - 2e-9).abs() < 1e-18, "{}", f.slope_minus_one);
        assert!((f.intercept - (1e-3 - 2.0)).abs() < 1e-9, "{}", f.intercept);
    }

    #[test]
    fn bit_exact_says_so_with_offset_zero() {
        let pairs: Vec<(f64, f64)> = (0..20).map(|i| (10.0 + i as f64 / 3.0, 10.0 + i as f64 / 3.0)).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::BitExact);
        assert_eq!(f.linear.as_ref().and_then(|l| l.plcc), Some(1.0), "identical data correlate exactly");
        assert_eq!(f.offset, Some(0.0));
        assert!(f.reason.contains("bit-exact"));
        assert_eq!(f.holdout.unwrap().pass, Some(true));
    }

    #[test]
    fn zero_variance_is_undetermined_and_plcc_undefined() {
        // Every gpu score equal, cpu varying: no slope, no PLCC, an offset.
        let pairs: Vec<(f64, f64)> = (0..20).map(|i| (7.0, 7.0 + 1e-6 * (i % 2) as f64)).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Undetermined);
        assert!(f.reason.contains("PLCC is undefined"), "{}", f.reason);
        assert!(f.linear.is_none());
        assert!((f.offset.unwrap() - 5e-7).abs() < 1e-15);
        let h = f.holdout.unwrap();
        assert_eq!((h.plcc, h.plcc_bar, h.pass), (None, Bar::Undefined, None));
        // Bit-exact constant scores: bit-exact, PLCC still undefined.
        let f = fit_of(&vec![(7.0, 7.0); 20], 5);
        assert_eq!(f.decision, Decision::BitExact);
        assert!(f.linear.is_none());
    }

    #[test]
    fn too_few_frames_and_non_finite_scores_are_unfit_with_nothing_fitted() {
        let pairs: Vec<(f64, f64)> = (0..14).map(|i| (i as f64, i as f64)).collect();
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Unfit);
        assert!(f.reason.contains("14 frames; a fit needs at least 15"), "{}", f.reason);
        assert!(f.offset.is_none() && f.linear.is_none() && f.holdout.is_none());
        let mut pairs: Vec<(f64, f64)> = (0..30).map(|i| (i as f64, i as f64)).collect();
        pairs[7].0 = f64::NAN;
        pairs[9].1 = f64::INFINITY;
        let f = fit_of(&pairs, 5);
        assert_eq!(f.decision, Decision::Unfit);
        assert!(f.reason.contains("2 of 30 frames have a non-finite score (first: x frame 7, line 9"), "{}", f.reason);
        assert!(f.offset.is_none());
    }

    #[test]
    fn every_frame_is_held_out_once_by_an_offset_that_never_saw_it() {
        // Frames at positions 3, 7, 11 (fold 3 of 4) differ by 2e-6, the
        // rest agree: fold 3's offset, fitted on the others, is 0.
        let x: Vec<f64> = (0..12).map(|i| i as f64).collect();
        let d: Vec<f64> = (0..12).map(|i| if i % 4 == 3 { 2e-6 } else { 0.0 }).collect();
        let (h, worst_at) = holdout(&x, &d, 4);
        assert_eq!(h.fold_sizes, [3, 3]);
        assert_eq!(h.fold_offsets[3], 0.0);
        assert!((h.fold_offsets[0] - 2e-6 / 3.0).abs() < 1e-18, "{:?}", h.fold_offsets);
        assert_eq!(h.worst_abs_residual, 2e-6);
        assert_eq!(worst_at % 4, 3);
        assert_eq!((h.residual_bar, h.plcc_bar, h.pass), (Bar::Fail, Bar::Pass, Some(false)));
        // A lucky single split could miss one bad frame; the folds cannot.
        let mut d = vec![0.0; 20];
        d[13] = 5e-6;
        let (h, worst_at) = holdout(&(0..20).map(f64::from).collect::<Vec<_>>(), &d, 5);
        assert_eq!(worst_at, 13);
        assert!(h.worst_abs_residual > 4e-6);
    }

    #[test]
    fn halves_keep_ties_together() {
        let x = [1.0, 1.0, 1.0, 1.0, 2.0, 3.0];
        let d = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        let h = halves(&x, &d).unwrap();
        assert_eq!((h.n_lower, h.n_upper), (4, 2));
        assert_eq!((h.offset_lower, h.offset_upper, h.split_at), (0.0, 1.0, 1.5));
        assert!(halves(&[1.0, 1.0, 1.0, 2.0], &[0.0; 4]).is_err());
    }

    #[test]
    fn every_cell_of_a_corpus_is_fitted_in_frame_order() {
        let mut rows = Vec::new();
        for i in (0..20).rev() {
            rows.push(row("b", i, 1.0 + i as f64, 1.0 + i as f64));
            let mut r = row("a", i, 1.0 + i as f64, 1.0 + i as f64 + 1e-7);
            r.metric = "m2".into();
            rows.push(r);
        }
        let lines = (2..2 + rows.len()).collect();
        let (fits, summary) = fit(&Corpus { rows, lines }, 5);
        assert_eq!(fits.len(), 2);
        assert_eq!((fits[0].metric.as_str(), fits[0].decision), ("m", Decision::BitExact));
        assert_eq!((fits[1].metric.as_str(), fits[1].decision), ("m2", Decision::Offset));
        assert_eq!(summary.decisions.get("offset"), Some(&1));
        assert_eq!(summary.bars_pass, 2);
    }
}
