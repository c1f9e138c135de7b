# m4/nnlab_cuda.m4 - finding CUDA for the GPU module, the way openucx/ucx's
# cuda.m4 does it: a toolkit folder, its headers and libraries, then a real
# test compile with nvcc. Three layouts are known:
#   NVIDIA's installer     /usr/local/cuda-12.8/{bin,include,lib64}
#   Debian's own packages  nvcc in /usr/bin, headers in /usr/include, the
#                          libraries in the multiarch folder /usr/lib/x86_64-linux-gnu
#   the toolkit's targets  $CUDA_HOME/targets/x86_64-linux/{include,lib}
# and the architectures are the ones the toolkit lists (nvcc --list-gpu-code,
# --list-gpu-arch): machine code for every sm_75 and later, PTX of the newest.
# tests/configure-cuda.sh runs NNLAB_CHECK_CUDA against fake toolkits of
# each layout.

# NNLAB_CUDA_DEFAULT_HOME: /usr/local/cuda when it has nvcc, else the prefix
# of the nvcc on PATH (Debian's /usr/bin/nvcc: /usr), else /usr/local/cuda
# (named in the report of what is missing).
AC_DEFUN([NNLAB_CUDA_DEFAULT_HOME], [
  CUDA_HOME=/usr/local/cuda
  AS_IF([test -x /usr/local/cuda/bin/nvcc], [], [
    AC_PATH_PROG([NNLAB_NVCC_ON_PATH], [nvcc])
    AS_IF([test -n "$NNLAB_NVCC_ON_PATH"],
      [CUDA_HOME=`AS_DIRNAME(["$NNLAB_NVCC_ON_PATH"])`
       CUDA_HOME=`AS_DIRNAME(["$CUDA_HOME"])`])
  ])
])

# NNLAB_CUDA_DIRS: cuda_incdir and CUDA_LIBDIR under CUDA_HOME, the first
# folder that has cuda_runtime_api.h and libcudart.so.
AC_DEFUN([NNLAB_CUDA_DIRS], [
  nnlab_target=`uname -m`-linux
  nnlab_multiarch=`$CC -print-multiarch 2>/dev/null`
  cuda_incdir=$CUDA_HOME/include
  for nnlab_d in "$CUDA_HOME/include" "$CUDA_HOME/targets/$nnlab_target/include"; do
    AS_IF([test -f "$nnlab_d/cuda_runtime_api.h"], [cuda_incdir=$nnlab_d; break])
  done
  CUDA_LIBDIR=
  for nnlab_d in "$CUDA_HOME/lib64" ${nnlab_multiarch:+"$CUDA_HOME/lib/$nnlab_multiarch"} \
                 "$CUDA_HOME/targets/$nnlab_target/lib" "$CUDA_HOME/lib"; do
    AS_IF([ls "$nnlab_d"/libcudart.so* >/dev/null 2>&1], [CUDA_LIBDIR=$nnlab_d; break])
  done
  AS_IF([test -z "$CUDA_LIBDIR"], [CUDA_LIBDIR=$CUDA_HOME/lib64])
  # -I/usr/include would move the system folder ahead of the C++ library's
  # own headers, whose #include_next <stdlib.h> then fails under nvcc
  AS_IF([test "x$cuda_incdir" = x/usr/include], [CUDA_CPPFLAGS=], [CUDA_CPPFLAGS="-I$cuda_incdir"])
])

