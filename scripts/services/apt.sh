# shellcheck shell=bash
# Defines weir_apt_install PACKAGE..., which installs Debian packages with
# apt-get, as root or through sudo. Sourced by scripts/test.sh and
# scripts/services/postgres.sh.
#
# apt lets one process at a time update its lists or install, and another
# (a second copy of the test script, or the system's own updates) may hold
# its locks: the install waits for the dpkg lock (DPkg::Lock::Timeout), and
# an update that finds the lists locked is tried again every 5 s. Either
# gives up after WEIR_APT_WAIT seconds (default 600) with apt's message;
# any other failure (no network, an unknown package) fails at once.

weir_apt_install() {
  local sudo="" wait=${WEIR_APT_WAIT:-600} waited=0 out
  [ "$(id -u)" = 0 ] || sudo="sudo"
  until out=$($sudo apt-get update -qq 2>&1); do
    if ! grep -q 'Could not get lock' <<<"$out" || [ "$waited" -ge "$wait" ]; then
      if [ "$waited" -gt 0 ]; then
        echo "apt-get update failed after waiting ${waited}s for apt's lock:" >&2
      else
        echo "apt-get update failed:" >&2
      fi
      echo "$out" >&2
      return 1
    fi
    [ "$waited" -gt 0 ] || echo "apt-get update: another process holds apt's lists; waiting up to ${wait}s" >&2
    sleep 5
    waited=$((waited + 5))
  done
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout="$wait" install -y -qq "$@" >/dev/null
}
