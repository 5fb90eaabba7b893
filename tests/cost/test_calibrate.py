"""`xcviz calibrate` writes a profile that `--hardware FILE` reads; every built-in profile says where its
numbers come from."""
import pytest
import yaml
from importlib import resources

from pathlib import Path

from xcviz.cost import PROFILE_KEYS, hardware_names, load_hardware
from xcviz.cost.classes import CLASSES
from tests.support.paths import ROOT

ROOT = Path(ROOT)

pytest.importorskip("jax", reason="calibrate measures through JAX: pip install -e '.[jax]'")


@pytest.mark.slow
def test_calibrate_writes_a_profile_that_loads(run_cli, tmp_path):
    out = tmp_path / "mine.yaml"
    code, _, err = run_cli("calibrate", "-o", str(out), "--matmul-n", "32", "--stream", "1024", "--repeats", "2")
    assert code == 0 and f"wrote {out}" in err
    hw = load_hardware(str(out))
    assert hw.name == "mine" and hw.backend == "cpu" and hw.source.startswith("measured with xcviz calibrate on")
    assert all(getattr(hw, k) > 0 for k in ("peak_flops", "memory_bandwidth", "launch_overhead"))
    assert hw.sync_overhead >= 0
    # with the per-op-class numbers (cost.classes), every class measured
    cal = hw.calibrated
    assert cal is not None and cal.native_bandwidth > 0 and cal.call_overhead >= 0
    assert set(cal.classes) == set(CLASSES) and set(yaml.safe_load(out.read_text())["classes"]) == set(CLASSES)
    assert all(c.native_flops > 0 and c.xla_flops > 0 and c.native_overhead >= 0 and c.xla_launch >= 0
               for c in cal.classes.values())
    # an op costs more natively than nothing: the fixed cost of running one op was measured
    assert cal.classes["elementwise"].native_overhead > 0 and cal.classes["conv"].native_overhead > 0
    # against onnxruntime's kernels by default, said in the profile, with its session call apart
    data = yaml.safe_load(out.read_text())
    assert data["native"] == "onnxruntime" and "onnxruntime" in hw.source and data["native_session_overhead"] >= 0
    assert cal.session_overhead == data["native_session_overhead"]
    # and what a native call costs per value it is handed and gives back (calibrate_call.native_buffers)
    assert data["native_argument_overhead"] >= 0 and data["native_output_overhead"] >= 0
    assert (cal.native_argument_overhead, cal.native_output_overhead) == (data["native_argument_overhead"],
                                                                         data["native_output_overhead"])
    # and what a native call between two compiled ones costs more (calibrate_call.switch_overhead)
    assert data["hybrid_switch_overhead"] >= 0 and cal.switch_overhead == data["hybrid_switch_overhead"]
    # and the cost model runs on it
    code, out_text, _ = run_cli("stats", str(ROOT / "graphs/resnet_block.yaml"), "--hardware", str(out))
    assert code == 0 and "(mine, vs onnxruntime)" in out_text   # the estimate says which runtime it is against


def test_calibrate_needs_a_yaml_target(run_cli, tmp_path):
    code, _, err = run_cli("calibrate", "-o", str(tmp_path / "x.txt"), "--repeats", "1")
    assert code == 2 and "must be a .yaml" in err and "Traceback" not in err


def test_calibrate_measures_plausible_rates():
    from xcviz.runtime.calibrate import calibrate

    steps = []
    c = calibrate(64, 4096, 2, progress=steps.append, classes=False)
    assert len(steps) == 4 and c.measured is None
    assert 1e6 < c.peak_flops < 1e16 and 1e6 < c.memory_bandwidth < 1e14 and 0 < c.launch_overhead < 1.0
    data = yaml.safe_load(c.profile_yaml("x"))
    assert set(PROFILE_KEYS) <= set(data) and data["backend"] == c.backend and "classes" not in data


@pytest.mark.parametrize("name", hardware_names())
def test_every_builtin_profile_says_where_its_numbers_come_from(name):
    text = resources.files("xcviz.hardware").joinpath(f"{name}.yaml").read_text("utf-8")
    hw = load_hardware(name)
    assert hw.source and ("datasheet" in hw.source or "documentation" in hw.source or "measured" in hw.source
                          or "derived" in hw.source), text