# NNLAB_CUDA_GENCODE: NVCC_GENCODE from what $NVCC lists: machine code for
# every real architecture from sm_75 (Turing, the oldest CUDA 13 supports)
# on, so that a driver with only minor version compatibility (which cannot
# compile newer PTX) runs it, and PTX of the newest virtual architecture for
# GPUs newer than the toolkit. Suffixed targets (sm_90a: one chip only) are
# left out. A toolkit that cannot list them gets sm_75 and its PTX.
AC_DEFUN([NNLAB_CUDA_GENCODE], [
  AC_MSG_CHECKING([the GPU architectures $NVCC lists])
  nnlab_sm=`$NVCC --list-gpu-code 2>/dev/null | tr ' ' '\n' | sed -n 's/^sm_\([[0-9]]*\)$/\1/p' | sort -n -u`
  nnlab_ptx=`$NVCC --list-gpu-arch 2>/dev/null | tr ' ' '\n' | sed -n 's/^compute_\([[0-9]]*\)$/\1/p' | sort -n -u | tail -n 1`
  NVCC_GENCODE=
  cuda_archs=
  for nnlab_a in $nnlab_sm; do
    AS_IF([test "$nnlab_a" -ge 75], [
      NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$nnlab_a,code=sm_$nnlab_a"
      cuda_archs="$cuda_archs sm_$nnlab_a"])
  done
  AS_IF([test -z "$NVCC_GENCODE" || test -z "$nnlab_ptx" || test "$nnlab_ptx" -lt 75],
    [NVCC_GENCODE="-gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_75,code=compute_75"
     cuda_archs="sm_75 + compute_75 PTX (nvcc lists no architectures)"],
    [NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$nnlab_ptx,code=compute_$nnlab_ptx"
     cuda_archs="${cuda_archs# } + compute_$nnlab_ptx PTX"])
  NVCC_GENCODE=${NVCC_GENCODE# }
  AC_MSG_RESULT([$cuda_archs])
])

# NNLAB_CHECK_CUDA: --with-cuda[=DIR] and --disable-gpu; sets have_cuda
# (yes/no), cuda_report (one line for the summary) and substitutes
# CUDA_HOME, CUDA_LIBDIR, CUDA_CPPFLAGS and CUDA_LIBS (NVCC, NVCCFLAGS and
# NVCC_GENCODE are precious variables, substituted by AC_ARG_VAR). Fails when --with-cuda was given and CUDA is not usable.
AC_DEFUN([NNLAB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA toolkit for the GPU backend (default: /usr/local/cuda, else the nvcc on PATH; DIR=/usr for Debian's packages)])],
    [], [with_cuda=check])
  AC_ARG_ENABLE([gpu],
    [AS_HELP_STRING([--disable-gpu], [do not build the GPU backend module, even where CUDA is found])],
    [], [enable_gpu=yes])
  AC_ARG_VAR([NVCC], [the CUDA compiler (default: nvcc from the toolkit)])
  AC_ARG_VAR([NVCCFLAGS], [flags for nvcc (default: -O2)])
  AC_ARG_VAR([NVCC_GENCODE], [nvcc code targets (default: machine code for every architecture from sm_75 on that nvcc --list-gpu-code lists, plus PTX of the newest nvcc --list-gpu-arch lists)])
  AS_IF([test "x$enable_gpu" = xno], [with_cuda=no])
  have_cuda=no
  cuda_report="no (--without-cuda or --disable-gpu)"
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [NNLAB_CUDA_DEFAULT_HOME],
    [CUDA_HOME=$with_cuda])
  : "${NVCCFLAGS=-O2}"
  AS_IF([test "x$with_cuda" != xno], [
    AC_PATH_PROG([NVCC], [nvcc], [], [$CUDA_HOME/bin$PATH_SEPARATOR$PATH])
    NNLAB_CUDA_DIRS
    save_CPPFLAGS=$CPPFLAGS
    save_LDFLAGS=$LDFLAGS
    save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    LDFLAGS="$LDFLAGS -L$CUDA_LIBDIR"
    cuda_missing=
    AC_CHECK_HEADERS([cuda_runtime_api.h cublas_v2.h cudnn.h], [], [cuda_missing="$cuda_missing $ac_header"])
    AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [:], [cuda_missing="$cuda_missing libcudart"])
    AC_CHECK_LIB([cublas], [cublasCreate_v2], [:], [cuda_missing="$cuda_missing libcublas"], [-lcudart])
    AC_CHECK_LIB([cudnn], [cudnnCreate], [:], [cuda_missing="$cuda_missing libcudnn"], [-lcudart])
    CPPFLAGS=$save_CPPFLAGS
    LDFLAGS=$save_LDFLAGS
    LIBS=$save_LIBS
    AS_IF([test -z "$NVCC"], [cuda_missing="$cuda_missing nvcc"])
    AS_IF([test -z "$cuda_missing"], [
      AS_IF([test "x${NVCC_GENCODE+set}" = xset],
        [cuda_archs="NVCC_GENCODE=$NVCC_GENCODE"],
        [NNLAB_CUDA_GENCODE])
      AC_MSG_CHECKING([whether $NVCC compiles a kernel for them])
      cat > conftest.cu <<'NNLAB_EOF'
#include <cublas_v2.h>
#include <cudnn.h>
__global__ void k(float *p) { *(p + threadIdx.x) *= 2.0f; }
extern "C" int launch(float *p) { k<<<1, 32>>>(p); return (int)cudaGetLastError(); }
NNLAB_EOF
      AS_IF([$NVCC $NVCCFLAGS $NVCC_GENCODE $CUDA_CPPFLAGS -Xcompiler -fPIC -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         cuda_missing="$cuda_missing (nvcc failed a test compile: see config.log)"])
      rm -f conftest.cu conftest.$OBJEXT
    ])
    AS_IF([test -z "$cuda_missing"],
      [have_cuda=yes
       cuda_version=`$NVCC --version | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'`
       CUDA_LIBS="-L$CUDA_LIBDIR -lcudnn -lcublas -lcudart"
       cuda_report="toolkit $cuda_version at $CUDA_HOME (libraries in $CUDA_LIBDIR): the GPU module will be built for $cuda_archs"],
      [cuda_report="not found under $CUDA_HOME (missing:$cuda_missing): no GPU module"
       AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([--with-cuda given but CUDA is $cuda_report])])])
  ])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_LIBDIR])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBS])
])
