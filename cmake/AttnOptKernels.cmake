# attn_opt_add_kernel_library(<target> SOURCES <file.mlir>...
#                             [PREFIX <name>] [TARGET_CPU <cpu>]
#                             [FEATURES <+f,-g>])
#
# Compiles each .mlir file ahead of time with attn-compile (at build time,
# again when the file or attn-compile changes) and makes <target> a static
# library of the kernels. Linking <target> gives the include directory of
# the generated headers (<name>.h for each source; <name> is the file's
# stem, or PREFIX with a single source, and prefixes its C symbols) and the
# OpenMP runtime. TARGET_CPU is attn-compile's --target (default: host, the
# building machine's CPU; x86-64-v3 or x86-64-v4 for portable binaries).
#
# Needs AttnOpt::attn-compile (find_package(AttnOpt)); the build tree of
# attn-opt defines the same function for its own tests.

# The OpenMP runtime the kernels call (the one attn-opt was built with).
if(NOT TARGET AttnOpt::OpenMP AND ATTN_OPT_OPENMP_LIBRARY)
  add_library(AttnOpt::OpenMP SHARED IMPORTED)
  set_target_properties(AttnOpt::OpenMP PROPERTIES
    IMPORTED_LOCATION "${ATTN_OPT_OPENMP_LIBRARY}")
endif()

function(attn_opt_add_kernel_library target)
  cmake_parse_arguments(ARG "" "PREFIX;TARGET_CPU;FEATURES" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "attn_opt_add_kernel_library(${target}): no SOURCES")
  endif()
  list(LENGTH ARG_SOURCES count)
  if(ARG_PREFIX AND count GREATER 1)
    message(FATAL_ERROR "attn_opt_add_kernel_library(${target}): PREFIX "
      "takes a single source (each source's stem prefixes its symbols)")
  endif()
  if(NOT ARG_TARGET_CPU)
    set(ARG_TARGET_CPU host)
  endif()
  set(compiler AttnOpt::attn-compile)
  if(NOT TARGET ${compiler})
    set(compiler attn-compile) # attn-opt's own build tree
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${target}.attn)
  set(objects)
  set(headers)
  foreach(src ${ARG_SOURCES})
    get_filename_component(path ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    set(name ${stem})
    if(ARG_PREFIX)
      set(name ${ARG_PREFIX})
    endif()
    string(MAKE_C_IDENTIFIER "${name}" name)
    set(features)
    if(ARG_FEATURES)
      set(features --features=${ARG_FEATURES})
    endif()
    add_custom_command(
      OUTPUT ${dir}/${name}.o ${dir}/include/${name}.h
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}/include
      COMMAND ${compiler} ${path} --prefix ${name}
        --target=${ARG_TARGET_CPU} ${features}
        --object ${dir}/${name}.o --header ${dir}/include/${name}.h
      DEPENDS ${path} ${compiler}
      COMMENT "attn-compile ${src}"
      VERBATIM)
    list(APPEND objects ${dir}/${name}.o)
    list(APPEND headers ${dir}/include/${name}.h)
  endforeach()
  set_source_files_properties(${objects} PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${target} STATIC ${objects} ${headers})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${target} PUBLIC ${dir}/include)
  target_link_libraries(${target} PUBLIC AttnOpt::OpenMP m)
endfunction()
