//! Extractor options as libvmaf's option tables declare them (`VmafOption`
//! in libvmaf's opt.h): name, alias, type and default, range, and whether
//! the option is a *feature parameter* — one whose non-default value
//! renames the metrics (feature_name.c `vmaf_feature_name_from_options`:
//! `integer_vif_scale0` becomes `integer_vif_scale0_egl_1` with
//! `vif_enhn_gain_limit=1`). Each feature lists its table in
//! [`super::FeatureImpl::options`]; the registry lists the same options
//! (a test keeps them equal) so gates are checked before anything runs.

use super::Options;
use anyhow::{Result, bail};
use serde_json::Value;

/// An option's type and default value (`VMAF_OPT_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(&'static str),
}

impl OptValue {
    /// The value as the registry's YAML spells it.
    pub fn to_json(self) -> Value {
        match self {
            OptValue::Bool(b) => Value::Bool(b),
            OptValue::Int(i) => Value::from(i),
            OptValue::Double(d) => Value::from(d),
            OptValue::Str(s) => Value::from(s),
        }
    }
}

/// One entry of a libvmaf option table.
#[derive(Debug, Clone, Copy)]
pub struct OptionDef {
    pub name: &'static str,
    /// libvmaf's short name (`egl` for `vif_enhn_gain_limit`): accepted as a
    /// key, and what a feature parameter's metric suffix uses.
    pub alias: Option<&'static str>,
    pub default: OptValue,
    /// The option table's range, for numbers.
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// `VMAF_OPT_FLAG_FEATURE_PARAM`: a non-default value renames the metrics.
    pub feature_param: bool,
}

impl OptionDef {
    /// A boolean option that only switches output (debug metrics and the
    /// like): no range, not a feature parameter.
    pub const fn flag(name: &'static str, default: bool) -> Self {
        OptionDef { name, alias: None, default: OptValue::Bool(default), min: None, max: None, feature_param: false }
    }
}

fn find<'a>(defs: &'a [OptionDef], key: &str) -> Option<&'a OptionDef> {
    defs.iter().find(|d| d.name == key || d.alias == Some(key))
}

/// The value given for `def` (by name or alias), if any.
fn given<'a>(options: &'a Options, def: &OptionDef) -> Option<&'a Value> {
    options.get(def.name).or_else(|| def.alias.and_then(|a| options.get(a)))
}

/// The value libvmaf's extractor gets for the number `v` given to a double
/// option. Options reach libvmaf as text through
/// `vmaf_feature_dictionary_set` (dict.c; its CLI's `--feature` and
/// ffmpeg's filter both use it), which stores a numeric value as `%g` of
/// its `strtof`: rounded to a float, then to 6 significant digits. The
/// option table then reads that text back (`atof`), checks the range on it,
/// and the metric names print it. So `motion_fps_weight=4.1234567` scores
/// with 4.12346, and `vif_enhn_gain_limit=100.0000001` is the default.
/// (An int option's whole numbers within any table's range come through
/// unchanged.) We round the double, where C rounds the decimal text: the
/// two floats differ only for text within 2^-54 of halfway between floats.
pub fn libvmaf_double(v: f64) -> f64 {
    format_g(f64::from(v as f32)).parse().unwrap_or(v)
}

/// The number given for a double option as libvmaf reads it
/// ([`libvmaf_double`]); other values as given.
fn as_libvmaf(def: &OptionDef, value: &Value) -> Option<f64> {
    let v = value.as_f64()?;
    Some(if matches!(def.default, OptValue::Double(_)) { libvmaf_double(v) } else { v })
}

/// Checks every given option against the table: known (by name or alias,
/// else the nearest name is suggested), of the option's type (a whole number
/// for an int option), and inside its range (a double as libvmaf reads it,
/// [`libvmaf_double`]).
pub fn check(feature: &str, options: &Options, defs: &[OptionDef]) -> Result<()> {
    for (key, value) in options {
        let Some(def) = find(defs, key) else {
            let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
            match crate::config::suggest::nearest(key, names.iter().copied()) {
                Some(s) => bail!("{feature} has no option `{key}` (did you mean `{s}`?)"),
                None if names.is_empty() => bail!("{feature} has no option `{key}`; it takes none"),
                None => bail!("{feature} has no option `{key}`; it takes: {}", names.join(", ")),
            }
        };
        let ok = match def.default {
            OptValue::Bool(_) => value.is_boolean(),
            OptValue::Int(_) => value.is_i64() || value.is_u64(),
            OptValue::Double(_) => value.is_number(),
            OptValue::Str(_) => value.is_string(),
        };
        if !ok {
            bail!("{feature} option `{key}` must be like its default {}, got {value}", def.default.to_json());
        }
        if let Some(v) = as_libvmaf(def, value)
            && (def.min.is_some_and(|lo| v < lo) || def.max.is_some_and(|hi| v > hi))
        {
            bail!(
                "{feature} option `{key}` is {value}, outside its range [{}, {}]",
                def.min.map_or("-inf".into(), format_g),
                def.max.map_or("inf".into(), format_g)
            );
        }
    }
    Ok(())
}

