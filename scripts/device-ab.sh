#!/usr/bin/env bash
# Two builds side by side on the NVIDIA device machine: 1080p throughput
# of a few features on every GPU backend, the builds alternating round by
# round on the same warm machine (a change to a kernel is judged against
# the host's noise, which moved untouched features by up to 40% between
# runs), then each build's Vulkan kernel times, then the default gate with
# every GPU backend required, with build B.
#
# Build both here and carry them (the machine has no Rust toolchain):
#   cargo build --release && cp target/release/ulpgate target/ab/b
#   (build A from the base commit, copy it to target/ab/a)
#   device tool: carry ["target/ab", ".gl"],
#                command: bash scripts/device-ab.sh
# Writes under $OUT: log.txt, bench.jsonl (the `bench --json-out` reports,
# a line each, build and round in each line's "ab"), gate.json, gate.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

OUT=${OUT:-target/device-ab}
A=${A:-$PWD/target/ab/a}
B=${B:-$PWD/target/ab/b}
FEATURES=${FEATURES:-ciede,psnr_hvs,float_vif,float_ms_ssim}
BACKENDS=${BACKENDS:-cuda,opencl,vulkan}
FRAMES=${FRAMES:-600}
THREADS=${THREADS:-4}
ROUNDS=${ROUNDS:-3}
# Features whose Vulkan kernels each build times (ULPGATE_KERNEL_TIMES).
KERNEL_TIMES=${KERNEL_TIMES:-$FEATURES}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
TMP=$(mktemp -d)
for bin in "$A" "$B"; do
    [ -x "$bin" ] || { echo "no build at $bin: build it here and carry it"; exit 2; }
done
# shellcheck source=scripts/device-env.sh
source scripts/device-env.sh
nvidia-smi -L
"$A" --version
"$B" --version
python3 scripts/clip1080.py "$TMP" || { echo "clip generation failed"; exit 2; }
clip=(--clip "$TMP/ref1080.yuv" "$TMP/dis1080.yuv" --width 1920 --height 1080)

# Warm both builds' kernel caches first, so no round pays a compile.
for bin in "$A" "$B"; do
    "$bin" bench "${clip[@]}" --frames 8 --backends "$BACKENDS" --features "$FEATURES" >/dev/null
done
for round in $(seq 1 "$ROUNDS"); do
    for side in a b; do
        bin=$A
        [ "$side" = b ] && bin=$B
        printf '\n== round %d, build %s ==\n' "$round" "$side"
        "$bin" bench "${clip[@]}" --frames "$FRAMES" --backends "$BACKENDS" --features "$FEATURES" \
            --threads "$THREADS" --json-out "$TMP/bench.json" &&
            python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["ab"] = [sys.argv[2], int(sys.argv[3])]; print(json.dumps(r))' \
                "$TMP/bench.json" "$side" "$round" >>"$OUT/bench.jsonl"
    done
done

for feature in ${KERNEL_TIMES//,/ }; do
    for side in a b; do
        bin=$A
        [ "$side" = b ] && bin=$B
        printf '\n== vulkan kernel times, %s, build %s ==\n' "$feature" "$side"
        ULPGATE_KERNEL_TIMES=1 "$bin" score --backend vulkan --feature "$feature" --reference "$TMP/ref1080.yuv" \
            --distorted "$TMP/dis1080.yuv" --width 1920 --height 1080 --json-out /dev/null
    done
done

printf '\n== default gate, every GPU backend required, build b ==\n'
gate_with "$TMP/device.yaml"
"$B" run "$TMP/device.yaml" --quiet --json-out "$OUT/gate.json" --md-out "$OUT/gate.md"
echo "default gate exit: $?"
rm -rf "$TMP"
