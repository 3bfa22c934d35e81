// Anchors the PipeccConversion library; the passes live beside it.
#include "pipecc/Conversion/Passes.h"
