package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// checkAttachedValues refuses a flag that takes no value, or an optional
// one, followed by a word that reads as its value: "--ddl skip" would
// apply DDL and read a file named "skip", "--progress false" would turn
// progress on. Such flags take their value only after '='.
func checkAttachedValues(f *pflag.FlagSet, args []string) error {
	for i := 0; i+1 < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		var fl *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			fl = f.Lookup(a[2:])
		case len(a) == 2 && a[0] == '-' && a[1] != '-':
			fl = f.ShorthandLookup(a[1:])
		}
		if fl == nil || fl.NoOptDefVal == "" || !readsAsValue(fl, args[i+1]) {
			continue
		}
		next := args[i+1]
		return usageError{
			Msg:  fmt.Sprintf("%s %s: --%s takes a value only after '=' (%s %s would read %q as a file name)", a, next, fl.Name, a, next, next),
			Hint: fmt.Sprintf("write --%s=%s (or, for a file named %s, ./%s)", fl.Name, next, next, next)}
	}
	return nil
}

// readsAsValue reports whether word reads as a value for fl (one-letter
// forms such as "f" do not: they are more likely file names).
func readsAsValue(fl *pflag.Flag, word string) bool {
	switch strings.ToLower(word) {
	case "true", "false", "yes", "no", "on", "off", "0", "1":
		return true
	case "apply", "skip":
		return fl.Value.Type() != "bool"
	}
	return false
}

// flagUsages is f.FlagUsages() written so that no flag invites a value
// after a space: bool flags show no "[=true|false]", and --ddl shows
// "--ddl[=apply|skip]".
func flagUsages(f *pflag.FlagSet) string {
	u := f.FlagUsages()
	u = strings.ReplaceAll(u, "[=true|false]", strings.Repeat(" ", len("[=true|false]")))
	old, repl := "--ddl apply|skip[=apply]", "--ddl[=apply|skip]"
	return strings.ReplaceAll(u, old, repl+strings.Repeat(" ", len(old)-len(repl)))
}

// connectHint says what to check when err is a failure to reach a server
// (nothing listens, the name does not resolve, no answer), or "".
func connectHint(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		return fmt.Sprintf("the host name %q does not resolve: check the host in the DSN (--source, --to)", de.Name)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		return ""
	}
	addr := ""
	if oe.Addr != nil {
		addr = oe.Addr.String()
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing accepts connections at %s: is the server running, and is the port right (3306 by default; see its 'port' setting)? Try: mariadb -h HOST -P PORT -u USER", addr)
	case oe.Timeout():
		return fmt.Sprintf("%s does not answer: a firewall, or the wrong host", addr)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Sprintf("%s cannot be reached from this machine: check the host and the network", addr)
	}
	return ""
}
