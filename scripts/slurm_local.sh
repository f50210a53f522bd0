#!/usr/bin/env bash
# A single-node Slurm cluster on localhost from Debian 12's packages (munge, slurmctld, slurmd),
# for the tests and for trying --executor slurm by hand. Root only (slurmd runs jobs as their
# submitter). Everything lives under DIR; nothing in /etc/slurm is touched.
#   scripts/slurm_local.sh start DIR   prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   scripts/slurm_local.sh stop DIR
set -euo pipefail
cmd="${1:?start|stop}"
dir="${2:?state directory}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
conf="$dir/slurm.conf"

stop() {
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "slurm_local.sh: needs root" >&2; exit 3; }
for tool in munged slurmctld slurmd sbatch squeue; do
  command -v "$tool" >/dev/null || { echo "slurm_local.sh: $tool not installed" >&2; exit 3; }
done

# munge: the authentication Slurm's daemons and clients share (the package made its key).
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  if [ -x /etc/init.d/munge ]; then /etc/init.d/munge start >/dev/null; else munged; fi
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

stop  # a cluster an earlier run left in DIR
# Free ports for the controller and the node daemon, so that clusters do not collide.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host="$(hostname -s)"
cpus="$(nproc)"
mem_mb="$(awk '/MemTotal/ {print int($2/1024/2)}' /proc/meminfo)"
rm -rf "$dir/state" "$dir/spool"
mkdir -p "$dir/state" "$dir/spool"
cat >"$conf" <<CONF
ClusterName=evald-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SchedulerParameters=sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=60
MaxArraySize=100001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=evald Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$conf" -c
slurmd -f "$conf"
export SLURM_CONF="$conf"
for _ in $(seq 100); do
  state="$(sinfo -h -N -o %t 2>/dev/null || true)"
  [ "$state" = idle ] && { echo "SLURM_CONF=$conf"; exit 0; }
  sleep 0.2
done
echo "slurm_local.sh: the node did not become idle (state '${state:-none}'); see $dir/*.log" >&2
exit 1
