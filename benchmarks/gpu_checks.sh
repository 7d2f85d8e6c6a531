#!/usr/bin/env bash
# The checks that need a CUDA GPU, in one call of the device machine: a lease gives 10 minutes a call (15 in all,
# with its 1-2 minute start), so the parts share a budget of 540 s, run in order of priority, each under its own
# `timeout` (its limit, or what is left of the budget if less); a part with less than its minimum left is skipped.
#
#     bash benchmarks/gpu_checks.sh OUTDIR [--quick] [PART...]        (from the repository root)
#
# --quick: the CUDA tests, the pixels on real photographs and a short device-path scoring of three families, in a
# budget of 200 s (under 4 minutes with the set-up).  PART...: only those parts, e.g. `paper_time` alone on a call
# of its own (it needs more than the full run leaves).  OUTDIR/<part>.txt holds a part's output; OUTDIR/summary.txt the machine and the versions, then one
# line per part as it ends (exit status, 124 when it ran out of time, seconds, limit) or is skipped.  Nothing here
# assumes the versions pinned in constraints.txt: the GPU machines have had other torch/torchvision/transformers.
set -u
start=$(date +%s)
out=${1:?usage: bash benchmarks/gpu_checks.sh OUTDIR [--quick] [PART...]}
shift
quick=0
only=()
for arg in "$@"; do
    if [ "$arg" = --quick ]; then quick=1; else only+=("$arg"); fi
done
budget=$(( quick ? 200 : 540 ))
(( quick )) && [ ${#only[@]} -eq 0 ] && only=(cuda_tests pixel_fidelity scoring_device)
mkdir -p "$out"
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD" PYTHONUNBUFFERED=1 PROBEKIT_PROGRESS=0 TOKENIZERS_PARALLELISM=false
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "$(nproc) CPUs"
  python3 -c "import sys, torch, torchvision, transformers
print('python', sys.version.split()[0], 'torch', torch.__version__, 'torchvision', torchvision.__version__,
      'transformers', transformers.__version__)"
  echo "budget $budget s; parts: ${only[*]:-all}"
} > "$out/summary.txt" 2>&1

wanted() {
    [ ${#only[@]} -eq 0 ] && return 0
    local p
    for p in "${only[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}
part() {  # NAME LIMIT MINIMUM COMMAND...: COMMAND under the smaller of LIMIT and the budget left, if >= MINIMUM
    local name=$1 limit=$2 minimum=$3 t left code
    shift 3
    wanted "$name" || return 0
    left=$(( budget - ($(date +%s) - start) ))
    if (( left < minimum )); then
        echo "$name: skipped, $left s of the budget left (it needs $minimum s)" | tee -a "$out/summary.txt"
        return 0
    fi
    (( limit > left )) && limit=$left
    t=$(date +%s)
    timeout -k 5 "$limit" "$@" > "$out/$name.txt" 2>&1
    code=$?
    echo "$name: exit $code after $(( $(date +%s) - t )) s (limit $limit s)" | tee -a "$out/summary.txt"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. the tests that need CUDA (resuming a toy member on CUDA; pinned batches and fp16 scores; JPEGs decoded and
#    images preprocessed on the GPU), and the test that the device path is taken only where the family's image
#    processor runs on the device's tensors (transformers' backends depend on the installed torchvision)
part cuda_tests 100 30 python3 -m pytest -q -n 0 -p no:cacheprovider -k "cuda or device_path_is_taken" \
    tests/test_interrupt.py tests/test_engine_speed_paths.py tests/test_device_pixels.py
# 2. the device path's pixels against the CPU path's on real photographs, decoded by nvJPEG and preprocessed on the
#    GPU (benchmarks/pixel_fidelity.py; needs scikit-image, which ships the photographs)
part pixel_fidelity 40 15 python3 benchmarks/pixel_fidelity.py --device cuda
# 3. every paper family with images decoded and preprocessed on the GPU (the scorers' default on CUDA), end to end
#    and forward only, with each family's largest pixel difference from its processor on the CPU, and a line for a
#    family whose processor cannot run there (preprocessed by the loader instead); --quick: three families, 512 pairs
if (( quick )); then
    part scoring_device 90 45 python3 benchmarks/scoring_gpu.py --pairs 512 --skip-toy --device-pixels on \
        --only vilt-b32-384 flava-full clip-b32
else
    part scoring_device 150 60 python3 benchmarks/scoring_gpu.py --pairs 2048 --skip-toy --device-pixels on
fi
# 4. a cross-encoder and a dual encoder with the loader workers preprocessing (the CPU path), on the same card
part scoring_workers 50 30 python3 benchmarks/scoring_gpu.py --pairs 2048 --skip-toy --device-pixels off \
    --only vilt-b32-384 clip-b32
# 5. one rank against two (torchrun, both on this one GPU): the verbs chapter on the toy world scored by a
#    full-size random BLIP ITM base (RANKS_MODEL=toy-vilt for a CPU smoke test of this part), each with a fresh
#    score cache; whether their rows are equal is the part ranks_equal
part ranks_setup 40 180 python3 -c "import os, sys; from pathlib import Path; sys.path.insert(0, 'benchmarks')
from scoring_gpu import save_full
os.environ.get('RANKS_MODEL') or save_full('blip-itm-base', Path('$work/blip-base'))
from probekit.book import copy_project; [copy_project(Path('.'), Path('$work') / f'project{n}') for n in (1, 2)]
from probekit.datasets import load_dataset; load_dataset('verbs', data_dir='$work/data', limit=2000)"
verbs=(run verbs -p models "${RANKS_MODEL:-$work/blip-base}" -p limit 2000 -p lab_models "[]" -p data_dir "$work/data"
       --no-build --quiet)
part rank_1 80 40 python3 -m probekit --root "$work/project1" "${verbs[@]}" \
    -p cache_dir "$work/scores1"
part ranks_2 80 40 python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
    -m probekit --root "$work/project2" "${verbs[@]}" -p cache_dir "$work/scores2"
part ranks_equal 20 5 python3 -c "import pandas as pd
a, b = (pd.read_parquet('$work/project%d/book/chapters/verbs.results.parquet' % n) for n in (1, 2))
print('rows of 1 rank and of 2 ranks equal:', a.equals(b), len(a))"
# 6. the paper book's projected wall time on one GPU: the dress rehearsal of paper mode with full-size random
#    stand-ins of every model of the paper profile, each chapter timed at 8 and 16 items and projected from the
#    difference to the papers' item counts and fine-tuning steps (benchmarks/paper_time.py; rows are printed chapter
#    by chapter).  Writing the stand-ins alone takes minutes, so the full run skips it; run it alone:
#    `bash benchmarks/gpu_checks.sh OUTDIR paper_time` (PAPER_TIME_ARGS="--chapters verbs masking" to narrow it,
#    "--tiny --device cpu" for a CPU smoke test of this part)
part paper_time 540 300 python3 benchmarks/paper_time.py --work "$work/paper" ${PAPER_TIME_ARGS:-}
echo "total $(( $(date +%s) - start )) s of a $budget s budget" | tee -a "$out/summary.txt"
