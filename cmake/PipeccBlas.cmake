# The CPU target's BLAS (docs/design.md, "The BLAS").
#
# Preferred: OpenBLAS from the scipy-openblas32 wheel, which
# scripts/setup.sh installs under ~/.cache/pipecc/scipy-openblas32. It holds
# every x86-64 kernel set and (OpenBLAS >= 0.3.25) picks one by CPUID
# features on processors newer than its model tables; its symbols carry the
# prefix scipy_. Fallback: Debian's OpenBLAS (0.3.21), which runs its SSE3
# "Prescott" kernels on Intel models it does not list.
#
# PIPECC_BLAS: AUTO (the wheel when present, else Debian's with a warning),
# SCIPY_OPENBLAS (the wheel or a configure error) or OPENBLAS (Debian's).
#
# Sets PIPECC_BLAS_LIBRARY, PIPECC_BLAS_INCLUDE_DIR (its cblas.h),
# PIPECC_BLAS_SYMBOL_PREFIX (empty or scipy_), PIPECC_BLAS_PACKAGE (a name
# for messages) and PIPECC_BLAS_LINK_FLAGS (the rank executables' rpath).

set(PIPECC_BLAS "AUTO" CACHE STRING
  "BLAS of the CPU target: AUTO, SCIPY_OPENBLAS or OPENBLAS")
set_property(CACHE PIPECC_BLAS PROPERTY STRINGS AUTO SCIPY_OPENBLAS OPENBLAS)
set(PIPECC_SCIPY_OPENBLAS_DIR
  "$ENV{HOME}/.cache/pipecc/scipy-openblas32/scipy_openblas32"
  CACHE PATH "The scipy_openblas32 folder of the scipy-openblas32 wheel")

string(TOUPPER "${PIPECC_BLAS}" _pipecc_blas)
if(NOT _pipecc_blas MATCHES "^(AUTO|SCIPY_OPENBLAS|OPENBLAS)$")
  message(FATAL_ERROR "PIPECC_BLAS='${PIPECC_BLAS}': expected AUTO, "
    "SCIPY_OPENBLAS or OPENBLAS")
endif()

set(_pipecc_blas_found FALSE)
if(NOT _pipecc_blas STREQUAL "OPENBLAS")
  # Searched each time (not cached): the wheel may come or go between runs.
  find_library(_pipecc_scipy_library NAMES scipy_openblas
    PATHS "${PIPECC_SCIPY_OPENBLAS_DIR}/lib" NO_DEFAULT_PATH NO_CACHE)
  find_path(_pipecc_scipy_include cblas.h
    PATHS "${PIPECC_SCIPY_OPENBLAS_DIR}/include" NO_DEFAULT_PATH NO_CACHE)
  if(_pipecc_scipy_library AND _pipecc_scipy_include)
    set(PIPECC_BLAS_LIBRARY "${_pipecc_scipy_library}")
    set(PIPECC_BLAS_INCLUDE_DIR "${_pipecc_scipy_include}")
    set(PIPECC_BLAS_SYMBOL_PREFIX scipy_)
    set(PIPECC_BLAS_PACKAGE "scipy-openblas32")
    get_filename_component(_pipecc_blas_dir "${_pipecc_scipy_library}"
      DIRECTORY)
    # Rank executables run from any folder (out/, a copied bundle on the same
    # machine): the wheel's folder is in their run path.
    set(PIPECC_BLAS_LINK_FLAGS "-Wl,-rpath,${_pipecc_blas_dir}")
    set(_pipecc_blas_found TRUE)
  elseif(_pipecc_blas STREQUAL "SCIPY_OPENBLAS")
    message(FATAL_ERROR "PIPECC_BLAS=SCIPY_OPENBLAS: no libscipy_openblas.so "
      "and cblas.h under ${PIPECC_SCIPY_OPENBLAS_DIR}; run scripts/setup.sh "
      "(or set PIPECC_SCIPY_OPENBLAS_DIR, or PIPECC_BLAS=OPENBLAS)")
  else()
    message(WARNING "scipy-openblas32 not found under "
      "${PIPECC_SCIPY_OPENBLAS_DIR} (scripts/setup.sh installs it): falling "
      "back to the system OpenBLAS, whose kernel choice may be slow on CPUs "
      "newer than it (see docs/design.md, \"The BLAS\")")
  endif()
endif()

if(NOT _pipecc_blas_found)
  find_library(PIPECC_OPENBLAS_LIBRARY NAMES openblas)
  # Debian keeps OpenBLAS's cblas.h beside the reference one; take
  # OpenBLAS's (it also declares openblas_set_num_threads).
  find_path(PIPECC_CBLAS_INCLUDE_DIR cblas.h
    PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
          /usr/include/openblas
    NO_DEFAULT_PATH)
  find_path(PIPECC_CBLAS_INCLUDE_DIR cblas.h)
  if(NOT PIPECC_OPENBLAS_LIBRARY OR NOT PIPECC_CBLAS_INCLUDE_DIR)
    message(FATAL_ERROR "No BLAS for the CPU target: neither scipy-openblas32 "
      "nor the system OpenBLAS (libopenblas-dev) was found; run "
      "scripts/setup.sh")
  endif()
  set(PIPECC_BLAS_LIBRARY "${PIPECC_OPENBLAS_LIBRARY}")
  set(PIPECC_BLAS_INCLUDE_DIR "${PIPECC_CBLAS_INCLUDE_DIR}")
  set(PIPECC_BLAS_SYMBOL_PREFIX "")
  set(PIPECC_BLAS_PACKAGE "system OpenBLAS")
  set(PIPECC_BLAS_LINK_FLAGS "")
endif()

message(STATUS "CPU target BLAS: ${PIPECC_BLAS_PACKAGE} "
  "(${PIPECC_BLAS_LIBRARY})")
