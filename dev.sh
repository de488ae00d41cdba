#!/usr/bin/env bash
# gymview's set-up commands. Each installs everything it needs on a fresh Debian machine, Python
# packages into a virtual environment of the project (never into the system Python), JS tools into
# js/node_modules/ (the versions js/package-lock.json pins).
#   ./dev.sh build        bundle the widgets' front-end (js/ -> js/dist/, esbuild): the widgets and the
#                         wheel need it; the other commands run it first
#   ./dev.sh quickstart   build, install into .venv/, then open notebooks/quickstart.ipynb in JupyterLab
#   ./dev.sh docs         build, install into .venv/, then build the documentation site and serve it on
#                         http://127.0.0.1:8000 (rebuilt on each change)
#   ./dev.sh test         build, make .venv-test/ anew (every dependency resolved afresh), then run the
#                         whole suite: what CI runs. Stages: the linters (eslint over js/; ruff check,
#                         ruff format --check and mypy over gymview/, pinned by the lint extra); the JS
#                         unit tests; pytest (which also builds the documentation site with mkdocs
#                         build --strict); the wheel's smoke test in a new environment outside the
#                         checkout; the unit tests at the lowest versions pyproject.toml declares (in
#                         .venv-lowest/); dm_control's suite and the MuJoCo tests at MuJoCo 3 (in
#                         .venv-dmc/); the rollout tests with JAX and MuJoCo Playground on the CPU (in
#                         .venv-jax/). Extra arguments go to pytest, and then only pytest runs after
#                         the JS tests.
#   GYMVIEW_TEST_LOAD=1 ./dev.sh test   the same with every core kept busy by stress-ng, to show that no
#                                       test depends on timing
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
PIP_FLAGS=(-q --disable-pip-version-check)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {  # the Debian packages named, if any
  [ $# -gt 0 ] || return 0
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@"
}

install_debian() {  # the browser (and the emoji font its buttons' symbols need), X server, OpenGL libraries, JS
                    # runtime and CPU hog the tests use; ffmpeg comes from imageio-ffmpeg
  local missing=()
  for package in libosmesa6 libegl1 libgl1 fonts-noto-color-emoji; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  command -v chromium >/dev/null || missing+=(chromium)
  command -v stress-ng >/dev/null || missing+=(stress-ng)
  command -v Xvfb >/dev/null || missing+=(xvfb)
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)  # Debian packages npm apart from nodejs
  apt_install "${missing[@]}"
}

build() {  # js/ -> js/dist/ (esbuild); npm ci first when js/node_modules/ is missing or older than the lock file
  { command -v node && command -v npm; } >/dev/null || apt_install nodejs npm
  if [ ! -f js/node_modules/.package-lock.json ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
    npm --prefix js ci --no-audit --no-fund
  fi
  npm --prefix js run build
}

new_venv() {  # a virtual environment made empty, on PATH first (kernelspecs run `python` from PATH)
  "$PYTHON" -m venv --clear "$1"
  export VIRTUAL_ENV="$PWD/$1" PATH="$PWD/$1/bin:$PATH"
}

install_python() {  # torch first, pinned: any other spec pulls gigabytes of CUDA wheels
  echo "dev.sh: installing gymview[$1] into $VIRTUAL_ENV"
  python -m pip install "${PIP_FLAGS[@]}" "torch==2.13.0"
  python -m pip install "${PIP_FLAGS[@]}" -e ".[$1]"
}

stage() { echo "dev.sh: $1 ($(date +%T), ${SECONDS}s in)"; }

case "${1:-}" in
  build)
    build
    ;;
  quickstart)
    build
    [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
    export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
    install_python "lab,colab"
    root_flag=(); [ "$(id -u)" = 0 ] && root_flag=(--allow-root)
    exec python -m jupyterlab notebooks/quickstart.ipynb --ServerApp.ip=127.0.0.1 "${root_flag[@]}" "${@:2}"
    ;;
  docs)
    build
    [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
    export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
    install_python "test,torch"
    exec python -m mkdocs serve --dev-addr 127.0.0.1:8000 "${@:2}"
    ;;
  test)
    stage "Debian packages"
    install_debian
    stage "the front-end's bundles (./dev.sh build)"
    build
    stage "a new .venv-test/"
    new_venv .venv-test
    install_python "test,torch"
    # a robot of meshes and pictures for the MuJoCo browser tests (Adroit's hand); kept out of the test extra,
    # which the lowest-versions stage installs too: it needs a newer gymnasium than gymview's lowest
    python -m pip install "${PIP_FLAGS[@]}" "gymnasium-robotics>=1.4"
    if [ "${GYMVIEW_TEST_LOAD:-0}" = 1 ]; then
      stress-ng --cpu "$(nproc)" --quiet & hog=$!
      trap 'kill "$hog" 2>/dev/null' EXIT
    fi
    stage "linters"
    npm --prefix js run lint
    ruff check gymview
    ruff format --check gymview
    mypy  # its settings, and the files it checks, are pyproject.toml's [tool.mypy]
    stage "JS unit tests"
    npm --prefix js test
    stage "pytest"
    python -m pytest -p no:cacheprovider -rs "${@:2}"
    [ $# -gt 1 ] && exit 0
    stage "the wheel, installed outside the checkout"
    python tests/packaging/wheel_smoke.py
    stage "unit tests at the lowest declared versions, in .venv-lowest/"
    python tests/packaging/lowest.py .venv-lowest
    stage "dm_control's suite and the MuJoCo tests at MuJoCo 3, in .venv-dmc/"
    python tests/packaging/dm_control.py .venv-dmc
    stage "JAX rollouts: MuJoCo Playground stepped on the CPU, in .venv-jax/"
    python tests/packaging/jax_rollouts.py .venv-jax
    stage "done"
    ;;
  *)
    echo "usage: ./dev.sh build | ./dev.sh quickstart | ./dev.sh test [pytest args] | ./dev.sh docs" >&2
    exit 2
    ;;
esac
