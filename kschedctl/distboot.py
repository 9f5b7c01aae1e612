"""The start of the single-file kschedctl (``python3 -m kschedctl.dist``): the archive's ``__main__.py``.

Python imports pure-Python modules from a zip, but not compiled extensions (pydantic-core, PyYAML's
C loader), so on its first run the file unpacks the packages it carries into a cache directory
(``$KSCHEDCTL_DIST_CACHE``, else ``$XDG_CACHE_HOME/kschedctl/dist`` or ``~/.cache/kschedctl/dist``; a
directory of the system's temporary one when that cannot be written), one directory per build, made
whole before it is used so that concurrent first runs are safe. Later runs only check it is there.

It then runs the command line: as ``kubectl_complete-kschedctl`` (a link of that name) kubectl's
completion, else ``kschedctl`` (as ``kubectl-kschedctl``, the kubectl plugin). The compiled
extensions were built for one Python minor version and platform; another interpreter is refused
with a message saying which one the file needs.

Standard library only: nothing else is importable before the unpacking.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import tempfile
import zipfile

#: What ``kschedctl.dist`` writes into the archive beside this file
INFO = "kschedctl-dist.json"
SITE = "site/"
COMPLETE = ".complete"


def _archive() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _cache_roots() -> list[str]:
    if os.environ.get("KSCHEDCTL_DIST_CACHE"):
        return [os.environ["KSCHEDCTL_DIST_CACHE"]]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return [os.path.join(base, "kschedctl", "dist"), os.path.join(tempfile.gettempdir(), f"kschedctl-dist-{uid}")]


def _unpack_into(root: str, archive: str, build: str) -> str:
    target = os.path.join(root, build)
    if os.path.exists(os.path.join(target, COMPLETE)):
        return target
    os.makedirs(root, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".unpack-", dir=root)
    try:
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if name.startswith(SITE):
                    zf.extract(name, staging)
        site = os.path.join(staging, SITE)
        open(os.path.join(site, COMPLETE), "w").close()
        try:
            os.rename(site, target)
        except OSError:  # another first run got there before this one
            if not os.path.exists(os.path.join(target, COMPLETE)):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _unpacked(archive: str, build: str) -> str:
    errors = []
    for root in _cache_roots():
        try:
            return _unpack_into(root, archive, build)
        except OSError as e:
            errors.append(f"{root}: {e.strerror or e}")
    raise SystemExit("kschedctl: cannot unpack into a cache directory (" + "; ".join(errors) + "): set KSCHEDCTL_DIST_CACHE")


def _refuse_other_pythons(info: dict[str, str]) -> None:
    here = {"abi": sys.implementation.cache_tag, "platform": sysconfig.get_platform()}
    if here != {"abi": info["abi"], "platform": info["platform"]}:
        sys.stderr.write(
            f"error: this kschedctl file was built for {info['abi']} on {info['platform']} (Python {info['python']}), "
            f"and runs with {here['abi']} on {here['platform']}: run it with Python {info['python']} "
            f"(python{info['python']} {sys.argv[0]} ...), or build one with your Python: python3 -m kschedctl.dist\n"
        )
        raise SystemExit(2)


def main() -> None:
    archive = _archive()
    with zipfile.ZipFile(archive) as zf:
        info = json.loads(zf.read(INFO))
    _refuse_other_pythons(info)
    sys.path.insert(0, _unpacked(archive, info["build"]))
    if os.path.basename(sys.argv[0]).startswith("kubectl_complete-"):
        from kschedctl.cli.complete import kubectl_complete

        kubectl_complete()
    else:
        from kschedctl.cli.main import run

        run()


if __name__ == "__main__":
    main()
