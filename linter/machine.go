package linter

// Labels a machine manager records on the machines that run the linter
// service (rollout does), so that it knows, after a restart, which language
// and version each machine it finds serves.
const (
	LabelLanguage = "linter.language"
	LabelVersion  = "linter.version"
)

// Args returns the command line of the linter service (examples/linter,
// the fleetkit/linter image) serving language at version on addr. A
// machine manager passes addr "{addr}", which the machine's provider
// replaces by the address it chose.
func Args(language, version, addr string) []string {
	return []string{"-language", language, "-version", version, "-addr", addr}
}
