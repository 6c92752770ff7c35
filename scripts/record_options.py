#!/usr/bin/env python3
"""Records libvmaf 3.2.0 on option variants for tests/options.rs.

Usage: scripts/record_options.py VMAF [NAME ...]

VMAF is a libvmaf 3.2.0 `vmaf` binary built with `-Denable_float=true`
(fixtures/reference/README.md says how the reference set's was built). Each
entry of VARIANTS below becomes tests/data/<feature>/<name>.json: the exact
command (paths relative to the repository root), the `--feature` argument,
its options as typed JSON, the input and its geometry, and every metric
libvmaf printed per frame, each number the text vmaf printed (`%.6f`, or
`%.16f` below 1e-6; `null` for a non-finite value). Run from anywhere; with
NAMEs, only those entries are recorded.

float_adm's numbers depend on the host CPU's `rcpss` (README, "float_adm
and the host's rcpss"): its recordings also name the host's table, as
ulpgate prints it (`ulpgate` is not needed here: the fingerprint is given
with --rcpss FINGERPRINT, else float_adm entries are skipped).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FX = "fixtures/reference"

# name -> (folder, width, height, vmaf -p, bit depth, frames in the file)
FIXTURES = {
    "8bit": ("testsrc2_200x184_8bit_420", 200, 184, "420", 8, 12),
    "10bit": ("testsrc2_192x180_10bit_420", 192, 180, "420", 10, 8),
    "444": ("testsrc2_192x180_8bit_444", 192, 180, "444", 8, 6),
}

# Frames recorded of a spatial feature (the CPU reference's debug build is
# slow, and every option acts on every frame alike); temporal ones get the
# whole clip, for their cross-frame rules.
SPATIAL_FRAMES = 3

# (file name, fixture, distorted file, --feature argument, frames or None
# for the whole clip). Doubles are written with a decimal point, so the
# options' JSON types follow the option tables.
VARIANTS = [
    # adm (integer_adm.c)
    ("adm/csf_scale_2_watson", "8bit", "dist_x264", "adm=adm_csf_scale=2.0", SPATIAL_FRAMES),
    ("adm/csf_1_scf_0.8_scfd_1.5", "8bit", "dist_x264", "adm=adm_csf_mode=1:adm_csf_scale=0.8:adm_csf_diag_scale=1.5", SPATIAL_FRAMES),
    ("adm/csf_2", "8bit", "dist_x264", "adm=adm_csf_mode=2", SPATIAL_FRAMES),
    ("adm/csf_3_rdh_2160", "8bit", "dist_x264", "adm=adm_csf_mode=3:adm_ref_display_height=2160", SPATIAL_FRAMES),
    ("adm/dlmw_0.8", "8bit", "dist_x264", "adm=adm_dlm_weight=0.8", SPATIAL_FRAMES),
    ("adm/egl_1", "8bit", "dist_x264", "adm=adm_enhn_gain_limit=1.0", SPATIAL_FRAMES),
    ("adm/nvd_4.5", "8bit", "dist_x264", "adm=adm_norm_view_dist=4.5", SPATIAL_FRAMES),
    ("adm/nvd_1.5_rdh_2160", "8bit", "dist_x264", "adm=adm_norm_view_dist=1.5:adm_ref_display_height=2160", SPATIAL_FRAMES),
    ("adm/rdh_2160", "8bit", "dist_x264", "adm=adm_ref_display_height=2160", SPATIAL_FRAMES),
    ("adm/nw_0.5", "8bit", "dist_x264", "adm=adm_noise_weight=0.5", SPATIAL_FRAMES),
    ("adm/nw_0", "8bit", "dist_x264", "adm=adm_noise_weight=0.0", SPATIAL_FRAMES),
    ("adm/skip_aim", "8bit", "dist_x264", "adm=adm_skip_aim=true", SPATIAL_FRAMES),
    ("adm/ssz_debug", "8bit", "dist_x264", "adm=debug=true:adm_skip_scale0=true", SPATIAL_FRAMES),
    ("adm/min_0.86", "8bit", "dist_x264", "adm=adm_min_val=0.86", SPATIAL_FRAMES),
    ("adm/debug_csf_1_egl_1", "8bit", "dist_x264", "adm=debug=true:adm_enhn_gain_limit=1.0:adm_csf_mode=1", SPATIAL_FRAMES),
    ("adm/nw_1e-05", "8bit", "dist_x264", "adm=adm_noise_weight=0.00001", SPATIAL_FRAMES),
    ("adm/csf_2_rdh_1440", "8bit", "dist_x264", "adm=adm_csf_mode=2:adm_ref_display_height=1440", SPATIAL_FRAMES),
    ("adm/10bit_csf_3_ssz", "10bit", "dist_x264", "adm=adm_csf_mode=3:adm_skip_scale0=true", SPATIAL_FRAMES),
    ("adm/10bit_debug_egl_1.2_nw_0.1", "10bit", "dist_x264", "adm=debug=true:adm_enhn_gain_limit=1.2:adm_noise_weight=0.1", SPATIAL_FRAMES),
    # float_adm (float_adm.c, adm.c, adm_tools.c)
    ("float_adm/egl_1", "8bit", "dist_x264", "float_adm=adm_enhn_gain_limit=1.0", SPATIAL_FRAMES),
    ("float_adm/nvd_1", "8bit", "dist_x264", "float_adm=adm_norm_view_dist=1.0", SPATIAL_FRAMES),
    ("float_adm/nw_0.5", "8bit", "dist_x264", "float_adm=adm_noise_weight=0.5", SPATIAL_FRAMES),
    ("float_adm/csf_1_scf_0.8_scfd_1.5", "8bit", "dist_x264", "float_adm=adm_csf_mode=1:adm_csf_scale=0.8:adm_csf_diag_scale=1.5", SPATIAL_FRAMES),
    ("float_adm/rdf_720", "8bit", "dist_x264", "float_adm=adm_ref_display_height=720", SPATIAL_FRAMES),
    ("float_adm/csf_2", "8bit", "dist_x264", "float_adm=adm_csf_mode=2", SPATIAL_FRAMES),
    ("float_adm/csf_7", "8bit", "dist_x264", "float_adm=adm_csf_mode=7", SPATIAL_FRAMES),
    ("float_adm/bcm_1", "8bit", "dist_x264", "float_adm=adm_bypass_cm=1", SPATIAL_FRAMES),
    ("float_adm/aah", "8bit", "dist_x264", "float_adm=adm_adm3_apply_hm=true", SPATIAL_FRAMES),
    ("float_adm/apn_2.5", "8bit", "dist_x264", "float_adm=adm_p_norm=2.5", SPATIAL_FRAMES),
    ("float_adm/apn_1", "8bit", "dist_x264", "float_adm=adm_p_norm=1.0", SPATIAL_FRAMES),
    ("float_adm/dlmw_0.8", "8bit", "dist_x264", "float_adm=adm_dlm_weight=0.8", SPATIAL_FRAMES),
    ("float_adm/min_0.86", "8bit", "dist_x264", "float_adm=adm_min_val=0.86", SPATIAL_FRAMES),
    ("float_adm/aah_min_0.3", "8bit", "dist_x264", "float_adm=adm_adm3_apply_hm=true:adm_min_val=0.3", SPATIAL_FRAMES),
    ("float_adm/f1", "8bit", "dist_x264", "float_adm=adm_f1s0=0.5:adm_f1s1=1.0:adm_f1s2=2.5:adm_f1s3=4.0", SPATIAL_FRAMES),
    ("float_adm/f2", "8bit", "dist_x264", "float_adm=adm_f2s0=0.0:adm_f2s1=0.25:adm_f2s2=3.0:adm_f2s3=10.0", SPATIAL_FRAMES),
    ("float_adm/sasc_0", "8bit", "dist_x264", "float_adm=adm_skip_aim_scale=0", SPATIAL_FRAMES),
    ("float_adm/sasc_3", "8bit", "dist_x264", "float_adm=adm_skip_aim_scale=3", SPATIAL_FRAMES),
    ("float_adm/ssz_debug", "8bit", "dist_x264", "float_adm=debug=true:adm_skip_scale0=true", SPATIAL_FRAMES),
    ("float_adm/debug_apn_2.5_egl_1.2", "8bit", "dist_x264", "float_adm=debug=true:adm_p_norm=2.5:adm_enhn_gain_limit=1.2", SPATIAL_FRAMES),
    ("float_adm/csf_1_scf_0.1234567", "8bit", "dist_x264", "float_adm=adm_csf_mode=1:adm_csf_scale=0.1234567", SPATIAL_FRAMES),
    ("float_adm/10bit_csf_1_bcm_1", "10bit", "dist_x264", "float_adm=adm_csf_mode=1:adm_bypass_cm=1", SPATIAL_FRAMES),
    ("float_adm/10bit_debug_aah_sasc_1_f1s2_2", "10bit", "dist_x264", "float_adm=debug=true:adm_adm3_apply_hm=true:adm_skip_aim_scale=1:adm_f1s2=2.0", SPATIAL_FRAMES),
    # motion (integer_motion.c)
    ("motion/force_0", "8bit", "dist_x264", "motion=motion_force_zero=true", None),
    ("motion/force_0_debug", "8bit", "dist_x264", "motion=debug=true:motion_force_zero=true", None),
    ("motion/mbf_0.5_mbo_3", "8bit", "dist_x264", "motion=motion_blend_factor=0.5:motion_blend_offset=3.0", None),
    ("motion/mfw_2.5", "8bit", "dist_x264", "motion=motion_fps_weight=2.5", None),
    ("motion/mmxv_5.5", "8bit", "dist_x264", "motion=motion_max_val=5.5", None),
    ("motion/mffw", "8bit", "dist_x264", "motion=motion_five_frame_window=true", None),
    ("motion/mma", "8bit", "dist_x264", "motion=motion_moving_average=true", None),
    ("motion/debug_mffw_mma_mbf_0.25_mbo_4", "8bit", "dist_x264", "motion=debug=true:motion_five_frame_window=true:motion_moving_average=true:motion_blend_factor=0.25:motion_blend_offset=4.0", None),
    # libvmaf reads every numeric option value through strtof and %g
    # (dict.c, vmaf_feature_dictionary_set): it computes with 4.12346.
    ("motion/mfw_4.1234567", "8bit", "dist_x264", "motion=motion_fps_weight=4.1234567", None),
    # An explicit default is no feature parameter: the names stay.
    ("motion/mbf_1_debug", "8bit", "dist_x264", "motion=debug=true:motion_blend_factor=1.0", None),
    ("motion/10bit_debug_mfw_0.5_mmxv_2", "10bit", "dist_x264", "motion=debug=true:motion_fps_weight=0.5:motion_max_val=2.0", None),
    ("motion/10bit_mffw_mma", "10bit", "dist_x264", "motion=motion_five_frame_window=true:motion_moving_average=true", None),
    # float_motion (float_motion.c)
    ("float_motion/debug_false", "8bit", "dist_x264", "float_motion=debug=false", None),
    ("float_motion/force_0", "8bit", "dist_x264", "float_motion=motion_force_zero=true", None),
    ("float_motion/mfw_2.5", "8bit", "dist_x264", "float_motion=motion_fps_weight=2.5", None),
    ("float_motion/mbf_0.5_mbo_3", "8bit", "dist_x264", "float_motion=motion_blend_factor=0.5:motion_blend_offset=3.0", None),
    ("float_motion/mmxv_5.5", "8bit", "dist_x264", "float_motion=motion_max_val=5.5", None),
    ("float_motion/mdc", "8bit", "dist_x264", "float_motion=motion_add_scale1=true", None),
    ("float_motion/mfs_3", "8bit", "dist_x264", "float_motion=motion_filter_size=3", None),
    ("float_motion/mfs_1", "8bit", "dist_x264", "float_motion=motion_filter_size=1", None),
    ("float_motion/mfs_0", "8bit", "dist_x264", "float_motion=motion_filter_size=0", None),
    ("float_motion/mau", "8bit", "dist_x264", "float_motion=motion_add_uv=true", None),
    ("float_motion/444_mau_mdc", "444", "dist_x264", "float_motion=motion_add_uv=true:motion_add_scale1=true", None),
    ("float_motion/mbo_123.4567_mbf_0.2", "8bit", "dist_x264", "float_motion=motion_blend_offset=123.4567:motion_blend_factor=0.2", None),
    ("float_motion/10bit_mau_mfs_3_debug_false", "10bit", "dist_x264", "float_motion=debug=false:motion_add_uv=true:motion_filter_size=3", None),
    # float_ssim (float_ssim.c)
    ("float_ssim/db", "8bit", "dist_x264", "float_ssim=enable_db=true", SPATIAL_FRAMES),
    ("float_ssim/db_clip", "8bit", "dist_x264", "float_ssim=enable_db=true:clip_db=true", SPATIAL_FRAMES),
    ("float_ssim/clip_alone", "8bit", "dist_x264", "float_ssim=clip_db=true", SPATIAL_FRAMES),
    ("float_ssim/same_db", "8bit", "ref", "float_ssim=enable_db=true", SPATIAL_FRAMES),
    ("float_ssim/same_db_clip", "8bit", "ref", "float_ssim=enable_db=true:clip_db=true", SPATIAL_FRAMES),
    ("float_ssim/10bit_same_db_clip_lcs", "10bit", "ref", "float_ssim=enable_db=true:clip_db=true:enable_lcs=true", SPATIAL_FRAMES),
    ("float_ssim/scale_1", "8bit", "dist_x264", "float_ssim=scale=1", SPATIAL_FRAMES),
    ("float_ssim/scale_2_lcs", "8bit", "dist_x264", "float_ssim=scale=2:enable_lcs=true", SPATIAL_FRAMES),
    ("float_ssim/scale_10", "8bit", "dist_x264", "float_ssim=scale=10:enable_lcs=true", SPATIAL_FRAMES),
    ("float_ssim/10bit_scale_3_db", "10bit", "dist_x264", "float_ssim=scale=3:enable_db=true", SPATIAL_FRAMES),
    # float_ms_ssim (float_ms_ssim.c)
    ("float_ms_ssim/db", "8bit", "dist_x264", "float_ms_ssim=enable_db=true", SPATIAL_FRAMES),
    ("float_ms_ssim/db_clip", "8bit", "dist_x264", "float_ms_ssim=enable_db=true:clip_db=true", SPATIAL_FRAMES),
    ("float_ms_ssim/same_db", "8bit", "ref", "float_ms_ssim=enable_db=true", SPATIAL_FRAMES),
    ("float_ms_ssim/same_db_clip_lcs", "8bit", "ref", "float_ms_ssim=enable_db=true:clip_db=true:enable_lcs=true", SPATIAL_FRAMES),
    ("float_ms_ssim/10bit_same_db_clip", "10bit", "ref", "float_ms_ssim=enable_db=true:clip_db=true", SPATIAL_FRAMES),
    # psnr (integer_psnr.c)
    ("psnr/no_chroma", "8bit", "dist_x264", "psnr=enable_chroma=false", SPATIAL_FRAMES),
    ("psnr/444_no_chroma", "444", "dist_x264", "psnr=enable_chroma=false", SPATIAL_FRAMES),
    ("psnr/10bit_no_chroma_same", "10bit", "ref", "psnr=enable_chroma=false", SPATIAL_FRAMES),
    ("psnr/mse_no_chroma", "8bit", "dist_x264", "psnr=enable_chroma=false:enable_mse=true", SPATIAL_FRAMES),
    ("psnr/reduced_hbd_peak", "8bit", "dist_x264", "psnr=reduced_hbd_peak=true", SPATIAL_FRAMES),
    ("psnr/10bit_reduced_hbd_peak_mse", "10bit", "dist_x264", "psnr=reduced_hbd_peak=true:enable_mse=true", SPATIAL_FRAMES),
    ("psnr/min_sse_1e8", "8bit", "dist_x264", "psnr=min_sse=100000000.0", SPATIAL_FRAMES),
    ("psnr/same_min_sse_0.5", "8bit", "ref", "psnr=min_sse=0.5", SPATIAL_FRAMES),
    ("psnr/10bit_same_min_sse_2_reduced_hbd_peak", "10bit", "ref", "psnr=min_sse=2.0:reduced_hbd_peak=true", SPATIAL_FRAMES),
    ("psnr/10bit_min_sse_1e9", "10bit", "dist_x264", "psnr=min_sse=1000000000.0:enable_mse=true", SPATIAL_FRAMES),
    ("psnr/444_min_sse_1e7_mse", "444", "dist_x264", "psnr=min_sse=10000000.0:enable_mse=true", SPATIAL_FRAMES),
]


def typed(value):
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def raw_number(token):
    """json's parse hooks: keep each number as the text vmaf printed."""
    return Raw(token)


