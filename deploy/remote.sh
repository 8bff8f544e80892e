#!/usr/bin/env bash
# Target-side steps of `make flash`, sent over SSH on stdin:
#   ssh user@jetson bash -s -- STEP ARGS... < deploy/remote.sh
# Nothing is installed on the target beforehand, so the script travels with
# every call. Each step is idempotent: it compares a marker or a content hash
# first and prints "unchanged" instead of redoing work. Lines starting with
# "CHECK " / "RESULT " are parsed by deploy/*.py; everything else is log.
set -euo pipefail

step=${1:?step}; shift

say() { printf '%s\n' "$*"; }
result() { say "RESULT $*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
as_aerie() { if [ "$(id -u)" = 0 ]; then runuser -u aerie -- "$@"; else sudo -n -u aerie "$@"; fi; }

# systemd is "present" when PID 1 is systemd and it answers; a container or a
# chroot (like the test target) has systemctl but no running manager.
systemd_state() {
    command -v systemctl >/dev/null 2>&1 || { say "no-systemctl"; return; }
    systemctl is-system-running 2>/dev/null || true
}
systemd_up() {
    case "$(systemd_state)" in running|degraded|starting|initializing) return 0 ;; *) return 1 ;; esac
}

case "$step" in
prereqs)  # PYTHON PREFIX MIN_FREE_MB
    py=$1 prefix=$2 min_free_mb=$3
    if [ -r /etc/nv_tegra_release ]; then
        say "CHECK ok jetpack L4T $(head -n1 /etc/nv_tegra_release | sed 's/^# *//; s/, *GCID.*//')"
    elif v=$(dpkg-query -W -f='${Version}' nvidia-l4t-core 2>/dev/null) && [ -n "$v" ]; then
        say "CHECK ok jetpack nvidia-l4t-core $v"
    else
        say "CHECK fail jetpack not a Jetson: no /etc/nv_tegra_release and no nvidia-l4t-core package"
    fi
    if ! command -v "$py" >/dev/null 2>&1; then
        say "CHECK fail python $py not found (install Python >= 3.10 or pass TARGET_PYTHON=...)"
    elif pyv=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(sys.version_info < (3, 10))' 2>/dev/null); then
        if "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
            say "CHECK ok python $py $pyv (venv + ensurepip)"
        else
            say "CHECK fail python $py $pyv lacks venv/ensurepip (apt install python3-venv for that version)"
        fi
    else
        say "CHECK fail python $py is ${pyv:-unusable}; Aerie needs Python >= 3.10 (pass TARGET_PYTHON=...)"
    fi
    if command -v rsync >/dev/null 2>&1; then
        say "CHECK ok rsync $(rsync --version | head -n1 | awk '{print $3}')"
    else
        say "CHECK fail rsync not installed on the target (apt install rsync)"
    fi
    state=$(systemd_state)
    if systemd_up; then say "CHECK ok systemd $state"; else say "CHECK fail systemd no systemd on target (systemctl is-system-running: ${state:-no answer})"; fi
    probe=$prefix
    while [ ! -d "$probe" ]; do probe=$(dirname "$probe"); done
    free_mb=$(df -Pm "$probe" | awk 'NR==2 {print $4}')
    if [ "${free_mb:-0}" -ge "$min_free_mb" ]; then
        say "CHECK ok disk ${free_mb} MB free at $probe"
    else
        say "CHECK fail disk ${free_mb:-?} MB free at $probe, need ${min_free_mb} MB"
    fi
    if [ -w "$probe" ] || as_root true 2>/dev/null; then
        say "CHECK ok access can write under $probe"
    else
        say "CHECK fail access $probe is not writable by $(id -un) and sudo -n is not allowed"
    fi
    if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then say "CHECK ok cuda nvcc found"; else say "CHECK info cuda no nvcc: llama-cpp-python builds for CPU"; fi
    if "$py" -c 'import tensorrt' >/dev/null 2>&1; then
        say "CHECK ok tensorrt $("$py" -c 'import tensorrt; print(tensorrt.__version__)')"
    else
        say "CHECK info tensorrt not importable by $py: engine builds are skipped"
    fi
    ;;

