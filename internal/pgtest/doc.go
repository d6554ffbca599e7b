// Package pgtest gives integration tests (the fleet's) PostgreSQL databases:
// a fresh database of their own on the shared test server
// (scripts/start-postgres.sh, $FLEETKIT_TEST_POSTGRES_URL), so that test
// packages running at once never share tables, and a private server
// (initdb into a temporary directory, on a free loopback port) for the
// tests that stop and restart PostgreSQL — never the shared one, which
// every helper's tests use at the same time.
//
// A missing server or missing binaries go through testenv.Missing: the
// test skips under plain go test and fails under CI=true.
package pgtest
