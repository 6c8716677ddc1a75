# subd: the two commands a new user needs are `make run` and `make test`.
SWIFT      ?= swift
CONFIG     ?= config/subd.yaml
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)

.PHONY: all build release run test bench clean

all: build

## build: debug build of everything
build:
	$(SWIFT) build

## release: optimized subd, subctl and subbench in .build/release
release:
	$(SWIFT) build -c release --product subd
	$(SWIFT) build -c release --product subctl
	$(SWIFT) build -c release --product subbench

## run: build (release) and run subd in the foreground on 127.0.0.1:7827 with config/subd.yaml
run:
	$(SWIFT) build -c release --product subd
	$(SWIFT) build -c release --product subctl
	@echo "subctl is at $$($(SWIFT) build -c release --show-bin-path)/subctl"
	exec "$$($(SWIFT) build -c release --show-bin-path)/subd" --config $(CONFIG)

## test: build and run every test (unit and integration, real binaries over real sockets)
test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

## bench: fan-out benchmark against a release subd (1 publisher, 10 subscribers, 500,000 x 128 B)
bench: release
	"$$($(SWIFT) build -c release --show-bin-path)/subbench" --subd "$$($(SWIFT) build -c release --show-bin-path)/subd" \
		--subscribers 10 --messages 500000 --size 128 --window 1000

clean:
	rm -rf .build