fn def<'a>(defs: &'a [OptionDef], name: &str) -> Result<&'a OptionDef> {
    defs.iter().find(|d| d.name == name).ok_or_else(|| anyhow::anyhow!("no option `{name}` in the option table"))
}

/// A boolean option's value (given or default).
pub fn get_bool(options: &Options, defs: &[OptionDef], name: &str) -> Result<bool> {
    let d = def(defs, name)?;
    match (given(options, d), d.default) {
        (Some(Value::Bool(b)), _) => Ok(*b),
        (None, OptValue::Bool(b)) => Ok(b),
        (v, _) => bail!("option {name} must be true or false, got {v:?}"),
    }
}

/// An int option's value (given or default).
pub fn get_int(options: &Options, defs: &[OptionDef], name: &str) -> Result<i64> {
    let d = def(defs, name)?;
    match (given(options, d), d.default) {
        (Some(v), _) => v.as_i64().ok_or_else(|| anyhow::anyhow!("option {name} must be a whole number, got {v}")),
        (None, OptValue::Int(i)) => Ok(i),
        (None, other) => bail!("option {name} is not an int option ({other:?})"),
    }
}

/// A double option's value (given, as libvmaf reads it: [`libvmaf_double`];
/// or the default).
pub fn get_double(options: &Options, defs: &[OptionDef], name: &str) -> Result<f64> {
    let d = def(defs, name)?;
    match (given(options, d), d.default) {
        (Some(v), _) => {
            v.as_f64().map(libvmaf_double).ok_or_else(|| anyhow::anyhow!("option {name} must be a number, got {v}"))
        }
        (None, OptValue::Double(x)) => Ok(x),
        (None, other) => bail!("option {name} is not a double option ({other:?})"),
    }
}

/// A string option's value (given or default).
pub fn get_str(options: &Options, defs: &[OptionDef], name: &str) -> Result<String> {
    let d = def(defs, name)?;
    match (given(options, d), d.default) {
        (Some(Value::String(s)), _) => Ok(s.clone()),
        (None, OptValue::Str(s)) => Ok(s.to_string()),
        (v, _) => bail!("option {name} must be a string, got {v:?}"),
    }
}

/// The name libvmaf prints for metric `base` under `options`
/// (feature_name.c `vmaf_feature_name_from_options`): each feature
/// parameter whose value (a double as libvmaf reads it, [`libvmaf_double`])
/// differs from its default, in alphabetical order of the option names,
/// appends `_{alias or name}` (bool) or `_{alias or name}_{value}` (int
/// `%d`, double `%g`, string).
pub fn metric_name(base: &str, options: &Options, defs: &[OptionDef]) -> String {
    let mut params: Vec<(&str, String)> = Vec::new();
    for d in defs.iter().filter(|d| d.feature_param) {
        let Some(value) = given(options, d) else { continue };
        let key = d.alias.unwrap_or(d.name);
        let suffix = match (d.default, value) {
            (OptValue::Bool(def), Value::Bool(b)) if *b != def => Some(format!("_{key}")),
            (OptValue::Int(def), v) if v.as_i64().is_some_and(|i| i != def) => {
                Some(format!("_{key}_{}", v.as_i64().unwrap_or_default()))
            }
            (OptValue::Double(def), v) if v.as_f64().is_some_and(|x| libvmaf_double(x) != def) => {
                Some(format!("_{key}_{}", format_g(libvmaf_double(v.as_f64().unwrap_or_default()))))
            }
            (OptValue::Str(def), Value::String(s)) if s != def => Some(format!("_{key}_{s}")),
            _ => None,
        };
        if let Some(s) = suffix {
            params.push((d.name, s));
        }
    }
    params.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = base.to_string();
    for (_, s) in params {
        out.push_str(&s);
    }
    out
}

