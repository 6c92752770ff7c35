//! Cross-file checks and resolution: a gate's feature names against the
//! registry, its pairs against its backends and fixtures, calibration rows
//! against the registry, paths against the gate's folder.

use super::calibration::{CalibrationTable, check_pattern};
use super::diag::{Diagnostic, Diagnostics};
use super::features::{FP16_TOLERANCE, FeatureRegistry, FeatureSpec, OptionSpec, Precision};
use super::gate::{
    BackendDecl, BackendKind, DeviceSelector, ExternalCommand, FeatureChoice, FeatureSelection, GateFile, PairTolerance,
};
use super::load::{Loaded, load_yaml, parse_yaml};
use super::spans::escape;
use super::suggest::nearest;
use crate::features::Options;
use crate::fixture::FrameSource;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A feature as a gate runs it: registry definition plus gate overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedFeature {
    pub name: String,
    pub metrics: Vec<String>,
    pub tolerance: f64,
    pub adr: String,
    pub precision: Precision,
    pub options: Options,
    /// Stem of the recorded-scores file (`golden` backend).
    pub golden_file: String,
}

#[derive(Debug, Clone)]
pub struct ResolvedBackend {
    pub name: String,
    pub kind: BackendKind,
    pub required: bool,
    pub device: Option<DeviceSelector>,
    pub command: Option<ExternalCommand>,
}

