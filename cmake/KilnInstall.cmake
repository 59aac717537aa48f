# What `cmake --install` lays out, and the Debian package CPack makes of it.
#
#   bin/                       kiln-compile, kiln-run, kiln-serve, kiln-opt, kiln-plan
#   include/kiln/runtime.h     the C ABI every model.so exports
#   lib/cmake/KilnRuntime/     find_package(KilnRuntime): Kiln::Runtime and the
#                              kiln_add_model / kiln_compile_model functions
#   lib/python3*/dist-packages/kiln   the Python package (python/CMakeLists.txt)
#   share/doc/kiln/            README and docs/
#
# Nothing installed refers back to the source or build tree: kiln-compile
# carries the runtime object it links into every model.so inside itself, and
# the tools find their shared libraries through Debian's paths (libMLIR.so via
# the RUNPATH /usr/lib/llvm-22/lib that LLVM's CMake gives them).
# The compiler's own static libraries stay private (DISABLE_INSTALL in lib/):
# there is no find_package(Kiln), only the runtime package for hosts.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALLED_BINARIES
  kiln-compile kiln-run kiln-serve kiln-opt kiln-plan KilnPythonModule)
# LLVM's CMake gives its executables the install RUNPATH $ORIGIN/../lib, which
# loses /usr/lib/llvm-22/lib (where Debian keeps libMLIR.so, outside ld.so's
# paths): name that directory instead, as the build tree's binaries do.
set_target_properties(${KILN_INSTALLED_BINARIES} PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS kiln-compile kiln-run kiln-serve kiln-opt kiln-plan
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/kiln/runtime.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)

set(KILN_RUNTIME_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/KilnRuntime)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/KilnRuntimeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/KilnRuntimeConfig.cmake
  INSTALL_DESTINATION ${KILN_RUNTIME_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
# The ABI version is the compatibility contract, not the compiler's version:
# any Kiln 0.x runtime header reads any 0.x model.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/KilnRuntimeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/KilnRuntimeConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/KilnRuntimeConfigVersion.cmake
  DESTINATION ${KILN_RUNTIME_CMAKEDIR})

install(FILES ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
  PATTERN CMakeLists.txt EXCLUDE
  PATTERN tools EXCLUDE)

# --- Debian package: `cmake --build build --target package` writes
# build/kiln_<version>_amd64.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VENDOR "Kiln")
set(CPACK_PACKAGE_CONTACT "Kiln maintainers <kiln@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "ahead-of-time compiler from ONNX models to standalone shared objects")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "Kiln reads an ONNX model and writes a shared object that runs it with\n libc alone: kiln-compile, kiln-run, kiln-serve (KServe v2), kiln-opt,\n kiln-plan, the C runtime header with its CMake package, and the Python\n package `kiln`.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
# Shared libraries the binaries need, found by dpkg-shlibdeps where the
# library's package ships shlibs data; the LLVM/MLIR 22 packages do not, so
# they are named here. kiln-compile links every model.so with the system C
# compiler driver (`cc`).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(KILN_DEB_DEPENDS "libllvm22, gcc | c-compiler, python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${KILN_DEB_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-onnx")
include(CPack)
