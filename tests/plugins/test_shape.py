"""Every in-tree plugin has the one shape kschedctl.plugins describes: its plugin module holds NAME,
ARGS_MODEL when it takes args, and ``new(args: <ArgsModel> | None, handle: Handle)``; a plugin of
several modules is a package whose ``plugin.py`` is that module and whose ``__init__.py`` is only a
docstring."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from kschedctl.config.args import ARGS_MODELS, NodeAffinityArgs
from kschedctl.plugins import IN_TREE_MODULES, in_tree_registry, plugin_module
from kschedctl.testing import SnapshotHandle

PLUGINS = Path(importlib.import_module("kschedctl.plugins").__file__ or "").parent
PACKAGES = sorted(p.parent.name for p in PLUGINS.glob("*/__init__.py"))


def test_there_are_23_in_tree_plugins() -> None:
    assert len(IN_TREE_MODULES) == 23


@pytest.mark.parametrize(("name", "where"), sorted(IN_TREE_MODULES.items()))
def test_the_plugin_module(name: str, where: str) -> None:
    mod = plugin_module(where)
    assert name == mod.NAME
    model = ARGS_MODELS.get(name)
    assert getattr(mod, "ARGS_MODEL", None) is model
    params = inspect.signature(mod.new).parameters
    assert list(params) == ["args", "handle"]
    assert params["args"].annotation == (f"{model.__name__} | None" if model is not None else "None")
    assert params["handle"].annotation == "Handle"


@pytest.mark.parametrize("where", sorted(IN_TREE_MODULES.values()))
def test_the_layout(where: str) -> None:
    path = PLUGINS.joinpath(*where.split(".")[2:])
    if path.is_dir():  # plugins/<name>/ with its plugin.py
        assert (path / "plugin.py").is_file()
    else:  # plugins/<name>.py, or one of the two plugin modules of noderesources
        assert path.with_suffix(".py").is_file()
        assert path.parent == PLUGINS or where.rpartition(".")[0] == "kschedctl.plugins.noderesources"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_init_is_only_its_docstring(package: str) -> None:
    body = ast.parse((PLUGINS / package / "__init__.py").read_text()).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


@pytest.mark.parametrize(
    ("name", "given", "got"),
    [
        ("NodeName", {"ignored": True}, None),  # kube-scheduler's plugins without args ignore theirs
        ("NodeName", None, None),
        ("NodeAffinity", NodeAffinityArgs(), NodeAffinityArgs()),
        ("NodeAffinity", None, None),
    ],
)
def test_the_in_tree_factory_hands_typed_args(monkeypatch: pytest.MonkeyPatch, name: str, given: object, got: object) -> None:
    seen: list[object] = []
    monkeypatch.setattr(plugin_module(IN_TREE_MODULES[name]), "new", lambda args, handle: seen.append(args))
    entry = in_tree_registry().get(name)
    assert entry is not None
    entry.factory(given, SnapshotHandle())
    assert seen == [got]
