#!/usr/bin/env bash
# .gpu/run PHASE [ARGS...]: the GPU kit's phases (make gpu-kit builds the
# kit; docs/gpu.md says what to run on a GPU host). Each stops within its
# time limit, UMP_KIT_LIMIT seconds (default below), and writes its logs
# and results under UMP_KIT_HOME/out; $OUT (the device's result folder, or
# set OUT=DIR) gets all of them as kit-out.tar.gz, and the summaries.
#   all [MANIFEST [PATH=VALUE...]...]
#                    one command within 570 s: smoke, then agree (2/5 of
#                    the limit), bench of UMP_KIT_BENCH (default
#                    "lenet-c36-n10,lenet-c180-n10 -gpu-peers jax"; 1/4),
#                    then tables of the manifests in the time left; a
#                    line per phase in all-summary.txt
#   smoke            nvidia-smi, the kit, ump doctor (backend, PJRT plugin and
#                    version, the compile check, XLA's warnings); 120 s
#   agree            every GPU agreement test (nn/gpu, pipeline, the CLI) on the
#                    backend; on XLA only their XLA half; 480 s
#   bench [CASES]    the GPU engine against the JAX and torch.func peers
#                    (default lenet-c1-n10,lenet-c36-n10,lenet-c180-n10; more
#                    flags of nn/gpu's BenchmarkGPUPeerComparison may follow); 530 s
#   profile [CASE]   where a round's time goes on XLA: the bench case
#                    (lenet-c36-n10) for 5 rounds, under nsys where the host
#                    has it (every GPU kernel's time, profile.log), and
#                    XLA's optimized programs (xla-dump/: the kernels
#                    it fused); 300 s
#   tables [MANIFEST [PATH=VALUE...]...]
#                    ump run --engine gpu of each manifest in turn
#                    (paper/table1-mnist), each with the overrides that
#                    follow it, stopped at a safe point at the limit (510 s), then
#                    one report and the exports of those it ran (results/);
#                    run it again to continue (exit 75 until every cell
#                    of every manifest is done)
# The backend is $GOMLX_BACKEND, else the CUDA plugin ump finds. The kit
# unpacks once under UMP_KIT_HOME (/tmp/ump-kit), where the tables' store
# (UMP_KIT_STORE) is kept between calls.
set -euo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
phase=${1:-help}
shift || true
case $phase in all) limit=570 ;; smoke) limit=120 ;; agree) limit=480 ;; bench) limit=530 ;; profile) limit=300 ;; tables) limit=510 ;; *)
	sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
	[ "$phase" = help ] && exit 0
	echo ".gpu/run: unknown phase \"$phase\"" >&2
	exit 2
	;;
esac
limit=${UMP_KIT_LIMIT:-$limit}
out=${OUT:?set OUT to the folder for the results (the device tool sets it)}
home=${UMP_KIT_HOME:-/tmp/ump-kit}
logs=$home/out # every phase's logs and results, kept between calls as the store is
mkdir -p "$out" "$logs"

# deliver: $OUT gets every phase's logs and results so far, this call's
# and earlier calls' on this host, as one archive (kit-out.tar.gz), and
# the summaries beside it: a device gives back at most 8 files. It runs
# whenever .gpu/run ends, so under all after every phase.
deliver() {
	tar -C "$logs" -czf "$out/kit-out.tar.gz.part" . && mv "$out/kit-out.tar.gz.part" "$out/kit-out.tar.gz"
	for f in all-summary.txt smoke-doctor.log agree-summary.txt bench.log profile.log tables-summary.txt; do
		if [ -f "$logs/$f" ]; then cp "$logs/$f" "$out/"; fi
	done
}
trap deliver EXIT
sum=$(sed -n 's/^sha256 //p' "$kit/KIT")
dir=$home/$sum
if [ ! -x "$dir/bin/ump-gpu" ]; then
	echo "unpacking the kit into $dir" >&2
	(cd "$kit" && echo "$sum  kit.tar.xz" | sha256sum -c --quiet -) || { echo ".gpu/run: kit.tar.xz does not match .gpu/KIT: rebuild it (make gpu-kit)" >&2; exit 2; }
	rm -rf "$dir.part"
	mkdir -p "$dir.part"
	if command -v xz > /dev/null; then
		xz -dc "$kit/kit.tar.xz" | tar -C "$dir.part" -xf -
	else # python3's lzma, where the host lacks xz
		python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$kit/kit.tar.xz" "$dir.part"
	fi
	mv "$dir.part" "$dir"
