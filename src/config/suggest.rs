//! "Did you mean ...?" for misspelt names.

/// The candidate closest to `input`, if it is close enough to be a likely
/// typo (Jaro-Winkler similarity, as cargo and clap use).
pub fn nearest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(input, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["psnr", "float_psnr", "psnr_hvs", "vif"];
        assert_eq!(nearest("psnrr", names), Some("psnr"));
        assert_eq!(nearest("float_pnsr", names), Some("float_psnr"));
        assert_eq!(nearest("ssimulacra2", names), None);
    }
}
