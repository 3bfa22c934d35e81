//===- SyntheticData.h - Deterministic stand-in input data ------*- C++ -*-===//
#ifndef PIPECC_RUNTIME_SYNTHETICDATA_H
#define PIPECC_RUNTIME_SYNTHETICDATA_H

#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Runtime.h"

namespace pipecc::rt {

/// One step's batch for data input `desc`: shape [M * desc.shape[0],
/// desc.shape[1:]...], values per pipecc_rt_synthetic_value. Depends only on
/// the input's name, dtype and shape, so every rank and every pipeline split
/// of the same model sees the same data.
NpyArray makeSyntheticInput(const pipecc_rt_buffer_desc &desc,
                            int64_t microbatches);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_SYNTHETICDATA_H
