# One entry point for people and CI. `make run` and `make test` create .venv when it is
# missing and install the project (with every extra, and the test tools' dependency group)
# into it first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test lint unit bench screens serve clean cluster-build cluster-up cluster-down test-cluster

# constraints.txt pins the tested versions of every dependency, so each install (CI too)
# resolves the same set.
$(STAMP): pyproject.toml constraints.txt
	@echo "make: installing aicr-tui and its dependencies into $(VENV) (about 1.2 GB: the cloud SDKs" \
	      "and the Helm engine; a few minutes on a fresh machine, seconds once pip's cache is warm)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade 'pip>=25.1'
	$(PY) -m pip install -q -c constraints.txt -e '.[live,verify]' --group test
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/aicr-tui --demo

serve: $(STAMP)
	$(VENV)/bin/aicr-tui serve

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict aicr_tui
	$(VENV)/bin/lint-imports
	$(VENV)/bin/deptry .

# In parallel (pytest-xdist), one worker per core: PYTEST_WORKERS=0 runs serially.
PYTEST_WORKERS ?= auto

unit: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -n $(PYTEST_WORKERS)

test: lint unit

bench: $(STAMP)
	$(PY) -m bench

screens: $(STAMP)
	$(PY) -m tests.make_screens

# The local Kubernetes control plane (cluster/README.md): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok v1.34, plus kubectl and helm, built once
# per machine from their Go modules into ~/.cache/aicr-tui/k8s/<versions>/bin.
cluster-build:
	cluster/build.sh

cluster-up:
	cluster/up.sh

cluster-down:
	cluster/down.sh

# The cluster tier alone; starts the cluster first when it is not up. A cluster that cannot
# be reached fails the run (AICR_CLUSTER_REQUIRED=1), it is never skipped.
test-cluster: $(STAMP)
	cluster/up.sh
	AICR_CLUSTER_REQUIRED=1 $(PY) -m pytest -p no:cacheprovider --run-cluster --durations=30 tests/cluster

clean:
	rm -rf $(VENV) artifacts .pytest_cache .mypy_cache .ruff_cache .grimp_cache .import_linter_cache
