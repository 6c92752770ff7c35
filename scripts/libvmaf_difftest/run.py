#!/usr/bin/env python3
"""Differential test driver: ulpgate's CPU reference against libvmaf 3.2.0
(plain C path: `--cpumask 63`, one thread) on random inputs.

Usage: VMAF=/path/to/vmaf scripts/libvmaf_difftest/run.py WORKER_ID SEED_START SEED_END [DEADLINE_EPOCH]

For each seed it generates a pair (gen.py: a random even size, bit depth,
chroma layout, content and distortion, 1 to 6 frames), then scores every
upstream feature with its default options and one or two random option
sets through both tools, and appends one JSON line per cell to
$DIFFTEST_DIR/log/cases_<WORKER_ID>.jsonl: both commands, exit codes, the
largest |difference|, every value over 1e-6 (and over 5e-7), and where
ulpgate's value printed libvmaf's way (%.6f) differs from libvmaf's text.
The inputs of a flagged seed are kept in $DIFFTEST_DIR/keep/seed_<N>.

Environment: VMAF (required: a libvmaf 3.2.0 `vmaf` built with float
features), ULPGATE (default target/release/ulpgate), DIFFTEST_DIR (default
target/difftest). Needs ffmpeg and numpy. Run several workers over
disjoint seed ranges; `vmaf` reads raw YUV of even sizes only (odd ones
crash it), and its command line takes no 4:0:0. What the twenty-eighth
session found with it is in docs/history.md.
"""
import json, os, random, re, shutil, subprocess, sys, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.abspath(os.environ.get("DIFFTEST_DIR", os.path.join(ROOT, "target", "difftest")))
ULP = os.path.abspath(os.environ.get("ULPGATE", os.path.join(ROOT, "target", "release", "ulpgate")))
VMAF = os.environ.get("VMAF", "")
GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen.py")
KS = ["1.0", "0.5", "1.5", "2.0", "0.666667", "2.4", "3.71134", "1.333333", "1.166667", "1.25",
      "1.416667", "1.666667", "3.0", "0.444444", "1.4746", "1.54", "1.6", "1.06667", "0.711111", "0.74074", "1.111111"]

FEATURES = ["psnr", "float_psnr", "float_moment", "float_ansnr", "motion", "float_motion", "float_ssim",
            "float_ms_ssim", "ciede", "psnr_hvs", "vif", "float_vif", "adm", "float_adm", "cambi"]


