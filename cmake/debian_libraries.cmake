# The Debian libraries Stowage's programs link, each as an interface target
# that picks, per program, Debian's shared library or its static archive.
#
# A program with the property STOWAGE_STANDALONE set links the archives
# (and libstdc++ and libgcc statically), so that it runs where only the C
# library, the driver and the CUDA toolkit are installed: the GPU machine
# (issue 15, item 4; bench/gpu/check.sh carries it there). Every other
# program links the shared libraries, as before. The choice is made where
# the program links ($<TARGET_PROPERTY:...> in a link interface names the
# program being linked), so one build and one set of object files serves both.
#
# Debian ships every archive but simdjson's: Stowage compiles simdjson from
# Debian's source package of the installed version, which
# scripts/fetch-debian-source puts in build/debian-source/simdjson
# (`make deps` does). Without it there is no standalone program, and
# configure says so.

find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(LIBURING REQUIRED IMPORTED_TARGET liburing)

set(STOWAGE_SIMDJSON_SOURCE "${PROJECT_SOURCE_DIR}/build/debian-source/simdjson" CACHE PATH
    "Debian's simdjson source package, unpacked (scripts/fetch-debian-source libsimdjson-dev DIR)")

# What the standalone program lacks; cli/CMakeLists.txt builds it when nothing.
# A sanitizer's or fuzzer's runtime does not link into a static libstdc++ program.
set(STOWAGE_STANDALONE_MISSING "")
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize" OR STOWAGE_BUILD_FUZZERS)
  list(APPEND STOWAGE_STANDALONE_MISSING "a build without sanitizers")
endif()
function(stowage_find_archive variable name)
  find_library(${variable} NAMES ${name} HINTS ${ARGN} NO_CACHE)
  if(NOT ${variable})
    list(APPEND STOWAGE_STANDALONE_MISSING ${name})
    set(STOWAGE_STANDALONE_MISSING "${STOWAGE_STANDALONE_MISSING}" PARENT_SCOPE)
  endif()
  set(${variable} "${${variable}}" PARENT_SCOPE)
endfunction()
stowage_find_archive(_stowage_yaml_cpp_archive libyaml-cpp.a)
stowage_find_archive(_stowage_openblas_archive libopenblas.a ${OPENBLAS_LIBRARY_DIRS})
stowage_find_archive(_stowage_liburing_archive liburing.a ${LIBURING_LIBRARY_DIRS})

set(_stowage_simdjson_cpp "${STOWAGE_SIMDJSON_SOURCE}/singleheader/simdjson.cpp")
set(_stowage_simdjson_h "${STOWAGE_SIMDJSON_SOURCE}/singleheader/simdjson.h")
if(EXISTS "${_stowage_simdjson_cpp}")
  # The library must be the version whose header the other files include.
  file(SHA256 "${_stowage_simdjson_h}" _source_header)
  get_target_property(_installed_include simdjson::simdjson INTERFACE_INCLUDE_DIRECTORIES)
  find_file(_installed_simdjson_h simdjson.h HINTS ${_installed_include} NO_CACHE REQUIRED)
  file(SHA256 "${_installed_simdjson_h}" _installed_header)
  if(NOT _source_header STREQUAL _installed_header)
    message(WARNING "${_stowage_simdjson_h} is not the installed simdjson.h: fetch the source package "
                    "of the installed version (scripts/fetch-debian-source libsimdjson-dev build/debian-source)")
    list(APPEND STOWAGE_STANDALONE_MISSING "simdjson's source of the installed version")
  else()
    # Built only when a standalone program needs it.
    add_library(stowage_simdjson_archive STATIC EXCLUDE_FROM_ALL "${_stowage_simdjson_cpp}")
    target_include_directories(stowage_simdjson_archive SYSTEM PUBLIC "${STOWAGE_SIMDJSON_SOURCE}/singleheader")
    target_compile_features(stowage_simdjson_archive PRIVATE cxx_std_17)
    set_target_properties(stowage_simdjson_archive PROPERTIES POSITION_INDEPENDENT_CODE ON)
    set(_stowage_simdjson_archive stowage_simdjson_archive)
  endif()
else()
  list(APPEND STOWAGE_STANDALONE_MISSING "simdjson's source (${STOWAGE_SIMDJSON_SOURCE})")
endif()

# stowage_debian_library(TARGET SHARED STATIC): TARGET links SHARED, or
# STATIC for a program with the STOWAGE_STANDALONE property.
function(stowage_debian_library target shared static)
  add_library(${target} INTERFACE)
  target_link_libraries(${target} INTERFACE
    "$<IF:$<BOOL:$<TARGET_PROPERTY:STOWAGE_STANDALONE>>,${static},${shared}>")
endfunction()

stowage_debian_library(stowage_yaml_cpp yaml-cpp "${_stowage_yaml_cpp_archive}")
stowage_debian_library(stowage_openblas PkgConfig::OPENBLAS "${_stowage_openblas_archive}")
stowage_debian_library(stowage_liburing PkgConfig::LIBURING "${_stowage_liburing_archive}")
stowage_debian_library(stowage_simdjson simdjson::simdjson "${_stowage_simdjson_archive}")
