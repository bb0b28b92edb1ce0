#!/usr/bin/env bash
# Installs and starts what authbench needs on a Debian 12 host: the Docker
# engine (Debian's docker.io), strace, debootstrap (offline base images),
# Chromium (the HTML report test), Slurm with munge (the Slurm executor test) and bpftrace with tracefs mounted
# (the experimental eBPF tracer, sandbox/ebpf). Idempotent: installs only what is missing, mounts tracefs only
# when it is not mounted, starts dockerd only when nothing answers on the socket.
set -euo pipefail

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# A one-node Slurm cluster for the --executor slurm test (started by the test, in a temp folder).
command -v sbatch >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || need+=(munge)
# The eBPF tracer (sandbox/ebpf): Debian 12's bpftrace 0.17 attaches to tracepoint:syscalls:* once tracefs is mounted.
command -v bpftrace >/dev/null 2>&1 || need+=(bpftrace)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup-host: missing ${need[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "setup-host: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The syscall tracepoints live in tracefs; not every host mounts it. Best effort: without it the eBPF
# probe reports why and the tracer is refused (strace still works).
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && ! mountpoint -q /sys/kernel/tracing; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || echo "setup-host: could not mount tracefs at /sys/kernel/tracing (the eBPF tracer will be unavailable)" >&2
fi

sock=/var/run/docker.sock
answers() { curl -sf --max-time 5 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1; }
if [ -n "${DOCKER_HOST:-}" ]; then
  echo "setup-host: DOCKER_HOST is set ($DOCKER_HOST); not starting a daemon"
elif ! answers; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup-host: nothing answers on $sock and we are not root to start dockerd" >&2
    exit 1
  fi
  echo "setup-host: starting dockerd"
  mkdir -p /var/log
  # A session of its own: whoever ran this script may end (a closed terminal, a job runner that
  # kills its process group when the job is done) without taking the daemon and every
  # container with it.
  setsid nohup dockerd >/var/log/authbench-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    answers && break
    sleep 1
  done
  if ! answers; then
    echo "setup-host: dockerd did not answer on $sock within 60 s; last log lines:" >&2
    tail -n 20 /var/log/authbench-dockerd.log >&2 || true
    exit 1
  fi
fi
echo "setup-host: docker answers"
