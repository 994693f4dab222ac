#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the tests and the scale benchmark (issue 12).
#
#   tools/slurm_cluster.sh start    # munged + slurmctld + slurmd; waits until the node is idle
#   tools/slurm_cluster.sh stop     # stops every daemon this script started, removes its config
#   tools/slurm_cluster.sh status   # exit 0 when our cluster is up
#
# Needs root and Debian's slurm-wlm and munge (`make sysdeps`). No systemd or cgroups:
# proctrack/linuxproc, task/none, select/cons_tres with CR_Core_Memory, SlurmUser=root,
# NodeName = `hostname -s`. The config sits at Slurm's default path (/etc/slurm/slurm.conf)
# because job steps strip SLURM_CONF; a slurm.conf this script did not write is never touched.
# There is no slurmdbd: the SLURM profile polls with squeue, so MinJobAge=300 keeps finished
# jobs visible to squeue. If `start` fails half-way, everything it started is stopped again.
set -Eeuo pipefail

RUN=${EVALSIM_SLURM_DIR:-/var/tmp/evalsim-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# evalsim one-node test cluster (tools/slurm_cluster.sh); removed by 'stop'"
MUNGE_SOCKET=/run/munge/munge.socket.2
MUNGE_PID=/run/munge/evalsim-munged.pid

die() {
	echo "slurm_cluster: $*" >&2
	exit 1
}

alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pidfile() {
	local pidfile=$1 pid i
	[[ -s $pidfile ]] || return 0
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
}

stop() {
	local i
	# Jobs first (their processes are children of slurmstepd), then the daemons.
	if alive "$RUN/slurmctld.pid"; then
		timeout 10 scancel --quiet --user=root 2>/dev/null || true
		for i in $(seq 30); do
			[[ -z $(timeout 5 squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null) ]] && break
			sleep 0.5
		done
	fi
	stop_pidfile "$RUN/slurmd.pid"
	stop_pidfile "$RUN/slurmctld.pid"
	# A slurmstepd can outlive slurmd; any is ours, as start refuses to run beside another slurmd.
	if [[ -f $RUN/started ]]; then
		pkill -KILL -x slurmstepd 2>/dev/null || true
		rm -f "$RUN/started"
	fi
	stop_pidfile "$MUNGE_PID"
	if [[ -f $CONF ]] && head -1 "$CONF" | grep -qF "$MARK"; then
		rm -f "$CONF"
	fi
}

write_conf() {
	local node cpus mem
	node=$(hostname -s)
	cpus=$(nproc)
	mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
	mem=$((mem * 9 / 10))
	mkdir -p "$(dirname "$CONF")" "$RUN/state" "$RUN/spool" "$RUN/log"
	cat >"$CONF" <<EOF
$MARK
ClusterName=evalsim
SlurmctldHost=$node
SlurmUser=root
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
StateSaveLocation=$RUN/state
SlurmdSpoolDir=$RUN/spool
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd.log
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmctldTimeout=60
SlurmdTimeout=60
NodeName=$node CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
	[[ $(id -u) == 0 ]] || die "needs root (slurmd runs jobs as their user)"
	local b
	for b in munged slurmctld slurmd sinfo sbatch squeue scancel; do
		command -v "$b" >/dev/null || die "'$b' not found: install slurm-wlm and munge (make sysdeps)"
	done
	[[ -r /etc/munge/munge.key ]] || die "/etc/munge/munge.key missing (reinstall munge)"
	if [[ -f $CONF ]] && ! head -1 "$CONF" | grep -qF "$MARK"; then
		die "$CONF exists and was not written by this script; not touching it"
	fi
	if alive "$RUN/slurmctld.pid"; then
		die "a cluster from this script is already running ($RUN); run 'stop' first"
	fi
	if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
		die "another slurmctld/slurmd is running on this machine; not starting a second one"
	fi
	trap 'echo "slurm_cluster: start failed; stopping what was started" >&2; stop' ERR
	mkdir -p "$RUN"
	rm -rf "$RUN/state" "$RUN/spool"
	write_conf
	# munged: reuse a running one (not ours, left alone by stop); else start one as 'munge'.
	if ! munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1; then
		install -d -o munge -g munge -m 0755 /run/munge
		install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
		runuser -u munge -- munged --pid-file="$MUNGE_PID" --force
		for _ in $(seq 50); do [[ -s $MUNGE_PID ]] && break; sleep 0.1; done
		munge -n -S "$MUNGE_SOCKET" | unmunge -S "$MUNGE_SOCKET" >/dev/null
	fi
	touch "$RUN/started"
	slurmctld -i
	slurmd
	local i state=""
	for i in $(seq 120); do
		state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
		[[ $state == idle ]] && break
		sleep 0.5
	done
	if [[ $state != idle ]]; then
		tail -5 "$RUN/log/slurmctld.log" "$RUN/log/slurmd.log" >&2 || true
		false "node state '$state', not idle"
	fi
	trap - ERR
	echo "slurm_cluster: one-node cluster up (node $(hostname -s), $(nproc) CPUs, logs in $RUN/log)"
}

status() {
	alive "$RUN/slurmctld.pid" && alive "$RUN/slurmd.pid" &&
		[[ $(sinfo -h -N -o %t 2>/dev/null | head -1) =~ ^(idle|mix|alloc)$ ]]
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
