"""Model loading and running: manifest, ONNX Runtime / TensorRT sessions, llama.cpp, workers.

* ``manifest``: models/manifest.yaml, sha256 verification (``ModelFileError`` names the file)
* ``prepare`` / ``quantize`` / ``tensorrt_engine`` / ``models_cli``: ``aerie models ...``
* ``ort_session``: ``OrtSession`` with the TensorRT EP -> CUDA EP -> CPU EP chain
* ``llama_backend``: ``LlamaTextModel`` / ``LlamaVisionModel`` (grammar-constrained JSON)
* ``contracts`` / ``json_contract``: the planner's typed JSON contracts, validate/retry/fallback
* ``planner_model``: contract calls on a worker with a deadline, for the agent
* ``inference_worker``: ``ThreadWorker`` / ``ProcessWorker`` / ``Watchdog``

``aerie bench perception`` is `sim/perception_bench.py`.

Heavy libraries (onnxruntime, llama_cpp, tensorrt) are imported inside functions.
"""
