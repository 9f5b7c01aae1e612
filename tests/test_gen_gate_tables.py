"""tools/gen_gate_tables.py, the maintainer's generator of kschedctl/kube/gate_tables.py.

Every Go snippet here is made up for the test: small files with the shapes the real feature-gate
files have (typed, converted and untyped constants, versioned and unversioned spec maps, gates
named through another package, the dependency map), laid out as a Kubernetes source tree or a
vendored copy. kschedctl itself never imports the script.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import script_module

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "gen_gate_tables.py"
TABLES = ROOT / "kschedctl" / "kube" / "gate_tables.py"


gen = script_module(SCRIPT, "gen_gate_tables")

# ------------------------------------------------------------------------------ synthetic sources

MAIN = """\
package features

import (
	extfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	"k8s.io/apimachinery/pkg/util/version"
	genericfeatures "k8s.io/apiserver/pkg/features"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
	ccm "k8s.io/controller-manager/pkg/features"
)

// How to add one:  Template featuregate.Feature = "Template"   (a comment: not a gate)
const (
	// Quick turns on { the quick path }.
	Quick featuregate.Feature = "Quick"

	Lazy = featuregate.Feature("Lazy")

	Plain = "Plain"

	Renamed featuregate.Feature = "ShownName"

	Later featuregate.Feature = "Later"

	Gone featuregate.Feature = "Gone"

	Careful featuregate.Feature = "Careful"
)

/* var ghost = map[featuregate.Feature]featuregate.VersionedSpecs{Template: {}} */

