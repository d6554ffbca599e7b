# fleetkit's commands. `make test` is the one CI runs (through .ci/run).
STATICCHECK_VERSION := v0.8.2
CACHE ?= $(or $(FLEETKIT_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fleetkit)
STATICCHECK := $(CACHE)/bin/staticcheck-$(STATICCHECK_VERSION)

.PHONY: run test unit lint images clean bench

# The main job on the embedded default: no Docker, no database.
run:
	go run ./examples/quickstart

# The whole suite on a fresh machine: installs what it needs, then go test -race ./...
test:
	scripts/test.sh

# Unit tests only; integration tests say why they skip.
unit:
	go test ./...

lint: $(STATICCHECK)
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	go vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	mkdir -p $(CACHE)/bin/tmp
	GOBIN=$(CACHE)/bin/tmp go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(CACHE)/bin/tmp/staticcheck $@

images:
	scripts/build-images.sh

# What earlier runs left (fleetkit's containers, images, PostgreSQL, the
# cache directory), so the next `make test` sees a new machine.
clean:
	scripts/clean.sh

bench:
	scripts/bench-python-linter.sh
	scripts/bench-java-linter.sh
