package testserver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// installHint is appended to every "not found" error: tests do not skip
// when MariaDB is missing, they fail and say how to get it.
const installHint = "run `apt-get install -y mariadb-server` (scripts/test.sh does this)"

// binaryDirs are searched, after PATH, for mariadbd and mariadb-install-db.
var binaryDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin", "/usr/local/mysql/scripts"}

func findProgram(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, d := range binaryDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("testserver: %s not found in PATH, %s: %s",
		name, strings.Join(binaryDirs, ", "), installHint)
}

// Binary returns the absolute path of mariadbd (searched in PATH, /usr/sbin,
// /usr/local/mysql/bin). The error says how to install it.
func Binary() (string, error) { return findProgram("mariadbd") }

// installDBBinary returns the path of mariadb-install-db, preferring the one
// next to mariadbd's installation.
func installDBBinary(mariadbd string) (string, error) {
	base := filepath.Dir(filepath.Dir(mariadbd))
	for _, d := range []string{"bin", "scripts"} {
		p := filepath.Join(base, d, "mariadb-install-db")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return findProgram("mariadb-install-db")
}

// installation describes the MariaDB found on this machine.
type installation struct {
	mariadbd  string
	installDB string
	version   string // first line of `mariadbd --version`
}

var (
	installOnce sync.Once
	installInfo installation
	installErr  error
)

func findInstallation() (installation, error) {
	installOnce.Do(func() {
		bin, err := Binary()
		if err != nil {
			installErr = err
			return
		}
		inst, err := installDBBinary(bin)
		if err != nil {
			installErr = err
			return
		}
		out, err := exec.Command(bin, "--no-defaults", "--version").CombinedOutput()
		if err != nil {
			installErr = fmt.Errorf("testserver: %s --version: %v: %s", bin, err, out)
			return
		}
		installInfo = installation{
			mariadbd:  bin,
			installDB: inst,
			version:   strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]),
		}
	})
	return installInfo, installErr
}

// templateVersion is bumped whenever the way the template is built changes
// in a way the flags below do not capture.
const templateVersion = "1"

// installArgs are the mariadb-install-db flags (besides --datadir). They are
// hashed into the template's name.
func installArgs(inst installation) []string {
	args := []string{
		"--no-defaults",
		"--basedir=" + filepath.Dir(filepath.Dir(inst.mariadbd)),
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
		// Passed through to the bootstrap mariadbd: keep the files small so
		// copying the template is cheap, and match the server's settings.
		"--innodb-buffer-pool-size=16M",
		"--innodb-log-file-size=16M",
		"--innodb-use-native-aio=0",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return args
}

var (
	templateMu    sync.Mutex
	templatePath  string
	templateError error
)

// template returns the path of an initialised datadir to copy. It is built at
// most once per machine (per mariadbd version and init flags): in
// os.TempDir()/binlogcdc-mariadb-<version>-<hash>/data, guarded by an flock
// on a sibling lock file so parallel test binaries don't race, and published
// by an atomic rename of a completely built directory.
func template() (string, error) {
	templateMu.Lock()
	defer templateMu.Unlock()
	if templatePath != "" || templateError != nil {
		return templatePath, templateError
	}
	templatePath, templateError = buildTemplate()
	return templatePath, templateError
}

func templateName(inst installation) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", templateVersion, inst.mariadbd, inst.installDB, inst.version)
	for _, a := range installArgs(inst) {
		fmt.Fprintf(h, "%s\x00", a)
	}
	if fi, err := os.Stat(inst.mariadbd); err == nil {
		fmt.Fprintf(h, "%d\x00%d\x00", fi.Size(), fi.ModTime().UnixNano())
	}
	ver := "unknown"
	if f := strings.Fields(inst.version); len(f) >= 3 {
		ver = f[2] // "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for ..."
	}
	ver = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, ver)
	return fmt.Sprintf("binlogcdc-mariadb-%s-%s", ver, hex.EncodeToString(h.Sum(nil))[:12])
}

const readyMarker = "READY"

func buildTemplate() (string, error) {
	inst, err := findInstallation()
	if err != nil {
		return "", err
	}
	name := templateName(inst)
	root := filepath.Join(os.TempDir(), name)
	data := filepath.Join(root, "data")
	ready := func() bool {
		_, err := os.Stat(filepath.Join(root, readyMarker))
		return err == nil
	}
	if ready() {
		return data, nil
	}

	lock, err := os.OpenFile(root+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", fmt.Errorf("testserver: template lock: %w", err)
	}
	defer lock.Close()
	for {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("testserver: template lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	if ready() {
		return data, nil
	}
	// A directory without the marker is a leftover of an interrupted
	// build by a process that no longer holds the lock.
	if err := os.RemoveAll(root); err != nil {
		return "", fmt.Errorf("testserver: removing stale template: %w", err)
	}
	tmp, err := os.MkdirTemp(os.TempDir(), name+".building-")
	if err != nil {
		return "", fmt.Errorf("testserver: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	args := append(installArgs(inst), "--datadir="+filepath.Join(tmp, "data"))
	cmd := exec.Command(inst.installDB, args...)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("testserver: %s %s: %v\n%s", inst.installDB, strings.Join(args, " "), err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, readyMarker), []byte(inst.version+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("testserver: %w", err)
	}
	if err := os.Rename(tmp, root); err != nil {
		return "", fmt.Errorf("testserver: publishing template: %w", err)
	}
	return data, nil
}
