#!/usr/bin/env python3
"""Differential test driver: ulpgate's GPU twins (vulkan on Mesa lavapipe,
opencl on PoCL) against its own CPU reference, on random inputs.

Usage: scripts/gpu_difftest/run.py SEED_START SEED_END [DEADLINE_EPOCH]
       scripts/gpu_difftest/run.py --case SEED    (one seed, verbose)
       scripts/gpu_difftest/run.py --gate SEED_START SEED_END   (gate mode, below)

For each seed it draws a pair the way scripts/libvmaf_difftest/run.py does
(its rnd_spec; the pair is written by its gen.py, imported), then widens the
geometry where libvmaf's reader could not follow: odd widths and heights,
tiny frames (1x1 up to filter footprints), 4:0:0, and now and then a bit
depth ulpgate does not take. Every feature of gates/features.yaml is scored
with its default options and one or two random option sets: half of them
the libvmaf difftest's sets (rnd_variant), half drawn from the registry's
option table (bounds, defaults, random values, sometimes one out of range,
which both sides must refuse alike). Each cell runs `ulpgate score` on cpu,
vulkan (--vulkan-device llvmpipe) and opencl; on a quarter of the seeds
also vulkan under Mesa 25.0.7's lavapipe (scripts/mesa25.sh).

Verdict per GPU side: the same exit status as the cpu side (only 0 or 2
are acceptable; anything else, or a timeout, is flagged), the same
refusal text on exit 2 (backend names masked), and on exit 0 the same
frames, metric names and values, compared as printed (shortest
round-trip doubles, so equal text is equal bits); ssimulacra2 may differ by
1e-12 relative. One JSON line per cell goes to
$TWINDIFF_DIR/log/cases.jsonl; a flagged seed's inputs are kept under
$TWINDIFF_DIR/keep/seed_<N>.

Gate mode writes the seeds' pairs (default options) as the fixtures of one
gate of all 17 features at tolerance 1e-300 (ssimulacra2 1e-10; a tolerance must be above 0), pairs
[cpu, vulkan] and [cpu, opencl], runs `ulpgate run` on it and prints every
cell that is not OK or SKIP: the path where sides run in parallel and
float_ssim and float_ms_ssim share a pass, which `score` never takes.

Environment: ULPGATE (default target/release/ulpgate), TWINDIFF_DIR
(default target/twindiff), BACKENDS (default vulkan,opencl), VULKAN_DEVICE
(default llvmpipe), MESA25_EVERY (default 4; 0 = never), TIMEOUT
(seconds a side may take, default 300), FEATURES (a comma list: only
these features), FRAMES (LO-HI: frames a pair, instead of the libvmaf
difftest's 1 to 6; for temporal features' state over long sequences). Needs ffmpeg (with libx264) and
numpy. Run one worker at a time on a small machine (`nice -n 10`).
"""
import importlib.util, json, os, random, re, shutil, sys, time

HERE_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE_DIR, "..", ".."))


def _load(name, path):
    sp = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(sp)
    sp.loader.exec_module(mod)
    return mod


_LDT_DIR = os.path.join(ROOT, "scripts", "libvmaf_difftest")
ldt = _load("libvmaf_difftest_run", os.path.join(_LDT_DIR, "run.py"))  # rnd_spec, rnd_variant, run_cmd
try:
    import yaml  # noqa: E402

    gen = _load("gen", os.path.join(_LDT_DIR, "gen.py"))  # the pair generator (numpy)
    REGISTRY = yaml.safe_load(open(os.path.join(ROOT, "gates", "features.yaml")))["features"]
except ImportError:  # --replay on a machine without PyYAML or numpy: comparing needs neither
    gen = None
    REGISTRY = {}

OUT = os.path.abspath(os.environ.get("TWINDIFF_DIR", os.path.join(ROOT, "target", "twindiff")))
ULP = os.path.abspath(os.environ.get("ULPGATE", os.path.join(ROOT, "target", "release", "ulpgate")))
MESA25 = os.path.join(ROOT, "scripts", "mesa25.sh")
MESA25_EVERY = int(os.environ.get("MESA25_EVERY", "4"))
TIMEOUT = float(os.environ.get("TIMEOUT", "300"))
FEATURES = [f for f in REGISTRY if f in os.environ["FEATURES"].split(",")] if os.environ.get("FEATURES") else list(REGISTRY)
# FRAMES=LO-HI: every pair gets LO to HI frames (temporal features' state across many frames), at most
# 4 million luma samples in all.
FRAMES = tuple(int(v) for v in os.environ["FRAMES"].split("-")) if os.environ.get("FRAMES") else None
VULKAN_DEVICE = os.environ.get("VULKAN_DEVICE", "llvmpipe")
BACKENDS = os.environ.get("BACKENDS", "vulkan,opencl").split(",")
REL_TOL = {"ssimulacra2": 1e-12}

# gen.py knows 4:2:0, 4:2:2 and 4:4:4; 4:0:0 is the luma plane alone.
_pix_fmt, _plane_dims = (gen.pix_fmt, gen.plane_dims) if gen else (None, None)


def pix_fmt(chroma, bits):
    if chroma == "400":
        return "gray" if bits == 8 else f"gray{bits}le"
    return _pix_fmt(chroma, bits)


def plane_dims(spec):
    dims = _plane_dims(spec)
    return dims[:1] if spec["chroma"] == "400" else dims


if gen:
    gen.pix_fmt, gen.plane_dims = pix_fmt, plane_dims

TINY = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 3), (1, 7), (7, 1), (4, 4), (5, 3), (6, 6), (7, 9), (8, 8), (9, 8),
        (10, 10), (11, 13), (15, 15), (16, 16), (17, 17), (16, 9), (21, 23), (23, 21), (31, 29), (32, 32), (33, 33),
        (36, 36), (41, 37), (63, 65), (64, 64), (65, 64), (127, 129)]


def spec_for(seed):
    """libvmaf difftest's draw, widened: odd and tiny sizes, 4:0:0, odd bit depths."""
    spec = ldt.rnd_spec(seed)
    rng = random.Random(seed * 104729 + 17)
    r = rng.random()
    if r < 0.25:
        spec["w"], spec["h"] = rng.choice(TINY)
    elif r < 0.55:  # odd width and/or height
        w, h = spec["w"], spec["h"]
        k = rng.randint(0, 2)
        if k in (0, 2):
            w = max(1, w + rng.choice([-1, 1]))
        if k in (1, 2):
            h = max(1, h + rng.choice([-1, 1]))
        spec["w"], spec["h"] = w, h
    if r > 0.88:  # stress: large frames, deep samples, extreme content (accumulator widths, tiling edges)
        spec["w"], spec["h"] = rng.choice([(1920, 1080), (1921, 1081), (1280, 720), (1279, 719), (2048, 64),
                                           (4097, 33), (33, 2049), (1025, 1025), (3840, 40), (257, 1031)])
        spec["bits"] = rng.choice([8, 10, 12, 16, 16])
        spec["ref"] = {"kind": rng.choice(["rand", "max", "zero", "checker", "stripes", "smooth"]), "seed": seed}
        spec["dis"] = rng.choice([{"kind": "invert", "seed": seed}, {"kind": "noise", "seed": seed, "sigma": 40},
                                  {"kind": "content", "content": {"kind": rng.choice(["rand", "max", "zero"]),
                                                                  "seed": seed + 1}}])
        spec.pop("allow_oob", None)
        if spec["bits"] > 8 and rng.random() < 0.3:
            spec["dis"] = {"kind": "oob", "seed": seed, "frac": 0.2}
            spec["allow_oob"] = True
    if spec["w"] * spec["h"] > 200000:
        spec["n"] = min(spec["n"], 2)
    if FRAMES:
        spec["n"] = max(1, min(random.Random(seed * 31 + 7).randint(*FRAMES), 4_000_000 // (spec["w"] * spec["h"])))
    if rng.random() < 0.18:
        spec["chroma"] = "400"
    if rng.random() < 0.03:
        spec["bits"] = rng.choice([1, 7, 9, 11, 14, 15, 17])
        spec["odd_bits"] = True
    small = spec["w"] < 48 or spec["h"] < 48
    if spec.get("odd_bits") or small and spec["ref"]["kind"] == "ffmpeg":
        spec["ref"] = {"kind": rng.choice(["rand", "smooth", "grad", "checker", "band", "mix"]), "seed": seed}
    if spec.get("odd_bits") or (small or spec["w"] % 2 or spec["h"] % 2) and spec["dis"]["kind"] in ("x264", "ff_filter"):
        spec["dis"] = {"kind": "noise", "seed": seed + 1, "sigma": rng.choice([1, 3, 10])}
    if spec["bits"] == 8 or spec.get("odd_bits"):
        spec.pop("allow_oob", None)
        if spec["dis"]["kind"] == "oob":
            spec["dis"] = {"kind": "noise", "seed": seed + 1, "sigma": 3}
    return spec


def generate(spec, wdir):
    """gen.py's main on this spec; on failure (ffmpeg refusing a geometry) numpy content instead."""
    for attempt in range(2):
        json.dump(spec, open(f"{wdir}/spec.json", "w"))
        argv = sys.argv
        try:
            sys.argv = ["gen.py", f"{wdir}/spec.json", wdir]
            gen.main()
            return None
        except (Exception, SystemExit) as e:  # noqa: BLE001
            err = repr(e)[-400:]
        finally:
            sys.argv = argv
        spec["gen_fallback"] = err
        spec["ref"] = {"kind": "smooth", "seed": spec["seed"], "cell": 4}
        spec["dis"] = {"kind": "noise", "seed": spec["seed"] + 1, "sigma": 3}
    return err


def fmt_val(v, rng):
    if isinstance(v, float):
        return repr(v) if rng.random() < 0.5 else f"{v:.6g}"
    return str(v)


def registry_variant(feat, rng, spec):
    """1-3 options drawn from the registry's table: bounds, defaults, random values; sometimes out of range."""
    opts = REGISTRY[feat].get("options") or {}
    names = [n for n in opts if n != "heatmaps_path"]
    if not names:
        return None
    o = {}
    for name in rng.sample(names, min(len(names), rng.randint(1, 3))):
        od = opts[name]
        d = od.get("default")
        lo, hi = od.get("min"), od.get("max")
        if isinstance(d, bool):
            o[name] = rng.choice(["true", "false"])
        elif isinstance(d, str):
            choices = {"vif_prescale_method": ["nearest", "bilinear", "bicubic", "lanczos4"],
                       "eotf": ["bt1886", "pq"], "cambi_eotf": ["bt1886", "pq"]}.get(name, [d])
            o[name] = rng.choice(choices + (["bogus"] if rng.random() < 0.05 else []))
        elif isinstance(d, (int, float)):
            isint = isinstance(d, int) and (lo is None or float(lo).is_integer()) and (hi is None or float(hi).is_integer())
            lo_ = lo if lo is not None else (d if d >= 0 else 0)
            hi_ = hi if hi is not None else max(d, 1) * 4
            hi_r = min(hi_, max(lo_ + 1, d * 20 + 100, 100))
            r = rng.random()
            if r < 0.15:
                v = lo_
            elif r < 0.25:
                v = hi_
            elif r < 0.3:
                v = d
            elif r < 0.36:  # out of range: both sides must refuse alike
                v = rng.choice([lo_ - (1 if isint else 0.5), hi_ + (1 if isint else 0.5) if hi_ < 1e300 else -1])
            else:
                v = rng.randint(int(lo_), int(hi_r)) if isint else rng.uniform(lo_, hi_r)
            if isint:
                v = int(v)
                if not float(lo_).is_integer() and rng.random() < 0.1:
                    v = float(v) + 0.5
            o[name] = fmt_val(v, rng) if not isint else str(v)
            if name == "vif_kernelscale" and rng.random() < 0.7:
                o[name] = rng.choice(ldt.KS)
            if name in ("motion_filter_size",) and rng.random() < 0.7:
                o[name] = str(rng.choice([1, 3, 5, 7, 9]))
        else:
            o[name] = str(d)
    return o


def variants(feat, rng, spec):
    cells = [(feat, {})]
    for _ in range(2 if rng.random() < 0.3 else 1):
        v = None
        if rng.random() < 0.5:
            v = ldt.rnd_variant(feat, rng, spec)
        if v is None:
            v = registry_variant(feat, rng, spec)
        if v is not None:
            cells.append((feat, v))
    return cells


def run_cmd(cmd, timeout=TIMEOUT):
    """(exit status or "timeout", stdout, stderr, seconds)."""
    return ldt.run_cmd(cmd, timeout)


def score_cmd(backend, spec, wdir, feat, opts):
    cmd = [ULP, "score", "--backend", backend, "--feature", feat]
    if backend == "vulkan":
        cmd += ["--vulkan-device", VULKAN_DEVICE]
    for k, v in opts.items():
        cmd += ["--option", f"{k}={v}"]
    cmd += ["--reference", f"{wdir}/ref.yuv", "--distorted", f"{wdir}/dis.yuv", "--width", str(spec["w"]),
            "--height", str(spec["h"]), "--bit-depth", str(spec["bits"]), "--chroma", spec["chroma"]]
    return cmd


def parse_scores(txt):
    """frames {num: {metric: printed text}}, pooled {metric: {stat: text}}; numbers kept as printed."""
    d = json.loads(txt, parse_float=str, parse_int=str, parse_constant=str)
    frames = {fr["frameNum"]: fr["metrics"] for fr in d["frames"]}
    return frames, d.get("pooled_metrics", {})


def mask(msg):
    msg = re.sub(r"\b(cpu|vulkan|opencl|cuda|CPU|Vulkan|OpenCL|CUDA|llvmpipe[^,;:)\n]*|pthread[^,;:)\n]*|lavapipe)\b", "<B>", msg)
    return msg.strip()


def compare(feat, cpu, gpu):
    """Diff one GPU side against the cpu side; returns a dict of findings (empty = identical)."""
    crc, cso, cse, _ = cpu
    grc, gso, gse, _ = gpu
    f = {}
    if grc not in (0, 2):
        f["bad_exit"] = grc
    if crc != grc:
        f["rc_differ"] = [crc, grc]
        f["cpu_msg"], f["gpu_msg"] = cse[-400:], gse[-400:]
        return f, {}
    if crc == 2:
        if mask(cse) != mask(gse):
            f["refusal_text_differs"] = [cse[-400:], gse[-400:]]
        return f, {}
    if crc != 0:
        return f, {}
    try:
        cf, cp = parse_scores(cso)
        gf, gp = parse_scores(gso)
    except Exception as e:  # noqa: BLE001
        f["parse_error"] = repr(e)
        return f, {}
    if sorted(cf) != sorted(gf):
        f["frame_set_differs"] = [sorted(cf), sorted(gf)]
    diffs, n, maxrel = [], 0, 0.0
    for fn in sorted(set(cf) & set(gf)):
        if set(cf[fn]) != set(gf[fn]):
            f.setdefault("metric_names_differ", [sorted(set(cf[fn]) ^ set(gf[fn]))])
        for m in sorted(set(cf[fn]) & set(gf[fn])):
            a, b = cf[fn][m], gf[fn][m]
            n += 1
            if a == b:
                continue
            try:
                fa, fb = float(a), float(b)
                rel = abs(fa - fb) / max(abs(fa), abs(fb), 1e-300)
            except (TypeError, ValueError):
                rel = float("inf")
            if rel != rel:
                rel = float("inf")
            maxrel = max(maxrel, rel)
            if rel <= REL_TOL.get(feat, 0.0):
                continue
            diffs.append([fn, m, a, b, rel])
    f_n = {"nvals": n, "maxrel": maxrel}
    if diffs:
        f["value_diffs"] = diffs[:30]
        f["n_value_diffs"] = len(diffs)
    if maxrel == 0.0 and cp != gp and not f:
        f["pooled_differs"] = True
    return f, f_n


def draw_cells(seed, spec):
    """Every feature with default options and one or two random option sets (seeded)."""
    rng = random.Random(seed * 7919 + 3)
    cells = []
    for feat in FEATURES:
        cells += variants(feat, rng, spec)
    return cells


def run_case(seed, log, verbose=False):
    spec = spec_for(seed)
    spec["seed"] = seed
    wdir = f"{OUT}/work/w"
    shutil.rmtree(wdir, ignore_errors=True)
    os.makedirs(wdir)
    err = generate(spec, wdir)
    if err:
        log.write(json.dumps({"seed": seed, "spec": spec, "gen_error": err}) + "\n"); log.flush()
        return 0
    cells = draw_cells(seed, spec)
    backends = BACKENDS + (["vulkan_mesa25"] if MESA25_EVERY and seed % MESA25_EVERY == 0 else [])
    if score_cells(seed, spec, wdir, cells, backends, log, verbose):
        dst = f"{OUT}/keep/seed_{seed}"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(wdir, dst)
    return len(cells)


def score_cells(seed, spec, wdir, cells, backends, log, verbose=False):
    """Scores each (feature, options) cell on cpu and each backend and logs the comparison; True when
    something was flagged."""
    keep, geom = False, f'{spec["w"]}x{spec["h"]} b{spec["bits"]} {spec["chroma"]} n{spec["n"]}'
    for feat, opts in cells:
        cpu = run_cmd(score_cmd("cpu", spec, wdir, feat, opts))
        res = {"seed": seed, "geom": geom, "feat": feat, "opts": opts, "cpu_rc": cpu[0], "cpu_t": round(cpu[3], 2)}
        if cpu[0] not in (0, 2):
            res["cpu_bad_exit"] = cpu[0]; res["cpu_msg"] = cpu[2][-400:]; keep = True
        if cpu[0] == 2:
            res["cpu_refusal"] = cpu[2].strip()[-300:]
        for b in backends:
            if b == "vulkan_mesa25":
                cmd = [MESA25] + score_cmd("vulkan", spec, wdir, feat, opts)
            else:
                cmd = score_cmd(b, spec, wdir, feat, opts)
            g = run_cmd(cmd)
            findings, stats = compare(feat, cpu, g)
            res[b] = {"rc": g[0], "t": round(g[3], 2), **stats, **findings}
            if findings:
                res[b]["cmd"] = " ".join(cmd)
                keep = True
                res["flag"] = True
        log.write(json.dumps(res) + "\n"); log.flush()
        if verbose:
            print(json.dumps(res)[:600])
    return keep


def prepare(s0, s1, pdir, max_bytes):
    """Writes the seeds' pairs and cells under pdir (cases.jsonl, seed_N/{ref,dis}.yuv), up to max_bytes
    of pairs, for --replay on a machine that cannot generate them (no ffmpeg): a GPU host."""
    os.makedirs(pdir, exist_ok=True)
    total, n, fixtures = 0, 0, []
    with open(f"{pdir}/cases.jsonl", "w") as out:
        for seed in range(s0, s1):
            spec = spec_for(seed)
            spec["seed"] = seed
            wdir = f"{pdir}/seed_{seed}"
            shutil.rmtree(wdir, ignore_errors=True)
            os.makedirs(wdir)
            size = None
            if not generate(spec, wdir):
                size = sum(os.path.getsize(f"{wdir}/{f}") for f in ("ref.yuv", "dis.yuv"))
            if size is None or total + size > max_bytes:
                shutil.rmtree(wdir)
                continue
            total += size
            n += 1
            os.remove(f"{wdir}/spec.json")
            out.write(json.dumps({"seed": seed, "spec": spec, "cells": draw_cells(seed, spec)}) + "\n")
            if not spec.get("odd_bits"):
                fixtures.append(fixture_entry(seed, spec, f"seed_{seed}"))
    # Default options through `ulpgate run`, paths relative to the gate and the
    # registry the repository's, so the folder can travel with the repository.
    write_gate(f"{pdir}/gate.yaml", fixtures, os.path.relpath(f"{ROOT}/gates/features.yaml", pdir))
    print(f"{n} seeds, {total / 2**20:.1f} MiB under {pdir}; gate.yaml of {len(fixtures)} fixtures")


def replay(pdir, deadline):
    """Scores prepare's cells on cpu and BACKENDS; one JSON line per cell to $TWINDIFF_DIR/log/replay.jsonl."""
    os.makedirs(f"{OUT}/log", exist_ok=True)
    flagged = cells_run = 0
    with open(f"{OUT}/log/replay.jsonl", "a") as log:
        for line in open(f"{pdir}/cases.jsonl"):
            if time.time() > deadline:
                print("deadline: stopped", flush=True)
                break
            case = json.loads(line)
            cells = [tuple(c) for c in case["cells"]]
            flagged += score_cells(case["seed"], case["spec"], f"{pdir}/seed_{case['seed']}", cells, BACKENDS, log)
            cells_run += len(cells)
            print(f"seed {case['seed']}: {len(cells)} cells", flush=True)
    print(f"replayed {cells_run} cells on cpu and {','.join(BACKENDS)}: {flagged} seed(s) flagged")


def fixture_entry(seed, spec, wdir):
    return f"""  - name: seed_{seed}
    reference: {wdir}/ref.yuv
    distorted: {wdir}/dis.yuv
    geometry: {{width: {spec["w"]}, height: {spec["h"]}, bit_depth: {spec["bits"]}, chroma: "{spec["chroma"]}"}}
"""


def write_gate(path, fixtures, registry):
    """One gate of every feature at tolerance 1e-300 (ssimulacra2 1e-10), pairs [cpu, B] for B in BACKENDS."""
    adr = "scripts/gpu_difftest: bit-identical twins"
    feats = "".join(f"  - {{name: {f}, tolerance: {1e-10 if f == 'ssimulacra2' else 1e-300}, adr: \"{adr}\"}}\n"
                    for f in FEATURES)
    backends = "".join(f"  {b}: {{required: true" + (f", device: {VULKAN_DEVICE}" if b == "vulkan" else "") + "}\n"
                       for b in BACKENDS)
    pairs = "".join(f"  - [cpu, {b}]\n" for b in BACKENDS)
    with open(path, "w") as g:
        g.write(f"schema_version: 1\nname: gpu-difftest\nregistry: {registry}\nfeatures:\n{feats}"
                f"backends:\n  cpu: {{}}\n{backends}pairs:\n{pairs}fixtures:\n" + "".join(fixtures))


def run_gate(s0, s1, deadline):
    """Gate mode: the seeds' pairs as fixtures of one gate of every feature at tolerance 0 (ssimulacra2
    1e-10), pairs [cpu, vulkan] and [cpu, opencl], through `ulpgate run`: the path that computes sides
    in parallel and shares a pass between features (float_ssim + float_ms_ssim)."""
    gdir = f"{OUT}/gate"
    shutil.rmtree(gdir, ignore_errors=True)
    os.makedirs(gdir)
    fixtures = []
    for seed in range(s0, s1):
        if time.time() > deadline:
            break
        spec = spec_for(seed)
        spec["seed"] = seed
        if spec.get("odd_bits"):
            continue
        wdir = f"{gdir}/seed_{seed}"
        os.makedirs(wdir)
        if generate(spec, wdir):
            continue
        fixtures.append(fixture_entry(seed, spec, wdir))
    gate = f"{gdir}/gate.yaml"
    write_gate(gate, fixtures, f"{ROOT}/gates/features.yaml")
    rc, so, se, t = run_cmd([ULP, "run", gate, "--json-out", f"{gdir}/report.json", "--quiet"], timeout=1800)
    print(f"ulpgate run: exit {rc} in {t:.0f} s ({len(fixtures)} fixtures)")
    if not os.path.exists(f"{gdir}/report.json"):
        print(se[-2000:])
        return
    rep = json.load(open(f"{gdir}/report.json"))
    from collections import Counter
    print(Counter(c["status"] for c in rep["cells"]))
    for c in rep["cells"]:
        if c["status"] in ("FAIL", "ERROR"):
            print(c["status"], c["feature"], c.get("backend_a"), c.get("backend_b"), c["fixture"],
                  json.dumps(c.get("per_metric_max_abs_diff")), (c.get("note") or "")[:300])


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "--prepare":
        prepare(int(sys.argv[2]), int(sys.argv[3]), os.path.abspath(sys.argv[4]),
                float(sys.argv[5]) * 2**20 if len(sys.argv) > 5 else 40 * 2**20)
        return
    if len(sys.argv) >= 3 and sys.argv[1] == "--replay":
        replay(os.path.abspath(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 1e18)
        return
    if len(sys.argv) >= 4 and sys.argv[1] == "--gate":
        run_gate(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 1e18)
        return
    if len(sys.argv) >= 3 and sys.argv[1] == "--case":
        os.makedirs(f"{OUT}/log", exist_ok=True)
        with open(f"{OUT}/log/single.jsonl", "a") as log:
            run_case(int(sys.argv[2]), log, verbose=True)
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    s0, s1 = int(sys.argv[1]), int(sys.argv[2])
    deadline = float(sys.argv[3]) if len(sys.argv) > 3 else 1e18
    os.makedirs(f"{OUT}/log", exist_ok=True)
    with open(f"{OUT}/log/cases.jsonl", "a") as log:
        for seed in range(s0, s1):
            if time.time() > deadline:
                break
            t = time.time()
            n = run_case(seed, log)
            print(f"seed {seed}: {n} cells, {time.time() - t:.1f} s", flush=True)


if __name__ == "__main__":
    main()
