"""DynamicResources (DRA) and its CEL evaluator, against kube-scheduler v1.35's behaviour."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kschedctl.config.args import DynamicResourcesArgs
from kschedctl.framework.cycle_state import CycleState
from kschedctl.framework.interfaces import NodeScore
from kschedctl.framework.nodeinfos import Snapshot
from kschedctl.framework.status import Code, Status
from kschedctl.kube.cel import (
    CelCompileError,
    CelError,
    CelUnsupported,
    ProgramCache,
    Semver,
    compile_expression,
    device_value,
)
from kschedctl.kube.quantity import parse_quantity
from kschedctl.plugins.dynamicresources import plugin as dr
from kschedctl.snapshot.model import KubeObject
from tests.builders import FakeHandle, PodBuilder, make_node, make_pod, make_snapshot

# --------------------------------------------------------------------------- CEL

DEVICE = device_value(
    "gpu.example.com",
    {
        "model": "a100",
        "index": 1,
        "healthy": True,
        "cc": Semver.parse("8.9.0"),
        "other.io/zone": "z1",
    },
    {"memory": parse_quantity("32Gi")},
)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.driver != "gpu.example.com"', False),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].model == "h100"', False),
        ('device.attributes["other.io"].zone == "z1"', True),
        ('device.attributes["gpu.example.com"].index > 0 && device.attributes["gpu.example.com"].healthy', True),
        ('device.attributes["gpu.example.com"].index >= 1.0', True),  # cross-type numeric comparison
        ('device.attributes["gpu.example.com"].index == 1u', True),
        ('device.attributes["gpu.example.com"].model == 1', False),  # heterogeneous equality
        ('has(device.attributes["gpu.example.com"].model)', True),
        ('has(device.attributes["gpu.example.com"].missing)', False),
        ("has(device.attributes.nowhere)", True),  # unknown domains read as an empty map
        ('"nowhere" in device.attributes', False),
        ('"model" in device.attributes["gpu.example.com"]', True),
        ('device.attributes["gpu.example.com"].model.startsWith("a1")', True),
        ('device.attributes["gpu.example.com"].model.endsWith("00")', True),
        ('device.attributes["gpu.example.com"].model.contains("10")', True),
        ('device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', True),
        ('device.attributes["gpu.example.com"].model.upperAscii() == "A100"', True),
        ("device.driver.size() == 15 && size(device.driver) == 15", True),
        ('device.driver in ["x", "gpu.example.com"]', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) > 0', True),
        ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("32Gi"))', False),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', True),
        ('device.capacity["gpu.example.com"].memory == quantity("32Gi")', True),
        ('device.capacity["gpu.example.com"].memory.asInteger() == 34359738368', True),
        ('device.capacity["gpu.example.com"].memory.add(quantity("1Gi")) == quantity("33Gi")', True),
        ('device.attributes["gpu.example.com"].cc.isGreaterThan(semver("8.0.0"))', True),
        ('device.attributes["gpu.example.com"].cc.compareTo(semver("8.9.0")) == 0', True),
        ('device.attributes["gpu.example.com"].cc.major() == 8', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.2").isGreaterThan(semver("1.0.0-alpha.10"))', False),
        ('cel.bind(g, device.attributes["gpu.example.com"], g.model == "a100" && g.index == 1)', True),
        ("[1, 2, 3].all(x, x > 0) && [1, 2].exists(x, x == 2) && [1, 2].exists_one(x, x > 1)", True),
        ("[1, 2].map(x, x * 2) == [2, 4] && [1, 2, 3].filter(x, x > 1) == [2, 3]", True),
        ("7 / -2 == -3 && 7 % -2 == 1 && -7 % 2 == -1", True),
        ('device.driver == "x" ? false : true', True),
        ("false && 1 / 0 == 1", False),  # the error is absorbed by the false operand
        ("1 / 0 == 1 || true", True),
        ('{"a": 1}["a"] == 1 && {"a": 1}.a == 1', True),
        ("'\\x41' == 'A' && \"\\u00e9\" == 'é' && r'\\d' == '\\\\d'", True),
        ("-9223372036854775808 < 0", True),
        ('int("12") == 12 && string(12) == "12" && double(1) == 1.0 && uint(3) == 3u', True),
        ('"a,b".split(",") == ["a", "b"] && ["a", "b"].join("-") == "a-b"', True),
        ('"hello".substring(1, 3) == "el" && "hello".indexOf("l") == 2 && "hello".lastIndexOf("l") == 3', True),
    ],
)
def test_cel_evaluates(expr: str, want: bool) -> None:
    assert compile_expression(expr).evaluate(DEVICE) is want


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ('device.attributes["gpu.example.com"].missing == "x"', "no such key: missing"),
        ('device.attributes["nowhere"].model == "x"', "no such key: model"),
        ('device.attributes["gpu.example.com"].missing == "x" && true', "no such key: missing"),
        ("9223372036854775807 + 1 > 0", "integer overflow"),
        ("1 / 0 == 1", "division by zero"),
        ("1 % 0 == 1", "modulus by zero"),
        ('device.attributes["gpu.example.com"].model > 1', "no such overload"),
        ("[1][3] == 1", "index out of bounds: 3"),
        ('device.capacity["gpu.example.com"].memory.mul(1000000000000).asInteger() > 0', "cannot convert value to integer"),
        ('device.attributes["gpu.example.com"].model', "CEL result of type string could not be converted to bool"),
    ],
)
def test_cel_runtime_errors(expr: str, message: str) -> None:
    with pytest.raises(CelError) as exc:
        compile_expression(expr).evaluate(DEVICE)
    assert str(exc.value).startswith(message)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (
            "x == 1",
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x == 1\n | ^",
        ),
        (
            "device.foo == 1",
            "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1\n | ......^",
        ),
        (
            'device.driver == 1',
            "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'"
            "\n | device.driver == 1\n | ..............^",
        ),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ("device.attributes['x'].foo + 1", "must evaluate to bool or the unknown type, not int"),
        ("2.0 * device.attributes['x'].foo", "must evaluate to bool or the unknown type, not double"),
        ("device.driver ==", "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting expression"),
        ("foo(1)", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')"),
    ],
)
def test_cel_compile_errors(expr: str, message: str) -> None:
    with pytest.raises(CelCompileError) as exc:
        compile_expression(expr)
    assert not isinstance(exc.value, CelUnsupported)
    assert str(exc.value).startswith(message)


@pytest.mark.parametrize(
    "expr",
    [
        'timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z")',
        'device.attributes["gpu.example.com"]?.model == "x"',
        'isIP("10.0.0.1")',
        "[1, 2].all(i, v, v > 0)",
        "type(1) == int",
    ],
)
def test_cel_unsupported_is_reported(expr: str) -> None:
    with pytest.raises(CelUnsupported) as exc:
        compile_expression(expr)
    assert str(exc.value).startswith("expression not supported by kschedctl: ")


def test_cel_program_cache_keeps_compile_errors() -> None:
    cache = ProgramCache()
    with pytest.raises(CelCompileError):
        cache.get("nope")
    with pytest.raises(CelCompileError):
        cache.get("nope")
    assert cache.get("true").evaluate(DEVICE) is True


# --------------------------------------------------------------------------- builders

DRIVER = "gpu.example.com"


def device_class(name: str = DRIVER, *selectors: str) -> KubeObject:
    sels = list(selectors) or [f'device.driver == "{DRIVER}"']
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": s}} for s in sels]},
    }
    return KubeObject(raw, "DeviceClass", False)


def gpu(name: str, model: str = "a100", memory: str = "40Gi", **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": name,
        "attributes": {"model": {"string": model}, "index": {"int": int(name.rsplit("-", 1)[-1])}},
        "capacity": {"memory": {"value": memory}},
    }
    d.update(extra)
    return d


def resource_slice(
    name: str,
    devices: list[dict[str, Any]],
    node: str | None = None,
    *,
    pool: str | None = None,
    driver: str = DRIVER,
    count: int = 1,
    generation: int = 1,
    **spec: Any,
) -> KubeObject:
    s: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or name, "generation": generation, "resourceSliceCount": count},
        "devices": devices,
    }
    if node:
        s["nodeName"] = node
    s.update(spec)
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": s}
    return KubeObject(raw, "ResourceSlice", False)


def exactly(name: str = "gpu", count: int | None = 1, cls: str = DRIVER, *selectors: str, **extra: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"deviceClassName": cls}
    if count is not None:
        e["allocationMode"] = "ExactCount"
        e["count"] = count
    if selectors:
        e["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    e.update(extra)
    return {"name": name, "exactly": e}


def claim(
    name: str,
    *requests: dict[str, Any],
    namespace: str = "default",
    allocation: dict[str, Any] | None = None,
    reserved_for: list[str] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    owner_uid: str | None = None,
    deleting: bool = False,
) -> KubeObject:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid, "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    devices: dict[str, Any] = {"requests": list(requests) or [exactly()]}
    if constraints:
        devices["constraints"] = constraints
    raw: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": {"devices": devices}}
    status: dict[str, Any] = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": u, "uid": u} for u in reserved_for]
    if status:
        raw["status"] = status
    return KubeObject(raw, "ResourceClaim", True)


def allocated_on(node: str, *devices: str, pool: str | None = None) -> dict[str, Any]:
    return {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": pool or node, "device": d} for d in devices]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
        },
    }


def pod_with(*claims: str) -> PodBuilder:
    p = make_pod("p").uid("uid-pod")
    for c in claims:
        p.resource_claim(c, claim_name=c)
    return p


NODES = [make_node("n1"), make_node("n2"), make_node("n3")]


def claim_allocations(state: CycleState) -> list[tuple[str, dict[str, Any] | None, bool]]:
    """(claim, allocation as the API would show it, newly allocated) after Reserve, from the cycle state."""
    s = state.get(dr.STATE_KEY)
    if s is None:
        return []
    out: list[tuple[str, dict[str, Any] | None, bool]] = []
    for i, c in enumerate(s.claims):
        if c.allocation is not None:
            out.append((c.key, c.allocation.to_dict(), False))
        else:
            a = s.reserved.get(i)
            out.append((c.key, None if a is None else a.to_dict(), True))
    return out


class Run:
    """The plugin over a snapshot, run through the extension points like the framework does."""

    def __init__(
        self, objects: list[KubeObject], pod: PodBuilder, nodes: list[Any] | None = None, args: dict[str, Any] | None = None
    ) -> None:
        self.snapshot: Snapshot = make_snapshot(nodes or NODES, [], objects)
        model = None if args is None else DynamicResourcesArgs.model_validate(args)
        self.plugin = dr.new(model, FakeHandle(self.snapshot))
        self.pod = pod.build()
        self.state = CycleState()

    def pre_filter(self) -> Status:
        result, st = self.plugin.pre_filter(self.state, self.pod, self.snapshot.node_info_list)
        assert result is None
        return st

    def filter(self, node: str) -> Status:
        ni = self.snapshot.get(node)
        assert ni is not None
        return self.plugin.filter(self.state, self.pod, ni)

    def filters(self) -> dict[str, tuple[str, list[str]]]:
        out = {}
        for ni in self.snapshot.node_info_list:
            st = self.filter(ni.name)
            out[ni.name] = (st.code.label, st.reasons)
        return out

    def score(self, node: str) -> tuple[int, Status]:
        ni = self.snapshot.get(node)
        assert ni is not None
        return self.plugin.score(self.state, self.pod, ni)


OK = ("Success", [])
CANNOT = ("UnschedulableAndUnresolvable", ["cannot allocate all claims"])
NOT_HERE = ("UnschedulableAndUnresolvable", ["resourceclaim not available on the node"])


def two_gpu_slices() -> list[KubeObject]:
    return [
        resource_slice("s1", [gpu("gpu-0"), gpu("gpu-1")], "n1"),
        resource_slice("s2", [gpu("gpu-0", model="h100")], "n2"),
    ]


# --------------------------------------------------------------------------- plugin: no claims


def test_extension_points_match_upstream() -> None:
    pl = dr.new(None, FakeHandle())
    assert dr.NAME == "DynamicResources" and pl.name == "DynamicResources"
    for method in ("pre_enqueue", "pre_filter", "filter", "post_filter", "score", "reserve", "unreserve",
                   "pre_bind_pre_flight", "pre_bind"):
        assert callable(getattr(pl, method))
    assert not hasattr(pl, "pre_score")
    assert not hasattr(pl, "permit")
    assert pl.pre_filter_extensions() is None
    assert pl.score_extensions() is not None


def test_pod_without_claims() -> None:
    r = Run([], make_pod("p"))
    assert r.plugin.pre_enqueue(r.pod).code == Code.SUCCESS
    assert r.pre_filter().code == Code.SKIP
    assert r.filter("n1").code == Code.SUCCESS
    value, st = r.score("n1")
    assert value == 0 and st.is_success()
    _, pst = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert (pst.code, pst.reasons) == (Code.UNSCHEDULABLE, ["no new claims to deallocate"])
    assert r.plugin.reserve(r.state, r.pod, "n1").is_success()
    assert r.plugin.pre_bind_pre_flight(r.state, r.pod, "n1").code == Code.SKIP


def test_without_pre_filter_state_reads_fail_with_not_found() -> None:
    r = Run([], make_pod("p"))
    _, st = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert (st.code, st.reasons) == (Code.ERROR, ["not found"])
    assert r.filter("n1").reasons == ["not found"]
    assert r.score("n1")[1].code == Code.ERROR
    assert r.plugin.reserve(r.state, r.pod, "n1").code == Code.ERROR
    assert r.plugin.pre_bind_pre_flight(r.state, r.pod, "n1").code == Code.ERROR


def test_normalize_score_scales_to_100() -> None:
    pl = dr.new(None, FakeHandle())
    scores = [NodeScore("a", 7), NodeScore("b", 8), NodeScore("c", 0)]
    assert pl.score_extensions().normalize_score(CycleState(), make_pod().build(), scores).is_success()
    assert [s.score for s in scores] == [87, 100, 0]


# --------------------------------------------------------------------------- PreEnqueue / PreFilter


def _template_pod(status_name: str | None, with_status: bool = True) -> PodBuilder:
    p = make_pod("p").uid("uid-pod").resource_claim("gpu", template="gpu-template")
    if with_status:
        p.set("status.resourceClaimStatuses", [{"name": "gpu", "resourceClaimName": status_name}])
    return p


@pytest.mark.parametrize(
    ("objects", "pod", "message"),
    [
        ([], pod_with("missing"), 'could not find ResourceClaim "default/missing"'),
        ([claim("c", deleting=True)], pod_with("c"), 'resourceclaim "c" is being deleted'),
        ([], _template_pod(None, with_status=False), 'pod "default/p": ResourceClaim not created yet'),
        (
            [claim("p-gpu", owner_uid="someone-else")],
            _template_pod("p-gpu"),
            "ResourceClaim default/p-gpu was not created for pod default/p (pod is not owner)",
        ),
        (
            [],
            make_pod("p").set("spec.resourceClaims", [{"name": "gpu"}]),
            'pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set',
        ),
    ],
)
def test_unusable_claims_stop_pre_enqueue_and_pre_filter(objects: list[KubeObject], pod: PodBuilder, message: str) -> None:
    r = Run(objects, pod)
    st = r.plugin.pre_enqueue(r.pod)
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [message])
    st = r.pre_filter()
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [message])
    # PreFilter gave up before recording the claims: PostFilter has nothing to deallocate.
    _, pst = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert pst.reasons == ["no new claims to deallocate"]


def test_template_claim_owned_by_pod_is_used() -> None:
    r = Run([device_class(), *two_gpu_slices(), claim("p-gpu", owner_uid="uid-pod")], _template_pod("p-gpu"))
    assert r.plugin.pre_enqueue(r.pod).is_success()
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": OK, "n2": OK, "n3": CANNOT}


def test_template_entry_without_generated_claim_is_skipped() -> None:
    r = Run([], _template_pod(None))
    assert r.plugin.pre_enqueue(r.pod).is_success()
    assert r.pre_filter().code == Code.SKIP


@pytest.mark.parametrize(
    ("request_", "status"),
    [
        (exactly(cls="nope"), Status.unresolvable("request gpu: device class nope does not exist")),
        (exactly(cls=""), Status.as_error("request gpu: unsupported request type")),
        (
            {"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": DRIVER}, {"name": "small", "deviceClassName": "nope"}]},
            Status.unresolvable("request gpu/small: device class nope does not exist"),
        ),
        ({"name": "gpu"}, Status.unresolvable("resource claim default/c, request gpu: unknown request type")),
    ],
)
def test_pre_filter_checks_requests_of_unallocated_claims(request_: dict[str, Any], status: Status) -> None:
    r = Run([device_class(), claim("c", request_)], pod_with("c"))
    st = r.pre_filter()
    assert (st.code, st.reasons) == (status.code, status.reasons)


def test_allocated_claim_is_not_validated_again() -> None:
    c = claim("c", exactly(cls="gone"), allocation=allocated_on("n2", "gpu-0"), reserved_for=["other"])
    r = Run([c], pod_with("c"))
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": NOT_HERE, "n2": OK, "n3": NOT_HERE}


# --------------------------------------------------------------------------- Filter


def test_allocates_free_matching_devices_per_node() -> None:
    objs = [device_class(), *two_gpu_slices(), claim("c", exactly(count=2))]
    r = Run(objs, pod_with("c"))
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": OK, "n2": CANNOT, "n3": CANNOT}
    assert r.plugin.reserve(r.state, r.pod, "n1").is_success()
    [(key, alloc, new)] = claim_allocations(r.state)
    assert key == "default/c" and new
    assert alloc == {
        "devices": {
            "results": [
                {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"},
                {"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-1"},
            ]
        },
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
    }
    assert r.plugin.pre_bind_pre_flight(r.state, r.pod, "n1").is_success()
    assert r.plugin.pre_bind(r.state, r.pod, "n1").is_success()


def test_devices_of_other_allocated_claims_are_in_use() -> None:
    other = claim("other", allocation=allocated_on("n1", "gpu-0"), reserved_for=["x"])
    admin = claim("admin", allocation={"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "n2", "device": "gpu-0", "adminAccess": True}]}})
    objs = [device_class(), *two_gpu_slices(), other, admin, claim("c", exactly(count=2))]
    r = Run(objs, pod_with("c"))
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": CANNOT, "n2": CANNOT, "n3": CANNOT}

    r = Run([*objs[:-1], claim("c")], pod_with("c"))
    r.pre_filter()
    # gpu-1 is still free on n1; admin-access allocations do not use up n2's device.
    assert r.filters() == {"n1": OK, "n2": OK, "n3": CANNOT}


def test_request_and_class_selectors() -> None:
    objs = [
        device_class("a100", f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "a100"'),
        device_class(),
        *two_gpu_slices(),
        claim("c1", exactly(cls="a100")),
        claim("c2", exactly("gpu", 1, DRIVER, f'device.attributes["{DRIVER}"].model == "h100"')),
        claim("c3", exactly("gpu", 1, DRIVER, f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0')),
    ]
    for name, want in (("c1", ["n1"]), ("c2", ["n2"]), ("c3", [])):
        r = Run(objs, pod_with(name))
        assert r.pre_filter().is_success()
        got = r.filters()
        assert [n for n, st in got.items() if st == OK] == want, name
        assert all(st == CANNOT for n, st in got.items() if n not in want)


def test_two_claims_do_not_share_a_device() -> None:
    objs = [device_class(), *two_gpu_slices(), claim("a"), claim("b"), claim("c")]
    r = Run(objs, pod_with("a", "b"))
    r.pre_filter()
    assert r.filters() == {"n1": OK, "n2": CANNOT, "n3": CANNOT}
    r = Run(objs, pod_with("a", "b", "c"))
    r.pre_filter()
    assert r.filters() == {"n1": CANNOT, "n2": CANNOT, "n3": CANNOT}


def test_cel_runtime_error_is_a_filter_error() -> None:
    devices = [gpu("gpu-0"), {"name": "gpu-1", "attributes": {}}]
    objs = [
        device_class(),
        resource_slice("s1", devices, "n1"),
        claim("c", exactly("gpu", 2, DRIVER, f'device.attributes["{DRIVER}"].model == "a100"')),
    ]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    st = r.filter("n1")
    assert (st.code, st.reasons) == (Code.ERROR, ["claim default/c: selector #0: CEL runtime error: no such key: model"])
    # Nodes without devices never evaluate the selector.
    assert r.filter("n2").reasons == ["cannot allocate all claims"]


def test_class_compile_error_names_the_class() -> None:
    objs = [device_class(DRIVER, "device.nope"), *two_gpu_slices(), claim("c")]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    st = r.filter("n1")
    assert st.code == Code.ERROR
    assert st.reasons[0].startswith(
        f"class {DRIVER}: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:7: undefined field 'nope'"
    )


def test_unsupported_cel_is_reported_clearly() -> None:
    objs = [device_class(DRIVER, 'isIP("1.2.3.4")'), *two_gpu_slices(), claim("c")]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    st = r.filter("n1")
    assert st.code == Code.ERROR
    assert st.reasons[0].startswith(f"class {DRIVER}: selector #0: CEL expression not supported by kschedctl: ")


def test_network_attached_slices() -> None:
    objs = [
        device_class(),
        resource_slice("everywhere", [gpu("gpu-0")], pool="shared", allNodes=True),
        resource_slice(
            "zonal",
            [gpu("gpu-0")],
            pool="zonal",
            nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
        ),
        claim("c", exactly(count=2)),
    ]
    nodes = [make_node("n1").label("zone", "a"), make_node("n2")]
    r = Run(objs, pod_with("c"), nodes)
    r.pre_filter()
    assert r.filters() == {"n1": OK, "n2": CANNOT}
    r.plugin.reserve(r.state, r.pod, "n1")
    [(_, alloc, _)] = claim_allocations(r.state)
    assert alloc is not None
    assert alloc["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
    }


def test_incomplete_and_invalid_pools() -> None:
    incomplete = resource_slice("s1", [gpu("gpu-0")], "n1", count=2)
    dup = [resource_slice("s2a", [gpu("gpu-0")], "n2", count=2), resource_slice("s2b", [gpu("gpu-0")], "n2", count=2)]
    objs = [device_class(), incomplete, *dup, claim("c")]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    assert r.filters() == {
        "n1": CANNOT,
        "n2": ("UnschedulableAndUnresolvable", ["invalid resource pools were encountered"]),
        "n3": CANNOT,
    }
    r = Run([*objs[:-1], claim("c", {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All"}})], pod_with("c"))
    r.pre_filter()
    st = r.filter("n1")
    assert (st.code, st.reasons) == (
        Code.ERROR,
        ["claim default/c, request gpu: asks for all devices, but resource pool gpu.example.com/n1 is currently being updated"],
    )


def test_obsolete_pool_generation_is_ignored() -> None:
    old = resource_slice("old", [gpu("gpu-0")], "n1", pool="p", count=2, generation=1)
    new_elsewhere = resource_slice("new", [gpu("gpu-9")], "n2", pool="p", count=1, generation=2)
    r = Run([device_class(), old, new_elsewhere, claim("c")], pod_with("c"))
    r.pre_filter()
    assert r.filters() == {"n1": CANNOT, "n2": OK, "n3": CANNOT}


def test_allocation_mode_all() -> None:
    req = {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All"}}
    objs = [device_class(), *two_gpu_slices(), claim("other", allocation=allocated_on("n2", "gpu-0")), claim("c", req)]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    assert r.filters() == {"n1": OK, "n2": CANNOT, "n3": CANNOT}
    r.plugin.reserve(r.state, r.pod, "n1")
    [(_, alloc, _)] = claim_allocations(r.state)
    assert alloc is not None and [d["device"] for d in alloc["devices"]["results"]] == ["gpu-0", "gpu-1"]


def test_too_many_devices_is_an_error() -> None:
    r = Run([device_class(), *two_gpu_slices(), claim("c", exactly(count=33))], pod_with("c"))
    r.pre_filter()
    st = r.filter("n1")
    assert (st.code, st.reasons) == (Code.ERROR, ["claim default/c: number of requested devices 33 exceeds the claim limit of 32"])


def test_match_attribute_constraint() -> None:
    devices = [
        {"name": "gpu-0", "attributes": {"numa": {"int": 0}}},
        {"name": "gpu-1", "attributes": {"numa": {"int": 1}}},
        {"name": "gpu-2", "attributes": {f"{DRIVER}/numa": {"int": 1}}},
    ]
    cons = [{"requests": [], "matchAttribute": f"{DRIVER}/numa"}]
    objs = [device_class(), resource_slice("s1", devices, "n1"), claim("c", exactly(count=2), constraints=cons)]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    assert r.filter("n1").is_success()
    r.plugin.reserve(r.state, r.pod, "n1")
    [(_, alloc, _)] = claim_allocations(r.state)
    assert alloc is not None and [d["device"] for d in alloc["devices"]["results"]] == ["gpu-1", "gpu-2"]
    three = claim("c", exactly(count=3), constraints=cons)
    r = Run([*objs[:-1], three], pod_with("c"))
    r.pre_filter()
    assert r.filter("n1").reasons == ["cannot allocate all claims"]


def test_admin_access_may_use_devices_in_use() -> None:
    other = claim("other", allocation=allocated_on("n1", "gpu-0", "gpu-1"))
    objs = [device_class(), *two_gpu_slices(), other, claim("c", exactly(count=2, adminAccess=True))]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    assert r.filter("n1").is_success()


def test_devices_needing_disabled_features_are_skipped() -> None:
    devices = [gpu("gpu-0", bindingConditions=["ready"]), gpu("gpu-1", consumesCounters=[{"counterSet": "x", "counters": {}}])]
    objs = [device_class(), resource_slice("s1", devices, "n1"),
            resource_slice("s3", [gpu("gpu-0")], "n3", perDeviceNodeSelection=True), claim("c")]
    r = Run(objs, pod_with("c"))
    r.pre_filter()
    assert r.filters() == {"n1": CANNOT, "n2": CANNOT, "n3": CANNOT}


# --------------------------------------------------------------------------- allocated and shared claims, PostFilter


def test_allocated_shared_claim_only_fits_its_node() -> None:
    shared = claim("shared", allocation=allocated_on("n2", "gpu-0"), reserved_for=["other-pod"])
    r = Run([device_class(), *two_gpu_slices(), shared], pod_with("shared"))
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": NOT_HERE, "n2": OK, "n3": NOT_HERE}
    assert r.score("n2")[0] == 0
    assert r.plugin.reserve(r.state, r.pod, "n2").is_success()
    assert r.plugin.pre_bind_pre_flight(r.state, r.pod, "n2").is_success()
    _, st = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert st.reasons == ["still not schedulable"]


@pytest.mark.parametrize(("reserved", "message"), [([], "deallocation of ResourceClaim completed"),
                                                    (["uid-pod"], "deallocation of ResourceClaim completed"),
                                                    (["uid-pod", "x"], "still not schedulable")])
def test_post_filter_deallocates_unused_claims(reserved: list[str], message: str) -> None:
    c = claim("c", allocation=allocated_on("n2", "gpu-0"), reserved_for=reserved)
    r = Run([device_class(), *two_gpu_slices(), c], pod_with("c"))
    r.pre_filter()
    assert r.filter("n1").reasons == ["resourceclaim not available on the node"]
    _, st = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE, [message])


def test_allocation_failure_wins_over_unavailable_claim() -> None:
    allocated = claim("a", allocation=allocated_on("n2", "gpu-0"))
    r = Run([device_class(), *two_gpu_slices(), allocated, claim("b", exactly(count=3))], pod_with("a", "b"))
    r.pre_filter()
    assert r.filter("n1").reasons == ["cannot allocate all claims"]
    _, st = r.plugin.post_filter(r.state, r.pod, None)  # type: ignore[arg-type]
    assert st.reasons == ["still not schedulable"]  # the unavailable claim was never recorded


# --------------------------------------------------------------------------- prioritized list and Score


def prioritized(*subs: tuple[str, int, str]) -> dict[str, Any]:
    first = []
    for name, count, model in subs:
        first.append({
            "name": name, "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count,
            "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}],
        })
    return {"name": "gpu", "firstAvailable": first}


def test_first_available_scores_earlier_subrequests_higher() -> None:
    req = prioritized(("h100", 1, "h100"), ("a100", 1, "a100"))
    r = Run([device_class(), *two_gpu_slices(), claim("c", req)], pod_with("c"))
    assert r.pre_filter().is_success()
    assert r.filters() == {"n1": OK, "n2": OK, "n3": CANNOT}
    assert r.score("n1")[0] == 7
    assert r.score("n2")[0] == 8
    assert r.score("n3")[0] == 0  # no allocation recorded for the node
    r.plugin.reserve(r.state, r.pod, "n1")
    [(_, alloc, _)] = claim_allocations(r.state)
    assert alloc is not None and alloc["devices"]["results"][0]["request"] == "gpu/a100"


def test_first_available_falls_back_when_too_few_devices() -> None:
    req = prioritized(("two", 2, "a100"), ("one", 1, "a100"))
    used = claim("used", allocation=allocated_on("n1", "gpu-1"))
    r = Run([device_class(), *two_gpu_slices(), used, claim("c", req)], pod_with("c"))
    r.pre_filter()
    assert r.filter("n1").is_success()
    assert r.score("n1")[0] == 7


def test_score_pairs_claims_with_allocations_like_upstream() -> None:
    # Upstream indexes the allocation results (claims to allocate only) by the
    # position among *all* claims, so an allocated claim before an unallocated
    # one makes Score fail once a node has an allocation.
    allocated = claim("a", allocation={"devices": {"results": []}})
    r = Run([device_class(), *two_gpu_slices(), allocated, claim("b")], pod_with("a", "b"))
    r.pre_filter()
    assert r.filter("n1").is_success()
    v, st = r.score("n1")
    assert (v, st.code, st.reasons) == (0, Code.ERROR, ["number of allocations 1 is smaller than number of claims"])


def test_reserve_without_allocation_for_node_is_an_error() -> None:
    r = Run([device_class(), *two_gpu_slices(), claim("c")], pod_with("c"))
    r.pre_filter()
    st = r.plugin.reserve(r.state, r.pod, "n1")
    assert (st.code, st.reasons) == (Code.ERROR, ["claim allocation not found for node"])


def test_state_is_shared_by_clones() -> None:
    r = Run([device_class(), *two_gpu_slices(), claim("c")], pod_with("c"))
    r.pre_filter()
    clone = r.state.clone()
    ni = r.snapshot.get("n1")
    assert ni is not None
    assert r.plugin.filter(clone, r.pod, ni).is_success()
    assert r.plugin.reserve(r.state, r.pod, "n1").is_success()


def test_slices_are_not_modified() -> None:
    s = resource_slice("s1", [gpu("gpu-0")], "n1")
    before = copy.deepcopy(s.raw)
    r = Run([device_class(), s, claim("c")], pod_with("c"))
    r.pre_filter()
    r.filters()
    assert s.raw == before


class TickingClock:
    """A clock that moves ``step`` seconds each time it is read (0: a stopped clock)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


