"""Picklable model factories for ProcessWorker tests (spawned children import this module)."""

import os
import time


def make_sleepy():
    """A 'model' whose call sleeps for the requested seconds: a stand-in for a hung decode."""

    def handler(seconds):
        time.sleep(seconds)
        return f"slept {seconds}"

    return handler


def make_crashy():
    """A 'model' that dies like a segfaulting native library when asked to."""

    def handler(request):
        if request == "crash":
            os._exit(139)
        return request

    return handler


def make_smollm2():
    """SmolLM2 in the child process: requests are (prompt, max_tokens)."""
    import os as _os

    from onboard.inference.llama_backend import LlamaTextModel

    model = LlamaTextModel(_os.environ["AERIE_TEST_GGUF"], n_ctx=512)

    def handler(request):
        prompt, max_tokens = request
        return model.chat([{"role": "user", "content": prompt}], max_tokens=max_tokens)

    return handler