def rnd_variant(feat, rng, spec):
    """One random non-default option set (dict name->str)."""
    f = lambda lo, hi, nd=3: f"{rng.uniform(lo, hi):.{nd}f}"
    b = lambda: rng.choice(["true", "false"])
    if feat == "psnr":
        c = rng.choice([{"enable_chroma": "false"}, {"enable_mse": "true"}, {"reduced_hbd_peak": "true"},
                        {"min_sse": f(0.001, 50)}, {"enable_mse": "true", "enable_chroma": "false"},
                        {"min_sse": f(0.5, 5), "reduced_hbd_peak": "true"}])
        return c
    if feat == "motion":
        o = {"debug": "true"}
        for k, v in [("motion_force_zero", lambda: "true"), ("motion_five_frame_window", lambda: "true"),
                     ("motion_moving_average", lambda: "true"), ("motion_blend_factor", lambda: f(0, 1)),
                     ("motion_blend_offset", lambda: f(0, 60)), ("motion_fps_weight", lambda: f(0.2, 3)),
                     ("motion_max_val", lambda: f(0.5, 20))]:
            if rng.random() < 0.3:
                o[k] = v()
        return o
    if feat == "float_motion":
        o = {}
        for k, v in [("motion_force_zero", lambda: "true"), ("motion_blend_factor", lambda: f(0, 1)),
                     ("motion_blend_offset", lambda: f(0, 60)), ("motion_fps_weight", lambda: f(0.2, 3)),
                     ("motion_max_val", lambda: f(0.5, 20)), ("motion_add_scale1", lambda: "true"),
                     ("motion_filter_size", lambda: str(rng.choice([1, 3, 5, 7]))),
                     ("motion_add_uv", lambda: "true"), ("debug", lambda: "false")]:
            if rng.random() < 0.3:
                o[k] = v()
        return o or {"motion_add_scale1": "true"}
    if feat == "float_ssim":
        return rng.choice([{"scale": str(rng.randint(1, 10))}, {"enable_lcs": "true"}, {"enable_db": "true"},
                           {"enable_db": "true", "clip_db": "true"}, {"scale": "1", "enable_lcs": "true"}])
    if feat == "float_ms_ssim":
        return rng.choice([{"enable_lcs": "true"}, {"enable_db": "true"}, {"enable_db": "true", "clip_db": "true"}])
    if feat == "vif":
        o = rng.choice([{"debug": "true"}, {"vif_enhn_gain_limit": f(1, 3)}, {"vif_skip_scale0": "true"},
                        {"debug": "true", "vif_enhn_gain_limit": "1.0"}, {"debug": "true", "vif_skip_scale0": "true"}])
        return o
    if feat == "float_vif":
        o = {}
        if rng.random() < 0.5:
            o["vif_kernelscale"] = rng.choice(KS)
        if rng.random() < 0.2:
            o["vif_enhn_gain_limit"] = f(1, 3)
        if rng.random() < 0.2:
            o["vif_sigma_nsq"] = f(0, 5)
        if rng.random() < 0.15:
            o["vif_skip_scale0"] = "true"
        if rng.random() < 0.15:
            o["vif_scale1_min_val"] = f(0, 1)
            o["vif_scale3_min_val"] = f(0, 1)
        if rng.random() < 0.2:
            o["vif_prescale"] = rng.choice(["0.5", "0.75", "1.5", "2.0", "1.25", "0.3", "0.9", "3.0"])
            o["vif_prescale_method"] = rng.choice(["nearest", "bilinear", "bicubic", "lanczos4"])
        if rng.random() < 0.3:
            o["debug"] = "true"
        return o or {"vif_kernelscale": rng.choice(KS)}
    if feat == "adm":
        o = {}
        for k, v in [("debug", lambda: "true"), ("adm_enhn_gain_limit", lambda: f(1, 3)),
                     ("adm_csf_mode", lambda: str(rng.randint(0, 3))), ("adm_norm_view_dist", lambda: f(0.75, 10)),
                     ("adm_ref_display_height", lambda: str(rng.choice([480, 720, 1080, 2160, 4320, 100]))),
                     ("adm_noise_weight", lambda: f(0, 2)), ("adm_skip_aim", lambda: "true"),
                     ("adm_skip_scale0", lambda: "true"), ("adm_dlm_weight", lambda: f(0, 1)),
                     ("adm_min_val", lambda: f(0, 1)), ("adm_csf_scale", lambda: f(0.1, 3)),
                     ("adm_csf_diag_scale", lambda: f(0.1, 3))]:
            if rng.random() < 0.2:
                o[k] = v()
        return o or {"adm_enhn_gain_limit": "1.0"}
    if feat == "float_adm":
        o = {}
        for k, v in [("debug", lambda: "true"), ("adm_enhn_gain_limit", lambda: f(1, 3)),
                     ("adm_csf_mode", lambda: str(rng.randint(0, 9))), ("adm_norm_view_dist", lambda: f(0.75, 10)),
                     ("adm_ref_display_height", lambda: str(rng.choice([480, 720, 1080, 2160, 100]))),
                     ("adm_f1s1", lambda: f(0, 3)), ("adm_f2s0", lambda: f(0, 3)), ("adm_f1s3", lambda: f(0, 3)),
                     ("adm_noise_weight", lambda: f(0, 2)), ("adm_bypass_cm", lambda: "1"),
                     ("adm_adm3_apply_hm", lambda: "true"), ("adm_p_norm", lambda: f(1, 6)),
                     ("adm_skip_scale0", lambda: "true"), ("adm_dlm_weight", lambda: f(0, 1)),
                     ("adm_min_val", lambda: f(0, 1)), ("adm_f1s0", lambda: f(0, 2)), ("adm_f2s2", lambda: f(0, 2)),
                     ("adm_skip_aim_scale", lambda: str(rng.randint(0, 3))),
                     ("adm_csf_scale", lambda: f(0.1, 3)), ("adm_csf_diag_scale", lambda: f(0.1, 3))]:
            if rng.random() < 0.15:
                o[k] = v()
        return o or {"adm_enhn_gain_limit": "1.0"}
    if feat == "cambi":
        o = {}
        for k, v in [("window_size", lambda: str(rng.randint(15, 127))), ("topk", lambda: f(0.01, 1)),
                     ("tvi_threshold", lambda: f(0.001, 0.1, 4)), ("max_log_contrast", lambda: str(rng.randint(0, 5))),
                     ("cambi_vis_lum_threshold", lambda: f(0, 5)), ("full_ref", lambda: "true"),
                     ("eotf", lambda: "pq"), ("enc_bitdepth", lambda: str(rng.choice([6, 7, 8, 9, 10]))),
                     ("cambi_max_val", lambda: f(0.5, 10)), ("cambi_topk", lambda: f(0.01, 1)),
                     ("cambi_eotf", lambda: rng.choice(["pq", "bt1886"])),
                     ("cambi_high_res_speedup", lambda: str(rng.choice([1080, 1440, 2160]))),
                     ("src_width", lambda: None), ("enc_width", lambda: None)]:
            if rng.random() < 0.25:
                val = v()
                if k == "src_width":
                    o["src_width"] = str(max(320, spec["w"] + 2 * rng.randint(-40, 200)))
                    o["src_height"] = str(max(200, spec["h"] + 2 * rng.randint(-40, 200)))
                    o["full_ref"] = "true"
                elif k == "enc_width":
                    ew = max(180, spec["w"] - 2 * rng.randint(0, 40))
                    eh = max(150, spec["h"] - 2 * rng.randint(0, 40))
                    o["enc_width"] = str(ew); o["enc_height"] = str(eh)
                else:
                    o[k] = val
        return o or {"window_size": str(rng.randint(15, 127))}
    return None


