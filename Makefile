# gpuencode from source. The scripts in packaging/ do the work; this file only names them.
#   make                      release build (.build/release/gpuencode, Swift runtime linked in)
#   make install              binary, man pages, completions, docs under $(DESTDIR)$(PREFIX)
#   make uninstall            removes them
#   make deb                  dist/gpuencode_VERSION_amd64.deb (Debian 12)
#   make tarball              dist/gpuencode-VERSION-linux-x86_64.tar.gz (any x86-64 glibc Linux)
#   make check                the test suite (.ci/test)
#   make package-test         builds both packages and tests them in Debian 12 chroots (root)
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all build install uninstall deb tarball check package-test

all: build

build:
	packaging/build >/dev/null

install:
	packaging/stage "$(PREFIX)" "$(DESTDIR)"

uninstall:
	packaging/stage --uninstall "$(PREFIX)" "$(DESTDIR)"

deb:
	packaging/build-deb

tarball:
	packaging/build-tarball

check:
	bash .ci/test

package-test:
	bash .ci/package-test
