#!/usr/bin/env sh
# Runs fuzz targets for SECONDS each (default 600), JOBS at a time
# (default 1), from the seeded corpora (./seed-corpora.sh first) with
# inputs allowed to grow at once (-len_control=0) up to 4 KiB, each with
# its dictionary; writes logs/<target>.log and prints, per target, runs,
# speed, coverage and the corpus's input lengths.
#   ./campaign.sh [SECONDS] [JOBS] [TARGET...]
set -eu
cd "$(dirname "$0")"
seconds=${1:-600}
jobs=${2:-1}
shift 2 2>/dev/null || shift $#
targets=${*:-parse_text text_roundtrip etf_roundtrip etf_decode compile differential runtime_ops fun2ms stream_run}
mkdir -p logs

dict_of() {
    case "$1" in
        parse_text|compile) echo "-dict=dict/terms.dict" ;;
        fun2ms) echo "-dict=dict/fun.dict" ;;
        etf_decode|stream_run) echo "-dict=dict/etf.dict" ;;
        *) echo "" ;;
    esac
}

run_one() {
    t=$1
    # shellcheck disable=SC2046
    RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -len_control=0 -max_len=4096 -rss_limit_mb=4096 \
        -print_final_stats=1 $(dict_of "$t") > "logs/$t.log" 2>&1 || true
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "logs/$t.log")
    last=$(grep -E '^#[0-9]+' "logs/$t.log" | tail -n 1 | sed 's/ *exec\/s.*//')
    crashes=$(ls "artifacts/$t" 2>/dev/null | wc -l)
    echo "$t: runs ${runs:-?}, ${speed:-?}/s; last status: $last; artifacts: $crashes"
}

running=0
for t in $targets; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait
