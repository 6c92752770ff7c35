#!/usr/bin/env python3
"""Deterministic input generator.

Usage: gen.py SPEC.json OUTDIR   -> writes OUTDIR/ref.yuv and OUTDIR/dis.yuv

SPEC: {"w":W,"h":H,"bits":B,"chroma":"420|422|444","n":N,
       "ref":{"kind":...,"seed":S,...}, "dis":{"kind":...,"seed":S,...}}
"""
import json, os, subprocess, sys
import numpy as np

FF = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-threads", "1",
      "-filter_threads", "1", "-cpuflags", "0"]


def pix_fmt(chroma, bits):
    base = {"420": "yuv420p", "422": "yuv422p", "444": "yuv444p"}[chroma]
    return base if bits == 8 else f"{base}{bits}le"


def plane_dims(spec):
    w, h, c = spec["w"], spec["h"], spec["chroma"]
    cw = (w + 1) // 2 if c in ("420", "422") else w
    ch = (h + 1) // 2 if c == "420" else h
    return [(h, w), (ch, cw), (ch, cw)]


def dtype(bits):
    return np.uint8 if bits == 8 else np.dtype("<u2")


def read_raw(path, spec):
    dims = plane_dims(spec)
    dt = dtype(spec["bits"])
    data = np.fromfile(path, dtype=dt)
    frames, off = [], 0
    for _ in range(spec["n"]):
        planes = []
        for (ph, pw) in dims:
            planes.append(data[off:off + ph * pw].reshape(ph, pw).astype(np.int64))
            off += ph * pw
        frames.append(planes)
    return frames


def write_raw(path, frames, spec):
    dt = dtype(spec["bits"])
    mx = (1 << spec["bits"]) - 1
    if spec.get("allow_oob"):
        mx = 255 if spec["bits"] == 8 else 65535
    with open(path, "wb") as f:
        for planes in frames:
            for p in planes:
                f.write(np.clip(p, 0, mx).astype(dt).tobytes())


def smooth_field(rng, ph, pw, cell):
    gh, gw = ph // cell + 2, pw // cell + 2
    g = rng.random((gh, gw))
    ys = np.arange(ph) / cell
    xs = np.arange(pw) / cell
    y0 = ys.astype(int); x0 = xs.astype(int)
    fy = (ys - y0)[:, None]; fx = (xs - x0)[None, :]
    a = g[y0][:, x0]; b = g[y0][:, x0 + 1]; c = g[y0 + 1][:, x0]; d = g[y0 + 1][:, x0 + 1]
    return (a * (1 - fx) * (1 - fy) + b * fx * (1 - fy) + c * (1 - fx) * fy + d * fx * fy)


