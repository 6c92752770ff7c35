//! YAML → typed configuration: parse (serde_yaml), validate against the JSON
//! Schema generated from the Rust type (jsonschema), then deserialize.
//! Every failure becomes a [`Diagnostic`] with file, line and column.

use super::diag::{Diagnostic, Diagnostics};
use super::spans::{SpanIndex, escape};
use super::suggest::nearest;
use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A configuration document with where it came from.
#[derive(Debug)]
pub struct Loaded<T> {
    pub path: PathBuf,
    pub value: T,
    pub spans: SpanIndex,
}

impl<T> Loaded<T> {
    /// A diagnostic at JSON `pointer` of this document.
    pub fn diag(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.path, &self.spans, pointer, message)
    }

    pub fn key_diag(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at_key(&self.path, &self.spans, pointer, message)
    }

    /// A path written in this document, relative to the document's folder.
    pub fn resolve_path(&self, relative: &str) -> PathBuf {
        let p = Path::new(relative);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let base = self.path.parent().unwrap_or(Path::new(""));
        clean(&base.join(p))
    }
}

/// Removes `.` and `a/..` components without touching the file system, so
/// paths in reports read well and stay identical across runs.
fn clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The JSON Schema of `T`, as checked in under `schemas/`.
pub fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("a generated schema serializes")
}

pub fn load_yaml<T: DeserializeOwned + JsonSchema>(path: &Path) -> Result<Loaded<T>, Diagnostics> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let msg = if e.kind() == std::io::ErrorKind::NotFound {
            "file not found".to_string()
        } else {
            format!("cannot read: {e}")
        };
        Diagnostic::file(path, msg)
    })?;
    parse_yaml(path, &text)
}

pub fn parse_yaml<T: DeserializeOwned + JsonSchema>(path: &Path, text: &str) -> Result<Loaded<T>, Diagnostics> {
    let spans = SpanIndex::build(text);
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let msg = strip_location(&e.to_string());
        if let Some(d) = duplicate_key(path, &spans, &msg) {
            return d;
        }
        let mut d = Diagnostic::file(path, format!("invalid YAML: {msg}"));
        if let Some(loc) = e.location() {
            (d.line, d.column) = (Some(loc.line()), Some(loc.column()));
        }
        d
    })?;
    // JSON has no NaN or infinity: serde_json would make them null and the
    // schema would report "nothing (null)". Say what was written.
    let mut non_finite = Vec::new();
    find_non_finite(&yaml, String::new(), &mut non_finite);
    if !non_finite.is_empty() {
        return Err(Diagnostics(
            non_finite
                .into_iter()
                .map(|(pointer, v)| {
                    Diagnostic::at(path, &spans, &pointer, format!("{v} is not a number a gate takes"))
                        .expected("a finite number")
                })
                .collect(),
        ));
    }
    let json: Value = serde_json::to_value(&yaml)
        .map_err(|e| Diagnostic::file(path, format!("unsupported YAML (keys must be strings): {e}")))?;
    let schema = schema_of::<T>();
    let validator = jsonschema::validator_for(&schema).expect("generated schemas are valid");
    let mut diags = Diagnostics::default();
    for error in validator.iter_errors(&json) {
        explain(path, &spans, &schema, &error, &mut diags);
    }
    diags.0.sort_by_key(|d| (d.line, d.column));
    diags.0.dedup();
    // One message per value: `schema_version: "1"` breaks both the type
    // and the constant; the first (the type) says it.
    diags.0.dedup_by(|later, first| {
        later.line.is_some() && (later.line, later.column) == (first.line, first.column) && later.path == first.path
    });
    diags.into_result()?;
    let value = serde_json::from_value(json).map_err(|e| Diagnostic::file(path, e.to_string()))?;
    Ok(Loaded { path: path.to_path_buf(), value, spans })
}

/// The JSON pointers of the NaNs and infinities in `v`, and how they read.
fn find_non_finite(v: &serde_yaml::Value, pointer: String, out: &mut Vec<(String, String)>) {
    match v {
        serde_yaml::Value::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
            out.push((pointer, format!("`{n}`")));
        }
        serde_yaml::Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                find_non_finite(item, format!("{pointer}/{i}"), out);
            }
        }
        serde_yaml::Value::Mapping(m) => {
            for (k, item) in m {
                if let Some(k) = k.as_str() {
                    find_non_finite(item, format!("{pointer}/{}", escape(k)), out);
                }
            }
        }
        serde_yaml::Value::Tagged(t) => find_non_finite(&t.value, pointer, out),
        _ => {}
    }
}

/// serde_yaml reports a duplicate key at its mapping (`features: duplicate
/// entry with key "psnr"`); point at the second occurrence of the key.
fn duplicate_key(path: &Path, spans: &SpanIndex, msg: &str) -> Option<Diagnostic> {
    // At the top level serde_yaml names no mapping: "duplicate entry with key".
    let (at, rest) = match msg.split_once(": duplicate entry with key \"") {
        Some(found) => found,
        None => ("", msg.strip_prefix("duplicate entry with key \"")?),
    };
    let key = rest.strip_suffix('"')?;
    let mut pointer = String::new();
    for part in at.split('.').filter(|p| !p.is_empty()) {
        let (name, indices) = part.split_once('[').map_or((part, ""), |(n, i)| (n, i));
        pointer.push('/');
        pointer.push_str(&escape(name));
        for index in indices.split('[').map(|i| i.trim_end_matches(']')).filter(|i| !i.is_empty()) {
            pointer.push('/');
            pointer.push_str(index);
        }
    }
    let key_pointer = format!("{pointer}/{}", escape(key));
    Some(Diagnostic::at_key(path, spans, &key_pointer, format!("`{key}` is defined twice")).expected("each key once"))
}

