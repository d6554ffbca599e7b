package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/deprecation"
)

// listVersions prints the rules, as pluto's list-versions: a table
// (normal, wide) or {"deprecated-versions": [...]} (json, yaml).
func listVersions(args []string, stdio IO) int {
	fs := flag.NewFlagSet("list-versions", flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	var cf checkFlags
	fs.StringVar(&cf.rulesFile, "rules", "", "extra rules `file` in pluto's versions.yaml format")
	fs.StringVar(&cf.rulesFile, "additional-versions", "", "same as -rules (pluto's name)")
	fs.StringVar(&cf.rulesFile, "f", "", "same as -rules")
	fs.Var(&cf.components, "components", "`list` of components to print (default all)")
	fs.StringVar(&cf.output, "output", "normal", "output format: normal, wide, json or yaml")
	fs.StringVar(&cf.output, "o", "normal", "same as -output")
	fs.BoolVar(&cf.noHeaders, "no-headers", false, "leave out the header line")
	fs.BoolVar(&cf.noHeaders, "H", false, "same as -no-headers")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kdave list-versions [flags]")
		fs.PrintDefaults()
	}
	if _, err := parseInterleaved(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return deprecation.ExitOK
		}
		return deprecation.ExitError
	}
	rules, _, err := cf.checkerOptions()
	if err == nil {
		err = writeRules(rules, cf.output, cf.noHeaders, stdio)
	}
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "kdave:", err)
		return deprecation.ExitError
	}
	return deprecation.ExitOK
}

func writeRules(rules *deprecation.RuleSet, format string, noHeaders bool, stdio IO) error {
	doc := struct {
		Rules   []deprecation.Rule             `json:"deprecated-versions"`
		Targets map[string]deprecation.Version `json:"target-versions"`
	}{rules.Rules(), rules.Targets()}
	switch format {
	case "json":
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdio.Stdout.Write(append(b, '\n'))
		return err
	case "yaml":
		b, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = stdio.Stdout.Write(b)
		return err
	case "normal", "wide", "table":
	default:
		return fmt.Errorf("%w: %q (want normal, wide, json or yaml)", deprecation.ErrUnknownFormat, format)
	}
	tw := tabwriter.NewWriter(stdio.Stdout, 0, 4, 2, ' ', 0)
	if !noHeaders {
		fmt.Fprintln(tw, "KIND\tNAME\tDEPRECATED IN\tREMOVED IN\tREPLACEMENT\tREPL AVAIL IN\tCOMPONENT")
	}
	na := func(s string) string {
		if s == "" {
			return "n/a"
		}
		return s
	}
	for _, r := range doc.Rules {
		fmt.Fprintln(tw, strings.Join([]string{na(r.Kind), r.APIVersion, na(r.DeprecatedIn.String()), na(r.RemovedIn.String()),
			na(r.ReplacementAPI), na(r.ReplacementAvailableIn.String()), r.Component}, "\t"))
	}
	return tw.Flush()
}