/// C's `printf("%g", v)`: 6 significant digits, trailing zeros dropped,
/// scientific notation when the exponent is below -4 or at least 6.
pub fn format_g(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // The exponent after rounding to 6 significant digits.
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static DEFS: &[OptionDef] = &[
        OptionDef {
            name: "vif_enhn_gain_limit",
            alias: Some("egl"),
            default: OptValue::Double(100.0),
            min: Some(1.0),
            max: Some(100.0),
            feature_param: true,
        },
        OptionDef {
            name: "debug",
            alias: None,
            default: OptValue::Bool(false),
            min: None,
            max: None,
            feature_param: false,
        },
        OptionDef {
            name: "adm_csf_mode",
            alias: Some("csf"),
            default: OptValue::Int(0),
            min: Some(0.0),
            max: Some(9.0),
            feature_param: true,
        },
    ];

    fn opts(v: Value) -> Options {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn printf_g_as_c_prints_it() {
        for (v, want) in [
            (1.0, "1"),
            (100.0, "100"),
            (0.5, "0.5"),
            (1.5e-5, "1.5e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (1.234567891, "1.23457"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(format_g(v), want, "{v}");
        }
    }

    #[test]
    fn feature_parameters_rename_metrics_as_libvmaf_does() {
        assert_eq!(metric_name("integer_vif_scale0", &Options::new(), DEFS), "integer_vif_scale0");
        // At its default: no suffix; debug is no feature parameter.
        let o = opts(json!({"vif_enhn_gain_limit": 100.0, "debug": true}));
        assert_eq!(metric_name("integer_vif_scale0", &o, DEFS), "integer_vif_scale0");
        // Alphabetical by option name: adm_csf_mode before vif_enhn_gain_limit.
        let o = opts(json!({"egl": 1.0, "adm_csf_mode": 3}));
        assert_eq!(metric_name("x", &o, DEFS), "x_csf_3_egl_1");
    }

    #[test]
    fn doubles_are_read_as_libvmaf_reads_them() {
        // strtof, then %g (dict.c vmaf_feature_dictionary_set).
        for (given, read) in [
            (4.1234567, 4.12346),
            (3.7113402, 3.71134),
            (100.0000001, 100.0),
            (0.9999999, 1.0),
            (0.1, 0.1),
            (1e-5, 1e-5),
            (1234567.0, 1.23457e6),
            (0.0, 0.0),
        ] {
            assert_eq!(libvmaf_double(given), read, "{given}");
        }
        let o = opts(json!({"vif_enhn_gain_limit": 4.1234567}));
        assert_eq!(get_double(&o, DEFS, "vif_enhn_gain_limit").unwrap(), 4.12346);
        assert_eq!(metric_name("x", &o, DEFS), "x_egl_4.12346");
        // Read as 100 and 1: the default (no suffix) and the minimum.
        let o = opts(json!({"vif_enhn_gain_limit": 100.0000001}));
        assert!(check("vif", &o, DEFS).is_ok());
        assert_eq!(metric_name("x", &o, DEFS), "x");
        assert!(check("vif", &opts(json!({"egl": 0.9999999})), DEFS).is_ok());
        assert!(check("vif", &opts(json!({"egl": 0.99999})), DEFS).is_err());
    }

    #[test]
    fn values_are_checked_against_the_table() {
        assert!(check("vif", &opts(json!({"egl": 50.0, "debug": true})), DEFS).is_ok());
        let e = check("vif", &opts(json!({"vif_enhn_gain_limt": 1.0})), DEFS).unwrap_err().to_string();
        assert!(e.contains("did you mean `vif_enhn_gain_limit`"), "{e}");
        let e = check("vif", &opts(json!({"vif_enhn_gain_limit": 0.5})), DEFS).unwrap_err().to_string();
        assert!(e.contains("outside its range [1, 100]"), "{e}");
        let e = check("vif", &opts(json!({"adm_csf_mode": 1.5})), DEFS).unwrap_err().to_string();
        assert!(e.contains("must be like its default 0"), "{e}");
        let e = check("vif", &opts(json!({"debug": 1})), DEFS).unwrap_err().to_string();
        assert!(e.contains("must be like its default false"), "{e}");
        assert_eq!(get_double(&opts(json!({"egl": 2.0})), DEFS, "vif_enhn_gain_limit").unwrap(), 2.0);
        assert_eq!(get_int(&Options::new(), DEFS, "adm_csf_mode").unwrap(), 0);
        assert!(!get_bool(&Options::new(), DEFS, "debug").unwrap());
    }
}
