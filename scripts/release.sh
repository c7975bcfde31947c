# Sourced by scripts/install and action/run.sh: the prebuilt binary of a
# release, downloaded and checked against the release's SHA256SUMS before it
# is used. Both would otherwise compile the store's C++ engine (30-40 minutes
# on 2 cores).
#
# The release workflow (.github/workflows/release.yml) publishes, for every
# tag v*, git-diffidx-<tag>-<target>.tar.gz holding
# git-diffidx-<tag>-<target>/git-diffidx, and SHA256SUMS.

# The Rust target a prebuilt binary must be for on this machine.
diffidx_target_triple() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    *) return 1 ;;
  esac
}

diffidx_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# diffidx_fetch_release TAG BASE DEST: the release TAG's binary for this
# machine, from BASE/TAG/, verified and run once (--version), copied to DEST;
# prints the target. Otherwise says why on stderr and returns non-zero,
# leaving DEST untouched.
diffidx_fetch_release() {
  local tag=$1 base=$2 dest=$3 target
  if ! target=$(diffidx_target_triple); then
    echo "no prebuilt binary for $(uname -s) $(uname -m)" >&2
    return 1
  fi
  if ! command -v curl >/dev/null 2>&1; then
    echo "curl is not installed" >&2
    return 1
  fi
  local name="git-diffidx-$tag-$target"
  local tmp
  tmp=$(mktemp -d)
  if ! curl -fsSL --retry 3 --connect-timeout 10 -o "$tmp/$name.tar.gz" "$base/$tag/$name.tar.gz" \
     || ! curl -fsSL --retry 3 --connect-timeout 10 -o "$tmp/SHA256SUMS" "$base/$tag/SHA256SUMS"; then
    echo "cannot download $name.tar.gz and SHA256SUMS from $base/$tag" >&2
    rm -rf "$tmp"
    return 1
  fi
  local expected actual
  expected=$(awk -v f="$name.tar.gz" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")
  actual=$(diffidx_sha256 "$tmp/$name.tar.gz")
  if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
    echo "checksum mismatch for $name.tar.gz (SHA256SUMS: ${expected:-no entry}, download: $actual)" >&2
    rm -rf "$tmp"
    return 1
  fi
  if ! tar -xzf "$tmp/$name.tar.gz" -C "$tmp" \
     || ! "$tmp/$name/git-diffidx" --version >/dev/null 2>&1; then
    echo "the downloaded $name.tar.gz holds no working git-diffidx" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$(dirname "$dest")"
  cp "$tmp/$name/git-diffidx" "$dest.tmp.$$"
  chmod 755 "$dest.tmp.$$"
  mv -f "$dest.tmp.$$" "$dest"
  rm -rf "$tmp"
  echo "$target"
}