#[derive(Debug, Clone)]
pub struct ResolvedPair {
    pub a: String,
    pub b: String,
    pub features: Vec<String>,
    pub fixtures: Vec<String>,
    pub tolerance: Option<PairTolerance>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedFixture {
    pub name: String,
    pub reference: FrameSource,
    pub distorted: FrameSource,
    /// Folder of recorded scores for the `golden` backend.
    pub golden: Option<PathBuf>,
    pub expected_frames: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct ResolvedGate {
    pub name: String,
    pub file: PathBuf,
    pub registry_file: PathBuf,
    pub features: Vec<ResolvedFeature>,
    pub backends: BTreeMap<String, ResolvedBackend>,
    pub pairs: Vec<ResolvedPair>,
    pub fixtures: Vec<ResolvedFixture>,
    pub calibration: Option<(PathBuf, CalibrationTable)>,
}

/// Loads and checks the feature registry.
pub fn load_registry(path: &Path) -> Result<Loaded<FeatureRegistry>, Diagnostics> {
    let reg = load_yaml::<FeatureRegistry>(path)?;
    let mut diags = Diagnostics::default();
    for (name, spec) in &reg.value.features {
        let base = format!("/features/{}", escape(name));
        let mut seen = BTreeSet::new();
        for (key, opt) in &spec.options {
            let ptr = format!("{base}/options/{}", escape(key));
            let numeric = opt.default.is_number();
            if (opt.min.is_some() || opt.max.is_some()) && !numeric {
                diags.push(reg.diag(&ptr, format!("option `{key}` has a range but a default of {}", opt.default)));
            } else if let Some(problem) = not_whole(&opt.default, opt) {
                // Only the type: the range limits given values, and libvmaf's
                // tables have defaults outside it that mean "not set"
                // (cambi's enc_width is 0, its range 180..7680; float_adm's
                // adm_skip_aim_scale is -1). A test holds every registered
                // default and range to the implementation's option table.
                diags.push(reg.diag(&format!("{ptr}/default"), format!("the default {problem}")));
            }
            if let (Some(lo), Some(hi)) = (opt.min, opt.max)
                && lo > hi
            {
                diags.push(reg.diag(&ptr, format!("option `{key}`: min {lo} is above max {hi}")));
            }
        }
        let all = spec.metrics.iter().chain(spec.options.values().flat_map(|o| &o.adds_metrics));
        for (i, metric) in all.enumerate() {
            if !seen.insert(metric) {
                diags.push(reg.diag(&format!("{base}/metrics/{i}"), format!("metric `{metric}` is listed twice")));
            }
        }
    }
    diags.into_result()?;
    Ok(reg)
}

/// Loads and checks a calibration table; feature names are checked when
/// the registry is known.
pub fn load_calibration(
    path: &Path,
    registry: Option<&FeatureRegistry>,
) -> Result<Loaded<CalibrationTable>, Diagnostics> {
    check_calibration(load_yaml::<CalibrationTable>(path)?, registry)
}

/// [`load_calibration`] of `text`, as if read from `path` (a table about
/// to be written).
pub fn parse_calibration(
    path: &Path,
    text: &str,
    registry: Option<&FeatureRegistry>,
) -> Result<Loaded<CalibrationTable>, Diagnostics> {
    check_calibration(parse_yaml::<CalibrationTable>(path, text)?, registry)
}

fn check_calibration(
    table: Loaded<CalibrationTable>,
    registry: Option<&FeatureRegistry>,
) -> Result<Loaded<CalibrationTable>, Diagnostics> {
    let mut diags = Diagnostics::default();
    let mut seen = BTreeMap::new();
    for (i, row) in table.value.rows.iter().enumerate() {
        let ptr = format!("/rows/{i}");
        if let Err(e) = check_pattern(&row.arch_id) {
            diags.push(table.diag(&format!("{ptr}/arch_id"), e).expected("an arch_id, or one ending in `*`"));
        }
        if let Some(first) = seen.insert(row.arch_id.clone(), i) {
            diags.push(table.diag(&format!("{ptr}/arch_id"), format!("`{}` is also rows[{first}]", row.arch_id)));
        }
        for (feature, tol) in &row.features {
            let fptr = format!("{ptr}/features/{}", escape(feature));
            if let Some(reg) = registry
                && !reg.features.contains_key(feature)
            {
                diags.push(unknown_feature(&table.key_diag(&fptr, ""), feature, reg));
            }
            if tol.is_nan() || *tol <= 0.0 {
                diags.push(table.diag(&fptr, format!("tolerance {tol} is not positive")).expected("a number > 0"));
            }
        }
    }
    diags.into_result()?;
    Ok(table)
}

fn unknown_feature(at: &Diagnostic, name: &str, registry: &FeatureRegistry) -> Diagnostic {
    let mut d = at.clone();
    d.message = format!("unknown feature `{name}`");
    d.expected(format!("a feature of the registry ({} features)", registry.features.len()))
        .suggest(nearest(name, registry.features.keys().map(String::as_str)))
}

/// Loads a gate, its registry and its calibration table, and resolves them.
pub fn load_gate(path: &Path) -> Result<ResolvedGate, Diagnostics> {
    let gate = load_yaml::<GateFile>(path)?;
    let registry_file = gate.resolve_path(&gate.value.registry);
    let registry = load_registry(&registry_file).map_err(|mut d| {
        if d.0.iter().all(|d| d.file == registry_file && d.line.is_none()) {
            d.push(gate.diag("/registry", format!("cannot load the feature registry {}", registry_file.display())));
        }
        d
    })?;
    let calibration = match &gate.value.calibration {
        Some(rel) => {
            let p = gate.resolve_path(rel);
            let t = load_calibration(&p, Some(&registry.value))?;
            Some((p, t.value))
        }
        None => None,
    };
    let mut diags = Diagnostics::default();
    let features = resolve_features(&gate, &registry.value, &mut diags);
    let backends = resolve_backends(&gate, &mut diags);
    check_external_commands(&gate, &features, &backends, &mut diags);
    let fixtures = resolve_fixtures(&gate, &mut diags);
    let pairs = resolve_pairs(&gate, &features, &backends, &fixtures, &mut diags);
    diags.into_result()?;
    Ok(ResolvedGate {
        name: gate.value.name.clone(),
        file: gate.path.clone(),
        registry_file,
        features,
        backends,
        pairs,
        fixtures,
        calibration,
    })
}

fn resolve_features(
    gate: &Loaded<GateFile>,
    registry: &FeatureRegistry,
    diags: &mut Diagnostics,
) -> Vec<ResolvedFeature> {
    let choices: Vec<FeatureChoice> = match &gate.value.features {
        FeatureSelection::All(_) => registry.features.keys().cloned().map(FeatureChoice::Name).collect(),
        FeatureSelection::List(list) => list.clone(),
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, choice) in choices.iter().enumerate() {
        let ptr = match choice {
            FeatureChoice::Name(_) => format!("/features/{i}"),
            FeatureChoice::Custom(_) => format!("/features/{i}/name"),
        };
        let name = choice.name();
        let Some(spec) = registry.features.get(name) else {
            diags.push(unknown_feature(&gate.diag(&ptr, ""), name, registry));
            continue;
        };
        if !seen.insert(name.to_string()) {
            diags.push(gate.diag(&ptr, format!("feature `{name}` is selected twice")));
            continue;
        }
        match resolve_feature(name, spec, choice) {
            Ok(f) => out.push(f),
            Err((sub, msg, suggestion, expected)) => {
                let d = gate.key_diag(&format!("/features/{i}{sub}"), msg).suggest(suggestion.as_deref());
                diags.push(match expected {
                    Some(e) => d.expected(e),
                    None => d,
                });
            }
        }
    }
    out
}

type FeatureError = (String, String, Option<String>, Option<String>);

/// Applies a gate's override to a registry feature.
pub fn resolve_feature(
    name: &str,
    spec: &FeatureSpec,
    choice: &FeatureChoice,
) -> Result<ResolvedFeature, FeatureError> {
    let mut f = ResolvedFeature {
        name: name.to_string(),
        metrics: spec.metrics.clone(),
        tolerance: spec.tolerance,
        adr: spec.adr.clone(),
        precision: spec.precision,
        options: Options::new(),
        golden_file: spec.golden_file.clone().unwrap_or_else(|| name.to_string()),
    };
    if let FeatureChoice::Custom(o) = choice {
        if o.tolerance.is_some() && o.adr.is_none() {
            return Err((
                "/tolerance".into(),
                "a tolerance override needs the `adr` that justifies it".into(),
                None,
                Some("`adr: ...` beside `tolerance`".into()),
            ));
        }
        if let Some(t) = o.tolerance {
            f.tolerance = t;
        }
        if let Some(adr) = &o.adr {
            f.adr = adr.clone();
        }
        if let Some(p) = o.precision {
            f.precision = p;
        }
        for (key, value) in &o.options {
            // By name, or by libvmaf's alias (kept under the name).
            let found = spec
                .options
                .get_key_value(key)
                .or_else(|| spec.options.iter().find(|(_, opt)| opt.alias.as_deref() == Some(key.as_str())));
            let Some((canonical, opt)) = found else {
                let known: Vec<&str> = spec.options.keys().map(String::as_str).collect();
                let expected = if known.is_empty() {
                    format!("no options: {name} takes none")
                } else {
                    format!("one of: {}", known.join(", "))
                };
                return Err((
                    format!("/options/{}", escape(key)),
                    format!("{name} has no option `{key}`"),
                    nearest(key, known).map(str::to_string),
                    Some(expected),
                ));
            };
            if std::mem::discriminant(value) != std::mem::discriminant(&opt.default) {
                return Err((
                    format!("/options/{}", escape(key)),
                    format!("option `{key}` has the wrong type: {value}"),
                    None,
                    Some(format!("a value like its default, {}", opt.default)),
                ));
            }
            if let Some(problem) = out_of_range(value, opt) {
                return Err((
                    format!("/options/{}", escape(key)),
                    format!("option `{key}` {problem}"),
                    None,
                    Some(option_expectation(opt)),
                ));
            }
            if value == &serde_json::Value::Bool(true) {
                f.metrics.extend(opt.adds_metrics.iter().cloned());
                if let Some(g) = &opt.golden_file {
                    f.golden_file = g.clone();
                }
            }
            if f.options.insert(canonical.clone(), value.clone()).is_some() {
                return Err((
                    format!("/options/{}", escape(key)),
                    format!("option `{canonical}` is given twice (by its name and its alias)"),
                    None,
                    None,
                ));
            }
        }
    }
    // The implementation is the authority on which metrics a set of options
    // gives (an option may remove metrics, as psnr's enable_chroma: false
    // does) and on combinations the registry cannot express; a test keeps
    // it equal to the registry's lists.
    if let Some(imp) = crate::features::find(name) {
        f.metrics = (imp.metrics)(&f.options).map_err(|e| {
            ("/options".to_string(), format!("{name}: {e:#}"), None, Some(format!("options {name} accepts")))
        })?;
    }
    if f.precision == Precision::Fp16 {
        f.tolerance = FP16_TOLERANCE;
    }
    Ok(f)
}

/// Why a number is not a valid value of `opt`: a fraction for a whole-number
/// option, or outside libvmaf's `[min, max]` (a double as libvmaf reads it,
/// [`crate::features::options::libvmaf_double`]).
fn out_of_range(value: &serde_json::Value, opt: &OptionSpec) -> Option<String> {
    let v = value.as_f64()?;
    if let Some(problem) = not_whole(value, opt) {
        return Some(problem);
    }
    // A double option's number as libvmaf reads it (strtof, then %g), as
    // the feature's own check does.
    let whole = opt.default.is_i64() || opt.default.is_u64();
    let v = if whole { v } else { crate::features::options::libvmaf_double(v) };
    match (opt.min, opt.max) {
        (Some(lo), _) if v < lo => Some(format!("is {value}, below its minimum {lo}")),
        (_, Some(hi)) if v > hi => Some(format!("is {value}, above its maximum {hi}")),
        _ => None,
    }
}

/// Why a number is not of `opt`'s type: a fraction for a whole-number option.
fn not_whole(value: &serde_json::Value, opt: &OptionSpec) -> Option<String> {
    let whole = |v: &serde_json::Value| v.is_i64() || v.is_u64();
    (value.is_number() && whole(&opt.default) && !whole(value)).then(|| format!("must be a whole number, got {value}"))
}

/// What a valid value of `opt` looks like, for a diagnostic.
fn option_expectation(opt: &OptionSpec) -> String {
    let kind = if opt.default.is_i64() || opt.default.is_u64() { "a whole number" } else { "a number" };
    match (opt.min, opt.max) {
        (Some(lo), Some(hi)) => format!("{kind} from {lo} to {hi} (default {})", opt.default),
        (Some(lo), None) => format!("{kind} of at least {lo} (default {})", opt.default),
        (None, Some(hi)) => format!("{kind} of at most {hi} (default {})", opt.default),
        (None, None) => format!("{kind} (default {})", opt.default),
    }
}

fn resolve_backends(gate: &Loaded<GateFile>, diags: &mut Diagnostics) -> BTreeMap<String, ResolvedBackend> {
    let mut out = BTreeMap::new();
    for (name, decl) in &gate.value.backends {
        let ptr = format!("/backends/{}", escape(name));
        let BackendDecl { kind, required, device, command } = decl.clone();
        let kind = match kind.or_else(|| BackendKind::from_name(name)) {
            Some(k) => k,
            None => {
                let names = BackendKind::BUILTIN.map(BackendKind::as_str);
                diags.push(
                    gate.key_diag(&ptr, format!("unknown backend `{name}`"))
                        .expected(format!("a builtin backend ({}) or a `kind:`", names.join(", ")))
                        .suggest(nearest(name, names)),
                );
                continue;
            }
        };
        if kind == BackendKind::External && command.is_none() {
            diags.push(gate.diag(&ptr, "an external backend needs a `command`"));
        }
        if kind != BackendKind::External && command.is_some() {
            diags.push(gate.key_diag(&format!("{ptr}/command"), "only `kind: external` backends run a command"));
        }
        if device.is_some() && !kind.is_gpu() {
            diags.push(gate.key_diag(&format!("{ptr}/device"), "only GPU backends select a device"));
        }
        out.insert(name.clone(), ResolvedBackend { name: name.clone(), kind, required, device, command });
    }
    out
}

/// External backends: argv templates parse, `{output}` is used, and every
/// feature the command computes with options gets its `feature_args`.
fn check_external_commands(
    gate: &Loaded<GateFile>,
    features: &[ResolvedFeature],
    backends: &BTreeMap<String, ResolvedBackend>,
    diags: &mut Diagnostics,
) {
    use crate::backend::external::template;
    let feature_names: Vec<&str> = features.iter().map(|f| f.name.as_str()).collect();
    for (name, b) in backends {
        let Some(command) = &b.command else { continue };
        let ptr = format!("/backends/{}/command", escape(name));
        let mut templates_ok = true;
        for (i, t) in command.argv.iter().enumerate() {
            if let Err(e) = template::check(t) {
                templates_ok = false;
                diags.push(
                    gate.diag(&format!("{ptr}/argv/{i}"), e.message)
                        .expected(format!(
                            "placeholders: {}",
                            template::PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(" ")
                        ))
                        .suggest(e.suggestion.map(|s| format!("{{{s}}}")).as_deref()),
                );
            }
        }
        if templates_ok && !template::uses(&command.argv, "output") {
            diags.push(
                gate.diag(&format!("{ptr}/argv"), "the command is never told where to write its scores")
                    .expected("`{output}` in an argument (say `-o {output}`): ulpgate reads libvmaf's JSON from there"),
            );
        }
        for key in command.feature_args.keys() {
            if !feature_names.contains(&key.as_str()) {
                diags.push(
                    gate.key_diag(
                        &format!("{ptr}/feature_args/{}", escape(key)),
                        format!("feature `{key}` is not selected by this gate"),
                    )
                    .expected(format!("one of: {}", feature_names.join(", ")))
                    .suggest(nearest(key, feature_names.iter().copied())),
                );
            }
        }
        let used = gate.value.pairs.iter().map(|p| p.spec()).filter(|p| &p.a == name || &p.b == name);
        let mut computed: BTreeSet<String> = BTreeSet::new();
        for pair in used {
            match pair.features {
                Some(list) => computed.extend(list),
                None => computed.extend(feature_names.iter().map(|f| f.to_string())),
            }
        }
        for f in features.iter().filter(|f| computed.contains(&f.name)) {
            if !f.options.is_empty() && !command.feature_args.contains_key(&f.name) {
                let opts: Vec<String> = f.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
                diags.push(
                    gate.diag(
                        &ptr,
                        format!("`{name}` computes {} with options ({}) but is not told them", f.name, opts.join(", ")),
                    )
                    .expected(format!("`feature_args: {{{}: ...}}` giving the command those options", f.name)),
                );
            }
        }
    }
}

fn resolve_fixtures(gate: &Loaded<GateFile>, diags: &mut Diagnostics) -> Vec<ResolvedFixture> {
    let mut out: Vec<ResolvedFixture> = Vec::new();
    for (i, fx) in gate.value.fixtures.iter().enumerate() {
        let ptr = format!("/fixtures/{i}");
        if out.iter().any(|f| f.name == fx.name) {
            diags.push(gate.diag(&format!("{ptr}/name"), format!("fixture `{}` is defined twice", fx.name)));
            continue;
        }
        let golden = fx.golden.as_ref().map(|g| gate.resolve_path(g));
        let (reference, distorted) = match (&fx.synthetic, &fx.reference, &fx.distorted) {
            (Some(spec), None, None) => {
                if fx.geometry.is_some() {
                    diags.push(gate.key_diag(
                        &format!("{ptr}/geometry"),
                        "a synthetic fixture takes its geometry from `synthetic`",
                    ));
                }
                (
                    FrameSource::Synthetic { spec: spec.clone(), distorted: false },
                    FrameSource::Synthetic { spec: spec.clone(), distorted: true },
                )
            }
            (None, Some(r), Some(d)) => {
                let mut source = |rel: &str, key: &str| -> Option<FrameSource> {
                    let path = gate.resolve_path(rel);
                    if is_y4m(&path) {
                        return Some(FrameSource::Y4m { path });
                    }
                    match fx.geometry {
                        Some(geometry) => Some(FrameSource::Raw { path, geometry }),
                        None => {
                            diags.push(
                                gate.diag(&format!("{ptr}/{key}"), format!("raw YUV file `{rel}` needs a `geometry`"))
                                    .expected("geometry: {width, height, bit_depth, chroma} (or a .y4m file)"),
                            );
                            None
                        }
                    }
                };
                match (source(r, "reference"), source(d, "distorted")) {
                    (Some(r), Some(d)) => (r, d),
                    _ => continue,
                }
            }
            _ => {
                diags.push(
                    gate.diag(
                        &ptr,
                        format!("fixture `{}` needs either `synthetic` or both `reference` and `distorted`", fx.name),
                    )
                    .expected("`synthetic: {...}`, or `reference:` and `distorted:` file paths"),
                );
                continue;
            }
        };
        out.push(ResolvedFixture { name: fx.name.clone(), reference, distorted, golden, expected_frames: fx.frames });
    }
    out
}

fn is_y4m(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("y4m"))
}

/// Whether a fixture name matches a pair's filter (exact or trailing `*`).
pub fn fixture_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

fn resolve_pairs(
    gate: &Loaded<GateFile>,
    features: &[ResolvedFeature],
    backends: &BTreeMap<String, ResolvedBackend>,
    fixtures: &[ResolvedFixture],
    diags: &mut Diagnostics,
) -> Vec<ResolvedPair> {
    let mut out = Vec::new();
    let backend_names: Vec<&str> = backends.keys().map(String::as_str).collect();
    let feature_names: Vec<&str> = features.iter().map(|f| f.name.as_str()).collect();
    let mut seen = BTreeSet::new();
    for (i, decl) in gate.value.pairs.iter().enumerate() {
        let ptr = format!("/pairs/{i}");
        let spec = decl.spec();
        let short = matches!(decl, super::gate::PairDecl::Short(_));
        let mut ok = true;
        for (side, name) in [("a", &spec.a), ("b", &spec.b)] {
            if !backends.contains_key(name) {
                let at =
                    if short { format!("{ptr}/{}", if side == "a" { 0 } else { 1 }) } else { format!("{ptr}/{side}") };
                let mut d = gate.diag(&at, format!("backend `{name}` is not declared under `backends`"));
                d = d.expected(format!("one of: {}", backend_names.join(", ")));
                diags.push(d.suggest(nearest(name, backend_names.iter().copied())));
                ok = false;
            }
        }
        if spec.a == spec.b {
            diags.push(gate.diag(&ptr, format!("a pair needs two different backends, got `{}` twice", spec.a)));
            ok = false;
        }
        if !seen.insert((spec.a.clone(), spec.b.clone())) {
            diags.push(gate.diag(&ptr, format!("pair {} vs {} is listed twice", spec.a, spec.b)));
            ok = false;
        }
        let pair_features = match &spec.features {
            None => feature_names.iter().map(|s| s.to_string()).collect(),
            Some(list) => {
                for (j, f) in list.iter().enumerate() {
                    if !feature_names.contains(&f.as_str()) {
                        diags.push(
                            gate.diag(
                                &format!("{ptr}/features/{j}"),
                                format!("feature `{f}` is not selected by this gate"),
                            )
                            .expected(format!("one of: {}", feature_names.join(", ")))
                            .suggest(nearest(f, feature_names.iter().copied())),
                        );
                        ok = false;
                    }
                }
                list.clone()
            }
        };
        let pair_fixtures: Vec<String> = match &spec.fixtures {
            None => fixtures.iter().map(|f| f.name.clone()).collect(),
            Some(patterns) => {
                let names: Vec<&str> = fixtures.iter().map(|f| f.name.as_str()).collect();
                for (j, p) in patterns.iter().enumerate() {
                    if !names.iter().any(|n| fixture_matches(p, n)) {
                        diags.push(
                            gate.diag(&format!("{ptr}/fixtures/{j}"), format!("`{p}` matches no fixture"))
                                .suggest(nearest(p, names.iter().copied())),
                        );
                        ok = false;
                    }
                }
                names.iter().filter(|n| patterns.iter().any(|p| fixture_matches(p, n))).map(|n| n.to_string()).collect()
            }
        };
        if ok {
            out.push(ResolvedPair {
                a: spec.a,
                b: spec.b,
                features: pair_features,
                fixtures: pair_fixtures,
                tolerance: spec.tolerance,
            });
        }
    }
    out
}
