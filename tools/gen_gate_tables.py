#!/usr/bin/env python3
"""Generate one Kubernetes release's feature-gate table for ``kschedctl/kube/gate_tables.py``.

The gate tables say which gates a kube-scheduler of each minor version accepts on
``--feature-gates`` (default, locked to its default, stage) and, from v1.35, which gates an enabled
gate needs enabled too. Transcribing them by hand from the Go sources is slow and error-prone; this
script reads a release's feature-gate files from a Kubernetes source tree (or a Go module's vendored
copy of one) and writes the table for that release. It is a maintainer's tool: kschedctl never
imports it, and nothing it reads is committed.

    python3 tools/gen_gate_tables.py --src ~/src/kubernetes --minor 37           # print v1.37's blocks
    python3 tools/gen_gate_tables.py --src ~/src/kubernetes --minor 37 --write   # put them in gate_tables.py
    python3 tools/gen_gate_tables.py --src ~/src/kubernetes --minor 37 --check   # differences from it

How the Go sources are read: comments are dropped, the text is split into tokens, and the gate maps
(``map[Feature]VersionedSpecs{...}``, the older unversioned ``map[Feature]FeatureSpec{...}``, and the
dependency map ``map[Feature][]Feature{...}``) are parsed as composite literals. A map's keys are
feature constants, resolved to their string names through each file's imports (``genericfeatures.X``
is the constant ``X`` of ``k8s.io/apiserver/pkg/features``). A gate's value at release 1.N is the
last of its specs whose version is at most 1.N and whose ``MinCompatibilityVersion``, if it has one,
is at most 1.(N-1) (how ``featuregate`` picks the spec of a binary of 1.N started without
``--min-compatibility-version``); a gate all of whose specs are newer is not in that release's table.

When the only sources to be had are newer than the release (a development branch after it), two
corrections say what the branch changed since: ``--keep GATE`` (the release still had GATE, which
the branch removed: it is taken as the release before had it) and ``--drop GATE`` (the branch added
GATE with a version entry of the release, or relists it from a staging package the sources read do
not declare it in). Each is checked against the sources and the release before, and
docs/development.md records the ones a release was generated with.

Gates a vendor fork adds in files of its own (OpenShift's ``pkg/features/openshift_features.go``)
are not read: only the upstream files listed in ``SOURCES`` are. When upstream moves or adds a
feature-gate file, ``SOURCES`` is where to say so.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import re
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

REPO = Path(__file__).resolve().parent.parent
TABLES = REPO / "kschedctl" / "kube" / "gate_tables.py"

#: A gate at one release: (default, locked to its default, stage), as in gate_tables.py.
Gate: TypeAlias = tuple[bool, bool, str]
#: A version as (major, minor); a spec without one applies from (0, 0), i.e. always.
Version: TypeAlias = tuple[int, int]

#: The stage names of ``featuregate`` (and client-go's copy of them) and their gate_tables constant.
STAGES: Mapping[str, str] = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "GA", "Deprecated": "DEPRECATED"}
#: Go's zero value of a spec's ``PreRelease`` is the empty string, which ``featuregate`` names GA.
ZERO_STAGE = "GA"


class GenerateError(Exception):
    """The sources cannot be read into a table; the message says where and why."""


class UnresolvedName(GenerateError):
    """A map names a feature constant that no source declares (``constant``: its name)."""

    def __init__(self, message: str, constant: str) -> None:
        super().__init__(message)
        self.constant = constant


# ------------------------------------------------------------------------------------- the sources


@dataclass(frozen=True)
class GoSource:
    """One upstream Go file holding feature-gate constants and, when ``registers``, gate maps.

    ``module`` is the Go module and ``package`` the package directory inside it: together they
    form the import path other files use to name its constants. An ``optional`` file is read when a
    release has it and is not missed when it does not."""

    module: str
    package: str
    file: str
    registers: bool = True
    optional: bool = False

    @property
    def import_path(self) -> str:
        return f"{self.module}/{self.package}"

    @property
    def display(self) -> str:
        return f"{self.import_path}/{self.file}"


KUBERNETES = "k8s.io/kubernetes"

#: Every file whose gates kube-scheduler registers on its ``--feature-gates`` flag. The
#: controller-manager file is read for its constant names only: kube-scheduler does not register its
#: map, but ``pkg/features`` lists the gates it needs from it under the same names. The scheduler's
#: own staging file (its gates moved out of ``pkg/features``, which names them through that package)
#: is read where a release has it; none up to v1.37 does.
SOURCES: tuple[GoSource, ...] = (
    GoSource(KUBERNETES, "pkg/features", "kube_features.go"),
    GoSource("k8s.io/kube-scheduler", "pkg/features", "kube_features.go", optional=True),
    GoSource("k8s.io/apiserver", "pkg/features", "kube_features.go"),
    GoSource("k8s.io/apiextensions-apiserver", "pkg/features", "kube_features.go"),
    GoSource("k8s.io/client-go", "features", "known_features.go"),
    GoSource("k8s.io/component-base", "logs/api/v1", "kube_features.go"),
    GoSource("k8s.io/component-base", "metrics/features", "kube_features.go"),
    GoSource("k8s.io/component-base", "zpages/features", "kube_features.go"),
    GoSource("k8s.io/controller-manager", "pkg/features", "kube_features.go", registers=False),
)


def candidate_paths(src: Path, source: GoSource) -> list[Path]:
    """Where ``source`` may be under ``src``: a Kubernetes source tree (staging modules under
    ``staging/src``), a module that vendors Kubernetes (``vendor/k8s.io/...``), or a vendor
    directory itself."""
    inner = Path(source.package) / source.file
    if source.module == KUBERNETES:
        roots = [src, src / "vendor" / KUBERNETES, src / KUBERNETES]
    else:
        roots = [src / "staging" / "src" / source.module, src / "vendor" / source.module, src / source.module]
    return [root / inner for root in roots]


def locate(src: Path) -> dict[GoSource, Path]:
    """Each source's file under ``src``; every missing one is named, with where it was looked for."""
    if not src.is_dir():
        raise GenerateError(f"{src} is not a directory")
    found: dict[GoSource, Path] = {}
    missing: list[str] = []
    for source in SOURCES:
        paths = candidate_paths(src, source)
        hit = next((p for p in paths if p.is_file()), None)
        if hit is None and source.optional:
            continue
        if hit is None:
            looked = "".join(f"\n    {p}" for p in paths)
            missing.append(f"  {source.display}, looked for:{looked}")
        else:
            found[source] = hit
    if missing:
        raise GenerateError(f"feature-gate files missing under {src}:\n" + "\n".join(missing))
    return found


