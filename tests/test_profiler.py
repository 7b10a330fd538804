"""torch.profiler / torch.autograd.profiler: ops recorded through csrc/profiler.c's hook, ranges,
aggregation, tables, traces and schedules (schedule results checked against PyTorch's)."""

import gzip
import json
import os
import sys
import warnings

import pytest

import ctorch as torch
from ctorch import _C, nn
from ctorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _keys(prof):
    return [e.key for e in prof.events()]


def test_ops_inside_recorded_outside_not():
    a = torch.randn(4, 4)
    torch.add(a, a)  # before: not recorded
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            torch.mul(a, 2.0)
        a.sum()
    torch.sub(a, a)  # after: not recorded
    keys = _keys(prof)
    assert keys.count("aten::mul") == 3
    assert keys.count("aten::sum") == 1
    assert "aten::add" not in keys and "aten::sub" not in keys
    assert not _C._profiler_enabled()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["aten::mul"].count == 3 and avg["aten::sum"].count == 1


def test_operators_and_indexing_counted():
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    with profile() as prof:
        a + b
        a + b
        a @ b
        a * 2
        -a
        a ** 2
        a[0]
        a[:, 1]
        a[torch.tensor([0, 2])]
        c = a.clone()
        c[0] = 1.0
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::add"] == 2
    assert counts["aten::matmul"] == 1
    assert counts["aten::mul"] == 1 and counts["aten::neg"] == 1 and counts["aten::pow"] == 1
    assert counts["aten::select"] == 1 and counts["aten::slice"] == 1 and counts["aten::index"] == 1
    assert counts["aten::clone"] == 1 and counts["aten::copy_"] == 1


def test_record_shapes_and_group_by_input_shape():
    with profile(record_shapes=True) as prof:
        torch.add(torch.ones(2, 3), torch.ones(2, 3))
        torch.add(torch.ones(2, 3), torch.ones(2, 3))
        torch.add(torch.ones(5), torch.ones(5))
    adds = [e for e in prof.events() if e.key == "aten::add"]
    assert [e.input_shapes for e in adds] == [[[2, 3], [2, 3]], [[2, 3], [2, 3]], [[5], [5]]]
    grouped = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "aten::add"]
    assert sorted((str(e.input_shapes), e.count) for e in grouped) == [("[[2, 3], [2, 3]]", 2), ("[[5], [5]]", 1)]
    assert [e.count for e in prof.key_averages() if e.key == "aten::add"] == [3]
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in table and "[[5], [5]]" in table


def test_record_function_nests_and_contains_its_ops():
    x = torch.randn(8, 8)
    with profile() as prof:
        with record_function("outer"):
            torch.relu(x)
            with record_function("inner"):
                torch.exp(x)
                torch.exp(x)
        torch.tanh(x)
    ev = {e.key: e for e in prof.events()}
    outer, inner = ev["outer"], ev["inner"]
    assert inner.cpu_parent is outer
    assert ev["aten::relu"].cpu_parent is outer
    assert ev["aten::tanh"].cpu_parent is None
    exps = [e for e in prof.events() if e.key == "aten::exp"]
    assert len(exps) == 2 and all(e.cpu_parent is inner for e in exps)
    assert outer.time_range.start <= inner.time_range.start and inner.time_range.end <= outer.time_range.end
    assert outer.cpu_time_total >= inner.cpu_time_total >= sum(e.cpu_time_total for e in exps)
    assert abs(inner.self_cpu_time_total - (inner.cpu_time_total - sum(e.cpu_time_total for e in exps))) < 1e-6
    assert outer.is_user_annotation and not exps[0].is_user_annotation


def test_record_function_decorator_and_noop_outside():
    @record_function("my_fn")
    def f(t):
        return t * 3

    f(torch.ones(2))  # no profile: nothing to record, no error
    with profile() as prof:
        f(torch.ones(2))
        f(torch.ones(2))
    ev = [e for e in prof.events() if e.key == "my_fn"]
    assert len(ev) == 2 and all([c.key for c in e.cpu_children] == ["aten::mul"] for e in ev)


def test_profile_memory_counts_allocations():
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            keep = torch.empty(1000, dtype=torch.float32)
            torch.empty(500, dtype=torch.float64)  # freed at once
    ev = {e.key: e for e in prof.events()}
    empties = [e for e in prof.events() if e.key == "aten::empty"]
    assert [e.cpu_memory_usage for e in empties] == [4000, 4000]
    assert ev["block"].cpu_memory_usage == 4000  # the float64 one was freed inside the block
    assert ev["block"].self_cpu_memory_usage == 4000 - 8000
    del keep
    table = prof.key_averages().table(sort_by="self_cpu_memory_usage")
    assert "CPU Mem" in table and "Self CPU Mem" in table and "3.91 KB" in table


