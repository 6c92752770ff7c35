#!/usr/bin/env bash
# The README's test command: on a fresh clone, installs what the tests need
# when it is missing, then runs the whole suite (`cargo test`; extra
# arguments go to it). .ci/run calls this same script.
#
# What the tests need beyond Rust:
#   - Mesa lavapipe (software Vulkan) and PoCL (software OpenCL), from
#     Debian's packages: every GPU kernel runs on them for real;
#   - NVRTC (CUDA's run-time compiler, no GPU needed), from PyPI's
#     nvidia-cuda-nvrtc wheel, unpacked under target/test-tools: every CUDA
#     kernel family must compile.
# Nothing is installed when it is already there; a second run starts the
# tests at once.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages (as root, or through sudo).
need=()
for pkg in mesa-vulkan-drivers libvulkan1 pocl-opencl-icd ocl-icd-libopencl1; do
    # Installed, not merely known: a removed package keeps its conffiles
    # and `dpkg -s` still succeeds for it.
    [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "scripts/test.sh: installing ${need[*]}" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# NVRTC, pinned, from its wheel (a zip): no virtual environment needed.
NVRTC_VERSION=13.5.37
tools=$PWD/target/test-tools
nvrtc_home=$tools/nvrtc-$NVRTC_VERSION/nvidia/cu13
if [ ! -f "$nvrtc_home/lib/libnvrtc.so.13" ]; then
    echo "scripts/test.sh: fetching NVRTC $NVRTC_VERSION (PyPI nvidia-cuda-nvrtc)" >&2
    command -v python3 >/dev/null || { echo "scripts/test.sh: python3 with pip is needed to fetch NVRTC" >&2; exit 2; }
    mkdir -p "$tools/wheels"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 \
        -d "$tools/wheels" "nvidia-cuda-nvrtc==$NVRTC_VERSION"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
        "$tools"/wheels/nvidia_cuda_nvrtc-"$NVRTC_VERSION"-*.whl "$tools/nvrtc-$NVRTC_VERSION"
fi
export ULPGATE_CUDA_HOME=$nvrtc_home

exec cargo test "$@"