TIMED_OUT = ["timed out trying to allocate devices"]
NOT_FOUND = ["cannot allocate all claims"]


@pytest.mark.parametrize(
    ("timeout", "step", "want"),
    [
        pytest.param("1s", 60.0, TIMED_OUT, id="1s-passes"),
        pytest.param(None, 60.0, TIMED_OUT, id="default-10s-passes"),
        pytest.param(None, 0.0, NOT_FOUND, id="default-10s-never-passes"),
        pytest.param("0s", 60.0, NOT_FOUND, id="0s-no-limit"),
    ],
)
def test_filter_timeout_limits_the_search(timeout: str | None, step: float, want: list[str]) -> None:
    # 600 devices whose "numa" all differ: every pair violates the constraint, so the
    # search tries each first device in turn before giving up. The clock is read when the search
    # starts and every 512 steps (this search takes more than 512), moving ``step`` seconds each time.
    devices = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": i}}} for i in range(600)]
    cons = [{"requests": [], "matchAttribute": f"{DRIVER}/numa"}]
    objs = [device_class(), resource_slice("s1", devices, "n1"), claim("c", exactly(count=2), constraints=cons)]
    r = Run(objs, pod_with("c"), args=None if timeout is None else {"filterTimeout": timeout})
    r.plugin.clock = TickingClock(step)
    r.pre_filter()
    st = r.filter("n1")
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want)
