//! The terminal summary end to end: what `--quiet` still says.

use crate::common::*;
use crate::gates;

#[test]
fn quiet_says_why_cells_failed_or_errored() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gates::mixed(dir.path());
    let o = run(ulpgate().arg("run").arg(&gate).args(["-q", "--no-annotations"]));
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let odd = gates::ODD_NAME;
    assert!(
        lines[0].starts_with(&format!("FAIL 1 cell (golden vs cpu; psnr; {odd}): psnr_y: 12 of 12 frames")),
        "{out}"
    );
    assert!(lines[1].starts_with(&format!("ERROR 1 cell (cpu vs broken; psnr; {odd}): broken: `sh` exited")), "{out}");
    assert!(lines[1].contains("cannot open /dev/dri/renderD128"), "{out}");
    assert_eq!(lines[2], "ERROR: 4 cells, 1 OK, 1 FAIL, 1 ERROR, 1 SKIP");

    // Without --quiet, the ERROR is a line of its own under the table, not
    // a table row.
    let o = run(ulpgate().arg("run").arg(&gate));
    let out = stdout(&o);
    assert_eq!(out.matches("cannot open /dev/dri/renderD128").count(), 1, "{out}");
    assert!(out.contains(&format!("\nERROR 1 cell (cpu vs broken; psnr; {odd}): broken:")), "{out}");
    assert!(out.contains(&format!("\nSKIP 1 cell (cpu vs cuda; psnr; {odd}): cuda")), "{out}");
}
