# Sourced by the test peers' scripts (Tests/ldap/slapd.sh, Tests/samba/samba-dc.sh).

# True when PID runs and is not a zombie. PID 1 here may not reap orphans, so a killed peer can
# linger as a zombie that `kill -0` still reports as alive.
live_process() {
  local pid="$1" state
  [ -n "$pid" ] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  [ -r "/proc/$pid/stat" ] || return 0
  state="$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]) .*/\1/' "/proc/$pid/stat" 2>/dev/null || true)"
  [ "$state" != "Z" ]
}
