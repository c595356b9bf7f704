package main

// The documentation (README.md and docs/*.md) is checked against the
// commands themselves, so that it cannot drift from them unnoticed:
//
//   - every flag a command's --help lists is named (as `--flag`) in that
//     command's page, docs/COMMAND.md, or in a page that page links to;
//   - every `--flag` the documentation names is a flag of some command
//     (other tools' flags, such as mysqlbinlog's, are listed below), and
//     every flag an example gives a command ("binlogcdc stream --x") is
//     one of that command's;
//   - every command 'binlogcdc --help' lists has its page;
//   - every relative link resolves, anchors included;
//   - every test, benchmark and fuzz function named exists.
//
// The help comes from the real command definitions, run in-process.

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// docsRoot is the repository's root, seen from this package's directory.
const docsRoot = "../.."

// foreignFlags are other tools' flags the documentation names, with the
// tool, so they are not taken for binlogcdc's.
var foreignFlags = map[string]string{
	"read-from-remote-server": "mysqlbinlog, mariadb-binlog",
	"raw":                     "mysqlbinlog, mariadb-binlog",
	"to-last-log":             "mariadb-binlog",
	"verbose":                 "mariadb-binlog",
	"base64-output":           "mariadb-binlog",
	"single-transaction":      "mariadb-dump",
	"master-data":             "mysqldump",
	"source-data":             "mysqldump",
	"prepare":                 "mariadb-backup",
	"copy-back":               "mariadb-backup",
	"target-dir":              "mariadb-backup",
	"datadir":                 "mariadb-backup",
}

// docFlag finds `--flag` in text: not inside a word or an anchor
// (#parallel-apply---parallel-n); the whole word, so that a misspelt
// --Flag or --flag_x is not read as --flag; --ssl-* is the prefix "ssl-".
var docFlag = regexp.MustCompile(`(?:^|[^A-Za-z0-9_#/-])--([A-Za-z0-9][A-Za-z0-9_-]*)(\*)?`)

// helpOf runs 'binlogcdc ARGS...' in-process and returns what it printed.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != exitOK {
		t.Fatalf("binlogcdc %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String() + errb.String()
}

// docCommands are the commands 'binlogcdc --help' lists.
func docCommands(t *testing.T) []string {
	help := helpOf(t, "--help")
	i := strings.Index(help, "\nCommands:\n")
	if i < 0 {
		t.Fatalf("binlogcdc --help lists no Commands:\n%s", help)
	}
	var cmds []string
	for _, l := range strings.Split(help[i+len("\nCommands:\n"):], "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			break
		}
		cmds = append(cmds, f[0])
	}
	if len(cmds) < 5 {
		t.Fatalf("binlogcdc --help lists only %v", cmds)
	}
	return cmds
}

// helpFlags are the flags a command's --help lists: the lines that start
// with a flag (its Flags: list, and the hidden debugging aids it names).
func helpFlags(t *testing.T, cmd string) map[string]bool {
	flags := map[string]bool{}
	for _, l := range strings.Split(helpOf(t, cmd, "--help"), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "-") {
			continue
		}
		if m := flagLine.FindStringSubmatch(l); m != nil {
			flags[m[1]] = true
		}
	}
	if len(flags) == 0 {
		t.Fatalf("binlogcdc %s --help lists no flags", cmd)
	}
	return flags
}

// accepts says whether cmd takes --name, hidden flags included: pflag
// stops at an unknown flag before it reaches --help.
func accepts(cmd, name string) bool {
	var out, errb bytes.Buffer
	run([]string{cmd, "--" + name + "=1", "--help"}, &out, &errb)
	return !strings.Contains(errb.String(), "unknown flag")
}

// docFile is one documentation file: its text outside code fences
// (prose) and in full.
type docFile struct {
	path, text, prose string
}

func readDocs(t *testing.T) map[string]docFile {
	paths, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(docsRoot, "README.md"))
	docs := map[string]docFile{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(docsRoot, p)
		rel = filepath.ToSlash(rel)
		var prose []string
		fence := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
				prose = append(prose, "")
				continue
			}
			if fence {
				l = ""
			}
			prose = append(prose, l)
		}
		docs[rel] = docFile{path: rel, text: string(b), prose: strings.Join(prose, "\n")}
	}
	if len(docs) < 2 {
		t.Fatalf("no docs/*.md found under %s", docsRoot)
	}
	return docs
}

