#!/bin/sh
# test-export-layout.sh - the timeline has one layout: the encoders of its
# formats (Chrome JSON, Perfetto protobuf) take what export-timeline.c
# hands them and decide nothing of what goes where.
#
# Usage: test-export-layout.sh SRCDIR
#
# Fails when an encoder reads records (raw THREAD or LOSS records, an
# event's record, the reader), consumes the session itself, or makes the layout's decisions:
# the window, GPU recording gaps, the NVTX ranges' list. It reads the
# sources; test-export.sh and the goldens check what they write.
set -u
src=$1
rc=0
for p in "$src"/tools/export/export-events.c "$src"/tools/export/export-perfetto*.[ch]; do
	f=${p##*/}
	if grep -nE 'dt_rec_tail|dt_reader_|DT_REC_[A-Z]|->rec\b|dt_session_add|dt_session_ranges|dt_export_in[^a-z_]|gpu_state' \
		"$p"; then
		echo "FAIL: tools/export/$f does what the layout (export-timeline.c) does"
		rc=1
	fi
done
exit $rc
