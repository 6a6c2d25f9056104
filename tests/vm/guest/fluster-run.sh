#!/bin/sh
# (in the guest, visl loaded) fluster through packaging/fluster/reel_fluster.py
# with reel's V4L2 decoders, for tests/guest_real_drivers.rs: each SUITE of
# DIR/suites (vectors in DIR/resources) with its DECODER, one vector at a
# time. In $REEL_RESULTS: fluster-SUITE.md (fluster's summary), .log, .rc.
#
#   tests/vm/guest/fluster-run.sh PYTHON REEL_FLUSTER_PY REEL DIR SUITE:DECODER...
set -eu
python=$1
script=$2
reel=$3
dir=$4
shift 4
R=$REEL_RESULTS
for pair in "$@"; do
    suite=${pair%%:*}
    decoder=${pair#*:}
    rc=0
    REEL=$reel "$python" "$script" -tsd "$dir/suites" -r "$dir/resources" -o "$(mktemp -d)" \
        -ne run -ts "$suite" -d "$decoder" -t 60 -j 1 -s -so "$R/fluster-$suite.md" \
        >"$R/fluster-$suite.log" 2>&1 || rc=$?
    echo "$rc" >"$R/fluster-$suite.rc"
done
