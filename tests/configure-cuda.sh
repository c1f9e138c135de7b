#!/bin/sh
# tests/configure-cuda.sh - configure's CUDA detection (m4/nnlab_cuda.m4)
# against fake toolkits laid out as NVIDIA's installer, Debian's own packages
# and a toolkit's targets folder: the library folder found, the include flag,
# and the architectures taken from what nvcc lists. The fake nvcc answers
# --version and the --list-gpu-* queries and "compiles" by writing its -o
# file; the fake libraries export the one function configure links against.
# NNLAB_CHECK_CUDA runs in a configure of its own (autoconf at test time), so
# each case takes a second, not a full configure. Speaks TAP.
: "${top_srcdir:=.}"
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
n=0 failed=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
CC=${CC:-cc}
# only the fake toolkits: no headers or libraries of a real one through the
# compiler's environment (this machine sets LIBRARY_PATH to CUDA's stubs)
unset LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH
# and configure's own choice of targets, not one a make above this test was
# given (make check NVCC_GENCODE=... puts it in the environment)
unset NVCC_GENCODE

if ! command -v autoconf >/dev/null 2>&1; then
    echo "1..0 # SKIP autoconf is not installed"; exit 0
fi
if ! "$CC" --version >/dev/null 2>&1; then
    echo "1..0 # SKIP no C compiler ($CC)"; exit 0
fi

# ---- a configure that runs NNLAB_CHECK_CUDA alone and writes what it found ----
mkdir "$tmp/proj"
cat >"$tmp/proj/configure.ac" <<'EOF'
AC_INIT([cuda-detect], [0])
m4_include([nnlab_cuda.m4])
AC_PROG_CC
NNLAB_CHECK_CUDA
AC_SUBST([have_cuda])
AC_CONFIG_FILES([found])
AC_OUTPUT
EOF
cat >"$tmp/proj/found.in" <<'EOF'
have_cuda='@have_cuda@'
CUDA_HOME='@CUDA_HOME@'
CUDA_LIBDIR='@CUDA_LIBDIR@'
CUDA_CPPFLAGS='@CUDA_CPPFLAGS@'
CUDA_LIBS='@CUDA_LIBS@'
NVCC='@NVCC@'
NVCC_GENCODE='@NVCC_GENCODE@'
EOF
if ! (cd "$tmp/proj" && autoconf -I "$top_srcdir/m4" >"$tmp/autoconf.log" 2>&1); then
    echo "1..1"; echo "not ok 1 - autoconf of NNLAB_CHECK_CUDA"; sed 's/^/# /' "$tmp/autoconf.log"; exit 1
fi

# ---- fake libraries, built once ------------------------------------------------------
mkdir "$tmp/libs"
echo 'int cudaGetDeviceCount(int *c) { *c = 0; return 0; }' >"$tmp/libs/cudart.c"
echo 'int cublasCreate_v2(void **h) { *h = 0; return 0; }' >"$tmp/libs/cublas.c"
echo 'int cudnnCreate(void **h) { *h = 0; return 0; }' >"$tmp/libs/cudnn.c"
for l in cudart cublas cudnn; do
    "$CC" -shared -fPIC -o "$tmp/libs/lib$l.so" "$tmp/libs/$l.c" || { echo "1..0 # SKIP cannot build a shared library"; exit 0; }
done

# fake_toolkit BIN INC LIB VERSION CODES ARCHS: nvcc in BIN, the headers in INC,
# the libraries in LIB; CODES and ARCHS are what --list-gpu-code and
# --list-gpu-arch print ("-" for an nvcc that cannot list them)
fake_toolkit() {
    mkdir -p "$1" "$2" "$3"
    cat >"$1/nvcc" <<EOF
#!/bin/sh
case "\$1" in
--version) echo "Cuda compilation tools, release $4, V$4.0"; exit 0 ;;
--list-gpu-code) [ "$5" = - ] && { echo "nvcc fatal : Unknown option '--list-gpu-code'" >&2; exit 1; }
    for c in $5; do echo "\$c"; done; exit 0 ;;
--list-gpu-arch) [ "$6" = - ] && exit 1; for a in $6; do echo "\$a"; done; exit 0 ;;
esac
echo "\$*" >>"$1/nvcc.args"
[ -n "\$FAKE_NVCC_BROKEN" ] && { echo "nvcc: this compiler is broken" >&2; exit 1; }
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && : >"\$2"; shift; done
EOF
    chmod +x "$1/nvcc"
    for h in cuda_runtime_api.h cublas_v2.h cudnn.h; do echo "/* fake $h */" >"$2/$h"; done
    cp "$tmp/libs"/lib*.so "$3/"
}

# detect NAME ARGS...: runs the small configure in a fresh folder; the
# result in $tmp/found (sourced) and its output in $tmp/out
detect() {
    rm -rf "$tmp/run" && mkdir "$tmp/run"
    (cd "$tmp/run" && "$tmp/proj/configure" "$@") >"$tmp/out" 2>&1
    status=$?
    have_cuda= CUDA_HOME= CUDA_LIBDIR= CUDA_CPPFLAGS= CUDA_LIBS= NVCC= NVCC_GENCODE=
    [ -f "$tmp/run/found" ] && . "$tmp/run/found"
    return $status
}
# same NAME GOT WANT
same() {
    if [ "$2" = "$3" ]; then ok "$1"
    else not_ok "$1"; echo "#   got:  $2"; echo "#   want: $3"; sed 's/^/# /' "$tmp/out" | tail -n 8; fi
}
gencode() {     # gencode 75 80 ... PTX: the flags configure should pick
    out= ptx=$1; shift
    for a in "$@"; do out="$out -gencode=arch=compute_$a,code=sm_$a"; done
    echo "${out# } -gencode=arch=compute_$ptx,code=compute_$ptx"
}
echo "1..15"

