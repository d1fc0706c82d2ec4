# Passed to llama-cpp-python's configure as CMAKE_PROJECT_INCLUDE by scripts/test-slow.sh.
# llama-cpp-python's CMakeLists.txt forces LLAMA_BUILD_COMMON ON, so its build compiles and
# installs llama.cpp's `common` library (libllama-common.so: argument parsing, chat templates,
# JSON schemas; more code than libllama itself), which the Python package never loads (it
# loads libllama and libggml*). CMake runs this file after every project() call; in llama.cpp's
# own project, before its option() and its `if (LLAMA_BUILD_COMMON)` read the setting, a normal
# variable set OFF hides the forced cache value (policy CMP0077), so `common` is neither
# compiled nor installed. The wheel's Python package and the libraries it loads are unchanged.
if(PROJECT_NAME STREQUAL "llama.cpp")
  set(LLAMA_BUILD_COMMON OFF)
endif()