# ------------------------------------------------------------------------------------------ tokens


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "string", "number" or "punct"
    text: str
    line: int


_TOKEN = re.compile(
    r"""(?P<space>\s+)
      | (?P<comment>//[^\n]*|/\*.*?\*/)
      | (?P<ident>[^\W\d]\w*)
      | (?P<number>\d[\w.]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*"|`[^`]*`)
      | (?P<rune>'(?:[^'\\\n]|\\.)*')
      | (?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[Token]:
    """Go source as tokens, without whitespace and comments (each operator character is a token)."""
    out: list[Token] = []
    line = 1
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        if kind not in ("space", "comment"):
            out.append(Token("string" if kind == "rune" else kind, m.group(), line))
        line += m.group().count("\n")
    return out


def string_value(token: Token) -> str:
    """The text of a Go string literal (gate names and versions never hold escapes)."""
    body = token.text[1:-1]
    if token.text[0] == '"' and "\\" in body:
        raise GenerateError(f"line {token.line}: escape sequences in {token.text} are not supported")
    return body


# ------------------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Name:
    """An identifier, possibly qualified by a package: ``Beta``, ``featuregate.Beta``."""

    parts: tuple[str, ...]
    line: int

    @property
    def last(self) -> str:
        return self.parts[-1]


@dataclass(frozen=True)
class Call:
    func: Name
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Literal:
    """A string or number literal, as written."""

    token: Token


@dataclass(frozen=True)
class Composite:
    """``{...}`` with its type when one is written; each element is (key or None, value)."""

    type: str | None
    elements: tuple[tuple[Expr | None, Expr], ...]
    line: int


Expr: TypeAlias = Name | Call | Literal | Composite


class Parser:
    """Just enough of Go's expression grammar for composite literals of gate specs."""

    def __init__(self, tokens: Sequence[Token], pos: int = 0) -> None:
        self.tokens = tokens
        self.pos = pos

    def peek(self, offset: int = 0) -> Token | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def take(self, text: str | None = None) -> Token:
        tok = self.peek()
        if tok is None:
            raise GenerateError(f"unexpected end of file, wanted {text or 'a token'}")
        if text is not None and tok.text != text:
            raise GenerateError(f"line {tok.line}: wanted {text!r}, found {tok.text!r}")
        self.pos += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text and tok.kind == "punct"

    def type_text(self) -> str:
        """A type as text: ``featuregate.VersionedSpecs``, ``[]Feature``, ``map[K]V``."""
        if self.at("["):
            self.take("[")
            self.take("]")
            return "[]" + self.type_text()
        if self.at("*"):
            self.take("*")
            return "*" + self.type_text()
        first = self.take()
        if first.text == "map":
            self.take("[")
            key = self.type_text()
            self.take("]")
            return f"map[{key}]{self.type_text()}"
        if first.kind != "ident":
            raise GenerateError(f"line {first.line}: wanted a type, found {first.text!r}")
        return ".".join(self.name_parts(first))

    def name_parts(self, first: Token) -> tuple[str, ...]:
        parts = [first.text]
        while self.at(".") and (nxt := self.peek(1)) is not None and nxt.kind == "ident":
            self.take(".")
            parts.append(self.take().text)
        return tuple(parts)

    def expr(self) -> Expr:
        tok = self.peek()
        if tok is None:
            raise GenerateError("unexpected end of file, wanted an expression")
        if tok.kind in ("string", "number"):
            return Literal(self.take())
        if self.at("{"):
            return self.composite(None)
        if self.at("[") or tok.text == "map":
            return self.composite(self.type_text())
        if tok.kind != "ident":
            raise GenerateError(f"line {tok.line}: unexpected {tok.text!r}")
        name = Name(self.name_parts(self.take()), tok.line)
        if self.at("("):
            return Call(name, self.arguments())
        if self.at("{"):
            return self.composite(".".join(name.parts))
        return name

    def arguments(self) -> tuple[Expr, ...]:
        self.take("(")
        args: list[Expr] = []
        while not self.at(")"):
            args.append(self.expr())
            if not self.at(")"):
                self.take(",")
        self.take(")")
        return tuple(args)

    def composite(self, type_text: str | None) -> Composite:
        line = self.take("{").line
        elements: list[tuple[Expr | None, Expr]] = []
        while not self.at("}"):
            first = self.expr()
            if self.at(":"):
                self.take(":")
                elements.append((first, self.expr()))
            else:
                elements.append((None, first))
            if not self.at("}"):
                self.take(",")
        self.take("}")
        return Composite(type_text, tuple(elements), line)


# ---------------------------------------------------------------------------------------- Go files


@dataclass(frozen=True)
class Spec:
    """One entry of a gate's versioned specs. ``min_compatibility``: the spec holds only for a binary
    whose minimum compatibility version is at least this (``MinCompatibilityVersion``)."""

    version: Version
    default: bool
    locked: bool
    stage: str
    min_compatibility: Version | None = None


@dataclass
class GoFile:
    """What one Go file declares: its imports, its feature constants and its gate maps."""

    source: GoSource
    imports: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    #: (map kind, the map literal): kind "specs" (versioned), "spec" (one unversioned spec each)
    #: or "dependencies".
    maps: list[tuple[str, Composite]] = field(default_factory=list)


def parse_imports(tokens: Sequence[Token]) -> dict[str, str]:
    """Package name (its alias, else the path's last element) -> import path."""
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        if tokens[i].text != "import" or tokens[i].kind != "ident":
            i += 1
            continue
        i += 1
        grouped = i < len(tokens) and tokens[i].text == "("
        i += grouped
        while i < len(tokens) and tokens[i].text != ")":
            alias = None
            if tokens[i].kind != "string":
                alias = tokens[i].text
                i += 1
            path = string_value(tokens[i])
            out[alias or path.rsplit("/", 1)[-1]] = path
            i += 1
            if not grouped:
                break
    return out


def _declared_name(tokens: Sequence[Token], i: int) -> str | None:
    """The name a string at ``tokens[i]`` is given, if the tokens before it declare one:
    ``X Feature = "x"`` (the type may be qualified), ``X = Feature("x")``, ``X = "x"``."""

    def text(j: int) -> str:
        return tokens[j].text if 0 <= j < len(tokens) else ""

    def skip_feature_type(j: int) -> int | None:
        """The index before ``Feature`` or ``pkg.Feature`` ending at ``j`` (None: not that type)."""
        if text(j) != "Feature":
            return None
        return j - 3 if text(j - 1) == "." else j - 1

    j: int | None = i - 1
    if text(i - 1) == "(" and text(i + 1) == ")":  # a conversion: X = Feature("x")
        j = skip_feature_type(i - 2)
        if j is None or text(j) != "=":
            return None
        j -= 1
    elif text(i - 1) == "=":
        j = skip_feature_type(i - 2)
        if j is None:  # untyped: X = "x"
            j = i - 2
    else:
        return None
    return tokens[j].text if j is not None and j >= 0 and tokens[j].kind == "ident" else None


def parse_constants(tokens: Sequence[Token]) -> dict[str, str]:
    """The string constants and variables declared at the top level (outside any function), where
    the feature names are: ``X Feature = "X"``, ``X = Feature("X")``, ``X = "X"``."""
    out: dict[str, str] = {}
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text in "{}":
            depth += 1 if tok.text == "{" else -1
        elif tok.kind == "string" and depth == 0:
            name = _declared_name(tokens, i)
            if name is not None:
                out[name] = string_value(tok)
    return out


_MAP_KINDS = (("VersionedSpecs", "specs"), ("FeatureSpec", "spec"))


def map_kind(type_text: str) -> str | None:
    """What a map literal of this type holds: gate specs, dependencies, or nothing we read."""
    m = re.fullmatch(r"map\[(?:\w+\.)?Feature\](.+)", type_text)
    if m is None:
        return None
    value = m.group(1)
    if re.fullmatch(r"\[\](?:\w+\.)?Feature", value):
        return "dependencies"
    last = value.rsplit(".", 1)[-1]
    return next((kind for suffix, kind in _MAP_KINDS if last == suffix), None)


def find_maps(tokens: Sequence[Token]) -> Iterator[tuple[str, str | None, Composite]]:
    """Every gate or dependency map literal: (kind, the variable it is assigned to, the literal).

    A literal is a ``map[...]...{`` after ``=`` or ``return`` (a function's result type is not)."""
    for i, tok in enumerate(tokens):
        if tok.text != "map" or tok.kind != "ident" or i == 0 or tokens[i - 1].text not in ("=", "return"):
            continue
        parser = Parser(tokens, i)
        kind = map_kind(parser.type_text())
        if kind is None or not parser.at("{"):
            continue
        named = i >= 2 and tokens[i - 1].text == "=" and tokens[i - 2].kind == "ident"
        var = tokens[i - 2].text if named else None
        yield kind, var, parser.composite(None)


def refuse_index_assignments(tokens: Sequence[Token], variables: set[str], where: str) -> None:
    """A gate added with ``gates[X] = ...`` would be missed by reading literals: say so."""
    for i, tok in enumerate(tokens[:-1]):
        if tok.text in variables and tok.kind == "ident" and tokens[i + 1].text == "[":
            depth, j = 0, i + 1
            while j < len(tokens):
                depth += {"[": 1, "]": -1}.get(tokens[j].text, 0)
                if depth == 0:
                    break
                j += 1
            after = [t.text for t in tokens[j + 1 : j + 3]]
            if after[:1] == ["="] and after[1:2] != ["="]:  # an assignment, not gates[X] == ...
                raise GenerateError(f"{where}:{tok.line}: {tok.text}[...] is assigned outside its literal; not supported")


def parse_go_file(source: GoSource, text: str, where: str = "") -> GoFile:
    """The declarations of one feature-gate file that the table needs."""
    tokens = tokenize(text)
    out = GoFile(source, parse_imports(tokens), parse_constants(tokens))
    if source.registers:
        variables: set[str] = set()
        for kind, var, literal in find_maps(tokens):
            out.maps.append((kind, literal))
            if var:
                variables.add(var)
        refuse_index_assignments(tokens, variables, where or source.display)
    return out


# ------------------------------------------------------------------------------------ the registry


@dataclass
class Registry:
    """Every gate the sources register, with all its specs, and the dependency lists.

    ``skipped``: names of ``--drop`` that a map named through a constant no source declares (a newer
    ``pkg/features`` relisting a gate the older staging copy does not have yet); those entries are
    left out."""

    specs: dict[str, tuple[Spec, ...]] = field(default_factory=dict)
    dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)


