#!/usr/bin/env bash
# make gpu-kit: builds .gpu/, everything a GPU host without Go or network
# needs to verify the GPU engine and produce the paper's tables with it:
#   .gpu/run          the phases (gpukit/run.sh; .gpu/run help)
#   .gpu/kit.tar.xz   the stripped test binaries of nn/gpu (-tags 'xla peer',
#                     with the peer scripts), pipeline and cmd/ump (-tags
#                     xla), each under its package's path; bin/ump-gpu, a
#                     script that runs cmd/ump's as ump; MNIST;
#                     go.mod (the bench reads GoMLX's and go-xla's versions)
#   .gpu/KIT          what was built, from which commit, and the archive's sha256
# The folder and the working tree must fit in 64 MiB, what one command may
# take to a GPU host.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((64 << 20))
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/nn/gpu" "$stage/nn/cpu" "$stage/pipeline" "$stage/cmd/ump" "$stage/data"

strip=(-ldflags=-s\ -w)
go test -c -tags 'xla peer' "${strip[@]}" -o "$stage/nn/gpu/gpu.test" ./nn/gpu
go test -c -tags xla "${strip[@]}" -o "$stage/pipeline/pipeline.test" ./pipeline
go test -c -tags xla "${strip[@]}" -o "$stage/cmd/ump/ump.test" ./cmd/ump
cp -r nn/gpu/peerbench "$stage/nn/gpu/"
cp -r nn/cpu/peerbench "$stage/nn/cpu/" # the per-worker PyTorch loop the GPU bench also times
cp -r pipeline/testdata "$stage/pipeline/"
cp go.mod "$stage/"
# ump-gpu is the CLI's test binary run as ump (its TestMain): one binary of
# that code, not two (10 MB less in the archive).
cat > "$stage/bin/ump-gpu" <<'SH'
#!/bin/sh
UMP_TEST_AS_UMP=1 exec "$(dirname "$0")/../cmd/ump/ump.test" "$@"
SH
chmod +x "$stage/bin/ump-gpu"

data=${UMP_DATA:-$HOME/.cache/ump/data}
"$stage/bin/ump-gpu" --data-dir "$data" data fetch mnist >&2
cp -r "$data/mnist" "$stage/data/"

rm -rf .gpu
mkdir .gpu
cp gpukit/run.sh .gpu/run
chmod +x .gpu/run
# One xz stream at preset 1 with a dictionary larger than the tar (192
# MiB): the three binaries share most of their code, and the window spans
# them all. 35 MB in some 20 s of one core; two streams, the binaries at
# preset 9 (its 64 MiB window spans two of them) and MNIST at preset 1,
# gave 34 MB for 61 s, which make test spent on every run.
tar -C "$stage" -cf - bin cmd pipeline nn go.mod data | xz -T1 --x86 --lzma2=preset=1,dict=192MiB > .gpu/kit.tar.xz
{
	echo "ump GPU kit built $(date -u +%Y-%m-%dT%H:%M:%SZ) from $(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)') by $(go version | cut -d' ' -f3)"
	(cd "$stage" && find . -type f -size +1M -printf '  %P %s bytes\n' | sort)
	echo "sha256 $(sha256sum .gpu/kit.tar.xz | cut -d' ' -f1)"
} > .gpu/KIT
# What a command takes to the host: .gpu and the working tree git sees
# (tracked files and untracked ones it does not ignore).
kit=$(du -cb .gpu/* | tail -1 | cut -f1)
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2> /dev/null | awk '$2 == "total" {s += $1} END {print s + 0}')
size=$((kit + tree))
echo ".gpu: $kit bytes, with the working tree's $tree: $size ($((size * 100 / limit))% of 64 MiB)"
if [ "$size" -gt "$limit" ]; then
	echo "make gpu-kit: .gpu ($kit bytes) and the working tree ($tree) are $size bytes, over the 64 MiB a command may take to a GPU host" >&2
	exit 1
fi
