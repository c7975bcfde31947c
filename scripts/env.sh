# Sourced by scripts/install and scripts/test: the one build directory, and
# the Debian packages the build needs (kuzu builds a C++ engine with CMake,
# jemalloc builds with make), installed by `diffidx_build_tools`.

# One persistent target directory outside the clone, shared by tests, benches
# and install (all in the release profile), so the C++ engine is built once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${HOME:-/root}/.cache/diffidx-target}"

# The Debian packages the build needs, installed when missing; cargo itself
# must be there. Called before anything is compiled.
diffidx_build_tools() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  # jemalloc (the binary's allocator on Linux) is built with its configure and make.
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v git >/dev/null 2>&1 || missing+=(git)
  # The Action's download path (and its test) fetches with curl.
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v cargo >/dev/null 2>&1 || {
    echo "error: cargo not found; install Rust (https://rustup.rs) and try again" >&2
    exit 2
  }
  if [ ${#missing[@]} -gt 0 ]; then
    diffidx_apt_install "${missing[@]}"
  fi
}

# Installs Debian packages, through sudo unless root.
diffidx_apt_install() {
  local sudo_cmd=""
  echo "installing Debian packages: $*" >&2
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@"
}