class Resolver:
    """Feature constants by package import path, to turn a map key into a gate name."""

    def __init__(self, files: Sequence[GoFile]) -> None:
        self.constants: dict[str, dict[str, str]] = {}
        for f in files:
            self.constants.setdefault(f.source.import_path, {}).update(f.constants)

    def name(self, expr: Expr | None, file: GoFile) -> str:
        if isinstance(expr, Literal) and expr.token.kind == "string":
            return string_value(expr.token)
        if isinstance(expr, Call) and expr.func.last == "Feature" and len(expr.args) == 1:
            return self.name(expr.args[0], file)  # a conversion: featuregate.Feature(x.Y)
        if isinstance(expr, Name) and len(expr.parts) <= 2:
            package = file.source.import_path if len(expr.parts) == 1 else file.imports.get(expr.parts[0])
            value = self.constants.get(package or "", {}).get(expr.last)
            if value is not None:
                return value
            raise UnresolvedName(f"{file.source.display}:{expr.line}: cannot resolve {'.'.join(expr.parts)}", expr.last)
        raise GenerateError(f"{file.source.display}: a gate name that is not a constant: {expr!r}")


def _bool(expr: Expr, what: str, line: int) -> bool:
    if isinstance(expr, Name) and expr.parts in (("true",), ("false",)):
        return expr.parts == ("true",)
    raise GenerateError(f"line {line}: {what} is not true or false: {expr!r}")


