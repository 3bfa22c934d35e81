# The CUDA target's build dependencies, found once for the whole project.
#
#   PIPECC_ENABLE_CUDA  AUTO (default): build the CUDA parts when the CUDA
#                       toolkit is found; ON: require it; OFF: CPU only.
#
# Sets, for the CMakeLists that build CUDA code (runtime/lib/CUDA, the CUDA
# stage-lowering pipeline, tests):
#   PIPECC_CUDA_ENABLED     ON when the CUDA parts are built; a normal
#                           variable PIPECC_ENABLE_CUDA (shadowing the cache
#                           entry) says the same, so `if(PIPECC_ENABLE_CUDA)`
#                           reads "the CUDA parts are built" everywhere
#   CUDAToolkit_*           from CMake's FindCUDAToolkit (CUDA::cudart,
#                           CUDA::cublasLt, CUDA::cuda_driver, ...)
#   PIPECC_NCCL_LIBRARY     libnccl (found by library search: the toolkit
#                           ships no CMake package for it)
#   PIPECC_NCCL_INCLUDE_DIR nccl.h's folder
#   pipecc::nccl            an imported target for both
#   PIPECC_CUOBJDUMP        cuobjdump, for the tests (may be NOTFOUND: the
#                           tests that need it are then unsupported)
# and enables the CUDA language (nvcc, sm_90 by default, through ccache).
#
# The CPU build needs none of this: without a toolkit (or with OFF) nothing
# here is required and PIPECC_CUDA_ENABLED stays OFF.

set(PIPECC_ENABLE_CUDA AUTO CACHE STRING
  "Build the CUDA target: AUTO (when the CUDA toolkit is found), ON or OFF")
set_property(CACHE PIPECC_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)
set(PIPECC_CUDA_ARCHITECTURES 90 CACHE STRING
  "GPU architectures of the runtime's CUDA kernels (CMAKE_CUDA_ARCHITECTURES)")

string(TOUPPER "${PIPECC_ENABLE_CUDA}" _pipecc_cuda_mode)
set(_pipecc_cuda_asked ${PIPECC_ENABLE_CUDA})
# From here on (every return below) the answer is OFF unless set to ON last.
set(PIPECC_CUDA_ENABLED OFF)
set(PIPECC_ENABLE_CUDA OFF)
if(_pipecc_cuda_mode STREQUAL "AUTO")
  set(_pipecc_cuda_required OFF)
elseif(_pipecc_cuda_asked)
  set(_pipecc_cuda_required ON)
else()
  message(STATUS "CUDA target: off (PIPECC_ENABLE_CUDA=${_pipecc_cuda_asked})")
  return()
endif()

# nvcc takes neither the sanitizers' nor libFuzzer's flags, which those
# builds add to every compile: their build folders are CPU only.
if(PIPECC_SANITIZERS OR PIPECC_BUILD_FUZZERS)
  if(_pipecc_cuda_required)
    message(FATAL_ERROR "PIPECC_ENABLE_CUDA=ON cannot be combined with "
      "PIPECC_SANITIZERS or PIPECC_BUILD_FUZZERS (nvcc takes neither's flags)")
  endif()
  message(STATUS "CUDA target: off (sanitizer or fuzzer build)")
  return()
endif()

# CUDA 13 lives at /usr/local/cuda on the build and CI machines; CUDA_PATH,
# CUDAToolkit_ROOT or nvcc on PATH take precedence (FindCUDAToolkit).
if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT}
   AND NOT DEFINED ENV{CUDA_PATH} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
if(_pipecc_cuda_required)
  find_package(CUDAToolkit 12.0 REQUIRED)
else()
  find_package(CUDAToolkit 12.0 QUIET)
endif()
if(NOT CUDAToolkit_FOUND OR NOT CUDAToolkit_NVCC_EXECUTABLE)
  message(STATUS "CUDA target: off (no CUDA toolkit found; set "
    "CUDAToolkit_ROOT or PIPECC_ENABLE_CUDA=ON to require one)")
  return()
endif()

# NCCL: in the toolkit's lib/ on these machines (not lib64/), elsewhere in
# the system's library folders or NCCL_ROOT.
find_library(PIPECC_NCCL_LIBRARY nccl
  HINTS $ENV{NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR}
        ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR}/../lib)
find_path(PIPECC_NCCL_INCLUDE_DIR nccl.h
  HINTS $ENV{NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
if(NOT PIPECC_NCCL_LIBRARY OR NOT PIPECC_NCCL_INCLUDE_DIR)
  set(_pipecc_nccl_missing "NCCL not found (libnccl: ${PIPECC_NCCL_LIBRARY}, "
    "nccl.h: ${PIPECC_NCCL_INCLUDE_DIR}); set NCCL_ROOT")
  if(_pipecc_cuda_required)
    message(FATAL_ERROR "PIPECC_ENABLE_CUDA=ON: ${_pipecc_nccl_missing}")
  endif()
  message(STATUS "CUDA target: off (${_pipecc_nccl_missing})")
  return()
endif()
if(NOT TARGET pipecc::nccl)
  add_library(pipecc::nccl UNKNOWN IMPORTED)
  set_target_properties(pipecc::nccl PROPERTIES
    IMPORTED_LOCATION ${PIPECC_NCCL_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${PIPECC_NCCL_INCLUDE_DIR})
endif()

# The CUDA language for the runtime's named kernels: the toolkit's nvcc, the
# C++ compiler as its host compiler, Hopper by default, and ccache in front
# of nvcc as of the C++ compiler (CI rebuilds them on every run).
if(NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
if(NOT CMAKE_CUDA_HOST_COMPILER)
  set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
endif()
if(NOT CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES ${PIPECC_CUDA_ARCHITECTURES})
endif()
if(CCACHE_PROGRAM AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)

# The toolkit's cuobjdump, else the pip package nvidia-cuda-cuobjdump that
# scripts/setup.sh installs (CUDA's Debian-less installs lack the binary).
find_program(PIPECC_CUOBJDUMP cuobjdump
  HINTS ${CUDAToolkit_BIN_DIR}
        $ENV{HOME}/.cache/pipecc/cuda-tools/nvidia/cu13/bin)

set(PIPECC_CUDA_ENABLED ON)
set(PIPECC_ENABLE_CUDA ON)
message(STATUS "CUDA target: on (CUDA ${CUDAToolkit_VERSION} at "
  "${CUDAToolkit_BIN_DIR}, NCCL ${PIPECC_NCCL_LIBRARY}, architectures "
  "${CMAKE_CUDA_ARCHITECTURES}, cuobjdump ${PIPECC_CUOBJDUMP})")
