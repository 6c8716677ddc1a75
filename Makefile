# subd: the two commands a new user needs are `make run` and `make test`.
SWIFT      ?= swift
CONFIG     ?= config/subd.yaml
# Where `make run` keeps subd's state (numbers and retained values survive a restart); `make run STATE_DIR=` for none.
STATE_DIR  ?= .build/state
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)

PREFIX     ?= /usr/local
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
SUDO        = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps deps-test deps-peers apt build release run test tsan alloc-guard bench bench-peers fuzz fuzz-path \
	install uninstall clean

all: build

## deps: install the Debian packages the build needs when missing (libsystemd-dev for sd_notify & co., libssl-dev for
## the users' secret hashes and TLS)
deps:
	@pkg-config --exists libsystemd 2>/dev/null || $(MAKE) --no-print-directory apt PACKAGES="pkg-config libsystemd-dev"
	@pkg-config --exists openssl 2>/dev/null || $(MAKE) --no-print-directory apt PACKAGES="pkg-config libssl-dev"

## deps-test: deps, plus the tools the tests run: systemd's (systemd-analyze, systemd-socket-activate),
## iproute2's (ip for a network namespace, ss for socket timers), curl and Debian's python3 with prometheus_client
## (the metrics endpoint is read with both), strace (replies are seen to leave only after the state's sync), the
## openssl command (certificates and a TLS client for the TLS tests)
deps-test: deps
	@command -v systemd-analyze >/dev/null && command -v systemd-socket-activate >/dev/null \
		|| $(MAKE) --no-print-directory apt PACKAGES="systemd"
	@command -v ip >/dev/null && command -v ss >/dev/null \
		|| $(MAKE) --no-print-directory apt PACKAGES="iproute2"
	@command -v curl >/dev/null || $(MAKE) --no-print-directory apt PACKAGES="curl"
	@command -v strace >/dev/null || $(MAKE) --no-print-directory apt PACKAGES="strace"
	@command -v openssl >/dev/null || $(MAKE) --no-print-directory apt PACKAGES="openssl"
	@/usr/bin/python3 -c "import prometheus_client.parser" 2>/dev/null \
		|| $(MAKE) --no-print-directory apt PACKAGES="python3-prometheus-client"

apt:
	@echo "installing from Debian: $(PACKAGES)"
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(PACKAGES)

## build: debug build of everything
build: deps
	$(SWIFT) build

## release: optimized subd, subctl and subbench in .build/release
release: deps
	$(SWIFT) build -c release --product subd
	$(SWIFT) build -c release --product subctl
	$(SWIFT) build -c release --product subbench

## run: build (release) and run subd in the foreground on 127.0.0.1:7827 with config/subd.yaml, its state in
## .build/state (STATE_DIR=)
run: deps
	$(SWIFT) build -c release --product subd
	$(SWIFT) build -c release --product subctl
	@echo "subctl is at $$($(SWIFT) build -c release --show-bin-path)/subctl"
	SUBD_STATE_DIR="$(STATE_DIR)" exec "$$($(SWIFT) build -c release --show-bin-path)/subd" --config $(CONFIG)

## test: build and run every test (unit and integration, real binaries over real sockets)
test: deps-test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing

## tsan: the in-process NotificationHub's tests (every entry point, then many tasks and threads posting, observing and
## cancelling at once) under ThreadSanitizer, built in their own folder, .build-tsan (everything instrumented: about 3
## minutes the first time); the first race reported fails the run
tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS="halt_on_error=1" $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan \
		--disable-swift-testing --filter SubscriptionNotificationsTests

## alloc-guard: the allocation guard against a debug subd (as in `test`) and then a release one: allocation calls per
## command in steady state (PUB with 10 subscribers, PUB with none, PING, SUB+UNSUB), counted by libAllocationCounter.so
## preloaded into subd, against Tests/IntegrationTests/AllocationBudget.txt
alloc-guard: deps-test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-swift-testing --filter AllocationBudgetTests
	$(SWIFT) build -c release --product subd
	SUBD_BIN_DIR="$$($(SWIFT) build -c release --show-bin-path)" \
		$(SWIFT) test --skip-build --disable-swift-testing --filter AllocationBudgetTests

## bench: fan-out benchmark against a release subd (1 publisher, 10 subscribers, 500,000 x 128 B), then the same
## fan-out over TLS against another (subbench --tls: subd on a tls:// listener with a throwaway certificate made by
## the openssl command, installed when missing; the two runs side by side give the cost of TLS), then the pipeline
## memory check against a third subd (300,000 self-delivered SENDs x 128 B without reading; peak RSS at most 64 MiB),
## then the idle memory check against a fourth (10,000 idle subscribers: RSS at most 100 MiB, 50 MiB once they closed)
bench: release
	@command -v openssl >/dev/null || $(MAKE) --no-print-directory apt PACKAGES="openssl"
	"$$($(SWIFT) build -c release --show-bin-path)/subbench" --subd "$$($(SWIFT) build -c release --show-bin-path)/subd" \
		--subscribers 10 --messages 500000 --size 128 --window 1000
	"$$($(SWIFT) build -c release --show-bin-path)/subbench" --subd "$$($(SWIFT) build -c release --show-bin-path)/subd" \
		--subscribers 10 --messages 500000 --size 128 --window 1000 --tls
	"$$($(SWIFT) build -c release --show-bin-path)/subbench" --subd "$$($(SWIFT) build -c release --show-bin-path)/subd" \
		--scenario pipeline --messages 300000 --size 128 --max-rss-mib 64
	"$$($(SWIFT) build -c release --show-bin-path)/subbench" --subd "$$($(SWIFT) build -c release --show-bin-path)/subd" \
		--scenario idle --connections 10000