def _version(expr: Expr, line: int) -> Version:
    """``version.MustParse("1.33")`` or ``version.MajorMinor(1, 33)``."""
    if isinstance(expr, Call) and all(isinstance(a, Literal) for a in expr.args):
        texts = [a.token.text for a in expr.args if isinstance(a, Literal)]
        if expr.func.last == "MustParse" and len(texts) == 1:
            m = re.fullmatch(r'"v?(\d+)\.(\d+)(?:\.\d+)?"', texts[0])
            if m:
                return int(m.group(1)), int(m.group(2))
        if expr.func.last == "MajorMinor" and len(texts) == 2 and all(t.isdigit() for t in texts):
            return int(texts[0]), int(texts[1])
    raise GenerateError(f"line {line}: not a version this script reads: {expr!r}")


def parse_spec(literal: Expr) -> Spec:
    """One ``{Version: ..., Default: ..., PreRelease: ..., LockToDefault: ...}``; Go's zero values
    stand for the fields left out."""
    if not isinstance(literal, Composite):
        raise GenerateError(f"not a spec literal: {literal!r}")
    fields: dict[str, Expr] = {}
    for key, value in literal.elements:
        if not isinstance(key, Name) or len(key.parts) != 1:
            raise GenerateError(f"line {literal.line}: a spec field without a name")
        fields[key.last] = value
    unknown = set(fields) - {"Version", "Default", "PreRelease", "LockToDefault", "MinCompatibilityVersion"}
    if unknown:
        raise GenerateError(f"line {literal.line}: unknown spec fields {sorted(unknown)}")
    stage = ZERO_STAGE
    if "PreRelease" in fields:
        pre = fields["PreRelease"]
        if not isinstance(pre, Name) or pre.last not in STAGES:
            raise GenerateError(f"line {literal.line}: unknown stage {pre!r}")
        stage = pre.last
    return Spec(
        version=_version(fields["Version"], literal.line) if "Version" in fields else (0, 0),
        default=_bool(fields["Default"], "Default", literal.line) if "Default" in fields else False,
        locked=_bool(fields["LockToDefault"], "LockToDefault", literal.line) if "LockToDefault" in fields else False,
        stage=stage,
        min_compatibility=_version(fields["MinCompatibilityVersion"], literal.line) if "MinCompatibilityVersion" in fields else None,
    )