fi
ump=$dir/bin/ump-gpu
export UMP_DATA=$dir/data
for venv in /opt/*/.venv/bin; do # the GPU host's python3 with JAX and PyTorch, for the peers
	[ -x "$venv/python3" ] && PATH=$venv:$PATH
done
# doctor_backend: the backend named in ump doctor's output on stdin.
doctor_backend() { sed -n 's/^  backend: GOMLX_BACKEND=//p'; }
export GOMLX_BACKEND=${GOMLX_BACKEND:-}
case $phase in smoke | all) ;; *) # smoke runs doctor itself, and all smoke first
	[ -n "$GOMLX_BACKEND" ] || GOMLX_BACKEND=$("$ump" doctor 2>/dev/null | doctor_backend)
	if [ -z "$GOMLX_BACKEND" ]; then
		echo ".gpu/run: no GPU backend (ump doctor finds no CUDA plugin): run .gpu/run smoke to see why, or set GOMLX_BACKEND" >&2
		exit 2
	fi
	;;
esac

# run NAME CMD...: runs a command, its output into $logs/NAME.log and on
# stdout, and returns its exit status.
run() {
	local name=$1
	shift
	set +e
	"$@" 2>&1 | tee "$logs/$name.log"
	local rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

case $phase in
all)
	start=$(date +%s)
	: > "$logs/all-summary.txt"
	# step NAME LIMIT ARGS...: .gpu/run NAME ARGS... within LIMIT seconds,
	# its exit status and time noted in all-summary.txt.
	step() {
		local name=$1 lim=$2 began rc=0
		shift 2
		began=$(date +%s)
		UMP_KIT_LIMIT=$lim "$kit/run" "$name" "$@" || rc=$?
		echo "$name: exit $rc after $(($(date +%s) - began)) s (limit $lim s)" | tee -a "$logs/all-summary.txt"
		return "$rc"
	}
	step smoke 60 || exit 1
	[ -n "$GOMLX_BACKEND" ] || GOMLX_BACKEND=$(doctor_backend < "$logs/smoke-doctor.log")
	failed=0
	step agree $((limit * 2 / 5)) || failed=1
	read -r -a bench <<< "${UMP_KIT_BENCH:-lenet-c36-n10,lenet-c180-n10 -gpu-peers jax}"
	step bench $((limit / 4)) "${bench[@]}" || failed=1
	# The time left, less a minute for ump to reach a safe point and report.
	left=$((start + limit - $(date +%s) - 60))
	tables=0
	if [ "$left" -lt 30 ]; then
		echo "tables: not started, $left s left (run .gpu/run tables)" | tee -a "$logs/all-summary.txt"
		tables=75
	else
		step tables "$left" "$@" || tables=$?
	fi
	# 1 if agree or bench failed, else the table's status (75: to be continued).
	[ $failed = 0 ] || exit 1
	exit $tables
	;;
smoke)
	{
		cat "$kit/KIT"
		date -u
		if command -v nvidia-smi > /dev/null; then nvidia-smi; else echo "nvidia-smi: none here"; fi
	} 2>&1 | tee "$logs/smoke-host.log"
	run smoke-doctor timeout -s INT "$limit" "$ump" doctor
	grep -q '^gpu: works' "$logs/smoke-doctor.log" || { echo ".gpu/run smoke: the GPU engine does not work here (above)" >&2; exit 1; }
	;;
agree)
	half=gomlx-go
	case $GOMLX_BACKEND in xla:*) half=xla ;; esac
	# The three packages' tests side by side, each from its package's folder.
	# nn/gpu's tests name a subtest by its backend first; the parentheses
	# keep "/$half" on all three (Go splits a -run pattern at a top-level "|").
	(cd "$dir/nn/gpu" && exec ./gpu.test -test.v -test.timeout "${limit}s" -test.run "(GPU|Cohort|Check)/$half") > "$logs/agree-gpu.log" 2>&1 &
	gpu=$!
	(cd "$dir/pipeline" && exec ./pipeline.test -test.v -test.timeout "${limit}s" -test.run Cohort) > "$logs/agree-pipeline.log" 2>&1 &
	pipeline=$!
	(cd "$dir/cmd/ump" && UMP_TEST_BINARY=$ump exec ./ump.test -test.v -test.timeout "${limit}s" -test.run GPU) > "$logs/agree-cli.log" 2>&1 &
	cli=$!
	rc=0
	for p in $gpu $pipeline $cli; do
		wait "$p" || rc=1
	done
	tail -n 3 "$logs"/agree-gpu.log "$logs"/agree-pipeline.log "$logs"/agree-cli.log
	grep -h -E '^(--- |    --- )(PASS|FAIL|SKIP)|worst relative difference|within [0-9.e-]+ of the CPU|differs|exact order on' \
		"$logs"/agree-gpu.log "$logs"/agree-pipeline.log "$logs"/agree-cli.log > "$logs/agree-summary.txt" || true
	echo "agree on $GOMLX_BACKEND: $(grep -c -- '--- PASS' "$logs/agree-summary.txt") passed, $(grep -c -- '--- FAIL' "$logs/agree-summary.txt") failed (summary in agree-summary.txt)"
	exit $rc
	;;
bench)
	cases=${1:-lenet-c1-n10,lenet-c36-n10,lenet-c180-n10}
	shift || true
	cd "$dir/nn/gpu"
	run bench timeout -s INT "$limit" ./gpu.test -test.run '^$' -test.bench '^BenchmarkGPUPeerComparison$' -test.benchtime 1x -gpu-cases "$cases" "$@"
	;;
profile)
	case $GOMLX_BACKEND in xla:*) ;; *)
		echo ".gpu/run profile: it profiles XLA's kernels on a GPU; the backend here is $GOMLX_BACKEND" >&2
		exit 2
		;;
	esac
	nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2> /dev/null | head -1 || true)
	dump=$logs/xla-dump
	rm -rf "$dump" "$logs/profile".*
	export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_dump_to=$dump --xla_dump_hlo_as_text"
	bench=(./gpu.test -test.run '^$' -test.bench '^BenchmarkGPUPeerComparison$' -test.benchtime 1x -gpu-cases "${1:-lenet-c36-n10}" -gpu-peers none -gpu-rounds 5)
	cd "$dir/nn/gpu"
	rc=0
	if [ -n "$nsys" ]; then
		run profile timeout -s INT "$limit" "$nsys" profile --stats=true --force-overwrite=true -o "$logs/profile" "${bench[@]}" || rc=$?
		rm -f "$logs/profile.nsys-rep" "$logs/profile.sqlite" # the stats are in profile.log; the trace would not come back (16 MiB a file)
	else
		{ echo "profile: no nsys on this host (nor in /usr/local/cuda/bin): XLA's optimized programs only"; timeout -s INT "$limit" "${bench[@]}"; } > "$logs/profile.log" 2>&1 || rc=$?
		cat "$logs/profile.log"
	fi
	# Of XLA's dump, the programs as they ran (after its optimizations).
	if [ -d "$dump" ]; then find "$dump" -type f ! -name '*after_optimizations.txt' -delete; fi
	echo "profile: $(find "$dump" -type f 2> /dev/null | wc -l) optimized programs in xla-dump/"
	exit $rc
	;;
tables)
	# An argument without "=" is a manifest, one with "=" an override of
	# the manifest before it (one line of overrides[i] each).
	manifests=() overrides=()
	for a in "$@"; do
		case $a in
		*=*)
			[ ${#manifests[@]} -gt 0 ] || { echo ".gpu/run tables: override $a comes before any manifest: name the manifest first" >&2; exit 2; }
			overrides[-1]+="$a"$'\n'
			;;
		*) manifests+=("$a") overrides+=("") ;;
		esac
	done
	[ ${#manifests[@]} -gt 0 ] || manifests=(paper/table1-mnist) overrides=("")
	store=${UMP_KIT_STORE:-$home/store}
	start=$(date +%s)
	hashes=() rc=0
	: > "$logs/tables-summary.txt"
	: > "$logs/tables-status.txt"
	: > "$logs/tables-run.log"
	for i in "${!manifests[@]}"; do
		manifest=${manifests[$i]}
		mapfile -t changes < <(printf %s "${overrides[$i]}")
		began=$(date +%s)
		left=$((start + limit - began))
		if [ "$left" -lt 1 ]; then
			echo "tables: $manifest not started: the limit was reached" | tee -a "$logs/tables-summary.txt"
			rc=130
			break
		fi
		# --foreground: the signal to ump alone (without it timeout signals the
		# process group too, and a second SIGINT ends ump at once, unsaved).
		set +e
		timeout --foreground --preserve-status -s INT -k 60 "$left" \
			"$ump" --store "$store" run --engine gpu "$manifest" "${changes[@]}" > "$logs/tables-run.out" 2> >(tee -a "$logs/tables-run.log" >&2)
		rc=$?
		set -e
		took=$(($(date +%s) - began))
		hash=$(sed -n 's/^manifest //p' "$logs/tables-run.out" | head -1)
		if [ -z "$hash" ]; then
			echo ".gpu/run tables: ump run of $manifest stopped before naming the manifest (exit $rc; tables-run.log)" >&2
			exit 1
		fi
		hashes+=("$hash")
		echo "$took" >> "$store/kit-seconds-$hash"
		total=$(awk '{s += $1} END {print s}' "$store/kit-seconds-$hash")
		"$ump" --store "$store" status "$hash" >> "$logs/tables-status.txt" 2>&1 || true
		echo "tables: $manifest ${changes[*]} (manifest $hash): ump run exited $rc after $took s; $total s of ump run over $(wc -l < "$store/kit-seconds-$hash") call(s)" | tee -a "$logs/tables-summary.txt"
		[ "$rc" = 0 ] || break
	done
	rm -rf "$logs/results"
	if [ ${#hashes[@]} -gt 0 ]; then "$ump" --store "$store" report "${hashes[@]}" --out "$logs/results"; fi
	case $rc in
	0) ;;
	130) echo "stopped at the time limit at a safe point: run .gpu/run tables again (same arguments) to continue" | tee -a "$logs/tables-summary.txt"; exit 75 ;;
	*) exit "$rc" ;;
	esac
	;;
esac
