package driver

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"

	"github.com/leaseguard/leaseguard/analyzer"
	"github.com/leaseguard/leaseguard/internal/version"
)

// fullVersion reports whether args ask for -V=full before any pattern:
// what go vet asks a vet tool for its identity, and how a user asks which
// leaseguard this is.
func fullVersion(args []string) bool {
	for _, a := range args {
		switch {
		case a == "-V=full" || a == "--V=full":
			return true
		case a == "--" || len(a) == 0 || a[0] != '-':
			return false
		}
	}
	return false
}

// printVersion prints the answer to -V=full: leaseguard's version, the
// VCS revision and the parser built in, within the form go vet reads
// ("NAME version devel … buildID=HASH"), so that go vet keys its cache on
// the hash of the executable, as x/tools' own answer does, and not on the
// version, which stays the same across the commits between releases.
func printVersion(w io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	f, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s version devel %s parser=%s buildID=%x\n", exe, version.String(), analyzer.Parser, h.Sum(nil))
	return err
}