def _specs_of(kind: str, value: Expr) -> tuple[Spec, ...]:
    """A gate's specs as ``featuregate`` completes them: a spec without a minimum compatibility version
    takes the one of the spec before it (so that it never goes down)."""
    if kind == "spec":
        return (parse_spec(value),)
    if not isinstance(value, Composite):
        raise GenerateError(f"versioned specs that are not a literal: {value!r}")
    out: list[Spec] = []
    for _, v in value.elements:
        spec = parse_spec(v)
        if spec.min_compatibility is None and out:
            spec = dataclasses.replace(spec, min_compatibility=out[-1].min_compatibility)
        out.append(spec)
    return tuple(out)


def _add_gate(registry: Registry, name: str, specs: tuple[Spec, ...], where: str) -> None:
    """A gate registered twice must have the same specs (``featuregate`` refuses anything else)."""
    if name in registry.specs and registry.specs[name] != specs:
        raise GenerateError(f"{name} is registered with different specs by {registry.origin[name]} and {where}")
    registry.specs[name] = specs
    registry.origin.setdefault(name, where)


def _resolve(resolver: Resolver, expr: Expr | None, file: GoFile, drop: Collection[str], registry: Registry) -> str | None:
    """The gate name ``expr`` stands for; None for an unresolvable constant that ``drop`` names."""
    try:
        return resolver.name(expr, file)
    except UnresolvedName as e:
        if e.constant not in drop:
            raise
        registry.skipped.add(e.constant)
        return None


