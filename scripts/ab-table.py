#!/usr/bin/env python3
"""Prints the Markdown table of scripts/device-ab.sh's bench.jsonl: per
feature and backend, each build's fps per round (with reading and upload,
then resident) and the ratio of the medians B / A."""
import collections
import json
import statistics
import sys

rows = collections.defaultdict(lambda: {"a": [], "b": []})
for line in open(sys.argv[1]):
    report = json.loads(line)
    side = report["ab"][0]
    for t in report["throughput"]:
        rows[(t["feature"], t["backend"])][side].append((t["upload_included_fps"], t["upload_excluded_fps"]))


def figures(values, k):
    return ", ".join(f"{v[k]:,.0f}" for v in values if v[k] is not None)


def ratio(r, k):
    a = [v[k] for v in r["a"] if v[k]]
    b = [v[k] for v in r["b"] if v[k]]
    return f"{statistics.median(b) / statistics.median(a):.2f}" if a and b else "—"


print("| feature | backend | A, with upload | B, with upload | B/A | A, resident | B, resident | B/A |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for (feature, backend), r in sorted(rows.items()):
    print(
        f"| {feature} | {backend} | {figures(r['a'], 0)} | {figures(r['b'], 0)} | {ratio(r, 0)} "
        f"| {figures(r['a'], 1)} | {figures(r['b'], 1)} | {ratio(r, 1)} |"
    )
