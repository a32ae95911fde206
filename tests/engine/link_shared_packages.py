"""Hard-links into a new venv every package of a lock that another venv already has at the same
version, so pip finds them installed and downloads only the rest.

    python3 link_shared_packages.py FROM_VENV TO_VENV LOCK

Why: the trainer venv and the engine venv share torch 2.13.0 with its nvidia-* and triton wheels
(4.5 GB, most of both installs). A hard link costs no disk and no download; pip in either venv
replaces files by unlinking them, so an upgrade in one never changes the other. Files outside
site-packages (console scripts, whose first line names the other venv's interpreter) are not
linked. Prints how many packages it linked.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def site_packages(venv: Path) -> Path:
    [path] = list(venv.glob("lib/python*/site-packages"))
    return path


def pins(lock: Path) -> dict[str, str]:
    out = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[normalize(name)] = version.strip()
    return out


def installed(site: Path) -> dict[str, tuple[str, Path]]:
    """Normalized name → (version, dist-info dir) of every distribution in ``site``."""
    out = {}
    for info in site.glob("*.dist-info"):
        meta = info / "METADATA"
        if not meta.is_file():
            continue
        name = version = None
        for line in meta.read_text(errors="replace").splitlines():
            if line.startswith("Name:"):
                name = line[5:].strip()
            elif line.startswith("Version:"):
                version = line[8:].strip()
            if name and version:
                break
        if name and version:
            out[normalize(name)] = (version, info)
    return out


def link_distribution(info: Path, src: Path, dst: Path) -> None:
    rels = [line.rsplit(",", 2)[0] for line in (info / "RECORD").read_text().splitlines()]
    # The dist-info last: pip takes a package for installed only once all of it is there.
    rels.sort(key=lambda rel: rel.startswith(info.name + "/"))
    for rel in rels:
        if not rel or rel.startswith(".."):
            continue
        source, target = src / rel, dst / rel
        if not source.is_file() or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(source, target)


def main(argv: list[str]) -> int:
    src_venv, dst_venv, lock = (Path(a) for a in argv)
    src, dst = site_packages(src_venv), site_packages(dst_venv)
    if src.stat().st_dev != dst.stat().st_dev:
        print(0)  # hard links need one file system: pip downloads everything
        return 0
    have = installed(src)
    linked = 0
    for name, version in pins(lock).items():
        found = have.get(name)
        if found and found[0] == version and (found[1] / "RECORD").is_file():
            link_distribution(found[1], src, dst)
            linked += 1
    print(linked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