def build_registry(files: Sequence[GoFile], drop: Collection[str] = ()) -> Registry:
    """Every gate and dependency list of ``files``, names resolved (an unresolvable constant that
    ``drop`` names is left out, see ``Registry.skipped``)."""
    resolver = Resolver(files)
    registry = Registry()
    for f in files:
        for kind, literal in f.maps:
            for key, value in literal.elements:
                name = _resolve(resolver, key, f, drop, registry)
                if name is None:
                    continue
                if kind == "dependencies":
                    if not isinstance(value, Composite):
                        raise GenerateError(f"{f.source.display}: dependencies of {name} are not a literal")
                    resolved = (_resolve(resolver, d, f, drop, registry) for _, d in value.elements)
                    deps = tuple(d for d in resolved if d is not None)
                    if registry.dependencies.get(name, deps) != deps:
                        raise GenerateError(f"{name} has two different dependency lists")
                    registry.dependencies[name] = deps
                else:
                    _add_gate(registry, name, _specs_of(kind, value), f.source.display)
    return registry


# --------------------------------------------------------------------------------- one release


@dataclass(frozen=True)
class Table:
    """One release's gates and (non-empty) dependency lists, as gate_tables.py holds them."""

    gates: dict[str, Gate]
    dependencies: dict[str, tuple[str, ...]]


def spec_at(specs: Sequence[Spec], minor: int) -> Spec | None:
    """The spec in effect in a plain 1.<minor> binary: the last whose version is not newer and whose
    minimum compatibility version, if it has one, is not newer than 1.<minor - 1> (the minimum
    compatibility version of a binary started without ``--min-compatibility-version``). None: no spec
    applies yet."""
    current = None
    for spec in specs:
        if spec.version <= (1, minor) and (spec.min_compatibility is None or spec.min_compatibility <= (1, minor - 1)):
            current = spec
    return current


def table_at(registry: Registry, minor: int) -> Table:
    """The table of release 1.<minor>."""
    gates: dict[str, Gate] = {}
    for name in sorted(registry.specs):
        spec = spec_at(registry.specs[name], minor)
        if spec is not None:
            gates[name] = (spec.default, spec.locked, spec.stage)
    deps = {n: d for n, d in sorted(registry.dependencies.items()) if d and n in gates}
    return Table(gates, deps)


def table_warnings(table: Table, registry: Registry, minor: int) -> list[str]:
    """What looks wrong in a release's table: a dependency it does not register, a dependency list of
    a gate no source registers."""
    warnings = [
        f"{name} depends on {d}, which 1.{minor} does not register"
        for name, ds in table.dependencies.items()
        for d in ds
        if d not in table.gates
    ]
    warnings += [f"dependencies name {n}, which no source registers" for n in registry.dependencies if n not in registry.specs]
    return warnings


@dataclass(frozen=True)
class Overrides:
    """Corrections for sources newer than the release they are read for (a development branch that has
    moved on): ``keep`` names gates the release had that the sources no longer register, taken as the
    release before it had them (value, dependencies, and their place in other gates' dependencies);
    ``drop`` names gates the sources register at the release that it did not have (or that only a
    newer ``pkg/features`` names through a staging package the sources do not declare them in). Each
    correction is checked: a kept gate must be missing and known to the release before, a dropped one
    must be there to drop."""

    keep: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()


def _restore_dependencies(deps: dict[str, tuple[str, ...]], gates: Mapping[str, Gate], previous: Table,
                          kept: Collection[str]) -> None:
    """Put each kept gate back into the dependency lists that had it in ``previous``, in its old place."""
    for gate, before in previous.dependencies.items():
        if gate not in gates or not any(d in kept for d in before):
            continue
        now = deps.get(gate, ())
        deps[gate] = tuple(d for d in before if d in kept or d in now) + tuple(d for d in now if d not in before)


def apply_overrides(table: Table, minor: int, overrides: Overrides, previous: tuple[int, Table] | None,
                    skipped: Collection[str] = ()) -> Table:
    """``table`` with ``overrides`` applied; ``previous`` is the release before 1.<minor> (needed by
    ``keep``), ``skipped`` the dropped names the sources only named (``Registry.skipped``)."""
    gates = dict(table.gates)
    deps = dict(table.dependencies)
    for name in overrides.drop:
        if name not in gates and name not in skipped:
            raise GenerateError(f"--drop {name}: the sources do not register {name} at 1.{minor}")
        gates.pop(name, None)
        deps.pop(name, None)
    deps = {n: tuple(d for d in ds if d not in overrides.drop) for n, ds in deps.items()}
    if overrides.keep:
        if previous is None:
            raise GenerateError("--keep needs the release before, in --tables")
        before_minor, before = previous
        for name in overrides.keep:
            if name in gates:
                raise GenerateError(f"--keep {name}: the sources still register {name} at 1.{minor}")
            if name not in before.gates:
                raise GenerateError(f"--keep {name}: 1.{before_minor} has no gate {name}")
            gates[name] = before.gates[name]
            if name in before.dependencies:
                deps[name] = before.dependencies[name]
        _restore_dependencies(deps, gates, before, overrides.keep)
    return Table(dict(sorted(gates.items())), {n: d for n, d in sorted(deps.items()) if d})


