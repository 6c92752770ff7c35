//! JUnit XML (`--junit-out`), so standard test-report tooling shows the
//! gate: one `<testsuite>` per gate, one `<testcase>` per cell (classname
//! `gate/feature`, name `a vs b on fixture`), `<failure>` with the metric
//! details for FAIL, `<error>` for ERROR, `<skipped>` for SKIP.

use super::model::{Cell, Report, Status};
use crate::backend::DeviceInfo;
use std::fmt::Write;

pub fn to_junit(report: &Report) -> String {
    let s = &report.summary;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"ulpgate\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        s.cells, s.fail, s.error, s.skip, report.timing.wall_seconds
    );
    for gate in &report.gates {
        let cells: Vec<&Cell> = report.cells.iter().filter(|c| c.gate == gate.name).collect();
        let count = |st: Status| cells.iter().filter(|c| c.status == st).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            attr(&gate.name),
            cells.len(),
            count(Status::Fail),
            count(Status::Error),
            count(Status::Skip)
        );
        out.push_str("    <properties>\n");
        for (name, value) in [
            ("gate_file", gate.file.as_str()),
            ("registry", gate.registry.as_str()),
            ("calibration", gate.calibration.as_deref().unwrap_or("")),
            ("tool", &format!("{} {}", report.tool.name, report.tool.version)),
        ] {
            let _ = writeln!(out, "      <property name=\"{name}\" value=\"{}\"/>", attr(value));
        }
        out.push_str("    </properties>\n");
        for c in cells {
            testcase(&mut out, c);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn testcase(out: &mut String, c: &Cell) {
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\"",
        attr(&format!("{}/{}", c.gate, c.feature)),
        attr(&format!("{} vs {} on {}", c.backend_a, c.backend_b, c.fixture))
    );
    let (tag, kind) = match c.status {
        Status::Ok => {
            out.push_str("/>\n");
            return;
        }
        Status::Fail => ("failure", "FAIL"),
        Status::Error => ("error", "ERROR"),
        Status::Skip => {
            let _ = writeln!(out, ">\n      <skipped message=\"{}\"/>\n    </testcase>", attr(&c.note));
            return;
        }
    };
    let _ = writeln!(
        out,
        ">\n      <{tag} message=\"{}\" type=\"{kind}\">{}</{tag}>\n    </testcase>",
        attr(&c.note),
        text(&details(c))
    );
}

/// The body of a failure or error: what a reviewer needs without opening
/// the JSON report.
fn details(c: &Cell) -> String {
    let mut d = format!("cell: {}\nstatus: {}\nnote: {}\n", c.id, c.status.as_str(), c.note);
    let _ = writeln!(d, "tolerance: {} ({}; {})", num(Some(c.tolerance_abs)), c.tolerance_source, c.adr);
    if let Some(n) = c.n_frames {
        let _ = writeln!(d, "frames: {n}");
    }
    for (metric, m) in &c.per_metric {
        let _ = write!(d, "{metric}: max |Δ| {}", num(m.max_abs_diff));
        if let Some(f) = m.worst_frame {
            let _ = write!(d, " at frame {f} ({} {}, {} {})", c.backend_a, num(m.worst_a), c.backend_b, num(m.worst_b));
        }
        let _ = write!(d, "; {} frame(s) beyond tolerance", m.mismatches);
        if m.non_finite > 0 {
            let _ = write!(d, " ({} non-finite)", m.non_finite);
        }
        if let Some(u) = m.max_ulp_f32 {
            let _ = write!(d, "; max {u} ULP (f32)");
        }
        d.push('\n');
    }
    for (side, dev) in [(&c.backend_a, &c.device_a), (&c.backend_b, &c.device_b)] {
        if let Some(dev) = dev {
            let _ = writeln!(d, "{side}: {}", device(dev));
        }
    }
    d
}

fn device(d: &DeviceInfo) -> String {
    let mut s = format!("{} ({})", d.name, d.arch_id);
    if let Some(v) = &d.driver_version {
        let _ = write!(s, ", driver {v}");
    }
    s
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "none".into(),
        Some(x) if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) => format!("{x:.4e}"),
        Some(x) => format!("{x}"),
    }
}

/// Characters XML 1.0 cannot hold at all become U+FFFD.
fn legal(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
        c => c,
    }
}

/// Escapes text content.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(legal) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes an attribute value (whitespace too: parsers would normalise it).
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(legal) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_illegal_characters() {
        assert_eq!(attr("a<b&\"c\"\n'"), "a&lt;b&amp;&quot;c&quot;&#10;&apos;");
        assert_eq!(text("x]]>y\u{1}z"), "x]]&gt;y\u{fffd}z");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(Some(1.5)), "1.5");
        assert_eq!(num(Some(0.0)), "0");
        assert_eq!(num(Some(1.25e-7)), "1.2500e-7");
        assert_eq!(num(None), "none");
    }
}
