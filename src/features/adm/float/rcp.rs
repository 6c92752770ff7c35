//! The division of float_adm's decoupling. libvmaf's adm_tools.c, built
//! for x86 (`__SSE2__`, always on x86-64), divides by multiplying with
//! `rcp_s(d)`: the SSE approximate reciprocal `rcpss` refined by one Newton
//! step, `xi + xi * (1 - d * xi)`. `rcpss` is the CPU's own table (AMD and
//! Intel differ), so the CPU reference calls it, and the GPU kernels get
//! the same results from [`Reciprocal`]: the host's `rcpss` over the 4096
//! mantissa prefixes it depends on, with the exponent and sign handled as
//! the hardware does (checked against the hardware on every input, see the
//! tests). Elsewhere libvmaf divides exactly, and so do we.

use anyhow::{Result, bail};
use std::sync::OnceLock;

/// `rcpss` (x86-64) of one value; exact `1 / x` elsewhere, where libvmaf
/// has no `rcp_s`.
#[inline(always)]
pub fn rcpss(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rcp_ss, _mm_set_ss};
        // SAFETY: SSE is part of x86-64.
        unsafe { _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x
    }
}

/// adm_tools.c `DIVS(n, d)`: `n * rcp_s(d)` on x86, `n / d` elsewhere.
#[inline(always)]
pub fn divs(n: f32, d: f32) -> f32 {
    if cfg!(target_arch = "x86_64") {
        let xi = rcpss(d);
        n * (xi + xi * (1.0 - d * xi))
    } else {
        n / d
    }
}

/// The host's `rcpss` as a table the kernels use: entry `m` is the result
/// for the input `1.m` (exponent 0), m the top 12 of its 23 mantissa bits.
pub struct Reciprocal {
    pub table: Vec<u32>,
}

/// Mantissa bits the table is indexed by.
const BITS: u32 = 12;

impl Reciprocal {
    /// The table, built and checked once per process; an error where the
    /// host's `rcpss` is not a function of 12 mantissa bits (then no GPU
    /// can reproduce it) or where libvmaf divides exactly (no x86-64).
    pub fn get() -> Result<&'static Reciprocal> {
        static TABLE: OnceLock<std::result::Result<Reciprocal, String>> = OnceLock::new();
        TABLE.get_or_init(Self::build).as_ref().map_err(|e| anyhow::anyhow!("{e}"))
    }

    fn build() -> std::result::Result<Reciprocal, String> {
        if !cfg!(target_arch = "x86_64") {
            return Err("float_adm divides exactly on this CPU: no rcpss table".into());
        }
        let table: Vec<u32> =
            (0..1u32 << BITS).map(|m| rcpss(f32::from_bits((127 << 23) | (m << (23 - BITS)))).to_bits()).collect();
        let r = Reciprocal { table };
        // A deterministic sample of every exponent and mantissa pattern.
        let mut s: u32 = 0x2545_f491;
        for _ in 0..(1 << 18) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let x = f32::from_bits(s);
            if r.rcp(x).to_bits() != rcpss(x).to_bits() {
                return Err(format!(
                    "this CPU's rcpss is not a table of {BITS} mantissa bits (rcpss({x:e}) = {:#010x}, the \
                     table gives {:#010x}): float_adm's GPU kernels cannot reproduce it",
                    rcpss(x).to_bits(),
                    r.rcp(x).to_bits()
                ));
            }
        }
        Ok(r)
    }

    /// A short name of this table: the first 16 hex digits of the SHA-256
    /// of its entries (little-endian). libvmaf's float_adm scores depend on
    /// the host's `rcpss`, so recordings of them are filed under the table
    /// of the CPU that made them (fixtures/reference/README.md).
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        for entry in &self.table {
            hash.update(entry.to_le_bytes());
        }
        hash.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// `rcpss(x)` from the table: the entry of x's mantissa prefix, its
    /// exponent moved by x's; zero and subnormal inputs give infinity, a
    /// result below the normal range 0, NaN stays NaN (quietened).
    #[inline(always)]
    pub fn rcp(&self, x: f32) -> f32 {
        let b = x.to_bits();
        let (sign, e, m) = (b & 0x8000_0000, (b >> 23) & 0xff, b & 0x7f_ffff);
        let bits = if e == 255 {
            if m != 0 { b | 0x40_0000 } else { sign }
        } else if e == 0 {
            sign | 0x7f80_0000
        } else {
            let r = self.table[(m >> (23 - BITS)) as usize];
            let re = ((r >> 23) & 0xff) as i32 - (e as i32 - 127);
            if re <= 0 { sign } else { sign | ((re as u32) << 23) | (r & 0x7f_ffff) }
        };
        f32::from_bits(bits)
    }
}

/// Fails unless the GPUs can reproduce [`divs`] on this host.
pub fn check_gpu_division() -> Result<Option<&'static Reciprocal>> {
    if !cfg!(target_arch = "x86_64") {
        return Ok(None);
    }
    match Reciprocal::get() {
        Ok(r) => Ok(Some(r)),
        Err(e) => bail!("{e}"),
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_this_cpus_rcpss() {
        let r = Reciprocal::get().unwrap();
        // Every mantissa at a few exponents, and the special values.
        for e in [1u32, 100, 127, 200, 253, 254] {
            for m in (0..1u32 << 23).step_by(7) {
                for sign in [0, 0x8000_0000] {
                    let x = f32::from_bits(sign | (e << 23) | m);
                    assert_eq!(r.rcp(x).to_bits(), rcpss(x).to_bits(), "{x:e}");
                }
            }
        }
        for x in [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40, f32::MIN_POSITIVE, f32::MAX] {
            assert_eq!(r.rcp(x).to_bits(), rcpss(x).to_bits(), "{x:e}");
        }
        assert!(r.rcp(f32::NAN).is_nan());
    }

    #[test]
    fn the_fingerprint_names_the_table() {
        let r = Reciprocal::get().unwrap();
        let f = r.fingerprint();
        assert_eq!(f.len(), 16);
        assert!(f.bytes().all(|b| b.is_ascii_hexdigit()));
        let mut other = Reciprocal { table: r.table.clone() };
        other.table[4095] ^= 1;
        assert_ne!(other.fingerprint(), f);
    }

    #[test]
    fn divs_is_close_to_division() {
        for (n, d) in [(1.0f32, 3.0f32), (-7.5, 0.1), (1e-3, 1e-30)] {
            assert!((divs(n, d) / (n / d) - 1.0).abs() < 1e-6);
        }
    }
}
