"""``python3 -m kschedctl.dist``: kschedctl as one executable file, for machines without pip or an index.

The file is a zipapp (PEP 441): a ``#!`` line, then a zip that holds kschedctl, every package it
depends on, and ``kschedctl.distboot`` as its ``__main__.py``. Nothing new is needed to build or
run it: the packages are copied from the environment that runs this module (where kschedctl is
installed, e.g. its development virtualenv), so building reads no package index; running needs
only a Python of the same minor version on the same platform, since pydantic-core and PyYAML's
C loader are compiled extensions (``distboot`` refuses another interpreter, saying which one the
file needs). The kubernetes client's asyncio half (``kubernetes.aio`` and aiohttp), which kschedctl
does not use, is left out. The same environment gives the same bytes: entries are sorted, with
fixed times.

    python3 -m kschedctl.dist                    # dist/kschedctl-0.1.0-cpython-311-linux-x86_64.pyz
    python3 -m kschedctl.dist -o ~/bin/kschedctl
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import re
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import kschedctl
from kschedctl import __version__, distboot

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")
#: The kubernetes client's asyncio copy and what only it needs: kschedctl reads the cluster with the
#: synchronous client (snapshot/live.py), and these are half the packages' size.
LEFT_OUT_DISTRIBUTIONS = {"aiohttp", "aiohttp-retry"}
LEFT_OUT_PREFIXES = ("kubernetes/aio/",)


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(spec: str) -> tuple[str, str | None]:
    """The distribution a ``Requires-Dist`` line names, and its environment marker (None: always)."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    if name is None:
        raise ValueError(f"unreadable requirement {spec!r}")
    _, _, marker = spec.partition(";")
    return name.group(1), marker.strip() or None


def _marker_holds(marker: str | None) -> bool:
    """Whether a requirement's marker holds here, without extras (pip's own marker evaluation; in an
    environment with neither packaging nor pip, a marker holds unless it names an extra)."""
    if marker is None:
        return True
    try:
        from packaging.markers import Marker
    except ImportError:
        try:  # pip vendors it
            from pip._vendor.packaging.markers import Marker  # type: ignore[assignment]
        except ImportError:
            return not re.search(r"\bextra\b", marker)
    return bool(Marker(marker).evaluate({"extra": ""}))


def _installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def runtime_distributions(root: str = "kschedctl") -> list[importlib.metadata.Distribution]:
    """``root``'s distribution and every one it needs at run time here (extras left out), by name."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if _key(name) in found or _key(name) in LEFT_OUT_DISTRIBUTIONS:
            continue
        dist = importlib.metadata.distribution(name)
        found[_key(name)] = dist
        for spec in dist.requires or []:
            dep, marker = _requirement(spec)
            if _marker_holds(marker) and (marker is None or _installed(dep)):
                todo.append(dep)
    return [found[k] for k in sorted(found)]


def _wanted(rel: str) -> bool:
    parts = rel.split("/")
    skipped = parts[0] == ".." or SKIPPED_DIRS & set(parts) or rel.endswith(SKIPPED_SUFFIXES)
    return not (skipped or rel.startswith(LEFT_OUT_PREFIXES))


def _files(dist: importlib.metadata.Distribution) -> Iterator[tuple[str, Path]]:
    """(path inside site-packages, file) of one distribution's installed files."""
    if _key(dist.metadata["Name"]) == "kschedctl":  # its sources, whether installed or editable
        package = Path(kschedctl.__file__).parent
        for path in package.rglob("*"):
            rel = "kschedctl/" + path.relative_to(package).as_posix()
            if path.is_file() and _wanted(rel):
                yield rel, path
        return
    for f in dist.files or []:
        rel = f.as_posix()
        if _wanted(rel):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                yield rel, path


def contents() -> dict[str, Path]:
    """Every file of the archive's ``site/`` directory."""
    out: dict[str, Path] = {}
    for dist in runtime_distributions():
        for rel, path in _files(dist):
            out[distboot.SITE + rel] = path
    return dict(sorted(out.items()))


def build_info(files: dict[str, Path]) -> dict[str, str]:
    digest = hashlib.sha256()
    for name, path in files.items():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return {
        "build": f"{__version__}-{digest.hexdigest()[:16]}",
        "version": __version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "abi": sys.implementation.cache_tag,
        "platform": sysconfig.get_platform(),
    }


def default_output(info: dict[str, str]) -> Path:
    return Path("dist") / f"kschedctl-{info['version']}-{info['abi']}-{info['platform']}.pyz"


def _write(zf: zipfile.ZipFile, name: str, data: bytes, mode: int = 0o644) -> None:
    entry = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    entry.create_system = 3  # unix: the mode below is kept
    entry.external_attr = (0o100000 | mode) << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(entry, data)


def build(output: Path | None = None, interpreter: str | None = None) -> Path:
    """Write the executable file; its path."""
    files = contents()
    info = build_info(files)
    out = output or default_output(info)
    out.parent.mkdir(parents=True, exist_ok=True)
    shebang = interpreter or f"/usr/bin/env python{info['python']}"
    with out.open("wb") as f:
        f.write(f"#!{shebang}\n".encode())
        with zipfile.ZipFile(f, "w") as zf:
            _write(zf, "__main__.py", Path(distboot.__file__).read_bytes())
            _write(zf, distboot.INFO, json.dumps(info, indent=1, sort_keys=True).encode())
            for name, path in files.items():
                _write(zf, name, path.read_bytes(), 0o755 if path.stat().st_mode & 0o111 else 0o644)
    out.chmod(0o755)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kschedctl.dist", description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, help="where to write the file (default: dist/kschedctl-VERSION-ABI-PLATFORM.pyz)")
    parser.add_argument(
        "--python", metavar="INTERPRETER",
        help="the #! line's interpreter (default: /usr/bin/env pythonX.Y, this Python's minor version)",
    )
    args = parser.parse_args(argv)
    out = build(args.output, args.python)
    print(f"wrote {out} ({out.stat().st_size // (1 << 20)} MiB): run it with Python "
          f"{sys.version_info.major}.{sys.version_info.minor} on {sysconfig.get_platform()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