def test_table_sort_and_row_limit():
    x = torch.randn(64, 64)
    with profile() as prof:
        for _ in range(5):
            torch.mm(x, x)
        torch.neg(x)
    avg = prof.key_averages()
    table = avg.table(sort_by="count", row_limit=1)
    lines = table.splitlines()
    assert lines[1].split()[:2] == ["Name", "Self"] and "# of Calls" in lines[1]
    rows = [line for line in lines[3:] if line and not line.startswith("-") and not line.startswith("Self CPU")]
    assert len(rows) == 1 and rows[0].split()[0] == "aten::mm" and rows[0].split()[-1] == "5"
    assert lines[-1].startswith("Self CPU time total: ")
    rows = avg.table(sort_by="cpu_time_total", row_limit=10).splitlines()[3:-2]
    totals = [e.cpu_time_total for e in sorted(avg, key=lambda e: e.cpu_time_total, reverse=True)]
    assert [r.split()[0] for r in rows] == [e.key for e in sorted(avg, key=lambda e: -e.cpu_time_total)]
    assert totals == sorted(totals, reverse=True)


def test_chrome_trace_is_json_with_the_events(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("region"):
            torch.add(torch.ones(3), 1)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    doc = json.loads(path.read_text())
    ops = {e["name"]: e for e in doc["traceEvents"] if e["ph"] == "X"}
    assert ops["region"]["cat"] == "user_annotation" and ops["aten::add"]["cat"] == "cpu_op"
    assert ops["aten::add"]["args"]["Input Dims"] == [[3], []]
    assert ops["region"]["ts"] <= ops["aten::add"]["ts"]
    assert ops["aten::add"]["ts"] + ops["aten::add"]["dur"] <= ops["region"]["ts"] + ops["region"]["dur"]


# (schedule arguments, steps) -> the step_num at each on_trace_ready call and the number of
# aten::add events in that trace, as the reference PyTorch 2.x gives for one add per step
SCHEDULES = [
    (dict(wait=1, warmup=1, active=2), 10, [(4, 2), (8, 2), (10, 0)]),
    (dict(wait=1, warmup=1, active=2, repeat=2), 12, [(4, 2), (8, 2)]),
    (dict(wait=2, warmup=0, active=1, repeat=1, skip_first=3), 9, [(6, 1)]),
    (dict(wait=0, warmup=0, active=3), 7, [(3, 3), (6, 3), (7, 1)]),
    (dict(wait=5, warmup=1, active=2, skip_first=2, skip_first_wait=1), 12, [(5, 2), (12, 1)]),
]


@pytest.mark.parametrize("args,steps,expected", SCHEDULES, ids=[str(i) for i in range(len(SCHEDULES))])
def test_schedule_on_trace_ready_matches_pytorch(args, steps, expected):
    calls = []

    def ready(p):
        calls.append((p.step_num, sum(1 for e in p.events() if e.key == "aten::add")))
        assert all(e.key == "ProfilerStep*" for e in p.events() if e.is_user_annotation)

    x = torch.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = schedule(**args)
    with profile(schedule=sched, on_trace_ready=ready) as p:
        for _ in range(steps):
            x.add(1)
            p.step()
    assert calls == expected


def test_schedule_actions():
    s = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [s(i) for i in range(7)] == [ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
                                        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE,
                                        ProfilerAction.NONE, ProfilerAction.NONE]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)


def test_tensorboard_trace_handler_writes_traces(tmp_path):
    handler = torch.profiler.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0")
    x = torch.ones(2)
    with profile(schedule=schedule(wait=0, warmup=1, active=1), on_trace_ready=handler) as p:
        for _ in range(4):
            x.mul(2)
            p.step()
    files = sorted(os.listdir(tmp_path / "log"))
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files)
    doc = json.loads((tmp_path / "log" / files[0]).read_text())
    names = [e["name"] for e in doc["traceEvents"]]
    assert "aten::mul" in names and "ProfilerStep#1" in names
    gz = torch.profiler.tensorboard_trace_handler(str(tmp_path / "gz"), worker_name="w", use_gzip=True)
    with profile(on_trace_ready=gz):
        x.mul(2)
    (f,) = os.listdir(tmp_path / "gz")
    assert f.endswith(".pt.trace.json.gz")
    with gzip.open(tmp_path / "gz" / f, "rt") as fh:
        assert any(e["name"] == "aten::mul" for e in json.load(fh)["traceEvents"])


def test_exception_in_body_stops_cleanly():
    before = sys.getprofile()
    a = torch.ones(3)
    with pytest.raises(ValueError, match="boom"):
        with profile() as prof:
            a + a
            raise ValueError("boom")
    assert not _C._profiler_enabled() and sys.getprofile() is before
    assert [e.key for e in prof.events()] == ["aten::add"]
    # a failing op is not recorded and its error passes through unchanged
    with profile() as prof2:
        with pytest.raises(RuntimeError, match="size of tensor a"):
            torch.ones(2) + torch.ones(3)
        torch.ones(2) * 2
    assert "aten::add" not in _keys(prof2) and "aten::mul" in _keys(prof2)
    with profile() as prof3:  # a new profile starts after both
        a + a
    assert _keys(prof3) == ["aten::add"]