# Debian's own packages (trixie's nvidia-cuda-toolkit 12.4): nvcc in /usr/bin,
# headers in /usr/include, libraries in the multiarch folder
multiarch=$("$CC" -print-multiarch 2>/dev/null)
if [ -n "$multiarch" ]; then
    deb=$tmp/debian/usr
    fake_toolkit "$deb/bin" "$deb/include" "$deb/lib/$multiarch" 12.4 \
        "sm_50 sm_52 sm_53 sm_60 sm_61 sm_62 sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90" \
        "compute_50 compute_52 compute_53 compute_60 compute_61 compute_62 compute_70 compute_72 compute_75 compute_80 compute_86 compute_87 compute_89 compute_90"
    detect --with-cuda="$deb"
    same "Debian layout: found" "$have_cuda" yes
    same "Debian layout: libraries in the multiarch folder" "$CUDA_LIBDIR" "$deb/lib/$multiarch"
    same "Debian layout: nvcc in bin" "$NVCC" "$deb/bin/nvcc"
    same "Debian layout: sm_75 and up, PTX of the newest" "$NVCC_GENCODE" "$(gencode 90 75 80 86 87 89 90)"
    if grep -q -e "-gencode=arch=compute_90,code=compute_90 .*conftest.cu" "$deb/bin/nvcc.args" 2>/dev/null; then
        ok "Debian layout: the test compile uses those targets"
    else not_ok "Debian layout: the test compile uses those targets"; fi
else
    for i in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # SKIP $CC names no multiarch folder"; done
fi

# NVIDIA's installer, CUDA 12.8: lib64, and a list that is not in order, with
# a suffixed target (one chip only) that is left out
nv=$tmp/cuda-12.8
fake_toolkit "$nv/bin" "$nv/include" "$nv/lib64" 12.8 \
    "sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 sm_101 sm_120" \
    "compute_75 compute_80 compute_86 compute_87 compute_89 compute_90 compute_100 compute_101 compute_120"
detect --with-cuda="$nv"
same "CUDA 12.8 installer: found" "$have_cuda" yes
same "CUDA 12.8 installer: lib64" "$CUDA_LIBDIR" "$nv/lib64"
same "CUDA 12.8 installer: -I its include" "$CUDA_CPPFLAGS" "-I$nv/include"
same "CUDA 12.8 installer: every sm from 75, no sm_90a, PTX of compute_120" "$NVCC_GENCODE" \
    "$(gencode 120 75 80 86 87 89 90 100 101 120)"
same "CUDA 12.8 installer: links the three libraries" "$CUDA_LIBS" "-L$nv/lib64 -lcudnn -lcublas -lcudart"

# a toolkit whose headers and libraries are only under targets/, and whose
# nvcc cannot list architectures: sm_75 and its PTX
tg=$tmp/cuda-old
target=$(uname -m)-linux
fake_toolkit "$tg/bin" "$tg/targets/$target/include" "$tg/targets/$target/lib" 11.8 - -
detect --with-cuda="$tg"
same "targets layout: libraries and headers found there" "$CUDA_LIBDIR $CUDA_CPPFLAGS" \
    "$tg/targets/$target/lib -I$tg/targets/$target/include"
same "an nvcc that cannot list: sm_75 and its PTX" "$NVCC_GENCODE" "$(gencode 75 75)"

# the user's NVCC_GENCODE is kept
detect --with-cuda="$nv" NVCC_GENCODE="-gencode=arch=compute_86,code=sm_86"
same "NVCC_GENCODE given: kept" "$NVCC_GENCODE" "-gencode=arch=compute_86,code=sm_86"

# headers and libraries but no nvcc (none on PATH either): no GPU module,
# and the report names nvcc as what is missing
nonv=$tmp/cuda-no-nvcc
fake_toolkit "$nonv/bin" "$nonv/include" "$nonv/lib64" 12.8 "sm_75" "compute_75"
rm "$nonv/bin/nvcc"
saved_path=$PATH PATH=/usr/bin:/bin
detect --with-cuda="$nonv"
status=$? PATH=$saved_path
if [ "$status" -eq 0 ]; then
    not_ok "no nvcc: no GPU module, nvcc named as missing"
elif [ "$have_cuda" != yes ] && grep -q "missing:.* nvcc" "$tmp/out"; then
    ok "no nvcc: no GPU module, nvcc named as missing"
else
    not_ok "no nvcc: no GPU module, nvcc named as missing"; sed 's/^/# /' "$tmp/out" | tail -n 5
fi

# --with-cuda where nvcc fails the test compile: configure fails and says so
# (a missing library cannot be faked here: the linker also searches the
# system's folders, where a real cuDNN may be)
FAKE_NVCC_BROKEN=1 && export FAKE_NVCC_BROKEN
if detect --with-cuda="$nv"; then
    not_ok "--with-cuda with a broken nvcc fails"
elif grep -q "nvcc failed a test compile" "$tmp/out"; then
    ok "--with-cuda with a broken nvcc fails, saying why"
else
    not_ok "--with-cuda with a broken nvcc fails, saying why"; sed 's/^/# /' "$tmp/out" | tail -n 5
fi
[ "$failed" -eq 0 ]