def rnd_spec(seed):
    rng = random.Random(seed)
    r = rng.random()
    if r < 0.5:
        w = 2 * rng.randint(17, 200); h = 2 * rng.randint(17, 150)
    elif r < 0.85:
        w = 2 * rng.randint(108, 320); h = 2 * rng.randint(108, 240)  # >= 216 both
    else:
        w, h = rng.choice([(640, 360), (320, 240), (352, 288), (480, 270), (216, 100), (100, 216), (176, 176),
                           (178, 176), (176, 178), (256, 144), (34, 300), (400, 34), (34, 34), (216, 216),
                           (640, 480), (720, 480), (1280, 720), (960, 540), (768, 432), (1024, 576), (512, 512)])
    bits = rng.choice([8, 8, 10, 10, 12, 16])
    chroma = rng.choice(["420", "420", "422", "444"])
    n = rng.choice([1, 2, 3, 3, 4, 5, 6, 6])
    if w * h > 200000:
        n = min(n, 3)
    spec = {"w": w, "h": h, "bits": bits, "chroma": chroma, "n": n}
    s1, s2 = rng.randint(0, 10**6), rng.randint(0, 10**6)
    # reference
    if rng.random() < 0.5:
        src = rng.choice(["testsrc2", "testsrc2", "mandelbrot", "noise", "smptehdbars", "cellauto", "life"])
        ref = {"kind": "ffmpeg", "src": src, "seed": s1}
        if rng.random() < 0.6:
            ref["sw"] = 2 * rng.randint(40, 320); ref["sh"] = 2 * rng.randint(30, 240)
            ref["flags"] = rng.choice(["bicubic", "area", "bilinear", "lanczos", "neighbor"])
        if src == "noise":
            ref["str"] = rng.choice([10, 30, 60, 100])
    else:
        kind = rng.choice(["rand", "rand_narrow", "grad", "flat", "zero", "max", "checker", "smooth", "band",
                           "stripes", "mix", "smooth", "band", "grad"])
        ref = {"kind": kind, "seed": s1}
        if kind == "grad":
            ref["dir"] = rng.randint(0, 2); ref["speed"] = rng.choice([0, 1, 3, 7])
        if kind == "checker":
            ref["cell"] = rng.choice([1, 1, 2, 4, 8])
        if kind == "smooth":
            ref["cell"] = rng.choice([4, 16, 64])
        if kind == "stripes":
            ref["per"] = rng.choice([1, 2, 3]); ref["dir"] = rng.randint(0, 1)
        if kind == "band":
            ref["lo"] = rng.uniform(0, 0.5); ref["hi"] = ref["lo"] + rng.uniform(0.02, 0.4)
            ref["step"] = rng.choice([1, 1 << max(0, bits - 8), 1 << max(0, bits - 7), 1 << max(0, bits - 6)])
    spec["ref"] = ref
    # distorted
    r = rng.random()
    if r < 0.25:
        vf = rng.choice([f"gblur=sigma={rng.choice([0.5, 1, 1.5, 3, 8])}",
                         f"noise=alls={rng.choice([2, 5, 10, 25])}:allf=t:all_seed={s2}",
                         f"eq=brightness={rng.choice([-0.1, -0.02, 0.03, 0.1])}",
                         f"gblur=sigma={rng.choice([1, 2])},noise=alls=6:allf=t:all_seed={s2}",
                         "boxblur=2:1", "unsharp=5:5:1.5", "hflip", "negate"])
        dis = {"kind": "ff_filter", "vf": vf}
    elif r < 0.4:
        dis = {"kind": "x264", "crf": rng.choice([30, 38, 45, 51])}
    elif r < 0.5:
        kind = rng.choice(["rand", "flat", "zero", "max", "checker", "smooth", "grad"])
        dis = {"kind": "content", "content": {"kind": kind, "seed": s2, "cell": rng.choice([1, 2, 16])}}
    else:
        kind = rng.choice(["same", "same", "noise", "shift", "quant", "invert", "roll", "box", "sparse", "onepix",
                           "frame_only", "limited", "noise", "box", "oob"])
        if kind == "oob":
            if bits == 8:
                kind = "noise"
            else:
                spec["allow_oob"] = True
        dis = {"kind": kind, "seed": s2}
        if kind == "noise":
            dis["sigma"] = rng.choice([0.5, 1, 3, 10, 40])
        if kind == "shift":
            dis["delta"] = rng.choice([-40, -3, 1, 5, 60])
        if kind == "quant":
            dis["bitsdrop"] = rng.randint(1, min(6, bits - 1))
        if kind == "roll":
            dis["dx"] = rng.choice([1, 2, -3])
        if kind in ("sparse", "oob"):
            dis["frac"] = rng.choice([0.001, 0.01, 0.2])
        if kind == "noise":
            dis["sigma"] = rng.choice([0.5, 1, 3, 10, 40])
    spec["dis"] = dis
    return spec