class Raw(str):
    pass


def dump(value, indent=1, level=0):
    """JSON with each number as printed, lists on one line (tests/data/cambi's layout)."""
    pad = " " * (indent * (level + 1))
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(k)}: {dump(v, indent, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * (indent * level) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v, indent, level + 1) for v in value) + "]"
    return json.dumps(value)


def record(vmaf, name, fixture, dist, feature, frames, rcpss):
    folder, width, height, layout, bit_depth, clip_frames = FIXTURES[fixture]
    ref = f"{FX}/{folder}/ref.yuv"
    dis = f"{FX}/{folder}/{dist}.yuv"
    args = ["-r", ref, "-d", dis, "-w", str(width), "-h", str(height), "-p", layout, "-b", str(bit_depth),
            "--feature", feature]
    if frames is not None:
        args += ["--frame_cnt", str(frames)]
    args += ["--no_prediction", "--json", "--threads", "1", "--cpumask", "63", "-o", "out.json"]
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([vmaf] + args[:-1] + [os.path.join(tmp, "out.json")], cwd=ROOT,
                             capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(os.path.join(tmp, "out.json")):
            sys.exit(f"{name}: vmaf failed ({run.returncode}): {run.stderr}")
        text = open(os.path.join(tmp, "out.json")).read()
    out = json.loads(text, parse_float=raw_number, parse_int=raw_number)
    metrics = {}
    for i, frame in enumerate(out["frames"]):
        assert int(frame["frameNum"]) == i, f"{name}: frame {i} missing"
        for metric, v in frame["metrics"].items():
            metrics.setdefault(metric, []).append(v)
    n = len(out["frames"])
    assert n == (frames or clip_frames), f"{name}: {n} frames"
    assert all(len(v) == n for v in metrics.values()), f"{name}: a metric misses frames"
    feat, _, rest = feature.partition("=")
    options = {}
    for pair in filter(None, rest.split(":")):
        k, v = pair.split("=", 1)
        options[k] = typed(v)
    doc = {
        "tool": "libvmaf 3.2.0 upstream",
        "command": "vmaf " + shlex.join(args),
        "feature": feature,
        "options": options,
        "reference": ref,
        "distorted": dis,
        "geometry": {"width": width, "height": height, "bit_depth": bit_depth, "chroma": layout},
        "frames": n,
    }
    if rcpss:
        doc["rcpss"] = rcpss
        doc["host"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    doc["metrics"] = metrics
    path = os.path.join(ROOT, "tests/data", name + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(dump(doc) + "\n")
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("vmaf")
    p.add_argument("names", nargs="*")
    p.add_argument("--rcpss", help="this host's rcpss fingerprint (needed for float_adm)")
    a = p.parse_intermixed_args()
    run = subprocess.run([a.vmaf, "--version"], capture_output=True, text=True)
    version = (run.stdout + run.stderr).strip()
    if version != "3.2.0":
        sys.exit(f"{a.vmaf} is libvmaf {version!r}, not 3.2.0")
    for name, fixture, dist, feature, frames in VARIANTS:
        if a.names and name not in a.names:
            continue
        float_adm = feature.startswith("float_adm")
        if float_adm and not a.rcpss:
            print(f"{name}: skipped (float_adm needs --rcpss)", file=sys.stderr)
            continue
        print(record(a.vmaf, name, fixture, dist, feature, frames, a.rcpss if float_adm else None))


if __name__ == "__main__":
    main()
