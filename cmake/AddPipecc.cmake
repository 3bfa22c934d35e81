# Helpers shared by pipecc's libraries. Dialect, pass and frontend libraries
# add themselves to a global property so the tools link them without
# hand-kept lists (the CIRCT/MLIR convention).

function(add_pipecc_library name)
  add_mlir_library(${name} ${ARGN})
  set_property(GLOBAL APPEND PROPERTY PIPECC_LIBS ${name})
endfunction()

function(add_pipecc_dialect_library name)
  add_mlir_dialect_library(${name} ${ARGN})
  set_property(GLOBAL APPEND PROPERTY PIPECC_LIBS ${name})
endfunction()

# Generates a dialect's markdown reference from ODS into the build tree;
# the `pipecc-docs` target copies it into the source docs/ folder.
function(add_pipecc_doc td_file output_name)
  set(LLVM_TARGET_DEFINITIONS ${td_file})
  tablegen(MLIR ${output_name}.md -gen-dialect-doc ${ARGN})
  add_custom_target(${output_name}DocGen DEPENDS
    ${CMAKE_CURRENT_BINARY_DIR}/${output_name}.md)
  set_property(GLOBAL APPEND PROPERTY PIPECC_DOCS
    ${CMAKE_CURRENT_BINARY_DIR}/${output_name}.md)
  set_property(GLOBAL APPEND PROPERTY PIPECC_DOC_TARGETS ${output_name}DocGen)
endfunction()