def test_nested_profile_refused():
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
    assert not _C._profiler_enabled()


def test_autograd_profiler_legacy_api():
    model = nn.Linear(4, 3)
    x = torch.randn(2, 4)
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        with torch.autograd.profiler.record_function("fwd"):
            model(x).sum().backward()
    keys = [e.key for e in prof.function_events]
    assert "fwd" in keys and "aten::linear" in keys and "aten::sum" in keys
    lin = next(e for e in prof.function_events if e.key == "aten::linear")
    assert lin.input_shapes == [[2, 4], [3, 4], [3]]
    assert prof.total_average().count == len(prof.function_events)
    assert "aten::linear" in prof.table(sort_by="self_cpu_time_total", row_limit=5)
    with torch.autograd.profiler.profile(enabled=False) as off:
        model(x)
    assert not _C._profiler_enabled() and off.enabled is False


def test_cuda_activity_accepted_without_device_events():
    acts = torch.profiler.supported_activities()
    assert ProfilerActivity.CPU in acts
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.ones(3).add(1)
    (add,) = [e for e in prof.key_averages() if e.key == "aten::add"]
    assert add.device_time_total == 0 and add.self_device_time_total == 0
    assert "Self CUDA" not in prof.key_averages().table()


def test_emit_nvtx_wraps_ops_in_ranges(monkeypatch):
    from ctorch.cuda import nvtx
    log = []
    monkeypatch.setattr(nvtx, "range_push", lambda name: log.append(("push", name)))
    monkeypatch.setattr(nvtx, "range_pop", lambda: log.append(("pop",)))
    with torch.autograd.profiler.emit_nvtx():
        with record_function("step"):
            torch.ones(2) + 1
    assert log[0] == ("push", "step") and log[-3:] == [("push", "aten::add"), ("pop",), ("pop",)]
    assert ("push", "aten::ones") in log and not _C._profiler_enabled()


def test_event_fields_match_pytorch_names():
    with profile(record_shapes=True, profile_memory=True) as prof:
        torch.ones(2, 2).exp()
    evt = next(e for e in prof.events() if e.key == "aten::exp")
    for name in ("key", "name", "count", "cpu_time_total", "self_cpu_time_total", "cpu_time", "input_shapes",
                 "cpu_memory_usage", "self_cpu_memory_usage", "device_time_total", "self_device_time_total",
                 "cpu_parent", "cpu_children", "time_range", "thread", "id"):
        getattr(evt, name)
    avg = next(e for e in prof.key_averages() if e.key == "aten::exp")
    for name in ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_time", "device_time_total",
                 "cpu_memory_usage", "self_cpu_memory_usage", "input_shapes"):
        getattr(avg, name)
    assert avg.cpu_memory_usage == 16 and avg.count == 1
    assert repr(avg).startswith("<FunctionEventAvg key=aten::exp self_cpu_time=")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_cuda_ops_timed_by_events_without_waiting(tmp_path):
    """Ops on CUDA tensors get their device time from two events each, read when the profile
    stops: the ops themselves never wait for the GPU (counted on the emulator)."""
    from test_cuda import emulator_counters
    x = torch.randn(128, 128, device="cuda")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True) as prof:
        before = emulator_counters()
        with record_function("gpu_block"):
            y = x @ x
            z = torch.relu(y)
        after = emulator_counters()
        torch.ones(2).add(1)  # a CPU op: no device time
    if before is not None:
        assert after[1] == before[1] and after[2] == before[2]  # no synchronize, no copy back
    ev = {e.key: e for e in prof.events()}
    mm, relu, block = ev["aten::matmul"], ev["aten::relu"], ev["gpu_block"]
    assert mm.device_time_total > 0 and relu.device_time_total > 0 and len(mm.kernels) == 1
    assert block.device_time_total == pytest.approx(mm.device_time_total + relu.device_time_total)
    assert block.self_device_time_total == pytest.approx(0.0, abs=1e-9)
    assert ev["aten::add"].device_time_total == 0
    assert mm.device_memory_usage == 128 * 128 * 4 and mm.cpu_memory_usage == 0
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "CUDA total" in table and "CUDA Mem" in table
    assert table.splitlines()[3].split()[0] in ("aten::matmul", "aten::relu", "gpu_block")
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    kernels = [e for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert sorted(k["name"] for k in kernels) == ["aten::matmul", "aten::relu"]
    del y, z


def test_backward_nodes_are_events():
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(2, 3)
    with profile() as prof:
        (x @ w).relu().sum().backward()
    keys = _keys(prof)
    for node in ("SumBackward0", "ReluBackward0", "MmBackward0"):
        assert keys.count("autograd::engine::evaluate_function: " + node) == 1, keys
    assert "autograd::engine::evaluate_function: AccumulateGrad" in keys
    torch.ones(2, requires_grad=True).sum().backward()  # after the profile: nothing recorded
    assert _keys(prof) == keys
