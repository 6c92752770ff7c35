//! The calibration tier of ADR-0234 (Research-0041's corpus and decision
//! step): `collect` scores fixtures on a GPU and on the CPU reference and
//! writes one corpus row per frame; `fit` fits cpu ~ gpu per (arch_id,
//! backend, feature, metric) cell and decides whether a scalar offset is
//! enough (alternative (d)) or a model is justified; `table_write` turns
//! measured worst differences into a calibrated row of the tolerance table;
//! `offsets` applies fitted offsets to GPU sides (`run --gpu-calibrated`).

pub mod collect;
pub mod corpus;
pub mod fit;
pub mod manifest;
pub mod offsets;
pub mod table_write;
pub mod time;

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
