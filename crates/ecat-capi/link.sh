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
# Built with the `dpdk` feature, the archive holds ecat's DPDK shim and calls DPDK's shared
# libraries (their drivers load as plugins): link those too.
dpdk=""
if nm -u "$archive" 2>/dev/null | grep -q ' rte_eal_init$'; then
    dpdk="$(pkg-config --libs-only-L libdpdk) -lrte_ethdev -lrte_mbuf -lrte_mempool -lrte_eal -lrte_kvargs"
fi
# shellcheck disable=SC2086
${CC:-cc} -shared -o "$tmp" \
    -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
    -Wl,-soname,libethercat.so.1 \
    -Wl,--version-script="$here/ethercat.map" \
    -Wl,--gc-sections -Wl,-z,relro,-z,now \
    $dpdk -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
mv -f "$tmp" "$dir/libethercat.so.1.6.0"
ln -sfn libethercat.so.1.6.0 "$dir/libethercat.so.1"
ln -sfn libethercat.so.1 "$dir/libethercat.so"
