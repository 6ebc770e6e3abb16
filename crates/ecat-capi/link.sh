#!/bin/sh
# Link libethercat.so.1 from the static library cargo built, with IgH's SONAME and symbol
# version nodes (ethercat.map). rustc's own cdylib export list is an anonymous version script
# that overrides named nodes, hence this separate step.
#   link.sh TARGET_DIR [ARCHIVE]   (e.g. target/release; ARCHIVE defaults to
#                                   TARGET_DIR/libethercat.a)
# Produces TARGET_DIR/libethercat.so.1.6.0 and the links libethercat.so.1, libethercat.so.
set -eu
dir=$1
archive=${2:-$dir/libethercat.a}
here=$(cd "$(dirname "$0")" && pwd)
tmp="$dir/.libethercat.so.$$"
${CC:-cc} -shared -o "$tmp" \
    -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
    -Wl,-soname,libethercat.so.1 \
    -Wl,--version-script="$here/ethercat.map" \
    -Wl,--gc-sections -Wl,-z,relro,-z,now \
    -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
mv -f "$tmp" "$dir/libethercat.so.1.6.0"
ln -sfn libethercat.so.1.6.0 "$dir/libethercat.so.1"
ln -sfn libethercat.so.1 "$dir/libethercat.so"
