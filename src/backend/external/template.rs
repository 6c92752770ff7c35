//! argv templates of external backends: `{name}` placeholders, `{{` and
//! `}}` for literal braces.

use crate::config::suggest::nearest;

/// Every placeholder an argv template may use.
pub const PLACEHOLDERS: [&str; 10] = [
    "reference",
    "distorted",
    "width",
    "height",
    "pixel_format",
    "chroma",
    "bit_depth",
    "feature",
    "output",
    "threads",
];

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateError {
    pub message: String,
    pub suggestion: Option<&'static str>,
}

#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Text(String),
    Placeholder(&'a str),
}

fn parse(template: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    let error = |message: String| TemplateError { message, suggestion: None };
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("{{") {
            text.push('{');
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            text.push('}');
            rest = after;
        } else if c == '{' {
            let end = rest
                .find('}')
                .ok_or_else(|| error(format!("`{template}`: unclosed `{{` (write `{{{{` for a literal brace)")))?;
            let name = &rest[1..end];
            let known = PLACEHOLDERS.iter().find(|p| **p == name).copied().ok_or_else(|| TemplateError {
                message: format!("`{template}`: unknown placeholder `{{{name}}}` (write `{{{{` for a literal brace)"),
                suggestion: nearest(name, PLACEHOLDERS).and_then(|s| PLACEHOLDERS.iter().find(|p| **p == s).copied()),
            })?;
            if !text.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut text)));
            }
            pieces.push(Piece::Placeholder(known));
            rest = &rest[end + 1..];
        } else if c == '}' {
            return Err(error(format!("`{template}`: unmatched `}}` (write `}}}}` for a literal brace)")));
        } else {
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Checks a template without expanding it.
pub fn check(template: &str) -> Result<(), TemplateError> {
    parse(template).map(|_| ())
}

/// Whether any element of `argv` uses placeholder `name`.
pub fn uses(argv: &[String], name: &str) -> bool {
    argv.iter().any(|t| parse(t).is_ok_and(|p| p.contains(&Piece::Placeholder(name))))
}

/// Expands a template, asking `value` for each placeholder.
pub fn expand(template: &str, value: &dyn Fn(&str) -> String) -> Result<String, TemplateError> {
    Ok(parse(template)?
        .into_iter()
        .map(|p| match p {
            Piece::Text(t) => t,
            Piece::Placeholder(name) => value(name),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(name: &str) -> String {
        format!("<{name}>")
    }

    #[test]
    fn expands_placeholders_inside_arguments() {
        assert_eq!(expand("-w{width}x{height}", &fill).unwrap(), "-w<width>x<height>");
        assert_eq!(expand("plain", &fill).unwrap(), "plain");
        assert_eq!(expand("{{literal}} {output}", &fill).unwrap(), "{literal} <output>");
        assert_eq!(expand("--threads={threads}", &fill).unwrap(), "--threads=<threads>");
    }

    #[test]
    fn rejects_unknown_and_unbalanced_braces() {
        let e = check("{widht}").unwrap_err();
        assert!(e.message.contains("unknown placeholder `{widht}`"), "{}", e.message);
        assert_eq!(e.suggestion, Some("width"));
        assert!(check("{output").unwrap_err().message.contains("unclosed"));
        assert!(check("a}b").unwrap_err().message.contains("unmatched"));
        assert!(check("awk '{print $1}'").is_err());
    }

    #[test]
    fn finds_uses() {
        let argv = vec!["vmaf".to_string(), "-o".into(), "{output}".into()];
        assert!(uses(&argv, "output"));
        assert!(!uses(&argv, "feature"));
    }
}
