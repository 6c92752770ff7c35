#!/usr/bin/env bash
# One pass over the NVIDIA device machine (issue 4): identity, the default
# gate with every GPU backend required, start-up with a cold and a warm
# kernel cache, and 1080p throughput per backend and feature.
#
# The machine has no Rust toolchain: build here, carry the binary.
#   cargo build --release
#   device tool: run, from the repo root, with
#     carry:   ["target/release/ulpgate", ".gl"]
#     command: bash scripts/device-check.sh
# .gl holds the Vulkan loader .debs (device README); add
# ocl-icd-libopencl1 there too if the image has no OpenCL ICD loader
# (`apt-get download ocl-icd-libopencl1` with the README's apt options).
#
# Writes under $OUT (at most 8 files come back): log.txt (everything
# printed), devices.json, gate.json, gate.md, bench.json, corpus.csv and
# its manifest (corpus.csv.manifest.json).
# Every step runs even when one before it failed; the log says which.
# All 17 features on an H100: 76 s with FRAMES=120 SWEEP= (2026-11-23);
# the defaults take a few minutes more, inside the device tool's 10.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

OUT=${OUT:-target/device-check}
ULPGATE=${ULPGATE:-$PWD/target/release/ulpgate}
FRAMES=${FRAMES:-600}                 # frame pairs per 1080p throughput measurement (fewer: fixed costs weigh in)
BACKENDS=${BACKENDS:-"cuda opencl vulkan"}
# Features to time at 1080p (comma-separated; default: every feature with GPU kernels).
FEATURES=${FEATURES:-}
# Host threads reading and uploading for the 1080p table (a list measures each; empty: `run`'s default).
BENCH_THREADS=${BENCH_THREADS:-}
# Features whose Vulkan kernels to time one by one on the 1080p clip
# (ULPGATE_KERNEL_TIMES; comma-separated, empty: none).
KERNEL_TIMES=${KERNEL_TIMES:-}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
TMP=$(mktemp -d)
failures=()

