# Debian packages (cpack -G DEB; scripts/package.sh builds them from the self-contained build):
#   manifold-opencl-icd  the ICD library and /etc/OpenCL/vendors/manifold.icd, like every other
#                        OpenCL platform package (Provides: opencl-icd)
#   manifold-tools       `manifold` and `manifold-compile`
# Install rules name their component (icd, tools); dpkg-shlibdeps works out the libraries' packages.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME manifold)
set(CPACK_PACKAGE_VENDOR "Manifold developers")
set(CPACK_PACKAGE_CONTACT "Manifold developers <manifold@lists.manifold.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL icd tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)

set(CPACK_DEBIAN_ICD_PACKAGE_NAME manifold-opencl-icd)
set(CPACK_DEBIAN_ICD_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_ICD_PACKAGE_PROVIDES opencl-icd)
# libsleef3: the CPU device opens SLEEF at run time (vector math), so dpkg-shlibdeps cannot see it.
set(CPACK_DEBIAN_ICD_PACKAGE_DEPENDS "ocl-icd-libopencl1 | libopencl1, libsleef3")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_ICD_DESCRIPTION
    "Manifold OpenCL platform: CPU, CUDA, HIP and Level Zero devices in one platform\n"
    "Manifold is an OpenCL 3.0 implementation whose devices are the host CPU and the\n"
    "machine's NVIDIA (CUDA), AMD (HIP) and Intel (Level Zero) GPUs, all in one platform,\n"
    "so that one context spans every device. GPU drivers are loaded at run time where\n"
    "they are installed. This package holds the ICD library and its .icd file.")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME manifold-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
# The OpenCL loader, which the tools link, comes from dpkg-shlibdeps.
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "manifold-opencl-icd (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "Manifold OpenCL platform: command-line tools\n"
    "manifold lists the OpenCL devices of the machine, runs Manifold's benchmark against\n"
    "every platform installed and manages its program cache; manifold-compile builds\n"
    "OpenCL C for any device Manifold supports without a device present.")

# The files every Debian package carries: copyright, a changelog (gzip -n, no time stamp), and
# for the ICD the .icd file as a conffile and the ldconfig trigger of a public shared library.
set(package_docs ${CMAKE_BINARY_DIR}/packaging)
file(WRITE ${package_docs}/triggers "activate-noawait ldconfig\n")
file(WRITE ${package_docs}/conffiles "/etc/OpenCL/vendors/manifold.icd\n")
set(CPACK_DEBIAN_ICD_PACKAGE_CONTROL_EXTRA ${package_docs}/triggers ${package_docs}/conffiles)
string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
find_program(MANIFOLD_GZIP gzip)
foreach(component ${CPACK_COMPONENTS_ALL})
  string(TOUPPER ${component} upper)
  set(package ${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  file(WRITE ${package_docs}/${package}/changelog.Debian
       "${package} (${PROJECT_VERSION}) unstable; urgency=low\n\n"
       "  * Built from the Manifold source tree.\n\n"
       " -- ${CPACK_PACKAGE_CONTACT}  ${changelog_date}\n")
  add_custom_command(
    OUTPUT ${package_docs}/${package}/changelog.Debian.gz
    COMMAND ${MANIFOLD_GZIP} -9nf -k ${package_docs}/${package}/changelog.Debian
    DEPENDS ${package_docs}/${package}/changelog.Debian
    VERBATIM)
  add_custom_target(package_docs_${component} ALL
                    DEPENDS ${package_docs}/${package}/changelog.Debian.gz)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright
                ${package_docs}/${package}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component}
          PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endforeach()
include(CPack)
