# SPDX-License-Identifier: GPL-2.0
"""The function symbols of a debug file as perf takes them: each value less
its section's address plus its offset, a file offset in the image (a PE
image's debug file has its symbols at ImageBase + RVA, in sections whose
address less offset maps them back). For scripts that check debug files."""
import subprocess


def _hex(s):
    return int(s, 16)


def func_syms(elf):
    """[(file offset, size, name)] of @elf's FUNC symbols, by readelf."""
    def readelf(opt):
        return subprocess.run(["readelf", opt, "-W", elf], capture_output=True,
                              text=True, check=True).stdout.splitlines()
    delta = {}
    for line in readelf("-S"):
        # "  [ 1] .text  NOBITS  addr off size ..."; the name may be empty
        if not line.lstrip().startswith("[") or "]" not in line:
            continue
        idx, rest = line.split("]", 1)
        f = rest.split()
        idx = idx.strip(" [")
        if not idx.isdigit() or idx == "0" or len(f) < 4:
            continue
        try:
            delta[idx] = _hex(f[2]) - _hex(f[3])
        except ValueError:
            continue
    out = []
    for line in readelf("-s"):
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC":
            out.append((_hex(f[1]) - delta.get(f[6], 0), int(f[2]), " ".join(f[7:])))
    return out


def func_values(elf):
    """[(value, size, name)] of @elf's FUNC symbols, as written."""
    out = subprocess.run(["readelf", "-sW", elf], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return [(_hex(f[1]), int(f[2]), " ".join(f[7:])) for f in map(str.split, out)
            if len(f) >= 8 and f[3] == "FUNC"]
