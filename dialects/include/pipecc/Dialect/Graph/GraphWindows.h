//===- GraphWindows.h - Sliding windows of convs and pools ------*- C++ -*-===//
//
// The arithmetic of sliding windows, shared by the ops' type inference, the
// importer (auto_pad) and the lowering (average-pool divisors), so that each
// rule has one implementation. Along one spatial dimension, output position
// `o` reads the input positions `o * stride - padBegin + j * dilation` for
// `0 <= j < kernel`.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_DIALECT_GRAPH_GRAPHWINDOWS_H
#define PIPECC_DIALECT_GRAPH_GRAPHWINDOWS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace pipecc::graph {

/// One spatial dimension of a window.
struct WindowDim {
  int64_t kernel, stride, padBegin, padEnd, dilation;

  int64_t extent() const { return dilation * (kernel - 1) + 1; }
  /// The number of window positions over an input of `size`, rounded down
  /// or, with `ceilMode`, up; a window that would start in the trailing
  /// padding is dropped, as in PyTorch. Zero or less when none fits.
  int64_t outputSize(int64_t size, bool ceilMode) const;
  /// The divisor of an average over output position `o` of an input of
  /// `size`: the taps inside the input, or with `includePad` those inside
  /// the padded input (not those `ceil_mode` adds past `padEnd`).
  int64_t count(int64_t o, int64_t size, bool includePad) const;
};

/// The window dimensions of a rank-(n + 2) `[N, C, d1..dn]` operation;
/// fails with a diagnostic at `loc` when the attribute sizes differ from n
/// or a value is out of range (kernel, stride, dilation < 1, pad < 0).
llvm::FailureOr<llvm::SmallVector<WindowDim>>
getWindowDims(std::optional<mlir::Location> loc, int64_t spatialRank,
              llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
              llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations);

/// The spatial output sizes of `dims` over `spatialShape`; fails with a
/// diagnostic when a window does not fit into the padded input.
llvm::FailureOr<llvm::SmallVector<int64_t>>
getWindowOutputShape(std::optional<mlir::Location> loc,
                     llvm::ArrayRef<WindowDim> dims,
                     llvm::ArrayRef<int64_t> spatialShape, bool ceilMode);

} // namespace pipecc::graph

#endif // PIPECC_DIALECT_GRAPH_GRAPHWINDOWS_H
