use super::Outcome;
use crate::backend;
use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    let found = backend::enumerate();
    if args.json {
        let list: Vec<_> = found
            .iter()
            .map(|(kind, r)| match r {
                Ok(devices) => json!({"backend": kind.as_str(), "available": true, "devices": devices}),
                Err(reason) => json!({"backend": kind.as_str(), "available": false, "reason": reason, "devices": []}),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list).expect("serializes"));
        return Ok(0);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header(vec!["Backend", "#", "arch_id", "Name", "Driver", "API", "Type"]);
    for (kind, r) in &found {
        match r {
            Ok(devices) => {
                for (i, d) in devices.iter().enumerate() {
                    let driver = [d.driver.as_deref(), d.driver_version.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" ");
                    table.add_row(vec![
                        kind.as_str().to_string(),
                        i.to_string(),
                        d.arch_id.clone(),
                        d.name.clone(),
                        driver,
                        d.api_version.clone().unwrap_or_default(),
                        d.device_type.clone().unwrap_or_default(),
                    ]);
                }
            }
            Err(reason) => {
                table.add_row(vec![
                    kind.as_str().to_string(),
                    "—".into(),
                    "—".into(),
                    format!("unavailable: {reason}"),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
        }
    }
    println!("{table}");
    Ok(0)
}
