#ifndef PIPECC_DIALECT_GRAPH_GRAPHDIALECT_H
#define PIPECC_DIALECT_GRAPH_GRAPHDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "pipecc/Dialect/Graph/GraphDialect.h.inc"

#endif // PIPECC_DIALECT_GRAPH_GRAPHDIALECT_H
