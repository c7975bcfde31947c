# Sourced by scripts/install and scripts/test: the one build directory, how
# the store's engine (LadybugDB, crate `lbug`) is built, and the Debian
# packages the build needs (the engine is C++ built with CMake, jemalloc
# builds with make), installed by `diffidx_build_tools`.

# One persistent target directory outside the clone, shared by tests, benches
# and install (all in the release profile), so the C++ engine is built once.
# Named for the engine and how it is built: a checkout from before LadybugDB
# (Kuzu, built with GCC) or from before its unity build (below) keeps its
# own, so switching between them rebuilds no engine.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${HOME:-/root}/.cache/diffidx-target-lbug-unity}"

# How the engine is built, chosen once per build directory (a change of
# mind would rebuild it): `prebuilt` links the static library that
# LadybugDB publishes for its release (minutes), `source` compiles it (about
# half an hour on 2 cores). The prebuilt library is taken where GitHub answers.
# The source needs C++20's <format>, which Debian 12's GCC lacks: there
# every C++ crate is compiled with clang and libc++, and build.rs links
# libc++ in, so the binary has one C++ runtime. DIFFIDX_ENGINE_BUILD sets
# the choice for a new build directory.
diffidx_engine_build() {
  local choice="$CARGO_TARGET_DIR/engine-build"
  local how=${DIFFIDX_ENGINE_BUILD:-}
  if [ -z "$how" ] && [ -f "$choice" ]; then
    how=$(cat "$choice")
  fi
  if [ -z "$how" ]; then
    if curl -fsI --max-time 10 https://github.com/LadybugDB/ladybug/releases >/dev/null 2>&1; then
      how=prebuilt
    else
      how=source
    fi
  fi
  mkdir -p "$CARGO_TARGET_DIR"
  echo "$how" > "$choice"
  case "$how" in
    prebuilt)
      export LBUG_VERSION=0.22.1
      ;;
    source)
      export LBUG_BUILD_FROM_SOURCE=1
      export CXX="${DIFFIDX_CXX:-clang++-19}"
      export CXXFLAGS="-stdlib=libc++"
      # cc links nothing of its own: build.rs links libc++ in whole (a
      # shared libc++ would bring LLVM's libunwind along as a library).
      export CXXSTDLIB=""
      # Compiled in batches (scripts/engine-unity.cmake says why and how).
      # CMake reads the file again whenever the build script runs, so it
      # is kept where the build directory is, not in a clone that may go.
      local scripts
      scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
      cmp -s "$scripts/engine-unity.cmake" "$CARGO_TARGET_DIR/engine-unity.cmake" ||
        cp "$scripts/engine-unity.cmake" "$CARGO_TARGET_DIR/engine-unity.cmake"
      export CMAKE_TOOLCHAIN_FILE="$CARGO_TARGET_DIR/engine-unity.cmake"
      ;;
    *)
      echo "error: DIFFIDX_ENGINE_BUILD is '$how'; use prebuilt or source" >&2
      exit 2
      ;;
  esac
}

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
  # The engine links OpenSSL's libraries.
  [ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
  if [ "${LBUG_BUILD_FROM_SOURCE:-}" = 1 ] && [ -z "${DIFFIDX_CXX:-}" ]; then
    command -v clang++-19 >/dev/null 2>&1 || missing+=(clang-19)
    [ -e /usr/lib/llvm-19/lib/libc++.a ] || missing+=(libc++-19-dev)
    [ -e /usr/lib/llvm-19/lib/libc++abi.a ] || missing+=(libc++abi-19-dev)
  fi
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

diffidx_engine_build