section() { printf '\n== %s ==\n' "$*"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
step() { # step NAME COMMAND...: runs, times and records a failure
    local name=$1 start end code
    shift
    start=$(date +%s.%N)
    "$@"
    code=$?
    end=$(date +%s.%N)
    printf -- '-- %s: exit %d, %s s\n' "$name" "$code" "$(elapsed "$start" "$end")"
    [ "$code" -eq 0 ] || failures+=("$name (exit $code)")
    return "$code"
}

section "environment"
[ -x "$ULPGATE" ] || { echo "no ulpgate binary at $ULPGATE: build it here and carry it"; exit 2; }
# shellcheck source=scripts/device-env.sh
source scripts/device-env.sh
# NVRTC's kernel cache in a fresh folder, so the first run below is cold.
export XDG_CACHE_HOME="$TMP/cache"
uname -a
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
"$ULPGATE" --version

section "nvidia-smi -L"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv

section "ulpgate devices, with the kernel-dialect self-test (64-bit integers)"
step devices "$ULPGATE" devices --check
"$ULPGATE" devices --json >"$OUT/devices.json"

gate_with "$TMP/device.yaml"

section "start-up: cold and warm kernel cache (cpu vs cuda, float_psnr, one small fixture)"
tiny=(run "$TMP/device.yaml" --quiet --backends "cpu,cuda" --features float_psnr --fixtures testsrc2_200x184_8bit_420/dist_x264)
step "version (process start only)" "$ULPGATE" --version
# ULPGATE_TRACE prints the CUDA start-up phases (libraries, cuInit,
# context, kernel load or compile) on stderr.
step "cold (NVRTC compiles, cache empty)" env ULPGATE_TRACE=1 "$ULPGATE" "${tiny[@]}"
for i in 1 2 3; do step "warm $i (CUBIN from $XDG_CACHE_HOME/ulpgate)" env ULPGATE_TRACE=1 "$ULPGATE" "${tiny[@]}"; done
ls -l "$XDG_CACHE_HOME/ulpgate" 2>/dev/null

section "default gate: golden vs cpu, cpu vs vulkan / cuda / opencl, every fixture"
step "default gate" "$ULPGATE" run "$TMP/device.yaml" --json-out "$OUT/gate.json" --md-out "$OUT/gate.md"
echo "arch_ids:"
grep -o '"arch_id": *"[^"]*"' "$OUT/gate.json" | sort | uniq -c
# The same gate with every fixture read from its files frame by frame by
# each side (what a fixture above `--fixture-memory` gets): the same cells.
step "default gate, fixtures read frame by frame (--fixture-memory 0)" "$ULPGATE" run "$TMP/device.yaml" --quiet \
    --fixture-memory 0 --json-out "$TMP/gate-streamed.json"
step "the same cells either way" python3 -c 'import json, sys
cells = [json.load(open(p))["cells"] for p in sys.argv[1:]]
print(len(cells[0]), "cells,", "identical" if cells[0] == cells[1] else "DIFFERENT")
sys.exit(cells[0] != cells[1])' "$OUT/gate.json" "$TMP/gate-streamed.json"

section "throughput at 1920x1080 8-bit 4:2:0"
python3 scripts/clip1080.py "$TMP" || echo "clip generation failed"
ls -l "$TMP"/*1080.yuv
# GPU backends only: the device host's CPU is not the CI machine's, and the
# CPU reference's speed is measured beside libvmaf on the CI kind of machine.
bench_backends=${BACKENDS// /,}
step "bench 1080p ($bench_backends)" "$ULPGATE" bench --clip "$TMP/ref1080.yuv" "$TMP/dis1080.yuv" \
    --width 1920 --height 1080 --frames "$FRAMES" --backends "$bench_backends" \
    ${FEATURES:+--features "$FEATURES"} ${BENCH_THREADS:+--threads "$BENCH_THREADS"} --json-out "$OUT/bench.json"

# float_ansnr's two kernels (ULPGATE_ANSNR_KERNEL): the row walker CPU
# drivers get, the work group per row GPUs get.
for kernel in rows groups; do
    step "float_ansnr kernel $kernel" env ULPGATE_ANSNR_KERNEL=$kernel "$ULPGATE" bench --clip "$TMP/ref1080.yuv" \
        "$TMP/dis1080.yuv" --width 1920 --height 1080 --frames "$FRAMES" --backends "${BACKENDS// /,}" \
        --features float_ansnr --json-out "$TMP/ansnr-$kernel.json" | grep -E "^│ *float_ansnr "
done

# How throughput with reading and upload included scales with the host
# threads feeding the GPU (SWEEP="1 2 4 8 16" to change, empty to skip).
for threads in ${SWEEP-2 4 8}; do
    step "cuda, $threads thread(s)" "$ULPGATE" bench --clip "$TMP/ref1080.yuv" "$TMP/dis1080.yuv" \
        --width 1920 --height 1080 --frames "$FRAMES" --backends cuda --threads "$threads" \
        --features psnr,float_psnr --json-out "$TMP/sweep-$threads.json" | grep -E "^│ *(psnr|float_psnr) "
done

# Which Vulkan kernel owns each feature's time (README: ULPGATE_KERNEL_TIMES).
for feature in ${KERNEL_TIMES//,/ }; do
    step "vulkan kernel times, $feature" env ULPGATE_KERNEL_TIMES=1 "$ULPGATE" score --backend vulkan \
        --feature "$feature" --reference "$TMP/ref1080.yuv" --distorted "$TMP/dis1080.yuv" \
        --width 1920 --height 1080 --json-out /dev/null
done

section "calibration corpus: every GPU backend against the CPU on the default gate"
step "calibrate collect" "$ULPGATE" calibrate collect --gate "$TMP/device.yaml" --out "$OUT/corpus.csv"

section "summary"
if [ ${#failures[@]} -eq 0 ]; then
    echo "every step exited 0"
else
    printf 'failed: %s\n' "${failures[@]}"
fi
rm -rf "$TMP"
