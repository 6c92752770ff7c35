#!/usr/bin/env bash
# Runs a command with Mesa 25.0.7's lavapipe as the Vulkan driver, without
# installing anything system-wide: `scripts/mesa25.sh target/release/ulpgate devices`.
#
# Why: Debian 12's own lavapipe is Mesa 22.3.6, which loads storage buffers
# lane by lane; the required GitHub lane (ubuntu-24.04) runs a Mesa of the
# 24/25 series, whose llvmpipe compiles the same kernels into different code
# (masked gathers) and rounds some operations differently. CI runs the test
# suite on both (`.ci/run`), and the speed figures in README.md name the
# Mesa they were taken with.
#
# What: Debian bookworm-backports' mesa-vulkan-drivers 25.0.7 and the libdrm
# it was built against, pinned by SHA-256, fetched once from Debian's archive
# (deb.debian.org, else snapshot.debian.org) and unpacked under
# target/test-tools/mesa-25.0.7. It links the system's LLVM 15 (libllvm15,
# which Debian 12's mesa-vulkan-drivers already pulls in) and libvulkan1.
set -euo pipefail
cd "$(dirname "$0")/.."

version=25.0.7
root=$PWD/target/test-tools/mesa-$version
lib=$root/usr/lib/x86_64-linux-gnu
icd=$root/lvp_icd.json

# name, SHA-256 (Debian's Packages index for bookworm-backports).
debs=(
    "m/mesa/mesa-vulkan-drivers_25.0.7-2~bpo12+1_amd64.deb 3899f1800424c60a05df5d6913076a526ca8fdbabec43672cd397563d1ca3263"
    "libd/libdrm/libdrm2_2.4.123-1~bpo12+1_amd64.deb 9cc2f341964286295124a32d3625edb76730500625e54a1e682761f883064d7b"
    "libd/libdrm/libdrm-amdgpu1_2.4.123-1~bpo12+1_amd64.deb 334e2ae389af0e9cb607c2ccfbbf7ae9feb34131ff998550baeffeeae6cda296"
)

if [ ! -f "$lib/libvulkan_lvp.so" ]; then
    [ "$(uname -m)" = x86_64 ] || { echo "scripts/mesa25.sh: x86_64 only" >&2; exit 2; }
    ldconfig -p | grep -q 'libLLVM-15.so.1' || {
        echo "scripts/mesa25.sh: needs LLVM 15 (Debian 12: apt-get install libllvm15, which mesa-vulkan-drivers pulls in)" >&2
        exit 2
    }
    echo "scripts/mesa25.sh: fetching Mesa $version lavapipe (Debian bookworm-backports) into $root" >&2
    mkdir -p "$root/debs"
    for entry in "${debs[@]}"; do
        path=${entry% *}
        sum=${entry#* }
        file=$root/debs/$(basename "$path")
        if [ ! -f "$file" ] || ! echo "$sum  $file" | sha256sum --check --status; then
            url_path=${path//+/%2B}
            curl -fsSL -o "$file" "https://deb.debian.org/debian/pool/main/$url_path" ||
                curl -fsSL -o "$file" "https://snapshot.debian.org/archive/debian/20251101T000000Z/pool/main/$url_path"
            echo "$sum  $file" | sha256sum --check --status ||
                { echo "scripts/mesa25.sh: $file does not match its pinned SHA-256" >&2; exit 2; }
        fi
        dpkg-deb -x "$file" "$root"
    done
fi
# Written each time: it names the library by absolute path. Through a
# temporary file and a rename: a run started beside this one must never
# read it half written (the loader then finds no driver at all).
tmp=$(mktemp "$icd.XXXXXX")
cat > "$tmp" <<JSON
{"file_format_version": "1.0.0", "ICD": {"library_path": "$lib/libvulkan_lvp.so", "api_version": "1.4.305"}}
JSON
mv -f "$tmp" "$icd"

# The loader reads VK_DRIVER_FILES (1.3.207 and later) or, before that,
# VK_ICD_FILENAMES; either replaces the system's drivers.
export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
exec "$@"
