# Thin wrapper over CMake. The two commands a new user needs:
#   make run    install what is missing, build Release into build/, open the lesson's example
#   make test   install what is missing, build, run every test with ctest
#   make package  the Debian package build-package/attnviz_VERSION_amd64.deb (see below)
# Options: PORTABLE=1 (baseline x86-64 instead of -march=native), SANITIZE=1 (ASan+UBSan,
# built in build-sanitize/), WERROR=1 (warnings are errors, as in CI), ARGS="..." (passed
# to attnviz by make run).
BUILD      ?= build
BUILD_TYPE ?= Release
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
ARGS       ?=

# Kept in CMake's cache once given (every object depends on it: switching it rebuilds all).
ifeq ($(WERROR),1)
  CMAKE_ARGS += -DATTNVIZ_WERROR=ON
endif

ifeq ($(PORTABLE),1)
  CMAKE_ARGS += -DATTNVIZ_PORTABLE=ON
  BUILD := build-portable
endif
# Sanitized builds get their own directory (a portable one too: CMake's cache would keep
# ATTNVIZ_PORTABLE from an earlier run in the same directory).
ifeq ($(SANITIZE),1)
  CMAKE_ARGS += -DATTNVIZ_SANITIZE=ON
  BUILD := $(if $(filter 1,$(PORTABLE)),build-sanitize-portable,build-sanitize)
  BUILD_TYPE := RelWithDebInfo
endif

.PHONY: all deps build run test bench fuzz soak package clean web web-serve
all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >$(BUILD).configure.log 2>&1 \
	  || { cat $(BUILD).configure.log; exit 1; }
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/attnviz $(ARGS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE soak

# attnviz against the lesson's PyTorch module (Debian's python3-torch, run by /usr/bin/python3),
# interleaved, as a table of medians, then GPT-2 small's shapes (scripts/bench_gpt.py) and
# generate with and without the KV cache (scripts/bench_generate.py). BENCH_ARGS is passed to
# scripts/bench.py: --quick, --rounds N, --json FILE, --gui-frames N.
BENCH_ARGS ?=
bench: build
	@ATTNVIZ_EXTRA_PACKAGES="python3-torch" scripts/install-deps
	/usr/bin/python3 scripts/bench.py --bin ./$(BUILD)/attnviz $(BENCH_ARGS)

# libFuzzer (clang 14): builds only the fuzz targets (safetensors reader, config parsing,
# session files, trained-model reader, GPT-2's tokenizer, whole GPT models) in build-fuzz/ and runs each for
# FUZZ_SECONDS over a copy of fuzz/corpus/<target>/; prints executions and crashes.
FUZZ_SECONDS ?= 60
fuzz:
	@ATTNVIZ_EXTRA_PACKAGES="clang libclang-rt-14-dev" scripts/install-deps
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_FUZZ=ON \
	  -DATTNVIZ_PORTABLE=ON >build-fuzz.configure.log 2>&1 || { cat build-fuzz.configure.log; exit 1; }
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_safetensors fuzz_config fuzz_session fuzz_model fuzz_bpe fuzz_gpt
	@fuzz/run-fuzzers.sh build-fuzz $(FUZZ_SECONDS)

# The full GUI soak: 20,000 scripted frames under xvfb-run (ctest label soak, tests/CMakeLists.txt);
# fails on any GL error, a refused valid edit or an accepted invalid one, or RSS growth over 5 MB.
soak: build
	ctest --test-dir $(BUILD) -L soak --output-on-failure

# The Debian package for lab machines: a portable (baseline x86-64) Release build without the
# tests in build-package/, its icons and man page (cmake/packaging.cmake), then CPack's DEB
# generator. Prints the .deb's path; scripts/package-check installs it on a fresh Debian 12.
# The package holds the web page attnviz --serve serves: make web first (Debian's emscripten).
package:
	@if [ "$(SANITIZE)" = 1 ]; then echo "make package builds the release package; run it without SANITIZE=1" >&2; exit 2; fi
	@$(MAKE) --no-print-directory web WEB_PROBES=0
	@ATTNVIZ_EXTRA_PACKAGES="dpkg-dev help2man librsvg2-bin" scripts/install-deps
	@cmake -S . -B build-package -DCMAKE_BUILD_TYPE=Release -DATTNVIZ_PORTABLE=ON -DATTNVIZ_PACKAGE=ON \
	  -DBUILD_TESTING=OFF $(CMAKE_ARGS) >build-package.configure.log 2>&1 || { cat build-package.configure.log; exit 1; }
	@cmake --build build-package -j $(JOBS)
	@rm -f build-package/attnviz_*.deb
	@cd build-package && cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }
	@ls build-package/attnviz_*.deb

# The web page (docs/web.md): Debian's emscripten and Dear ImGui's source
# (scripts/web-deps), then build-web/site/, a static folder for any web server, without
# test probes. The browser tests (tests/web, ctest label web) drive a second build of the
# same page with them, build-web/probes/site/ (-DATTNVIZ_WEB_PROBES=ON, the same Dear ImGui
# source); it and the tests' npm packages are set up here too, into build-web/.
# WEB_PROBES=0 builds only the site (make package does).
# NODE_PATH: emscripten's JavaScript tools need Debian's node modules (acorn) whichever node runs them.
WEB_BUILD  ?= build-web
WEB_PORT   ?= 8080
WEB_PROBES ?= 1
# One emscripten build tree: $(1) its folder, $(2) CMake arguments of its own.
define web_tree
	@NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=Release \
	  -DEigen3_DIR=/usr/share/eigen3/cmake $(2) $(CMAKE_ARGS) >$(1).configure.log 2>&1 \
	  || { cat $(1).configure.log; exit 1; }
	@NODE_PATH=/usr/share/nodejs cmake --build $(1) -j $(JOBS)
endef
web: deps
	@scripts/web-deps $(WEB_BUILD)
	$(call web_tree,$(WEB_BUILD),-DATTNVIZ_WEB_PROBES=OFF)
ifeq ($(WEB_PROBES),1)
	$(call web_tree,$(WEB_BUILD)/probes,-DATTNVIZ_WEB_PROBES=ON -DATTNVIZ_IMGUI_SRC=$(abspath $(WEB_BUILD))/imgui-src)
	@tests/web/setup $(WEB_BUILD)
	@echo "web: the tests' page, with their probes, is in $(WEB_BUILD)/probes/site/"
endif
	@echo "web: the site is in $(WEB_BUILD)/site/ (make web-serve shows it)"

# Serves build-web/site/ on 127.0.0.1 (Ctrl+C stops it) and prints the address.
web-serve:
	@test -f $(WEB_BUILD)/site/index.html || { echo "web-serve: no $(WEB_BUILD)/site/ yet; run make web first" >&2; exit 2; }
	@python3 web/serve.py $(WEB_BUILD)/site --port $(WEB_PORT)

clean:
	rm -rf build build-web build-portable build-sanitize build-sanitize-portable build-fuzz build-package *.configure.log