## bench-peers: subd beside ref-relay (a minimal C relay of the protocol: this machine's limit), Redis, NATS and
## Mosquitto, with ../shared/bench/run-peers.sh (every scenario, medians of PEER_REPS runs); prints the table, keeps
## the raw results in .build/bench-peers
PEERS      ?= ../shared/bench/run-peers.sh
PEER_REPS  ?= 3
bench-peers: release deps-peers
	@test -x "$(PEERS)" || { echo "no $(PEERS): the side-by-side harness lives in the shared folder next to the project"; exit 1; }
	"$(PEERS)" --reps $(PEER_REPS) --out .build/bench-peers \
		--subd "$$($(SWIFT) build -c release --show-bin-path)/subd --listen 127.0.0.1:{port} --log-level warning"

## deps-peers: the peers bench-peers compares with (Debian's redis-server, nats-server, mosquitto)
deps-peers:
	@command -v redis-server >/dev/null && command -v nats-server >/dev/null && command -v mosquitto >/dev/null \
		|| $(MAKE) --no-print-directory apt PACKAGES="redis-server nats-server mosquitto"

## install: release subd and subctl to $(PREFIX)/bin, the config to /etc/subd/ (kept when it exists), the units
## to $(UNITDIR); DESTDIR stages it elsewhere
install: release
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(SYSCONFDIR)/subd" "$(DESTDIR)$(UNITDIR)"
	install -m 755 "$(RELEASE_BIN)/subd" "$(RELEASE_BIN)/subctl" "$(DESTDIR)$(PREFIX)/bin/"
	@if [ -e "$(DESTDIR)$(SYSCONFDIR)/subd/subd.yaml" ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/subd/subd.yaml (the shipped one is config/subd.yaml)"; \
	else install -m 644 config/subd.yaml "$(DESTDIR)$(SYSCONFDIR)/subd/subd.yaml"; fi
	sed -e 's|/usr/local/bin/subd|$(PREFIX)/bin/subd|' -e 's|/etc/subd/|$(SYSCONFDIR)/subd/|' systemd/subd.service \
		> "$(DESTDIR)$(UNITDIR)/subd.service"
	install -m 644 systemd/subd.socket "$(DESTDIR)$(UNITDIR)/subd.socket"
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo "installed; start with: systemctl enable --now subd.socket  (or subd.service)"

## uninstall: remove what install put in place, except the config in /etc/subd/
uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/subd" "$(DESTDIR)$(PREFIX)/bin/subctl" \
		"$(DESTDIR)$(UNITDIR)/subd.service" "$(DESTDIR)$(UNITDIR)/subd.socket"
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi

clean:
	rm -rf .build

## fuzz: libFuzzer on the command parser for FUZZ_SECONDS (default 60); crashes land in .build/fuzz/
FUZZ_SECONDS ?= 60
fuzz:
	mkdir -p .build/fuzz/corpus
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name SubscriptionWire -emit-library -static \
		-emit-module -emit-module-path .build/fuzz/SubscriptionWire.swiftmodule \
		Sources/SubscriptionWire/*.swift -o .build/fuzz/libSubscriptionWire.a
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name ParserFuzz -I .build/fuzz \
		Tests/Fuzz/ParserFuzz.swift Sources/SubscriptionProtocol/*.swift .build/fuzz/libSubscriptionWire.a \
		-o .build/fuzz/parser-fuzz
	.build/fuzz/parser-fuzz -max_total_time=$(FUZZ_SECONDS) -dict=Tests/Fuzz/commands.dict -artifact_prefix=.build/fuzz/ \
		.build/fuzz/corpus

## fuzz-path: libFuzzer on the whole command path for FUZZ_SECONDS: several sessions' bytes through the parser, the
## handlers' center calls and the center (its sources compiled into the target, so its index is checked from inside)
## against a model after every command; crashes land in .build/fuzz-path/ (its own directory, so it may build while
## `make fuzz` runs)
fuzz-path:
	mkdir -p .build/fuzz-path/corpus
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name SubscriptionWire -emit-library -static \
		-emit-module -emit-module-path .build/fuzz-path/SubscriptionWire.swiftmodule \
		Sources/SubscriptionWire/*.swift -o .build/fuzz-path/libSubscriptionWire.a
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name SubscriptionProtocol -I .build/fuzz-path \
		-emit-library -static -emit-module -emit-module-path .build/fuzz-path/SubscriptionProtocol.swiftmodule \
		Sources/SubscriptionProtocol/*.swift -o .build/fuzz-path/libSubscriptionProtocol.a
	$(SWIFT)c -sanitize=fuzzer,address -parse-as-library -O -module-name CommandPathFuzz -I .build/fuzz-path \
		Tests/Fuzz/CommandPathFuzz.swift Sources/SubscriptionCenter/*.swift \
		.build/fuzz-path/libSubscriptionProtocol.a .build/fuzz-path/libSubscriptionWire.a -o .build/fuzz-path/path-fuzz
	.build/fuzz-path/path-fuzz -max_total_time=$(FUZZ_SECONDS) -dict=Tests/Fuzz/command-path.dict \
		-artifact_prefix=.build/fuzz-path/ .build/fuzz-path/corpus Tests/Fuzz/path-seeds
