"""Build the krew release archive of kschedctl and fill its version, uri and sha256 into the manifest.

The archive holds the shim ``krew/kubectl-kschedctl``, which runs the installed kschedctl
package as the kubectl plugin. It is a zip with stored (uncompressed) members and fixed
timestamps, so the same sources always give the same bytes, and the same sha256, on any machine.

    python3 krew/build_release.py            # writes dist/kubectl-kschedctl-vX.Y.Z.zip, updates krew/kschedctl.yaml
    python3 krew/build_release.py --check    # exit 1 when the manifest does not match a fresh build
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHIM = HERE / "kubectl-kschedctl"
MANIFEST = HERE / "kschedctl.yaml"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    text = (ROOT / "kschedctl" / "__init__.py").read_text()
    m = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if m is None:
        raise SystemExit("no __version__ in kschedctl/__init__.py")
    return f"v{m[1]}"


def archive_name(ver: str) -> str:
    return f"kubectl-kschedctl-{ver}.zip"


def build_archive(out_dir: Path, ver: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / archive_name(ver)
    info = zipfile.ZipInfo("kubectl-kschedctl", date_time=FIXED_TIME)
    info.create_system = 3  # unix, so the mode below is honoured
    info.external_attr = (0o100755 & 0xFFFF) << 16
    info.compress_type = zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(info, SHIM.read_bytes())
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fill_manifest(text: str, ver: str, digest: str) -> str:
    """The manifest with spec.version, each platform's uri (same base, new version) and sha256 replaced."""
    text = re.sub(r"(?m)^(  version: ).*$", rf"\g<1>{ver}", text, count=1)
    text = re.sub(
        r"(?m)^(\s+uri: \S+/releases/download/)[^/\s]+/[^/\s]+$", rf"\g<1>{ver}/{archive_name(ver)}", text
    )
    return re.sub(r'(?m)^(\s+sha256: )"?[0-9a-f]*"?$', rf'\g<1>"{digest}"', text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="directory for the archive (default: dist/)")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="manifest to fill (default: krew/kschedctl.yaml)")
    ap.add_argument("--check", action="store_true", help="only check that the manifest matches a fresh build")
    args = ap.parse_args(argv)
    ver = version()
    archive = build_archive(args.out, ver)
    digest = sha256(archive)
    old = args.manifest.read_text()
    new = fill_manifest(old, ver, digest)
    if args.check:
        if new != old:
            print(f"{args.manifest} is stale: run python3 krew/build_release.py", file=sys.stderr)
            return 1
        return 0
    args.manifest.write_text(new)
    print(f"{archive} sha256 {digest}\n{args.manifest} updated for {ver}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
