//! Where each YAML node starts, by JSON pointer, so errors found after
//! parsing (schema violations, unknown feature names) can still name the
//! line and column. serde_yaml exposes locations only for syntax errors;
//! yaml-rust2's event parser gives every node's position.

use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// Positions of the values (and of mapping keys) of one YAML document.
#[derive(Debug, Default)]
pub struct SpanIndex {
    values: HashMap<String, Pos>,
    keys: HashMap<String, Pos>,
    /// Each scalar value as the file spells it (`-1.0e-5`, not the
    /// `-0.00001` that JSON would print back).
    scalars: HashMap<String, String>,
}

impl SpanIndex {
    /// Indexes `text`; on a syntax error the index is simply partial (the
    /// syntax error itself is reported by serde_yaml with its location).
    pub fn build(text: &str) -> Self {
        let mut builder = Builder::default();
        let _ = Parser::new_from_str(text).load(&mut builder, false);
        builder.index
    }

    /// The position of the node at `pointer` (a JSON pointer such as
    /// `/features/2`), or of its nearest ancestor that has one.
    pub fn find(&self, pointer: &str) -> Option<Pos> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.values.get(p) {
                return Some(*pos);
            }
            p = &p[..p.rfind('/')?];
        }
    }

    /// The scalar at `pointer` as written in the file.
    pub fn scalar(&self, pointer: &str) -> Option<&str> {
        self.scalars.get(pointer).map(String::as_str)
    }

    /// The position of the key of the mapping entry at `pointer`.
    pub fn key(&self, pointer: &str) -> Option<Pos> {
        self.keys.get(pointer).copied().or_else(|| self.find(pointer))
    }
}

enum Frame {
    Map { pointer: String, key: Option<String>, empty: bool },
    Seq { pointer: String, next: usize },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    index: SpanIndex,
}

/// Escapes a key for use in a JSON pointer (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl Builder {
    /// The pointer of the node that starts now; `None` if it is a mapping key.
    fn next_pointer(&mut self, scalar: Option<&str>, pos: Pos) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { pointer, next }) => {
                let p = format!("{pointer}/{next}");
                *next += 1;
                Some(p)
            }
            Some(Frame::Map { pointer, key, empty }) => match key.take() {
                Some(k) => Some(format!("{pointer}/{}", escape(&k))),
                None => {
                    // A key: remember it; complex (non-scalar) keys are not indexed.
                    // A block mapping is located by its first key (the
                    // parser's mapping-start mark can point past it).
                    if std::mem::take(empty) {
                        self.index.values.insert(pointer.clone(), pos);
                    }
                    let k = scalar.unwrap_or_default().to_string();
                    self.index.keys.insert(format!("{pointer}/{}", escape(&k)), pos);
                    *key = Some(k);
                    None
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let pos = Pos { line: mark.line(), column: mark.col() + 1 };
        match ev {
            Event::Scalar(value, ..) => {
                if let Some(p) = self.next_pointer(Some(&value), pos) {
                    self.index.values.insert(p.clone(), pos);
                    self.index.scalars.insert(p, value);
                }
            }
            Event::Alias(_) => {
                if let Some(p) = self.next_pointer(None, pos) {
                    self.index.values.insert(p, pos);
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let pointer = self.next_pointer(None, pos).unwrap_or_default();
                self.index.values.insert(pointer.clone(), pos);
                self.stack.push(if matches!(ev, Event::MappingStart(..)) {
                    Frame::Map { pointer, key: None, empty: true }
                } else {
                    Frame::Seq { pointer, next: 0 }
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "name: x\nfeatures:\n  - psnr\n  - name: vif\n    tolerance: 1\nmap:\n  a/b: {c: [1, 2]}\n";

    #[test]
    fn finds_values_keys_and_ancestors() {
        let idx = SpanIndex::build(DOC);
        assert_eq!(idx.find("/name"), Some(Pos { line: 1, column: 7 }));
        assert_eq!(idx.find("/features/0"), Some(Pos { line: 3, column: 5 }));
        assert_eq!(idx.find("/features/1/tolerance"), Some(Pos { line: 5, column: 16 }));
        assert_eq!(idx.key("/features/1/tolerance"), Some(Pos { line: 5, column: 5 }));
        assert_eq!(idx.scalar("/features/1/tolerance"), Some("1"));
        assert_eq!(SpanIndex::build("t: -1.0e-5\n").scalar("/t"), Some("-1.0e-5"));
        assert_eq!(idx.find("/map/a~1b/c/1"), Some(Pos { line: 7, column: 16 }));
        // A missing child falls back to its parent.
        assert_eq!(idx.find("/features/1/adr"), Some(Pos { line: 4, column: 5 }));
    }
}
