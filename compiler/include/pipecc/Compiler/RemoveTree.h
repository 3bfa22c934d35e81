#ifndef PIPECC_COMPILER_REMOVETREE_H
#define PIPECC_COMPILER_REMOVETREE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pipecc {

/// Removes `path` and, if it is a folder, everything below it, without ever
/// following a symbolic link: a link (at `path` or inside the tree) is
/// unlinked, never descended into, so a link planted in the tree cannot make
/// this empty another folder. Every step works relative to an open folder
/// (openat/unlinkat with O_NOFOLLOW), so renaming a folder of the tree
/// mid-way cannot redirect it either. A missing `path` is success.
bool removeTree(llvm::StringRef path, std::string &error);

} // namespace pipecc

#endif // PIPECC_COMPILER_REMOVETREE_H
