#!/usr/bin/env bash
# The checks that need a CUDA GPU, in one run of at most 12 minutes (sized for a 15-minute device lease): the figures
# benchmarks/README.md still lists as not measured on a GPU, and the tests that skip without CUDA.
#
#     bash benchmarks/gpu_checks.sh OUTDIR        (from the repository root)
#
# Each part has its own time limit and writes OUTDIR/<part>.txt; one that fails or runs out of time does not stop
# the next.  OUTDIR/summary.txt gives the machine, the versions and each part's exit status and seconds.
set -u
start=$(date +%s)
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
work=$(mktemp -d)
# 1. the tests that need CUDA: resuming a toy member on CUDA; pinned batches and fp16 scores; JPEGs decoded and
#    images preprocessed on the GPU (probekit/scorers/pixels.py)
part cuda_tests 90 python3 -m pytest -q -n 0 -p no:cacheprovider -k cuda tests/test_interrupt.py \
    tests/test_engine_speed_paths.py tests/test_device_pixels.py
# 2. end to end over forward only, every paper family at 4,096 pairs, images decoded and preprocessed on the GPU
#    (the scorers' default on CUDA), with each family's largest pixel difference from its processor on the CPU
part scoring_device 300 python3 benchmarks/scoring_gpu.py --pairs 4096 --skip-toy --device-pixels on
# 3. the same for a cross-encoder and a dual encoder with the loader workers preprocessing (the old path), same card
part scoring_workers 75 python3 benchmarks/scoring_gpu.py --pairs 4096 --skip-toy --device-pixels off \
    --only vilt-b32-384 clip-b32
# 4. one rank against two (torchrun, both on this one GPU): the verbs chapter on the toy world scored by a
#    full-size random BLIP ITM base (RANKS_MODEL=toy-vilt for a CPU smoke test of this part), each with a fresh
#    score cache; the seconds are in summary.txt
python3 -c "import os, sys; from pathlib import Path; sys.path.insert(0, 'benchmarks'); from scoring_gpu import save_full
os.environ.get('RANKS_MODEL') or save_full('blip-itm-base', Path('$work/blip-base'))
from probekit.book import copy_project; [copy_project(Path('.'), Path('$work') / f'project{n}') for n in (1, 2)]
from probekit.datasets import load_dataset; load_dataset('verbs', data_dir='$work/data', limit=2000)" \
    > "$out/ranks_setup.txt" 2>&1
verbs=(run verbs -p models "${RANKS_MODEL:-$work/blip-base}" -p limit 2000 -p lab_models "[]" -p data_dir "$work/data"
       --no-build --quiet)
part rank_1 100 python3 -m probekit --root "$work/project1" "${verbs[@]}" -p cache_dir "$work/scores1"
part ranks_2 100 python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
    -m probekit --root "$work/project2" "${verbs[@]}" -p cache_dir "$work/scores2"
python3 -c "import pandas as pd
a, b = (pd.read_parquet('$work/project%d/book/chapters/verbs.results.parquet' % n) for n in (1, 2))
print('rows of 1 rank and of 2 ranks equal:', a.equals(b), len(a))" >> "$out/summary.txt" 2>&1
# 5. the paper book's projected wall time on one GPU: the dress rehearsal of paper mode with full-size random
#    stand-ins of every model of the paper profile, each chapter timed at 8 items and projected to the papers' item
#    counts and fine-tuning steps (benchmarks/paper_time.py; rows are printed chapter by chapter).  Its limit is
#    what the parts above left of the 12 minutes, at most 240 s (PAPER_TIME_ARGS="--tiny --device cpu" for a CPU
#    smoke test of this part)
left=$(( 720 - ($(date +%s) - start) ))
part paper_time $(( left > 240 ? 240 : left > 1 ? left : 1 )) python3 benchmarks/paper_time.py --work "$work/paper" \
    ${PAPER_TIME_ARGS:-}
rm -rf "$work"
