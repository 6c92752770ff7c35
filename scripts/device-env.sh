# Sourced by the device scripts (device-check.sh, device-ab.sh) on the
# NVIDIA device machine: makes the carried Vulkan loader, the toolkit's
# NVRTC and OpenCL loader and NVIDIA's OpenCL driver visible. Needs $TMP
# (a scratch folder).
# Vulkan (and optionally OpenCL) loaders carried as .debs.
if compgen -G ".gl/*.deb" >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
# CUDA: the driver is on the loader path; NVRTC and the Khronos OpenCL
# loader live in the toolkit (ulpgate also looks in $CUDA_HOME itself).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# NVIDIA's OpenCL driver registered with the ICD loader, if the image
# did not register it.
if ! compgen -G "/etc/OpenCL/vendors/*.icd" >/dev/null; then
    icd=$( (ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}'; \
        ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 2>/dev/null) | head -1)
    if [ -n "$icd" ]; then
        mkdir -p "$TMP/icd" && echo "$icd" >"$TMP/icd/nvidia.icd"
        export OCL_ICD_VENDORS="$TMP/icd" OCL_ICD_FILENAMES="$icd"
        echo "registered $icd with the OpenCL ICD loader"
    else
        echo "no libnvidia-opencl.so.1 found: OpenCL will report unavailable"
    fi
fi

# The default gate with its paths made absolute and every GPU backend
# required, so a backend that cannot run is an ERROR here, not a SKIP.
gate_with() { # gate_with FILE: default.yaml + absolute paths + GPU required
    sed -e "s|registry: features.yaml|registry: $PWD/gates/features.yaml|" \
        -e "s|\.\./|$PWD/|g" \
        -e 's/\(vulkan\|cuda\|opencl\): {required: false}/\1: {required: true}/' \
        gates/default.yaml >"$1"
}
