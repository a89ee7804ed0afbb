#!/usr/bin/env bash
# test/cassert.sh: the whole suite of "make check" (pg_regress, pgTAP, stress,
# fuzz, PostgreSQL's own suite) against the system's PostgreSQL version (15)
# built with --enable-cassert, so that the server's assertions (and the
# memory-context checks and freed-memory clobbering that come with them)
# watch gpuops.
#
# It is test/versions.sh --cassert for that one version: PostgreSQL built
# from Debian's source package by test/pgbuild.sh MAJOR --cassert (cached in
# $GPUOPS_CASSERT_PREFIX/<version>-<hash of the options>, with contrib's
# dblink and the system's pgTAP files), gpuops built and tested by
# `make check PG_CONFIG=<that pg_config>` in a copy of the working tree (the
# device library carried over), and every server log searched for
# assertion failures (TRAP), crashes, and the memory and resource checks'
# warnings.  Last line:
#   cassert: N passed, N failed (PostgreSQL 15.x with assertions)
# (make check's tests, plus one for the server logs); exit status 0 only when
# nothing failed.
#
# Environment:
#   GPUOPS_CASSERT_MAJOR    the version (the system's PostgreSQL's major, 15)
#   GPUOPS_CASSERT_PREFIX   where the builds are installed (/var/tmp/gpuops-cassert)
#   GPUOPS_CASSERT_PORT     first of the 4 ports of the clusters (54429)
#   GPUOPS_CASSERT_RESULTS  outputs (<repo>/test/results/cassert): pgNN/ with
#                           PostgreSQL's build logs and check/ (make check's
#                           results and server logs)
#   GPUOPS_CASSERT_JOBS     make -j for PostgreSQL (2)
#   GPUOPS_CASSERT_REUSE_DEVICE=0  build the device library afresh in the copy
#   GPUOPS_CASSERT_KEEP=1   keep the copy of the tree (its path is printed)
#   PGSUITE_CACHE           test/pgsuite's download cache (/var/tmp/gpuops-pgsuite)
#   GPUOPS_SKIP_SETUP, GPUOPS_SKIP_STRESS, GPUOPS_SKIP_FUZZ, GPUOPS_SKIP_PGSUITE,
#   GPUOPS_TEST_USER, GPUOPS_TEST_TIMEOUT: as for make check (test/check.sh).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MAJOR=$(/usr/lib/postgresql/15/bin/pg_config --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
MAJOR=${GPUOPS_CASSERT_MAJOR:-${MAJOR:-15}}
exec env GPUOPS_VERSIONS_LABEL=cassert GPUOPS_VERSIONS_SUITES=all \
  GPUOPS_VERSIONS_PORT="${GPUOPS_CASSERT_PORT:-54429}" \
  GPUOPS_VERSIONS_RESULTS="${GPUOPS_CASSERT_RESULTS:-$REPO/test/results/cassert}" \
  GPUOPS_PGBUILD_JOBS="${GPUOPS_CASSERT_JOBS:-2}" \
  GPUOPS_VERSIONS_KEEP="${GPUOPS_CASSERT_KEEP:-0}" \
  GPUOPS_VERSIONS_REUSE_DEVICE="${GPUOPS_CASSERT_REUSE_DEVICE:-1}" \
  bash "$REPO/test/versions.sh" --cassert "$MAJOR"
