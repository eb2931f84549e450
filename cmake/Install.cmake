# `cmake --install build --prefix P` (docs/Library.md):
#   P/bin            attn-opt, attn-compile, attn-run
#   P/lib            the dialect and pass libraries (static), the mlir-opt
#                    plugin, libAttnCudaRuntime.so,
#                    attn-opt/kernel-runtime.bc (attn-compile's run-time
#                    support)
#   P/lib/cmake/AttnOpt   AttnOptConfig.cmake and friends
#   P/include/attn-opt    headers (and the generated .inc files)
#   P/lib/python3/site-packages/attn_opt   the Python package
include(CMakePackageConfigHelpers)

set(ATTN_INSTALL_INCLUDEDIR include)
set(ATTN_INSTALL_BINDIR bin)
set(ATTN_INSTALL_PYTHONDIR lib/python3/site-packages)
set(ATTN_INSTALL_CMAKEDIR lib/cmake/AttnOpt)
set(ATTN_OMP_LIBRARY ${LLVM_LIBRARY_DIR}/libomp.so)

install(DIRECTORY ${ATTN_SOURCE_DIR}/include/attn-opt
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td" PATTERN "*.def")
install(DIRECTORY ${ATTN_BINARY_DIR}/include/attn-opt
  DESTINATION ${ATTN_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc")

# The tools find libMLIR.so/libLLVM.so where they were built against.
set(tools attn-opt attn-compile attn-run)
set_target_properties(${tools} PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../lib;${LLVM_LIBRARY_DIR}")
# add_mlir_library puts the libraries into the export set MLIRTargets;
# the host library and the tools join them.
install(TARGETS AttnHost EXPORT MLIRTargets ARCHIVE DESTINATION lib)
install(TARGETS ${tools} EXPORT MLIRTargets
  RUNTIME DESTINATION ${ATTN_INSTALL_BINDIR})
install(TARGETS AttnPlugin AttnCudaRuntime LIBRARY DESTINATION lib)
install(EXPORT MLIRTargets NAMESPACE AttnOpt:: FILE AttnOptTargets.cmake
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})

get_property(ATTN_EXPORTED_LIBRARIES GLOBAL PROPERTY MLIR_EXPORTS)
list(APPEND ATTN_EXPORTED_LIBRARIES AttnHost)
configure_package_config_file(${ATTN_SOURCE_DIR}/cmake/AttnOptConfig.cmake.in
  ${ATTN_BINARY_DIR}/cmake/AttnOptConfig.cmake
  INSTALL_DESTINATION ${ATTN_INSTALL_CMAKEDIR}
  PATH_VARS ATTN_INSTALL_INCLUDEDIR ATTN_INSTALL_BINDIR ATTN_INSTALL_PYTHONDIR)
write_basic_package_version_file(
  ${ATTN_BINARY_DIR}/cmake/AttnOptConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${ATTN_BINARY_DIR}/cmake/AttnOptConfig.cmake
  ${ATTN_BINARY_DIR}/cmake/AttnOptConfigVersion.cmake
  ${ATTN_SOURCE_DIR}/cmake/AttnOptKernels.cmake
  DESTINATION ${ATTN_INSTALL_CMAKEDIR})

install(DIRECTORY ${ATTN_SOURCE_DIR}/python/attn_opt
  DESTINATION ${ATTN_INSTALL_PYTHONDIR}
  PATTERN "__pycache__" EXCLUDE)
install(FILES ${ATTN_PYTHON_CAPABILITIES}
  DESTINATION ${ATTN_INSTALL_PYTHONDIR}/attn_opt)
