#!/usr/bin/env bash
# gymview's two set-up commands. Each installs everything it needs on a fresh Debian machine.
#   ./dev.sh quickstart   install, then open notebooks/quickstart.ipynb in JupyterLab
#   ./dev.sh test         install, then run the whole test suite (what CI runs)
#   GYMVIEW_TEST_LOAD=1 ./dev.sh test   the same with every core kept busy by stress-ng, to show that no
#                                       test depends on timing
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_debian() {  # the browser, X server, OpenGL libraries, JS runtime and CPU hog the tests use; ffmpeg comes from imageio-ffmpeg
  local missing=()
  for package in libosmesa6 libegl1 libgl1; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  command -v chromium >/dev/null || missing+=(chromium)
  command -v stress-ng >/dev/null || missing+=(stress-ng)
  command -v Xvfb >/dev/null || missing+=(xvfb)
  command -v node >/dev/null || missing+=(nodejs)
  if [ ${#missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
  fi
}

install_python() {  # torch first, pinned: any other spec pulls gigabytes of CUDA wheels
  "$PYTHON" -m pip install -q --disable-pip-version-check "torch==2.13.0"
  "$PYTHON" -m pip install -q --disable-pip-version-check -e ".[$1]"
}

case "${1:-}" in
  quickstart)
    install_python "lab,colab"
    root_flag=(); [ "$(id -u)" = 0 ] && root_flag=(--allow-root)
    exec "$PYTHON" -m jupyterlab notebooks/quickstart.ipynb --ServerApp.ip=127.0.0.1 "${root_flag[@]}" "${@:2}"
    ;;
  test)
    install_debian
    install_python "test,torch"
    if [ "${GYMVIEW_TEST_LOAD:-0}" = 1 ]; then
      stress-ng --cpu "$(nproc)" --quiet & hog=$!
      trap 'kill "$hog" 2>/dev/null' EXIT
    fi
    node --test js/tests/
    "$PYTHON" -m pytest -q -p no:cacheprovider "${@:2}"
    ;;
  *)
    echo "usage: ./dev.sh quickstart | ./dev.sh test [pytest args]" >&2
    exit 2
    ;;
esac
