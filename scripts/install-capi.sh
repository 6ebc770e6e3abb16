#!/bin/sh
# Build and install ecat's IgH-compatible C library and command line:
#   PREFIX/lib/libethercat.so.1.6.0 (+ libethercat.so.1, libethercat.so)
#   PREFIX/include/ecrt.h
#   PREFIX/lib/pkgconfig/libethercat.pc
#   PREFIX/lib/cmake/EtherCAT/EtherCATConfig.cmake (+ ...ConfigVersion.cmake), target EtherLab::ethercat
#   PREFIX/bin/ecat, and PREFIX/bin/ethercat -> ecat (IgH's `ethercat` tool: scripts written
#   for it run unchanged)
#
# Usage: scripts/install-capi.sh [--prefix DIR] [--destdir DIR] [--no-build] [--target-dir DIR]
#                                [--lib FILE] [--bin FILE] [--tools-only] [--no-tools]
#   --prefix      where programs find it (default /usr/local)
#   --destdir     staging root (files go to DESTDIR/PREFIX; for packaging)
#   --no-build    link from the static library already built in the target directory
#   --target-dir  cargo's target directory (default: target/ of this workspace)
#   --lib FILE    install this already linked libethercat.so.1.6.0 (no build, no link)
#   --bin FILE    install this ecat binary (no build); without it, TARGET/release/ecat
#   --tools-only  install only PREFIX/bin/ecat and PREFIX/bin/ethercat
#   --no-tools    install only the library and its development files
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local
destdir=
build=1
target="$root/target"
prebuilt=
ecat_bin=
want_lib=1
want_tools=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --destdir) destdir=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --target-dir) target=$2; shift 2 ;;
        --lib) prebuilt=$2; build=0; shift 2 ;;
        --bin) ecat_bin=$2; build=0; shift 2 ;;
        --tools-only) want_lib=0; shift ;;
        --no-tools) want_tools=0; shift ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "install-capi.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
if [ "$build" = 1 ]; then
    pkgs=
    [ "$want_lib" = 1 ] && pkgs="$pkgs -p ecat-capi"
    [ "$want_tools" = 1 ] && pkgs="$pkgs -p ecat-cli"
    # shellcheck disable=SC2086
    [ -n "$pkgs" ] && (cd "$root" && cargo build --release $pkgs)
fi
rel="$target/release"

# The command line: ecat, and ethercat as a link to it (the binary speaks IgH's dialect
# when started under that name).
if [ "$want_tools" = 1 ]; then
    bin=${ecat_bin:-$rel/ecat}
    if [ -f "$bin" ] && [ -x "$bin" ]; then
        bindir="$destdir$prefix/bin"
        mkdir -p "$bindir"
        install -m 0755 "$bin" "$bindir/ecat"
        command -v strip >/dev/null 2>&1 && strip --strip-debug "$bindir/ecat"
        ln -sfn ecat "$bindir/ethercat"
        echo "installed ecat and ethercat (IgH's command line) into $destdir$prefix/bin"
    else
        echo "install-capi.sh: $bin is missing: ecat and ethercat not installed (build with cargo build --release -p ecat-cli, or give --bin FILE)" >&2
    fi
fi
[ "$want_lib" = 1 ] || exit 0

if [ -n "$prebuilt" ]; then
    so=$prebuilt
else
    [ -f "$rel/libethercat.a" ] || { echo "install-capi.sh: $rel/libethercat.a is missing; build with cargo build --release -p ecat-capi" >&2; exit 1; }
    sh "$root/crates/ecat-capi/link.sh" "$rel"
    so="$rel/libethercat.so.1.6.0"
fi

lib="$destdir$prefix/lib"
inc="$destdir$prefix/include"
mkdir -p "$lib/pkgconfig" "$lib/cmake/EtherCAT" "$inc"
install -m 0755 "$so" "$lib/libethercat.so.1.6.0"
command -v strip >/dev/null 2>&1 && strip --strip-debug "$lib/libethercat.so.1.6.0"
ln -sfn libethercat.so.1.6.0 "$lib/libethercat.so.1"
ln -sfn libethercat.so.1 "$lib/libethercat.so"
install -m 0644 "$root/crates/ecat-capi/include/ecrt.h" "$inc/ecrt.h"

cat > "$lib/pkgconfig/libethercat.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: libethercat
Description: ecat's EtherCAT master library with IgH's application interface (ecrt.h, API 1.6)
Version: 1.6.0
Libs: -L\${libdir} -lethercat
Cflags: -I\${includedir}
PC

cat > "$lib/cmake/EtherCAT/EtherCATConfig.cmake" <<'CM'
# find_package(EtherCAT) for ecat's libethercat (IgH's ecrt.h, API 1.6).
# Provides the imported target EtherLab::ethercat.
get_filename_component(_ecat_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET EtherLab::ethercat)
  add_library(EtherLab::ethercat SHARED IMPORTED)
  set_target_properties(EtherLab::ethercat PROPERTIES
    IMPORTED_LOCATION "${_ecat_prefix}/lib/libethercat.so.1"
    IMPORTED_SONAME "libethercat.so.1"
    INTERFACE_INCLUDE_DIRECTORIES "${_ecat_prefix}/include")
endif()
set(EtherCAT_FOUND TRUE)
set(EtherCAT_VERSION 1.6.0)
unset(_ecat_prefix)
CM

cat > "$lib/cmake/EtherCAT/EtherCATConfigVersion.cmake" <<'CM'
set(PACKAGE_VERSION 1.6.0)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION OR NOT PACKAGE_FIND_VERSION_MAJOR EQUAL 1)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CM

if [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then
    case "$prefix" in /usr|/usr/local) ldconfig ;; esac
fi
echo "installed libethercat.so.1 (IgH ecrt.h API 1.6) into $destdir$prefix"
echo "  tools: ethercat slaves, ethercat reg_read -p 0 0x130 2, ... as with IgH's tool (ecat --help for ecat's own)"
echo "  build: cc main.c \$(pkg-config --cflags --libs libethercat)   (PKG_CONFIG_PATH=$prefix/lib/pkgconfig if needed)"
echo "  CMake: find_package(EtherCAT REQUIRED) + target_link_libraries(app EtherLab::ethercat)"
echo "  run:   ECAT_MASTER0=eth0 ./app   (or ECAT_MASTER0=sim:io, or MASTER0_DEVICE=eth0 in /etc/ecat.conf;"
echo "         LD_LIBRARY_PATH=$prefix/lib unless that directory is known to ld.so)"