def test_validate_times_xla_with_parameters_resident():
    """Weights (and what is computed from them alone) are placed on the device once; activations stay host
    arrays, handed in per call, as the cost model counts them (cost.params)."""
    import numpy as np

    from xcviz.pipeline import load_file as load
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import cluster_spec
    from xcviz.runtime.measure import resident

    g = load(str(ROOT / "graphs/resnet_mini.onnx"), dims={"N": 1})
    spec = cluster_spec(g, list(range(len(g.nodes))))
    feeds = bind_inputs(g, None, 0)
    fed = resident(g, spec, {r: feeds[r] for r in spec.entries})
    host = sorted(r for r, v in fed.items() if isinstance(v, np.ndarray))
    params = {v.name for v in g.inputs if v.is_param}
    assert host == ["x"] and set(fed) - {"x"} <= params and len(fed) > 40


def test_the_switch_is_what_calls_in_turn_cost_over_calls_back_to_back(monkeypatch):
    """calibrate_call.switch_overhead on a clock the programs advance: a native call costs 30 (units) back to
    back and 30 + 7 right after an XLA call, which costs 5 back to back and 5 + 2 right after a native one."""
    from xcviz.runtime import measure
    from xcviz.runtime.calibrate_call import switch_overhead

    now, last = [0.0], [None]
    monkeypatch.setattr(measure, "clock", lambda: now[0])

    def call(me, cost, after_other):
        def fn():
            now[0] += cost + (after_other if last[0] not in (None, me) else 0.0)
            last[0] = me
        return fn
    native, xla = call("native", 30.0, 7.0), call("xla", 5.0, 2.0)
    # (each sample's first call follows the other program: its loop of 20 is 1/20 a switch dearer)
    assert switch_overhead(native, xla, repeats=10) == pytest.approx(9.0 - (7.0 + 2.0) / 20, rel=1e-9)
    same = call("same", 1.0, 0.0)
    assert switch_overhead(same, same, repeats=10) == 0.0



def test_the_native_dispatch_floor_is_read_off_an_op_of_negligible_work():
    """On a session runtime every op costs at least one more op of the session chain (calibrate_ops.session_slopes):
    an op of negligible work whose output is allocated, as any op's is. A tanh of 1,024 floats made
    onnxruntime's floor 0.63 us where an add of 4 floats costs 0.38; a reshape, which TensorFlow runs without
    allocating, would make TF's 0.21 us where an add costs 0.5."""
    from xcviz.runtime.calibrate_ops import (COPIES, DISPATCH, LONG, NATIVE_CHAINS, PROGRAMS, SESSION_1, SESSION_CHAIN,
                                             chain_program, cost_of, session_slopes)

    step = chain_program("dispatch", 1, {"dispatch": DISPATCH})
    flops, nbytes = cost_of(step)
    assert [n.op for n in step.nodes] == ["add"] and flops <= 4 and nbytes <= 48
    # the floor is the chain's slope, and the session's call what one op of it leaves over
    m = {SESSION_1: 10e-6, SESSION_CHAIN: 10e-6 + (LONG - 1) * 0.3e-6, "stream": 1e-4,
         ("stream", "mid", COPIES): 1e-4 + (COPIES - 1) * 5e-5}
    graphs = {(c, "native step"): chain_program(c, 1, NATIVE_CHAINS) for c in NATIVE_CHAINS}
    for c in list(NATIVE_CHAINS) + ["reduce"]:
        m[c, "small", 1], m[c, "small", LONG] = 1e-5, 1e-5 + (LONG - 1) * 1e-6
    for c, (_, mid) in PROGRAMS.items():
        if mid is not None:
            m[c, "mid"], m[c, "mid", COPIES] = 1e-4, 1e-4 + (COPIES - 1) * 5e-5
    m["elementwise", "small"] = 1e-6
    out, call, per_op = session_slopes(m, graphs)
    assert per_op == pytest.approx(0.3e-6) and call == pytest.approx(10e-6 - 0.3e-6)
    assert out["conv", "small"] == pytest.approx(1e-6) and out["conv", "mid"] == pytest.approx(5e-5)
