#!/usr/bin/env python3
"""Writes tests/data/libvmaf_options.json: the option tables of libvmaf's
extractors, as their C sources declare them (`static const VmafOption
options[]`: name, alias, type, default, min, max and the
VMAF_OPT_FLAG_FEATURE_PARAM flag). tests/options.rs holds ulpgate's tables
to it.

Usage: scripts/libvmaf_option_tables.py LIBVMAF_SRC
  LIBVMAF_SRC  libvmaf 3.2.0's libvmaf/src (the folder holding feature/)
"""
import json
import os
import re
import sys

# ulpgate's feature name -> libvmaf source file (under src/feature/).
FILES = {
    "vif": "integer_vif.c", "float_vif": "float_vif.c", "adm": "integer_adm.c", "float_adm": "float_adm.c",
    "motion": "integer_motion.c", "float_motion": "float_motion.c", "float_ssim": "float_ssim.c",
    "float_ms_ssim": "float_ms_ssim.c", "cambi": "cambi.c", "psnr": "integer_psnr.c", "float_psnr": "float_psnr.c",
    "float_moment": "float_moment.c", "float_ansnr": "float_ansnr.c", "ciede": "ciede.c",
    "psnr_hvs": "third_party/xiph/psnr_hvs.c",
}
# Where the defaults' macros are defined.
HEADERS = ["adm_options.h", "integer_adm.h", "vif_options.h", "integer_vif.h", "motion_tools.h", "float_motion.c",
           "integer_motion.c", "float_vif.c", "cambi.c"]
CONSTANTS = {"ADM_CSF_MODE_WATSON97": "0", "DBL_MAX": "1.7976931348623157e308"}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = os.path.join(sys.argv[1], "feature")
    defines = dict(CONSTANTS)
    for h in HEADERS:
        for m in re.finditer(r"#define\s+(\w+)\s+(.+)", open(os.path.join(src, h)).read()):
            defines.setdefault(m.group(1), m.group(2).strip())

    def value(s):
        s = s.strip().rstrip(",").strip()
        for _ in range(5):
            s = defines.get(s, s).strip()
            if s.startswith("(") and s.endswith(")"):
                s = s[1:-1].strip()
        if s in ("true", "false"):
            return s == "true"
        if s == "NULL":
            return None
        if s.startswith('"'):
            return s.strip('"')
        try:
            return int(s)
        except ValueError:
            return float(s)

    tables = {}
    for feature, name in FILES.items():
        text = open(os.path.join(src, name)).read()
        m = re.search(r"static const VmafOption options\[\] = \{(.*?)\n\};", text, re.S)
        options = []
        for block in re.findall(r"\{([^{}]*?)\}", m.group(1), re.S) if m else []:
            fields = dict(re.findall(r"\.(\w+(?:\.\w)?)\s*=\s*((?:\"[^\"]*\"\s*)+|[^,\n]+)", block))
            if "name" not in fields:
                continue
            default = next((v for k, v in fields.items() if k.startswith("default_val")), None)
            options.append({
                "name": value(fields["name"]),
                "alias": value(fields["alias"]) if "alias" in fields else None,
                "type": fields["type"].strip().replace("VMAF_OPT_TYPE_", "").lower(),
                "default": value(default) if default is not None else None,
                "min": value(fields["min"]) if "min" in fields else None,
                "max": value(fields["max"]) if "max" in fields else None,
                "feature_param": "VMAF_OPT_FLAG_FEATURE_PARAM" in fields.get("flags", ""),
            })
        tables[feature] = options
    doc = {
        "source": "libvmaf 3.2.0, src/feature/*.c: each extractor's `static const VmafOption options[]` "
                  "(scripts/libvmaf_option_tables.py)",
        "files": FILES,
        "tables": tables,
    }
    out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests/data/libvmaf_options.json")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(out)


if __name__ == "__main__":
    main()