var gates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Quick: {
		{Version: version.MustParse("1.30"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MustParse("1.32"), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.34"), Default: true, PreRelease: featuregate.GA, LockToDefault: true}, // } in a comment
	},

	Lazy: {
		{Version: version.MajorMinor(1, 20), Default: true, PreRelease: featuregate.GA},
		{Version: version.MustParse("1.31"), Default: true, PreRelease: featuregate.Deprecated},
		{Version: version.MustParse("1.33"), Default: false, LockToDefault: true, PreRelease: featuregate.Deprecated},
	},

	Plain: {
		{Version: version.MustParse("1.28"), Default: true},
	},

	Renamed: {
		{Version: version.MustParse("1.33"), PreRelease: featuregate.Alpha},
	},

	Later: {
		{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Alpha},
	},

	Careful: {
		{Version: version.MustParse("1.35"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.35"), Default: true, PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse("1.35")},
		{Version: version.MustParse("1.37"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},

	genericfeatures.Shared: {
		{Version: version.MustParse("1.29"), Default: true, PreRelease: featuregate.Beta},
	},

	extfeatures.Ratchet: {
		{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.Beta},
	},

	ccm.Webhooks: {
		{Version: version.MustParse("1.27"), Default: false, PreRelease: featuregate.Alpha},
	},
}

var dependencies = map[featuregate.Feature][]featuregate.Feature{
	Quick: {},

	Lazy: {Quick, genericfeatures.Shared},

	Later: {featuregate.Feature(clientfeatures.Streaming)},

	Renamed: {Plain},

	genericfeatures.Shared: {},
}

func init() {
	register(gates)
}
"""

GENERIC = """\
package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const (
	Shared featuregate.Feature = "Shared"

	ServerOnly featuregate.Feature = "ServerOnly"
)

var defaultGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Shared: {
		{Version: version.MustParse("1.29"), Default: true, PreRelease: featuregate.Beta},
	},
	ServerOnly: {
		{Version: version.MustParse("1.25"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.33"), Default: true, PreRelease: featuregate.Beta},
	},
}
"""

EXTENSIONS = """\
package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const Ratchet featuregate.Feature = "Ratchet"

var gates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Ratchet: {{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.Beta}},
}
"""

#: client-go's own Feature type and an unversioned spec map (as before v1.35).
CLIENT = """\
package features

const (
	Streaming Feature = "Streaming"
	Cbor Feature = "Cbor"
)

var defaultGates = map[Feature]FeatureSpec{
	Streaming: {Default: false, PreRelease: Beta},
	Cbor:      {Default: false, PreRelease: Alpha},
}
"""

LOGS = """\
package v1

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const (
	LogContext featuregate.Feature = "LogContext"
	LogNeverRegistered featuregate.Feature = "LogNeverRegistered"
)

func featureGates() map[featuregate.Feature]featuregate.VersionedSpecs {
	return map[featuregate.Feature]featuregate.VersionedSpecs{
		LogContext: {
			{Version: version.MustParse("1.24"), Default: true, PreRelease: featuregate.Beta},
		},
	}
}
"""

EMPTY = """\
package features

import "k8s.io/component-base/featuregate"

func featureGates() map[featuregate.Feature]featuregate.VersionedSpecs {
	return map[featuregate.Feature]featuregate.VersionedSpecs{}
}
"""

#: Read for its names only: kube-scheduler does not register this map.
CCM = """\
package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const Webhooks featuregate.Feature = "Webhooks"

const CCMOnly featuregate.Feature = "CCMOnly"

var cloudGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	CCMOnly: {{Version: version.MustParse("1.27"), Default: true, PreRelease: featuregate.Beta}},
}
"""

#: (module, package directory, file) -> text: one synthetic release.
RELEASE: dict[tuple[str, str, str], str] = {
    ("k8s.io/kubernetes", "pkg/features", "kube_features.go"): MAIN,
    ("k8s.io/apiserver", "pkg/features", "kube_features.go"): GENERIC,
    ("k8s.io/apiextensions-apiserver", "pkg/features", "kube_features.go"): EXTENSIONS,
    ("k8s.io/client-go", "features", "known_features.go"): CLIENT,
    ("k8s.io/component-base", "logs/api/v1", "kube_features.go"): LOGS,
    ("k8s.io/component-base", "metrics/features", "kube_features.go"): EMPTY,
    ("k8s.io/component-base", "zpages/features", "kube_features.go"): EMPTY,
    ("k8s.io/controller-manager", "pkg/features", "kube_features.go"): CCM,
}


def write_tree(root: Path, layout: str, files: dict[tuple[str, str, str], str] = RELEASE) -> Path:
    """The release's files as a source tree ("tree": staging/src) or a vendoring module ("vendor")."""
    for (module, package, name), text in files.items():
        if layout == "tree":
            base = root if module == "k8s.io/kubernetes" else root / "staging" / "src" / module
        else:
            base = root / "vendor" / module
        path = base / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("k8s"), "tree")


# ------------------------------------------------------------------------------- one gate, one spec


def spec(minor: int, default: bool = False, locked: bool = False, stage: str = "Alpha", compat: int | None = None) -> Any:
    return gen.Spec((1, minor), default, locked, stage, None if compat is None else (1, compat))


@pytest.mark.parametrize(
    ("specs", "minor", "expected"),
    [
        ([spec(30), spec(32, True, stage="Beta")], 31, spec(30)),
        ([spec(30), spec(32, True, stage="Beta")], 32, spec(32, True, stage="Beta")),
        ([spec(30), spec(32, True, stage="Beta")], 40, spec(32, True, stage="Beta")),
        ([spec(35)], 34, None),  # only newer specs: not registered yet
        ([gen.Spec((0, 0), True, False, "Beta")], 20, gen.Spec((0, 0), True, False, "Beta")),  # unversioned
        # a spec for binaries whose minimum compatibility version is 1.37: not a plain 1.37 (1.36), a plain 1.38
        ([spec(37, stage="Beta"), spec(37, True, stage="Beta", compat=37)], 37, spec(37, stage="Beta")),
        ([spec(37, stage="Beta"), spec(37, True, stage="Beta", compat=37)], 38, spec(37, True, stage="Beta", compat=37)),
        ([spec(37, True, stage="Beta", compat=37)], 37, None),
    ],
)
def test_spec_at(specs: list[Any], minor: int, expected: Any) -> None:
    assert gen.spec_at(specs, minor) == expected


# ------------------------------------------------------------------------------ a release's table


@pytest.mark.parametrize(
    ("minor", "gate", "expected"),
    [
        (31, "Quick", (False, False, "Alpha")),
        (33, "Quick", (True, False, "Beta")),
        (34, "Quick", (True, True, "GA")),  # locked to its default
        (32, "Lazy", (True, False, "Deprecated")),
        (33, "Lazy", (False, True, "Deprecated")),  # locked to false
        (30, "Lazy", (True, False, "GA")),  # version.MajorMinor
        (33, "Plain", (True, False, "GA")),  # no PreRelease: Go's zero value, GA
        (33, "ShownName", (False, False, "Alpha")),  # the constant's value, not its name
        (34, "Later", None),  # its only spec is newer
        (35, "Later", (False, False, "Alpha")),
        (35, "Careful", (False, False, "Beta")),  # MinCompatibilityVersion 1.35: not for a plain 1.35
        (36, "Careful", (True, False, "Beta")),
        (37, "Careful", (True, True, "GA")),
        (33, "Shared", (True, False, "Beta")),  # listed by both pkg/features and the apiserver
        (32, "ServerOnly", (False, False, "Beta")),  # the apiserver's own map
        (33, "ServerOnly", (True, False, "Beta")),
        (33, "Ratchet", (True, False, "Beta")),
        (33, "Streaming", (False, False, "Beta")),  # client-go: one unversioned spec
        (33, "LogContext", (True, False, "Beta")),
        (33, "Webhooks", (False, False, "Alpha")),  # a controller-manager gate pkg/features lists
        (33, "CCMOnly", None),  # the controller-manager's own map is not registered
        (33, "LogNeverRegistered", None),  # a constant in no map
        (33, "Template", None),  # in a comment
        (33, "Gone", None),  # removed: a constant without specs
        (33, "Ghost", None),  # a map in a block comment
    ],
)
def test_table_at(tree: Path, minor: int, gate: str, expected: tuple[bool, bool, str] | None) -> None:
    table, _ = gen.read_release(tree, minor)
    assert table.gates.get(gate) == expected


@pytest.mark.parametrize(
    ("minor", "expected"),
    [
        # Quick's and Shared's empty lists are left out; Later is not registered at 1.34 yet
        (34, {"Lazy": ("Quick", "Shared"), "ShownName": ("Plain",)}),
        (35, {"Lazy": ("Quick", "Shared"), "Later": ("Streaming",), "ShownName": ("Plain",)}),
    ],
)
def test_dependencies(tree: Path, minor: int, expected: dict[str, tuple[str, ...]]) -> None:
    table, warnings = gen.read_release(tree, minor)
    assert table.dependencies == expected
    assert warnings == []


def test_a_spec_without_min_compatibility_keeps_the_one_before() -> None:
    """featuregate completes each spec: the minimum compatibility version never goes down."""
    registry = gen.build_registry([gen.parse_go_file(s, RELEASE[(s.module, s.package, s.file)])
                                   for s in gen.SOURCES if not s.optional])
    assert [s.min_compatibility for s in registry.specs["Careful"]] == [None, (1, 35), (1, 35)]


#: kube-scheduler's own feature-gate file in staging, for releases that have one.
SCHEDULER = """\
package features

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const Placement featuregate.Feature = "Placement"

var schedulerGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Placement: {{Version: version.MustParse("1.36"), Default: false, PreRelease: featuregate.Alpha}},
}
"""


@pytest.mark.parametrize("layout", ["tree", "vendor"])
def test_the_scheduler_file_is_read_where_there_is_one(tmp_path: Path, layout: str) -> None:
    files = {**RELEASE, ("k8s.io/kube-scheduler", "pkg/features", "kube_features.go"): SCHEDULER}
    with_it = write_tree(tmp_path / "with", layout, files)
    without = write_tree(tmp_path / "without", layout)
    assert gen.read_release(with_it, 36)[0].gates["Placement"] == (False, False, "Alpha")
    assert "Placement" not in gen.read_release(without, 36)[0].gates


def test_a_vendored_copy_reads_the_same(tree: Path, tmp_path: Path) -> None:
    vendored = write_tree(tmp_path, "vendor")
    assert gen.read_release(vendored, 35) == gen.read_release(tree, 35)


def test_missing_files_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = {k: v for k, v in RELEASE.items() if k[1] not in ("logs/api/v1", "features")}
    write_tree(tmp_path, "tree", files)
    assert gen.main(["--src", str(tmp_path), "--minor", "35"]) == 2
    err = capsys.readouterr().err
    assert "k8s.io/component-base/logs/api/v1/kube_features.go, looked for:" in err
    assert "k8s.io/client-go/features/known_features.go, looked for:" in err
    assert str(tmp_path / "staging" / "src" / "k8s.io" / "client-go" / "features" / "known_features.go") in err
    assert "apiserver" not in err


@pytest.mark.parametrize(
    ("main_text", "message"),
    [
        (
            MAIN.replace(
                '{Version: version.MustParse("1.29"), Default: true, PreRelease: featuregate.Beta},\n\t},\n\n\textfeatures',
                '{Version: version.MustParse("1.29"), Default: false, PreRelease: featuregate.Beta},\n\t},\n\n\textfeatures',
            ),
            "Shared is registered with different specs",
        ),
        (MAIN.replace("Lazy: {Quick,", "Lazy: {Unknown,"), "cannot resolve Unknown"),
        (MAIN.replace("\tregister(gates)", '\tgates["Extra"] = nil'), "gates[...] is assigned outside its literal"),
        (MAIN.replace("PreRelease: featuregate.Alpha},\n\t},\n\n\tCareful", "PreRelease: featuregate.Early},\n\t},\n\n\tCareful"), "unknown stage"),
        (MAIN.replace("Default: true, PreRelease: featuregate.GA}", "Default: on, PreRelease: featuregate.GA}"), "Default is not true or false"),
    ],
)
def test_sources_it_refuses(tmp_path: Path, main_text: str, message: str) -> None:
    assert main_text != MAIN
    files = dict(RELEASE)
    files[("k8s.io/kubernetes", "pkg/features", "kube_features.go")] = main_text
    write_tree(tmp_path, "tree", files)
    with pytest.raises(gen.GenerateError, match=re.escape(message)):
        gen.read_release(tmp_path, 35)


def test_reading_a_map_by_index_is_not_refused(tmp_path: Path) -> None:
    files = dict(RELEASE)
    files[("k8s.io/kubernetes", "pkg/features", "kube_features.go")] = MAIN.replace(
        "\tregister(gates)", "\tif gates[Quick] == nil {\n\t\tpanic(Quick)\n\t}"
    )
    write_tree(tmp_path, "tree", files)
    assert gen.read_release(tmp_path, 35)[0].gates["Quick"] == (True, True, "GA")


# ------------------------------------------------------- sources newer than the release: --keep, --drop

#: The release before 35 as gate_tables.py would hold it: Old is a gate the sources no longer register.
BEFORE = (34, gen.Table(
    {"Old": (True, True, "GA"), "Quick": (True, True, "GA"), "Lazy": (False, True, "Deprecated")},
    {"Old": ("Quick",), "Lazy": ("Old", "Quick")},
))


def test_keep_takes_a_gate_as_the_release_before_had_it(tree: Path) -> None:
    table, warnings = gen.read_release(tree, 35, gen.Overrides(keep=("Old",)), BEFORE)
    assert table.gates["Old"] == (True, True, "GA")
    assert table.dependencies["Old"] == ("Quick",)
    # back in its old place in Lazy's list; Shared, which the sources add, after it
    assert table.dependencies["Lazy"] == ("Old", "Quick", "Shared")
    assert list(table.gates) == sorted(table.gates)
    assert warnings == []


def test_drop_leaves_a_gate_out_and_out_of_every_dependency_list(tree: Path) -> None:
    table, _ = gen.read_release(tree, 35, gen.Overrides(drop=("Later", "Plain")))
    assert "Later" not in table.gates and "Plain" not in table.gates
    assert "Later" not in table.dependencies
    assert "ShownName" not in table.dependencies  # its only dependency, Plain, is gone


def test_drop_skips_a_gate_named_through_a_package_that_does_not_declare_it(tmp_path: Path) -> None:
    """A newer pkg/features may relist a gate the (older) apiserver sources do not declare yet."""
    files = dict(RELEASE)
    files[("k8s.io/kubernetes", "pkg/features", "kube_features.go")] = MAIN.replace(
        "\tgenericfeatures.Shared: {},",
        "\tgenericfeatures.Shared: {},\n\n\tgenericfeatures.Newer: {},",
    ).replace(
        "\tgenericfeatures.Shared: {\n",
        '\tgenericfeatures.Newer: {\n\t\t{Version: version.MustParse("1.38"), PreRelease: featuregate.Alpha},\n\t},\n\n\tgenericfeatures.Shared: {\n',
    )
    write_tree(tmp_path, "tree", files)
    with pytest.raises(gen.GenerateError, match=re.escape("cannot resolve genericfeatures.Newer")):
        gen.read_release(tmp_path, 35)
    table, _ = gen.read_release(tmp_path, 35, gen.Overrides(drop=("Newer",)))
    assert table == gen.read_release(tree_of(tmp_path / "plain"), 35)[0]


def tree_of(root: Path) -> Path:
    return write_tree(root, "tree")


@pytest.mark.parametrize(
    ("minor", "overrides", "previous", "message"),
    [
        (35, gen.Overrides(keep=("Quick",)), BEFORE, "--keep Quick: the sources still register Quick at 1.35"),
        (35, gen.Overrides(keep=("Nowhere",)), BEFORE, "--keep Nowhere: 1.34 has no gate Nowhere"),
        (35, gen.Overrides(keep=("Old",)), None, "--keep needs the release before"),
        (35, gen.Overrides(drop=("Nowhere",)), None, "--drop Nowhere: the sources do not register Nowhere at 1.35"),
        (34, gen.Overrides(drop=("Later",)), None, "--drop Later: the sources do not register Later at 1.34"),
    ],
)
def test_overrides_it_refuses(tree: Path, minor: int, overrides: Any, previous: Any, message: str) -> None:
    with pytest.raises(gen.GenerateError, match=re.escape(message)):
        gen.read_release(tree, minor, overrides, previous)


def test_keep_and_drop_on_the_command_line(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tables.py"
    path.write_text(_head() + RENDERED)
    assert gen.main(["--src", str(tree), "--minor", "35", "--tables", str(path), "--keep", "A", "--drop", "Later"]) == 0
    printed = capsys.readouterr().out
    assert '        "A": (True, False, BETA),\n' not in printed  # kept as release 3 had it: no change to print
    assert '"Later"' not in printed
    assert gen.main(["--src", str(tree), "--minor", "35", "--tables", str(path), "--keep", "A", "--write"]) == 0
    assert gen.load_tables(path)[35].gates["A"] == (True, False, "Beta")


# ----------------------------------------------------------------------------- the delta format


def table_of(gates: dict[str, tuple[bool, bool, str]], deps: dict[str, tuple[str, ...]] | None = None) -> Any:
    return gen.Table(gates, deps or {})


TWO_RELEASES = {
    1: table_of({"A": (False, False, "Alpha"), "B": (True, True, "GA")}),
    2: table_of({"A": (True, False, "Beta"), "C": (False, False, "Alpha")}, {"C": ("A",)}),
    3: table_of({"A": (True, False, "Beta"), "C": (False, False, "Alpha")}, {"C": ("A", "B")}),
}

RENDERED = '''\
GATES_V1_1: dict[str, Gate] = {
    "A": (False, False, ALPHA),
    "B": (True, True, GA),
}

GATES_V1_2: dict[str, Gate] = _next(
    GATES_V1_1,
    {
        "A": (True, False, BETA),
        "C": (False, False, ALPHA),
    },
    (
        "B",
    ),
)

GATES_V1_3: dict[str, Gate] = _next(
    GATES_V1_2,
    {},
    (),
)

DEPENDENCIES_V1_1: dict[str, tuple[str, ...]] = {}

DEPENDENCIES_V1_2: dict[str, tuple[str, ...]] = {
    "C": ("A",),
}

DEPENDENCIES_V1_3: dict[str, tuple[str, ...]] = _next_dependencies(
    DEPENDENCIES_V1_2,
    {
        "C": ("A", "B"),
    },
    (),
)
'''


def _head() -> str:
    """The hand-written part of the real gate_tables.py (docstring, constants, helpers)."""
    text = TABLES.read_text()
    return text[: text.index("\nGATES_V1_") + 1]


def test_render_tables_writes_each_release_as_a_change() -> None:
    assert gen.render_tables(TWO_RELEASES) == RENDERED


def test_rendered_tables_read_back(tmp_path: Path) -> None:
    path = tmp_path / "tables.py"
    path.write_text(_head() + RENDERED)
    assert gen.load_tables(path) == TWO_RELEASES


def test_write_keeps_later_releases_whole(tmp_path: Path) -> None:
    """Rewriting release 2 changes how release 3 is written, never what it holds."""
    path = tmp_path / "tables.py"
    path.write_text(_head() + RENDERED)
    new_two = table_of({"A": (True, False, "Beta"), "D": (True, False, "Beta")})
    gen.write_release(path, 2, new_two)
    tables = gen.load_tables(path)
    assert tables == {1: TWO_RELEASES[1], 2: new_two, 3: TWO_RELEASES[3]}
    assert path.read_text().startswith(_head())


def test_write_adds_a_release(tree: Path, tmp_path: Path) -> None:
    path = tmp_path / "tables.py"
    path.write_text(_head() + RENDERED)
    assert gen.main(["--src", str(tree), "--minor", "35", "--tables", str(path), "--write"]) == 0
    tables = gen.load_tables(path)
    assert sorted(tables) == [1, 2, 3, 35]
    assert tables[35] == gen.read_release(tree, 35)[0]
    assert "GATES_V1_35: dict[str, Gate] = _next(\n    GATES_V1_3," in path.read_text()


def test_print_and_check(tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tables.py"
    path.write_text(_head() + RENDERED)
    assert gen.main(["--src", str(tree), "--minor", "34", "--tables", str(path)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("GATES_V1_34: dict[str, Gate] = _next(\n    GATES_V1_3,\n")
    assert '        "Lazy": (False, True, DEPRECATED),\n' in printed
    assert gen.main(["--src", str(tree), "--minor", "34", "--tables", str(path), "--check"]) == 1
    assert "has no table for 1.34" in capsys.readouterr().err
    gen.write_release(path, 34, gen.read_release(tree, 34)[0])
    assert gen.main(["--src", str(tree), "--minor", "34", "--tables", str(path), "--check"]) == 0
    gen.write_release(path, 34, table_of({"Quick": (True, True, "GA")}))
    assert gen.main(["--src", str(tree), "--minor", "34", "--tables", str(path), "--check"]) == 1
    out = capsys.readouterr().out
    assert "1.34 gate Quick" not in out  # the same
    assert "1.34 gate Lazy: checked in None, sources say (False, True, 'Deprecated')" in out
    assert "1.34 dependencies of Lazy: checked in None, sources say ('Quick', 'Shared')" in out


def test_checked_in_tables_are_in_the_generated_form() -> None:
    """gate_tables.py holds exactly what the generator writes for its own tables."""
    text = TABLES.read_text()
    assert text == _head() + gen.render_tables(gen.load_tables(TABLES))