def read_release(src: Path, minor: int, overrides: Overrides = Overrides(),
                 previous: tuple[int, Table] | None = None) -> tuple[Table, list[str]]:
    """Release 1.<minor>'s table from the feature-gate files under ``src`` (``overrides`` applied, with
    ``previous``, the release before, for ``keep``), and warnings about it."""
    files = []
    for source, path in locate(src).items():
        try:
            files.append(parse_go_file(source, path.read_text(encoding="utf-8"), str(path)))
        except GenerateError as e:
            raise GenerateError(f"{path}: {e}") from None
    registry = build_registry(files, overrides.drop)
    table = apply_overrides(table_at(registry, minor), minor, overrides, previous, registry.skipped)
    return table, table_warnings(table, registry, minor)


# ------------------------------------------------------------------------------------ gate_tables.py


_GATES_VAR = re.compile(r"GATES_V1_(\d+)")
_DEPS_VAR = re.compile(r"DEPENDENCIES_V1_(\d+)")
_DATA_START = re.compile(r"^GATES_V1_\d+", re.MULTILINE)


def load_tables(path: Path) -> dict[int, Table]:
    """Every release's table in a gate_tables.py (executed from its path: nothing is imported)."""
    if not path.is_file():
        raise GenerateError(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location("_gate_tables_under_generation", path)
    if spec is None or spec.loader is None:
        raise GenerateError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = vars(module)
    out: dict[int, Table] = {}
    for name, value in names.items():
        m = _GATES_VAR.fullmatch(name)
        if m:
            deps = names.get(f"DEPENDENCIES_V1_{m.group(1)}", {})
            out[int(m.group(1))] = Table(dict(value), dict(deps))
    return dict(sorted(out.items()))


def _gate_line(name: str, gate: Gate, indent: str) -> str:
    default, locked, stage = gate
    return f'{indent}"{name}": ({default}, {locked}, {STAGES[stage]}),'


def _deps_line(name: str, deps: tuple[str, ...], indent: str) -> str:
    inner = ", ".join(f'"{d}"' for d in deps)
    return f'{indent}"{name}": ({inner}{"," if len(deps) == 1 else ""}),'


def _delta_block(var: str, annotation: str, helper: str, previous: str, changed: list[str], removed: list[str]) -> str:
    """``VAR = helper(PREVIOUS, {changed}, (removed,))``."""
    lines = [f"{var}: {annotation} = {helper}(", f"    {previous},"]
    lines += ["    {", *changed, "    },"] if changed else ["    {},"]
    lines += ["    (", *(f'        "{n}",' for n in removed), "    ),"] if removed else ["    (),"]
    return "\n".join([*lines, ")"])


def _whole_block(var: str, annotation: str, lines: list[str]) -> str:
    return f"{var}: {annotation} = " + ("{\n" + "\n".join(lines) + "\n}" if lines else "{}")


_GATES_TYPE = "dict[str, Gate]"
_DEPS_TYPE = "dict[str, tuple[str, ...]]"


def render_gates(minor: int, table: Table, previous: tuple[int, Table] | None) -> str:
    """``GATES_V1_<minor>``: whole, or as what changed since ``previous``."""
    var = f"GATES_V1_{minor}"
    if previous is None:
        return _whole_block(var, _GATES_TYPE, [_gate_line(n, g, "    ") for n, g in sorted(table.gates.items())])
    before = previous[1].gates
    changed = [_gate_line(n, g, "        ") for n, g in sorted(table.gates.items()) if before.get(n) != g]
    removed = sorted(set(before) - set(table.gates))
    return _delta_block(var, _GATES_TYPE, "_next", f"GATES_V1_{previous[0]}", changed, removed)


def render_dependencies(minor: int, table: Table, previous: tuple[int, Table] | None) -> str:
    """``DEPENDENCIES_V1_<minor>``: whole (when it or the one before is empty), else as a change."""
    var = f"DEPENDENCIES_V1_{minor}"
    deps = table.dependencies
    if previous is None or not previous[1].dependencies or not deps:
        return _whole_block(var, _DEPS_TYPE, [_deps_line(n, d, "    ") for n, d in sorted(deps.items())])
    before = previous[1].dependencies
    changed = [_deps_line(n, d, "        ") for n, d in sorted(deps.items()) if before.get(n) != d]
    removed = sorted(set(before) - set(deps))
    return _delta_block(var, _DEPS_TYPE, "_next_dependencies", f"DEPENDENCIES_V1_{previous[0]}", changed, removed)


def render_tables(tables: Mapping[int, Table]) -> str:
    """The data part of gate_tables.py: every release's gates, then every release's dependencies."""
    minors = sorted(tables)
    blocks: list[str] = []
    for render in (render_gates, render_dependencies):
        for i, minor in enumerate(minors):
            previous = (minors[i - 1], tables[minors[i - 1]]) if i else None
            blocks.append(render(minor, tables[minor], previous))
    return "\n\n".join(blocks) + "\n"


def render_release(minor: int, table: Table, tables: Mapping[int, Table]) -> str:
    """Release 1.<minor>'s two blocks as they would stand in gate_tables.py next to ``tables``."""
    older = [m for m in tables if m < minor]
    previous = (max(older), tables[max(older)]) if older else None
    return render_gates(minor, table, previous) + "\n\n" + render_dependencies(minor, table, previous) + "\n"


def write_release(path: Path, minor: int, table: Table) -> None:
    """Put release 1.<minor> into the gate_tables.py at ``path``: the hand-written head (docstring,
    helpers) is kept and every table after it is rewritten, so that a later release's changes are
    counted from the new table."""
    text = path.read_text(encoding="utf-8")
    start = _DATA_START.search(text)
    if start is None:
        raise GenerateError(f"{path}: no GATES_V1_<minor> table to start from")
    tables = load_tables(path)
    tables[minor] = table
    path.write_text(text[: start.start()] + render_tables(dict(sorted(tables.items()))), encoding="utf-8")


def differences(minor: int, generated: Table, current: Table) -> list[str]:
    """How the checked-in table of 1.<minor> differs from the generated one, one line a gate."""
    out = []
    for name in sorted(set(generated.gates) | set(current.gates)):
        new, old = generated.gates.get(name), current.gates.get(name)
        if new != old:
            out.append(f"1.{minor} gate {name}: checked in {old}, sources say {new}")
    for name in sorted(set(generated.dependencies) | set(current.dependencies)):
        new_d, old_d = generated.dependencies.get(name), current.dependencies.get(name)
        if new_d != old_d:
            out.append(f"1.{minor} dependencies of {name}: checked in {old_d}, sources say {new_d}")
    return out


# ----------------------------------------------------------------------------------------- the CLI


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else None)
    ap.add_argument("--src", type=Path, required=True, help="a Kubernetes source tree, or a module vendoring one")
    ap.add_argument("--minor", type=int, required=True, help="the release the sources are: 37 for v1.37.x")
    ap.add_argument("--tables", type=Path, default=TABLES, help="the gate_tables.py to read (and write)")
    ap.add_argument("--keep", action="append", default=[], metavar="GATE",
                    help="sources newer than the release: it still had GATE, as the release before had it (repeatable)")
    ap.add_argument("--drop", action="append", default=[], metavar="GATE",
                    help="sources newer than the release: it did not have GATE yet (repeatable)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the release into --tables")
    mode.add_argument("--check", action="store_true", help="list how --tables differs; exit 1 if it does")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        tables = load_tables(args.tables)
        older = [m for m in tables if m < args.minor]
        previous = (max(older), tables[max(older)]) if older else None
        table, warnings = read_release(args.src, args.minor, Overrides(tuple(args.keep), tuple(args.drop)), previous)
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
        if args.check:
            current = tables.get(args.minor)
            if current is None:
                print(f"{args.tables} has no table for 1.{args.minor}", file=sys.stderr)
                return 1
            diff = differences(args.minor, table, current)
            print("\n".join(diff) if diff else f"1.{args.minor}: {len(table.gates)} gates, as checked in")
            return 1 if diff else 0
        if args.write:
            write_release(args.tables, args.minor, table)
            print(f"wrote 1.{args.minor} ({len(table.gates)} gates) into {args.tables}", file=sys.stderr)
            return 0
        sys.stdout.write(render_release(args.minor, table, tables))
        return 0
    except GenerateError as e:
        print(f"gen_gate_tables: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