def vmaf_fmt(x):
    a = abs(x)
    if a >= 2**31:
        lz = 0
    else:
        fr = a - int(a); lz = 0
        while fr < 1.0 and fr != 0:
            fr *= 10; lz += 1
    return "%.6f" % x if lz <= 6 else "%.16f" % x


def parse_vmaf_json(path):
    txt = open(path).read()
    doc = json.loads(txt, parse_float=lambda s: (float(s), s), parse_int=lambda s: (float(s), s))
    frames = {}
    for fr in doc.get("frames", []):
        fn = fr["frameNum"]; fn = int(fn[0]) if isinstance(fn, tuple) else fn
        frames[fn] = fr["metrics"]
    return frames, doc


def run_cmd(cmd, timeout=180):
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - t
    except subprocess.TimeoutExpired:
        return "timeout", "", "", time.time() - t


def feat_arg(feat, opts):
    if not opts:
        return feat
    return feat + "=" + ":".join(f"{k}={v}" for k, v in opts.items())


def compare(spec, wdir, feat, opts):
    w, h, bits, ch = spec["w"], spec["h"], spec["bits"], spec["chroma"]
    ref, dis = os.path.join(wdir, "ref.yuv"), os.path.join(wdir, "dis.yuv")
    vout = os.path.join(wdir, "vmaf_out.json")
    if os.path.exists(vout):
        os.remove(vout)
    vcmd = [VMAF, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", ch, "-b", str(bits),
            "--feature", feat_arg(feat, opts), "--no_prediction", "--json", "--threads", "1", "--cpumask", "63",
            "-o", vout]
    ucmd = [ULP, "score", "--backend", "cpu", "--feature", feat]
    for k, v in (opts or {}).items():
        ucmd += ["--option", f"{k}={v}"]
    ucmd += ["--reference", ref, "--distorted", dis, "--width", str(w), "--height", str(h), "--bit-depth", str(bits),
             "--chroma", ch]
    vrc, vso, vse, vt = run_cmd(vcmd)
    urc, uso, use, ut = run_cmd(ucmd)
    res = {"feat": feat, "opts": opts, "vrc": vrc, "urc": urc, "vt": round(vt, 3), "ut": round(ut, 3),
           "vcmd": vcmd, "ucmd": ucmd}
    vframes = None
    if vrc == 0 and os.path.exists(vout):
        try:
            vframes, _ = parse_vmaf_json(vout)
        except Exception as e:
            res["vparse_err"] = str(e)
    v_ok = bool(vframes)
    u_ok = urc == 0
    uframes = None
    if urc == 0:
        try:
            ud = json.loads(uso)
            uframes = {fr["frameNum"]: fr["metrics"] for fr in ud["frames"]}
        except Exception as e:
            res["uparse_err"] = str(e)
            u_ok = False
    res["v_ok"], res["u_ok"] = v_ok, u_ok
    if not v_ok:
        res["vmsg"] = (vse or "")[-600:]
    if urc != 0:
        res["umsg"] = (use or "")[-600:]
    if urc not in (0, 2):
        res["odd_exit"] = True
    if v_ok != u_ok:
        res["refusal_disagree"] = True
        return res
    if not v_ok:
        res["status"] = "both_refuse"
        return res
    # compare
    maxd, worst, over, over5 = 0.0, None, [], []
    nprint, printdiff = 0, []
    if set(vframes) != set(uframes):
        res["frame_set_diff"] = [sorted(vframes), sorted(uframes)]
    names_v, names_u = set(), set()
    for fn in sorted(set(vframes) & set(uframes)):
        vm, um = vframes[fn], uframes[fn]
        names_v |= set(vm); names_u |= set(um)
        for name in set(vm) & set(um):
            a, b = vm[name], um[name]
            atxt = None
            if isinstance(a, tuple):
                a, atxt = a
            if a is None or b is None:
                if not (a is None and b is None):
                    over.append([fn, name, a, b, "null"])
                continue
            d = abs(a - b)
            if d != d:  # nan
                over.append([fn, name, a, b, "nan"]); continue
            if atxt is not None and vmaf_fmt(b) != atxt:
                nprint += 1
                if len(printdiff) < 20:
                    printdiff.append([fn, name, atxt, vmaf_fmt(b), b])
            if d > maxd:
                maxd, worst = d, [fn, name, a, b]
            if d > 1e-6:
                over.append([fn, name, a, b, d])
            elif d > 5e-7:
                over5.append([fn, name, a, b, d])
    if names_v != names_u:
        res["name_diff"] = [sorted(names_v - names_u), sorted(names_u - names_v)]
    res["maxd"], res["worst"] = maxd, worst
    res["nvals"] = sum(len(v) for v in vframes.values())
    res["n_printdiff"] = nprint
    if printdiff:
        res["printdiff"] = printdiff
    if over:
        res["over1e6"] = over[:50]
        res["n_over1e6"] = len(over)
    if over5:
        res["over5e7"] = over5[:20]
        res["n_over5e7"] = len(over5)
    res["status"] = "mismatch" if (over or "name_diff" in res or "frame_set_diff" in res) else "ok"
    return res


