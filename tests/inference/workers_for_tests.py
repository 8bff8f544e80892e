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