probe)  # PREFIX: the target's release state, read-only
    prefix=$1
    cur=""
    [ -L "$prefix/current" ] && cur=$(basename "$(readlink "$prefix/current")")
    result "current=$cur"
    for d in "$prefix"/releases/*/; do
        [ -d "$d" ] || continue
        id=$(basename "$d")
        state=present
        [ -f "$d/.aerie/installed" ] && state=installed
        [ -f "$d/.aerie/healthy" ] && state=healthy
        [ -f "$d/.aerie/failed" ] && state=failed
        result "release=$id $state"
    done
    [ -f "$prefix/history" ] && sed 's/^/RESULT history=/' "$prefix/history"
    true
    ;;

mkdirs)  # PREFIX ID
    prefix=$1 id=$2
    if [ ! -d "$prefix" ]; then
        mkdir -p "$prefix" 2>/dev/null || as_root install -d -o "$(id -un)" "$prefix"
    fi
    if [ -d "$prefix/releases/$id" ]; then result unchanged; else mkdir -p "$prefix/releases/$id" "$prefix/data"; result created; fi
    ;;

install)  # PREFIX ID PYTHON NO_DEPS(0|1) CUDA(0|1)
    prefix=$1 id=$2 py=$3 no_deps=$4 cuda=$5
    rel=$prefix/releases/$id
    wheel=$(ls "$rel"/*.whl)
    want=$(sha256sum "$wheel" | cut -d' ' -f1)
    if [ -f "$rel/.aerie/installed" ] && [ "$(cat "$rel/.aerie/installed")" = "$want" ] && [ -x "$rel/venv/bin/aerie" ]; then
        result unchanged
        exit 0
    fi
    # --system-site-packages: JetPack's TensorRT, OpenCV (and CUDA-enabled
    # onnxruntime where installed) live in the system Python, not on PyPI.
    # The system's pip (visible through --system-site-packages) when it has
    # one: ensurepip costs seconds per release and adds nothing.
    if "$py" -m pip --version >/dev/null 2>&1; then
        "$py" -m venv --system-site-packages --without-pip "$rel/venv"
    else
        "$py" -m venv --system-site-packages "$rel/venv"
    fi
    pipargs=(--quiet --disable-pip-version-check --no-input)
    if [ "$no_deps" = 1 ]; then
        say "installing without dependencies: they must already be importable from the system site-packages"
        "$rel/venv/bin/python" -m pip install "${pipargs[@]}" --no-deps "$wheel"
        say "SKIP llama-cpp-cuda dependencies not installed here (--no-deps): no CUDA llama.cpp build on this target"
    else
        if [ "$cuda" = 1 ]; then
            export CMAKE_ARGS="-DGGML_CUDA=on" FORCE_CMAKE=1 PATH="/usr/local/cuda/bin:$PATH"
            say "building llama-cpp-python with CMAKE_ARGS=$CMAKE_ARGS (takes a while on a Jetson)"
        else
            say "SKIP llama-cpp-cuda no CUDA toolkit on the target: llama-cpp-python is built for CPU"
        fi
        # JetPack's OpenCV (CUDA) and a Jetson onnxruntime-gpu are importable
        # from the system site-packages under other distribution names; letting
        # pip install the PyPI wheels would shadow them. So: the wheel without
        # dependencies, then its requirements minus those the system provides.
        "$rel/venv/bin/python" -m pip install "${pipargs[@]}" --no-deps "$wheel"
        mapfile -t reqs < <("$rel/venv/bin/python" - "$wheel" <<'PY'
import importlib.util, re, sys, zipfile
provided = {"opencv-python-headless": "cv2", "opencv-python": "cv2", "onnxruntime": "onnxruntime", "tensorrt": "tensorrt"}
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    lines = z.read(meta).decode().splitlines()
for line in lines:
    if not line.startswith("Requires-Dist: ") or "extra ==" in line:
        continue
    req = line[len("Requires-Dist: "):]
    name = re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-")
    module = provided.get(name)
    if module and importlib.util.find_spec(module) is not None:
        print(f"using the system's {module} for {name}: {importlib.util.find_spec(module).origin}", file=sys.stderr)
        continue
    print(req)
PY
)
        nocache=()
        [ "$cuda" = 1 ] && nocache=(--no-cache-dir)  # never reuse a CPU-only llama-cpp-python wheel
        [ "${#reqs[@]}" = 0 ] || "$rel/venv/bin/python" -m pip install "${pipargs[@]}" "${nocache[@]}" "${reqs[@]}"
    fi
    "$rel/venv/bin/python" -c 'import aerie, onboard.status' 
    mkdir -p "$rel/.aerie"
    printf '%s\n' "$want" > "$rel/.aerie/installed"
    result installed
    ;;

health)  # PREFIX ID: the offline checks, before the release may become current
    prefix=$1 id=$2
    rel=$prefix/releases/$id
    # As the service user once it exists: the data dir (memory file) is its.
    run=()
    id -u aerie >/dev/null 2>&1 && run=(as_aerie)
    if "${run[@]}" "$rel/venv/bin/python" -m onboard.status --offline --config "$rel/config.yaml"; then
        mkdir -p "$rel/.aerie"
        [ -f "$rel/.aerie/healthy" ] || date -u +%FT%TZ > "$rel/.aerie/healthy"
        rm -f "$rel/.aerie/failed"
        result healthy
    else
        mkdir -p "$rel/.aerie"
        date -u +%FT%TZ > "$rel/.aerie/failed"
        result unhealthy
    fi
    ;;

engines)  # PREFIX ID: TensorRT engines for the release's ONNX models (Jetson only)
    prefix=$1 id=$2
    rel=$prefix/releases/$id
    py=$rel/venv/bin/python
    if ! trt=$("$py" -c 'import tensorrt; print(tensorrt.__version__)' 2>/dev/null); then
        say "SKIP tensorrt TensorRT is not importable on the target: no engines built"
        result skipped
        exit 0
    fi
    # Cache across releases keyed by model sha256 and TensorRT version; an
    # engine built by another TensorRT version does not deserialize.
    cache=$prefix/engine-cache/trt-$trt
    mkdir -p "$cache"
    built=0
    for onnx in "$rel"/models/*.onnx; do
        [ -f "$onnx" ] || continue
        name=$("$py" - "$onnx" "$rel/models/manifest.yaml" <<'EOF'
import sys, yaml
file = sys.argv[1].rsplit("/", 1)[1]
models = yaml.safe_load(open(sys.argv[2]))["models"]
print(next((n for n, m in models.items() if m["file"] == file), ""))
EOF
)
        [ -n "$name" ] || continue
        sha=$(sha256sum "$onnx" | cut -d' ' -f1)
        stem=$(basename "$onnx" .onnx)
        # models_cli names engines <stem>.<sha256[:16]>.<precision>.engine
        hit=$(ls "$cache/$stem.${sha:0:16}".*.engine 2>/dev/null | head -n1 || true)
        if [ -n "$hit" ]; then
            [ -f "$rel/models/$(basename "$hit")" ] || ln -f "$hit" "$rel/models/" 2>/dev/null || cp "$hit" "$rel/models/"
            say "engine for $name cached: $hit (TensorRT $trt)"
            continue
        fi
        engine=$("$rel/venv/bin/aerie" models --config "$rel/config.yaml" build-engine "$name" | tail -n1)
        ln -f "$engine" "$cache/" 2>/dev/null || cp "$engine" "$cache/"
        built=$((built + 1))
    done
    if [ "$built" = 0 ]; then result unchanged; else result built=$built; fi
    ;;

activate)  # PREFIX ID: point current at a release, atomically; append to history
    prefix=$1 id=$2
    cur=""
    [ -L "$prefix/current" ] && cur=$(basename "$(readlink "$prefix/current")")
    if [ "$cur" = "$id" ]; then result unchanged; exit 0; fi
    ln -sfn "releases/$id" "$prefix/current.new"
    mv -T "$prefix/current.new" "$prefix/current"
    printf '%s %s %s\n' "$(date -u +%FT%TZ)" "$id" "${cur:--}" >> "$prefix/history"
    result activated previous=${cur:--}
    ;;

mark-failed)  # PREFIX ID: never roll back to (or re-activate unchecked) a release that failed
    prefix=$1 id=$2
    mkdir -p "$prefix/releases/$id/.aerie"
    date -u +%FT%TZ > "$prefix/releases/$id/.aerie/failed"
    rm -f "$prefix/releases/$id/.aerie/healthy"
    result marked
    ;;

unit-verify)  # PREFIX: systemd-analyze verify the current release's unit
    prefix=$1
    unit=$prefix/current/systemd/aerie.service
    if ! command -v systemd-analyze >/dev/null 2>&1; then
        say "SKIP unit-verify systemd-analyze not on the target"
        result skipped
        exit 0
    fi
    # systemd only warns about (and ignores) a bad setting such as
    # MemoryMax=lots; a flash must not install a unit without its limits, so
    # any complaint naming the unit file counts as a failure.
    if out=$(systemd-analyze verify "$unit" 2>&1) && ! grep -q "aerie.service:" <<<"$out"; then
        [ -z "$out" ] || say "$out"
        result verified
    else
        say "$out"
        result invalid
    fi
    ;;

service)  # PREFIX RESTART(0|1): install, enable and (re)start aerie.service
    prefix=$1 restart=$2
    if ! systemd_up; then
        say "SKIP service no systemd on target (systemctl is-system-running: $(systemd_state)): unit not installed, enabled or restarted"
        result skipped
        exit 0
    fi
    unit=$prefix/current/systemd/aerie.service
    if ! "$prefix/current/venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("onboard.supervisor") is None)' 2>/dev/null; then
        say "SKIP service the supervisor (aerie fly, issue #6) is not in this release: unit not installed, enabled or started"
        result skipped
        exit 0
    fi
    id -u aerie >/dev/null 2>&1 || as_root useradd --system --home-dir "$prefix/data" --shell /usr/sbin/nologin --groups dialout,video aerie
    as_root chown -R aerie:aerie "$prefix/data"
    changed=0
    if ! cmp -s "$unit" /etc/systemd/system/aerie.service; then
        as_root install -m 0644 "$unit" /etc/systemd/system/aerie.service
        as_root systemctl daemon-reload
        changed=1
    fi
    systemctl is-enabled --quiet aerie.service || { as_root systemctl enable aerie.service; changed=1; }
    if [ "$restart" = 1 ] || [ "$changed" = 1 ] || ! systemctl is-active --quiet aerie.service; then
        as_root systemctl restart aerie.service
        result restarted
    else
        result unchanged
    fi
    ;;

airborne)  # PREFIX ID: is the running supervisor's vehicle armed? (the new release's code asks the live socket)
    prefix=$1 id=$2
    py=$prefix/releases/$id/venv/bin/python
    cfg=$prefix/current/config.yaml
    if [ ! -f "$cfg" ]; then result unknown; exit 0; fi
    if id aerie >/dev/null 2>&1; then
        state=$(as_aerie "$py" -m onboard.status --config "$cfg" --armed 2>&1 | tail -n 1) || state=unknown
    else
        state=$("$py" -m onboard.status --config "$cfg" --armed 2>&1 | tail -n 1) || state=unknown
    fi
    case "$state" in armed|disarmed) result "$state" ;; *) say "$state"; result unknown ;; esac
    ;;

live-health)  # PREFIX TIMEOUT_S: the supervisor's own report, retried while it starts
    prefix=$1 timeout=$2
    deadline=$(( $(date +%s) + timeout ))
    while :; do
        if out=$(as_aerie "$prefix/current/venv/bin/python" -m onboard.status --config "$prefix/current/config.yaml" 2>&1); then
            say "$out"; result healthy; exit 0
        fi
        [ "$(date +%s)" -lt "$deadline" ] || break
        sleep 2
    done
    say "$out"
    systemctl status --no-pager aerie.service 2>&1 | tail -n 20 || true
    result unhealthy
    ;;

*)
    say "unknown step $step" >&2
    exit 2
    ;;
esac