/// serde_yaml appends " at line L column C"; we print the location ourselves.
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Turns one schema violation into diagnostics that say what was expected.
fn explain(path: &Path, spans: &SpanIndex, schema: &Value, error: &ValidationError<'_>, out: &mut Diagnostics) {
    let pointer = error.instance_path().as_str();
    let instance = error.instance();
    let d = |msg: String| Diagnostic::at(path, spans, pointer, msg);
    // A number as the file writes it (`-1.0e-5`, not JSON's `-0.00001`).
    let written = || spans.scalar(pointer).map_or_else(|| instance.to_string(), str::to_string);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = allowed_properties(schema, error.schema_path().as_str());
            for key in unexpected {
                let key_ptr = format!("{pointer}/{}", escape(key));
                let mut diag = Diagnostic::at_key(path, spans, &key_ptr, format!("unknown key `{key}`"))
                    .suggest(nearest(key, allowed.iter().map(String::as_str)));
                if !allowed.is_empty() {
                    diag = diag.expected(format!("one of: {}", allowed.join(", ")));
                }
                out.push(diag);
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            out.push(d(format!("missing required key `{name}`")));
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(ts) => ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" or "),
            };
            // `chroma: 420` is a number to YAML: say how to write the string.
            let expected = match &**instance {
                Value::Number(n) if expected == "string" => format!("a string (in quotes: \"{n}\")"),
                _ => expected,
            };
            out.push(d(format!("wrong type: found {}", describe(instance))).expected(expected));
        }
        ValidationErrorKind::Enum { options } => {
            let names: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect())
                .unwrap_or_default();
            let found = instance.as_str().map_or_else(|| instance.to_string(), str::to_string);
            out.push(
                d(format!("`{found}` is not allowed here"))
                    .expected(format!("one of: {}", names.join(", ")))
                    .suggest(nearest(&found, names.iter().map(String::as_str))),
            );
        }
        ValidationErrorKind::Constant { expected_value } => {
            out.push(d(format!("found {}", describe(instance))).expected(expected_value.to_string()));
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            out.push(d(format!("{} is too small", written())).expected(format!("a number greater than {limit}")));
        }
        ValidationErrorKind::Minimum { limit } => {
            out.push(d(format!("{} is too small", written())).expected(format!("a number of at least {limit}")));
        }
        ValidationErrorKind::Maximum { limit } => {
            out.push(d(format!("{} is too large", written())).expected(format!("a number of at most {limit}")));
        }
        ValidationErrorKind::MinItems { limit } => {
            out.push(d("too few entries".to_string()).expected(format!("at least {limit}")));
        }
        ValidationErrorKind::UniqueItems => out.push(d("entries must be unique".to_string())),
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // Explain the alternative the value was closest to: the one whose
            // errors are not a type mismatch at this very node.
            let closest = context.iter().find(|errors| {
                !errors.is_empty()
                    && !errors.iter().any(|e| {
                        e.instance_path().as_str() == pointer && matches!(e.kind(), ValidationErrorKind::Type { .. })
                    })
            });
            match closest {
                Some(errors) => errors.iter().for_each(|e| explain(path, spans, schema, e, out)),
                None => out.push(
                    d(format!("{} is not allowed here", describe(instance)))
                        .expected(expected_of(schema, error.schema_path().as_str())),
                ),
            }
        }
        _ => out.push(d(error.to_string())),
    }
}

/// A short description of a JSON value for messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

/// The schema node a keyword location points into, following `$ref`s.
fn schema_node<'a>(schema: &'a Value, keyword_path: &str) -> Option<&'a Value> {
    let mut node = schema;
    let segments: Vec<&str> = keyword_path.split('/').skip(1).collect();
    for seg in segments {
        if seg == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            node = schema.pointer(target)?;
            continue;
        }
        let seg = seg.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(m) => m.get(&seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The keys an object schema allows, for "unknown key" suggestions.
fn allowed_properties(schema: &Value, keyword_path: &str) -> Vec<String> {
    let parent = keyword_path.rsplit_once('/').map_or("", |(p, _)| p);
    let mut node = schema_node(schema, parent);
    if let Some(target) = node.and_then(|n| n.get("$ref")).and_then(Value::as_str) {
        node = target.strip_prefix('#').and_then(|t| schema.pointer(t));
    }
    node.and_then(|n| n.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// What an anyOf/oneOf accepts, in words.
fn expected_of(schema: &Value, keyword_path: &str) -> String {
    let Some(Value::Array(alternatives)) = schema_node(schema, keyword_path) else {
        return "another form".into();
    };
    let words: Vec<String> = alternatives
        .iter()
        .map(|alt| {
            let alt = match alt.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
                Some(target) => schema.pointer(target).unwrap_or(alt),
                None => alt,
            };
            if let Some(c) = alt.get("const") {
                return format!("`{}`", c.as_str().map_or_else(|| c.to_string(), str::to_string));
            }
            if let Some(Value::Array(e)) = alt.get("enum") {
                let names: Vec<String> = e.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect();
                return format!("one of {}", names.join(", "));
            }
            match alt.get("type").and_then(Value::as_str) {
                Some("object") => "a mapping".into(),
                Some("array") => "a list".into(),
                Some(t) => format!("a {t}"),
                None => "another form".into(),
            }
        })
        .collect();
    words.join(" or ")
}