def main():
    if len(sys.argv) < 4 or not VMAF:
        sys.exit(__doc__)
    wid = sys.argv[1]
    s0, s1 = int(sys.argv[2]), int(sys.argv[3])
    deadline = float(sys.argv[4]) if len(sys.argv) > 4 else 1e18
    os.makedirs(f"{HERE}/log", exist_ok=True)
    log = open(f"{HERE}/log/cases_{wid}.jsonl", "a")
    for seed in range(s0, s1):
        if time.time() > deadline:
            break
        spec = rnd_spec(seed)
        spec["seed"] = seed
        wdir = f"{HERE}/work/w{wid}"
        shutil.rmtree(wdir, ignore_errors=True)
        os.makedirs(wdir)
        json.dump(spec, open(f"{wdir}/spec.json", "w"))
        g = subprocess.run(["python3", GEN, f"{wdir}/spec.json", wdir], capture_output=True, text=True)
        if g.returncode:
            log.write(json.dumps({"seed": seed, "spec": spec, "gen_error": g.stderr[-500:]}) + "\n"); log.flush()
            continue
        rng = random.Random(seed * 7919 + 1)
        cells = []
        for feat in FEATURES:
            cells.append((feat, {}))
            for _ in range(2 if rng.random() < 0.3 else 1):
                v = rnd_variant(feat, rng, spec)
                if v is not None:
                    cells.append((feat, v))
        keep = False
        for feat, opts in cells:
            res = compare(spec, wdir, feat, opts)
            res["seed"] = seed
            res["geom"] = f'{spec["w"]}x{spec["h"]} b{spec["bits"]} {spec["chroma"]} n{spec["n"]}'
            res["spec"] = spec
            log.write(json.dumps(res) + "\n"); log.flush()
            if res.get("status") == "mismatch" or res.get("refusal_disagree") or res.get("odd_exit") \
                    or res.get("urc") == "timeout" or res.get("vrc") == "timeout" or res.get("n_printdiff"):
                keep = True
        if keep:
            dst = f"{HERE}/keep/seed_{seed}"
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(wdir, dst)
    log.close()


if __name__ == "__main__":
    main()