def numpy_content(spec, p):
    rng = np.random.default_rng(p["seed"])
    mx = (1 << spec["bits"]) - 1
    dims = plane_dims(spec)
    kind = p["kind"]
    frames = []
    for t in range(spec["n"]):
        planes = []
        for pi, (ph, pw) in enumerate(dims):
            yy, xx = np.mgrid[0:ph, 0:pw]
            if kind == "rand":
                a = rng.integers(0, mx + 1, size=(ph, pw))
            elif kind == "rand_narrow":
                c0 = int(rng.integers(0, mx + 1)); r = max(1, mx // 32)
                a = rng.integers(c0 - r, c0 + r + 1, size=(ph, pw))
            elif kind == "grad":
                d = p.get("dir", 0)
                v = xx if d == 0 else (yy if d == 1 else xx + yy)
                span = max(1, v.max())
                a = ((v + t * p.get("speed", 3)) % (span + 1)) * mx // span
            elif kind == "flat":
                a = np.full((ph, pw), p["vals"][pi] if "vals" in p else int(rng.integers(0, mx + 1)))
            elif kind == "zero":
                a = np.zeros((ph, pw), dtype=np.int64)
            elif kind == "max":
                a = np.full((ph, pw), mx)
            elif kind == "checker":
                c = p.get("cell", 1)
                a = (((yy // c) + (xx + t) // c) % 2) * mx
            elif kind == "smooth":
                a = np.round(smooth_field(rng, ph, pw, p.get("cell", 16)) * mx).astype(np.int64)
            elif kind == "band":
                # slow ramp, quantized to steps (banding), moving per frame
                step = p.get("step", 1 << max(0, spec["bits"] - 6))
                lo = p.get("lo", 0.2); hi = p.get("hi", 0.6)
                v = (xx + t * 2) / max(1, pw) * (hi - lo) + lo
                a = (np.round(v * mx) // step) * step
            elif kind == "stripes":
                per = p.get("per", 2)
                a = ((xx // per) % 2) * mx if p.get("dir", 0) == 0 else ((yy // per) % 2) * mx
            elif kind == "mix":
                a = np.round(smooth_field(rng, ph, pw, 8) * mx).astype(np.int64)
                a[: ph // 3] = 0
                a[ph // 3: ph // 2, : pw // 2] = mx
                blk = ((yy // 2 + xx // 2) % 2) * mx
                sel = (yy > 2 * ph // 3)
                a = np.where(sel, blk, a)
                a = a + rng.integers(-2, 3, size=(ph, pw)) * (t % 2)
            else:
                raise ValueError(kind)
            planes.append(np.clip(a, 0, mx).astype(np.int64))
        frames.append(planes)
    return frames


def ffmpeg_source(spec, p, out):
    w, h = spec["w"], spec["h"]
    src = p["src"]
    sw, sh = p.get("sw", w), p.get("sh", h)
    sources = {
        "testsrc2": "", "mandelbrot": "", "smptehdbars": "",
        "cellauto": f":seed={p.get('seed')}", "life": f":seed={p.get('seed')}:mold=10:ratio=0.3",
    }
    if src == "noise":
        lav = f"color=c=gray:s={sw}x{sh}:r=24,noise=alls={p.get('str', 60)}:allf=t+u:all_seed={p['seed']}"
    elif src in sources:
        lav = f"{src}=s={sw}x{sh}:r=24{sources[src]}"
    else:
        raise ValueError(src)
    vf = f"scale={w}:{h}:flags={p.get('flags','bicubic')}+accurate_rnd+full_chroma_int+bitexact,format={pix_fmt(spec['chroma'], spec['bits'])}"
    subprocess.run(FF + ["-f", "lavfi", "-i", lav, "-frames:v", str(spec["n"]), "-vf", vf,
                         "-f", "rawvideo", out], check=True)


def ffmpeg_filter(spec, inp, out, vf):
    w, h = spec["w"], spec["h"]
    pf = pix_fmt(spec["chroma"], spec["bits"])
    subprocess.run(FF + ["-f", "rawvideo", "-pix_fmt", pf, "-s", f"{w}x{h}", "-i", inp,
                         "-vf", vf + f",format={pf}", "-f", "rawvideo", out], check=True)


def x264(spec, inp, out, crf, tmpdir):
    w, h = spec["w"], spec["h"]
    pf = pix_fmt(spec["chroma"], spec["bits"])
    enc_pf = pf if spec["bits"] in (8, 10) else pix_fmt(spec["chroma"], 10)
    mkv = os.path.join(tmpdir, "x264.mkv")
    subprocess.run(FF + ["-f", "rawvideo", "-pix_fmt", pf, "-s", f"{w}x{h}", "-r", "24", "-i", inp,
                         "-pix_fmt", enc_pf, "-c:v", "libx264", "-crf", str(crf), "-preset", "medium",
                         "-x264-params", "threads=1:lookahead-threads=1:sliced-threads=0",
                         "-bitexact", mkv], check=True)
    subprocess.run(FF + ["-i", mkv, "-pix_fmt", pf, "-f", "rawvideo", out], check=True)


def numpy_distort(spec, frames, p):
    rng = np.random.default_rng(p["seed"])
    mx = (1 << spec["bits"]) - 1
    kind = p["kind"]
    out = []
    for t, planes in enumerate(frames):
        np_ = []
        for pi, a in enumerate(planes):
            if kind == "same":
                b = a.copy()
            elif kind == "noise":
                b = a + np.round(rng.normal(0, p["sigma"] * mx / 255, size=a.shape)).astype(np.int64)
            elif kind == "shift":
                b = a + int(p["delta"] * mx / 255)
            elif kind == "quant":
                s = p["bitsdrop"]
                b = (a >> s) << s
            elif kind == "invert":
                b = mx - a
            elif kind == "roll":
                b = np.roll(a, p.get("dx", 1), axis=1)
            elif kind == "box":
                pad = np.pad(a, 1, mode="edge")
                b = sum(pad[dy:dy + a.shape[0], dx:dx + a.shape[1]] for dy in range(3) for dx in range(3)) // 9
            elif kind == "sparse":
                b = a.copy()
                m = rng.random(a.shape) < p.get("frac", 0.01)
                b[m] = rng.integers(0, mx + 1, size=int(m.sum()))
            elif kind == "onepix":
                b = a.copy()
                b[0, 0] = mx - b[0, 0]
            elif kind == "frame_only":
                b = a.copy() if t % 2 == 0 else a + int(8 * mx / 255)
            elif kind == "oob":
                # samples above the bit depth's maximum (only meaningful above 8 bits)
                b = a.copy()
                m = rng.random(a.shape) < p.get("frac", 0.01)
                top = 65535 if spec["bits"] > 8 else mx
                b[m] = rng.integers(mx, top + 1, size=int(m.sum()))
                np_.append(b); continue
            elif kind == "limited":
                lo, hi = 16 << (spec["bits"] - 8), 235 << (spec["bits"] - 8)
                b = np.clip(a, lo, hi)
            else:
                raise ValueError(kind)
            np_.append(np.clip(b, 0, mx))
        out.append(np_)
    return out


def main():
    spec = json.load(open(sys.argv[1]))
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    ref = os.path.join(outdir, "ref.yuv")
    dis = os.path.join(outdir, "dis.yuv")
    r = spec["ref"]
    if r["kind"] == "ffmpeg":
        ffmpeg_source(spec, r, ref)
        rframes = None
    else:
        rframes = numpy_content(spec, r)
        write_raw(ref, rframes, spec)
    d = spec["dis"]
    if d["kind"] == "ff_filter":
        ffmpeg_filter(spec, ref, dis, d["vf"])
    elif d["kind"] == "x264":
        x264(spec, ref, dis, d["crf"], outdir)
    elif d["kind"] == "content":  # an independent content
        sub = dict(spec); sub["ref"] = d["content"]
        if d["content"]["kind"] == "ffmpeg":
            ffmpeg_source(spec, d["content"], dis)
        else:
            write_raw(dis, numpy_content(spec, d["content"]), spec)
    else:
        if rframes is None:
            rframes = read_raw(ref, spec)
        write_raw(dis, numpy_distort(spec, rframes, d), spec)
    # size sanity
    dims = plane_dims(spec)
    bpp = 1 if spec["bits"] == 8 else 2
    fs = sum(a * b for a, b in dims) * bpp * spec["n"]
    for f in (ref, dis):
        sz = os.path.getsize(f)
        if sz != fs:
            raise SystemExit(f"{f}: size {sz} != {fs}")


if __name__ == "__main__":
    main()
