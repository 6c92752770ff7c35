//! UTC dates for provenance, without a date-time dependency. The clock can
//! be pinned with `SOURCE_DATE_EPOCH` (seconds since 1970, the
//! reproducible-builds convention), so a test or a rebuild can get
//! byte-identical output.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since 1970-01-01T00:00:00Z: `SOURCE_DATE_EPOCH` when set and
/// valid, else the system clock.
pub fn now_epoch() -> i64 {
    if let Some(s) = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse::<i64>().ok()) {
        return s;
    }
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// (year, month, day) of a day count since 1970-01-01 (proleptic
/// Gregorian; Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` of `epoch` seconds, UTC.
pub fn date(epoch: i64) -> String {
    let (y, m, d) = civil_from_days(epoch.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SSZ` of `epoch` seconds.
pub fn date_time(epoch: i64) -> String {
    let secs = epoch.rem_euclid(86_400);
    format!("{}T{:02}:{:02}:{:02}Z", date(epoch), secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(date_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(date(951_782_400), "2000-02-29");
        assert_eq!(date_time(1_777_766_400 + 3_723), "2026-05-03T01:02:03Z");
        assert_eq!(date(-86_400), "1969-12-31");
    }
}