// namedFlags are the flags text names: whole names, and prefixes
// ("ssl-" for --ssl-*).
func namedFlags(text string) (names, prefixes map[string]bool) {
	names, prefixes = map[string]bool{}, map[string]bool{}
	for _, m := range docFlag.FindAllStringSubmatch(text, -1) {
		if m[2] != "" && strings.HasSuffix(m[1], "-") {
			prefixes[m[1]] = true
		} else {
			names[m[1]] = true
		}
	}
	return names, prefixes
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	mdHeading  = regexp.MustCompile(`^#{1,6} +(.*?)\s*$`)
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	flagLine   = regexp.MustCompile(`^(?:-[a-z], )?--([a-z][a-z0-9-]*)`)
)

// links are the link targets of a file's prose, outside inline code.
func links(d docFile) []string {
	var out []string
	for _, l := range strings.Split(d.prose, "\n") {
		l = inlineCode.ReplaceAllString(l, "")
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, inline markup and
// punctuation dropped, spaces made hyphens.
func slug(heading string) string {
	heading = linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a file's headings, duplicates numbered as
// GitHub numbers them.
func anchors(d docFile) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range strings.Split(d.prose, "\n") {
		m := mdHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+string(rune('0'+n))] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// linkedPages are the docs pages a page links to.
func linkedPages(d docFile) []string {
	var out []string
	for _, l := range links(d) {
		p := strings.SplitN(l, "#", 2)[0]
		if p == "" || strings.Contains(p, "://") || !strings.HasSuffix(p, ".md") {
			continue
		}
		out = append(out, filepath.ToSlash(filepath.Join(filepath.Dir(d.path), p)))
	}
	return out
}

// TestDocsFlags: each command's flags are documented on its page (or a
// page it links to), and every flag the documentation names exists.
func TestDocsFlags(t *testing.T) {
	docs := readDocs(t)
	all := map[string]bool{"help": true}
	cmdFlags := map[string]map[string]bool{}
	for _, cmd := range docCommands(t) {
		if cmd == "version" {
			all["version"] = true
			continue
		}
		page, ok := docs["docs/"+cmd+".md"]
		if !ok {
			t.Errorf("binlogcdc %s has no page docs/%s.md", cmd, cmd)
			continue
		}
		flags := helpFlags(t, cmd)
		cmdFlags[cmd] = flags
		documented, _ := namedFlags(page.text)
		for _, p := range linkedPages(page) {
			n, _ := namedFlags(docs[p].text)
			for f := range n {
				documented[f] = true
			}
		}
		var missing []string
		for f := range flags {
			all[f] = true
			if f != "help" && !documented[f] {
				missing = append(missing, "--"+f)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("binlogcdc %s --help lists flags that docs/%s.md (and the pages it links to) never name: %s",
				cmd, cmd, strings.Join(missing, " "))
		}
	}
	for _, d := range docs {
		names, prefixes := namedFlags(d.text)
		for f := range names {
			if all[f] || foreignFlags[f] != "" {
				continue
			}
			hidden := false
			for cmd := range cmdFlags {
				if accepts(cmd, f) {
					hidden = true
					break
				}
			}
			if !hidden {
				t.Errorf("%s names --%s, which no command takes", d.path, f)
			}
		}
		for p := range prefixes {
			found := false
			for f := range all {
				found = found || strings.HasPrefix(f, p)
			}
			if !found {
				t.Errorf("%s names --%s*, and no command has a flag that starts so", d.path, p)
			}
		}
	}
}

// TestDocsLinks: every relative link of README.md and docs/ leads to a
// file that exists, and to a heading of it when it names an anchor.
func TestDocsLinks(t *testing.T) {
	docs := readDocs(t)
	for _, d := range docs {
		for _, l := range links(d) {
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			p, anchor, _ := strings.Cut(l, "#")
			target := d.path
			if p != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(d.path), p))
				if _, err := os.Stat(filepath.Join(docsRoot, target)); err != nil {
					t.Errorf("%s links to %s: %s does not exist", d.path, l, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			td, ok := docs[target]
			if !ok {
				t.Errorf("%s links to %s: an anchor into a file that is not documentation", d.path, l)
				continue
			}
			if !anchors(td)[anchor] {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", d.path, l, target, anchor)
			}
		}
	}
}

// TestDocsNamedTests: every Test, Benchmark and Fuzz function the
// documentation names as proof exists.
func TestDocsNamedTests(t *testing.T) {
	defined := map[string]bool{}
	def := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z]\w*)\(`)
	err := filepath.WalkDir(docsRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && p != docsRoot {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range def.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A -run pattern may name the start of several (-run TestDocs).
	prefixOfOne := func(name string) bool {
		for d := range defined {
			if strings.HasPrefix(d, name) {
				return true
			}
		}
		return false
	}
	named := regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z]\w*)`)
	for _, d := range readDocs(t) {
		for _, m := range named.FindAllStringSubmatch(d.text, -1) {
			if !defined[m[1]] && !prefixOfOne(m[1]) {
				t.Errorf("%s names %s, which no _test.go file defines", d.path, m[1])
			}
		}
	}
}

// TestDocsSlug: anchors are GitHub's.
func TestDocsSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Start from the data already there: `binlogcdc snapshot`, `stream --snapshot`": "start-from-the-data-already-there-binlogcdc-snapshot-stream---snapshot",
		"Resuming a snapshot after kill -9":                                            "resuming-a-snapshot-after-kill--9",
		"Other formats: `--format debezium|maxwell|canal`":                             "other-formats---format-debeziummaxwellcanal",
		"Parallel apply: `--parallel N`":                                               "parallel-apply---parallel-n",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDocsSizes: the README stays a short start (what it is, try, test,
// install, settings, one paragraph per command, links), and no page
// grows past the project's 600 lines: the rest goes to a page of docs/.
func TestDocsSizes(t *testing.T) {
	for _, d := range readDocs(t) {
		n := strings.Count(d.text, "\n")
		limit := 600
		if d.path == "README.md" {
			limit = 300
		}
		if n > limit {
			t.Errorf("%s has %d lines, more than %d: move the detail to a page of docs/ and link it", d.path, n, limit)
		}
	}
}

// exampleCmd finds a command line: "binlogcdc CMD ARGS", up to what ends
// a shell command (a pipe, a redirection, a comment, a background &).
var exampleCmd = regexp.MustCompile(`\bbinlogcdc ([a-z]+)((?: +[^|>#&;\s]+)*)`)

// examples are the command lines of a file: its code fences' lines
// (joined where they end in a backslash) and its inline code spans.
func examples(d docFile) []string {
	var out []string
	fence, joined := false, ""
	for _, l := range strings.Split(d.text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			if strings.HasSuffix(l, "\\") {
				joined += strings.TrimSuffix(l, "\\") + " "
				continue
			}
			out = append(out, joined+l)
			joined = ""
			continue
		}
		for _, m := range inlineCode.FindAllString(l, -1) {
			out = append(out, strings.Trim(m, "`"))
		}
	}
	return out
}

// TestDocsExamples: every flag an example gives a command is one of that
// command's flags (a hidden one included).
func TestDocsExamples(t *testing.T) {
	cmds := map[string]bool{}
	for _, c := range docCommands(t) {
		cmds[c] = true
	}
	checked := 0
	for _, d := range readDocs(t) {
		for _, ex := range examples(d) {
			for _, m := range exampleCmd.FindAllStringSubmatch(ex, -1) {
				cmd := m[1]
				if !cmds[cmd] || cmd == "version" {
					continue
				}
				names, _ := namedFlags(m[2])
				for f := range names {
					checked++
					if f != "help" && !accepts(cmd, f) {
						t.Errorf("%s: the example %q gives binlogcdc %s --%s, which it does not take", d.path, strings.TrimSpace(m[0]), cmd, f)
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d flags found in examples: the example finder is broken", checked)
	}
}
