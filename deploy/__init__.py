"""`make flash` / `make rollback`: deploy Aerie to an NVIDIA Jetson over SSH.

Developer-side tooling, deliberately not part of the installed wheel: the
target gets a release directory, a venv and a systemd unit, never this code.
Shell does what shell is natural for (deploy/remote.sh runs on the target);
the modules here plan the steps, decide idempotency and rollback.
"""
