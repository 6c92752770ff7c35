//! `--shard K/N`: a deterministic, balanced split of a plan's cells, so a
//! GitHub Actions matrix can run one gate on N machines and `merge` can put
//! the reports back together.
//!
//! Cells that share a computed side (the cpu side of `cpu vs vulkan` and
//! `cpu vs opencl` on one feature and fixture, say) form one group and stay
//! in one shard, so no side is computed twice across shards; so do cells
//! whose sides one joint pass computes (float_ssim and float_ms_ssim of a
//! backend and fixture: `features::JointImpl`). Groups are
//! dealt out largest first to the least loaded shard (LPT), by an estimate
//! of their cost: frames x samples per frame for every distinct side.

use super::plan::Plan;
use crate::config::ResolvedFixture;
use crate::config::gate::BackendKind;
use crate::fixture::FrameSource;
use crate::report::model::Shard;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// `K/N`: shard K (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: usize,
    pub count: usize,
}

impl FromStr for ShardSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not K/N with 1 <= K <= N (say 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) =
            (k.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(ShardSpec { index, count })
    }
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Which shard (0-based) each cell of `plan` goes to.
pub fn assign(plan: &Plan, count: usize) -> Vec<usize> {
    // Union-find over sides: a cell joins its two sides.
    let mut sides: HashMap<(usize, &str, &str, &str), usize> = HashMap::new();
    let mut side_list = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut cell_sides = Vec::with_capacity(plan.cells.len());
    for cell in &plan.cells {
        let mut ids = [0usize; 2];
        for (slot, backend) in [&cell.a, &cell.b].into_iter().enumerate() {
            let key = (cell.gate, backend.as_str(), cell.feature.name.as_str(), cell.fixture.as_str());
            ids[slot] = *sides.entry(key).or_insert_with(|| {
                side_list.push(key);
                parent.push(parent.len());
                parent.len() - 1
            });
        }
        cell_sides.push(ids);
    }
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut joined: Vec<[usize; 2]> = cell_sides.clone();
    // Sides a joint pass computes together (features::JointImpl: one
    // backend, one fixture) stay together too, so a shard can run the pass.
    for joint in crate::features::joint_implementations() {
        let [first, rest @ ..] = joint.features else { continue };
        for (&(gate, backend, feature, fixture), &id) in &sides {
            if feature == *first {
                joined.extend(
                    rest.iter().filter_map(|other| sides.get(&(gate, backend, *other, fixture))).map(|&j| [id, j]),
                );
            }
        }
    }
    for [a, b] in &joined {
        let (ra, rb) = (root(&mut parent, *a), root(&mut parent, *b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }

    // Groups in order of their first cell, with the cost of their sides.
    let mut group_of_root: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<(u128, Vec<usize>)> = Vec::new();
    for (position, [a, _]) in cell_sides.iter().enumerate() {
        let r = root(&mut parent, *a);
        let g = *group_of_root.entry(r).or_insert_with(|| {
            groups.push((0, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(position);
    }
    let mut sizes: HashMap<(usize, &str), u128> = HashMap::new();
    for (s, &(gate, backend, _, fixture)) in side_list.iter().enumerate() {
        let g = group_of_root[&root(&mut parent, s)];
        let size = *sizes.entry((gate, fixture)).or_insert_with(|| fixture_samples(plan, gate, fixture));
        groups[g].0 += size * weight(plan.gates[gate].backends.get(backend).map(|b| b.kind));
    }

    // Largest first (ties: plan order) to the least loaded shard (ties: lowest).
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&x, &y| groups[y].0.cmp(&groups[x].0).then(groups[x].1[0].cmp(&groups[y].1[0])));
    let mut load = vec![0u128; count];
    let mut shard_of = vec![0; plan.cells.len()];
    for g in order {
        let target = (0..count).min_by_key(|&s| (load[s], s)).expect("count >= 1");
        load[target] += groups[g].0.max(1);
        for &position in &groups[g].1 {
            shard_of[position] = target;
        }
    }
    shard_of
}

/// Relative cost of computing one sample on a backend: recorded scores are
/// only read.
fn weight(kind: Option<BackendKind>) -> u128 {
    match kind {
        Some(BackendKind::Golden) => 1,
        _ => 100,
    }
}

/// Samples a fixture holds (frames x samples per frame), estimated from its
/// declaration and file sizes without reading frames. The same checkout
/// gives the same estimate on every runner, so every shard agrees.
fn fixture_samples(plan: &Plan, gate: usize, name: &str) -> u128 {
    let Some(fixture) = plan.gates[gate].fixtures.iter().find(|f| f.name == name) else {
        return 1;
    };
    estimate(fixture).map_or(1, |(frames, samples)| (frames as u128 * samples as u128).max(1))
}

fn estimate(fixture: &ResolvedFixture) -> Option<(usize, usize)> {
    let geometry = match &fixture.reference {
        FrameSource::Synthetic { spec, .. } => return Some((spec.frames as usize, spec.geometry().frame_samples())),
        FrameSource::Raw { geometry, .. } => *geometry,
        source @ FrameSource::Y4m { .. } => source.geometry()?,
    };
    let frames = match (&fixture.reference, fixture.expected_frames) {
        (_, Some(n)) => n,
        (FrameSource::Raw { path, .. } | FrameSource::Y4m { path }, None) => {
            (std::fs::metadata(path).ok()?.len() / geometry.frame_bytes() as u64) as usize
        }
        _ => 1,
    };
    Some((frames.max(1), geometry.frame_samples()))
}

/// Narrows `plan` to shard `spec`, recording what it covers.
pub fn select(mut plan: Plan, spec: ShardSpec) -> Plan {
    let ids: Vec<String> = plan.cells.iter().map(|c| c.id(&plan.gates)).collect();
    let shard_of = assign(&plan, spec.count);
    let positions: Vec<usize> = (0..plan.cells.len()).filter(|&p| shard_of[p] == spec.index - 1).collect();
    let plan_cells = plan.cells.len();
    let mut keep = shard_of.iter().map(|&s| s == spec.index - 1);
    plan.cells.retain(|_| keep.next().unwrap_or(false));
    plan.shard = Some(Shard { index: spec.index, count: spec.count, plan_cells, plan_digest: digest(&ids), positions });
    plan
}

/// FNV-1a (64-bit) of the cell ids, one per line: stable across builds
/// and platforms, unlike std's hasher.
pub fn digest(ids: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for id in ids {
        for &b in id.as_bytes().iter().chain(b"\n") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("fnv1a64:{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_gate;
    use crate::gate::{Filters, plan};

    /// One feature; `cpu` shared by two pairs; fixtures of 40 and 4 x 10
    /// frames of one size.
    fn test_plan() -> Plan {
        let dir = tempfile::tempdir().unwrap();
        let registry = concat!(env!("CARGO_MANIFEST_DIR"), "/gates/features.yaml");
        let fixture = |name: &str, frames: u32| {
            format!(
                "  - name: {name}\n    synthetic: {{width: 32, height: 32, frames: {frames}, bit_depth: 8, chroma: \"420\"}}\n"
            )
        };
        let text = format!(
            "schema_version: 1\nname: t\nregistry: {registry}\nfeatures: [psnr]\nbackends:\n  cpu: {{}}\n  cpu2: {{kind: cpu}}\n  \
             cpu3: {{kind: cpu}}\npairs:\n  - [cpu, cpu2]\n  - [cpu, cpu3]\nfixtures:\n{}{}{}{}{}",
            fixture("small1", 10),
            fixture("big", 40),
            fixture("small2", 10),
            fixture("small3", 10),
            fixture("small4", 10),
        );
        let path = dir.path().join("t.yaml");
        std::fs::write(&path, text).unwrap();
        plan(vec![load_gate(&path).unwrap()], &Filters::default()).unwrap()
    }

    #[test]
    fn balances_by_cost_and_keeps_shared_sides_together() {
        let plan = test_plan();
        let shard_of = assign(&plan, 2);
        let fixtures_in = |s: usize| -> Vec<&str> {
            let mut f: Vec<&str> =
                plan.cells.iter().zip(&shard_of).filter(|(_, k)| **k == s).map(|(c, _)| c.fixture.as_str()).collect();
            f.sort();
            f.dedup();
            f
        };
        // The 40-frame fixture weighs as much as the four 10-frame ones: a
        // split by cell count would put 6 cells on one side and 4 on the other,
        // a split by cost puts `big` (2 cells) alone.
        assert_eq!(fixtures_in(0), ["big"]);
        assert_eq!(fixtures_in(1), ["small1", "small2", "small3", "small4"]);
        // Both pairs of a fixture share the cpu side: always one shard.
        for (c, k) in plan.cells.iter().zip(&shard_of) {
            let other = plan.cells.iter().zip(&shard_of).find(|(o, _)| o.fixture == c.fixture && o.b != c.b).unwrap();
            assert_eq!(k, other.1);
        }
    }

    #[test]
    fn a_joint_passs_sides_stay_in_one_shard() {
        let dir = tempfile::tempdir().unwrap();
        let registry = concat!(env!("CARGO_MANIFEST_DIR"), "/gates/features.yaml");
        let fixtures: String = (0..4)
            .map(|k| format!("  - name: f{k}\n    synthetic: {{width: 200, height: 180, frames: 2, bit_depth: 8, chroma: \"420\", seed: {k}}}\n"))
            .collect();
        let text = format!(
            "schema_version: 1\nname: t\nregistry: {registry}\nfeatures: [float_ssim, float_ms_ssim]\nbackends:\n  \
             cpu: {{}}\n  cpu2: {{kind: cpu}}\npairs:\n  - [cpu, cpu2]\nfixtures:\n{fixtures}"
        );
        let path = dir.path().join("t.yaml");
        std::fs::write(&path, text).unwrap();
        let plan = plan(vec![load_gate(&path).unwrap()], &Filters::default()).unwrap();
        // Three shards for four fixtures: dealt alone, the second feature's
        // cells of a fixture would land beside another fixture's first.
        let shard_of = assign(&plan, 3);
        for (c, k) in plan.cells.iter().zip(&shard_of) {
            let twin = plan
                .cells
                .iter()
                .zip(&shard_of)
                .find(|(o, _)| o.fixture == c.fixture && o.feature.name != c.feature.name);
            assert_eq!(Some(k), twin.map(|t| t.1), "{}", c.fixture);
        }
        let mut used = shard_of.clone();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), 3);
    }

    #[test]
    fn select_keeps_plan_order_and_records_positions() {
        let whole = test_plan();
        let ids: Vec<String> = whole.cells.iter().map(|c| c.id(&whole.gates)).collect();
        let mut seen = Vec::new();
        for k in 1..=3 {
            let part = select(whole.clone(), ShardSpec { index: k, count: 3 });
            let shard = part.shard.clone().unwrap();
            assert_eq!((shard.index, shard.count, shard.plan_cells), (k, 3, 10));
            assert_eq!(shard.plan_digest, digest(&ids));
            assert!(shard.positions.windows(2).all(|w| w[0] < w[1]), "plan order");
            for (cell, p) in part.cells.iter().zip(&shard.positions) {
                assert_eq!(cell.id(&part.gates), ids[*p]);
            }
            seen.extend(shard.positions);
        }
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn parses_k_of_n() {
        assert_eq!("2/4".parse::<ShardSpec>(), Ok(ShardSpec { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "1/-2"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn digest_is_fnv1a() {
        // FNV-1a 64 of "a\n" (the well-known FNV-1a of "a" is af63dc4c8601ec8c).
        assert_eq!(digest(&["a".into()]), "fnv1a64:089bdc07b544e7b2");
        assert_ne!(digest(&["a".into(), "b".into()]), digest(&["b".into(), "a".into()]));
    }
}
