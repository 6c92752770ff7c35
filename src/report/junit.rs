//! JUnit XML (`--junit-out`), so standard test-report tooling shows the
//! gate: one `<testsuite>` per gate, one `<testcase>` per cell (classname
//! `gate/feature`, name `a vs b on fixture`), `<failure>` with the metric
//! details for FAIL, `<error>` for ERROR, `<skipped>` for SKIP.

use super::model::{Cell, Report, Status};
use super::{number_against, tolerance};
use crate::backend::DeviceInfo;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use std::fmt::Write as _;

pub fn to_junit(report: &Report) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail.
    let _ = write(&mut w, report);
    let mut out = String::from_utf8(w.into_inner()).unwrap_or_default();
    out.push('\n');
    out
}

fn write(w: &mut Writer<Vec<u8>>, report: &Report) -> std::io::Result<()> {
    let s = &report.summary;
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let time = format!("{:.3}", report.timing.wall_seconds);
    let suites = element(
        "testsuites",
        &[
            ("name", "ulpgate"),
            ("tests", &s.cells.to_string()),
            ("failures", &s.fail.to_string()),
            ("errors", &s.error.to_string()),
            ("skipped", &s.skip.to_string()),
            ("time", &time),
        ],
    );
    w.write_event(Event::Start(suites))?;
    for gate in &report.gates {
        let cells: Vec<&Cell> = report.cells.iter().filter(|c| c.gate == gate.name).collect();
        let count = |st: Status| cells.iter().filter(|c| c.status == st).count().to_string();
        w.write_event(Event::Start(element(
            "testsuite",
            &[
                ("name", &gate.name),
                ("tests", &cells.len().to_string()),
                ("failures", &count(Status::Fail)),
                ("errors", &count(Status::Error)),
                ("skipped", &count(Status::Skip)),
            ],
        )))?;
        w.write_event(Event::Start(BytesStart::new("properties")))?;
        let tool = format!("{} {}", report.tool.name, report.tool.version);
        for (name, value) in [
            ("gate_file", gate.file.as_str()),
            ("registry", gate.registry.as_str()),
            ("calibration", gate.calibration.as_deref().unwrap_or("")),
            ("tool", tool.as_str()),
        ] {
            w.write_event(Event::Empty(element("property", &[("name", name), ("value", value)])))?;
        }
        w.write_event(Event::End(BytesEnd::new("properties")))?;
        for c in cells {
            testcase(w, c)?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))
}

/// An element with attributes; quick-xml escapes the values, and characters
/// XML cannot hold at all are replaced first.
fn element<'a>(name: &'a str, attributes: &[(&str, &str)]) -> BytesStart<'a> {
    let mut e = BytesStart::new(name);
    for (k, v) in attributes {
        e.push_attribute((*k, legal(v).as_str()));
    }
    e
}

fn testcase(w: &mut Writer<Vec<u8>>, c: &Cell) -> std::io::Result<()> {
    let classname = format!("{}/{}", c.gate, c.feature);
    let name = format!("{} vs {} on {}", c.backend_a, c.backend_b, c.fixture);
    let case = element("testcase", &[("classname", &classname), ("name", &name)]);
    let (tag, kind) = match c.status {
        Status::Ok => return w.write_event(Event::Empty(case)),
        Status::Fail => ("failure", "FAIL"),
        Status::Error => ("error", "ERROR"),
        Status::Skip => ("skipped", ""),
    };
    w.write_event(Event::Start(case))?;
    if c.status == Status::Skip {
        w.write_event(Event::Empty(element("skipped", &[("message", &c.note)])))?;
    } else {
        w.write_event(Event::Start(element(tag, &[("message", &c.note), ("type", kind)])))?;
        w.write_event(Event::Text(BytesText::new(&legal(&details(c)))))?;
        w.write_event(Event::End(BytesEnd::new(tag)))?;
    }
    w.write_event(Event::End(BytesEnd::new("testcase")))
}

/// The body of a failure or error: what a reviewer needs without opening
/// the JSON report.
fn details(c: &Cell) -> String {
    let mut d = format!("cell: {}\nstatus: {}\nnote: {}\n", c.id, c.status.as_str(), c.note);
    let _ = writeln!(d, "tolerance: {} ({}; {})", tolerance(c.tolerance_abs), c.tolerance_source, c.adr);
    if let Some(n) = c.n_frames {
        let _ = writeln!(d, "frames: {n}");
    }
    for (metric, m) in &c.per_metric {
        let worst = m.max_abs_diff.map_or("none".into(), |x| number_against(x, c.tolerance_abs));
        let _ = write!(d, "{metric}: max |Δ| {worst}");
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
    if let Some(driver) = d.driver_text() {
        let _ = write!(s, ", {driver}");
    }
    s
}

/// A score as computed (the shortest text that reads back as the same
/// double), so two sides that differ in the 7th decimal look different.
fn num(v: Option<f64>) -> String {
    v.map_or("none".into(), |x| x.to_string())
}

/// `s` with the characters XML 1.0 cannot hold at all (most control
/// characters) replaced by U+FFFD: a command's stderr can contain anything.
fn legal(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegal_characters_are_replaced() {
        assert_eq!(legal("x\u{1}y\tz\u{ffff}"), "x\u{fffd}y\tz\u{fffd}");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(num(Some(1.5)), "1.5");
        assert_eq!(num(Some(0.0)), "0");
        assert_eq!(num(Some(33.63105039533999)), "33.63105039533999");
        assert_eq!(num(None), "none");
    }
}
