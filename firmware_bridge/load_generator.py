"""CPU load that looks like onboard inference, for proving the setpoint stream does not care.

ONNX Runtime and numpy release the GIL in their kernels but hold it between
calls, and they saturate the cores — exactly the conditions under which a
naive 20 Hz loop on the event loop starts to miss deadlines.
"""

from __future__ import annotations

import threading

import numpy as np


def _tiny_onnx_model() -> bytes:
    """A 3-layer MLP (512 wide) built in memory: real ORT kernels, no weights file needed."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    prev = "x"
    for i in range(3):
        w = numpy_helper.from_array(rng.standard_normal((512, 512)).astype(np.float32) * 0.05, f"w{i}")
        inits.append(w)
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"h{i}"]))
        nodes.append(helper.make_node("Relu", [f"h{i}"], [f"r{i}"]))
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes, "load", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 512])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 512])], initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


class InferenceLoad:
    """Runs ONNX Runtime and numpy matrix products flat out in background threads."""

    def __init__(self, onnx_threads: int = 1, numpy_threads: int = 1) -> None:
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.onnx_runs = 0
        self.numpy_runs = 0
        self._onnx_threads = onnx_threads
        self._numpy_threads = numpy_threads

    def __enter__(self) -> "InferenceLoad":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        session = ort.InferenceSession(_tiny_onnx_model(), opts, providers=["CPUExecutionProvider"])
        x = np.random.default_rng(1).standard_normal((64, 512)).astype(np.float32)

        def onnx_loop() -> None:
            while not self._stop.is_set():
                session.run(None, {"x": x})
                self.onnx_runs += 1

        def numpy_loop() -> None:
            a = np.random.default_rng(2).standard_normal((384, 384))
            while not self._stop.is_set():
                a = np.tanh(a @ a.T * 1e-3)
                self.numpy_runs += 1

        for i in range(self._onnx_threads):
            self._threads.append(threading.Thread(target=onnx_loop, name=f"load-onnx-{i}", daemon=True))
        for i in range(self._numpy_threads):
            self._threads.append(threading.Thread(target=numpy_loop, name=f"load-numpy-{i}", daemon=True))
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)


def period_stats(times: list[float], gap_s: float = 0.5) -> dict[str, float]:
    """Percentiles of the intervals between consecutive event times, in milliseconds."""
    if len(times) < 3:
        return {"count": len(times), "p50_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan"), "gaps": 0}
    d = np.diff(np.asarray(times)) * 1000.0
    return {
        "count": int(len(d)),
        "p50_ms": float(np.percentile(d, 50)),
        "p99_ms": float(np.percentile(d, 99)),
        "max_ms": float(d.max()),
        "gaps": int((d > gap_s * 1000.0).sum()),
    }

