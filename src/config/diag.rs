//! Configuration diagnostics: file, line, column, YAML path, what was
//! expected and the nearest valid name. Printed for people, and as GitHub
//! Actions annotations when `GITHUB_ACTIONS=true`.

use super::spans::SpanIndex;
use crate::cli::stdout::outln;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The offending node as a YAML path (`features[2].tolerance`); empty
    /// for the whole document.
    pub path: String,
    pub message: String,
    pub expected: Option<String>,
    /// The nearest valid name, for a misspelt one.
    pub suggestion: Option<String>,
}

impl Diagnostic {
    /// A diagnostic about the node at JSON `pointer` of a document.
    pub fn at(file: &Path, spans: &SpanIndex, pointer: &str, message: impl Into<String>) -> Self {
        let pos = spans.find(pointer);
        Diagnostic {
            file: file.to_path_buf(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            path: yaml_path(pointer),
            message: message.into(),
            expected: None,
            suggestion: None,
        }
    }

    /// A diagnostic about the key of the mapping entry at `pointer`.
    pub fn at_key(file: &Path, spans: &SpanIndex, pointer: &str, message: impl Into<String>) -> Self {
        let mut d = Diagnostic::at(file, spans, pointer, message);
        if let Some(p) = spans.key(pointer) {
            (d.line, d.column) = (Some(p.line), Some(p.column));
        }
        d
    }

    /// A diagnostic about a whole file (it could not be read, say).
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_path_buf(),
            line: None,
            column: None,
            path: String::new(),
            message: message.into(),
            expected: None,
            suggestion: None,
        }
    }

    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    pub fn suggest(mut self, suggestion: Option<&str>) -> Self {
        self.suggestion = suggestion.map(str::to_string);
        self
    }

    fn location(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file.display()),
            (Some(l), None) => format!("{}:{l}", self.file.display()),
            _ => self.file.display().to_string(),
        }
    }

    /// A one-line `::error` workflow command for GitHub Actions.
    pub fn github_annotation(&self) -> String {
        let mut props = format!("file={}", escape_property(&self.file.display().to_string()));
        if let Some(l) = self.line {
            props.push_str(&format!(",line={l}"));
        }
        if let Some(c) = self.column {
            props.push_str(&format!(",col={c}"));
        }
        props.push_str(",title=ulpgate configuration");
        let mut msg = self.headline();
        if let Some(e) = &self.expected {
            msg.push_str(&format!("; expected {e}"));
        }
        if let Some(s) = &self.suggestion {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        format!("::error {props}::{}", escape_data(&msg))
    }

    fn headline(&self) -> String {
        if self.path.is_empty() { self.message.clone() } else { format!("{}: {}", self.path, self.message) }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}: {}", self.location(), self.headline())?;
        if let Some(e) = &self.expected {
            write!(f, "\n  expected: {e}")?;
        }
        if let Some(s) = &self.suggestion {
            write!(f, "\n  help: did you mean `{s}`?")?;
        }
        Ok(())
    }
}

/// A JSON pointer as a YAML path: `/features/2/name` → `features[2].name`.
pub fn yaml_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// GitHub's workflow-command escaping of a message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// GitHub's workflow-command escaping of a property (`file=`, `title=`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Several diagnostics, from one or more files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// `Ok(())` when empty.
    pub fn into_result(self) -> Result<(), Diagnostics> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }

    /// Prints every diagnostic to stderr, and under GitHub Actions also as
    /// annotations on stdout (where the runner reads workflow commands).
    pub fn print(&self) {
        let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
        for d in &self.0 {
            eprintln!("{d}");
            if github {
                outln!("{}", d.github_annotation());
            }
        }
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_become_yaml_paths() {
        assert_eq!(yaml_path("/features/2/name"), "features[2].name");
        assert_eq!(yaml_path("/backends/my~1be"), "backends.my/be");
        assert_eq!(yaml_path(""), "");
    }

    #[test]
    fn display_and_annotation() {
        let d = Diagnostic {
            file: "gates/a.yaml".into(),
            line: Some(3),
            column: Some(5),
            path: "features[0]".into(),
            message: "unknown feature `psnrr`".into(),
            expected: Some("a feature of gates/features.yaml".into()),
            suggestion: Some("psnr".into()),
        };
        assert_eq!(
            d.to_string(),
            "error: gates/a.yaml:3:5: features[0]: unknown feature `psnrr`\n  expected: a feature of \
             gates/features.yaml\n  help: did you mean `psnr`?"
        );
        assert_eq!(
            d.github_annotation(),
            "::error file=gates/a.yaml,line=3,col=5,title=ulpgate configuration::features[0]: unknown feature \
             `psnrr`; expected a feature of gates/features.yaml; did you mean `psnr`?"
        );
    }
}
