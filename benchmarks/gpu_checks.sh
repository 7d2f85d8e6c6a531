#!/usr/bin/env bash
# The checks that need a CUDA GPU, in one run of at most 8 minutes (sized for a 15-minute device lease): the figures
# benchmarks/README.md still lists as not measured on a GPU, and the tests that skip without CUDA.
#
#     bash benchmarks/gpu_checks.sh OUTDIR        (from the repository root)
#
# Each part has its own time limit and writes OUTDIR/<part>.txt; one that fails or runs out of time does not stop
# the next.  OUTDIR/summary.txt gives the machine, the versions and each part's exit status and seconds.
set -u
out=${1:?usage: bash benchmarks/gpu_checks.sh OUTDIR}
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" PYTHONUNBUFFERED=1 PROBEKIT_PROGRESS=0 TOKENIZERS_PARALLELISM=false
part() {
    local name=$1 limit=$2 t
    shift 2
    t=$(date +%s)
    timeout "$limit" "$@" > "$out/$name.txt" 2>&1
    echo "$name: exit $? after $(( $(date +%s) - t )) s (limit $limit s)" | tee -a "$out/summary.txt"
}
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "$(nproc) CPUs"
  python3 -c "import sys, torch, transformers; print(sys.version.split()[0], torch.__version__, transformers.__version__)"
} > "$out/summary.txt" 2>&1
# 1. a ViLT and a BERT training step alone on the GPU (2026-11-26: 0.037, 0.078 hardneg, 0.011 s/step)
part train_alone 100 python3 benchmarks/train_toy.py --device cuda --steps 50 --members toy-vilt toy-vilt-hardneg toy-bert
# 2. the tests that need CUDA: resuming a toy member on CUDA; pinned batches and fp16 scores (passed 2026-11-26)
part cuda_tests 90 python3 -m pytest -q -n 0 -p no:cacheprovider -k cuda tests/test_interrupt.py tests/test_engine_speed_paths.py
# 3. the one paper family not yet scored at 4,096 pairs, and toy fp16 against fp32 (the seven others: README)
part scoring 120 python3 benchmarks/scoring_gpu.py --pairs 4096 --only openclip-rn50
# 4. cross-encoders: does moving one pixel tensor per pair, not per distinct image, set the end-to-end speed?
part pair_transfer 120 python3 benchmarks/pair_transfer.py --pairs 2048 --workers 8
