# subd: the two commands a new user needs are `make run` and `make test`.
SWIFT      ?= swift
CONFIG     ?= config/subd.yaml
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)

.PHONY: all build release run test bench fuzz clean

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

## fuzz: libFuzzer on the command parser for FUZZ_SECONDS (default 60); crashes land in .build/fuzz/
FUZZ_SECONDS ?= 60
fuzz:
	mkdir -p .build/fuzz/corpus
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name SubscriptionCenter -emit-library -static \
		-emit-module -emit-module-path .build/fuzz/SubscriptionCenter.swiftmodule \
		Sources/SubscriptionCenter/*.swift -o .build/fuzz/libSubscriptionCenter.a
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name ParserFuzz -I .build/fuzz \
		Tests/Fuzz/ParserFuzz.swift Sources/SubscriptionProtocol/*.swift .build/fuzz/libSubscriptionCenter.a \
		-o .build/fuzz/parser-fuzz
	.build/fuzz/parser-fuzz -max_total_time=$(FUZZ_SECONDS) -dict=Tests/Fuzz/commands.dict -artifact_prefix=.build/fuzz/ \
		.build/fuzz/corpus
