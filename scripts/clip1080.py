#!/usr/bin/env python3
"""Writes DIR/ref1080.yuv and DIR/dis1080.yuv: 60 distinct 1920x1080 8-bit
4:2:0 frames (smooth moving content plus noise; the distorted side
quantised and noisier), the clip of the device scripts' throughput figures
(scripts/device-check.sh, scripts/device-ab.sh). Needs numpy."""
import sys

import numpy as np

tmp = sys.argv[1]
w, h, n = 1920, 1080, 60
rng = np.random.default_rng(1)
y, x = np.mgrid[0:h, 0:w]
with open(f"{tmp}/ref1080.yuv", "wb") as r, open(f"{tmp}/dis1080.yuv", "wb") as d:
    for t in range(n):
        luma = 128 + 60 * np.sin((x + 7 * t) / 37.0) * np.cos((y - 3 * t) / 23.0) + rng.normal(0, 6, (h, w))
        chroma = 128 + 40 * np.sin((x[::2, ::2] + y[::2, ::2] + 5 * t) / 51.0)
        planes = [np.clip(luma, 0, 255), np.clip(chroma, 0, 255), np.clip(255 - chroma, 0, 255)]
        ref = [p.astype(np.uint8) for p in planes]
        dis = [np.clip(np.round(p / 6) * 6 + rng.normal(0, 3, p.shape), 0, 255).astype(np.uint8) for p in planes]
        for p in ref:
            r.write(p.tobytes())
        for p in dis:
            d.write(p.tobytes())
